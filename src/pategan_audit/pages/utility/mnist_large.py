"""Figure 10 at the archived scale (``ganev2025elusive`` Appendix B, Figure 10): MNIST's mean of
the LR and RF best-of-n AUROC (one-vs-rest, macro over the ten digits) against ε, read from
``results/archive/utility_mnist_large/`` (the six presets and ``corrected`` at a stated reduced
protocol, :data:`pategan_audit.archive.MNIST_DESCRIPTION`), with Setting A on the same rows.

The paper prints no values for Figure 10 and publishes no records or code for it, so the figure
has no scorecard rows: the page shows ours only, with the scale it ran at."""
from __future__ import annotations

import pandas as pd

from ..blocks import Block, Figure, Text, archive_missing, table
from ...utility.aggregate import best_of_n
from ...utility.profiles import EPSILON_GRID
from ...utility.tables import cap_binds_text, stopping

__all__ = ["ARCHIVE", "figure10_values", "figure10_large"]

ARCHIVE = "utility_mnist_large"


def figure10_values(records: pd.DataFrame) -> tuple[pd.DataFrame, float | None]:
    """Our Figure 10 values from the archive's records: rows = presets (the archive's order),
    columns = ε, the best-of-n mean of LR and RF AUROC (NaN where every model refused to train);
    and Setting A's mean AUROC on the same training rows (None if it has not run)."""
    synthetic = records[records["implementation"] != "real"]
    real = records[records["implementation"] == "real"]
    values = best_of_n(synthetic).pivot_table(index="implementation", columns="epsilon", values="auroc", dropna=False)
    order = list(dict.fromkeys(synthetic["implementation"]))
    setting_a = float(real["auroc"].mean()) if len(real) else None
    return values.reindex(order), setting_a


def figure10_large(archive=None) -> list[Block]:
    """The archived Figure 10: the curves, their values and a caption with the archive's scale and
    progress. ``archive``: an :class:`pategan_audit.archive.Archive` (default: the committed one)."""
    from ..plotting.utility import plot_epsilon_sweep

    if archive is None:
        from ...archive import read_archive

        archive = read_archive(ARCHIVE)
    if archive is None:
        return [archive_missing(ARCHIVE, "57 cells, several core-hours at its reduced protocol")]
    meta = archive.meta
    progress = (f" {meta.get('settings_done')} of {len(meta.get('cells', []))} cells done."
                if not meta.get("complete", True) else "")
    values, setting_a = figure10_values(archive.records)
    if values.empty:
        return [Text(f"*`{ARCHIVE}` has no finished preset cell yet.*{progress}")]
    series = values.stack(future_stack=True).rename("value").reset_index()
    fig = plot_epsilon_sweep(series.dropna(subset=["value"]), metric="AUROC (mean of LR and RF)", baseline=0.5,
                             title="Figure 10 — MNIST (archived, reduced)")
    fig.axes[0].set_xlim(min(EPSILON_GRID) / 1.5, max(EPSILON_GRID) * 1.5)  # the whole grid, run or not
    binds = cap_binds_text(stopping(archive.records[archive.records["implementation"] != "real"])) or "ε ended every training (no point is held by the iteration cap)."
    real = (f"{setting_a:.4f} on the same rows (Table 7 prints 0.9960 for all 60,000 rows, its classifiers not "
            "stated)" if setting_a is not None else "not run")
    blocks: list[Block] = [Figure("figure10_large", fig)]
    blocks += table("figure10_large_values", values.round(4))
    blocks.append(Text(f"**Figure 10, archived.** MNIST, mean of the LR and RF best-of-n one-vs-rest macro AUROC "
                       f"against ε (empty: every model refused to train at that ε). {binds} Setting A (LR and RF): {real}. The paper "
                       f"prints no values for this figure, so it has no scorecard rows. {archive.caption()}.{progress}"))
    return blocks
