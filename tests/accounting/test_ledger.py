"""The one accountant interface (accounting.ledger): charge an event, read ε̂ at δ, a ledger of what
was charged; the moments and the Rényi-DP accountants both implement it, and nothing outside
accounting/ writes accountant state."""
import doctest
import pickle
import re
from pathlib import Path

import numpy as np
import pytest

from pategan_audit.accounting import Accountant, MomentsAccountant, RdpAccountant, charge_replicas
from pategan_audit.accounting import ledger as ledger_module
from pategan_audit.accounting import rdp as rdp_module
from pategan_audit.accounting.rdp import per_query_rdp

SRC = Path(__file__).resolve().parents[2] / "src" / "pategan_audit"


def moments(kind="smartnoise", lam=1.0, k=6, L=20):
    return MomentsAccountant(kind, lam=lam, num_moments=L, delta=1e-5, num_teachers=k, warn_at_edge=False)


def rdp():
    return RdpAccountant(per_query_rdp(30.0, 30.0), delta=1e-5)


@pytest.mark.parametrize("make", [moments, rdp], ids=["moments", "rdp"])
def test_both_accountants_implement_the_interface(make):
    acc = make()
    assert isinstance(acc, Accountant)
    assert acc.num_queries == 0 and acc.ledger.events == 0 and not acc.alpha.any()
    acc.charge(np.array([1, 2, 3]))
    acc.charge(queries=4)
    assert acc.num_queries == 7 and acc.ledger.events == 2 and acc.ledger.worst_case_queries >= 4
    assert np.isfinite(acc.epsilon) and acc.epsilon > 0


@pytest.mark.parametrize("make", [moments, rdp], ids=["moments", "rdp"])
def test_state_changes_only_through_charge(make):
    acc = make()
    acc.charge(queries=2)
    with pytest.raises(AttributeError):
        acc.alpha = np.zeros_like(acc.alpha)
    with pytest.raises(AttributeError):
        acc.num_queries = 0
    with pytest.raises(ValueError):  # the curve handed out is a read-only view
        acc.alpha[0] = 0.0
    kept = acc.alpha.copy()
    acc.charge(queries=1)
    assert np.all(acc.alpha > kept)  # a copy taken before a charge keeps its values


@pytest.mark.parametrize("make", [moments, rdp], ids=["moments", "rdp"])
def test_worst_case_charge_is_the_stopping_rules_forecast(make):
    acc = make()
    acc.charge(np.array([0, 3, 6]))
    before = acc.alpha.copy()
    forecast = acc.epsilon_if(64)
    acc.charge(queries=64)
    assert np.array_equal(acc.alpha, before + 64 * acc.worst_case_increment)  # the same expression, bit for bit
    assert acc.epsilon == forecast


@pytest.mark.parametrize("make", [moments, rdp], ids=["moments", "rdp"])
def test_charge_takes_exactly_one_event(make):
    acc = make()
    with pytest.raises(ValueError, match="exactly one"):
        acc.charge()
    with pytest.raises(ValueError, match="exactly one"):
        acc.charge([1], queries=1)
    with pytest.raises(ValueError, match="non-negative integer"):
        acc.charge(queries=-1)
    assert acc.ledger.events == 0


def test_moments_ledger_records_the_vote_histogram():
    acc = moments(k=4)
    acc.charge(np.array([0, 4, 4, 2]))
    acc.charge(np.array([4]))
    acc.charge(queries=3)
    assert acc.ledger.vote_counts.tolist() == [1, 0, 1, 0, 3]
    assert (acc.ledger.num_queries, acc.ledger.worst_case_queries, acc.ledger.events) == (8, 3, 3)
    table = acc._table  # the per-vote increments [k+1, L] the accountant composes
    expected = np.zeros(20) + (np.array([1, 0, 1, 0, 2], dtype=float)[[0, 2, 4]] @ table[[0, 2, 4]])
    expected = expected + np.array([1.0]) @ table[[4]]
    expected = expected + 3 * acc.worst_case_increment
    assert np.array_equal(acc.alpha, expected)


def test_a_list_and_an_array_of_votes_are_one_charge():
    a, b = moments(), moments()
    a.charge([1, 5, 5])
    b.charge(np.array([1, 5, 5]))
    assert np.array_equal(a.alpha, b.alpha) and a.num_queries == b.num_queries == 3


def test_fresh_and_copy_are_independent():
    acc = moments()
    acc.charge([2, 2])
    twin, blank = acc.copy(), acc.fresh()
    twin.charge([2])
    assert acc.num_queries == 2 and twin.num_queries == 3 and blank.num_queries == 0
    assert (blank.kind, blank.lam, blank.num_moments, blank.delta, blank.num_teachers) == \
        (acc.kind, acc.lam, acc.num_moments, acc.delta, acc.num_teachers)
    r = rdp()
    r.charge(queries=5)
    r2 = r.copy()
    r2.charge(queries=5)
    assert r.num_queries == 5 and r2.num_queries == 10 and r2.epsilon > r.epsilon


@pytest.mark.parametrize("kind,lam", [("smartnoise", 1.0), ("synthcity", 1.0), ("paper", 0.05), ("corrected", 1.0)])
def test_charge_replicas_equals_one_charge_each(kind, lam):
    rng = np.random.default_rng(0)
    k, R, n = 7, 5, 64
    votes = rng.integers(0, k + 1, size=(R, n))
    votes[1] = k  # unanimous: the formulas' edge rows
    charged = np.array([True, True, False, True, True])
    many = [moments(kind, lam, k) for _ in range(R)]
    one = [moments(kind, lam, k) for _ in range(R)]
    for _ in range(3):
        charge_replicas(many, votes, charged, worst_case=False)
        for acc, v, c in zip(one, votes, charged):
            if c:
                acc.charge(v)
    for a, b, c in zip(many, one, charged):
        assert a.num_queries == b.num_queries == (3 * n if c else 0)
        assert np.array_equal(a.ledger.vote_counts, b.ledger.vote_counts)
        np.testing.assert_allclose(a.alpha, b.alpha, rtol=1e-12, equal_nan=True)


def test_charge_replicas_worst_case_and_bad_votes():
    many = [moments() for _ in range(3)]
    charge_replicas(many, np.zeros((3, 10), dtype=int), np.array([True, False, True]), worst_case=True)
    assert [a.num_queries for a in many] == [10, 0, 10]
    assert np.array_equal(many[0].alpha, 10 * many[0].worst_case_increment)
    with pytest.raises(ValueError, match=r"must lie in \[0, num_teachers=6\]"):  # the error of one charge
        charge_replicas(many, np.full((3, 2), 7), np.ones(3, dtype=bool), worst_case=False)
    assert [a.num_queries for a in many] == [10, 0, 10]  # checked before anything is charged


def test_an_accountant_pickled_before_the_ledger_loads():
    acc = moments()
    acc.charge([3, 3])
    state = {k: v for k, v in acc.__dict__.items() if k != "ledger"}
    state.update(alpha=acc.alpha.copy(), num_queries=2)
    old = MomentsAccountant.__new__(MomentsAccountant)
    old.__setstate__(state)
    assert old.num_queries == 2 and np.array_equal(old.alpha, acc.alpha)
    again = pickle.loads(pickle.dumps(acc))
    assert again.num_queries == 2 and np.array_equal(again.alpha, acc.alpha)


def test_rdp_accountant_rejects_a_curve_of_the_wrong_length():
    with pytest.raises(ValueError, match="one RDP value per order"):
        RdpAccountant(np.ones(3), delta=1e-5)
    with pytest.raises(ValueError, match="delta must lie in"):
        RdpAccountant(per_query_rdp(30.0, 30.0), delta=0.0)


def test_the_rdp_accountant_lives_in_accounting_only():
    from pategan_audit import accounting
    from pategan_audit.implementations import gnmax

    for name in ("RdpAccountant", "noise_for_budget", "data_dependent_epsilon", "binary_histograms", "per_query_rdp"):
        assert name in rdp_module.__all__ and name not in gnmax.__all__
    assert accounting.RdpAccountant is rdp_module.RdpAccountant


# an assignment to accountant state (any object's alpha, num_queries or ledger: outside accounting/ only
# accountants have them), or a private member of an accountant read outside accounting/
_WRITES = re.compile(r"\b\w+\.(?:alpha|num_queries|ledger)\s*[+-]?=(?!=)")
_PRIVATE = re.compile(r"\b(?:\w*accountant|acc\w*)\._\w+")


def test_no_caller_writes_accountant_state():
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if path.parent.name == "accounting":
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if _WRITES.search(code) or _PRIVATE.search(code):
                offenders.append(f"{path.relative_to(SRC)}:{i}: {line.strip()}")
    assert not offenders, "accountant state written or read privately outside accounting/:\n" + "\n".join(offenders)


@pytest.mark.parametrize("module", [ledger_module, rdp_module])
def test_module_doctests(module):
    assert doctest.testmod(module).failed == 0
