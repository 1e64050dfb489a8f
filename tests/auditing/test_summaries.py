"""Channel decomposition and ablation tables (protocols spec D.9)."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from pategan_audit.auditing.summaries import ablation_table, channel_sentences, channel_table

CEIL = 1.3498  # CP ceiling at 16 test outputs per world (protocols spec F.3: 1.35)


def _rec(attack, impl, channel, eps, *, run_id, variant="as benchmarked", method="clopper_pearson", auc=0.9,
         digest=None):
    return {"attack": attack, "implementation": impl, "channel": channel, "variant": variant, "method": method,
            "epsilon_emp": eps, "auc": auc, "run_id": run_id, "outputs_digest": digest or run_id}


def _records():
    return pd.DataFrame([
        # size channel explains everything
        _rec("querybased", "updated", "paper", CEIL, run_id="u1"),
        _rec("querybased", "updated", "fixed_size", 0.02, run_id="u2"),
        _rec("querybased", "updated", "controlled", 0.05, run_id="u3"),
        # bounds channel: perfect until public bounds
        _rec("querybased", "original", "paper", CEIL, run_id="o1"),
        _rec("querybased", "original", "fixed_size", CEIL, run_id="o2"),
        _rec("querybased", "original", "controlled", 0.0, run_id="o3"),
        # GroundHog: fixed_size is the paper game (same run)
        _rec("groundhog", "borealis", "paper", 0.9, run_id="b1"),
        _rec("groundhog", "borealis", "fixed_size", 0.9, run_id="b1"),
        _rec("groundhog", "borealis", "controlled", 0.3, run_id="b2"),
        _rec("groundhog", "borealis", "paper", 2.0, run_id="b1", method="bayesian"),
    ])


def test_channel_table_decomposes_eps():
    t = channel_table(_records())
    u = t.loc[("querybased", "updated")]
    assert u["size channel"] == pytest.approx(CEIL - 0.02)
    assert u["bounds channel"] == pytest.approx(-0.03) and u["remains"] == 0.05
    # the three terms add up to the paper value
    assert u["size channel"] + u["bounds channel"] + u["remains"] == pytest.approx(u["ε paper"])
    o = t.loc[("querybased", "original")]
    assert o["size channel"] == 0 and o["bounds channel"] == pytest.approx(CEIL)
    b = t.loc[("groundhog", "borealis")]
    assert b["same runs"] == "paper = fixed_size" and b["size channel"] == 0
    assert t.loc[("querybased", "updated"), "same runs"] == ""
    bayes = channel_table(_records(), method="bayesian")
    assert bayes.loc[("groundhog", "borealis"), "ε paper"] == 2.0
    assert math.isnan(bayes.loc[("groundhog", "borealis"), "ε controlled"])
    with pytest.raises(ValueError, match="missing"):
        channel_table(_records().drop(columns=["run_id"]))


def test_channel_sentences_name_each_channel():
    t = channel_table(_records())
    s = dict(zip(t.index, channel_sentences(t, ceiling=CEIL)))
    assert "size channel accounts for 1.33" in s[("querybased", "updated")]
    assert "bounds channel accounts for nothing measurable" in s[("querybased", "updated")]
    assert "left the attack perfect" in s[("querybased", "original")]  # both at the ceiling: share unknown
    assert "bounds channel accounts for 1.35" in s[("querybased", "original")]
    assert "Same runs: paper = fixed_size" in s[("groundhog", "borealis")]
    # a profile whose ceiling is 0 cannot show a perfect attack: no "(ceiling)" marks
    assert not any("ceiling" in x or "perfect" in x for x in channel_sentences(t, ceiling=0.0))


def test_ablation_table_marks_identical_outputs_and_shared_runs():
    recs = pd.DataFrame([
        _rec("querybased", "synthcity", "fixed_size", 1.2, run_id="s0", digest="d0"),
        _rec("querybased", "synthcity", "fixed_size", 1.2, run_id="s1", digest="d0", variant="V7 fixed"),
        _rec("querybased", "synthcity", "fixed_size", 0.4, run_id="s2", digest="d2", variant="V12 fixed"),
        _rec("querybased", "synthcity", "fixed_size", 0.1, run_id="s3", digest="d3", variant="all fixed"),
    ])
    main = pd.DataFrame([_rec("querybased", "synthcity", "controlled", 0.4, run_id="s2")])
    t = ablation_table(recs, channel_records=main)
    assert t.loc[("querybased", "synthcity", "V7 fixed"), "outputs"] == "identical outputs"
    assert t.loc[("querybased", "synthcity", "V12 fixed"), "outputs"] == "changed; = controlled channel (same run)"
    assert t.loc[("querybased", "synthcity", "all fixed"), "Δε vs as benchmarked"] == pytest.approx(-1.1)
    assert t.loc[("querybased", "synthcity", "as benchmarked"), "outputs"] == ""
    with pytest.raises(ValueError, match="outputs_digest"):
        ablation_table(recs.drop(columns=["outputs_digest"]))
