"""pategan_audit.pages.auditing.calibration: the uniform generator at 1,000 shadow models per world
under the paper's attack and the row-count attacker."""
import pytest

from pategan_audit.pages.auditing import calibration


@pytest.fixture(scope="module")
def uniform():
    return calibration.uniform_at_paper_scale(0)  # ~10 s: the uniform generator needs no training


def test_the_row_count_attacker_is_perfect_in_the_paper_game_and_blind_with_equal_sizes(uniform):
    by = uniform.set_index(["attacker", "channel"])
    count = by.loc[("row count", "paper")]
    assert count["auc"] == 1.0 and count["test_FP"] == 0 and count["test_FN"] == 0
    assert count["epsilon_emp"] == pytest.approx(4.6815, abs=5e-5)  # the paper's ceiling at 400 test outputs
    assert by.loc[("row count", "fixed_size"), "epsilon_emp"] == 0.0
    paper_attack = by.loc[("Querybased (paper)", "paper"), "epsilon_emp"]
    assert 0.0 < paper_attack < count["epsilon_emp"]  # the paper's attack reads the size, imperfectly
    assert list(uniform.columns) == calibration.UNIFORM_COLUMNS


def test_note_quotes_both_attackers(uniform):
    note = calibration.uniform_note(uniform)
    assert "ε_emp 4.68 there (0.00 with the same size in both worlds)" in note
    by = uniform.set_index(["attacker", "channel"])
    assert f"ε_emp {by.loc[('Querybased (paper)', 'paper'), 'epsilon_emp']:.2f} in the paper's game" in note
