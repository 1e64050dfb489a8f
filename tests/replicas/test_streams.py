"""Counter-based streams (replicas/streams.py) and ``fit_many(..., streams="counter")`` for the
WGAN family (replicas/wgan.py): the generator against Philox's published answers, the same
numbers for a replica at any R and chunking, the same distributions as the default streams, and
the errors for bad input.

Weights and samples of a replica at R = 1 and inside R = 64 are compared with the batched
tests' tolerance (tests/replicas/test_wgan_replicas.py: baddbmm over a different number of
slices may round differently); everything discrete (rows, flips, iterations) must be equal.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

from pategan_audit.implementations import fit_many
from pategan_audit.replicas import streams as S

from ..implementations.conftest import CERVICAL

# Random123 distribution, tests/kat_vectors, the three "philox4x32 10" lines (and the
# 7-round ones): counter[4], key[2] -> result[4]
KAT = {
    10: [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
         ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
         ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
          (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))],
    7: [((0, 0, 0, 0), (0, 0), (0x5F6FB709, 0x0D893F64, 0x4F121F81, 0x4F730A48)),
        ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x5207DDC2, 0x45165E59, 0x4D8EE751, 0x8C52F662)),
        ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
         (0x4DFCCABA, 0x190A87F0, 0xC47362BA, 0xB6B5242A))],
}


@pytest.mark.parametrize("rounds", sorted(KAT))
def test_philox_known_answers_ints_and_tensors(rounds):
    for counter, key, want in KAT[rounds]:
        assert tuple(S.philox4x32(counter, key, rounds)) == want  # exact Python integers
        # the tensor path (16-bit split products in int64), several lanes at once
        ct = [torch.tensor([c, c], dtype=torch.int64) for c in counter]
        kt = [torch.tensor([[k]], dtype=torch.int64) for k in key]
        got = [t.reshape(-1).tolist() for t in S.philox4x32(ct, kt, rounds)]
        assert got == [[w, w] for w in want]


def test_uniform_range_dtype_and_moments():
    u = S.uniform(S.stream_keys(range(8), 1), 0, (4096,))
    assert u.dtype == torch.float32 and u.shape == (8, 4096)
    assert float(u.min()) >= 0.0 and float(u.max()) < 1.0
    assert abs(float(u.mean()) - 0.5) < 0.01  # sd of the mean of 32,768 uniforms: 0.0016
    z = S.normal(S.stream_keys(range(8), 1), 0, (4097,))
    assert z.dtype == torch.float32 and z.shape == (8, 4097)
    assert abs(float(z.mean())) < 0.03 and abs(float(z.std()) - 1.0) < 0.03
    assert stats.kstest(z.reshape(-1).numpy(), "norm").pvalue > 1e-3


def test_permutation_and_integers():
    keys = S.stream_keys(range(16), 2)
    p = S.permutation(keys, 5, 97)
    assert (p.sort(dim=1).values == torch.arange(97)).all()
    assert len({tuple(r) for r in p.tolist()}) == 16
    n = torch.tensor([1, 2, 3, 1000] * 4)
    x = S.integers(keys, 5, n, (500,))
    assert x.shape == (16, 500) and (x >= 0).all() and (x < n[:, None]).all()
    assert set(x[2].tolist()) == {0, 1, 2}
    # padded rows: positions at or past a row's length sort last
    w = S.words(keys, 0, 10)  # [16, 10]
    q = S.as_permutation(w, torch.tensor([7] * 16))
    assert (q[:, :7].sort(dim=1).values == torch.arange(7)).all()
    # the partial sort gives the permutation's first entries; ties go to the lower position
    assert torch.equal(S.as_permutation(w, torch.tensor([7] * 16), first=4), q[:, :4])
    assert S.as_permutation(torch.tensor([[5, 3, 5, 3, 0]])).tolist() == [[4, 1, 3, 0, 2]]
    assert S.as_permutation(torch.tensor([[5, 3, 5, 3, 0]]), first=3).tolist() == [[4, 1, 3]]


def _all_draws(seeds, step):
    keys = S.stream_keys(seeds, 3)
    return (S.uniform(keys, step, (3, 5)), S.normal(keys, step, (7,), draw=1),
            S.permutation(keys, step, 50, draw=2), S.integers(keys, step, 9, (11,), draw=3))


def test_same_values_for_any_r_and_chunking():
    seeds = list(range(100, 612))  # R = 512
    whole = _all_draws(seeds, 17)
    chunks = [_all_draws(seeds[i:i + 128], 17) for i in range(0, 512, 128)]  # 4 chunks of 128
    for kind, full in enumerate(whole):
        assert torch.equal(full, torch.cat([c[kind] for c in chunks]))
    for i in (0, 137, 511):
        for full, alone in zip(whole, _all_draws([seeds[i]], 17)):
            assert torch.equal(full[i], alone[0])
    # the paired-lane evaluation of Draws is philox4x32 at counter (j // 4, draw, step lo, step hi)
    keys = S.stream_keys(seeds[:3], 3)
    step = 2**33 + 17
    got = S.words(keys, step, 12, draw=6)
    for r in range(3):
        key = [int(v) for v in keys[r]]
        want = [w for j in range(3) for w in S.philox4x32((j, 6, step & S.MASK, step >> 32), key)]
        assert got[r].tolist() == want
    # the CPU's numpy backend and the torch backend (what any other device runs) agree
    for r_keys in (keys, S.stream_keys(seeds, 3)):
        for st in (0, step, 2**64 - 1):
            for n in (37, 400):  # 400 words: the numpy backend runs 512 replicas in 4 passes
                assert torch.equal(S.words(r_keys, st, n, draw=5, backend="numpy"),
                                   S.words(r_keys, st, n, draw=5, backend="torch"))
    # one fused evaluation gives the words of each draw alone
    keys = S.stream_keys(seeds[:5], 3)
    fused = S.Draws(keys, {4: 10, 9: 3})(17)
    assert torch.equal(fused[4], S.words(keys, 17, 10, draw=4))
    assert torch.equal(fused[9], S.words(keys, 17, 3, draw=9))


def test_keys_steps_draws_and_streams_differ():
    k = S.stream_keys([0, 1, 2**40], 1)
    assert len({tuple(r) for r in k.tolist()}) == 3
    assert not torch.equal(S.stream_keys([0], 1), S.stream_keys([0], 2))
    w = S.words(k, 0, 64)
    assert not torch.equal(w, S.words(k, 1, 64))
    assert not torch.equal(w, S.words(k, 0, 64, draw=1))
    assert not torch.equal(w, S.words(k, 2**32, 64))  # the step's high word enters the counter
    assert len(set(w[0].tolist())) == 64


@pytest.fixture(scope="module")
def cervical_small() -> pd.DataFrame:
    return pd.read_csv(CERVICAL).head(120)


def _same_replica(a, b):
    assert a.trace.extra["streams"] == b.trace.extra["streams"] == "counter"
    assert a.trace.iterations == b.trace.iterations == a.max_iter_
    assert a.trace.teacher_rows == b.trace.teacher_rows
    np.testing.assert_array_equal(a.trace.extra["label_flips"], b.trace.extra["label_flips"])
    for p, q in zip([*a.G.parameters(), *a.D.parameters()], [*b.G.parameters(), *b.D.parameters()], strict=True):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), atol=1e-5, rtol=0)
    np.testing.assert_allclose(a.sample(40, seed=7).to_numpy(float), b.sample(40, seed=7).to_numpy(float), atol=1e-3)


CASES = {
    "original": {"num_teachers": 2, "max_iter": 4},
    "original-conditional-own": {"num_teachers": 3, "max_iter": 3, "conditional": True,
                                 "critic_batch_source": "own_partition"},
    "turing": {"num_teachers": 2, "max_iter": 4},
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_counter_fit_same_at_any_r_and_chunking(case, cervical_small):
    name, kw = case.split("-")[0], CASES[case]
    seeds = list(range(64))
    whole = fit_many(name, cervical_small, seeds=seeds, label="Biopsy", streams="counter", **kw)
    chunked = fit_many(name, cervical_small, seeds=seeds, label="Biopsy", streams="counter", max_replicas=24, **kw)
    for i in (0, 23, 24, 63):
        alone = fit_many(name, cervical_small, seeds=[seeds[i]], label="Biopsy", streams="counter", **kw)[0]
        _same_replica(alone, whole[i])
        _same_replica(alone, chunked[i])
    # the counter streams are not the default ones (the mode changes numbers, by design)
    default = fit_many(name, cervical_small, seeds=[seeds[0]], label="Biopsy", **kw)[0]
    assert default.trace.extra["streams"] == "torch"
    assert not np.array_equal(default.trace.extra["label_flips"], whole[0].trace.extra["label_flips"])


N_MODELS, ALPHA, SHIFT_80 = 256, 0.01, 0.36


def test_ks_power_statement():
    """The power stated below, recomputed: two-sample KS at n = m = 256, α = 0.01, against a
    normal location shift of 0.36 sd (Monte Carlo, 400 draws; measured 0.79-0.82 with 1,000)."""
    rng = np.random.default_rng(0)
    hits = [stats.ks_2samp(rng.normal(size=N_MODELS), rng.normal(SHIFT_80, 1.0, N_MODELS)).pvalue < ALPHA
            for _ in range(400)]
    assert np.mean(hits) >= 0.74  # 0.80 minus 3 standard errors of 400 draws


@pytest.mark.slow
def test_counter_streams_match_default_in_distribution(cervical_small):
    """256 tiny `original` fits per stream mode (disjoint seeds, so the samples are independent;
    the initial weights come from each seed in both modes), three statistics per model, each a
    two-sample KS test at α = 0.01 (family-wise at most 0.03): the mean indicator-label flip rate
    (the normal draws), the distinct rows the critic saw (the permutations), a sample column's
    mean after training (every draw). Power: at n = m = 256 the test detects a location shift
    of 0.36 of the statistic's sd with 80 % probability (test_ks_power_statement)."""
    kw = {"num_teachers": 2, "max_iter": 6, "label": "Biopsy"}
    ref = fit_many("original", cervical_small, seeds=range(N_MODELS), **kw)
    new = fit_many("original", cervical_small, seeds=range(10_000, 10_000 + N_MODELS), streams="counter", **kw)

    def statistics(models):
        flips = [float(np.mean(m.trace.extra["label_flips"])) for m in models]
        seen = [float(np.mean([len(r) for r in m.trace.teacher_rows])) for m in models]
        col = [float(m.sample(200, seed=1)["Age"].mean()) for m in models]
        return {"flips": flips, "seen": seen, "sample_mean": col}

    a, b = statistics(ref), statistics(new)
    for key in a:
        p = stats.ks_2samp(a[key], b[key]).pvalue
        assert p >= ALPHA, f"{key}: KS p = {p:.2g}"


def test_bad_streams_input(cervical_small):
    with pytest.raises(ValueError, match=r"streams must be one of \('torch', 'counter'\)"):
        fit_many("original", cervical_small, seeds=[0], streams="philox", max_iter=1)
    with pytest.raises(ValueError, match=r"not available for preset 'smartnoise'.*\['original', 'turing'\]"):
        fit_many("smartnoise", cervical_small, seeds=[0], streams="counter", max_iter=1)
    with pytest.raises(ValueError, match="needs the batched path"):
        fit_many("original", cervical_small, seeds=[0], streams="counter", batched=False, max_iter=1)
    with pytest.raises(ValueError, match=r"keys must be \[R, 2\]"):
        S.Draws(torch.zeros(3, dtype=torch.int64), {0: 4})
    with pytest.raises(ValueError, match="non-negative integer seeds"):
        S.stream_keys([-1], 0)
    with pytest.raises(ValueError, match=r"step must be an integer in \[0, 2\^64\)"):
        S.words(S.stream_keys([0], 0), -1, 4)
    with pytest.raises(ValueError, match="backend must be 'torch', or 'numpy'"):
        S.Draws(S.stream_keys([0], 0), {0: 4}, backend="cuda")
    with pytest.raises(ValueError, match=r"integer ranges must lie in \[1, 2\^31\]"):
        S.integers(S.stream_keys([0], 0), 0, 0, (3,))
