"""How training rows are split among teachers, and how teachers draw their real mini-batches.

Partition schemes (implementations spec §3.3, §4.3, §6.3, §7.3, §9.1 item 2); every function
returns a list of ``k`` int64 arrays of row positions (0..N-1):

* :func:`permutation_blocks`: a random permutation cut into ``k`` blocks of ``m = ⌊N/k⌋`` rows;
  the ``N mod k`` remaining rows belong to no block (updated, synthcity).
* :func:`contiguous_blocks`: rows ``[⌊tN/k⌋, ⌊(t+1)N/k⌋)`` in dataset order (borealis).
* :func:`array_split_blocks`: ``np.array_split`` of the rows in dataset order (smartnoise).
* :func:`balanced_blocks`: a random permutation split by ``np.array_split`` into ``k`` disjoint
  blocks that cover every row (corrected).

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
    "assign_blocks",
    "check_partition_args",
    "are_disjoint",
    "BlockSampler",
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
    """``k`` blocks of ``⌊N/k⌋`` rows of one random permutation (spec §3.3 / §4.3)."""
    check_partition_args(num_rows, num_teachers)
    m = num_rows // num_teachers
    perm = rng.permutation(num_rows)
    return [perm[t * m:(t + 1) * m].astype(np.int64) for t in range(num_teachers)]


def contiguous_blocks(num_rows: int, num_teachers: int) -> list[np.ndarray]:
    """borealis: ``[⌊tN/k⌋, ⌊(t+1)N/k⌋)`` in dataset order; the last block runs to N (spec §6.3)."""
    check_partition_args(num_rows, num_teachers)
    edges = [(t * num_rows) // num_teachers for t in range(num_teachers)] + [num_rows]
    return [np.arange(edges[t], edges[t + 1], dtype=np.int64) for t in range(num_teachers)]


def array_split_blocks(num_rows: int, num_teachers: int) -> list[np.ndarray]:
    """smartnoise: ``np.array_split`` of the rows in dataset order (spec §7.3)."""
    check_partition_args(num_rows, num_teachers)
    return [b.astype(np.int64) for b in np.array_split(np.arange(num_rows), num_teachers)]


def balanced_blocks(num_rows: int, num_teachers: int, *, rng: np.random.Generator) -> list[np.ndarray]:
    """corrected: a random permutation split into ``k`` disjoint blocks covering all rows (spec §9.1 item 2)."""
    check_partition_args(num_rows, num_teachers)
    return [b.astype(np.int64) for b in np.array_split(rng.permutation(num_rows), num_teachers)]


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
    """Draw ``B`` distinct rows from every teacher's block in one vectorised call.

    blocks: one int array of row positions per teacher (may be of different sizes, may repeat).
    :meth:`sample` returns a LongTensor ``[k, B]`` of row positions; row ``t`` is a uniformly
    random ``B``-subset of block ``t`` (random keys + ``topk``, no Python loop over teachers).
    """

    def __init__(self, blocks: Sequence[np.ndarray]):
        if len(blocks) == 0:
            raise ValueError("BlockSampler needs at least one block")
        sizes = np.array([len(b) for b in blocks])
        if sizes.min() < 1:
            raise ValueError("every teacher block needs at least one row")
        self.sizes = torch.as_tensor(sizes, dtype=torch.int64)
        width = int(sizes.max())
        table = np.zeros((len(blocks), width), dtype=np.int64)
        valid = np.zeros((len(blocks), width), dtype=bool)
        for t, b in enumerate(blocks):  # once, at construction
            table[t, :len(b)] = b
            valid[t, :len(b)] = True
        self.table = torch.from_numpy(table)
        self.invalid = torch.from_numpy(~valid)
        self.min_size = int(sizes.min())

    @property
    def num_blocks(self) -> int:
        return int(self.table.shape[0])

    def sample(self, batch_size: int, *, generator: torch.Generator) -> torch.Tensor:
        if batch_size < 1 or batch_size > self.min_size:
            raise ValueError(
                f"batch_size {batch_size} must be in [1, {self.min_size}] (the smallest teacher block); "
                "lower batch_size or use fewer teachers"
            )
        keys = torch.rand(self.table.shape, generator=generator)
        keys.masked_fill_(self.invalid, 2.0)
        pick = torch.topk(keys, batch_size, dim=1, largest=False, sorted=False).indices
        return torch.gather(self.table, 1, pick)
