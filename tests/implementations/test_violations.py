"""The violation catalogue (implementations.violations) and the registry (implementations.registry)."""
from __future__ import annotations

import dataclasses
import importlib.util
from collections import Counter

import pytest

from pategan_audit import implementations
from pategan_audit.implementations import (
    BY_ID,
    PRESETS,
    VIOLATIONS,
    all_fixed_overrides,
    create,
    fix_overrides,
    get_config_class,
    released_overrides,
    violations_for,
)


def _available(name):
    return importlib.util.find_spec(f"pategan_audit.implementations.{name}") is not None


def test_table2_counts():
    """Table 2 (TMLR): privacy violations 6/3/3/4/2/1 = 19, other bugs 5 (spec §10.1)."""
    privacy = Counter(i for v in VIOLATIONS if v.kind == "privacy" for i in v.implementations)
    bugs = Counter(i for v in VIOLATIONS if v.kind == "bug" for i in v.implementations)
    assert dict(privacy) == {"original": 6, "updated": 3, "synthcity": 3, "turing": 4, "borealis": 2, "smartnoise": 1}
    assert sum(privacy.values()) == 19 and sum(bugs.values()) == 5
    assert [v.id for v in VIOLATIONS if v.kind != "finding"] == [f"V{i}" for i in range(1, 20)] + [f"B{i}" for i in range(1, 6)]
    assert [v.id for v in VIOLATIONS if v.kind == "finding"] == [f"O{i}" for i in range(1, 12)]


@pytest.mark.parametrize("entry", [v for v in VIOLATIONS if v.field is not None], ids=lambda v: v.id)
def test_every_switch_is_a_config_field_accepting_both_values(entry):
    for name in entry.implementations:
        if not _available(name):
            pytest.skip(f"implementations/{name}.py not written yet")
        cls = get_config_class(name)
        fields = {f.name: f for f in dataclasses.fields(cls)}
        assert entry.field in fields, (name, entry.field)
        assert getattr(cls(), entry.field) in (entry.violating, entry.fixed)  # the default is one of the two
        extra = {"public_bounds": {"a": (0.0, 1.0)}} if entry.field == "bounds" else {}
        cls(**{entry.field: entry.violating, **extra})
        if entry.fixed is not None:
            cls(**{entry.field: entry.fixed, **extra, **entry.also})


def test_fix_overrides_and_errors():
    assert fix_overrides("updated", ["V4", "V15"]) == {"partition": "disjoint", "laplace_scale_convention": "inverse_lambda"}
    assert fix_overrides("borealis", ["O9"]) == {"vote_mechanism": "two_noise_argmax", "stopping": "safe"}
    with pytest.raises(ValueError, match="unknown catalogue id"):
        fix_overrides("updated", ["V99"])
    with pytest.raises(ValueError, match="does not apply"):
        fix_overrides("updated", ["V5"])
    with pytest.raises(ValueError, match="corrected"):
        fix_overrides("original", ["V1"])


@pytest.mark.parametrize("name", ["updated", "synthcity", "borealis", "smartnoise"])
def test_all_fixed_overrides_build_a_valid_config(name):
    overrides = all_fixed_overrides(name, include_findings=True)
    if overrides.get("bounds") == "public":
        overrides["public_bounds"] = {"a": (0.0, 1.0)}
    model = create(name, **overrides)
    for v in violations_for(name, kinds=("privacy", "bug")):
        if v.switchable:
            assert getattr(model.config, v.field) == v.fixed


def test_released_overrides_are_valid_settings():
    for name in ("updated", "synthcity", "borealis", "smartnoise"):
        overrides = released_overrides(name)
        assert overrides["harness"] is False
        create(name, **{k: v for k, v in overrides.items() if k != "delta"})
    assert implementations.as_frame().shape[0] == len(BY_ID) == 35


def test_registry_names_and_errors():
    assert PRESETS == ("original", "updated", "synthcity", "turing", "borealis", "smartnoise", "corrected")
    with pytest.raises(ValueError, match="valid settings are"):
        create("borealis", lambda_=1.0)
    m = create("borealis", 2.0, 1e-6, 4, max_iter=1)
    assert (m.config.epsilon, m.config.delta, m.config.seed, m.config.max_iter) == (2.0, 1e-6, 4, 1)


def test_public_names_importable():
    for name in implementations.__all__:
        assert hasattr(implementations, name)
    import pategan_audit.components as components

    for name in components.__all__:
        assert hasattr(components, name)
