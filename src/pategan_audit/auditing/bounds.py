"""Lower confidence bounds on ε from the counts of a distinguishing attack.

Paper §6.2 reports ε_emp, an (ε, δ) lower bound computed from the false-positive and
false-negative counts of a membership attack on the test outputs (Fig. 5: Clopper-Pearson;
Fig. 12: the Bayesian "joint-beta" region of Zanella-Béguelin et al., ICML 2023). The
authors call ``privacy_estimates.compute_eps_lo_hi(..., alpha=0.1)`` (package
``privacy-estimates`` 0.1.0); this module re-derives both bounds from implementation notes §audit.bounds:

* :func:`clopper_pearson_eps_lower` — equal-tailed Clopper-Pearson interval at significance
  α/2 per rate, E(a, b; δ) at both corners, the rectangle-straddle rule (implementation notes §audit.bounds).
* :func:`bayesian_eps_lower` — Jeffreys posteriors FNR ~ Beta(½+FN, ½+TP),
  FPR ~ Beta(½+FP, ½+TN); P(ε) = posterior mass of the (ε, δ)-DP region; ε_lo solves
  P(ε) = α/2. The library integrates P with a 2-D adaptive quadrature (25-100 s each); here
  P is the 1-D integral ∫ f_FNR(x)[F_FPR(hi(x)) − F_FPR(lo(x))] dx, evaluated after the
  substitution u = F_FNR(x) with fixed Gauss-Legendre nodes between the kinks of the region
  boundary (≈1 ms per evaluation, agrees with the library to ≤ 0.01, tests/auditing).

Library caveat: ``compute_eps_lo_hi(..., "joint-beta")`` also computes the *upper* end and raises
when it exceeds 10 (e.g. for the implementation notes §audit.figures counts FP=0, TN=400, FN=356, TP=44), so a wrapper that
catches exceptions (as the authors' ``compute_eps_lower_single`` does, recording −1) silently
drops such thresholds; we compute the lower end only.

Deviation: when P(max_epsilon) < α/2 the library raises and the authors' wrapper records −1;
:func:`bayesian_eps_lower` returns ``max_epsilon`` instead, which is still a valid (if loose)
lower bound.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np
from scipy import optimize, special

__all__ = [
    "AttackCounts",
    "METHODS",
    "clopper_pearson_interval",
    "eps_from_rates",
    "clopper_pearson_eps_lower",
    "bayesian_probability_private",
    "bayesian_eps_lower",
    "eps_lower",
    "perfect_attack_ceiling",
    "min_test_outputs",
]

METHODS = ("clopper_pearson", "bayesian")


@dataclass(frozen=True)
class AttackCounts:
    """Outcome counts of an attack that predicts "in" (target present) or "out".

    FP: out-world outputs predicted in; TN: out-world outputs predicted out;
    FN: in-world outputs predicted out; TP: in-world outputs predicted in.
    Named fields on purpose: the order (FP, TN, FN, TP) is easy to mix up (``privacy-estimates`` ``eps_from_fnr_fpr`` names its arguments inconsistently).
    """

    FP: int
    TN: int
    FN: int
    TP: int

    def __post_init__(self) -> None:
        for name in ("FP", "TN", "FN", "TP"):
            value = getattr(self, name)
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                raise ValueError(f"{name} must be an integer count, got {value!r}")
            if value < 0:
                raise ValueError(f"{name} must be >= 0, got {value}")
            object.__setattr__(self, name, int(value))
        if self.n_out == 0 or self.n_in == 0:
            raise ValueError(
                f"each world needs at least one output (got FP+TN={self.n_out}, FN+TP={self.n_in}); "
                "evaluate the attack on outputs from both worlds"
            )

    @property
    def n_out(self) -> int:
        return self.FP + self.TN

    @property
    def n_in(self) -> int:
        return self.FN + self.TP

    @property
    def fpr(self) -> float:
        """False-positive rate α̂ = FP / (FP + TN)."""
        return self.FP / self.n_out

    @property
    def fnr(self) -> float:
        """False-negative rate β̂ = FN / (FN + TP)."""
        return self.FN / self.n_in

    @classmethod
    def from_predictions(cls, *, predicted_in: Iterable[bool], is_in: Iterable[bool]) -> "AttackCounts":
        """Counts from per-output guesses (True = "in") and the true worlds (True = "in")."""
        pred = np.asarray(list(predicted_in) if not isinstance(predicted_in, np.ndarray) else predicted_in)
        truth = np.asarray(list(is_in) if not isinstance(is_in, np.ndarray) else is_in)
        if pred.shape != truth.shape or pred.ndim != 1:
            raise ValueError(f"predicted_in and is_in must be 1-D of equal length, got {pred.shape} and {truth.shape}")
        pred, truth = pred.astype(bool), truth.astype(bool)
        return cls(
            FP=int(np.sum(pred & ~truth)), TN=int(np.sum(~pred & ~truth)),
            FN=int(np.sum(~pred & truth)), TP=int(np.sum(pred & truth)),
        )


def _check_level(alpha: float, delta: float) -> None:
    if not (0 < alpha < 1):
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}; the paper uses alpha=0.1")
    if not (0 <= delta < 1):
        raise ValueError(f"delta must lie in [0, 1), got {delta!r}; the paper uses delta=1e-5")


def clopper_pearson_interval(*, errors: int, trials: int, significance: float) -> tuple[float, float]:
    """Equal-tailed Clopper-Pearson interval for a binomial rate at the given significance.

    Lower end: the significance/2 quantile of Beta(x, n − x + 1) (0 when x = 0); upper end:
    the 1 − significance/2 quantile of Beta(x + 1, n − x) (1 when x = n). implementation notes §audit.bounds calls
    this with significance α/2, i.e. each end is a 1 − α/4 one-sided bound.
    """
    if trials <= 0 or not 0 <= errors <= trials:
        raise ValueError(f"need 0 <= errors <= trials and trials > 0, got errors={errors}, trials={trials}")
    if not 0 < significance < 1:
        raise ValueError(f"significance must lie in (0, 1), got {significance}")
    tail = significance / 2
    lower = 0.0 if errors == 0 else float(special.betaincinv(errors, trials - errors + 1, tail))
    upper = 1.0 if errors == trials else float(special.betaincinv(errors + 1, trials - errors, 1 - tail))
    return lower, upper


def eps_from_rates(*, fpr: float, fnr: float, delta: float) -> float:
    """E(a, b; δ) of implementation notes §audit.bounds: the ε whose (ε, δ)-DP region has (fnr, fpr) on its boundary.

    If a + b > 1 the point is reflected to (1 − b, 1 − a); then with lo = min, hi = max:
    0 if hi > 1 − δ − lo, +∞ if lo = 0, else log((1 − δ − hi) / lo). For rates below ½ this is
    the paper's max{log((1 − α − δ)/β), log((1 − β − δ)/α), 0}.
    """
    if fpr < 0 or fnr < 0 or fpr > 1 or fnr > 1:
        raise ValueError(f"rates must lie in [0, 1], got fpr={fpr}, fnr={fnr}")
    a, b = fpr, fnr
    if a + b > 1:
        a, b = 1 - b, 1 - a
    lo, hi = min(a, b), max(a, b)
    if hi > 1 - delta - lo:
        return 0.0
    if lo == 0:
        return math.inf
    return math.log((1 - delta - hi) / lo)


def clopper_pearson_eps_lower(counts: AttackCounts, *, alpha: float = 0.1, delta: float = 1e-5) -> float:
    """ε lower bound from Clopper-Pearson intervals (implementation notes §audit.bounds, as in Fig. 5).

    Same quantity as ``privacy_estimates.compute_eps_lo_hi(count, delta, alpha, "beta")[0]``,
    the call the authors make with α = 0.1. Stated confidence ≥ 1 − α/2 (95 % at α = 0.1).
    """
    _check_level(alpha, delta)
    fpr_lo, fpr_hi = clopper_pearson_interval(errors=counts.FP, trials=counts.n_out, significance=alpha / 2)
    fnr_lo, fnr_hi = clopper_pearson_interval(errors=counts.FN, trials=counts.n_in, significance=alpha / 2)
    eps = min(eps_from_rates(fpr=fpr_hi, fnr=fnr_hi, delta=delta), eps_from_rates(fpr=fpr_lo, fnr=fnr_lo, delta=delta))
    # implementation notes §audit.bounds: a rectangle that straddles the line FPR + FNR = 1 contains a non-leaking point.
    if (fnr_hi > 1 - fpr_hi) != (fnr_lo > 1 - fpr_lo):
        eps = 0.0
    return float(eps)


# --- Bayesian (joint-beta) -----------------------------------------------------------------

_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(64)


def _region(x: np.ndarray, epsilon: float, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper FPR boundary of the (ε, δ)-DP region at FNR = x (implementation notes §audit.bounds, Bayesian item)."""
    e, inv = math.exp(epsilon), math.exp(-epsilon)
    lower = np.maximum(0.0, np.maximum(1 - delta - e * x, inv * (1 - delta - x)))
    upper = np.minimum(1.0, np.minimum(1 + (delta - x) * inv, delta + (1 - x) * e))
    return lower, upper


def bayesian_probability_private(counts: AttackCounts, *, epsilon: float, delta: float = 1e-5) -> float:
    """P(ε): posterior probability (Jeffreys priors) that (FNR, FPR) lies in the (ε, δ)-DP region.

    Computed as ∫₀¹ g(F⁻¹_FNR(u)) du with g(x) = F_FPR(hi(x)) − F_FPR(lo(x)); the u-interval is
    cut at the images of the boundary kinks x ∈ {δ, (1−δ)/(1+e^ε), 1 − (1−δ)/(1+e^ε), 1 − δ} and
    each piece integrated with 64-node Gauss-Legendre (smooth integrand on each piece).
    """
    if epsilon < 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    a_fnr, b_fnr = 0.5 + counts.FN, 0.5 + counts.TP
    a_fpr, b_fpr = 0.5 + counts.FP, 0.5 + counts.TN
    knot = (1 - delta) / (1 + math.exp(epsilon))
    kinks = np.array([0.0, delta, knot, 1 - knot, 1 - delta, 1.0])
    u_knots = np.unique(np.clip(special.betainc(a_fnr, b_fnr, np.sort(kinks)), 0.0, 1.0))
    total = 0.0
    for u0, u1 in zip(u_knots[:-1], u_knots[1:]):
        if u1 <= u0:
            continue
        u = 0.5 * (u1 - u0) * _GL_NODES + 0.5 * (u1 + u0)
        x = special.betaincinv(a_fnr, b_fnr, u)
        lower, upper = _region(x, epsilon, delta)
        g = special.betainc(a_fpr, b_fpr, upper) - special.betainc(a_fpr, b_fpr, np.minimum(lower, upper))
        total += 0.5 * (u1 - u0) * float(np.dot(_GL_WEIGHTS, g))
    return float(min(max(total, 0.0), 1.0))


def bayesian_eps_lower(
    counts: AttackCounts,
    *,
    alpha: float = 0.1,
    delta: float = 1e-5,
    max_epsilon: float = 10.0,
    xtol: float = 1e-4,
) -> float:
    """ε lower bound from the joint-beta posterior (implementation notes §audit.bounds, as in Fig. 12).

    Same quantity as ``privacy_estimates.compute_eps_lo_hi(count, delta, alpha, "joint-beta")[0]``
    (which solves P(ε) = α/2 with tolerance 0.01): 0 if P(0) ≥ α/2; the root of P(ε) = α/2
    otherwise; ``max_epsilon`` if P(max_epsilon) < α/2 (library: error, authors: −1).
    """
    _check_level(alpha, delta)
    target = alpha / 2

    def objective(eps: float) -> float:
        return bayesian_probability_private(counts, epsilon=eps, delta=delta) - target

    if objective(0.0) >= 0:
        return 0.0
    if objective(max_epsilon) < 0:
        return float(max_epsilon)
    return float(optimize.brentq(objective, 0.0, max_epsilon, xtol=xtol))


_BOUNDS: dict[str, Callable[..., float]] = {
    "clopper_pearson": clopper_pearson_eps_lower,
    "bayesian": bayesian_eps_lower,
}


def eps_lower(counts: AttackCounts, *, method: str = "clopper_pearson", alpha: float = 0.1, delta: float = 1e-5) -> float:
    """Dispatch to one of :data:`METHODS` ("clopper_pearson" for Fig. 5, "bayesian" for Fig. 12)."""
    try:
        fn = _BOUNDS[method]
    except KeyError:
        raise ValueError(f"unknown bound method {method!r}; use one of {METHODS}") from None
    return fn(counts, alpha=alpha, delta=delta)


def perfect_attack_ceiling(
    *, n_per_world: int, method: str = "clopper_pearson", alpha: float = 0.1, delta: float = 1e-5
) -> float:
    """The largest ε_emp a game with ``n_per_world`` test outputs per world can report: the bound
    for a perfect attack (0 errors). implementation notes §audit.ceiling: 400 → 4.6815 (CP, α = 0.1); implementation notes §audit.ceiling lists more."""
    if n_per_world < 1:
        raise ValueError(f"n_per_world must be >= 1, got {n_per_world}")
    counts = AttackCounts(FP=0, TN=n_per_world, FN=0, TP=n_per_world)
    return eps_lower(counts, method=method, alpha=alpha, delta=delta)


def min_test_outputs(
    *, target_epsilon: float, method: str = "clopper_pearson", alpha: float = 0.1, delta: float = 1e-5, limit: int = 100_000
) -> int:
    """Smallest number of test outputs per world for which a perfect attack gives
    ε_emp > ``target_epsilon`` (implementation notes §audit.ceiling; the ceiling grows monotonically in n)."""
    if target_epsilon < 0:
        raise ValueError(f"target_epsilon must be >= 0, got {target_epsilon}")
    lo, hi = 1, 1
    while perfect_attack_ceiling(n_per_world=hi, method=method, alpha=alpha, delta=delta) <= target_epsilon:
        lo, hi = hi + 1, hi * 2
        if hi > limit:
            raise ValueError(f"more than {limit} outputs per world needed for ε_emp > {target_epsilon}")
    while lo < hi:  # smallest n in [lo, hi] with ceiling > target
        mid = (lo + hi) // 2
        if perfect_attack_ceiling(n_per_world=mid, method=method, alpha=alpha, delta=delta) > target_epsilon:
            hi = mid
        else:
            lo = mid + 1
    return lo
