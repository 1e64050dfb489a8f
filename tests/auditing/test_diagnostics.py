"""Diagnostics that explain audit results (released rows vs training length, vote unanimity,
encoder categories)."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from pategan_audit.auditing import AuditSetting, encoder_categories, released_rows_move, vote_unanimity


def test_released_rows_move():
    # synthcity's Gumbel-softmax generator changes its one-hot outputs within 3 iterations ...
    assert released_rows_move(AuditSetting("querybased", "synthcity", channel="fixed_size", iterations=3))
    # ... while original's rounded worst-case rows after 5 iterations are those after 1
    assert not released_rows_move(AuditSetting("querybased", "original", channel="fixed_size", iterations=5))
    with pytest.raises(ValueError, match="reference_iterations"):
        released_rows_move(AuditSetting("querybased", "original", iterations=1))
    with pytest.raises(ValueError, match="world"):
        released_rows_move(AuditSetting("querybased", "original", iterations=2), world="both")


def test_vote_unanimity():
    u = vote_unanimity(AuditSetting("groundhog", "updated", iterations=2))
    assert 0.0 <= u <= 1.0
    assert math.isnan(vote_unanimity(AuditSetting("querybased", "original", iterations=2)))  # no teachers


def test_encoder_categories_show_synthcity_metadata_despite_public_bounds():
    cats = encoder_categories(AuditSetting("querybased", "synthcity", channel="controlled", iterations=1))
    assert list(cats.columns) == ["out", "in"] and list(cats.index) == ["A", "B", "C"]
    assert cats.loc["A", "in"] == (0.0, 1.0)
    # V12 note (as of this writing): category lists stay data-derived, so the out world (all
    # zeros) only knows category 0; a public categorical domain would give (0.0, 1.0) here too
    assert set(cats.loc["A", "out"]) <= {0.0, 1.0}
    assert encoder_categories(AuditSetting("querybased", "borealis", channel="controlled", iterations=1)) is None


def test_student_labels_show_whether_a_switch_reaches_the_student():
    from pategan_audit.auditing import student_labels

    base = AuditSetting("groundhog", "updated", iterations=2)
    labels = student_labels(base)
    assert labels.size > 0 and set(np.unique(labels)) <= {0.0, 1.0}
    np.testing.assert_array_equal(labels, student_labels(base))  # deterministic per seed
    # V15 fixed: noise scale 1/λ = 1,000 instead of λ = 1e-3 -> (near) coin-flip labels, not the votes
    flipped = student_labels(replace(base, extra_overrides={"laplace_scale_convention": "inverse_lambda"}))
    assert flipped.shape == labels.shape and not np.array_equal(flipped, labels)
    assert student_labels(AuditSetting("querybased", "original", iterations=2)).size == 0
