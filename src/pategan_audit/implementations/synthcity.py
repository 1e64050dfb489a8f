"""synthcity: the inner ``PATEGAN`` class of ``vanderschaarlab/synthcity`` (``ganev2025elusive`` §4, Tables 2-3;
implementation notes §synthcity),
as benchmarked by the audit paper (default) or as released (``harness=False`` plus the switches).

Data (implementation notes §synthcity.data): :class:`~pategan_audit.components.synthcity_encoder.TabularEncoder` (Bayesian
GMM mode-specific normalisation, one-hot discrete columns; bounds, mixtures and categories read
from the data, V12). CTGAN-style conditional vectors over the discrete columns (C dims): a
discrete column chosen uniformly, a category with probability ∝ its training count (upstream
0.2.12's ``ConditionalDatasetSampler``; O3: data-derived, non-DP).

Architecture (implementation notes §synthcity.architecture): latent ``N(0,1)^100 ⊕ cond``; residual generator with Gumbel-softmax
(τ = 0.2) heads; student = WGAN-GP critic ``[x; cond] → 100 LeakyReLU → Dropout(0.1) → 100
LeakyReLU → 1``; Adam lr 1e-4, weight decay 1e-3, gradient-norm clip 1; B = 200 (harness
``min(200, ⌊N/k⌋)``).

Loop (implementation notes §synthcity.partition, §synthcity.loop, §synthcity.votes), per iteration: a *new* permutation into k blocks of ``⌊N/k⌋`` (V5); k new
logistic-regression teachers (B2) fitted on B real rows of their block and B generated rows
(harness; released: all ``m`` rows); then ``generator_n_iter = 10`` "epochs" of one real batch
each (harness; released: every batch of the loader over ~80 % of the rows): a student step on
``−mean(D(real ∪ fakes labelled 1)) + mean(D(fakes labelled 0)) + 10·GP(real, fake)`` (O1: the
student reads real rows) with labels ``1[(n1 + Lap(1/λ))/(k + 1e-8) > 0.5]``, all set to 0 and
*not charged* when at least half are 1 (O4); a generator step on ``−mean(D(G(z) ⊕ cond))`` plus
the conditional loss whose targets are the real batch's one-hots. Accountant with the V7
indexing bug, L = 100, δ = N^{-3/2} whatever the user passes (O10). That iteration is the replica
step :class:`~pategan_audit.replicas.synthcity.SynthcityStep`: ``fit`` runs it at R = 1
(:func:`~pategan_audit.replicas.loop.fit_one`), ``fit_many`` at any R, so a single fit and a
replica of a batched fit are one code path.

Deviation (real-batch source): upstream's sampler pairs rows and conditional vectors in a way we
could only partly reconstruct (implementation notes §synthcity.loop); we draw each real batch uniformly without replacement
from a fixed random 80 % of the rows and pair it with independently drawn conditional vectors
(``data_sampler="uniform_80"``, the default). ``data_sampler="upstream"`` rebuilds synthcity 0.2.12's
sampler instead (:func:`_upstream_pool`: repeats, M ≈ 0.8 N rows per epoch varying with the seed).

Plugin variant (``PLUGIN_OVERRIDES``): the public ``Plugins().get("pategan", random_state=seed)``
at its defaults, checked against the real 0.2.12 library (tests/implementations/test_synthcity_plugin.py):
the seed reaches only the data sampler, everything else runs from seed 0, as upstream; its XGBoost
teachers are replaced by logistic ones and its random draws are ours.
"""
from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import ClassVar, Sequence

import numpy as np
import pandas as pd
import torch

from ..components.generators import BlockHead, ResidualConcatGenerator
from ..components.networks import BatchedMLP, adam
from ..components.partition import BlockSampler, permutation_blocks
from ..components.scalers import restore_dtypes
from ..components.synthcity_encoder import TabularEncoder
from ..replicas.loop import fit_one
from ..replicas.synthcity import SynthcityStep
from ..seeds import training_streams
from .engine import PateConfig, PateGenerator
from .hyperparameters import paper_setting, paper_sizes
from .teacher_phase import teacher_phase

__all__ = ["SynthcityConfig", "Synthcity", "ConditionalSampler", "RELEASED_OVERRIDES", "PLUGIN_OVERRIDES"]


class ConditionalSampler:
    """CTGAN-style conditional vectors over the discrete one-hot blocks of the encoded data
    (upstream ``utils/samplers.py``).

    A row's vector picks a discrete column uniformly and one of its categories with probability
    ∝ its count in the training data, as synthcity 0.2.12's ``ConditionalDatasetSampler`` does
    (``category_freq / sum``; not CTGAN's ``log_frequency`` weighting, which 0.2.12 does not
    have): the counts are read from the training data without noise (finding O3). With no
    blocks the width is 0.
    """

    def __init__(self, X: np.ndarray, blocks: Sequence[tuple[int, int]]):
        self.blocks = [(int(s), int(w)) for s, w in blocks]
        self.offsets = np.cumsum([0] + [w for _, w in self.blocks])[:-1].astype(np.int64)
        self.width = int(sum(w for _, w in self.blocks))
        max_w = max([w for _, w in self.blocks], default=0)
        probs = np.zeros((len(self.blocks), max(max_w, 1)))
        for j, (s, w) in enumerate(self.blocks):
            freq = np.asarray(X[:, s:s + w], dtype=np.float64).sum(axis=0)
            probs[j, :w] = freq / freq.sum()
        self.cum_probs = torch.as_tensor(np.cumsum(probs, axis=1), dtype=torch.float64)

    def sample(self, n: int, *, generator: torch.Generator) -> torch.Tensor:
        cond = torch.zeros(n, self.width)
        if not self.blocks or n == 0:
            return cond
        col = torch.randint(len(self.blocks), (n,), generator=generator)
        r = torch.rand(n, 1, generator=generator, dtype=torch.float64)
        cat = (self.cum_probs[col] > r).to(torch.int64).argmax(dim=1)
        cond[torch.arange(n), torch.as_tensor(self.offsets)[col] + cat] = 1.0
        return cond


@dataclass(frozen=True)
class SynthcityConfig(PateConfig):
    """synthcity settings; defaults = the inner class as benchmarked (paper §5: max_iter 10,000,
    one batch per "epoch", teachers on B rows, no global reseeding)."""

    lam: float = 1e-3
    num_moments: int = 100
    batch_size: int = 200
    accountant: str = "synthcity"
    generator_n_iter: int = 10
    learning_rate: float = 1e-4
    weight_decay: float = 1e-3
    clipping_value: float = 1.0
    n_units_hidden: int = 100
    gp_weight: float = 10.0
    discriminator_dropout: float = 0.1
    teacher_iters: int = 5
    partition: str = "resample_each_iteration"
    teacher_model: str = "logistic_refit"
    student_reads_real: bool = True
    reseed_each_fit: bool = False
    data_sampler: str = "uniform_80"
    conditional_sampler: str = "empirical"
    skip_majority_batches: bool = True
    ignore_user_delta: bool = True

    _choices: ClassVar[dict] = {
        "partition": ("resample_each_iteration", "disjoint"),
        "teacher_model": ("logistic_refit", "neural_persistent"),
        "conditional_sampler": ("empirical", "none"),
        "data_sampler": ("uniform_80", "upstream"),
    }


# as released (inner class defaults): cap 1000, full epochs, teachers on all m rows, reseeding
RELEASED_OVERRIDES = {"harness": False, "max_iter": 1000, "reseed_each_fit": True}
# The public plugin, ``Plugins().get("pategan", random_state=seed)`` of synthcity 0.2.12, at its
# defaults (implementation notes §synthcity.defaults, §common.table3): 200 iterations, width 500,
# lr 1e-3, and upstream's data sampler drawn from the seed (``data_sampler="upstream"``), while
# networks, partitions, batches and vote noise run from seed 0 (``reseed_each_fit``). Checked
# against the real library in tests/implementations/test_synthcity_plugin.py (seeding, rows
# labelled per iteration, δ, the ε̂ of a charge). Not modelled: its XGBoost teachers (ours are
# logistic) and its exact random draws, so which batches the O4 rule skips, hence the charge and
# ε̂ of a given iteration, agree in distribution only.
PLUGIN_OVERRIDES = {**RELEASED_OVERRIDES, "max_iter": 200, "n_units_hidden": 500, "learning_rate": 1e-3,
                    "data_sampler": "upstream"}


class Synthcity(PateGenerator):
    """synthcity preset (see the module docstring)."""

    name: ClassVar[str] = "synthcity"
    Config: ClassVar[type] = SynthcityConfig
    vote_offset: ClassVar[float] = 1e-8  # (n1 + Z) / (n0 + n1 + 1e-8) > 0.5

    def _seed(self) -> int | None:
        """O2: upstream's GAN constructor calls ``enable_reproducible_results(0)``, so with
        ``reseed_each_fit`` every training stream runs from seed 0 whatever the seed; only
        ``data_sampler="upstream"`` (built before that call upstream) still reads the seed."""
        return 0 if self.config.reseed_each_fit else super()._seed()

    def _sampler_rng(self) -> np.random.Generator:
        """The stream of upstream's data sampler: a sixth child of the *user's* seed (the five
        training streams are the first five), untouched by ``reseed_each_fit``."""
        return np.random.default_rng(training_streams(super()._seed(), 6)[5])

    def _check_input(self, df: pd.DataFrame, label: str | None) -> None:
        """The base checks, then what would otherwise fail only after the encoder's mixtures are
        fitted: the teacher count against the rows, and O10's δ = N^{-3/2}, which is 1 (outside
        the accountant's (0, 1)) for a one-row table whatever ``delta`` was passed."""
        super()._check_input(df, label)
        self._resolve_num_teachers(len(df))
        if self.config.ignore_user_delta and len(df) < 2:
            raise ValueError(
                f"synthcity ignores the delta passed (delta={self.config.delta!r}; O10, as the paper benchmarked it) and "
                f"sets delta = N^(-3/2) from the N training rows; N = {len(df)} makes it {self._delta(len(df)):g}, "
                "outside (0, 1): train on at least 2 rows, or pass ignore_user_delta=False to use the delta given")

    def _delta(self, num_rows: int) -> float:
        if self.config.ignore_user_delta:  # O10: the constructor stores delta=None
            return 1.0 / (num_rows * np.sqrt(num_rows))
        return float(self.config.delta)

    def release_rule(self, labels: torch.Tensor) -> tuple[torch.Tensor, bool]:
        """O4: if at least half the noisy labels are 1, all become 0 and nothing is charged."""
        if self.config.skip_majority_batches and int(labels.sum()) >= len(labels) / 2:
            self.trace.extra["skipped_batches"][-1] += 1
            return torch.zeros_like(labels), False
        return labels, True

    def paper_hyperparameters(self) -> bool:
        """Whether the "paper" row of :mod:`.hyperparameters` applies (Table 3)."""
        return paper_setting(self.name, self.config) is not None

    def _batches_per_epoch(self) -> int:
        if self.config.harness:
            return 1
        return int(np.ceil(len(self.student_pool_) / self.batch_size_))

    def _student_schedule(self) -> tuple[int, int]:
        """(epochs, critic steps per batch): ``generator_n_iter`` epochs of one step each, or the
        "paper" row's one epoch of n_S steps (:mod:`.hyperparameters`)."""
        paper = paper_setting(self.name, self.config)
        if paper is None:
            return int(self.config.generator_n_iter), 1
        return 1, int(paper.student_rounds)

    def _queries_per_iteration(self) -> int:
        epochs, steps = self._student_schedule()
        return epochs * steps * self._batches_per_epoch() * int(self.batch_size_)

    def _setup(self, df: pd.DataFrame, label: str | None) -> None:
        cfg = self.config
        self.encoder, X = _fitted_encoder(df, cfg.bounds, cfg.public_bounds)
        self.trace.bounds = dict(self.encoder.bounds)
        self.X_ = torch.tensor(X, dtype=torch.float32)  # a copy: the cached encoding is read-only
        N, D = self.X_.shape
        k = self._resolve_num_teachers(N)
        self.num_teachers_ = k
        paper = paper_setting(self.name, cfg)
        if paper is not None:  # min(B, N//k) even as released
            self.batch_size_ = max(1, min(int(paper.batch_size), N // k))
        else:
            self.batch_size_ = self._resolve_batch(N, k, needs_full_blocks=False)
        self.student_schedule_ = self._student_schedule()  # (epochs, critic steps per real batch)
        self.model_width_ = D
        blocks = [("continuous" if a == "identity" else "onehot", w) for a, w in self.encoder.activation_layout]
        self.head = BlockHead(blocks, tau=0.2)
        self.head.generator = self.train_gen
        use_cond = cfg.conditional_sampler == "empirical"
        self.cond_sampler = ConditionalSampler(X, self.encoder.discrete_blocks if use_cond else [])
        C = self.cond_sampler.width
        latent = cfg.n_units_hidden + C
        if self.paper_hyperparameters():
            sizes = paper_sizes(latent_dim=latent, width=D)
            self.gen_net = _HeadMLP(BatchedMLP(1, sizes["generator"], hidden_activation="relu", generator=self.init_gen), self.head)
            student_sizes = [D + C] + sizes["student"][1:]
        else:
            self.gen_net = ResidualConcatGenerator(latent, cfg.n_units_hidden, self.head, generator=self.init_gen)
            student_sizes = [D + C, cfg.n_units_hidden, cfg.n_units_hidden, 1]
        self.student = BatchedMLP(1, student_sizes, hidden_activation="leaky_relu:0.01", dropout_p=cfg.discriminator_dropout,
                                  generator=self.init_gen)
        self.student.dropout_generator = self.train_gen
        self.opt_generator = adam(self.gen_net.parameters(), lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
        self.opt_student = adam(self.student.parameters(), lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
        self.teacher_phase_ = teacher_phase(cfg.teacher_model, rounds=cfg.teacher_iters, fake_sampling=True)
        self.teachers = self.teacher_phase_.make_teachers(
            k, [D, 1] if self.paper_hyperparameters() else [D, D, 1], hidden_activation="relu", weight_init="torch_default",
            bias_init="torch_default", lr=cfg.learning_rate, generator=self.init_gen)
        self.fixed_blocks_ = permutation_blocks(N, k, rng=self.partition_rng)
        if cfg.teacher_model == "neural_persistent":
            self.sampler = BlockSampler(self.fixed_blocks_)
        if cfg.data_sampler == "upstream":
            self.student_pool_, self.dataset_cond_ = _upstream_pool(X, self.cond_sampler, self._sampler_rng())
        else:
            # the student's real rows: a fixed random 80 % of positions, each with a fixed cond vector
            self.student_pool_ = np.sort(self.partition_rng.permutation(N)[: max(1, int(0.8 * N))])
            self.dataset_cond_ = self.cond_sampler.sample(N, generator=self.train_gen)
        self._first_subsets = None
        self.trace.extra.update(skipped_batches=[], student_rows=set())

    # -- generator input / output -------------------------------------------------------------
    def _latent(self, n: int, gen: torch.Generator, *, sampling: bool) -> torch.Tensor:
        z = torch.randn(n, self.config.n_units_hidden, generator=gen)
        return torch.cat([z, self.cond_sampler.sample(n, generator=gen)], dim=1)

    def _fakes(self, latent: torch.Tensor, *, generator: torch.Generator | None = None) -> torch.Tensor:
        previous = self.head.generator
        if generator is not None:
            self.head.generator = generator
        try:
            return self.gen_net(latent)
        finally:
            self.head.generator = previous

    def training_latent(self, n: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """``n`` latents ``[n, H + C]`` (noise and conditional vectors) from ``generator`` (default
        the training stream ``train_gen``, the next draw of the fit): what the teachers' generated
        rows are made from. synthcity draws its training conditionals as its sampler does
        (``sampling=True``), unlike the other presets."""
        return self._latent(int(n), self.train_gen if generator is None else generator, sampling=True)

    # -- the teacher phase (:mod:`.teacher_phase`) --------------------------------------------------
    def train_teachers(self, it: int) -> None:
        """The teacher phase of iteration ``it`` on the model's own teachers, by its strategy
        (B2: new logistic teachers, or rounds of the persistent neural ones)."""
        self.teacher_phase_.run(self, it)
        if self.config.teacher_model == "neural_persistent":
            self.keep_first_subsets(self.fixed_blocks_)

    def keep_first_subsets(self, subsets: Sequence[np.ndarray]) -> None:
        """The teachers' first-seen subsets (:meth:`first_seen_subsets`): kept the first time only."""
        if self._first_subsets is None:
            self._first_subsets = subsets

    def _refit_rows(self, it: int) -> torch.Tensor:
        """B2's rows: a shuffled harness batch (released: the whole block) of each block of the fixed
        partition, or of a new one every iteration (V5)."""
        cfg, k, N = self.config, self.num_teachers_, self.X_.shape[0]
        if cfg.partition == "resample_each_iteration":  # V5: a new permutation every iteration
            blocks = permutation_blocks(N, k, rng=self.partition_rng)
        else:
            blocks = self.fixed_blocks_
        m = len(blocks[0])
        n_fit = min(self.batch_size_, m) if cfg.harness else m
        return torch.as_tensor(np.stack([self.partition_rng.permutation(b)[:n_fit] for b in blocks]))

    def _after_refit(self, rows: torch.Tensor) -> None:
        self.keep_first_subsets([r.numpy() for r in rows])

    def real_batches(self) -> list[np.ndarray]:
        """One epoch's real batches (row positions): a permutation of the student's pool from
        ``train_gen``, cut into batches of B (harness and "paper": its first B rows only)."""
        pool = self.student_pool_
        order = pool[torch.randperm(len(pool), generator=self.train_gen).numpy()]
        B = self.batch_size_
        if self.config.harness or self.paper_hyperparameters():
            return [order[:B]]
        return [order[i:i + B] for i in range(0, len(order), B)]

    def _fit(self, df: pd.DataFrame, label: str | None) -> None:
        """The fit: :class:`~pategan_audit.replicas.synthcity.SynthcityStep` at R = 1 through the replica loop."""
        fit_one(self, df, label, SynthcityStep)

    def _decode(self, values: np.ndarray) -> pd.DataFrame:
        out = self.encoder.inverse_transform(values)[self.columns_]  # plain astype: truncation (O8)
        return restore_dtypes(out, self.dtypes_) if self.config.harness else out


def _upstream_pool(X: np.ndarray, cond_sampler: ConditionalSampler, rng: np.random.Generator) -> tuple[np.ndarray, torch.Tensor]:
    """synthcity 0.2.12's ``ConditionalDatasetSampler`` as built (``utils/samplers.py``), with our
    draws: a random split of ``⌊0.8 N⌋`` rows; N conditional vectors, each matched to a uniformly
    drawn row holding its category; the matches that fall in the split are kept in draw order,
    repeats included, so an epoch visits M ≈ 0.8 N rows and M varies with the seed. Upstream's
    loader then reads the dataset at each kept match's **position** in that list (the last one for
    a repeated row), paired with the conditional vector drawn at that position; reproduced. With
    no discrete column there is no matching: the epoch visits positions ``0 … ⌊0.8 N⌋ − 1``.

    Returns ``(pool, cond)``: [M] row positions (with repeats), [N, C] conditional vectors."""
    N = X.shape[0]
    in_split = np.zeros(N, dtype=bool)
    in_split[rng.permutation(N)[: int(np.floor(0.8 * N))]] = True
    cond = cond_sampler.sample(N, generator=torch.Generator().manual_seed(int(rng.integers(2**62))))
    if cond_sampler.width == 0:
        return np.arange(int(in_split.sum()), dtype=np.int64), cond
    hot = cond.argmax(dim=1).numpy()
    block = np.searchsorted(cond_sampler.offsets, hot, side="right") - 1
    matched = np.empty(N, dtype=np.int64)
    for j, (start, _) in enumerate(cond_sampler.blocks):
        for cat in np.unique(hot[block == j] - cond_sampler.offsets[j]):
            draws = np.flatnonzero((block == j) & (hot - cond_sampler.offsets[j] == cat))
            rows = np.flatnonzero(X[:, start + cat] > 0.5)
            matched[draws] = rows[rng.integers(len(rows), size=len(draws))]
    kept = matched[in_split[matched]]
    last = {int(v): i for i, v in enumerate(kept)}
    return np.array([last[int(v)] for v in kept], dtype=np.int64), cond


_ENCODER_CACHE: "OrderedDict[tuple, tuple[TabularEncoder, np.ndarray]]" = OrderedDict()


def _fitted_encoder(df: pd.DataFrame, bounds: str, public_bounds: dict | None) -> tuple[TabularEncoder, np.ndarray]:
    """The fitted encoder and the encoded table, memoised per process on the table's content.

    The encoder is deterministic (``random_state=0``) and read-only after fitting, so models
    trained on the same table (shadow models, repeated seeds) share one fit instead of re-running
    a Bayesian mixture per continuous column each time."""
    digest = hashlib.sha256(pd.util.hash_pandas_object(df, index=False).to_numpy().tobytes()).hexdigest()
    key = (digest, tuple(map(str, df.columns)), tuple(map(str, df.dtypes)), bounds, repr(sorted((public_bounds or {}).items())))
    if key in _ENCODER_CACHE:
        _ENCODER_CACHE.move_to_end(key)
        return _ENCODER_CACHE[key]
    encoder = TabularEncoder(n_components=5, bounds=bounds, public_bounds=public_bounds, random_state=0)
    X = encoder.fit_transform(df)
    X.setflags(write=False)
    _ENCODER_CACHE[key] = (encoder, X)
    while len(_ENCODER_CACHE) > 4:
        _ENCODER_CACHE.popitem(last=False)
    return encoder, X


class _HeadMLP(torch.nn.Module):
    """An MLP followed by the encoder's output head ("paper" hyperparameters)."""

    def __init__(self, mlp: BatchedMLP, head: BlockHead):
        super().__init__()
        self.mlp, self.head = mlp, head

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.mlp.single(x))
