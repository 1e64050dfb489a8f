"""pategan_audit.pages.utility.mnist_large: Figure 10 from the MNIST archive."""
import numpy as np
import pandas as pd
import pytest

from pategan_audit.archive import Archive
from pategan_audit.classifiers import MULTICLASS_CLASSIFIERS
from pategan_audit.pages.blocks import Figure, SaveTable, Text
from pategan_audit.pages.utility import mnist_large


def _records(implementation, epsilon, scores, *, status="ok"):
    """One cell: one model, tables t with LR/RF AUROC ``scores[t]`` (NaN: not trained)."""
    return pd.DataFrame([{"cell": f"{implementation}/{epsilon}", "dataset": "mnist", "implementation": implementation,
                          "epsilon": epsilon, "num_teachers": 6, "variant": "default", "model": 0, "table": t,
                          "classifier": c, "auroc": s + (0.1 if c == "RandomForest" else 0.0), "auprc": 0.2,
                          "status": status, "iterations": 400, "max_iter": 500}
                         for t, s in enumerate(scores) for c in MULTICLASS_CLASSIFIERS])


def _archive(records, **meta):
    return Archive("utility_mnist_large", records, {"profile": "large", **meta})


def test_values_are_the_best_of_n_mean_of_lr_and_rf_per_preset_and_epsilon():
    real = _records("real", np.nan, [0.9])
    rec = pd.concat([real, _records("corrected", 0.01, [np.nan, np.nan], status="not_trained"),
                     _records("corrected", 1.0, [0.5, 0.7]), _records("smartnoise", 1.0, [0.6, 0.55])],
                    ignore_index=True)
    values, setting_a = mnist_large.figure10_values(rec)
    assert list(values.index) == ["corrected", "smartnoise"]
    # best of two tables per classifier (LR 0.7, RF 0.8), then their mean
    assert values.loc["corrected", 1.0] == pytest.approx(0.75) and values.loc["smartnoise", 1.0] == pytest.approx(0.65)
    assert np.isnan(values.loc["corrected", 0.01])  # every model refused: no point, not a zero
    assert setting_a == 0.95


def test_page_draws_the_figure_states_the_scale_and_the_progress():
    rec = pd.concat([_records("real", np.nan, [0.9]), _records("corrected", 1.0, [0.5, 0.7])], ignore_index=True)
    blocks = mnist_large.figure10_large(_archive(rec, complete=False, settings_done=2, cells=list(range(57))))
    assert isinstance(blocks[0], Figure)
    (save,) = [b for b in blocks if isinstance(b, SaveTable)]
    assert save.name == "figure10_large_values" and save.frame.loc["corrected", 1.0] == pytest.approx(0.75)
    assert "2 of 57 cells done" in blocks[-1].markdown and "no scorecard rows" in blocks[-1].markdown
    assert "0.9500 on the same rows" in blocks[-1].markdown
    assert "ε ended every training" in blocks[-1].markdown  # 400 iterations under the cap of 500


def test_caption_names_the_points_the_iteration_cap_holds():
    rec = pd.concat([_records("real", np.nan, [0.9]), _records("smartnoise", 5.0, [0.5, 0.7]),
                     _records("smartnoise", 10.0, [0.5, 0.7])], ignore_index=True)
    rec["iterations"], rec["max_iter"] = 500, 500
    blocks = mnist_large.figure10_large(_archive(rec, complete=True))
    assert "ε = 5: smartnoise; ε = 10: smartnoise" in blocks[-1].markdown


def test_without_preset_cells_the_page_says_so():
    (note,) = mnist_large.figure10_large(_archive(_records("real", np.nan, [0.9]), complete=False, settings_done=1,
                                                  cells=list(range(57))))
    assert isinstance(note, Text) and "no finished preset cell" in note.markdown
