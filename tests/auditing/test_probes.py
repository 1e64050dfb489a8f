"""Table 2 from behaviour (auditing/probes.py): the observed table against the paper's ticks, the
violation switches flipping their probes, and ``corrected`` free of the privacy violations."""
from __future__ import annotations

import pandas as pd
import pytest

from pategan_audit.auditing.probes import CATEGORIES, run_probe, table2_observed
from pategan_audit.implementations import violations
from pategan_audit.reference.review import TABLE2_CATEGORIES, table2

SIX = ("original", "updated", "synthcity", "turing", "borealis", "smartnoise")
PRIVACY = TABLE2_CATEGORIES[:7]
# (preset, category) cells where the probe disagrees with the printed tick, with the measured reason.
# The probes fit the presets as benchmarked (the audit harness), which reads turing's and smartnoise's
# bounds from the training data; upstream takes them as input, so the paper counts no Metadata violation
# there. Released borealis draws labels from the exact training class ratios (catalogue finding O5,
# beyond the paper's Table 2).
KNOWN_DISAGREEMENTS: dict[tuple[str, str], str] = {
    ("turing", "metadata"): "harness bounds read from the data; upstream takes them as input",
    ("smartnoise", "metadata"): "harness bounds read from the data; upstream takes them as input or spends DP on them",
    ("borealis", "labels_distribution"): "released conditional sampling follows the training class ratios (O5)",
}
# Cells whose observation depends on the machine's floating point. synthcity/processing: the probe
# table's integer 7 comes back from synthcity's encoder round trip (its Bayesian Gaussian mixture is
# fitted with the machine's BLAS) as exactly 7.0 on some CPUs and just below 7 on others, where the
# decoder's plain astype truncates it to 6 (catalogue finding O8). turing's round trip is plain
# IEEE arithmetic, the same everywhere. The test checks that a firing probe fired through that
# mechanism alone, not which way it went.
PLATFORM_DEPENDENT: dict[tuple[str, str], str] = {
    ("synthcity", "processing"): "integers changed by the encoder round trip (decoded a rounding error below",
}


@pytest.fixture(scope="module")
def observed() -> pd.DataFrame:
    return table2_observed(seed=0)


def test_categories_are_table2_columns():
    assert CATEGORIES == TABLE2_CATEGORIES


def test_observed_table_shape_and_kinds(observed):
    assert len(observed) == 7 * len(CATEGORIES)
    assert set(observed["kind"]) <= {"measured", "fact"}
    assert observed["evidence"].str.len().gt(0).all()
    assert observed["observed"].map(type).eq(bool).all()


def test_observed_equals_paper_table2(observed):
    paper = table2().set_index(["implementation", "category"])["tick"]
    ours = observed.set_index(["implementation", "category"])["observed"]
    diff = [(impl, cat, bool(paper[(impl, cat)]), bool(ours[(impl, cat)]), ours_ev)
            for (impl, cat), ours_ev in observed.set_index(["implementation", "category"])["evidence"].items()
            if impl in SIX and bool(paper[(impl, cat)]) != bool(ours[(impl, cat)])
            and (impl, cat) not in KNOWN_DISAGREEMENTS and (impl, cat) not in PLATFORM_DEPENDENT]
    assert not diff, diff
    evidence = observed.set_index(["implementation", "category"])["evidence"]
    for cell, mechanism in PLATFORM_DEPENDENT.items():
        if bool(ours[cell]) != bool(paper[cell]):  # fired here: only through the platform's rounding
            assert mechanism in evidence[cell] and evidence[cell].startswith("100% of sampled x2"), evidence[cell]
    for impl, cat in KNOWN_DISAGREEMENTS:  # each listed disagreement is still one (else drop it from the list)
        assert bool(paper[(impl, cat)]) != bool(ours[(impl, cat)]), (impl, cat)


def test_corrected_shows_no_privacy_violation(observed):
    rows = observed[(observed["implementation"] == "corrected") & observed["category"].isin(PRIVACY)]
    assert len(rows) == len(PRIVACY)
    assert not rows["observed"].any(), rows[rows["observed"]].to_dict("records")


def test_deterministic_for_a_seed():
    a = run_probe("laplace_noise", "updated", seed=3)
    b = run_probe("laplace_noise", "updated", seed=3)
    assert a == b


def test_bad_input_is_refused_before_fitting():
    with pytest.raises(ValueError, match="category"):
        run_probe("nonsense", "updated")
    with pytest.raises(ValueError, match="preset"):
        run_probe("pate", "nonsense")
    with pytest.raises(ValueError, match="seed"):
        run_probe("pate", "updated", seed=-1)


_COLUMN = {"PATE": "pate", "Data Partition": "data_partition", "Moments Acc.": "moments_accountant",
           "Metadata": "metadata", "Laplace Noise": "laplace_noise", "δ Scale": "delta_scale",
           "Labels Distribution": "labels_distribution", "Teachers": "teachers", "Processing": "processing"}
SWITCHABLE = [(v.id, impl) for v in violations.VIOLATIONS if v.paper_column is not None and v.switchable
              for impl in v.implementations]


@pytest.mark.parametrize("vid, impl", SWITCHABLE, ids=[f"{v}-{i}" for v, i in SWITCHABLE])
def test_fixing_a_violation_flips_its_probe(vid, impl):
    category = _COLUMN[violations.BY_ID[vid].paper_column]
    before = run_probe(category, impl, seed=0)
    after = run_probe(category, impl, seed=0, overrides=violations.fix_overrides(impl, [vid]))
    assert before.observed and not after.observed, (before.evidence, after.evidence)


def test_page_table_marks_disagreements_with_the_paper():
    from pategan_audit.pages.implementations import table2_probed

    fabricated = pd.DataFrame([
        dict(implementation="original", category="pate", observed=True, kind="measured", evidence="e"),
        dict(implementation="original", category="teachers", observed=True, kind="measured", evidence="e"),
        dict(implementation="smartnoise", category="pate", observed=False, kind="measured", evidence="e"),
        dict(implementation="smartnoise", category="teachers", observed=False, kind="measured", evidence="e"),
        dict(implementation="corrected", category="pate", observed=False, kind="measured", evidence="e"),
        dict(implementation="corrected", category="teachers", observed=True, kind="measured", evidence="e"),
    ])
    wide = table2_probed(fabricated)
    assert list(wide.index) == ["original", "smartnoise", "corrected"]
    assert wide.loc["original", "pate"] == "✓"  # printed tick V1
    assert wide.loc["original", "teachers"] == "✓ (paper: -)"
    assert wide.loc["smartnoise", "pate"] == ""
    assert wide.loc["corrected", "teachers"] == "✓"


def test_table_is_deterministic_for_a_seed(observed):
    again = table2_observed(seed=0, presets=("updated", "borealis"))
    first = observed[observed["implementation"].isin(["updated", "borealis"])].reset_index(drop=True)
    pd.testing.assert_frame_equal(again, first)
