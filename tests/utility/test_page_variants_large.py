"""pategan_audit.pages.utility.variants_large: Tables 6, 11 and 12 from the variants archive."""
import numpy as np
import pandas as pd

from pategan_audit.archive import Archive
from pategan_audit.classifiers import CLASSIFIERS
from pategan_audit.pages.blocks import SaveTable, Text
from pategan_audit.pages.utility import variants_large


def _records(variant: str, *, dataset="cervical_cancer", implementation="updated", num_teachers=2, cell="c"):
    return pd.DataFrame([{"cell": cell, "dataset": dataset, "implementation": implementation, "epsilon": 1.0,
                          "num_teachers": num_teachers, "variant": variant, "model": 0, "table": t, "classifier": c,
                          "auroc": 0.6 + 0.1 * t, "auprc": 0.3, "status": "ok"}
                         for t in (0, 1) for c in CLASSIFIERS])


def test_one_table_per_artefact_beside_the_paper_with_the_interval():
    rec = pd.concat([_records("hyperparameters=paper"),
                     _records("default", dataset="epileptic_seizure", num_teachers=184, cell="t")], ignore_index=True)
    blocks = variants_large.variants_large(Archive("utility_variants_large", rec, {"profile": "large", "complete": False,
                                                                                 "settings_done": 2, "cells": list(range(48))}))
    saves = [b for b in blocks if isinstance(b, SaveTable)]
    assert [s.name for s in saves] == ["table11_large", "table12_large"]  # the page's order; no Table 6 cell yet
    t12 = saves[1].frame.loc[("cervical_cancer", "updated P")]
    assert t12["ours (archived)"] == 0.7 and t12["paper"] == 0.6581
    assert t12["90 % low"] <= 0.7 <= t12["90 % high"]
    assert saves[0].frame.loc[("updated", "N/50"), "paper"] == 0.6170
    assert "2 of 48 cells done" in blocks[-1].markdown


def test_without_the_archive_or_its_cells_the_page_says_so():
    empty = Archive("utility_variants_large", _records("default", num_teachers=np.nan).iloc[:0], {"profile": "large"})
    (note,) = variants_large.variants_large(empty)
    assert isinstance(note, Text) and "no finished cell" in note.markdown
