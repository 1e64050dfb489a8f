"""pategan_audit.pages.utility.context: the page's experiment groups and its settings table."""

from pategan_audit import runner
from pategan_audit.pages import blocks
from pategan_audit.pages.utility import page_cells, settings
from pategan_audit.utility.profiles import MAIN_EPSILON, get_profile

from .conftest import IMPLEMENTATIONS, make_page


def test_page_cells_follow_the_requested_datasets():
    cells = page_cells(get_profile("smoke"), datasets=("epileptic_seizure", "cervical_cancer"),
                       implementations=IMPLEMENTATIONS, epsilon=2.0, seed=3)
    assert [c.dataset for c in cells["main"]][:: len(IMPLEMENTATIONS)] == ["cervical_cancer", "epileptic_seizure"]
    assert {c.epsilon for c in cells["main"]} == {2.0} and {c.epsilon for c in cells["main_eps1"]} == {MAIN_EPSILON}
    assert "corrected" not in {c.implementation for c in cells["main_eps1"] + cells["hyperparameters"]}
    assert cells["sweep_credit"] == [] and cells["sweep_epileptic"]
    assert {c.seed for group in cells.values() for c in group} == {3}


def test_page_cells_without_epileptic_skip_its_sweeps():
    cells = page_cells(get_profile("smoke"), datasets=("cervical_cancer",), implementations=IMPLEMENTATIONS,
                       epsilon=1.0, seed=0)
    assert cells["sweep_epileptic"] == [] and cells["teachers"] == []
    assert {c.dataset for c in cells["main"]} == {"cervical_cancer"}


def test_settings_lists_every_knob(tmp_path):
    page = make_page(tmp_path)
    save, show = settings(page)
    assert isinstance(save, blocks.SaveTable) and save.name == "settings" and show.frame is save.frame
    values = save.frame["value"]
    assert values["profile"].startswith("smoke: ")
    assert values["datasets"] == "cervical_cancer, epileptic_seizure"
    distinct = {c for group in page.cells.values() for c in group}
    assert values["distinct cells / generator trainings"].startswith(f"{len(distinct)} / ")
    assert values["wall time of this run (s, cached cells are read back)"] == "1.2"


def test_at_main_epsilon(tmp_path):
    assert make_page(tmp_path).at_main_epsilon
    assert not make_page(tmp_path, eps=2.0).at_main_epsilon


def test_page_modules_do_not_enter_the_source_hash():
    assert runner.computes_nothing("pages/utility/table4.py")
    assert runner.computes_nothing("pages/plotting/utility.py")
    assert not runner.computes_nothing("utility/run.py")
    assert not runner.computes_nothing("utility/pages.py")
