"""Table 4 and Setting A at the archived ``large`` profile (``ganev2025elusive`` Tables 4 and 7,
ε = 1), beside the paper's and this page's own profile: each (dataset, preset) cell read from the
archive that ran it at the largest protocol (:mod:`pategan_audit.utility.protocols`:
``utility_best25_large`` over ``utility_large`` and ``utility_tables_large``), with a table saying
which protocol each cell's number comes from.
"""
from __future__ import annotations

import pandas as pd

from ... import reference
from ...utility.protocols import ARCHIVE_COLUMN, RUNS_COLUMN, chosen_from, table4_records
from ..plotting.utility import plot_profile_comparison
from ...utility.aggregate import setting_a_scores
from ...utility.tables import dataset_by_implementation, side_by_side
from . import table4 as table4_page
from ..blocks import Block, Figure, Text, table
from .context import UtilityPage

__all__ = ["ARCHIVE", "table4", "protocol_table", "training", "setting_a", "large_profile"]

#: the archive without which the page has no large profile (the oldest of
#: :data:`pategan_audit.utility.protocols.ARCHIVES`, holding Cervical, Epileptic and Setting A)
ARCHIVE = "utility_large"


def protocol_table(records: pd.DataFrame) -> pd.DataFrame:
    """Which protocol each cell's number comes from: one row per (dataset, protocol) of the chosen
    records (:func:`pategan_audit.utility.protocols.choose`), in Table 4's dataset order, with the
    cells it holds ("Setting A" for the real split's classifiers)."""
    order = [d for d in reference.DATASETS if d in set(records["dataset"])]
    cells = records.drop_duplicates(["dataset", "implementation"])
    rows = []
    for d in order:
        for (runs, archive), part in cells[cells["dataset"] == d].groupby([RUNS_COLUMN, ARCHIVE_COLUMN], sort=False):
            names = ["Setting A" if i == "real" else i for i in part["implementation"]]
            rows.append({"dataset": d, "cells": ", ".join(names), "protocol": runs, "archive": archive})
    return pd.DataFrame(rows, columns=["dataset", "cells", "protocol", "archive"]).set_index(["dataset", "cells"])


def table4(records: pd.DataFrame, *, implementations) -> pd.DataFrame:
    """The archive's Table 4 (AUROC), its datasets in Table 4 order and its implementations in
    the page's order."""
    datasets = [d for d in reference.DATASETS if d in set(records["dataset"])]
    present = [i for i in implementations if i in set(records["implementation"])]
    return dataset_by_implementation(records[records["implementation"] != "real"], metric="auroc", datasets=datasets,
                                     implementations=present)


def training(records: pd.DataFrame) -> pd.DataFrame:
    """How the archived trainings ran, per (dataset, implementation): teachers, mean iterations,
    fit seconds per model, share of single-class tables (as %), tables per cell; rounded to 0.1."""
    syn = records[(records["implementation"] != "real") & (records["table"] >= 0)]
    how = syn.groupby(["dataset", "implementation"]).agg(
        teachers=("num_teachers", "first"), iterations=("iterations", "mean"),
        fit_seconds_per_model=("fit_seconds", "mean"), single_class_tables=("single_class", "mean"),
        tables=("table", "size"))
    how["tables"] = how["tables"] // syn["classifier"].nunique()
    how["single_class_tables"] = how["single_class_tables"].map("{:.0%}".format)
    return how.round(1)


def setting_a(records: pd.DataFrame, *, profile: str) -> pd.DataFrame | None:
    """The archive's Setting A beside Table 7 (None when it has no Setting A rows)."""
    real = records[records["implementation"] == "real"]
    if not len(real):
        return None
    ours, paper = setting_a_scores(real).set_index("dataset"), reference.table7(wide=True)
    return pd.DataFrame({f"AUROC (ours, {profile})": ours["auroc"], "AUROC (paper)": paper["auroc"].reindex(ours.index),
                         f"AUPRC (ours, {profile})": ours["auprc"], "AUPRC (paper)": paper["auprc"].reindex(ours.index),
                         "classifiers": ours["n_classifiers"], "training rows": real.groupby("dataset")["n_train"].first()})


def large_profile(page: UtilityPage, archive=None) -> list[Block]:
    """The archived runs' Table 4 beside the paper's, one bar chart per dataset (paper / archive /
    this page), how their trainings ran and their Setting A. ``archive``: an
    :class:`pategan_audit.archive.Archive` or a list of them (default: those of :func:`pategan_audit.utility.protocols.table4_records`)."""
    if archive is None:
        chosen = table4_records()
    else:
        chosen = chosen_from(archive if isinstance(archive, (list, tuple)) else (archive,))
    archives = list(chosen.archives)
    if not archives or archives[0].name != ARCHIVE:
        return [Text(f"*The `{ARCHIVE}` archive is missing: run `python -m pategan_audit.archive {ARCHIVE}`.*")]
    records = chosen.records
    name = archives[0].meta["profile"]
    used = chosen.used
    caption = " ".join(a.caption() + "." for a in used)
    caption += (f" Each cell is read from the archive that ran it at the largest protocol (archives used: "
                f"{', '.join(f'`{a.name}`' for a in used)}; per cell: the table `table4_large_protocols`).")
    large4 = table4(records, implementations=page.implementations)
    paper4, ours4 = table4_page.paper(), table4_page.ours(page)
    blocks = [*table("table4_large", side_by_side(large4, paper4)), Text(
        f"**Table 4, `{name}` profile.** Mean over the 12 classifiers of the best-of-n AUROC, ε = 1, "
        "beside the paper's Table 4 (best of 25; Credit 9). " + caption),
        *table("table4_large_protocols", protocol_table(records)),
        Text("The protocol of each archived cell: best of M × S tables, the iteration cap, the classifiers' "
             "AdaBoost (SAMME.R as the authors' scikit-learn 1.4.1 ran it, SAMME in the older archives) and the "
             "archive; a partial archive leaves a cell at an older, smaller protocol, never mixes two within one.")]
    for dataset in large4.index:
        bars = {"paper": paper4.reindex(columns=large4.columns), f"ours, {name}": large4,
                f"ours, {page.profile.name}": ours4.reindex(columns=large4.columns)}
        blocks.append(Figure(f"table4_large_{dataset}", plot_profile_comparison(bars, dataset=dataset)))
    blocks += [
        Text(f"Bars: the paper's Table 4, ours at `{name}` (archived) and ours at this page's `{page.profile.name}` "
             "profile; dotted: a classifier that guesses (AUROC 0.5). " + caption),
        *table("table4_large_training", training(records)),
        Text("How the archived trainings ran: mean generator iterations (PATE presets stop when the "
             "accountant reaches ε; original and turing run to the cap), fit time per model, and the "
             "share of synthetic tables with a single label class (AUROC exactly 0.5 for every classifier)."),
    ]
    real = setting_a(records, profile=name)
    if real is not None:
        blocks += [*table("table7_large", real),
                   Text("Setting A of the same archive beside Table 7 (mean over the classifier panel on the real test split).")]
    return blocks
