"""``fit_many("synthcity", ..., streams="counter")`` (replicas/synthcity.py ``CounterSynthcityStep``):
the same numbers for a replica at any R and chunking (the benchmarked default, both teacher models,
the "paper" hyperparameters with two-noise votes, the student that reads no real rows, a fixed
partition, the released full epochs, replicas the accountant stops at different iterations, two
tables in one call), a resumed fit equal to one never stopped, the torch backend's words giving the
CPU's fit bitwise, the same distributions as the default streams (with a planted distortion the
test must catch), and the default streams untouched (the mode is opt-in; ``benchmarks/digests.py``
pins the default's numbers).

Tolerances as tests/replicas/test_streams_updated.py: everything discrete (iterations, teacher
rows, votes, noise, labels, skipped batches) equal; the accountant to 1e-12 relative; weights and
the logistic teachers' coefficients to 1e-5 (a batched product over a different number of slices
may round differently, and the exact logistic solver stops at a gradient tolerance).
Sizes: synthcity costs about a second per model-iteration on Cervical; these use a toy table of
120 rows, 3 teachers and 2-3 iterations (the budget cases: narrow networks, batches of 8).
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pategan_audit.implementations import PresetFactory, create, fit_many
from pategan_audit.implementations.factory import CounterStreamsFactory
from pategan_audit.implementations.many import _counter_presets
from pategan_audit.replicas import streams as S
from pategan_audit.replicas import synthcity as family
from pategan_audit.replicas.synthcity import CounterSynthcityStep, SynthcityStep

from .counter_checks import assert_counter_fit_resumes
from ..implementations.conftest import make_toy
from .test_streams import ALPHA_EACH, N_MODELS, NEURAL_STATS, _ks_pvalues

NET_ATOL = COEF_ATOL = 1e-5

SMALL = {"num_teachers": 3, "max_iter": 2}
#: narrow networks and batches of 8: the synthcity accountant (λ = 0.01, ε = 1) stops replicas
#: between 5 and 8 iterations (measured on 16 seeds), O4's skipped batches making the charges differ
BUDGET = {"num_teachers": 3, "batch_size": 8, "n_units_hidden": 16, "lam": 0.01, "epsilon": 1.0, "max_iter": 30}
CASES = {
    "default": SMALL,
    "neural": {**SMALL, "teacher_model": "neural_persistent"},
    "paper-two_noise": {**SMALL, "hyperparameters": "paper", "vote_mechanism": "two_noise_argmax"},
    "fresh-disjoint": {**SMALL, "student_reads_real": False, "partition": "disjoint"},
    "fresh-neural-paper": {**SMALL, "student_reads_real": False, "teacher_model": "neural_persistent",
                           "hyperparameters": "paper"},
    "released": {**SMALL, "harness": False, "max_iter": 1, "generator_n_iter": 2},
    "budget": BUDGET,
}


def _kw(case: str) -> dict:
    return {**CASES[case], "label": "y", "record": True}


def _networks(m) -> list[torch.nn.Module]:
    nets = [m.gen_net, m.student]
    return nets + ([m.teachers.net] if m.config.teacher_model == "neural_persistent" else [])


def _same(a, b):
    """Replica a equals replica b (see the module docstring's tolerances)."""
    assert a.trace.extra["streams"] == b.trace.extra["streams"] == "counter"
    assert a.trace.iterations == b.trace.iterations
    assert a.trace.teacher_rows == b.trace.teacher_rows
    assert a.trace.extra["skipped_batches"] == b.trace.extra["skipped_batches"]
    assert a.trace.extra["student_rows"] == b.trace.extra["student_rows"]
    np.testing.assert_allclose(a.trace.eps_hat, b.trace.eps_hat, rtol=1e-12, atol=0)
    np.testing.assert_allclose(np.array(a.trace.alpha), np.array(b.trace.alpha), rtol=1e-12, atol=1e-300)
    for key in ("votes", "noise", "labels"):
        x, y = getattr(a.trace, key), getattr(b.trace, key)
        assert len(x) == len(y) > 0
        for p, q in zip(x, y):
            np.testing.assert_array_equal(p, q)
    for na, nb in zip(_networks(a), _networks(b), strict=True):
        for p, q in zip(na.parameters(), nb.parameters(), strict=True):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), atol=NET_ATOL, rtol=0)
    if a.config.teacher_model == "logistic_refit":
        for x, y in ((a.teachers.fit.coef, b.teachers.fit.coef), (a.teachers.fit.intercept, b.teachers.fit.intercept)):
            np.testing.assert_allclose(x.numpy(), y.numpy(), atol=COEF_ATOL, rtol=0)
    np.testing.assert_allclose(a.sample(40, seed=7).to_numpy(float), b.sample(40, seed=7).to_numpy(float), atol=1e-3)


def test_synthcity_has_counter_streams():
    assert "synthcity" in _counter_presets() and family.STREAM_MODES == ("torch", "counter")
    assert family.STREAM_ID not in (1, 2, 3)  # the WGAN loop's, the neural family's and updated's streams
    assert isinstance(PresetFactory("synthcity").with_streams("counter"), CounterStreamsFactory)


def test_synthcity_counter_same_for_a_replica_alone_and_in_a_group():
    """Every replica of a call at R = 1 and in its group, two tables of 120 and 108 rows stacked in
    one group (the smaller table and its student pool padded: a new partition's and a batch's
    positions past a replica's rows sort last), replicas the accountant stops at different
    iterations (each dropped from its group while the others go on)."""
    toy = make_toy(120)
    tables = [toy, toy.iloc[:108].reset_index(drop=True)]
    seeds = list(range(6))
    frames = [tables[i % 2] for i in seeds]
    kw = _kw("budget")
    group = fit_many("synthcity", frames, seeds=seeds, streams="counter", **kw)
    assert len({m.trace.iterations for m in group}) > 1
    for i in seeds:
        _same(fit_many("synthcity", frames[i], seeds=[seeds[i]], streams="counter", **kw)[0], group[i])


@pytest.mark.parametrize("case", ["default", "fresh-disjoint"])
def test_synthcity_counter_same_inside_a_larger_r_and_chunked(case):
    """Replicas 0, 3, 4 and 7 of R = 8, whole and in chunks of 4, equal each one alone."""
    toy, kw = make_toy(120), _kw(case)
    seeds = list(range(8))
    whole = fit_many("synthcity", toy, seeds=seeds, streams="counter", **kw)
    chunked = fit_many("synthcity", toy, seeds=seeds, streams="counter", max_replicas=4, **kw)
    for i in (0, 3, 4, 7):
        alone = fit_many("synthcity", toy, seeds=[seeds[i]], streams="counter", **kw)[0]
        _same(alone, whole[i])
        _same(alone, chunked[i])


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_synthcity_counter_fit_same_at_any_r_and_chunking(case):
    """Every setting: replicas 0, 5, 6 and 15 of R = 16, whole and in chunks of 6, equal each one
    alone; the counter draws are not the default's (the mode changes numbers, by design)."""
    toy, kw = make_toy(120), _kw(case)
    seeds = list(range(16))
    whole = fit_many("synthcity", toy, seeds=seeds, streams="counter", **kw)
    chunked = fit_many("synthcity", toy, seeds=seeds, streams="counter", max_replicas=6, **kw)
    for i in (0, 5, 6, 15):
        alone = fit_many("synthcity", toy, seeds=[seeds[i]], streams="counter", **kw)[0]
        _same(alone, whole[i])
        _same(alone, chunked[i])
    if case == "budget":  # replicas stopped at different iterations of one group (and were dropped)
        its = {m.trace.iterations for m in whole}
        assert len(its) > 1 and min(its) < kw["max_iter"]
    default = fit_many("synthcity", toy, seeds=[seeds[0]], **kw)[0]
    assert default.trace.extra["streams"] == "torch"
    assert not np.array_equal(np.concatenate(default.trace.noise), np.concatenate(whole[0].trace.noise))


@pytest.mark.parametrize("case", ["budget", "paper-two_noise", "fresh-neural-paper"])
def test_synthcity_counter_torch_backend_gives_the_same_fit(case, monkeypatch):
    """The words an accelerator computes (the int64 torch rounds) give the CPU's fit bitwise."""
    toy, kw = make_toy(120), _kw(case)
    cpu = fit_many("synthcity", toy, seeds=range(4), streams="counter", **kw)
    monkeypatch.setattr(family, "Draws", lambda keys, sizes, backend=None: S.Draws(keys, sizes, backend="torch"))
    other = fit_many("synthcity", toy, seeds=range(4), streams="counter", **kw)
    for a, b in zip(cpu, other):
        assert a.trace.iterations == b.trace.iterations and a.trace.teacher_rows == b.trace.teacher_rows
        for key in ("votes", "noise", "labels"):
            for p, q in zip(getattr(a.trace, key), getattr(b.trace, key), strict=True):
                np.testing.assert_array_equal(p, q)
        for na, nb in zip(_networks(a), _networks(b), strict=True):
            for p, q in zip(na.parameters(), nb.parameters(), strict=True):
                assert torch.equal(p, q)


@pytest.mark.parametrize("teacher_model", ["logistic_refit", pytest.param("neural_persistent", marks=pytest.mark.slow)])
def test_synthcity_counter_fit_resumes_from_a_snapshot(teacher_model, tmp_path, monkeypatch):
    """A counter-mode fit stopped and resumed equals one never stopped (the draws depend only on
    the iteration and the live replicas' keys, which the snapshot's step holds); a snapshot of
    the default streams is another fit."""
    toy = make_toy(120)
    kw = {**_kw("budget"), "teacher_model": teacher_model}
    seeds = list(range(8))
    assert_counter_fit_resumes("synthcity", CounterSynthcityStep, toy, seeds, kw, tmp_path, monkeypatch)


def test_default_streams_unchanged():
    """The default mode is the single fit (and the single fit's streams) at any R; the counter
    mode is recorded, gives other numbers and draws nothing from the replica's training and noise
    streams during training. (All 79 pinned digests: benchmarks/digests.py.)"""
    toy, kw = make_toy(120), _kw("default")
    many = fit_many("synthcity", toy, seeds=[0, 1, 3], **kw)
    for s, a in zip([0, 1, 3], many):
        b = create("synthcity", seed=s, **{k: v for k, v in kw.items() if k != "label"}).fit(toy, label="y")
        assert a.trace.extra["streams"] == "torch" and a.trace.iterations == b.trace.iterations
        for key in ("votes", "noise", "labels"):
            for p, q in zip(getattr(a.trace, key), getattr(b.trace, key), strict=True):
                np.testing.assert_array_equal(p, q)
        assert torch.equal(a.noise_gen.get_state(), b.noise_gen.get_state())
        assert torch.equal(a.train_gen.get_state(), b.train_gen.get_state())
    counter = fit_many("synthcity", toy, seeds=[0], streams="counter", **kw)[0]
    assert counter.trace.extra["streams"] == "counter"
    assert not np.array_equal(np.concatenate(counter.trace.noise), np.concatenate(many[0].trace.noise))
    fresh = create("synthcity", seed=0, **{k: v for k, v in kw.items() if k != "label"})
    fresh.begin_fit(fresh._accept(toy, "y"), "y")
    for g in ("train_gen", "noise_gen"):
        assert torch.equal(getattr(counter, g).get_state(), getattr(fresh, g).get_state()), g
    assert np.array_equal(counter.partition_rng.bit_generator.state["state"]["state"],
                          fresh.partition_rng.bit_generator.state["state"]["state"])


def test_synthcity_counter_reseeding_draws_alike():
    """O2 (``reseed_each_fit``): every training stream runs from seed 0 whatever the seed, so two
    seeds train alike in the default mode; the counter mode keys by that training seed and keeps
    the finding (the seed reaches only the set-up's data sampler, here the default one: none)."""
    toy = make_toy(120)
    kw = {**_kw("default"), "reseed_each_fit": True}
    for streams in ("torch", "counter"):
        a, b = fit_many("synthcity", toy, seeds=[3, 4], streams=streams, **kw)
        for key in ("votes", "noise", "labels"):
            for p, q in zip(getattr(a.trace, key), getattr(b.trace, key), strict=True):
                np.testing.assert_array_equal(p, q)


def test_bad_input():
    toy = make_toy(40)
    with pytest.raises(ValueError, match=r"streams must be one of \('torch', 'counter'\)"):
        family.run([], [], None, device=torch.device("cpu"), streams="philox")
    m = create("synthcity", seed=None, num_teachers=2, max_iter=1)
    m.begin_fit(m._accept(toy, "y"), "y")
    with pytest.raises(ValueError, match="keys each replica by its seed; got seed None"):
        CounterSynthcityStep([m], torch.device("cpu"))
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        fit_many("synthcity", toy, seeds=[-1], streams="counter", label="y", max_iter=1)
    with pytest.raises(ValueError, match="needs the batched path"):
        fit_many("synthcity", toy, seeds=[0], streams="counter", batched=False, label="y", max_iter=1)
    assert SynthcityStep.streams == "torch" and CounterSynthcityStep.streams == "counter"


def _statistics(models) -> dict[str, list[float]]:
    """Per model, the statistics of test_streams.py's equivalence test (NEURAL_STATS)."""
    out = {
        "iterations": [float(m.trace.iterations) for m in models],
        "final_eps": [float(m.trace.eps_hat[-1]) for m in models],
        "label_rate": [float(np.mean(np.concatenate(m.trace.labels))) for m in models],
        "noise_abs": [float(np.mean(np.abs(np.concatenate(m.trace.noise)))) for m in models],
        "rows_seen": [float(np.mean([len(r) for r in m.trace.teacher_rows])) for m in models],
        "sample_mean": [float(m.sample(200, seed=1)["x1"].mean()) for m in models],
    }
    assert tuple(out) == NEURAL_STATS
    return out


@pytest.mark.slow
def test_synthcity_counter_streams_match_default_in_distribution(monkeypatch):
    """256 fits per stream mode (disjoint seeds, so the samples are independent; initial weights,
    the student's pool and its conditional vectors come from each seed in both modes) to the
    privacy budget (BUDGET: O4's skipped batches make the charges, so the iterations and the final
    ε̂, vary with the votes), the six statistics of test_streams.py (iterations to the budget,
    final ε̂, rate of released 1-labels, mean |vote noise|, distinct rows each teacher saw, a
    sample column's mean after training), each a two-sample KS test at α = 0.01 / 6 (family-wise
    at most 0.01). Power: at n = m = 256 each test detects a location shift of 0.42 of the
    statistic's sd with 80 % probability (test_streams.py::test_ks_power_statement_bonferroni; KS
    is conservative on discrete statistics). Planted distortion: the counter mode's vote noise at
    0.7 of its scale must be rejected."""
    toy, kw = make_toy(120), _kw("budget")
    ref = _statistics(fit_many("synthcity", toy, seeds=range(N_MODELS), **kw))
    assert len(set(ref["iterations"])) > 1 and len(set(ref["final_eps"])) > 1  # the budget statistics vary
    new = _statistics(fit_many("synthcity", toy, seeds=range(10_000, 10_000 + N_MODELS), streams="counter", **kw))
    for key, p in _ks_pvalues(ref, new).items():
        assert p >= ALPHA_EACH, f"{key}: KS p = {p:.2g}"
    original = CounterSynthcityStep._vote_noise
    monkeypatch.setattr(CounterSynthcityStep, "_vote_noise", lambda self, step: 0.7 * original(self, step))
    bad = _statistics(fit_many("synthcity", toy, seeds=range(20_000, 20_000 + N_MODELS), streams="counter", **kw))
    p_bad = _ks_pvalues(ref, bad)
    assert min(p_bad.values()) < ALPHA_EACH, p_bad
