"""The training engine shared by the PATE-based presets (updated, synthcity, borealis, smartnoise,
corrected, gnmax): the hooks the training loop drives, the stopping rules, the random streams,
the accountant, the vote release (:func:`release_votes`), introspection (implementation notes
§violations.catalogue) and what the audit's traces read.

One *iteration* is PATE-GAN (ICLR 2019, ``jordon2019pategan``) Alg. 1's outer loop: teacher
updates, student updates on teacher-labelled generated rows, generator update(s), then
``ε̂ = min_l (α(l) + ln(1/δ))/l``. The loop itself is :mod:`pategan_audit.replicas.loop` (a
single fit is its family's replica step at R = 1); it calls the engine's hooks around each
iteration, and the engine's stopping rules decide when it ends:

* ``stopping="overshoot"`` (all released implementations, implementation notes §common.stopping): ``while ε̂ < ε`` with ε̂
  updated *after* the iteration that spends the budget, so the final ε̂ can exceed ε by one
  iteration's cost. A NaN ε̂ ends training (``NaN < ε`` is False).
* smartnoise's variant (``_check_at_top``, implementation notes §smartnoise.stopping): ε̂ is computed *before* each iteration and
  training raises if the very first check already exceeds ε (ε < ln(1/δ)/L).
* ``stopping="safe"`` (corrected, implementation notes §corrected.stopping): run an iteration only if
  ``accountant.epsilon_if(queries per iteration) <= ε``; the final ε̂ never exceeds ε.

Randomness: five independent streams derived from the config seed with ``np.random.SeedSequence``
(network init, training draws, DP vote noise, partitions, DP bounds noise), so the same seed
gives the same model and the DP noise stream is never a constant (implementation notes §corrected.generation).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

import numpy as np
import pandas as pd
import torch

from ..accounting import MomentsAccountant
from ..accounting.accountant import charge_replicas
from ..accounting.formulas import KINDS
from ..accounting.ledger import Accountant
from ..components.votes import MECHANISMS, laplace, noisy_labels
from ..seeds import torch_generator, training_streams
from .base import BaseConfig, BaseGenerator, training_threads, validate_privacy, validate_seed

__all__ = ["PateConfig", "PateGenerator", "HYPERPARAMETERS", "STOPPING_RULES", "release_votes", "training_threads"]

HYPERPARAMETERS = ("default", "paper")
STOPPING_RULES = ("overshoot", "safe")


@dataclass(frozen=True)
class PateConfig(BaseConfig):
    """Settings shared by the PATE-based presets (switch names: see implementations/violations.py).

    harness: True = as benchmarked by the audit paper (implementation notes, "harness"); False = as released.
    num_teachers: k; None = the preset's own default rule.
    hyperparameters: "default" (the preset's) or "paper" (implementation notes §utility.paper-hyperparameters: the [49] column of Table 3).
    lam: λ as the preset names it (lambda / lap_scale / noise_multiplier).
    num_moments: L. max_iter: iteration cap (None = none). batch_size: B before the harness' min(B, N//k).
    bounds / public_bounds: "data" = min/max read from the training data (V10-V13), "public" = given.
    vote_mechanism: "single_noise" (released, O9) or "two_noise_argmax" (PATE's M_γ).
    stopping: "overshoot" (released) or "safe" (implementation notes §corrected.stopping).
    accountant: the accountant formula (accounting.KINDS).
    """

    harness: bool = True
    num_teachers: int | None = None
    hyperparameters: str = "default"
    lam: float = 1e-3
    num_moments: int = 100
    max_iter: int | None = 10_000
    batch_size: int = 64
    bounds: str = "data"
    public_bounds: dict | None = None
    vote_mechanism: str = "single_noise"
    stopping: str = "overshoot"
    accountant: str = "paper"

    _delta_may_be_none: ClassVar[bool] = False
    _choices: ClassVar[dict[str, tuple]] = {}

    def __post_init__(self) -> None:
        validate_privacy(self.epsilon, self.delta, delta_may_be_none=self._delta_may_be_none)
        validate_seed(self.seed)
        _positive_int(self.num_moments, "num_moments")
        _positive_int(self.batch_size, "batch_size")
        if self.num_teachers is not None:
            _positive_int(self.num_teachers, "num_teachers")
        if self.max_iter is not None:
            _positive_int(self.max_iter, "max_iter")
        if not isinstance(self.lam, (int, float)) or isinstance(self.lam, bool) or not (np.isfinite(self.lam) and self.lam > 0):
            raise ValueError(f"lam must be a finite number > 0 (e.g. lam=1e-3), got {self.lam!r}")
        if self.max_iter is None and not np.isfinite(self.epsilon):
            raise ValueError("epsilon=inf with max_iter=None would never stop; set max_iter")
        if self.public_bounds is not None and not isinstance(self.public_bounds, dict):
            raise ValueError("public_bounds must be a dict {column: (lo, hi)}")
        choices = {"hyperparameters": HYPERPARAMETERS, "vote_mechanism": MECHANISMS, "stopping": STOPPING_RULES,
                   "bounds": ("data", "public"), **self._choices}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        if self.accountant not in KINDS:
            raise ValueError(f"accountant must be one of {KINDS}, got {self.accountant!r}")


def _positive_int(value: Any, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


class PateGenerator(BaseGenerator):
    """Base class of the PATE presets. Subclasses implement ``_setup(df, label)`` (data, networks,
    teachers, partition; must set ``X_``, ``num_teachers_``, ``batch_size_``),
    ``_queries_per_iteration()``, ``_latent(n, generator, sampling)``, ``_fakes(latent)`` (teacher-
    input space), ``_decode(values)``, ``_fit`` (their family's replica step at R = 1,
    :func:`~pategan_audit.replicas.loop.fit_one`) and may override the small policy hooks below.

    The replica loop (:mod:`pategan_audit.replicas.loop`) drives every fit through the public
    protocol below: ``begin_fit`` (streams, set-up, accountant; returns the ε budget),
    ``may_continue``, ``open_iteration``, ``release_votes`` (noisy labels, charged and recorded in
    ``iteration_records``), ``finish_iteration`` and ``end_fit``; the step reads ``laplace_scale()``,
    ``vote_offset``, ``release_rule`` and ``charges_worst_case()`` and marks the rows each teacher
    saw in ``seen_`` [k, N]."""

    Config: ClassVar[type[BaseConfig]] = PateConfig
    _check_at_top: ClassVar[bool] = False  # smartnoise: ε̂ checked before each iteration
    #: added to the vote threshold: a row's label is 1[n1 + noise > (k + vote_offset) / 2]
    vote_offset: ClassVar[float] = 0.0

    # -- policy hooks ------------------------------------------------------------------------
    def _seed(self) -> int | None:
        """Root of the five streams; None = fresh OS entropy (``np.random.SeedSequence()``)."""
        return None if self.config.seed is None else int(self.config.seed)

    def _delta(self, num_rows: int) -> float:
        return float(self.config.delta)

    def _epsilon_budget(self) -> float:
        return float(self.config.epsilon)

    def laplace_scale(self) -> float:
        """Laplace scale of the vote noise: 1/λ (synthcity, borealis, smartnoise, corrected)."""
        return 1.0 / float(self.config.lam)

    def _default_num_teachers(self, num_rows: int) -> int:
        return 10

    def stream_root(self) -> int | None:
        """The root seed of the model's training streams, as its ``_seed`` policy gives it (the
        config's seed; 0 for every fit under synthcity's O2 reseeding): what counter streams key on."""
        return self._seed()

    def training_latent(self, n: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """``n`` training latents, what the training step feeds the generator, from ``generator``
        (default: the model's training stream ``train_gen``, so the next draw of the fit)."""
        return self._latent(int(n), self.train_gen if generator is None else generator, sampling=False)

    def fakes(self, latent: torch.Tensor) -> torch.Tensor:
        """Generated rows in the teachers' input space from ``latent`` (the preset's ``_fakes``)."""
        return self._fakes(latent)

    def release_rule(self, labels: torch.Tensor) -> tuple[torch.Tensor, bool]:
        """Final labels of one batch and whether the accountant is charged (synthcity's O4 hook)."""
        return labels, True

    def charges_worst_case(self) -> bool:
        """Whether every query is charged the data-independent (worst-case) increment instead of
        the increment of its vote count (corrected's ``charging="data_independent"``)."""
        return False

    def _make_accountant(self, num_teachers: int) -> Accountant:
        """The accountant (the moments accountant of ``config.accountant``; gnmax brings a
        Rényi-DP one); the loop only charges it and reads it (:mod:`pategan_audit.accounting.ledger`)."""
        return MomentsAccountant(self.config.accountant, lam=self.config.lam, num_moments=self.config.num_moments,
                                 delta=self.delta_, num_teachers=num_teachers, warn_at_edge=False)

    # -- helpers for presets -------------------------------------------------------------------
    def _resolve_num_teachers(self, num_rows: int) -> int:
        k = self.config.num_teachers if self.config.num_teachers is not None else self._default_num_teachers(num_rows)
        if k > num_rows:
            raise ValueError(
                f"more teachers ({k}) than training rows ({num_rows}); pass num_teachers <= {num_rows} "
                "(the paper uses max(2, N // 1000))"
            )
        return int(k)

    def _resolve_batch(self, num_rows: int, k: int, *, needs_full_blocks: bool) -> int:
        """Harness: ``min(B, ⌊N/k⌋)``; released: B, and an error where upstream would crash."""
        B = int(self.config.batch_size)
        if self.config.harness:
            return max(1, min(B, num_rows // k))
        if needs_full_blocks and num_rows // k < B:
            raise ValueError(
                f"{self.name} as released needs every teacher block to hold batch_size={B} rows, but N//k = "
                f"{num_rows // k}; use harness=True (batch min(B, N//k)), fewer teachers or a smaller batch_size"
            )
        return B

    def _make_streams(self) -> None:
        init, train, noise, part, dp = training_streams(self._seed(), 5)
        self.init_gen, self.train_gen, self.noise_gen = torch_generator(init), torch_generator(train), torch_generator(noise)
        self.partition_rng = np.random.default_rng(part)
        self.dp_rng = np.random.default_rng(dp)  # DP pre-processing noise (bounds)

    def _record_seen(self, rows: torch.Tensor | Sequence[np.ndarray]) -> None:
        """Mark rows as consumed: ``rows`` [k, B] positions, or one array per teacher."""
        if isinstance(rows, torch.Tensor):
            r = rows.numpy()
            self.seen_[np.arange(r.shape[0])[:, None], r] = True
        else:
            for t, r in enumerate(rows):
                self.seen_[t, np.asarray(r, dtype=np.int64)] = True

    def _release_votes(self, n1: torch.Tensor) -> torch.Tensor:
        """Everything after the teachers' count ``n1`` [n]: :func:`release_votes` for this one
        model (noise from its own stream, its release rule, its accountant's charge, its
        records). Returns the released labels as float32 [n]."""
        return release_votes([self], n1[None], np.ones(1, dtype=bool))[0]

    # -- the hooks the loop (pategan_audit.replicas.loop) drives, per replica ---------------------
    def begin_fit(self, df: pd.DataFrame, label: str | None) -> float:
        """Streams, the preset's ``_setup``, the seen-matrix and the accountant; returns the ε budget."""
        self._make_streams()
        self._setup(df, label)
        N, k = self.X_.shape[0], self.num_teachers_
        self.delta_ = self._delta(N)
        self.seen_ = np.zeros((k, N), dtype=bool)
        self.accountant = self._make_accountant(k)
        budget = self._epsilon_budget()
        self.trace.extra.update(num_teachers=k, batch_size=self.batch_size_, delta=self.delta_, epsilon_budget=budget)
        return budget

    def may_continue(self, it: int, budget: float) -> bool:
        """Whether iteration ``it`` runs: below the cap and allowed by the stopping rule."""
        if self.config.max_iter is not None and it >= self.config.max_iter:
            return False
        return self._may_start(it, budget)

    def open_iteration(self) -> None:
        """Start the records (votes, noise, labels, charged) of one iteration."""
        self.iteration_records: dict[str, list] = {"votes": [], "noise": [], "labels": [], "charged": []}

    def finish_iteration(self, it: int, budget: float) -> bool:
        """Close the records of iteration ``it``; True when the run must stop after it."""
        self._close_iteration()
        self._after_iteration(it)
        eps_hat = self.trace.eps_hat[-1]
        if np.isnan(eps_hat):  # upstream: `NaN < ε` is False, the loop exits (implementation notes §common.stopping)
            return True
        return self.config.stopping == "overshoot" and not self._check_at_top and not eps_hat < budget

    def end_fit(self) -> None:
        """Fill the trace when training ends (the rows each teacher saw; the accountant's best order)."""
        self.trace.teacher_rows = [set(np.flatnonzero(row).tolist()) for row in self.seen_]
        self.trace.extra["best_order"] = self.accountant.best_order

    def _may_start(self, it: int, budget: float) -> bool:
        if self._check_at_top and self.accountant.epsilon > budget:
            if it == 0:
                raise ValueError(
                    f"epsilon={budget:g} is below what the accountant charges before any training "
                    f"(ln(1/delta)/L = {self.accountant.epsilon:.4g}); smartnoise refuses to train. "
                    "Increase epsilon, delta or num_moments"
                )
            return False
        if self.config.stopping == "safe" and not self.accountant.epsilon_if(self._queries_per_iteration()) <= budget:
            if it == 0:
                raise ValueError(
                    f"epsilon={budget:g} cannot pay for a single iteration ({self._queries_per_iteration()} queries, "
                    f"worst case eps-hat {self.accountant.epsilon_if(self._queries_per_iteration()):.4g}); increase "
                    "epsilon or delta, or lower lam or batch_size"
                )
            return False
        return True

    def _close_iteration(self) -> None:
        self.trace.alpha.append(self.accountant.alpha.copy())
        self.trace.eps_hat.append(float(self.accountant.epsilon))
        if self.config.record:
            for key in ("votes", "noise", "labels"):
                parts = self.iteration_records[key]
                getattr(self.trace, key).append(np.concatenate(parts) if parts else np.empty(0))
            charged = self.iteration_records["charged"]
            self.trace.extra.setdefault("charged", []).append(np.concatenate(charged) if charged else np.empty(0, bool))

    # -- sampling and introspection ----------------------------------------------------------------
    def _sample(self, n: int, rng: np.random.Generator) -> pd.DataFrame:
        gen = torch.Generator().manual_seed(int(rng.integers(2**62)))
        with torch.no_grad():
            values = self._generate(n, gen) if n > 0 else torch.empty(0, self.model_width_)
        return self._decode(values.to(torch.float64).numpy())

    def _generate(self, n: int, gen: torch.Generator) -> torch.Tensor:
        """``n`` rows in the model's (scaled/encoded) space, as released by ``sample``."""
        return self._fakes(self._latent(n, gen, sampling=True), generator=gen)

    def seen_matrix(self) -> np.ndarray:
        """[k, N] bool: row j consumed by teacher t so far (live during training)."""
        return self.seen_.copy()

    def first_seen_subsets(self) -> list[np.ndarray]:
        """Teacher j's first-seen data subset P_j (implementation notes §traces.losses): its partition block, or for
        the re-fitted LR teachers the rows it was fitted on at the first iteration."""
        return [np.asarray(s, dtype=np.int64) for s in self._first_subsets]

    def fixed_latent(self, n: int, seed: int) -> torch.Tensor:
        """A reproducible latent batch z* of size n (training distribution) for the Fig. 3 traces."""
        return self._latent(int(n), torch.Generator().manual_seed(int(seed)), sampling=False)

    def teacher_cross_entropy(self, row_subsets: list[np.ndarray], latent: torch.Tensor) -> np.ndarray:
        """``CE[t, j]`` = BCE of teacher t on (rows ``row_subsets[j]``, label 1) ∪ (G(latent), label 0)
        with the current generator (implementation notes §traces.losses). Returns [k, len(row_subsets)]."""
        with torch.no_grad():
            fake = self._fakes(latent, generator=torch.Generator().manual_seed(0))
            reals = [self._teacher_rows_input(np.asarray(r, dtype=np.int64)) for r in row_subsets]
            return self.teachers.cross_entropy(reals, fake)

    def _teacher_rows_input(self, rows: np.ndarray) -> torch.Tensor:
        return self.X_[torch.as_tensor(rows)]


def release_votes(models: Sequence[PateGenerator], n1: torch.Tensor, active: np.ndarray,
                  noise: torch.Tensor | None = None) -> torch.Tensor:
    """The vote release of PATE-GAN Alg. 1 ("PATE_λ"), for R replicas of one preset at once (a
    single fit is R = 1): labels [R, n] float32 from the teachers' vote counts ``n1`` [R, n];
    replicas not ``active`` (bool [R]) get zeros and are left untouched.

    Each active replica gets, as the preset's ``vote_mechanism`` says
    (:mod:`pategan_audit.components.votes`): Laplace noise from its *own* ``noise_gen`` (two
    ``Exp(1)`` draws per noise value, E1 then E2), its labels, its ``release_rule`` (the identity
    but for synthcity's O4), the charge of its accountant (the increments of its votes, or the
    worst case where ``charges_worst_case()``) and its ``iteration_records``. The arithmetic is
    done for all replicas at once; only the draws and a custom release rule run per replica.
    ``noise``: the Laplace noise of every replica already drawn (``[R, n]``, or ``[R, n, 2]`` for
    the two-noise mechanism; the counter streams of :mod:`pategan_audit.replicas.streams`),
    used instead of the replicas' noise streams (rows of frozen replicas are ignored)."""
    if not (n1.is_cpu and n1.dtype == torch.int64):
        n1 = n1.to("cpu", torch.int64)
    R, n = n1.shape
    idx = np.asarray(active).nonzero()[0]  # the active replicas' positions
    if len(idx) == 0:
        return torch.zeros((R, n), dtype=torch.float32)
    rows = None if len(idx) == R else torch.as_tensor(idx)  # the active replicas' rows (None: all of them)
    m0 = models[idx[0]]
    cfg = m0.config
    k, scale, offset = m0.num_teachers_, m0.laplace_scale(), m0.vote_offset
    two = cfg.vote_mechanism == "two_noise_argmax"
    if cfg.vote_mechanism not in MECHANISMS:
        raise ValueError(f"unknown vote_mechanism {cfg.vote_mechanism!r}; choose one of {MECHANISMS}")
    if not scale > 0:
        raise ValueError(f"the Laplace scale must be > 0, got {scale}")
    shape = (n, 2) if two else (n,)
    if noise is not None:
        if tuple(noise.shape) != (R, *shape):
            raise ValueError(f"noise must be [R, n{', 2' if two else ''}] = {[R, *shape]} for {cfg.vote_mechanism}, "
                             f"got {list(noise.shape)}")
        noise = noise.to("cpu", torch.float64)
        noise = noise if rows is None else noise[rows]
    else:  # each replica's Laplace noise from its own stream (votes.laplace: E1 then E2), into its row
        noise = torch.empty((len(idx), *shape), dtype=torch.float64)
        for j, r in enumerate(idx):
            laplace(shape, scale=scale, generator=models[r].noise_gen, out=noise[j])
    v = n1 if rows is None else n1[rows]
    labels = noisy_labels(v, noise, mechanism=cfg.vote_mechanism, num_teachers=k, offset=offset)
    charged = np.ones(len(idx), dtype=bool)
    if type(m0).release_rule is not PateGenerator.release_rule:
        for j, r in enumerate(idx):
            labels[j], charged[j] = models[r].release_rule(labels[j])
    charge_replicas([models[r].accountant for r in idx], v.numpy(), charged, worst_case=m0.charges_worst_case())
    if cfg.record:
        vn, nn_, ln = v.numpy(), noise.numpy(), labels.numpy()
        for j, r in enumerate(idx):
            buf = models[r].iteration_records
            buf["votes"].append(vn[j].copy())
            buf["noise"].append(nn_[j].copy())
            buf["labels"].append(ln[j].copy())
            buf["charged"].append(np.full(n, bool(charged[j])))
    if rows is None:
        return labels.to(torch.float32)
    out = torch.zeros((R, n), dtype=torch.float32)
    out[rows] = labels.to(torch.float32)
    return out
