"""smartnoise: OpenDP ``smartnoise-sdk`` (snsynth) PATE-GAN (``ganev2025elusive`` §4, Tables 2-3; implementation notes §smartnoise), as
benchmarked by the audit paper (default) or as released (``harness=False`` plus the switches).

Data (implementation notes §smartnoise.data): snsynth's "gan" ``TableTransformer``: every feature min-max mapped to [-1, 1],
the label (``label=`` or the last column) label-encoded and one-hot. Harness: the training
min/max are the bounds (treated as public by the paper, so no Metadata violation is counted);
released: user bounds (``bounds="public"``) or DP bounds (``bounds="dp"``, ``preprocessor_eps``
spent on snsql's ``approx_bounds`` and subtracted from ε; training aborts below 1e-2 left).

Architecture (implementation notes §smartnoise.architecture; upstream float64, here float32): latent 64; residual LayerNorm generator
``{64, 64, D}``; teachers and student ``Linear D→⌊2D/3⌋, LeakyReLU(0.2), →⌊D/3⌋, LeakyReLU(0.2),
→1, Sigmoid`` with Xavier-uniform weights; Adam lr 1e-4; B = 64 (harness ``min(64, ⌊N/k⌋)``).

Loop (implementation notes §smartnoise.partition, §smartnoise.votes, §smartnoise.stopping): ``np.array_split`` blocks in dataset order; ε̂ is checked at the *top* of each
iteration and the first check raises when ε < ln(1/δ)/L; 5 teacher steps, 5 student steps of
B queries ``r = 1[n1 + Lap(1/λ) > k/2]``, one generator step; accountant without the log (V9).
k defaults to ``⌊N/1000⌋`` (hard-coded upstream; an error when that is 0); δ = N^{-3/2} if None.
Generation draws z ~ N(0,1) although training used U(0,1) (O6, ``generation_noise``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
import torch

from ..components.generators import ResidualLayerNormGenerator
from ..components.networks import BatchedMLP, adam
from ..components.partition import BlockSampler, array_split_blocks
from ..components.scalers import restore_dtypes
from ..components.smartnoise_transformer import GanTableTransformer
from ..components.teachers import NeuralTeachers
from .engine import PateConfig
from .hyperparameters import paper_setting, paper_sizes
from .neural_loop import NeuralPateGenerator

__all__ = ["SmartnoiseConfig", "Smartnoise", "RELEASED_OVERRIDES"]

MIN_TRAINING_EPSILON = 1e-2  # snsynth aborts when less than this is left after the bounds


@dataclass(frozen=True)
class SmartnoiseConfig(PateConfig):
    """smartnoise settings; defaults = as benchmarked (paper §5). ``delta=None`` = N^{-3/2}."""

    lam: float = 1e-3
    num_moments: int = 100
    batch_size: int = 64
    accountant: str = "smartnoise"
    teacher_iters: int = 5
    student_iters: int = 5
    latent_dim: int = 64
    binary: bool = False
    learning_rate: float = 1e-4
    generation_noise: str = "normal"
    preprocessor_eps: float = 0.0

    _delta_may_be_none: ClassVar[bool] = True
    _choices: ClassVar[dict] = {"generation_noise": ("normal", "uniform"), "bounds": ("data", "public", "dp")}

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.bounds == "dp" and not self.preprocessor_eps > 0:
            raise ValueError("bounds='dp' estimates bounds with DP; pass preprocessor_eps > 0 (e.g. 0.1)")
        if self.bounds == "dp" and self.preprocessor_eps >= self.epsilon:
            raise ValueError(f"preprocessor_eps={self.preprocessor_eps} must be below epsilon={self.epsilon}")


# as released: k = N // 1000, no iteration cap, no harness min(B, N//k); bounds must be given
RELEASED_OVERRIDES = {"harness": False, "max_iter": None, "delta": None}


class Smartnoise(NeuralPateGenerator):
    """smartnoise preset (see the module docstring)."""

    name: ClassVar[str] = "smartnoise"
    Config: ClassVar[type] = SmartnoiseConfig
    _check_at_top: ClassVar[bool] = True

    def _default_num_teachers(self, num_rows: int) -> int:
        k = num_rows // 1000
        if k < 1:
            raise ValueError(
                f"smartnoise hard-codes num_teachers = N // 1000 = 0 for N = {num_rows} rows and would crash; "
                "pass num_teachers explicitly (the paper uses max(2, N // 1000))"
            )
        return k

    def _delta(self, num_rows: int) -> float:
        return float(self.config.delta) if self.config.delta is not None else float(num_rows) ** -1.5

    def _epsilon_budget(self) -> float:
        left = float(self.config.epsilon) - self.transformer.spent_epsilon
        if left < MIN_TRAINING_EPSILON:
            raise ValueError(self._budget_message(self.transformer.spent_epsilon))
        return left

    def _budget_message(self, spent: float) -> str:
        eps = float(self.config.epsilon)
        if spent > 0:
            return (f"epsilon={eps:g} leaves {eps - spent:.3g} for training after the DP bounds spend preprocessor_eps="
                    f"{spent:g}, below the {MIN_TRAINING_EPSILON:g} smartnoise (snsynth) trains with: raise epsilon "
                    f"or lower preprocessor_eps")
        return (f"epsilon={eps:g} is below {MIN_TRAINING_EPSILON:g}, the least smartnoise (snsynth) trains with; "
                f"pass epsilon >= {MIN_TRAINING_EPSILON:g}")

    def _check_input(self, df: pd.DataFrame, label: str | None) -> None:
        """The base checks, then those that would otherwise fail inside the fit: the training
        budget left after the DP bounds (each non-label column's bound costs its share of
        ``preprocessor_eps``), k = N // 1000, the teacher count against the rows, and the
        default δ = N^{-3/2} (1 for a one-row table)."""
        super()._check_input(df, label)
        cfg = self.config
        target = label if label is not None else df.columns[-1]
        spent = float(cfg.preprocessor_eps) if cfg.bounds == "dp" and any(c != target for c in df.columns) else 0.0
        if float(cfg.epsilon) - spent < MIN_TRAINING_EPSILON:
            raise ValueError(self._budget_message(spent))
        self._resolve_num_teachers(len(df))
        if cfg.delta is None and len(df) < 2:
            raise ValueError(f"delta=None makes smartnoise use delta = N^(-3/2), which is 1 for N = {len(df)} "
                             "training row: pass delta (e.g. delta=1e-5) or train on at least 2 rows")

    def _setup(self, df: pd.DataFrame, label: str | None) -> None:
        cfg = self.config
        self.label_ = label if label is not None else df.columns[-1]
        self.transformer = GanTableTransformer(
            categorical_columns=[self.label_], bounds=cfg.bounds, public_bounds=cfg.public_bounds,
            preprocessor_eps=cfg.preprocessor_eps if cfg.bounds == "dp" else 0.0,
            rng=self.dp_rng if cfg.bounds == "dp" else None,
        )
        X = self.transformer.fit_transform(df)
        self.trace.bounds = dict(self.transformer.bounds)
        self.trace.extra["bounds_epsilon"] = self.transformer.spent_epsilon
        self.X_ = torch.as_tensor(X, dtype=torch.float32)
        N, D = self.X_.shape
        k = self._resolve_num_teachers(N)
        self.num_teachers_ = k
        self.batch_size_ = self._resolve_batch(N, k, needs_full_blocks=True)
        init = dict(weight_init="xavier_uniform", bias_init="torch_default", generator=self.init_gen)
        paper = paper_setting(self.name, cfg)
        if paper is not None:  # deviation: tanh output, the data live in [-1, 1]
            sizes = paper_sizes(latent_dim=cfg.latent_dim, width=D)
            self.gen_net = BatchedMLP(1, sizes["generator"], hidden_activation="relu", output_activation=paper.generator_output, **init)
            teacher_sizes, student_sizes, act = sizes["teacher"], sizes["student"], "relu"
        else:
            self.gen_net = ResidualLayerNormGenerator(cfg.latent_dim, D, binary=cfg.binary, generator=self.init_gen)
            teacher_sizes = student_sizes = [D, max(1, 2 * D // 3), max(1, D // 3), 1]
            act = "leaky_relu:0.2"
        self.student = BatchedMLP(1, student_sizes, hidden_activation=act, **init)
        self.teachers = NeuralTeachers(k, teacher_sizes, hidden_activation=act, lr=cfg.learning_rate, **init)
        self.opt_generator = adam(self.gen_net.parameters(), lr=cfg.learning_rate)
        self.opt_student = adam(self.student.parameters(), lr=cfg.learning_rate)
        self.blocks_ = array_split_blocks(N, k)
        self.sampler = BlockSampler(self.blocks_)
        self._first_subsets = self.blocks_
        self.model_width_ = D

    def latent_law(self) -> tuple[str, int, bool]:
        """U[0, 1)^latent_dim (implementation notes §smartnoise.architecture)."""
        return "uniform", int(self.config.latent_dim), False

    def _latent(self, n: int, gen: torch.Generator, *, sampling: bool) -> torch.Tensor:
        if sampling and self.config.generation_noise == "normal":
            return torch.randn(n, self.config.latent_dim, generator=gen)  # O6
        return torch.rand(n, self.config.latent_dim, generator=gen)

    def _fakes(self, latent: torch.Tensor, *, generator: torch.Generator | None = None) -> torch.Tensor:
        out = self.gen_net(latent)
        return out[0] if out.dim() == 3 else out

    def _decode(self, values: np.ndarray) -> pd.DataFrame:
        out = self.transformer.inverse_transform(values)[self.columns_]
        return restore_dtypes(out, self.dtypes_) if self.config.harness else out
