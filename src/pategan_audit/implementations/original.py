"""original: the first public PATE-GAN (bitbucket ``mvdschaar/mlforhealthlabpub:alg/pategan``),
implementation notes §original.loop, as benchmarked by the audit paper (default) or as released.

No PATE at all (V1): a single WGAN-GP critic trained for a fixed number of iterations
(:mod:`.wgan`), critic batches drawn from all rows (V3), Gaussian noise on the real/fake
indicator labels (V14) with the scale ``sqrt(2 ln(1.25 (10 XOR delta)))/epsilon`` where delta
is the integer exponent (V17: ``10 ^ 5 = 15``, sigma = 2.421236772 at epsilon = 1), min/max
scaling from the training data (V10) and, as released, generation conditioned on the real
training labels, which are returned as the synthetic labels (V19).

Pre/post-processing (implementation notes §original.data): ``X' = (X - m)/(R + 1e-8)`` (:class:`OriginalScaler`); output
``G(z)(R + 1e-8) + m``; the harness rounds integer columns (implementation notes §data.postprocessing,
:func:`restore_dtypes`); released output is left as floats.

Conditional mode (``conditional=True``, Table 6 / V19): the label column (``label`` passed to
``fit``, else the last column) is removed from the scaled features and fed raw to the generator
and the critic; ``sample(n)`` feeds the training label vector. For ``n = N`` it is ``Y_train``
in training order, exactly as released; for other ``n`` it is ``n // N`` full copies of
``Y_train`` followed by ``n mod N`` labels drawn without replacement from it (the sample's own
random stream), so the label multiset is the training one scaled as closely as possible.

delta: the config takes delta as a probability (1e-5); the ``"xor_exponent"`` mode converts it
to the integer exponent ``int(-log10 delta)`` (= 5) as the audit harness does.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
import torch

from ..accounting import gaussian_label_noise_sigma
from ..components.scalers import OriginalScaler, restore_dtypes
from .wgan import WganConfig, WganGenerator

__all__ = ["OriginalConfig", "Original", "RELEASED_OVERRIDES", "delta_exponent"]


@dataclass(frozen=True)
class OriginalConfig(WganConfig):
    """original settings; defaults = as benchmarked (paper §5: 10,000 iterations, unconditional).

    delta_mode: "xor_exponent" (V17, released) or "textbook" (``sqrt(2 ln(1.25/delta))/epsilon``).
    conditional: False (harness) or True (released, V19; Table 6 "Conditional").
    """

    batch_size: int = 128
    delta_mode: str = "xor_exponent"
    conditional: bool = False

    _delta_modes: ClassVar[tuple[str, ...]] = ("xor_exponent", "textbook")


# as released (PATE_GAN.py + driver): B = 128 uncapped, conditional on Y_train, float output
RELEASED_OVERRIDES = {"harness": False, "conditional": True}


def delta_exponent(delta: float) -> int:
    """The integer exponent the harness passes to original: ``int(-log10 delta)`` (5 for 1e-5);
    values within 1e-9 of an integer are rounded first to absorb floating-point error."""
    x = -math.log10(delta)
    return int(round(x)) if abs(x - round(x)) < 1e-9 else int(x)


class Original(WganGenerator):
    """original preset (see the module docstring)."""

    name: ClassVar[str] = "original"
    Config: ClassVar[type] = OriginalConfig

    def _default_num_teachers(self) -> int:
        return 5  # driver --teachers 5

    def _default_max_iter(self) -> int:
        return 10_000  # driver --iter 10000

    def _gp_weight(self, k: int) -> float:
        return 10.0

    def _sigma(self) -> float:
        cfg = self.config
        if not math.isfinite(cfg.epsilon):
            return 0.0
        if cfg.delta_mode == "xor_exponent":
            return gaussian_label_noise_sigma("original", epsilon=cfg.epsilon, delta=delta_exponent(cfg.delta))
        return gaussian_label_noise_sigma("textbook", epsilon=cfg.epsilon, delta=cfg.delta)

    def _prepare(self, df: pd.DataFrame, label: str | None) -> None:
        cfg = self.config
        if cfg.conditional:
            self.label_ = label if label is not None else df.columns[-1]
            y = df[self.label_].to_numpy(dtype=np.float64)
            self.features_ = [c for c in df.columns if c != self.label_]
            if not self.features_:
                raise ValueError("conditional=True needs at least one feature column besides the label")
            self.cond_ = torch.as_tensor(y, dtype=torch.float32)
            self.train_labels_ = df[self.label_].to_numpy().copy()
        else:
            self.label_ = label
            self.features_ = list(df.columns)
            self.cond_ = None
        public = None
        if cfg.public_bounds is not None:
            public = {c: cfg.public_bounds[c] for c in self.features_ if c in cfg.public_bounds}
        self.scaler = OriginalScaler(bounds=cfg.bounds, public_bounds=public)
        self.X_ = torch.as_tensor(self.scaler.fit_transform(df[self.features_]), dtype=torch.float32)
        self.trace.bounds = dict(self.scaler.bounds)

    def critic_score(self, rows: pd.DataFrame) -> np.ndarray:
        """White-box hook for target selection (implementation notes §audit.target, the authors'
        ``sd_predict``): the critic's raw output on ``rows`` mapped with the fitted scaler
        (conditional models feed each row's own label)."""
        if not self.fitted_:
            raise RuntimeError("original: call fit() before critic_score()")
        x = torch.as_tensor(self.scaler.transform(rows[self.features_]), dtype=torch.float32)
        if self.cond_ is not None:
            y = torch.as_tensor(rows[self.label_].to_numpy(dtype=np.float64), dtype=torch.float32)
            x = self._with_cond(x, y)
        with torch.no_grad():
            return self.D(x)[:, 0].to(torch.float64).numpy()

    def conditional_labels(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """The label vector fed to the generator for ``n`` rows (see the module docstring)."""
        y = self.train_labels_
        reps, rest = divmod(n, len(y))
        extra = y[rng.choice(len(y), size=rest, replace=False)] if rest else y[:0]
        return np.concatenate([np.tile(y, reps), extra])

    def _sample(self, n: int, rng: np.random.Generator) -> pd.DataFrame:
        gen = torch.Generator().manual_seed(int(rng.integers(2**62)))
        cond = None
        if self.config.conditional:
            labels = self.conditional_labels(n, rng)
            cond = torch.as_tensor(labels.astype(np.float64), dtype=torch.float32)
        values = self._generate(n, cond, gen)
        out = self.scaler.inverse_transform(values)
        if self.config.conditional:
            out[self.label_] = labels
        out = out[self.columns_]
        return restore_dtypes(out, self.dtypes_) if self.config.harness else out
