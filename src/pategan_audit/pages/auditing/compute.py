"""What the auditing page cost: the core-seconds of its shadow models (as recorded when they
were computed, settings sharing a run counted once) and the wall time of each part of this run."""
from __future__ import annotations

import time

import pandas as pd

from ..blocks import Block, Print, SaveTable, ShowTable
from .context import AuditPage

__all__ = ["unique_runs", "core_seconds", "compute"]


def unique_runs(page: AuditPage) -> pd.DataFrame:
    """One record per distinct run (``run_id``) of the main audit and the ablation."""
    recs = pd.concat([page.records, page.ablation] if page.run_ablation else [page.records], ignore_index=True)
    return recs[recs["method"] == recs["method"].iloc[0]].drop_duplicates("run_id")


def core_seconds(runs: pd.DataFrame) -> pd.DataFrame:
    """Shadow-model core-seconds per implementation (rows) and attack (columns)."""
    return runs.groupby(["attack", "implementation"])["train_seconds"].sum().unstack("attack").round(1)


def compute(page: AuditPage) -> list[Block]:
    """The core-seconds table, the wall seconds per part (with the page's total) and a summary line."""
    runs = unique_runs(page)
    cost = core_seconds(runs)
    page.timings["page total"] = time.perf_counter() - page.started
    wall = pd.Series(page.timings, name="wall seconds (this run)").round(1).to_frame()
    return [SaveTable("shadow_model_core_seconds", cost), ShowTable(cost), SaveTable("wall_seconds", wall), ShowTable(wall),
            Print(f"shadow models: {runs['train_seconds'].sum():.0f} core-s in {len(runs)} distinct settings "
                  f"({2 * page.profile.n_per_world * len(runs)} models)")]
