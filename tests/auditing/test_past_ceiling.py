"""The audits past the ceiling read back (pategan_audit.auditing.past_ceiling), on small archives
written into a temp folder: the table sets the 1,000-per-world value beside the larger game's, says
whether the attack is the archived one, whether the new game is still perfect, and which fix of
the ablation closes the channel."""
from __future__ import annotations

import pandas as pd
import pytest

from pategan_audit import archive
from pategan_audit.auditing import past_ceiling as P
from pategan_audit.auditing.bounds import perfect_attack_ceiling


def _rows(impl, channel, eps_cp, *, n_test, auc=1.0, threshold=0.5, variant="as benchmarked", attack="querybased"):
    base = {"attack": attack, "implementation": impl, "channel": channel, "variant": variant, "n_test": n_test,
            "alpha": 0.1, "delta": 1e-5, "auc": auc, "gdp_mu_lo": 3.0, "gdp_epsilon_lo": 12.0, "gdp_epsilon_ceiling": 30.0, "train_seconds": 10.0,
            "threshold": threshold, "direction": "s", "valid_FP": 0, "valid_TN": 200, "valid_FN": 0, "valid_TP": 200,
            "test_FP": 0, "test_TN": n_test, "test_FN": 0, "test_TP": n_test}
    return [{**base, "method": "clopper_pearson", "epsilon_emp": eps_cp},
            {**base, "method": "bayesian", "epsilon_emp": eps_cp + 1.0}]


@pytest.fixture()
def store(tmp_path):
    c400, c10k = perfect_attack_ceiling(n_per_world=400), perfect_attack_ceiling(n_per_world=10_000)
    after = pd.DataFrame(_rows("original", "fixed_size", 6.1, n_test=10_000, auc=0.95)
                         + _rows("turing", "fixed_size", c10k, n_test=10_000)
                         + _rows("synthcity", "controlled", c10k, n_test=10_000, threshold=0.7))
    settings = [{"implementation": i, "channel": c} for i, c in archive.PAST_CEILING_CELLS["querybased"]]
    archive.write_archive("audit_past_ceiling_querybased", after,
                          {"profile": "ceiling10k", "complete": False, "settings_done": 3, "settings": settings,
                           "core_seconds": 9000.0},
                          directory=tmp_path)
    before = pd.DataFrame(_rows("original", "fixed_size", 4.55, n_test=400, auc=0.95)
                          + _rows("turing", "fixed_size", c400, n_test=400))
    archive.write_archive("audit_querybased_fixed_size_large", before, {"profile": "large"}, directory=tmp_path)
    controlled = pd.DataFrame(_rows("synthcity", "controlled", c400, n_test=400, threshold=0.6))
    archive.write_archive("audit_querybased_controlled_large", controlled, {"profile": "large"}, directory=tmp_path)
    ablation = pd.DataFrame(
        _rows("original", "fixed_size", 4.55, n_test=400) + _rows("original", "fixed_size", 0.0, n_test=400, variant="V10 fixed")
        + _rows("original", "fixed_size", 4.55, n_test=400, variant="V3 fixed")
        + _rows("original", "fixed_size", 0.0, n_test=400, variant="all fixed")
        + _rows("turing", "fixed_size", c400, n_test=400) + _rows("turing", "fixed_size", c400, n_test=400, variant="V6 fixed")
        + _rows("turing", "fixed_size", c400, n_test=400, variant="all fixed"))
    archive.write_archive("audit_ablation_querybased_large", ablation, {"profile": "large"}, directory=tmp_path)
    return tmp_path


def test_table_sets_each_cell_beside_its_paper_scale_value(store):
    t = P.past_ceiling_table(store).set_index(["implementation", "channel"])
    assert list(t.index) == [("original", "fixed_size"), ("turing", "fixed_size"), ("synthcity", "controlled")]
    o = t.loc[("original", "fixed_size")]
    assert o["ε_emp before"] == 4.55 and o["ε_emp"] == 6.1 and o["test outputs"] == 10_000
    assert o["ceiling"] == pytest.approx(7.905, abs=1e-3) and o["ceiling before"] == pytest.approx(4.682, abs=1e-3)
    assert o["status"] == "below the ceiling" and t.loc[("turing", "fixed_size"), "status"] == "at the new ceiling"
    assert o["Bayesian"] == pytest.approx(7.1) and o["GDP ε if Gaussian"] == 12.0 and o["GDP ε ceiling"] == 30.0


def test_same_attack_is_read_from_threshold_and_validation_counts(store):
    t = P.past_ceiling_table(store).set_index("implementation")
    assert bool(t.loc["original", "same attack"]) and bool(t.loc["turing", "same attack"])
    assert not bool(t.loc["synthcity", "same attack"])  # thresholds 0.7 against the archived 0.6


def test_what_opens_the_channel_comes_from_the_ablation_in_that_channel(store):
    t = P.past_ceiling_table(store).set_index("implementation")
    assert t.loc["original", "opened by"] == "closed by fixing V10 alone"
    assert t.loc["turing", "opened by"].startswith("no single fix closes it; all fixed: 4.68")
    assert t.loc["synthcity", "opened by"] == "the ablation ran in the fixed_size channel only"


def test_sentences_say_leaks_at_least_and_whether_the_attack_is_still_perfect(store):
    s = P.leak_sentences(P.past_ceiling_table(store))
    assert s[0].startswith("**original** leaks at least **6.10**") and "below the new ceiling 7.90, 0 of 20,000" in s[0]
    assert "still perfect on 10,000 test outputs per world" in s[1] and "closed by" not in s[1]
    assert "a new attack" in s[2] and "a new attack" not in s[0]  # synthcity's threshold differs from the archived


def test_two_channels_with_the_same_outputs_are_one_measurement(tmp_path):
    """synthcity's controlled channel produced exactly the fixed-size channel's outputs (the archived
    runs share one outputs_digest): the second row says so, and its sentence does not count it again."""
    c10k = perfect_attack_ceiling(n_per_world=10_000)
    rows = (_rows("synthcity", "fixed_size", c10k, n_test=10_000) + _rows("synthcity", "controlled", c10k, n_test=10_000)
            + _rows("original", "fixed_size", 6.1, n_test=10_000))
    digests = ["aa", "aa", "aa", "aa", "bb", "bb"]
    archive.write_archive("audit_past_ceiling_querybased", pd.DataFrame(rows).assign(outputs_digest=digests),
                          {"profile": "ceiling10k", "complete": True}, directory=tmp_path)
    t = P.past_ceiling_table(tmp_path).set_index(["implementation", "channel"])
    assert t.loc[("synthcity", "controlled"), "same outputs as"] == "synthcity fixed_size"
    assert t["same outputs as"].isna().sum() == 2  # the first of the pair and original: their own outputs
    s = P.leak_sentences(P.past_ceiling_table(tmp_path))
    assert "the very outputs of synthcity fixed_size" in s[1] and "the very outputs" not in s[0] + s[2]


def test_no_archive_gives_an_empty_table(tmp_path):
    assert P.past_ceiling_table(tmp_path).empty


def test_page_shows_the_figure_table_and_says_which_archive_has_not_run(store):
    import types

    from pategan_audit.pages.auditing.past_ceiling import past_ceiling
    from pategan_audit.pages.blocks import ShowFigure, ShowTable, Text

    blocks = past_ceiling(types.SimpleNamespace(eps=1.0), directory=store)
    texts = [b.markdown for b in blocks if isinstance(b, Text)]
    assert any("`audit_past_ceiling_groundhog` has not run yet" in t for t in texts)
    assert not any("audit_past_ceiling_querybased` has not run" in t for t in texts)
    assert any("`audit_past_ceiling_querybased` is partial (3 of 5 settings; not yet run: smartnoise fixed_size, "
               "synthcity fixed_size; 2.5 core-hours recorded so far)" in t for t in texts)
    assert any("`audit_past_ceiling_groundhog` has not run yet (estimated at" in t for t in texts)
    assert any(isinstance(b, ShowTable) for b in blocks) and isinstance(blocks[-1], ShowFigure)
    fig = blocks[-1].figure
    assert [ax.get_title() for ax in fig.axes] == ["(a) Querybased, worst-case dataset"]


def test_the_implementation_verdict_names_the_largest_leak_measured_past_the_ceiling(store):
    from pategan_audit.auditing.verdicts import implementation_verdicts

    idx = pd.MultiIndex.from_tuples([("original", "querybased"), ("turing", "querybased")],
                                    names=["implementation", "attack"])
    fig5 = pd.DataFrame({"ε_emp ours": [4.68, 4.68], "ε_emp same size": [4.55, 4.68], "ε_emp controlled": [0.0, 0.0]},
                        index=idx)
    v = implementation_verdicts(fig5, past=P.past_ceiling_table(store))
    assert v.loc["original", "leaks at least (past the ceiling)"] == (
        "6.10 in querybased fixed_size (10,000 test outputs per world, below its ceiling 7.90)")
    assert "still perfect: at its ceiling 7.90" in v.loc["turing", "leaks at least (past the ceiling)"]
    assert "leaks at least (past the ceiling)" not in implementation_verdicts(fig5).columns
    assert implementation_verdicts(fig5.rename(index={"turing": "borealis"}), past=P.past_ceiling_table(store)).loc[
        "borealis", "leaks at least (past the ceiling)"] == "—"


def test_test_errors_follow_the_direction_the_attack_chose():
    """In direction 1-s, "in" is the low side: the errors are TN + TP of the s-oriented counts."""
    assert P._errors({"direction": "1-s", "test_FP": 10_000, "test_TN": 0, "test_FN": 9_999, "test_TP": 1}) == 1
    assert P._errors({"direction": "s", "test_FP": 0, "test_TN": 10_000, "test_FN": 971, "test_TP": 9_029}) == 971


def test_the_same_attack_read_from_its_other_direction_is_the_same_attack():
    """turing, Querybased fixed_size: at 1,000 per world direction s (threshold 0.86, validation
    FP 0, TN 200, FN 1, TP 199) won by a rounding tie; on 10,000 test outputs the other direction
    1-s (threshold 1.0) bounds higher and is recorded with the mirrored validation counts."""
    before = {"threshold": 0.86, "direction": "s", "valid_FP": 0, "valid_TN": 200, "valid_FN": 1, "valid_TP": 199}
    after = {"threshold": 1.0, "direction": "1-s", "valid_FP": 200, "valid_TN": 0, "valid_FN": 199, "valid_TP": 1}
    assert P.same_attack(before, after) and P.same_attack(after, after)
    assert not P.same_attack(before, {**after, "valid_FN": 198, "valid_TP": 2})  # another validation outcome
    assert not P.same_attack(before, {**after, "direction": "s"})  # same direction, other counts


def test_the_sentence_says_when_the_other_direction_was_read(store):
    after = P.past_ceiling_table(store)
    after.loc[after["implementation"] == "turing", "direction"] = "1-s"
    s = P.leak_sentences(after)
    assert "the same attack, read from its other direction (1-s), which bounds higher on 10,000 test outputs" in s[1]
    assert "other direction" not in s[0] and "a new attack" not in s[1]
