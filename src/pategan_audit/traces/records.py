"""The tidy records of §6.1's traces as the ``traces_paper`` archive stores them
(``ganev2025elusive`` §6.1, Figures 2-4): Figure 2's counts of the fixed partitions, Figure 3's
iterations of runs comparable with the paper's, Figure 4's first moments after 1,000 iterations,
and every Figure 3/11 run's iteration count. The training-traces page shows the same rows
(:mod:`pategan_audit.pages.traces.scorecard`)."""
from __future__ import annotations

import pandas as pd

from .. import reference
from .losses import run_iterations
from .moments import last_moments
from .profiles import TRACE_PROFILES, TraceProfile
from .suite import TraceResults

__all__ = ["AUTHORS_CAP", "FIGURE2_PRESETS", "rows_of", "archive_records"]

#: the authors' iteration cap of the Figure 3 runs: at this cap a run that hits it is comparable too
AUTHORS_CAP = TRACE_PROFILES["paper"].loss_max_iter
#: the presets of Figure 2 (original and turing have no teachers)
FIGURE2_PRESETS = ("updated", "synthcity", "borealis", "smartnoise")


def rows_of(results: TraceResults, profile: TraceProfile, seed: int) -> list[dict]:
    """Rows (``table``, ``row``, ``column``, ``ours``, ``runs``) of ``results`` (run at ``profile``,
    Figures 2-4 with ``seed``), only where the run is comparable with the paper's: Figure 2's counts
    (synthcity's only if its run stopped before the cap), Figure 3's iterations of runs that stopped
    on their own (or of every run at the authors' cap), Figure 4's first moments with the full 1,000
    iterations. Figure 3's rows say how many iterations the same preset's other runs took (Figure
    11's seeds)."""
    rows: list[dict] = []
    seen = results.seen
    for r in seen[seen.implementation.isin(list(FIGURE2_PRESETS))].itertuples():
        if r.implementation != "synthcity" or r.iterations < profile.seen_max_iter:  # fixed partitions: any length
            for part in ("only", "shared"):
                rows.append({"table": "figure2", "row": r.implementation, "column": f"teacher {r.teacher} {part}",
                             "ours": float(getattr(r, part)), "runs": f"1 run, seed {seed}, {r.iterations} iterations"})
    ref = reference.trace_iterations_reference().set_index("implementation")
    every = run_iterations(results.losses)
    for name, n in run_iterations(results.losses, seed).items():
        if name in ref.index and (n < profile.loss_max_iter or profile.loss_max_iter == AUTHORS_CAP):
            others = every.loc[name]
            took = f"{others.min():,}" if others.min() == others.max() else f"{others.min():,}-{others.max():,}"
            spread = (f"; its {len(others)} runs took {took} (cap {profile.loss_max_iter:,})" if len(others) > 1 else "")
            rows.append({"table": "figure3", "row": name, "column": "iterations", "ours": float(n),
                         "runs": f"1 run, seed {seed}{spread}"})
    if profile.moment_iterations == 1000:
        last = last_moments(results.moments)
        for name in FIGURE2_PRESETS:
            v = last[(last.moment == 1) & (last.lam == 1.0) & (last.accountant == name)].epsilon.iloc[0]
            rows.append({"table": "figure4", "row": name, "column": "e1 after 1000 iterations", "ours": float(v),
                         "runs": f"1 smartnoise run, seed {seed}"})
    return rows


def archive_records(results: TraceResults, profile: TraceProfile) -> pd.DataFrame:
    """The records of the ``traces_paper`` archive: the rows of :func:`rows_of` (``part``
    "scorecard") and the iterations of every Figure 3/11 run (``part`` "iterations": ``row`` the
    preset, ``column`` "seed s", ``ours`` its iterations, ``runs`` whether the cap stopped it)."""
    card = pd.DataFrame(rows_of(results, profile, results.settings["seed"])).assign(part="scorecard")
    its = run_iterations(results.losses)
    runs = pd.DataFrame({"table": "", "row": its.index.get_level_values(0), "ours": its.to_numpy().astype(float),
                         "column": [f"seed {s}" for s in its.index.get_level_values(1)],
                         "runs": ["cap" if n >= profile.loss_max_iter else "budget spent" for n in its],
                         "part": "iterations"})
    return pd.concat([card, runs], ignore_index=True)[["part", "table", "row", "column", "ours", "runs"]]
