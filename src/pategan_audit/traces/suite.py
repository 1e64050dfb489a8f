"""All §6.1 traces of one profile in one parallel map (Figs. 2, 3, 11, 4 and the final-epsilon table).

Every training run is cached on its own (``runner.cached``, namespace ``"traces"``), so an
interrupted build resumes and the book profile reuses whatever the smoke profile already ran
only if the settings coincide. Jobs are dispatched longest first (the Fig. 4 streams) so two
workers stay busy.

Replica axis (:func:`pategan_audit.implementations.fit_many`): no trace here fits several seeds
of one configuration that only need post-fit state. The Fig. 2 runs (:mod:`.seen`) and the
Fig. 4 vote streams (:mod:`.moments`) are one fit per configuration (one seed per preset / per
lambda), so there is nothing to stack; the Fig. 3/11 runs (:mod:`.losses`) do fit several seeds
of one preset, but they need per-iteration callbacks (``model.callbacks``: the teachers' cross
entropy after every iteration), which a batched fit does not call, so they stay single fits.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from .. import runner
from .losses import loss_run, loss_table
from .moments import VoteStream, final_epsilons, moment_curves, record_vote_stream
from .profiles import (
    LOSS_EPSILONS,
    LOSS_IMPLEMENTATIONS,
    MOMENT_LAMBDAS,
    SEEN_IMPLEMENTATIONS,
    TRACE_DATASET,
    TRACE_DELTA,
    TRACE_NUM_MOMENTS,
    TRACE_NUM_TEACHERS,
    TraceProfile,
    get_profile,
    run_seeds,
)
from .seen import seen_run, seen_table

__all__ = ["TraceResults", "trace_jobs", "compute_traces"]


@dataclass
class TraceResults:
    """Everything the training-traces page shows.

    seen: Fig. 2 table (:func:`~pategan_audit.traces.seen.records_seen` columns).
    losses: Figs. 3/11 tidy CE table (:func:`~pategan_audit.traces.losses.teacher_losses` columns).
    streams: the Fig. 4 vote streams, one per lambda.
    moments: Fig. 4 tidy curves (:func:`~pategan_audit.traces.moments.moment_curves`), all lambdas.
    final: final epsilon-hat per (lambda, accountant) (:func:`~pategan_audit.traces.moments.final_epsilons`).
    settings: the knobs behind the numbers (profile, epsilon, seed, runs, caps) for captions/metadata.
    """

    seen: pd.DataFrame
    losses: pd.DataFrame
    streams: list[VoteStream]
    moments: pd.DataFrame
    final: pd.DataFrame
    settings: dict


def trace_jobs(profile: TraceProfile, *, epsilon: float, seed: int,
               seen_implementations: Sequence[str] = SEEN_IMPLEMENTATIONS,
               loss_implementations: Sequence[str] = LOSS_IMPLEMENTATIONS,
               moment_lambdas: Sequence[float] = MOMENT_LAMBDAS) -> list[tuple[str, dict]]:
    """The (kind, kwargs) job list of a profile, longest jobs first."""
    common = dict(num_teachers=TRACE_NUM_TEACHERS, delta=TRACE_DELTA, dataset=TRACE_DATASET)
    jobs: list[tuple[str, dict]] = [
        ("moments", dict(lam=float(lam), iterations=profile.moment_iterations, seed=seed,
                         num_moments=TRACE_NUM_MOMENTS, **common)) for lam in moment_lambdas
    ]
    jobs += [("loss", dict(implementation=name, epsilon=float(LOSS_EPSILONS.get(name, epsilon)), seed=s,
                           max_iter=profile.loss_max_iter, **common))
             for s in run_seeds(seed, profile.loss_runs) for name in loss_implementations]
    jobs += [("seen", dict(implementation=name, epsilon=float(epsilon), seed=seed, max_iter=profile.seen_max_iter, **common))
             for name in seen_implementations]
    return jobs


#: kind -> the cached run of that kind (each one :meth:`~pategan_audit.traces.fitting.TraceRun.cached`)
RUNS = {"seen": seen_run, "loss": loss_run, "moments": record_vote_stream}


def _run_job(job: tuple[str, dict]):
    kind, kwargs = job
    if kind not in RUNS:
        raise ValueError(f"unknown trace job kind {kind!r}")
    return RUNS[kind](**kwargs)


@runner.with_options()
def compute_traces(profile: str | TraceProfile = "book", *, epsilon: float = 1.0, seed: int = 0,
                   options: runner.RunOptions | None = None,
                   seen_implementations: Sequence[str] = SEEN_IMPLEMENTATIONS,
                   loss_implementations: Sequence[str] = LOSS_IMPLEMENTATIONS,
                   moment_lambdas: Sequence[float] = MOMENT_LAMBDAS) -> TraceResults:
    """Run (or read from the cache) every trace of ``profile`` and assemble the tables.

    epsilon: the privacy target of the Fig. 2/3 runs (paper: 1; smartnoise's Fig. 3 runs keep
    epsilon = 3, :data:`~pategan_audit.traces.profiles.LOSS_EPSILONS`). The Fig. 4 runs use epsilon = inf.
    seed: seed of the Fig. 2 runs, of the Fig. 3 run and of the Fig. 4 streams; Fig. 11 adds seed+1, ...
    options: how it runs (:class:`~pategan_audit.runner.RunOptions`; default: the options in
    force with all CPUs and no progress bar, which would clutter the book pages).
    """
    prof = get_profile(profile)
    jobs = trace_jobs(prof, epsilon=epsilon, seed=seed, seen_implementations=seen_implementations,
                      loss_implementations=loss_implementations, moment_lambdas=moment_lambdas)
    results = runner.run_map(_run_job, jobs, options, label=f"traces ({prof.name})")
    by_kind: dict[str, list] = {"seen": [], "loss": [], "moments": []}
    for (kind, kwargs), res in zip(jobs, results):
        by_kind[kind].append((kwargs, res))

    seen = seen_table([k["implementation"] for k, _ in by_kind["seen"]], [r for _, r in by_kind["seen"]],
                      epsilon=epsilon, seed=seed, max_iter=prof.seen_max_iter)
    losses = loss_table([k for k, _ in by_kind["loss"]], [r for _, r in by_kind["loss"]])
    streams = [r for _, r in by_kind["moments"]]
    moments = pd.concat([moment_curves(s) for s in streams], ignore_index=True)
    final = final_epsilons(streams)
    settings = dict(profile=prof.name, epsilon=float(epsilon), seed=int(seed), dataset=TRACE_DATASET,
                    num_teachers=TRACE_NUM_TEACHERS, delta=TRACE_DELTA, seen_max_iter=prof.seen_max_iter,
                    loss_max_iter=prof.loss_max_iter, loss_runs=prof.loss_runs, loss_seeds=run_seeds(seed, prof.loss_runs),
                    loss_epsilons={name: float(LOSS_EPSILONS.get(name, epsilon)) for name in loss_implementations},
                    moment_iterations=prof.moment_iterations, moment_lambdas=[float(x) for x in moment_lambdas],
                    num_moments=TRACE_NUM_MOMENTS)
    return TraceResults(seen=seen, losses=losses, streams=streams, moments=moments, final=final, settings=settings)
