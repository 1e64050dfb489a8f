"""Checks shared by the counter-stream tests of several families (tests/replicas/test_streams_*.py)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pategan_audit.implementations import fit_many
from pategan_audit.replicas import checkpoint


def assert_counter_fit_resumes(name: str, step_cls: type, data: pd.DataFrame, seeds: list[int], kw: dict,
                               tmp_path, monkeypatch) -> None:
    """A counter-mode fit of ``name`` stopped one iteration after its first replica stopped and
    resumed from the snapshot equals one never stopped (the draws depend only on the iteration and
    the live replicas' keys, which the snapshot's step holds); a snapshot of the default streams
    is another fit and is refused."""
    straight = fit_many(name, data, seeds=seeds, streams="counter", **kw)
    its = [m.trace.iterations for m in straight]
    stop_at = min(its) + 1  # a replica was dropped before the stop: the resumed step holds the live ones' keys
    assert stop_at < max(its)
    original, calls = step_cls.iteration, []

    class Stopped(Exception):
        pass

    def iteration(self, it, active):
        calls.append(it)
        if len(calls) == stop_at + 1:
            raise Stopped(f"stopped at iteration {it}")
        return original(self, it, active)

    with monkeypatch.context() as patch:
        patch.setattr(step_cls, "iteration", iteration)
        with pytest.raises(Stopped), checkpoint.checkpointing(tmp_path / "a", every=0):
            fit_many(name, data, seeds=seeds, streams="counter", **kw)
    with checkpoint.checkpointing(tmp_path / "a", every=0) as ckpt:
        resumed = fit_many(name, data, seeds=seeds, streams="counter", **kw)
    assert ckpt.resumed == [(0, stop_at)]
    for a, b in zip(resumed, straight):
        assert a.trace.iterations == b.trace.iterations
        np.testing.assert_array_equal(np.asarray(a.trace.eps_hat), np.asarray(b.trace.eps_hat))
        for key in ("votes", "noise", "labels"):
            for p, q in zip(getattr(a.trace, key), getattr(b.trace, key), strict=True):
                np.testing.assert_array_equal(p, q)
        pd.testing.assert_frame_equal(a.sample(40, seed=3), b.sample(40, seed=3))
    with checkpoint.checkpointing(tmp_path / "b", every=0):
        fit_many(name, data, seeds=seeds, **kw)
    with pytest.raises(ValueError, match="belongs to another fit"), checkpoint.checkpointing(tmp_path / "b"):
        fit_many(name, data, seeds=seeds, streams="counter", **kw)
