"""How training rows are split among teachers, and how teachers draw their real mini-batches.

Partition schemes (implementation notes §updated.partition, §synthcity.partition, §borealis.partition, §smartnoise.partition, §corrected.partition); every function
returns a list of ``k`` int64 arrays of row positions (0..N-1):

* :func:`permutation_blocks`: a random permutation cut into ``k`` blocks of ``m = ⌊N/k⌋`` rows;
  the ``N mod k`` remaining rows belong to no block (updated, synthcity).
* :func:`contiguous_blocks`: rows ``[⌊tN/k⌋, ⌊(t+1)N/k⌋)`` in dataset order (borealis).
* :func:`array_split_blocks`: ``np.array_split`` of the rows in dataset order (smartnoise).
* :func:`balanced_blocks`: a random permutation split by ``np.array_split`` into ``k`` disjoint
  blocks that cover every row (corrected with ``neighbours="replace_one"``).
* :func:`independent_blocks`: every row joins a teacher drawn uniformly and independently of the
  other rows (corrected's default, ``neighbours="add_remove"``); blocks have random sizes and may
  be empty.

Why two schemes for corrected: a DP guarantee is stated for a neighbouring relation, and the
partition must change **one** teacher's data between neighbours. Under replace-one (same N, one
row swapped in place) a permutation cut into fixed-size blocks does. Under add/remove (the
relation of the paper's membership games, Querybased 4 vs 5 rows, GroundHog 686 vs 685) it does
not: ``array_split`` of 4 rows gives blocks (2, 2), of 5 rows (3, 2), so removing the target
from a (3, 2) split leaves (2, 2) or (3, 1), a size pattern the smaller dataset never produces,
and every teacher's block moves. With independent assignment the blocks of D and of D + x
are coupled exactly: the rows of D are assigned by the same law in both, x joins one teacher, so
at most one teacher's data (hence one vote per query) differs, which is the sensitivity every
PATE accountant assumes (PATE-GAN, ``jordon2019pategan`` §4; ``ganev2025elusive`` §4 on the
partition violations V3-V6).

Teacher assignment: :func:`assign_blocks` maps teacher ``t`` to a block. ``"disjoint"`` gives
teacher ``t`` block ``t``; ``"last_block"`` gives **every** teacher block ``k-1`` — updated's
stale loop index (violation V4). synthcity's V5 (a new permutation every iteration) is the preset
calling :func:`permutation_blocks` again each iteration.

:class:`BlockSampler` draws, for all teachers at once, ``B`` distinct rows from each teacher's
block (the first batch of a freshly shuffled ``DataLoader``, as borealis and smartnoise do).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

__all__ = [
    "permutation_blocks",
    "contiguous_blocks",
    "array_split_blocks",
    "balanced_blocks",
    "independent_blocks",
    "assign_blocks",
    "check_partition_args",
    "are_disjoint",
    "BlockSampler",
    "pick_rows",
]


def check_partition_args(num_rows: int, num_teachers: int) -> None:
    """Raise a ValueError unless ``1 <= num_teachers <= num_rows``."""
    if not isinstance(num_teachers, (int, np.integer)) or isinstance(num_teachers, bool) or num_teachers < 1:
        raise ValueError(f"num_teachers must be a positive integer, got {num_teachers!r}")
    if num_teachers > num_rows:
        raise ValueError(
            f"more teachers ({num_teachers}) than training rows ({num_rows}): every teacher needs at least one row; "
            f"pass num_teachers <= {num_rows} (the paper uses max(2, N // 1000))"
        )


def permutation_blocks(num_rows: int, num_teachers: int, *, rng: np.random.Generator) -> list[np.ndarray]:
    """``k`` blocks of ``⌊N/k⌋`` rows of one random permutation (implementation notes §updated.partition, §synthcity.partition)."""
    check_partition_args(num_rows, num_teachers)
    m = num_rows // num_teachers
    perm = rng.permutation(num_rows)
    return [perm[t * m:(t + 1) * m].astype(np.int64) for t in range(num_teachers)]


def contiguous_blocks(num_rows: int, num_teachers: int) -> list[np.ndarray]:
    """borealis: ``[⌊tN/k⌋, ⌊(t+1)N/k⌋)`` in dataset order; the last block runs to N (implementation notes §borealis.partition)."""
    check_partition_args(num_rows, num_teachers)
    edges = [(t * num_rows) // num_teachers for t in range(num_teachers)] + [num_rows]
    return [np.arange(edges[t], edges[t + 1], dtype=np.int64) for t in range(num_teachers)]


def array_split_blocks(num_rows: int, num_teachers: int) -> list[np.ndarray]:
    """smartnoise: ``np.array_split`` of the rows in dataset order (implementation notes §smartnoise.partition)."""
    check_partition_args(num_rows, num_teachers)
    return [b.astype(np.int64) for b in np.array_split(np.arange(num_rows), num_teachers)]


def balanced_blocks(num_rows: int, num_teachers: int, *, rng: np.random.Generator) -> list[np.ndarray]:
    """corrected: a random permutation split into ``k`` disjoint blocks covering all rows (implementation notes §corrected.partition)."""
    check_partition_args(num_rows, num_teachers)
    return [b.astype(np.int64) for b in np.array_split(rng.permutation(num_rows), num_teachers)]


def independent_blocks(num_rows: int, num_teachers: int, *, rng: np.random.Generator) -> list[np.ndarray]:
    """corrected under add/remove: each row's teacher drawn uniformly and independently
    (``rng.integers(0, k, N)``); block sizes are Binomial(N, 1/k) and a block may be empty
    (see the module docstring for why this is exact under add/remove and blocks are not)."""
    check_partition_args(num_rows, num_teachers)
    owner = rng.integers(0, num_teachers, size=num_rows)
    return [np.flatnonzero(owner == t).astype(np.int64) for t in range(num_teachers)]


def assign_blocks(blocks: Sequence[np.ndarray], scheme: str) -> list[np.ndarray]:
    """Block of each teacher: ``"disjoint"`` -> block t; ``"last_block"`` -> block k-1 for all (V4)."""
    if scheme == "disjoint":
        return list(blocks)
    if scheme == "last_block":
        return [blocks[-1]] * len(blocks)
    raise ValueError(f"unknown teacher assignment {scheme!r}; use 'disjoint' or 'last_block'")


def are_disjoint(blocks: Sequence[np.ndarray]) -> bool:
    """True if no row position appears in two blocks (or twice in one)."""
    pooled = np.concatenate([np.asarray(b) for b in blocks]) if len(blocks) else np.empty(0)
    return len(np.unique(pooled)) == len(pooled)


class BlockSampler:
    """Draw ``B`` rows from every teacher's block in one vectorised call.

    blocks: one int array of row positions per teacher (may be of different sizes, may repeat).
    :meth:`sample` returns a LongTensor ``[k, B]`` of row positions; row ``t`` is a uniformly
    random ``B``-subset of block ``t`` (random keys + ``topk``, no Python loop over teachers).

    small: what a block with fewer than ``B`` rows does. ``"error"`` (every preset whose
    partition has fixed sizes): :meth:`sample` raises. ``"replace"`` (independent assignment,
    whose block sizes are random): such a block draws its ``B`` rows uniformly *with*
    replacement (an extra ``torch.rand(k, B)`` after the keys, drawn only when some block is
    small); an empty block yields placeholder rows and ``has_rows[t]`` is False: the caller
    gives that teacher's real term weight 0 (:meth:`NeuralTeachers.train_step` ``real_weight``).
    """

    def __init__(self, blocks: Sequence[np.ndarray], *, small: str = "error"):
        if len(blocks) == 0:
            raise ValueError("BlockSampler needs at least one block")
        if small not in ("error", "replace"):
            raise ValueError(f"small must be 'error' or 'replace', got {small!r}")
        sizes = np.array([len(b) for b in blocks])
        if small == "error" and sizes.min() < 1:
            raise ValueError("every teacher block needs at least one row")
        self.small = small
        self.sizes = torch.as_tensor(sizes, dtype=torch.int64)
        width = max(1, int(sizes.max()))
        table = np.zeros((len(blocks), width), dtype=np.int64)
        valid = np.zeros((len(blocks), width), dtype=bool)
        for t, b in enumerate(blocks):  # once, at construction
            table[t, :len(b)] = b
            valid[t, :len(b)] = True
        self.table = torch.from_numpy(table)
        self.invalid = torch.from_numpy(~valid)
        self.min_size = int(sizes.min())
        self.has_rows = self.sizes > 0

    @property
    def num_blocks(self) -> int:
        return int(self.table.shape[0])

    def check(self, batch_size: int) -> None:
        """Raise unless ``batch_size`` rows can be drawn from every block."""
        if batch_size < 1 or (self.small == "error" and batch_size > self.min_size):
            raise ValueError(
                f"batch_size {batch_size} must be in [1, {self.min_size}] (the smallest teacher block); "
                "lower batch_size or use fewer teachers"
            )

    def needs_fill(self, batch_size: int) -> bool:
        """True when some block is smaller than ``batch_size`` (``small="replace"`` then draws
        the extra uniforms of the with-replacement fill)."""
        return self.small == "replace" and self.min_size < batch_size

    def sample(self, batch_size: int, *, generator: torch.Generator) -> torch.Tensor:
        self.check(batch_size)
        keys = torch.rand(self.table.shape, generator=generator)
        fill = torch.rand((self.num_blocks, batch_size), generator=generator) if self.needs_fill(batch_size) else None
        return pick_rows(self.table, self.invalid, self.sizes, keys, batch_size, fill, ordered=self.small == "replace")


def pick_rows(table: torch.Tensor, invalid: torch.Tensor, sizes: torch.Tensor, keys: torch.Tensor, batch_size: int,
              fill: torch.Tensor | None, *, ordered: bool = False) -> torch.Tensor:
    """The rows a :class:`BlockSampler` draws from its random ``keys`` (``[..., k, W]``, padding
    masked out) and, where a block is smaller than ``batch_size``, its with-replacement ``fill``
    uniforms (``[..., k, B]``). Shared by the single sampler and the stacked one of the replica
    axis, so both pick identically from the same draws. ``ordered``: rows in key order (the
    order of an unsorted ``topk`` depends on the table's width, which padding changes; the
    fixed-size presets keep the unsorted order they have always had)."""
    keys = keys.masked_fill(invalid, 2.0)
    width = table.shape[-1]
    if batch_size <= width:
        pick = torch.topk(keys, batch_size, dim=-1, largest=False, sorted=ordered).indices
    else:
        pick = torch.zeros((*table.shape[:-1], batch_size), dtype=torch.int64)
    if fill is not None:
        small = (sizes < batch_size).unsqueeze(-1)
        drawn = (fill * sizes.clamp(min=1).unsqueeze(-1).to(fill.dtype)).long()
        drawn = torch.minimum(drawn, (sizes - 1).clamp(min=0).unsqueeze(-1))  # guard fill == 1 - ulp rounding up
        pick = torch.where(small, drawn, pick)
    return torch.gather(table, -1, pick)
