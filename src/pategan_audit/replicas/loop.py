"""The training loop of PATE-GAN replicas run as one batched computation.

It is the loop of :class:`~pategan_audit.implementations.engine.PateGenerator` (PATE-GAN Alg. 1's
outer loop, ``jordon2019pategan``) with a replica axis: every replica keeps its own model object,
random streams, accountant, stopping rule and trace, and calls the same per-replica pieces
(``begin_fit``, ``may_continue``, ``open_iteration``, ``finish_iteration``, ``end_fit``) as
a single fit; only the tensor work of one iteration is done once for all replicas by a preset's
*replica step* (:class:`ReplicaStep`). A preset whose step is its only iteration (borealis,
smartnoise, corrected) fits one model as a group of one (:func:`fit_one`); a model's callbacks
see its networks as they are after each iteration.

A replica whose budget is spent (or that reached its cap) is *frozen*: its slice of the
networks is copied back into its own model object at that moment and it takes no further part
(its accountant and trace stop), while the others go on. Its slice is still computed until the
step drops it (:meth:`ReplicaStep.keep`), which is cheaper than re-stacking after every stop.

Inside :func:`.checkpoint.checkpointing`, a group writes snapshots of its state between iterations
and goes on from one when it finds it (a fit stopped by a session's end resumes, same numbers).
"""
from __future__ import annotations

from typing import Callable, ClassVar, Sequence

import numpy as np
import pandas as pd
import torch

from ..accounting.accountant import charge_replicas
from ..implementations.engine import PateGenerator
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


def release_votes(models: Sequence[PateGenerator], n1: torch.Tensor, active: np.ndarray,
                  noise: torch.Tensor | None = None) -> torch.Tensor:
    """Labels [R, n] float32 from the vote counts ``n1`` [R, n]; frozen replicas get zeros.

    Each active replica releases its row exactly as ``PateGenerator.release_votes`` would
    (PATE-GAN Alg. 1 "PATE_λ" with the preset's mechanism): Laplace noise drawn from its *own*
    noise stream in the single fit's order (two ``Exp(1)`` draws per noise value), its release
    rule, its accountant charge and its records. The arithmetic is done for all replicas at once;
    only the draws and a preset's own ``release_rule`` (the identity but for synthcity's O4) run per replica.
    ``noise``: the Laplace noise of every replica already drawn (``[R, n]``, or ``[R, n, 2]`` for
    the two-noise mechanism; the counter streams of :mod:`.streams`), used instead of the
    replicas' noise streams (rows of frozen replicas are ignored)."""
    n1 = n1.to("cpu", torch.int64)
    R, n = n1.shape
    idx = np.flatnonzero(active)
    if len(idx) == 0:
        return torch.zeros((R, n), dtype=torch.float32)
    pick = slice(None) if len(idx) == R else torch.as_tensor(idx)  # the active replicas' rows
    m0 = models[idx[0]]
    cfg = m0.config
    k, scale, offset = m0.num_teachers_, m0.laplace_scale(), m0.vote_offset
    two = cfg.vote_mechanism == "two_noise_argmax"
    if cfg.vote_mechanism not in ("single_noise", "two_noise_argmax"):
        raise ValueError(f"unknown vote_mechanism {cfg.vote_mechanism!r}")
    if not scale > 0:
        raise ValueError(f"the Laplace scale must be > 0, got {scale}")
    shape = (n, 2) if two else (n,)
    if noise is not None:
        if tuple(noise.shape) != (R, *shape):
            raise ValueError(f"noise must be [R, n{', 2' if two else ''}] = {[R, *shape]} for {cfg.vote_mechanism}, "
                             f"got {list(noise.shape)}")
        noise = noise.to("cpu", torch.float64)[pick]
    elif len(idx) == 1:  # votes.laplace: E1 then E2 from the replica's noise stream
        g = models[idx[0]].noise_gen
        e1 = torch.empty(shape, dtype=torch.float64).exponential_(1.0, generator=g)
        e2 = torch.empty(shape, dtype=torch.float64).exponential_(1.0, generator=g)
        noise = (scale * (e1 - e2))[None]
    else:
        draws = torch.empty((len(idx), 2, *shape), dtype=torch.float64)
        for j, r in enumerate(idx):  # votes.laplace: E1 then E2 from the replica's noise stream
            g = models[r].noise_gen
            draws[j, 0].exponential_(1.0, generator=g)
            draws[j, 1].exponential_(1.0, generator=g)
        noise = scale * (draws[:, 0] - draws[:, 1])
    v = n1[pick]
    vf = v.to(torch.float64)
    if two:
        labels = (vf + noise[..., 1] > (k - vf) + noise[..., 0]).to(torch.int64)
    else:
        labels = (vf + noise > 0.5 * (k + offset)).to(torch.int64)
    custom_release = type(m0).release_rule is not PateGenerator.release_rule
    charged = np.ones(len(idx), dtype=bool)
    if custom_release:
        for j, r in enumerate(idx):
            labels[j], charged[j] = models[r].release_rule(labels[j])
    _charge(models, idx, v.numpy(), charged)
    if cfg.record:
        vn, nn_, ln = v.numpy(), noise.numpy(), labels.numpy()
        for j, r in enumerate(idx):
            buf = models[r].iteration_records
            buf["votes"].append(vn[j].copy())
            buf["noise"].append(nn_[j].copy())
            buf["labels"].append(ln[j].copy())
            buf["charged"].append(np.full(n, bool(charged[j])))
    if len(idx) == R:
        return labels.to(torch.float32)
    out = torch.zeros((R, n), dtype=torch.float32)
    out[pick] = labels.to(torch.float32)
    return out


def _charge(models: Sequence[PateGenerator], idx: np.ndarray, votes: np.ndarray, charged: np.ndarray) -> None:
    """Charge each replica's accountant for its queries (as ``_release_votes``): the
    data-independent increment per query, or the increments of its vote histogram
    (:func:`~pategan_audit.accounting.accountant.charge_replicas`)."""
    charge_replicas([models[r].accountant for r in idx], votes, charged,
                    worst_case=models[idx[0]]._charges_worst_case())


def record_seen(models: Sequence[PateGenerator], rows: torch.Tensor, active: np.ndarray,
                has_rows: torch.Tensor | None = None) -> None:
    """``rows`` [R, k, B] positions consumed by each replica's teachers this round; teachers
    with ``has_rows[r, t]`` False (empty block: placeholder rows) consumed nothing."""
    rows = rows.to("cpu").numpy()
    k = rows.shape[1]
    for r in np.flatnonzero(active):
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

    def finish(r: int) -> None:
        active[r] = False
        step.write_back(r)
        models[r].end_fit()
        models[r].fitted_ = True
        if on_done:
            on_done(r)

    def snapshot() -> None:
        slot.save(models, step=step, active=active, it=it, budgets=budgets)

    try:
        while active.any():
            for r in np.flatnonzero(active):
                if not models[r].may_continue(it, budgets[r]):
                    finish(r)
            if not active.any():
                break
            for r in np.flatnonzero(active):
                models[r].open_iteration()
            step.iteration(it, active.copy())
            for r in np.flatnonzero(active):
                if models[r].callbacks:  # they read the model mid-training (the traces of Figures 3 and 11)
                    step.write_back(r)
                if models[r].finish_iteration(it, budgets[r]):
                    finish(r)
            it += 1
            if slot is not None and active.any() and slot.due():
                snapshot()
        if slot is not None:  # the finished group: a later call under this directory loads it
            snapshot()
    finally:
        for r in np.flatnonzero(active):  # an exception: leave the traces as a single fit would
            models[r].end_fit()
