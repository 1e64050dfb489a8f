"""The paper-scale audit as verdicts (auditing.verdicts): records from the archives, spreads,
the channel decomposition and the verdict per implementation."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from pategan_audit.archive import write_archive
from pategan_audit.auditing import verdicts as V
from pategan_audit.reference import audit_reference

from ..test_scorecard import _audit_record


def _write(tmp_path, name, rows):
    write_archive(name, pd.DataFrame(rows), {"profile": "large", "complete": True}, directory=tmp_path)


def test_interval_is_a_point_for_a_perfect_attack_and_wide_for_a_noisy_one():
    perfect = pd.Series(_audit_record("x", "clopper_pearson", "paper", 0, 0))
    lo, hi = V.eps_interval(perfect)
    assert lo == hi == pytest.approx(perfect["epsilon_emp"])
    noisy = pd.Series(_audit_record("x", "clopper_pearson", "paper", 60, 90))
    lo, hi = V.eps_interval(noisy)
    assert lo < noisy["epsilon_emp"] < hi and hi - lo > 0.1


def test_records_relabel_superseded_corrected_and_repeat_groundhog_as_fixed_size(tmp_path):
    _write(tmp_path, "audit_querybased_large", [_audit_record("corrected", "clopper_pearson", "paper", 10, 10),
                                                _audit_record("updated", "clopper_pearson", "paper", 0, 0)])
    _write(tmp_path, "audit_groundhog_large", [_audit_record("corrected", "clopper_pearson", "paper", 200, 200, "groundhog"),
                                               _audit_record("borealis", "clopper_pearson", "paper", 2, 1, "groundhog")])
    _write(tmp_path, "audit_corrected_large", [_audit_record("corrected", "clopper_pearson", "paper", 200, 200)])
    rec = V.paper_scale_records(tmp_path)
    q = rec[rec["attack"] == "querybased"]
    assert set(q["implementation"]) == {"corrected", "updated"}  # the old querybased corrected row is superseded
    assert (q.loc[q["implementation"] == "corrected", "archive"] == "audit_corrected_large").all()
    g = rec[rec["attack"] == "groundhog"]
    assert V.OLD_CORRECTED in set(g["implementation"])  # no new groundhog run yet: kept, labelled
    assert set(g.loc[g["implementation"] == "borealis", "channel"]) == {"paper", "fixed_size"}


def test_figure5_table_decomposes_the_channels_and_judges_reproduction():
    rows = [_audit_record("updated", "clopper_pearson", "paper", 0, 0),  # at the ceiling (paper: 2.18)
            _audit_record("updated", "clopper_pearson", "fixed_size", 0, 0),
            _audit_record("updated", "clopper_pearson", "controlled", 200, 200),
            _audit_record("smartnoise", "clopper_pearson", "paper", 0, 0),
            _audit_record("smartnoise", "clopper_pearson", "fixed_size", 0, 0),
            _audit_record("smartnoise", "clopper_pearson", "controlled", 0, 0)]
    rec = pd.DataFrame(rows).assign(archive_complete=True)
    table = V.figure5_table(rec, audit_reference())
    up = table.loc[("querybased", "updated")]
    assert up["verdict"] == "differs" and up["size channel"] == pytest.approx(0.0)
    assert up["bounds channel"] == pytest.approx(up["ε_emp same size"] - up["ε_emp controlled"])
    assert table.loc[("querybased", "smartnoise"), "verdict"] == "reproduced"
    verdicts = V.implementation_verdicts(table)
    assert verdicts.loc["updated", "black-box verdict"] == "side channels only"
    assert verdicts.loc["smartnoise", "black-box verdict"] == "leaks beyond ε with both side channels closed"
    assert "groundhog" in verdicts.loc["smartnoise", "attacks missing"]


def test_no_violation_when_every_channel_is_within_epsilon():
    rows = [_audit_record("corrected", "clopper_pearson", c, 200, 200) for c in ("paper", "fixed_size", "controlled")]
    table = V.figure5_table(pd.DataFrame(rows).assign(archive_complete=True), audit_reference())
    assert table.loc[("querybased", "corrected"), "verdict"] == "no paper value"
    v = V.implementation_verdicts(table).loc["corrected"]
    assert v["black-box verdict"] == "no violation detected" and math.isclose(v["max ε_emp, both closed"], 0.0)


def test_corrected_table_flags_what_exceeds_epsilon():
    rows = [_audit_record("corrected", "clopper_pearson", "paper", 0, 0),
            _audit_record("corrected", "clopper_pearson", "controlled", 200, 200),
            _audit_record("updated", "clopper_pearson", "paper", 0, 0)]
    t = V.corrected_table(pd.DataFrame(rows)).set_index("channel")
    assert list(t.index) == ["controlled", "paper"]
    assert t.loc["paper", "exceeds ε"] and not t.loc["controlled", "exceeds ε"]
    assert t.loc["controlled", "test counts (FP, TN, FN, TP)"] == (200, 200, 200, 200)


def test_provenance_table_lists_every_archive_and_says_which_are_missing(tmp_path):
    _write(tmp_path, "audit_groundhog_large", [_audit_record("borealis", "clopper_pearson", "paper", 2, 1, "groundhog")])
    t = V.provenance_table(tmp_path)
    assert list(t.index) == list(V.AUDIT_ARCHIVES)
    assert t.loc["audit_querybased_large", "settings"] == "not computed"
    assert bool(t.loc["audit_groundhog_large", "complete"]) and not bool(t.loc["audit_groundhog_large", "same code as this build"])
