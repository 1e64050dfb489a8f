"""benchmarks/replicas_device.py (the replica axis on an accelerator), run on the CPU against
itself: the agreement check compares real parameters, and a failing family is recorded, not fatal."""
import importlib.util
import json
from pathlib import Path

import pytest

_DIR = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def rd():
    spec = importlib.util.spec_from_file_location("replicas_device", _DIR / "replicas_device.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # it puts benchmarks/ on sys.path itself for many_models' workload
    return module


def test_cpu_against_itself_agrees_exactly_and_writes_every_row(rd, tmp_path):
    out = tmp_path / "rd.json"
    doc = rd.main(["--device", "cpu", "--presets", "original", "--agreement-presets", "original", "smartnoise",
                   "--replicas", "2", "3", "--cpu-replicas", "2", "--iterations", "2", "--out", str(out)])
    assert json.loads(out.read_text()) == doc
    assert [a["preset"] for a in doc["agreement"]] == ["original", "smartnoise"]
    assert all(a["max_rel_param_diff"] == 0.0 and a["same_iterations"] and a["batched"] for a in doc["agreement"])
    assert [(r["device"], r["replicas"]) for r in doc["rows"]] == [("cpu", 2), ("cpu", 2), ("cpu", 3)]
    assert all(r["seconds_per_model"] > 0 for r in doc["rows"])


def test_parameters_differ_when_the_networks_differ(rd):
    from pategan_audit.implementations import fit_many

    data, kwargs, label = rd.workload("groundhog", "original")
    a, b = fit_many("original", data, seeds=[0, 1], label=label, **{**kwargs, "max_iter": 2})
    pa, pb = rd._parameters(a), rd._parameters(b)
    assert pa.shape == pb.shape and pa.size > 1000 and (pa != pb).any()


def test_a_family_that_fails_is_recorded_and_skipped(rd, tmp_path, monkeypatch):
    def broken(preset, device, **kw):
        raise TypeError("can't convert cuda:0 device type tensor to numpy")

    monkeypatch.setattr(rd, "agreement", broken)
    doc = rd.main(["--device", "cpu", "--presets", "original", "--replicas", "2", "--cpu-replicas", "2",
                   "--iterations", "2", "--out", str(tmp_path / "rd.json")])
    assert doc["agreement"] == [{"preset": "original", "error": "TypeError: can't convert cuda:0 device type tensor to numpy"}]
    assert doc["rows"] == []  # no timing of a family that does not run there
