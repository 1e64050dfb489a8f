"""Test oracle: the single-fit iteration of ``updated`` (the 2020 ``mlforhealthlabpub`` PATE-GAN;
audit paper ``ganev2025elusive`` §4, implementation notes §updated.partition, §updated.votes),
one network at a time and no replica axis. The library trains ``updated`` only through the
replica step (:class:`pategan_audit.replicas.updated.UpdatedStep`, R = 1 for ``fit``); this module
keeps the straightforward loop so that the tests can hold the step to it, bit for bit.

One iteration: the teacher phase (B1: k new logistic-regression teachers fitted on their block
and as many generated rows; or ``neural_persistent``: ``n_T`` Adam rounds of k persistent
networks), ``n_S`` student rounds (B generated rows labelled by the noisy teacher vote, one WGAN
critic step on ``mean(r·S(u)) − mean((1 − r)·S(u))`` and the weights clipped to ±0.01), one
generator step on ``−mean(S(G(z)))``; the single-fit loop (:func:`.oracle_neural.oracle_fit`:
the engine's stopping rules, accountant, traces, callbacks) around it.
"""
from __future__ import annotations

import torch

from pategan_audit.implementations import create

from .oracle_neural import oracle_fit, oracle_label

__all__ = ["oracle_model", "oracle_iteration"]

WEIGHT_CLIP = 0.01


def _student_step(model, u: torch.Tensor, r: torch.Tensor) -> None:
    scores = model.student.single(u)[:, 0]
    loss = -(torch.mean(r * scores) - torch.mean((1.0 - r) * scores))
    model.opt_student.zero_grad(set_to_none=True)
    loss.backward()
    model.opt_student.step()
    with torch.no_grad():
        for p in model.student.parameters():
            p.clamp_(-WEIGHT_CLIP, WEIGHT_CLIP)


def oracle_iteration(model, it: int) -> None:
    """One iteration of ``model`` (an ``updated`` model inside its fit)."""
    model.teacher_phase_.run(model, it)
    B = model.batch_size_
    for _ in range(model.student_steps()):
        with torch.no_grad():
            u = model._fakes(model._latent(B, model.train_gen, sampling=False))
        _student_step(model, u, oracle_label(model, u))
    fake = model._fakes(model._latent(B, model.train_gen, sampling=False))
    loss_g = -torch.mean(model.student.single(fake))
    model.opt_generator.zero_grad(set_to_none=True)
    loss_g.backward()
    model.opt_generator.step()


def oracle_model(**overrides):
    """An unfitted ``create("updated", **overrides)`` whose ``fit`` runs :func:`oracle_fit` around
    :func:`oracle_iteration` instead of the replica step."""
    model = create("updated", **overrides)
    cls = type(model)
    model.__class__ = type(f"Oracle{cls.__name__}", (cls,), {
        "_iteration": oracle_iteration,
        "_fit": oracle_fit,
    })
    return model
