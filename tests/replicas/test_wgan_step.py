"""The one training step of original and turing (replicas/wgan.py): ``fit()`` runs it at R = 1,
bit for bit the upstream-shaped loop (tests/replicas/oracle_wgan.py), ``fit_many`` at R = 1 too;
callbacks see the networks current; a fit stopped mid-way resumes from its snapshot to the
numbers of the fit never stopped (replicas/checkpoint.py)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from pategan_audit.implementations import create, fit_many
from pategan_audit.replicas import checkpoint
from pategan_audit.replicas.wgan import WganStep

from ..implementations.conftest import CERVICAL, make_toy, toy_bounds
from .oracle_wgan import oracle_fit


@pytest.fixture(scope="module")
def toy() -> pd.DataFrame:
    return make_toy(100)


@pytest.fixture(scope="module")
def cervical() -> pd.DataFrame:
    return pd.read_csv(CERVICAL)


def state(model) -> dict[str, torch.Tensor]:
    """Every array training leaves in a model: networks, Adam state, training stream."""
    out = {f"G.{k}": v for k, v in model.G.state_dict().items()}
    out |= {f"D.{k}": v for k, v in model.D.state_dict().items()}
    for name in ("opt_G", "opt_D"):
        opt = getattr(model, name)
        for i, p in enumerate(opt.param_groups[0]["params"]):
            out |= {f"{name}.{i}.{k}": v for k, v in opt.state[p].items()}
    out["train_gen"] = model.train_gen.get_state()
    return out


def assert_bitwise(a, b) -> None:
    sa, sb = state(a), state(b)
    assert sa.keys() == sb.keys()
    differ = [k for k in sa if not torch.equal(sa[k], sb[k])]
    assert not differ, f"arrays differ: {differ}"
    assert a.trace.iterations == b.trace.iterations
    assert a.trace.teacher_rows == b.trace.teacher_rows
    np.testing.assert_array_equal(a.trace.extra["label_flips"], b.trace.extra["label_flips"])
    pd.testing.assert_frame_equal(a.sample(60, seed=4), b.sample(60, seed=4))


SETTINGS = {
    "original": {},
    "original-conditional-own": {"conditional": True, "critic_batch_source": "own_partition", "num_teachers": 3},
    "original-public-textbook": {"bounds": "public", "delta_mode": "textbook"},
    "original-released-paper": {"harness": False, "conditional": True, "hyperparameters": "paper", "batch_size": 32},
    "turing": {},
    "turing-own-truncate": {"critic_batch_source": "own_partition", "integer_decode": "truncate"},
    "turing-onehot-paper": {"label_encoding": "onehot", "hyperparameters": "paper"},
    "turing-released": {"harness": False, "integer_decode": "truncate", "batch_size": 32},
}


def _kw(case: str, toy: pd.DataFrame, max_iter: int) -> tuple[str, dict]:
    name, kw = case.split("-")[0], {**SETTINGS[case], "max_iter": max_iter}
    if kw.get("bounds") == "public":
        kw["public_bounds"] = toy_bounds(toy)
    return name, kw


@pytest.mark.parametrize("case", sorted(SETTINGS))
def test_fit_and_fit_many_at_one_replica_are_the_upstream_loop_bitwise(case, toy):
    name, kw = _kw(case, toy, 12)
    for seed in (0, 1):
        oracle = oracle_fit(create(name, seed=seed, **kw), toy, "y")
        single = create(name, seed=seed, **kw).fit(toy, label="y")
        [many] = fit_many(name, toy, seeds=[seed], label="y", **kw)
        assert_bitwise(single, oracle)
        assert_bitwise(many, oracle)
        assert many.trace.extra["batched"] is True


@pytest.mark.slow
@pytest.mark.parametrize("case", ["original", "original-conditional-own", "turing", "turing-onehot-paper"])
def test_sixty_iterations_on_cervical_bitwise(case, cervical):
    """Past the iterations where rounding differences first show (the batched kernels at R = 1
    moved the generator's first layer by 3e-9 within one step)."""
    name, kw = _kw(case, cervical, 60)
    label = cervical.columns[-1]
    for seed in (0, 1):
        oracle = oracle_fit(create(name, seed=seed, **kw), cervical, label)
        assert_bitwise(create(name, seed=seed, **kw).fit(cervical, label=label), oracle)


@pytest.mark.parametrize("name", ["original", "turing"])
def test_callbacks_see_the_current_networks(name, toy):
    """A callback (``cb(model, iteration)``, :mod:`pategan_audit.traces`) reads the model after
    every iteration: the same weights as the upstream loop's at that iteration."""
    def recorder(log):
        def cb(model, it):
            log.append((it, model.trace.iterations, [p.detach().clone() for p in [*model.G.parameters(), *model.D.parameters()]],
                        [v.clone() for opt in (model.opt_G, model.opt_D) for st in opt.state.values() for v in st.values()]))
        return cb

    runs = []
    for fit in (lambda m: oracle_fit(m, toy, "y"), lambda m: m.fit(toy, label="y")):
        log: list = []
        model = create(name, seed=3, max_iter=5)
        model.callbacks.append(recorder(log))
        fit(model)
        runs.append(log)
    oracle, single = runs
    assert [x[:2] for x in single] == [(i, i + 1) for i in range(5)] == [x[:2] for x in oracle]
    for (_, _, ws, adam_s), (_, _, wo, adam_o) in zip(single, oracle):
        assert len(ws) == len(wo) and all(torch.equal(a, b) for a, b in zip(ws, wo))
        assert len(adam_s) == len(adam_o) > 0 and all(torch.equal(a, b) for a, b in zip(adam_s, adam_o))


class Interrupted(Exception):
    pass


def _interrupt_at(monkeypatch, call: int) -> list[int]:
    """Make ``WganStep.iteration`` raise at its ``call``-th call (0-based; -1: never); returns the log."""
    calls: list[int] = []
    original = WganStep.iteration

    def iteration(self, it):
        calls.append(it)
        if len(calls) - 1 == call:
            raise Interrupted(f"stopped at iteration {it}")
        return original(self, it)

    monkeypatch.setattr(WganStep, "iteration", iteration)
    return calls


FITS = {
    "fit_many": lambda name, toy, **kw: fit_many(name, toy, seeds=[0, 1, 2], label="y", **kw),
    "fit_many-counter": lambda name, toy, **kw: fit_many(name, toy, seeds=[0, 1, 2], label="y", streams="counter", **kw),
    "fit": lambda name, toy, **kw: [create(name, seed=5, **kw).fit(toy, label="y")],
}


@pytest.mark.parametrize("large", [False, True], ids=["stored", "rebuilt"])
@pytest.mark.parametrize("how", sorted(FITS))
@pytest.mark.parametrize("name", ["original", "turing"])
def test_a_stopped_fit_resumes_to_the_same_numbers(name, how, large, toy, tmp_path, monkeypatch):
    """``stored``: the snapshot holds every array; ``rebuilt``: arrays of 64 bytes or more that
    training has not changed (the data) are rebuilt by the resumed fit, not stored."""
    monkeypatch.setattr(checkpoint, "LARGE_BYTES", 64 if large else 1 << 62)
    kw = {"max_iter": 7, "num_teachers": 2}
    if name == "original":
        kw |= {"conditional": True, "critic_batch_source": "own_partition"}
    straight = FITS[how](name, toy, **kw)
    with monkeypatch.context() as patch:
        _interrupt_at(patch, call=3)
        with pytest.raises(Interrupted), checkpoint.checkpointing(tmp_path, every=0):
            FITS[how](name, toy, **kw)
    assert (tmp_path / "group0.pkl").exists()
    calls = _interrupt_at(monkeypatch, call=-1)
    with checkpoint.checkpointing(tmp_path, every=0) as ckpt:
        resumed = FITS[how](name, toy, **kw)
    assert ckpt.resumed == [(0, 3)]  # iterations 0-2 came from the snapshot
    assert calls == [3, 4, 5, 6]
    for a, b in zip(resumed, straight, strict=True):
        assert_bitwise(a, b)
        assert a.fitted_ and a.trace.extra.get("streams") == b.trace.extra.get("streams")


def test_a_finished_fit_is_read_not_trained(toy, tmp_path, monkeypatch):
    with checkpoint.checkpointing(tmp_path, every=1e9):  # no snapshot mid-fit, one at the end
        first = create("turing", seed=2, max_iter=4).fit(toy)
    calls = _interrupt_at(monkeypatch, call=-1)
    with checkpoint.checkpointing(tmp_path, every=1e9) as ckpt:
        again = create("turing", seed=2, max_iter=4).fit(toy)
    assert calls == [] and ckpt.resumed == [(0, 4)]
    assert_bitwise(again, first)


def test_without_a_snapshot_a_stopped_fit_starts_again(toy, tmp_path, monkeypatch):
    with monkeypatch.context() as patch:
        _interrupt_at(patch, call=2)
        with pytest.raises(Interrupted), checkpoint.checkpointing(tmp_path, every=1e9):
            create("original", seed=0, max_iter=5).fit(toy)
    assert not (tmp_path / "group0.pkl").exists()  # the interval had not passed
    calls = _interrupt_at(monkeypatch, call=-1)
    create("original", seed=0, max_iter=5).fit(toy)
    assert calls == [0, 1, 2, 3, 4]
