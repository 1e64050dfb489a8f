"""gnmax: PATE-GAN with the aggregation and analysis of the later PATE work (ours, not in the
audit paper).

The audit paper (``ganev2025elusive`` §7) leaves "the discrepancies between PATE-GAN and PATE" to
future work: PATE-GAN (``jordon2019pategan``) kept the Laplace noisy argmax and the moments
accountant of the first PATE paper, and spends a query on every row the student sees. This
preset keeps everything :mod:`~pategan_audit.implementations.corrected` guarantees (disjoint
teachers assigned row by row, exact under add/remove; public or DP bounds; nothing released
without noise; the budget checked *before* each iteration; fresh OS entropy unless seeded) and
changes three things:

1. **Confident-GNMax aggregation** (Papernot et al. 2018, "Scalable private learning with PATE",
   ``papernot2018scalable`` §4.1, Alg. 1): a query is answered only if the largest vote count
   plus ``N(0, σ₁²)`` reaches ``T = threshold · k``; an answered query gets the Gaussian noisy
   argmax ``argmax_c n_c + N(0, σ₂²)`` of the two counts (real / fake). Unanswered queries
   are not used to train the student.
2. **Rényi-DP accounting** (:mod:`pategan_audit.accounting.gnmax`): every query is charged the
   data-independent cost of the threshold check, ``λ/(2σ₁²)``, plus that of GNMax, ``λ/σ₂²``
   (Prop. 8), whether or not it was answered (charging GNMax only on answered queries would make
   the charge depend on the data); ε̂ = min over orders of ``RDP(λ) + ln(1/δ)/(λ−1)``. The
   charge does not depend on the votes, so the number of iterations is fixed by public
   quantities before training starts, and the run is (ε, δ)-DP for every dataset.
3. **Labels are reused, queries are not**: the answered queries (rows and noisy labels: a DP
   release, so reusing them is post-processing) go into a replay buffer; the student takes its
   ``student_iters`` steps per iteration on mini-batches from that buffer, so the generator can
   take many more steps than there are labels. corrected instead pays for every row each
   student step sees (5 × 64 per iteration).

Hyperparameters are set from public quantities only (N, ε, δ), never from the data; the rule
follows from what makes a noisy vote informative. Vote margins grow with the number of teachers
k while the budget fixes the noise for a given number of queries, so the preset sets
``σ₁ = σ₂ = noise_fraction · k`` (a quarter of the teachers by default: a query that 75 % of the
teachers call real is labelled real about 90 % of the time) and takes the smallest k at which
(ε, δ) pays for ``target_queries`` queries at that σ, or every row its own teacher (k = N) when
even that is not enough (small tables: with independent assignment about a third of the teachers
are then empty and vote on fakes only). The number of queries is whatever (ε, δ) pays for at that
σ (:func:`~pategan_audit.accounting.gnmax.max_queries_within_budget`), asked ``query_batch`` at a
time, which fixes the number of iterations before training. Because those labels are reused, the
generator's ``generator_steps`` steps in total (each after ``student_iters`` student steps on the
replay buffer) are spread over the iterations. Passing ``planned_queries`` instead fixes the
number of queries and derives σ from the budget (:func:`noise_for_budget`); ``sigma_threshold``
and ``sigma_vote`` fix the noise outright. The threshold is ``0.6 · k``.

Not implemented here: the data-dependent analysis of PATE 2018 (Thm 6) with a smooth-sensitivity
release of the resulting ε (``accounting.gnmax.release_gnmax_epsilon`` is ready for it); with
it, answered queries of strong consensus would cost far less than ``λ/σ₂²``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch
from scipy.optimize import brentq

from ..accounting.gnmax import DEFAULT_ORDERS, epsilon_from_rdp, gnmax_rdp, max_queries_within_budget, threshold_rdp
from .corrected import Corrected, CorrectedConfig

__all__ = ["GNMaxConfig", "GNMax", "RdpAccountant", "noise_for_budget", "confident_gnmax", "public_plan",
           "exact_query_rdp"]


@dataclass(frozen=True)
class GNMaxConfig(CorrectedConfig):
    """gnmax settings (see the module docstring)."""

    target_queries: int = 4096
    threshold: float = 0.6
    noise_fraction: float = 0.25
    sigma_threshold: float | None = None
    sigma_vote: float | None = None
    planned_queries: int | None = None
    query_batch: int = 16
    generator_steps: int = 1000
    replay_size: int = 4096
    student_batch: int = 64
    student_iters: int = 5
    teacher_iters: int = 5
    learning_rate: float = 1e-3
    accountant: str = "corrected"  # unused: gnmax brings its own RDP accountant

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("target_queries", "planned_queries", "query_batch", "replay_size", "student_batch",
                     "generator_steps"):
            value = getattr(self, name)
            if name == "planned_queries" and value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if not (isinstance(self.noise_fraction, (int, float)) and 0 < self.noise_fraction < np.inf):
            raise ValueError(f"noise_fraction must be a positive number (σ = noise_fraction · k), got {self.noise_fraction!r}")
        if not 0.0 <= float(self.threshold) <= 1.0:
            raise ValueError(f"threshold is a fraction of the teachers in [0, 1], got {self.threshold!r}")
        for name in ("sigma_threshold", "sigma_vote"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, (int, float)) and np.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number or None (from the budget), got {value!r}")
        if self.charging != "data_independent":
            raise ValueError("gnmax charges data-independently only; the data-dependent analysis (PATE 2018 Thm 6 "
                             "with a smooth-sensitivity release) is not implemented in this preset")


class RdpAccountant:
    """Rényi-DP accountant with the interface the engine expects of an accountant: ``alpha``
    is the accumulated RDP curve over :data:`~pategan_audit.accounting.gnmax.DEFAULT_ORDERS`,
    ``epsilon`` its (ε, δ) conversion, ``epsilon_if(n)`` the value after ``n`` more queries of
    ``per_query`` each."""

    def __init__(self, per_query: np.ndarray, *, delta: float, orders: np.ndarray = DEFAULT_ORDERS):
        self.orders = np.asarray(orders, dtype=np.float64)
        self.per_query = np.asarray(per_query, dtype=np.float64)
        self.delta = float(delta)
        self.alpha = np.zeros_like(self.orders)
        self.num_queries = 0

    @property
    def epsilon(self) -> float:
        if not self.alpha.any():
            return 0.0
        return float(epsilon_from_rdp(self.alpha, orders=self.orders, delta=self.delta)[0])

    @property
    def best_order(self) -> float:
        if not self.alpha.any():
            return float("nan")
        return float(epsilon_from_rdp(self.alpha, orders=self.orders, delta=self.delta)[1])

    def epsilon_if(self, n_queries: int) -> float:
        return float(epsilon_from_rdp(self.alpha + int(n_queries) * self.per_query, orders=self.orders,
                                      delta=self.delta)[0])

    def add_queries(self, n1) -> None:
        n = int(np.size(n1))
        self.alpha = self.alpha + n * self.per_query
        self.num_queries += n

    @property
    def worst_case_increment(self) -> np.ndarray:
        """RDP of one query, charged whatever its votes (every charge of this accountant)."""
        return self.per_query

    def copy(self) -> "RdpAccountant":
        other = RdpAccountant(self.per_query, delta=self.delta, orders=self.orders)
        other.alpha, other.num_queries = self.alpha.copy(), self.num_queries
        return other


def per_query_rdp(sigma_threshold: float, sigma_vote: float, orders: np.ndarray = DEFAULT_ORDERS) -> np.ndarray:
    """Data-independent RDP of one Confident-GNMax query: threshold check plus GNMax."""
    return threshold_rdp(orders, sigma=sigma_threshold) + gnmax_rdp(orders, sigma=sigma_vote)


def noise_for_budget(queries: int, *, epsilon: float, delta: float) -> float:
    """The σ (= σ₁ = σ₂) at which ``queries`` Confident-GNMax queries spend exactly (ε, δ)."""
    def excess(log_sigma: float) -> float:
        s = float(np.exp(log_sigma))
        return epsilon_from_rdp(queries * per_query_rdp(s, s), orders=DEFAULT_ORDERS, delta=delta)[0] - epsilon

    return float(np.exp(brentq(excess, np.log(1e-3), np.log(1e7), xtol=1e-12)))


def confident_gnmax(n1: torch.Tensor, *, num_teachers: int, threshold: float, sigma_threshold: float,
                    sigma_vote: float, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Confident-GNMax on binary votes ``n1`` [q] (teachers saying "real"; ``k − n1`` say
    "fake"): returns (labels [q] int64, answered [q] bool, noise [q, 3] float64 = threshold
    noise, noise on the "fake" count, noise on the "real" count). All draws are made for every
    query, answered or not, so the stream does not depend on the votes."""
    n1 = n1.to(torch.float64)
    counts = torch.stack([num_teachers - n1, n1], dim=1)
    noise = torch.randn((n1.shape[0], 3), dtype=torch.float64, generator=generator)
    noise[:, 0] *= sigma_threshold
    noise[:, 1:] *= sigma_vote
    answered = counts.max(dim=1).values + noise[:, 0] >= threshold * num_teachers
    labels = (counts[:, 1] + noise[:, 2] > counts[:, 0] + noise[:, 1]).to(torch.int64)
    return labels, answered, noise


def public_plan(num_rows: int, *, epsilon: float = 1.0, delta: float = 1e-5, **overrides) -> dict:
    """What gnmax will do on a table of ``num_rows`` rows, from public quantities alone (no
    data, no training): teachers k, noise σ₁ = σ₂, queries the budget pays for, iterations,
    generator steps per iteration, and the (ε, δ) those queries spend."""
    from .registry import create

    model = create("gnmax", epsilon=epsilon, delta=delta, seed=0, **overrides)
    model.delta_ = float(delta)  # what _begin_fit sets before it asks for the accountant
    cfg = model.config
    k = int(cfg.num_teachers) if cfg.num_teachers is not None else model._default_num_teachers(int(num_rows))
    s1, s2 = model._sigmas(k)
    per_query = per_query_rdp(s1, s2)
    queries = max_queries_within_budget(per_query, orders=DEFAULT_ORDERS, epsilon=model._epsilon_budget(), delta=float(delta))
    iterations = queries // int(cfg.query_batch)
    if cfg.max_iter is not None:
        iterations = min(iterations, int(cfg.max_iter))
    spent = epsilon_from_rdp(iterations * int(cfg.query_batch) * per_query, orders=DEFAULT_ORDERS, delta=float(delta))[0]
    return {"rows": int(num_rows), "teachers": k, "sigma": s2, "queries": iterations * int(cfg.query_batch),
            "iterations": iterations, "generator steps per iteration": max(1, -(-int(cfg.generator_steps) // max(iterations, 1))),
            "epsilon spent": float(spent) if iterations else 0.0}


def exact_query_rdp(num_teachers: int, *, threshold: float, sigma_threshold: float, sigma_vote: float,
                    orders: np.ndarray) -> np.ndarray:
    """The exact Rényi divergence of one Confident-GNMax query on two classes, worst case over
    every vote count and its neighbour (one teacher changing its vote), both directions, at
    each order: the output is ⊥, 0 or 1 with Gaussian-CDF probabilities (PATE 2018 §4.1). A
    mechanism-level check of the accountant: :func:`per_query_rdp` must be at least this."""
    from scipy.special import log_ndtr

    k, T = int(num_teachers), float(threshold) * int(num_teachers)
    orders = np.asarray(orders, dtype=np.float64)

    def log_probs(n1: int) -> np.ndarray:
        top = max(k - n1, n1)
        z = (2 * n1 - k) / (np.sqrt(2.0) * sigma_vote)
        answered = log_ndtr((top - T) / sigma_threshold)
        return np.array([log_ndtr((T - top) / sigma_threshold), answered + log_ndtr(z), answered + log_ndtr(-z)])

    worst = np.zeros_like(orders)
    for n1 in range(k + 1):
        for m1 in (n1 - 1, n1 + 1):
            if 0 <= m1 <= k:
                p, q = log_probs(n1), log_probs(m1)
                div = np.logaddexp.reduce(orders[:, None] * p + (1 - orders)[:, None] * q, axis=1) / (orders - 1)
                worst = np.maximum(worst, div)
    return worst


class GNMax(Corrected):
    """gnmax preset (see the module docstring)."""

    name: ClassVar[str] = "gnmax"
    Config: ClassVar[type] = GNMaxConfig
    # corrected's teacher rounds, except that all k teachers share one batch of B fakes per round
    # (fakes are public: the generator is a post-processing of released labels). With one row per
    # teacher k is N, and k·B private fakes per round would cost N generator passes; shared, B.
    _shared_teacher_fakes: ClassVar[bool] = True

    def _default_num_teachers(self, num_rows: int) -> int:
        """The smallest k whose σ = noise_fraction · k pays for ``target_queries`` queries within
        (ε, δ), at most N (see the module docstring); public: depends on N, ε and δ only."""
        sigma = noise_for_budget(int(self.config.target_queries), epsilon=self._epsilon_budget(),
                                 delta=float(self.config.delta))
        return int(min(num_rows, max(2, int(np.ceil(sigma / float(self.config.noise_fraction))))))

    def _queries_per_iteration(self) -> int:
        return int(self.config.query_batch)

    def _sigmas(self, num_teachers: int) -> tuple[float, float]:
        """σ₁, σ₂ from the settings: given outright, from ``planned_queries`` and the budget, or
        ``noise_fraction · k`` (the default rule; see the module docstring)."""
        cfg = self.config
        if cfg.planned_queries is not None:
            s = noise_for_budget(int(cfg.planned_queries), epsilon=self._epsilon_budget(), delta=self.delta_)
        else:
            s = float(cfg.noise_fraction) * num_teachers
        return (float(cfg.sigma_threshold) if cfg.sigma_threshold is not None else s,
                float(cfg.sigma_vote) if cfg.sigma_vote is not None else s)

    def _planned_iterations(self, per_query: np.ndarray) -> int:
        """Iterations the budget pays for (the safe stopping rule ends the run there)."""
        q = max_queries_within_budget(per_query, orders=DEFAULT_ORDERS, epsilon=self._epsilon_budget(), delta=self.delta_)
        iterations = int(q) // int(self.config.query_batch)
        if self.config.max_iter is not None:
            iterations = min(iterations, int(self.config.max_iter))
        if iterations < 1:
            raise ValueError(
                f"epsilon={self._epsilon_budget():g} cannot pay for one iteration of {self.config.query_batch} queries at "
                f"sigma={self.sigma_vote_:.4g} (k={self.num_teachers_}); raise epsilon, lower query_batch, or use more "
                "teachers (num_teachers, at most N) so that noise_fraction * k buys more queries")
        return iterations

    def _make_accountant(self, num_teachers: int):
        self.sigma_threshold_, self.sigma_vote_ = self._sigmas(num_teachers)
        per_query = per_query_rdp(self.sigma_threshold_, self.sigma_vote_)
        self.planned_iterations_ = self._planned_iterations(per_query)
        self.steps_per_iteration_ = max(1, -(-int(self.config.generator_steps) // self.planned_iterations_))
        self.trace.extra.update(sigma_threshold=self.sigma_threshold_, sigma_vote=self.sigma_vote_,
                                threshold_votes=float(self.config.threshold) * num_teachers,
                                planned_iterations=self.planned_iterations_, steps_per_iteration=self.steps_per_iteration_)
        self._replay_rows: list[torch.Tensor] = []
        self._replay_labels: list[torch.Tensor] = []
        self.trace.extra["answered"] = []
        return RdpAccountant(per_query, delta=self.delta_), per_query

    def _release_votes(self, n1: torch.Tensor) -> torch.Tensor:
        labels, answered, noise = confident_gnmax(n1, num_teachers=self.num_teachers_, threshold=float(self.config.threshold),
                                                  sigma_threshold=self.sigma_threshold_, sigma_vote=self.sigma_vote_,
                                                  generator=self.noise_gen)
        self.accountant.alpha = self.accountant.alpha + len(n1) * self._worst_increment  # every query, answered or not
        self.accountant.num_queries += int(len(n1))
        self._answered = answered
        if self.config.record:
            self._buf["votes"].append(n1.numpy())
            self._buf["noise"].append(noise.numpy())
            self._buf["labels"].append(torch.where(answered, labels, torch.full_like(labels, -1)).numpy())
            self._buf["charged"].append(np.ones(len(n1), dtype=bool))
        return labels.to(torch.float32)

    def _iteration(self, it: int) -> None:
        self._train_teachers()
        with torch.no_grad():
            u = self._fakes(self._latent(int(self.config.query_batch), self.train_gen, sampling=False),
                            generator=self.train_gen)
        labels = self._label(u)
        keep = self._answered
        self.trace.extra["answered"].append(int(keep.sum()))
        if keep.any():
            self._replay_rows.append(u[keep])
            self._replay_labels.append(labels[keep])
        rows = torch.cat(self._replay_rows) if self._replay_rows else torch.empty(0)
        if len(rows) > int(self.config.replay_size):  # keep the most recent answered queries
            rows = rows[-int(self.config.replay_size):]
            self._replay_rows = [rows]
            self._replay_labels = [torch.cat(self._replay_labels)[-int(self.config.replay_size):]]
        ys = torch.cat(self._replay_labels) if len(rows) else None
        for _ in range(self.steps_per_iteration_):
            if len(rows):
                for _ in range(int(self.config.student_iters)):
                    pick = torch.randint(len(rows), (int(self.config.student_batch),), generator=self.train_gen)
                    self._student_step(rows[pick], ys[pick])
            self._generator_step(int(self.config.student_batch))
