"""The training loop of every PATE-based preset, for R replicas run as one batched computation.

It is PATE-GAN Alg. 1's outer loop (``jordon2019pategan``) with a replica axis: every replica
keeps its own model object, random streams, accountant, stopping rule and trace, and the loop
calls each replica's hooks of :class:`~pategan_audit.implementations.engine.PateGenerator`
(``begin_fit``, ``may_continue``, ``open_iteration``, ``finish_iteration``, ``end_fit``); only the
tensor work of one iteration is done once for all replicas by a preset's *replica step*
(:class:`ReplicaStep`), which releases the labels through
:func:`~pategan_audit.implementations.engine.release_votes`. A single fit of any of these presets
(borealis, smartnoise, corrected, updated, synthcity, gnmax) is a group of one (:func:`fit_one`);
a model's callbacks see its networks as they are after each iteration.

A replica whose budget is spent (or that reached its cap) is *frozen*: its slice of the
networks is copied back into its own model object at that moment and it takes no further part
(its accountant and trace stop), while the others go on. Its slice is still computed until the
step drops it (:meth:`ReplicaStep.keep`), which is cheaper than re-stacking after every stop.

Inside :func:`.checkpoint.checkpointing`, a group writes snapshots of its state between iterations
and goes on from one when it finds it (a stopped run resumes with the same numbers).
"""
from __future__ import annotations

from typing import Callable, ClassVar, Sequence

import numpy as np
import pandas as pd
import torch

from ..implementations.engine import PateGenerator, release_votes
from . import checkpoint

__all__ = ["ReplicaStep", "release_votes", "run_pate_replicas", "fit_one", "record_seen"]


class ReplicaStep:
    """One iteration of R replicas of one preset, batched. Subclasses implement

    * ``__init__(models, device)``: stack the replicas' networks (they have run ``begin_fit``);
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


def record_seen(models: Sequence[PateGenerator], rows: torch.Tensor, active: np.ndarray,
                has_rows: torch.Tensor | None = None) -> None:
    """``rows`` [R, k, B] positions consumed by each replica's teachers this round; teachers
    with ``has_rows[r, t]`` False (empty block: placeholder rows) consumed nothing."""
    rows = rows.numpy() if rows.is_cpu else rows.cpu().numpy()
    k = rows.shape[1]
    for r in np.asarray(active).nonzero()[0]:
        if has_rows is None:
            models[r].seen_[np.arange(k)[:, None], rows[r]] = True
        else:
            keep = has_rows[r].numpy()
            models[r].seen_[np.flatnonzero(keep)[:, None], rows[r][keep]] = True


def run_pate_replicas(models: Sequence[PateGenerator], frames: Sequence[pd.DataFrame], label: str | None,
                      step_cls: type[ReplicaStep], *, device: torch.device, on_done: Callable[[int], None] | None = None) -> None:
    """Fit ``models`` (unfitted, one per replica) on ``frames`` as one batched computation per
    group of stackable replicas. ``on_done(i)`` is called when replica i is finished."""
    budgets = []
    for m, df in zip(models, frames):
        budgets.append(m.begin_fit(m._accept(df, label), label))
    groups: dict[tuple, list[int]] = {}
    for i, m in enumerate(models):
        groups.setdefault(step_cls.signature(m), []).append(i)
    for idx in groups.values():
        _run_group([models[i] for i in idx], [budgets[i] for i in idx], step_cls, device,
                   (lambda j, idx=idx: on_done(idx[j])) if on_done else None)


def fit_one(model: PateGenerator, df: pd.DataFrame, label: str | None, step_cls: type[ReplicaStep], *,
            device: torch.device | None = None) -> None:
    """Fit one ``model`` on ``df`` (already accepted by ``fit``) with its preset's replica step at
    R = 1, on ``device`` (default: the CPU): the model's ``_fit``. Inside
    :func:`.checkpoint.checkpointing` the fit takes snapshots and resumes from them as a group of one."""
    budget = model.begin_fit(df, label)
    _run_group([model], [budget], step_cls, torch.device("cpu") if device is None else device, None)


def _run_group(models, budgets, step_cls, device, on_done) -> None:
    R = len(models)
    ckpt = checkpoint.current()
    slot = ckpt.open_group() if ckpt is not None else None
    step = step_cls(models, device)
    active = np.ones(R, dtype=bool)
    it = 0
    saved = None
    if slot is not None:
        slot.begin(models, step)
        saved = slot.load(models)
    if saved is not None:  # go on from the snapshot (the replicas' own state was restored in place)
        step, active, it, budgets = saved["step"], saved["active"], saved["it"], saved["budgets"]
        if on_done:  # the replicas the snapshot holds finished still count as done
            for r in np.flatnonzero(~active):
                on_done(r)
    live = active.nonzero()[0].tolist()  # the active replicas, in order (what ``active`` says, as a list)

    def finish(r: int) -> None:
        active[r] = False
        live.remove(r)
        step.write_back(r)
        models[r].end_fit()
        models[r].fitted_ = True
        if on_done:
            on_done(r)

    def snapshot() -> None:
        slot.save(models, step=step, active=active, it=it, budgets=budgets)

    try:
        while live:
            for r in tuple(live):
                if not models[r].may_continue(it, budgets[r]):
                    finish(r)
            if not live:
                break
            for r in live:
                models[r].open_iteration()
            step.iteration(it, active.copy())
            for r in tuple(live):
                if models[r].callbacks:  # they read the model mid-training (the traces of Figures 3 and 11)
                    step.write_back(r)
                if models[r].finish_iteration(it, budgets[r]):
                    finish(r)
            it += 1
            if slot is not None and live and slot.due():
                snapshot()
        if slot is not None:  # the finished group: a later call under this directory loads it
            snapshot()
    finally:
        for r in live:  # an exception: leave the traces as a single fit would
            models[r].end_fit()
