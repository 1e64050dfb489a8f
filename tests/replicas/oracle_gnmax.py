"""Test oracle: gnmax's single-fit iteration written as one network at a time, with no replica
axis (PATE-GAN Alg. 1, ``jordon2019pategan``, with the Confident-GNMax aggregation and the replay
buffer of :mod:`pategan_audit.implementations.gnmax`). The library trains gnmax only through its
replica step (:class:`pategan_audit.replicas.gnmax.GNMaxStep`, R = 1 for ``fit``); this module keeps
the straightforward loop so that the tests can hold the step to it, bit for bit.

One iteration: ``n_T`` teacher rounds (each teacher one Adam step on B rows of its own block,
label 1, and one batch of B generated rows shared by all teachers, label 0); ``query_batch``
generated rows labelled by Confident-GNMax (one query each, every query charged); the answered
ones go into the replay buffer (the most recent ``replay_size`` kept); then
``steps_per_iteration_`` times: ``student_iters`` student steps on ``student_batch`` rows drawn
from the buffer (none while it is empty) and one generator step on ``BCE(S(G(z)), 1)`` over
``student_batch`` rows. The single-fit loop (:func:`.oracle_neural.oracle_fit`: the engine's
stopping rules, accountant, traces, callbacks) runs around it, and the data-dependent analysis releases its ε after it.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from pategan_audit.implementations import create

from .oracle_neural import oracle_fit, oracle_label

__all__ = ["oracle_model", "oracle_iteration"]


def _teacher_rounds(model) -> None:
    k, B = model.num_teachers_, model.batch_size_
    for _ in range(int(model.teacher_phase_.rounds)):
        rows = model.sampler.sample(B, generator=model.train_gen)
        has_rows = model.sampler.has_rows
        full = bool(has_rows.all())
        model._record_seen(rows if full else [r if h else r[:0] for r, h in zip(rows.numpy(), has_rows.tolist())])
        real = model._teacher_rows_input(rows.reshape(-1).numpy()).reshape(k, B, -1)
        with torch.no_grad():
            fake = model._fakes(model._latent(B, model.train_gen, sampling=False), generator=model.train_gen)
        model.teachers.train_step(real, fake.unsqueeze(0).expand(k, B, -1), separate=False,
                                  real_weight=None if full else has_rows.float())


def _student_step(model, u: torch.Tensor, r: torch.Tensor) -> None:
    loss_s = F.binary_cross_entropy_with_logits(model.student.single(u)[:, 0], r)
    model.opt_student.zero_grad(set_to_none=True)
    loss_s.backward()
    model.opt_student.step()


def _generator_step(model, batch: int) -> None:
    fake = model._fakes(model._latent(batch, model.train_gen, sampling=False), generator=model.train_gen)
    loss_g = F.binary_cross_entropy_with_logits(model.student.single(fake)[:, 0], torch.ones(batch))
    model.opt_generator.zero_grad(set_to_none=True)
    loss_g.backward()
    model.opt_generator.step()


def oracle_iteration(model, it: int) -> None:
    """One iteration of ``model`` (a gnmax model inside its fit)."""
    cfg = model.config
    _teacher_rounds(model)
    with torch.no_grad():
        u = model._fakes(model._latent(int(cfg.query_batch), model.train_gen, sampling=False), generator=model.train_gen)
    labels = oracle_label(model, u)
    keep = model.answered_
    model.trace.extra["answered"].append(int(keep.sum()))
    if keep.any():
        model.replay_rows_.append(u[keep])
        model.replay_labels_.append(labels[keep])
    rows = torch.cat(model.replay_rows_) if model.replay_rows_ else torch.empty(0)
    if len(rows) > int(cfg.replay_size):  # keep the most recent answered queries
        rows = rows[-int(cfg.replay_size):]
        model.replay_rows_ = [rows]
        model.replay_labels_ = [torch.cat(model.replay_labels_)[-int(cfg.replay_size):]]
    ys = torch.cat(model.replay_labels_) if len(rows) else None
    for _ in range(model.steps_per_iteration_):
        if len(rows):
            for _ in range(int(cfg.student_iters)):
                pick = torch.randint(len(rows), (int(cfg.student_batch),), generator=model.train_gen)
                _student_step(model, rows[pick], ys[pick])
        _generator_step(model, int(cfg.student_batch))


def _oracle_fit(model, df, label) -> None:
    oracle_fit(model, df, label)
    if model.config.analysis == "data_dependent":
        model._release_epsilon()


def oracle_model(**overrides):
    """An unfitted ``create("gnmax", **overrides)`` whose ``fit`` runs :func:`oracle_fit` around
    :func:`oracle_iteration` instead of the replica step."""
    model = create("gnmax", **overrides)
    cls = type(model)
    model.__class__ = type(f"Oracle{cls.__name__}", (cls,), {"_iteration": oracle_iteration, "_fit": _oracle_fit})
    return model
