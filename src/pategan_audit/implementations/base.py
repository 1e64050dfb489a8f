"""What every generator in this package shares: config handling, input validation, seeding,
introspection (the audit harness's hooks, implementation notes §violations.catalogue) and the fit/sample API.

A preset is a frozen config dataclass (every setting and every violation switch is a field)
plus a :class:`BaseGenerator` subclass that implements ``_fit`` and ``_sample``. The public
entry point is :func:`pategan_audit.implementations.create`.
"""
from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterator

import numpy as np
import pandas as pd

__all__ = ["BaseConfig", "TrainingTrace", "BaseGenerator", "ConstantColumnWarning", "validate_frame", "validate_privacy",
           "validate_seed",
           "flush_denormal_requested", "training_threads"]


@contextlib.contextmanager
def training_threads() -> Iterator[None]:
    """Run training with the torch threads and denormal flushing of the run options in force
    (``RunOptions.train_threads``, default 1; ``RunOptions.flush_denormal``, default off); every
    generator's ``fit`` and ``sample`` run under it (both engines, the replica axis too).

    The networks are tiny (widths of tens to hundreds): an intra-op thread pool only adds
    synchronisation (measured: a [5, 64, 29] batched matmul takes 13 µs on one thread and up to
    0.9 ms on two busy cores). Parallelism belongs across models (``runner.parallel_map``)."""
    import torch

    from ..runner import current_options

    options = current_options()
    wanted = options.train_threads
    before = torch.get_num_threads()
    if wanted != before:
        torch.set_num_threads(wanted)
    try:
        from threadpoolctl import threadpool_limits  # BLAS/OpenMP of numpy and scikit-learn (encoders)

        limits = threadpool_limits(wanted)
    except Exception:  # pragma: no cover - threadpoolctl ships with scikit-learn
        limits = contextlib.nullcontext()
    flush = options.flush_denormal
    if flush:
        torch.set_flush_denormal(True)
    try:
        with limits:
            yield
    finally:
        if flush:
            torch.set_flush_denormal(False)
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)


def flush_denormal_requested() -> bool:
    """Whether the run options in force (``RunOptions.flush_denormal``) ask training to flush
    denormal floats to zero (``torch.set_flush_denormal``).

    Off by default. On a CPU, arithmetic on denormal numbers (magnitudes below ~1.2e-38 in
    float32) is many times slower than on normal ones, and synthcity's generator produces more
    of them as it trains (saturating Gumbel-softmax heads and vanishing gradients): measured on
    MNIST resumed at iteration 172, 36 s per iteration as IEEE arithmetic, 6.3 s with denormals
    flushed. Flushing changes numbers at the level of rounding (values below 1.2e-38 become 0),
    amplified by training as a change of device is, so the same seed gives the same numbers only
    under the same setting; archives record it (``flush_denormal`` in ``meta.json``)."""
    from ..runner import current_options

    return current_options().flush_denormal


class ConstantColumnWarning(UserWarning):
    """A preset decodes a constant column to values other than its constant (said at fit time;
    the samples stay as the paper benchmarked them)."""


@dataclass(frozen=True)
class BaseConfig:
    """Settings common to all presets.

    epsilon, delta: the privacy target (delta in (0, 1)); presets that ignore or reinterpret
    delta (synthcity V/O10, original V17) say so in their own config.
    seed: all randomness of a fit (init, partitions, noise, latent draws) derives from it;
        None = fresh entropy from the operating system on every fit (the default of ``corrected``,
        whose DP noise must not be predictable: a known seed makes the noise known, hence no DP).
    max_iter: iteration cap (None = as the preset's upstream does).
    record: keep the full per-query introspection (votes, noise, labels); costs memory.
    """

    epsilon: float = 1.0
    delta: float = 1e-5
    seed: int | None = 0
    max_iter: int | None = None
    record: bool = True


@dataclass
class TrainingTrace:
    """Introspection of one fit (implementation notes §violations.catalogue, "test hooks").

    teacher_rows: for each teacher (or critic-step slot of original/turing), the set of
        training-row positions (0..N-1 in the frame passed to ``fit``) it consumed.
    votes: per iteration, an int array of n1 (= votes for "real") per query; n0 = k - n1.
    noise: per iteration, the Laplace/Gaussian draws added for those queries.
    labels: per iteration, the released (noisy) labels for those queries.
    alpha: per iteration, the accountant's moment vector alpha(l), l = 1..L, after it.
    eps_hat: per iteration, the accountant's epsilon-hat after it.
    iterations: number of iterations run.
    bounds: the scaling bounds / encoder metadata the model fitted ({column: (lo, hi)}).
    extra: preset-specific records (e.g. synthcity skipped batches, teacher object ids).
    """

    teacher_rows: list[set[int]] = field(default_factory=list)
    votes: list[np.ndarray] = field(default_factory=list)
    noise: list[np.ndarray] = field(default_factory=list)
    labels: list[np.ndarray] = field(default_factory=list)
    alpha: list[np.ndarray] = field(default_factory=list)
    eps_hat: list[float] = field(default_factory=list)
    iterations: int = 0
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


def validate_seed(seed) -> None:
    """A seed is an integer >= 0 or None (fresh OS entropy)."""
    if seed is None:
        return
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer or None (fresh OS entropy), got {seed!r}")


def validate_privacy(epsilon: float, delta: float | None, *, delta_may_be_none: bool = False) -> None:
    """Raise a ValueError that says what is wrong and how to fix it."""
    if (isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.floating, np.integer))
            or not np.isfinite(epsilon) and epsilon != np.inf):
        raise ValueError(f"epsilon must be a positive number, got {epsilon!r}; pass e.g. epsilon=1.0")
    if epsilon <= 0:
        raise ValueError(f"epsilon must be > 0 (got {epsilon}); pass e.g. epsilon=1.0")
    if delta is None:
        if delta_may_be_none:
            return
        raise ValueError("delta must be a number in (0, 1); pass e.g. delta=1e-5")
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.floating, np.integer)):
        raise ValueError(f"delta must be a number in (0, 1), got {delta!r} (a {type(delta).__name__}); pass e.g. delta=1e-5")
    if not (0 < float(delta) < 1):
        raise ValueError(f"delta must lie in (0, 1) (got {delta}); pass e.g. delta=1e-5, ideally < 1/N")


def validate_frame(df: Any, label: str | None = None) -> pd.DataFrame:
    """Check a training table: a non-empty DataFrame of finite numeric columns."""
    if isinstance(df, np.ndarray):
        raise TypeError("fit() takes a pandas DataFrame; wrap arrays with pd.DataFrame(x, columns=[...])")
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"fit() takes a pandas DataFrame, got {type(df).__name__}")
    if len(df) == 0 or df.shape[1] == 0:
        raise ValueError("the training table is empty; pass at least one row and one column")
    bad = [c for c in df.columns if not (pd.api.types.is_numeric_dtype(df[c]) or pd.api.types.is_bool_dtype(df[c]))]
    if bad:
        raise ValueError(
            f"non-numeric columns {bad[:5]}{'...' if len(bad) > 5 else ''}: PATE-GAN implementations take numeric "
            "tables only; encode categories as integers first (e.g. df[c] = df[c].astype('category').cat.codes)"
        )
    values = df.to_numpy(dtype=float)
    if np.isnan(values).any():
        cols = [c for c in df.columns if df[c].isna().any()]
        raise ValueError(f"NaN values in columns {cols[:5]}; impute or drop them before fit() (e.g. df.fillna(df.mode().iloc[0]))")
    if not np.isfinite(values).all():
        raise ValueError("infinite values in the training table; clip or drop them before fit()")
    if label is not None and label not in df.columns:
        raise ValueError(f"label {label!r} is not a column of the training table; columns are {list(df.columns)[:8]}...")
    return df


class BaseGenerator:
    """fit/sample API shared by the seven presets.

    Subclasses set ``name`` and ``Config`` and implement ``_fit(df, label)`` and
    ``_sample(n, rng)``. ``callbacks`` are called as ``cb(model, iteration)`` after every
    training iteration (used by :mod:`pategan_audit.traces`).
    """

    name: ClassVar[str] = "base"
    Config: ClassVar[type[BaseConfig]] = BaseConfig

    def __init__(self, config: BaseConfig):
        if not isinstance(config, self.Config):
            raise TypeError(f"{type(self).__name__} needs a {self.Config.__name__}, got {type(config).__name__}")
        self.config = config
        self.trace = TrainingTrace()
        self.callbacks: list[Callable[["BaseGenerator", int], None]] = []
        self.columns_: list[str] | None = None
        self.dtypes_: pd.Series | None = None
        self.fitted_ = False
        self._sample_calls = 0

    # -- public API -------------------------------------------------------------------------
    def fit(self, df: pd.DataFrame, label: str | None = None) -> "BaseGenerator":
        frame = self._accept(df, label)
        with training_threads():
            self._fit(frame, label)
        self.fitted_ = True
        return self

    def _accept(self, df: pd.DataFrame, label: str | None) -> pd.DataFrame:
        """Validate a training table, remember its columns and dtypes, reset the trace; returns
        the table with a 0..N-1 index (what ``_fit`` trains on). Shared with ``fit_many``."""
        self._check_input(df, label)
        self._warn_constant_columns(df, label)
        self.columns_ = list(df.columns)
        self.dtypes_ = df.dtypes.copy()
        self.trace = TrainingTrace()
        return df.reset_index(drop=True)

    def prepares_like(self, other: "BaseGenerator") -> bool:
        """Whether ``other`` derives the same data preparation from a table as this model: the
        same class and every config field equal but the seed (which enters only random draws).
        Conservative: a field that cannot be compared counts as different. ``fit_many`` uses it
        to prepare a shared table once for all its replicas."""
        if type(other) is not type(self):
            return False
        for f in dataclasses.fields(self.config):
            if f.name == "seed":
                continue
            x, y = getattr(self.config, f.name), getattr(other.config, f.name)
            try:
                if x is not y and not bool(x == y):
                    return False
            except (TypeError, ValueError):  # e.g. arrays, whose == is element-wise
                return False
        return True

    def _check_input(self, df: pd.DataFrame, label: str | None) -> None:
        """Refuse a training table this preset cannot fit, before any computing: the checks of
        :func:`validate_frame` plus the preset's own (subclasses extend it). ``fit_many`` runs
        it on every replica's table before fitting the first."""
        validate_frame(df, label)

    def _constant_column_effect(self, constants: dict[str, float], label: str | None) -> str | None:
        """What the preset's data transform makes of columns holding one value (``{column:
        value}``), for the warning of :meth:`_warn_constant_columns`; None: they come back as
        that value. Subclasses whose decode moves a constant away from itself override it."""
        return None

    def _warn_constant_columns(self, df: pd.DataFrame, label: str | None) -> None:
        """Warn at fit time when a column is constant for the preset's scaling (one value in the
        data, or equal public bounds under ``bounds="public"``) and the preset's decode does not
        give that value back. The samples are left as the preset produces them (the paper
        benchmarked the presets as they are, §4); the warning says what happens and why."""
        cfg = self.config
        public = getattr(cfg, "public_bounds", None) if getattr(cfg, "bounds", "data") == "public" else None
        if public:
            constants = {c: float(public[c][0]) for c in df.columns
                         if c in public and float(public[c][0]) == float(public[c][1])}
        else:
            constants = {c: float(df[c].iloc[0]) for c in df.columns if df[c].nunique(dropna=False) == 1}
        effect = self._constant_column_effect(constants, label) if constants else None
        if effect:
            import warnings

            shown = dict(list(constants.items())[:5])
            more = f" and {len(constants) - 5} more" if len(constants) > 5 else ""
            warnings.warn(f"{self.name}: constant column(s) {shown}{more}: {effect}. The preset keeps this behaviour "
                          "as the paper benchmarked it; to get such a column back exactly, drop it before fit() and "
                          "add it to the samples afterwards", ConstantColumnWarning, stacklevel=4)

    def sample(self, n: int, seed: int | None = None) -> pd.DataFrame:
        """Draw ``n`` synthetic rows. ``seed=None`` derives a fresh, reproducible seed from
        the config seed and the number of previous calls."""
        if not self.fitted_:
            raise RuntimeError(f"{self.name}: call fit() before sample()")
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"sample(n): n is the number of rows to draw, a positive integer, got {n!r} "
                             f"({type(n).__name__}); pass e.g. sample(100)")
        if seed is not None:
            try:
                validate_seed(seed)
            except ValueError as err:
                raise ValueError(f"sample(seed=...): {err}; pass e.g. sample({int(n)}, seed=0)") from None
        if seed is None:
            base = [] if self.config.seed is None else [self.config.seed]
            entropy = None if self.config.seed is None else [*base, 7919, self._sample_calls]
            seed = int(np.random.SeedSequence(entropy).generate_state(1)[0])
            self._sample_calls += 1
        with training_threads():
            out = self._sample(int(n), np.random.default_rng(seed))
        if list(out.columns) != self.columns_:
            raise AssertionError(f"{self.name}._sample returned columns {list(out.columns)} != {self.columns_}")
        return out.reset_index(drop=True)

    @classmethod
    def from_overrides(cls, **overrides: Any) -> "BaseGenerator":
        return cls(make_config(cls.Config, cls.name, overrides))

    # -- for subclasses ---------------------------------------------------------------------
    def _fit(self, df: pd.DataFrame, label: str | None) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _sample(self, n: int, rng: np.random.Generator) -> pd.DataFrame:  # pragma: no cover - abstract
        raise NotImplementedError

    def _after_iteration(self, iteration: int) -> None:
        self.trace.iterations = iteration + 1
        for cb in self.callbacks:
            cb(self, iteration)


def make_config(config_cls: type[BaseConfig], name: str, overrides: dict[str, Any]) -> BaseConfig:
    """Build a frozen config, rejecting unknown keys with the list of valid ones."""
    names = {f.name for f in dataclasses.fields(config_cls)}
    unknown = sorted(set(overrides) - names)
    if unknown:
        raise ValueError(
            f"unknown setting(s) {unknown} for preset {name!r}; valid settings are: {', '.join(sorted(names))}"
        )
    return config_cls(**overrides)
