"""pategan_audit.pages.auditing.ablation: the violation ablation and why variants coincide."""
import pandas as pd

from pategan_audit.auditing import ablation_settings, ablation_table
from pategan_audit.pages.auditing import ablation
from pategan_audit.pages.blocks import SaveFigure, SaveTable, ShowFigure, ShowTable, Text

from .conftest import fake_records, make_page


def _ablation_records(page):
    settings = ablation_settings(page.profile, implementations=["updated"], attacks=["querybased"], target=397)
    records = fake_records(settings)
    base = records["variant"] == "as benchmarked"
    records.loc[records["variant"] == "V11 fixed", "outputs_digest"] = records.loc[base, "outputs_digest"].iloc[0]
    return settings, records


def test_ablation_runs_the_profiles_presets(page, monkeypatch):
    settings, records = _ablation_records(page)
    monkeypatch.setattr(ablation, "run_settings", lambda s, profile, **kw: records)
    out = ablation.ablation(page)
    assert [type(b) for b in out] == [SaveTable, SaveTable, ShowTable, Text, SaveFigure, Text, ShowFigure]
    noops = ablation.noop_text(page, ["querybased"], ["updated"])
    assert out[5].markdown == f"Left out because the benchmark already runs them fixed (harness defaults): {noops}."
    view = out[1].frame
    assert list(view.columns[:3]) == ["channel", "ε_emp CP", "ε_emp Bayesian"]
    assert out[3].markdown.startswith("Ablation table (profile `smoke`; Ablation, querybased in the fixed_size channel;")
    assert page.ablation is records and [s.variant for s in page.ablation_settings] == [s.variant for s in settings]
    assert page.ablation_cp.loc[("querybased", "updated", "V11 fixed"), "outputs"] == "identical outputs"


def test_no_ablation_when_switched_off(tmp_path):
    page = make_page(tmp_path, run_ablation=False)
    assert ablation.ablation(page) == [] and ablation.coincidences(page) == []


def test_coincidence_notes_give_the_checked_reason(page):
    settings, records = _ablation_records(page)
    page.ablation_settings = settings
    table = ablation_table(records, channel_records=page.records)
    page.still["updated"] = True  # as the released-rows check found it
    notes = ablation.coincidence_notes(page, table)
    assert len(notes) == 1 and notes[0].startswith("* updated, querybased, V11 fixed: as benchmarked, updated's released")
    assert notes[0].endswith(f"; and {ablation.BOUNDS_REASON}.")


def test_overrides_of_finds_the_variant(page):
    settings, _ = _ablation_records(page)
    page.ablation_settings = settings
    key = ("querybased", "updated", "V11 fixed")
    assert ablation.overrides_of(page, key) == next(s.extra_overrides for s in settings if s.variant == "V11 fixed")


def test_coincidences_without_identical_outputs(page):
    page.ablation_cp = pd.DataFrame({"outputs": ["changed"], "channel": ["fixed_size"]},
                                    index=pd.MultiIndex.from_tuples([("querybased", "updated", "V4 fixed")]))
    (text,) = ablation.coincidences(page)
    assert text.markdown == "No variant coincides with its preset as benchmarked."
