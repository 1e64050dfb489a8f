"""Fig. 4: one vote stream, several moments accountants (paper §6.1, implementation notes §traces.moments).

The authors train ONE smartnoise model with epsilon = inf (it never stops), exactly 1,000
iterations, k = 5, L = 100 and lambda = 1 (config ``noise_multiplier: 1``), and feed the teacher
votes of every student step (5 x 64 queries per iteration) to each implementation's accountant
formula. Per formula, alpha(l) accumulates over all queries of an iteration and the plotted
estimate at iteration i is (the value smartnoise checks at the top of iteration i)

    e_i(l) = (alpha_{i-1}(l) + log(1/delta)) / l,      l = 1..L,

with the red dotted line min_l e_i(l). At lambda = 1 the formulas separate
(synthcity < updated < borealis = smartnoise, implementation notes §accountants.where-bugs-bite); at lambda <= 1e-3 every
query costs 2 lambda^2 l(l+1) under every formula and the curves coincide.

The per-query formulas live in :mod:`pategan_audit.accounting`; because a query's increment
depends only on its vote count n1 in {0..k}, the stream is reduced to a per-iteration histogram
of n1 and multiplied with a [k+1, L] table of increments (exact, and fast for long streams).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from .fitting import TraceRun, fit_traced
from .profiles import MOMENT_ACCOUNTANTS, TABLE_ACCOUNTANTS, TRACE_DATASET, TRACE_DELTA, TRACE_NUM_MOMENTS, TRACE_NUM_TEACHERS

__all__ = [
    "last_moments",
    "VoteStream",
    "record_vote_stream",
    "vote_histogram",
    "cumulative_moments",
    "per_moment_epsilon",
    "moment_curves",
    "final_epsilons",
]


@dataclass(frozen=True)
class VoteStream:
    """The teacher votes of one training run.

    votes: per iteration, an int array of n1 (votes for "real") per query; n0 = k - n1.
    num_teachers: k. lam: the lambda the run used (and the accountants are evaluated at).
    delta: the delta of the estimates. implementation / seed: provenance.
    model_eps_hat: the run's own accountant epsilon-hat after each iteration (cross-check).
    """

    votes: tuple[np.ndarray, ...]
    num_teachers: int
    lam: float
    delta: float
    implementation: str = "smartnoise"
    seed: int = 0
    model_eps_hat: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __post_init__(self) -> None:
        if self.num_teachers < 1:
            raise ValueError(f"num_teachers must be >= 1, got {self.num_teachers}")
        if not 0 < self.delta < 1:
            raise ValueError(f"delta must lie in (0, 1), got {self.delta}")
        for i, v in enumerate(self.votes):
            v = np.asarray(v)
            if v.size and (v.min() < 0 or v.max() > self.num_teachers):
                raise ValueError(f"iteration {i}: votes must lie in 0..{self.num_teachers} (n1 per query), "
                                 f"got range {v.min()}..{v.max()}")

    @property
    def iterations(self) -> int:
        return len(self.votes)

    @property
    def queries(self) -> int:
        return int(sum(np.asarray(v).size for v in self.votes))


def _compute_stream(settings: dict, dataset: str, implementation: str) -> dict:
    # One run per lambda (post-fit trace.votes only): a single fit, nothing for fit_many to stack.
    model = fit_traced(implementation, settings, dataset=dataset)
    votes = [np.asarray(v, dtype=np.int16) for v in model.trace.votes]
    if not votes:
        raise ValueError(f"{implementation} recorded no votes; it must expose trace.votes when record=True")
    return {"votes": votes, "model_eps_hat": np.asarray(model.trace.eps_hat, dtype=np.float64)}


def record_vote_stream(
    *,
    lam: float,
    iterations: int,
    seed: int,
    num_teachers: int = TRACE_NUM_TEACHERS,
    num_moments: int = TRACE_NUM_MOMENTS,
    delta: float = TRACE_DELTA,
    dataset: str = TRACE_DATASET,
    implementation: str = "smartnoise",
) -> VoteStream:
    """Train one model with epsilon = inf for exactly ``iterations`` iterations and keep its votes (cached)."""
    if not (isinstance(lam, (int, float)) and lam > 0 and math.isfinite(lam)):
        raise ValueError(f"lam must be a positive finite number, got {lam!r}")
    trace = TraceRun(implementation, epsilon=math.inf, seed=seed, max_iter=iterations, num_teachers=num_teachers,
                     delta=delta, dataset=dataset, overrides={"lam": float(lam), "num_moments": int(num_moments)})
    out = trace.cached("moments", lambda settings: _compute_stream(settings, dataset, implementation))
    if len(out["votes"]) != iterations:
        raise RuntimeError(f"{implementation} ran {len(out['votes'])} iterations, expected exactly {iterations} "
                           "(epsilon = inf must never stop the run)")
    return VoteStream(votes=tuple(out["votes"]), num_teachers=num_teachers, lam=float(lam), delta=float(delta),
                      implementation=implementation, seed=int(seed), model_eps_hat=out["model_eps_hat"])


def vote_histogram(votes: Sequence[np.ndarray], *, num_teachers: int) -> np.ndarray:
    """Counts [iterations, k+1]: entry (i, v) = number of queries of iteration i with n1 = v."""
    counts = np.zeros((len(votes), num_teachers + 1), dtype=np.int64)
    for i, v in enumerate(votes):
        counts[i] = np.bincount(np.asarray(v, dtype=np.int64), minlength=num_teachers + 1)[: num_teachers + 1]
    return counts


def cumulative_moments(stream: VoteStream, *, kind: str, num_moments: int = TRACE_NUM_MOMENTS) -> np.ndarray:
    """alpha_i(l) for i = 0..N (row 0 = zeros) under accountant formula ``kind``: shape [N+1, L].

    Exactly sum over the stream's queries of ``accounting.moment_increments(kind, ...)``; a NaN
    increment (Alg. 1 outside Theorem 3's domain, implementation notes §common.stopping) propagates only if
    a query with that vote count occurred.
    """
    from .. import accounting

    k = stream.num_teachers
    table = np.asarray(accounting.moment_increments(kind, n1=np.arange(k + 1), num_teachers=k, lam=stream.lam,
                                                    num_moments=num_moments), dtype=np.float64)
    if table.shape != (k + 1, num_moments):
        raise ValueError(f"moment_increments returned shape {table.shape}, expected {(k + 1, num_moments)}")
    counts = vote_histogram(stream.votes, num_teachers=k)
    contrib = counts[:, :, None] * table[None, :, :]
    contrib[np.broadcast_to(counts[:, :, None] == 0, contrib.shape)] = 0.0  # unused vote counts never contribute (even NaN)
    per_iteration = contrib.sum(axis=1)
    alpha = np.zeros((stream.iterations + 1, num_moments))
    alpha[1:] = np.cumsum(per_iteration, axis=0)
    return alpha


def per_moment_epsilon(alpha: np.ndarray, *, delta: float) -> np.ndarray:
    """e(l) = (alpha(l) + log(1/delta)) / l for every row of ``alpha`` [..., L] (Alg. 1, last line)."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    alpha = np.asarray(alpha, dtype=np.float64)
    orders = np.arange(1, alpha.shape[-1] + 1, dtype=np.float64)
    return (alpha + math.log(1.0 / delta)) / orders


def moment_curves(
    stream: VoteStream, *, accountants: Sequence[str] = MOMENT_ACCOUNTANTS, num_moments: int = TRACE_NUM_MOMENTS
) -> pd.DataFrame:
    """Tidy Fig. 4 data: one row per (accountant, iteration i = 1..N, moment l).

    Columns: lam, accountant, iteration, moment, alpha (alpha_i(l), after iteration i) and
    epsilon (e_i(l) = (alpha_{i-1}(l) + log(1/delta)) / l, the authors' plotted quantity).
    """
    n = stream.iterations
    it, ll = np.meshgrid(np.arange(1, n + 1), np.arange(1, num_moments + 1), indexing="ij")
    frames = []
    for kind in accountants:
        alpha = cumulative_moments(stream, kind=kind, num_moments=num_moments)
        eps = per_moment_epsilon(alpha[:-1], delta=stream.delta)
        frames.append(pd.DataFrame({"lam": stream.lam, "accountant": kind, "iteration": it.ravel(), "moment": ll.ravel(),
                                    "alpha": alpha[1:].ravel(), "epsilon": eps.ravel()}))
    return pd.concat(frames, ignore_index=True)


def last_moments(moments: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`moment_curves` at the last iteration."""
    return moments[moments.iteration == moments.iteration.max()]


def final_epsilons(
    streams: Sequence[VoteStream], *, accountants: Sequence[str] = TABLE_ACCOUNTANTS, num_moments: int = TRACE_NUM_MOMENTS
) -> pd.DataFrame:
    """The final epsilon-hat of every accountant fed the same votes, one row per (stream, accountant).

    eps_hat = min_l (alpha_N(l) + log(1/delta)) / l after all N iterations; best_moment = its l;
    first_moment = the l = 1 value; a NaN moment makes eps_hat NaN (best_moment -1), as numpy's
    ``min`` does upstream (implementation notes §common.stopping); model_eps_hat = the run's own accountant (only on the row of
    the accountant that implementation uses, a cross-check).
    """
    from .. import accounting

    rows = []
    for stream in streams:
        for kind in accountants:
            alpha = cumulative_moments(stream, kind=kind, num_moments=num_moments)[-1]
            eps_hat, best = accounting.epsilon_from_moments(alpha, delta=stream.delta, warn=False)
            own = kind == stream.implementation and stream.model_eps_hat.size > 0
            rows.append({
                "lam": stream.lam, "accountant": kind, "iterations": stream.iterations, "queries": stream.queries,
                "eps_hat": eps_hat, "best_moment": best,
                "first_moment": float(per_moment_epsilon(alpha, delta=stream.delta)[0]),
                "model_eps_hat": float(stream.model_eps_hat[-1]) if own else float("nan"),
            })
    return pd.DataFrame(rows)
