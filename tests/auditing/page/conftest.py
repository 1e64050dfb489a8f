"""An auditing page over fabricated audit records: every builder of
``pategan_audit.pages.auditing`` can be exercised in milliseconds, without training a model."""
from __future__ import annotations

import zlib

import pandas as pd
import pytest

from pategan_audit.auditing import make_settings
from pategan_audit.auditing.bounds import AttackCounts, eps_lower
from pategan_audit.pages.auditing import AuditPage, start_page
from pategan_audit.auditing.settings import CHANNELS
from pategan_audit.pages.report import Section

IMPLEMENTATIONS = ("original", "updated", "synthcity", "turing", "borealis", "smartnoise", "corrected")
ATTACKS = ("querybased", "groundhog")


def record(attack: str, implementation: str, channel: str, method: str, *, fp: int, fn: int, n: int = 2,
           variant: str = "as benchmarked", run_id: str | None = None, digest: str | None = None, iterations: int = 3,
           train_seconds: float = 1.0, **extra) -> dict:
    """One audit record (the columns of ``run_settings``' output that the page reads)."""
    eps = eps_lower(AttackCounts(FP=fp, TN=n - fp, FN=fn, TP=n - fn), method=method, alpha=0.1, delta=1e-5)
    run_id = run_id or f"{attack}-{implementation}-{channel}-{variant}"
    return {"attack": attack, "implementation": implementation, "channel": channel, "iterations": iterations,
            "variant": variant, "method": method, "epsilon_emp": eps, "auc": 1 - (fp + fn) / (2 * n), "alpha": 0.1,
            "delta": 1e-5, "run_id": run_id, "outputs_digest": digest or run_id, "n_per_world": 5, "n_test": n,
            "test_FP": fp, "test_TN": n - fp, "test_FN": fn, "test_TP": n - fn, "train_seconds": train_seconds,
            "gdp_mu_lo": 0.0, "gdp_epsilon_lo": 0.0, **extra}


def fake_records(settings, *, n: int = 2) -> pd.DataFrame:
    """Records of ``settings`` for both bounds, with error counts drawn from the setting's labels;
    GroundHog's fixed_size runs are its paper runs (the same ``run_id``), as in the audit."""
    rows = []
    for s in settings:
        channel_key = "paper" if s.attack == "groundhog" and s.channel == "fixed_size" else s.channel
        run_id = f"{s.attack}-{s.implementation}-{channel_key}-{s.variant}"
        h = zlib.crc32(run_id.encode())
        for method in ("clopper_pearson", "bayesian"):
            rows.append(record(s.attack, s.implementation, s.channel, method, fp=h % (n + 1), fn=(h // 7) % (n + 1), n=n,
                               variant=s.variant, run_id=run_id, iterations=s.iterations, train_seconds=1.5))
    return pd.DataFrame(rows)


def make_page(tmp_path, *, profile: str = "smoke", implementations=IMPLEMENTATIONS, attacks=ATTACKS,
              run_ablation: bool = True) -> AuditPage:
    section = Section("auditing", profile=profile, eps=1.0, seed=0, results_dir=tmp_path / "results")
    page = start_page(section, implementations=implementations, attacks=attacks, run_ablation=run_ablation)
    page.target = 397
    page.records = fake_records(make_settings(page.profile, attacks=attacks, implementations=implementations,
                                              channels=CHANNELS, target=397))
    return page


@pytest.fixture(autouse=True)
def _close_figures():
    """Builders return open figures (the page shows and closes them); close them after each test."""
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.fixture
def page(tmp_path):
    return make_page(tmp_path)


__all__ = ["ATTACKS", "IMPLEMENTATIONS", "fake_records", "make_page", "record"]
