"""Teacher vote aggregation and its noise (PATE-GAN Alg. 1 "PATE_λ"; implementation notes §common.votes, §corrected.votes).

Two mechanisms, chosen per preset by the config field ``vote_mechanism``:

* ``"single_noise"`` (what every released implementation does, implementation notes §common.votes, §violations.findings): **one** Laplace
  draw ``Z`` is added to ``n1`` and the label is ``1[n1 + Z > (k + offset)/2]``. updated writes
  ``(n1 + Z)/k > 0.5``, synthcity ``(n1 + Z)/(k + 1e-8) > 0.5`` (``offset = 1e-8``), borealis and
  smartnoise ``n1 + Z > k/2``; the forms are the same comparison.
* ``"two_noise_argmax"`` (PATE's ``M_γ``, Papernot et al. 2017): independent ``Z0, Z1`` are added
  to ``n0`` and ``n1`` and the label is ``argmax_j (n_j + Z_j)``; a tie (probability 0) goes to
  label 0, the lower index.

Noise is parameterised by its Laplace **scale** ``b`` (density ∝ e^{-|x|/b}); a preset converts
its λ into a scale (``1/λ`` for all but updated's V15, whose scale is ``λ``). Laplace draws are
``b·(E1 − E2)`` with ``E1, E2 ~ Exp(1)`` from a dedicated ``torch.Generator`` (float64).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["MECHANISMS", "VoteResult", "laplace", "noisy_labels", "count_votes", "single_noise_vote", "two_noise_argmax_vote", "aggregate"]

MECHANISMS = ("single_noise", "two_noise_argmax")


@dataclass
class VoteResult:
    """One batch of queries. n1: [n] int64 votes for "real"; noise: [n] (single) or [n, 2]
    (two-noise: columns for n0 and n1) float64; labels: [n] int64 released labels in {0, 1}."""

    n1: torch.Tensor
    noise: torch.Tensor
    labels: torch.Tensor


def laplace(shape: tuple[int, ...], *, scale: float, generator: torch.Generator,
            out: torch.Tensor | None = None) -> torch.Tensor:
    """Laplace(0, ``scale``) draws of the given shape (float64): ``scale·(E1 − E2)`` of two
    ``Exp(1)`` draws, E1 first. ``out``: a contiguous float64 tensor of that shape (e.g. one
    replica's row of a stack) that receives the draws in place, the same numbers."""
    if not scale > 0:
        raise ValueError(f"the Laplace scale must be > 0, got {scale}")
    if out is None:
        out = torch.empty(shape, dtype=torch.float64)
    elif tuple(out.shape) != tuple(shape) or out.dtype != torch.float64 or not out.is_contiguous():
        raise ValueError(f"out must be a contiguous float64 tensor of shape {tuple(shape)}, "
                         f"got {out.dtype} {tuple(out.shape)}")
    e1 = out.exponential_(1.0, generator=generator)
    e2 = torch.empty(shape, dtype=torch.float64).exponential_(1.0, generator=generator)
    return e1.sub_(e2).mul_(scale)


def count_votes(predictions: torch.Tensor) -> torch.Tensor:
    """``n1`` per query from hard votes ``predictions`` [k, n] in {0, 1} -> [n] int64."""
    if predictions.dim() != 2:
        raise ValueError(f"predictions must be [num_teachers, n], got shape {tuple(predictions.shape)}")
    return predictions.to(torch.int64).sum(dim=0)


def noisy_labels(n1: torch.Tensor, noise: torch.Tensor, *, mechanism: str, num_teachers: int,
                 offset: float = 0.0) -> torch.Tensor:
    """The released labels (int64, ``n1``'s shape) of vote counts ``n1`` and their Laplace noise
    (``n1``'s shape, or with a last axis of 2 for the two-noise mechanism: columns for n0 and
    n1): the one place of the labelling rule, for one batch or R replicas' batches at once
    (:func:`pategan_audit.implementations.engine.release_votes`)."""
    n1f = n1.to(torch.float64)
    if mechanism == "single_noise":
        return (n1f + noise > 0.5 * (num_teachers + offset)).to(torch.int64)
    if mechanism == "two_noise_argmax":
        return (n1f + noise[..., 1] > (num_teachers - n1f) + noise[..., 0]).to(torch.int64)
    raise ValueError(f"unknown vote_mechanism {mechanism!r}; choose one of {MECHANISMS}")


def single_noise_vote(
    n1: torch.Tensor, *, num_teachers: int, laplace_scale: float, generator: torch.Generator, offset: float = 0.0
) -> VoteResult:
    """``r = 1[n1 + Lap(b) > (k + offset)/2]``, one draw per query (implementation notes §updated.votes, §synthcity.votes, §borealis.votes, §smartnoise.votes)."""
    noise = laplace((n1.shape[0],), scale=laplace_scale, generator=generator)
    labels = noisy_labels(n1, noise, mechanism="single_noise", num_teachers=num_teachers, offset=offset)
    return VoteResult(n1=n1.to(torch.int64), noise=noise, labels=labels)


def two_noise_argmax_vote(
    n1: torch.Tensor, *, num_teachers: int, laplace_scale: float, generator: torch.Generator
) -> VoteResult:
    """``r = argmax(n0 + Z0, n1 + Z1)`` with independent ``Z_j ~ Lap(b)`` (implementation notes §corrected.votes);
    ties go to 0. With ``b = 1/γ`` each query is (2γ, 0)-DP and PATE's Lemma 4 applies."""
    noise = laplace((n1.shape[0], 2), scale=laplace_scale, generator=generator)
    labels = noisy_labels(n1, noise, mechanism="two_noise_argmax", num_teachers=num_teachers)
    return VoteResult(n1=n1.to(torch.int64), noise=noise, labels=labels)


def aggregate(
    n1: torch.Tensor,
    *,
    mechanism: str,
    num_teachers: int,
    laplace_scale: float,
    generator: torch.Generator,
    offset: float = 0.0,
) -> VoteResult:
    """Dispatch to :func:`single_noise_vote` or :func:`two_noise_argmax_vote`."""
    if mechanism == "single_noise":
        return single_noise_vote(n1, num_teachers=num_teachers, laplace_scale=laplace_scale, generator=generator, offset=offset)
    if mechanism == "two_noise_argmax":
        return two_noise_argmax_vote(n1, num_teachers=num_teachers, laplace_scale=laplace_scale, generator=generator)
    raise ValueError(f"unknown vote_mechanism {mechanism!r}; choose one of {MECHANISMS}")
