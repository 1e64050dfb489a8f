"""Choosing the GroundHog target (``ganev2025elusive`` §6.2, implementation notes §audit.target): the rows of
the Cervical training split ranked by their distance to their 5 nearest neighbours beside the
authors' ranking, then the mini-MIAs on the most isolated candidates
(:func:`pategan_audit.auditing.select_target`).
"""
from __future__ import annotations

import time

import pandas as pd

from ... import reference
from ...auditing.settings import PresetFactory, attack_data
from ...auditing.targets import rank_candidates, select_target
from ..blocks import Block, Print, SaveTable, ShowTable, Text
from .context import AuditPage

__all__ = ["distance_comparison", "selection_note", "target_selection"]


def distance_comparison(ranked: pd.DataFrame) -> pd.DataFrame:
    """Our five most isolated rows and their distances beside the paper's (rank 1-5)."""
    ref = reference.target_selection_reference()
    ref = ref[ref["ranking"] == "distance_rank"].set_index("rank")
    return pd.DataFrame({
        "row (ours)": ranked["row"].head(5).to_numpy(), "distance (ours)": ranked["distance"].head(5).round(4).to_numpy(),
        "row (paper)": ref["row_index"].to_numpy(), "distance (paper)": ref["value"].to_numpy(),
    }, index=pd.Index(range(1, 6), name="rank"))


def selection_note(page: AuditPage, selection) -> str:
    """What the mini-MIAs picked, beside the paper's row 397, and the row the GroundHog audit uses."""
    prof = page.profile
    return (f"Our mini-MIAs ({prof.target_candidates} candidates × {prof.target_models} + {prof.target_models} `original` "
            f"models, {prof.target_iterations} iterations) pick **row {selection.target}** with AUC "
            f"**{selection.target_auc:.3f}** (paper: row 397, AUC 0.6659 from 100 + 100 models per candidate). "
            f"The GroundHog audit below uses **row {page.target}**"
            + (" (the paper's target, for comparability)." if page.groundhog_target >= 0 else " (our choice)."))


def target_selection(page: AuditPage) -> list[Block]:
    """Rank the candidates, run the mini-MIAs and set ``page.target`` (the parameter
    ``groundhog_target``, or the mini-MIAs' pick when it is negative)."""
    t0 = time.perf_counter()
    prof = page.profile
    train = attack_data("groundhog")[1]
    ranked = rank_candidates(train, n_candidates=max(64, prof.target_candidates))
    dist_cmp = distance_comparison(ranked)
    selection = select_target(
        train, PresetFactory("original", epsilon=page.eps, overrides={"num_teachers": 5, "max_iter": prof.target_iterations}),
        n_candidates=prof.target_candidates, n_models=prof.target_models, seed=page.seed,
        options=page.run_kwargs["options"],
    )
    page.time("target selection", t0)
    page.target = selection.target if page.groundhog_target < 0 else page.groundhog_target
    return [SaveTable("target_distances", dist_cmp), ShowTable(dist_cmp),
            Print(f"64th largest distance: {ranked['distance'].iloc[63]:.4f} (paper: 1.0855)"),
            SaveTable("target_selection", selection.candidates, index=False), Text(selection_note(page, selection)),
            ShowTable(selection.candidates.round(4))]
