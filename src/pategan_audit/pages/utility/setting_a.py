"""Setting A of the utility page: the classifiers trained on the real training split
(``ganev2025elusive`` Table 7, Appendix C; the per-classifier records of the authors).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ... import reference
from ...classifiers import CLASSIFIERS, DETERMINISTIC_CLASSIFIERS
from ...utility.aggregate import setting_a_scores
from ...utility.tables import scorecard_rows, side_by_side
from ..blocks import Block, Glue, SaveTable, ShowTable, Text, scorecard
from .context import UtilityPage

__all__ = ["scores", "per_classifier", "table7", "classifiers"]


def scores(page: UtilityPage) -> pd.DataFrame:
    """Per dataset: mean AUROC/AUPRC over the classifier panel, panel size, baseline AUPRC."""
    return setting_a_scores(page.rows("setting_a")).set_index("dataset")


def per_classifier(page: UtilityPage) -> pd.DataFrame:
    """Our Setting A AUROC, rows = the twelve classifiers, columns = datasets in Table 4 order."""
    rows = page.rows("setting_a")
    wide = rows[rows["classifier"].isin(CLASSIFIERS)].pivot_table(index="classifier", columns="dataset", values="auroc")
    wide = wide.reindex(list(CLASSIFIERS))
    return wide[[d for d in reference.DATASETS if d in wide.columns]]


def _full_split(page: UtilityPage) -> set[str]:
    return {c.dataset for c in page.cells["setting_a"] if c.subsample is None}


def table7(page: UtilityPage) -> list[Block]:
    """Table 7's Setting A columns beside ours (written to ``table7_setting_a.csv``) and its caption."""
    ours, paper = scores(page), reference.table7(wide=True)
    rows = page.rows("setting_a")
    frame = pd.DataFrame({
        "classifiers": ours["n_classifiers"],
        "AUROC (ours)": ours["auroc"], "AUROC (paper)": paper["auroc"].reindex(ours.index),
        "AUPRC (ours)": ours["auprc"], "AUPRC (paper)": paper["auprc"].reindex(ours.index),
        "baseline AUPRC": ours["baseline_auprc"],
        "training rows": rows.groupby("dataset")["n_train"].first(),
    })
    subsamples = ", ".join(f"{c.dataset}: {c.subsample or 'full'} training rows" for c in page.cells["setting_a"])
    caption = page.caption(
        "Mean over the classifier panel of AUROC/AUPRC on the real test split, beside the paper's Table 7. "
        "A panel of 5 is the deterministic classifiers only (LR, Gaussian NB, Bernoulli NB, Linear SVM, LDA)",
        "one fit per classifier; " + subsamples)
    return [SaveTable("table7_setting_a", frame), Text("**Table 7 (Setting A columns).** " + caption)]


def deterministic_gap(page: UtilityPage) -> str:
    """Largest |ours − authors' record| of a deterministic classifier, as text ("n/a" if none)."""
    ours = per_classifier(page).loc[list(DETERMINISTIC_CLASSIFIERS)]
    gap = (ours - reference.setting_a_reference(wide=True).reindex(index=ours.index, columns=ours.columns)).abs()
    return f"{np.nanmax(gap.to_numpy()):.4f}" if gap.notna().any().any() else "n/a"


def classifiers(page: UtilityPage) -> list[Block]:
    """Setting A per classifier beside the authors' records; scorecard rows of the full-split
    datasets (and Table 7's means where the full panel of 12 ran); glue ``sa_det_gap``."""
    ours, means, full = per_classifier(page), scores(page), _full_split(page)
    side = side_by_side(ours, reference.setting_a_reference(wide=True))
    rows = scorecard_rows(ours[[d for d in ours.columns if d in full]], table="setting_a", runs="one fit, full split")
    rows += [{"table": "table7", "row": d, "column": m, "ours": float(means.loc[d, m]), "runs": "one fit per classifier, full split"}
             for d in means.index if d in full and means.loc[d, "n_classifiers"] == 12 for m in ("auroc", "auprc")]
    return [SaveTable("setting_a_per_classifier", side), ShowTable(side.dropna(how="all")),
            scorecard(rows), Glue("sa_det_gap", deterministic_gap(page))]
