"""gnmax: PATE-GAN with the aggregation and analysis of the later PATE work (ours, not in the
audit paper).

The audit paper (``ganev2025elusive`` §7) leaves "the discrepancies between PATE-GAN and PATE" to
future work: PATE-GAN (``jordon2019pategan``) kept the Laplace noisy argmax and the moments
accountant of the first PATE paper, and spends a query on every row the student sees. This
preset keeps everything :mod:`~pategan_audit.implementations.corrected` guarantees (disjoint
teachers assigned row by row, exact under add/remove; public or DP bounds; nothing released
without noise; the budget checked *before* each iteration; fresh OS entropy unless seeded) and
changes four things:

1. **Confident-GNMax aggregation** (Papernot et al. 2018, "Scalable private learning with PATE",
   ``papernot2018scalable`` §4.1, Alg. 1): a query is answered only if the largest vote count
   plus ``N(0, σ₁²)`` reaches ``T = threshold · k``; an answered query gets the Gaussian noisy
   argmax ``argmax_c n_c + N(0, σ₂²)`` of the two counts (real / fake). Unanswered queries
   are not used to train the student.
2. **Rényi-DP accounting** (:class:`~pategan_audit.accounting.rdp.RdpAccountant`; formulas in
   :mod:`pategan_audit.accounting.gnmax`): every query is charged the data-independent
   cost of the threshold check, ``λ/(2σ₁²)``, plus that of GNMax, ``λ/σ₂²``
   (Prop. 8), whether or not it was answered (charging GNMax only on answered queries would make
   the charge depend on the data); ε̂ = min over orders of ``RDP(λ) + ln(1/δ)/(λ−1)``. The
   charge does not depend on the votes, so the number of iterations is fixed by public
   quantities before training starts, and the run is (ε, δ)-DP for every dataset.
3. **Labels are reused, queries are not**: the answered queries (rows and noisy labels: a DP
   release, so reusing them is post-processing) go into a replay buffer; the student takes its
   ``student_iters`` steps per iteration on mini-batches from that buffer, so the generator can
   take many more steps than there are labels. corrected instead pays for every row each
   student step sees (5 × 64 per iteration).
4. **Integer columns are rounded stochastically** (``integer_decode="stochastic"``: up with
   probability the fractional part; corrected rounds to the nearest integer): post-processing
   that keeps each column's mean. With nearest-integer rounding a 0/1 label that the generator
   puts on one side of 0.5 for every row decodes to a single class, and a table with one label
   class scores AUROC 0.5 under every classifier; gnmax's first archived tables were
   single-class that way (implementation notes §gnmax.curves).

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
number of queries and derives σ from the budget
(:func:`~pategan_audit.accounting.rdp.noise_for_budget`); ``sigma_threshold`` and ``sigma_vote``
fix the noise outright. The threshold is ``0.6 · k``.

**Data-dependent analysis** (``analysis="data_dependent"``; the default, ``"data_independent"``,
is everything above; implementation notes §gnmax.data-dependent). PATE 2018's own analysis (§4.1, Thm 6, App. B/C): an answered query of
strong consensus costs far less than ``λ/σ₂²``, but that cost is a function of the votes, so it
may be published only through a DP release of it. In this mode:

* the run is the default mode's: the same k, σ₁, σ₂, number of queries and iterations, fixed
  before training by public quantities (``planned_queries`` or the default rule above, from N,
  ε, δ) through the data-independent accountant. Nothing that depends on the data-dependent cost
  is read during training (a stopping rule reading it would leak), so the iteration count does
  not depend on the data, and the data-independent ε of the run, the worst case, still stops
  before the budget ε would be exceeded;
* the threshold check (Alg. 1 step 1) is charged data-independently, ``λ/(2σ₁²)`` on every
  query; each *answered* query is charged the data-dependent RDP of GNMax at its own vote
  histogram (Thm 6 with the orders of Prop. 10, ``Pr[GNMax ≠ argmax]`` bounded by Prop. 7:
  :func:`~pategan_audit.accounting.gnmax.gnmax_data_dependent_rdp`); an unanswered query
  releases nothing of GNMax and is not charged for it (Alg. 1);
* after training, the data-dependent RDP at one order λ is released with the smooth-sensitivity
  mechanism GNSS (§4.2, App. C, Thm 23; :func:`~pategan_audit.accounting.smooth_sensitivity.release_gnmax_epsilon`):
  ``Σanswered_ RDP_j(λ) + SS_β·σ_s·Z`` with ``Z ~ N(0, 1)`` from the DP-noise stream, plus the
  threshold checks, plus the RDP of the release itself, plus ``ln(1/δ)/(λ−1)``. λ, β and σ_s
  are fixed before training from public quantities (:func:`release_parameters`): λ is the order
  at which the data-independent ε of the planned queries is smallest, β = 0.4/λ (inside the
  range ``[0.3/λ, 0.495/λ)`` that the authors' scripts search; GNSS needs ``λ < 1/(2β)``), and
  σ_s makes the Gaussian part of the release's cost, ``λe^{2β}/σ_s²``, 5 % of ε. These rules are
  ours: the paper requires only that they not depend on the data (the authors' scripts tune all
  three on the votes and say the result cannot be released). ``release_order``,
  ``release_beta`` and ``release_sigma`` set them outright.

The reported ε̂ (``trace.eps_hat[-1]``; the entries before it are the data-independent values
after each iteration, which are public) is then the *released* ε, not the target
(``guarantee_ == "released"``): a DP estimate of what the data-dependent analysis certifies,
below the target under strong consensus and above it (by the cost of the release) when
consensus is weak. The data-independent ε of the same queries (``trace.extra["eps_data_independent"]``,
the default mode's ε̂, at most ε) is the worst case of the training over all datasets; with the
release's own cost added (at λ) it is ``trace.extra["eps_worst_case"]``. The exact data-dependent
ε, its smooth sensitivity and the release noise are kept for analysis and marked private
(``trace.extra["private"]``): publishing them would not be DP.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch

from ..accounting.gnmax import DEFAULT_ORDERS, epsilon_from_rdp, max_queries_within_budget, threshold_rdp
from ..accounting.smooth_sensitivity import GNMaxPrivacyRelease, release_gnmax_epsilon
# the RDP accountant and its helpers live in accounting.rdp (and are its API, not this module's)
from ..accounting.rdp import RdpAccountant, binary_histograms, data_dependent_epsilon, noise_for_budget, per_query_rdp
from ..replicas.gnmax import GNMaxStep
from ..replicas.loop import fit_one
from .corrected import Corrected, CorrectedConfig

__all__ = ["GNMaxConfig", "GNMax", "confident_gnmax", "public_plan", "exact_query_rdp", "confident_gnmax_log_probs",
           "ANALYSES", "release_parameters"]

#: the values of ``GNMaxConfig.analysis``: the default first
ANALYSES = ("data_independent", "data_dependent")
#: β = RELEASE_BETA_FACTOR / λ for the GNSS release (inside the authors' search range [0.3/λ, 0.495/λ))
RELEASE_BETA_FACTOR = 0.4
#: σ_s makes the Gaussian part of the GNSS cost, λe^{2β}/σ_s², this share of the ε budget
RELEASE_COST_SHARE = 0.05


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
    analysis: str = "data_independent"
    release_order: float | None = None
    release_beta: float | None = None
    release_sigma: float | None = None
    integer_decode: str = "stochastic"

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
            raise ValueError("gnmax charges the budget data-independently only (charging='data_independent'); for "
                             "PATE 2018's data-dependent analysis (Thm 6) with a smooth-sensitivity release of its "
                             "epsilon pass analysis='data_dependent'")
        if self.analysis not in ANALYSES:
            raise ValueError(f"analysis must be one of {ANALYSES} (the data-independent bound by default, or PATE 2018's "
                             f"data-dependent bound with a private release of its epsilon), got {self.analysis!r}")
        for name, low in (("release_order", 1.0), ("release_beta", 0.0), ("release_sigma", 0.0)):
            value = getattr(self, name)
            if value is None:
                continue
            if self.analysis != "data_dependent":
                raise ValueError(f"{name} sets the private release of the data-dependent epsilon; it applies only with "
                                 f"analysis='data_dependent', got {name}={value!r} with analysis={self.analysis!r}")
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                    or not np.isfinite(value) or value <= low:
                raise ValueError(f"{name} must be a finite number > {low:g} or None (the public rule), got {value!r}")
        if self.release_order is not None and self.release_beta is not None \
                and not 2.0 * float(self.release_order) * float(self.release_beta) < 1.0:
            raise ValueError(f"the smooth-sensitivity release needs release_order < 1/(2 release_beta), got "
                             f"release_order={self.release_order!r}, release_beta={self.release_beta!r}")


def release_parameters(num_queries: int, per_query: np.ndarray, *, epsilon: float, delta: float,
                       order: float | None = None, beta: float | None = None,
                       sigma_s: float | None = None) -> tuple[float, float, float]:
    """(λ, β, σ_s) of the smooth-sensitivity release of the data-dependent ε, from public
    quantities only (see the module docstring): λ = the order in :data:`DEFAULT_ORDERS` at which
    ``num_queries`` data-independent charges ``per_query`` convert to the smallest ε;
    β = ``RELEASE_BETA_FACTOR / λ``; σ_s with ``λe^{2β}/σ_s² = RELEASE_COST_SHARE · epsilon``.
    Values passed override the rule."""
    if order is None:
        order = epsilon_from_rdp(int(num_queries) * np.asarray(per_query, dtype=np.float64), orders=DEFAULT_ORDERS,
                                 delta=delta)[1]
    order = float(order)
    beta = RELEASE_BETA_FACTOR / order if beta is None else float(beta)
    if not 2.0 * order * beta < 1.0:
        raise ValueError(f"the smooth-sensitivity release needs order < 1/(2 beta), got order={order:g} and "
                         f"beta={beta:g}; lower release_beta or release_order")
    if sigma_s is None:
        sigma_s = float(np.sqrt(order * np.exp(2.0 * beta) / (RELEASE_COST_SHARE * float(epsilon))))
    return order, beta, float(sigma_s)


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
    generator steps per iteration, and the (ε, δ) those queries spend; with
    ``analysis="data_dependent"`` also the order, β and σ_s of the release (:func:`release_parameters`)."""
    from .registry import create

    model = create("gnmax", epsilon=epsilon, delta=delta, seed=0, **overrides)
    model.delta_ = float(delta)  # what begin_fit sets before it asks for the accountant
    cfg = model.config
    k = int(cfg.num_teachers) if cfg.num_teachers is not None else model._default_num_teachers(int(num_rows))
    s1, s2 = model._sigmas(k)
    per_query = per_query_rdp(s1, s2)
    queries = max_queries_within_budget(per_query, orders=DEFAULT_ORDERS, epsilon=model._epsilon_budget(), delta=float(delta))
    iterations = queries // int(cfg.query_batch)
    if cfg.max_iter is not None:
        iterations = min(iterations, int(cfg.max_iter))
    spent = epsilon_from_rdp(iterations * int(cfg.query_batch) * per_query, orders=DEFAULT_ORDERS, delta=float(delta))[0]
    plan = {"rows": int(num_rows), "teachers": k, "sigma": s2, "queries": iterations * int(cfg.query_batch),
            "iterations": iterations, "generator steps per iteration": max(1, -(-int(cfg.generator_steps) // max(iterations, 1))),
            "epsilon spent": float(spent) if iterations else 0.0}
    if cfg.analysis == "data_dependent" and iterations:
        plan["release order"], plan["release beta"], plan["release sigma"] = model._release_parameters(
            per_query, iterations * int(cfg.query_batch))
    return plan


def confident_gnmax_log_probs(k: int, n1: int, *, threshold: float, sigma_threshold: float,
                              sigma_vote: float) -> np.ndarray:
    """[3] ln P(⊥), ln P(0), ln P(1) of one Confident-GNMax query with ``n1`` of ``k`` teachers
    voting "real" (PATE 2018 §4.1 on two classes; log-CDFs, no cancellation)."""
    from scipy.special import log_ndtr

    top = max(k - n1, n1)
    T = float(threshold) * k
    z = (2 * n1 - k) / (np.sqrt(2.0) * sigma_vote)  # (n1 - n0) / (√2 σ₂)
    answered = log_ndtr((top - T) / sigma_threshold)
    return np.array([log_ndtr((T - top) / sigma_threshold), answered + log_ndtr(-z), answered + log_ndtr(z)])


def exact_query_rdp(num_teachers: int, *, threshold: float, sigma_threshold: float, sigma_vote: float,
                    orders: np.ndarray) -> np.ndarray:
    """The exact Rényi divergence of one Confident-GNMax query on two classes, worst case over
    every vote count and its neighbour (one teacher changing its vote), both directions, at
    each order: the output is ⊥, 0 or 1 with Gaussian-CDF probabilities (PATE 2018 §4.1). A
    mechanism-level check of the accountant: :func:`~pategan_audit.accounting.rdp.per_query_rdp`
    must be at least this."""
    k = int(num_teachers)
    orders = np.asarray(orders, dtype=np.float64)

    def log_probs(n1: int) -> np.ndarray:
        return confident_gnmax_log_probs(k, n1, threshold=threshold, sigma_threshold=sigma_threshold,
                                         sigma_vote=sigma_vote)

    worst = np.zeros_like(orders)
    for n1 in range(k + 1):
        for m1 in (n1 - 1, n1 + 1):
            if 0 <= m1 <= k:
                p, q = log_probs(n1), log_probs(m1)
                div = np.logaddexp.reduce(orders[:, None] * p + (1 - orders)[:, None] * q, axis=1) / (orders - 1)
                worst = np.maximum(worst, div)
    return worst


class GNMax(Corrected):
    """gnmax preset (see the module docstring).

    After ``fit``, ``guarantee_`` says what the reported ε̂ (``trace.eps_hat[-1]``) is:
    ``"data_independent"`` (default analysis): a bound that holds for every dataset, at most the
    target ε; ``"released"`` (``analysis="data_dependent"``): the DP release of the data-dependent
    ε (``privacy_release_``, a :class:`~pategan_audit.accounting.smooth_sensitivity.GNMaxPrivacyRelease` whose
    sensitive fields must not be published), which is not bounded by the target; the worst case
    over datasets is then ``trace.extra["eps_data_independent"]`` (the training) or
    ``trace.extra["eps_worst_case"]`` (the training and the release)."""

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
        ``noise_fraction · k`` (the default rule; see the module docstring), raised where a tiny
        table (k = N teachers, e.g. the audit's 4-5-row Querybased game) would not pay for one
        iteration to the noise that pays for exactly one (public: N, ε, δ only)."""
        cfg = self.config
        if cfg.planned_queries is not None:
            s = noise_for_budget(int(cfg.planned_queries), epsilon=self._epsilon_budget(), delta=self.delta_)
        else:
            s = float(cfg.noise_fraction) * num_teachers
            if cfg.sigma_threshold is None and cfg.sigma_vote is None:
                one = noise_for_budget(int(cfg.query_batch), epsilon=self._epsilon_budget(), delta=self.delta_)
                s = max(s, one * (1.0 + 1e-9))  # a hair above the root, so the budget check pays for the iteration
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

    def _release_parameters(self, per_query: np.ndarray, num_queries: int) -> tuple[float, float, float]:
        """(λ, β, σ_s) of the data-dependent release, from public quantities (:func:`release_parameters`)."""
        cfg = self.config
        return release_parameters(num_queries, per_query, epsilon=self._epsilon_budget(), delta=float(self.delta_),
                                  order=cfg.release_order, beta=cfg.release_beta, sigma_s=cfg.release_sigma)

    def _make_accountant(self, num_teachers: int):
        self.sigma_threshold_, self.sigma_vote_ = self._sigmas(num_teachers)
        per_query = per_query_rdp(self.sigma_threshold_, self.sigma_vote_)
        self.planned_iterations_ = self._planned_iterations(per_query)
        self.guarantee_ = "released" if self.config.analysis == "data_dependent" else "data_independent"
        if self.config.analysis == "data_dependent":  # fixed before training, from public quantities only
            self.release_order_, self.release_beta_, self.release_sigma_ = self._release_parameters(
                per_query, self.planned_iterations_ * int(self.config.query_batch))
            self._answered_n1: list[np.ndarray] = []
        self.steps_per_iteration_ = max(1, -(-int(self.config.generator_steps) // self.planned_iterations_))
        self.trace.extra.update(sigma_threshold=self.sigma_threshold_, sigma_vote=self.sigma_vote_,
                                threshold_votes=float(self.config.threshold) * num_teachers,
                                planned_iterations=self.planned_iterations_, steps_per_iteration=self.steps_per_iteration_)
        self.replay_rows_: list[torch.Tensor] = []
        self.replay_labels_: list[torch.Tensor] = []
        self.trace.extra["answered"] = []
        return RdpAccountant(per_query, delta=self.delta_)

    def _release_votes(self, n1: torch.Tensor) -> torch.Tensor:
        labels, answered, noise = confident_gnmax(n1, num_teachers=self.num_teachers_, threshold=float(self.config.threshold),
                                                  sigma_threshold=self.sigma_threshold_, sigma_vote=self.sigma_vote_,
                                                  generator=self.noise_gen)
        self.accountant.charge(queries=int(len(n1)))  # every query, answered or not
        self.answered_ = answered
        if self.config.analysis == "data_dependent":  # for the release after training; never read before
            self._answered_n1.append(n1[answered].numpy().astype(np.float64))
        if self.config.record:
            self.iteration_records["votes"].append(n1.numpy())
            self.iteration_records["noise"].append(noise.numpy())
            self.iteration_records["labels"].append(torch.where(answered, labels, torch.full_like(labels, -1)).numpy())
            self.iteration_records["charged"].append(np.ones(len(n1), dtype=bool))
        return labels.to(torch.float32)

    def _fit(self, df, label) -> None:
        """The fit: the training step :class:`~pategan_audit.replicas.gnmax.GNMaxStep` at R = 1
        through the replica loop (:func:`~pategan_audit.replicas.loop.fit_one`), then, with
        ``analysis="data_dependent"``, the release of its ε (:meth:`_release_epsilon`)."""
        fit_one(self, df, label, GNMaxStep)
        if self.config.analysis == "data_dependent":
            self._release_epsilon()

    def _release_epsilon(self) -> None:
        """After training (``analysis="data_dependent"``): the data-dependent ε of the run and its
        private release (GNSS, PATE 2018 §4.2, App. C) at the public (λ, β, σ_s); the released ε
        becomes the reported ``trace.eps_hat[-1]`` (see the module docstring)."""
        k, lam, delta = self.num_teachers_, self.release_order_, float(self.delta_)
        queries = int(self.accountant.num_queries)
        votes = binary_histograms(np.concatenate(self._answered_n1) if self._answered_n1 else np.empty(0), k)
        thresholds = queries * float(threshold_rdp([lam], sigma=self.sigma_threshold_)[0])
        eps_independent = float(self.accountant.epsilon)  # the default mode's ε̂: every query charged in full
        eps_dependent, order_dependent = data_dependent_epsilon(
            votes, num_queries=queries, sigma_threshold=self.sigma_threshold_, sigma_vote=self.sigma_vote_, delta=delta)
        if len(votes):
            release = release_gnmax_epsilon(votes, sigma=self.sigma_vote_, order=lam, delta=delta, beta=self.release_beta_,
                                            sigma_s=self.release_sigma_, rng=self.dp_rng, extra_rdp=thresholds)
        else:  # nothing of GNMax was released (no query passed the threshold): nothing sensitive to release
            tail = float(np.log(1.0 / delta) / (lam - 1.0))
            release = GNMaxPrivacyRelease(
                order=lam, delta=delta, beta=self.release_beta_, sigma_s=self.release_sigma_, num_queries=0,
                data_dependent_rdp=0.0, data_independent_rdp=0.0, smooth_sensitivity=0.0, noise=0.0, released_rdp=0.0,
                release_rdp=0.0, extra_rdp=thresholds, epsilon=thresholds + tail, epsilon_exact=thresholds + tail,
                epsilon_data_independent=thresholds + tail)
        # every query charged in full, and the release: the worst case of all that is published
        worst = float(queries * per_query_rdp(self.sigma_threshold_, self.sigma_vote_, np.array([lam]))[0]
                      + release.release_rdp + np.log(1.0 / delta) / (lam - 1.0))
        self.privacy_release_ = release
        self.trace.extra.update(
            analysis="data_dependent", guarantee="released", answered_queries=int(len(votes)),
            eps_data_independent=eps_independent, eps_worst_case=worst, eps_data_dependent=float(eps_dependent),
            order_data_dependent=float(order_dependent), eps_released=float(release.epsilon),
            release_order=lam, release_beta=self.release_beta_, release_sigma=self.release_sigma_,
            release_rdp=float(release.release_rdp), release_smooth_sensitivity=float(release.smooth_sensitivity),
            release_noise=float(release.noise),
            private=("eps_data_dependent", "order_data_dependent", "release_smooth_sensitivity", "release_noise"))
        self.trace.eps_hat[-1] = float(release.epsilon)
