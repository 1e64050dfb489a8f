"""pategan_audit.pages.auditing.context: the page's parameters, profile and captions."""

from pategan_audit import runner
from pategan_audit.pages.auditing import context, profile_summary, start_page
from pategan_audit.pages.report import Section
from pategan_audit.pages.blocks import Print

from .conftest import make_page


def test_start_page_reads_the_parameters(page):
    assert page.profile.name == "smoke" and page.backend is None and page.n_jobs == 2
    kwargs = page.run_kwargs
    assert set(kwargs) == {"seed", "options"} and kwargs["seed"] == 0
    assert (kwargs["options"].n_jobs, kwargs["options"].backend, kwargs["options"].progress) == (2, None, False)
    assert page.ceiling_cp < page.ceiling_bayes


def test_runs_text_names_shadow_models_split_and_caps(page):
    runs = context.runs_text(page.profile)
    assert runs.startswith("5 shadow models per world and setting (2 train / 1 validation / 2 test)")
    assert runs.endswith("; except synthcity 1 on querybased; synthcity 1 on groundhog")
    assert page.caption("Figure 5") == f"Figure 5 (profile `smoke`; {runs}.)"


def test_profile_summary_prints_the_run_and_its_reductions(page):
    first, second = profile_summary(page)
    assert isinstance(first, Print) and first.text.startswith("profile=smoke, eps=1.0, seed=0: 5 shadow models")
    assert second.text.startswith("cost reductions of this profile:\n  - synthcity trains 1 iterations")


def test_timings_set_and_add(tmp_path):
    page = make_page(tmp_path)
    page.time("diagnostics", 0.0)
    first = page.timings["diagnostics"]
    page.time("diagnostics", 0.0, add=True)
    assert page.timings["diagnostics"] > first


def test_the_page_package_is_presentation():
    assert runner.computes_nothing("pages/auditing/figure5.py")
    assert runner.computes_nothing("pages/traces/context.py")
    assert not runner.computes_nothing("auditing/verdicts.py")


def test_a_dask_scheduler_address_connects_a_client_and_switches_to_the_dask_backend(tmp_path, monkeypatch):
    import distributed

    seen = []

    class FakeClient:
        def __init__(self, address):
            seen.append(address)

    monkeypatch.setattr(distributed, "Client", FakeClient)
    sec = Section("auditing", profile="smoke", eps=1.0, seed=0, results_dir=tmp_path)
    page = start_page(sec, implementations=["borealis"], attacks=["querybased"], dask_scheduler="tcp://h:8786")
    assert seen == ["tcp://h:8786"] and page.backend == "dask" and isinstance(page.client, FakeClient)
    local = start_page(sec, implementations=["borealis"], attacks=["querybased"])
    assert local.backend is None and local.client is None
