"""pategan_audit.pages.utility.table4: Table 4 (AUROC, AUPRC), Table 1 and the DPGAN count."""
import numpy as np
import pandas as pd

from pategan_audit import reference
from pategan_audit.pages import blocks
from pategan_audit.pages.utility import table4
from pategan_audit.utility.tables import dataset_by_implementation

from .conftest import IMPLEMENTATIONS, make_page


def _cards(out):
    return [r for b in out if isinstance(b, blocks.Scorecard) for r in b.rows]


def test_table4_ours_is_the_best_of_n_mean(page):
    save, show, text, *cards = table4.table4(page)
    expected = dataset_by_implementation(page.rows("main"), datasets=page.datasets, implementations=IMPLEMENTATIONS)
    ours = save.frame.xs("ours", axis=1, level=1)
    pd.testing.assert_frame_equal(ours, expected, check_names=False)
    assert save.frame.columns[0] == ("paper49", "[49]") and show.frame is save.frame
    assert "ε = 1," in text.markdown
    assert {r["table"] for r in _cards(cards)} == {"table4", "table4_auprc"}
    assert "corrected" not in {r["column"] for r in _cards(cards)}


def test_table4_scorecard_only_at_the_papers_epsilon(tmp_path):
    out = table4.table4(make_page(tmp_path, eps=2.0))
    assert _cards(out) == [] and "ε = 2," in out[2].markdown


def test_table4_auprc_and_single_class_shares(page):
    save, show, note = table4.table4_auprc(page)
    assert save.name == "table4_auprc"
    shares = table4.single_class_shares(page)
    assert list(shares.index) == list(IMPLEMENTATIONS) and shares.between(0, 1).all()
    assert note.markdown.startswith("Share of synthetic tables") and note.markdown.endswith(".")


def test_table1_rows_and_glue(page):
    out = table4.table1(page)
    frame = out[0].frame
    assert list(frame.index) == ["paper (printed)", "rule on the paper's Table 4", "ours"]
    np.testing.assert_allclose(frame.loc["rule on the paper's Table 4", list(reference.IMPLEMENTATIONS)],
                               frame.loc["paper (printed)", list(reference.IMPLEMENTATIONS)], atol=0.01)
    glue = {b.name: b.text for b in out if isinstance(b, blocks.Glue)}
    assert glue["delta_all_paper"] == "-40.16 %"  # the paper prints 40.15 (§5)
    assert _cards(out) == []  # two of the four datasets: no scorecard


def test_table1_scorecard_with_all_four_datasets(tmp_path):
    out = table4.table1(make_page(tmp_path, datasets=reference.DATASETS))
    assert {r["column"] for r in _cards(out)} <= set(reference.IMPLEMENTATIONS) and _cards(out)


def test_dpgan_count_of_the_papers_table4(tmp_path):
    save, _ = table4.dpgan(make_page(tmp_path, datasets=reference.DATASETS))
    assert save.frame.loc["paper's Table 4"].tolist() == [24, 13]
