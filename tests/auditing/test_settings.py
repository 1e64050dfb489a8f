"""The audit settings (protocols spec D.2, D.3), channel controls (D.9) and profiles (F.2, F.3)."""
from __future__ import annotations

import pytest

from pategan_audit.auditing.bounds import perfect_attack_ceiling
from pategan_audit.auditing.profiles import AUDIT_PROFILES, AuditProfile, get_profile
from pategan_audit.auditing.settings import (
    AuditSetting,
    PresetFactory,
    attack_data,
    cervical_public_bounds,
    paper_overrides,
    worst_case_public_bounds,
)


def test_attack_data_worlds():
    q_out, q_in = attack_data("querybased")
    assert (len(q_out), len(q_in)) == (4, 5)
    g_out, g_in = attack_data("groundhog")
    assert (len(g_out), len(g_in)) == (685, 686)
    assert g_out.equals(g_in.drop(index=397).reset_index(drop=True))
    with pytest.raises(ValueError, match="row position"):
        attack_data("groundhog", target=686)
    with pytest.raises(ValueError, match="unknown attack"):
        attack_data("groundhog-v2")


def test_paper_overrides():
    # D.2: k = 2, updated lambda 1e-3, borealis at its default (G.7); D.3: k = 5, updated and borealis 1e-3
    assert paper_overrides("querybased", "updated", iterations=100) == {"num_teachers": 2, "max_iter": 100, "lam": 1e-3}
    assert paper_overrides("querybased", "borealis", iterations=100) == {"num_teachers": 2, "max_iter": 100}
    assert paper_overrides("groundhog", "borealis", iterations=1000) == {"num_teachers": 5, "max_iter": 1000, "lam": 1e-3}
    assert paper_overrides("groundhog", "smartnoise", iterations=1000) == {"num_teachers": 5, "max_iter": 1000}


def test_cervical_public_bounds_contain_both_worlds_and_ignore_the_target():
    d_out, d_in = attack_data("groundhog")
    bounds = cervical_public_bounds(d_out)
    assert set(bounds) == set(d_in.columns)
    for col, (lo, hi) in bounds.items():
        assert lo <= d_in[col].min() and d_in[col].max() <= hi, col  # nobody is clipped, target included
    assert bounds["STDs_number"] == (0.0, 5.0) and bounds["STDs_N_diagnosis"] == (0.0, 3.0)
    assert bounds["Biopsy"] == (0.0, 1.0)
    # computed from D' only: adding the target (D) or dropping another row changes nothing relevant
    other = d_out.drop(index=0)
    assert cervical_public_bounds(other)["STDs_number"] == bounds["STDs_number"]


def test_setting_channels():
    d_out, d_in = attack_data("querybased")
    paper = AuditSetting("querybased", "updated", channel="paper", iterations=100)
    fixed = AuditSetting("querybased", "updated", channel="fixed_size", iterations=100)
    ctrl = AuditSetting("querybased", "updated", channel="controlled", iterations=100)
    assert paper.n_synth_rows(d_out, d_in) == "train_size" and ctrl.n_synth_rows(d_out, d_in) == 5
    # fixed_size closes the size channel only: 5 rows in both worlds, bounds still from the data
    assert fixed.n_synth_rows(d_out, d_in) == 5 and "bounds" not in fixed.overrides(d_out)
    assert "bounds" not in paper.overrides(d_out)
    assert ctrl.overrides(d_out)["bounds"] == "public"
    assert ctrl.overrides(d_out)["public_bounds"] == worst_case_public_bounds()
    # the corrected preset never reads bounds from data, in either channel
    assert AuditSetting("querybased", "corrected").overrides(d_out)["bounds"] == "public"
    g = AuditSetting("groundhog", "original", iterations=50)
    assert g.n_synth_rows(*attack_data("groundhog")) == 686
    v4 = AuditSetting("querybased", "updated", variant="V4 fixed", extra_overrides={"partition": "disjoint"})
    assert v4.factory(d_out).overrides["partition"] == "disjoint"
    with pytest.raises(ValueError, match="channel"):
        AuditSetting("querybased", "updated", channel="both")


def test_preset_factory_builds_fresh_seeded_generators():
    f = PresetFactory("borealis", overrides={"num_teachers": 2, "max_iter": 3})
    a, b = f(1), f(2)
    assert a is not b and a.config.seed == 1 and b.config.seed == 2
    assert a.config.num_teachers == 2 and a.config.record is False


def test_profiles():
    book, paper, smoke = get_profile("book"), get_profile("paper"), get_profile("smoke")
    assert paper.split == (400, 200, 400) and paper.ceiling() == pytest.approx(4.6815, abs=5e-5)  # D.6
    assert paper.querybased_iterations == 100 and paper.groundhog_iterations == 1000  # D.2, D.3
    # F.3: the book must be able to show eps_emp > 1 (>= 12 test outputs per world)
    assert book.split[2] >= 12 and book.ceiling() > 1.0
    assert smoke.n_per_world <= book.n_per_world <= paper.n_per_world
    assert set(AUDIT_PROFILES) == {"smoke", "book", "resolvable", "large", "paper", "ceiling10k", "ceiling2k"}
    # the audits past the ceiling: the paper's attack split (400 / 200) and only a larger test split
    for name, n_test in (("ceiling10k", 10_000), ("ceiling2k", 2_000)):
        p = get_profile(name)
        assert p.split == (400, 200, n_test) and p.n_per_world == 600 + n_test
        assert p.ceiling() == pytest.approx(perfect_attack_ceiling(n_per_world=n_test))
    resolvable = get_profile("resolvable")  # the GroundHog ablation archive: a fix that stops a perfect attack shows
    assert resolvable.ceiling() > 3.0 and resolvable.groundhog_iterations == paper.groundhog_iterations
    assert book.ceiling("bayesian") == pytest.approx(perfect_attack_ceiling(n_per_world=16, method="bayesian"))
    with pytest.raises(ValueError, match="unknown audit profile"):
        get_profile("full")


def test_book_profile_budget_rules():
    """Task brief: >= 30 shadow models per world everywhere in the book; every reduction named."""
    book = get_profile("book")
    assert book.n_per_world >= 30
    assert book.iterations("querybased", "synthcity") < book.iterations("querybased", "original") == 50
    assert book.iterations("groundhog", "synthcity") == 50
    assert any("synthcity" in r and "20 iterations" in r for r in book.reductions())
    assert book.ablation_variants_kept("groundhog", "synthcity") == ("as benchmarked", "V12 fixed")
    assert book.ablation_variants_kept("querybased", "synthcity") is None
    assert book.ablation_finding_ids("querybased", "synthcity") == ("O1",)
    assert book.ablation_variants_kept("groundhog", "original") == ()  # skipped: ablated on Querybased only
    assert any("without original, turing" in r for r in book.reductions())
    paper = get_profile("paper")
    assert paper.iteration_caps == () and paper.ablation_limits == ()  # the paper profile is the full protocol
    with pytest.raises(ValueError, match="iteration_caps"):
        AuditProfile("bad", n_per_world=10, querybased_iterations=1, groundhog_iterations=1, target_candidates=1,
                     target_models=1, target_iterations=1, iteration_caps=(("querybased", "synthcity", 0),))


def test_a_setting_resolves_once():
    s = AuditSetting("groundhog", "corrected", channel="fixed_size", iterations=2)
    run = s.resolve()
    d_out, d_in = attack_data("groundhog")
    assert run.d_out.equals(d_out) and run.d_in.equals(d_in) and run.n_synth_rows == 686
    # corrected never reads bounds from the data: the setting's public bounds, in its factory and key
    assert run.factory == s.factory(d_out) and run.factory.overrides["public_bounds"] == cervical_public_bounds(d_out)
    assert run.effective_key == s.effective_key(d_out, d_in) and run.cache_key == {"setting": run.effective_key}
    assert run.run_id == AuditSetting("groundhog", "corrected", channel="controlled", iterations=2).resolve().run_id


def test_the_public_bounds_rule_fills_a_bounds_fix():
    # an ablation's fix to bounds="public" gets the setting's bounds (the one public-bounds rule)
    d_out, _ = attack_data("querybased")
    s = AuditSetting("querybased", "turing", channel="fixed_size", iterations=3, extra_overrides={"bounds": "public"})
    assert s.overrides(d_out)["public_bounds"] == worst_case_public_bounds()
