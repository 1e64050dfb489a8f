"""Leakage channels at the page's profile (implementation notes §audit.channels; beyond ``ganev2025elusive``
§6.2): the paper's game, then the same output size in both worlds, then the bounds fixed in
advance too (:func:`pategan_audit.auditing.channel_table`), as a figure, tables and one
sentence per preset and attack.
"""
from __future__ import annotations

from ..plotting.auditing import plot_channels
from ...auditing.diagnostics import encoder_categories
from ...auditing.settings import AuditSetting
from ...auditing.summaries import channel_sentences, channel_table
from ..blocks import Block, SaveTable, ShowTable, Text, figure
from .context import AuditPage

__all__ = ["SYNTHCITY_NOTE", "synthcity_categories_leak", "with_notes", "channels"]

SYNTHCITY_NOTE = " What remains includes synthcity's data-derived category lists (next table)."


def synthcity_categories_leak(epsilon: float) -> bool:
    """Whether synthcity's encoder, given public bounds, still sees different categories in the two
    worlds of the worst case (its category lists are fitted on the data)."""
    cats = encoder_categories(AuditSetting("querybased", "synthcity", channel="controlled", iterations=1, epsilon=epsilon))
    return cats is not None and not cats["out"].equals(cats["in"])


def with_notes(sentences: list[str], *, synthcity_leak: bool) -> str:
    """The sentences as a Markdown list; synthcity's gets :data:`SYNTHCITY_NOTE` where its categories leak."""
    return "\n".join(f"* {s}" + (SYNTHCITY_NOTE if synthcity_leak and s.startswith("**synthcity**") else "")
                     for s in sentences)


def channels(page: AuditPage) -> list[Block]:
    """The channel figure (Clopper-Pearson), the channel tables of both bounds (written; CP shown)
    and the sentences per preset and attack for both bounds."""
    records = page.records
    save, show = figure("channels", plot_channels(records, method="clopper_pearson", ceiling=page.ceiling_cp,
                                                  epsilon=page.eps))
    channels_cp = channel_table(records, method="clopper_pearson")
    channels_bayes = channel_table(records, method="bayesian")
    leak = synthcity_categories_leak(page.eps)
    return [save, Text(page.caption("Leakage channels (Clopper-Pearson)")),
            SaveTable("channels_table", channels_cp), SaveTable("channels_table_bayesian", channels_bayes),
            ShowTable(channels_cp.round(3)),
            Text("**Per preset and attack (Clopper-Pearson):**\n\n" + with_notes(
                channel_sentences(channels_cp, ceiling=page.ceiling_cp), synthcity_leak=leak)),
            Text("**The same with the Bayesian bound** (ceiling " + f"{page.ceiling_bayes:.2f}):\n\n" + with_notes(
                channel_sentences(channels_bayes, ceiling=page.ceiling_bayes), synthcity_leak=leak)),
            show]
