"""The audit at the paper's scale (``ganev2025elusive`` Figures 5 and 12 at 1,000 shadow models
per world), read back from the committed archives through :mod:`pategan_audit.auditing.verdicts`
(never recomputed by the page): Figure 5 beside the paper with a measured spread and a verdict
per cell, Figure 12 beside its null floor and the μ-GDP bound, the channel decomposition and
the calibration lines at that scale.
"""
from __future__ import annotations

import pandas as pd

from ... import reference
from ..plotting.auditing import plot_figure5
from ...auditing import fdp, verdicts
from ...auditing.bounds import perfect_attack_ceiling
from ..blocks import Block, SaveTable, ShowTable, Text, figure
from .context import AuditPage
from .figure5 import paper_by_attack

__all__ = ["FIGURE5_COLUMNS", "FIGURE12_COLUMNS", "CHANNEL_COLUMNS", "large_ceiling", "missing_cells", "load",
           "figure5_large", "figure12_large", "channels_large"]

FIGURE5_COLUMNS = ["ε_emp paper", "ε_emp ours", "ours 90% low", "ours 90% high", "verdict", "AUC paper", "AUC ours",
                   "archive complete"]
FIGURE12_COLUMNS = ["ε_emp ours", "Bayesian ours", "Bayesian null floor", "GDP μ_lo", "GDP ε if Gaussian"]
CHANNEL_COLUMNS = ["ε_emp ours", "ε_emp same size", "ε_emp controlled", "size channel", "bounds channel"]


def large_ceiling(large: pd.DataFrame, method: str) -> float:
    """The ceiling of the archived games (their test outputs per world)."""
    return perfect_attack_ceiling(n_per_world=int(large["n_test"].iloc[0]), method=method)


def missing_cells(table: pd.DataFrame) -> list[str]:
    """"attack/implementation" of the paper's cells without an archived row."""
    return [f"{a}/{i}" for a in ("querybased", "groundhog") for i in reference.IMPLEMENTATIONS if (a, i) not in table.index]


def load(page: AuditPage) -> pd.DataFrame:
    """Read the archives (``page.large``) and, when there are any, the Bayesian null floor at their
    size (``page.large_floor``) and Figure 5's table with spreads and verdicts (``page.fig5_scale``)."""
    page.large = large = verdicts.paper_scale_records()
    if not large.empty:
        n_test = int(large["n_test"].iloc[0])
        page.large_floor = fdp.bayesian_null_floor(n_test, n_test, n_sims=200, seed=page.seed)
        page.fig5_scale = verdicts.figure5_table(large, reference.audit_reference(), epsilon=page.eps,
                                                 null_floor=page.large_floor)
    return large


def figure5_large(page: AuditPage, archives: dict | None = None) -> list[Block]:
    """Figure 5 from the archives (paper channel), their provenance, the table of verdicts and the
    cells not archived yet. ``archives``: name -> :class:`pategan_audit.archive.Archive` or None
    (default: read :data:`~pategan_audit.auditing.verdicts.AUDIT_ARCHIVES`)."""
    large = load(page)
    if large.empty:
        return [Text("*No audit archive is present: run `make archives`.*")]
    if archives is None:
        from ...archive import read_archive

        archives = {name: read_archive(name) for name in verdicts.AUDIT_ARCHIVES}
    save, show = figure("figure5_large", plot_figure5(large[large["channel"] == "paper"], method="clopper_pearson",
                                                      reference=paper_by_attack(),
                                                      ceiling=large_ceiling(large, "clopper_pearson"), epsilon=page.eps))
    table = page.fig5_scale
    provenance = verdicts.provenance_table(names=[n for n in archives])
    return [save, Text("**Figure 5 at 1,000 shadow models per world** (Clopper-Pearson, paper channel). Bars: ours; "
                       "ticks: the paper. The archives behind it (each archived run `<name>` is read back, not "
                       "recomputed; 'same code' says whether the computing code has changed since it ran):"),
            SaveTable("paper_scale_provenance", provenance), ShowTable(provenance),
            SaveTable("figure5_large_table", table), ShowTable(table[FIGURE5_COLUMNS].round(2)),
            Text(f"Verdicts: {table['verdict'].value_counts().to_dict()}. Not yet archived at this scale: "
                 f"{', '.join(missing_cells(table)) or 'none'} (the GroundHog archive is resumable: `python -m "
                 "pategan_audit.archive audit_groundhog_large` continues it). `corrected (replace-one blocks)` rows are "
                 "the preset before its add/remove-exact teacher assignment, kept where the re-audit has not run yet."),
            show]


def figure12_large(page: AuditPage) -> list[Block]:
    """Figure 12 from the archives (paper channel) with the null floor, and the other estimators."""
    large = page.large
    if large is None or large.empty:
        return []
    save, show = figure("figure12_large", plot_figure5(large[large["channel"] == "paper"], method="bayesian",
                                                       ceiling=large_ceiling(large, "bayesian"), epsilon=page.eps))
    floor = page.large_floor
    return [save, Text("**Figure 12 at 1,000 shadow models per world** (Bayesian, paper channel). "
                       f"Null floor: {floor['floor']:.2f} (chance attacks, 95th percentile), constant guess "
                       f"{floor['constant_guess']:.2f}."),
            ShowTable(page.fig5_scale[FIGURE12_COLUMNS].round(3)), show]


def channels_large(page: AuditPage) -> list[Block]:
    """The channel decomposition at the archived scale and the calibration lines
    (:func:`~pategan_audit.auditing.verdicts.calibration_lines`)."""
    if page.large is None or page.large.empty:
        return []
    lines = verdicts.calibration_lines()
    shown = lines.map(lambda v: "—" if pd.isna(v) else f"{v:.2f}")  # "—": not run (GroundHog's game has equal sizes)
    return [ShowTable(page.fig5_scale[CHANNEL_COLUMNS].round(2)), SaveTable("calibration_lines_large", lines),
            ShowTable(shown)]
