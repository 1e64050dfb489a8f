"""pategan_audit.pages.auditing.corrected: the corrected PATE-GAN at this profile and archived."""
import pandas as pd

from pategan_audit.auditing.bounds import perfect_attack_ceiling
from pategan_audit.pages.auditing import corrected

from .conftest import make_page, record


def _table(paper_eps_exceeds: bool) -> pd.DataFrame:
    return pd.DataFrame({"attack": ["querybased"] * 2, "channel": ["controlled", "paper"], "ε_emp": [0.2, 2.5],
                         "exceeds ε": [False, paper_eps_exceeds]})


def test_verdict_text_both_channels():
    text = corrected.verdict_text(_table(True), epsilon=1.0, ceiling_cp=0.5, ceiling_bayes=0.9)
    assert "does not exceed ε = 1 (largest bound 0.200 over querybased" in text
    assert "**Paper channel**: ε_emp reaches 2.500 on querybased" in text
    assert corrected.verdict_text(_table(False), epsilon=1.0, ceiling_cp=0.5, ceiling_bayes=0.9).endswith(
        "**Paper channel**: no bound exceeds ε either.")


def test_corrected_at_this_profile_and_from_its_archive(page):
    page.large = pd.DataFrame([record("querybased", "corrected", c, m, fp=2, fn=2, n=400, archive=corrected.ARCHIVE)
                               for c in ("paper", "controlled") for m in ("clopper_pearson", "bayesian")])
    out = corrected.corrected(page)
    assert [b.name for b in out if hasattr(b, "name")] == ["corrected_audit", "corrected_audit_large"]
    assert out[-1].markdown.startswith("**At 1,000 shadow models per world**")
    # the ceiling of the archive's own size (400 test outputs per world), not a number typed in
    ceiling = perfect_attack_ceiling(n_per_world=400, method="clopper_pearson")
    assert f"an attacker that reads only the row count reaches the ceiling, {ceiling:.2f}" in out[-1].markdown
    page.large["n_test"] = 40
    low = perfect_attack_ceiling(n_per_world=40, method="clopper_pearson")
    assert f"reaches the ceiling, {low:.2f}" in corrected.corrected(page)[-1].markdown and f"{low:.2f}" != f"{ceiling:.2f}"


def test_nothing_without_the_preset_or_the_archive(tmp_path):
    page = make_page(tmp_path, implementations=("updated",))
    page.large = pd.DataFrame()
    assert corrected.corrected(page) == []
