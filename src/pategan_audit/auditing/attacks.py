"""The black-box attack: a random forest on featurised outputs, a threshold chosen on a
validation split, counts on a test split, and an ε lower bound (implementation notes §audit.attack).

Per world the featurised outputs are split in order into train / validation / test (paper:
400 / 200 / 400, proportions 2 : 1 : 2). The forest is trained on the train outputs
(label 1 = in); s = P(in) on the other outputs. For each direction (s and 1 − s) every distinct
validation score t is a candidate rule "predict in ⇔ score ≥ t"; the t with the largest
validation bound is applied once to the test outputs. The reported ε_emp is the larger of the
two directions' test bounds; the reported AUC is that of s over validation + test together.

Note: E(a, b; δ) reflects a point with FPR + FNR > 1 (an always-wrong rule is as informative as
an always-right one), so each direction already covers both orientations of its rule; the
second direction only changes which side of a tied score is "≥ t". A test set where every guess
is wrong therefore reports the same bound as a perfect one (tests/auditing/test_attacks.py).

Caveat (implementation notes §audit.attack): taking the larger of two test-set bounds computed on the same
test outputs weakens the stated confidence from 1 − α/2 to 1 − α by the union bound (95 % →
90 % at α = 0.1). We reproduce the paper's procedure and record both directions.

Deviations: the authors' forest has no seed (``RandomForestClassifier()``); ours takes
``seed`` so that reruns are identical. Ties between thresholds with equal validation bounds are
broken towards the smallest threshold (the authors' order depends on process scheduling).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import roc_auc_score

from .bounds import AttackCounts, eps_lower
from .fdp import gdp_audit

__all__ = [
    "DirectionResult",
    "AttackResult",
    "split_sizes",
    "counts_at_threshold",
    "select_threshold",
    "evaluate_scores",
    "random_forest_attack",
]


@dataclass(frozen=True)
class DirectionResult:
    """One score direction ("s" or "1-s"): the chosen threshold, its validation counts and
    bound, and the counts and bound it gives on the test outputs."""

    direction: str
    threshold: float
    validation: AttackCounts
    validation_epsilon: float
    test: AttackCounts
    test_epsilon: float


@dataclass(frozen=True)
class AttackResult:
    """Outcome of one attack (one row of the H result schema).

    epsilon: the reported ε_emp = max over the two directions of the test bound.
    auc: AUROC of s (not of 1 − s) over validation + test outputs of both worlds.
    best: the direction that gave ``epsilon``; directions: both, for re-analysis.
    """

    auc: float
    epsilon: float
    method: str
    alpha: float
    delta: float
    best: DirectionResult
    directions: tuple[DirectionResult, DirectionResult]
    gdp: dict | None = None

    @property
    def threshold(self) -> float:
        return self.best.threshold

    @property
    def test_counts(self) -> AttackCounts:
        return self.best.test

    def as_record(self) -> dict:
        """Flat dict (H schema): AUC, ε_emp, threshold, direction, validation and test counts."""
        rec = {"auc": self.auc, "epsilon_emp": self.epsilon, "method": self.method, "alpha": self.alpha,
               "delta": self.delta, "direction": self.best.direction, "threshold": self.best.threshold}
        for split, counts in (("valid", self.best.validation), ("test", self.best.test)):
            for name in ("FP", "TN", "FN", "TP"):
                rec[f"{split}_{name}"] = getattr(counts, name)
        for d in self.directions:
            rec[f"epsilon_emp[{d.direction}]"] = d.test_epsilon
        if self.gdp is not None:
            for key in ("mu_lo", "epsilon_lo", "mu_ceiling", "epsilon_ceiling"):
                rec[f"gdp_{key}"] = self.gdp[key]
        return rec


def split_sizes(n_per_world: int) -> tuple[int, int, int]:
    """(train, validation, test) outputs per world in the paper's 2 : 1 : 2 proportions
    (1,000 → 400 / 200 / 400; 40 → 16 / 8 / 16). Rounding goes to the train split."""
    if n_per_world < 5:
        raise ValueError(f"need at least 5 outputs per world for a 2:1:2 split, got {n_per_world}")
    n_valid = n_per_world // 5
    n_test = 2 * n_valid
    return n_per_world - n_valid - n_test, n_valid, n_test


def counts_at_threshold(*, scores_out: np.ndarray, scores_in: np.ndarray, threshold: float) -> AttackCounts:
    """Counts of the rule "predict in ⇔ score ≥ threshold" (implementation notes §audit.attack)."""
    scores_out, scores_in = np.asarray(scores_out, float), np.asarray(scores_in, float)
    fp = int(np.sum(scores_out >= threshold))
    tp = int(np.sum(scores_in >= threshold))
    return AttackCounts(FP=fp, TN=len(scores_out) - fp, FN=len(scores_in) - tp, TP=tp)


def select_threshold(
    *, scores_out: np.ndarray, scores_in: np.ndarray, method: str = "clopper_pearson", alpha: float = 0.1, delta: float = 1e-5
) -> tuple[float, AttackCounts, float]:
    """Pick the threshold maximising the ε bound over every distinct score t (implementation notes §audit.attack).

    Returns (threshold, counts, bound); ties go to the smallest threshold; NaN bounds are
    skipped. Arrays: ``scores_out`` (n_out,), ``scores_in`` (n_in,) validation scores.
    """
    scores_out, scores_in = np.asarray(scores_out, float), np.asarray(scores_in, float)
    if scores_out.size == 0 or scores_in.size == 0:
        raise ValueError("select_threshold needs validation scores from both worlds")
    candidates = np.unique(np.concatenate([scores_out, scores_in]))
    out_sorted, in_sorted = np.sort(scores_out), np.sort(scores_in)
    # number of scores >= t, for every candidate at once
    fp = len(out_sorted) - np.searchsorted(out_sorted, candidates, side="left")
    tp = len(in_sorted) - np.searchsorted(in_sorted, candidates, side="left")
    best = (None, None, -np.inf)
    for t, f, p in zip(candidates, fp, tp):
        counts = AttackCounts(FP=int(f), TN=len(out_sorted) - int(f), FN=len(in_sorted) - int(p), TP=int(p))
        eps = eps_lower(counts, method=method, alpha=alpha, delta=delta)
        if not np.isnan(eps) and eps > best[2]:
            best = (float(t), counts, float(eps))
    return best


def _direction(name, valid_out, valid_in, test_out, test_in, method, alpha, delta) -> DirectionResult:
    t, vcounts, veps = select_threshold(scores_out=valid_out, scores_in=valid_in, method=method, alpha=alpha, delta=delta)
    tcounts = counts_at_threshold(scores_out=test_out, scores_in=test_in, threshold=t)
    teps = eps_lower(tcounts, method=method, alpha=alpha, delta=delta)
    return DirectionResult(name, t, vcounts, veps, tcounts, teps)


def evaluate_scores(
    *,
    scores_out: np.ndarray,
    scores_in: np.ndarray,
    n_valid: int,
    method: str = "clopper_pearson",
    alpha: float = 0.1,
    delta: float = 1e-5,
) -> AttackResult:
    """Threshold + bound from attack scores (s = belief in "in") of the held-out outputs.

    ``scores_out``/``scores_in`` (n_valid + n_test,): the first ``n_valid`` per world are the
    validation set, the rest the test set, as in the authors' code ``estimate_eps``.
    """
    scores_out, scores_in = np.asarray(scores_out, float), np.asarray(scores_in, float)
    if not (0 < n_valid < len(scores_out) and n_valid < len(scores_in)):
        raise ValueError(
            f"n_valid={n_valid} must leave test outputs in both worlds (have {len(scores_out)} out, {len(scores_in)} in)"
        )
    labels = np.r_[np.zeros(len(scores_out)), np.ones(len(scores_in))]
    all_scores = np.r_[scores_out, scores_in]
    auc = float(roc_auc_score(labels, all_scores)) if np.isfinite(all_scores).all() else float("nan")
    results = []
    for name, (so, si) in (("s", (scores_out, scores_in)), ("1-s", (1 - scores_out, 1 - scores_in))):
        results.append(_direction(name, so[:n_valid], si[:n_valid], so[n_valid:], si[n_valid:], method, alpha, delta))
    best = max(results, key=lambda r: r.test_epsilon)  # first ("s") on ties
    return AttackResult(auc=auc, epsilon=best.test_epsilon, method=method, alpha=alpha, delta=delta,
                        best=best, directions=tuple(results))


def random_forest_attack(
    *,
    features_out: np.ndarray,
    features_in: np.ndarray,
    n_train: int,
    n_valid: int,
    seed: int = 0,
    methods: tuple[str, ...] = ("clopper_pearson",),
    alpha: float = 0.1,
    delta: float = 1e-5,
    n_estimators: int = 100,
    gdp: bool = True,
    gdp_alpha: float = 0.05,
) -> dict[str, AttackResult]:
    """The paper's attack (implementation notes §audit.attack): RandomForestClassifier (sklearn defaults, 100 trees) trained
    on the first ``n_train`` outputs per world; validation = next ``n_valid``; test = the rest.

    ``features_out``/``features_in``: (n_per_world, n_features). Returns {method: result}; the
    forest and its scores are shared by all methods (Fig. 12 recomputes only the bound).
    Non-finite features (e.g. the variance of a 1-row table) are replaced by 0.

    gdp: also bound μ-GDP from the whole ROC curve of the held-out outputs (Nasr et al. 2023,
    ``nasr2023tight``; :func:`pategan_audit.auditing.fdp.gdp_audit`, level 1 − ``gdp_alpha``):
    every result then carries ``gdp`` (μ_lo and the ε at δ it implies *if* the mechanism's
    trade-off curve is Gaussian, with the ceiling of these sample sizes), recorded as
    ``gdp_*`` columns by :meth:`AttackResult.as_record`.
    """
    fo = np.nan_to_num(np.asarray(features_out, float), nan=0.0, posinf=0.0, neginf=0.0)
    fi = np.nan_to_num(np.asarray(features_in, float), nan=0.0, posinf=0.0, neginf=0.0)
    if fo.ndim != 2 or fi.ndim != 2 or fo.shape[1] != fi.shape[1]:
        raise ValueError(f"features must be 2-D with equal widths, got {fo.shape} and {fi.shape}")
    if not (0 < n_train and n_train + n_valid < min(len(fo), len(fi))):
        raise ValueError(
            f"n_train={n_train} + n_valid={n_valid} must leave test outputs (have {len(fo)} out, {len(fi)} in); "
            "use split_sizes(n_per_world)"
        )
    forest = RandomForestClassifier(n_estimators=n_estimators, random_state=seed, n_jobs=1)
    forest.fit(np.r_[fo[:n_train], fi[:n_train]], np.r_[np.zeros(n_train), np.ones(n_train)])
    s_out = forest.predict_proba(fo[n_train:])[:, 1]
    s_in = forest.predict_proba(fi[n_train:])[:, 1]
    results = {m: evaluate_scores(scores_out=s_out, scores_in=s_in, n_valid=n_valid, method=m, alpha=alpha, delta=delta)
               for m in methods}
    if gdp:
        # the whole ROC of all held-out outputs (validation + test): its simultaneous bounds make
        # the choice of threshold free, so no split is needed (auditing.fdp)
        g = gdp_audit(s_out, s_in, alpha=gdp_alpha, delta=delta)
        results = {m: dataclasses.replace(r, gdp=g) for m, r in results.items()}
    return results
