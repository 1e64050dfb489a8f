"""The target selection and the ablation at the paper's scale (``ganev2025elusive`` §6.2 and the
ablation of §6.3), read back from their archives (``audit_targets_large``,
``audit_ablation_querybased_large``, ``audit_ablation_groundhog_large``; never recomputed by the
page). A missing or partial archive says so and names the command that continues it.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ... import reference
from ..blocks import Block, SaveTable, ShowTable, Text, archive_missing
from ...auditing import verdicts
from ...auditing.summaries import ablation_table
from .context import AuditPage

__all__ = ["TARGETS_ARCHIVE", "ABLATION_ARCHIVES", "targets_table", "auc_standard_error", "target_findings", "ablation_with_spread",
           "single_switch_findings", "targets_large", "ablation_large"]

TARGETS_ARCHIVE = "audit_targets_large"
ABLATION_ARCHIVES = ("audit_ablation_querybased_large", "audit_ablation_groundhog_large")


def _progress(archive) -> str:
    meta = archive.meta
    return "" if meta.get("complete") else f" **Partial run:** {meta.get('runs', '')}."


def targets_table(records: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """The candidates by mini-MIA AUC (ours), best first, beside the paper's best three by AUC."""
    ours = records.sort_values("auc", ascending=False).reset_index(drop=True)
    ref = paper[paper["ranking"] == "mia_auc_rank"].sort_values("rank")
    # positional values: the frame's index starts at rank 1, ``ours``'s at 0
    out = pd.DataFrame({"row (ours)": ours["row"].astype(int).to_numpy(), "AUC (ours)": ours["auc"].to_numpy(),
                        "distance (ours)": ours["distance"].to_numpy()},
                       index=pd.RangeIndex(1, len(ours) + 1, name="rank by AUC"))
    out["row (paper)"] = pd.Series(ref["row_index"].to_numpy(), index=range(1, len(ref) + 1))
    out["AUC (paper)"] = pd.Series(ref["value"].to_numpy(), index=range(1, len(ref) + 1))
    return out


def auc_standard_error(auc: float, n_in: int, n_out: int) -> float:
    """The standard error of an empirical AUC from ``n_in`` and ``n_out`` scores (Hanley and
    McNeil 1982, eq. 2, with their exponential approximations Q1 = A / (2 - A) and
    Q2 = 2A^2 / (1 + A)): how far two candidates' mini-MIA AUCs must lie apart before the
    target selection (implementation notes §audit.target) is more than a draw. (A statistic of
    the page, kept out of the computing code's source hash.)"""
    if not 0.0 <= auc <= 1.0 or n_in < 1 or n_out < 1:
        raise ValueError(f"auc_standard_error needs 0 <= auc <= 1 and counts >= 1, got {auc}, {n_in}, {n_out}")
    q1, q2 = auc / (2.0 - auc), 2.0 * auc**2 / (1.0 + auc)
    var = (auc * (1.0 - auc) + (n_in - 1) * (q1 - auc**2) + (n_out - 1) * (q2 - auc**2)) / (n_in * n_out)
    return float(np.sqrt(max(var, 0.0)))


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def target_findings(records: pd.DataFrame, paper: pd.DataFrame, n_models: int) -> str:
    """Where the paper's candidates rank among ours and whether the picks are more than a draw:
    each AUC from ``n_models`` + ``n_models`` scores has the standard error of
    :func:`auc_standard_error`."""
    ours = records.dropna(subset=["auc"]).sort_values("auc", ascending=False).reset_index(drop=True)
    rank = {int(r): i + 1 for i, r in enumerate(ours["row"])}
    auc = dict(zip(ours["row"].astype(int), ours["auc"]))
    ref = paper[paper["ranking"] == "mia_auc_rank"].sort_values("rank")
    top, second = ours.iloc[0], ours.iloc[1]
    p1, p2 = ref.iloc[0], ref.iloc[1]
    def se_diff(at: float) -> float:  # of a difference of two AUCs near ``at``
        return float(np.sqrt(2) * auc_standard_error(at, n_models, n_models))

    def apart(gap: float, at: float) -> str:  # a gap in standard errors, and whether it is more than a draw
        if se_diff(at) == 0:
            return "with no sampling spread at these AUCs"
        z = gap / se_diff(at)
        return f"{z:.1f} standard errors: " + ("beyond two, more than a draw" if z >= 2 else
                                               "within two, a draw at this scale")

    placed = "; ".join(f"row {int(r)} (the paper's {_ordinal(int(k))}, AUC {v:.3f}): "
                       + (f"our {_ordinal(rank[int(r)])} of {len(ours)}, AUC {auc[int(r)]:.3f}" if int(r) in rank
                          else "not among our candidates")
                       for r, k, v in zip(ref["row_index"], ref["rank"], ref["value"]))
    return (f"Our pick is **row {int(top['row'])}** (AUC {top['auc']:.3f}), ahead of row {int(second['row'])} "
            f"({second['auc']:.3f}) by {top['auc'] - second['auc']:.3f}, "
            f"{apart(top['auc'] - second['auc'], float(top['auc']))} (a difference of two AUCs from {n_models} + "
            f"{n_models} models near {top['auc']:.2f} has a standard error of ≈ {se_diff(float(top['auc'])):.3f}, "
            f"Hanley and McNeil). The paper's top three by AUC rank as follows in ours: {placed}. "
            f"The paper's own choice of row {int(p1['row_index'])} over row {int(p2['row_index'])} rests on "
            f"{p1['value'] - p2['value']:.3f}, {apart(p1['value'] - p2['value'], float(p1['value']))}.")


def targets_large(page: AuditPage, archive=None) -> list[Block]:
    """The mini-MIAs at the paper's scale (64 candidates × 100 + 100 ``original`` models)."""
    if archive is None:
        from ...archive import read_archive

        archive = read_archive(TARGETS_ARCHIVE)
    if archive is None:
        return [archive_missing(TARGETS_ARCHIVE, "64 × 200 `original` fits, about 7 core-hours")]
    paper = reference.target_selection_reference()
    table = targets_table(archive.records, paper)
    meta = archive.meta
    if meta.get("complete") and archive.records["auc"].notna().sum() >= 2:
        finding = " " + target_findings(archive.records, paper, int(archive.records["n_models"].iloc[0]))
    else:
        finding = (f" Our pick so far: **row {meta.get('target')}** (AUC {meta.get('target_auc', float('nan')):.3f}); "
                   f"the paper's: row 397 (AUC 0.6659).{_progress(archive)}")
    return [Text(f"**Target selection at the paper's scale** ({meta.get('runs', '')}; {archive.caption()}).{finding}"),
            SaveTable("target_selection_large", table), ShowTable(table.head(10).round(4))]


def ablation_with_spread(records: pd.DataFrame) -> pd.DataFrame:
    """:func:`~pategan_audit.auditing.summaries.ablation_table` (Clopper-Pearson) with each row's
    90 % range from its test counts (:func:`~pategan_audit.auditing.verdicts.eps_interval`) and
    whether its change from "as benchmarked" is resolved: the two ranges do not overlap."""
    table = ablation_table(records).reset_index()
    cp = records[records["method"] == "clopper_pearson"].drop_duplicates(["attack", "implementation", "variant"])
    ranges = {(r["attack"], r["implementation"], r["variant"]): verdicts.eps_interval(r) for _, r in cp.iterrows()}
    table["ε_emp 90% low"] = [ranges[(a, i, v)][0] for a, i, v in zip(table["attack"], table["implementation"], table["variant"])]
    table["ε_emp 90% high"] = [ranges[(a, i, v)][1] for a, i, v in zip(table["attack"], table["implementation"], table["variant"])]
    resolved = []
    for _, r in table.iterrows():
        base = ranges.get((r["attack"], r["implementation"], "as benchmarked"))
        if r["variant"] == "as benchmarked" or base is None:
            resolved.append("")
        else:
            lo, hi = ranges[(r["attack"], r["implementation"], r["variant"])]
            # a margin so that two equal ranges (e.g. both at the ceiling) computed through
            # different float paths never count as disjoint
            resolved.append("resolved" if hi < base[0] - _SAME or lo > base[1] + _SAME else "within spread")
    table["change"] = resolved
    return table


#: ε_emp ranges closer than this are the same number (the bounds are floats from the test counts)
_SAME = 1e-6


def single_switch_findings(table: pd.DataFrame) -> str:
    """One sentence per preset from :func:`ablation_with_spread`'s table: the single switches
    (not "all fixed") whose resolved change lowers ε_emp, with the numbers, or that none does."""
    parts = []
    for impl, rows in table.groupby("implementation", sort=False):
        base = rows.loc[rows["variant"] == "as benchmarked", "ε_emp"]
        if base.empty:
            continue
        single = rows[~rows["variant"].isin(["as benchmarked", "all fixed"])]
        drops = single[(single["change"] == "resolved") & (single["Δε vs as benchmarked"] < 0)]
        allf = rows.loc[rows["variant"] == "all fixed", "ε_emp"]
        tail = f"; all fixed {allf.iloc[0]:.2f}" if not allf.empty else ""
        if base.iloc[0] < 0.005:
            parts.append(f"{impl}: {base.iloc[0]:.2f} as benchmarked, nothing to lower")
        elif drops.empty:
            parts.append(f"{impl}: {base.iloc[0]:.2f} as benchmarked, no single switch lowers it beyond the spread{tail}")
        else:
            listed = ", ".join(f"{v.replace(' (beyond Table 2)', '')} alone {e:.2f}"
                               for v, e in zip(drops["variant"], drops["ε_emp"]))
            parts.append(f"{impl}: {base.iloc[0]:.2f} as benchmarked; {listed}{tail}")
    return "**What one switch resolves.** " + "; ".join(parts) + "." if parts else ""


def ablation_large(page: AuditPage, archives: dict | None = None) -> list[Block]:
    """The ablation from its archives (Querybased at 1,000 shadow models per world, GroundHog at
    200), one table per attack, each caption naming its scale."""
    if archives is None:
        from ...archive import read_archive

        archives = {name: read_archive(name) for name in ABLATION_ARCHIVES}
    blocks: list[Block] = []
    costs = {"audit_ablation_querybased_large": "35 settings at 1,000 shadow models per world, about 1 core-hour",
             "audit_ablation_groundhog_large": "35 settings at 200 shadow models per world, about 6 core-hours"}
    for name in ABLATION_ARCHIVES:
        archive = archives.get(name)
        if archive is None:
            blocks.append(archive_missing(name, costs[name]))
            continue
        table = ablation_with_spread(archive.records)
        n = (archive.meta.get("profile_knobs") or {}).get("n_per_world")
        scale = "the paper's scale" if n == 1000 else (f"{n:,} shadow models per world" if n else "its archived scale")
        blocks += [Text(f"**Ablation at {scale}, {archive.meta.get('attack')}** ({archive.caption()}).{_progress(archive)} "
                        "'resolved': the 90 % ranges of the variant and of 'as benchmarked' do not overlap."),
                   SaveTable(name, table, index=False), ShowTable(table.round(2)), Text(single_switch_findings(table))]
    return blocks
