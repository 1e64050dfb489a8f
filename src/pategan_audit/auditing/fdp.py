"""ε from a whole ROC curve under Gaussian DP, and the chance floor of the Bayesian bound.

The count-based bounds of :mod:`.bounds` use one threshold of the attack. Nasr et al.
(USENIX Security 2023, "Tight auditing of differentially private machine learning", §4-5)
instead read the attack's whole trade-off curve through f-DP (Dong, Roth & Su, "Gaussian
differential privacy", JRSS-B 2022 / arXiv 1905.02383): a mechanism is μ-GDP iff every test
between the neighbouring worlds has type-II error at least ``G_μ(α) = Φ(Φ⁻¹(1 − α) − μ)``
(Def. 2.6 there). One threshold test with false-positive rate a and false-negative rate b thus
certifies ``μ ≥ Φ⁻¹(1 − a) − Φ⁻¹(b)``, and μ converts to (ε, δ) at every δ (Cor. 2.13)::

    δ(ε; μ) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).

What :func:`gdp_mu_lower_bound` computes (``correction="simultaneous"``, the default):

1. For every candidate threshold t (each distinct score, rule "predict in ⇔ s ≥ t") the counts
   FP(t) = #{out ≥ t}, FN(t) = #{in < t}, and for the mirrored rule ("in ⇔ s < t") TN(t), TP(t).
2. One-sided Clopper-Pearson upper bounds on the four error rates, *simultaneous over all
   thresholds*: a count x is first rounded up to the next point of a fixed geometric grid of
   counts X (0..10, then ratio ``grid_ratio``) and bounded by the 1 − a quantile of
   Beta(x' + 1, n − x'), with a = α / (4|X|) (Bonferroni over the grid and the four rates).
   Why this is valid for thresholds picked from the same scores, ties included: couple the
   scores to uniforms; then ``P(s ≥ t) ≤ B(FP(t))`` for all t fails only if some uniform order
   statistic U₍ₓ₊₁₎ exceeds B(x), x ∈ X, each of probability exactly a.
3. μ_lo = max(0, max over thresholds and both rules of Φ⁻¹(1 − FPR_hi) − Φ⁻¹(FNR_hi)):
   with probability ≥ 1 − α every bound holds, and then any μ-GDP mechanism has μ ≥ μ_lo.
   (The brief phrased this as "the largest μ consistent with the curve"; what is certified is
   the smallest μ consistent with every corrected point, i.e. a lower bound.)

Reading ε_lo = gdp_epsilon(μ_lo, δ): "the mechanism is not μ-GDP for any μ < μ_lo" holds for any
mechanism; turning that into an (ε, δ) lower bound assumes the mechanism's privacy profile is
Gaussian-shaped (as for DP-SGD, Nasr et al. §5), because it extrapolates along G_μ far beyond
the measured points (a perfect attack on 1,000 outputs per world gives ε_lo ≈ 30 at δ = 1e-5,
where the assumption-free Clopper-Pearson bound of :mod:`.bounds` gives 5.6 at α = 0.1). The Laplace vote
aggregators of the presets are not Gaussian-shaped: compare their audits in μ, or use
:mod:`.bounds` for assumption-free (ε, δ) statements.

``correction="pointwise"`` uses a plain one-sided CP bound at level α per rate and threshold,
as audits usually do (and as the paper's implementation notes §audit.attack does for its one selected threshold): it is not a
simultaneous guarantee and is offered for comparison only.

:func:`bayesian_null_floor` calibrates the project's Bayesian (joint-beta) bound,
:func:`.bounds.bayesian_eps_lower`: the values it reports for attacks that carry no signal.
"""
from __future__ import annotations

import functools
import math

import numpy as np
from scipy import optimize, special

from .bounds import AttackCounts, bayesian_eps_lower

__all__ = [
    "CORRECTIONS",
    "gdp_delta",
    "gdp_epsilon",
    "mu_from_epsilon_delta",
    "gdp_tradeoff",
    "count_grid",
    "gdp_mu_from_counts",
    "gdp_mu_lower_bound",
    "gdp_mu_ceiling",
    "gdp_audit",
    "bayesian_null_floor",
]

CORRECTIONS = ("simultaneous", "pointwise")


# -- GDP <-> (ε, δ) ---------------------------------------------------------------------------
def _check_mu(mu: float) -> float:
    mu = float(mu)
    if not (mu >= 0 and math.isfinite(mu)):
        raise ValueError(f"mu must be a finite number >= 0, got {mu!r}")
    return mu


def gdp_delta(mu: float, epsilon: float) -> float:
    """δ(ε) of μ-GDP (Dong, Roth & Su, Cor. 2.13), in log space for the e^ε term."""
    mu, epsilon = _check_mu(mu), float(epsilon)
    if mu == 0:
        return 0.0
    a = special.ndtr(-epsilon / mu + mu / 2)
    b = math.exp(epsilon + special.log_ndtr(-epsilon / mu - mu / 2))
    return float(max(a - b, 0.0))


def gdp_epsilon(mu: float, delta: float) -> float:
    """The smallest ε ≥ 0 with δ(ε; μ) ≤ δ: μ-GDP implies (ε, δ)-DP at this ε and no smaller.

    δ(ε; μ) is strictly decreasing in ε, so the root is unique (Brent, relative tol 1e-14).
    """
    mu = _check_mu(mu)
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    if gdp_delta(mu, 0.0) <= delta:
        return 0.0
    hi = max(1.0, mu * mu)
    while gdp_delta(mu, hi) > delta:
        hi *= 2.0
    return float(optimize.brentq(lambda e: gdp_delta(mu, e) - delta, 0.0, hi, xtol=1e-13, rtol=1e-14))


def mu_from_epsilon_delta(epsilon: float, delta: float) -> float:
    """The largest μ whose (ε, δ) curve passes through (ε, δ): μ-GDP ⇒ (ε, δ)-DP iff μ ≤ this.

    δ(ε; μ) increases in μ. Useful to put a claimed (ε, δ) on the μ scale of an audit.
    """
    if not (epsilon >= 0 and math.isfinite(epsilon)) or not 0 < delta < 1:
        raise ValueError(f"need epsilon >= 0 and delta in (0, 1), got {epsilon!r}, {delta!r}")
    hi = 1.0
    while gdp_delta(hi, epsilon) < delta:
        hi *= 2.0
    return float(optimize.brentq(lambda m: gdp_delta(m, epsilon) - delta, 1e-12, hi, xtol=1e-13, rtol=1e-14))


def gdp_tradeoff(mu: float, fpr) -> np.ndarray:
    """The μ-GDP trade-off curve G_μ(α) = Φ(Φ⁻¹(1 − α) − μ): the least FNR at FPR α."""
    return special.ndtr(-special.ndtri(np.asarray(fpr, float)) - _check_mu(mu))


# -- confidence bounds over all thresholds -------------------------------------------------------
def count_grid(n: int, *, grid_ratio: float = 1.02, dense_below: int = 10) -> np.ndarray:
    """The counts X at which error-rate bounds are computed: 0..dense_below, then a geometric
    grid of ratio ``grid_ratio`` up to n (always including n). Depends on n only."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if not grid_ratio > 1:
        raise ValueError(f"grid_ratio must be > 1, got {grid_ratio}")
    top = min(dense_below, n)
    pts = [np.arange(top + 1)]
    if n > top:
        steps = int(math.ceil(math.log(n / max(top, 1)) / math.log(grid_ratio))) + 1
        pts.append(np.ceil(max(top, 1) * grid_ratio ** np.arange(1, steps + 1)))
    grid = np.unique(np.clip(np.concatenate(pts), 0, n).astype(np.int64))
    return grid if grid[-1] == n else np.append(grid, n)


def _upper_rates(counts: np.ndarray, n: int, level: float, grid: np.ndarray | None) -> np.ndarray:
    """One-sided CP upper bounds on the rate behind each count (count rounded up to ``grid``).

    The Beta quantile is evaluated once per distinct (rounded) count, then gathered."""
    counts = np.asarray(counts, np.int64)
    x = counts if grid is None else grid[np.searchsorted(grid, counts, side="left")]
    values, inverse = np.unique(x, return_inverse=True)
    bound = np.ones(values.shape, float)
    inner = values < n
    bound[inner] = special.betaincinv(values[inner] + 1.0, n - values[inner] + 0.0, 1.0 - level)
    return bound[inverse].reshape(x.shape)


def _level(alpha: float, correction: str, grid_out: np.ndarray, grid_in: np.ndarray) -> tuple[float, float]:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    if correction == "pointwise":
        return alpha, alpha
    if correction == "simultaneous":  # four rate families (FP, TN, FN, TP), α/4 each, Bonferroni over the grid
        return alpha / (4 * grid_out.size), alpha / (4 * grid_in.size)
    raise ValueError(f"unknown correction {correction!r}; choose one of {CORRECTIONS}")


def gdp_mu_from_counts(
    *, fp, fn, n_out: int, n_in: int, alpha: float = 0.05, correction: str = "simultaneous", grid_ratio: float = 1.02
) -> dict:
    """μ lower bound from the counts of threshold rules "in ⇔ s ≥ t" (one entry per t, [T]).

    fp: [T] out-world outputs predicted in; fn: [T] in-world outputs predicted out. Both the rule
    and its mirror ("in ⇔ s < t", counts TN = n_out − FP, TP = n_in − FN) are used. Returns
    ``{"mu_lo", "index", "mirrored"}``: the bound, the entry that gives it, and whether the
    mirrored rule did. See the module docstring for the confidence statement.
    """
    fp, fn = np.atleast_1d(np.asarray(fp, np.int64)), np.atleast_1d(np.asarray(fn, np.int64))
    if fp.shape != fn.shape or fp.ndim != 1 or fp.size == 0:
        raise ValueError(f"fp and fn must be non-empty 1-D arrays of equal length, got {fp.shape} and {fn.shape}")
    if fp.min() < 0 or fp.max() > n_out or fn.min() < 0 or fn.max() > n_in:
        raise ValueError("counts must lie in [0, n_out] (fp) and [0, n_in] (fn)")
    g_out, g_in = count_grid(n_out, grid_ratio=grid_ratio), count_grid(n_in, grid_ratio=grid_ratio)
    a_out, a_in = _level(alpha, correction, g_out, g_in)
    use_out, use_in = (g_out, g_in) if correction == "simultaneous" else (None, None)
    with np.errstate(divide="ignore"):
        fwd = -special.ndtri(_upper_rates(fp, n_out, a_out, use_out)) - special.ndtri(_upper_rates(fn, n_in, a_in, use_in))
        rev = -special.ndtri(_upper_rates(n_out - fp, n_out, a_out, use_out)) - special.ndtri(
            _upper_rates(n_in - fn, n_in, a_in, use_in))
    both = np.stack([fwd, rev])
    flat = int(np.argmax(both))
    mirrored, index = divmod(flat, fp.size)
    return {"mu_lo": float(max(both.flat[flat], 0.0)), "index": index, "mirrored": bool(mirrored)}


def _roc_counts(scores_out, scores_in) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    so, si = np.sort(np.asarray(scores_out, float).ravel()), np.sort(np.asarray(scores_in, float).ravel())
    if so.size == 0 or si.size == 0 or not (np.isfinite(so).all() and np.isfinite(si).all()):
        raise ValueError("need finite attack scores from both worlds")
    thresholds = np.append(np.unique(np.concatenate([so, si])), np.inf)
    fp = so.size - np.searchsorted(so, thresholds, side="left")  # #{out >= t}
    fn = np.searchsorted(si, thresholds, side="left")  # #{in < t}
    return thresholds, fp, fn


def gdp_mu_lower_bound(
    scores_out, scores_in, *, alpha: float = 0.05, correction: str = "simultaneous", grid_ratio: float = 1.02
) -> float:
    """Lower confidence bound (level 1 − α) on the μ of any μ-GDP mechanism the attack is run on.

    scores_out: [n_out] attack scores (belief in "in") of outputs of the out world; scores_in:
    [n_in] of the in world. Direction-free (the mirrored rule is included).
    """
    _, fp, fn = _roc_counts(scores_out, scores_in)
    return gdp_mu_from_counts(fp=fp, fn=fn, n_out=np.size(scores_out), n_in=np.size(scores_in), alpha=alpha,
                              correction=correction, grid_ratio=grid_ratio)["mu_lo"]


def gdp_mu_ceiling(n_out: int, n_in: int, *, alpha: float = 0.05, correction: str = "simultaneous",
                   grid_ratio: float = 1.02) -> float:
    """The μ_lo of a perfect attack (0 errors): the largest value these sample sizes can show."""
    return gdp_mu_from_counts(fp=[0], fn=[0], n_out=n_out, n_in=n_in, alpha=alpha, correction=correction,
                              grid_ratio=grid_ratio)["mu_lo"]


def gdp_audit(scores_out, scores_in, *, alpha: float = 0.05, delta: float = 1e-5,
              correction: str = "simultaneous", grid_ratio: float = 1.02) -> dict:
    """μ_lo, its ε at ``delta`` (ε_lo = gdp_epsilon(μ_lo, δ)), the ceiling of the sample sizes
    and the threshold that gave the bound, as one flat record."""
    thresholds, fp, fn = _roc_counts(scores_out, scores_in)
    n_out, n_in = np.size(scores_out), np.size(scores_in)
    res = gdp_mu_from_counts(fp=fp, fn=fn, n_out=n_out, n_in=n_in, alpha=alpha, correction=correction,
                             grid_ratio=grid_ratio)
    ceiling = gdp_mu_ceiling(n_out, n_in, alpha=alpha, correction=correction, grid_ratio=grid_ratio)
    i = res["index"]
    return {
        "mu_lo": res["mu_lo"], "epsilon_lo": gdp_epsilon(res["mu_lo"], delta),
        "mu_ceiling": ceiling, "epsilon_ceiling": gdp_epsilon(ceiling, delta),
        "threshold": float(thresholds[i]), "rule": "s < t" if res["mirrored"] else "s >= t",
        "FP": int(fp[i]), "FN": int(fn[i]), "n_out": int(n_out), "n_in": int(n_in),
        "alpha": alpha, "delta": delta, "correction": correction,
    }


# -- calibration of the Bayesian bound ---------------------------------------------------------
@functools.lru_cache(maxsize=200_000)
def _bayes(fp: int, tn: int, fn: int, tp: int, alpha: float, delta: float) -> float:
    return bayesian_eps_lower(AttackCounts(FP=fp, TN=tn, FN=fn, TP=tp), alpha=alpha, delta=delta)


def bayesian_null_floor(
    n_out: int,
    n_in: int,
    *,
    rates=(0.5,),
    alpha: float = 0.1,
    delta: float = 1e-5,
    n_sims: int = 200,
    quantile: float = 0.95,
    seed: int = 0,
) -> dict:
    """What :func:`.bounds.bayesian_eps_lower` reports for attacks that carry no signal.

    *Chance attack*: each test output is predicted "in" with probability p (a fixed rule on a
    score independent of the world), so FP ~ Bin(n_out, p) and TP ~ Bin(n_in, p), independent.
    For each p in ``rates`` the bound of ``n_sims`` simulated count tables is computed (cached
    by counts); ``floor`` is the largest ``quantile`` over the rates. *Constant guess*: all
    outputs predicted "in" (FP = n_out, TP = n_in); the all-"out" guess gives the same value
    (the region and the Jeffreys posterior are symmetric under (FPR, FNR) → (1 − FNR, 1 − FPR)).

    Bayesian values at or below these must be read as chance: the joint-beta posterior puts
    little mass on the thin ε ≈ 0 band around FPR + FNR = 1 even when the attack is blind.
    Defaults: the paper's α = 0.1, δ = 1e-5 (implementation notes §audit.bounds).
    """
    if n_out < 1 or n_in < 1 or n_sims < 1 or not 0 < quantile < 1:
        raise ValueError(f"need n_out, n_in, n_sims >= 1 and quantile in (0, 1), got {n_out}, {n_in}, {n_sims}, {quantile}")
    rng = np.random.default_rng(seed)
    per_rate = {}
    for p in rates:
        if not 0 <= p <= 1:
            raise ValueError(f"rates must lie in [0, 1], got {p}")
        fp, tp = rng.binomial(n_out, p, size=n_sims), rng.binomial(n_in, p, size=n_sims)
        vals = np.array([_bayes(int(a), int(n_out - a), int(n_in - b), int(b), float(alpha), float(delta))
                         for a, b in zip(fp, tp)])
        per_rate[float(p)] = {"quantile": float(np.quantile(vals, quantile)), "mean": float(vals.mean()),
                              "fraction_positive": float(np.mean(vals > 0))}
    constant = _bayes(int(n_out), 0, 0, int(n_in), float(alpha), float(delta))
    return {
        "floor": max(v["quantile"] for v in per_rate.values()), "constant_guess": constant, "per_rate": per_rate,
        "n_out": n_out, "n_in": n_in, "n_sims": n_sims, "quantile": quantile, "alpha": alpha, "delta": delta,
    }
