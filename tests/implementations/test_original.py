"""original preset (implementations spec §2; violations V1, V3, V10, V14, V17, V19)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from pategan_audit.implementations.original import Original, OriginalConfig, delta_exponent

CERVICAL = Path(__file__).resolve().parents[2] / "data" / "cervical_cancer" / "authors_split" / "train_cervical_cancer.csv.gz"

# spec §8.2 "Gaussian-scale tests" (epsilon = 1)
SIGMA_ORIGINAL = 2.421236772  # sqrt(2 ln(1.25 * (10 XOR 5)))
FLIP_ORIGINAL = 0.4181978264
SIGMA_TEXTBOOK = 4.844805263  # sqrt(2 ln(1.25e5))
FLIP_TEXTBOOK = 0.4589008015


@pytest.fixture(scope="module")
def small():
    return pd.read_csv(CERVICAL).iloc[:120].reset_index(drop=True)


def make(**kw):
    kw.setdefault("max_iter", 3)
    kw.setdefault("num_teachers", 2)
    return Original.from_overrides(**kw)


@pytest.mark.parametrize("epsilon", [1e-6, 1e6])
def test_v1_fixed_iterations_single_critic(small, epsilon):
    """V1 'how to test': exactly one critic; iterations = niter whatever epsilon is."""
    m = make(epsilon=epsilon, max_iter=4).fit(small, label="Biopsy")
    assert m.trace.iterations == 4 and len(m.trace.extra["label_flips"]) == 4
    assert m.trace.extra["num_critics"] == 1 and isinstance(m.D, torch.nn.Module)
    assert m.trace.alpha == [] and m.trace.eps_hat == []  # no accountant


def test_v3_every_slot_reads_all_rows(small):
    """V3: each critic-step slot covers >> N/k distinct rows; their union is all rows."""
    N, k = len(small), 2
    m = make(max_iter=10, num_teachers=k).fit(small)
    assert m.batch_size_ == min(128, N // k)  # harness batch
    slots = m.trace.teacher_rows
    assert len(slots) == k
    assert all(len(s) > 1.5 * N / k for s in slots)
    assert set().union(*slots) == set(range(N))


def test_v3_fixed_own_partition(small):
    N, k = len(small), 3
    m = make(max_iter=10, num_teachers=k, critic_batch_source="own_partition").fit(small)
    blocks = m.trace.extra["blocks"]
    assert sorted(np.concatenate(blocks).tolist()) == list(range(N))  # disjoint, cover all rows
    for slot, block in zip(m.trace.teacher_rows, blocks):
        assert slot <= set(block.tolist())
    assert not (m.trace.teacher_rows[0] & m.trace.teacher_rows[1])


def test_v10_scaler_parameters_are_data_min_and_range(small):
    m = make(max_iter=1).fit(small)
    np.testing.assert_array_equal(m.scaler.min_, small.min().to_numpy(float))
    np.testing.assert_array_equal(m.scaler.range_, (small.max() - small.min()).to_numpy(float))
    assert m.trace.bounds["Age"] == (small["Age"].min(), small["Age"].max())
    pub = {c: (0.0, 100.0) for c in small.columns}
    fixed = make(max_iter=1, bounds="public", public_bounds=pub).fit(small)
    assert np.all(fixed.scaler.min_ == 0) and np.all(fixed.scaler.range_ == 100)


def test_v14_v17_label_noise(small):
    """V17: sigma = 2.421236772 (10 XOR 5); V14: indicator flip rate ~ 0.418 at epsilon = 1."""
    m = make(max_iter=30).fit(small)
    assert m.sigma_ == pytest.approx(SIGMA_ORIGINAL, rel=1e-9)
    flips = m.trace.extra["label_flips"]  # 30 iterations x 2 slots x 2B = 7200 labels, sd ~0.006
    assert abs(flips.mean() - FLIP_ORIGINAL) < 0.03
    textbook = make(max_iter=30, delta_mode="textbook").fit(small)
    assert textbook.sigma_ == pytest.approx(SIGMA_TEXTBOOK, rel=1e-9)
    assert abs(textbook.trace.extra["label_flips"].mean() - FLIP_TEXTBOOK) < 0.03
    assert delta_exponent(1e-5) == 5 and delta_exponent(1e-6) == 6


def test_v19_conditional_returns_training_labels(small):
    """V19: the output label multiset equals the training label multiset exactly."""
    m = make(conditional=True).fit(small, label="Biopsy")
    assert m.X_.shape[1] == small.shape[1] - 1 and m.cond_ is not None
    out = m.sample(len(small))
    np.testing.assert_array_equal(out["Biopsy"].to_numpy(), small["Biopsy"].to_numpy())  # n = N: Y_train itself
    double = m.sample(2 * len(small) + 7)
    counts = double["Biopsy"].value_counts()
    base = small["Biopsy"].value_counts()
    assert all(2 * base[v] <= counts.get(v, 0) <= 2 * base[v] + 7 for v in base.index)
    uncond = make().fit(small, label="Biopsy")  # harness: label generated like any column
    assert uncond.X_.shape[1] == small.shape[1] and uncond.cond_ is None


def test_same_seed_same_samples(small):
    a = make(seed=7).fit(small).sample(50, seed=1)
    b = make(seed=7).fit(small).sample(50, seed=1)
    pd.testing.assert_frame_equal(a, b)
    c = make(seed=8).fit(small).sample(50, seed=1)
    assert not a.equals(c)


def test_harness_restores_dtypes_released_returns_floats(small):
    out = make().fit(small).sample(40)
    assert (out.dtypes == small.dtypes).all()
    for c in small.columns:  # decoded values stay within [m, m + R] (sigmoid output)
        assert out[c].between(small[c].min(), small[c].max()).all()
    released = make(harness=False, batch_size=50).fit(small).sample(40)
    assert all(released[c].dtype == np.float64 for c in small.columns)


def test_batch_rules(small):
    assert make(num_teachers=4).fit(small).batch_size_ == 30  # min(128, 120 // 4)
    assert make(hyperparameters="paper").fit(small).batch_size_ == 60  # min(64, 120 // 2)
    with pytest.raises(ValueError, match="exceeds"):
        make(harness=False).fit(small)  # B = 128 > N = 120: upstream would crash


def test_paper_hyperparameters_generator_shape(small):
    m = make(hyperparameters="paper").fit(small)
    d = small.shape[1]
    widths = [layer.out_features for layer in m.G.net if isinstance(layer, torch.nn.Linear)]
    assert widths == [d, d // 2, d]
    assert isinstance(m.G.net[1], torch.nn.ReLU) and isinstance(m.G.net[-1], torch.nn.Sigmoid)


def test_zero_latent_dimension_gives_constant_output():
    """d < 4 gives z_dim = 0: the generator ignores its input (worst-case audit data, d = 3)."""
    df = pd.DataFrame({"A": [0, 0, 0, 0, 1], "B": [0, 0, 0, 0, 1], "C": [0, 0, 0, 0, 1]})
    m = make(max_iter=2).fit(df)
    assert m.z_dim_ == 0
    out = m.sample(10)
    assert (out.nunique() == 1).all()


def test_config_errors():
    with pytest.raises(ValueError, match="corrected"):
        OriginalConfig(use_pate=True)
    with pytest.raises(ValueError, match="gaussian_indicator"):
        OriginalConfig(label_noise="laplace")
    with pytest.raises(ValueError, match="delta_mode"):
        OriginalConfig(delta_mode="power")
    with pytest.raises(ValueError, match="critic_batch_source"):
        OriginalConfig(critic_batch_source="teachers")
    with pytest.raises(ValueError, match="valid settings"):
        Original.from_overrides(integer_decode="round")
    with pytest.raises(ValueError, match="public_bounds"):
        OriginalConfig(bounds="public")


def test_critic_score_hook_matches_the_critic_on_scaled_rows():
    """The white-box hook used by target selection (protocols D.3) scores rows with the critic."""
    import numpy as np
    import pandas as pd
    import torch

    from pategan_audit.implementations import create

    df = pd.DataFrame({"a": [0, 1, 2, 3, 4, 5] * 5, "b": [1.0, 0.5, 0.2, 0.1, 0.9, 0.3] * 5})
    model = create("original", seed=0, max_iter=2, num_teachers=2).fit(df)
    scores = model.critic_score(df.iloc[:4])
    assert scores.shape == (4,) and np.isfinite(scores).all()
    x = torch.as_tensor(model.scaler.transform(df.iloc[:4][model.features_]), dtype=torch.float32)
    assert np.allclose(scores, model.D(x)[:, 0].detach().numpy())
    assert not np.allclose(scores, scores[0])  # depends on the row
