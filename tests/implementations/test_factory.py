"""make_generator / PresetFactory (:mod:`pategan_audit.implementations.factory`): the
public-bounds rule applied once, and the factory's picklable, key-stable description."""
from __future__ import annotations

import pickle

import pytest

from pategan_audit.implementations import create
from pategan_audit.implementations.factory import PresetFactory, make_generator, with_public_bounds

from .conftest import make_toy

BOUNDS = {"x1": (-5.0, 5.0), "x2": (0.0, 10.0), "count": (0.0, 50.0), "flag": (0.0, 1.0), "y": (0.0, 1.0)}


def test_public_bounds_go_to_presets_that_take_public_bounds():
    # corrected takes public bounds by default: it gets the dataset's
    assert with_public_bounds("corrected", {}, BOUNDS) == {"public_bounds": BOUNDS}
    # a preset reading bounds from the data gets none, unless switched to public bounds (V10-V13 fixed)
    assert with_public_bounds("updated", {"lam": 1e-3}, BOUNDS) == {"lam": 1e-3}
    assert with_public_bounds("original", {"bounds": "public"}, BOUNDS) == {"bounds": "public", "public_bounds": BOUNDS}
    # given bounds win; corrected switched to... no bounds given at all: unchanged
    mine = {"x1": (0.0, 1.0)}
    assert with_public_bounds("corrected", {"public_bounds": mine}, BOUNDS) == {"public_bounds": mine}
    assert with_public_bounds("corrected", {"lam": 1.0}, None) == {"lam": 1.0}
    overrides = {"bounds": "public"}
    with_public_bounds("updated", overrides, BOUNDS)
    assert overrides == {"bounds": "public"}  # never modified in place


def test_make_generator_applies_the_rule_once():
    model = make_generator("corrected", epsilon=2.0, delta=1e-6, seed=3, overrides={"max_iter": 1}, public_bounds=BOUNDS)
    assert model.config.public_bounds == BOUNDS and model.config.epsilon == 2.0 and model.config.delta == 1e-6
    plain = make_generator("updated", seed=0, overrides={"max_iter": 1}, public_bounds=BOUNDS)
    assert plain.config.public_bounds is None and plain.config.bounds == "data"
    assert make_generator("borealis", seed=1).config == create("borealis", seed=1).config


def test_preset_factory_for_data_and_its_models():
    f = PresetFactory.for_data("corrected", epsilon=1.0, overrides={"num_teachers": 2, "max_iter": 1}, public_bounds=BOUNDS)
    assert f.overrides == {"num_teachers": 2, "max_iter": 1, "public_bounds": BOUNDS}
    model = f(5)
    assert model.config.record is False and model.config.seed == 5 and model.config.public_bounds == BOUNDS
    assert PresetFactory("borealis", overrides={"record": True})(0).config.record is True
    assert pickle.loads(pickle.dumps(f)) == f


def test_fit_many_takes_one_table_or_one_per_seed():
    toy = make_toy(60)
    f = PresetFactory("borealis", overrides={"num_teachers": 2, "max_iter": 1})
    shared = f.fit_many(toy, [0, 1], label="y")
    per_seed = f.fit_many([toy, toy.iloc[:50]], [0, 1], label="y")
    assert len(shared) == len(per_seed) == 2 and all(m.fitted_ for m in shared + per_seed)
    assert isinstance(f.batched(), bool)


def test_the_old_homes_are_the_same_class():
    from pategan_audit.auditing import PresetFactory as audit_factory
    from pategan_audit.auditing.settings import PresetFactory as settings_factory

    assert audit_factory is settings_factory is PresetFactory
    with pytest.raises(ValueError, match="unknown implementation"):
        PresetFactory("nope")(0)
