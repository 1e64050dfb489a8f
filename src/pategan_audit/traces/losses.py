"""Figs. 3 and 11: teacher cross-entropy during training (paper §6.1, implementation notes §traces.losses).

Before training the authors fix each teacher j's first-seen subset P_j (its partition; for
synthcity the subset drawn at the first iteration) and one latent batch z* of size |P_0|.
After every iteration i, for every teacher t and subset j:

    CE[t][i, j] = BCE of teacher t on  P_j labelled 1  and  G_i(z*) labelled 0.

Two summaries of the k x k matrices are drawn:

* ``"paper"`` (the paper's caption/text, what we plot): own = CE[0][i, 0] (teacher 0 on its
  own subset); others = mean_{j>=1} CE[j][i, 0] ("the others on the same subset").
* ``"notebook"`` (the authors' plotting notebook, kept as a variant): own as above;
  others = mean_{j>=1} CE[j][i, j] (each other teacher on its own subset).

Updated's curves coincide (all teachers train on the same block, V4); disjoint teachers show
own < others early on, the gap that a PATE student is supposed to average away.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from .. import runner
from ..seeds import derive_seed
from .fitting import TraceRun, call_with, fit_traced
from .profiles import LOSS_EPSILONS, LOSS_IMPLEMENTATIONS, TRACE_DATASET, TRACE_DELTA, TRACE_NUM_TEACHERS

__all__ = [
    "run_iterations",
    "TeacherLossRecorder",
    "loss_run",
    "loss_frame",
    "teacher_losses",
    "loss_lines",
    "loss_bands",
    "loss_table",
    "LOSS_DEFINITIONS",
]

LOSS_DEFINITIONS = ("paper", "notebook")
_LATENT_TAG = 3  # derive_seed(seed, 3, reduce="u32"): the stream of the fixed latent batch z*


class TeacherLossRecorder:
    """Training callback ``cb(model, iteration)`` that stores CE[t][i, j] (k x k) per iteration.

    On its first call it fixes the subsets (``model.first_seen_subsets()``) and the latent batch
    (``model.fixed_latent(|P_0|, latent_seed)``); later calls reuse them.
    """

    def __init__(self, *, latent_seed: int):
        self.latent_seed = int(latent_seed)
        self.subsets: list[Any] | None = None
        self.latent: Any = None
        self.matrices: list[np.ndarray] = []
        self.iterations: list[int] = []

    def __call__(self, model: Any, iteration: int) -> None:
        if self.subsets is None:
            self.subsets = list(model.first_seen_subsets())
            if not self.subsets:
                raise ValueError(f"{type(model).__name__}.first_seen_subsets() returned no subsets")
            self.latent = model.fixed_latent(len(self.subsets[0]), self.latent_seed)
        ce = np.asarray(model.teacher_cross_entropy(self.subsets, self.latent), dtype=np.float64)
        k = len(self.subsets)
        if ce.ndim != 2 or ce.shape[1] != k:
            raise ValueError(f"teacher_cross_entropy returned shape {ce.shape}; expected [num_teachers, {k}]")
        self.matrices.append(ce)
        self.iterations.append(int(iteration))

    def result(self) -> np.ndarray:
        """CE as an array [iterations run, teacher t, subset j]."""
        if not self.matrices:
            return np.zeros((0, 0, 0))
        return np.stack(self.matrices)


def _compute_loss(implementation: str, settings: dict, dataset: str, latent_seed: int) -> dict:
    # Single fit on purpose: the recorder is a per-iteration callback (model.callbacks), which
    # implementations.fit_many does not call mid-training; the Fig. 11 seeds stay separate fits.
    recorder = TeacherLossRecorder(latent_seed=latent_seed)
    model = fit_traced(implementation, settings, dataset=dataset, callbacks=[recorder])
    return {"cross_entropy": recorder.result().astype(np.float32), "iterations": int(model.trace.iterations)}


def loss_run(implementation: str, **run: Any) -> dict:
    """One cached Fig. 3 training run: ``{"cross_entropy": [iters, k, k] float32, "iterations": int}``.

    ``run``: the fields of :class:`~pategan_audit.traces.fitting.TraceRun` (``epsilon``, ``seed``,
    ``max_iter``; optional ``num_teachers``, ``delta``, ``dataset``, ``overrides``)."""
    trace = TraceRun(implementation, **run)
    latent_seed = derive_seed(trace.seed, _LATENT_TAG, reduce="u32")
    return trace.cached("teacher_loss", lambda settings: _compute_loss(implementation, settings, trace.dataset, latent_seed),
                        latent_seed=latent_seed)


def loss_frame(cross_entropy: np.ndarray, **labels: Any) -> pd.DataFrame:
    """Tidy CE: one row per (iteration 1.., teacher, subset) plus constant ``labels`` columns."""
    ce = np.asarray(cross_entropy, dtype=np.float64)
    if ce.ndim != 3 or ce.shape[1] != ce.shape[2]:
        raise ValueError(f"cross_entropy must have shape [iterations, k, k], got {ce.shape}")
    n, k = ce.shape[0], ce.shape[1]
    it, t, j = np.meshgrid(np.arange(1, n + 1), np.arange(k), np.arange(k), indexing="ij")
    frame = pd.DataFrame({"iteration": it.ravel(), "teacher": t.ravel(), "subset": j.ravel(), "cross_entropy": ce.ravel()})
    for i, (name, value) in enumerate(labels.items()):
        frame.insert(i, name, value)
    return frame


def teacher_losses(
    implementations: Sequence[str] = LOSS_IMPLEMENTATIONS,
    *,
    seeds: Sequence[int] = (0,),
    epsilon: float = 1.0,
    max_iter: int = 1000,
    num_teachers: int = TRACE_NUM_TEACHERS,
    delta: float = TRACE_DELTA,
    dataset: str = TRACE_DATASET,
    epsilon_overrides: dict[str, float] | None = None,
    n_jobs: int | None = 1,
) -> pd.DataFrame:
    """Figs. 3/11 table: one training run per (implementation, seed), tidy CE rows.

    ``epsilon_overrides`` defaults to :data:`LOSS_EPSILONS` (smartnoise at epsilon = 3, as the
    authors ran it). Columns: implementation, seed, epsilon, iteration, teacher, subset, cross_entropy.
    """
    eps_by_impl = dict(LOSS_EPSILONS if epsilon_overrides is None else epsilon_overrides)
    jobs = [dict(implementation=name, epsilon=float(eps_by_impl.get(name, epsilon)), seed=int(s), max_iter=max_iter,
                 num_teachers=num_teachers, delta=delta, dataset=dataset)
            for name in implementations for s in seeds]
    results = runner.parallel_map(call_with, [(loss_run, job) for job in jobs], n_jobs=n_jobs)
    return loss_table(jobs, results)


def loss_table(jobs: Sequence[dict], results: Sequence[dict]) -> pd.DataFrame:
    """Assemble :func:`loss_run` results (with their job dicts) into the tidy Figs. 3/11 table."""
    frames = [loss_frame(res["cross_entropy"], implementation=job["implementation"], seed=job["seed"],
                         epsilon=job["epsilon"]) for job, res in zip(jobs, results)]
    return pd.concat(frames, ignore_index=True)


def run_iterations(losses: pd.DataFrame, seed: int | None = None) -> pd.Series:
    """Iterations each run took (its last recorded iteration), per implementation for one
    ``seed``, or per (implementation, seed) with ``seed=None``."""
    if seed is None:
        return losses.groupby(["implementation", "seed"])["iteration"].max()
    return losses[losses.seed == seed].groupby("implementation")["iteration"].max()


def loss_lines(losses: pd.DataFrame, *, definition: str = "paper") -> pd.DataFrame:
    """The two plotted lines per (implementation, seed, iteration): ``own`` and ``others``.

    definition "paper": others = mean_{t>=1} CE[t][., 0]; "notebook": mean_{t>=1} CE[t][., t].
    Returns columns implementation, seed, iteration, line ("own" | "others"), cross_entropy.
    """
    if definition not in LOSS_DEFINITIONS:
        raise ValueError(f"definition must be one of {LOSS_DEFINITIONS}, got {definition!r}")
    keys = ["implementation", "seed", "iteration"]
    own = losses[(losses.teacher == 0) & (losses.subset == 0)][keys + ["cross_entropy"]].assign(line="own")
    if definition == "paper":
        mask = (losses.teacher >= 1) & (losses.subset == 0)
    else:
        mask = (losses.teacher >= 1) & (losses.subset == losses.teacher)
    others = losses[mask].groupby(keys, as_index=False, sort=True)["cross_entropy"].mean().assign(line="others")
    out = pd.concat([own, others], ignore_index=True)[keys + ["line", "cross_entropy"]]
    return out.sort_values(keys + ["line"], kind="stable", ignore_index=True)


def loss_bands(lines: pd.DataFrame) -> pd.DataFrame:
    """Fig. 11 summary over seeds: mean, min, max and number of runs per (implementation, line, iteration).

    Runs that stopped earlier simply drop out of later iterations (``runs`` says how many remain).
    """
    grouped = lines.groupby(["implementation", "line", "iteration"], sort=True)["cross_entropy"]
    out = grouped.agg(mean="mean", min="min", max="max", runs="count").reset_index()
    return out
