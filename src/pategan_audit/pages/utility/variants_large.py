"""Tables 6, 11 and 12 at the archived scale (``ganev2025elusive`` Appendix C): the variant cells
of ``results/archive/utility_variants_large/`` (original in its conditional mode, [49]'s
hyperparameters, Table 11's teacher counts), each dataset at its Table 4 archive's protocol, beside
the paper's numbers, with the 90 % bootstrap interval of each cell."""
from __future__ import annotations

import pandas as pd

from ..blocks import Block, Text, archive_missing, table

__all__ = ["ARCHIVE", "TABLES", "variants_large"]

ARCHIVE = "utility_variants_large"
#: the tables the archive fills, in the page's order, with what each compares
TABLES = {"table11": "Table 11 (Epileptic: AUROC by number of teachers; N/1000 is Table 4's cell, above)",
          "table6": "Table 6 (original in its conditional mode)",
          "table12": "Table 12 (P: [49]'s hyperparameters; D is Table 4's cell, above)"}


def variants_large(archive=None) -> list[Block]:
    """One table per artefact of :data:`TABLES` that the archive has cells for: ours (best of n),
    its 90 % interval and the paper's value. ``archive``: an :class:`pategan_audit.archive.Archive`
    (default: the committed one)."""
    from .. import scorecard

    if archive is None:
        from ...archive import read_archive

        archive = read_archive(ARCHIVE)
    if archive is None:
        return [archive_missing(ARCHIVE, "48 cells, many core-hours; Cervical's seven cells about an hour")]
    ours = pd.DataFrame(scorecard.variant_rows(archive.records, ""))
    meta = archive.meta
    progress = (f" {meta.get('settings_done')} of {len(meta.get('cells', []))} cells done."
                if not meta.get("complete", True) else "")
    if ours.empty:
        return [Text(f"*`{ARCHIVE}` has no finished cell yet.*{progress}")]
    paper = scorecard.paper_numbers()[["table", "row", "column", "paper"]]
    ours = ours.merge(paper, on=["table", "row", "column"], how="left")
    blocks: list[Block] = []
    for name, title in TABLES.items():
        part = ours[ours["table"] == name]
        if part.empty:
            continue
        shown = part.set_index(["row", "column"])[["ours", "interval_lo", "interval_hi", "paper"]].rename(
            columns={"ours": "ours (archived)", "interval_lo": "90 % low", "interval_hi": "90 % high"})
        blocks += [*table(f"{name}_large", shown.round(4)), Text(f"**{title}, archived.**")]
    blocks.append(Text(f"Mean over the 12 classifiers of the best-of-n AUROC, ε = 1. {archive.caption()}.{progress}"))
    return blocks
