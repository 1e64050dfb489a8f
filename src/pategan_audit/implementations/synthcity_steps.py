"""synthcity's conditional sampler and its student (critic) and generator steps (implementation notes §synthcity.loop; upstream ``plugins/core/models/{gan,tabular_gan}.py`` and ``utils/samplers.py``).

Kept apart from :mod:`.synthcity` so each file holds one concern. The functions take the
:class:`~pategan_audit.implementations.synthcity.Synthcity` model and one batch of real row
positions.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np
import torch
import torch.nn.functional as F

if TYPE_CHECKING:  # pragma: no cover
    from .synthcity import Synthcity

__all__ = ["ConditionalSampler", "gradient_penalty", "critic_step", "generator_step", "conditional_loss"]


class ConditionalSampler:
    """CTGAN-style conditional vectors over the discrete one-hot blocks of the encoded data.

    A row's vector picks a discrete column uniformly and one of its categories with probability
    ∝ its count in the training data, as synthcity 0.2.12's ``ConditionalDatasetSampler`` does
    (``utils/samplers.py``: ``category_freq / sum``): the counts are read from the training data
    without noise (finding O3). With no blocks the width is 0. (Before 2026-11-25 this class
    weighted by ``log(1 + count)``, CTGAN's ``log_frequency`` option, which 0.2.12 does not have;
    archived synthcity runs computed before then used that weighting.)
    """

    def __init__(self, X: np.ndarray, blocks: Sequence[tuple[int, int]]):
        self.blocks = [(int(s), int(w)) for s, w in blocks]
        self.offsets = np.cumsum([0] + [w for _, w in self.blocks])[:-1].astype(np.int64)
        self.width = int(sum(w for _, w in self.blocks))
        max_w = max([w for _, w in self.blocks], default=0)
        probs = np.zeros((len(self.blocks), max(max_w, 1)))
        for j, (s, w) in enumerate(self.blocks):
            freq = np.asarray(X[:, s:s + w], dtype=np.float64).sum(axis=0)
            probs[j, :w] = freq / freq.sum()
        self.cum_probs = torch.as_tensor(np.cumsum(probs, axis=1), dtype=torch.float64)

    def sample(self, n: int, *, generator: torch.Generator) -> torch.Tensor:
        cond = torch.zeros(n, self.width)
        if not self.blocks or n == 0:
            return cond
        col = torch.randint(len(self.blocks), (n,), generator=generator)
        r = torch.rand(n, 1, generator=generator, dtype=torch.float64)
        cat = (self.cum_probs[col] > r).to(torch.int64).argmax(dim=1)
        cond[torch.arange(n), torch.as_tensor(self.offsets)[col] + cat] = 1.0
        return cond


def gradient_penalty(student, a: torch.Tensor, b: torch.Tensor, *, weight: float, generator: torch.Generator) -> torch.Tensor:
    """WGAN-GP: ``weight · mean((‖∇_x D(x̂)‖₂ − 1)²)`` at ``x̂ = e·a + (1 − e)·b``, e ~ U(0,1) per row."""
    e = torch.rand(a.shape[0], 1, generator=generator)
    x = (e * a + (1.0 - e) * b).detach().requires_grad_(True)
    d = student.single(x)[:, 0]
    (grad,) = torch.autograd.grad(d.sum(), x, create_graph=True)
    return weight * ((grad.norm(2, dim=1) - 1.0) ** 2).mean()


def _mean_or_zero(x: torch.Tensor) -> torch.Tensor:
    return x.mean() if x.numel() else x.new_zeros(())


def critic_step(model: "Synthcity", rows: np.ndarray) -> None:
    """One student (discriminator) step on a real batch; the fakes are labelled by the teachers
    (``model._label``: votes, noise, O4 skip rule, accountant). With ``student_reads_real``
    (O1) the real rows are "real" examples and the gradient penalty interpolates real and fake
    rows; otherwise only the PATE-labelled fakes enter (positives = label 1)."""
    cfg, gen, b = model.config, model.train_gen, len(rows)
    reads_real = cfg.student_reads_real
    cond = model.dataset_cond_[rows] if reads_real else model.cond_sampler.sample(b, generator=gen)
    with torch.no_grad():
        fake_raw = model._fakes(torch.cat([torch.randn(b, cfg.n_units_hidden, generator=gen), cond], dim=1), generator=gen)
    labels = model._label(fake_raw).bool()
    fake = torch.cat([fake_raw, cond], dim=1)
    d_fake = model.student.single(fake)[:, 0]
    if reads_real:
        model.trace.extra["student_rows"].update(int(r) for r in rows)
        real = torch.cat([model.X_[torch.as_tensor(rows)], cond], dim=1)
        d_real = model.student.single(real)[:, 0]
        err_real = torch.cat([d_real, d_fake[labels]]).mean()
        penalty = gradient_penalty(model.student, real, fake, weight=cfg.gp_weight, generator=gen)
    else:
        err_real = _mean_or_zero(d_fake[labels])
        pos, neg = fake[labels], fake[~labels]
        if len(pos) and len(neg):
            i = torch.randint(len(pos), (b,), generator=gen)
            j = torch.randint(len(neg), (b,), generator=gen)
            penalty = gradient_penalty(model.student, pos[i], neg[j], weight=cfg.gp_weight, generator=gen)
        else:
            penalty = d_fake.new_zeros(())
    loss = -err_real + _mean_or_zero(d_fake[~labels]) + penalty
    model.opt_student.zero_grad(set_to_none=True)
    loss.backward()
    if cfg.clipping_value > 0:
        torch.nn.utils.clip_grad_norm_(model.student.parameters(), cfg.clipping_value)
    model.opt_student.step()


def conditional_loss(model: "Synthcity", fake_raw: torch.Tensor, cond: torch.Tensor, real_raw: torch.Tensor | None) -> torch.Tensor:
    """``TabularGAN._generator_cond_loss``: for each discrete block with an active conditional,
    NLL of the generated (softmax) block against the argmax of the **real** batch's block (O1),
    or of the conditional vector itself when the student must not read real data; summed over
    blocks and divided by the batch size. Upstream does not advance its conditional offset past
    a block with no active rows; reproduced."""
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


def generator_step(model: "Synthcity", rows: np.ndarray) -> None:
    """One generator step: ``−mean(D(G(z) ⊕ cond)) + conditional_loss`` with gradient clipping."""
    cfg, gen, b = model.config, model.train_gen, len(rows)
    reads_real = cfg.student_reads_real
    cond = model.dataset_cond_[rows] if reads_real else model.cond_sampler.sample(b, generator=gen)
    fake_raw = model._fakes(torch.cat([torch.randn(b, cfg.n_units_hidden, generator=gen), cond], dim=1), generator=gen)
    loss = -model.student.single(torch.cat([fake_raw, cond], dim=1)).mean()
    real_raw = model.X_[torch.as_tensor(rows)] if reads_real else None
    loss = loss + conditional_loss(model, fake_raw, cond, real_raw)
    model.opt_generator.zero_grad(set_to_none=True)
    loss.backward()
    if cfg.clipping_value > 0:
        torch.nn.utils.clip_grad_norm_(model.gen_net.parameters(), cfg.clipping_value)
    model.opt_generator.step()
