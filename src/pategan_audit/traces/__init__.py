"""Training traces of paper §6.1 (implementation notes §traces.seen): what the teachers see and how they learn.

| figure | module | what |
|---|---|---|
| Fig. 2 | :mod:`.seen` | records seen per teacher: ``only`` / ``shared`` counts (implementation notes §traces.seen) |
| Figs. 3, 11 | :mod:`.losses` | teacher cross-entropy per iteration, k x k per iteration (implementation notes §traces.losses) |
| Fig. 4 + table | :mod:`.moments` | one smartnoise vote stream fed to every accountant formula (implementation notes §traces.moments) |
| all | :mod:`.suite` | one profile's runs in one cached parallel map |
| all | :mod:`.profiles` | fixed §6.1 settings and the ``smoke`` / ``book`` / ``paper`` run sizes |
| all | :mod:`.fitting` | one preset trained with the §6.1 settings, its trace and per-iteration callbacks |
| all | :mod:`.records`, :mod:`.archives` | the tidy records and the ``traces_paper`` archive's spec |

Every run takes a seed, is cached through :func:`pategan_audit.runner.cached` (namespace
``"traces"``) and ends up in a tidy DataFrame (implementation notes §records.schema).
"""
from .fitting import fit_traced, trace_settings, training_data
from .losses import LOSS_DEFINITIONS, TeacherLossRecorder, loss_bands, loss_frame, loss_lines, loss_run, loss_table, teacher_losses
from .moments import (
    VoteStream,
    cumulative_moments,
    final_epsilons,
    moment_curves,
    per_moment_epsilon,
    record_vote_stream,
    vote_histogram,
)
from .profiles import (
    LOSS_EPSILONS,
    LOSS_IMPLEMENTATIONS,
    MOMENT_ACCOUNTANTS,
    MOMENT_LAMBDAS,
    SEEN_IMPLEMENTATIONS,
    TABLE_ACCOUNTANTS,
    TRACE_DATASET,
    TRACE_DELTA,
    TRACE_LAMBDAS,
    TRACE_NUM_MOMENTS,
    TRACE_NUM_TEACHERS,
    TRACE_PROFILES,
    TraceProfile,
    get_profile,
    run_seeds,
)
from .seen import HAS_TEACHERS, records_seen, seen_counts, seen_run, seen_table
from .suite import TraceResults, compute_traces, trace_jobs

__all__ = [
    "fit_traced", "trace_settings", "training_data",
    "LOSS_DEFINITIONS", "TeacherLossRecorder", "loss_bands", "loss_frame", "loss_lines", "loss_run", "loss_table",
    "teacher_losses",
    "VoteStream", "cumulative_moments", "final_epsilons", "moment_curves", "per_moment_epsilon", "record_vote_stream",
    "vote_histogram",
    "LOSS_EPSILONS", "LOSS_IMPLEMENTATIONS", "MOMENT_ACCOUNTANTS", "MOMENT_LAMBDAS", "SEEN_IMPLEMENTATIONS",
    "TABLE_ACCOUNTANTS", "TRACE_DATASET", "TRACE_DELTA", "TRACE_LAMBDAS", "TRACE_NUM_MOMENTS", "TRACE_NUM_TEACHERS",
    "TRACE_PROFILES", "TraceProfile", "get_profile", "run_seeds",
    "HAS_TEACHERS", "records_seen", "seen_counts", "seen_run", "seen_table",
    "TraceResults", "compute_traces", "trace_jobs",
]
