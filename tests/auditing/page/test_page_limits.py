"""pategan_audit.pages.auditing.limits: ceilings per profile and the test outputs a bound needs."""
from pategan_audit.auditing import AUDIT_PROFILES
from pategan_audit.pages.auditing import limits
from pategan_audit.pages.blocks import SaveTable, ShowTable


def test_ceilings_per_profile():
    table = limits.ceilings()
    assert list(table.index) == list(AUDIT_PROFILES)
    assert round(table.loc["paper", "ceiling (Clopper-Pearson)"], 2) == 4.68  # the paper's 4.68 at 400 test outputs
    assert (table["ceiling (Bayesian)"] > table["ceiling (Clopper-Pearson)"]).all()


def test_needed_grows_with_the_target_and_the_confidence():
    table = limits.needed()
    assert list(table.index) == list(limits.TARGETS)
    assert table.iloc[:, 0].is_monotonic_increasing
    assert (table["Clopper-Pearson, α = 0.05"] >= table["Clopper-Pearson, α = 0.1"]).all()


def test_profile_limits_writes_and_shows_both(page):
    out = limits.profile_limits(page)
    assert [type(b) for b in out] == [SaveTable, ShowTable, SaveTable, ShowTable]
    assert [b.name for b in out if isinstance(b, SaveTable)] == ["ceilings", "min_test_outputs"]
