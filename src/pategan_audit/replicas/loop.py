"""The training loop of many PATE-GAN replicas run as one batched computation.

It is the single-fit loop of :class:`~pategan_audit.implementations.engine.PateGenerator`
(PATE-GAN Alg. 1's outer loop, ``jordon2019pategan``) with a replica axis: every replica keeps
its own model object, random streams, accountant, stopping rule and trace, and calls the same
per-replica pieces (``_begin_fit``, ``_may_continue``, ``_open_iteration``,
``_finish_iteration``, ``_end_fit``) as a single fit; only the tensor work of one iteration is
done once for all replicas by a preset's *replica step* (:class:`ReplicaStep`).

A replica whose budget is spent (or that reached its cap) is *frozen*: its slice of the
networks is copied back into its own model object at that moment and it takes no further part
(its accountant and trace stop), while the others go on. Its slice is still computed until the
step drops it (:meth:`ReplicaStep.keep`), which is cheaper than re-stacking after every stop.
"""
from __future__ import annotations

from typing import Callable, ClassVar, Sequence

import numpy as np
import pandas as pd
import torch

from ..implementations.engine import PateGenerator

__all__ = ["ReplicaStep", "release_votes", "run_pate_replicas", "record_seen"]


class ReplicaStep:
    """One iteration of R replicas of one preset, batched. Subclasses implement

    * ``__init__(models, device)``: stack the replicas' networks (they have run ``_begin_fit``);
    * :meth:`iteration` ``(it, active)``: one iteration of every replica; only ``active`` ones
      (bool [R]) may release labels, charge their accountant or record anything;
    * :meth:`write_back` ``(r)``: copy replica r's networks back into ``models[r]``;
    * :meth:`signature` ``(model)`` (static): replicas with equal signatures can be stacked.
    """

    def __init__(self, models: Sequence[PateGenerator], device: torch.device):
        self.models = list(models)
        self.device = device

    def iteration(self, it: int, active: np.ndarray) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def write_back(self, r: int) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    signature: ClassVar[Callable[[PateGenerator], tuple]]


def release_votes(models: Sequence[PateGenerator], n1: torch.Tensor, active: np.ndarray) -> torch.Tensor:
    """Labels [R, n] float32 from the vote counts ``n1`` [R, n]: each active replica releases its
    row with its own noise stream, release rule, accountant and records (``_release_votes``);
    frozen replicas get zeros (their slice is no longer used)."""
    n1 = n1.to("cpu")
    out = torch.zeros(n1.shape, dtype=torch.float32)
    for r in np.flatnonzero(active):
        out[r] = models[r]._release_votes(n1[r])
    return out


def record_seen(models: Sequence[PateGenerator], rows: torch.Tensor, active: np.ndarray) -> None:
    """``rows`` [R, k, B] positions consumed by each replica's teachers this round."""
    rows = rows.to("cpu")
    for r in np.flatnonzero(active):
        models[r]._record_seen(rows[r])


def run_pate_replicas(models: Sequence[PateGenerator], frames: Sequence[pd.DataFrame], label: str | None,
                      step_cls: type[ReplicaStep], *, device: torch.device, on_done: Callable[[int], None] | None = None) -> None:
    """Fit ``models`` (unfitted, one per replica) on ``frames`` as one batched computation per
    group of stackable replicas. ``on_done(i)`` is called when replica i is finished."""
    budgets = []
    for m, df in zip(models, frames):
        budgets.append(m._begin_fit(m._accept(df, label), label))
    groups: dict[tuple, list[int]] = {}
    for i, m in enumerate(models):
        groups.setdefault(step_cls.signature(m), []).append(i)
    for idx in groups.values():
        _run_group([models[i] for i in idx], [budgets[i] for i in idx], step_cls, device,
                   (lambda j, idx=idx: on_done(idx[j])) if on_done else None)


def _run_group(models, budgets, step_cls, device, on_done) -> None:
    R = len(models)
    step = step_cls(models, device)
    active = np.ones(R, dtype=bool)

    def finish(r: int) -> None:
        active[r] = False
        step.write_back(r)
        models[r]._end_fit()
        models[r].fitted_ = True
        if on_done:
            on_done(r)

    it = 0
    try:
        while active.any():
            for r in np.flatnonzero(active):
                if not models[r]._may_continue(it, budgets[r]):
                    finish(r)
            if not active.any():
                break
            for r in np.flatnonzero(active):
                models[r]._open_iteration()
            step.iteration(it, active.copy())
            for r in np.flatnonzero(active):
                if models[r]._finish_iteration(it, budgets[r]):
                    finish(r)
            it += 1
    finally:
        for r in np.flatnonzero(active):  # an exception: leave the traces as a single fit would
            models[r]._end_fit()
