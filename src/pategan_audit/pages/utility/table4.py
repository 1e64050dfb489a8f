"""Table 4 of the utility page and what is derived from it: the AUPRC companion, Table 1's
AUROC-Δ against [49], the "40.15 % on average" of §5 and the DPGAN count
(``ganev2025elusive`` §5, Tables 1 and 4; [49] = ``jordon2019pategan``, its Table 2 for DPGAN).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ... import reference
from ...utility.aggregate import dpgan_count
from ...utility.tables import dataset_by_implementation, delta_row, pairwise_delta_pct, scorecard_rows, side_by_side
from ..blocks import Block, Glue, Text, scorecard, table
from . import spread
from .context import UtilityPage

__all__ = ["ours", "paper", "table4", "single_class_shares", "table4_auprc", "table1", "dpgan"]


def ours(page: UtilityPage, *, metric: str = "auroc", implementations: Sequence[str] | None = None) -> pd.DataFrame:
    """Our Table 4 at the page's ε: mean over the classifiers of the best-of-n ``metric``,
    rows = datasets (Table 4 order), columns = implementations (default: the page's)."""
    implementations = page.implementations if implementations is None else implementations
    return dataset_by_implementation(page.rows("main"), metric=metric, datasets=page.datasets, implementations=implementations)


def paper() -> pd.DataFrame:
    """The paper's Table 4 (AUROC), with [49]'s PATE-GAN column ``paper49``."""
    return reference.table4(wide=True)


def _paper_columns(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[[c for c in frame.columns if c in reference.IMPLEMENTATIONS]]


def table4(page: UtilityPage) -> list[Block]:
    """Table 4 beside the paper's and [49]'s; at ε = 1 our AUROC and AUPRC go to the scorecard."""
    t4, t4_paper = ours(page), paper()
    side = side_by_side(t4, t4_paper)
    side.insert(0, ("paper49", "[49]"), t4_paper["paper49"].reindex(t4.index))
    runs = page.runs("main")
    caption = page.caption(
        f"Mean over the 12 classifiers of the best-of-n AUROC, ε = {page.eps:g}, δ = 10⁻⁵, teachers max(2, ⌊N/1000⌋) "
        "(Credit ⌊N/5000⌋) on the training rows used. The paper's Credit row is best-of-9, the others best-of-25", runs)
    blocks = [*table("table4", side), Text("**Table 4.** " + caption)]
    if page.at_main_epsilon:
        auprc = ours(page, metric="auprc", implementations=reference.IMPLEMENTATIONS)
        blocks += [scorecard(_with_spread(page, scorecard_rows(_paper_columns(t4), table="table4", runs=runs), "auroc")),
                   scorecard(_with_spread(page, scorecard_rows(auprc, table="table4_auprc", runs=runs), "auprc"))]
    return blocks


def _with_spread(page: UtilityPage, rows: list[dict], metric: str) -> list[dict]:
    """Table 4 rows (row = dataset, column = implementation) with the bootstrap interval of their main-run cell."""
    return spread.attach(rows, lambda r: spread.interval(page, "main", metric, dataset=r["row"], implementation=r["column"]))


def single_class_shares(page: UtilityPage) -> pd.Series:
    """Per implementation, the share of synthetic tables whose label column has one class."""
    main = page.rows("main")
    return main.groupby("implementation")["single_class"].mean().reindex(list(page.implementations))


def table4_auprc(page: UtilityPage) -> list[Block]:
    """Table 4 for AUPRC (not printed; derived from the authors' records) and the single-class shares."""
    side = side_by_side(ours(page, metric="auprc"), reference.table4_auprc(wide=True))
    shares = single_class_shares(page).dropna()
    note = ("Share of synthetic tables whose label column has a single class (then every classifier scores "
            "AUROC 0.5 and AUPRC = prevalence exactly, implementation notes §utility.classifiers): "
            + ", ".join(f"{k} {v:.0%}" for k, v in shares.items()) + ".")
    return [*table("table4_auprc", side), Text(note)]


def table1(page: UtilityPage) -> list[Block]:
    """Table 1: the mean AUROC-Δ against [49] per implementation — printed, the rule applied to the
    paper's own Table 4, and ours — plus the pairwise means ``delta_all_paper`` / ``delta_all_ours``
    (the "40.15 %" of §5). Scorecard only with all four datasets at ε = 1."""
    t4, t4_paper = ours(page), paper()
    ref49 = t4_paper["paper49"]
    t1_ours = delta_row(t4, ref49)
    frame = pd.DataFrame({"paper (printed)": reference.table1(wide=True).loc["auroc_delta_pct"],
                          "rule on the paper's Table 4": delta_row(t4_paper[list(reference.IMPLEMENTATIONS)], ref49),
                          "ours": t1_ours}).T[list(page.implementations)]
    pair_paper = pairwise_delta_pct(t4_paper[list(reference.IMPLEMENTATIONS)], ref49)
    pair_ours = pairwise_delta_pct(_paper_columns(t4), ref49)
    runs = page.runs("main")
    caption = page.caption(f"Mean AUROC-Δ (%) against [49] over the datasets {', '.join(page.datasets)}; "
                           f"ours from our Table 4 at ε = {page.eps:g}", runs)
    complete = set(page.datasets) == set(reference.DATASETS) and page.at_main_epsilon
    rows = [{"table": "table1", "row": "auroc_delta_pct", "column": c, "ours": float(v), "runs": runs}
            for c, v in t1_ours.items() if c in reference.IMPLEMENTATIONS and pd.notna(v)] if complete else []
    return [*table("table1", frame), Glue("delta_all_paper", f"{pair_paper:.2f} %"),
            Glue("delta_all_ours", f"{pair_ours:.2f} %"), Text("**Table 1.** " + caption), scorecard(rows)]


def dpgan(page: UtilityPage) -> list[Block]:
    """How many Table 4 entries beat [49]'s DPGAN baseline (its Table 2), paper's and ours (§5: 13 of 24)."""
    baseline = {d: v["auroc"] for d, v in reference.DPGAN.items()}
    rows = [d for d in page.datasets if d in baseline]
    t4 = _paper_columns(ours(page))
    count_paper = dpgan_count(paper().loc[rows, list(reference.IMPLEMENTATIONS)], dpgan=baseline)
    count_ours = dpgan_count(t4.loc[rows].fillna(-np.inf), dpgan=baseline)
    frame = pd.DataFrame({"entries": [len(rows) * len(reference.IMPLEMENTATIONS)] * 2, "above DPGAN": [count_paper, count_ours]},
                         index=["paper's Table 4", "our Table 4"])
    return table("dpgan_count", frame)

