"""The fit_many API (implementations/many.py): input checks, chunking, fallback, progress."""
from __future__ import annotations

import numpy as np
import pytest

from pategan_audit.implementations import BATCHED, batched_support, fit_many
from pategan_audit.implementations import many

from ..implementations.conftest import make_toy

KW = dict(num_teachers=2, max_iter=2, label="y")


@pytest.fixture(scope="module")
def toy():
    return make_toy(60)


def test_bad_inputs_name_the_problem(toy):
    with pytest.raises(ValueError, match="seeds is empty"):
        fit_many("borealis", toy, seeds=[], **KW)
    with pytest.raises(TypeError, match="sequence of integers"):
        fit_many("borealis", toy, seeds=3, **KW)
    with pytest.raises(TypeError, match="must be an integer"):
        fit_many("borealis", toy, seeds=[0, 1.5], **KW)
    with pytest.raises(ValueError, match="one table per seed"):
        fit_many("borealis", [toy, toy], seeds=[0, 1, 2], **KW)
    with pytest.raises(TypeError, match="not a pandas DataFrame"):
        fit_many("borealis", [toy, toy.to_numpy()], seeds=[0, 1], **KW)
    with pytest.raises(ValueError, match="max_replicas"):
        fit_many("borealis", toy, seeds=[0], max_replicas=0, **KW)
    with pytest.raises(ValueError, match="unknown implementation"):
        fit_many("nope", toy, seeds=[0], **KW)
    with pytest.raises(ValueError, match="unknown setting"):
        fit_many("borealis", toy, seeds=[0], not_a_switch=1, **KW)


def test_chunking_does_not_change_results(toy):
    """Chunks of two or more replicas give the numbers of the whole group; a chunk of one is a
    single fit, whose own numbers (``create(...).fit``) differ from a stacked replica's at the
    rounding level (``test_neural_one_step.py``)."""
    whole = fit_many("smartnoise", toy, seeds=range(5), **KW)
    chunked = fit_many("smartnoise", toy, seeds=range(5), max_replicas=3, **KW)
    for a, b in zip(whole, chunked):
        np.testing.assert_array_equal(a.sample(10).to_numpy(), b.sample(10).to_numpy())
        assert a.trace.eps_hat == b.trace.eps_hat


def test_sequential_path_and_progress(toy):
    seen = []
    models = fit_many("borealis", toy, seeds=[5, 6, 7], batched=False, progress=seen.append, **KW)
    assert seen == [1, 2, 3]
    assert [m.trace.extra["batched"] for m in models] == [False] * 3
    assert all(m.fitted_ for m in models)
    seen.clear()
    fit_many("borealis", toy, seeds=[5, 6, 7], max_replicas=2, progress=seen.append, **KW)
    assert seen == [1, 2, 3]


def test_a_preset_without_a_batched_step_falls_back(toy, monkeypatch):
    monkeypatch.setitem(BATCHED, "borealis", "")
    assert not batched_support("borealis")
    models = fit_many("borealis", toy, seeds=[0, 1], **KW)
    assert [m.trace.extra["batched"] for m in models] == [False, False]


def test_default_chunk_size_is_bounded():
    assert 1 <= many.default_max_replicas() <= 512
    assert many.default_max_replicas(1 << 60) == 1


def test_device_comes_from_the_argument_then_the_run_options(toy):
    import torch

    from pategan_audit import runner

    assert many.resolve_device() == torch.device("cpu")
    with pytest.raises(ValueError, match=r"\$PATEGAN_AUDIT_DEVICE='meta-nonsense' is not a torch device"):
        runner.RunOptions.from_env({"PATEGAN_AUDIT_DEVICE": "meta-nonsense"})
    with pytest.raises(ValueError, match=r"device='meta-nonsense' is not a torch device"):
        runner.RunOptions(device="meta-nonsense")
    with runner.using(runner.RunOptions(device="meta")):
        assert many.resolve_device() == torch.device("meta")
        assert many.resolve_device("cpu") == torch.device("cpu")  # the argument wins over the options
    with runner.using(runner.RunOptions.from_env({"PATEGAN_AUDIT_DEVICE": "cpu"})):
        a = fit_many("borealis", toy, seeds=[0, 1], **KW)
    b = fit_many("borealis", toy, seeds=[0, 1], device="cpu", **KW)
    assert [m.sample(5, seed=0).equals(n.sample(5, seed=0)) for m, n in zip(a, b)] == [True, True]


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="this machine has CUDA")
def test_cuda_without_cuda_is_an_error_naming_the_fix(toy):
    with pytest.raises(ValueError, match="asks for CUDA.*use 'cpu'"):
        fit_many("borealis", toy, seeds=[0], device="cuda", **KW)


def test_flushing_denormals_is_opt_in_recorded_and_undone(toy):
    """``RunOptions(flush_denormal=True)`` (``$PATEGAN_AUDIT_FLUSH_DENORMAL=1`` at an entry point)
    trains with denormal floats flushed to zero (a CPU speed setting, off by default); each model
    records it, and it is undone after the fit."""
    import torch

    from pategan_audit import runner
    from pategan_audit.implementations.base import training_threads

    variable = runner.ENV["flush_denormal"]
    tiny = torch.tensor([1e-39], dtype=torch.float32)  # a denormal: below float32's smallest normal
    assert [m.trace.extra["flush_denormal"] for m in fit_many("borealis", toy, seeds=[0], **KW)] == [False]
    with runner.using(runner.RunOptions.from_env({variable: "1"})):
        with training_threads():
            assert (tiny * 0.5).item() == 0.0
        assert (tiny * 0.5).item() > 0.0
        assert [m.trace.extra["flush_denormal"] for m in fit_many("borealis", toy, seeds=[0], **KW)] == [True]
        assert (tiny * 0.5).item() > 0.0
    with pytest.raises(ValueError, match=variable):
        runner.RunOptions.from_env({variable: "sometimes"})
