"""pategan_audit.pages.utility.per_classifier: Tables 5, 10 (Epileptic), 8, 9 (Credit)."""
import matplotlib.pyplot as plt

from pategan_audit.classifiers import CLASSIFIERS
from pategan_audit.pages import blocks
from pategan_audit.pages.utility import per_classifier

from .conftest import make_page


def test_tables_of_a_dataset_not_run_say_so(page):
    out = per_classifier.per_classifier_tables(page)
    texts = [b.markdown for b in out if isinstance(b, blocks.Text)]
    assert "*Table 8 (credit, AUROC): dataset not run at this profile.*" in texts
    assert "*Table 9 (credit, AUPRC): dataset not run at this profile.*" in texts
    assert [b.name for b in out if isinstance(b, blocks.Figure)] == ["table5_difference", "table10_difference"]
    plt.close("all")


def test_table5_layout_caption_and_scorecard(tmp_path):
    page = make_page(tmp_path)
    save, show, text, figure, card = per_classifier.per_classifier_table(page, "table5", "epileptic_seizure", "auroc")
    assert list(save.frame.index) == [*CLASSIFIERS, "average"]
    assert text.markdown.startswith("**Table 5.** UCI Epileptic Seizure, AUROC") and "Setting A: ours 0." in text.markdown
    assert {r["table"] for r in card.rows} == {"table5"} and "corrected" not in {r["column"] for r in card.rows}
    plt.close(figure.figure)
    out = per_classifier.per_classifier_table(make_page(tmp_path, eps=2.0), "table5", "epileptic_seizure", "auroc")
    assert not any(isinstance(b, blocks.Scorecard) for b in out)
    plt.close("all")
