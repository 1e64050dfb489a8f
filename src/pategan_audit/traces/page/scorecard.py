"""The training-traces page's scorecard entries, only where this profile's run is comparable with
the paper's (``ganev2025elusive`` §6.1): Figure 2's counts of the fixed partitions (synthcity's only
if its run stopped before the cap), Figure 3's iterations of runs that stopped on their own, and
Figure 4's first moments with the full 1,000 iterations."""
from __future__ import annotations

from ... import reference
from ...pages.blocks import Block, Print, scorecard
from .context import TracesPage
from .losses import iterations
from .moments import last_iteration

__all__ = ["FIGURE2_PRESETS", "scorecard_rows", "scorecard_entries"]

#: the presets of Figure 2 (original and turing have no teachers)
FIGURE2_PRESETS = ("updated", "synthcity", "borealis", "smartnoise")


def scorecard_rows(page: TracesPage) -> list[dict]:
    prof, seed, rows = page.profile, page.seed, []
    seen = page.results.seen
    for r in seen[seen.implementation.isin(list(FIGURE2_PRESETS))].itertuples():
        if r.implementation != "synthcity" or r.iterations < prof.seen_max_iter:  # fixed partitions: any length
            for part in ("only", "shared"):
                rows.append({"table": "figure2", "row": r.implementation, "column": f"teacher {r.teacher} {part}",
                             "ours": float(getattr(r, part)), "runs": f"1 run, seed {seed}, {r.iterations} iterations"})
    ref = reference.trace_iterations_reference().set_index("implementation")
    for name, n in iterations(page).items():
        if name in ref.index and n < prof.loss_max_iter:
            rows.append({"table": "figure3", "row": name, "column": "iterations", "ours": float(n), "runs": f"1 run, seed {seed}"})
    if prof.moment_iterations == 1000:
        last = last_iteration(page)
        for name in FIGURE2_PRESETS:
            v = last[(last.moment == 1) & (last.lam == 1.0) & (last.accountant == name)].epsilon.iloc[0]
            rows.append({"table": "figure4", "row": name, "column": "e1 after 1000 iterations", "ours": float(v),
                         "runs": f"1 smartnoise run, seed {seed}"})
    return rows


def scorecard_entries(page: TracesPage) -> list[Block]:
    """The rows (nothing written without any) and how many there are."""
    rows = scorecard_rows(page)
    return [scorecard(rows), Print(f"{len(rows)} scorecard entries written")]
