"""Tests of the utility benchmark (protocols spec A.1, A.2, B.4-B.10, F, H)."""
from __future__ import annotations

import math
from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from pategan_audit import runner
from pategan_audit import utility as U
from pategan_audit.implementations.factory import PresetFactory
from pategan_audit.utility import run as R

PANEL = ("LogisticRegression", "GaussianNB", "DecisionTree")  # fast subset for the pipeline tests


# -- fake generators: any object with fit/sample is a generator (package README) ---------------

class NoisyResampler:
    """Resamples training rows and adds Gaussian noise to every column (label included, so the
    harness must round it back)."""

    def __init__(self, seed: int):
        self.seed = seed
        self.config = SimpleNamespace(num_moments=100, delta=1e-5)
        self.trace = SimpleNamespace(iterations=0)

    def fit(self, df, label=None):
        self.df = df
        self.trace.iterations = 7
        return self

    def sample(self, n, seed=None):
        rng = np.random.default_rng([self.seed, seed])
        rows = self.df.iloc[rng.integers(0, len(self.df), n)].to_numpy(dtype=float)
        return pd.DataFrame(rows + rng.normal(scale=0.1, size=rows.shape), columns=self.df.columns)


class SingleClass(NoisyResampler):
    """Emits one label value only (like original/turing on Credit, B.3)."""

    def sample(self, n, seed=None):
        out = super().sample(n, seed)
        out.iloc[:, -1] = 0.2  # rounds to 0
        return out


class RefusesToTrain(NoisyResampler):
    """Raises in fit, as smartnoise does when ε is below the accountant's floor (B.5)."""

    def fit(self, df, label=None):
        raise ValueError("epsilon budget already exceeded before the first iteration")


@pytest.fixture(scope="module")
def cervical():
    return R.load_dataset("cervical_cancer", None)


@pytest.fixture
def cache(tmp_path, monkeypatch, use_cache):
    use_cache(tmp_path / "cache")
    return tmp_path / "cache"


def _cell(**kw):
    base = dict(dataset="cervical_cancer", implementation="fake", epsilon=1.0, n_models=2, n_tables=2,
                classifiers=PANEL, max_iter=5)
    return U.UtilityCell(**{**base, **kw})


# -- teacher rule (A.2, B.6) ------------------------------------------------------------------

def test_teacher_rule():
    # protocols spec A.2: Credit N/5000 -> 45, Cervical clamp -> 2, ISOLET 6, Epileptic 9.
    sizes = U.PAPER_TRAIN_SIZES
    assert [U.teacher_count(n_train=sizes[d], ratio=U.teacher_ratio(d)) for d in ("credit", "cervical_cancer", "isolet", "epileptic_seizure")] == [45, 2, 6, 9]
    # B.6: Table 11 columns N/50 ... N/5000 on Epileptic -> 184, 92, 18, 9, 2 (1 clamped to 2)
    assert [U.teacher_sweep_k(r) for r in (50, 100, 500, 1000, 5000)] == [184, 92, 18, 9, 2]
    with pytest.raises(ValueError, match="ratio"):
        U.teacher_count(n_train=100, ratio=0)


# -- synthetic post-processing (A.1) ------------------------------------------------------------

def test_to_training_dtypes_rounds_int64_and_casts_others():
    train = pd.DataFrame({
        "i": np.array([1, 2], dtype="int64"),
        "f": np.array([0.5, 1.5], dtype="float16"),
        "Class": np.array([0, 1], dtype="int16"),
    })
    synth = pd.DataFrame({"Class": [0.7, 1.6, -0.4], "i": [1.6, -0.4, 2.5], "f": [0.1, 0.2, 0.3]})
    out = U.to_training_dtypes(synth, train)
    assert list(out.columns) == ["i", "f", "Class"]
    assert list(out["i"]) == [2, 0, 2]  # rounded (numpy rounds half to even: 2.5 -> 2)
    assert list(out["Class"]) == [0, 1, 0]  # int16: truncated toward zero (0.7 -> 0), as upstream
    assert out.dtypes.tolist() == train.dtypes.tolist()
    with pytest.raises(ValueError, match="diverged"):
        U.to_training_dtypes(synth.assign(f=[np.nan, 0, 0]), train)
    with pytest.raises(ValueError, match="lacks training columns"):
        U.to_training_dtypes(synth.drop(columns="i"), train)


# -- cells --------------------------------------------------------------------------------------

def test_cell_validation_and_canonical_overrides():
    a = _cell(overrides={"b": 2, "a": True})
    b = _cell(overrides=[("a", True), ("b", 2)])
    assert a == b and hash(a) == hash(b) and a.variant == "a=True,b=2"
    assert _cell().variant == "default" and _cell().n == 4
    with pytest.raises(ValueError, match="majority"):
        _cell(classifiers=("majority",))
    with pytest.raises(ValueError, match="n_models"):
        _cell(n_models=0)
    with pytest.raises(ValueError, match="epsilon"):
        _cell(epsilon=0)


# -- one cell with fake generators ----------------------------------------------------------------

def test_evaluate_cell_schema_and_determinism(cervical):
    cell = _cell()
    df = U.evaluate_cell(cell, data=cervical, make_generator=NoisyResampler)
    assert list(df.columns) == U.COLUMNS
    assert len(df) == 2 * 2 * len(PANEL)
    assert set(df["classifier"]) == set(PANEL) and (df["status"] == "ok").all()
    assert (df["num_teachers"] == 2).all()  # Cervical: max(2, 686 // 1000)
    assert (df["iterations"] == 7).all() and (df["n_train"] == 686).all()
    assert df[["model", "table"]].drop_duplicates().shape[0] == 4
    again = U.evaluate_cell(cell, data=cervical, make_generator=NoisyResampler)
    cols = ["model", "table", "classifier", "auroc", "auprc"]
    pd.testing.assert_frame_equal(df[cols], again[cols])
    other = U.evaluate_cell(_cell(seed=1), data=cervical, make_generator=NoisyResampler)
    assert not np.allclose(df["auroc"], other["auroc"])


def test_single_class_generator_gives_exact_degenerate_scores(cervical):
    df = U.evaluate_cell(_cell(n_models=1, n_tables=1), data=cervical, make_generator=SingleClass)
    prevalence = cervical.test.iloc[:, -1].mean()  # 11 / 172 = 0.0640 ("0.5000 / 0.0640", B.3)
    assert prevalence == pytest.approx(0.0640, abs=5e-5)
    assert (df["auroc"] == 0.5).all() and np.allclose(df["auprc"], prevalence, atol=1e-15)
    assert df["single_class"].all()
    best = U.best_of_n(df)
    assert best["auroc"].item() == 0.5 and best["auprc"].item() == pytest.approx(prevalence)


def test_fit_refused_below_accountant_floor_is_recorded_not_raised(cervical):
    floor = math.log(1e5) / 100  # 0.1151 (B.5: smartnoise cannot train below it)
    df = U.evaluate_cell(_cell(epsilon=0.1, n_models=2), data=cervical, make_generator=RefusesToTrain)
    assert 0.1 < floor and (df["status"] == "not_trained").all() and df["auroc"].isna().all()
    assert np.isnan(U.best_of_n(df)["auroc"].item())
    with pytest.raises(ValueError, match="budget"):  # above the floor a failure is a real error
        U.evaluate_cell(_cell(epsilon=1.0), data=cervical, make_generator=RefusesToTrain)


def test_run_cell_is_cached(cervical, cache):
    calls = []

    def factory(seed):
        calls.append(seed)
        return NoisyResampler(seed)

    cell = _cell(n_models=1, n_tables=1)
    first = U.run_cell(cell, data=cervical, make_generator=factory)
    second = U.run_cell(cell, data=cervical, make_generator=factory)
    assert len(calls) == 1
    pd.testing.assert_frame_equal(first, second)
    assert len(list((cache / "utility").glob("*.pkl"))) == 1


def test_table_digest_sees_every_value_name_and_dtype():
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "y": [0, 1, 0]})
    d = R.table_digest(df)
    assert R.table_digest(df.copy()) == d and len(d) == 64
    assert R.table_digest(df.assign(a=[1.0, 2.0, 3.0000001])) != d
    assert R.table_digest(df.rename(columns={"a": "b"})) != d
    assert R.table_digest(df.astype({"y": "float64"})) != d
    assert R.table_digest(df.iloc[::-1].reset_index(drop=True)) != d


def test_a_table_drawn_again_reuses_its_scores_and_nothing_else(cervical, cache, monkeypatch):
    """Across the ε of a sweep a table can be drawn again (common random numbers): its scores are
    read, not recomputed; another seed, another table or ``refresh`` computes them."""
    calls = []
    real = R.prepare_table  # every table that is scored (not read from the cache) is prepared once

    def counting(*args, **kwargs):
        calls.append(kwargs["seed"])
        return real(*args, **kwargs)

    monkeypatch.setattr(R, "prepare_table", counting)
    first = U.run_cell(_cell(epsilon=1.0), data=cervical, make_generator=NoisyResampler)
    assert len(calls) == 4  # 2 models x 2 tables
    again = U.run_cell(_cell(epsilon=5.0), data=cervical, make_generator=NoisyResampler)  # same tables
    assert len(calls) == 4
    cols = ["model", "table", "classifier", "auroc", "auprc", "iterations"]
    pd.testing.assert_frame_equal(first[cols], again[cols])
    assert (again["epsilon"] == 5.0).all() and set(again["cell"]) != set(first["cell"])
    assert len(list((cache / R.SCORES_NAMESPACE).glob("*.pkl"))) == 4
    U.run_cell(_cell(epsilon=5.0, seed=1), data=cervical, make_generator=NoisyResampler)  # other tables and seeds
    assert len(calls) == 8
    U.run_cell(_cell(epsilon=5.0), data=cervical, make_generator=NoisyResampler, refresh=True)
    assert len(calls) == 12
    U.evaluate_cell(_cell(epsilon=5.0), data=cervical, make_generator=NoisyResampler)  # uncached by default
    assert len(calls) == 16


def test_run_cells_dedupes_and_resumes_after_an_interruption(cache, monkeypatch):
    calls = []

    def fake_factory(cell, k, data):
        def make(seed):
            calls.append(cell.epsilon)
            if cell.epsilon == 3.0 and fail["on"]:
                raise RuntimeError("simulated crash")
            return NoisyResampler(seed)
        return make

    fail = {"on": True}
    monkeypatch.setattr(R, "_default_factory", fake_factory)
    cells = [_cell(epsilon=e, n_models=1, n_tables=1) for e in (1.0, 2.0, 3.0)]
    with pytest.raises(RuntimeError, match="simulated"):
        U.run_cells(cells + [cells[0]], options=runner.RunOptions.defaulted(None, n_jobs=1))
    assert sorted(calls) == [1.0, 2.0, 3.0]  # the duplicate ran once; the crash came last (cost order)
    fail["on"] = False
    calls.clear()
    out = U.run_cells(cells, options=runner.RunOptions.defaulted(None, n_jobs=1))
    assert calls == [3.0]  # only the interrupted cell is recomputed
    assert sorted(out["epsilon"].unique()) == [1.0, 2.0, 3.0] and len(out) == 3 * len(PANEL)


def test_a_cell_of_the_wrong_type_is_refused_before_anything_runs(cache, monkeypatch):
    calls = []
    monkeypatch.setattr(R, "_default_factory", lambda cell, k, data: calls.append(cell) or NoisyResampler)
    good = _cell(epsilon=1.0, n_models=1, n_tables=1)
    for run in (U.run_cells, lambda cells: list(U.iter_cells(cells))):
        with pytest.raises(ValueError, match=r"must be UtilityCell or SettingACell objects, got str; build them"):
            run([good, "cervical_cancer"])
    assert calls == [] and not any(cache.glob("**/*.pkl"))  # checked before any cell ran


# -- aggregation (B.4, B.11) ----------------------------------------------------------------------

def _hand_table() -> pd.DataFrame:
    rows = [  # (table, classifier, auroc, auprc)
        (0, "A", 0.60, 0.50), (1, "A", 0.70, 0.30),
        (0, "B", 0.80, 0.20), (1, "B", 0.55, 0.40),
    ]
    return pd.DataFrame([
        {"cell": "c0", "dataset": "d", "implementation": "x", "epsilon": 1.0, "num_teachers": 2, "variant": "default",
         "model": 0, "table": t, "classifier": c, "auroc": a, "auprc": p} for t, c, a, p in rows
    ])


def test_best_of_n_maximises_each_classifier_and_metric_separately():
    best = U.best_of_n(_hand_table()).iloc[0]
    # by hand: A best AUROC 0.70 (table 1), B 0.80 (table 0) -> 0.75; AUPRC A 0.50 (table 0), B 0.40 (table 1) -> 0.45
    assert best["auroc"] == pytest.approx(0.75) and best["auprc"] == pytest.approx(0.45)
    assert best["n"] == 2 and best["n_classifiers"] == 2
    per = U.best_per_classifier(_hand_table()).set_index("classifier")
    assert per.loc["A", "auroc"] == 0.70 and per.loc["A", "auprc"] == 0.50


def test_majority_rows_never_enter_the_average():
    df = _hand_table()
    bad = pd.concat([df, df.iloc[[0]].assign(classifier="majority", auroc=0.5)])
    with pytest.raises(ValueError, match="Setting A only"):
        U.best_of_n(bad)
    real = df.assign(implementation="real")
    real = pd.concat([real, real.iloc[[0]].assign(classifier="majority", auroc=0.5, auprc=0.1)])
    a = U.setting_a_scores(real).iloc[0]
    assert a["auroc"] == pytest.approx((0.6 + 0.7 + 0.8 + 0.55) / 4) and a["baseline_auprc"] == 0.1


def test_mean_se_by_hand():
    out = U.mean_se(_hand_table()).iloc[0]
    # per-table classifier means: 0.70 and 0.625 -> mean 0.6625; SE = std(ddof=1)/sqrt(2) = 0.0375
    assert out["mean"] == pytest.approx(0.6625) and out["se"] == pytest.approx(0.0375) and out["n"] == 2


# -- AUROC-delta (B.10) and DPGAN (B.9) on the paper's printed numbers ------------------------------

REF49 = [0.8737, 0.9108, 0.6399, 0.7681]  # [49] Table 2, order Credit, Cervical, ISOLET, Epileptic
TABLE4 = {  # paper Table 4 (printed), same dataset order
    "original": [0.5000, 0.9265, 0.8342, 0.6867], "updated": [0.5000, 0.8739, 0.5861, 0.6187],
    "synthcity": [0.5172, 0.8584, 0.6292, 0.7165], "turing": [0.5000, 0.5000, 0.5000, 0.7425],
    "borealis": [0.6300, 0.9431, 0.6219, 0.6730], "smartnoise": [0.7358, 0.8025, 0.6152, 0.6963],
}


def test_auroc_delta_worked_example():
    # protocols spec B.10 worked check for original: -1.00000, +0.01724, +0.30364, -0.30362
    got = U.auroc_delta(observed=np.array(TABLE4["original"]), reference=np.array(REF49))
    assert np.allclose(got, [-1.0, 0.01724, 0.30364, -0.30362], atol=5e-6)
    assert U.auroc_delta(observed=0.6, reference=0.8) == pytest.approx(-2 / 3)  # drop vs baseline 0.5
    assert U.auroc_delta(observed=0.9, reference=0.8) == pytest.approx(1 / 8)  # gain relative to r


def test_table1_from_table4():
    # Table 1 (printed): -24.57, -50.80, -33.76, -77.38, -27.50, -26.92 %; from the *rounded* Table 4
    # inputs three entries move by 0.01 (the paper used unrounded values; B.10), hence atol 0.015.
    printed = [-24.57, -50.80, -33.76, -77.38, -27.50, -26.92]
    got = [100 * U.mean_auroc_delta(observed=TABLE4[i], reference=REF49) for i in TABLE4]
    assert np.allclose(got, printed, atol=0.015)
    assert got[0] == pytest.approx(-24.57, abs=0.005)
    pairs = [100 * U.auroc_delta(observed=x, reference=r) for v in TABLE4.values() for x, r in zip(v, REF49)]
    assert np.mean(pairs) == pytest.approx(-40.15, abs=0.01)  # "40.15 % on average" (§5)


def test_table6_conditional_delta():
    # Table 6: conditional 0.8760, 0.9330, 0.6927, 0.7029 -> -3.34 %
    assert 100 * U.mean_auroc_delta(observed=[0.8760, 0.9330, 0.6927, 0.7029], reference=REF49) == pytest.approx(-3.34, abs=0.005)


def test_table12_deltas():
    # Table 12 printed D and P; B.10: from rounded inputs -4.23, -13.69, -17.78, -25.00, -20.48, -24.09 %,
    # printed -20.49 / -24.10 (unrounded inputs); mean 17.55 % ("17.5 %" in §5).
    P = {"original": [0.5000, 0.8531, 0.8355, 0.6876], "updated": [0.5000, 0.6581, 0.6001, 0.6223],
         "synthcity": [0.5437, 0.6867, 0.6091, 0.6888], "turing": [0.5000, 0.5000, 0.5000, 0.5000],
         "borealis": [0.6616, 0.8140, 0.5980, 0.6069], "smartnoise": [0.5867, 0.7699, 0.6009, 0.6768]}
    got = [100 * U.mean_auroc_delta(observed=P[i], reference=TABLE4[i]) for i in P]
    assert np.allclose(got, [-4.23, -13.69, -17.78, -25.00, -20.48, -24.09], atol=0.005)
    assert np.mean(got) == pytest.approx(-17.55, abs=0.005)


def test_auroc_delta_rejects_a_reference_at_the_baseline():
    with pytest.raises(ValueError, match="0.5 baseline"):
        U.auroc_delta(observed=0.4, reference=0.5)
    assert U.auroc_delta(observed=0.5, reference=0.5) == 0.0  # gain branch is defined
    with pytest.raises(ValueError, match="equal-length"):
        U.mean_auroc_delta(observed=[0.6], reference=[0.7, 0.8])


def test_auroc_delta_undefined_entries_are_nan_on_request():
    # a drop from a reference no better than chance has no B.10 value: NaN there, the rest unchanged
    got = U.auroc_delta(observed=[0.40, 0.6, 0.55], reference=[0.48, 0.8, 0.48], undefined="nan")
    assert np.isnan(got[0]) and got[1] == pytest.approx(-2 / 3) and got[2] == pytest.approx(0.07 / 0.48)
    assert np.isnan(U.auroc_delta(observed=0.4, reference=0.5, undefined="nan"))
    assert U.auroc_delta_undefined(observed=[0.40, 0.6, 0.55, np.nan], reference=[0.48, 0.8, 0.48, 0.4]).tolist() == [
        True, False, False, False]
    # the mean over datasets is NaN rather than a mean over fewer datasets
    assert np.isnan(U.mean_auroc_delta(observed=[0.40, 0.6], reference=[0.48, 0.8], undefined="nan"))
    with pytest.raises(ValueError, match="undefined='nan'"):
        U.mean_auroc_delta(observed=[0.40, 0.6], reference=[0.48, 0.8])
    with pytest.raises(ValueError, match="'raise' or 'nan'"):
        U.auroc_delta(observed=0.6, reference=0.8, undefined="skip")


def test_table12_delta_row_with_a_reference_below_chance():
    """Smoke-profile Table 12 (seed 1): an implementation's D column falls below 0.5 and its P
    column below that. The Δ row gives NaN for it, a note says why, the text mean says over what."""
    from pategan_audit.utility import tables as T

    idx = ["cervical_cancer", "epileptic_seizure"]
    D = pd.DataFrame({"original": [0.48, 0.70], "updated": [0.60, 0.65]}, index=idx)
    P = pd.DataFrame({"original": [0.45, 0.60], "updated": [0.55, 0.70]}, index=idx)
    delta = T.delta_row(P, D)
    assert np.isnan(delta["original"])
    assert delta["updated"] == pytest.approx(100 * np.mean([-0.05 / 0.10, 0.05 / 0.65]))
    note = T.delta_undefined_note(P, D, reference_name="D")
    assert "original on cervical_cancer (0.4500 against D 0.4800)" in note and "updated" not in note
    assert T.delta_undefined_note(D, D, reference_name="D") == ""
    assert T.mean_delta_text(delta) == f"{delta['updated']:.2f} % (mean over the 1 of 2 where it is defined)"
    assert T.mean_delta_text(delta.dropna()) == f"{delta['updated']:.2f} %"
    assert T.mean_delta_text(delta * np.nan) == "not defined"
    assert np.isnan(T.pairwise_delta_pct(P, D["original"]))


def test_dpgan_count_is_13_of_24():
    # B.9: DPGAN AUROC of [49] Table 2; 13 of the 24 Table 4 entries lie strictly above it
    t4 = pd.DataFrame(TABLE4, index=["credit", "cervical_cancer", "isolet", "epileptic_seizure"])
    dpgan = {"credit": 0.8578, "cervical_cancer": 0.8699, "isolet": 0.5577, "epileptic_seizure": 0.6718}
    assert U.dpgan_count(t4, dpgan=dpgan) == 13
    assert U.dpgan_count(t4.loc[["cervical_cancer"]], dpgan=dpgan) == 3
    with pytest.raises(ValueError, match="DPGAN"):
        U.dpgan_count(t4, dpgan={"credit": 0.8})


# -- profiles (B.4, F.2) -----------------------------------------------------------------------------

def test_paper_profile_follows_the_protocol():
    cells = U.main_cells("paper")
    assert len(cells) == 24
    n = {(c.dataset): c.n for c in cells}
    assert n == {"credit": 9, "cervical_cancer": 25, "isolet": 25, "epileptic_seizure": 25}  # B.4 table
    assert all(c.max_iter == 10_000 and c.subsample is None and c.mlp_max_iter == 1000 and c.xgb_n_jobs is None for c in cells)
    sweep = U.epsilon_sweep_cells("paper", dataset="epileptic_seizure")
    assert sorted({c.epsilon for c in sweep}) == list(U.EPSILON_GRID)
    assert all(c.n == (25 if c.epsilon == 1.0 else 9) for c in sweep)  # B.4: eps = 1 point is best-of-25
    assert set(sweep) & set(cells)  # the eps = 1 points are the Table 4 cells (run once)
    assert all(c.n == 9 for c in U.epsilon_sweep_cells("paper", dataset="credit"))
    teach = U.teacher_sweep_cells("paper")
    assert sorted({c.num_teachers for c in teach}) == [2, 9, 18, 92, 184] and all(c.n == 9 for c in teach)
    assert {c.implementation for c in teach} == set(U.TEACHER_SWEEP_IMPLEMENTATIONS)
    assert all(dict(c.overrides) == {"conditional": True} and c.implementation == "original" for c in U.conditional_cells("paper"))
    assert all(dict(c.overrides) == {"hyperparameters": "paper"} for c in U.hyperparameter_cells("paper"))


@pytest.mark.parametrize("profile", ["smoke", "book", "paper"])
def test_every_profile_covers_the_builders(profile):
    p = U.get_profile(profile)
    assert U.main_cells(p) and U.epsilon_sweep_cells(p, dataset="epileptic_seizure") and U.teacher_sweep_cells(p)
    assert U.conditional_cells(p) and U.hyperparameter_cells(p) and U.setting_a_cells(p)
    if profile != "smoke":  # book and paper draw every figure incl. Credit (6, 7) and MNIST (10)
        assert U.epsilon_sweep_cells(p, dataset="credit") and U.mnist_cells(p)
        assert set(p.datasets) == {"credit", "cervical_cancer", "isolet", "epileptic_seizure"}
    else:
        assert len(p.datasets) == 2 and all(c.n == 1 for c in U.main_cells(p))


def test_unknown_profile_raises():
    with pytest.raises(ValueError, match="profile"):
        U.get_profile("fast")


def test_run_cells_on_a_dask_cluster_matches_the_local_run(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(R, "_default_factory", lambda cell, k, data: NoisyResampler)
    cells = [_cell(epsilon=e, n_models=1, n_tables=1) for e in (1.0, 2.0, 3.0)]
    local = U.run_cells(cells, options=runner.RunOptions(n_jobs=1, cache_dir=tmp_path / "a"))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        with distributed.Client(cluster):
            remote = U.run_cells(cells, options=runner.RunOptions(n_jobs=2, backend="dask", cache_dir=tmp_path / "b"))
    cols = ["epsilon", "model", "table", "classifier", "auroc", "auprc"]
    pd.testing.assert_frame_equal(local[cols], remote[cols])


# -- the real presets through the default factory ---------------------------------------------------

@pytest.mark.parametrize("name", ["turing", "corrected"])
def test_real_presets_run_through_a_cell(name, cervical):
    # corrected never reads bounds from the data: the factory must hand it the split's bounds
    cell = U.UtilityCell(dataset="cervical_cancer", implementation=name, epsilon=1.0, max_iter=2,
                         classifiers=("GaussianNB", "LDA"))
    df = U.evaluate_cell(cell, data=cervical)
    assert (df["status"] == "ok").all() and df["auroc"].between(0, 1).all() and len(df) == 2


def test_smartnoise_below_its_floor_is_not_trained(cervical):
    # B.5: smartnoise checks the budget before its first iteration; log(1e5)/100 = 0.115 > 0.05
    cell = U.UtilityCell(dataset="cervical_cancer", implementation="smartnoise", epsilon=0.05, max_iter=2,
                         n_models=3, classifiers=("GaussianNB",))
    df = U.evaluate_cell(cell, data=cervical)  # the cell's 3 models are one fit_many call, which raises
    assert (df["status"] == "not_trained").all()
    assert df["model"].tolist() == [0, 1, 2] and df["fit_seconds"].isna().all()  # every model recorded


def test_default_factory_fits_the_models_with_one_fit_many_call(cervical, monkeypatch):
    # best-of-n: the n_models generators of a cell are one fit_many call, equal (up to float
    # rounding) to fitting each seed on its own
    cell = U.UtilityCell(dataset="cervical_cancer", implementation="borealis", epsilon=1.0, max_iter=2, n_models=3,
                         n_tables=1, classifiers=("GaussianNB", "LDA"))
    calls = []
    fit_many = PresetFactory.fit_many

    def spy(self, train, seeds, *, label):
        calls.append(list(seeds))
        return fit_many(self, train, seeds, label=label)

    monkeypatch.setattr(PresetFactory, "fit_many", spy)
    batched = U.evaluate_cell(cell, data=cervical)
    assert calls == [[U.derive_seed(cell.seed, m) for m in range(3)]]
    maker = R._default_factory(cell, R.resolve_teachers(cell, len(cervical.train)), cervical)
    one_by_one = U.evaluate_cell(cell, data=cervical, make_generator=lambda seed: maker(seed))
    assert len(calls) == 1
    cols = ["model", "table", "classifier", "status", "iterations"]
    pd.testing.assert_frame_equal(batched[cols], one_by_one[cols])
    np.testing.assert_allclose(batched[["auroc", "auprc"]], one_by_one[["auroc", "auprc"]], atol=1e-6)
    # fit_seconds: the fit_many call's wall time / n_models, the same for every model of the cell
    assert batched["fit_seconds"].nunique() == 1 and (batched["fit_seconds"] > 0).all()


def test_public_names_exist():
    import pategan_audit.classifiers as C
    import pategan_audit.pages.plotting.utility as PU
    from pategan_audit.utility import tables

    for module in (U, C, PU, tables):
        missing = [n for n in module.__all__ if not hasattr(module, n)]
        assert not missing, f"{module.__name__}.__all__ lists undefined names {missing}"


# -- figures (protocols spec B.11) ---------------------------------------------------------------------

def _series():
    return pd.DataFrame([{"implementation": i, "epsilon": e, "value": 0.5 + 0.01 * j + 0.02 * np.log10(e)}
                         for j, i in enumerate(("turing", "original", "corrected")) for e in (0.1, 1.0, 10.0)])


def test_epsilon_sweep_keeps_the_papers_axes():
    from pategan_audit.pages.plotting.utility import plot_epsilon_sweep

    fig = plot_epsilon_sweep(_series(), baseline=0.5, paper_marks={1.0: 0.765, 10.0: 0.870}, ylim_bottom=0.32)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_xlim()[1] == 100 and ax.get_ylim()[0] == pytest.approx(0.32)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["original", "turing", "corrected", "baseline", "Paper"]  # legend in the paper's order
    plt.close(fig)
    with pytest.raises(ValueError, match="columns"):
        plot_epsilon_sweep(_series().drop(columns="epsilon"))


def test_mean_se_and_heatmap_figures():
    from pategan_audit.pages.plotting.utility import plot_classifier_heatmap, plot_mean_se

    stats = _series().rename(columns={"value": "mean"}).assign(se=0.01)
    fig = plot_mean_se(stats)
    assert len(fig.axes[0].containers) == 3  # one error-bar container per implementation
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["original", "turing", "corrected", "baseline"]
    plt.close(fig)
    table = pd.DataFrame(np.full((2, 2), 0.1), index=["LDA", "MLP"], columns=["turing", "original"])
    fig = plot_classifier_heatmap(table, center=0)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["original", "turing"]
    plt.close(fig)
    with pytest.raises(ValueError, match="non-empty"):
        plot_classifier_heatmap(pd.DataFrame())


# -- presentation helpers ------------------------------------------------------------------------------

def test_side_by_side_and_delta_row():
    from pategan_audit.utility import tables as T

    ours = pd.DataFrame({"original": [0.6, 0.9]}, index=["credit", "cervical_cancer"])
    paper = pd.DataFrame({"original": [0.5, 0.9265], "paper49": [0.8737, 0.9108]}, index=["credit", "cervical_cancer"])
    side = T.side_by_side(ours, paper)
    assert list(side.columns) == [("original", "paper"), ("original", "ours"), ("original", "ours − paper")]
    assert side.loc["credit", ("original", "ours − paper")] == pytest.approx(0.1)
    # delta of the paper's own original row against [49] over these two datasets (B.10): mean(-1.0, +0.01724)
    d = T.delta_row(paper[["original"]], paper["paper49"])
    assert d["original"] == pytest.approx(100 * (-1.0 + 0.017237) / 2, abs=1e-3)
    rows = T.scorecard_rows(ours, table="table4", runs="x")
    assert rows[0] == {"table": "table4", "row": "credit", "column": "original", "ours": 0.6, "runs": "x"}


def test_runs_text_counts_trainings():
    from pategan_audit.utility import tables as T

    cells = [_cell(n_models=2, n_tables=3), _cell(epsilon=2.0, n_models=1, n_tables=1, subsample=100)]
    text = T.runs_text(cells)
    assert "2 × 3 = 6" in text and "1 × 1 = 1" in text and "3 generator trainings" in text and "cervical_cancer 100" in text


# -- what ends a training: the ε sweep can only move presets whose accountant spends ε ---------------

def _stop_rows(impl, eps, iterations, cap, status="ok"):
    return [{"dataset": "d", "implementation": impl, "epsilon": eps, "model": m, "iterations": it, "max_iter": cap,
             "status": status} for m, it in enumerate(iterations)]


def test_stopping_tells_budget_from_cap():
    from pategan_audit.utility.tables import cap_binds_text, stopping

    rec = pd.DataFrame(_stop_rows("original", 1.0, [200, 200], 200) + _stop_rows("corrected", 1.0, [32, 32], 200)
                       + _stop_rows("updated", 1.0, [150, 200], 200) + _stop_rows("smartnoise", 0.1, [0, 0], 200, "not_trained")
                       + _stop_rows("original", 10.0, [200, 200], 200))
    stops = stopping(rec).set_index(["implementation", "epsilon"])["stopped_by"]
    assert stops.to_dict() == {("original", 1.0): "cap", ("corrected", 1.0): "budget", ("updated", 1.0): "mixed",
                               ("smartnoise", 0.1): "not trained", ("original", 10.0): "cap"}
    assert cap_binds_text(stopping(rec)) == ("The iteration cap, not ε, ended the trainings of ε = 1: original; "
                                             "ε = 10: original (their points cannot move with ε at this cap).")
    assert cap_binds_text(stopping(pd.DataFrame(_stop_rows("corrected", 1.0, [32], 200)))) == ""


@pytest.mark.parametrize("name, overrides", [("updated", {"lam": 0.01}), ("synthcity", {"lam": 0.01}),
                                             ("borealis", {"lam": 0.01}), ("smartnoise", {"lam": 0.01}),
                                             ("corrected", {})])
def test_epsilon_moves_every_preset_whose_accountant_spends_the_budget(name, overrides):
    """The premise of the ε sweeps (Figures 1, 6-9): a larger ε buys more iterations for every
    preset with an accountant, once the cap does not bind first (here a large λ makes each query
    expensive, λ = 0.01: at ε = 1 the budget binds within 1-3 iterations, at ε = 4 after 8-38)."""
    from pategan_audit.implementations import create

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=120), "b": rng.uniform(size=120), "y": rng.integers(0, 2, 120)})
    if name == "corrected":
        overrides = {**overrides, "public_bounds": {c: (float(df[c].min()), float(df[c].max())) for c in df}}
    its = [create(name, epsilon=eps, seed=0, num_teachers=3, max_iter=3000, **overrides).fit(df, label="y").trace.iterations
           for eps in (1.0, 4.0)]
    assert its[0] < 3000 and its[0] < its[1], its


@pytest.mark.parametrize("name", ["original", "turing"])
def test_presets_without_an_accountant_run_to_the_cap_whatever_epsilon(name):
    from pategan_audit.implementations import create

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=60), "y": rng.integers(0, 2, 60)})
    assert [create(name, epsilon=eps, seed=0, num_teachers=2, max_iter=7).fit(df, label="y").trace.iterations
            for eps in (0.1, 10.0)] == [7, 7]
