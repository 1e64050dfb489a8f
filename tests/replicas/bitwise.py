"""Bit-for-bit comparison of two fitted models' states, shared by the one-step tests (a preset's
fit against the single-fit loop it replaced, ``oracle_*.py``): each test builds the state dict of
its family (``model_state``) and compares it here."""
from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd
import pytest
import torch

from pategan_audit.replicas import checkpoint


def optimizer_state(prefix: str, opt: torch.optim.Optimizer) -> dict:
    """Every tensor of an optimiser's state, keyed ``prefix.param_index.name``."""
    out = {}
    for i, st in opt.state_dict()["state"].items():
        for key, value in st.items():
            out[f"{prefix}.{i}.{key}"] = value
    return out


def assert_same_state(a, b, model_state: Callable[[object], dict]) -> None:
    """``model_state(a)`` and ``model_state(b)`` equal to the bit, and the same 40 samples."""
    sa, sb = model_state(a), model_state(b)
    assert sa.keys() == sb.keys()
    for key in sa:
        x, y = sa[key], sb[key]
        if isinstance(x, torch.Tensor):
            assert torch.equal(x, y), key
        elif isinstance(x, list) and x and isinstance(x[0], np.ndarray):
            assert len(x) == len(y) and all(np.array_equal(p, q) for p, q in zip(x, y)), key
        elif isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y, err_msg=key)
        else:
            assert x == y, key
    pd.testing.assert_frame_equal(a.sample(40, seed=5), b.sample(40, seed=5))


class Interrupted(Exception):
    """Raised inside a step's iteration to stop a fit, as a session's end would."""


def assert_single_fit_resumes(make: Callable[[], object], data: pd.DataFrame, label, step_cls: type,
                              assert_bitwise: Callable[[object, object], None], tmp_path, monkeypatch,
                              stop_at: int = 3) -> tuple[object, list[int]]:
    """A single fit (``make()``, then ``fit(data, label)``) stopped at iteration ``stop_at`` of
    ``step_cls`` under :func:`~pategan_audit.replicas.checkpoint.checkpointing`, then fitted again
    in the same directory, resumes from the snapshot and ends ``assert_bitwise`` equal to a fit
    never stopped. Returns that fit and the iterations the resumed fit ran."""
    straight = make().fit(data, label=label)
    calls: list[int] = []
    original = step_cls.iteration

    def iteration(self, it, active, stop=stop_at):
        calls.append(it)
        if stop is not None and len(calls) - 1 == stop:
            raise Interrupted(f"stopped at iteration {it}")
        return original(self, it, active)

    with monkeypatch.context() as patch:
        patch.setattr(step_cls, "iteration", iteration)
        with pytest.raises(Interrupted), checkpoint.checkpointing(tmp_path, every=0):
            make().fit(data, label=label)
    assert (tmp_path / "group0.pkl").exists()
    calls.clear()
    monkeypatch.setattr(step_cls, "iteration", lambda self, it, active: iteration(self, it, active, stop=None))
    with checkpoint.checkpointing(tmp_path, every=0) as ckpt:
        resumed = make().fit(data, label=label)
    assert ckpt.resumed == [(0, stop_at)]
    assert resumed.fitted_
    assert_bitwise(resumed, straight)
    return straight, calls
