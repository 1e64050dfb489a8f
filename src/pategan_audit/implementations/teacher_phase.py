"""The teacher phase of one iteration, as strategies chosen by ``teacher_model`` (PATE-GAN,
``jordon2019pategan`` Alg. 1 lines 3-6; audit paper ``ganev2025elusive`` §5.3, B1/B2).

Every PATE preset starts an iteration by training its k teachers. Two ways exist among them:

``"neural_persistent"`` (:class:`NeuralRounds`)
    k persistent neural teachers (:class:`~pategan_audit.components.teachers.NeuralTeachers`);
    n_T rounds, each one batched Adam step of every teacher on B rows of its own block (label 1)
    and B generated rows (label 0). borealis, smartnoise, corrected; updated and synthcity with
    B1/B2 fixed; gnmax with one batch of fakes shared by all teachers (``shared_fakes``).
``"logistic_refit"`` (:class:`LogisticRefit`)
    k *new* logistic regressions every iteration (B1 updated, B2 synthcity), fitted on the rows
    the preset picks (its ``_refit_rows(it)``: updated the whole (last) block, synthcity a
    shuffled harness batch of a possibly re-drawn partition) and as many generated rows.

A preset picks its strategy once per fit (:func:`teacher_phase`) and calls ``phase.run(model, it)``;
the draws happen in the same order as the single-fit code they replace, so every preset's output
is unchanged. The replica axis (:mod:`pategan_audit.replicas`) has its own batched counterparts,
which read the same number of rounds from the model (``model.teacher_phase_.rounds``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch

from ..components.teachers import LogisticTeachers, NeuralTeachers

__all__ = ["TEACHER_MODELS", "NeuralRounds", "LogisticRefit", "teacher_phase"]

TEACHER_MODELS: tuple[str, ...] = ("logistic_refit", "neural_persistent")


@dataclass(frozen=True)
class NeuralRounds:
    """n_T rounds of one batched step of k persistent neural teachers.

    rounds: n_T. separate: a step on the real term, then one on the fake term (borealis' loop);
    else one step on both. shared_fakes: all teachers see one batch of B fakes per round (gnmax)
    instead of B fakes each."""

    rounds: int
    separate: bool = False
    shared_fakes: bool = False

    @staticmethod
    def make_teachers(num_teachers: int, sizes: Sequence[int], **network: Any) -> NeuralTeachers:
        return NeuralTeachers(num_teachers, list(sizes), **network)

    def run(self, model: Any, it: int) -> None:
        """The rounds on ``model`` (a PATE preset with ``sampler``, ``teachers``, ``train_gen``)."""
        k, B = model.num_teachers_, model.batch_size_
        for _ in range(int(self.rounds)):
            rows = model.sampler.sample(B, generator=model.train_gen)
            has_rows = model.sampler.has_rows
            full = bool(has_rows.all())  # not all: an empty block under independent assignment
            model._record_seen(rows if full else [r if h else r[:0] for r, h in zip(rows.numpy(), has_rows.tolist())])
            real = model._teacher_rows_input(rows.reshape(-1).numpy()).reshape(k, B, -1)
            with torch.no_grad():
                n_fake = B if self.shared_fakes else k * B
                fake = model._fakes(model._latent(n_fake, model.train_gen, sampling=False), generator=model.train_gen)
            fake = fake.unsqueeze(0).expand(k, B, -1) if self.shared_fakes else fake.reshape(k, B, -1)
            model.teachers.train_step(real, fake, separate=self.separate, real_weight=None if full else has_rows.float())


@dataclass(frozen=True)
class LogisticRefit:
    """k new logistic-regression teachers fitted every iteration (B1, B2).

    fake_sampling: the fakes are drawn as at generation time (synthcity) rather than as in
    training. The preset supplies ``_refit_rows(it) -> [k, m]`` row positions and may define
    ``_after_refit(rows)`` (bookkeeping)."""

    fake_sampling: bool = False

    @staticmethod
    def make_teachers(num_teachers: int, sizes: Sequence[int] | None = None, **network: Any) -> LogisticTeachers:
        return LogisticTeachers(num_teachers)

    def run(self, model: Any, it: int) -> None:
        rows = model._refit_rows(it)
        k, m = rows.shape
        with torch.no_grad():
            fake = model._fakes(model._latent(k * m, model.train_gen, sampling=self.fake_sampling)).reshape(k, m, -1)
        model.teachers.refit(model.X_[rows], fake)
        model._record_seen(rows)
        after = getattr(model, "_after_refit", None)
        if after is not None:
            after(rows)


def teacher_phase(teacher_model: str, *, rounds: int, separate: bool = False, shared_fakes: bool = False,
                  fake_sampling: bool = False) -> NeuralRounds | LogisticRefit:
    """The strategy named ``teacher_model`` (:data:`TEACHER_MODELS`) with its settings."""
    if teacher_model == "neural_persistent":
        return NeuralRounds(int(rounds), separate=separate, shared_fakes=shared_fakes)
    if teacher_model == "logistic_refit":
        return LogisticRefit(fake_sampling=fake_sampling)
    raise ValueError(f"teacher_model must be one of {TEACHER_MODELS}, got {teacher_model!r}")


def block_rows(blocks: Sequence[np.ndarray]) -> torch.Tensor:
    """Equal-size row blocks as one ``[k, m]`` tensor (what :meth:`LogisticRefit.run` fits on)."""
    return torch.as_tensor(np.stack(blocks))
