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
    independent_blocks,
    permutation_blocks,
)
from pategan_audit.replicas.stack import StackedBlockSampler


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


def test_independent_blocks_assign_every_row_once_with_binomial_sizes():
    blocks = independent_blocks(2000, 4, rng=np.random.default_rng(0))
    assert are_disjoint(blocks) and sorted(np.concatenate(blocks).tolist()) == list(range(2000))
    sizes = np.array([len(b) for b in blocks])
    assert np.all(np.abs(sizes - 500) < 5 * np.sqrt(2000 * 0.25 * 0.75))  # Binomial(2000, 1/4)
    assert len(set(sizes.tolist())) > 1  # random sizes, not a balanced cut


def test_add_remove_changes_one_block_only_under_independent_assignment():
    """The coupling behind corrected's add/remove guarantee: D + x (x appended) assigns the rows
    of D exactly as D does, so exactly one block gains x. A balanced cut of a permutation
    instead moves rows between blocks: removing one row of a 5-row (3, 2) split can leave
    (3, 1), which a 4-row balanced cut (always (2, 2)) never produces."""
    for seed in range(20):
        small = independent_blocks(30, 3, rng=np.random.default_rng(seed))
        big = independent_blocks(31, 3, rng=np.random.default_rng(seed))
        changed = [t for t in range(3) if not np.array_equal(small[t], big[t])]
        assert len(changed) == 1 and np.array_equal(np.setdiff1d(big[changed[0]], small[changed[0]]), [30])
    patterns = set()
    for seed in range(50):
        five = balanced_blocks(5, 2, rng=np.random.default_rng(seed))
        patterns.add(tuple(sorted(len(np.setdiff1d(b, [4])) for b in five)))  # remove row 4
    assert (1, 3) in patterns and {tuple(sorted(map(len, balanced_blocks(4, 2, rng=np.random.default_rng(s)))))
                                    for s in range(50)} == {(2, 2)}


def test_replace_mode_fills_small_blocks_with_replacement_and_flags_empty_ones():
    blocks = [np.arange(0, 10), np.array([10, 11]), np.array([], dtype=np.int64)]
    sampler = BlockSampler(blocks, small="replace")
    assert sampler.has_rows.tolist() == [True, True, False]
    g = torch.Generator().manual_seed(0)
    counts = np.zeros(12)
    for _ in range(2000):
        rows = sampler.sample(4, generator=g).numpy()
        assert len(set(rows[0])) == 4 and set(rows[0]) <= set(range(10))  # big enough: distinct
        assert set(rows[1]) <= {10, 11}
        np.add.at(counts, rows[1], 1)
    assert abs(counts[10] - 4000) < 6 * np.sqrt(2000 * 4 * 0.25)  # uniform with replacement
    with pytest.raises(ValueError, match="at least one row"):
        BlockSampler(blocks)


def test_replace_mode_draws_like_error_mode_when_no_block_is_small():
    blocks = [np.arange(0, 10), np.arange(10, 25)]
    a = BlockSampler(blocks).sample(5, generator=torch.Generator().manual_seed(7))
    b = BlockSampler(blocks, small="replace").sample(5, generator=torch.Generator().manual_seed(7))
    assert torch.equal(a.sort(dim=1).values, b.sort(dim=1).values)  # same rows; "replace" lists them in key order


def test_stacked_sampler_pads_widths_and_equals_single_samplers():
    rng = np.random.default_rng(3)
    samplers = [BlockSampler(independent_blocks(n, 4, rng=rng), small="replace") for n in (9, 30, 14)]
    assert len({s.table.shape[1] for s in samplers}) > 1
    stacked = StackedBlockSampler(samplers).sample(5, [torch.Generator().manual_seed(i) for i in range(3)])
    for i, s in enumerate(samplers):
        assert torch.equal(stacked[i], s.sample(5, generator=torch.Generator().manual_seed(i)))
