"""MST, AIM and PrivBayes behind the project's generator protocol: what a practitioner would use
instead of a PATE-GAN (issue 41; beside ``ganev2025elusive`` §5's utility benchmark and §6.2's audit).

The three marginal-based mechanisms come from ``dpmm`` 0.1.9 (MST: McKenna et al. 2021, AIM:
McKenna et al. 2022, PrivBayes: Zhang et al. 2017, over private-pgm's graphical models).
Decisions:

* ``dpmm`` rather than ``smartnoise-synth``: no JAX, and it is end-to-end DP (DP domain
  discretisation, floating-point-safe noise from OpenDP). It hard-pins numpy 1.26.4, pandas 2.1.0
  and scikit-learn 1.5.0 (inside this project's ranges, below the main environment's versions), so
  it is an optional extra (``pip install -e '.[alternatives]'``), not in ``all``, installed in its
  own environment. Importing :mod:`pategan_audit` or this module never imports ``dpmm``;
  constructing a generator without it raises an :class:`ImportError` naming the install command.
* Domain ``{column: (min, max)}``: the public bounds, as the paper's audit gives PATE-GAN (§6.2,
  no preprocessing budget). Discretisation is done here from the bounds alone: an integer or
  boolean column with at most ``bins`` values in its range keeps one code per value (discrete
  columns stay discrete); any other column gets ``bins`` equal-width bins between its bounds and
  comes back as a uniform draw inside its bin (rounded for integer columns), so values stay in
  range. Nothing but the rows' codes reaches the mechanism; the whole ε goes to the model.
* Domain ``"dp"``: dpmm's own DP domain estimation (its ``TableBinner`` with PrivTree bins).
  Budget split (sequential composition, recorded in :attr:`DPMMGenerator.budget`): the model
  gets ``(1 - domain_share)·ε`` with the whole δ; binning gets ``domain_share·ε`` (default
  0.1·ε), split evenly over the numeric columns and, per column, half to the DP bounds estimate
  and half to PrivTree. Values come back inside the DP-estimated bounds, not the true ones; an
  integer column's bounds are power-of-two edges, so a 0/1 feature can come back as 2. The
  label is not binned: its classes, read from the training labels (the task's schema, not a
  statistic the mechanism estimates), are declared as categories, so samples hold only those
  classes.
  Caveat: dpmm's binner drops a column that is constant in the data and restores the constant
  (read without noise), so this mode is not free of data-dependent preprocessing. The per-column
  share is small on these datasets: on four Cervical columns at ε = 1 with the default share the
  bounds estimate already finds nothing, which fit reports as a ValueError naming the fix.
* Small tables at small ε: private-pgm's inference takes the table's size from the noisy
  measurements (their inverse-variance-weighted sums, floored at 1), not from the data. When the
  noise swamps the rows (60 rows at ε = 0.1: σ ≈ 64 per cell) that estimate can be 1, the
  least-squares fit of a mass-1 distribution to the noisy counts is a point mass, and every
  sampled row has the same codes (only continuous columns differ, by the draw inside the bin).
  That is dpmm's estimator doing what it does with those measurements, not this wrapper; on
  Cervical's 686 rows PrivBayes's estimate stays in the hundreds at ε = 0.1 (695 to 1,086 over
  five seeds).
* Seeds: dpmm draws its selections and sampling from a numpy ``RandomState`` we seed, but its
  measurement noise from OpenDP's samplers, which use system entropy and take no seed. With
  ``noise="seeded"`` (default; the project's rule that the same seed gives the same numbers) the
  same Gaussian/Laplace noise distributions are drawn from a numpy generator derived from
  ``seed``. Deviation: numpy's samplers are not floating-point safe (Mironov 2012), which no
  membership game of §6.2 exploits. ``noise="opendp"`` keeps dpmm's own samplers: a fit is then
  not reproducible from its seed, and may use ``n_jobs`` > 1. Column names reach dpmm as
  integers: it iterates over sets of names, and string names made every process fit a different
  model (string hashing is salted per process, ``PYTHONHASHSEED``).
"""
from __future__ import annotations

import importlib
import math
import sys
import threading
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Iterator

import numpy as np
import pandas as pd

__all__ = ["DPMMGenerator", "MST", "AIM", "PrivBayes", "AlternativeFactory", "INSTALL_HINT", "MECHANISMS",
           "ALTERNATIVE_MECHANISMS", "ALTERNATIVE_N_ITERS", "bounds_domain", "dpmm_version"]

INSTALL_HINT = "pip install -e '.[alternatives]'"
MECHANISMS = {"mst": ("dpmm.models.mst", "MSTGM"), "aim": ("dpmm.models.aim", "AIMGM"),
              "priv-bayes": ("dpmm.models.priv_bayes", "PrivBayesGM")}
#: the mechanisms the archives run beside the PATE-GANs (``utility_alternatives_large``,
#: ``audit_alternatives_large``), cheapest first on Cervical
ALTERNATIVE_MECHANISMS = ("priv-bayes", "aim", "mst")
#: private-pgm's inference iterations in the archived fits: post-processing of the noisy
#: measurements, so it moves utility but not the guarantee; dpmm's defaults cost minutes per fit on
#: Cervical (results/benchmarks/alternatives_cost.json), 300 keeps a fit on the audit's worst case
#: at 1-10 CPU seconds (results/benchmarks/alternatives_cost_querybased.json)
ALTERNATIVE_N_ITERS = 300
_NOISE = ("seeded", "opendp")
_NOISE_LOCK = threading.Lock()  # the seeded noise swaps dpmm module attributes: one fit at a time per process


def bounds_domain(bounds: Mapping[str, Any]) -> tuple:
    """``{column: (min, max)}`` public bounds as :class:`AlternativeFactory`'s hashable ``domain``."""
    return tuple((c, (float(lo), float(hi))) for c, (lo, hi) in bounds.items())


def dpmm_version() -> str:
    """The installed dpmm's version (part of every cache key of a mechanism's results: another dpmm
    fits other models); an :class:`ImportError` naming the install command when it is missing."""
    try:
        return version("dpmm")
    except PackageNotFoundError as err:
        raise ImportError(f"MST, AIM and PrivBayes need the optional dependency dpmm: {INSTALL_HINT}") from err


def _require_dpmm() -> None:
    try:
        importlib.import_module("dpmm")
    except ImportError as err:
        raise ImportError(f"MST, AIM and PrivBayes need the optional dependency dpmm: {INSTALL_HINT} "
                          "(in an environment of its own: dpmm pins numpy, pandas and scikit-learn)") from err


def _validate(epsilon, delta, bins, domain, domain_share, noise, n_jobs) -> None:
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be a finite number > 0 (e.g. epsilon=1.0), got {epsilon!r}")
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 < delta < 1:
        raise ValueError(f"delta must be a number in (0, 1) (e.g. delta=1e-5), got {delta!r}")
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 2:
        raise ValueError(f"bins must be an integer >= 2 (e.g. bins=8), got {bins!r}")
    if isinstance(domain, str):
        if domain != "dp":
            raise ValueError(f"domain must be 'dp' or a mapping {{column: (min, max)}} of public bounds, got {domain!r}")
    elif not isinstance(domain, Mapping):
        raise ValueError(f"domain must be 'dp' or a mapping {{column: (min, max)}} of public bounds, got {type(domain).__name__}")
    else:
        for col, b in domain.items():
            if (not isinstance(b, (tuple, list)) or len(b) != 2 or not all(math.isfinite(float(v)) for v in b)
                    or float(b[0]) > float(b[1])):
                raise ValueError(f"domain[{col!r}] must be a pair (min, max) of finite numbers with min <= max, got {b!r}")
    if not (isinstance(domain_share, (int, float)) and 0 < domain_share < 1):
        raise ValueError(f"domain_share must be in (0, 1) (the share of epsilon spent on the 'dp' domain, e.g. 0.1), "
                         f"got {domain_share!r}")
    if noise not in _NOISE:
        raise ValueError(f"noise must be one of {_NOISE}, got {noise!r}")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or not (n_jobs >= 1 or n_jobs == -1):
        raise ValueError(f"n_jobs must be an integer >= 1 or -1 (all cores), got {n_jobs!r}")
    if noise == "seeded" and n_jobs != 1:
        raise ValueError("noise='seeded' needs n_jobs=1 (dpmm's parallel workers draw OpenDP noise); "
                         "use n_jobs=1 or noise='opendp'")


def _seed_int(*parts: int) -> int:
    return int(np.random.SeedSequence([int(p) for p in parts]).generate_state(1)[0])


@contextmanager
def _seeded_noise(rng: np.random.Generator) -> Iterator[None]:
    """Within the block, every OpenDP noise sampler that dpmm's loaded modules hold draws the same
    distribution from ``rng`` instead (Gaussian of std ``sigma``, Laplace of scale ``scale``)."""
    def gaussian_noise(sigma, size=None):
        return rng.normal(0.0, sigma, size=size)

    def laplace_noise(scale, size=None):
        return rng.laplace(0.0, scale) if size is None else list(rng.laplace(0.0, scale, size=size))

    def make_laplace(*_space, scale, **_kw):
        return lambda value: float(value) + rng.laplace(0.0, scale)

    def make_gaussian(*space, **kw):
        scale = kw.get("scale", space[2] if len(space) > 2 else None)
        return lambda value: float(value) + rng.normal(0.0, scale)

    replacements = {"gaussian_noise": gaussian_noise, "laplace_noise": laplace_noise,
                    "make_laplace": make_laplace, "make_gaussian": make_gaussian}
    saved = []
    with _NOISE_LOCK:
        try:
            for name, module in list(sys.modules.items()):
                if module is None or not (name == "dpmm" or name.startswith("dpmm.")):
                    continue
                for attr, fn in replacements.items():
                    if attr in vars(module):
                        saved.append((module, attr, vars(module)[attr]))
                        setattr(module, attr, fn)
            yield
        finally:
            for module, attr, original in saved:
                setattr(module, attr, original)


@dataclass
class DPMMGenerator:
    """One of dpmm's marginal mechanisms with the project's ``fit(df, label=None)`` /
    ``sample(n, seed=None)`` protocol (``implementations``, ``auditing.game``).

    ``mechanism``: ``"mst"``, ``"aim"`` or ``"priv-bayes"``; ``domain``: public bounds
    ``{column: (min, max)}`` or ``"dp"`` (module docstring); ``model_kwargs`` go to dpmm's model
    (e.g. AIM's ``max_model_size``). The label is modelled as one more column.
    """

    mechanism: str
    epsilon: float = 1.0
    delta: float = 1e-5
    seed: int = 0
    bins: int = 8
    domain: Any = "dp"
    domain_share: float = 0.1
    noise: str = "seeded"
    n_jobs: int = 1
    model_kwargs: dict = field(default_factory=dict)
    budget: dict | None = field(default=None, init=False)
    _pipeline: Any = field(default=None, init=False, repr=False)
    _codec: dict | None = field(default=None, init=False, repr=False)
    _columns: list | None = field(default=None, init=False, repr=False)
    _dtypes: Any = field(default=None, init=False, repr=False)
    _calls: int = field(default=0, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.mechanism not in MECHANISMS:
            raise ValueError(f"mechanism must be one of {sorted(MECHANISMS)}, got {self.mechanism!r}")
        _validate(self.epsilon, self.delta, self.bins, self.domain, self.domain_share, self.noise, self.n_jobs)
        _require_dpmm()
        public = self.domain != "dp"
        model_eps = self.epsilon if public else (1 - self.domain_share) * self.epsilon
        self.budget = {"epsilon": float(self.epsilon), "delta": float(self.delta), "model_epsilon": float(model_eps),
                       "domain_epsilon": 0.0 if public else float(self.domain_share * self.epsilon),
                       "domain": "public bounds" if public else "dp (PrivTree bins, DP bounds)"}

    # -- public-bounds codec ------------------------------------------------------------------
    def _public_codec(self, df: pd.DataFrame) -> dict:
        missing = [c for c in df.columns if c not in self.domain]
        if missing:
            raise ValueError(f"domain has no public bounds for columns {missing}; pass domain={{column: (min, max)}} "
                             "for every column (e.g. Dataset.bounds) or domain='dp'")
        codec = {}
        for col in df.columns:
            lo, hi = float(self.domain[col][0]), float(self.domain[col][1])
            integer = pd.api.types.is_integer_dtype(df[col]) or pd.api.types.is_bool_dtype(df[col])
            if integer and math.floor(hi) - math.ceil(lo) + 1 <= self.bins:
                codec[col] = ("values", math.ceil(lo), math.floor(hi) - math.ceil(lo) + 1, integer)
            else:
                codec[col] = ("bins", lo, self.bins if hi > lo else 1, integer)
        return codec

    def _encode(self, df: pd.DataFrame) -> pd.DataFrame:
        out = {}
        for col, (kind, lo, size, _) in self._codec.items():
            x = df[col].to_numpy(dtype=float)
            if kind == "values":
                code = np.rint(x) - lo
            else:
                hi = float(self.domain[col][1])
                code = np.floor((x - lo) / (hi - lo) * size) if hi > lo else np.zeros_like(x)
            out[col] = np.clip(code, 0, size - 1).astype(np.int64)
        return pd.DataFrame(out, index=df.index)

    def _decode(self, codes: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
        out = {}
        for col, (kind, lo, size, integer) in self._codec.items():
            c = codes[col].to_numpy(dtype=float)
            if kind == "values":
                x = c + lo
            else:
                hi = float(self.domain[col][1])
                x = lo + (c + rng.uniform(size=len(c))) * (hi - lo) / size
                x = np.clip(np.rint(x) if integer else x, lo, hi)
            out[col] = x
        return pd.DataFrame(out)[self._columns].astype(self._dtypes)

    # -- protocol -----------------------------------------------------------------------------
    def fit(self, df: pd.DataFrame, label: str | None = None) -> "DPMMGenerator":
        """Fits the mechanism on ``df`` (no missing values; with public bounds, one per column)."""
        if not isinstance(df, pd.DataFrame) or df.empty:
            raise ValueError("fit needs a non-empty pandas DataFrame of training rows")
        if label is not None and label not in df.columns:
            raise ValueError(f"label {label!r} is not a column of the training data")
        if df.isna().any().any():
            raise ValueError(f"columns {list(df.columns[df.isna().any()])} hold missing values; impute or drop them first")
        from dpmm.pipelines.base import GenerativePipeline
        from dpmm.processing.table_binner import TableBinner

        module, cls = MECHANISMS[self.mechanism]
        model_cls = getattr(importlib.import_module(module), cls)
        self._columns, self._dtypes = list(df.columns), df.dtypes
        model = model_cls(epsilon=self.budget["model_epsilon"], delta=self.delta, n_jobs=self.n_jobs,
                          **self.model_kwargs)
        if self.domain == "dp":
            settings = {"epsilon": self.budget["domain_epsilon"], "n_bins": int(self.bins)}
            known = {i: {"categories": [False, True]} for i, c in enumerate(df.columns)
                     if pd.api.types.is_bool_dtype(df[c])}
            data = df.reset_index(drop=True)
            if label is not None and not pd.api.types.is_bool_dtype(df[label]):
                # The task's classes, declared: binned like a number, a 0/1 label gets DP bounds [0, 2)
                # (power-of-two edges) and samples rounded to 2, a class the data do not have.
                known[self._columns.index(label)] = {"categories": sorted(pd.unique(df[label]).tolist())}
                data[label] = data[label].astype(object)  # dpmm bins every int column; categories are objects
            proc = TableBinner(binner_type="priv-tree", binner_settings=settings, domain=known)
            pipeline, domain = GenerativePipeline(gen=model, proc=proc), None
        else:
            self._codec = self._public_codec(df)
            pipeline = GenerativePipeline(gen=model, proc=None)
            data = self._encode(df).reset_index(drop=True)
            domain = {i: self._codec[c][2] for i, c in enumerate(df.columns)}
        # dpmm iterates over sets of column names: string names would make a fit depend on
        # PYTHONHASHSEED (a different model in every process); integer names hash to themselves.
        data = data.set_axis(range(len(self._columns)), axis=1)
        state = np.random.RandomState(_seed_int(self.seed, 0))
        try:
            if self.noise == "seeded":
                with _seeded_noise(np.random.default_rng([int(self.seed), 1])):
                    pipeline.fit(data, domain=domain, random_state=state)
            else:
                pipeline.fit(data, domain=domain, random_state=state)
        except TypeError as err:
            if self.domain != "dp" or "NoneType" not in str(err):
                raise  # only the failed bounds estimate (arithmetic on its (None, None)) is the budget's fault
            raise ValueError(  # dpmm's approx_bounds returns (None, None) when no noisy count clears its threshold
                f"dpmm's DP bounds estimate found no bounds for a column with domain_share={self.domain_share} of "
                f"epsilon={self.epsilon} split over the numeric columns; raise domain_share or epsilon, use fewer "
                "columns, or pass public bounds as domain") from err
        self._pipeline, self._calls = pipeline, 0
        return self

    def sample(self, n: int, seed: int | None = None) -> pd.DataFrame:
        """``n`` synthetic rows with the training columns and dtypes; ``seed=None`` draws the
        model's next unseeded sample (fixed by its seed and how many came before)."""
        if self._pipeline is None:
            raise RuntimeError("call fit() before sample()")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n must be an integer >= 1, got {n!r}")
        parts = (self.seed, 2, self._calls) if seed is None else (seed, 3)
        self._calls += seed is None  # the n-th unseeded sample is fixed by the model's seed and n
        state = np.random.RandomState(_seed_int(*parts))
        synth = self._pipeline.generate(n_records=int(n), random_state=state)
        synth = synth.rename(columns=dict(enumerate(self._columns)))[self._columns].reset_index(drop=True)
        if self.domain == "dp":
            return synth.astype(self._dtypes)  # a declared label comes back as objects
        return self._decode(synth, np.random.default_rng(_seed_int(*parts, 4)))


@dataclass
class MST(DPMMGenerator):
    """MST (McKenna et al. 2021) via dpmm; the arguments of :class:`DPMMGenerator` but ``mechanism``."""

    mechanism: str = field(default="mst", init=False)


@dataclass
class AIM(DPMMGenerator):
    """AIM (McKenna et al. 2022) via dpmm; the arguments of :class:`DPMMGenerator` but ``mechanism``."""

    mechanism: str = field(default="aim", init=False)


@dataclass
class PrivBayes(DPMMGenerator):
    """PrivBayes (Zhang et al. 2017) via dpmm; the arguments of :class:`DPMMGenerator` but ``mechanism``."""

    mechanism: str = field(default="priv-bayes", init=False)


@dataclass(frozen=True)
class AlternativeFactory:
    """``make_generator(seed)`` for the audit and utility harnesses (pickles, describes itself
    in cache keys). ``domain``: public bounds as ``((column, (min, max)), ...)`` or ``"dp"``."""

    mechanism: str
    epsilon: float = 1.0
    delta: float = 1e-5
    bins: int = 8
    domain: Any = "dp"
    domain_share: float = 0.1
    noise: str = "seeded"
    model_kwargs: tuple = ()  # ((name, value), ...) for dpmm's model

    def __call__(self, seed: int) -> DPMMGenerator:
        domain = self.domain if isinstance(self.domain, str) else {c: tuple(b) for c, b in dict(self.domain).items()}
        return DPMMGenerator(self.mechanism, epsilon=self.epsilon, delta=self.delta, seed=seed, bins=self.bins,
                             domain=domain, domain_share=self.domain_share, noise=self.noise,
                             model_kwargs=dict(self.model_kwargs))
