"""Shape utility results into the paper's printed layouts and put them beside its numbers
(Tables 1, 4-12 and the series of Figs. 1, 6-10; implementation notes §utility.best-of-n, §utility.figures).

Every function takes tidy results (``run_cells`` output, or its ``best_of_n``/``mean_se``
aggregate) and returns a DataFrame; none computes anything beyond arrangement and the
differences ours − paper. Caption helpers state what stands behind each number.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .aggregate import auroc_delta, auroc_delta_undefined, best_of_n, best_per_classifier, mean_auroc_delta
from ..alternatives import MECHANISMS
from .cells import SettingACell, UtilityCell

__all__ = [
    "select",
    "dataset_by_implementation",
    "classifier_by_implementation",
    "side_by_side",
    "delta_row",
    "delta_undefined_note",
    "mean_delta_text",
    "pairwise_delta_pct",
    "runs_text",
    "scorecard_rows",
    "stopping",
    "cap_binds_text",
]


def select(results: pd.DataFrame, cells: Iterable[UtilityCell | SettingACell]) -> pd.DataFrame:
    """The rows of ``results`` produced by ``cells`` (matched on the ``cell`` id column)."""
    from .run import cell_id

    ids = {cell_id(c) for c in cells}
    return results[results["cell"].isin(ids)]


def dataset_by_implementation(
    results: pd.DataFrame, *, metric: str = "auroc", datasets: Sequence[str], implementations: Sequence[str]
) -> pd.DataFrame:
    """Table 4 layout: rows = datasets, columns = implementations, best-of-n mean (implementation notes §utility.best-of-n)."""
    best = best_of_n(results)
    wide = best.pivot_table(index="dataset", columns="implementation", values=metric, aggfunc="first", dropna=False)
    return wide.reindex(index=list(datasets), columns=list(implementations)).rename_axis(index=None, columns=None)


def classifier_by_implementation(
    results: pd.DataFrame, *, metric: str = "auroc", classifiers: Sequence[str], implementations: Sequence[str],
    average_row: str = "average",
) -> pd.DataFrame:
    """Tables 5, 8, 9, 10 layout for one dataset: rows = classifiers (+ the average), columns =
    implementations; each entry the per-classifier best over the cell's tables (implementation notes §utility.best-of-n)."""
    per = best_per_classifier(results)
    wide = per.pivot_table(index="classifier", columns="implementation", values=metric, aggfunc="first", dropna=False)
    wide = wide.reindex(index=list(classifiers), columns=list(implementations))
    wide.loc[average_row] = wide.mean(axis=0, skipna=False)
    return wide.rename_axis(index=None, columns=None)


def side_by_side(ours: pd.DataFrame, paper: pd.DataFrame, *, labels: tuple[str, str, str] = ("paper", "ours", "ours − paper")) -> pd.DataFrame:
    """Columns (c, paper), (c, ours), (c, ours − paper) for every column c of ``ours``, rows as in
    ``ours``; a column or row the paper lacks shows NaN for paper and difference."""
    paper = paper.reindex(index=ours.index)
    blocks = {}
    for col in ours.columns:
        p = paper[col] if col in paper.columns else pd.Series(np.nan, index=ours.index)
        blocks[(col, labels[0])] = p
        blocks[(col, labels[1])] = ours[col]
        blocks[(col, labels[2])] = ours[col] - p
    return pd.DataFrame(blocks, index=ours.index)


def delta_row(table: pd.DataFrame, reference: pd.Series | pd.DataFrame) -> pd.Series:
    """AUROC-Δ in % per column (implementation notes §utility.auroc-delta): mean over the rows (datasets) of Δ(entry, reference).

    ``reference`` is a Series indexed like the rows (Tables 1, 6: [49]'s values) or a frame
    shaped like ``table`` (Table 12: the D column of each implementation). Rows with no
    observation are skipped; a column with a row where Δ is not defined (a drop from a
    reference <= 0.5, see :func:`auroc_delta`) is NaN, and :func:`delta_undefined_note` says why.
    """
    out = {}
    for col in table.columns:
        ref = reference[col] if isinstance(reference, pd.DataFrame) else reference
        ref = ref.reindex(table.index)
        keep = table[col].notna() & ref.notna()
        if not keep.any():
            out[col] = np.nan
            continue
        out[col] = 100 * mean_auroc_delta(observed=table[col][keep].to_numpy(), reference=ref[keep].to_numpy(),
                                          undefined="nan")
    return pd.Series(out, name="auroc_delta_pct")


def delta_undefined_note(table: pd.DataFrame, reference: pd.Series | pd.DataFrame, *, reference_name: str = "reference") -> str:
    """Why :func:`delta_row` left a column NaN: one line per (row, column) whose Δ is not
    defined, or ``""`` when every Δ is defined. ``reference`` as in :func:`delta_row`."""
    entries = []
    for col in table.columns:
        ref = (reference[col] if isinstance(reference, pd.DataFrame) else reference).reindex(table.index)
        mask = auroc_delta_undefined(observed=table[col].to_numpy(), reference=ref.to_numpy())
        for row, x, r in zip(table.index[mask], table[col][mask], ref[mask]):
            entries.append(f"{col} on {row} ({x:.4f} against {reference_name} {r:.4f})")
    if not entries:
        return ""
    return ("AUROC-Δ is not defined, hence NaN, where the value drops below a "
            f"{reference_name} that is itself no better than chance (≤ 0.5; the drop is measured against the 0.5 "
            "baseline, implementation notes §utility.auroc-delta): " + "; ".join(entries) + ".")


def pairwise_delta_pct(table: pd.DataFrame, reference: pd.Series) -> float:
    """The "40.15 % on average" of §5: mean of Δ over all (dataset, implementation) pairs (NaN
    when the Δ of a pair is not defined, see :func:`auroc_delta`)."""
    vals = []
    for col in table.columns:
        for row, x in table[col].items():
            if pd.notna(x) and pd.notna(reference.get(row)):
                vals.append(auroc_delta(observed=x, reference=reference[row], undefined="nan"))
    return 100 * float(np.mean(vals)) if vals else float("nan")


def mean_delta_text(deltas: pd.Series) -> str:
    """Mean of a :func:`delta_row` in % for the text, saying over how many columns it is taken
    when some are NaN (not defined or not run), e.g. ``"-12.34 %"`` or ``"-12.34 % (mean over 5 of 6)"``."""
    defined = deltas.dropna()
    if defined.empty:
        return "not defined"
    text = f"{defined.mean():.2f} %"
    return text if len(defined) == len(deltas) else f"{text} (mean over the {len(defined)} of {len(deltas)} where it is defined)"


def runs_text(cells: Sequence[UtilityCell | SettingACell]) -> str:
    """What stands behind the numbers of a set of cells, for captions: M × S = n tables per
    number, trainings in total, iteration cap, training rows."""
    cells = [c for c in cells if isinstance(c, UtilityCell)]
    if not cells:
        return "no generator trainings"
    shapes = sorted({(c.n_models, c.n_tables) for c in cells})
    per = ", ".join(f"{m} × {s} = {m * s}" for m, s in shapes)
    iterating = [c for c in cells if c.implementation not in MECHANISMS]  # the marginal mechanisms do not iterate
    caps = sorted({c.max_iter for c in iterating}, key=lambda v: (v is None, v))
    subs = sorted({(c.dataset, c.subsample) for c in cells if c.subsample})
    sub_txt = ("; training rows " + ", ".join(f"{d} {n:,}" for d, n in subs)) if subs else ""
    trainings = sum(c.n_models for c in cells)
    cap_txt = ("; iteration cap " + "/".join("upstream default" if v is None else f"{v:,}" for v in caps)) if caps else ""
    return (f"best of n = M models × S tables per number ({per}); {trainings} generator trainings in total"
            f"{cap_txt}{sub_txt}")


def stopping(results: pd.DataFrame) -> pd.DataFrame:
    """What ended each cell's trainings, from its tidy result rows: one row per (dataset,
    implementation, ε) with the models' iterations (min, max), the cap, and ``stopped_by``:
    "budget" (every model stopped below the cap: its accountant spent ε), "cap" (every model ran
    to the cap: ε did not bind, so a sweep over ε cannot move this preset), "mixed", or "not
    trained" (ε below the accountant's floor). original and turing have no accountant and always
    run to their cap (V1, V2)."""
    keys = ["dataset", "implementation", "epsilon"]
    per_model = results.groupby([*keys, "model"], sort=False).agg(iterations=("iterations", "first"),
                                                                   max_iter=("max_iter", "first"),
                                                                   status=("status", "first")).reset_index()
    rows = []
    for key, part in per_model.groupby(keys, sort=False):
        trained = part[part["status"] != "not_trained"]
        cap = part["max_iter"].iloc[0]
        if trained.empty:
            stopped, lo, hi = "not trained", np.nan, np.nan
        else:
            its = trained["iterations"].astype(float)
            lo, hi = float(its.min()), float(its.max())
            at_cap = (its >= float(cap)) if pd.notna(cap) else pd.Series(False, index=its.index)
            stopped = "cap" if at_cap.all() else "budget" if not at_cap.any() else "mixed"
        rows.append({**dict(zip(keys, key)), "iterations min": lo, "iterations max": hi, "max_iter": cap,
                     "stopped_by": stopped})
    return pd.DataFrame(rows, columns=[*keys, "iterations min", "iterations max", "max_iter", "stopped_by"])


def cap_binds_text(stops: pd.DataFrame) -> str:
    """Caption sentence naming, per ε, the presets whose trainings all ran to the iteration cap
    (ε did not bind there); empty when ε bound every preset."""
    capped = stops[stops["stopped_by"] == "cap"]
    if capped.empty:
        return ""
    parts = [f"ε = {eps:g}: {', '.join(sorted(part['implementation']))}" for eps, part in capped.groupby("epsilon")]
    return ("The iteration cap, not ε, ended the trainings of " + "; ".join(parts)
            + " (their points cannot move with ε at this cap).")


def scorecard_rows(wide: pd.DataFrame, *, table: str, runs: str, column_suffix: str = "") -> list[dict]:
    """Long rows ``table, row, column, ours, runs`` of a wide table for ``Section.scorecard``
    (keys as in :mod:`pategan_audit.reference`); NaN entries are left out."""
    rows = []
    for r in wide.index:
        for c in wide.columns:
            v = wide.loc[r, c]
            if pd.notna(v):
                rows.append({"table": table, "row": str(r), "column": f"{c}{column_suffix}", "ours": float(v), "runs": runs})
    return rows
