"""Experiment cells of the utility benchmark: frozen configs, the teacher rule, seeds, and the
post-processing of synthetic tables (paper §5, App. C; implementation notes §data.split, §data.cleaning, §utility.best-of-n, §utility.settings).

A *cell* is everything that determines one block of results: dataset (and its training
subsample), implementation, ε, δ, teachers k, preset overrides, M models × S tables per model
(implementation notes §utility.best-of-n: n = M·S tables per cell), the iteration cap, the classifier knobs and the seed. Cells are
frozen and made of plain values, so they hash into the result cache
(:func:`pategan_audit.runner.cached`, namespace ``"utility"``).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..classifiers import CLASSIFIERS, MAJORITY, ClassifierKnobs
from ..datasets import DATASETS
from ..implementations.registry import ALL_NAMES
from ..seeds import derive_seed  # the one seed derivation (reduction "mod31"), re-exported

__all__ = [
    "PAPER_TRAIN_SIZES",
    "UtilityCell",
    "SettingACell",
    "teacher_ratio",
    "teacher_count",
    "derive_seed",
    "to_training_dtypes",
    "variant_label",
]

#: Training-split sizes of the paper's runs (implementation notes §data.cleaning; ISOLET = isolet1-4). Used to
#: name teacher counts as the paper does (e.g. Table 11's "N/50" = 184 teachers on Epileptic).
PAPER_TRAIN_SIZES: dict[str, int] = {
    "credit": 227_845,
    "cervical_cancer": 686,
    "isolet": 6_238,
    "epileptic_seizure": 9_200,
    "mnist": 60_000,
}


def teacher_ratio(dataset: str) -> int:
    """Records per teacher in the utility benchmark: 5000 for Credit, 1000 otherwise (implementation notes §data.cleaning)."""
    return 5000 if dataset == "credit" else 1000


def teacher_count(*, n_train: int, ratio: int) -> int:
    """The authors' teacher rule k = max(2, floor(N / ratio)) (implementation notes §data.split).

    The clamp to 2 is not in the paper: it gives Cervical (N = 686) two teachers and Table 11's
    "N/5,000" column (9200 // 5000 = 1) two teachers.
    """
    if not isinstance(n_train, (int, np.integer)) or n_train < 1:
        raise ValueError(f"n_train must be a positive integer, got {n_train!r}")
    if not isinstance(ratio, (int, np.integer)) or ratio < 1:
        raise ValueError(f"ratio must be a positive integer (records per teacher, e.g. 1000), got {ratio!r}")
    return max(2, int(n_train) // int(ratio))


def _freeze(overrides: Any) -> tuple[tuple[str, Any], ...]:
    if overrides is None:
        return ()
    items = overrides.items() if isinstance(overrides, Mapping) else overrides
    out = []
    for item in items:
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)):
            raise ValueError(f"overrides must be a dict {{name: value}} or (name, value) pairs, got {overrides!r}")
        out.append(item)
    return tuple(sorted(out))


def variant_label(overrides: tuple[tuple[str, Any], ...]) -> str:
    """Readable name of a preset variant: ``"default"`` or ``"k=v,k=v"`` in key order."""
    return ",".join(f"{k}={v}" for k, v in overrides) if overrides else "default"


def _key_fields(cell) -> dict[str, Any]:
    """A cell's fields for its cache key; ``adaboost="SAMME"`` is left out, so that cells computed
    before the knob existed (scikit-learn >= 1.6 ran SAMME) keep their keys and archived ids."""
    fields = asdict(cell)
    if fields.get("adaboost") == "SAMME":
        del fields["adaboost"]
    return fields


def _number(name: str, value: Any, hint: str) -> float:
    """``value`` as a float, or a ValueError naming the parameter (a string such as ``'abc'`` is
    refused here, not deep in a float conversion)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number ({hint}), got {value!r}")
    return float(value)


def _check_seed(seed: Any) -> None:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0 (the master seed; model m uses derive_seed(seed, m)), got {seed!r}")


@dataclass(frozen=True)
class UtilityCell:
    """One Setting-B experiment cell (implementation notes §utility.best-of-n, §utility.settings).

    dataset, implementation: names as in the paper (``pategan_audit.datasets.DATASETS``,
        ``pategan_audit.implementations.PRESETS``).
    epsilon, delta: privacy target of every model (implementation notes §utility.settings: δ = 1e-5).
    num_teachers: k; None = the rule ``max(2, N // ratio)`` on the (subsampled) training split.
    overrides: preset settings passed to ``create`` (dict or pairs; stored sorted), e.g.
        ``{"conditional": True}`` (Table 6) or ``{"hyperparameters": "paper"}`` (Table 12).
    n_models, n_tables: M generators, S synthetic tables from each (n = M·S, implementation notes §utility.best-of-n).
    max_iter: generator iteration cap (paper: 10,000, implementation notes §utility.settings).
    subsample: stratified training subsample (seed 13) or None for the full split.
    classifiers: the panel (the 12 of implementation notes §utility.classifiers; Fig. 10 uses LR and RF).
    mlp_max_iter, xgb_n_jobs: classifier speed knobs (:class:`ClassifierKnobs`).
    adaboost: AdaBoost's algorithm (:class:`ClassifierKnobs`; the authors': ``"SAMME.R"``).
    seed: master seed; model m uses ``derive_seed(seed, m)``.
    """

    dataset: str
    implementation: str
    epsilon: float
    delta: float = 1e-5
    num_teachers: int | None = None
    overrides: tuple[tuple[str, Any], ...] = ()
    n_models: int = 1
    n_tables: int = 1
    max_iter: int | None = 10_000
    subsample: int | None = None
    classifiers: tuple[str, ...] = CLASSIFIERS
    mlp_max_iter: int = 1000
    xgb_n_jobs: int | None = None
    adaboost: str = "SAMME.R"
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "overrides", _freeze(self.overrides))
        object.__setattr__(self, "classifiers", tuple(self.classifiers))
        if self.dataset not in DATASETS:
            raise ValueError(f"dataset must be one of {DATASETS}, got {self.dataset!r}")
        if not isinstance(self.implementation, str) or not self.implementation:
            # any name: a cell run with its own make_generator may carry a generator of its own; the
            # default factory refuses a name it does not know (implementations.create) before any fit
            raise ValueError(f"implementation must be a preset name such as {ALL_NAMES[0]!r}, got {self.implementation!r}")
        object.__setattr__(self, "epsilon", _number("epsilon", self.epsilon, "e.g. 1.0"))
        object.__setattr__(self, "delta", _number("delta", self.delta, "the paper uses 1e-5"))
        _check_seed(self.seed)
        if not (self.epsilon > 0):
            raise ValueError(f"epsilon must be > 0, got {self.epsilon}")
        if not (0 < self.delta < 1):
            raise ValueError(f"delta must lie in (0, 1), got {self.delta} (the paper uses 1e-5)")
        for name in ("n_models", "n_tables"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer (the paper: 5 x 5, or 3 x 3 on Credit), got {value!r}")
        if self.num_teachers is not None and (not isinstance(self.num_teachers, (int, np.integer)) or self.num_teachers < 1):
            raise ValueError(f"num_teachers must be None (rule max(2, N // ratio)) or a positive integer, got {self.num_teachers!r}")
        if self.max_iter is not None and (not isinstance(self.max_iter, (int, np.integer)) or self.max_iter < 1):
            raise ValueError(f"max_iter must be None or a positive integer, got {self.max_iter!r}")
        if MAJORITY in self.classifiers:
            raise ValueError("the majority baseline belongs to Setting A only (implementation notes §utility.setting-a); drop it from a Setting-B cell")
        unknown = [c for c in self.classifiers if c not in CLASSIFIERS]
        if unknown or not self.classifiers:
            raise ValueError(f"classifiers must be a non-empty subset of {CLASSIFIERS}; unknown: {unknown}")
        self.knobs  # validates the knobs

    @property
    def knobs(self) -> ClassifierKnobs:
        return ClassifierKnobs(mlp_max_iter=self.mlp_max_iter, xgb_n_jobs=self.xgb_n_jobs, adaboost=self.adaboost)

    @property
    def variant(self) -> str:
        return variant_label(self.overrides)

    @property
    def n(self) -> int:
        """Synthetic tables behind every best-of-n number of this cell."""
        return self.n_models * self.n_tables

    def cache_key(self) -> dict[str, Any]:
        return {"kind": "setting_b", **_key_fields(self)}


@dataclass(frozen=True)
class SettingACell:
    """Setting A of one dataset (implementation notes §utility.setting-a): the classifiers (+ the majority
    baseline) trained on the real training split and scored on the real test split."""

    dataset: str
    subsample: int | None = None
    classifiers: tuple[str, ...] = CLASSIFIERS + (MAJORITY,)
    mlp_max_iter: int = 1000
    xgb_n_jobs: int | None = None
    adaboost: str = "SAMME.R"
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "classifiers", tuple(self.classifiers))
        if self.dataset not in DATASETS:
            raise ValueError(f"dataset must be one of {DATASETS}, got {self.dataset!r}")
        _check_seed(self.seed)
        unknown = [c for c in self.classifiers if c not in CLASSIFIERS and c != MAJORITY]
        if unknown or not self.classifiers:
            raise ValueError(f"classifiers must be a non-empty subset of {CLASSIFIERS + (MAJORITY,)}; unknown: {unknown}")
        self.knobs

    @property
    def knobs(self) -> ClassifierKnobs:
        return ClassifierKnobs(mlp_max_iter=self.mlp_max_iter, xgb_n_jobs=self.xgb_n_jobs, adaboost=self.adaboost)

    def cache_key(self) -> dict[str, Any]:
        return {"kind": "setting_a", **_key_fields(self)}


def to_training_dtypes(synth: pd.DataFrame, train: pd.DataFrame) -> pd.DataFrame:
    """Put a synthetic table back into the training table's columns and dtypes (implementation notes §data.postprocessing).

    Checks the table (every training column present, every value finite), then casts with the
    one dtype restorer, :func:`pategan_audit.components.scalers.restore_dtypes` (policy
    ``"benchmark"``): columns whose training dtype is int64 are rounded, then cast; every other
    column is cast directly (so Credit's int16 label is truncated toward zero, 0.7 -> 0, as
    upstream).
    """
    if not isinstance(synth, pd.DataFrame):
        synth = pd.DataFrame(np.asarray(synth), columns=train.columns)
    missing = [c for c in train.columns if c not in synth.columns]
    if missing:
        raise ValueError(f"the synthetic table lacks training columns {missing[:5]}; the generator must return all columns")
    out = synth[list(train.columns)].reset_index(drop=True)
    values = out.to_numpy(dtype=float)
    if not np.isfinite(values).all():
        bad = [c for c in out.columns if not np.isfinite(out[c].to_numpy(dtype=float)).all()]
        raise ValueError(f"the synthetic table has NaN/infinite values in {bad[:5]}: the generator diverged")
    from ..components.scalers import restore_dtypes  # lazy: the components package imports torch

    return restore_dtypes(out, train.dtypes)

