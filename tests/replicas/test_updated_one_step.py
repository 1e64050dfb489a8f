"""One training step for ``updated`` (replicas/updated.py): ``fit`` runs the replica step at
R = 1, and every number it produces equals, bit for bit, the straightforward single-fit loop kept
as a test oracle (``oracle_updated.py``); ``fit_many`` at R = 1 is the same fit; callbacks see the
model as trained after each iteration; a stopped single fit resumes from its snapshot to the same
numbers.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from pategan_audit.implementations import create, fit_many
from pategan_audit.replicas.updated import UpdatedStep

from ..implementations.conftest import make_toy, toy_bounds
from .oracle_updated import oracle_model
from .bitwise import assert_same_state, assert_single_fit_resumes, optimizer_state

# updated's settings: both teacher models (B1), its violation switches (V4 partition, V11 bounds,
# V15 scale convention, B3 inverse transform), the "paper" hyperparameters, the released preset,
# and a run stopped by the accountant
CASES = {
    "logistic": {"num_teachers": 3, "max_iter": 12},
    "logistic-long": {"num_teachers": 3, "max_iter": 40},
    "logistic-disjoint": {"num_teachers": 3, "max_iter": 8, "partition": "disjoint"},
    "logistic-public": {"num_teachers": 3, "max_iter": 8, "bounds": "public"},
    "logistic-budget": {"num_teachers": 3, "max_iter": 60, "lam": 0.005, "epsilon": 1.0},
    "logistic-inverse_lambda": {"num_teachers": 3, "max_iter": 8, "lam": 0.05, "laplace_scale_convention": "inverse_lambda",
                                "accountant": "paper", "epsilon": 50.0},
    "logistic-released": {"num_teachers": 3, "max_iter": 8, "harness": False, "lam": 1.0, "inverse_transform": False,
                          "epsilon": 1e4},
    "logistic-paper": {"num_teachers": 3, "max_iter": 8, "hyperparameters": "paper"},
    "neural": {"num_teachers": 3, "max_iter": 12, "teacher_model": "neural_persistent"},
    "neural-long": {"num_teachers": 3, "max_iter": 40, "teacher_model": "neural_persistent"},
    "neural-paper-disjoint": {"num_teachers": 3, "max_iter": 8, "teacher_model": "neural_persistent",
                              "hyperparameters": "paper", "partition": "disjoint"},
}


def _setting(case: str, rows: int = 120) -> tuple[pd.DataFrame, dict, str | None]:
    toy = make_toy(rows)
    kw = dict(CASES[case])
    if kw.get("bounds") == "public":
        kw["public_bounds"] = toy_bounds(toy)
    return toy, kw, "y"


def model_state(model) -> dict:
    """Every array a fitted model holds that training wrote: networks, optimiser moments, teacher
    fits, random streams, accountant, the seen matrix and the trace."""
    out = {}
    for name, net in (("gen_net", model.gen_net), ("student", model.student)):
        out.update({f"{name}.{k}": v for k, v in net.state_dict().items()})
    out.update(optimizer_state("opt_student", model.opt_student))
    out.update(optimizer_state("opt_generator", model.opt_generator))
    if model.config.teacher_model == "neural_persistent":
        out.update({f"teachers.{k}": v for k, v in model.teachers.net.state_dict().items()})
        out.update(optimizer_state("opt_teachers", model.teachers.optimizer))
    else:
        f = model.teachers.fit
        out.update({"fit.coef": f.coef, "fit.intercept": f.intercept, "fit.n_iter": f.n_iter, "fit.converged": f.converged})
    for gen in ("init_gen", "train_gen", "noise_gen"):
        out[gen] = getattr(model, gen).get_state()
    tr = model.trace
    out.update(alpha=np.asarray(model.accountant.alpha), queries=model.accountant.num_queries, seen=model.seen_matrix(),
               iterations=tr.iterations, eps_hat=np.asarray(tr.eps_hat), trace_alpha=np.asarray(tr.alpha),
               teacher_rows=[sorted(r) for r in tr.teacher_rows], refits=tr.extra["teacher_refits"])
    for key in ("votes", "noise", "labels"):
        out[key] = getattr(tr, key)
    return out


def assert_bitwise(a, b) -> None:
    assert_same_state(a, b, model_state)


@pytest.mark.parametrize("seed", [0, 7])
@pytest.mark.parametrize("case", sorted(CASES))
def test_fit_equals_the_single_fit_oracle_bit_for_bit(case, seed):
    toy, kw, label = _setting(case)
    fitted = create("updated", seed=seed, **kw).fit(toy, label=label)
    oracle = oracle_model(seed=seed, **kw).fit(toy, label=label)
    assert fitted.trace.iterations >= 1
    if case == "logistic-budget":
        assert fitted.trace.iterations < 60, "the budget must stop the run before the cap"
    assert_bitwise(fitted, oracle)


def test_fit_without_a_label_equals_the_oracle():
    toy, kw, _ = _setting("logistic")
    assert_bitwise(create("updated", seed=1, **kw).fit(toy), oracle_model(seed=1, **kw).fit(toy))


@pytest.mark.parametrize("case", ["logistic", "neural", "logistic-budget", "logistic-paper", "neural-paper-disjoint"])
def test_fit_many_of_one_is_the_single_fit(case):
    """``fit_many`` with one seed is a group of one: the same numbers as ``fit`` (with the
    "paper" hyperparameters they differed in the last bits while R = 1 ran the stacked kernels)."""
    toy, kw, label = _setting(case)
    many = fit_many("updated", toy, seeds=[0], label=label, **kw)[0]
    assert many.trace.extra["batched"]
    assert_bitwise(many, create("updated", seed=0, **kw).fit(toy, label=label))


@pytest.mark.parametrize("case", ["logistic", "neural"])
def test_callbacks_see_the_model_as_trained(case):
    """The traces of Figures 3 and 11 read the model between iterations (teachers' cross-entropy
    on their first-seen subsets against the current generator): the same values as the oracle's."""
    toy, kw, label = _setting(case)
    runs = []
    for make in (lambda **k: create("updated", **k), oracle_model):
        model = make(seed=2, **kw)
        seen: list = []

        def record(m, it, seen=seen):
            z = m.fixed_latent(16, seed=1)
            seen.append((it, m.teacher_cross_entropy(m.first_seen_subsets(), z),
                         [p.detach().clone() for p in m.gen_net.parameters()]))

        model.callbacks.append(record)
        model.fit(toy, label=label)
        runs.append(seen)
    ours, oracle = runs
    assert [it for it, _, _ in ours] == list(range(kw["max_iter"]))
    assert len(ours) == len(oracle)
    for (i, ce, params), (j, ce_o, params_o) in zip(ours, oracle):
        assert i == j
        np.testing.assert_array_equal(ce, ce_o)
        assert all(torch.equal(p, q) for p, q in zip(params, params_o))
    assert not all(torch.equal(p, q) for p, q in zip(ours[0][2], ours[-1][2])), \
        "training must move the generator for this test to mean something"


@pytest.mark.parametrize("case", ["logistic", "neural"])
def test_a_stopped_single_fit_resumes_to_the_same_numbers(case, tmp_path, monkeypatch):
    toy, kw, label = _setting(case)
    kw = {**kw, "max_iter": 6}
    _, calls = assert_single_fit_resumes(lambda: create("updated", seed=4, **kw), toy, label, UpdatedStep, assert_bitwise,
                                         tmp_path, monkeypatch)
    assert calls == [3, 4, 5]
