"""Statistics of the utility benchmark, computed from tidy result tables (paper §5, App. C).

* best-of-n (implementation notes §utility.best-of-n, verified against the authors' records): per classifier and
  metric the maximum over the n synthetic tables — AUROC and AUPRC maximised *separately* —
  then the plain mean over the classifiers;
* mean ± standard error (Fig. 8, proposed definition, implementation notes §utility.figures): per table the classifier mean,
  then mean and SE = sample std / sqrt(n) over the tables;
* AUROC-Δ (implementation notes §utility.auroc-delta, asymmetric; Tables 1, 6, 12 and the "40.15 %" / "17.5 %" of §5);
* the DPGAN count (implementation notes §utility.dpgan).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..classifiers import MAJORITY

__all__ = [
    "CELL_KEYS",
    "best_per_classifier",
    "best_of_n",
    "mean_se",
    "setting_a_scores",
    "auroc_delta",
    "auroc_delta_undefined",
    "mean_auroc_delta",
    "dpgan_count",
]

#: Columns identifying one experiment cell (one best-of-n number per metric). ``cell`` (the
#: config hash) keeps apart cells that share the readable keys but differ in a knob, e.g. Table
#: 11's explicit k = 2 run and the main run whose rule also gives k = 2.
CELL_KEYS = ("dataset", "implementation", "epsilon", "num_teachers", "variant", "cell")
_METRICS = ("auroc", "auprc")


def _check(df: pd.DataFrame, keys: Sequence[str]) -> None:
    missing = [c for c in (*keys, "classifier", *_METRICS) if c not in df.columns]
    if missing:
        raise ValueError(f"the result table lacks columns {missing}; pass the tidy output of run_cell/run_cells")


def _synthetic(df: pd.DataFrame) -> pd.DataFrame:
    """Drop the majority baseline (never part of the 12-average, implementation notes §utility.classifiers); reject it outside Setting A."""
    majority = df["classifier"] == MAJORITY
    if "implementation" in df.columns and (majority & (df["implementation"] != "real")).any():
        raise ValueError("majority-baseline rows in Setting-B results: the baseline belongs to Setting A only (implementation notes §utility.setting-a)")
    return df[~majority]


def best_per_classifier(df: pd.DataFrame, *, keys: Sequence[str] = CELL_KEYS) -> pd.DataFrame:
    """Per (keys, classifier): max AUROC and max AUPRC over the tables (implementation notes §utility.best-of-n) and the
    number of tables ``n`` behind them. Tables of untrained models (NaN) are ignored."""
    keys = list(keys)
    _check(df, keys)
    df = _synthetic(df)
    grouped = df.groupby([*keys, "classifier"], dropna=False, sort=False)
    out = grouped[list(_METRICS)].max()
    out["n"] = grouped["auroc"].count()
    return out.reset_index()


def best_of_n(df: pd.DataFrame, *, keys: Sequence[str] = CELL_KEYS) -> pd.DataFrame:
    """The paper's utility number (implementation notes §utility.best-of-n): mean over the classifiers of the per-classifier
    best. Columns: keys, ``auroc``, ``auprc``, ``n`` (tables), ``n_classifiers``. A cell whose
    models were all untrained gives NaN."""
    per = best_per_classifier(df, keys=keys)
    grouped = per.groupby(list(keys), dropna=False, sort=False)
    out = grouped[list(_METRICS)].mean()
    out["n"] = grouped["n"].max()
    out["n_classifiers"] = grouped["classifier"].nunique()
    return out.reset_index()


def mean_se(df: pd.DataFrame, *, keys: Sequence[str] = CELL_KEYS, metric: str = "auroc") -> pd.DataFrame:
    """Fig. 8's statistic (implementation notes §utility.figures, proposed): per table the classifier mean of ``metric``, then the
    mean over tables and its standard error (sample std / sqrt(n); NaN for n = 1)."""
    if metric not in _METRICS:
        raise ValueError(f"metric must be 'auroc' or 'auprc', got {metric!r}")
    keys = list(keys)
    _check(df, keys)
    df = _synthetic(df).dropna(subset=[metric])
    per_table = df.groupby([*keys, "model", "table"], dropna=False, sort=False)[metric].mean().reset_index()
    grouped = per_table.groupby(keys, dropna=False, sort=False)[metric]
    out = pd.DataFrame({"mean": grouped.mean(), "std": grouped.std(ddof=1), "n": grouped.count()})
    out["se"] = out["std"] / np.sqrt(out["n"])
    return out.drop(columns="std").reset_index()


def setting_a_scores(df: pd.DataFrame) -> pd.DataFrame:
    """Setting A per dataset (implementation notes §utility.setting-a): mean of the classifiers (majority excluded) and the
    majority baseline. Columns: dataset, auroc, auprc, n_classifiers, baseline_auroc, baseline_auprc."""
    _check(df, ("dataset",))
    real = df[df["implementation"] == "real"]
    if real.empty:
        raise ValueError("no Setting A rows (implementation == 'real') in the table; run SettingACell first")
    panel = real[real["classifier"] != MAJORITY].groupby("dataset", sort=False)
    out = panel[list(_METRICS)].mean()
    out["n_classifiers"] = panel["classifier"].nunique()
    base = real[real["classifier"] == MAJORITY].set_index("dataset")[list(_METRICS)]
    out["baseline_auroc"] = base["auroc"]
    out["baseline_auprc"] = base["auprc"]
    return out.reset_index()


def auroc_delta(*, observed, reference, undefined: str = "raise"):
    """AUROC-Δ of §5 / App. C as the paper computes it (implementation notes §utility.auroc-delta, verified):

    * observed < reference: (observed - reference) / (reference - 0.5)  (drop against the 0.5 baseline);
    * observed >= reference: (observed - reference) / reference          (gain relative to reference).

    Works elementwise on arrays; returns a fraction (multiply by 100 for %). The drop is not
    defined where the reference is no better than chance (reference <= 0.5), nor anything for a
    reference <= 0: ``undefined="raise"`` (default) raises there, ``undefined="nan"`` gives NaN
    for those entries. A reduced profile can give a reference <= 0.5 (Table 12 measures P
    against our own D column, which at the ``smoke`` profile can fall below chance).
    """
    if undefined not in ("raise", "nan"):
        raise ValueError(f"undefined must be 'raise' or 'nan', got {undefined!r}")
    x = np.asarray(observed, dtype=float)
    r = np.asarray(reference, dtype=float)
    drop = x < r
    bad = auroc_delta_undefined(observed=x, reference=r)
    if undefined == "raise" and np.any(bad):
        raise ValueError("AUROC-delta needs reference > 0.5 wherever observed < reference (the drop is measured "
                         "against the 0.5 baseline, B.10); pass undefined='nan' to get NaN there")
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(bad, np.nan, np.where(drop, (x - r) / (r - 0.5), (x - r) / r))
    return float(out) if out.ndim == 0 else out


def auroc_delta_undefined(*, observed, reference):
    """Elementwise mask of the entries where :func:`auroc_delta` is not defined (a drop from a
    reference <= 0.5, or a reference <= 0); NaN observations or references are not flagged."""
    x = np.asarray(observed, dtype=float)
    r = np.asarray(reference, dtype=float)
    return ((x < r) & (r <= 0.5)) | (r <= 0)


def mean_auroc_delta(*, observed: Sequence[float], reference: Sequence[float], undefined: str = "raise") -> float:
    """Table entry of Tables 1, 6, 12: the plain mean of :func:`auroc_delta` over datasets
    (missing observations are skipped). With ``undefined="nan"`` a dataset whose Δ is not
    defined makes the mean NaN: a mean over fewer datasets would not be the table's statistic."""
    x = np.asarray(observed, dtype=float)
    r = np.asarray(reference, dtype=float)
    if x.shape != r.shape or x.ndim != 1 or len(x) == 0:
        raise ValueError("observed and reference must be equal-length, non-empty 1-D sequences (one value per dataset)")
    keep = ~np.isnan(x)
    if not keep.any():
        return float("nan")
    return float(np.mean(auroc_delta(observed=x[keep], reference=r[keep], undefined=undefined)))


def dpgan_count(table4: pd.DataFrame, *, dpgan: Mapping[str, float]) -> int:
    """Number of Table 4 entries (rows = datasets, columns = implementations) strictly above the
    DPGAN AUROC of [49] Table 2 for that dataset (implementation notes §utility.dpgan; the paper: 13 of 24)."""
    missing = [d for d in table4.index if d not in dpgan]
    if missing:
        raise ValueError(f"no DPGAN value for datasets {missing}; pass dpgan={{dataset: auroc}} for every row")
    ref = pd.Series({d: dpgan[d] for d in table4.index})
    return int((table4.gt(ref, axis=0)).to_numpy().sum())
