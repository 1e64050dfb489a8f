"""The distinguishing game (protocols spec D.1) with the calibration generators, and presets trained in chunks through fit_many."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from pategan_audit import datasets
from pategan_audit.auditing import batching
from pategan_audit.auditing.attacks import random_forest_attack, split_sizes
from pategan_audit.auditing.batching import split_chunks
from pategan_audit.auditing.bounds import perfect_attack_ceiling
from pategan_audit.auditing.calibration import IgnoreFactory, ReleaseFactory, ReleaseTrainingData
from pategan_audit.auditing.featurisers import QueryFeaturiser
from pategan_audit.auditing.game import run_game, shadow_seed
from pategan_audit.auditing.settings import PresetFactory
from pategan_audit.runner import RunOptions

D_OUT, D_IN = datasets.worst_case("out"), datasets.worst_case("in")
N = 40  # 16 / 8 / 16 per world


def _audit(game, methods=("clopper_pearson",)):
    n_train, n_valid, _ = split_sizes(game.n_per_world)
    return random_forest_attack(features_out=game.features_out, features_in=game.features_in,
                                n_train=n_train, n_valid=n_valid, methods=methods)


def test_releasing_the_data_audits_at_the_ceiling():
    g = run_game(ReleaseFactory(), D_OUT, D_IN, n_per_world=N, featurise=QueryFeaturiser(), cache_namespace=None)
    assert g.features_out.shape == (N, 8) and g.n_synth_rows == {"out": 4, "in": 5}
    res = _audit(g, methods=("clopper_pearson", "bayesian"))
    assert res["clopper_pearson"].epsilon == pytest.approx(perfect_attack_ceiling(n_per_world=16))  # 1.35 (F.3)
    assert res["bayesian"].epsilon == pytest.approx(perfect_attack_ceiling(n_per_world=16, method="bayesian"))


def test_ignoring_the_data_audits_near_zero_when_size_is_controlled():
    g = run_game(IgnoreFactory(), D_OUT, D_IN, n_per_world=N, n_synth_rows=5, featurise=QueryFeaturiser(),
                 cache_namespace=None, seed=3)
    assert g.n_synth_rows == {"out": 5, "in": 5}
    assert _audit(g)["clopper_pearson"].epsilon < 0.5


def test_size_channel_leaks_even_for_a_generator_that_ignores_its_data():
    # D.9: a generator that always outputs (0,0,0) and ignores its data is perfectly private,
    # but with 4 vs 5 synthetic rows count_000 reveals the world
    always_zero = IgnoreFactory(support=(0.0,))
    g = run_game(always_zero, D_OUT, D_IN, n_per_world=N, featurise=QueryFeaturiser(), cache_namespace=None)
    np.testing.assert_array_equal(g.features_out[:, 0], 4)
    np.testing.assert_array_equal(g.features_in[:, 0], 5)
    assert _audit(g)["clopper_pearson"].epsilon == pytest.approx(perfect_attack_ceiling(n_per_world=16))
    same_size = run_game(always_zero, D_OUT, D_IN, n_per_world=N, n_synth_rows=5, featurise=QueryFeaturiser(),
                         cache_namespace=None)
    assert _audit(same_size)["clopper_pearson"].epsilon == 0.0


def test_seeds_are_independent_per_world_and_index():
    seeds = {shadow_seed(0, w, i) for w in ("out", "in") for i in range(50)}
    assert len(seeds) == 100
    assert shadow_seed(0, "in", 3) == shadow_seed(0, "in", 3) != shadow_seed(1, "in", 3)
    with pytest.raises(ValueError, match="world"):
        shadow_seed(0, "both", 0)


def test_parallel_equals_sequential():
    kwargs = dict(n_per_world=10, n_synth_rows=5, featurise=QueryFeaturiser(), cache_namespace=None, seed=11)
    seq = run_game(IgnoreFactory(), D_OUT, D_IN, options=RunOptions(n_jobs=1), **kwargs)
    par = run_game(IgnoreFactory(), D_OUT, D_IN, options=RunOptions(n_jobs=2), **kwargs)
    np.testing.assert_array_equal(seq.features_out, par.features_out)
    np.testing.assert_array_equal(seq.features_in, par.features_in)
    assert seq.seeds == par.seeds


FITS: list[int] = []


@dataclass(frozen=True)
class CountingRelease:
    """ReleaseFactory that records each model it builds (and can fail after ``fail_after`` builds)."""

    fail_after: int = -1

    def __call__(self, seed: int) -> ReleaseTrainingData:
        if 0 <= self.fail_after <= len(FITS):
            raise RuntimeError("simulated crash")
        FITS.append(seed)
        return ReleaseTrainingData(seed=seed)


def test_interrupted_game_resumes_from_cache(tmp_path):
    FITS.clear()
    # the cache key names the setting explicitly, so the crashing factory shares it
    kwargs = dict(n_per_world=6, featurise=QueryFeaturiser(), cache_namespace="audit_test",
                  options=RunOptions(n_jobs=1, cache_dir=tmp_path), cache_key={"setting": "resume-test", "generator": "counting release"}, seed=5)
    with pytest.raises(RuntimeError, match="simulated crash"):
        run_game(CountingRelease(fail_after=4), D_OUT, D_IN, **kwargs)
    assert len(FITS) == 4
    # same setting key, no crash: only the 8 missing shadow models are trained
    full = run_game(CountingRelease(), D_OUT, D_IN, **kwargs)
    assert len(FITS) == 12
    again = run_game(CountingRelease(), D_OUT, D_IN, **kwargs)
    assert len(FITS) == 12  # everything read back
    np.testing.assert_array_equal(full.features_in, again.features_in)
    files = sorted((tmp_path / "audit_test").glob("*.pkl"))
    assert len(files) == 12


def test_cache_key_separates_settings(tmp_path):
    FITS.clear()
    kwargs = dict(n_per_world=2, featurise=QueryFeaturiser(), cache_namespace="audit_test",
                  options=RunOptions(n_jobs=1, cache_dir=tmp_path))
    run_game(CountingRelease(), D_OUT, D_IN, **kwargs)
    assert len(FITS) == 4
    # 5 rows in both worlds: new out-world entries; the in world already drew 5 rows -> reused
    run_game(CountingRelease(), D_OUT, D_IN, n_synth_rows=5, **kwargs)
    assert len(FITS) == 6
    run_game(CountingRelease(), D_OUT, D_IN, seed=1, **kwargs)  # other seeds -> new entries
    assert len(FITS) == 10


def test_undescribable_factories_need_a_cache_key_or_no_cache():
    with pytest.raises(ValueError, match="cannot describe"):
        run_game(lambda s: ReleaseTrainingData(seed=s), D_OUT, D_IN, n_per_world=2, featurise=QueryFeaturiser())
    g = run_game(lambda s: ReleaseTrainingData(seed=s), D_OUT, D_IN, n_per_world=2, featurise=QueryFeaturiser(),
                 cache_namespace=None)
    assert g.n_per_world == 2


def test_input_validation():
    f = QueryFeaturiser()
    with pytest.raises(ValueError, match="n_synth_rows"):
        run_game(ReleaseFactory(), D_OUT, D_IN, n_per_world=2, n_synth_rows="same", featurise=f, cache_namespace=None)
    with pytest.raises(ValueError, match="same columns"):
        run_game(ReleaseFactory(), D_OUT, D_IN.rename(columns={"A": "Z"}), n_per_world=2, featurise=f, cache_namespace=None)
    with pytest.raises(ValueError, match="n_per_world"):
        run_game(ReleaseFactory(), D_OUT, D_IN, n_per_world=0, featurise=f, cache_namespace=None)


def test_the_audit_restores_dtypes_with_the_audit_policy():
    # the game's dtype restoration is the one restorer's "audit" policy (authors' fix_dtypes, D.2)
    from pategan_audit.components.scalers import restore_dtypes

    synth = pd.DataFrame({"A": [0.4, 0.6, 1.49], "x": [1, 2, 3]})
    out = restore_dtypes(synth, pd.Series({"A": np.dtype("int64"), "x": np.dtype("float64")}), policy="audit")
    assert out["A"].tolist() == [0, 1, 1] and out["A"].dtype == np.int64 and out["x"].dtype == np.float64
    nan = restore_dtypes(pd.DataFrame({"A": [np.nan, 0.7]}), pd.Series({"A": np.dtype("int64")}), policy="audit")
    assert np.isnan(nan["A"][0]) and nan["A"][1] == 1.0


# -- shadow models in chunks through fit_many (the replica axis) --------------------------------

def _spy_fit_many(monkeypatch) -> list[list[int]]:
    """Record the seeds of every PresetFactory.fit_many call (the chunks)."""
    calls: list[list[int]] = []
    original = PresetFactory.fit_many

    def spy(self, frames, seeds, *, label=None):
        calls.append(list(seeds))
        return original(self, frames, seeds, label=label)

    monkeypatch.setattr(PresetFactory, "fit_many", spy)
    return calls


@pytest.mark.parametrize("name", ["smartnoise", "borealis"])
def test_batched_game_equals_the_per_model_game(name, monkeypatch):
    factory = PresetFactory(name, overrides={"num_teachers": 2, "max_iter": 3})
    if not factory.batched():
        pytest.skip(f"{name} has no batched step yet")
    calls = _spy_fit_many(monkeypatch)
    kwargs = dict(n_per_world=6, featurise=QueryFeaturiser(), cache_namespace=None, seed=7)
    batched = run_game(factory, D_OUT, D_IN, batched=True, **kwargs)
    assert sorted(len(c) for c in calls) == [6, 6]  # one chunk per world (n_jobs=1)
    per_model = run_game(factory, D_OUT, D_IN, batched=False, **kwargs)
    assert len(calls) == 2  # the reference path never calls fit_many
    np.testing.assert_allclose(batched.features_out, per_model.features_out)
    np.testing.assert_allclose(batched.features_in, per_model.features_in)
    assert batched.seeds == per_model.seeds
    # seconds of a chunk's models: the chunk's wall time / its models (equal within a chunk)
    assert len(set(batched.seconds["out"])) == 1 and batched.seconds["out"][0] > 0


def test_chunks_resume_per_model_and_share_the_per_model_cache(tmp_path, monkeypatch):
    factory = PresetFactory("borealis", overrides={"num_teachers": 2, "max_iter": 2})
    monkeypatch.setattr(batching.PresetFactory, "batched", lambda self: True)  # chunks even without a batched step
    calls = _spy_fit_many(monkeypatch)
    kwargs = dict(featurise=QueryFeaturiser(), cache_namespace="audit_test", options=RunOptions(n_jobs=1, cache_dir=tmp_path),
                  seed=2)
    first = run_game(factory, D_OUT, D_IN, n_per_world=3, batched=False, **kwargs)  # per-model entries
    assert calls == [] and len(list((tmp_path / "audit_test").glob("*.pkl"))) == 6
    more = run_game(factory, D_OUT, D_IN, n_per_world=6, batched=True, chunk_size=2, **kwargs)
    # only the 3 missing models per world are fitted, in chunks of at most 2, never mixing worlds
    assert sorted(len(c) for c in calls) == [1, 1, 2, 2]
    fitted = sorted(s for c in calls for s in c)
    assert fitted == sorted(shadow_seed(2, w, i) for w in ("out", "in") for i in range(3, 6))
    np.testing.assert_array_equal(more.features_out[:3], first.features_out)
    np.testing.assert_array_equal(more.seconds["in"][:3], first.seconds["in"])  # read back, not recomputed
    assert len(list((tmp_path / "audit_test").glob("*.pkl"))) == 12  # one entry per model
    calls.clear()
    again = run_game(factory, D_OUT, D_IN, n_per_world=6, batched=True, **kwargs)
    assert calls == []  # everything read back
    np.testing.assert_array_equal(again.features_in, more.features_in)
    reference = run_game(factory, D_OUT, D_IN, n_per_world=6, batched=False, cache_namespace=None, seed=2,
                         featurise=QueryFeaturiser())
    np.testing.assert_allclose(more.features_in, reference.features_in)


@pytest.mark.slow  # loky workers importing torch: ~20 s on 2 busy cores
def test_chunks_run_in_worker_processes():
    factory = PresetFactory("borealis", overrides={"num_teachers": 2, "max_iter": 2})
    if not factory.batched():
        pytest.skip("borealis has no batched step yet")
    kwargs = dict(n_per_world=4, n_synth_rows=5, featurise=QueryFeaturiser(), cache_namespace=None, seed=4)
    par = run_game(factory, D_OUT, D_IN, options=RunOptions(n_jobs=2), **kwargs)  # two chunks (one per world) on loky workers
    seq = run_game(factory, D_OUT, D_IN, options=RunOptions(n_jobs=1), batched=False, **kwargs)
    np.testing.assert_allclose(par.features_out, seq.features_out)
    np.testing.assert_allclose(par.features_in, seq.features_in)


def test_other_factories_keep_one_job_per_model(monkeypatch):
    calls = _spy_fit_many(monkeypatch)
    g = run_game(ReleaseFactory(), D_OUT, D_IN, n_per_world=3, featurise=QueryFeaturiser(), cache_namespace=None)
    assert calls == [] and g.n_per_world == 3
    assert not batching.uses_fit_many(ReleaseFactory(), True)
    assert not batching.uses_fit_many(PresetFactory("borealis"), False)


def test_split_chunks():
    a, b = list(range(5)), list(range(5, 10))
    assert split_chunks([a, b], chunk_size=200, n_jobs=2) == [a, b]
    assert split_chunks([a, b], chunk_size=200, n_jobs=4) == [[0, 1, 2], [3, 4], [5, 6, 7], [8, 9]]
    assert split_chunks([a, []], chunk_size=2, n_jobs=1) == [[0, 1], [2, 3], [4]]
    assert split_chunks([[], []], chunk_size=2, n_jobs=1) == []
    sizes = [len(c) for c in split_chunks([list(range(1000)), list(range(1000))], chunk_size=200, n_jobs=16)]
    assert len(sizes) == 16 and max(sizes) == 125  # every worker gets a chunk
    with pytest.raises(ValueError, match="chunk_size"):
        split_chunks([a], chunk_size=0, n_jobs=1)
    with pytest.raises(ValueError, match="chunk_size"):
        run_game(ReleaseFactory(), D_OUT, D_IN, n_per_world=2, featurise=QueryFeaturiser(), cache_namespace=None,
                 chunk_size=0)
