"""borealis preset (implementations spec §6; V8, V13, B5, O5, O6)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pategan_audit.implementations import create

from .conftest import toy_bounds


def fit(df, **kw):
    kw.setdefault("num_teachers", 2)
    kw.setdefault("max_iter", 2)
    return create("borealis", **kw).fit(df, label="y")


def test_defaults_and_architecture(toy):
    m = fit(toy)
    cfg = m.config
    assert (cfg.lam, cfg.num_moments, cfg.accountant, cfg.conditional, cfg.inverse_transform) == (1e-4, 100, "borealis", False, True)
    d_x = toy.shape[1] - 1  # 4 features: z_dim = 4 // 4 + [4 mod 4 == 0] = 2 (spec §6.2)
    assert m.z_dim_ == 2
    assert [layer.weight.shape[1:] for layer in m.gen_net.layers] == [(2, 4), (4, d_x + 1)]
    assert [layer.weight.shape[1:] for layer in m.teachers.net.layers] == [(d_x + 1, d_x // 2), (d_x // 2, 1)]
    assert torch.all(m.gen_net.layers[0].bias != 0)  # bias filled with 0.01, then trained


def test_disjoint_contiguous_blocks(toy):
    """Teacher t reads only rows [tN/k, (t+1)N/k) in dataset order (spec §6.3)."""
    m = fit(toy, num_teachers=3, max_iter=5)
    for t, rows in enumerate(m.trace.teacher_rows):
        assert rows and min(rows) >= 100 * t and max(rows) < 100 * (t + 1)
    assert m.first_seen_subsets()[1].tolist() == list(range(100, 200))


def test_v8_accountant_and_first_iteration_epsilon(toy):
    """spec §8.2: borealis, λ = 1e-4, 5 x 64 queries per iteration, δ = 1e-5 -> ε̂ = 0.115776 after
    one iteration (vote independent)."""
    m = fit(toy, max_iter=1)
    assert m.batch_size_ == 64 and m.accountant.kind == "borealis"
    assert m.trace.eps_hat[0] == pytest.approx(0.115776, abs=5e-7)
    assert m.accountant.num_queries == 320


def test_teachers_take_a_real_and_a_fake_step_per_round(toy):
    """Upstream borealis steps each teacher's optimiser after the real batch and again after the
    fake batch: 2 x n_T = 10 Adam steps per iteration."""
    m = fit(toy, max_iter=3)
    state = m.teachers.optimizer.state[m.teachers.net.layers[0].weight]
    assert int(state["step"]) == 3 * 2 * 5


def test_v13_bounds(toy):
    assert fit(toy).trace.bounds == toy_bounds(toy)
    wide = {c: (lo - 1.0, hi + 1.0) for c, (lo, hi) in toy_bounds(toy).items()}
    assert fit(toy, bounds="public", public_bounds=wide).trace.bounds == wide


def test_b5_released_output_is_raw(toy):
    raw = fit(toy, inverse_transform=False).sample(500, seed=0)
    assert raw["count"].abs().max() < 20 and not np.allclose(raw["count"], raw["count"].round())  # not the 3..39 scale
    out = fit(toy).sample(500, seed=0)
    assert out["count"].between(3, 39).all() and list(out.dtypes) == list(toy.dtypes)


def test_o5_conditional_labels_follow_training_class_ratios(toy):
    m = fit(toy, conditional=True)
    s = m.sample(4000, seed=1)
    assert set(s["y"].unique()) <= {0, 1}
    assert s["y"].mean() == pytest.approx(toy["y"].mean(), abs=0.03)


@pytest.mark.parametrize("noise,check", [("normal", lambda z: (z < 0).any()), ("uniform", lambda z: (z >= 0).all() and (z < 1).all())])
def test_o6_generation_noise(toy, noise, check):
    m = fit(toy, generation_noise=noise)
    z = m._latent(2000, torch.Generator().manual_seed(0), sampling=True)
    assert check(z)
    z_train = m._latent(2000, torch.Generator().manual_seed(0), sampling=False)
    assert (z_train >= 0).all() and (z_train < 1).all()  # training always U(0, 1)


def test_released_needs_full_blocks(toy):
    with pytest.raises(ValueError, match="batch_size"):
        fit(toy, num_teachers=10, harness=False)
