"""``fit_many("updated", ..., streams="counter")`` (replicas/updated.py ``CounterUpdatedStep``):
the same numbers for a replica at any R and chunking, both teacher models (B1's logistic refit
and ``neural_persistent``), replicas the accountant stops at different iterations, a resumed fit
equal to one never stopped, the torch backend's words giving the CPU's fit bitwise, the same
distributions as the default streams (with a planted distortion the test must catch), and the
default streams untouched (the mode is opt-in; ``benchmarks/digests.py`` pins the default's numbers).

Tolerances as tests/replicas/test_streams.py: everything discrete (iterations, teacher rows,
votes, noise, labels) equal; the accountant to 1e-12 relative; weights and the logistic
teachers' coefficients to 1e-5 (baddbmm over a different number of slices may round
differently, and the exact logistic solver stops at a gradient tolerance).
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pategan_audit import datasets
from pategan_audit.implementations import PresetFactory, create, fit_many
from pategan_audit.implementations.factory import CounterStreamsFactory
from pategan_audit.implementations.many import _counter_presets
from pategan_audit.replicas import streams as S
from pategan_audit.replicas import updated as family
from pategan_audit.replicas.updated import CounterUpdatedStep, UpdatedStep

from .counter_checks import assert_counter_fit_resumes
from ..implementations.conftest import make_toy
from .test_streams import ALPHA_EACH, N_MODELS, NEURAL_STATS, _ks_pvalues

NET_ATOL = COEF_ATOL = 1e-5

#: the audit's worst-case game with a data-dependent accountant (tests/replicas/test_updated_replicas.py):
#: replicas of one group stop at different iterations
BUDGET = dict(num_teachers=2, lam=0.05, accountant="paper", laplace_scale_convention="inverse_lambda",
              epsilon=1.39, max_iter=20)
#: a toy table with 10 teachers whose budget (λ = 0.5, ε = 30) stops replicas between 8 and 40 iterations
TOY_BUDGET = dict(num_teachers=10, batch_size=4, teacher_iters=1, lam=0.5, epsilon=30.0,
                  laplace_scale_convention="inverse_lambda", max_iter=40, label="y")
#: (data, overrides): toy rows or the worst-case world; the "budget" cases stop replicas at different iterations
CASES = {
    "logistic": (120, {"num_teachers": 3, "max_iter": 4}),
    "logistic-budget": ("worst", BUDGET),
    "neural": (120, {"num_teachers": 3, "max_iter": 4, "teacher_model": "neural_persistent"}),
    "neural-budget": (200, {**TOY_BUDGET, "teacher_model": "neural_persistent"}),
    "paper-two_noise": (120, {"num_teachers": 3, "max_iter": 3, "hyperparameters": "paper", "partition": "disjoint",
                              "vote_mechanism": "two_noise_argmax", "teacher_model": "neural_persistent"}),
}


def _case(case):
    data, kw = CASES[case]
    if data == "worst":
        return datasets.worst_case("in"), {**kw, "record": True}
    return make_toy(data), {**kw, "label": "y", "record": True}


def _networks(m) -> list[torch.nn.Module]:
    nets = [m.gen_net, m.student]
    return nets + ([m.teachers.net] if m.config.teacher_model == "neural_persistent" else [])


def _same(a, b):
    """Replica a equals replica b (see the module docstring's tolerances)."""
    assert a.trace.extra["streams"] == b.trace.extra["streams"] == "counter"
    assert a.trace.iterations == b.trace.iterations
    assert a.trace.teacher_rows == b.trace.teacher_rows
    assert a.trace.extra["teacher_refits"] == b.trace.extra["teacher_refits"]
    np.testing.assert_allclose(a.trace.eps_hat, b.trace.eps_hat, rtol=1e-12, atol=0)
    np.testing.assert_allclose(np.array(a.trace.alpha), np.array(b.trace.alpha), rtol=1e-12, atol=1e-300)
    for key in ("votes", "noise", "labels"):
        x, y = getattr(a.trace, key), getattr(b.trace, key)
        assert len(x) == len(y) == a.trace.iterations
        for p, q in zip(x, y):
            np.testing.assert_array_equal(p, q)
    for na, nb in zip(_networks(a), _networks(b), strict=True):
        for p, q in zip(na.parameters(), nb.parameters(), strict=True):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), atol=NET_ATOL, rtol=0)
    if a.config.teacher_model == "logistic_refit":
        for x, y in ((a.teachers.fit.coef, b.teachers.fit.coef), (a.teachers.fit.intercept, b.teachers.fit.intercept)):
            np.testing.assert_allclose(x.numpy(), y.numpy(), atol=COEF_ATOL, rtol=0)
    np.testing.assert_allclose(a.sample(40, seed=7).to_numpy(float), b.sample(40, seed=7).to_numpy(float), atol=1e-3)


def test_updated_has_counter_streams():
    assert "updated" in _counter_presets() and family.STREAM_MODES == ("torch", "counter")
    assert family.STREAM_ID not in (1, 2)  # the WGAN loop's and the neural family's streams
    assert isinstance(PresetFactory("updated").with_streams("counter"), CounterStreamsFactory)


def test_latents_are_the_uniforms_of_the_streams_bitwise():
    """``uniform_pm1`` (NumPy on the CPU, torch ops elsewhere) is ``2·as_uniform − 1`` bit for bit,
    strided views of a fused draw included, and spans U(-1, 1) on the 2^-23 grid."""
    w = S.Draws(S.stream_keys(range(5), family.STREAM_ID), {1: 30, 2: 4001})(9)[2]  # a strided view
    want = S.as_uniform(w) * 2.0 - 1.0
    for numpy in (True, False, None):
        got = family.uniform_pm1(w, numpy=numpy)
        assert got.dtype == torch.float32 and torch.equal(got, want)
    edges = torch.tensor([[0, 255, S.MASK]])
    assert family.uniform_pm1(edges).tolist() == [[-1.0, -1.0, 1.0 - 2.0 ** -23]]
    assert float(want.min()) >= -1.0 and float(want.max()) < 1.0 and abs(float(want.mean())) < 0.02


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_updated_counter_fit_same_at_any_r_and_chunking(case):
    data, kw = _case(case)
    seeds = list(range(64))
    whole = fit_many("updated", data, seeds=seeds, streams="counter", **kw)
    chunked = fit_many("updated", data, seeds=seeds, streams="counter", max_replicas=24, **kw)
    for i in (0, 23, 24, 63):
        alone = fit_many("updated", data, seeds=[seeds[i]], streams="counter", **kw)[0]
        _same(alone, whole[i])
        _same(alone, chunked[i])
    if case.endswith("budget"):  # replicas stopped at different iterations of one group (and were dropped)
        its = {m.trace.iterations for m in whole}
        assert len(its) > 1 and min(its) < kw["max_iter"]
    default = fit_many("updated", data, seeds=[seeds[0]], **kw)[0]  # the mode changes numbers, by design
    assert default.trace.extra["streams"] == "torch"
    assert not np.array_equal(np.concatenate(default.trace.noise), np.concatenate(whole[0].trace.noise))


def test_updated_counter_same_for_a_replica_alone_and_in_a_group():
    """The fast check of the one above: every replica of a call at R = 1 and in its group, two
    tables (D and D' of a neighbouring pair: grouped by shape) in one call, replicas the
    accountant stops at different iterations (each dropped from its group while the others go on)."""
    toy = make_toy(200)
    tables = [toy, toy.iloc[:180].reset_index(drop=True)]
    seeds = list(range(8))
    frames = [tables[i % 2] for i in seeds]
    for teacher_model in ("logistic_refit", "neural_persistent"):
        kw = {**TOY_BUDGET, "record": True, "teacher_model": teacher_model}
        group = fit_many("updated", frames, seeds=seeds, streams="counter", **kw)
        for parity in (0, 1):  # each table's group has replicas stopping at different iterations
            assert len({m.trace.iterations for m in group[parity::2]}) > 1
        for i in seeds:
            _same(fit_many("updated", frames[i], seeds=[seeds[i]], streams="counter", **kw)[0], group[i])


@pytest.mark.parametrize("case", ["logistic-budget", "paper-two_noise"])
def test_updated_counter_torch_backend_gives_the_same_fit(case, monkeypatch):
    """The words an accelerator computes (the int64 torch rounds) give the CPU's fit bitwise."""
    data, kw = _case(case)
    cpu = fit_many("updated", data, seeds=range(6), streams="counter", **kw)
    monkeypatch.setattr(family, "Draws", lambda keys, sizes, backend=None: S.Draws(keys, sizes, backend="torch"))
    other = fit_many("updated", data, seeds=range(6), streams="counter", **kw)
    for a, b in zip(cpu, other):
        assert a.trace.iterations == b.trace.iterations and a.trace.teacher_rows == b.trace.teacher_rows
        for key in ("votes", "noise", "labels"):
            for p, q in zip(getattr(a.trace, key), getattr(b.trace, key), strict=True):
                np.testing.assert_array_equal(p, q)
        for na, nb in zip(_networks(a), _networks(b), strict=True):
            for p, q in zip(na.parameters(), nb.parameters(), strict=True):
                assert torch.equal(p, q)


@pytest.mark.parametrize("teacher_model", ["logistic_refit", "neural_persistent"])
def test_updated_counter_fit_resumes_from_a_snapshot(teacher_model, tmp_path, monkeypatch):
    """A counter-mode fit stopped and resumed equals one never stopped (the draws depend only on
    the iteration and the live replicas' keys, which the snapshot's step holds); a snapshot of
    the default streams is another fit."""
    toy = make_toy(200)
    kw = {**TOY_BUDGET, "teacher_model": teacher_model, "record": True}
    seeds = [0, 1, 2, 3]
    assert_counter_fit_resumes("updated", CounterUpdatedStep, toy, seeds, kw, tmp_path, monkeypatch)


def test_default_streams_unchanged():
    """The default mode is the single fit (and the single fit's streams) at any R; the counter
    mode is recorded and gives other numbers. (All 79 pinned digests: benchmarks/digests.py.)"""
    worst = datasets.worst_case("in")
    kw = {**BUDGET, "record": True}
    many = fit_many("updated", worst, seeds=[0, 1, 3], **kw)
    for s, a in zip([0, 1, 3], many):
        b = create("updated", seed=s, **kw).fit(worst)
        assert a.trace.extra["streams"] == "torch" and a.trace.iterations == b.trace.iterations
        for key in ("votes", "noise", "labels"):
            for p, q in zip(getattr(a.trace, key), getattr(b.trace, key), strict=True):
                np.testing.assert_array_equal(p, q)
        assert torch.equal(a.noise_gen.get_state(), b.noise_gen.get_state())
    counter = fit_many("updated", worst, seeds=[0], streams="counter", **kw)[0]
    assert counter.trace.extra["streams"] == "counter"
    assert not np.array_equal(np.concatenate(counter.trace.noise), np.concatenate(many[0].trace.noise))
    # the counter mode draws nothing from the replica's training and noise streams
    fresh = create("updated", seed=0, **kw)
    fresh.begin_fit(fresh._accept(worst, None), None)
    for g in ("train_gen", "noise_gen"):
        assert torch.equal(getattr(counter, g).get_state(), getattr(fresh, g).get_state()), g


def test_bad_input():
    worst = datasets.worst_case("in")
    with pytest.raises(ValueError, match=r"streams must be one of \('torch', 'counter'\)"):
        family.run([], [], None, device=torch.device("cpu"), streams="philox")
    m = create("updated", seed=None, num_teachers=2, max_iter=1)
    m.begin_fit(m._accept(worst, None), None)
    with pytest.raises(ValueError, match="keys each replica by its seed; got seed None"):
        CounterUpdatedStep([m], torch.device("cpu"))
    assert UpdatedStep.streams == "torch" and CounterUpdatedStep.streams == "counter"


#: the equivalence settings: the audit's worst-case game (logistic teachers, the preset's own; its
#: generator barely trains in 4-5 iterations) and a toy table with each teacher model, trained to a
#: budget of 8-40 iterations (neural teachers on blocks larger than B: the rows statistic varies)
EQUIV = {
    "logistic": ("worst", "A", {**BUDGET, "max_iter": 40}),
    "logistic-toy": (200, "x1", TOY_BUDGET),
    "neural": (200, "x1", {**TOY_BUDGET, "teacher_model": "neural_persistent"}),
}


def _statistics(models, column: str) -> dict[str, list[float]]:
    """Per model, the statistics of test_streams.py's equivalence test (NEURAL_STATS)."""
    out = {
        "iterations": [float(m.trace.iterations) for m in models],
        "final_eps": [float(m.trace.eps_hat[-1]) for m in models],
        "label_rate": [float(np.mean(np.concatenate(m.trace.labels))) for m in models],
        "noise_abs": [float(np.mean(np.abs(np.concatenate(m.trace.noise)))) for m in models],
        "rows_seen": [float(np.mean([len(r) for r in m.trace.teacher_rows])) for m in models],
        "sample_mean": [float(m.sample(200, seed=1)[column].mean()) for m in models],
    }
    assert tuple(out) == NEURAL_STATS
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EQUIV))
def test_updated_counter_streams_match_default_in_distribution(name, monkeypatch):
    """256 fits per stream mode (disjoint seeds, so the samples are independent; initial weights
    and partitions come from each seed in both modes) to the privacy budget (data-dependent
    accounting: the iterations and the final ε̂ vary with the votes), the six statistics of
    test_streams.py (iterations to the budget, final ε̂, rate of released 1-labels, mean |vote
    noise|, distinct rows each teacher saw, a sample column's mean after training), each a
    two-sample KS test at α = 0.01 / 6 (family-wise at most 0.01 per setting). Power: at
    n = m = 256 each test detects a location shift of 0.42 of the statistic's sd with 80 %
    probability (test_streams.py::test_ks_power_statement_bonferroni; KS is conservative on
    discrete statistics). Planted distortion (logistic): the counter mode's vote noise at 0.7 of
    its scale must be rejected."""
    data, column, kw = EQUIV[name]
    table = datasets.worst_case("in") if data == "worst" else make_toy(data)
    kw = {**kw, "record": True}
    ref = _statistics(fit_many("updated", table, seeds=range(N_MODELS), **kw), column)
    assert len(set(ref["iterations"])) > 1 and len(set(ref["final_eps"])) > 1  # the budget statistics vary
    new = _statistics(fit_many("updated", table, seeds=range(10_000, 10_000 + N_MODELS), streams="counter", **kw), column)
    for key, p in _ks_pvalues(ref, new).items():
        assert p >= ALPHA_EACH, f"{name} {key}: KS p = {p:.2g}"
    if name != "logistic":
        return
    original = CounterUpdatedStep._vote_noise
    monkeypatch.setattr(CounterUpdatedStep, "_vote_noise", lambda self, rnd: 0.7 * original(self, rnd))
    bad = _statistics(fit_many("updated", table, seeds=range(20_000, 20_000 + N_MODELS), streams="counter", **kw), column)
    p_bad = _ks_pvalues(ref, bad)
    assert min(p_bad.values()) < ALPHA_EACH, p_bad

