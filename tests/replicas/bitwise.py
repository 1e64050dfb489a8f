"""Bit-for-bit comparison of two fitted models' states, shared by the one-step tests (a preset's
fit against the single-fit loop it replaced, ``oracle_*.py``): each test builds the state dict of
its family (``model_state``) and compares it here."""
from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd
import torch


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
