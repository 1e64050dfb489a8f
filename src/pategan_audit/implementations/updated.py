"""updated: the 2020 ``mlforhealthlabpub`` PATE-GAN by the original authors (``ganev2025elusive`` §4, Tables 2-3; implementation notes §updated), as benchmarked by the audit paper (default) or as released (``harness=False`` + switches).

Data (implementation notes §updated.data): every column min-max scaled to [0, 1] (scikit-learn ``MinMaxScaler(clip=True)``
fitted on the training data: V11); the harness inverse-transforms the output, the release does
not (B3). Architecture (implementation notes §updated.architecture; He-normal init, zero bias): ``z ~ U(-1, 1)^d``; generator
``d→4d tanh →4d tanh →d sigmoid``; student (a WGAN critic) ``d→d ReLU →1`` with its weights
clipped to [-0.01, 0.01] after each step; TF1 RMSProp, lr 1e-4; B = 64 (harness ``min(64, ⌊N/k⌋)``).

Loop (implementation notes §updated.partition, §updated.votes, §updated.accountant): a random permutation cut into k blocks of ``m = ⌊N/k⌋``; every iteration k
*new* logistic-regression teachers (B1) are fitted on ``m`` real rows and ``m`` generated rows,
and every one of them fits on the **last** block (V4, the stale loop index); ``n_s = 1`` student
step on B rows labelled ``r = 1[(n1 + Lap(λ))/k > 0.5]`` (scale λ while the accountant assumes
1/λ: V15); one generator step; Alg. 1's accountant with L = 20. That iteration is the replica step
:class:`~pategan_audit.replicas.updated.UpdatedStep`: ``fit`` runs it at R = 1
(:func:`~pategan_audit.replicas.loop.fit_one`), ``fit_many`` at any R, so a single fit and a
replica of a batched fit are one code path.

Switches: ``partition`` (V4: "last_block" -> "disjoint"), ``bounds`` (V11), ``laplace_scale_convention``
(V15: "scale_lambda" -> "inverse_lambda"), ``teacher_model`` (B1: "logistic_refit" ->
"neural_persistent": k persistent networks ``d→d ReLU→1`` trained ``teacher_iters`` Adam steps per
iteration on B rows of their block), ``inverse_transform`` (B3), plus the common switches.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
import torch

from ..components.generators import TF1RMSProp
from ..components.networks import BatchedMLP, adam
from ..components.partition import BlockSampler, assign_blocks, permutation_blocks
from ..components.scalers import MinMaxScaler, restore_dtypes
from ..replicas.loop import fit_one
from ..replicas.updated import UpdatedStep
from .engine import PateConfig, PateGenerator
from .hyperparameters import paper_setting, paper_sizes, resolved
from .teacher_phase import block_rows, teacher_phase

__all__ = ["UpdatedConfig", "Updated", "RELEASED_OVERRIDES"]


@dataclass(frozen=True)
class UpdatedConfig(PateConfig):
    """updated settings; defaults = as benchmarked (paper §5: λ = 1e-3, max_iter 10,000)."""

    lam: float = 1e-3
    num_moments: int = 20
    batch_size: int = 64
    accountant: str = "updated"
    student_iters: int = 1
    teacher_iters: int = 5
    learning_rate: float = 1e-4
    partition: str = "last_block"
    teacher_model: str = "logistic_refit"
    laplace_scale_convention: str = "scale_lambda"
    inverse_transform: bool = True

    _choices: ClassVar[dict] = {
        "partition": ("last_block", "disjoint"),
        "teacher_model": ("logistic_refit", "neural_persistent"),
        "laplace_scale_convention": ("scale_lambda", "inverse_lambda"),
    }


# as released (main_pategan_experiment.py): λ = 1, no cap, output left in [0, 1]
RELEASED_OVERRIDES = {"harness": False, "lam": 1.0, "max_iter": None, "inverse_transform": False}


class Updated(PateGenerator):
    """updated preset (see the module docstring)."""

    name: ClassVar[str] = "updated"
    Config: ClassVar[type] = UpdatedConfig

    def _constant_column_effect(self, constants: dict[str, float], label: str | None) -> str | None:
        """V11's ``MinMaxScaler`` gives a zero range scale 1 (scikit-learn's rule), so a constant c
        encodes as 0 and the generator's sigmoid output v decodes to c + v (B3 aside)."""
        if not self.config.inverse_transform:
            return None  # B3: every column comes back in (0, 1), constant or not
        return ("updated's MinMaxScaler gives a zero range the scale 1 (scikit-learn's rule), so a constant c is "
                "encoded as 0 and the generator's output v in (0, 1) decodes to c + v: values in [c, c + 1] "
                "(integer columns rounded to c or c + 1), not c")

    def laplace_scale(self) -> float:
        lam = float(self.config.lam)
        return lam if self.config.laplace_scale_convention == "scale_lambda" else 1.0 / lam

    def student_steps(self) -> int:
        """n_S: ``student_iters``, or the "paper" row's (:mod:`.hyperparameters`)."""
        return int(resolved(paper_setting(self.name, self.config), "student_rounds", self.config.student_iters))

    def _queries_per_iteration(self) -> int:
        return self.student_steps() * int(self.batch_size_)

    def _setup(self, df: pd.DataFrame, label: str | None) -> None:
        cfg = self.config
        self.scaler = MinMaxScaler(feature_range=(0.0, 1.0), clip=True, bounds=cfg.bounds, public_bounds=cfg.public_bounds)
        self.X_ = torch.as_tensor(self.scaler.fit_transform(df), dtype=torch.float32)
        self.trace.bounds = dict(self.scaler.bounds)
        N, d = self.X_.shape
        k = self._resolve_num_teachers(N)
        self.num_teachers_ = k
        self.batch_size_ = self._resolve_batch(N, k, needs_full_blocks=False)
        self.model_width_ = d
        init = dict(weight_init="he_normal", bias_init="zero", generator=self.init_gen)
        paper = paper_setting(self.name, cfg)
        if paper is not None:
            sizes = paper_sizes(latent_dim=d, width=d)
            self.gen_net = BatchedMLP(1, sizes["generator"], hidden_activation="relu", output_activation=paper.generator_output, **init)
            self.student = BatchedMLP(1, sizes["student"], hidden_activation="relu", **init)
            self.opt_generator = adam(self.gen_net.parameters(), lr=cfg.learning_rate)
            self.opt_student = adam(self.student.parameters(), lr=cfg.learning_rate)
        else:
            self.gen_net = BatchedMLP(1, [d, 4 * d, 4 * d, d], hidden_activation="tanh", output_activation="sigmoid", **init)
            self.student = BatchedMLP(1, [d, d, 1], hidden_activation="relu", **init)
            self.opt_generator = TF1RMSProp(self.gen_net.parameters(), lr=cfg.learning_rate)
            self.opt_student = TF1RMSProp(self.student.parameters(), lr=cfg.learning_rate)
        self.blocks_ = permutation_blocks(N, k, rng=self.partition_rng)
        self.teacher_blocks_ = assign_blocks(self.blocks_, cfg.partition)
        self._first_subsets = self.teacher_blocks_
        self.teacher_phase_ = teacher_phase(cfg.teacher_model, rounds=resolved(paper, "teacher_rounds", cfg.teacher_iters))
        self.teachers = self.teacher_phase_.make_teachers(k, [d, 1] if paper is not None else [d, d, 1], hidden_activation="relu",
                                                          lr=cfg.learning_rate, **init)
        if cfg.teacher_model == "logistic_refit":
            self.block_table_ = block_rows(self.teacher_blocks_)  # [k, m]
        else:
            self.sampler = BlockSampler(self.teacher_blocks_)
        self.trace.extra["teacher_refits"] = 0

    def _latent(self, n: int, gen: torch.Generator, *, sampling: bool) -> torch.Tensor:
        return torch.rand(n, self.model_width_, generator=gen) * 2.0 - 1.0  # U(-1, 1)^d

    def _fakes(self, latent: torch.Tensor, *, generator: torch.Generator | None = None) -> torch.Tensor:
        return self.gen_net.single(latent)

    # -- the teacher phase (:mod:`.teacher_phase`) --------------------------------------------------
    def _refit_rows(self, it: int) -> torch.Tensor:
        """B1: every teacher fits on all m rows of its block (upstream: shuffled; V4: the last block)."""
        return self.block_table_

    def _after_refit(self, rows: torch.Tensor) -> None:
        self.trace.extra["teacher_refits"] += 1

    def _fit(self, df: pd.DataFrame, label: str | None) -> None:
        """The fit: :class:`UpdatedStep` at R = 1 through the replica loop."""
        fit_one(self, df, label, UpdatedStep)

    def _decode(self, values: np.ndarray) -> pd.DataFrame:
        if not self.config.inverse_transform:  # B3: the released output stays in (0, 1)
            return pd.DataFrame(values, columns=self.columns_)
        out = self.scaler.inverse_transform(values)
        return restore_dtypes(out, self.dtypes_) if self.config.harness else out
