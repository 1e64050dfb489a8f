"""Per-classifier tables of the utility page: each classifier's best over the n synthetic
tables, beside the paper's, with a heat map of ours − paper (``ganev2025elusive`` Appendix C,
Tables 5 and 10 on Epileptic, 8 and 9 on Credit).
"""
from __future__ import annotations

import numpy as np

from ... import reference
from ...classifiers import CLASSIFIERS
from ..plotting.utility import plot_classifier_heatmap
from ...utility.tables import classifier_by_implementation, scorecard_rows, side_by_side
from ..blocks import Block, Figure, Text, scorecard, table
from . import spread
from .context import CREDIT, EPILEPTIC, UtilityPage
from .setting_a import scores as setting_a_scores

__all__ = ["TABLES", "per_classifier_table", "per_classifier_tables"]

#: (table, dataset, metric) in the page's order: Epileptic's, then Credit's.
TABLES = tuple((table, dataset, metric) for dataset in (EPILEPTIC, CREDIT)
               for table, metric in reference.PER_CLASSIFIER_TABLES[dataset])


def per_classifier_table(page: UtilityPage, name: str, dataset: str, metric: str) -> list[Block]:
    """One of Tables 5, 8, 9, 10: ours beside the paper's, its caption (with Setting A, ours and
    the paper's, and the baseline), the ours − paper heat map; scorecard rows at ε = 1."""
    number = name[len("table"):]
    part = page.rows("main")
    part = part[part["dataset"] == dataset]
    if part.empty:
        return [Text(f"*Table {number} ({dataset}, {metric.upper()}): dataset not run at this profile.*")]
    ours = classifier_by_implementation(part, metric=metric, classifiers=CLASSIFIERS, implementations=page.implementations)
    paper = getattr(reference, name)(wide=True)
    printed = reference.caption_values().set_index("table").loc[name]
    setting_a = setting_a_scores(page)[metric].get(dataset, np.nan)
    runs = page.runs("main", dataset=dataset)
    caption = page.caption(
        f"{reference.DISPLAY_NAMES[dataset]}, {metric.upper()} per classifier (best of n), ε = {page.eps:g}. Setting A: ours "
        f"{setting_a:.4f}, paper {printed['setting_a']:.4f}; baseline {printed['baseline']:.4f}", runs)
    common = [c for c in ours.columns if c in paper.columns]
    difference = ours[common] - paper.reindex(index=ours.index)[common]
    heatmap = plot_classifier_heatmap(difference.rename(index=reference.CLASSIFIER_DISPLAY_NAMES), center=0, vmin=-0.6,
                                      vmax=0.6, title=f"Table {number}: ours − paper ({metric.upper()})")
    blocks = [*table(name, side_by_side(ours, paper)), Text(f"**Table {number}.** " + caption),
              Figure(f"{name}_difference", heatmap)]
    if page.at_main_epsilon:
        rows = scorecard_rows(ours[[c for c in ours.columns if c in reference.IMPLEMENTATIONS]], table=name, runs=runs)
        blocks.append(scorecard(spread.attach(rows, lambda r: spread.interval(
            page, "main", metric, classifier=r["row"], dataset=dataset, implementation=r["column"]))))
    return blocks


def per_classifier_tables(page: UtilityPage) -> list[Block]:
    """Tables 5, 10, 8, 9 in the page's order."""
    return [block for spec in TABLES for block in per_classifier_table(page, *spec)]
