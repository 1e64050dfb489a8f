"""borealis: BorealisAI ``private-data-generation`` PATE-GAN (``ganev2025elusive`` §4, Tables 2-3; implementation notes §borealis), as
benchmarked by the audit paper (default) or as released (``harness=False`` plus the switches).

Architecture (implementation notes §borealis.architecture; upstream float64, here float32): ``d_x`` features plus the label ``y``;
``z_dim = ⌊d_x/4⌋ + [d_x mod 4 = 0]`` (harness: at least 1); generator
``Linear(z_dim → 2·z_dim), ReLU, Linear(→ d_x + 1)`` with a *linear* output; teachers and
student ``Linear(d_x + 1 → ⌊d_x/2⌋), ReLU, Linear(→ 1), Sigmoid``; Xavier-uniform weights,
bias 0.01; Adam lr 1e-4 per network; B = 64 (harness ``min(64, ⌊N/k⌋)``).

Loop (implementation notes §borealis.partition, §borealis.votes): contiguous disjoint blocks in dataset order; ``n_T = 5`` teacher rounds (a real
step then a fake step per teacher, as the upstream loop does), ``n_S = 5`` student rounds of B
queries with ``r = 1[n1 + Lap(1/λ) > k/2]``, one generator step; accountant without the log
(V8, ``accountant="borealis"``), λ = 1e-4, L = 100.

Switches: ``accountant`` (V8 -> "paper"), ``bounds`` (V13 -> "public"), ``inverse_transform``
(B5: False = raw generator output as released), ``conditional`` (O5: True = labels drawn from
the exact training class ratios, the released default for classification), ``generation_noise``
(O6: "normal" = N(0,1) at generation although training used U(0,1); "uniform" fixes it).
Deviation: a summary of the loop would say one Adam step per teacher round; the upstream loop (``models/pate_gan.py``) takes two
(real, then fake), which we follow.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
import torch

from ..components.networks import BatchedMLP, adam
from ..components.partition import BlockSampler, contiguous_blocks
from ..components.scalers import MinMaxScaler, restore_dtypes
from ..components.teachers import NeuralTeachers
from .engine import PateConfig
from .hyperparameters import paper_setting, paper_sizes
from .neural_loop import NeuralPateGenerator

__all__ = ["BorealisConfig", "Borealis", "RELEASED_OVERRIDES"]


@dataclass(frozen=True)
class BorealisConfig(PateConfig):
    """borealis settings; defaults = as benchmarked (paper §5: λ = 1e-4, max_iter 10,000)."""

    lam: float = 1e-4
    num_moments: int = 100
    batch_size: int = 64
    accountant: str = "borealis"
    teacher_iters: int = 5
    student_iters: int = 5
    learning_rate: float = 1e-4
    inverse_transform: bool = True
    conditional: bool = False
    generation_noise: str = "normal"

    _choices: ClassVar[dict] = {"generation_noise": ("normal", "uniform")}


# as released (evaluate.py): no cap, raw output, conditional for classification
RELEASED_OVERRIDES = {"harness": False, "max_iter": None, "inverse_transform": False, "conditional": True}


class Borealis(NeuralPateGenerator):
    """borealis preset (see the module docstring)."""

    name: ClassVar[str] = "borealis"
    Config: ClassVar[type] = BorealisConfig
    _separate_teacher_steps = True

    def _constant_column_effect(self, constants: dict[str, float], label: str | None) -> str | None:
        """The ``MinMaxScaler`` gives a zero range scale 1, so a constant c encodes as 0 and the
        output, clipped to [0, 1] before the inverse, decodes to c + v (B5 aside)."""
        if not self.config.inverse_transform:
            return None  # B5: the raw generator output is released for every column
        return ("borealis' MinMaxScaler gives a zero range the scale 1 (scikit-learn's rule), so a constant c is "
                "encoded as 0 and the generator's output v, clipped to [0, 1], decodes to c + v: values in "
                "[c, c + 1] (integer columns rounded to c or c + 1), not c")

    def _setup(self, df: pd.DataFrame, label: str | None) -> None:
        cfg = self.config
        self.label_ = label if label is not None else df.columns[-1]
        self.order_ = [c for c in df.columns if c != self.label_] + [self.label_]
        self.scaler = MinMaxScaler(feature_range=(0.0, 1.0), clip=True, bounds=cfg.bounds, public_bounds=cfg.public_bounds)
        X = self.scaler.fit_transform(df[self.order_])
        self.trace.bounds = dict(self.scaler.bounds)
        self.X_ = torch.as_tensor(X, dtype=torch.float32)
        N, D = self.X_.shape
        d_x = D - 1
        k = self._resolve_num_teachers(N)
        self.num_teachers_ = k
        self.batch_size_ = self._resolve_batch(N, k, needs_full_blocks=True)
        z_dim = d_x // 4 + int(d_x % 4 == 0)
        if z_dim < 1:
            if not cfg.harness:
                raise ValueError(f"borealis as released has z_dim = 0 for {d_x} features; use harness=True (z_dim >= 1)")
            z_dim = 1
        self.z_dim_ = z_dim
        if cfg.conditional:
            y = X[:, -1]
            self.class_values_, counts = np.unique(y, return_counts=True)
            self.class_ratios_ = torch.as_tensor(counts / counts.sum(), dtype=torch.float64)
        cond = int(cfg.conditional)
        hidden = max(1, d_x // 2)  # upstream int(d_x / 2); 0 would crash, deviation: at least 1
        init = dict(weight_init="xavier_uniform", bias_init=0.01, generator=self.init_gen)
        paper = paper_setting(self.name, cfg)
        if paper is not None:
            sizes = paper_sizes(latent_dim=z_dim + cond, width=D)
            gen_sizes = sizes["generator"][:-1] + [D - cond]
            teacher_sizes, student_sizes, g_out = sizes["teacher"], sizes["student"], paper.generator_output
        else:
            gen_sizes = [z_dim + cond, 2 * z_dim, D - cond]
            teacher_sizes = student_sizes = [D, hidden, 1]
            g_out = "identity"
        self.gen_net = BatchedMLP(1, gen_sizes, hidden_activation="relu", output_activation=g_out, **init)
        self.student = BatchedMLP(1, student_sizes, hidden_activation="relu", **init)
        self.teachers = NeuralTeachers(k, teacher_sizes, hidden_activation="relu", lr=cfg.learning_rate, **init)
        self.opt_generator = adam(self.gen_net.parameters(), lr=cfg.learning_rate)
        self.opt_student = adam(self.student.parameters(), lr=cfg.learning_rate)
        self.blocks_ = contiguous_blocks(N, k)
        self.sampler = BlockSampler(self.blocks_)
        self._first_subsets = self.blocks_
        self.model_width_ = D

    def latent_law(self) -> tuple[str, int, bool]:
        """U[0, 1)^z_dim, then the class when conditional (implementation notes §borealis.architecture)."""
        return "uniform", int(self.z_dim_), bool(self.config.conditional)

    def _latent(self, n: int, gen: torch.Generator, *, sampling: bool) -> torch.Tensor:
        if sampling and self.config.generation_noise == "normal":
            z = torch.randn(n, self.z_dim_, generator=gen)  # O6: N(0,1) at generation
        else:
            z = torch.rand(n, self.z_dim_, generator=gen)
        if not self.config.conditional:
            return z
        idx = torch.multinomial(self.class_ratios_, n, replacement=True, generator=gen)
        c = torch.as_tensor(self.class_values_, dtype=torch.float32)[idx]
        return torch.cat([z, c[:, None]], dim=1)

    def _fakes(self, latent: torch.Tensor, *, generator: torch.Generator | None = None) -> torch.Tensor:
        out = self.gen_net.single(latent)
        if self.config.conditional:  # teachers and student see [G(z, c); c]
            out = torch.cat([out, latent[:, -1:]], dim=1)
        return out

    def _decode(self, values: np.ndarray) -> pd.DataFrame:
        if not self.config.inverse_transform:  # B5: raw, unbounded generator output
            return pd.DataFrame(values, columns=self.order_)[self.columns_]
        out = self.scaler.inverse_transform(values, clip=True)[self.columns_]
        return restore_dtypes(out, self.dtypes_) if self.config.harness else out
