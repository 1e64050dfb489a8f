"""``fit_many`` prepares a table shared by many replicas once (``begin_fit(..., prepared)`` of the
WGAN family, :meth:`BaseGenerator.prepares_like`): a replica that takes another's preparation is
in every attribute the replica set up alone, and replicas whose settings differ (seed aside) or
whose tables differ never share one."""
from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from pategan_audit.implementations import create, fit_many

from ..implementations.conftest import CERVICAL


@pytest.fixture(scope="module")
def cervical() -> pd.DataFrame:
    return pd.read_csv(CERVICAL).head(150)


def _same_value(a, b, where: str) -> None:
    if torch.is_tensor(a):
        assert torch.is_tensor(b) and a.dtype == b.dtype and torch.equal(a, b), where
    elif isinstance(a, torch.Generator):
        assert torch.equal(a.get_state(), b.get_state()), where
    elif isinstance(a, nn.Module):
        sa, sb = a.state_dict(), b.state_dict()
        assert sa.keys() == sb.keys(), where
        for k in sa:
            assert torch.equal(sa[k], sb[k]), f"{where}.{k}"
    elif isinstance(a, torch.optim.Optimizer):
        assert repr(a.state_dict()) == repr(b.state_dict()), where
    elif isinstance(a, np.random.Generator):
        assert a.bit_generator.state == b.bit_generator.state, where
    elif isinstance(a, (pd.DataFrame, pd.Series)):
        assert a.equals(b), where
    elif isinstance(a, list) and a and torch.is_tensor(a[0]):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _same_value(x, y, f"{where}[{i}]")
    else:
        assert pickle.dumps(a) == pickle.dumps(b), where


def _same_setup(a, b) -> None:
    assert vars(a).keys() == vars(b).keys()
    for key, value in vars(a).items():
        if key == "trace":
            assert a.trace.bounds == b.trace.bounds and a.trace.extra == b.trace.extra
        else:
            _same_value(value, vars(b)[key], key)


SETTINGS = {
    "original": {"num_teachers": 3, "max_iter": 2},
    "original-conditional": {"num_teachers": 3, "max_iter": 2, "conditional": True},
    "original-own_partition": {"num_teachers": 3, "max_iter": 2, "critic_batch_source": "own_partition"},
    "turing": {"num_teachers": 3, "max_iter": 2},
}


@pytest.mark.parametrize("case", sorted(SETTINGS))
def test_a_shared_preparation_sets_a_replica_up_as_its_own(case, cervical):
    name, kw = case.split("-")[0], SETTINGS[case]
    first = create(name, seed=1, **kw)
    prepared = first.begin_fit(cervical, "Biopsy")
    shared = create(name, seed=2, **kw)
    assert first.prepares_like(shared)
    back = shared.begin_fit(cervical, "Biopsy", prepared)
    alone = create(name, seed=2, **kw)
    alone.begin_fit(cervical, "Biopsy")
    _same_setup(shared, alone)
    assert back is prepared and shared.X_ is first.X_  # shared, not copied
    assert shared.trace is not first.trace and shared.trace.bounds is not first.trace.bounds


def test_prepares_like_compares_settings_but_the_seed():
    a = create("original", seed=0, num_teachers=3)
    assert a.prepares_like(create("original", seed=7, num_teachers=3))
    assert not a.prepares_like(create("original", seed=0, num_teachers=4))
    assert not a.prepares_like(create("original", seed=0, num_teachers=3, bounds="public",
                                      public_bounds={"Age": (0.0, 100.0)}))
    assert not a.prepares_like(create("turing", seed=0, num_teachers=3))


def test_fit_many_shares_only_equal_tables(cervical):
    other = cervical.iloc[::-1].reset_index(drop=True)  # the same rows in another order
    kw = {"num_teachers": 3, "max_iter": 3, "label": "Biopsy"}
    models = fit_many("original", [cervical, other, cervical], seeds=[0, 1, 2], **kw)
    assert models[0].X_ is models[2].X_ and models[1].X_ is not models[0].X_
    for m, df in zip(models, [cervical, other, cervical]):
        single = create("original", seed=int(m.config.seed), num_teachers=3, max_iter=3).fit(df, label="Biopsy")
        assert torch.equal(single.X_, m.X_)
        np.testing.assert_allclose(single.sample(30, seed=5).to_numpy(float), m.sample(30, seed=5).to_numpy(float),
                                   atol=1e-5)
