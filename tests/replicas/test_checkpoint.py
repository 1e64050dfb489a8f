"""Snapshots of batched fits (replicas/checkpoint.py): a fit stopped and resumed equals one never stopped."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from pategan_audit import runner
from pategan_audit.implementations import fit_many
from pategan_audit.replicas import checkpoint
from pategan_audit.replicas.gnmax import GNMaxStep
from pategan_audit.replicas.neural import NeuralStep
from pategan_audit.replicas.synthcity import SynthcityStep
from pategan_audit.replicas.updated import UpdatedStep

from ..implementations.conftest import make_toy, toy_bounds

STEPS = {"borealis": NeuralStep, "synthcity": SynthcityStep, "updated": UpdatedStep, "gnmax": GNMaxStep}
# a large ε so that the cap (not the budget) ends these short fits, past the interruption
KW = dict(epsilon=50.0, num_teachers=2, max_iter=6, label="y")


@pytest.fixture(scope="module")
def toy() -> pd.DataFrame:
    return make_toy(60)


class Interrupted(Exception):
    pass


def _interrupt_at(monkeypatch, step_cls, call: int) -> list[int]:
    """Make ``step_cls.iteration`` raise at its ``call``-th call (0-based); returns the call log."""
    calls: list[int] = []
    original = step_cls.iteration

    def iteration(self, it, active):
        calls.append(it)
        if len(calls) - 1 == call:
            raise Interrupted(f"stopped at iteration {it}")
        return original(self, it, active)

    monkeypatch.setattr(step_cls, "iteration", iteration)
    return calls


def _count_calls(monkeypatch, step_cls) -> list[int]:
    return _interrupt_at(monkeypatch, step_cls, call=-1)


def _count_references(monkeypatch) -> list[str]:
    """Log the kind of each object a snapshot refers to instead of storing it ("replica", "base")."""
    kinds: list[str] = []
    original = checkpoint._Unpickler.persistent_load

    def persistent_load(self, pid):
        kinds.append(pid[0])
        return original(self, pid)

    monkeypatch.setattr(checkpoint._Unpickler, "persistent_load", persistent_load)
    return kinds


def assert_same_models(a, b) -> None:
    for x, y in zip(a, b):
        assert x.trace.iterations == y.trace.iterations
        np.testing.assert_array_equal(np.asarray(x.trace.eps_hat), np.asarray(y.trace.eps_hat))
        assert x.accountant.num_queries == y.accountant.num_queries
        pd.testing.assert_frame_equal(x.sample(40, seed=3), y.sample(40, seed=3))
        assert torch.equal(x.train_gen.get_state(), y.train_gen.get_state())
        assert torch.equal(x.noise_gen.get_state(), y.noise_gen.get_state())
        nets = [(name, net) for name, net in vars(x).items() if isinstance(net, torch.nn.Module)]
        assert nets
        for name, net in nets:  # bitwise: the same batched computation, resumed
            other = getattr(y, name).state_dict()
            for key, value in net.state_dict().items():
                assert torch.equal(value, other[key]), f"{name}.{key}"


@pytest.mark.parametrize("large", [False, True], ids=["stored", "rebuilt"])
@pytest.mark.parametrize("name", sorted(STEPS))
def test_a_stopped_fit_resumes_to_the_same_numbers(name, large, toy, tmp_path, monkeypatch):
    """``stored``: the snapshot holds every array; ``rebuilt``: every array of 64 bytes or more
    that training has not changed (the data, the partitions) is left out of the snapshot and
    rebuilt by the resumed fit, as MNIST's data is."""
    monkeypatch.setattr(checkpoint, "LARGE_BYTES", 64 if large else 1 << 62)
    # gnmax plans its iterations from its query budget: 12 queries, 2 per iteration
    gnmax = dict(public_bounds=toy_bounds(toy), planned_queries=12, query_batch=2, generator_steps=6)
    kw = {**KW, **(gnmax if name == "gnmax" else {})}
    straight = fit_many(name, toy, seeds=[0, 1, 2], **kw)
    with monkeypatch.context() as patch:
        _interrupt_at(patch, STEPS[name], call=3)
        with pytest.raises(Interrupted), checkpoint.checkpointing(tmp_path, every=0):
            fit_many(name, toy, seeds=[0, 1, 2], **kw)
    assert (tmp_path / "group0.pkl").exists()
    calls = _count_calls(monkeypatch, STEPS[name])
    loaded = _count_references(monkeypatch)
    with checkpoint.checkpointing(tmp_path, every=0) as ckpt:
        resumed = fit_many(name, toy, seeds=[0, 1, 2], **kw)
    assert ckpt.resumed == [(0, 3)]  # iterations 0-2 came from the snapshot
    assert calls[0] == 3 and len(calls) == straight[0].trace.iterations - 3
    assert ckpt.prior_seconds > 0
    assert_same_models(resumed, straight)
    assert (loaded.count("base") > 0) == large and loaded.count("replica") > 0


def test_a_finished_group_is_read_not_trained(toy, tmp_path, monkeypatch):
    with checkpoint.checkpointing(tmp_path, every=1e9):  # no snapshot mid-fit, one at the end
        first = fit_many("borealis", toy, seeds=[4, 5], **KW)
    calls = _count_calls(monkeypatch, NeuralStep)
    seen: list[int] = []
    with checkpoint.checkpointing(tmp_path, every=1e9) as ckpt:
        again = fit_many("borealis", toy, seeds=[4, 5], progress=seen.append, **KW)
    assert calls == [] and ckpt.resumed == [(0, first[0].trace.iterations)]
    assert seen == [1, 2]  # progress still counts every model
    assert all(m.fitted_ for m in again)
    assert_same_models(again, first)


def test_without_snapshots_nothing_is_written_and_early_stops_restart(toy, tmp_path, monkeypatch):
    with monkeypatch.context() as patch:
        _interrupt_at(patch, NeuralStep, call=3)
        with pytest.raises(Interrupted), checkpoint.checkpointing(tmp_path, every=1e9):
            fit_many("borealis", toy, seeds=[0], **KW)
    assert not (tmp_path / "group0.pkl").exists()  # the interval had not passed: a restart begins at 0
    fit_many("borealis", toy, seeds=[0], **KW)
    assert checkpoint.current() is None


def test_a_snapshot_of_another_fit_is_refused(toy, tmp_path):
    with checkpoint.checkpointing(tmp_path, every=0):
        fit_many("borealis", toy, seeds=[0, 1], **KW)
    with pytest.raises(ValueError, match="belongs to another fit.*delete"), checkpoint.checkpointing(tmp_path):
        fit_many("borealis", toy, seeds=[0, 2], **KW)


def test_each_group_has_its_own_snapshot(toy, tmp_path):
    with checkpoint.checkpointing(tmp_path, every=0) as ckpt:
        fit_many("smartnoise", toy, seeds=[0, 1, 2], max_replicas=2, **KW)
    assert ckpt.groups == 2 and sorted(p.name for p in tmp_path.iterdir()) == ["group0.pkl", "group1.pkl"]


def test_the_interval_comes_from_the_run_options():
    variable = runner.ENV["checkpoint_seconds"]
    assert checkpoint.default_every() == 600.0
    with runner.using(runner.RunOptions.from_env({variable: "30"})):
        assert checkpoint.default_every() == 30.0
    for bad in ("soon", "-1"):
        with pytest.raises(ValueError, match=variable):
            runner.RunOptions.from_env({variable: bad})


def test_a_snapshot_of_other_data_is_refused(toy, tmp_path):
    with checkpoint.checkpointing(tmp_path, every=0):
        fit_many("borealis", toy, seeds=[0, 1], **KW)
    other = toy.assign(x1=toy["x1"] + 1.0)
    with pytest.raises(ValueError, match="belongs to another fit"), checkpoint.checkpointing(tmp_path):
        fit_many("borealis", other, seeds=[0, 1], **KW)


def test_a_snapshot_of_older_code_is_set_aside(toy, tmp_path, monkeypatch):
    with checkpoint.checkpointing(tmp_path, every=0):
        first = fit_many("borealis", toy, seeds=[0, 1], **KW)
    monkeypatch.setattr(checkpoint.runner, "source_hash", lambda: "another")
    calls = _count_calls(monkeypatch, NeuralStep)
    with pytest.warns(UserWarning, match="another version of the code.*commit.*git worktree add"), \
            checkpoint.checkpointing(tmp_path) as ckpt:
        again = fit_many("borealis", toy, seeds=[0, 1], **KW)
    assert ckpt.resumed == [] and len(calls) == first[0].trace.iterations
    assert_same_models(again, first)


class _Model:
    def __init__(self, **state):
        self.config = "a config"
        self.__dict__.update(state)


def test_views_are_seen_and_such_a_state_is_not_snapshotted(tmp_path):
    """A pickle stores a tensor and a view of it apart (a write to one would no longer reach the
    other after resuming), so a state holding both takes no snapshots; a parameter and the
    ``.data`` alias that pickling itself makes are the same view and do not count."""
    base = torch.zeros(10)
    alone = checkpoint.Checkpointing(tmp_path / "a", 0).open_group()
    alone.begin([_Model(w=torch.nn.Parameter(torch.zeros(3)), x=base)], step=None)
    alone.save(alone_models := [_Model(w=torch.nn.Parameter(torch.zeros(3)), x=base)])
    assert alone.path.exists()
    for models in ([_Model(x=base, v=base[2:5])], [_Model(x=base.numpy(), t=base)]):
        slot = checkpoint.Checkpointing(tmp_path / "b", 0).open_group()
        with pytest.warns(UserWarning, match="no snapshots.*share memory"):
            slot.begin(models, step=None)
        slot.save(models)
        assert not slot.due() and not slot.path.exists()
    later = checkpoint.Checkpointing(tmp_path / "c", 0).open_group()  # views that appear mid-fit
    later.begin(alone_models, step=None)
    alone_models[0].v = alone_models[0].x[1:4]
    with pytest.warns(UserWarning, match="came to hold arrays that share memory"):
        later.save(alone_models)
    assert not later.path.exists() and not later.due()


def test_a_snapshot_resumes_only_under_the_same_denormal_setting(toy, tmp_path):
    with checkpoint.checkpointing(tmp_path, every=0):
        fit_many("borealis", toy, seeds=[0], **KW)
    with pytest.raises(ValueError, match=rf"\${runner.ENV['flush_denormal']}=0; set it the same"), \
            runner.using(runner.RunOptions(flush_denormal=True)), checkpoint.checkpointing(tmp_path):
        fit_many("borealis", toy, seeds=[0], **KW)
