"""Archived runs (pategan_audit.archive): write/read round trip, provenance, and the committed
archives' consistency with the code that reads them (profiles, bound formulas)."""
from __future__ import annotations

import dataclasses
import json
from dataclasses import asdict

import numpy as np
import pandas as pd
import pytest

from pategan_audit import archive, archive_store, provenance, runner
from pategan_audit.auditing.bounds import AttackCounts, eps_lower
from pategan_audit.auditing.profiles import get_profile as audit_profile
from pategan_audit.auditing.summaries import near_ceiling
from pategan_audit.runner import _jsonable
from pategan_audit.utility import archives as utility_archives


def test_round_trip_is_atomic_and_keeps_meta(tmp_path):
    records = pd.DataFrame({"a": [1, 2], "b": [0.5, np.nan]})
    folder = archive.write_archive("demo", records, {"profile": "smoke", "runs": "2 rows"}, directory=tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == ["meta.json", "records.csv"]  # no temp files left
    back = archive.read_archive("demo", directory=tmp_path)
    pd.testing.assert_frame_equal(back.records, records)
    assert back.meta == {"name": "demo", "profile": "smoke", "runs": "2 rows"}


def test_missing_archive_reads_as_none(tmp_path):
    assert archive.read_archive("nothing_here", directory=tmp_path) is None


def test_empty_records_are_refused(tmp_path):
    with pytest.raises(ValueError, match="non-empty"):
        archive.write_archive("demo", pd.DataFrame(), {}, directory=tmp_path)


def test_unknown_archive_name_says_which_exist():
    with pytest.raises(ValueError, match="utility_large"):
        archive.run_archive("utility_huge")


def test_caption_states_profile_code_and_cost():
    a = archive.Archive("x", pd.DataFrame({"a": [1]}), {
        "profile": "large", "profile_description": "big", "runs": "5 x 5", "finished": "2026-11-22T10:00:00+00:00",
        "cpus": 2, "wall_seconds": 3600.0, "core_seconds": 7200.0, "git_commit": "0123456789abcdef",
        "source_hash": "feedface"})
    text = a.caption()
    for part in ("`large`", "5 x 5", "2026-11-22", "60 min", "2.0 core-hours", "0123456789", "does not recompute"):
        assert part in text
    assert "provenance unknown: commit 0123456789 not in this clone" in text  # no such commit
    a.meta.update(provenance.code_state("x"))  # what a run writes now: this build's module hashes
    assert "the archive's computing code is unchanged since it was computed" in a.caption()


def test_archive_module_edits_do_not_invalidate_the_cache():

    assert runner.computes_nothing("archive.py")
    for bookkeeping in ("archive_store.py", "utility/archives.py", "auditing/archives.py", "traces/archives.py"):
        assert runner.computes_nothing(bookkeeping)  # the store and the domains' archive definitions


# -- the committed archives -----------------------------------------------------------------------


def _committed(name):
    found = archive.read_archive(name)
    if found is None:
        pytest.skip(f"archive {name} not committed")
    return found


def test_utility_archive_ran_exactly_the_large_profile_cells():
    from pategan_audit import utility as U

    a = _committed("utility_large")
    p = U.get_profile(a.meta["profile"])
    cells = [*U.setting_a_cells(p), *U.main_cells(p, implementations=(*U.PAPER_IMPLEMENTATIONS, "corrected"))]
    # the archive's AdaBoost is SAMME (begun before the panel ran the authors' SAMME.R); its keys omit it
    assert {c.adaboost for c in cells} == {"SAMME.R"}
    cells = [dataclasses.replace(c, adaboost="SAMME") for c in cells]
    assert json.loads(json.dumps(_jsonable(a.meta["cells"]))) == json.loads(json.dumps(_jsonable([c.cache_key() for c in cells])))
    assert a.meta["profile_knobs"] == json.loads(json.dumps(asdict(p), default=str))
    assert set(a.records["cell"]) == {U.cell_id(c) for c in cells}
    ok = a.records[a.records["status"] == "ok"]
    assert ok["auroc"].between(0, 1).all()


@pytest.mark.parametrize("name", ["audit_querybased_large", "audit_querybased_controlled_large"])
def test_audit_archive_bounds_follow_from_its_counts(name):
    a = _committed(name)
    prof = audit_profile(a.meta["profile"])
    rec = a.records
    assert set(rec["implementation"]) == {"original", "updated", "synthcity", "turing", "borealis", "smartnoise", "corrected"}
    assert (rec["n_per_world"] == prof.n_per_world).all() and (rec["n_test"] == prof.split[2]).all()
    assert a.meta["ceiling_clopper_pearson"] == pytest.approx(prof.ceiling("clopper_pearson"))
    # the meta names its channel(s): "channels" (a list) since session 4, "channel" before; the
    # first archive had neither (its settings say "paper")
    channels = a.meta.get("channels") or [a.meta.get("channel", "paper")]
    assert len(channels) == 1
    channel = channels[0]
    assert {s["channel"] for s in a.meta["settings"]} == {channel}
    assert (rec["channel"] == channel).all() and (rec["attack"] == "querybased").all()
    for _, r in rec.iterrows():
        counts = AttackCounts(FP=int(r.test_FP), TN=int(r.test_TN), FN=int(r.test_FN), TP=int(r.test_TP))
        assert counts.n_out == counts.n_in == prof.split[2]
        assert eps_lower(counts, method=r.method, alpha=r.alpha, delta=r.delta) == pytest.approx(r.epsilon_emp, abs=1e-6)
        assert r.epsilon_emp <= prof.ceiling(r.method) + 1e-9


def test_smoke_archives_run_end_to_end(tmp_path, use_cache):
    """The same code path as the committed archives, at the smoke profile, into a temp folder."""
    use_cache(tmp_path / "cache")
    a = archive.run_archive("audit_querybased_large", profile="smoke", n_jobs=1, directory=tmp_path)
    back = archive.read_archive("audit_querybased_large", directory=tmp_path)
    assert back.meta["profile"] == "smoke" and back.meta["source_hash"] and back.meta["wall_seconds"] > 0
    assert len(back.records) == len(a.records) == 7 * 2  # seven presets x two bound methods
    assert "--profile smoke" in back.meta["command"]


def test_resumable_archive_saves_each_setting_and_resumes(tmp_path, monkeypatch, use_cache):
    """audit_groundhog_large writes its records after every setting ("complete": false until the
    last) and a later run keeps what an earlier session saved, computing only the rest."""
    use_cache(tmp_path / "cache")
    name = "audit_groundhog_large"
    assert name in archive.RESUMABLE
    saves = []
    real_write = archive_store.write_archive

    def spy(n, records, meta, **kw):
        saves.append((len(records), meta["complete"], meta["settings_done"]))
        return real_write(n, records, meta, **kw)

    monkeypatch.setattr(archive_store, "write_archive", spy)
    full = archive.run_archive(name, profile="smoke", n_jobs=1, directory=tmp_path)
    assert len(full.records) == 7 * 2 * 2  # presets x channels x bound methods
    assert [s[2] for s in saves[:-1]] == list(range(1, 15))  # one save per finished setting
    assert [s[1] for s in saves[:-2]] == [False] * 13 and saves[-1][1] is True
    # a session that stopped after 5 settings: keep those rows, recompute the other 9 only
    kept = full.records.groupby(list(archive.SETTING_COLUMNS), sort=False).ngroup() < 5
    partial = full.records[kept.to_numpy()]
    real_write(name, partial, {**full.meta, "complete": False, "settings_done": 5}, directory=tmp_path)
    ran = []
    from pategan_audit.auditing import audit as A

    real_run = A.run_setting
    monkeypatch.setattr(A, "run_setting", lambda s, *a, **k: ran.append(s.key()) or real_run(s, *a, **k))
    saves.clear()
    again = archive.run_archive(name, profile="smoke", n_jobs=1, directory=tmp_path)
    assert len(ran) == 9
    assert again.meta["complete"] and len(again.meta["sessions"]) == 2
    pd.testing.assert_frame_equal(again.records.iloc[: len(partial)].reset_index(drop=True),
                                  partial.reset_index(drop=True), check_dtype=False)
    assert len(again.records) == len(full.records)


@pytest.mark.parametrize("name, rows", [("audit_calibration_large", 3 * 2 * 2), ("audit_querybased_fixed_size_large", 7 * 2)])
def test_calibration_and_fixed_size_archives_run_at_smoke(tmp_path, name, rows, use_cache):
    use_cache(tmp_path / "cache")
    a = archive.run_archive(name, profile="smoke", n_jobs=1, directory=tmp_path)
    assert len(a.records) == rows and a.meta["profile"] == "smoke"
    assert set(a.records["channel"]) == ({"paper", "fixed_size"} if "calibration" in name else {"fixed_size"})


def test_gnmax_cells_pair_each_dataset_with_corrected_and_use_gnmax_teacher_rule():
    from pategan_audit.archive import GNMAX_DATASETS, gnmax_cells
    from pategan_audit.implementations import create

    cells = gnmax_cells("large")
    assert {(c.dataset, c.implementation) for c in cells} == {(d, i) for d in GNMAX_DATASETS for i in ("corrected", "gnmax")}
    assert all(c.n_models * c.n_tables >= 4 and c.epsilon == 1.0 for c in cells)
    g = next(c for c in cells if c.implementation == "gnmax" and c.dataset == "cervical_cancer")
    assert g.num_teachers == create("gnmax")._default_num_teachers(686) == 686
    assert all(c.num_teachers is None for c in cells if c.implementation == "corrected")  # the paper's rule


def test_target_selection_archive_resumes_by_candidate_and_picks_the_largest_auc(tmp_path, monkeypatch, use_cache):
    """audit_targets_large saves after each pair of candidates; a later run keeps them, and the
    target in meta is the candidate with the largest AUC; same numbers as one select_target call."""
    from pategan_audit.auditing import targets as T
    from pategan_audit.auditing.profiles import get_profile
    from pategan_audit.auditing.settings import PresetFactory, attack_data

    use_cache(tmp_path / "cache")
    name = "audit_targets_large"
    assert name in archive.RESUMABLE
    full = archive.run_archive(name, profile="smoke", n_jobs=1, directory=tmp_path)
    prof = get_profile("smoke")
    assert len(full.records) == prof.target_candidates and full.meta["complete"]
    best = full.records.loc[full.records["auc"].idxmax()]
    assert full.meta["target"] == int(best["row"]) and full.meta["target_auc"] == pytest.approx(float(best["auc"]))
    whole = T.select_target(attack_data("groundhog")[1],
                            PresetFactory("original", epsilon=1.0, overrides={"num_teachers": 5, "max_iter": prof.target_iterations}),
                            n_candidates=prof.target_candidates, n_models=prof.target_models, seed=0, cache_namespace=None)
    assert full.records["auc"].tolist() == pytest.approx(whole.candidates["auc"].tolist())
    # a session that stopped after the first candidate: the rerun computes only the other one
    archive.write_archive(name, full.records.iloc[:1], {**full.meta, "complete": False}, directory=tmp_path)
    asked = []
    real = T.select_target
    monkeypatch.setattr(T, "select_target", lambda *a, **k: asked.append(k["rows"]) or real(*a, **k))
    again = archive.run_archive(name, profile="smoke", n_jobs=1, directory=tmp_path)
    assert asked == [[int(full.records["row"].iloc[1])]] and again.meta["complete"]
    # each session says where its fits ran; each row how many workers shared its wall time
    assert [s["device"] for s in again.meta["sessions"]] == ["cpu", "cpu"]
    assert [s["flush_denormal"] for s in again.meta["sessions"]] == [False, False]  # IEEE arithmetic (the default)
    assert again.records["workers"].tolist() == [1, 1]
    assert again.records["device"].tolist() == ["cpu", "cpu"]  # and each candidate where it was fitted
    assert again.meta["core_seconds"] == pytest.approx(round(again.records["wall_seconds"].sum(), 1))
    with pytest.raises(ValueError, match="not among the 2 most isolated"):
        real(attack_data("groundhog")[1], PresetFactory("original"), n_candidates=2, rows=[0], n_models=1)


def test_ablation_archive_runs_each_variant_in_the_ablation_channel(tmp_path, use_cache):
    from pategan_audit.auditing.audit import ablation_variants

    use_cache(tmp_path / "cache")
    a = archive.run_archive("audit_ablation_querybased_large", profile="smoke", n_jobs=1, directory=tmp_path)
    assert set(a.records["channel"]) == {"fixed_size"} and a.meta["complete"]
    for impl, part in a.records.groupby("implementation"):
        wanted = {label for label, _ in ablation_variants(impl, findings=[f for f in ("O1", "O2", "O3", "O4", "O5", "O6", "O9", "O10")
                                                                           if f in _switchable_findings(impl)])}
        assert set(part["variant"]) == wanted
    assert "as benchmarked" in set(a.records["variant"]) and "all fixed" in set(a.records["variant"])


def _switchable_findings(name):
    from pategan_audit.implementations import violations

    return {v.id for v in violations.violations_for(name, kinds=("finding",)) if v.switchable}


def test_only_runs_the_named_presets_and_leaves_the_rest_to_do(tmp_path, use_cache):
    use_cache(tmp_path / "cache")
    a = archive.run_archive("audit_groundhog_large", profile="smoke", n_jobs=1, directory=tmp_path, only=["borealis"])
    assert set(a.records["implementation"]) == {"borealis"} and not a.meta["complete"]
    assert a.meta["settings_done"] == 2  # paper and controlled
    with pytest.raises(ValueError, match="not a preset of this archive"):
        archive.run_archive("audit_groundhog_large", profile="smoke", n_jobs=1, directory=tmp_path, only=["gnmax"])
    with pytest.raises(ValueError, match="needs a resumable archive"):
        archive.run_archive("audit_calibration_large", profile="smoke", n_jobs=1, directory=tmp_path, only=["borealis"])
    with pytest.raises(ValueError, match="no per-preset settings"):
        archive.run_archive("audit_targets_large", profile="smoke", n_jobs=1, directory=tmp_path, only=["original"])


def test_redo_recomputes_only_the_stale_presets_and_keeps_the_rest(tmp_path, monkeypatch, use_cache):
    """--redo PRESETS (a preset changed since its rows were computed): those rows are dropped and
    computed again, the other presets' rows stay byte for byte; the session says what it redid."""
    use_cache(tmp_path / "cache")
    name = "audit_querybased_large"
    first = archive.run_archive(name, profile="smoke", n_jobs=1, directory=tmp_path, only=["borealis", "turing"])
    assert set(first.records["implementation"]) == {"borealis", "turing"} and not first.meta["complete"]
    from pategan_audit.auditing import audit as A

    ran, real_run = [], A.run_setting
    monkeypatch.setattr(A, "run_setting", lambda s, *a, **k: ran.append(s.implementation) or real_run(s, *a, **k))
    again = archive.run_archive(name, profile="smoke", n_jobs=1, directory=tmp_path, redo=["turing"])
    assert ran == ["turing"]
    kept = again.records[again.records["implementation"] == "borealis"].reset_index(drop=True)
    pd.testing.assert_frame_equal(kept, first.records[first.records["implementation"] == "borealis"].reset_index(drop=True),
                                  check_dtype=False)
    assert (again.records["implementation"] == "turing").sum() == (first.records["implementation"] == "turing").sum()
    assert again.meta["sessions"][-1]["presets"] == ["turing"] and again.meta["sessions"][-1]["redone"] is True
    with pytest.raises(ValueError, match="not both"):
        archive.run_archive(name, profile="smoke", n_jobs=1, directory=tmp_path, redo=["turing"], only=["borealis"])
    with pytest.raises(ValueError, match="needs a resumable archive"):
        archive.run_archive("audit_calibration_large", profile="smoke", n_jobs=1, directory=tmp_path, redo=["turing"])


def test_utility_archive_resumes_per_preset(tmp_path, use_cache):
    use_cache(tmp_path / "cache")
    part = archive.run_archive("utility_large", profile="smoke", n_jobs=1, directory=tmp_path, only=["turing"])
    assert set(part.records["implementation"]) == {"turing"} and not part.meta["complete"]
    assert part.meta["presets_done"] == ["turing"]
    with pytest.raises(ValueError, match="not a preset of this archive"):
        archive.run_archive("utility_large", profile="smoke", n_jobs=1, directory=tmp_path, only=["gnmax"])


def test_drop_removes_stale_presets_and_says_so(tmp_path, use_cache):
    use_cache(tmp_path / "cache")
    name = "audit_groundhog_large"
    first = archive.run_archive(name, profile="smoke", n_jobs=1, directory=tmp_path, only=["borealis", "turing"])
    assert first.meta["settings_done"] == 4
    dropped = archive.drop_presets(name, ["turing"], reason="label encoding changed", directory=tmp_path)
    assert set(dropped.records["implementation"]) == {"borealis"}
    assert dropped.meta["settings_done"] == 2 and not dropped.meta["complete"] and "2 of 14 settings" in dropped.meta["runs"]
    assert dropped.meta["dropped"][0]["presets"] == ["turing"] and dropped.meta["dropped"][0]["reason"]
    with pytest.raises(ValueError, match="no rows of these presets"):
        archive.drop_presets(name, ["turing"], reason="again", directory=tmp_path)
    with pytest.raises(ValueError, match="say why"):
        archive.drop_presets(name, ["borealis"], reason=" ", directory=tmp_path)
    with pytest.raises(ValueError, match="needs a resumable archive"):
        archive.drop_presets("audit_calibration_large", ["turing"], reason="x", directory=tmp_path)
    # the next run computes the dropped preset again
    again = archive.run_archive(name, profile="smoke", n_jobs=1, directory=tmp_path, only=["turing"])
    assert set(again.records["implementation"]) == {"borealis", "turing"} and again.meta["dropped"]


def test_sweep_cells_cover_the_eight_presets_on_the_paper_grid_with_one_protocol():
    from pategan_audit.archive import SWEEP_PRESETS, SWEEP_TABLES, sweep_cells
    from pategan_audit.implementations import create
    from pategan_audit.utility import EPSILON_GRID

    cells = sweep_cells("large")
    assert len(cells) == 3 * len(SWEEP_PRESETS) * len(EPSILON_GRID) == 192
    assert {(c.dataset, c.implementation, c.epsilon) for c in cells} == {
        (d, i, e) for d in ("cervical_cancer", "epileptic_seizure", "credit") for i in SWEEP_PRESETS for e in EPSILON_GRID}
    assert {(c.n_models, c.n_tables) for c in cells} == {SWEEP_TABLES}  # ε = 1 too: one protocol per curve
    assert {c.max_iter for c in cells if c.dataset in ("cervical_cancer", "credit")} == {10_000}
    assert {c.subsample for c in cells} == {None}
    assert {c.max_iter for c in cells if c.dataset == "epileptic_seizure"} == {2_000}
    # Cervical first (every preset), cheapest preset first, synthcity last; Epileptic (Figures 1, 8, 9) before Credit
    assert [c.dataset for c in cells[:64]] == ["cervical_cancer"] * 64 and cells[63].implementation == "synthcity"
    assert [c.dataset for c in cells[64:128]] == ["epileptic_seizure"] * 64 and cells[64].implementation == "corrected"
    # gnmax's teacher count follows its public rule at each ε; the others keep the paper's rule
    for c in cells:
        if c.implementation == "gnmax" and c.dataset == "cervical_cancer":
            assert c.num_teachers == create("gnmax", epsilon=c.epsilon)._default_num_teachers(686)
        elif c.implementation != "gnmax":
            assert c.num_teachers is None
    assert len({c.num_teachers for c in cells if c.implementation == "gnmax"}) > 1  # fewer teachers at larger ε


def test_sweep_archive_resumes_per_cell_and_runs_only_named_presets(tmp_path, use_cache):
    use_cache(tmp_path / "cache")
    name = "utility_sweep_large"
    part = archive.run_archive(name, profile="smoke", n_jobs=1, directory=tmp_path, only=["corrected"])
    assert set(part.records["implementation"]) == {"corrected"} and not part.meta["complete"]
    assert part.meta["settings_done"] == 4 and "4 of 8 cells" in part.meta["runs"]
    # a smoke run says it is reduced; it never states the sweep's archived protocol, which it did not run
    assert part.meta["profile_description"] == "smoke run of the archive's cells, reduced (not the archived protocol)"
    assert "ε = 1 only" not in archive.SWEEP_DESCRIPTION
    below = part.records[part.records["epsilon"] == 0.1]
    assert set(below["status"]) == {"not_trained"}  # corrected checks before it spends: none at ε = 0.1
    with pytest.raises(ValueError, match="not a preset of this archive"):
        archive.run_archive(name, profile="smoke", n_jobs=1, directory=tmp_path, only=["gnmax"])
    saved = archive.read_archive(name, directory=tmp_path).records
    full = archive.run_archive(name, profile="smoke", n_jobs=1, directory=tmp_path)
    assert full.meta["complete"] and full.meta["settings_done"] == 8 and len(full.meta["sessions"]) == 2
    again = archive.read_archive(name, directory=tmp_path).records
    pd.testing.assert_frame_equal(again[again["implementation"] == "corrected"].reset_index(drop=True), saved)


def test_a_utility_archive_saves_each_cell_as_its_worker_finishes(tmp_path, monkeypatch, use_cache):
    """With two workers the cells run side by side, each saved as it finishes; the numbers are
    those of one worker (each cell's seeds are its own)."""
    name = "utility_sweep_large"
    use_cache(tmp_path / "one")
    one = archive.run_archive(name, profile="smoke", n_jobs=1, directory=tmp_path / "a", only=["smartnoise"])
    from pategan_audit.utility.run import cell_id

    # one worker computes the cells in the archive's own order (not longest first)
    order = [cell_id(c) for c in archive.sweep_cells("smoke") if getattr(c, "implementation", "real") == "smartnoise"]
    assert one.records["cell"].drop_duplicates().tolist() == order
    use_cache(tmp_path / "two")
    saves = []
    real = archive_store.write_archive
    monkeypatch.setattr(archive_store, "write_archive", lambda n, r, m, **k: saves.append(r["cell"].nunique()) or real(n, r, m, **k))
    two = archive.run_archive(name, profile="smoke", n_jobs=2, directory=tmp_path / "b", only=["smartnoise"])
    assert saves[:-1] == list(range(1, one.meta["settings_done"] + 1))  # one save per finished cell, then the last
    key = ["cell", "model", "table", "classifier"]
    got = two.records.sort_values(key).reset_index(drop=True).drop(columns=["fit_seconds", "eval_seconds"])
    want = one.records.sort_values(key).reset_index(drop=True).drop(columns=["fit_seconds", "eval_seconds"])
    pd.testing.assert_frame_equal(got, want)


def test_a_utility_archive_states_its_own_protocol_only_at_large(tmp_path, use_cache):
    """The archive's description (e.g. :data:`archive.SWEEP_DESCRIPTION`) is the caption of a large
    run; the same cells' runner at another profile says it is reduced (the noticed bug: a smoke run's
    caption stated the large sizes)."""
    use_cache(tmp_path / "cache")
    one = archive.sweep_cells("smoke")[:1]
    runner = utility_archives.cells_archive(lambda profile_name: one, "one cell", description="THE ARCHIVED PROTOCOL")
    _, large = runner("large", 1, None)
    _, smoke = runner("smoke", 1, None)
    assert large["profile_description"] == "THE ARCHIVED PROTOCOL"
    assert smoke["profile_description"] == "smoke run of the archive's cells, reduced (not the archived protocol)"
    _, plain = utility_archives.cells_archive(lambda profile_name: one, "one cell")("smoke", 1, None)
    from pategan_audit import utility as U
    assert plain["profile_description"] == U.get_profile("smoke").description  # no description: the profile's own


def test_an_archive_runs_at_its_own_profile_unless_told(tmp_path, monkeypatch):
    """The GroundHog ablation is committed at ``resolvable`` (200 per world); every other archive at
    ``large``; an explicit profile wins."""
    seen = []

    def fake(profile_name, n_jobs, backend, **kwargs):
        seen.append(profile_name)
        return pd.DataFrame({"implementation": ["original"]}), {"complete": True}

    for name in ("audit_ablation_groundhog_large", "audit_ablation_querybased_large"):
        monkeypatch.setitem(archive.ARCHIVES, name, fake)
    archive.run_archive("audit_ablation_groundhog_large", n_jobs=1, directory=tmp_path)
    archive.run_archive("audit_ablation_querybased_large", n_jobs=1, directory=tmp_path)
    # the folder holds the resolvable run: replacing it with a smoke run takes force
    archive.run_archive("audit_ablation_groundhog_large", profile="smoke", n_jobs=1, directory=tmp_path, force=True)
    assert seen == ["resolvable", "large", "smoke"]
    assert archive.read_archive("audit_ablation_groundhog_large", directory=tmp_path).meta["command"].endswith(
        "--profile smoke --n-jobs 1")


def test_tables_cells_cover_credit_and_isolet_with_the_papers_best_of_nine_on_credit():
    """utility_tables_large: Table 4's missing rows (Credit, ISOLET), Setting A first on each, the
    seven presets cheapest first, Credit best of 3 x 3 (the paper's 9), ISOLET 2 x 2, the paper's
    10,000-iteration cap, full splits, AdaBoost as the authors ran it."""
    from pategan_audit.archive import ALL_PRESETS, TABLES_ADABOOST, TABLES_TABLES, tables_cells
    from pategan_audit.utility import SettingACell

    cells = tables_cells("large")
    assert len(cells) == 2 * (1 + len(ALL_PRESETS)) == 16
    assert [c.dataset for c in cells] == ["credit"] * 8 + ["isolet"] * 8  # Credit scores ~10x faster
    assert isinstance(cells[0], SettingACell) and isinstance(cells[8], SettingACell)
    synth = [c for c in cells if not isinstance(c, SettingACell)]
    assert {(c.dataset, c.implementation) for c in synth} == {(d, i) for d in ("credit", "isolet") for i in ALL_PRESETS}
    assert {(c.dataset, c.n_models, c.n_tables) for c in synth} == {("credit", *TABLES_TABLES["credit"]),
                                                                     ("isolet", *TABLES_TABLES["isolet"])}
    assert TABLES_TABLES["credit"] == (3, 3)
    assert {c.max_iter for c in synth} == {10_000} and {c.subsample for c in cells} == {None}
    assert {c.epsilon for c in synth} == {1.0} and {c.adaboost for c in cells} == {TABLES_ADABOOST} == {"SAMME.R"}
    assert synth[0].implementation == "corrected" and synth[6].implementation == "synthcity"


def test_tables_archive_resumes_per_cell_with_setting_a_as_the_preset_real(tmp_path, use_cache):
    use_cache(tmp_path / "cache")
    name = "utility_tables_large"
    assert name in archive.RESUMABLE
    part = archive.run_archive(name, profile="smoke", n_jobs=1, directory=tmp_path, only=["real"])
    assert set(part.records["implementation"]) == {"real"} and not part.meta["complete"]
    assert part.meta["settings_done"] == 1 and "1 of 3 cells" in part.meta["runs"]
    assert part.meta["adaboost"].startswith("SAMME.R")
    # the large caption states the bundled split; a smoke run says it is reduced instead
    assert "Credit the bundled 20 % split" in archive.TABLES_DESCRIPTION
    assert part.meta["profile_description"].startswith("smoke run of the archive's cells, reduced")
    saved = archive.read_archive(name, directory=tmp_path).records
    full = archive.run_archive(name, profile="smoke", n_jobs=1, directory=tmp_path)
    assert full.meta["complete"] and set(full.records["implementation"]) == {"real", "corrected", "smartnoise"}
    again = archive.read_archive(name, directory=tmp_path).records
    pd.testing.assert_frame_equal(again[again["implementation"] == "real"].dropna(axis=1, how="all"),
                                  saved.dropna(axis=1, how="all"), check_dtype=False)


def test_calibration_channels_put_the_null_generator_in_both_games_controlled_channel(tmp_path, use_cache):
    """The null generator's calibration line in every game and channel (issue #12): the controlled
    channel releases equal sizes in both worlds; in GroundHog (686 rows in both worlds already) it
    is the paper game's run, output for output."""
    use_cache(tmp_path / "cache")
    got = archive.run_archive("audit_calibration_channels_large", profile="smoke", n_jobs=1, directory=tmp_path)
    rec = got.records[got.records["implementation"] == "ignore training data"]
    assert set(zip(rec["attack"], rec["channel"])) == {("groundhog", "paper"), ("groundhog", "controlled"),
                                                        ("querybased", "controlled")}
    ctrl = rec[rec["channel"] == "controlled"]
    assert (ctrl["n_synth_rows_out"] == ctrl["n_synth_rows_in"]).all()
    gh = rec[rec["attack"] == "groundhog"].groupby("channel")["outputs_digest"].first()
    assert gh["paper"] == gh["controlled"]
    assert "controlled channel" in got.meta["runs"]


def test_variants_cells_meet_each_datasets_table4_protocol():
    from pategan_audit.archive import VARIANTS_ADABOOST, VARIANTS_TABLES, variants_cells
    from pategan_audit.utility.profiles import teacher_sweep_k

    cells = variants_cells("large")
    by = {}
    for c in cells:
        by.setdefault(c.dataset, []).append(c)
    assert list(by) == ["cervical_cancer", "epileptic_seizure", "credit", "isolet"]
    for d, part in by.items():
        assert {(c.n_models, c.n_tables) for c in part} == {VARIANTS_TABLES[d]}
        assert {c.adaboost for c in part} == {VARIANTS_ADABOOST[d]}
        assert {c.max_iter for c in part} == {2_000 if d == "epileptic_seizure" else 10_000}
        assert [c.implementation for c in part if c.overrides == (("conditional", True),)] == ["original"]
        assert sorted(c.implementation for c in part if c.overrides == (("hyperparameters", "paper"),)) == sorted(
            ("original", "updated", "synthcity", "turing", "borealis", "smartnoise"))
    sweep = [c for c in by["epileptic_seizure"] if not c.overrides]
    assert [c.num_teachers for c in sweep[::4]] == [teacher_sweep_k(r) for r in (5000, 1000, 500, 100, 50)]
    assert {c.implementation for c in sweep} == {"updated", "synthcity", "borealis", "smartnoise"}
    assert len(cells) == 4 * 7 + 20
    assert [c.dataset for c in variants_cells("smoke")] == ["cervical_cancer"] * 2


def test_mnist_cells_state_one_reduced_protocol_for_figure10():
    from pategan_audit.archive import ALL_PRESETS, MNIST_MAX_ITER, MNIST_SUBSAMPLE, MNIST_TABLES, mnist_cells
    from pategan_audit.classifiers import MULTICLASS_CLASSIFIERS
    from pategan_audit.utility import EPSILON_GRID, SettingACell

    cells = mnist_cells("large")
    assert isinstance(cells[0], SettingACell) and cells[0].subsample == MNIST_SUBSAMPLE
    main = cells[1:]
    assert len(main) == len(ALL_PRESETS) * len(EPSILON_GRID) == 56
    assert {(c.implementation, c.epsilon) for c in main} == {(i, e) for i in ALL_PRESETS for e in EPSILON_GRID}
    assert {(c.dataset, c.subsample, c.max_iter, (c.n_models, c.n_tables)) for c in main} == {
        ("mnist", MNIST_SUBSAMPLE, MNIST_MAX_ITER, MNIST_TABLES)}
    assert {c.classifiers for c in cells} == {MULTICLASS_CLASSIFIERS}
    # cheapest preset first, every ε of a preset together, synthcity last
    assert main[0].implementation == "corrected" and main[-1].implementation == "synthcity"
    assert [c.epsilon for c in main[:len(EPSILON_GRID)]] == list(EPSILON_GRID)
    assert len(mnist_cells("smoke")) == 5


def test_spread_presets_alternates_presets_per_dataset_and_keeps_each_order():
    from types import SimpleNamespace as C

    cells = [C(dataset=d, implementation=p, epsilon=e) for d in ("a", "b") for p in ("x", "y", "z") for e in (1, 2)]
    key = lambda cs: [(c.dataset, c.implementation, c.epsilon) for c in cs]  # noqa: E731
    assert key(archive.spread_presets(cells, 1)) == key(cells)
    two = key(archive.spread_presets(cells, 2))
    assert two[:6] == [("a", "x", 1), ("a", "y", 1), ("a", "x", 2), ("a", "y", 2), ("a", "z", 1), ("a", "z", 2)]
    assert two[6:8] == [("b", "x", 1), ("b", "y", 1)] and sorted(two) == sorted(key(cells))
    sweep = archive.spread_presets(archive.sweep_cells("large"), 2)
    assert len(sweep) == 192 and len({id(c) for c in sweep}) == 192
    # with two workers, no two cells of one (dataset, preset) are next to each other
    assert all((a.dataset, a.implementation) != (b.dataset, b.implementation) for a, b in zip(sweep, sweep[1:]))
    with pytest.raises(ValueError, match="workers"):
        archive.spread_presets(cells, 0)


def test_best25_cells_run_epileptic_and_isolet_at_the_papers_best_of_25_and_10000_cap():
    """utility_best25_large (issue 38): Table 4's Epileptic and ISOLET rows at the paper's protocol,
    best of 5 x 5 at the 10,000-iteration cap (utility_large ran Epileptic at 2 x 2 with a 2,000 cap),
    Epileptic first with its Setting A, the seven presets cheapest first, the authors' AdaBoost."""
    from pategan_audit.archive import ALL_PRESETS, BEST25_TABLES, TABLES_ADABOOST, best25_cells
    from pategan_audit.utility import SettingACell

    cells = best25_cells("large")
    assert len(cells) == 1 + 2 * len(ALL_PRESETS) == 15
    assert [c.dataset for c in cells] == ["epileptic_seizure"] * 8 + ["isolet"] * 7
    assert isinstance(cells[0], SettingACell) and not any(isinstance(c, SettingACell) for c in cells[1:])
    synth = cells[1:]
    assert {(c.dataset, c.implementation) for c in synth} == {(d, i) for d in ("epileptic_seizure", "isolet")
                                                               for i in ALL_PRESETS}
    assert BEST25_TABLES == (5, 5) and {(c.n_models, c.n_tables) for c in synth} == {(5, 5)}
    assert {c.max_iter for c in synth} == {10_000} and {c.subsample for c in cells} == {None}
    assert {c.epsilon for c in synth} == {1.0} and {c.adaboost for c in cells} == {TABLES_ADABOOST}
    assert synth[0].implementation == "corrected" and synth[-1].implementation == "synthcity"
    assert "utility_best25_large" in archive.RESUMABLE


def test_past_ceiling_cells_are_the_archived_channels_near_the_ceiling():
    """PAST_CEILING_CELLS is the rule applied to the committed 1,000-per-world archives (and the
    rule discriminates: at half the margin borealis' GroundHog 4.61 drops out)."""
    records = pd.concat([_committed(n).records for n in archive.CEILING_SOURCES], ignore_index=True)
    listed = {(a, i, c) for a, cells in archive.PAST_CEILING_CELLS.items() for i, c in cells}
    assert near_ceiling(records, margin=archive.CEILING_MARGIN) == listed
    assert ("groundhog", "borealis", "paper") not in near_ceiling(records, margin=0.05)
    assert not any(a == "querybased" and c == "paper" for a, _, c in listed)


def test_past_ceiling_profiles_keep_the_papers_attack_and_grow_only_the_test_split():
    big, cpu, large = audit_profile("ceiling10k"), audit_profile("ceiling2k"), audit_profile("large")
    assert big.split == (400, 200, 10_000) and cpu.split == (400, 200, 2_000)
    assert big.split[:2] == cpu.split[:2] == large.split[:2]
    assert big.ceiling() == pytest.approx(7.905, abs=1e-3) and cpu.ceiling() == pytest.approx(6.295, abs=1e-3)
    for name in ("ceiling10k", "ceiling2k"):
        assert archive.ARCHIVE_PROFILES[f"audit_past_ceiling_{'querybased' if name == 'ceiling10k' else 'groundhog'}"] == name
    with pytest.raises(ValueError, match="adding up to n_per_world"):
        dataclasses.replace(large, outputs=(400, 200, 300))


def test_an_uneven_split_trains_the_same_attack_and_tests_on_more_outputs(use_cache, tmp_path):
    """With outputs (2, 1, 4) at 7 per world the forest and threshold are those of the 2 : 1 : 2 game
    at 5 per world (the same first shadow models, the same seed); only the test counts grow."""
    from pategan_audit.auditing.audit import make_settings, run_setting

    use_cache(tmp_path / "cache")
    small = audit_profile("smoke")
    wide = dataclasses.replace(small, name="smoke-wide", n_per_world=7, outputs=(2, 1, 4))
    [setting] = make_settings(small, attacks=("querybased",), implementations=("updated",), channels=("fixed_size",))
    a = {r["method"]: r for r in run_setting(setting, small, options=runner.RunOptions(n_jobs=1))}
    b = {r["method"]: r for r in run_setting(setting, wide, options=runner.RunOptions(n_jobs=1))}
    for m in a:
        assert (a[m]["n_train"], a[m]["n_valid"], a[m]["n_test"]) == (2, 1, 2)
        assert (b[m]["n_train"], b[m]["n_valid"], b[m]["n_test"]) == (2, 1, 4)
        assert [a[m][k] for k in ("threshold", "direction", "valid_FP", "valid_TN", "valid_FN", "valid_TP")] == \
               [b[m][k] for k in ("threshold", "direction", "valid_FP", "valid_TN", "valid_FN", "valid_TP")]
        assert b[m]["test_FP"] + b[m]["test_TN"] == b[m]["test_FN"] + b[m]["test_TP"] == 4


def test_past_ceiling_archive_runs_its_cells_at_smoke(tmp_path, use_cache):
    use_cache(tmp_path / "cache")
    a = archive.run_archive("audit_past_ceiling_querybased", profile="smoke", n_jobs=1, directory=tmp_path)
    got = list(dict.fromkeys(zip(a.records["implementation"], a.records["channel"])))
    assert got == list(archive.PAST_CEILING_CELLS["querybased"]) and a.meta["complete"]
    assert a.meta["cells"] == [list(c) for c in archive.PAST_CEILING_CELLS["querybased"]] and a.meta["cells_rule"]
    assert "(querybased: original fixed_size, turing fixed_size, smartnoise fixed_size," in a.meta["runs"]
