"""Test oracle: the single-fit iteration of borealis, smartnoise and corrected written as the
upstream implementations write it (PATE-GAN Alg. 1, ``jordon2019pategan``; audit paper §4), one
network at a time and no replica axis. The library trains these presets only through the replica
step (:class:`pategan_audit.replicas.neural.NeuralStep`, R = 1 for ``fit``); this module keeps the
straightforward loop so that the tests can hold the step to it, bit for bit.

One iteration: ``n_T`` teacher rounds (each teacher one Adam step on B rows of its own block, label
1, and B generated rows, label 0), ``n_S`` student rounds (B generated rows labelled by the noisy
teacher vote, one step on ``BCE(S(u), r)``), one generator step on ``BCE(S(G(z)), 1)``.

:func:`oracle_fit` is the plain single-fit loop around a model's ``_iteration`` between the
engine's hooks (stopping rules, accountant, traces, callbacks), one model and no replica step;
the oracles of updated, synthcity and gnmax use it too.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from pategan_audit.implementations import create

__all__ = ["oracle_model", "oracle_iteration", "oracle_fit", "oracle_label"]


def oracle_label(model, fake: torch.Tensor) -> torch.Tensor:
    """The teachers' votes on ``fake`` (teacher-input space) released by the model's own
    ``_release_votes`` (noisy aggregation, release rule, accountant charge, records): labels as
    float32 [n], as the upstream single-fit code labels one batch."""
    with torch.no_grad():
        n1 = model.teachers.votes(fake.detach())
    return model._release_votes(n1)


def oracle_fit(model, df, label) -> None:
    """Fit ``model`` one iteration at a time with its ``_iteration(it)``, between the engine's hooks
    (``begin_fit``, ``may_continue``, ``open_iteration``, ``finish_iteration``, ``end_fit``)."""
    budget = model.begin_fit(df, label)
    it = 0
    try:
        while model.may_continue(it, budget):
            model.open_iteration()
            model._iteration(it)
            if model.finish_iteration(it, budget):
                break
            it += 1
    finally:
        model.end_fit()


def _teacher_rounds(model) -> None:
    k, B = model.num_teachers_, model.batch_size_
    phase = model.teacher_phase_
    for _ in range(int(phase.rounds)):
        rows = model.sampler.sample(B, generator=model.train_gen)
        has_rows = model.sampler.has_rows
        full = bool(has_rows.all())
        model._record_seen(rows if full else [r if h else r[:0] for r, h in zip(rows.numpy(), has_rows.tolist())])
        real = model._teacher_rows_input(rows.reshape(-1).numpy()).reshape(k, B, -1)
        with torch.no_grad():
            fake = model._fakes(model._latent(k * B, model.train_gen, sampling=False), generator=model.train_gen)
        model.teachers.train_step(real, fake.reshape(k, B, -1), separate=phase.separate,
                                  real_weight=None if full else has_rows.float())


def oracle_iteration(model, it: int) -> None:
    """One iteration of ``model`` (a borealis, smartnoise or corrected model inside its fit)."""
    _teacher_rounds(model)
    B = model.batch_size_
    for _ in range(int(model.config.student_iters)):
        with torch.no_grad():
            u = model._fakes(model._latent(B, model.train_gen, sampling=False), generator=model.train_gen)
        r = oracle_label(model, u)
        loss_s = F.binary_cross_entropy_with_logits(model.student.single(u)[:, 0], r)
        model.opt_student.zero_grad(set_to_none=True)
        loss_s.backward()
        model.opt_student.step()
    fake = model._fakes(model._latent(B, model.train_gen, sampling=False), generator=model.train_gen)
    loss_g = F.binary_cross_entropy_with_logits(model.student.single(fake)[:, 0], torch.ones(B))
    model.opt_generator.zero_grad(set_to_none=True)
    loss_g.backward()
    model.opt_generator.step()


def oracle_model(name: str, **overrides):
    """An unfitted ``create(name, **overrides)`` whose ``fit`` runs :func:`oracle_fit` around
    :func:`oracle_iteration` instead of the replica step."""
    model = create(name, **overrides)
    cls = type(model)
    model.__class__ = type(f"Oracle{cls.__name__}", (cls,), {
        "_iteration": oracle_iteration,
        "_fit": oracle_fit,
    })
    return model
