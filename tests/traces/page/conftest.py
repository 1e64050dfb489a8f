"""A training-traces page over fabricated traces: every builder of ``pategan_audit.pages.traces``
runs in milliseconds, without training a model."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pategan_audit.pages.report import Section
from pategan_audit.pages.traces import TracesPage
from pategan_audit.traces.profiles import LOSS_IMPLEMENTATIONS, MOMENT_ACCOUNTANTS, SEEN_IMPLEMENTATIONS, TABLE_ACCOUNTANTS, get_profile
from pategan_audit.traces.suite import TraceResults

LAMBDAS = (1.0, 0.001)


def fake_results(profile, *, seeds=(0, 1), iterations: int = 4) -> TraceResults:
    rng = np.random.default_rng(0)
    seen = pd.DataFrame([{"implementation": impl, "teacher": t, "only": 0 if impl == "updated" else 130 + t,
                          "shared": 137 if impl == "updated" else t, "seen": 100 + 10 * t, "iterations": 7 + t}
                         for impl in SEEN_IMPLEMENTATIONS for t in range(5)])
    losses = pd.DataFrame([{"implementation": impl, "seed": s, "iteration": i, "teacher": t, "subset": j,
                            "cross_entropy": rng.uniform(0.01, 0.7)}
                           for impl in LOSS_IMPLEMENTATIONS for s in seeds for i in range(1, iterations + 1 - s)
                           for t in range(5) for j in range(5)])
    moments = pd.DataFrame([{"accountant": a, "lam": lam, "iteration": i, "moment": m, "epsilon": 100.0 * lam * i / m}
                            for a in MOMENT_ACCOUNTANTS for lam in LAMBDAS for i in (1, 2) for m in (1, 2)])
    final = pd.DataFrame([{"lam": lam, "accountant": a, "iterations": 2, "queries": 640, "eps_hat": 3.0,
                           "best_moment": 1, "first_moment": 1000.0 * (k + 1) * lam,
                           "model_eps_hat": 3.0 if a == "smartnoise" else np.nan}
                          for lam in LAMBDAS for k, a in enumerate(TABLE_ACCOUNTANTS)])
    knobs = {"profile": profile.name, "loss_seeds": list(seeds), "moment_lambdas": list(LAMBDAS)}
    return TraceResults(seen=seen, losses=losses, streams=[], moments=moments, final=final, settings=knobs)


def make_page(tmp_path, *, profile: str = "smoke", loss_definition: str = "paper") -> TracesPage:
    section = Section("training_traces", profile=profile, eps=1.0, seed=0, results_dir=tmp_path / "results")
    prof = get_profile(profile)
    return TracesPage(section=section, profile=prof, results=fake_results(prof), loss_definition=loss_definition)


@pytest.fixture(autouse=True)
def _close_figures():
    """Builders return open figures (the page shows and closes them); close them after each test."""
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.fixture
def page(tmp_path):
    return make_page(tmp_path)
