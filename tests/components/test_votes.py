"""Vote aggregation (components.votes): Laplace draws, the released single-noise rule and PATE's
two-noise argmax (implementations spec §0.4, §9.1 item 4)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from pategan_audit.accounting import vote_q
from pategan_audit.components.votes import aggregate, count_votes, laplace, single_noise_vote, two_noise_argmax_vote


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_laplace_scale_and_seed():
    x = laplace((200_000,), scale=2.0, generator=gen(1))
    assert torch.equal(x, laplace((200_000,), scale=2.0, generator=gen(1)))
    assert x.mean().item() == pytest.approx(0.0, abs=0.03)
    assert x.std().item() == pytest.approx(math.sqrt(2) * 2.0, rel=0.01)  # std of Lap(b) = sqrt(2) b (spec §0.2)
    assert x.abs().mean().item() == pytest.approx(2.0, rel=0.01)  # E|X| = b
    with pytest.raises(ValueError, match="scale"):
        laplace((3,), scale=0.0, generator=gen())


def test_laplace_into_a_row_of_a_stack_gives_the_same_numbers():
    """``out``: the draws land in place (one replica's row of the vote release's stack), E1 then E2
    as a fresh tensor, bit for bit, and the generator ends in the same state."""
    g1, g2 = gen(7), gen(7)
    fresh = [laplace((5, 2), scale=0.3, generator=g1) for _ in range(2)]
    stack = torch.full((2, 5, 2), math.nan, dtype=torch.float64)
    for j in range(2):
        assert laplace((5, 2), scale=0.3, generator=g2, out=stack[j]).data_ptr() == stack[j].data_ptr()
    assert torch.equal(stack, torch.stack(fresh))
    assert torch.equal(torch.rand(3, generator=g1), torch.rand(3, generator=g2))
    for bad in (torch.empty(5, 2, dtype=torch.float32), torch.empty(4, 2, dtype=torch.float64),
                torch.empty(2, 5, dtype=torch.float64).t()):
        with pytest.raises(ValueError, match="contiguous float64"):
            laplace((5, 2), scale=0.3, generator=gen(), out=bad)


def test_count_votes():
    preds = torch.tensor([[1, 0, 1], [1, 1, 0]])
    assert count_votes(preds).tolist() == [2, 1, 1]
    with pytest.raises(ValueError):
        count_votes(torch.tensor([1, 0]))


def test_single_noise_with_tiny_scale_returns_the_majority():
    """V15's 'how to test': Lap(scale 1e-3) -> labels equal the majority whenever |n1 - k/2| >= 0.5."""
    k = 5
    n1 = torch.arange(k + 1).repeat(1000)
    res = single_noise_vote(n1, num_teachers=k, laplace_scale=1e-3, generator=gen())
    assert torch.equal(res.labels, (n1 > k / 2).to(torch.int64))
    assert res.noise.shape == (len(n1),)


def test_single_noise_rule_is_threshold_on_noisy_n1():
    n1 = torch.randint(0, 11, (5000,), generator=gen(3))
    res = single_noise_vote(n1, num_teachers=10, laplace_scale=3.0, generator=gen(4), offset=1e-8)
    expected = (n1.double() + res.noise > 0.5 * (10 + 1e-8)).to(torch.int64)
    assert torch.equal(res.labels, expected)
    # a tied vote (n1 = k/2) is a fair coin under symmetric noise
    tie = single_noise_vote(torch.full((20_000,), 5), num_teachers=10, laplace_scale=1.0, generator=gen(5))
    assert tie.labels.float().mean().item() == pytest.approx(0.5, abs=0.015)


def test_two_noise_argmax_rule_and_ties():
    n1 = torch.randint(0, 6, (4000,), generator=gen(6))
    res = two_noise_argmax_vote(n1, num_teachers=5, laplace_scale=1.0, generator=gen(7))
    assert res.noise.shape == (4000, 2)
    n1f = n1.double()
    assert torch.equal(res.labels, (n1f + res.noise[:, 1] > 5 - n1f + res.noise[:, 0]).to(torch.int64))
    quiet = two_noise_argmax_vote(n1, num_teachers=5, laplace_scale=1e-9, generator=gen(8))
    assert torch.equal(quiet.labels, (n1 > 2).to(torch.int64))


@pytest.mark.parametrize("n1,gamma", [(1, 1.0), (2, 1.0), (0, 0.5)])
def test_two_noise_argmax_flip_probability_is_lemma4_q(n1, gamma):
    """With Z0, Z1 ~ Lap(1/γ) independent, P(answer != plurality) = (2 + γΔ)/(4 e^{γΔ}): exactly the
    q of PATE's Lemma 4 / PATE-GAN Alg. 1, which is why corrected uses this mechanism (spec §9.2)."""
    k, n = 5, 400_000
    res = two_noise_argmax_vote(torch.full((n,), n1), num_teachers=k, laplace_scale=1.0 / gamma, generator=gen(9))
    plurality = int(n1 > k - n1)
    flip = (res.labels != plurality).double().mean().item()
    q = float(vote_q(n1=[n1], num_teachers=k, lam=gamma)[0])
    assert flip == pytest.approx(q, abs=4 * math.sqrt(q * (1 - q) / n))


def test_aggregate_dispatch_and_errors():
    n1 = torch.tensor([0, 3, 5])
    a = aggregate(n1, mechanism="single_noise", num_teachers=5, laplace_scale=1.0, generator=gen(1))
    b = single_noise_vote(n1, num_teachers=5, laplace_scale=1.0, generator=gen(1))
    assert torch.equal(a.labels, b.labels) and torch.equal(a.noise, b.noise)
    c = aggregate(n1, mechanism="two_noise_argmax", num_teachers=5, laplace_scale=1.0, generator=gen(1))
    assert c.noise.shape == (3, 2)
    with pytest.raises(ValueError, match="vote_mechanism"):
        aggregate(n1, mechanism="gaussian", num_teachers=5, laplace_scale=1.0, generator=gen())
    assert np.isin(a.labels.numpy(), [0, 1]).all()


def test_noisy_labels_is_the_rule_for_one_batch_and_for_many():
    """The labelling rule is written once (votes.noisy_labels): the single-batch votes and the
    R-replica release (engine.release_votes) both call it; on [R, n] it equals row by row."""
    from pategan_audit.components.votes import noisy_labels

    n1 = torch.tensor([[0, 3, 5, 10], [7, 2, 5, 1]])
    noise = torch.tensor([[0.4, -0.6, 0.1, 0.0], [-2.0, 0.6, -0.1, 4.1]], dtype=torch.float64)
    got = noisy_labels(n1, noise, mechanism="single_noise", num_teachers=10, offset=0.0)
    assert got.tolist() == [[0, 0, 1, 1], [0, 0, 0, 1]]  # n1 + noise > 5 (7 - 2.0 = 5 is not)
    for r in range(2):
        assert torch.equal(noisy_labels(n1[r], noise[r], mechanism="single_noise", num_teachers=10), got[r])
    two = torch.stack([noise, -noise], dim=-1)  # [R, n, 2]: columns for n0 and n1
    assert noisy_labels(n1, two, mechanism="two_noise_argmax", num_teachers=10).tolist() == \
        (n1.double() - noise > (10 - n1.double()) + noise).long().tolist()
    with pytest.raises(ValueError, match="unknown vote_mechanism 'median'"):
        noisy_labels(n1, noise, mechanism="median", num_teachers=10)
