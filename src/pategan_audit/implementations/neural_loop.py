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
``_fakes``. :func:`paper_sizes` gives the "paper" hyperparameters (implementation notes §utility.paper-hyperparameters).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from .engine import PateGenerator

__all__ = ["NeuralPateGenerator", "paper_sizes"]


def paper_sizes(*, latent_dim: int, width: int) -> dict[str, list[int]]:
    """Layer sizes of the [49] column of the audit paper's Table 3 (implementation notes §utility.paper-hyperparameters): 1-layer
    teachers ``{1}``, 3-layer student ``{d, d, 1}``, generator ``{d, d/2, d}``; ``width`` is the
    model-space width D. Deviation: [49] gives no student widths; we use D."""
    d = int(width)
    return {"teacher": [d, 1], "student": [d, d, d, 1], "generator": [int(latent_dim), d, max(1, d // 2), d]}


class NeuralPateGenerator(PateGenerator):
    """Iteration of borealis / smartnoise / corrected (see the module docstring)."""

    _separate_teacher_steps: bool = False  # borealis: real step, then fake step

    def _queries_per_iteration(self) -> int:
        return int(self.config.student_iters) * int(self.batch_size_)

    def _iteration(self, it: int) -> None:
        self._train_teachers()
        B = self.batch_size_
        for _ in range(int(self.config.student_iters)):
            with torch.no_grad():
                u = self._fakes(self._latent(B, self.train_gen, sampling=False), generator=self.train_gen)
            r = self._label(u)
            self._student_step(u, r)
        self._generator_step()

    def _train_teachers(self) -> None:
        """Step 1: ``n_T`` rounds of one batched teacher step on B own rows and B fakes each."""
        k, B = self.num_teachers_, self.batch_size_
        for _ in range(int(self.config.teacher_iters)):
            rows = self.sampler.sample(B, generator=self.train_gen)
            has_rows = self.sampler.has_rows
            empty = not bool(has_rows.all())  # only under independent assignment
            self._record_seen([r if h else r[:0] for r, h in zip(rows.numpy(), has_rows.tolist())] if empty else rows)
            real = self._teacher_rows_input(rows.reshape(-1).numpy()).reshape(k, B, -1)
            with torch.no_grad():
                fake = self._fakes(self._latent(k * B, self.train_gen, sampling=False), generator=self.train_gen)
            self.teachers.train_step(real, fake.reshape(k, B, -1), separate=self._separate_teacher_steps,
                                     real_weight=has_rows.float() if empty else None)

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
