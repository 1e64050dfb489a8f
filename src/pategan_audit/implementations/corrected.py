"""corrected: PATE-GAN with every violation and bug of the audit paper fixed (implementation notes §corrected; ``ganev2025elusive`` §7 recommendations).

What it does, item by item (implementation notes §corrected.bounds to §corrected.generation):

1. Bounds (V10-V13): public bounds (``bounds="public"``, ``public_bounds={col: (lo, hi)}``), or
   bounds estimated with ε-DP (``bounds="dp"``: snsql's ``approx_bounds`` noisy power-of-two
   histogram per column, ``bounds_epsilon`` split evenly over the columns, default 10 % of ε)
   and training with ``ε − bounds_epsilon`` (basic composition). Inputs are clipped to them.
2. Partition (V3-V6): k disjoint blocks fixed for the run, matched to the neighbouring
   relation of the guarantee (``neighbours``): ``"add_remove"`` (default; the relation of the
   paper's membership games) assigns each row to a teacher drawn uniformly and independently,
   so adding or removing one row changes one teacher's block and nothing else; a block smaller
   than the teacher batch is drawn from with replacement, an empty one trains on fakes only.
   ``"replace_one"`` cuts one random permutation into balanced blocks (exact when a row is
   swapped in place, not under add/remove: :mod:`~pategan_audit.components.partition`). Either
   way one record moves at most one teacher's vote per query, which is what the accountant
   charges for. Teachers draw real rows only from their own block; the student, the generator
   and the sampler never read real data. (k and B are functions of N, which is treated as
   public, as in every PATE-GAN.)
3. Teachers (B1, B2): k persistent neural teachers, ``teacher_iters`` Adam steps per iteration.
4. Aggregation (V1, V2, V14-V16): PATE's two-noise argmax with independent Lap(1/γ), γ = ``lam``.
5. Accountant (V7-V9): the corrected per-query bound ``min(2γ²l(l+1), 2γl, Thm-3 term if valid)``;
   by default charged data-independently, ``min(2γ²l(l+1), 2γl)`` per query whatever the votes
   (``charging="data_independent"``: (ε, δ)-DP for every dataset, implementation notes §corrected.guarantee;
   ``"data_dependent"`` uses Theorem 3 and gives only a data-dependent guarantee, item 2).
6. Stopping: an iteration runs only if its worst-case cost keeps ε̂ ≤ ε (never overshoots).
7. δ is used as given (a warning if δ ≥ 1/N). 8. Unconditional generation. 9. Output
   inverse-transformed with the bounds, integer columns rounded (``integer_decode="round"``; or
   ``"stochastic"``: up with probability the fractional part, so a column's mean survives the
   rounding, gnmax's default), everything clipped to the bounds. 10. DP noise is never predictable by default: ``seed=None`` (the default here) draws
   every stream from fresh OS entropy at each fit. An integer ``seed`` makes a run reproducible
   for experiments (the audit and the benchmarks pass one per model), but then the noise is a
   function of the seed: whoever knows it can remove the noise, so a seeded release is not DP
   unless the seed stays secret.

Architecture: the [49] column of the audit paper's Table 3 (implementation notes §utility.paper-hyperparameters): teachers ``{1}``
(``teacher_hidden`` adds hidden layers), student ``{d, d, 1}``, generator ``{d, d/2, d}`` with
ReLU and a sigmoid output, latent ``N(0, 1)^d`` at training and generation; Adam lr 1e-4; B =
``min(64, ⌊N/k⌋)``; n_T = n_S = 5. k defaults to ``max(2, ⌊N/1000⌋)`` (the paper's benchmark rule).
Known shortfall (implementation notes §corrected.guarantee): at γ = 1e-3 labels are close to coin flips.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
import torch

from ..components.networks import BatchedMLP, adam
from ..components.partition import BlockSampler, balanced_blocks, independent_blocks
from ..components.scalers import MinMaxScaler, restore_dtypes
from ..components.smartnoise_transformer import approx_bounds
from ..components.teachers import NeuralTeachers
from .engine import PateConfig
from .neural_loop import NeuralPateGenerator

__all__ = ["CorrectedConfig", "Corrected", "dp_bounds"]


@dataclass(frozen=True)
class CorrectedConfig(PateConfig):
    """corrected settings (implementation notes §corrected)."""

    seed: int | None = None
    lam: float = 1e-3
    num_moments: int = 100
    batch_size: int = 64
    accountant: str = "corrected"
    vote_mechanism: str = "two_noise_argmax"
    stopping: str = "safe"
    bounds: str = "public"
    bounds_epsilon: float | None = None
    charging: str = "data_independent"
    teacher_iters: int = 5
    student_iters: int = 5
    learning_rate: float = 1e-4
    teacher_hidden: tuple = ()
    neighbours: str = "add_remove"
    integer_decode: str = "round"

    _choices: ClassVar[dict] = {"bounds": ("public", "dp"), "charging": ("data_independent", "data_dependent"),
                                "neighbours": ("add_remove", "replace_one"), "integer_decode": ("round", "stochastic")}

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.bounds_epsilon is not None and not (0 < self.bounds_epsilon < self.epsilon):
            raise ValueError(f"bounds_epsilon must lie in (0, epsilon={self.epsilon}), got {self.bounds_epsilon}")
        if any(not isinstance(h, (int, np.integer)) or h < 1 for h in self.teacher_hidden):
            raise ValueError(f"teacher_hidden must be a tuple of positive widths, got {self.teacher_hidden!r}")

    @property
    def resolved_bounds_epsilon(self) -> float:
        """ε spent on DP bounds: 0 with public bounds, else ``bounds_epsilon`` (default 0.1·ε)."""
        if self.bounds != "dp":
            return 0.0
        return float(self.bounds_epsilon) if self.bounds_epsilon is not None else 0.1 * float(self.epsilon)


def dp_bounds(df: pd.DataFrame, *, epsilon: float, rng: np.random.Generator) -> dict[str, tuple[float, float]]:
    """ε-DP per-column (lo, hi): snsql's ``approx_bounds`` with ``epsilon / #columns`` each (basic
    composition; a record changes one count of each column's histogram by one). For integer
    columns the (exclusive) upper edge ``h`` of the top bin is lowered to ``ceil(h) − 1``, the
    largest integer the bin holds (post-processing, free): a 0/1 column gets (0, 1)."""
    eps_col = epsilon / df.shape[1]
    out = {}
    for c in df.columns:
        lo, hi = approx_bounds(df[c].to_numpy(dtype=np.float64), epsilon=eps_col, rng=rng)
        if lo is None:
            raise ValueError(f"the DP bounds of column {c!r} found no populated bin; raise bounds_epsilon or pass public bounds")
        if pd.api.types.is_integer_dtype(df[c]) or pd.api.types.is_bool_dtype(df[c]):
            lo, hi = float(np.ceil(lo)), float(np.ceil(hi) - 1.0)  # largest integer strictly below the edge
        out[c] = (float(lo), float(max(hi, lo)))
    return out


class Corrected(NeuralPateGenerator):
    """corrected preset (see the module docstring)."""

    name: ClassVar[str] = "corrected"
    Config: ClassVar[type] = CorrectedConfig

    def _default_num_teachers(self, num_rows: int) -> int:
        return max(2, num_rows // 1000)

    def _epsilon_budget(self) -> float:
        return float(self.config.epsilon) - self.config.resolved_bounds_epsilon

    def charges_worst_case(self) -> bool:
        """``charging="data_independent"``: every query is charged the worst-case increment."""
        return self.config.charging == "data_independent"

    def _setup(self, df: pd.DataFrame, label: str | None) -> None:
        cfg = self.config
        N = len(df)
        if cfg.delta >= 1.0 / N:
            warnings.warn(f"delta={cfg.delta:g} >= 1/N = {1.0 / N:.3g}: a mechanism may leak a record outright; use delta < 1/N",
                          UserWarning, stacklevel=4)
        if cfg.bounds == "public":
            if cfg.public_bounds is None:
                raise ValueError(
                    "corrected never reads bounds from the data: pass public_bounds={column: (lo, hi)} "
                    "(e.g. pategan_audit.datasets.load(name).bounds, treated as public as in the paper) "
                    "or bounds='dp' to estimate them with differential privacy"
                )
            bounds = dict(cfg.public_bounds)
        else:
            bounds = dp_bounds(df, epsilon=cfg.resolved_bounds_epsilon, rng=self.dp_rng)
        self.scaler = MinMaxScaler(feature_range=(0.0, 1.0), clip=True, bounds="public", public_bounds=bounds)
        self.X_ = torch.as_tensor(self.scaler.fit_transform(df), dtype=torch.float32)
        self.trace.bounds = dict(self.scaler.bounds)
        self.trace.extra["bounds_epsilon"] = cfg.resolved_bounds_epsilon
        d = self.X_.shape[1]
        k = self._resolve_num_teachers(N)
        self.num_teachers_ = k
        self.batch_size_ = max(1, min(int(cfg.batch_size), N // k))
        self.model_width_ = d
        init = dict(weight_init="xavier_uniform", bias_init="zero", generator=self.init_gen)
        self.gen_net = BatchedMLP(1, [d, d, max(1, d // 2), d], hidden_activation="relu", output_activation="sigmoid", **init)
        self.student = BatchedMLP(1, [d, d, d, 1], hidden_activation="relu", **init)
        self.teachers = NeuralTeachers(k, [d, *cfg.teacher_hidden, 1], hidden_activation="relu", lr=cfg.learning_rate, **init)
        self.opt_generator = adam(self.gen_net.parameters(), lr=cfg.learning_rate)
        self.opt_student = adam(self.student.parameters(), lr=cfg.learning_rate)
        if cfg.neighbours == "add_remove":
            self.blocks_ = independent_blocks(N, k, rng=self.partition_rng)
            self.sampler = BlockSampler(self.blocks_, small="replace")
        else:
            self.blocks_ = balanced_blocks(N, k, rng=self.partition_rng)
            self.sampler = BlockSampler(self.blocks_)
        self._first_subsets = self.blocks_

    def latent_law(self) -> tuple[str, int, bool]:
        """N(0, 1)^width (implementation notes §corrected.generation)."""
        return "normal", int(self.model_width_), False

    def _latent(self, n: int, gen: torch.Generator, *, sampling: bool) -> torch.Tensor:
        return torch.randn(n, self.model_width_, generator=gen)  # same distribution at training and generation

    def _fakes(self, latent: torch.Tensor, *, generator: torch.Generator | None = None) -> torch.Tensor:
        return self.gen_net.single(latent)

    def _sample(self, n: int, rng: np.random.Generator) -> pd.DataFrame:
        self._rounding_rng = rng  # stochastic rounding reads the sample's stream after the generator's seed
        return super()._sample(n, rng)

    def _decode(self, values: np.ndarray) -> pd.DataFrame:
        out = self.scaler.inverse_transform(values, clip=True)
        for c in out.columns:
            lo, hi = self.scaler.bounds[c]
            col = out[c].to_numpy()
            if pd.api.types.is_integer_dtype(self.dtypes_[c]) or pd.api.types.is_bool_dtype(self.dtypes_[c]):
                col = np.clip(self._round(col), np.ceil(lo), np.floor(hi))  # implementation notes §corrected.generation
            out[c] = np.clip(col, lo, hi)
        return restore_dtypes(out, self.dtypes_)

    def _round(self, col: np.ndarray) -> np.ndarray:
        """Integer columns: nearest integer, or (``integer_decode="stochastic"``) the integer above
        with probability the fractional part, so that ``E[decoded] = col``: a 0/1 label the
        generator puts at 0.3 for every row decodes to about 30 % ones, not to 0 everywhere.
        Post-processing of the generator's output: no privacy cost."""
        if self.config.integer_decode == "round":
            return np.round(col)
        floor = np.floor(col)
        return floor + (self._rounding_rng.random(col.shape) < col - floor)
