"""What the reproduction found, in numbers: the summary that opens the book (``book/intro.md``
includes the file :func:`write_summary` writes) and the scorecard page.

Everything is computed from the archived (largest-scale) scorecard (:func:`pategan_audit.pages.scorecard.build`
over :func:`~pategan_audit.pages.scorecard.collect_archived`), the audit archives and the Table 2 probes
(:func:`pategan_audit.auditing.probes.table2_observed`); nothing is typed. Counts are of the paper's
*measured* numbers, each run once (facts of the code or data and aliases are left out, as in
:func:`pategan_audit.pages.scorecard.headline`), per section of ``ganev2025elusive``: utility (§5, App. C),
auditing (§6.2), training traces (§6.1) and code review (§4, Table 2).

The paper's three headline claims (§1, §8) are each judged *confirmed*, *contradicted* or
*qualified* with the numbers behind the judgement (:func:`claims_table`); what this book measured
beyond the paper is listed by :func:`beyond_paper`.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .. import reference as R

__all__ = ["SECTIONS", "COLUMNS", "PLACEHOLDER", "section_of", "section_counts", "artefact_counts", "utility_claim",
           "leakage_claim", "violations_claim", "claims_table", "beyond_paper", "summary_markdown", "write_summary",
           "plot_sections", "plot_artefacts", "archived_card", "audit_inputs"]

#: The paper's sections and the scorecard tables (artefacts) each holds.
SECTIONS: dict[str, tuple[str, ...]] = {
    "utility": ("table1", "table4", "table4_auprc", "table5", "table6", "table7", "table8", "table9", "table10",
                "table11", "table12", "setting_a", "figure1", "figure6", "figure7", "figure8", "figure9"),
    "auditing": ("figure5", "figure12"),
    "training traces": ("figure2", "figure3", "figure4"),
    "code review": ("table2", "table3"),
}

#: Columns of :func:`section_counts` (the verdicts and statuses of measured rows, each run once).
COLUMNS = ("measured", "reproduced", "uninformative", "at chance (both)", "ceiling-limited", "explained",
           "partly explained", "plausible", "unexplained", "not yet run")

#: What the intro shows before the scorecard page has computed the summary.
PLACEHOLDER = ("*The summary of this build's results is written by the scorecard page while the book is built; "
               "it has not been computed yet (build the book, or execute `notebooks/scorecard.ipynb`).*\n")


def section_of(table: str) -> str:
    """The section (:data:`SECTIONS`) of a scorecard table; ``ValueError`` naming the table if it has none."""
    for name, tables in SECTIONS.items():
        if table in tables:
            return name
    raise ValueError(f"scorecard table {table!r} belongs to no section; add it to pategan_audit.pages.summary.SECTIONS")


def _measured(card: pd.DataFrame) -> pd.DataFrame:
    for col in ("table", "verdict", "kind"):
        if col not in card.columns:
            raise ValueError(f"the card has no {col!r} column: pass the output of pategan_audit.pages.scorecard.build")
    return card[card["kind"] == "measured"]


def section_counts(card: pd.DataFrame) -> pd.DataFrame:
    """Per section, the measured numbers (each run once) by verdict and, for the differences, by
    status (:data:`COLUMNS`); the last row ``all`` equals :func:`pategan_audit.pages.scorecard.headline`."""
    from .scorecard import verdict_counts

    measured = _measured(card)
    sections = measured["table"].map(section_of)
    rows = {}
    for name in [*SECTIONS, "all"]:
        part = measured if name == "all" else measured[sections == name]
        counts = verdict_counts(part, by="kind").loc["measured"]
        rows[name] = {"measured": int(counts["tracked"]), **{c: int(counts[c]) for c in COLUMNS[1:]}}
    out = pd.DataFrame.from_dict(rows, orient="index")[list(COLUMNS)]
    out.index.name = "section"
    return out


def artefact_counts(card: pd.DataFrame) -> pd.DataFrame:
    """Per artefact (table or figure), its measured rows by verdict and status (:data:`COLUMNS`),
    plus ``alias`` (rows that show another artefact's run and take its verdict) and ``fact`` (rows read
    off the code or data): one bar per artefact in :func:`plot_artefacts`."""
    from .scorecard import verdict_counts

    counts = verdict_counts(card[card["kind"] == "measured"], by="table").drop(index="all", errors="ignore")
    counts = counts.drop(columns=["measured", "fact", "alias"]).rename(columns={"tracked": "measured"})[list(COLUMNS)]
    kinds = card.groupby("table", sort=False)["kind"].value_counts().unstack(fill_value=0)
    order = list(dict.fromkeys(card["table"]))
    out = counts.reindex(order, fill_value=0)
    for k in ("alias", "fact"):
        out[k] = kinds[k].reindex(order, fill_value=0).astype(int) if k in kinds else 0
    out.index.name = "artefact"
    return out


def _verdict_word(hits: int, total: int, *, claim_holds_when_zero: bool) -> str:
    if total == 0:
        return "not yet run"
    none, all_ = hits == 0, hits == total
    if claim_holds_when_zero:
        return "confirmed" if none else ("contradicted" if all_ else "qualified")
    return "confirmed" if all_ else ("contradicted" if none else "qualified")


def utility_claim(card: pd.DataFrame) -> dict:
    """"No implementation reproduces the utility of [49]" (§5, Table 4): the implementation ×
    dataset cells of Table 4 (AUROC) whose archived value is at or above [49]'s (``hits``, which
    decide the verdict); then the cells below it but within their tolerance of it, and how many of
    those have a tolerance that also admits chance (AUROC 0.5), so that being "within" says nothing;
    beside it, how many of the paper's own printed values are at or above [49]'s."""
    t4 = _measured(card)
    t4 = t4[(t4["table"] == "table4") & t4["ours"].notna() & (t4["column"] != "paper49")]
    ref = R.table4()
    v49 = ref[ref["column"] == "paper49"].set_index("row")["value"]
    t4 = t4[t4["row"].isin(v49.index)]
    target = t4["row"].map(v49)
    tol = t4["tolerance"].fillna(0.0)
    above = t4["ours"] >= target
    within = ~above & (target - t4["ours"] <= tol + 1e-12)
    admits_chance = within & (t4["ours"] - tol <= 0.5)
    names = [f"{c} on {r}" for r, c in zip(t4.loc[above, "row"], t4.loc[above, "column"])]
    n, hits = len(t4), int(above.sum())
    word = _verdict_word(hits, n, claim_holds_when_zero=True)
    numbers = (f"{hits} of {n} implementation × dataset cells of Table 4 are at or above [49]'s AUROC in the archived "
               f"runs ({', '.join(names) or 'none'}); {int(within.sum())} more lie below it but within their "
               f"tolerance, {int(admits_chance.sum())} of them with a tolerance that also admits chance (0.5); the "
               f"paper's own values are at or above it in {int((t4['paper'] >= target).sum())} of {n}")
    return {"claim": "no implementation reproduces the utility of [49] (§5, Table 4)", "verdict": word,
            "numbers": numbers, "hits": hits, "of": n}


def leakage_claim(card: pd.DataFrame, channels: pd.DataFrame | None = None, *, epsilon: float = 1.0) -> dict:
    """"All implementations leak more than they claim" (§6.2, Figure 5): the implementations whose
    archived ε_emp exceeds ``epsilon`` in the paper's game (either attack), and, where ``channels``
    (:func:`pategan_audit.auditing.verdicts.figure5_table` of the archives) is given, those that still
    exceed it with the size and bounds channels closed."""
    f5 = _measured(card)
    f5 = f5[(f5["table"] == "figure5") & f5["ours"].notna()]
    worst = f5.groupby("row")["ours"].max()
    above = sorted(worst[worst > epsilon].index)
    numbers = (f"{len(above)} of {len(worst)} implementations have an archived ε_emp above ε = {epsilon:g} in the "
               f"paper's game (largest {worst.max():.2f})" if len(worst) else "no archived Figure 5 cell")
    word = _verdict_word(len(above), len(worst), claim_holds_when_zero=False)
    if channels is not None and not channels.empty and "ε_emp controlled" in channels:
        ctl = channels["ε_emp controlled"].groupby(level="implementation").max()
        ctl = ctl[ctl.index.isin(worst.index)].dropna()
        beyond = sorted(ctl[ctl > epsilon].index)
        numbers += (f"; with the size and bounds channels closed, {len(beyond)} of {len(ctl)} still exceed it"
                    f" ({', '.join(beyond) or 'none'})")
        if word == "confirmed" and len(beyond) < len(ctl):
            word = "qualified"
    return {"claim": "every implementation leaks more privacy than it claims (§6.2, Figure 5)", "verdict": word,
            "numbers": numbers, "hits": len(above), "of": len(worst)}


def violations_claim(observed: pd.DataFrame | None) -> dict:
    """"19 privacy violations and 5 bugs" (§4, Table 2): of the paper's ticks, how many the behaviour
    probes observe (:func:`pategan_audit.auditing.probes.table2_observed`), and the cells where a
    probe observes what the paper does not tick."""
    paper = R.table2()
    ticks = int(paper["tick"].sum())
    claim = f"a code review finds 19 privacy violations and 5 bugs ({ticks} ticks of Table 2, §4)"
    if observed is None or observed.empty:
        return {"claim": claim, "verdict": "not available", "numbers": "the Table 2 probes were not run", "hits": 0,
                "of": ticks}
    merged = paper.merge(observed[["implementation", "category", "observed"]], on=["implementation", "category"],
                         how="left")
    seen = merged["observed"].fillna(False).astype(bool)
    hits = int((merged["tick"] & seen).sum())
    extra = merged[~merged["tick"] & seen]
    missed = merged[merged["tick"] & ~seen]
    word = "confirmed" if hits == ticks and extra.empty else ("contradicted" if hits == 0 else "qualified")
    numbers = f"the behaviour probes observe {hits} of the {ticks} ticks"
    if len(missed):
        numbers += f"; not observed: {', '.join(f'{i}/{c}' for i, c in zip(missed['implementation'], missed['category']))}"
    if len(extra):
        numbers += (f"; observed where the paper prints no tick: "
                    f"{', '.join(f'{i}/{c}' for i, c in zip(extra['implementation'], extra['category']))}")
    return {"claim": claim, "verdict": word, "numbers": numbers, "hits": hits, "of": ticks}


def claims_table(card: pd.DataFrame, observed: pd.DataFrame | None = None, channels: pd.DataFrame | None = None,
                 *, epsilon: float = 1.0) -> pd.DataFrame:
    """The paper's three headline claims with a verdict and the numbers behind it."""
    rows = [utility_claim(card), leakage_claim(card, channels, epsilon=epsilon), violations_claim(observed)]
    return pd.DataFrame(rows)[["claim", "verdict", "numbers"]].set_index("claim")


def beyond_paper(channels: pd.DataFrame | None = None, corrected: pd.DataFrame | None = None,
                 aggregators: pd.DataFrame | None = None, *, epsilon: float = 1.0) -> list[str]:
    """What this book measured that the paper does not, one sentence each, from the audit archives:
    the size and bounds channels (``channels``: :func:`~pategan_audit.auditing.verdicts.figure5_table`),
    the corrected preset's audit (``corrected``: :func:`~pategan_audit.auditing.verdicts.corrected_table`
    of ``audit_corrected_large``) and the vote aggregators at λ = 1 (``aggregators``:
    :func:`pategan_audit.auditing.mechanism.summary_table`). A missing input gives a "not available" line."""
    out = []
    if channels is not None and not channels.empty and {"size channel", "bounds channel"} <= set(channels):
        size, bounds = channels["size channel"].dropna(), channels["bounds channel"].dropna()
        ctl = channels["ε_emp controlled"].dropna()
        out.append(f"**The audit's side channels.** In the paper's game the worlds differ in the synthetic table's size; "
                   f"closing that channel lowers ε_emp by up to {size.max():.2f} (by more than ε in "
                   f"{int((size > epsilon).sum())} of {len(size)} archived cells), and closing the bounds channel too "
                   f"by up to {bounds.max():.2f} more (by more than ε in {int((bounds > epsilon).sum())}). With both "
                   f"closed, {int((ctl > epsilon).sum())} of {len(ctl)} cells exceed ε = {epsilon:g} "
                   f"({', '.join(f'{a}/{i}' for a, i in ctl[ctl > epsilon].index) or 'none'}).")
    else:
        out.append("**The audit's side channels:** not available (no audit archive with the channel runs).")
    if corrected is not None and not corrected.empty:
        closed = corrected[corrected["channel"] != "paper"]
        best = closed.groupby("bound")["ε_emp"].max()
        out.append(f"**The corrected PATE-GAN**, audited with 1,000 shadow models per world and the size channel "
                   f"closed: largest ε_emp {', '.join(f'{v:.3f} ({b})' for b, v in best.items())} against ε = "
                   f"{epsilon:g}; {int(closed['exceeds ε'].sum())} of {len(closed)} such audits exceed ε (in the "
                   f"paper's game, where the size alone tells the worlds apart, "
                   f"{int(corrected.loc[corrected['channel'] == 'paper', 'exceeds ε'].sum())} of "
                   f"{int((corrected['channel'] == 'paper').sum())} do).")
    else:
        out.append("**The corrected PATE-GAN's audit:** not available (archive `audit_corrected_large` missing).")
    if aggregators is not None and not aggregators.empty and "verdict" in aggregators:
        verdicts = aggregators["verdict"].astype(str)
        unsound = [p for p, v in verdicts.items() if not v.startswith("sound")]
        factor = aggregators.get("true / charged moment (max)")
        worst = ""
        if factor is not None and len(factor):
            top = float(factor.astype(float).max())
            worst = f"; largest true/charged moment {'unbounded' if np.isinf(top) else f'{top:.3g}'}"
        out.append(f"**The accountants at the mechanism level** (each preset's vote aggregator queried on two "
                   f"neighbouring vote counts at λ = 1): {len(unsound)} of {len(verdicts)} charge less than the exact "
                   f"privacy loss ({', '.join(unsound) or 'none'}){worst}.")
    else:
        out.append("**The accountants at the mechanism level:** not available.")
    return out


def _md_table(df: pd.DataFrame) -> str:
    head = [df.index.name or "", *map(str, df.columns)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for idx, row in df.iterrows():
        lines.append("| " + " | ".join([str(idx), *(str(v) for v in row)]) + " |")
    return "\n".join(lines)


def summary_markdown(card: pd.DataFrame, claims: pd.DataFrame, beyond: list[str], *, figure: str | None = None) -> str:
    """The summary as MyST markdown: the headline sentence, the counts per section, the paper's
    claims judged, what the book found beyond the paper, and ``figure`` (a path relative to the
    including page) where given."""
    from .scorecard import headline

    text = headline(card).attrs["text"]
    counts = section_counts(card)
    parts = [f"**At the archived (largest) scale, {text}.** Counts are of the paper's measured numbers, each run once "
             "(facts of the code or data and repeated runs are counted apart; see the scorecard page).", "",
             _md_table(counts), ""]
    if "code review" in counts.index and counts.loc["code review", "measured"] == 0:
        parts += ["*Code review*: the card reads Tables 2 and 3 off the presets' code (facts, not counted); Table 2 "
                  "observed by behaviour probes is judged under the paper's claims below.", ""]
    if figure:
        parts += [f"![Verdicts of the paper's measured numbers per section]({figure})", ""]
    parts += ["**The paper's claims, checked:**", ""]
    parts += [f"* *{claim}*: **{r['verdict']}**; {r['numbers']}." for claim, r in claims.iterrows()]
    parts += ["", "**Found beyond the paper:**", ""] + [f"* {line}" for line in beyond]
    return "\n".join(parts) + "\n"


def write_summary(path: str | Path, text: str) -> Path:
    """Write the summary atomically (the book includes it)."""
    from ..runner import atomic_write_text

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)
    return path


_COLOURS = {"reproduced": "#2a9d8f", "uninformative": "#b8b8b8", "at chance (both)": "#d9d9d9",
            "ceiling-limited": "#8ecae6", "explained": "#e9c46a", "partly explained": "#f4a261",
            "plausible": "#f7d6bf", "unexplained": "#e76f51", "not yet run": "#ffffff", "alias": "#ffffff",
            "fact": "#6c757d"}


def _stacked(counts: pd.DataFrame, columns: list[str], title: str, *, hatch: dict | None = None):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 0.4 * len(counts) + 1.4), layout="constrained")
    left = np.zeros(len(counts))
    y = np.arange(len(counts))[::-1]
    for col in columns:
        vals = counts[col].to_numpy(float)
        ax.barh(y, vals, left=left, color=_COLOURS[col], edgecolor="#444444", linewidth=0.5, label=col,
                hatch=(hatch or {}).get(col))
        left += vals
    ax.set_yticks(y, [str(i) for i in counts.index])
    ax.set_xlabel("numbers of the paper")
    ax.set_title(title)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    return fig


def plot_sections(counts: pd.DataFrame):
    """Stacked bars of :func:`section_counts`, one per section and one for ``all``, each as shares of
    its measured numbers (in %, so that a section of 12 numbers reads as well as one of 600; the
    label gives the count)."""
    columns = list(COLUMNS[1:])
    shares = counts[columns].div(counts["measured"].where(counts["measured"] > 0), axis=0).fillna(0.0) * 100
    shares.index = [f"{name} (n = {int(n)})" for name, n in zip(counts.index, counts["measured"])]
    fig = _stacked(shares, columns, "The paper's measured numbers by verdict (archived scale, each run once)")
    fig.axes[0].set_xlabel("share of the section's measured numbers (%)")
    fig.axes[0].set_xlim(0, 100)
    return fig


def plot_artefacts(counts: pd.DataFrame):
    """Stacked bars of :func:`artefact_counts`: one bar per artefact, its measured rows by verdict,
    then its aliases (hatched: shown with their source's verdict, not counted) and facts."""
    return _stacked(counts, [*COLUMNS[1:], "alias", "fact"],
                    "Per table and figure: measured rows by verdict, aliases (hatched) and facts",
                    hatch={"alias": "///"})


def archived_card(directory: str | Path | None = None) -> pd.DataFrame:
    """The archived scorecard: the archives, the presets' code and the bundled data, rows with a value."""
    from . import scorecard

    archived = scorecard.collect_archived(directory)
    if archived.empty:
        return pd.DataFrame()
    card = scorecard.build(pd.concat([archived, scorecard.collect_code(), scorecard.collect_data()], ignore_index=True))
    return card


def audit_inputs(*, epsilon: float = 1.0, seed: int = 0, queries: int = 10**5) -> dict:
    """The audit archives read back for :func:`leakage_claim` and :func:`beyond_paper`: ``channels``
    (Figure 5's table with its channels), ``corrected`` (``audit_corrected_large``) and ``aggregators``
    (the vote aggregators at λ = 1, ``queries`` per vote count); each None where not available."""
    from ..auditing import mechanism, verdicts

    out: dict = {"channels": None, "corrected": None, "aggregators": None}
    records = verdicts.paper_scale_records()
    if not records.empty:
        out["channels"] = verdicts.figure5_table(records, R.audit_reference(), epsilon=epsilon)
        if "archive" in records and (records["archive"] == "audit_corrected_large").any():
            out["corrected"] = verdicts.corrected_table(records[records["archive"] == "audit_corrected_large"],
                                                        epsilon=epsilon)
    presets = ("updated", "synthcity", "borealis", "smartnoise", "corrected")
    out["aggregators"] = mechanism.summary_table(mechanism.audit_all(queries=queries, seed=seed, lam=1.0,
                                                                     presets=presets))
    return out
