"""One training step for gnmax (replicas/gnmax.py): ``fit`` runs the replica step at R = 1, and
every number it produces equals, bit for bit, the straightforward single-fit loop kept as a test
oracle (``oracle_gnmax.py``), in both analyses; ``fit_many`` at R = 1 is the same fit; callbacks
see the model as trained after each iteration; a stopped single fit resumes from its snapshot to
the same numbers.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from pategan_audit.implementations import create, fit_many
from pategan_audit.replicas.gnmax import GNMaxStep

from ..implementations.conftest import make_toy, toy_bounds
from .oracle_gnmax import oracle_model
from .bitwise import assert_same_state, assert_single_fit_resumes, optimizer_state

#: several iterations, a replay buffer filled over them, the students starting late (threshold 0.9)
ITERATIONS = {"planned_queries": 24, "query_batch": 2, "generator_steps": 24, "threshold": 0.9, "num_teachers": 12}
CASES = {
    "default": {"generator_steps": 200},  # the preset's rules for k, σ and the plan (fewer steps: test time)
    "iterations": ITERATIONS,
    "long": {"planned_queries": 240, "query_batch": 8, "generator_steps": 60, "num_teachers": 6},
    "replay_trimmed": {"planned_queries": 64, "query_batch": 8, "generator_steps": 16, "num_teachers": 6,
                       "threshold": 0.5, "replay_size": 12},
    "sigmas": {"sigma_threshold": 30.0, "sigma_vote": 20.0, "max_iter": 12, "query_batch": 4, "num_teachers": 8,
               "generator_steps": 24},
    "teacher_hidden": {**ITERATIONS, "teacher_hidden": (4,)},
    "replace_one": {**ITERATIONS, "neighbours": "replace_one"},
    "dp_bounds": {**ITERATIONS, "bounds": "dp", "bounds_epsilon": 3.0, "epsilon": 5.0},
    "data_dependent": {**ITERATIONS, "analysis": "data_dependent"},
    "data_dependent-long": {"planned_queries": 240, "query_batch": 8, "generator_steps": 60, "num_teachers": 6,
                            "analysis": "data_dependent"},
    "empty_blocks": {"num_teachers": 24, "batch_size": 3, "planned_queries": 16, "query_batch": 4, "generator_steps": 8},
    "tiny": {"generator_steps": 200},  # k = N = 5 teachers, one iteration (the audit's Querybased game)
    "no_label": ITERATIONS,
}
ROWS = {"empty_blocks": 24, "tiny": 5}
#: what fit_many adds to a trace about how it ran (not what it computed)
RUN_KEYS = ("batched", "flush_denormal", "streams")


def _setting(case: str) -> tuple[pd.DataFrame, str | None, dict]:
    toy = make_toy(ROWS.get(case, 60))
    kw = {"record": True, **CASES[case]}
    if kw.get("bounds") != "dp":
        kw["public_bounds"] = toy_bounds(toy)
    return toy, None if case == "no_label" else "y", kw


def model_state(model) -> dict:
    """Every array a fitted gnmax model holds that training wrote: networks, optimiser moments,
    random streams, the RDP accountant, the replay buffer, the seen matrix, the trace and, for the
    data-dependent analysis, the answered votes and the release."""
    out = {}
    for name, net in (("gen_net", model.gen_net), ("student", model.student), ("teachers", model.teachers.net)):
        out.update({f"{name}.{k}": v for k, v in net.state_dict().items()})
    out.update(optimizer_state("opt_student", model.opt_student))
    out.update(optimizer_state("opt_generator", model.opt_generator))
    out.update(optimizer_state("opt_teachers", model.teachers.optimizer))
    for gen in ("init_gen", "train_gen", "noise_gen"):
        out[gen] = getattr(model, gen).get_state()
    out["dp_rng"] = repr(model.dp_rng.bit_generator.state)
    acc = model.accountant
    out.update(rdp=np.asarray(acc.alpha), ledger=repr(acc.ledger), queries=acc.num_queries, epsilon=acc.epsilon,
               seen=model.seen_matrix())
    out["replay_rows"] = [r.numpy() for r in model.replay_rows_]
    out["replay_labels"] = [r.numpy() for r in model.replay_labels_]
    if model.config.analysis == "data_dependent":
        out["answered_n1"] = list(model._answered_n1)
    tr = model.trace
    out.update(iterations=tr.iterations, eps_hat=np.asarray(tr.eps_hat), trace_alpha=np.asarray(tr.alpha),
               teacher_rows=[sorted(r) for r in tr.teacher_rows], charged=tr.extra.get("charged"))
    out["extra"] = repr({k: v for k, v in tr.extra.items() if k not in ("charged", *RUN_KEYS)})
    for key in ("votes", "noise", "labels"):
        out[key] = getattr(tr, key)
    return out


def assert_bitwise(a, b) -> None:
    assert_same_state(a, b, model_state)


@pytest.mark.parametrize("seed", [0, 7])
@pytest.mark.parametrize("case", sorted(CASES))
def test_fit_equals_the_single_fit_oracle_bit_for_bit(case, seed):
    toy, label, kw = _setting(case)
    fitted = create("gnmax", seed=seed, **kw).fit(toy, label=label)
    oracle = oracle_model(seed=seed, **kw).fit(toy, label=label)
    assert fitted.trace.iterations >= 1 and len(fitted.replay_rows_) >= 1
    if case == "empty_blocks":
        assert not fitted.sampler.has_rows.all(), "the case must hold teachers with empty blocks"
    if case.startswith("data_dependent"):
        assert fitted.guarantee_ == "released" and "eps_released" in fitted.trace.extra
    assert_bitwise(fitted, oracle)


@pytest.mark.parametrize("case", ["iterations", "long", "empty_blocks", "tiny"])
def test_fit_many_of_one_is_the_single_fit(case):
    """``fit_many`` with one seed is a group of one: the same numbers as ``fit`` (at R = 1 the
    batched kernels differed from a single fit's by up to 1e-6 in the networks)."""
    toy, label, kw = _setting(case)
    many = fit_many("gnmax", toy, seeds=[3], label=label, **kw)[0]
    assert many.trace.extra["batched"]
    assert_bitwise(many, create("gnmax", seed=3, **kw).fit(toy, label=label))


@pytest.mark.parametrize("case", ["iterations", "empty_blocks"])
def test_one_replica_on_copies_is_the_single_fit(case, monkeypatch):
    """On an accelerator one replica trains copies of its networks, written back when it stops;
    forced on the CPU, that path gives the single fit's networks, trace and samples (the copies'
    optimiser moments stay in the step)."""
    toy, label, kw = _setting(case)
    single = create("gnmax", seed=5, **kw).fit(toy, label=label)
    monkeypatch.setattr(GNMaxStep, "trains_own_networks", staticmethod(lambda replicas, device: False))
    copied = fit_many("gnmax", toy, seeds=[5], label=label, **kw)[0]
    sa, sb = model_state(copied), model_state(single)
    moved = [k for k in sa if k.startswith(("gen_net.", "student.", "teachers."))]
    assert moved and all(torch.equal(sa[k], sb[k]) for k in moved)
    assert not any(k.startswith("opt_") for k in sa)  # the model's own optimisers never stepped
    for key in ("votes", "noise", "labels", "replay_rows", "replay_labels"):
        assert len(sa[key]) == len(sb[key]) and all(np.array_equal(p, q) for p, q in zip(sa[key], sb[key])), key
    np.testing.assert_array_equal(sa["eps_hat"], sb["eps_hat"])
    pd.testing.assert_frame_equal(copied.sample(40, seed=5), single.sample(40, seed=5))


def test_callbacks_see_the_model_as_trained():
    """A callback reads the model between iterations (the traces of Figures 3 and 11: teachers'
    cross-entropy against the current generator): the same values as the oracle's."""
    toy, label, kw = _setting("iterations")
    runs = []
    for make in (lambda **k: create("gnmax", **k), oracle_model):
        model = make(seed=2, **kw)
        seen: list = []

        def record(m, it, seen=seen):
            z = m.fixed_latent(16, seed=1)
            seen.append((it, m.teacher_cross_entropy(m.first_seen_subsets(), z),
                         [p.detach().clone() for net in (m.gen_net, m.student) for p in net.parameters()]))

        model.callbacks.append(record)
        model.fit(toy, label=label)
        runs.append(seen)
    ours, oracle = runs
    assert [it for it, _, _ in ours] == list(range(ours[-1][0] + 1)) and len(ours) > 5
    assert len(ours) == len(oracle)
    for (i, ce, params), (j, ce_o, params_o) in zip(ours, oracle):
        assert i == j
        np.testing.assert_array_equal(ce, ce_o)
        assert all(torch.equal(p, q) for p, q in zip(params, params_o))
    assert not np.array_equal(ours[0][1], ours[-1][1]), "training must move the losses for this test to mean something"


@pytest.mark.parametrize("case", ["iterations", "data_dependent"])
def test_a_stopped_single_fit_resumes_to_the_same_numbers(case, tmp_path, monkeypatch):
    toy, label, kw = _setting(case)
    straight, calls = assert_single_fit_resumes(lambda: create("gnmax", seed=4, **kw), toy, label, GNMaxStep, assert_bitwise,
                                                tmp_path, monkeypatch)
    assert straight.trace.iterations > 6
    assert calls == list(range(3, straight.trace.iterations))
