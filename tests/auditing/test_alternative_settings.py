"""Audit settings of MST, AIM and PrivBayes (``pategan_audit.auditing.alternative_settings``, issue 41).

The settings' rules run everywhere; the audit itself needs the ``alternatives`` extra (dpmm) and
skips without it (CI has none)."""
from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError

import pytest

from pategan_audit import runner
from pategan_audit.alternatives import AlternativeFactory
from pategan_audit.auditing import alternative_settings as S
from pategan_audit.auditing import audit as A
from pategan_audit.auditing.profiles import get_profile
from tests._dpmm import has_dpmm


def test_settings_are_controlled_with_public_bounds_querybased_first():
    prof = get_profile("paper")
    settings = S.alternative_settings(prof, n_iters=300)
    assert [(s.attack, s.implementation, s.channel) for s in settings] == [
        ("querybased", "mst", "controlled"), ("querybased", "aim", "controlled"),
        ("groundhog", "mst", "controlled"), ("groundhog", "aim", "controlled")]
    qb, gh = settings[0], settings[2]
    factory = qb.factory(qb.data()[0])
    assert isinstance(factory, AlternativeFactory)
    assert factory.domain == (("A", (0.0, 1.0)), ("B", (0.0, 1.0)), ("C", (0.0, 1.0))) and factory.bins == 2
    assert factory.model_kwargs == (("n_iters", 300),) and factory.epsilon == 1.0 and factory.delta == 1e-5
    d_out = gh.data()[0]
    assert dict(gh.factory(d_out).domain) == {c: (float(lo), float(hi)) for c, (lo, hi) in gh.public_bounds(d_out).items()}
    assert gh.factory(d_out).bins == 8 and gh.n_synth_rows(*gh.data()) == 686
    key = qb.key()
    assert key["iterations"] is None and key["n_iters"] == 300 and key["variant"] == "n_iters 300"
    assert S.alternative_settings(prof, mechanisms=("priv-bayes",), attacks=("querybased",))[0].factory(
        qb.data()[0]).model_kwargs == ()


@pytest.mark.parametrize("kwargs, match", [
    ({"implementation": "pategan"}, "unknown mechanism"),
    ({"attack": "linkage"}, "unknown attack"),
    ({"channel": "fixed_size"}, "controlled"),
    ({"streams": "counter"}, "streams and extra_overrides"),
    ({"n_iters": 0}, "n_iters"),
    ({"bins": 1}, "bins"),
])
def test_bad_settings_are_refused_with_the_fix(kwargs, match):
    base = {"attack": "querybased", "implementation": "mst", "channel": "controlled"}
    with pytest.raises(ValueError, match=match):
        S.AlternativeSetting(**{**base, **kwargs})


def test_without_dpmm_the_setting_names_the_install_command(monkeypatch):
    def missing(name):
        raise PackageNotFoundError(name)

    from pategan_audit import alternatives

    monkeypatch.setattr(alternatives, "version", missing)
    setting = S.alternative_settings(get_profile("smoke"), mechanisms=("mst",), attacks=("querybased",))[0]
    with pytest.raises(ImportError, match=r"pip install -e '\.\[alternatives\]'"):
        setting.resolve()


@pytest.mark.slow
@pytest.mark.skipif(not has_dpmm(), reason="needs the alternatives extra (dpmm)")
def test_a_smoke_audit_of_privbayes_runs_and_repeats():
    prof = get_profile("smoke")
    settings = S.alternative_settings(prof, mechanisms=("priv-bayes",), attacks=("querybased",), n_iters=50)
    options = runner.RunOptions(n_jobs=1, progress=False)
    first = A.run_settings(settings, prof, options=options, cache_namespace=None)
    again = A.run_settings(settings, prof, options=options, cache_namespace=None)
    assert set(first["implementation"]) == {"priv-bayes"} and set(first["channel"]) == {"controlled"}
    assert (first["n_iters"] == 50).all() and first["iterations"].isna().all()
    assert first["epsilon_emp"].tolist() == again["epsilon_emp"].tolist()  # seeded noise: the same numbers
    assert "dpmm" in sys.modules


def test_the_alternatives_archive_audits_the_three_mechanisms_querybased_controlled_cheapest_first(monkeypatch):
    from pategan_audit.auditing import archives as AR

    ran = []
    monkeypatch.setattr(AR, "run_settings", lambda settings, *a, **kw: ran.extend(settings) or (None, kw["meta_now"]))
    _, meta_now = AR.ARCHIVES["audit_alternatives_large"]("large", 1, None)
    assert [(s.attack, s.implementation, s.channel, s.n_iters) for s in ran] == [
        ("querybased", m, "controlled", AR.ALTERNATIVE_N_ITERS) for m in ("priv-bayes", "aim", "mst")]
    assert "audit_alternatives_large" in AR.RESUMABLE and "audit_alternatives_large" not in AR.ARCHIVE_PROFILES
    import pandas as pd
    meta = meta_now(pd.DataFrame())
    assert meta["settings_done"] == 0 and meta["n_iters"] == 300 and meta["mechanisms"] == ["priv-bayes", "aim", "mst"]
    assert "1,000 shadow models per world" in meta["runs"]
