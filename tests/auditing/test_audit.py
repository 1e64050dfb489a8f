"""End-to-end audit runs on real presets (tiny profile), the ablation variants and the
white-box critic score used for target selection."""
from __future__ import annotations

import numpy as np
import pytest

from pategan_audit.auditing import (
    CHANNELS,
    FINDING_SUFFIX,
    AuditProfile,
    AuditSetting,
    IgnoreFactory,
    PresetFactory,
    QueryFeaturiser,
    ablation_noops,
    ablation_settings,
    ablation_variants,
    attack_data,
    audit_generator,
    critic_score,
    make_settings,
    run_calibration,
    run_settings,
)
from pategan_audit.auditing.bounds import perfect_attack_ceiling
from pategan_audit.runner import RunOptions

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
    # V19: the benchmark harness already runs original unconditionally -> no separate row
    assert "V19 fixed" not in dict(ablation_variants("original")) and ablation_noops("original") == ["V19"]
    # O-findings as extra rows; O2 (reseed_each_fit) is already off in the harness
    with_findings = dict(ablation_variants("synthcity", findings=("O1", "O2")))
    assert with_findings[f"O1 fixed{FINDING_SUFFIX}"] == {"student_reads_real": False}
    assert f"O2 fixed{FINDING_SUFFIX}" not in with_findings
    with pytest.raises(ValueError, match="O-findings"):
        ablation_variants("updated", findings=("O1",))


def test_bounds_fix_gets_the_public_bounds_of_the_setting():
    d_out, _ = attack_data("querybased")
    s = AuditSetting("querybased", "updated", variant="V11 fixed", extra_overrides={"bounds": "public"})
    assert s.overrides(d_out)["public_bounds"] == {c: (0.0, 1.0) for c in "ABC"}
    settings = ablation_settings(TINY)
    # Querybased ablation in the fixed_size channel (ABLATION_CHANNELS): size closed, bounds open
    assert len(settings) == 5 and {s.channel for s in settings} == {"fixed_size"}
    assert all(s.iterations == 2 for s in settings)
    limited = AuditProfile("lim", n_per_world=10, querybased_iterations=2, groundhog_iterations=2, target_candidates=1,
                           target_models=2, target_iterations=2, ablation_attacks=("groundhog",),
                           ablation_implementations=("synthcity",),
                           ablation_limits=(("groundhog", "synthcity", ("as benchmarked", "V12 fixed")),))
    gh = ablation_settings(limited)
    assert [s.variant for s in gh] == ["as benchmarked", "V12 fixed"] and {s.channel for s in gh} == {"paper"}


def test_run_settings_on_real_presets(tmp_path):
    settings = make_settings(TINY, attacks=("querybased",), implementations=("updated", "corrected"), channels=CHANNELS)
    recs = run_settings(settings, TINY, options=RunOptions(n_jobs=1, cache_dir=tmp_path))
    assert len(recs) == 2 * 3 * 2  # presets x channels x bound methods
    assert set(recs["method"]) == {"clopper_pearson", "bayesian"}
    assert (recs["valid_FP"] + recs["valid_TN"] == 2).all() and (recs["test_FP"] + recs["test_TN"] == 4).all()
    for channel, n_out in (("paper", 4), ("fixed_size", 5), ("controlled", 5)):
        assert (recs[recs["channel"] == channel]["n_synth_rows_out"] == n_out).all()
    assert (recs["epsilon_emp"] <= perfect_attack_ceiling(n_per_world=4, method="bayesian") + 1e-9).all()
    # corrected never reads bounds from data: its fixed_size and controlled settings are one run
    cp = recs[recs["method"] == "clopper_pearson"].set_index(["implementation", "channel"])
    assert cp.loc[("corrected", "fixed_size"), "run_id"] == cp.loc[("corrected", "controlled"), "run_id"]
    assert cp.loc[("corrected", "fixed_size"), "outputs_digest"] == cp.loc[("corrected", "controlled"), "outputs_digest"]
    assert cp.loc[("updated", "fixed_size"), "run_id"] != cp.loc[("updated", "controlled"), "run_id"]
    assert len(list((tmp_path / "audit").glob("*.pkl"))) == 5 * 2 * TINY.n_per_world  # 6 settings, 5 distinct runs
    assert (recs["train_seconds"] > 0).all()
    again = run_settings(settings, TINY, options=RunOptions(n_jobs=1, cache_dir=tmp_path))  # from the cache
    np.testing.assert_array_equal(recs["epsilon_emp"], again["epsilon_emp"])
    np.testing.assert_array_equal(recs["train_seconds"], again["train_seconds"])  # the original compute time


def test_groundhog_fixed_size_is_the_paper_game():
    d_out, d_in = attack_data("groundhog")
    paper, fixed = (AuditSetting("groundhog", "borealis", channel=c, iterations=2) for c in ("paper", "fixed_size"))
    assert paper.effective_key(d_out, d_in) == fixed.effective_key(d_out, d_in)
    ctrl = AuditSetting("groundhog", "borealis", channel="controlled", iterations=2)
    assert ctrl.effective_key(d_out, d_in) != paper.effective_key(d_out, d_in)
    # the ablation's bounds fix (V13) in the paper game runs exactly the controlled channel
    v13 = AuditSetting("groundhog", "borealis", channel="paper", iterations=2, variant="V13 fixed",
                       extra_overrides={"bounds": "public"})
    assert v13.effective_key(d_out, d_in) == ctrl.effective_key(d_out, d_in)


def test_calibration_records():
    calib = run_calibration(TINY, options=RunOptions(n_jobs=1), cache_namespace=None)
    assert set(calib["implementation"]) == {"release training data", "ignore training data", "constant (0,0,0)"}
    rel = calib[(calib["implementation"] == "release training data") & (calib["channel"] == "paper")]
    assert (rel["auc"] == 1.0).all()
    assert set(calib["channel"]) == {"paper", "fixed_size"}
    # D.9: a constant (0,0,0) output is perfectly private, but the paper game's 4 vs 5 rows give it away
    const = calib[(calib["implementation"] == "constant (0,0,0)") & (calib["method"] == "clopper_pearson")]
    assert const.set_index("channel").loc["paper", "auc"] == 1.0
    assert const.set_index("channel").loc["fixed_size", "epsilon_emp"] == 0.0


def test_original_critic_scores_rows():
    _, d_in = attack_data("groundhog")
    model = PresetFactory("original", overrides={"num_teachers": 5, "max_iter": 2})(0).fit(d_in)
    s = critic_score(model, d_in.iloc[[397, 1, 2]])
    assert s.shape == (3,) and np.isfinite(s).all()
    with pytest.raises(AttributeError, match="critic_score"):
        critic_score(PresetFactory("borealis", overrides={"num_teachers": 2, "max_iter": 1})(0), d_in.iloc[[0]])


def test_the_paper_profiles_ablation_builds():
    # the paper profile lists every O-finding for every preset: each preset keeps only those it
    # has a switch for (O1 is synthcity's, O6 borealis' and smartnoise's, none is original's)
    from pategan_audit.auditing import get_profile
    from pategan_audit.implementations import violations

    paper = get_profile("paper")
    settings = ablation_settings(paper)
    assert {(s.attack, s.implementation) for s in settings} == {(a, i) for a in ("querybased", "groundhog")
                                                                for i in paper.ablation_implementations}
    for s in settings:
        if s.variant.endswith(FINDING_SUFFIX):
            fid = s.variant.split()[0]
            assert s.implementation in violations.BY_ID[fid].implementations
    labels = {(s.implementation, s.variant) for s in settings if s.attack == "querybased"}
    assert ("synthcity", f"O1 fixed{FINDING_SUFFIX}") in labels and ("smartnoise", f"O6 fixed{FINDING_SUFFIX}") in labels
    assert not any(i in ("original", "turing") and v.endswith(FINDING_SUFFIX) for i, v in labels)
    assert paper.ablation_finding_ids("querybased", "updated") == ("O9",)
    # every variant is a valid preset configuration
    d_out, _ = attack_data("querybased")
    for s in settings:
        if s.attack == "querybased":
            s.factory(d_out)(0)
    typo = AuditProfile("typo", n_per_world=10, querybased_iterations=2, groundhog_iterations=2, target_candidates=1,
                        target_models=2, target_iterations=2, ablation_findings=(("querybased", "updated", ("O99",)),))
    with pytest.raises(ValueError, match="O99"):
        ablation_settings(typo)


def test_findings_ablation_runs_batched_and_per_model(tmp_path):
    # a few of the paper ablation's O-finding rows, at a tiny scale, through both training paths
    prof = AuditProfile("tiny-findings", n_per_world=5, querybased_iterations=2, groundhog_iterations=2,
                        target_candidates=1, target_models=2, target_iterations=2, ablation_attacks=("querybased",),
                        ablation_implementations=("smartnoise",),
                        ablation_findings=(("querybased", "smartnoise", ("O1", "O6", "O9")),))
    settings = [s for s in ablation_settings(prof) if s.variant.endswith(FINDING_SUFFIX)]
    assert [s.variant for s in settings] == [f"O6 fixed{FINDING_SUFFIX}", f"O9 fixed{FINDING_SUFFIX}"]
    batched = run_settings(settings, prof, options=RunOptions(n_jobs=1, cache_dir=tmp_path))
    reference = run_settings(settings, prof, options=RunOptions(n_jobs=1), cache_namespace=None, batched=False)
    assert len(batched) == 2 * 2
    np.testing.assert_array_equal(batched["outputs_digest"], reference["outputs_digest"])


def test_run_options_reach_the_game(tmp_path):
    d_out, d_in = attack_data("querybased")
    kwargs = dict(profile=TINY, featurise=QueryFeaturiser(), n_synth_rows=5, seed=0)
    first = audit_generator(IgnoreFactory(), d_out, d_in, options=RunOptions(n_jobs=1, cache_dir=str(tmp_path)), **kwargs)
    assert any((tmp_path / "audit").iterdir())  # cache_dir reached the game
    again = audit_generator(IgnoreFactory(), d_out, d_in, options=RunOptions(n_jobs=1, cache_dir=str(tmp_path)), **kwargs)
    assert [r["epsilon_emp"] for r in first] == [r["epsilon_emp"] for r in again]
    with pytest.raises(TypeError, match="n_job"):
        audit_generator(IgnoreFactory(), d_out, d_in, n_job=1, **kwargs)
