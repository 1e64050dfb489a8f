"""A utility page over fabricated results: every builder of ``pategan_audit.pages.utility`` can
be exercised in milliseconds, without training a model."""
from __future__ import annotations

import zlib

import numpy as np
import pandas as pd
import pytest

from pategan_audit.classifiers import MAJORITY
from pategan_audit.pages.report import Section
from pategan_audit.utility.cells import SettingACell, UtilityCell
from pategan_audit.pages.utility import UtilityPage, page_cells
from pategan_audit.utility.profiles import get_profile
from pategan_audit.utility.run import COLUMNS, cell_id

IMPLEMENTATIONS = ("original", "updated", "synthcity", "turing", "borealis", "smartnoise", "corrected")


def fake_rows(cell) -> list[dict]:
    """Tidy rows shaped like ``run_cell``'s, with scores drawn from a stream seeded by the cell."""
    rng = np.random.default_rng(zlib.crc32(cell_id(cell).encode()))
    base = {c: None for c in COLUMNS} | {"cell": cell_id(cell), "dataset": cell.dataset, "n_train": 100,
                                         "subsample": cell.subsample, "seed": cell.seed}
    if isinstance(cell, SettingACell):
        return [base | {"implementation": "real", "epsilon": np.nan, "num_teachers": np.nan, "variant": "default",
                        "model": -1, "table": -1, "classifier": c, "status": "ok", "single_class": False,
                        "auroc": 0.5 if c == MAJORITY else rng.uniform(0.6, 1.0),
                        "auprc": 0.2 if c == MAJORITY else rng.uniform(0.3, 1.0)} for c in cell.classifiers]
    rows = []
    for m in range(cell.n_models):
        for s in range(cell.n_tables):
            single = bool(rng.random() < 0.2)
            for c in cell.classifiers:
                rows.append(base | {
                    "implementation": cell.implementation, "epsilon": cell.epsilon, "delta": cell.delta,
                    "num_teachers": cell.num_teachers or 2, "variant": cell.variant, "model": m, "table": s,
                    "classifier": c, "status": "ok", "single_class": single, "iterations": 10, "fit_seconds": 1.0,
                    "auroc": rng.uniform(0.4, 0.9), "auprc": rng.uniform(0.1, 0.6), "n_models": cell.n_models,
                    "n_tables": cell.n_tables, "max_iter": cell.max_iter})
    return rows


def make_page(tmp_path, *, eps: float = 1.0, datasets=("cervical_cancer", "epileptic_seizure"),
              implementations=IMPLEMENTATIONS, profile: str = "smoke") -> UtilityPage:
    section = Section("utility", profile=profile, eps=eps, seed=0, results_dir=tmp_path / "results")
    prof = get_profile(profile)
    cells = page_cells(prof, datasets=datasets, implementations=implementations, epsilon=section.eps, seed=0)
    unique = list(dict.fromkeys(c for group in cells.values() for c in group))
    results = pd.DataFrame([row for c in unique for row in fake_rows(c)], columns=COLUMNS)
    return UtilityPage(section=section, profile=prof, requested=tuple(datasets), implementations=tuple(implementations),
                       cells=cells, results=results, elapsed=1.25)


@pytest.fixture
def page(tmp_path):
    return make_page(tmp_path)


__all__ = ["IMPLEMENTATIONS", "UtilityCell", "fake_rows", "make_page"]
