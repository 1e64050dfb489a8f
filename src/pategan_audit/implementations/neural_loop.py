"""The iteration of the presets with persistent neural teachers and a BCE student (borealis,
smartnoise, corrected): PATE-GAN (ICLR 2019, ``jordon2019pategan``) Alg. 1 as these
implementations run it (implementation notes §borealis.votes, §smartnoise.votes, §smartnoise.stopping, §corrected.stopping):

1. ``n_T`` rounds: every teacher takes an Adam step on BCE of ``B`` real rows drawn from its own
   block (label 1) and ``B`` generated rows (label 0); all teachers in one batched pass;
2. ``n_S`` rounds: generate ``B`` rows, label them with the noisy teacher vote (one query each,
   charged to the accountant), one student step on ``BCE(S(u), r)``;
3. one generator step on the non-saturating loss ``BCE(S(G(z)), 1)``.

Subclasses build ``X_`` (teacher-input space), ``teachers`` (:class:`NeuralTeachers`),
``student`` (1-model :class:`BatchedMLP` returning a logit), ``gen_net``, ``sampler``
(:class:`BlockSampler`), ``opt_student``, ``opt_generator`` and implement ``_latent`` and
``_fakes``. The teacher rounds of step 1 are :class:`~.teacher_phase.NeuralRounds` (``teacher_phase_``,
made here from ``teacher_iters``); :func:`~.hyperparameters.paper_sizes` gives the "paper" layer
sizes (implementation notes §utility.paper-hyperparameters).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from .engine import PateGenerator
from .hyperparameters import paper_sizes
from .teacher_phase import NeuralRounds

__all__ = ["NeuralPateGenerator", "paper_sizes"]


class NeuralPateGenerator(PateGenerator):
    """Iteration of borealis / smartnoise / corrected (see the module docstring)."""

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

    def _iteration(self, it: int) -> None:
        self._train_teachers()
        B = self.batch_size_
        for _ in range(int(self.config.student_iters)):
            with torch.no_grad():
                u = self._fakes(self._latent(B, self.train_gen, sampling=False), generator=self.train_gen)
            r = self._label(u)
            self._student_step(u, r)
        self._generator_step()

    @property
    def teacher_phase_(self) -> NeuralRounds:
        """Step 1 as a strategy: ``teacher_iters`` rounds (borealis: real and fake steps apart;
        gnmax: fakes shared by the teachers)."""
        return NeuralRounds(int(self.config.teacher_iters), separate=self._separate_teacher_steps,
                            shared_fakes=self._shared_teacher_fakes)

    def _train_teachers(self) -> None:
        """Step 1: ``n_T`` rounds of one batched teacher step on B own rows and B fakes each."""
        self.teacher_phase_.run(self, 0)

    def _student_step(self, u: torch.Tensor, r: torch.Tensor) -> None:
        """One student step on ``BCE(S(u), r)`` (rows ``u``, released labels ``r``)."""
        loss_s = F.binary_cross_entropy_with_logits(self.student.single(u)[:, 0], r)
        self.opt_student.zero_grad(set_to_none=True)
        loss_s.backward()
        self.opt_student.step()

    def _generator_step(self, batch: int | None = None) -> None:
        """Step 3: one generator step on the non-saturating loss ``BCE(S(G(z)), 1)`` over
        ``batch`` rows (default B)."""
        B = self.batch_size_ if batch is None else int(batch)
        fake = self._fakes(self._latent(B, self.train_gen, sampling=False), generator=self.train_gen)
        loss_g = F.binary_cross_entropy_with_logits(self.student.single(fake)[:, 0], torch.ones(B))
        self.opt_generator.zero_grad(set_to_none=True)
        loss_g.backward()
        self.opt_generator.step()
