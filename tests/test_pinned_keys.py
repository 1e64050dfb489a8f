"""Cache keys, run ids and derived seeds pinned to literal values.

The audit cache (``results/cache``), the committed archives and resumable archive runs are
addressed by these values: a refactoring of the experiment layer must leave every one of them
byte-identical. The literals were computed with the code before the experiment layer was
unified (issue 14, Deliver item 1); if one of them changes, the change invalidates cached and
archived results and must be deliberate.

No model is trained: the result cache is replaced by a recorder that answers every lookup, so
only the keys the code asks for are computed.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from pategan_audit import runner
from pategan_audit.auditing import audit, game, targets
from pategan_audit.auditing.profiles import get_profile
from pategan_audit.auditing.settings import AuditSetting, PresetFactory, attack_data
from pategan_audit.seeds import derive_seed
from pategan_audit.traces import losses, moments, seen
from pategan_audit.utility import derive_seed as utility_derive_seed
from pategan_audit.utility import run as utility_run
from pategan_audit.utility.cells import SettingACell, UtilityCell

PINNED_SOURCE = "pinned0000000000"


@pytest.fixture
def recorder(monkeypatch):
    """Record (namespace, hash without source, hash with the pinned source) of every cache
    lookup; answer each one with a stored zero result so nothing is computed."""
    runner.activate(runner.RunOptions(source_hash=PINNED_SOURCE))  # as an entry point
    runner.source_hash.cache_clear()
    seen_keys: list[tuple[str, str, str]] = []

    def lookup(config, *, namespace, cache_dir_override=None):
        seen_keys.append((namespace, runner.config_hash(config, namespace=namespace, include_source=False),
                          runner.config_hash(config, namespace=namespace)))
        if namespace == "audit_targets":
            return True, 0.5
        width = 8 if "querybased" in json.dumps(runner._jsonable(config)) else 35
        return True, {"features": np.zeros(width), "seconds": 0.0}

    def cached(config, compute, *, namespace, cache_dir_override=None, refresh=False):
        return lookup(config, namespace=namespace)[1]

    monkeypatch.setattr(runner, "lookup_cached", lookup)
    monkeypatch.setattr(runner, "cached", cached)
    yield seen_keys
    runner.source_hash.cache_clear()


def _settings():
    prof = get_profile("smoke")
    it = prof.iterations
    return prof, [
        AuditSetting("querybased", "updated", channel="paper", iterations=it("querybased", "updated")),
        AuditSetting("querybased", "corrected", channel="fixed_size", iterations=it("querybased", "corrected")),
        AuditSetting("querybased", "borealis", channel="controlled", iterations=it("querybased", "borealis")),
        AuditSetting("querybased", "turing", channel="fixed_size", iterations=it("querybased", "turing"),
                     variant="V10 fixed", extra_overrides={"bounds": "public"}),
        AuditSetting("groundhog", "smartnoise", channel="paper", iterations=it("groundhog", "smartnoise")),
        AuditSetting("groundhog", "synthcity", channel="controlled", iterations=it("groundhog", "synthcity")),
    ]


RUN_IDS = ["11b0b13d1d", "9e22e8d6c3", "efd2d7baff", "94ca401de2", "013c7c4816", "3f0ef360f3"]
#: (hash without source, hash with the pinned source) of the first two shadow-model entries per setting
AUDIT_ENTRIES = [
    [("83352c38438cba8b580a36c2", "b5c44fbd6d8feaa00186de62"), ("77c7b2a5a49a2218b562f58f", "bd8865e084ed6f682af34392")],
    [("05defa4d5eacebf885c9a06d", "494317c522ade3d30126b3d3"), ("a713db7d552fd9a0fb35cb6a", "ea4df894ceb7d114058b91b9")],
    [("0e18a2cf103ed6c94568df53", "f1c449cf63ad8bea25a343af"), ("0c800320ea5a0cdd175204ae", "769c6e14a601b2ffabcef74c")],
    [("3cac00b8fb7e4f25970e111a", "f7a02a23e6ac58316772abe7"), ("8bbb3cf6ab83b1fea6facd99", "0335dd222026d7b69e453dc2")],
    [("8f00556c334d6ac000090fa7", "c7ce7cc5cd381c3258ad896e"), ("fb78d9366babf65a1fe5a862", "d99e8fe36c0132cf79f93863")],
    [("25fdb610ebd8c86b1bb64ad2", "7cf1f54641eeda044b85fe00"), ("ba57deeab94f87878fcb1bfd", "f2cf1dac98967492b38f36e7")],
]


def test_audit_run_ids_and_shadow_model_keys_are_pinned(recorder):
    prof, settings = _settings()
    for setting, run_id, entries in zip(settings, RUN_IDS, AUDIT_ENTRIES):
        recorder.clear()
        records = audit.run_setting(setting, prof, options=runner.RunOptions.defaulted(None, n_jobs=1), seed=0)
        assert records[0]["run_id"] == run_id, setting
        assert [(a, b) for ns, a, b in recorder[:2]] == entries, setting
        assert {ns for ns, _, _ in recorder} == {"audit"}


def test_target_selection_keys_are_pinned(recorder):
    train = attack_data("groundhog")[1]
    factory = PresetFactory("original", epsilon=1.0, overrides={"num_teachers": 5, "max_iter": 2})
    targets.select_target(train, factory, n_candidates=2, n_models=2, seed=3,
                          options=runner.RunOptions.defaulted(None, n_jobs=1))
    assert recorder[:3] == [
        ("audit_targets", "119f36d790c1e995f1ffd9d7", "7cc49038d7cdaeef5872b320"),
        ("audit_targets", "1a5279d1294c8c340f7812fd", "0eb89e0ce6c87f96c541d359"),
        ("audit_targets", "07e9376d284ec40e54cde275", "5e6428cfc0641282b7684ccb"),
    ]


def test_trace_keys_are_pinned(monkeypatch):
    runner.activate(runner.RunOptions(source_hash=PINNED_SOURCE))  # as an entry point
    runner.source_hash.cache_clear()
    hashes = []

    def cached(config, compute, *, namespace, cache_dir_override=None, refresh=False):
        hashes.append(runner.config_hash(config, namespace=namespace))
        return {"cross_entropy": np.zeros((0, 0, 0)), "iterations": 0, "teacher_rows": [],
                "votes": [np.zeros(3)] * 4, "model_eps_hat": np.zeros(1)}

    monkeypatch.setattr(runner, "cached", cached)
    try:
        losses.loss_run("smartnoise", epsilon=3.0, seed=1, max_iter=50)
        seen.seen_run("corrected", epsilon=1.0, seed=0, max_iter=20)
        moments.record_vote_stream(lam=1e-3, iterations=4, seed=2)
    finally:
        runner.source_hash.cache_clear()
    assert hashes == ["a5aa7490e5da83151a095a49", "6a53ab0694841ed75b7aa4fe", "1fba59a907fe8bcce0e9141b"]


def test_utility_cell_ids_and_keys_are_pinned(monkeypatch):
    runner.activate(runner.RunOptions(source_hash=PINNED_SOURCE))  # as an entry point
    runner.source_hash.cache_clear()
    # AdaBoost SAMME: the keys from before the knob existed (the archives' cells keep them)
    cells = [UtilityCell("cervical_cancer", "updated", 1.0, n_models=2, max_iter=10,
                         classifiers=("LogisticRegression", "RandomForest"), adaboost="SAMME"),
             UtilityCell("credit", "corrected", 0.5, overrides={"conditional": True}, num_teachers=3, seed=4,
                         adaboost="SAMME"),
             SettingACell("mnist", adaboost="SAMME"),
             # the default panel (SAMME.R, the authors' scikit-learn 1.4.1): new keys
             UtilityCell("credit", "corrected", 0.5, overrides={"conditional": True}, num_teachers=3, seed=4),
             SettingACell("mnist")]
    try:
        assert [utility_run.cell_id(c) for c in cells] == ["85b7fc8ce315", "f2f9c65df7ff", "48a088723bc2",
                                                           "81acccd0d525", "18d797b8150d"]
        assert [runner.config_hash(utility_run._key(c, None, None), namespace="utility") for c in cells] == [
            "ada504b04ab6daeee6e2048f", "0f155cfb93fe3a37b3742a37", "7672641e29702ec2816df3ae",
            "6e6421479b54db7dfcd7b6b1", "3ef73e685fbcab833abe8068"]
    finally:
        runner.source_hash.cache_clear()


def test_derived_seeds_are_pinned():
    assert [game.shadow_seed(s, w, i) for s in (0, 7) for w in ("out", "in") for i in (0, 1, 999)] == [
        1484405855, 1915600865, 1534973107, 1982462498, 450621607, 273453446,
        1041839916, 1014427442, 946002090, 184785996, 291303631, 1065401480]
    # utility cells: model m, table s, classifier panel (reduction "mod31", the default)
    utility = [(0, 1), (0, 2, 3, 1), (5, 0, 0, 2), (13,)]
    assert [derive_seed(*p) for p in utility] == [utility_derive_seed(*p) for p in utility] == [
        1817441349, 1932946714, 2076070548, 145892638]
    # training traces, e.g. the fixed latent batch (tag 3) of Fig. 3 (was traces.derived_seed)
    assert [derive_seed(*p, reduce="u32") for p in [(0, 3), (4, 3), (1, 2, 3)]] == [2613022947, 2152323536, 3822189696]
    # target-selection models: (seed, row, world, index), as select_target derives them
    assert [derive_seed(3, 397, w, i, reduce="shift31") for w in (0, 1) for i in (0, 99)] == [
        int(np.random.SeedSequence([3, 397, w, i]).generate_state(1)[0] >> 1) for w in (0, 1) for i in (0, 99)]
