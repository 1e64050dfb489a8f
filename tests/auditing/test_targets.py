"""GroundHog target selection (protocols spec D.3)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest

from pategan_audit import datasets
from pategan_audit.runner import RunOptions
from pategan_audit.auditing.targets import critic_score, rank_candidates, select_target, vulnerability_distances


@pytest.fixture(scope="module")
def cervical():
    return datasets.load("cervical_cancer").train


def test_distance_ranking_reproduces_reference(cervical):
    # protocols spec D.3 reference [rec, own]: top distances and the 64th
    ranked = rank_candidates(cervical, n_candidates=64)
    assert ranked["row"].tolist()[:5] == [397, 100, 155, 634, 374]
    np.testing.assert_allclose(ranked["distance"].to_numpy()[:5], [2.0809, 1.9477, 1.8336, 1.8334, 1.7716], atol=5e-5)
    assert ranked["distance"].iloc[63] == pytest.approx(1.0855, abs=5e-5)
    assert len(ranked) == 64


def test_target_is_unique_maximum_of_two_columns(cervical):
    # D.3: row 397 is the unique maximum of STDs_number (4) and STDs_N_diagnosis (3)
    for col, value in (("STDs_number", 4), ("STDs_N_diagnosis", 3)):
        assert cervical[col].iloc[397] == value
        assert (cervical[col].drop(index=397) < value).all()


def test_distances_by_hand():
    df = pd.DataFrame({"x": [0.0, 1.0, 2.0, 10.0]})  # scaled: 0, .1, .2, 1
    d = vulnerability_distances(df, k=2)
    np.testing.assert_allclose(d, [0.15, 0.1, 0.15, 0.85])
    with pytest.raises(ValueError, match="more than k"):
        vulnerability_distances(df, k=4)


@dataclass
class MemorisingCritic:
    """Fake white-box generator: its critic scores a row 1 + noise if the row was in its
    training data and noise otherwise -- but only for the row it is told to memorise."""

    seed: int
    memorised: int
    reference: pd.DataFrame
    _rows: set = field(default_factory=set)

    def fit(self, df, label=None):
        self._rows = {tuple(r) for r in df.itertuples(index=False)}
        return self

    def critic_score(self, rows: pd.DataFrame) -> np.ndarray:
        rng = np.random.default_rng(self.seed)
        is_memorised = rows.equals(self.reference.iloc[[self.memorised]])
        seen = tuple(rows.iloc[0]) in self._rows
        return np.array([float(seen and is_memorised) + rng.normal(scale=0.1)])


@dataclass(frozen=True)
class MemorisingFactory:
    memorised: int
    reference: pd.DataFrame

    def __call__(self, seed):
        return MemorisingCritic(seed, self.memorised, self.reference)


def test_select_target_picks_the_candidate_with_the_highest_auc():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.integers(0, 4, size=(60, 4)).astype(float), columns=list("abcd"))
    ranked = rank_candidates(df, n_candidates=3)
    memorised = int(ranked["row"].iloc[1])  # not the most isolated one
    sel = select_target(df, MemorisingFactory(memorised, df), n_candidates=3, n_models=6, cache_namespace=None)
    assert sel.target == memorised and sel.target_auc == 1.0
    assert sel.candidates["row"].tolist() == ranked["row"].tolist()
    others = sel.candidates[sel.candidates["row"] != memorised]
    assert (others["auc"] < 1.0).all()
    assert {"out_mean", "in_mean", "auc", "distance"} <= set(sel.candidates.columns)


def test_critic_score_needs_the_white_box_hook():
    class NoHook:
        pass

    with pytest.raises(AttributeError, match="critic_score"):
        critic_score(NoHook(), pd.DataFrame({"a": [1]}))


def test_batched_mini_mias_equal_the_per_model_ones(tmp_path, monkeypatch):
    from pategan_audit.auditing.settings import PresetFactory

    rng = np.random.default_rng(1)
    df = pd.DataFrame(rng.integers(0, 3, size=(24, 3)), columns=list("abc"))
    factory = PresetFactory("original", overrides={"num_teachers": 2, "max_iter": 2})
    if not factory.batched():
        pytest.skip("original has no batched step yet")
    calls = []
    fit_many = PresetFactory.fit_many

    def spy(self, frames, seeds, *, label=None):
        calls.append(len(seeds))
        return fit_many(self, frames, seeds, label=label)

    monkeypatch.setattr(PresetFactory, "fit_many", spy)
    kwargs = dict(n_candidates=2, n_models=3, seed=3)
    per_model = select_target(df, factory, batched=False, cache_namespace=None, **kwargs)
    assert calls == []
    batched = select_target(df, factory, options=RunOptions(n_jobs=1, cache_dir=tmp_path), **kwargs)
    assert calls == [3, 3, 3, 3]  # one fit_many per (candidate, world)
    cols = ["out_mean", "in_mean", "auc"]
    np.testing.assert_allclose(batched.candidates[cols], per_model.candidates[cols], rtol=1e-5, atol=1e-6)
    assert len(list((tmp_path / "audit_targets").glob("*.pkl"))) == 2 * 2 * 3  # one score per model
    again = select_target(df, factory, options=RunOptions(n_jobs=1, cache_dir=tmp_path), **kwargs)
    assert len(calls) == 4  # read back from the per-model entries
    pd.testing.assert_frame_equal(again.candidates, batched.candidates)
