"""Partition schemes and the vectorised per-teacher batch sampler (components.partition)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pategan_audit.components.partition import (
    BlockSampler,
    are_disjoint,
    array_split_blocks,
    assign_blocks,
    balanced_blocks,
    contiguous_blocks,
    permutation_blocks,
)


def test_permutation_blocks_drop_the_remainder():
    """updated/synthcity: k blocks of floor(N/k) from one permutation (spec §3.3, §4.3)."""
    blocks = permutation_blocks(23, 5, rng=np.random.default_rng(0))
    assert [len(b) for b in blocks] == [4] * 5 and are_disjoint(blocks)
    assert len(np.concatenate(blocks)) == 20  # N mod k = 3 rows belong to no block
    again = permutation_blocks(23, 5, rng=np.random.default_rng(0))
    assert all(np.array_equal(a, b) for a, b in zip(blocks, again))


def test_cervical_block_sizes_match_fig2_references():
    """protocols C.1 reference counts on Cervical (N = 686, k = 5): borealis 137,137,137,137,138;
    smartnoise 138,137,137,137,137."""
    assert [len(b) for b in contiguous_blocks(686, 5)] == [137, 137, 137, 137, 138]
    assert [len(b) for b in array_split_blocks(686, 5)] == [138, 137, 137, 137, 137]
    assert contiguous_blocks(686, 5)[1][0] == 137  # dataset order, no shuffle (spec §6.3)


def test_balanced_blocks_cover_every_row_once():
    blocks = balanced_blocks(101, 4, rng=np.random.default_rng(1))
    assert are_disjoint(blocks) and sorted(np.concatenate(blocks).tolist()) == list(range(101))


def test_last_block_assignment_is_updated_v4():
    blocks = permutation_blocks(30, 3, rng=np.random.default_rng(2))
    assigned = assign_blocks(blocks, "last_block")
    assert all(a is blocks[-1] for a in assigned)
    assert not are_disjoint(assigned)
    assert assign_blocks(blocks, "disjoint") == list(blocks)
    with pytest.raises(ValueError):
        assign_blocks(blocks, "random")


def test_block_sampler_draws_distinct_rows_from_each_block():
    blocks = [np.arange(0, 10), np.arange(10, 13), np.arange(13, 20)]
    sampler = BlockSampler(blocks)
    g = torch.Generator().manual_seed(0)
    counts = np.zeros(20)
    for _ in range(3000):
        rows = sampler.sample(3, generator=g).numpy()
        assert rows.shape == (3, 3)
        for t in range(3):
            assert set(rows[t]) <= set(blocks[t]) and len(set(rows[t])) == 3
        np.add.at(counts, rows.ravel(), 1)
    # uniform within each block: each row of block t is drawn 3000 * 3 / |block t| times on average
    for t, b in enumerate(blocks):
        expected = 3000 * 3 / len(b)
        assert np.all(np.abs(counts[b] - expected) < 6 * np.sqrt(expected))
    with pytest.raises(ValueError, match="smallest teacher block"):
        sampler.sample(4, generator=g)


def test_block_sampler_is_seeded():
    sampler = BlockSampler([np.arange(50), np.arange(50, 90)])
    a = sampler.sample(10, generator=torch.Generator().manual_seed(3))
    b = sampler.sample(10, generator=torch.Generator().manual_seed(3))
    assert torch.equal(a, b)


@pytest.mark.parametrize("k", [0, 11, True])
def test_bad_teacher_counts(k):
    with pytest.raises(ValueError):
        contiguous_blocks(10, k)
