"""The training-traces archive (``ganev2025elusive`` §6.1, Figures 2-4 and 11 at the authors' run
sizes), computed through the archive store (:mod:`pategan_audit.archive_store`);
``python -m pategan_audit.archive traces_paper`` runs it.

``traces_paper``
    The training traces of §6.1 at the authors' sizes (trace profile ``paper``: Figure 2's runs
    and Figure 3's to the 1,000-iteration cap, ten Figure 11 runs per preset, Figure 4's two
    1,000-iteration vote streams): the traces page's scorecard rows (Figures 2, 3, 4) and every
    run's iteration count (:func:`pategan_audit.traces.records.archive_records`).
"""
from __future__ import annotations

import time
from dataclasses import asdict
from typing import Callable

import pandas as pd

from ..archive_store import run_options
from .profiles import TRACE_PROFILES, get_profile
from .records import archive_records
from .suite import compute_traces


def traces_run(profile_name: str, n_jobs: int | None, backend: str | None) -> tuple[pd.DataFrame, dict]:
    """§6.1's traces at trace profile ``profile_name`` (ε = 1, seed 0, as the book's page):
    records of :func:`pategan_audit.traces.records.archive_records`. Every run is cached on
    its own, so an interrupted run resumes from the cache."""
    profile = get_profile(profile_name)
    t0 = time.process_time()
    results = compute_traces(profile, epsilon=1.0, seed=0, options=run_options(n_jobs, backend))
    records = archive_records(results, profile)
    return records, {"profile": profile.name, "profile_knobs": asdict(profile),
                     "profile_description": "the training traces of §6.1 at the authors' run sizes"
                                            if profile.name == "paper" else "the training traces of §6.1, reduced",
                     "runs": (f"Figure 2: one run per preset to the {profile.seen_max_iter:,}-iteration cap; "
                              f"Figures 3/11: {profile.loss_runs} runs per preset to {profile.loss_max_iter:,}; "
                              f"Figure 4: {profile.moment_iterations:,} iterations of one vote stream per λ; "
                              "Cervical, k = 5, ε = 1 (smartnoise 3), seed 0"),
                     "settings": results.settings,
                     "core_seconds_measured": time.process_time() - t0 if n_jobs == 1 else 0.0,
                     "core_seconds_note": "this process's CPU time; measured only with --n-jobs 1 (0 otherwise)"}


#: name -> function(profile, n_jobs, backend) returning (records, meta)
ARCHIVES: dict[str, Callable[..., tuple[pd.DataFrame, dict]]] = {"traces_paper": traces_run}
#: the traces run whole: every run is cached on its own, so an interrupted archive resumes from the cache
RESUMABLE: tuple[str, ...] = ()
#: the profiles a traces archive can run at (trace profiles are smoke / book / paper)
PROFILES = TRACE_PROFILES
#: ``traces_paper`` is committed at the trace profile ``paper`` (the authors' sizes)
ARCHIVE_PROFILES = {"traces_paper": "paper"}
