"""The shared PATE engine (implementations.engine): switches common to the PATE presets, trace
recording, callbacks, the Fig. 3 hooks, "paper" hyperparameters and thread handling."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pategan_audit.implementations import create
from pategan_audit.implementations.base import training_threads

from .conftest import toy_bounds

PATE = ("updated", "synthcity", "borealis", "smartnoise", "corrected")


def make(name, df, **kw):
    kw.setdefault("num_teachers", 3)
    kw.setdefault("max_iter", 2)
    kw.setdefault("epsilon", 1e6)
    if name == "corrected":
        kw.setdefault("public_bounds", toy_bounds(df))
    return create(name, **kw)


@pytest.mark.parametrize("name", PATE)
def test_trace_and_callbacks(name, toy):
    calls = []
    m = make(name, toy, max_iter=3)
    m.callbacks.append(lambda model, it: calls.append((it, model.trace.iterations, len(model.trace.eps_hat))))
    m.fit(toy, label="y")
    assert calls == [(0, 1, 1), (1, 2, 2), (2, 3, 3)]
    t = m.trace
    assert len(t.alpha) == len(t.votes) == len(t.noise) == len(t.labels) == 3
    assert all(a.shape == (m.config.num_moments,) for a in t.alpha)
    assert np.all(np.diff(t.eps_hat) >= 0)  # increments are >= 0 at these λ
    assert sum(len(v) for v in t.votes) >= m.accountant.num_queries
    assert len(t.teacher_rows) == 3 and all(len(r) > 0 for r in t.teacher_rows)
    assert t.bounds and set(t.bounds) <= set(toy.columns)


@pytest.mark.parametrize("name", PATE)
def test_fig3_hooks(name, toy):
    """protocols C.2: fixed subsets and latent batch, CE[t][j] per iteration, shape [k, k]."""
    recorded = []

    def hook(model, it):
        subsets = model.first_seen_subsets()
        latent = model.fixed_latent(len(subsets[0]), 11)
        assert torch.equal(latent, model.fixed_latent(len(subsets[0]), 11))
        recorded.append(model.teacher_cross_entropy(subsets, latent))

    m = make(name, toy, max_iter=2)
    m.callbacks.append(hook)
    m.fit(toy, label="y")
    assert len(recorded) == 2
    assert all(ce.shape == (3, 3) and np.isfinite(ce).all() and (ce > 0).all() for ce in recorded)


def test_updated_teachers_share_their_first_seen_subset(toy):
    m = make("updated", toy).fit(toy, label="y")
    subsets = m.first_seen_subsets()
    assert all(np.array_equal(s, subsets[-1]) for s in subsets)  # V4: every teacher has the last block


def test_record_false_keeps_accounting_only(toy):
    m = make("borealis", toy, record=False).fit(toy, label="y")
    assert m.trace.votes == [] and m.trace.labels == [] and len(m.trace.eps_hat) == 2


@pytest.mark.parametrize("name", ["updated", "synthcity", "borealis", "smartnoise"])
def test_two_noise_argmax_and_safe_stopping_switches(name, toy):
    lam = 0.003 if name == "synthcity" else 0.01  # synthcity: 10 x 100 queries per iteration
    m = make(name, toy, vote_mechanism="two_noise_argmax", stopping="safe", epsilon=2.0, lam=lam, max_iter=5)
    m.fit(toy, label="y")
    assert m.trace.noise[0].ndim == 2 and m.trace.noise[0].shape[1] == 2
    assert m.trace.eps_hat[-1] <= 2.0


@pytest.mark.parametrize("name", PATE)
def test_paper_hyperparameters_train_and_sample(name, toy):
    """protocols B.8: Adam 1e-4, batch 64, n_T = n_S = 5, 1-layer teachers, 3-layer student,
    generator {d, d/2, d}; λ and L stay the preset's."""
    m = make(name, toy, hyperparameters="paper").fit(toy, label="y")
    s = m.sample(30, seed=0)
    assert s.shape == (30, toy.shape[1]) and not s.isna().any().any()
    if name != "corrected":
        assert m.config.lam == create(name).config.lam


def test_infinite_epsilon_needs_a_cap():
    with pytest.raises(ValueError, match="never stop"):
        create("borealis", epsilon=float("inf"), max_iter=None)


@pytest.mark.parametrize("bad", [{"lam": 0.0}, {"lam": -1.0}, {"num_moments": 0}, {"batch_size": 0}, {"max_iter": 0},
                                 {"num_teachers": 0}, {"vote_mechanism": "median"}, {"stopping": "never"},
                                 {"hyperparameters": "tuned"}, {"bounds": "guess"}, {"accountant": "rdp"}])
def test_invalid_settings_raise(bad):
    with pytest.raises(ValueError):
        create("borealis", **bad)


def test_training_threads_restores_the_thread_count():
    before = torch.get_num_threads()
    with training_threads():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def test_sample_without_seed_is_reproducible_across_fits(toy):
    a = make("smartnoise", toy).fit(toy, label="y")
    b = make("smartnoise", toy).fit(toy, label="y")
    first, second = a.sample(20), a.sample(20)
    assert not first.equals(second)  # a new stream per call ...
    assert first.equals(b.sample(20))  # ... derived from the config seed


@pytest.mark.parametrize("name,extra", [("updated", {}), ("smartnoise", {"accountant": "paper"}),
                                        ("borealis", {"accountant": "paper", "stopping": "safe"})])
def test_nan_epsilon_hat_ends_training(name, extra, toy):
    """Alg. 1's formula is NaN outside Theorem 3's domain (spec §8.2 Example F: λ = 0.5, votes (3, 2));
    a NaN ε̂ ends training as upstream's `NaN < ε` does, whatever the stopping rule."""
    m = make(name, toy, num_teachers=5, lam=0.5, epsilon=1e9, max_iter=40, record=False, **extra)
    m.fit(toy, label="y")
    assert np.isnan(m.trace.eps_hat[-1]) and m.trace.iterations < 40
    assert not np.isnan(m.trace.eps_hat[:-1]).any()
