"""End-to-end audit runs on real presets (tiny profile), the ablation variants and the
white-box critic score used for target selection."""
from __future__ import annotations

import numpy as np
import pytest

from pategan_audit.auditing import (
    AuditProfile,
    AuditSetting,
    PresetFactory,
    ablation_settings,
    ablation_variants,
    attack_data,
    critic_score,
    make_settings,
    run_calibration,
    run_settings,
)
from pategan_audit.auditing.bounds import perfect_attack_ceiling

TINY = AuditProfile("tiny", n_per_world=10, querybased_iterations=2, groundhog_iterations=2, target_candidates=1,
                    target_models=2, target_iterations=2, ablation_attacks=("querybased",),
                    ablation_implementations=("updated",))


def test_ablation_variants_follow_the_catalogue():
    labels = [label for label, _ in ablation_variants("updated")]
    assert labels == ["as benchmarked", "V4 fixed", "V11 fixed", "V15 fixed", "all fixed"]
    overrides = dict(ablation_variants("updated"))
    assert overrides["V4 fixed"] == {"partition": "disjoint"}
    # smartnoise has one switchable violation (V9): fixing it is fixing everything
    assert [label for label, _ in ablation_variants("smartnoise")] == ["as benchmarked", "V9 fixed"]


def test_bounds_fix_gets_the_public_bounds_of_the_setting():
    d_out, _ = attack_data("querybased")
    s = AuditSetting("querybased", "updated", variant="V11 fixed", extra_overrides={"bounds": "public"})
    assert s.overrides(d_out)["public_bounds"] == {c: (0.0, 1.0) for c in "ABC"}
    settings = ablation_settings(TINY)
    assert len(settings) == 5 and {s.channel for s in settings} == {"paper"}
    assert all(s.iterations == 2 for s in settings)


def test_run_settings_on_real_presets(tmp_path):
    settings = make_settings(TINY, attacks=("querybased",), implementations=("updated", "corrected"),
                             channels=("paper", "controlled"))
    recs = run_settings(settings, TINY, n_jobs=1, cache_dir=tmp_path, progress=False)
    assert len(recs) == 2 * 2 * 2  # presets x channels x bound methods
    assert set(recs["method"]) == {"clopper_pearson", "bayesian"}
    assert (recs["valid_FP"] + recs["valid_TN"] == 2).all() and (recs["test_FP"] + recs["test_TN"] == 4).all()
    ctrl = recs[recs["channel"] == "controlled"]
    assert (ctrl["n_synth_rows_out"] == 5).all() and (recs[recs["channel"] == "paper"]["n_synth_rows_out"] == 4).all()
    assert (recs["epsilon_emp"] <= perfect_attack_ceiling(n_per_world=4, method="bayesian") + 1e-9).all()
    again = run_settings(settings, TINY, n_jobs=1, cache_dir=tmp_path, progress=False)  # from the cache
    np.testing.assert_array_equal(recs["epsilon_emp"], again["epsilon_emp"])


def test_calibration_records():
    calib = run_calibration(TINY, n_jobs=1, cache_namespace=None)
    assert set(calib["implementation"]) == {"release training data", "ignore training data"}
    rel = calib[(calib["implementation"] == "release training data") & (calib["channel"] == "paper")]
    assert (rel["auc"] == 1.0).all()


def test_original_critic_scores_rows():
    _, d_in = attack_data("groundhog")
    model = PresetFactory("original", overrides={"num_teachers": 5, "max_iter": 2})(0).fit(d_in)
    s = critic_score(model, d_in.iloc[[397, 1, 2]])
    assert s.shape == (3,) and np.isfinite(s).all()
    with pytest.raises(AttributeError, match="critic_score"):
        critic_score(PresetFactory("borealis", overrides={"num_teachers": 2, "max_iter": 1})(0), d_in.iloc[[0]])
