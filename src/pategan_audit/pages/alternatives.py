"""The page "What to use instead": the marginal mechanisms PrivBayes, AIM and MST
(:mod:`pategan_audit.alternatives`) beside the PATE-GANs, on the paper's datasets (Table 4's
classifier panel, ``ganev2025elusive`` §5) and in its Querybased audit (§6.2).

Everything here reads committed archives: ``utility_alternatives_large`` and
``audit_alternatives_large`` for the mechanisms; ``utility_sweep_large`` (the privacy-utility
curves, same best of 2 × 2), ``utility_gnmax_large`` and the Table 4 archives (ISOLET, at ε = 1
only) and the controlled-channel audit archives for the PATE-GANs. A cell an archive has not
reached is named as such, never filled in.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .. import reference
from ..alternatives import ALTERNATIVE_MECHANISMS
from ..archive import read_archive
from ..reference import DISPLAY_NAMES
from ..utility import best_of_n
from ..utility.archives import ALTERNATIVE_DATASETS, ALTERNATIVE_EPSILONS
from ..utility.protocols import ARCHIVE_COLUMN, RUNS_COLUMN, table4_records
from .archives import regenerate_command
from .blocks import Text, archive_missing, figure
from .blocks import table as table_blocks
from .plotting.theme import BEST_SIX, ordered_names
from .plotting.utility import plot_epsilon_sweep

__all__ = ["MECHANISMS", "BEST_SIX", "utility_values", "utility_table", "utility_figure", "cost_table", "audit_table",
           "utility_verdict", "audit_verdict", "utility_blocks", "cost_blocks", "audit_blocks"]

#: the marginal mechanisms, as the archives name them
MECHANISMS = ALTERNATIVE_MECHANISMS
#: the PATE-GANs shown beside the mechanisms: ours and the best of the six benchmarked
PATE_ROWS = ("corrected", "gnmax", BEST_SIX)
_KEYS = ["dataset", "implementation", "epsilon"]


def _points(records: pd.DataFrame, source: str) -> pd.DataFrame:
    """Best-of-n mean AUROC per (dataset, implementation, ε) of ``records``, with ``n``, the median
    seconds per fit (of the models trained) and the median iterations (0 where a preset refused to
    train; NaN for a mechanism, which records none)."""
    best = best_of_n(records)[[*_KEYS, "auroc", "n"]]
    models = records.drop_duplicates(["cell", "model"]).groupby(_KEYS)
    fits = pd.DataFrame({"fit seconds": models["fit_seconds"].median(),
                         "iterations": models["iterations"].median() if "iterations" in records else np.nan})
    out = best.merge(fits.reset_index(), on=_KEYS, how="left")
    out["source"] = source
    return out


def _best_six(points: pd.DataFrame) -> pd.DataFrame:
    """One :data:`BEST_SIX` row per (dataset, ε): the six's largest AUROC there, its preset named."""
    six = points[points["implementation"].isin(reference.IMPLEMENTATIONS)].dropna(subset=["auroc"])
    if six.empty:
        return six
    top = six.loc[six.groupby(["dataset", "epsilon"])["auroc"].idxmax()].copy()
    top["source"] = top["source"] + " (" + top["implementation"] + ")"
    top["preset"] = top["implementation"]
    top["implementation"] = BEST_SIX
    return top


def utility_values(directory=None) -> pd.DataFrame | None:
    """Every point of the page's utility comparison: the mechanisms from
    ``utility_alternatives_large``; ``corrected``, ``gnmax`` and :data:`BEST_SIX` at the same ε
    from ``utility_sweep_large`` (Cervical, Epileptic, Credit) and, for ISOLET, at ε = 1 from
    ``utility_gnmax_large`` and the Table 4 archives (their own best of n, in ``n``; where two hold a
    point, the larger n). Columns
    dataset, implementation, epsilon, auroc, n, fit seconds, source. None while the mechanisms'
    archive is missing; ``attrs["meta"]`` holds its meta."""

    ours = read_archive("utility_alternatives_large", directory=directory)
    if ours is None:
        return None
    frames = [_points(ours.records, "utility_alternatives_large")]
    pate = []
    sweep = read_archive("utility_sweep_large", directory=directory)
    if sweep is not None:
        rec = sweep.records[sweep.records["epsilon"].isin(ALTERNATIVE_EPSILONS)]
        pate.append(_points(rec, "utility_sweep_large"))
    gnmax = read_archive("utility_gnmax_large", directory=directory)
    if gnmax is not None:
        rec = gnmax.records[gnmax.records["dataset"] == "isolet"]
        if len(rec):
            pate.append(_points(rec, "utility_gnmax_large"))
    table4 = table4_records(directory).records
    if len(table4):
        rec = table4[(table4["dataset"] == "isolet")].drop(columns=[RUNS_COLUMN])
        for name, part in rec.groupby(ARCHIVE_COLUMN):
            pate.append(_points(part.drop(columns=[ARCHIVE_COLUMN]), str(name)))
    if pate:  # a point two archives hold (ISOLET's corrected) comes from the one with the larger best of n
        points = pd.concat(pate, ignore_index=True).sort_values("n", kind="stable").drop_duplicates(_KEYS, keep="last")
        frames += [points[points["implementation"].isin(("corrected", "gnmax"))], _best_six(points)]
    values = pd.concat([f for f in frames if len(f)], ignore_index=True)
    values.attrs["meta"] = ours.meta
    return values


def utility_table(values: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """One dataset's best-of-n AUROC: mechanisms and PATE-GANs down, ε across; a point an archive
    has not reached is empty."""

    part = values[values["dataset"] == dataset]
    table = part.pivot_table(index="implementation", columns="epsilon", values="auroc", aggfunc="first", dropna=False)
    table = table.reindex(index=[*MECHANISMS, *PATE_ROWS], columns=list(ALTERNATIVE_EPSILONS))
    table.columns = [f"ε={e:g}" for e in table.columns]
    n = part.groupby("implementation")["n"].max().reindex(table.index)
    table["best of n"] = n.astype("Int64")
    return table


def utility_figure(values: pd.DataFrame, dataset: str):
    """One dataset's best-of-n AUROC against ε: the mechanisms and the PATE-GANs, chance dotted."""

    part = values[values["dataset"] == dataset].rename(columns={"auroc": "value"})
    return plot_epsilon_sweep(part[["implementation", "epsilon", "value"]].dropna(), baseline=0.5,
                              title=f"{DISPLAY_NAMES.get(dataset, dataset)}: AUROC against ε")


def cost_table(values: pd.DataFrame, *, epsilon: float = 1.0) -> pd.DataFrame:
    """Median seconds per fit at ``epsilon`` (wall-clock of one fit on one core, as each archive
    recorded it): generators down, datasets across."""
    part = values[values["epsilon"] == epsilon]
    table = part.pivot_table(index="implementation", columns="dataset", values="fit seconds", aggfunc="first")
    return table.reindex([r for r in (*MECHANISMS, *PATE_ROWS) if r in table.index])


#: the archives of the PATE-GANs' Querybased rows in the controlled channel, in lookup order (a
#: preset's row comes from the first that holds it: the hardened corrected from its own archive)
_PATE_AUDITS = ("audit_gnmax_large", "audit_corrected_large", "audit_querybased_controlled_large")


def audit_table(directory=None) -> pd.DataFrame | None:
    """Querybased in the controlled channel (equal output sizes, public bounds) at 1,000 shadow models
    per world: Clopper-Pearson ε_emp, its ceiling and AUC for the mechanisms
    (``audit_alternatives_large``) and the PATE-GANs (their archives' ``as benchmarked`` rows; the
    hardened ``corrected`` and ``gnmax`` from their own archives). None while the mechanisms'
    archive is missing."""
    ours = read_archive("audit_alternatives_large", directory=directory)
    if ours is None:
        return None
    rows: dict[str, dict] = {}

    def take(archived, archive: str) -> None:
        records, ceiling = archived.records, archived.meta.get("ceiling_clopper_pearson", np.nan)
        rec = records[(records["attack"] == "querybased") & (records["channel"] == "controlled")
                      & (records["method"] == "clopper_pearson")]
        for row in rec.itertuples():
            if row.implementation in rows or (row.implementation not in MECHANISMS and row.variant != "as benchmarked"):
                continue
            rows[row.implementation] = {"ε_emp (Clopper-Pearson)": float(row.epsilon_emp), "ceiling": ceiling,
                                        "AUC": float(row.auc), "ε": float(row.epsilon),
                                        "shadow models per world": int(row.n_per_world), "archive": archive}

    take(ours, "audit_alternatives_large")
    for name in _PATE_AUDITS:
        archived = read_archive(name, directory=directory)
        if archived is not None:
            take(archived, name)
    table = pd.DataFrame.from_dict(rows, orient="index")
    order = [m for m in MECHANISMS if m in table.index] + ordered_names([i for i in table.index if i not in MECHANISMS])
    table = table.reindex(order)
    table.attrs["meta"] = ours.meta  # what audit_blocks says of the run, without reading it again
    return table


def utility_verdict(values: pd.DataFrame | None, *, epsilon: float = 1.0) -> str:
    """The utility comparison in words at ``epsilon``: per dataset where both sides are archived,
    the best mechanism's best-of-n AUROC against the best PATE-GAN's (the six, corrected, gnmax);
    the datasets still missing a side named."""
    if values is None:
        return "*The comparison cannot be read yet: `utility_alternatives_large` has not run.*"
    part = values[values["epsilon"] == epsilon].dropna(subset=["auroc"])
    said, missing = [], []
    for dataset in ALTERNATIVE_DATASETS:
        rows = part[part["dataset"] == dataset].set_index("implementation")["auroc"]
        mech = rows.reindex(list(MECHANISMS)).dropna()
        pate = rows.reindex(list(PATE_ROWS)).dropna()
        if mech.empty or pate.empty:
            missing.append(dataset)
            continue
        better = "above" if mech.max() > pate.max() else "below" if mech.max() < pate.max() else "level with"
        said.append(f"{dataset}: {mech.idxmax()} {mech.max():.3f}, {better} the best PATE-GAN ({pate.idxmax()} "
                    f"{pate.max():.3f})")
    text = (f"At ε = {epsilon:g}, best-of-n mean AUROC: " + "; ".join(said) + "." if said else
            f"At ε = {epsilon:g} no dataset has both a mechanism and a PATE-GAN archived yet.")
    if missing:
        text += f" Not comparable yet (a side not archived): {', '.join(missing)}."
    return text


def audit_verdict(table: pd.DataFrame | None) -> str:
    """The audit in words: each mechanism's ε_emp against its ε, and what a value above ε means
    here (a finding to verify before it is reported, not a result)."""
    if table is None:
        return "*The audit cannot be read yet: `audit_alternatives_large` has not run.*"
    mech = table.loc[[m for m in MECHANISMS if m in table.index]]
    if mech.empty:
        return "*No mechanism is audited yet.*"
    above = mech[mech["ε_emp (Clopper-Pearson)"] > mech["ε"]]
    text = "; ".join(f"{m} ε_emp {r['ε_emp (Clopper-Pearson)']:.2f} at ε = {r['ε']:g}" for m, r in mech.iterrows())
    if above.empty:
        return (f"Audited so far: {text}. No lower bound exceeds the claimed ε, as it must not for an end-to-end DP "
                f"mechanism; the ceiling of this sample is {mech['ceiling'].iloc[0]:.2f}, so a leak smaller than "
                "that would not show either.")
    return (f"Audited so far: {text}. ε_emp above ε for {', '.join(above.index)}: a lower bound above the guarantee "
            "would be a finding for the mechanism's authors, and is reported here only after it is reproduced on the "
            "mechanism's own measurements (not done yet).")


def _partial(meta: dict, name: str) -> list:

    if meta and not meta.get("complete", False):
        return [Text(f"*Partial archive: {meta.get('runs', '')}. `{regenerate_command(name)} --n-jobs 2` "
                     "(the `alternatives` extra's environment, `make venv-alt`) computes the rest.*")]
    return []


def utility_blocks(values: pd.DataFrame | None, *, cost: str) -> list:
    """The page blocks of the utility comparison: per dataset with a mechanism archived, its figure,
    a caption naming where each PATE-GAN row comes from, and its table; the datasets no mechanism
    has reached yet, named; the missing-archive note while ``utility_alternatives_large`` has not run."""

    if values is None:
        return [archive_missing("utility_alternatives_large", cost)]
    blocks: list = []
    waiting = []
    for dataset in ALTERNATIVE_DATASETS:
        part = values[values["dataset"] == dataset]
        if not part["implementation"].isin(MECHANISMS).any():
            waiting.append(DISPLAY_NAMES.get(dataset, dataset))
            continue
        sources = "; ".join(f"{name}: {', '.join(sorted(set(g['source'])))}"
                            for name, g in part[~part["implementation"].isin(MECHANISMS)].groupby("implementation"))
        top = part[part["implementation"] == BEST_SIX].sort_values("epsilon")
        tops = ", ".join(f"{r.preset} at ε = {r.epsilon:g} ({r.iterations:,.0f} iteration{'' if r.iterations == 1 else 's'})"
                         for r in top.itertuples() if pd.notna(r.iterations))
        refused = "; ".join(f"{name} at ε = {', '.join(f'{e:g}' for e in g['epsilon'])}"
                            for name, g in part[part["auroc"].isna()].groupby("implementation"))
        blocks += [*figure(f"alternatives_{dataset}", utility_figure(values, dataset)),
                   Text(f"**{DISPLAY_NAMES.get(dataset, dataset)}.** Best-of-n mean AUROC over the twelve classifiers. "
                        f"PATE-GAN rows from: {sources or 'none archived at these ε'}. The best of the six, and how "
                        f"long it trained: {tops or 'none archived'}. Refused to train (below "
                        f"its accountant's floor; no point): {refused or 'none'}. Any other empty cell: not archived "
                        "yet."),
                   *table_blocks(f"alternatives_{dataset}", utility_table(values, dataset).round(3))]
    if waiting:
        blocks.append(Text(f"No mechanism archived yet on: {', '.join(waiting)}."))
    return blocks + _partial(values.attrs.get("meta", {}), "utility_alternatives_large")


def audit_blocks(table: pd.DataFrame | None, *, cost: str) -> list:
    """The page blocks of the audit (``table`` from :func:`audit_table`): the table and the
    partial-archive note, or the missing-archive note."""
    if table is None:
        return [archive_missing("audit_alternatives_large", cost)]
    return [*table_blocks("alternatives_audit", table.round(3)),
            *_partial(table.attrs.get("meta", {}), "audit_alternatives_large")]


def cost_blocks(values: pd.DataFrame | None, *, epsilon: float = 1.0) -> list:
    """The page blocks of :func:`cost_table` at ``epsilon``, or a note where no fit is archived at that ε yet."""
    if values is None or not (values["epsilon"] == epsilon).any():
        return [Text(f"*No fit archived at ε = {epsilon:g} yet.*")]
    return table_blocks("alternatives_cost", cost_table(values, epsilon=epsilon).round(1))
