"""Test oracle: the single-fit iteration of ``synthcity`` (the inner ``PATEGAN`` class of
``vanderschaarlab/synthcity``; audit paper ``ganev2025elusive`` §4, implementation notes
§synthcity.loop), one network at a time and no replica axis. The library trains ``synthcity``
only through the replica step (:class:`pategan_audit.replicas.synthcity.SynthcityStep`, R = 1 for
``fit``); this module keeps the straightforward loop so that the tests can hold the step to it,
bit for bit.

One iteration: the teacher phase (B2: k new logistic-regression teachers on a shuffled batch of
each block and as many generated rows; or ``neural_persistent``: ``n_T`` Adam rounds of k
persistent networks), then ``generator_n_iter`` epochs (the "paper" row: one epoch of ``n_S``
critic steps) over the real batches: a WGAN-GP critic step on the real batch and fakes labelled
by the noisy teacher vote (O1, O4), and a generator step on ``−mean(D(G(z) ⊕ cond))`` plus the
conditional loss; the single-fit loop (:func:`.oracle_neural.oracle_fit`: the engine's stopping
rules, accountant, traces, callbacks) around it.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from pategan_audit.implementations import create

from .oracle_neural import oracle_fit, oracle_label

__all__ = ["oracle_model", "oracle_iteration"]


def _gradient_penalty(student, a: torch.Tensor, b: torch.Tensor, *, weight: float, generator: torch.Generator) -> torch.Tensor:
    e = torch.rand(a.shape[0], 1, generator=generator)
    x = (e * a + (1.0 - e) * b).detach().requires_grad_(True)
    d = student.single(x)[:, 0]
    (grad,) = torch.autograd.grad(d.sum(), x, create_graph=True)
    return weight * ((grad.norm(2, dim=1) - 1.0) ** 2).mean()


def _mean_or_zero(x: torch.Tensor) -> torch.Tensor:
    return x.mean() if x.numel() else x.new_zeros(())


def _critic_step(model, rows: np.ndarray) -> None:
    cfg, gen, b = model.config, model.train_gen, len(rows)
    reads_real = cfg.student_reads_real
    cond = model.dataset_cond_[rows] if reads_real else model.cond_sampler.sample(b, generator=gen)
    with torch.no_grad():
        fake_raw = model._fakes(torch.cat([torch.randn(b, cfg.n_units_hidden, generator=gen), cond], dim=1), generator=gen)
    labels = oracle_label(model, fake_raw).bool()
    fake = torch.cat([fake_raw, cond], dim=1)
    d_fake = model.student.single(fake)[:, 0]
    if reads_real:
        model.trace.extra["student_rows"].update(int(r) for r in rows)
        real = torch.cat([model.X_[torch.as_tensor(rows)], cond], dim=1)
        d_real = model.student.single(real)[:, 0]
        err_real = torch.cat([d_real, d_fake[labels]]).mean()
        penalty = _gradient_penalty(model.student, real, fake, weight=cfg.gp_weight, generator=gen)
    else:
        err_real = _mean_or_zero(d_fake[labels])
        pos, neg = fake[labels], fake[~labels]
        if len(pos) and len(neg):
            i = torch.randint(len(pos), (b,), generator=gen)
            j = torch.randint(len(neg), (b,), generator=gen)
            penalty = _gradient_penalty(model.student, pos[i], neg[j], weight=cfg.gp_weight, generator=gen)
        else:
            penalty = d_fake.new_zeros(())
    loss = -err_real + _mean_or_zero(d_fake[~labels]) + penalty
    model.opt_student.zero_grad(set_to_none=True)
    loss.backward()
    if cfg.clipping_value > 0:
        torch.nn.utils.clip_grad_norm_(model.student.parameters(), cfg.clipping_value)
    model.opt_student.step()


def _conditional_loss(model, fake_raw: torch.Tensor, cond: torch.Tensor, real_raw: torch.Tensor | None) -> torch.Tensor:
    losses, cond_idx = [], 0
    for start, width in model.cond_sampler.blocks:
        mask = cond[:, cond_idx:cond_idx + width].sum(dim=1) > 0
        if not bool(mask.any()):
            continue  # upstream quirk: cond_idx is not advanced here
        source = real_raw[mask, start:start + width] if real_raw is not None else cond[mask, cond_idx:cond_idx + width]
        target = source.argmax(dim=1)
        losses.append(F.nll_loss(torch.log(fake_raw[mask, start:start + width] + 1e-8), target))
        cond_idx += width
    if not losses:
        return fake_raw.new_zeros(())
    return torch.stack(losses).sum() / fake_raw.shape[0]


def _generator_step(model, rows: np.ndarray) -> None:
    cfg, gen, b = model.config, model.train_gen, len(rows)
    reads_real = cfg.student_reads_real
    cond = model.dataset_cond_[rows] if reads_real else model.cond_sampler.sample(b, generator=gen)
    fake_raw = model._fakes(torch.cat([torch.randn(b, cfg.n_units_hidden, generator=gen), cond], dim=1), generator=gen)
    loss = -model.student.single(torch.cat([fake_raw, cond], dim=1)).mean()
    real_raw = model.X_[torch.as_tensor(rows)] if reads_real else None
    loss = loss + _conditional_loss(model, fake_raw, cond, real_raw)
    model.opt_generator.zero_grad(set_to_none=True)
    loss.backward()
    if cfg.clipping_value > 0:
        torch.nn.utils.clip_grad_norm_(model.gen_net.parameters(), cfg.clipping_value)
    model.opt_generator.step()


def oracle_iteration(model, it: int) -> None:
    """One iteration of ``model`` (a ``synthcity`` model inside its fit)."""
    model.trace.extra["skipped_batches"].append(0)
    model.teacher_phase_.run(model, it)
    if model._first_subsets is None and model.config.teacher_model == "neural_persistent":
        model._first_subsets = model.fixed_blocks_
    epochs, d_steps = model._student_schedule()
    for _ in range(epochs):
        for rows in model.real_batches():
            for _ in range(d_steps):
                if len(rows) == 0:
                    continue
                _critic_step(model, rows)
            _generator_step(model, rows)


def oracle_model(**overrides):
    """An unfitted ``create("synthcity", **overrides)`` whose ``fit`` runs :func:`oracle_fit` around
    :func:`oracle_iteration` instead of the replica step."""
    model = create("synthcity", **overrides)
    cls = type(model)
    model.__class__ = type(f"Oracle{cls.__name__}", (cls,), {
        "_iteration": oracle_iteration,
        "_fit": oracle_fit,
    })
    return model
