"""Counter-based streams (replicas/streams.py) and ``fit_many(..., streams="counter")`` for the
WGAN family (replicas/wgan.py) and the neural family (replicas/neural.py: borealis, smartnoise,
corrected): the generator against Philox's published answers, the same numbers for a replica at
any R and chunking, the same distributions as the default streams (and a planted distortion
that the equivalence test must catch), the pass-through of ``PresetFactory``, and the errors
for bad input.

Weights and samples of a replica at R = 1 and inside R = 64 are compared with the batched
tests' tolerance (tests/replicas/test_wgan_replicas.py: baddbmm over a different number of
slices may round differently); everything discrete (rows, flips, iterations) must be equal.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

from pategan_audit import runner
from pategan_audit.implementations import PresetFactory, fit_many
from pategan_audit.implementations.factory import CounterStreamsFactory, StreamsFit
from pategan_audit.replicas import checkpoint
from pategan_audit.replicas import streams as S
from pategan_audit.replicas.loop import release_votes
from pategan_audit.replicas.neural import CounterNeuralStep

from ..implementations.conftest import CERVICAL, make_toy, toy_bounds

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
    with pytest.raises(ValueError, match=r"not available for preset 'gnmax'.*\['borealis', 'corrected', 'original', "
                                         r"'smartnoise', 'synthcity', 'turing', 'updated'\].*neural.*wgan.*synthcity.*updated"):
        fit_many("gnmax", cervical_small, seeds=[0], streams="counter", max_iter=1)
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


def test_stream_ids_are_one_word_and_draws_bounded():
    """SeedSequence reads its entropy as one run of 32-bit words: a stream id of 2^32 or more
    aliased another (stream, seed) pair (stream 7 + 5·2^32 with seed 9 had the key of stream 7
    with seed 5 + 9·2^32), so such ids are refused; seeds of several words stay distinct."""
    with pytest.raises(ValueError, match=r"stream must be an integer in \[0, 2\^32\)"):
        S.stream_keys([9], 7 + 5 * 2**32)
    with pytest.raises(ValueError, match=r"stream must be an integer"):
        S.stream_keys([9], True)
    k = S.stream_keys([0, 1, 2**32, 2**32 + 1, 2**64, 5 + 9 * 2**32], 7)
    assert len({tuple(r) for r in k.tolist()}) == 6
    # a draw of more than 2^32 blocks would run the block counter past one word: refused before any allocation
    with pytest.raises(ValueError, match=r"sizes in \[0, 2\^34\]"):
        S.Draws(S.stream_keys([0], 0), {0: 4 * 2**32 + 1})


def test_uniform64_exponential_and_laplace():
    keys = S.stream_keys(range(4), 5)
    w = S.words(keys, 3, 16384)
    u = S.as_uniform64(w)
    assert u.dtype == torch.float64 and u.shape == (4, 8192)
    assert float(u.min()) >= 0.0 and float(u.max()) < 1.0
    assert torch.equal(u * 2**53, torch.floor(u * 2**53))  # multiples of 2^-53
    assert S.as_uniform64(torch.tensor([[S.MASK, S.MASK, 0, 1 << 6]])).tolist() == [[1 - 2**-53, 2**-53]]
    # the largest exponential is 53 ln 2 = 36.7 (24-bit uniforms would stop at 16.6)
    assert float(S.as_exponential(torch.tensor([[S.MASK, S.MASK]]))) == pytest.approx(53 * np.log(2), rel=1e-12)
    e = S.as_exponential(w).reshape(-1).numpy()
    assert e.min() >= 0.0 and stats.kstest(e, "expon").pvalue > 1e-3
    lap = S.as_laplace(w, 2.5)
    assert lap.shape == (4, 4096) and lap.dtype == torch.float64
    assert stats.kstest(lap.reshape(-1).numpy(), "laplace", args=(0.0, 2.5)).pvalue > 1e-3
    ex = S.as_exponential(w).unflatten(-1, (-1, 2))
    assert torch.equal(lap, 2.5 * (ex[..., 0] - ex[..., 1]))  # E1 from words 4i, 4i+1; E2 from 4i+2, 4i+3
    with pytest.raises(ValueError, match="even number of words"):
        S.as_uniform64(w[:, :3])
    with pytest.raises(ValueError, match="multiple of 4 words"):
        S.as_laplace(w[:, :6], 1.0)
    with pytest.raises(ValueError, match="scale must be > 0"):
        S.as_laplace(w, 0.0)


# -- the neural family (borealis, smartnoise, corrected) -----------------------------------------

#: (toy rows, overrides); the "budget" cases stop at different iterations (data-dependent
#: accounting at λ = 0.5), so replicas freeze at different times inside a group
NEURAL = {
    "borealis-budget": (200, {"num_teachers": 10, "batch_size": 4, "teacher_iters": 1, "student_iters": 1,
                              "lam": 0.5, "epsilon": 30.0, "max_iter": 12}),
    "borealis-conditional": (120, {"num_teachers": 3, "max_iter": 3, "conditional": True, "generation_noise": "uniform"}),
    "smartnoise": (120, {"num_teachers": 3, "max_iter": 3}),
    "smartnoise-paper": (120, {"num_teachers": 3, "max_iter": 3, "hyperparameters": "paper"}),
    "corrected-budget": (200, {"num_teachers": 10, "batch_size": 4, "teacher_iters": 1, "student_iters": 1,
                               "lam": 0.5, "epsilon": 40.0, "charging": "data_dependent", "max_iter": 12}),
    # independent assignment on few rows: tables of different widths, blocks smaller than B, empty blocks
    "corrected-small_blocks": (24, {"num_teachers": 9, "max_iter": 3, "batch_size": 3}),
    "corrected-replace_one": (120, {"num_teachers": 3, "max_iter": 3, "neighbours": "replace_one"}),
}


def _neural_case(case):
    rows, kw = NEURAL[case]
    name, toy = case.split("-")[0], make_toy(rows)
    kw = {**kw, "label": "y", "record": True}
    if name == "corrected":
        kw["public_bounds"] = toy_bounds(toy)
    return name, toy, kw


def _same_neural(a, b):
    """Replica a equals replica b: everything discrete exactly; the accountant (charged for all
    replicas at once, :func:`~pategan_audit.accounting.accountant.charge_replicas`) to 1e-12
    relative and weights to 1e-5, as the batched tests (tests/replicas/test_neural_replicas.py)."""
    assert a.trace.extra["streams"] == b.trace.extra["streams"] == "counter"
    assert a.trace.iterations == b.trace.iterations
    assert a.trace.teacher_rows == b.trace.teacher_rows
    np.testing.assert_allclose(a.trace.eps_hat, b.trace.eps_hat, rtol=1e-12, atol=0)
    np.testing.assert_allclose(np.array(a.trace.alpha), np.array(b.trace.alpha), rtol=1e-12, atol=1e-300)
    for key in ("votes", "noise", "labels"):
        x, y = getattr(a.trace, key), getattr(b.trace, key)
        assert len(x) == len(y) == a.trace.iterations
        for p, q in zip(x, y):
            np.testing.assert_array_equal(p, q)
    for na, nb in zip([a.gen_net, a.student, a.teachers.net], [b.gen_net, b.student, b.teachers.net]):
        for p, q in zip(na.parameters(), nb.parameters(), strict=True):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), atol=1e-5, rtol=0)
    np.testing.assert_allclose(a.sample(40, seed=7).to_numpy(float), b.sample(40, seed=7).to_numpy(float), atol=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(NEURAL))
def test_neural_counter_fit_same_at_any_r_and_chunking(case):
    name, toy, kw = _neural_case(case)
    seeds = list(range(64))
    whole = fit_many(name, toy, seeds=seeds, streams="counter", **kw)
    chunked = fit_many(name, toy, seeds=seeds, streams="counter", max_replicas=24, **kw)
    for i in (0, 23, 24, 63):
        alone = fit_many(name, toy, seeds=[seeds[i]], streams="counter", **kw)[0]
        _same_neural(alone, whole[i])
        _same_neural(alone, chunked[i])
    if case.endswith("budget"):  # replicas froze at different iterations of one group
        assert len({m.trace.iterations for m in whole}) > 1
    if case.endswith("small_blocks"):  # the padded-table layout was exercised
        sizes = [[len(b) for b in m.blocks_] for m in whole]
        assert len({max(z) for z in sizes}) > 1 and any(0 in z for z in sizes) and any(0 < min(z) < 3 for z in sizes)
    default = fit_many(name, toy, seeds=[seeds[0]], **kw)[0]  # the mode changes numbers, by design
    assert default.trace.extra["streams"] == "torch"
    assert not np.array_equal(np.concatenate(default.trace.noise), np.concatenate(whole[0].trace.noise))


@pytest.mark.parametrize("case", ["borealis-conditional", "corrected-small_blocks"])
def test_neural_counter_torch_backend_gives_the_same_fit(case, monkeypatch):
    """The words an accelerator computes (the int64 torch rounds) give the CPU's fit bitwise."""
    name, toy, kw = _neural_case(case)
    cpu = fit_many(name, toy, seeds=range(6), streams="counter", **kw)
    from pategan_audit.replicas import neural

    monkeypatch.setattr(neural, "Draws", lambda keys, sizes: S.Draws(keys, sizes, backend="torch"))
    other = fit_many(name, toy, seeds=range(6), streams="counter", **kw)
    for a, b in zip(cpu, other):
        for key in ("votes", "noise", "labels"):
            for p, q in zip(getattr(a.trace, key), getattr(b.trace, key)):
                np.testing.assert_array_equal(p, q)
        for p, q in zip(a.gen_net.parameters(), b.gen_net.parameters()):
            assert torch.equal(p, q)


def test_neural_counter_fit_resumes_from_a_snapshot(tmp_path, monkeypatch):
    """A counter-mode fit stopped and resumed equals one never stopped (the draws depend only on
    the iteration, so nothing of the streams needs storing); a snapshot of the default streams is
    another fit."""
    toy = make_toy(60)
    kw = dict(epsilon=50.0, num_teachers=2, max_iter=6, label="y")
    straight = fit_many("borealis", toy, seeds=[0, 1, 2], streams="counter", **kw)
    original, calls = CounterNeuralStep.iteration, []

    class Stopped(Exception):
        pass

    def iteration(self, it, active):
        calls.append(it)
        if len(calls) == 4:
            raise Stopped(f"stopped at iteration {it}")
        return original(self, it, active)

    with monkeypatch.context() as patch:
        patch.setattr(CounterNeuralStep, "iteration", iteration)
        with pytest.raises(Stopped), checkpoint.checkpointing(tmp_path / "a", every=0):
            fit_many("borealis", toy, seeds=[0, 1, 2], streams="counter", **kw)
    with checkpoint.checkpointing(tmp_path / "a", every=0) as ckpt:
        resumed = fit_many("borealis", toy, seeds=[0, 1, 2], streams="counter", **kw)
    assert ckpt.resumed == [(0, 3)]
    for a, b in zip(resumed, straight):
        assert a.trace.iterations == b.trace.iterations
        np.testing.assert_array_equal(np.asarray(a.trace.eps_hat), np.asarray(b.trace.eps_hat))
        pd.testing.assert_frame_equal(a.sample(40, seed=3), b.sample(40, seed=3))
    with checkpoint.checkpointing(tmp_path / "b", every=0):
        fit_many("borealis", toy, seeds=[0, 1, 2], **kw)
    with pytest.raises(ValueError, match="belongs to another fit"), checkpoint.checkpointing(tmp_path / "b"):
        fit_many("borealis", toy, seeds=[0, 1, 2], streams="counter", **kw)


#: the equivalence test's statistics per model; Bonferroni over them: family-wise α = 0.01 per preset
NEURAL_STATS = ("iterations", "final_eps", "label_rate", "noise_abs", "rows_seen", "sample_mean")
ALPHA_EACH, SHIFT_80_EACH = ALPHA / len(NEURAL_STATS), 0.42
EQUIV = {
    "borealis": (200, {"num_teachers": 10, "batch_size": 4, "teacher_iters": 1, "student_iters": 1,
                       "lam": 0.5, "epsilon": 30.0, "max_iter": 30}),
    "corrected": (200, {"num_teachers": 10, "batch_size": 4, "teacher_iters": 1, "student_iters": 1,
                        "lam": 0.5, "epsilon": 40.0, "charging": "data_dependent", "max_iter": 40}),
}


def test_ks_power_statement_bonferroni():
    """The power stated below, recomputed: two-sample KS at n = m = 256, α = 0.01 / 6, against a
    normal location shift of 0.42 sd (Monte Carlo, 400 draws; measured 0.82 with 1,000)."""
    rng = np.random.default_rng(1)
    hits = [stats.ks_2samp(rng.normal(size=N_MODELS), rng.normal(SHIFT_80_EACH, 1.0, N_MODELS)).pvalue < ALPHA_EACH
            for _ in range(400)]
    assert np.mean(hits) >= 0.74  # 0.80 minus 3 standard errors of 400 draws


def _neural_statistics(models) -> dict[str, list[float]]:
    return {
        "iterations": [float(m.trace.iterations) for m in models],
        "final_eps": [float(m.trace.eps_hat[-1]) for m in models],
        "label_rate": [float(np.mean(np.concatenate(m.trace.labels))) for m in models],
        "noise_abs": [float(np.mean(np.abs(np.concatenate(m.trace.noise)))) for m in models],
        "rows_seen": [float(np.mean([len(r) for r in m.trace.teacher_rows])) for m in models],
        "sample_mean": [float(m.sample(200, seed=1)["x1"].mean()) for m in models],
    }


def _ks_pvalues(a: dict, b: dict) -> dict[str, float]:
    return {key: float(stats.ks_2samp(a[key], b[key]).pvalue) for key in NEURAL_STATS}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EQUIV))
def test_neural_counter_streams_match_default_in_distribution(name, monkeypatch):
    """256 fits per stream mode (disjoint seeds, so the samples are independent; initial weights
    and partitions come from each seed in both modes) to the privacy budget (data-dependent
    accounting at λ = 0.5: the iterations and the final ε̂ vary with the votes), six statistics
    per model (iterations to the budget, final ε̂, the rate of released 1-labels, the mean |vote
    noise|, the distinct rows each teacher saw, a sample column's mean after training), each a
    two-sample KS test at α = 0.01 / 6 (family-wise at most 0.01 per preset). Power: at
    n = m = 256 each test detects a location shift of 0.42 of the statistic's sd with 80 %
    probability (test_ks_power_statement_bonferroni; KS is conservative on the discrete
    iteration counts). Planted distortion (borealis): the counter mode's vote noise at 0.7 of
    its scale must be rejected."""
    rows, kw = EQUIV[name]
    toy = make_toy(rows)
    kw = {**kw, "label": "y", "record": True, **({"public_bounds": toy_bounds(toy)} if name == "corrected" else {})}
    ref = _neural_statistics(fit_many(name, toy, seeds=range(N_MODELS), **kw))
    assert len(set(ref["iterations"])) > 1 and len(set(ref["final_eps"])) > 1  # the budget statistics vary
    new = _neural_statistics(fit_many(name, toy, seeds=range(10_000, 10_000 + N_MODELS), streams="counter", **kw))
    for key, p in _ks_pvalues(ref, new).items():
        assert p >= ALPHA_EACH, f"{name} {key}: KS p = {p:.2g}"
    if name != "borealis":
        return
    original = CounterNeuralStep._vote_noise
    monkeypatch.setattr(CounterNeuralStep, "_vote_noise", lambda self, rnd: 0.7 * original(self, rnd))
    bad = _neural_statistics(fit_many(name, toy, seeds=range(20_000, 20_000 + N_MODELS), streams="counter", **kw))
    p_bad = _ks_pvalues(ref, bad)
    assert min(p_bad.values()) < ALPHA_EACH, p_bad


def test_release_votes_checks_given_noise():
    toy = make_toy(40)
    m = fit_many("smartnoise", toy, seeds=[0], label="y", num_teachers=2, max_iter=1)
    with pytest.raises(ValueError, match=r"noise must be \[R, n\] = \[1, 3\] for single_noise, got \[1, 3, 2\]"):
        release_votes(m, torch.zeros(1, 3, dtype=torch.int64), np.ones(1, bool), noise=torch.zeros(1, 3, 2))


# -- PresetFactory's pass-through ---------------------------------------------------------------

def test_preset_factory_passes_streams_through():
    toy = make_toy(60)
    base = PresetFactory.for_data("corrected", epsilon=50.0, overrides={"num_teachers": 2, "max_iter": 2},
                                  public_bounds=toy_bounds(toy))
    assert base.stream_mode() == "torch" and base.with_streams("torch") == base
    counter = base.with_streams("counter")
    assert isinstance(counter, CounterStreamsFactory) and counter.stream_mode() == "counter"
    # the default factory's cache description is unchanged (archived keys); the counter one differs
    assert runner.describe_for_cache(base) == {"class": "pategan_audit.auditing.settings.PresetFactory",
                                               "fields": {"name": "corrected", "epsilon": 50.0, "delta": 1e-5,
                                                          "overrides": runner._plain(base.overrides)}}
    assert runner.describe_for_cache(counter)["fields"]["streams"] == "counter"
    assert runner.describe_for_cache(counter)["class"] != runner.describe_for_cache(base)["class"]
    want = fit_many("corrected", toy, seeds=[3, 4], streams="counter", epsilon=50.0, label="y",
                    **base.create_overrides())
    for got in (counter.fit_many(toy, [3, 4], label="y"), base.fit_many(toy, [3, 4], label="y", streams="counter")):
        for g, w in zip(got, want):
            assert g.trace.extra["streams"] == "counter"
            np.testing.assert_array_equal(np.asarray(g.trace.eps_hat), np.asarray(w.trace.eps_hat))
            pd.testing.assert_frame_equal(g.sample(20, seed=1), w.sample(20, seed=1))
    assert base.fit_many(toy, [3], label="y")[0].trace.extra["streams"] == "torch"
    # a single model of the counter factory is the replica of a batch
    one = counter(4)
    assert isinstance(one, StreamsFit) and one.config.seed == 4  # unfitted: the model's config
    assert one.fit(toy, label="y") is one
    pd.testing.assert_frame_equal(one.sample(20, seed=1), want[1].sample(20, seed=1))


def test_preset_factory_refuses_counter_streams_where_a_family_has_none():
    for make in (lambda: PresetFactory("gnmax").with_streams("counter"),
                 lambda: PresetFactory("gnmax").fit_many(make_toy(20), [0], streams="counter")):
        with pytest.raises(ValueError, match=r"not available for preset 'gnmax'.*families: neural "
                                             r"\['borealis', 'corrected', 'smartnoise'\], wgan \['original', 'turing'\], "
                                             r"synthcity \['synthcity'\], updated \['updated'\]"):
            make()
    with pytest.raises(ValueError, match=r"streams must be one of \('torch', 'counter'\)"):
        PresetFactory("borealis").with_streams("philox")


@pytest.mark.parametrize("p", [0.1, 0.2, 0.5, 0.9, 1 / 3, 0.0, 1.0, 2.0 ** -24, 0.1 + 2.0 ** -30])
def test_uniform_at_least_is_the_float_comparison(p):
    """The integer test gives as_uniform(w) >= p bit for bit, at and around the threshold word."""
    t = math.ceil(float(np.float32(p)) * (1 << 24))
    near = [(v << 8) | low for v in range(max(t - 3, 0), min(t + 3, 1 << 24)) for low in (0, 255)]
    w = torch.cat([torch.tensor(near + [0, 2**32 - 1], dtype=torch.int64),
                   S.words(S.stream_keys(range(4), 9), 3, 4096).reshape(-1)])
    assert torch.equal(S.uniform_at_least(w, p), S.as_uniform(w) >= p)
