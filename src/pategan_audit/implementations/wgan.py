"""The WGAN-GP loop shared by original and turing (implementation notes §original.architecture, §original.loop, §turing.architecture, §turing.loop).

Neither implementation uses PATE (V1, V2): one critic replaces the teachers and the student,
``num_teachers`` is only the number of critic steps per generator step, and the only noise is
Gaussian noise on the 0/1 real/fake indicator labels (V14, V16). One *iteration* is::

    repeat k = num_teachers times (critic-step slot t = 0..k-1):
        rows <- B rows: from ALL N rows (critic_batch_source="all_rows", V3/V6) or only from
                disjoint block t (="own_partition")
        z ~ U(-1, 1)^{B x z_dim};  fake = G(z [; y_rows])
        M = [1]*B ++ [0]*B;  M <- 1[M + N(0, sigma^2) > 0.5]
        critic step on mean((1 - M) D_all) - mean(M D_all) + w_gp mean((||grad D(x_hat)|| - 1)^2)
            D_all = [D(real); D(fake)] (means over 2B), x_hat = e real + (1 - e) fake, e ~ U(0,1)
            per row, ||g|| = sqrt(sum_j (g_j^2 + 1e-8))
    generator step on -mean(D(G(z))) with fresh z (conditional: labels of a fresh random batch)

The loop runs exactly ``max_iter`` iterations whatever epsilon is (no accountant). It is written
once, as the replica step :mod:`pategan_audit.replicas.wgan` (``fit`` runs it at R = 1,
``fit_many`` at any R; snapshots and resume come with it); this module holds the configuration,
the set-up (streams, data, networks) and sampling.

Networks (implementation notes §original.architecture): hidden width h = d; generator ``Linear -> h, tanh, Linear h -> h, tanh,
Linear h -> d, sigmoid``; critic ``Linear -> h, ReLU, Linear h -> h, ReLU, Linear h -> 1``;
weights ``N(0, 2/fan_in)`` (TF "xavier_init", He-normal), biases 0; Adam(lr 1e-4, beta1 0.5) for
both. ``z_dim = d // 4`` may be 0 (d < 4): the generator then ignores its input, as upstream.
``hyperparameters="paper"`` (implementation notes §utility.paper-hyperparameters) uses batch 64 and the generator ``{d, d/2, d}`` with
ReLU hidden and sigmoid output; critic, optimiser, z_dim and the critic-step count stay.

Deviations: float32 networks (upstream TF float32 too); PyTorch's Adam places epsilon after the
bias correction where TF1 places it before (differences of order 1e-8 in the step size).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
import torch

from ..components.networks import Mlp, adam
from ..components.partition import balanced_blocks
from ..replicas.wgan import run_group
from ..seeds import torch_generator, training_streams
from .base import BaseConfig, BaseGenerator, TrainingTrace, validate_privacy, validate_seed
from .hyperparameters import paper_setting, paper_sizes, resolved

__all__ = ["WganConfig", "WganGenerator", "he_normal_mlp"]

CRITIC_BATCH_SOURCES = ("all_rows", "own_partition")


@dataclass(frozen=True)
class WganConfig(BaseConfig):
    """Settings shared by original and turing (switches contract).

    harness: True = as benchmarked (batch ``min(B, N//k)``, integer rounding on output);
        False = as released.
    num_teachers: critic steps per iteration (None = the preset's default, 5 or 10).
    hyperparameters: "default" or "paper" (implementation notes §utility.paper-hyperparameters).
    max_iter: fixed number of iterations (None = the released default: original 10,000,
        turing 100). Default 10,000 for both (paper §5).
    batch_size: B before the harness' ``min(B, N//k)``.
    learning_rate: Adam step size (1e-4).
    bounds / public_bounds: "data" (min/max from the training table) or "public".
    use_pate: always False here (V1/V2 are fixed only by the ``corrected`` preset).
    critic_batch_source: "all_rows" (V3/V6) or "own_partition" (critic step t reads only
        block t of a random disjoint k-block partition).
    label_noise: "gaussian_indicator" (V14/V16; not switchable in place).
    delta_mode: how sigma is computed (preset-specific values, see the preset).
    """

    harness: bool = True
    num_teachers: int | None = None
    hyperparameters: str = "default"
    max_iter: int | None = 10_000
    batch_size: int = 128
    learning_rate: float = 1e-4
    bounds: str = "data"
    public_bounds: dict | None = None
    use_pate: bool = False
    critic_batch_source: str = "all_rows"
    label_noise: str = "gaussian_indicator"
    delta_mode: str = "textbook"

    _delta_modes: ClassVar[tuple[str, ...]] = ("textbook",)

    def __post_init__(self) -> None:
        validate_privacy(self.epsilon, self.delta)
        validate_seed(self.seed)
        for name in ("num_teachers", "max_iter"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1):
                raise ValueError(f"{name} must be a positive integer or None, got {v!r}")
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, (int, np.integer)) or self.batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {self.batch_size!r}")
        if not (isinstance(self.learning_rate, (int, float)) and self.learning_rate > 0):
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate!r}")
        if self.use_pate:
            raise ValueError(
                "use_pate=True is not switchable in place: original and turing have no teachers (V1/V2); "
                "use create('corrected', ...) for a PATE-GAN with teachers, a student and an accountant"
            )
        if self.label_noise != "gaussian_indicator":
            raise ValueError(
                "label_noise can only be 'gaussian_indicator' here (V14/V16); the Laplace-on-votes fix is the "
                "'corrected' preset"
            )
        choices = {
            "hyperparameters": ("default", "paper"),
            "bounds": ("data", "public"),
            "critic_batch_source": CRITIC_BATCH_SOURCES,
            "delta_mode": self._delta_modes,
        }
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        if self.public_bounds is not None and not isinstance(self.public_bounds, dict):
            raise ValueError("public_bounds must be a dict {column: (lo, hi)}")
        if self.bounds == "public" and self.public_bounds is None:
            raise ValueError("bounds='public' needs public_bounds={column: (lo, hi)} for every column")


def he_normal_mlp(sizes: list[int], hidden: str, output: str, *, generator: torch.Generator) -> Mlp:
    return Mlp(sizes, hidden, output, generator=generator)


class WganGenerator(BaseGenerator):
    """Base class of original and turing. Subclasses implement ``_prepare(df, label)`` (sets
    ``X_`` [N, d] float32 model-space data, ``cond_`` [N] float32 labels or None, ``bounds``),
    ``_sample(n, rng)`` and the policy hooks ``_sigma``, ``_gp_weight``,
    ``_default_num_teachers``, ``_default_max_iter``.

    The training step (:mod:`pategan_audit.replicas.wgan`) calls the public hooks
    :meth:`begin_fit`, :meth:`end_iteration` and :meth:`end_fit` and reads the fitted sizes
    (``num_teachers_``, ``batch_size_``, ``z_dim_``, ``max_iter_``, ``sigma_``, ``gp_weight_``),
    the data (``X_``, ``cond_``, ``blocks_``), the networks and optimisers (``G``, ``D``,
    ``opt_G``, ``opt_D``) and the training stream ``train_gen``."""

    Config: ClassVar[type[BaseConfig]] = WganConfig

    # -- policy hooks --------------------------------------------------------------------------
    def _sigma(self) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def _gp_weight(self, k: int) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def _default_num_teachers(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def _default_max_iter(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def _caps_batch(self) -> bool:
        """Whether ``harness=True`` caps the batch at ``N // k`` (turing's utility harness does not)."""
        return True

    # -- setup ---------------------------------------------------------------------------------
    def _streams(self) -> None:
        seed = self.config.seed
        init, train, part = training_streams(None if seed is None else [int(seed), 2019], 3)
        self.init_gen, self.train_gen = torch_generator(init), torch_generator(train)
        self.partition_rng = np.random.default_rng(part)

    def _build(self, N: int) -> None:
        cfg = self.config
        d = int(self.X_.shape[1])
        c = 0 if self.cond_ is None else 1
        k = int(cfg.num_teachers) if cfg.num_teachers is not None else self._default_num_teachers()
        if cfg.critic_batch_source == "own_partition" and k > N:
            raise ValueError(f"own_partition needs num_teachers <= N; got {k} critic steps for {N} rows")
        paper = paper_setting(self.name, cfg)
        B = int(resolved(paper, "batch_size", cfg.batch_size))
        if cfg.harness:  # the audit harness caps B at N // k; turing's utility harness only at N (where upstream crashes)
            B = max(1, min(B, N // k if self._caps_batch() else N))
        cap = N if cfg.critic_batch_source == "all_rows" else N // k
        if B > cap:
            raise ValueError(
                f"batch_size {B} exceeds the {cap} rows a critic step can draw (upstream would crash); "
                "use harness=True (batch min(B, N//k)) or a smaller batch_size"
            )
        self.num_teachers_, self.batch_size_, self.z_dim_ = k, B, d // 4
        self.max_iter_ = int(cfg.max_iter) if cfg.max_iter is not None else self._default_max_iter()
        self.sigma_ = float(self._sigma())
        self.gp_weight_ = float(self._gp_weight(k))
        h = d
        if paper is not None:
            sizes = paper_sizes(latent_dim=self.z_dim_ + c, width=d)["generator"]
            self.G = he_normal_mlp(sizes, "relu", paper.generator_output, generator=self.init_gen)
        else:
            self.G = he_normal_mlp([self.z_dim_ + c, h, h, d], "tanh", "sigmoid", generator=self.init_gen)
        self.D = he_normal_mlp([d + c, h, h, 1], "relu", "identity", generator=self.init_gen)
        # fused Adam kernel (same update rule, eps = 1e-8 by default; less overhead per step)
        self.opt_G = adam(self.G.parameters(), lr=cfg.learning_rate, betas=(0.5, 0.999))
        self.opt_D = adam(self.D.parameters(), lr=cfg.learning_rate, betas=(0.5, 0.999))
        if cfg.critic_batch_source == "own_partition":
            self.blocks_ = [torch.as_tensor(b) for b in balanced_blocks(N, k, rng=self.partition_rng)]
        else:
            self.blocks_ = None

    # -- the training step's hooks (replicas.wgan.WganModel) -----------------------------------
    def begin_fit(self, df: pd.DataFrame, label: str | None, prepared: dict | None = None) -> dict:
        """Validate ``df`` and set the model up for its first iteration, as ``fit`` does
        (``fit_many`` calls it on every replica before stacking them). Returns what the table
        alone determined (the attributes ``_accept`` and ``_prepare`` set: the fitted scaler or
        encoder, ``X_``, ``cond_``, ...; no random draw enters them).

        prepared: that mapping from a replica of the same preset and settings (seed aside:
        :meth:`prepares_like`) set up on this very table: it is taken as this replica's
        (shared, read-only) instead of being computed again, the same values a fresh
        preparation gives, which saves most of a replica's set-up in a large ``fit_many``; the
        streams and initial networks are still the replica's own."""
        if prepared is not None:
            return self._begin(None, label, prepared)
        before = dict(vars(self))  # what _accept and _prepare set is the table's preparation
        return self._begin(self._accept(df, label), label, None, before)

    def _begin(self, frame: pd.DataFrame | None, label: str | None, prepared: dict | None,
               before: dict | None = None) -> dict:
        """:meth:`begin_fit` on a table ``_accept`` already checked (``fit`` checked it before
        ``_fit``), or on the ``prepared`` mapping of another replica (``frame`` None). ``before``:
        the model's attributes before the preparation began (default: now)."""
        if prepared is None:
            before = dict(vars(self)) if before is None else before
            self._prepare(frame, label)
            prepared = {k: v for k, v in vars(self).items()
                        if k != "trace" and (k not in before or before[k] is not v)}
            prepared["trace.bounds"] = self.trace.bounds
        else:
            self.trace = TrainingTrace()
            vars(self).update({k: v for k, v in prepared.items() if k != "trace.bounds"})
            self.trace.bounds = dict(prepared["trace.bounds"])
        self._streams()
        self._build(int(self.X_.shape[0]))
        self._note_sizes()
        return prepared

    def _note_sizes(self) -> None:
        self.trace.extra.update(
            sigma=self.sigma_, num_teachers=self.num_teachers_, batch_size=self.batch_size_, gp_weight=self.gp_weight_,
            z_dim=self.z_dim_, max_iter=self.max_iter_, num_critics=1,
        )

    def end_iteration(self, iteration: int) -> None:
        """Count iteration ``iteration`` and run the callbacks (the networks are current)."""
        self._after_iteration(iteration)

    def end_fit(self, seen: np.ndarray, flips: torch.Tensor) -> None:
        """Fill the trace at the end of training (or when it stopped): the rows each critic-step
        slot drew (``seen`` [k, N] bool) and the share of flipped indicator labels per iteration
        run (``flips``: counts per iteration, of 2B labels per critic step)."""
        done = self.trace.iterations
        self.trace.teacher_rows = [set(np.flatnonzero(r).tolist()) for r in seen]
        self.trace.extra["label_flips"] = flips[:done].numpy() / float(2 * self.batch_size_ * self.num_teachers_)
        if self.blocks_ is not None:
            self.trace.extra["blocks"] = [b.numpy() for b in self.blocks_]

    def _fit(self, df: pd.DataFrame, label: str | None) -> None:
        """The fit: the set-up of :meth:`begin_fit`, then :func:`~pategan_audit.replicas.wgan.run_group`
        at R = 1 (the step every replica of ``fit_many`` trains through)."""
        self._begin(df, label, None)
        run_group([self])

    def _with_cond(self, x: torch.Tensor, y: torch.Tensor | None) -> torch.Tensor:
        return x if y is None else torch.cat([x, y[:, None]], dim=1)

    def _latent(self, n: int, gen: torch.Generator) -> torch.Tensor:
        return torch.rand(n, self.z_dim_, generator=gen) * 2.0 - 1.0  # U(-1, 1)

    # -- sampling ------------------------------------------------------------------------------
    def _generate(self, n: int, cond: torch.Tensor | None, gen: torch.Generator) -> np.ndarray:
        with torch.no_grad():
            out = self.G(self._with_cond(self._latent(n, gen), cond))
        return out.to(torch.float64).numpy()
