"""turing preset (implementations spec §5; violations V2, V6, V16, V18, B4, O7)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import torch

from pategan_audit.implementations import create
from pategan_audit.implementations.turing import Turing, TuringConfig

CERVICAL = Path(__file__).resolve().parents[2] / "data" / "cervical_cancer" / "authors_split" / "train_cervical_cancer.csv.gz"

# spec §8.2 "Gaussian-scale tests" (epsilon = 1, delta = 1e-5)
SIGMA_TURING = 0.6680816973  # sqrt(2 ln(1.25 * 10**1e-5))
FLIP_TURING = 0.2271060054
SIGMA_TEXTBOOK = 4.844805263


@pytest.fixture(scope="module")
def small():
    return pd.read_csv(CERVICAL).iloc[:120].reset_index(drop=True)


def make(**kw):
    kw.setdefault("max_iter", 3)
    kw.setdefault("num_teachers", 2)
    return Turing.from_overrides(**kw)


@pytest.mark.parametrize("epsilon", [1e-6, 1e6])
def test_v2_fixed_iterations(small, epsilon):
    m = make(epsilon=epsilon, max_iter=4).fit(small, label="Biopsy")
    assert m.trace.iterations == 4 and m.trace.extra["num_critics"] == 1
    assert m.trace.eps_hat == []


def test_released_default_iterations(small):
    assert TuringConfig().max_iter == 10_000  # as benchmarked (paper §5)
    m = make(max_iter=None).fit(small.iloc[:20], label="Biopsy")
    assert m.trace.iterations == 100  # reprosyn n_iters default


def test_v6_every_slot_reads_all_rows(small):
    N, k = len(small), 3
    m = make(max_iter=12, num_teachers=k).fit(small, label="Biopsy")
    assert all(len(s) > 1.5 * N / k for s in m.trace.teacher_rows)
    assert set().union(*m.trace.teacher_rows) == set(range(N))
    fixed = make(max_iter=12, num_teachers=k, critic_batch_source="own_partition").fit(small, label="Biopsy")
    for slot, block in zip(fixed.trace.teacher_rows, fixed.trace.extra["blocks"]):
        assert slot <= set(block.tolist()) and len(slot) <= len(block)


def test_v16_v18_label_noise(small):
    m = make(max_iter=30).fit(small, label="Biopsy")
    assert m.sigma_ == pytest.approx(SIGMA_TURING, rel=1e-9)
    assert abs(m.trace.extra["label_flips"].mean() - FLIP_TURING) < 0.03
    fixed = make(max_iter=1, delta_mode="textbook").fit(small, label="Biopsy")
    assert fixed.sigma_ == pytest.approx(SIGMA_TEXTBOOK, rel=1e-9)


def test_o7_gp_weight_and_encoding(small):
    m = make(num_teachers=3).fit(small, label="Biopsy")
    assert m.gp_weight_ == 3.0
    D = small.shape[1] + 1  # harness: nfeatures = #columns + 1 (one feature never filled)
    assert m.X_.shape[1] == D and m.z_dim_ == D // 4
    age = small["Age"].to_numpy(float)
    col = [c.start for c in m.encoder.meta if c.name == "Age"][0]
    np.testing.assert_allclose(m.X_[:, col].numpy(), (age - age.min()) / (age.max() + 1e-8), rtol=1e-6)


def test_b4_truncate_vs_round(small):
    """B4: the released decode truncates; same seed -> the same floats, so truncated <= rounded
    and they differ by at most one, and on some cells."""
    trunc = make(integer_decode="truncate").fit(small, label="Biopsy").sample(300, seed=3)
    rnd = make(integer_decode="round").fit(small, label="Biopsy").sample(300, seed=3)
    ints = [c for c in small.columns if small[c].dtype == np.int64 and c != "Biopsy"]
    diff = rnd[ints].to_numpy() - trunc[ints].to_numpy()
    assert set(np.unique(diff)) <= {0, 1} and diff.sum() > 0


def test_outputs_and_determinism(small):
    a = make(seed=5).fit(small, label="Biopsy").sample(80, seed=2)
    b = make(seed=5).fit(small, label="Biopsy").sample(80, seed=2)
    pd.testing.assert_frame_equal(a, b)
    assert (a.dtypes == small.dtypes).all()
    assert set(a["Biopsy"]) <= {0, 1}
    unlabelled = make().fit(small)  # no label: every column numeric, plus the harness's unfilled one
    assert unlabelled.X_.shape[1] == small.shape[1] + 1
    assert make(label_encoding="onehot").fit(small).X_.shape[1] == small.shape[1]


def test_public_bounds(small):
    pub = {c: (0.0, float(small[c].max()) * 2 + 1) for c in small.columns}
    m = make(bounds="public", public_bounds=pub).fit(small, label="Biopsy")
    assert m.trace.bounds["Age"] == pub["Age"] and m.trace.bounds["Biopsy"] == pub["Biopsy"]
    onehot = make(bounds="public", public_bounds=pub, label_encoding="onehot").fit(small, label="Biopsy")
    assert [c.categories for c in onehot.encoder.meta if c.name == "Biopsy"][0] == tuple(range(0, 4))


def test_config_errors():
    with pytest.raises(ValueError, match="integer_decode"):
        TuringConfig(integer_decode="floor")
    with pytest.raises(ValueError, match="delta_mode"):
        TuringConfig(delta_mode="xor_exponent")
    with pytest.raises(ValueError, match="corrected"):
        TuringConfig(use_pate=True)
    with pytest.raises(ValueError, match="valid settings"):
        Turing.from_overrides(conditional=True)


# -- label_encoding="harness": what the authors' turing harnesses ran ----------------------------------

def test_harness_label_encoding_is_an_integer_column_plus_one_unfilled_feature(toy):
    m = create("turing", num_teachers=2, max_iter=2, label_encoding="harness").fit(toy, label="y")
    assert m.X_.shape[1] == toy.shape[1] + 1  # nfeatures = #columns + 1
    assert torch.all(m.X_[:, -1] == 0)  # the column the encoding never fills
    kinds = {c.name: c.kind for c in m.encoder.meta}
    assert kinds["y"] == "integer"  # create_metadata: only pandas category columns are categorical
    assert create("turing").config.label_encoding == "harness"  # the default since 2026-11-25
    onehot = create("turing", num_teachers=2, max_iter=2, label_encoding="onehot").fit(toy, label="y")
    assert {c.name: c.kind for c in onehot.encoder.meta}["y"] == "categorical" and onehot.X_.shape[1] == toy.shape[1] + 1
    out = m.sample(50, seed=1)
    assert list(out.columns) == list(toy.columns) and out["y"].dtype == toy["y"].dtype


def test_harness_label_decoding_truncates_like_the_utility_harness(toy):
    """The utility harness (turing.py) truncates INTEGER columns: a 0/1 label comes out 1 only
    where the generator's sigmoid reaches 1 exactly, so an untrained model releases no positive."""
    m = create("turing", num_teachers=2, max_iter=1, label_encoding="harness", integer_decode="truncate").fit(toy, label="y")
    raw = m.encoder.inverse_transform(np.full((3, m.encoder.width), 0.999))
    assert raw["y"].tolist() == [0, 0, 0]
    rounded = create("turing", num_teachers=2, max_iter=1, label_encoding="harness").fit(toy, label="y")
    assert rounded.encoder.inverse_transform(np.full((3, rounded.encoder.width), 0.999))["y"].tolist() == [1, 1, 1]


def test_label_encoding_is_checked():
    with pytest.raises(ValueError, match="label_encoding must be one of"):
        create("turing", label_encoding="integer")


def test_harness_label_encoding_batched_equals_single(toy):
    from pategan_audit.implementations import fit_many

    kw = dict(num_teachers=2, max_iter=3, label_encoding="harness")
    many = fit_many("turing", toy, seeds=[3, 4], label="y", **kw)
    single = create("turing", seed=3, **kw).fit(toy, label="y")
    pd.testing.assert_frame_equal(many[0].sample(40, seed=2), single.sample(40, seed=2))


# -- the two harnesses: the audit's batch cap, the utility harness's B = 128 -------------------------

def test_batch_cap_is_the_audit_harness_and_the_utility_harness_keeps_128(small):
    """turing_audit.py: B = min(128, N // k); turing.py (utility): B = 128 (N = 120 rows here)."""
    assert make(num_teachers=3).fit(small, label="Biopsy").batch_size_ == 120 // 3
    assert make(num_teachers=3, batch_cap=False, batch_size=100).fit(small, label="Biopsy").batch_size_ == 100
    # 128 > N, where upstream crashes: all N rows
    assert make(num_teachers=3, batch_cap=False).fit(small, label="Biopsy").batch_size_ == 120


def test_utility_harness_overrides_reach_the_utility_benchmark():
    from pategan_audit.implementations import utility_harness_overrides
    from pategan_audit.utility.cells import UtilityCell
    from pategan_audit.utility.run import _default_factory

    assert utility_harness_overrides("turing") == {"integer_decode": "truncate", "batch_cap": False}
    assert utility_harness_overrides("original") == {}

    class Data:
        bounds = None

    cell = UtilityCell(dataset="cervical_cancer", implementation="turing", epsilon=1.0, max_iter=2)
    made = _default_factory(cell, 5, Data())(0)
    assert made.config.integer_decode == "truncate" and made.config.batch_cap is False
    own = UtilityCell(dataset="cervical_cancer", implementation="turing", epsilon=1.0, max_iter=2,
                      overrides={"integer_decode": "round"})
    assert _default_factory(own, 5, Data())(0).config.integer_decode == "round"  # the cell's own wins
