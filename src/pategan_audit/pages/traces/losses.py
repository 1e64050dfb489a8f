"""Teacher losses (``ganev2025elusive`` §6.1, Figures 3 and 11): one run per implementation and
the spread over runs, the iterations each run took beside the authors' and the first and last
cross-entropy of both definitions of the "others" line."""
from __future__ import annotations

import pandas as pd

from ... import reference
from ..plotting import traces as trace_plots
from ...traces.losses import loss_lines, run_iterations
from ...traces.profiles import LOSS_IMPLEMENTATIONS
from ..blocks import Block, SaveFigure, ShowFigure, Text, archive_missing, table
from .context import TracesPage

__all__ = ["figure3", "iterations", "iterations_table", "ARCHIVE", "archived_iterations", "first_and_last", "levels", "levels_table", "figure11"]


def figure3(page: TracesPage) -> list[Block]:
    """Figure 3: the page's own run, with the chosen definition of "others"."""
    lines = loss_lines(page.results.losses, definition=page.loss_definition)
    fig = trace_plots.plot_teacher_losses(lines[lines.seed == page.seed])
    caption = page.caption(
        f"Teacher cross-entropy per iteration: teacher 0 on its own subset (blue) and the other teachers "
        f"({page.loss_definition} definition, orange). ε = {page.eps:g} (smartnoise ε = 3), iteration cap "
        f"{page.profile.loss_max_iter}", f"one run per implementation, seed {page.seed}")
    return [SaveFigure("figure3", fig), ShowFigure(fig), Text("**Figure 3.** " + caption)]


def iterations(page: TracesPage) -> pd.Series:
    """Iterations of the page's own run per implementation."""
    return run_iterations(page.results.losses, page.seed)


def iterations_table(page: TracesPage) -> list[Block]:
    """Our iterations (and whether the profile's cap stopped them) beside the authors' runs."""
    ref = reference.trace_iterations_reference().set_index("implementation")
    out = pd.DataFrame({"iterations (ours)": iterations(page)})
    out["hit cap (ours)"] = out["iterations (ours)"] >= page.profile.loss_max_iter
    out = out.join(ref[["iterations", "epsilon", "lam", "note"]].rename(columns={"iterations": "iterations (paper)"}))
    out["iterations (paper)"] = out["iterations (paper)"].astype("Int64")
    return table("figure3_iterations", out)


#: the archive of the traces at the authors' run sizes (:mod:`pategan_audit.archive`)
ARCHIVE = "traces_paper"


def archived_iterations(archive=None) -> list[Block]:
    """The iterations of every Figure 3/11 run at the authors' run sizes (``traces_paper``: ten
    runs per preset to the 1,000-iteration cap), their spread beside the authors' one run.
    ``archive``: an :class:`pategan_audit.archive.Archive` (default: the committed one)."""
    if archive is None:
        from ...archive import read_archive

        archive = read_archive(ARCHIVE)
    if archive is None:
        return [archive_missing(ARCHIVE, "about an hour of one core")]
    its = archive.records[archive.records["part"] == "iterations"]
    by = its.groupby("row", sort=False)
    out = pd.DataFrame({"runs": by.size(), "stopped by the budget": by["runs"].apply(lambda r: int((r == "budget spent").sum())),
                        "fewest": by["ours"].min(), "median": by["ours"].median(), "most": by["ours"].max()})
    out.index.name = "implementation"
    ref = reference.trace_iterations_reference().set_index("implementation")["iterations"]
    out["paper (one run)"] = ref.reindex(out.index).map(lambda v: "—" if pd.isna(v) else f"{int(v):,}")
    out = out.reindex([n for n in LOSS_IMPLEMENTATIONS if n in out.index])
    return [*table("figure3_iterations_archived", out.astype({c: "int64" for c in ("fewest", "most")})),
            Text(f"**Iterations of every run at the authors' sizes.** {archive.caption()}.")]


def first_and_last(page: TracesPage, definition: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The cross-entropy of both lines at the first and at the last iteration of the page's run."""
    lines = loss_lines(page.first_losses(), definition=definition)
    first = lines[lines.iteration == 1].pivot(index="implementation", columns="line", values="cross_entropy")
    last = lines.sort_values("iteration").groupby(["implementation", "line"]).cross_entropy.last().unstack("line")
    return first, last


def levels(page: TracesPage) -> pd.DataFrame:
    """First and last cross-entropy of "own" and of "others" under both definitions."""
    (first_p, last_p), (first_n, last_n) = first_and_last(page, "paper"), first_and_last(page, "notebook")
    return pd.DataFrame({
        "own, first": first_p["own"], "others (paper), first": first_p["others"],
        "others (notebook), first": first_n["others"], "own, last": last_p["own"],
        "others (paper), last": last_p["others"], "others (notebook), last": last_n["others"],
    }).reindex([n for n in LOSS_IMPLEMENTATIONS if n in first_p.index])


def levels_table(page: TracesPage) -> list[Block]:
    return table("figure3_levels", levels(page).round(4))


def figure11(page: TracesPage) -> list[Block]:
    """Figure 11: mean and min-max band over the profile's runs."""
    fig = trace_plots.plot_teacher_losses(loss_lines(page.results.losses, definition=page.loss_definition))
    caption = page.caption(
        "Teacher cross-entropy over independent runs: mean (line) and min–max band (shaded) of teacher 0 on its "
        f"own subset (blue) and of the other teachers ({page.loss_definition} definition, orange). Runs that stopped "
        "earlier drop out of later iterations", f"{page.profile.loss_runs} runs per implementation, seeds {page.knobs['loss_seeds']}")
    return [SaveFigure("figure11", fig), ShowFigure(fig), Text("**Figure 11.** " + caption)]
