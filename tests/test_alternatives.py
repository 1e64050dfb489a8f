"""MST, AIM and PrivBayes behind the fit/sample protocol (``pategan_audit.alternatives``).

The missing-extra and bad-input tests run everywhere (CI has no dpmm); the behaviour tests need
the ``alternatives`` extra and skip without it. They fit a four-column slice of Cervical at 4
bins with few inference iterations, so that each fit takes seconds (MST's selection step runs a
fixed 2,500-iteration inference and is marked slow).
"""
from __future__ import annotations

import os
import pickle
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from pategan_audit import runner
from pategan_audit.alternatives import AIM, INSTALL_HINT, MST, AlternativeFactory, DPMMGenerator, PrivBayes

COLUMNS = ["Age", "Smokes", "Smokes_years", "Biopsy"]  # integer (wide range), binary, float, label
FAST = {"n_iters": 50}


def test_importing_the_package_does_not_import_dpmm():
    code = "import sys, pategan_audit, pategan_audit.alternatives; assert 'dpmm' not in sys.modules, 'dpmm imported'"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("cls", [MST, AIM, PrivBayes])
def test_missing_extra_raises_import_error_with_the_install_command(monkeypatch, cls):
    monkeypatch.setitem(sys.modules, "dpmm", None)  # what an environment without the extra sees
    with pytest.raises(ImportError, match=r"pip install -e '\.\[alternatives\]'"):
        cls(epsilon=1.0, domain="dp")
    assert INSTALL_HINT == "pip install -e '.[alternatives]'"


@pytest.mark.parametrize("kwargs, names", [
    ({"epsilon": 0.0}, "epsilon must be a finite number > 0"),
    ({"epsilon": -1.0}, "epsilon must be a finite number > 0"),
    ({"epsilon": float("inf")}, "epsilon must be a finite number > 0"),
    ({"delta": 0.0}, r"delta must be a number in \(0, 1\)"),
    ({"bins": 1}, "bins must be an integer >= 2"),
    ({"bins": 4.0}, "bins must be an integer >= 2"),
    ({"domain": "public"}, "domain must be 'dp' or a mapping"),
    ({"domain": [(0, 1)]}, "domain must be 'dp' or a mapping"),
    ({"domain": {"Age": (5, 1)}}, r"domain\['Age'\] must be a pair \(min, max\)"),
    ({"domain_share": 1.0}, r"domain_share must be in \(0, 1\)"),
    ({"noise": "numpy"}, "noise must be one of"),
    ({"n_jobs": 2}, "noise='seeded' needs n_jobs=1"),
])
def test_bad_input_is_refused_before_anything_runs(monkeypatch, kwargs, names):
    monkeypatch.setitem(sys.modules, "dpmm", None)  # checked before the import, so before any computing
    with pytest.raises(ValueError, match=names):
        MST(**{"epsilon": 1.0, "domain": "dp", **kwargs})


def test_unknown_mechanism_is_refused():
    with pytest.raises(ValueError, match=r"mechanism must be one of \['aim', 'mst', 'priv-bayes'\]"):
        DPMMGenerator("mwem", epsilon=1.0)


def test_factory_describes_itself_and_pickles():
    factory = AlternativeFactory("aim", epsilon=1.0, bins=4, domain=(("Age", (13.0, 79.0)),))
    described = runner.describe_for_cache(factory)
    assert described["class"] == "pategan_audit.alternatives.AlternativeFactory"
    assert described["fields"]["mechanism"] == "aim" and described["fields"]["bins"] == 4
    assert pickle.loads(pickle.dumps(factory)) == factory


# -- behaviour (needs the extra) ------------------------------------------------------------------

@pytest.fixture(scope="module")
def cervical():
    pytest.importorskip("dpmm")
    from pategan_audit.datasets import load

    ds = load("cervical_cancer")
    return ds.train[COLUMNS].reset_index(drop=True), {c: ds.bounds[c] for c in COLUMNS}


MECHANISMS = [pytest.param(PrivBayes, id="privbayes"), pytest.param(AIM, id="aim"),
              pytest.param(MST, id="mst", marks=pytest.mark.slow)]


@pytest.fixture(scope="module", params=MECHANISMS)
def fitted(request, cervical):
    """Three fits of one mechanism on the public bounds: seed 5 twice, seed 6 once."""
    df, bounds = cervical
    make = lambda seed: request.param(epsilon=1.0, seed=seed, bins=4, domain=bounds, model_kwargs=FAST)  # noqa: E731
    return df, bounds, [make(5).fit(df, label="Biopsy"), make(5).fit(df, label="Biopsy"), make(6).fit(df, label="Biopsy")]


def test_sample_has_the_training_columns_dtypes_and_ranges(fitted):
    df, bounds, (model, _, _) = fitted
    synth = model.sample(200, seed=0)
    assert list(synth.columns) == COLUMNS and len(synth) == 200
    assert synth.dtypes.to_dict() == df.dtypes.to_dict()
    for col in COLUMNS:
        lo, hi = bounds[col]
        assert synth[col].between(lo, hi).all(), col
    assert set(synth["Smokes"]) <= {0, 1} and set(synth["Biopsy"]) <= {0, 1}  # discrete stays discrete
    assert synth["Smokes_years"].nunique() > 4  # continuous: values inside the bins, not bin codes


def test_same_seed_same_sample_and_different_seeds_differ(fitted):
    _, _, (a, b, c) = fitted
    pd.testing.assert_frame_equal(a.sample(100, seed=1), b.sample(100, seed=1))
    pd.testing.assert_frame_equal(a.sample(100), b.sample(100))  # seed=None: derived from the model's seed and call
    assert not a.sample(100, seed=1).equals(a.sample(100, seed=2))
    assert not a.sample(100, seed=1).equals(c.sample(100, seed=1))


def test_same_seed_same_sample_in_processes_with_different_hash_seeds(cervical):
    """dpmm iterates over sets of column names; a fit must not depend on PYTHONHASHSEED."""
    code = ("import hashlib; from pategan_audit.datasets import load; from pategan_audit.alternatives import PrivBayes\n"
            f"ds = load('cervical_cancer'); df = ds.train[{COLUMNS!r}]\n"
            f"m = PrivBayes(epsilon=1.0, seed=5, bins=4, domain={{c: ds.bounds[c] for c in df.columns}}, model_kwargs={FAST!r})\n"
            "print(hashlib.sha256(m.fit(df).sample(200, seed=1).to_csv().encode()).hexdigest())")
    digests = set()
    for hash_seed in ("1", "2"):
        done = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": hash_seed})
        assert done.returncode == 0, done.stderr[-2000:]
        digests.add(done.stdout.strip().splitlines()[-1])
    assert len(digests) == 1


@pytest.fixture(scope="module", params=MECHANISMS)
def fitted_eps10(request, cervical):
    """One fit at ε = 10 on the public bounds, where the measurements carry the data's marginals."""
    df, bounds = cervical
    return df, request.param(epsilon=10.0, seed=5, bins=4, domain=bounds, model_kwargs=FAST).fit(df, label="Biopsy")


def test_sample_is_not_degenerate_where_the_data_are_not(fitted_eps10):
    """A sample that repeats one row, or drops a class or a value the data hold, fails here: at
    ε = 10 on 686 rows the noise is far below the counts, so the sample follows the data."""
    df, model = fitted_eps10
    synth = model.sample(500, seed=0)
    bands = synth.assign(Age=(synth["Age"] - 13) // 16.5)[["Age", "Smokes", "Biopsy"]]  # Age's 4 bins
    assert len(bands.drop_duplicates()) >= 8  # the data hold 13 such combinations
    assert len(synth.drop_duplicates()) > 400  # Smokes_years comes back as draws inside its bins
    for col in COLUMNS:
        assert synth[col].nunique() > 1, f"{col} is constant in the sample but not in the data"
    assert set(synth["Biopsy"]) == {0, 1} and set(synth["Smokes"]) == {0, 1}
    for col in ("Smokes", "Biopsy"):  # data: 0.144 and 0.064
        assert abs(synth[col].mean() - df[col].mean()) < 0.06, col
    assert abs(synth["Age"].mean() - df["Age"].mean()) < 5  # 4 bins of 16.5 years: draws inside the bin


def test_public_bounds_spend_the_whole_budget_on_the_model(fitted):
    model = fitted[2][0]
    assert model.budget["model_epsilon"] == 1.0 and model.budget["domain_epsilon"] == 0.0
    assert model.budget["domain"] == "public bounds"


def test_public_bounds_must_cover_every_column(cervical):
    df, bounds = cervical
    model = PrivBayes(epsilon=1.0, bins=4, domain={c: bounds[c] for c in COLUMNS[:-1]}, model_kwargs=FAST)
    with pytest.raises(ValueError, match=r"no public bounds for columns \['Biopsy'\]"):
        model.fit(df)
    with pytest.raises(RuntimeError, match="call fit"):
        model.sample(3)


def test_dp_domain_splits_the_budget_and_is_seeded(cervical):
    df, _ = cervical
    make = lambda seed: PrivBayes(epsilon=10.0, seed=seed, bins=4, domain="dp", domain_share=0.5,  # noqa: E731
                                  model_kwargs=FAST).fit(df)
    a, b = make(3), make(3)
    assert a.budget["model_epsilon"] == pytest.approx(5.0) and a.budget["domain_epsilon"] == pytest.approx(5.0)
    synth = a.sample(100, seed=0)
    assert list(synth.columns) == COLUMNS and synth.dtypes.to_dict() == df.dtypes.to_dict()
    assert np.isfinite(synth.to_numpy(dtype=float)).all()
    pd.testing.assert_frame_equal(synth, b.sample(100, seed=0))


def test_dp_domain_samples_only_the_labels_classes(cervical):
    """PrivTree binned an integer label over DP bounds with power-of-two edges ([0, 2) for a 0/1
    label) and rounded draws inside a bin: 12 of these 500 rows came back with Biopsy = 2."""
    df, _ = cervical
    model = PrivBayes(epsilon=10.0, seed=5, bins=4, domain="dp", domain_share=0.5, model_kwargs=FAST)
    synth = model.fit(df, label="Biopsy").sample(500, seed=0)
    assert set(synth["Biopsy"]) == {0, 1}
    assert synth.dtypes.to_dict() == df.dtypes.to_dict()
    assert 0.02 < synth["Biopsy"].mean() < 0.15  # data: 0.064


def test_factory_builds_unfitted_generators_with_the_given_seed(cervical):
    _, bounds = cervical
    factory = AlternativeFactory("priv-bayes", epsilon=2.0, bins=4, domain=tuple(bounds.items()),
                                 model_kwargs=(("n_iters", 50),))
    model = factory(7)
    assert (model.mechanism, model.seed, model.epsilon, model.bins) == ("priv-bayes", 7, 2.0, 4)
    assert model.domain == bounds and model.model_kwargs == FAST


def test_dp_domain_with_too_little_budget_says_what_to_change(cervical):
    df, _ = cervical
    with pytest.raises(ValueError, match="raise domain_share or epsilon"):
        PrivBayes(epsilon=0.1, bins=4, domain="dp", model_kwargs=FAST).fit(df)


def test_dp_domain_reraises_a_type_error_that_is_not_the_failed_bounds_estimate(cervical, monkeypatch):
    """Only the bounds estimate's (None, None) becomes the budget message; any other TypeError in
    a 'dp' fit (a bug, an API change) surfaces as itself."""
    pytest.importorskip("dpmm")
    from dpmm.pipelines.base import GenerativePipeline

    def broken(self, *args, **kwargs):
        raise TypeError("fit() got an unexpected keyword argument 'domain'")

    monkeypatch.setattr(GenerativePipeline, "fit", broken)
    df, _ = cervical
    with pytest.raises(TypeError, match="unexpected keyword"):
        PrivBayes(epsilon=1.0, bins=4, domain="dp", model_kwargs=FAST).fit(df)
