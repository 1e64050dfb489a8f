"""The marginal mechanisms in the utility benchmark (``utility.run.mechanism_factory`` and the
``utility_alternatives_large`` cells, issue 41 item 2).

The cells and the factory they build run everywhere (no dpmm needed to build them); scoring a
mechanism's cell needs the ``alternatives`` extra and skips without it (CI has none)."""
from __future__ import annotations


import pytest

from pategan_audit.alternatives import AlternativeFactory
from pategan_audit.datasets import load
from pategan_audit.utility import archives as UA
from pategan_audit.utility import run as R
from pategan_audit.utility.cells import UtilityCell
from tests._dpmm import has_dpmm


def test_a_mechanism_cell_gets_the_training_bounds_as_its_domain_and_its_overrides_as_settings():
    data = load("cervical_cancer")
    cell = UtilityCell(dataset="cervical_cancer", implementation="aim", epsilon=0.1, overrides={"n_iters": 300, "bins": 4})
    factory = R._default_factory(cell, None, data)
    assert isinstance(factory, AlternativeFactory) and factory.mechanism == "aim"
    assert factory.epsilon == 0.1 and factory.delta == 1e-5 and factory.bins == 4
    assert dict(factory.domain) == {c: (float(lo), float(hi)) for c, (lo, hi) in data.bounds.items()}
    assert factory.model_kwargs == (("n_iters", 300),)
    default = R.mechanism_factory(UtilityCell(dataset="cervical_cancer", implementation="mst", epsilon=1.0), data)
    assert default.bins == R.MECHANISM_BINS == 8 and default.model_kwargs == ()


def test_the_alternatives_archive_is_every_mechanism_at_three_epsilons_on_four_datasets_cheapest_first():
    cells = UA.alternatives_cells("large")
    assert len(cells) == 3 * 3 * 4
    assert [c.implementation for c in cells[::12]] == ["priv-bayes", "aim", "mst"]  # cheapest mechanism first
    assert [(c.dataset, c.epsilon) for c in cells[:12]] == [
        (d, e) for d in ("cervical_cancer", "credit", "epileptic_seizure", "isolet") for e in (0.1, 1.0, 10.0)]
    assert {(c.n_models, c.n_tables, c.max_iter, c.overrides, c.adaboost) for c in cells} == {
        (2, 2, None, (("n_iters", 300),), "SAMME")}
    assert "utility_alternatives_large" in UA.ARCHIVES and "utility_alternatives_large" in UA.RESUMABLE


def test_a_mechanism_cells_key_names_the_dpmm_version(monkeypatch):
    from pategan_audit import alternatives

    cell = UtilityCell(dataset="cervical_cancer", implementation="mst", epsilon=1.0)
    monkeypatch.setattr(alternatives, "version", lambda name: "9.9.9")
    assert R._key(cell, None, None)["dpmm"] == "9.9.9"
    preset = UtilityCell(dataset="cervical_cancer", implementation="corrected", epsilon=1.0)
    assert "dpmm" not in R._key(preset, None, None)


@pytest.mark.slow
@pytest.mark.skipif(not has_dpmm(), reason="needs the alternatives extra (dpmm)")
def test_a_privbayes_cell_is_scored_with_no_teachers_and_repeats():
    cell = UtilityCell(dataset="cervical_cancer", implementation="priv-bayes", epsilon=1.0, subsample=120,
                       overrides={"n_iters": 20, "bins": 4}, max_iter=None, classifiers=("LogisticRegression",
                                                                                          "DecisionTree"))
    first, again = R.evaluate_cell(cell), R.evaluate_cell(cell)
    assert set(first["status"]) == {"ok"} and first["num_teachers"].isna().all() and len(first) == 2
    assert first["auroc"].tolist() == again["auroc"].tolist()  # seeded noise: the same numbers
    assert (first["fit_seconds"] > 0).all()


def test_the_runs_caption_of_mechanism_cells_names_no_iteration_cap():
    from pategan_audit.utility.tables import runs_text

    text = runs_text(UA.alternatives_cells("large"))
    assert text == "best of n = M models × S tables per number (2 × 2 = 4); 72 generator trainings in total"
    mixed = runs_text([*UA.alternatives_cells("large")[:1], UtilityCell(dataset="credit", implementation="corrected",
                                                                         epsilon=1.0)])
    assert mixed.endswith("; iteration cap 10,000")
