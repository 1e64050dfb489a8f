"""The "PATE-GAN, done right?" page's library calls (pategan_audit.pages.done_right)."""
from __future__ import annotations

import pandas as pd
import pytest

from pategan_audit import archive
from pategan_audit.pages import done_right


def test_analysis_table_reports_the_release_beside_the_data_independent_bound():
    table = done_right.analysis_table(seed=0, max_iter=2)
    ind, dep = table.loc["data_independent"], table.loc["data_dependent"]
    assert ind["iterations"] == dep["iterations"] == 2 and ind["queries"] == dep["queries"]  # the same run
    assert ind["guarantee"] == "data_independent" and dep["guarantee"] == "released"
    assert ind["reported ε̂ (published)"] == ind["worst case over datasets"] <= 1.0
    assert 0 <= dep["answered"] <= dep["queries"]
    assert dep["worst case over datasets"] > ind["reported ε̂ (published)"]  # the release costs something
    assert "eps_data_dependent" not in table.columns  # the private value is not on the page


def test_audit_table_is_none_until_the_gnmax_archive_exists(tmp_path):
    assert done_right.audit_table(directory=tmp_path) is None
    rows = [{"implementation": impl, "attack": "querybased", "channel": "paper", "method": m, "epsilon_emp": e, "auc": a}
            for impl, e, a in (("gnmax", 0.1, 0.52), ("corrected", 3.9, 0.97)) for m in ("clopper_pearson", "bayesian")]
    for impl in ("gnmax", "corrected"):
        archive.write_archive(f"audit_{impl}_large", pd.DataFrame([r for r in rows if r["implementation"] == impl]),
                              {"profile": "smoke", "runs": "test"}, directory=tmp_path)
    table = done_right.audit_table(directory=tmp_path)
    assert table.loc[("querybased", "paper"), ("epsilon_emp", "gnmax")] == pytest.approx(0.1)
    assert table.loc[("querybased", "paper"), ("auc", "corrected")] == pytest.approx(0.97)
