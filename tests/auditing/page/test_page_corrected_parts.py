"""pategan_audit.pages.auditing.corrected: the archived and this-profile parts shown apart (the
page leads with the archive, then this build's reduced profile)."""
import pandas as pd

from pategan_audit.pages.auditing import corrected

from .conftest import make_page, record


def _archive(page) -> None:
    page.large = pd.DataFrame([record("querybased", "corrected", c, m, fp=2, fn=2, n=400, archive=corrected.ARCHIVE)
                               for c in ("paper", "controlled") for m in ("clopper_pearson", "bayesian")])


def _names(blocks) -> list[str]:
    return [b.name for b in blocks if hasattr(b, "name")]


def test_each_part_alone(page):
    _archive(page)
    large, here = corrected.corrected_large(page), corrected.corrected_profile(page)
    assert _names(large) == ["corrected_audit_large"]
    assert large[-1].markdown.startswith("**At 1,000 shadow models per world**")
    assert _names(here) == ["corrected_audit"]
    assert here[-1].markdown.startswith("**Controlled channel**")
    # the two parts are the whole of the combined builder, archive last
    assert _names(corrected.corrected(page)) == _names(here) + _names(large)


def test_a_part_without_its_input_is_empty(tmp_path):
    without_preset = make_page(tmp_path, implementations=("updated",))
    _archive(without_preset)
    assert corrected.corrected_profile(without_preset) == []
    assert _names(corrected.corrected_large(without_preset)) == ["corrected_audit_large"]
    page = make_page(tmp_path)
    page.large = None
    assert corrected.corrected_large(page) == []
    page.large = pd.DataFrame([record("querybased", "updated", "paper", "clopper_pearson", fp=0, fn=0, n=400,
                                      archive="audit_querybased_large")])
    assert corrected.corrected_large(page) == []
    assert _names(corrected.corrected_profile(page)) == ["corrected_audit"]
