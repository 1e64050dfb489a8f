"""One training step for borealis, smartnoise and corrected (replicas/neural.py): ``fit`` runs the
replica step at R = 1, and every number it produces equals, bit for bit, the straightforward
single-fit loop kept as a test oracle (``oracle_neural.py``); ``fit_many`` at R = 1 is the same
fit; callbacks see the model as trained after each iteration; a stopped single fit resumes from
its snapshot to the same numbers.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from pategan_audit.components.teachers import NeuralTeachers
from pategan_audit.implementations import create, fit_many
from pategan_audit.replicas.neural import NeuralStep

from ..implementations.conftest import make_toy, toy_bounds
from .oracle_neural import oracle_model
from .bitwise import assert_same_state, assert_single_fit_resumes, optimizer_state

CASES = {
    "borealis": {"num_teachers": 3, "max_iter": 4},
    "borealis-conditional": {"num_teachers": 3, "max_iter": 4, "conditional": True, "generation_noise": "uniform"},
    "borealis-budget": {"num_teachers": 3, "max_iter": 60, "lam": 0.05, "epsilon": 3.0},
    "smartnoise": {"num_teachers": 3, "max_iter": 4},
    "smartnoise-paper": {"num_teachers": 3, "max_iter": 4, "hyperparameters": "paper"},
    "smartnoise-lam1": {"num_teachers": 3, "max_iter": 4, "lam": 1.0, "epsilon": 10.0},
    "corrected": {"num_teachers": 3, "max_iter": 4},
    "corrected-dependent": {"num_teachers": 3, "max_iter": 4, "charging": "data_dependent", "teacher_hidden": (4,)},
    "corrected-replace_one": {"num_teachers": 3, "max_iter": 4, "neighbours": "replace_one"},
    "corrected-empty_blocks": {"num_teachers": 9, "max_iter": 3, "batch_size": 3},
}


def _setting(case: str, rows: int = 120) -> tuple[str, pd.DataFrame, dict]:
    name = case.split("-")[0]
    toy = make_toy(24 if case == "corrected-empty_blocks" else rows)
    kw = dict(CASES[case])
    if name == "corrected":
        kw["public_bounds"] = toy_bounds(toy)
    return name, toy, kw


def model_state(model) -> dict:
    """Every array a fitted model holds that training wrote: networks, optimiser moments, random
    streams, accountant, the seen matrix and the trace."""
    out = {}
    for name, net in (("gen_net", model.gen_net), ("student", model.student), ("teachers", model.teachers.net)):
        out.update({f"{name}.{k}": v for k, v in net.state_dict().items()})
    out.update(optimizer_state("opt_student", model.opt_student))
    out.update(optimizer_state("opt_generator", model.opt_generator))
    out.update(optimizer_state("opt_teachers", model.teachers.optimizer))
    for gen in ("init_gen", "train_gen", "noise_gen"):
        out[gen] = getattr(model, gen).get_state()
    tr = model.trace
    out.update(alpha=np.asarray(model.accountant.alpha), queries=model.accountant.num_queries, seen=model.seen_matrix(),
               iterations=tr.iterations, eps_hat=np.asarray(tr.eps_hat), trace_alpha=np.asarray(tr.alpha),
               teacher_rows=[sorted(r) for r in tr.teacher_rows], charged=tr.extra.get("charged"))
    for key in ("votes", "noise", "labels"):
        out[key] = getattr(tr, key)
    return out


def assert_bitwise(a, b) -> None:
    assert_same_state(a, b, model_state)


@pytest.mark.parametrize("seed", [0, 7])
@pytest.mark.parametrize("case", sorted(CASES))
def test_fit_equals_the_single_fit_oracle_bit_for_bit(case, seed):
    name, toy, kw = _setting(case)
    fitted = create(name, seed=seed, **kw).fit(toy, label="y")
    oracle = oracle_model(name, seed=seed, **kw).fit(toy, label="y")
    assert fitted.trace.iterations >= 1
    if case == "borealis-budget":
        assert fitted.trace.iterations < 60, "the budget must stop the run before the cap"
    assert_bitwise(fitted, oracle)


@pytest.mark.parametrize("case", ["borealis-conditional", "smartnoise", "corrected-empty_blocks"])
def test_fit_many_of_one_is_the_single_fit(case):
    """``fit_many`` with one seed is a group of one: the same numbers as ``fit`` (they differed at
    the 1e-9 level while the batched kernels ran at R = 1)."""
    name, toy, kw = _setting(case)
    many = fit_many(name, toy, seeds=[3], label="y", **kw)[0]
    assert many.trace.extra["batched"]
    assert_bitwise(many, create(name, seed=3, **kw).fit(toy, label="y"))


@pytest.mark.parametrize("case", ["borealis-conditional", "smartnoise", "smartnoise-paper", "corrected"])
def test_one_replica_on_copies_is_the_single_fit(case, monkeypatch):
    """On an accelerator one replica trains copies of its networks, written back when it stops;
    forced on the CPU, that path gives the single fit's networks, trace and samples (the copies'
    optimiser moments stay in the step)."""
    name, toy, kw = _setting(case)
    single = create(name, seed=5, **kw).fit(toy, label="y")
    monkeypatch.setattr(NeuralStep, "trains_own_networks", staticmethod(lambda replicas, device: False))
    copied = fit_many(name, toy, seeds=[5], label="y", **kw)[0]
    sa, sb = model_state(copied), model_state(single)
    moved = [k for k in sa if k.startswith(("gen_net.", "student.", "teachers."))]
    assert moved and all(torch.equal(sa[k], sb[k]) for k in moved)
    assert not any(k.startswith("opt_") for k in sa)  # the model's own optimisers never stepped
    for key in ("votes", "noise", "labels"):
        assert all(np.array_equal(p, q) for p, q in zip(sa[key], sb[key]))
    np.testing.assert_array_equal(sa["eps_hat"], sb["eps_hat"])
    pd.testing.assert_frame_equal(copied.sample(40, seed=5), single.sample(40, seed=5))


@pytest.mark.parametrize("name", ["borealis", "smartnoise", "corrected"])
def test_callbacks_see_the_model_as_trained(name):
    """The traces of Figures 3 and 11 read the model between iterations (teachers' cross-entropy
    on their first-seen subsets against the current generator): the same values as the oracle's."""
    _, toy, kw = _setting(name)
    runs = []
    for make in (create, oracle_model):
        model = make(name, seed=2, **kw)
        seen: list = []

        def record(m, it, seen=seen):
            z = m.fixed_latent(16, seed=1)
            seen.append((it, m.teacher_cross_entropy(m.first_seen_subsets(), z),
                         [p.detach().clone() for p in m.gen_net.parameters()]))

        model.callbacks.append(record)
        model.fit(toy, label="y")
        runs.append(seen)
    ours, oracle = runs
    assert [it for it, _, _ in ours] == list(range(kw["max_iter"]))
    assert len(ours) == len(oracle)
    for (i, ce, params), (j, ce_o, params_o) in zip(ours, oracle):
        assert i == j
        np.testing.assert_array_equal(ce, ce_o)
        assert all(torch.equal(p, q) for p, q in zip(params, params_o))
    assert not np.array_equal(ours[0][1], ours[-1][1]), "training must move the losses for this test to mean something"


@pytest.mark.parametrize("name,separate", [("borealis", True), ("smartnoise", False), ("corrected", False)])
def test_the_step_runs_the_rounds_of_the_presets_teacher_phase(name, separate, monkeypatch):
    """The step's teacher rounds are the preset's strategy (``teacher_phase_``: ``teacher_iters``
    rounds; borealis' real and fake steps apart)."""
    _, toy, kw = _setting(name)
    calls = []
    original = NeuralTeachers.train_step

    def counting(self, real, fake, *, separate=False, real_weight=None):
        calls.append(separate)
        return original(self, real, fake, separate=separate, real_weight=real_weight)

    monkeypatch.setattr(NeuralTeachers, "train_step", counting)
    m = create(name, **{**kw, "max_iter": 2, "epsilon": 1e6, "teacher_iters": 4}).fit(toy, label="y")
    assert m.teacher_phase_.rounds == 4 and m.trace.iterations == 2
    assert calls == [separate] * 8


def test_a_stopped_single_fit_resumes_to_the_same_numbers(tmp_path, monkeypatch):
    name, toy, kw = _setting("corrected")
    kw = {**kw, "max_iter": 6, "epsilon": 50.0}
    _, calls = assert_single_fit_resumes(lambda: create(name, seed=4, **kw), toy, "y", NeuralStep, assert_bitwise,
                                         tmp_path, monkeypatch)
    assert calls == [3, 4, 5]
