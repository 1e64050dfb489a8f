"""The page "PATE-GAN, done right?": the ``gnmax`` preset (:mod:`pategan_audit.implementations.gnmax`)
beside ``corrected`` and the six benchmarked implementations.

Everything here reads the library or the committed archives; nothing is tuned on the data. The
paper (``ganev2025elusive`` §7) leaves "the discrepancies between PATE-GAN and PATE" to future
work; the preset takes PATE 2018's Confident-GNMax and Rényi-DP analysis (``papernot2018scalable``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..implementations.gnmax import public_plan

__all__ = ["DATASETS", "plan_table", "aggregator_audit", "utility_table", "archived", "training_diagnosis", "analysis_table",
           "audit_table", "sweep_values", "sweep_table", "sweep_figure", "verdict_table", "utility_target",
           "curves"]

DATASETS = ("cervical_cancer", "epileptic_seizure", "isolet", "credit", "mnist")


def plan_table(*, epsilon: float = 1.0, delta: float = 1e-5) -> pd.DataFrame:
    """gnmax's public plan on each bundled training split (:func:`public_plan`)."""
    from ..utility.run import load_dataset

    rows = [{"dataset": d, **public_plan(len(load_dataset(d, None).train), epsilon=epsilon, delta=delta)} for d in DATASETS]
    return pd.DataFrame(rows).set_index("dataset")


def aggregator_audit(plans: pd.DataFrame, *, queries: int = 10**6, seed: int = 0) -> pd.DataFrame:
    """The mechanism-level audit of Confident-GNMax (:mod:`~pategan_audit.auditing.mechanism_gnmax`)
    at each plan's (k, σ): ``queries`` releases on each of two neighbouring vote counts through the
    preset's own aggregator; the columns a reader needs."""
    from ..auditing.mechanism_gnmax import audit_table

    table = audit_table(plans, queries=queries, seed=seed)
    keep = ["teachers", "sigma vote", "n1", "queries per count", "matches_analysis", "eps_lo", "eps_hat", "eps_exact",
            *[c for c in table.columns if c.startswith(("exact RDP", "charged RDP"))],
            "exact / charged (worst pair, max over orders)", "sound"]
    return table[keep]


def utility_table(directory=None) -> pd.DataFrame | None:
    """Best-of-n mean AUROC per dataset: gnmax and corrected from ``utility_gnmax_large``, the six
    from the Table 4 archives, each (dataset, preset) cell from the one that ran it at the largest
    protocol (:func:`pategan_audit.utility.protocols.table4_records`), their protocols in
    "the six (ours): protocol", and the paper's Table 4 (best of the six); None if the gnmax archive is missing."""
    from .. import reference
    from ..archive import read_archive
    from ..utility import best_of_n
    from ..utility.protocols import ARCHIVE_COLUMN, RUNS_COLUMN, table4_records

    ours = read_archive("utility_gnmax_large", directory=directory)
    if ours is None:
        return None
    frames = [best_of_n(ours.records)]
    chosen = table4_records(directory).records
    six = chosen[chosen["implementation"].isin(reference.IMPLEMENTATIONS)] if len(chosen) else chosen
    if len(six):
        frames.append(best_of_n(six.drop(columns=[RUNS_COLUMN, ARCHIVE_COLUMN])))
    best = pd.concat(frames, ignore_index=True)
    table = best.pivot_table(index="dataset", columns="implementation", values="auroc", aggfunc="first")
    paper = reference.table4().pivot_table(index="row", columns="column", values="value", aggfunc="first")
    table["best of the six (ours)"] = table[[c for c in reference.IMPLEMENTATIONS if c in table]].max(axis=1) \
        if any(c in table for c in reference.IMPLEMENTATIONS) else np.nan
    table["best of the six (paper)"] = paper.reindex(table.index)[list(reference.IMPLEMENTATIONS)].max(axis=1)
    n = ours.records.groupby("dataset")["table"].nunique() * ours.records.groupby("dataset")["model"].nunique()
    table["n (gnmax, corrected)"] = n.reindex(table.index)
    if len(six):  # a partial archive can leave one dataset's six at two protocols: each is named
        said = six.drop_duplicates(["dataset", RUNS_COLUMN]).groupby("dataset")[RUNS_COLUMN].agg(" / ".join)
        table["the six (ours): protocol"] = said.reindex(table.index)
    return table


def utility_target(table: pd.DataFrame | None) -> str:
    """The issue's utility target read off :func:`utility_table`: on how many datasets gnmax's
    best-of-n AUROC at ε = 1 beats the best of the six in the paper's Table 4 (and in ours, where
    we ran the six), with the numbers; a note while the archive is missing."""
    if table is None or "gnmax" not in table:
        return "*The utility target cannot be judged yet: `utility_gnmax_large` has no gnmax cells.*"
    rows = table.dropna(subset=["gnmax"])
    above = [d for d in rows.index if rows.loc[d, "gnmax"] > rows.loc[d, "best of the six (paper)"]]
    ours = rows.dropna(subset=["best of the six (ours)"])
    above_ours = [d for d in ours.index if ours.loc[d, "gnmax"] > ours.loc[d, "best of the six (ours)"]]
    listing = "; ".join(f"{d} {rows.loc[d, 'gnmax']:.3f} against {rows.loc[d, 'best of the six (paper)']:.3f}"
                        for d in rows.index)
    verdict = "**met**" if len(above) >= 2 else "**not met**"
    return (f"gnmax beats the paper's best of the six on {len(above)} of {len(rows)} datasets at ε = 1 "
            f"({', '.join(above) or 'none'}; gnmax against the paper's best: {listing}), and the best of "
            f"our six on {len(above_ours)} of the {len(ours)} datasets where we ran them: the target "
            f"(better than the best of the six on at least two datasets) is {verdict}.")


def training_diagnosis(*, seed: int = 0, max_iter: int | None = None) -> pd.DataFrame:
    """One gnmax fit on Cervical (public bounds), per iteration: the mean share of teachers that
    call a generated row real, the share of queries answered, and the share of answers "real"."""
    from .. import datasets
    from ..implementations import create

    ds = datasets.load("cervical_cancer")
    model = create("gnmax", seed=seed, public_bounds=ds.bounds, record=True, max_iter=max_iter)
    model.fit(ds.train, label=ds.label)
    k = model.num_teachers_
    rows = []
    for it, (votes, labels) in enumerate(zip(model.trace.votes, model.trace.labels)):
        answered = labels >= 0
        rows.append({"iteration": it + 1, "teachers calling it real": float(np.mean(votes) / k),
                     "answered": float(answered.mean()),
                     "answered 'real'": float((labels[answered] == 1).mean()) if answered.any() else np.nan})
    return pd.DataFrame(rows).set_index("iteration")


def analysis_table(*, seed: int = 0, epsilon: float = 1.0, max_iter: int | None = None) -> pd.DataFrame:
    """One Cervical fit per analysis (public bounds, same seed, so the same run): what each one
    reports. ``data_independent`` charges every query in full; ``data_dependent`` charges the
    answered queries their Thm 6 cost at the votes and publishes a smooth-sensitivity release of
    the result (the exact data-dependent ε is private and not shown)."""
    from .. import datasets
    from ..implementations import create

    ds = datasets.load("cervical_cancer")
    rows = []
    for analysis in ("data_independent", "data_dependent"):
        model = create("gnmax", epsilon=epsilon, seed=seed, public_bounds=ds.bounds, max_iter=max_iter,
                       analysis=analysis).fit(ds.train, label=ds.label)
        extra = model.trace.extra
        rows.append({"analysis": analysis, "iterations": model.trace.iterations,
                     "queries": int(model.accountant.num_queries),
                     "answered": int(extra.get("answered_queries", np.nan)) if analysis == "data_dependent" else np.nan,
                     "reported ε̂ (published)": float(model.trace.eps_hat[-1]),
                     "worst case over datasets": float(extra.get("eps_worst_case", model.trace.eps_hat[-1])),
                     "guarantee": model.guarantee_})
    return pd.DataFrame(rows).set_index("analysis")


def audit_table(directory=None) -> pd.DataFrame | None:
    """gnmax's black-box audit (``audit_gnmax_large``) beside ``corrected``'s (``audit_corrected_large``):
    Clopper-Pearson ε_emp and AUC per (attack, channel); None while the gnmax archive is missing."""
    from ..archive import read_archive

    frames = []
    for name in ("audit_gnmax_large", "audit_corrected_large"):
        archived = read_archive(name, directory=directory)
        if archived is None:
            if name == "audit_gnmax_large":
                return None
            continue
        rec = archived.records[archived.records["method"] == "clopper_pearson"]
        frames.append(rec[["implementation", "attack", "channel", "epsilon_emp", "auc"]])
    table = pd.concat(frames, ignore_index=True)
    return table.pivot_table(index=["attack", "channel"], columns="implementation", values=["epsilon_emp", "auc"],
                             aggfunc="first")


def sweep_values(directory=None) -> pd.DataFrame | None:
    """The privacy-utility curves (``utility_sweep_large``): per dataset, preset and ε the best-of-n
    mean AUROC over the twelve classifiers (NaN where the preset refused to train: below its
    accountant's floor), the tables it is the best of, the share of those tables with a single
    label class, the mean number of training iterations, the cell's iteration cap, whether its
    tables repeat the next smaller ε's and the ε a point was copied from (its twin that the cap
    held, :mod:`~pategan_audit.utility.twins`; NaN when trained). None while the archive is missing."""
    from ..archive import read_archive
    from ..utility import best_of_n

    archived = read_archive("utility_sweep_large", directory=directory)
    if archived is None:
        return None
    rec = archived.records
    best = best_of_n(rec).drop(columns=["cell", "variant", "num_teachers", "n_classifiers"])
    keys = ["dataset", "implementation", "epsilon"]
    tables = rec.drop_duplicates(["cell", "model", "table"])
    trained = tables[tables["status"] == "ok"]
    fits = tables.drop_duplicates(["cell", "model"]).groupby(keys)
    extra = pd.DataFrame({
        "single-class share": trained.groupby(keys)["single_class"].mean().astype(float),
        "iterations": fits["iterations"].mean()})
    if "max_iter" in rec.columns:  # the cell's iteration cap (the dataset's, at the archive's profile)
        extra["iteration cap"] = fits["max_iter"].max()
    extra["same tables as the smaller ε"] = _repeats(rec[rec["status"] == "ok"], keys)  # every classifier's row
    if "same_as_epsilon" in rec.columns:  # taken from its twin that the cap held, not trained (utility.twins)
        extra["copied from ε"] = tables.groupby(keys)["same_as_epsilon"].first()
    values = best.merge(extra.reset_index(), on=keys, how="left").sort_values(keys).reset_index(drop=True)
    values["same tables as the smaller ε"] = values["same tables as the smaller ε"].astype("boolean").fillna(False)
    values.attrs["meta"] = archived.meta  # what curves() says about the run, without reading it again
    return values


def _repeats(trained: pd.DataFrame, keys: list[str]) -> pd.Series:
    """Per sweep point of the trained records ``trained`` (one row per classifier and table): True
    where its tables score exactly as at the next smaller ε of the same preset and dataset (every
    classifier on every table, AUROC and AUPRC), i.e. ε changed neither how long the
    generator trained nor its noise (the seed is shared across ε). A point whose tables all have a
    single label class is never a repeat: every classifier scores 0.5 on any such table."""
    rec = trained.sort_values(["model", "table", "classifier"])
    scores, one_class = {}, set()
    for k, g in rec.groupby(keys):
        scores[k] = tuple(g[["auroc", "auprc"]].round(12).itertuples(index=False))
        if g["single_class"].fillna(False).astype(bool).all():
            one_class.add(k)
    by_preset: dict[tuple, list[tuple]] = {}
    for key in sorted(scores):  # (dataset, implementation, ε), ε ascending
        by_preset.setdefault(key[:2], []).append(key)
    out = {}
    for points in by_preset.values():
        out[points[0]] = False
        for before, key in zip(points, points[1:]):
            out[key] = not {key, before} & one_class and scores[key] == scores[before]
    return pd.Series(out, dtype=bool).rename_axis(keys)


#: the paper's AUROC-against-ε figure of each curve dataset (the six presets; authors' records)
PAPER_CURVES = {"epileptic_seizure": 1, "credit": 6}


def paper_curves(dataset: str) -> pd.DataFrame | None:
    """The paper's own privacy-utility curves of the six on ``dataset`` (Figure 1 on Epileptic,
    Figure 6 on Credit: best of 9 tables, 25 at ε = 1 on Epileptic; Credit on its full data), as
    ``implementation, epsilon, value``; None where the paper draws none (Cervical)."""
    from .. import reference

    if dataset not in PAPER_CURVES:
        return None
    return reference.figure_series(PAPER_CURVES[dataset])[["implementation", "epsilon", "value", "n_tables"]]


def sweep_table(values: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """One dataset's curves as a table: presets down, ε across (best-of-n mean AUROC); below them
    the paper's curves of the six ("<preset> (paper)") where it printed them."""
    from .plotting.theme import ordered_names

    part = values[values["dataset"] == dataset]
    table = part.pivot_table(index="implementation", columns="epsilon", values="auroc", aggfunc="first", dropna=False)
    table = table.reindex(ordered_names(table.index))
    ref = paper_curves(dataset)
    if ref is not None:
        theirs = ref.pivot_table(index="implementation", columns="epsilon", values="value", aggfunc="first", dropna=False)
        theirs = theirs.reindex(ordered_names(theirs.index))
        theirs.index = [f"{name} (paper)" for name in theirs.index]
        table = pd.concat([table, theirs])
    table.columns = [f"ε={e:g}" for e in table.columns]
    return table


def sweep_figure(values: pd.DataFrame, dataset: str):
    """One dataset's privacy-utility curves: best-of-n mean AUROC against ε for the presets
    archived, the paper's curves of the six faint and dotted where it printed them (drawn also
    for a preset whose own curve is not archived yet), chance (0.5) as the dotted baseline."""
    from .plotting.utility import plot_epsilon_sweep
    from ..reference import DISPLAY_NAMES

    part = values[values["dataset"] == dataset].rename(columns={"auroc": "value"})
    return plot_epsilon_sweep(part[["implementation", "epsilon", "value"]].dropna(), baseline=0.5,
                              reference=paper_curves(dataset), reference_all=True,
                              title=f"{DISPLAY_NAMES.get(dataset, dataset)}: AUROC against ε")


#: the audit archives behind :func:`verdict_table`, in the order a preset's rows are looked up
_VERDICT_AUDITS = ("audit_gnmax_large", "audit_corrected_large", "audit_querybased_large", "audit_groundhog_large",
                   "audit_querybased_controlled_large")


def verdict_table(values: pd.DataFrame | None, *, dataset: str = "cervical_cancer", epsilon: float = 1.0,
                  directory=None) -> pd.DataFrame | None:
    """Privacy beside utility for the eight presets at ``epsilon``: the Clopper-Pearson ε_emp of
    each archived audit at 1,000 shadow models per world (Querybased and GroundHog, each in the
    paper's and the controlled channel) and the archived curve's AUROC on ``dataset``.
    A preset's rows come from the first archive in :data:`_VERDICT_AUDITS` that holds them (the
    hardened ``corrected`` from ``audit_corrected_large``). None while no audit archive exists."""
    from ..archive import read_archive
    from .plotting.theme import ordered_names

    columns = {("querybased", "paper"): "Querybased ε_emp (paper channel)",
               ("querybased", "controlled"): "Querybased ε_emp (controlled)",
               ("groundhog", "paper"): "GroundHog ε_emp (paper channel)",
               ("groundhog", "controlled"): "GroundHog ε_emp (controlled)"}
    cells: dict[tuple[str, str], float] = {}
    for name in _VERDICT_AUDITS:
        archived = read_archive(name, directory=directory)
        if archived is None:
            continue
        rec = archived.records
        rec = rec[(rec["method"] == "clopper_pearson") & (rec["variant"] == "as benchmarked")]
        for row in rec.itertuples():
            key = (row.implementation, columns.get((row.attack, row.channel)))
            if key[1] is not None and key not in cells:
                cells[key] = float(row.epsilon_emp)
    if not cells:
        return None
    table = pd.Series(cells).unstack().reindex(columns=list(columns.values()))
    if values is not None:
        part = values[(values["dataset"] == dataset) & (values["epsilon"] == epsilon)].set_index("implementation")
        table[f"AUROC ({dataset}, ε={epsilon:g})"] = part["auroc"].reindex(table.index)
    return table.reindex(ordered_names(table.index))


def curves(values: pd.DataFrame | None, *, cost: str) -> list:
    """The page blocks of the privacy-utility curves (``values`` from :func:`sweep_values`): per
    dataset of the archive, its figure, its caption (scale, refusals, single-class tables) and its
    table; the missing-archive note while ``utility_sweep_large`` has not run."""
    from .. import reference
    from ..reference import DISPLAY_NAMES
    from .blocks import Text, archive_missing, figure, table

    if values is None:
        return [archive_missing("utility_sweep_large", cost)]
    meta = values.attrs.get("meta", {})

    def listed(rows: pd.DataFrame) -> str:
        return "; ".join(f"{name} at ε = {', '.join(f'{e:g}' for e in group['epsilon'])}"
                         for name, group in rows.groupby("implementation", sort=False)) or "none"

    blocks: list = []
    for dataset in values["dataset"].unique():
        part = values[values["dataset"] == dataset]
        refused = part[part["auroc"].isna()]
        single = part[part["single-class share"] >= 0.5]
        note = (f"Best of n = {int(part['n'].max())} tables per point (the mean over the twelve classifiers of "
                f"each one's best). Refused to train (below the accountant's floor; no point): {listed(refused)}. "
                f"Half or more of the synthetic tables have a single label class, on which every classifier "
                f"scores 0.5: {listed(single)}.")
        if "iteration cap" in part.columns:
            capped = part[part["iterations"] >= part["iteration cap"]]
            note += (f" Trained to the iteration cap ({int(part['iteration cap'].max()):,}; a preset whose "
                     f"accountant stops training had budget left there): {listed(capped)}.")
        same = part[part["same tables as the smaller ε"].astype(bool)]
        note += (" The same tables as at the next smaller ε (ε changed neither the training's length nor its "
                 f"noise; the seed is shared across ε, so such a point repeats the one before): {listed(same)}.")
        if "copied from ε" in part.columns and part["copied from ε"].notna().any():
            copied = part[part["copied from ε"].notna()]
            note += (" Of these, copied from a smaller ε's point without training, because there the cap held every "
                     "model and ε only decides when these presets stop (`pategan_audit.utility.twins`): "
                     f"{listed(copied)}.")
        if dataset in PAPER_CURVES:
            missing = sorted(set(reference.IMPLEMENTATIONS) - set(part["implementation"]))
            note += (f" Faint dotted lines and the rows marked (paper): the paper's Figure {PAPER_CURVES[dataset]} "
                     f"(authors' records, best of 9 tables, "
                     f"{'25 at ε = 1' if dataset == 'epileptic_seizure' else 'Credit on its full data'}), a larger "
                     f"n than ours, so they sit higher for the same generator. Not archived here yet: "
                     f"{', '.join(missing) or 'none'}.")
        blocks += [*figure(f"curves_{dataset}", sweep_figure(values, dataset)),
                   Text(f"**{DISPLAY_NAMES.get(dataset, dataset)}.** {note}"),
                   *table(f"curves_{dataset}", sweep_table(values, dataset).round(3))]
    if meta and not meta.get("complete", False):
        blocks.append(Text(f"*Partial archive: {meta.get('runs', '')}. `python -m pategan_audit.archive "
                           f"utility_sweep_large --n-jobs 2` computes the rest.*"))
    return blocks


def archived(name: str, frame: pd.DataFrame | None, archive: str, cost: str) -> list:
    """The page blocks of a table read from ``archive``: the table (written as ``<name>.csv``), or
    the note that names the command computing the archive while it is missing."""
    from .blocks import archive_missing, table

    return [archive_missing(archive, cost)] if frame is None else table(name, frame.round(3))
