"""The presets with persistent neural teachers and a BCE student (borealis, smartnoise,
corrected): PATE-GAN (ICLR 2019, ``jordon2019pategan``) Alg. 1 as these implementations run it
(implementation notes §borealis.votes, §smartnoise.votes, §smartnoise.stopping, §corrected.stopping).

Their one iteration is the replica step :class:`~pategan_audit.replicas.neural.NeuralStep`: ``fit``
runs it at R = 1 (:func:`~pategan_audit.replicas.loop.fit_one`), ``fit_many`` at any R, so a single
fit and a replica of a batched fit are one code path.

Subclasses build ``X_`` (teacher-input space), ``teachers`` (:class:`NeuralTeachers`),
``student`` (1-model :class:`BatchedMLP` returning a logit), ``gen_net``, ``sampler``
(:class:`BlockSampler`), ``opt_student``, ``opt_generator`` and implement ``_latent`` and
``_fakes``. The teacher rounds of step 1 are :class:`~.teacher_phase.NeuralRounds` (``teacher_phase_``,
made here from ``teacher_iters``); :func:`~.hyperparameters.paper_sizes` gives the "paper" layer
sizes (implementation notes §utility.paper-hyperparameters). gnmax, a subclass, has a training
step of its own (:mod:`pategan_audit.replicas.gnmax`), run the same way.
"""
from __future__ import annotations

import pandas as pd
import torch

from ..replicas.loop import fit_one
from ..replicas.neural import NeuralStep
from .engine import PateGenerator
from .hyperparameters import paper_sizes
from .teacher_phase import NeuralRounds

__all__ = ["NeuralPateGenerator", "paper_sizes"]


class NeuralPateGenerator(PateGenerator):
    """borealis / smartnoise / corrected: the engine's presets trained by :class:`NeuralStep`
    (see the module docstring)."""

    _separate_teacher_steps: bool = False  # borealis: real step, then fake step
    _shared_teacher_fakes: bool = False  # gnmax: one batch of fakes for all teachers per round

    def _queries_per_iteration(self) -> int:
        return int(self.config.student_iters) * int(self.batch_size_)

    def latent_law(self) -> tuple[str, int, bool]:
        """How the training latents are drawn (``_latent(n, gen, sampling=False)``): ``"uniform"``
        (U[0, 1)) or ``"normal"`` (N(0, 1)), the width of the noise part, and whether a class column
        drawn by the data's class ratios follows. Read by the counter streams of the batched step
        (:mod:`pategan_audit.replicas.neural`), which draw the same laws from their own words."""
        raise ValueError(f"streams='counter' knows the latents of borealis, smartnoise and corrected, "
                         f"not {type(self).__name__}")

    def release_votes(self, n1: torch.Tensor) -> torch.Tensor:
        """The released labels (float32 ``[n]``) of one batch of teacher vote counts ``n1`` ``[n]``:
        the noisy aggregation with the model's own noise stream, its release rule, the
        accountant's charge and the records (PATE-GAN Alg. 1 "PATE_λ"). The training step of a
        single replica labels through it."""
        return self._release_votes(n1)

    def _fit(self, df: pd.DataFrame, label: str | None) -> None:
        """The fit: :class:`NeuralStep` at R = 1 through the replica loop."""
        fit_one(self, df, label, NeuralStep)

    @property
    def teacher_phase_(self) -> NeuralRounds:
        """Step 1 as a strategy: ``teacher_iters`` rounds (borealis: real and fake steps apart;
        gnmax: fakes shared by the teachers)."""
        return NeuralRounds(int(self.config.teacher_iters), separate=self._separate_teacher_steps,
                            shared_fakes=self._shared_teacher_fakes)
