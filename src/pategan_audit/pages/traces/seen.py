"""Records seen by each teacher (``ganev2025elusive`` §6.1, Figure 2): the figure beside the
authors' counts, the table behind it and the values the narrative cites (V1-V6 of Table 2)."""
from __future__ import annotations

import pandas as pd

from ... import reference
from ..plotting import traces as trace_plots
from ..blocks import Block, Glue, SaveFigure, ShowFigure, Text, table
from .context import TracesPage

__all__ = ["figure2", "seen_table", "seen_values"]


def figure2(page: TracesPage) -> list[Block]:
    """Figure 2 (our counts, the paper's as ticks) and its caption."""
    fig = trace_plots.plot_teacher_seen(page.results.seen, reference=reference.teacher_seen_reference())
    caption = page.caption(
        "Records seen only by one teacher (blue) and also by another teacher (orange), per teacher; black ticks: "
        "the paper's counts (authors' records). Panel titles give the iterations each run took before its "
        f"budget ε = {page.eps:g} was spent or the cap of {page.profile.seen_max_iter} was hit",
        f"one run per implementation, seed {page.seed}")
    return [SaveFigure("figure2", fig), ShowFigure(fig), Text("**Figure 2.** " + caption)]


def seen_table(page: TracesPage) -> list[Block]:
    """Per implementation and teacher: records only it saw, shared ones and iterations, beside the paper's."""
    ours = page.results.seen.set_index(["implementation", "teacher"])[["only", "shared", "iterations"]]
    paper = reference.teacher_seen_reference().set_index(["implementation", "teacher"])[["only", "shared"]]
    return table("figure2_seen", ours.join(paper.add_prefix("paper "), how="left"))


def seen_values(page: TracesPage) -> list[Block]:
    """The counts the narrative cites: updated's shared records, synthcity's iterations and range of
    records seen, original's fewest records seen and its iterations."""
    seen = page.results.seen

    def block(name: str) -> pd.DataFrame:
        return seen[seen.implementation == name]

    return [Glue("upd_shared", int(block("updated").shared.iloc[0])),
            Glue("sc_iters", int(block("synthcity").iterations.iloc[0])),
            Glue("sc_min_seen", int(block("synthcity").seen.min())), Glue("sc_max_seen", int(block("synthcity").seen.max())),
            Glue("orig_min_seen", int(block("original").seen.min())),
            Glue("orig_iters", int(block("original").iterations.iloc[0]))]
