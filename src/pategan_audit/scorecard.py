"""The reproduction scorecard: every number the paper prints that this project regenerates,
with ours, the difference, a tolerance from the spread of that statistic, and a verdict.

Paper values come from :mod:`pategan_audit.reference`; ours from the ``scorecard.csv`` files
the section notebooks write through :meth:`pategan_audit.report.Section.scorecard`
(columns ``table, row, column, ours`` and optionally ``runs``, ``ceiling``, ``interval_lo``,
``interval_hi``), from the presets' code (:func:`collect_code`: Tables 2 and 3), from the bundled
data (:func:`collect_data`: Table 7's counts) and from the committed archives
(:func:`collect_archived`). All use the same keys: ``table`` (e.g.
``"table4"``, ``"figure5"``), ``row`` and ``column`` as in the reference tables. Rows that are
functions of other rows (Table 6's non-conditional column = Table 4's original column; the
AUROC-Δ rows of Tables 1, 6 and 12) are derived by :func:`derive` when all their inputs are present.

Tolerances and verdicts: one rule per artefact (:data:`RULES`, :func:`tolerance`,
:func:`verdict`; below). Verdicts: ``reproduced``, ``at chance (both)``,
``differs``, ``not yet run`` and, for audit bounds at reduced profiles, ``reproduced up to
ceiling`` / ``profile too small to certify``. :func:`verdict_counts` counts them per artefact.
"""
from __future__ import annotations

from pathlib import Path

import math
import warnings
import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import reference as R
from .archive import UTILITY_TABLE_ARCHIVES

__all__ = ["RULES", "TOLERANCES", "VERDICTS", "EXPLANATIONS", "paper_numbers", "collect_ours", "collect_code", "collect_data", "variant_rows",
           "collect_archived", "derive", "build", "summary", "verdict_counts", "rules_table", "not_compared", "OURS_COLUMNS",
           "Rule", "Z90", "BASE_RATES", "metric_of", "at_chance", "tolerance", "verdict", "best_of_n_intervals",
           "COUNT_COLUMNS", "Diagnosis", "DIAGNOSES", "DIAGNOSED", "EXPERIMENTS_DIR", "NOT_DIAGNOSED", "SCALE_FREE", "aliases",
           "diagnoses_table", "per_classifier_diagnoses", "status", "sweep_records_diagnoses"]

# ------------------------------------------------------------------------------------------------
# The rules (issue #13): one tolerance per cell from the run-to-run spread of its statistic,
# chance levels, verdicts, and the verdict counts per artefact.
#
# **Tolerance.** A cell compares the paper's value with ours. Where our value comes with a
# measured 90 % interval (``interval_lo``/``interval_hi``: a bootstrap over the generator models
# and their synthetic tables for best-of-n numbers, its median moved onto our value,
# :func:`best_of_n_intervals`; mean ± 1.645 SE
# for Figure 8; the parametric bootstrap of the test counts for ε_emp,
# :func:`pategan_audit.auditing.verdicts.eps_interval`), its half-width ``h`` is our spread. The
# paper's value is one draw of the same statistic, so it gets its printed spread where the paper
# prints one (Figure 8's standard errors, 1.645 SE) and otherwise the same ``h``; the tolerance is
# ``max(sqrt(h_ours² + h_paper²), floor)``. Where no spread is measurable (one synthetic table, one
# fit, a single trace) the row says so and a stated fallback applies (:data:`RULES`).
#
# **Chance.** AUROC and AUPRC have a chance level: 0.5 for AUROC, the base rate π (the positive
# fraction, Table 7's imbalance) for AUPRC. A cell where *both* numbers are at chance (AUROC within
# ±0.02 of 0.5; AUPRC at most 1.5 π) is ``at chance (both)``: neither side learned anything, so
# their agreement is no evidence of a reproduction and it is not counted as one. AUPRC floors and
# fallbacks are relative to the base rate, so a Credit AUPRC (π = 0.0017) of 0.03 against 0.0017
# is a difference, not a rounding error.
#
# **No rule passes by construction.** Every rule below has a row in ``tests/test_scorecard.py``
# that it must judge ``differs``.
# ------------------------------------------------------------------------------------------------

Z90 = 1.6448536269514722  #: half-width of a 90 % normal interval in standard errors
CHANCE_AUROC_BAND = 0.02  #: |AUROC − 0.5| ≤ this: at chance
CHANCE_AUPRC_LIFT = 1.5  #: AUPRC ≤ this × base rate: at chance
FLOOR_AUROC = 0.01  #: smallest AUROC tolerance (and Setting A's; the paper prints 4 decimals of a noisy mean)
FLOOR_AUPRC = 0.01  #: smallest AUPRC tolerance, lowered to the base rate where that is smaller
FALLBACK_AUROC = 0.05  #: AUROC tolerance when no spread is measurable
FALLBACK_AUPRC_RELATIVE = 0.25  #: AUPRC fallback: this share of the larger excess over the base rate (≤ 0.05)
SPREAD_FLOOR_EPS = 0.05  #: smallest half-width of an ε_emp spread (auditing.verdicts)

#: Base rate π per dataset: the positive fraction (Table 7's "imbalance", printed).
BASE_RATES: dict[str, float] = R.base_rates()

_DATASET_OF = {"table5": "epileptic_seizure", "table10": "epileptic_seizure", "table11": "epileptic_seizure",
               "table8": "credit", "table9": "credit", "figure1": "epileptic_seizure", "figure8": "epileptic_seizure",
               "figure9": "epileptic_seizure", "figure6": "credit", "figure7": "credit"}
_BEST_OF_N = {"table4": "auroc", "table4_auprc": "auprc", "table5": "auroc", "table8": "auroc", "table9": "auprc",
              "table10": "auprc", "table11": "auroc", "table6": "auroc", "table12": "auroc", "figure1": "auroc",
              "figure6": "auroc", "figure7": "auprc", "figure9": "auprc"}


@dataclass(frozen=True)
class Rule:
    """How one artefact's cells are judged: ``spread`` (where the measured spread comes from),
    ``floor`` and ``fallback`` (used when no spread is measurable), each in words."""
    statistic: str
    spread: str
    floor: str
    fallback: str


_BEST = Rule("best-of-n AUROC/AUPRC (mean over 12 classifiers of the best over n tables, or one classifier's best)",
             "90 % bootstrap interval over the generator models and, within each, their synthetic tables "
             "(archived runs; shifted so that its median sits on our value, since a bootstrap of a maximum is "
             "biased low); the paper's draw gets the same spread: tolerance √2·h",
             f"AUROC {FLOOR_AUROC}; AUPRC min({FLOOR_AUPRC}, π)",
             f"AUROC {FALLBACK_AUROC}; AUPRC {FALLBACK_AUPRC_RELATIVE:.0%} of the larger excess over π "
             f"(at most {FALLBACK_AUROC}, at least the floor); both at chance: 'at chance (both)'")
_DELTA = Rule("AUROC-Δ (%) of the four datasets (implementation notes §utility.auroc-delta)",
              "none (a derived mean): the AUROC fallback propagated through the Δ formula",
              "—",
              f"100/4 · sqrt(Σ_d (c·{FALLBACK_AUROC} / denominator_d)²), denominator as in the paper's own Δ "
              "(r − 0.5 or r), c = 1 against [49]'s fixed values, √2 for Table 12 (D and P both ours)")
_SETTING_A = Rule("Setting A: the classifiers on the real split (one fit each)",
                  "none measured (one fit per classifier)", f"{FLOOR_AUROC}",
                  "0.01: deterministic classifiers reproduce to 1e-3, randomised ones (RF, MLP, boosting) move by "
                  "~1e-2 between runs and library versions; both at chance: 'at chance (both)'")
_EPS = Rule("ε_emp lower bound (Clopper-Pearson for Figure 5, Bayesian for Figure 12)",
            "90 % parametric bootstrap of the test counts (auditing.verdicts.eps_interval); tolerance √2·max(h, 0.05)",
            f"{SPREAD_FLOOR_EPS} (half-width)",
            "0.5 at reduced profiles (800 test outputs: a few errors move a near-perfect bound by 0.2-0.5), with "
            "the ceiling verdicts: 'reproduced up to ceiling', 'profile too small to certify'")

#: The rule of every artefact of the scorecard.
RULES: dict[str, Rule] = {
    **{t: _BEST for t in _BEST_OF_N},
    "figure8": Rule("mean ± SE over tables of the 12-classifier mean AUROC (Figure 8, proposed definition)",
                    "our SE (1.645 SE) and the paper's SE from its error bars: sqrt(h_ours² + h_paper²); our SE "
                    "unknown: the paper's for both", f"{FLOOR_AUROC}",
                    f"{FALLBACK_AUROC} where neither side has an SE (a bare 0.5)"),
    "table1": _DELTA,
    "table7": Rule("dataset counts (N, d, imbalance) and Setting A means (AUROC, AUPRC)",
                   "none (deterministic counts; one fit per classifier)", "—",
                   "counts: relative 1e-3 (imbalance is printed to 4 decimals); AUROC/AUPRC as Setting A"),
    "setting_a": _SETTING_A,
    "table2": Rule("tick (1) or not (0) per implementation and violation category",
                   "none (a fact of the code)", "—", "exact: our presets' violation switches (as benchmarked or as "
                   "released) against the printed ticks"),
    "table3": Rule("numeric hyperparameters printed in Table 3 (λ, moments L, δ, learning rate, batch size, "
                   "max iterations)", "none (a fact of the code)", "—",
                   "exact (relative 1e-9): each preset's configuration as released"),
    "figure2": Rule("records seen by each teacher (Cervical, k = 5)", "none (one run)", "—",
                    "exact (±0.5) for fixed partitions; synthcity (partitions redrawn every iteration, so the "
                    "count depends on the iterations run): ±15"),
    "figure3": Rule("iterations until the budget is spent (one trace run)", "none (one run)", "—",
                    "relative 25 %: the count depends on the vote stream through skipped batches (synthcity) and "
                    "is otherwise deterministic"),
    "figure4": Rule("first moment e(1) after 1,000 iterations, printed as '≈ 50k' etc.", "none (one vote stream)",
                    "—", "the printed precision: half a unit of the last printed significant digit "
                    "(50k → ±5k, 320k → ±5k)"),
    "figure5": _EPS,
    "figure12": _EPS,
}

def rules_table() -> pd.DataFrame:
    """:data:`RULES` as a table, one row per artefact, plus the chance rule."""
    out = pd.DataFrame([{"artefact": t, "statistic": r.statistic, "spread (measured)": r.spread, "floor": r.floor,
                         "fallback (no spread measurable)": r.fallback} for t, r in RULES.items()]).set_index("artefact")
    return out


#: Every verdict, in the order of the count table.
VERDICTS = ("reproduced", "at chance (both)", "reproduced up to ceiling", "profile too small to certify", "differs",
            "not yet run")


def metric_of(table: str, row: str, column: str) -> tuple[str, str | None]:
    """(kind, dataset) of a cell: kind ∈ {"auroc", "auprc", "delta", "count", "setting_a_auroc",
    "setting_a_auprc", "eps", "tick", "hyperparameter", "seen", "iterations", "moment"}."""
    if row == R.DELTA_ROW or table == "table1":
        return "delta", None
    if table in _BEST_OF_N:
        metric = _BEST_OF_N[table]
        first = str(column).split()[:1]
        if table.startswith("figure") and first and first[0] in ("auroc", "auprc"):
            metric = first[0]
        return metric, _DATASET_OF.get(table, row)
    if table == "figure8":
        return "auroc", "epileptic_seizure"
    if table == "table7":
        return (f"setting_a_{column}", row) if column in ("auroc", "auprc") else ("count", row)
    if table == "setting_a":
        return "setting_a_auroc", column
    return {"figure5": "eps", "figure12": "eps", "table2": "tick", "table3": "hyperparameter", "figure2": "seen",
            "figure3": "iterations", "figure4": "moment"}.get(table, "count"), None


def base_rate(dataset: str | None) -> float:
    """π of ``dataset`` (NaN where unknown)."""
    return BASE_RATES.get(dataset, float("nan")) if dataset else float("nan")


def at_chance(value: float, metric: str, dataset: str | None) -> bool:
    """Whether an AUROC/AUPRC value is at chance (see the module docstring)."""
    if pd.isna(value) or not metric.endswith(("auroc", "auprc")):
        return False
    if metric.endswith("auroc"):
        return abs(value - 0.5) <= CHANCE_AUROC_BAND + 1e-12
    pi = base_rate(dataset)
    return not math.isnan(pi) and value <= CHANCE_AUPRC_LIFT * pi + 1e-12


def _floor(metric: str, dataset: str | None) -> float:
    if metric.endswith("auprc"):
        pi = base_rate(dataset)
        return min(FLOOR_AUPRC, pi) if not math.isnan(pi) else FLOOR_AUPRC
    return FLOOR_AUROC


def _get(row, key) -> float:
    v = row.get(key, np.nan) if hasattr(row, "get") else np.nan
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def _keys(row) -> tuple[str, str, str]:
    return str(row["table"]), str(row.get("row", "")), str(row.get("column", ""))


def _sig_half_unit(value: float) -> float:
    """Half a unit of the last significant digit of a printed round number (50,000 → 5,000;
    320,000 → 5,000)."""
    v = abs(value)
    if v == 0:
        return 0.5
    digits = f"{v:.0f}".rstrip("0") or "0"
    zeros = len(f"{v:.0f}") - len(digits)
    return 0.5 * 10 ** zeros


def _delta_tolerance(table: str, column: str) -> float:
    """The AUROC fallback propagated through the Δ formula of the paper's own Δ (see :data:`RULES`)."""
    if table == "table12":
        impl = str(column).split()[0]
        t12 = R.table12()
        t12 = t12[(t12["column"] == impl) & (t12["row"] != R.DELTA_ROW)].pivot(index="row", columns="hyperparameters",
                                                                                  values="value")
        ref, obs, c = t12["D"], t12["P"], math.sqrt(2)
    else:
        wide = R.table6(wide=True).drop(index=R.DELTA_ROW) if table == "table6" else R.table4(wide=True)
        ref = wide[R.PAPER49].astype(float)
        obs = wide[column].astype(float) if column in wide.columns else ref
        c = 1.0
    denom = np.where(obs < ref, ref - 0.5, ref)
    return float(100 / len(ref) * np.sqrt(np.sum((c * FALLBACK_AUROC / denom) ** 2)))


def tolerance(row) -> tuple[float, str]:
    """(limit, how it was obtained) for one card row (``table, row, column, paper, ours`` and
    optionally ``interval_lo``, ``interval_hi``, ``paper_half``)."""
    table, key, column = _keys(row)
    metric, dataset = metric_of(table, key, column)
    paper, ours = _get(row, "paper"), _get(row, "ours")
    lo, hi, paper_half = _get(row, "interval_lo"), _get(row, "interval_hi"), _get(row, "paper_half")
    measured = not (math.isnan(lo) or math.isnan(hi))
    if metric == "eps":
        if measured:
            half = max((hi - lo) / 2, SPREAD_FLOOR_EPS)
            return math.sqrt(2) * half, f"√2·max(h, {SPREAD_FLOOR_EPS}), h = {(hi - lo) / 2:.3f} (spread {lo:.2f}–{hi:.2f})"
        return 0.5, "no spread measured: fallback 0.5"
    if metric in ("auroc", "auprc"):
        floor = _floor(metric, dataset)
        if measured or not math.isnan(paper_half):
            h_ours = (hi - lo) / 2 if measured else paper_half
            h_paper = paper_half if not math.isnan(paper_half) else h_ours
            limit = max(math.hypot(h_ours, h_paper), floor)
            source = "ours measured" if measured else "ours unknown, the paper's assumed"
            return limit, (f"sqrt(h_ours² + h_paper²) = sqrt({h_ours:.4f}² + {h_paper:.4f}²) ({source}"
                           f"{', paper SE printed' if not math.isnan(paper_half) else ', paper assumed equal'}), "
                           f"floor {floor:.4g}")
        if metric == "auprc":
            pi = base_rate(dataset)
            excess = max(paper - pi, ours - pi, 0.0) if not math.isnan(ours) else max(paper - pi, 0.0)
            limit = max(floor, min(FALLBACK_AUROC, FALLBACK_AUPRC_RELATIVE * excess))
            return limit, (f"no spread measurable: {FALLBACK_AUPRC_RELATIVE:.0%} of the larger excess over π = {pi:g} "
                           f"(≤ {FALLBACK_AUROC}), floor {floor:.4g}")
        return FALLBACK_AUROC, f"no spread measurable: fallback {FALLBACK_AUROC}"
    if metric.startswith("setting_a"):
        return 0.01, "one fit per classifier, no spread measurable: fallback 0.01"
    if metric == "delta":
        limit = _delta_tolerance(table, column)
        return limit, f"AUROC fallback {FALLBACK_AUROC} propagated through Δ: {limit:.1f} points"
    if metric == "count":
        return 1e-3 * abs(paper), "exact counts (relative 1e-3)"
    if metric == "tick":
        return 0.0, "exact"
    if metric == "hyperparameter":
        return 1e-9 * abs(paper), "exact (relative 1e-9)"
    if metric == "seen":
        return (15.0, "synthcity: partitions redrawn every iteration, ±15") if key == "synthcity" else \
            (0.5, "fixed partition: exact (±0.5)")
    if metric == "iterations":
        return 0.25 * abs(paper), "one run, no spread measurable: relative 25 %"
    if metric == "moment":
        half = _sig_half_unit(paper)
        return half, f"printed precision of '≈ {paper:,.0f}': ±{half:,.0f}"
    return 0.0, "exact"


def verdict(row, limit: float | None = None) -> str:
    """The verdict of one card row (see the module docstring and :data:`VERDICTS`)."""
    ours, paper = _get(row, "ours"), _get(row, "paper")
    if math.isnan(ours):
        return "not yet run"
    metric, dataset = metric_of(*_keys(row))
    if at_chance(paper, metric, dataset) and at_chance(ours, metric, dataset):
        return "at chance (both)"
    if limit is None:
        limit, _ = tolerance(row)
    if abs(ours - paper) <= limit + 1e-12:
        return "reproduced"
    ceiling = _get(row, "ceiling")
    measured = not (math.isnan(_get(row, "interval_lo")) or math.isnan(_get(row, "interval_hi")))
    if metric == "eps" and not measured and not math.isnan(ceiling) and paper > ceiling:
        if ceiling <= limit:  # e.g. 5 shadow models per world: no bound above 0 is possible
            return "profile too small to certify"
        if ours >= ceiling - limit:
            return "reproduced up to ceiling"
    return "differs"


def best_of_n_intervals(records: pd.DataFrame, *, level: float = 0.9, n_boot: int = 1000, seed: int = 0,
                        keys=("dataset", "implementation", "epsilon", "num_teachers", "variant")) -> pd.DataFrame:
    """The ``level`` bootstrap interval of every best-of-n number of a tidy utility table.

    Per cell (``keys``): resample the generator models with replacement and, within each drawn
    model, its synthetic tables with replacement; recompute each classifier's best over the drawn
    tables and their mean. One row per (cell, metric, classifier) with ``classifier = "average"``
    for the 12-classifier mean; columns ``lo``, ``hi``, ``n_models``, ``n_tables``. A cell with a
    single table has no interval (NaN). Each cell draws from its own stream (``seed`` and the
    cell's key), so its interval does not depend on the other cells or the order of the records.

    The interval is the bootstrap distribution's ``level`` percentile range shifted so that its
    median sits on the observed best-of-n: a bootstrap of a maximum is biased low (a resample
    repeats tables, so its best never exceeds the observed one), and the raw percentile range can
    end below the number it belongs to. The shift keeps the width, which is all a verdict uses
    (:func:`tolerance`), and puts the observed number inside its interval."""
    from .classifiers import MAJORITY

    rec = records[(records["implementation"] != "real") & (records["classifier"] != MAJORITY)]
    tail = (1 - level) / 2
    out = []
    for cell, part in rec.groupby(list(keys), dropna=False, sort=False):
        rng = np.random.default_rng([int(seed), zlib.crc32(repr(tuple(map(str, cell))).encode())])
        classifiers = sorted(part["classifier"].unique())
        models = sorted(part["model"].unique())
        tables = sorted(part["table"].unique())
        n_tables = part.groupby("model")["table"].nunique()
        for metric in ("auroc", "auprc"):
            cube = (part.pivot_table(index=["model", "table"], columns="classifier", values=metric, aggfunc="first")
                    .reindex(pd.MultiIndex.from_product([models, tables], names=["model", "table"]))
                    .reindex(columns=classifiers).to_numpy().reshape(len(models), len(tables), len(classifiers)))
            total = int(np.isfinite(cube).any(axis=2).sum())
            if total < 2:
                stats = None
            else:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN classifiers (untrained models) give NaN
                    observed = np.nanmax(cube.reshape(-1, len(classifiers)), axis=0)
                    observed = np.append(observed, np.nanmean(observed))
                m_idx = rng.integers(0, len(models), size=(n_boot, len(models)))
                t_idx = rng.integers(0, len(tables), size=(n_boot, len(models), len(tables)))
                drawn = cube[m_idx[:, :, None], t_idx]  # n_boot × models × tables × classifiers
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN draw (untrained models) gives NaN
                    stats = np.nanmax(drawn.reshape(n_boot, -1, len(classifiers)), axis=1)
            for j, clf in enumerate([*classifiers, R.AVERAGE]):
                if stats is None:
                    lo = hi = float("nan")
                else:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", RuntimeWarning)
                        vals = stats[:, j] if clf != R.AVERAGE else np.nanmean(stats, axis=1)
                    vals = vals[np.isfinite(vals)]
                    if len(vals) and np.isfinite(observed[j]):
                        q_lo, q_mid, q_hi = np.quantile(vals, [tail, 0.5, 1 - tail])
                        lo, hi = float(observed[j] - (q_mid - q_lo)), float(observed[j] + (q_hi - q_mid))
                    else:
                        lo = hi = float("nan")
                out.append({**dict(zip(keys, cell)), "metric": metric, "classifier": clf, "lo": lo, "hi": hi,
                            "n_models": len(models), "n_tables": int(n_tables.sum())})
    return pd.DataFrame(out)


#: Columns of :func:`verdict_counts`.
COUNT_COLUMNS = ("tracked", "compared", "within tolerance", "at chance (both)", "ceiling-limited",
                 "outside with cause", "outside unexplained", "of which not diagnosed", "not yet run")


def verdict_counts(card: pd.DataFrame) -> pd.DataFrame:
    """Per artefact (``table``): numbers tracked, compared (ours present), within tolerance
    (``reproduced``), at chance (both), ceiling-limited (``reproduced up to ceiling`` or
    ``profile too small to certify``), outside with a stated cause (``differs`` with an
    explanation), outside unexplained and, of those, the ones no experiment has looked at yet
    (:data:`NOT_DIAGNOSED`), not yet run; a last row ``all``."""
    v = card["verdict"]
    explained = card.get("explanation", pd.Series("", index=card.index)).fillna("").astype(str).str.len() > 0
    flags = pd.DataFrame({
        "tracked": True,
        "compared": v != "not yet run",
        "within tolerance": v == "reproduced",
        "at chance (both)": v == "at chance (both)",
        "ceiling-limited": v.isin(["reproduced up to ceiling", "profile too small to certify"]),
        "outside with cause": (v == "differs") & explained,
        "outside unexplained": (v == "differs") & ~explained,
        "of which not diagnosed": (v == "differs") & ~explained
        & (card["status"].fillna("").astype(str).str.startswith(NOT_DIAGNOSED) if "status" in card else True),
        "not yet run": v == "not yet run",
    }, index=card.index).astype(int)
    counts = flags.groupby(card["table"], sort=False).sum()
    counts.loc["all"] = counts.sum()
    counts.index.name = "artefact"
    return counts[list(COUNT_COLUMNS)]


#: The rule of every artefact (kept under its old name: every scorecard key has one).
TOLERANCES = RULES

#: Smallest half-width of a measured ε_emp spread (auditing.verdicts), kept for callers.
SPREAD_FLOOR = 0.05

# Diagnosed differences (issue #13, deliverable 3): pategan_audit.diagnoses, re-exported here.
from .diagnoses import (  # noqa: E402
    DIAGNOSED,
    DIAGNOSES,
    EXPERIMENTS_DIR,
    EXPLANATIONS,
    NOT_DIAGNOSED,
    SCALE_FREE,
    Diagnosis,
    aliases,
    diagnoses_table,
    per_classifier_diagnoses,
    status,
    sweep_records_diagnoses,
)


def _long(df: pd.DataFrame, table: str) -> pd.DataFrame:
    return pd.DataFrame({"table": table, "row": df["row"].astype(str), "column": df["column"].astype(str),
                         "paper": df["value"].astype(float), "provenance": df["provenance"]})


def paper_numbers() -> pd.DataFrame:
    """Every number of the paper this project regenerates, in long format (``table, row, column,
    paper, provenance, paper_half``; ``paper_half`` is the 90 % half-width of the paper's own
    printed spread where it prints one: Figure 8's standard errors)."""
    parts = [_long(getattr(R, f"table{i}")(), f"table{i}") for i in (1, 4, 5, 6, 7, 8, 9, 10, 11)]
    t12 = R.table12()  # columns "<implementation> D" / "<implementation> P": both hyperparameter sets are numbers
    parts.append(_long(t12.assign(column=t12["column"].astype(str) + " " + t12["hyperparameters"].astype(str)), "table12"))
    parts.append(_long(R.table4_auprc(), "table4_auprc"))
    parts.append(_long(R.setting_a_reference(), "setting_a"))
    for fig in (1, 6, 7, 8, 9):
        s = R.figure_series(fig)
        s = s[s["ran"].astype(bool)]
        parts.append(pd.DataFrame({
            "table": f"figure{fig}", "row": s["implementation"].astype(str),
            "column": [f"{m} eps={e:g}" for m, e in zip(s["metric"], s["epsilon"])],
            "paper": s["value"].astype(float), "provenance": s["provenance"],
            "paper_half": Z90 * s["se"].astype(float)}))
    a = R.audit_reference()
    parts.append(pd.DataFrame({"table": "figure5", "row": a["implementation"], "column": a["attack"],
                               "paper": a["epsilon_emp"].astype(float), "provenance": a["provenance"]}))
    parts.append(_figure12_implied(a))
    s = R.teacher_seen_reference()
    s = s[s["plotted"].astype(bool)]
    for part in ("only", "shared"):
        parts.append(pd.DataFrame({"table": "figure2", "row": s["implementation"],
                                   "column": [f"teacher {t} {part}" for t in s["teacher"]],
                                   "paper": s[part].astype(float), "provenance": s["provenance"]}))
    it = R.trace_iterations_reference()
    parts.append(pd.DataFrame({"table": "figure3", "row": it["implementation"], "column": "iterations",
                               "paper": it["iterations"].astype(float), "provenance": it["provenance"]}))
    m = R.moments_reference()
    m = m[m["quantity"] == "e1_after_1000_iterations"]
    parts.append(pd.DataFrame({"table": "figure4", "row": m["accountant"], "column": "e1 after 1000 iterations",
                               "paper": m["value"].astype(float), "provenance": m["provenance"]}))
    t2 = R.table2()
    parts.append(pd.DataFrame({"table": "table2", "row": t2["implementation"], "column": t2["category"],
                               "paper": t2["tick"].astype(float), "provenance": t2["provenance"]}))
    parts.append(_table3_numeric())
    out = pd.concat(parts, ignore_index=True).dropna(subset=["paper"])
    out = out[out["column"] != "paper49"]  # [49]'s own numbers, quoted by the paper, are not regenerated
    if "paper_half" not in out.columns:
        out["paper_half"] = np.nan
    return out.drop_duplicates(["table", "row", "column"]).reset_index(drop=True)


# -- Table 3: the numeric hyperparameters, compared with the presets' configurations as released --
#: Table 3 parameters compared, and how each is read off a preset (see :func:`collect_code`).
TABLE3_COMPARED = ("lambda", "moments_L", "delta", "learning_rate", "batch_size", "max_iterations")


def _number(text: str) -> float:
    """A printed Table 3 cell as a number ("1e-3" → 0.001, "10,000" → 10000, "1,000 or until
    budget" → 1000), NaN where it is not one number ("-", "until budget", "1/(N√N)")."""
    head = str(text).split(" or ")[0].replace(",", "").strip()
    try:
        return float(head)
    except ValueError:
        return float("nan")


def _table3_numeric() -> pd.DataFrame:
    t3 = R.table3()
    t3 = t3[t3["parameter"].isin(TABLE3_COMPARED) & (t3["column"] != R.PAPER49)]
    vals = t3["value"].map(_number)
    t3 = t3.assign(paper=vals)[vals.notna()]
    return pd.DataFrame({"table": "table3", "row": t3["column"], "column": t3["parameter"], "paper": t3["paper"],
                         "provenance": t3["provenance"]})


def _figure12_implied(audit: pd.DataFrame) -> pd.DataFrame:
    """Figure 12 (Bayesian ε_emp) where the paper's value is implied: a Figure 5 cell at the
    Clopper-Pearson ceiling had no error in its 800 test outputs, and the joint-beta bound of
    those perfect counts is a number (our computation, implementation notes §audit.ceiling).
    The other cells' Bayesian values are not available (reference.audit_reference)."""
    from .auditing.bounds import AttackCounts, eps_lower

    n = R.AUDIT_TEST_OUTPUTS_PER_WORLD
    perfect = eps_lower(AttackCounts(FP=0, TN=n, FN=0, TP=n), method="bayesian", alpha=0.1, delta=1e-5)
    at_ceiling = audit[np.isclose(audit["epsilon_emp"].astype(float), R.AUDIT_CEILING, atol=5e-5)]
    return pd.DataFrame({"table": "figure12", "row": at_ceiling["implementation"], "column": at_ceiling["attack"],
                         "paper": perfect, "provenance": "implied: Figure 5 at its ceiling = 0 errors in 800 test "
                         "outputs; the joint-beta bound of those counts (our computation)"})


#: Columns of our values (what the sections' ``scorecard.csv`` files and the archives give).
OURS_COLUMNS = ["section", "table", "row", "column", "ours", "profile", "runs", "ceiling", "interval_lo", "interval_hi"]


def collect_ours(results_dir: str | Path) -> pd.DataFrame:
    """Concatenate the sections' ``scorecard.csv`` files under ``results_dir``."""
    frames = [pd.read_csv(p) for p in sorted(Path(results_dir).glob("*/scorecard.csv"))]
    cols = OURS_COLUMNS
    if not frames:
        return pd.DataFrame(columns=cols)
    df = pd.concat(frames, ignore_index=True)
    for c in cols:
        if c not in df.columns:
            df[c] = np.nan
    df[["table", "row", "column"]] = df[["table", "row", "column"]].astype(str)
    df = df[df["table"].isin(set(RULES))]  # e.g. a repeated header line is not a row
    return df[cols].drop_duplicates(["table", "row", "column"], keep="last")


_TABLE2_COLUMNS = {"PATE": "pate", "Data Partition": "data_partition", "Moments Acc.": "moments_accountant",
                   "Metadata": "metadata", "Laplace Noise": "laplace_noise", "δ Scale": "delta_scale",
                   "Labels Distribution": "labels_distribution", "Teachers": "teachers", "Processing": "processing"}


def collect_code() -> pd.DataFrame:
    """Our values of Tables 2 and 3, read off the presets without training: Table 2's ticks from
    the violation switches (:func:`pategan_audit.pages.implementations.violation_switches`, as
    benchmarked or as released), Table 3's numeric hyperparameters from each preset's
    configuration as released (:func:`pategan_audit.implementations.registry.released_overrides`;
    max iterations resolved to the upstream default where the preset leaves it to the code)."""
    from .implementations import create, registry
    from .pages.implementations import violation_switches

    rows: list[dict] = []
    sw = violation_switches()
    unknown = set(sw["column"]) - set(_TABLE2_COLUMNS)
    if unknown:
        raise ValueError(f"violation columns without a Table 2 category: {sorted(unknown)}")
    ticked = {(i, _TABLE2_COLUMNS[c]) for i, c, t in zip(sw["implementation"], sw["column"], sw["tick"]) if t}
    for impl in R.IMPLEMENTATIONS:
        for cat in R.TABLE2_CATEGORIES:
            rows.append({"table": "table2", "row": impl, "column": cat, "ours": float((impl, cat) in ticked),
                         "runs": "the presets' violation switches (no training)"})
    for impl in R.IMPLEMENTATIONS:
        model = create(impl, **registry.released_overrides(impl))
        cfg = model.config
        max_iter = cfg.max_iter if cfg.max_iter is not None else (
            model._default_max_iter() if hasattr(model, "_default_max_iter") else None)
        values = {"lambda": getattr(cfg, "lam", None), "moments_L": getattr(cfg, "num_moments", None),
                  "delta": cfg.delta, "learning_rate": getattr(cfg, "learning_rate", None),
                  "batch_size": getattr(cfg, "batch_size", None), "max_iterations": max_iter}
        for param, v in values.items():
            if v is not None:
                rows.append({"table": "table3", "row": impl, "column": param, "ours": float(v),
                             "runs": "each preset's configuration as released (no training)"})
    out = pd.DataFrame(rows).assign(section="implementations", profile="any")
    return out.reindex(columns=OURS_COLUMNS)


def collect_data() -> pd.DataFrame:
    """Our values of Table 7's dataset counts (N, d, imbalance), computed from the bundled data
    without training (:func:`pategan_audit.pages.implementations.table7`): the same at every
    scale, so the archived scorecard takes them as the book's does."""
    from .pages.implementations import scorecard_rows, table7

    out = pd.DataFrame(scorecard_rows(table7())).assign(section="implementations", profile="any")
    return out.reindex(columns=OURS_COLUMNS)


def collect_archived(directory: str | Path | None = None) -> pd.DataFrame:
    """Our values of paper numbers from the committed archives (:mod:`pategan_audit.archive`),
    in the layout of :func:`collect_ours`, each best-of-n number with its bootstrap interval
    (:func:`best_of_n_intervals`): Table 4 (AUROC, AUPRC),
    Tables 5 and 10 and the ε = 1 points of Figures 1, 8, 9 (Epileptic), Table 7 / Setting A
    from ``utility_large``; Table 4's Credit and ISOLET rows, Tables 8 and 9 (Credit) and their
    Setting A from ``utility_tables_large`` (:data:`UTILITY_TABLE_ARCHIVES`); the other ε of Figures 1, 8, 9 (Epileptic) and 6, 7 (Credit) from ``utility_sweep_large``; Tables 6's conditional column, 11 and 12's P
    columns from ``utility_variants_large``; Figures 2, 3 and 4 from ``traces_paper``; Figure 5's ε_emp (Clopper-Pearson) and Figure 12's (Bayesian) in the
    paper channel with their spread from the audit archives. Empty if no archive is present."""
    from .archive import read_archive
    from .classifiers import CLASSIFIERS, MAJORITY
    from .utility import setting_a_scores

    rows: list[dict] = []
    for name in UTILITY_TABLE_ARCHIVES:  # Table 4's rows: Cervical, Epileptic; then Credit, ISOLET
        util = read_archive(name, directory=directory)
        if util is None:
            continue
        rec, prof, runs = util.records, util.meta["profile"], util.meta.get("runs", "")
        part: list[dict] = []
        synth = rec[rec["implementation"].isin(R.IMPLEMENTATIONS)]
        part += _best_of_n_rows(synth[synth["epsilon"].astype(float) == 1.0], runs, tables=True)
        real = rec[rec["implementation"] == "real"]
        if len(real):
            for _, r in setting_a_scores(real).iterrows():
                if r["n_classifiers"] == len(CLASSIFIERS):
                    part += [{"table": "table7", "row": r["dataset"], "column": m, "ours": float(r[m]),
                              "runs": "one fit per classifier, full split"} for m in ("auroc", "auprc")]
            per = real[real["classifier"] != MAJORITY]
            part += [{"table": "setting_a", "row": c, "column": d, "ours": float(v), "runs": "one fit, full split"}
                     for (c, d), v in per.groupby(["classifier", "dataset"])["auroc"].first().items()]
        for r in part:
            r.update(section="utility", profile=prof)
        rows += part
    sweep = read_archive("utility_sweep_large", directory=directory)
    if sweep is not None:  # the other ε of Figures 1, 8, 9 (Epileptic) and 6, 7 (Credit); ε = 1 is the
        # Table 4 archives' best of more (utility_large, utility_tables_large)
        rec = sweep.records
        rec = rec[rec["dataset"].isin(list(SWEEP_FIGURES)) & rec["implementation"].isin(R.IMPLEMENTATIONS)
                  & (rec["epsilon"].astype(float) != 1.0)]
        rows += [{**r, "section": "utility", "profile": sweep.meta["profile"]}
                 for r in _best_of_n_rows(rec, sweep.meta.get("runs", ""), tables=False)]
    variants = read_archive("utility_variants_large", directory=directory)
    if variants is not None:  # Tables 6, 11 and 12's variant cells
        rows += [{**r, "section": "utility", "profile": variants.meta["profile"]}
                 for r in variant_rows(variants.records, variants.meta.get("runs", ""))]
    traces = read_archive("traces_paper", directory=directory)
    if traces is not None:  # Figures 2-4 at the authors' run sizes
        card = traces.records[traces.records["part"] == "scorecard"]
        rows += [{**r, "section": "training_traces", "profile": traces.meta["profile"]}
                 for r in card[["table", "row", "column", "ours", "runs"]].to_dict("records")]
    from .auditing import verdicts

    audit = verdicts.paper_scale_records(directory=directory)
    if not audit.empty:
        table = verdicts.figure5_table(audit, R.audit_reference())
        for r in verdicts.scorecard_rows(table):
            part = audit[(audit["attack"] == r["column"]) & (audit["implementation"] == r["row"])
                         & (audit["channel"] == "paper")].iloc[0]
            rows.append({"section": "auditing", **r, "profile": part["profile"],
                         "runs": f"{int(part['n_per_world']):,} shadow models per world, paper channel ({part['archive']})"})
        bayes = audit[(audit["method"] == "bayesian") & (audit["channel"] == "paper")
                      & audit["implementation"].isin(R.IMPLEMENTATIONS)]
        for (attack, impl), part in bayes.groupby(["attack", "implementation"], sort=False):
            rec_b = part.iloc[0]
            lo, hi = verdicts.eps_interval(rec_b)
            rows.append({"section": "auditing", "table": "figure12", "row": impl, "column": attack,
                         "ours": float(rec_b["epsilon_emp"]), "interval_lo": lo, "interval_hi": hi,
                         "profile": rec_b["profile"],
                         "runs": f"{int(rec_b['n_per_world']):,} shadow models per world, paper channel ({rec_b['archive']})"})
    return pd.DataFrame(rows, columns=OURS_COLUMNS)




#: the privacy-utility figures of each dataset (§5.2): (figure, metric) of its best-of-n points
SWEEP_FIGURES = {"epileptic_seizure": (("figure1", "auroc"), ("figure9", "auprc")),
                 "credit": (("figure6", "auroc"), ("figure7", "auprc"))}


def _best_of_n_rows(synth: pd.DataFrame, runs: str, *, tables: bool) -> list[dict]:
    """Scorecard rows of best-of-n utility records (:func:`collect_archived`), each with its
    bootstrap interval: the points of Figures 1 (AUROC), 9 (AUPRC) and 8 (mean ± SE) on Epileptic
    and of Figures 6 (AUROC) and 7 (AUPRC) on Credit (:data:`SWEEP_FIGURES`) at each ε of ``synth``; with ``tables`` (ε = 1 records) also Table 4 (both metrics) and the
    per-classifier tables (:data:`pategan_audit.reference.PER_CLASSIFIER_TABLES`: 5 and 10 on Epileptic, 8 and 9 on Credit),
    their "Average" row included (the mean over the classifiers: Table 4's cell)."""
    from .utility import CELL_KEYS, best_of_n, best_per_classifier, mean_se

    rows: list[dict] = []
    if synth.empty:
        return rows
    keys = ["dataset", "implementation", "epsilon"]
    ci = best_of_n_intervals(synth, keys=CELL_KEYS).set_index([*keys, "metric", "classifier"])[["lo", "hi"]]

    def add(table, row, column, value, r, metric, clf):
        k = (r["dataset"], r["implementation"], r["epsilon"], metric, clf)
        lo, hi = (float(ci.loc[k, "lo"]), float(ci.loc[k, "hi"])) if k in ci.index else (np.nan, np.nan)
        rows.append({"table": table, "row": row, "column": column, "ours": float(value), "runs": runs,
                     "interval_lo": lo, "interval_hi": hi})

    for _, r in best_of_n(synth).iterrows():
        ds, impl, eps = r["dataset"], r["implementation"], float(r["epsilon"])
        if tables:
            add("table4", ds, impl, r["auroc"], r, "auroc", R.AVERAGE)
            add("table4_auprc", ds, impl, r["auprc"], r, "auprc", R.AVERAGE)
            for table, metric in R.PER_CLASSIFIER_TABLES.get(ds, ()):  # their "Average" row is Table 4's cell
                add(table, R.AVERAGE, impl, r[metric], r, metric, R.AVERAGE)
        if not pd.isna(r["auroc"]):
            for table, metric in SWEEP_FIGURES.get(ds, ()):
                add(table, impl, f"{metric} eps={eps:g}", r[metric], r, metric, R.AVERAGE)
    if tables:
        for _, r in best_per_classifier(synth).iterrows():
            for table, metric in R.PER_CLASSIFIER_TABLES.get(r["dataset"], ()):
                add(table, r["classifier"], r["implementation"], r[metric], r, metric, r["classifier"])
    ep = synth[synth["dataset"] == "epileptic_seizure"]
    if len(ep):
        for _, r in mean_se(ep).dropna(subset=["mean"]).iterrows():
            half = Z90 * r["se"] if not pd.isna(r["se"]) else np.nan
            rows.append({"table": "figure8", "row": r["implementation"], "column": f"auroc eps={float(r['epsilon']):g}",
                         "ours": float(r["mean"]), "runs": runs,
                         "interval_lo": r["mean"] - half, "interval_hi": r["mean"] + half})
    return rows


#: a variant cell's table by its ``variant`` label (:func:`pategan_audit.utility.cells.variant_label`)
_VARIANT_TABLES = {"conditional=True": "table6", "hyperparameters=paper": "table12"}


def variant_rows(records: pd.DataFrame, runs: str) -> list[dict]:
    """Scorecard rows of ``utility_variants_large``'s best-of-n cells (Table 4's AUROC statistic),
    each with its bootstrap interval: Table 6's "conditional" column (row = dataset), Table 12's
    "<preset> P" (row = dataset) and, from the default-variant Epileptic cells with an explicit
    teacher count, Table 11's "N/r" column (row = preset; k = 9 is "N/1000 (sweep)", since Table
    11's "N/1000" is Table 4's cell, :func:`derive`)."""
    from .utility import best_of_n

    synth = records[records["implementation"].isin(R.IMPLEMENTATIONS)]
    if synth.empty:
        return []
    keys = ["dataset", "implementation", "epsilon", "num_teachers", "variant"]
    ci = best_of_n_intervals(synth, keys=keys).set_index([*keys, "metric", "classifier"])[["lo", "hi"]]
    teachers = {k: c for c, k in R.TEACHER_SWEEP_K.items()}
    teachers[R.TEACHER_SWEEP_K["N/1000"]] = "N/1000 (sweep)"
    rows: list[dict] = []
    for _, r in best_of_n(synth).iterrows():
        variant, ds, impl = str(r["variant"]), r["dataset"], r["implementation"]
        if variant in _VARIANT_TABLES:
            table = _VARIANT_TABLES[variant]
            row, column = ds, "conditional" if table == "table6" else f"{impl} P"
        elif variant == "default" and ds == "epileptic_seizure" and int(r["num_teachers"]) in teachers:
            table, row, column = "table11", impl, teachers[int(r["num_teachers"])]
        else:
            continue
        k = (ds, impl, r["epsilon"], r["num_teachers"], r["variant"], "auroc", R.AVERAGE)
        lo, hi = (float(ci.loc[k, "lo"]), float(ci.loc[k, "hi"])) if k in ci.index else (np.nan, np.nan)
        rows.append({"table": table, "row": row, "column": column, "ours": float(r["auroc"]), "runs": runs,
                     "interval_lo": lo, "interval_hi": hi})
    return rows


def _delta(observed, reference) -> float:
    from .utility import mean_auroc_delta

    return 100 * mean_auroc_delta(observed=np.asarray(observed, float), reference=np.asarray(reference, float),
                                  undefined="nan")


def derive(ours: pd.DataFrame) -> pd.DataFrame:
    """``ours`` plus the rows that are functions of its other rows, where absent: Table 6's
    non-conditional column (= Table 4's original column, the same runs), Table 11's "N/1000"
    column (= Table 4's Epileptic cells, as the paper prints them), and the AUROC-Δ rows of
    Tables 1 and 6 (against [49]) and 12 (P against D) once all four datasets are present (a
    mean over fewer datasets is not the paper's statistic). Table 12's D columns are Table 4's
    runs too (each preset's defaults with §5's overrides; the paper prints the same numbers in
    both tables). A copied row keeps its source's spread."""
    if ours.empty:
        return ours
    have = set(zip(ours["table"], ours["row"], ours["column"]))
    val = {k: v for k, v in zip(zip(ours["table"], ours["row"], ours["column"]), ours["ours"]) if pd.notna(v)}
    keys = list(zip(ours["table"], ours["row"], ours["column"]))
    runs = dict(zip(keys, ours["runs"]))
    spread = dict(zip(keys, zip(ours.get("interval_lo", pd.Series(np.nan, index=ours.index)),
                                ours.get("interval_hi", pd.Series(np.nan, index=ours.index)))))
    extra: list[dict] = []

    def put(table, row, column, value, how, same_as=None):
        """Add a derived row; ``same_as``: the key of the row it copies (its spread comes along)."""
        if (table, row, column) not in have and value is not None and not pd.isna(value):
            lo, hi = spread.get(same_as, (np.nan, np.nan))
            extra.append({"table": table, "row": row, "column": column, "ours": float(value), "runs": how,
                          "interval_lo": lo, "interval_hi": hi})
            val[(table, row, column)] = float(value)

    for ds in R.DATASETS:
        if ("table4", ds, "original") in val:
            put("table6", ds, "non_conditional", val[("table4", ds, "original")],
                f"= Table 4's original ({runs.get(('table4', ds, 'original'), '')})", ("table4", ds, "original"))
        for impl in R.IMPLEMENTATIONS:  # Table 12's D: each preset's defaults with §5's overrides = Table 4's run
            if ("table4", ds, impl) in val:
                put("table12", ds, f"{impl} D", val[("table4", ds, impl)],
                    f"= Table 4's {impl} ({runs.get(('table4', ds, impl), '')})", ("table4", ds, impl))
    for impl in R.table11(wide=True).index:  # Table 11's N/1000 is Table 4's Epileptic cell (the main run)
        if ("table4", "epileptic_seizure", impl) in val:
            put("table11", impl, "N/1000", val[("table4", "epileptic_seizure", impl)],
                f"= Table 4's Epileptic {impl} ({runs.get(('table4', 'epileptic_seizure', impl), '')})",
                ("table4", "epileptic_seizure", impl))
    paper49 = R.table4(wide=True)[R.PAPER49]
    for impl in R.IMPLEMENTATIONS:
        obs = [val.get(("table4", ds, impl)) for ds in R.DATASETS]
        if all(v is not None for v in obs):
            put("table1", R.DELTA_ROW, impl, _delta(obs, paper49[list(R.DATASETS)]), "Δ of Table 4's four datasets")
    for col in ("non_conditional", "conditional"):
        obs = [val.get(("table6", ds, col)) for ds in R.DATASETS]
        if all(v is not None for v in obs):
            put("table6", R.DELTA_ROW, col, _delta(obs, paper49[list(R.DATASETS)]), "Δ of the four datasets")
    for impl in R.IMPLEMENTATIONS:
        p = [val.get(("table12", ds, f"{impl} P")) for ds in R.DATASETS]
        d = [val.get(("table12", ds, f"{impl} D")) for ds in R.DATASETS]
        if all(v is not None for v in (*p, *d)):
            put("table12", R.DELTA_ROW, f"{impl} P", _delta(p, d), "Δ of P against D, four datasets")
    if not extra:
        return ours
    first = ours.iloc[0]
    add = pd.DataFrame(extra).assign(section=first.get("section"), profile=first.get("profile"))
    return pd.concat([ours, add.reindex(columns=ours.columns)], ignore_index=True)


def delta_components(table: str, column: str) -> list[tuple[str, str, str]]:
    """The cells an AUROC-Δ row of :func:`derive` is computed from: Table 1's (column = preset)
    Table 4's four datasets; Table 6's its column on the four datasets; Table 12's ("<preset> P")
    P and D on the four datasets."""
    if table == "table1":
        return [("table4", d, column) for d in R.DATASETS]
    if table == "table6":
        return [("table6", d, column) for d in R.DATASETS]
    if table == "table12":
        preset = column.rsplit(" ", 1)[0]
        return [("table12", d, f"{preset} {h}") for d in R.DATASETS for h in ("P", "D")]
    return []


def _delta_statuses(card: pd.DataFrame) -> pd.DataFrame:
    """A differing AUROC-Δ row nobody diagnosed takes its status from the cells it is a function of
    (:func:`delta_components`): "explained" when every differing component is; "unexplained:
    tried" naming the components when none is undiagnosed; else it stays not diagnosed."""
    by_key = card.set_index(["table", "row", "column"])
    statuses, explanations = list(card["status"]), list(card["explanation"])
    for i, (t, r, c, v) in enumerate(zip(card["table"], card["row"], card["column"], card["verdict"])):
        if r != R.DELTA_ROW or v != "differs" or statuses[i] != NOT_DIAGNOSED:  # a reduced-profile row keeps its own
            continue
        parts = [k for k in delta_components(t, c) if k in by_key.index and by_key.loc[k, "verdict"] == "differs"]
        own = [str(by_key.loc[k, "status"]) for k in parts]
        names = ", ".join(f"{k[0]} {k[1]} {k[2]}" for k in parts)
        if parts and all(st == "explained" for st in own):
            statuses[i] = "explained"
            explanations[i] = f"a function of its cells; those that differ are explained: {names} (see their rows)"
        elif parts and NOT_DIAGNOSED not in own:
            statuses[i] = f"unexplained: tried the cells it is computed from, which differ: {names} (see their rows)"
    return card.assign(status=statuses, explanation=explanations)


#: Profiles whose numbers are smaller runs than the archives' (``utility``/``auditing``/``training
#: traces`` registries): the diagnoses were measured against the archived rows, so a cause found
#: there is not this row's (a smoke-scale Table 11 cell at 0.52 is not "explained" by an experiment
#: on the archived 0.58); their differing rows read :func:`_reduced_status`.
REDUCED_PROFILES = ("smoke", "book")


def _diagnosed_scale(profile, key: tuple[str, str, str]) -> bool:
    """Whether a row is at a scale its diagnosis speaks for: archived profiles, the code's and data's
    rows (``any``), rows without ours (not run), and any profile for a cause in :data:`SCALE_FREE`."""
    return key in SCALE_FREE or not (isinstance(profile, str) and profile in REDUCED_PROFILES)


def _reduced_status(verdict_: str, profile: str) -> str:
    """The status of a row at a reduced profile: not diagnosed at that scale (counted in *of which not
    diagnosed*); the archived row of the same key carries the diagnosis."""
    if verdict_ != "differs":
        return ""
    return f"{NOT_DIAGNOSED} at the {profile} profile"


def _explanation(table: str, row: str, column: str) -> str:
    if (table, row, column) in EXPLANATIONS:
        return EXPLANATIONS[(table, row, column)]
    if table == "table3":
        code = _TABLE3_CODE.get((column, row), "")
        return f"the code: {code}" if code else ""
    return ""


_TABLE3_CODE = {(p, c): str(v) for p, c, v in zip(R.table3()["parameter"], R.table3()["column"], R.table3()["code"])
                if str(v).strip() not in ("", "nan", "None")}


def build(ours: pd.DataFrame) -> pd.DataFrame:
    """Merge paper numbers with ours (plus :func:`derive`'s rows); add the difference, the
    tolerance of each cell and how it was obtained (``rule``), and the verdict."""
    paper = paper_numbers()
    ours = derive(ours.copy())
    card = paper.merge(ours, on=["table", "row", "column"], how="left")
    for c in OURS_COLUMNS:
        if c not in card.columns:
            card[c] = np.nan
    card["difference"] = card["ours"] - card["paper"]
    tol = [tolerance(r) for _, r in card.iterrows()]
    card["tolerance"] = [t for t, _ in tol]
    card["rule"] = [how for _, how in tol]
    card["verdict"] = [verdict(r, limit=t) for (_, r), (t, _) in zip(card.iterrows(), tol)]
    rows = [(t, r, c, v, p, _diagnosed_scale(p, (t, r, c)))
            for t, r, c, v, p in zip(card["table"], card["row"], card["column"], card["verdict"], card["profile"])]
    card["explanation"] = [_explanation(t, r, c) if at else "" for t, r, c, _, _, at in rows]
    card["status"] = [status(t, r, c, v) if at else _reduced_status(v, p) for t, r, c, v, p, at in rows]
    card = _delta_statuses(card)
    return card[["table", "row", "column", "paper", "ours", "difference", "tolerance", "verdict", "status",
                 "explanation", "rule", "interval_lo", "interval_hi", "profile", "runs", "provenance"]]


def summary(card: pd.DataFrame) -> pd.DataFrame:
    """Counts of verdicts per table (one column per verdict present)."""
    return card.pivot_table(index="table", columns="verdict", values="paper", aggfunc="count", fill_value=0)


def not_compared() -> pd.DataFrame:
    """What the paper prints that the scorecard does not compare, and why."""
    t3 = R.table3()
    t3_rest = sorted(set(t3["parameter"]) - set(TABLE3_COMPARED))
    rows = [
        ("Table 3", ", ".join(t3_rest), "structural (framework, optimizer, layer shapes in terms of d, iterations per "
         "step): not one number; the implementations page reads them off instantiated models and flags each "
         "disagreement (table3_paper_flagged)"),
        ("Table 3", "δ of synthcity and smartnoise, 'until budget', teachers", "a formula in N or a stopping rule, "
         "not a number; teachers: our presets take k from the benchmark's rule, not the upstream default of 10"),
        ("Table 3", "[49] column", "[49]'s own settings, not an implementation of ours"),
        ("Table 13", "issues opened upstream", "addresses, not numbers: listed on the implementations page"),
        ("Figure 10", "MNIST, LR and RF AUROC against ε", "the paper prints the figure only; its values are neither "
         "printed nor in the authors' records"),
        ("Figure 11", "teacher cross-entropy over 10 runs", "curves without printed values; Figure 3's levels "
         "are approximate ranges read from the records (training-traces page)"),
        ("Figure 12", "cells below Figure 5's ceiling", "the Bayesian values are not available; only cells whose "
         "Figure 5 value is at the ceiling (0 errors) imply one"),
        ("Tables 1, 6, 12", "AUROC-Δ rows at reduced profiles", "a mean over the four datasets: compared only when "
         "all four are run (a mean over fewer is another statistic)"),
        ("all tables", "[49] column", "[49]'s numbers quoted by the paper, not regenerated"),
    ]
    return pd.DataFrame(rows, columns=["artefact", "what", "why not compared"])


# old name of the verdict function (tests and callers)
def _verdict(row) -> str:
    return verdict(row)
