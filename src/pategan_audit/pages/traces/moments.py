"""One vote stream, five moments accountants (``ganev2025elusive`` §6.1, Figure 4): the per-moment
estimates per λ, the first moment after the last iteration beside the paper's, the values the
narrative cites and every accountant's final ε̂ on the same votes."""
from __future__ import annotations

import pandas as pd

from ... import reference
from ..plotting import traces as trace_plots
from ...traces.moments import last_moments
from ...traces.profiles import MOMENT_ACCOUNTANTS
from ..blocks import Block, Glue, SaveFigure, ShowFigure, Text, table
from .context import TracesPage

__all__ = ["GLUED", "figure4", "last_iteration", "first_moment", "first_moment_table", "moment_values", "final_table"]

#: the accountants whose first moment the narrative cites
GLUED = ("updated", "synthcity", "borealis", "corrected")


def figure4(page: TracesPage) -> list[Block]:
    """The iterations the narrative cites, then one figure and caption per λ."""
    n = page.profile.moment_iterations
    out: list[Block] = [Glue("fig4_iters", n)]
    for lam in page.knobs["moment_lambdas"]:
        fig = trace_plots.plot_moments(page.results.moments, lam=lam, ymax=1e8 if lam >= 1 else None)
        caption = page.caption(
            "Per-moment estimated ε (colour = moment l) and its minimum (red dotted) when one smartnoise vote stream "
            "is fed to each accountant formula; both axes logarithmic", f"one smartnoise run of {n} iterations, seed {page.seed}")
        out += [SaveFigure(f"figure4_lambda_{lam:g}", fig), ShowFigure(fig), Text(f"**Figure 4 (λ = {lam:g}).** " + caption)]
    return out


def last_iteration(page: TracesPage) -> pd.DataFrame:
    """The moment curves at the last iteration."""
    return last_moments(page.results.moments)


def first_moment(page: TracesPage) -> pd.DataFrame:
    """e(1) after the last iteration per accountant and λ, beside the paper's values and our unanimous-vote check."""
    last = last_iteration(page)
    e1 = last[last.moment == 1].pivot_table(index="accountant", columns="lam", values="epsilon")
    e1.columns = [f"e(1) at iteration {page.profile.moment_iterations}, λ = {c:g}" for c in e1.columns]
    ref = reference.moments_reference().pivot_table(index="accountant", columns="quantity", values="value")
    e1 = e1.join(ref.rename(columns={
        "e1_after_1000_iterations": "paper (≈, λ = 1, 1,000 iterations)",
        "unanimous_e1_after_320000_queries": "our check: unanimous votes (implementation notes §traces.moments)",
    }).drop(columns="unanimous_increment_l1"))
    return e1.reindex(list(MOMENT_ACCOUNTANTS))


def first_moment_table(page: TracesPage) -> list[Block]:
    return table("figure4_first_moment", first_moment(page))


def moment_values(page: TracesPage) -> list[Block]:
    """First moments at the largest λ that the narrative cites, and borealis' ratio to updated."""
    big = page.results.final[page.results.final.lam == max(page.knobs["moment_lambdas"])].set_index("accountant")
    return [*[Glue(f"e1_{name}", f"{big.loc[name, 'first_moment']:,.0f}") for name in GLUED],
            Glue("ratio_bs", f"{big.loc['borealis', 'first_moment'] / big.loc['updated', 'first_moment']:.1f}")]


def final_table(page: TracesPage) -> list[Block]:
    """Every accountant's final ε̂ per λ, with the ε̂ the smartnoise run reported itself."""
    final = page.results.final.copy()
    final["model's own accountant"] = final.pop("model_eps_hat")
    return table("final_eps_hat", final.set_index(["lam", "accountant"]))
