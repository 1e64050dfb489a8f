"""benchmarks/redraws.py: the redraws are the archive's Cervical Table 4 cells with another master
seed and nothing else; a rerun skips the (preset, seed) pairs already written; the seed-0 check
tells the archive's records from others. No training here (a fake evaluator)."""
import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

from pategan_audit import archive
from pategan_audit import utility as U
from pategan_audit.utility.archives import archived_panel
from pategan_audit.utility.run import cell_id

from ._benchmarks import load_benchmark


@pytest.fixture(scope="module")
def rd():
    return load_benchmark("redraws")


@pytest.fixture(scope="module")
def arch():
    found = archive.read_archive("utility_large")
    assert found is not None, "results/archive/utility_large is committed with the project"
    return found


def test_cells_are_the_archives_own_and_a_redraw_changes_only_the_seed(rd, arch):
    cells = rd.archive_cells(arch.meta)
    assert sorted(cells) == sorted(rd.PRESETS_BY_COST)
    # the archive's construction (profile large, its SAMME panel) gives the same cells
    library = {c.implementation: c for c in archived_panel(U.main_cells(
        U.get_profile("large"), epsilon=U.MAIN_EPSILON, implementations=(*U.PAPER_IMPLEMENTATIONS, "corrected")))
        if c.dataset == "cervical_cancer"}
    assert cells == library
    for preset, cell in cells.items():
        assert cell.adaboost == "SAMME" and cell.n_models == 5 and cell.n_tables == 5 and cell.max_iter == 10_000
        # seed 0 is the archived cell itself: its id is the one in the archive's records
        archived_ids = set(arch.records.loc[(arch.records["dataset"] == "cervical_cancer")
                                            & (arch.records["implementation"] == preset), "cell"])
        assert archived_ids == {cell_id(rd.redraw(cell, 0))}
        for seed in (1, 4):
            again = rd.redraw(cell, seed)
            assert again.seed == seed
            assert dataclasses.replace(again, seed=cell.seed) == cell
            assert cell_id(again) != cell_id(cell)


def test_a_cell_whose_recorded_key_no_longer_matches_is_refused(rd, arch):
    meta = json.loads(json.dumps(arch.meta))
    key = next(c for c in meta["cells"] if c.get("kind") == "setting_b" and c["dataset"] == "cervical_cancer")
    key["adaboost"] = "SAMME"  # a key the archive never wrote (SAMME is left out of keys)
    with pytest.raises(ValueError, match="does not match its recorded key"):
        rd.archive_cells(meta)


def _fake(calls):
    def evaluate(cell):
        calls.append((cell.implementation, cell.seed))
        return pd.DataFrame({"cell": cell_id(cell), "implementation": cell.implementation, "seed": cell.seed,
                             "model": [0, 0], "table": [0, 0], "classifier": ["LDA", "MLP"],
                             "auroc": [0.5 + cell.seed / 100, 0.6], "auprc": [0.1, 0.2]})
    return evaluate


def test_a_rerun_skips_the_pairs_already_written(rd, arch, tmp_path):
    cells = rd.archive_cells(arch.meta)
    calls: list = []
    rd.run_redraws(cells, ["smartnoise", "corrected"], [1, 2], out_dir=tmp_path, evaluate=_fake(calls),
                   code_state=dict)
    assert calls == [("smartnoise", 1), ("smartnoise", 2), ("corrected", 1), ("corrected", 2)]
    calls.clear()
    records = rd.run_redraws(cells, ["smartnoise", "corrected"], [1, 2, 3], out_dir=tmp_path,
                             evaluate=_fake(calls), code_state=dict)
    assert calls == [("smartnoise", 3), ("corrected", 3)]
    written = pd.read_csv(tmp_path / rd.RECORDS)
    assert len(written) == len(records) == 12
    assert rd.done_pairs(written) == {(p, s) for p in ("smartnoise", "corrected") for s in (1, 2, 3)}
    assert (written["master_seed"] == written["seed"]).all()
    meta = json.loads((tmp_path / rd.META).read_text())
    assert [(e["implementation"], e["master_seed"]) for e in meta["cells_done"]] == [
        ("smartnoise", 1), ("smartnoise", 2), ("corrected", 1), ("corrected", 2), ("smartnoise", 3), ("corrected", 3)]
    assert len(meta["sessions"]) == 2 and meta["sessions"][1]["cells"] == ["smartnoise@3", "corrected@3"]
    assert all(len(e["load_start"]) == 3 and e["wall_seconds"] >= 0 for e in meta["cells_done"])
    calls.clear()
    rd.run_redraws(cells, ["smartnoise"], [1, 2, 3], out_dir=tmp_path, evaluate=_fake(calls), code_state=dict)
    assert calls == []


def test_bad_seeds_and_presets_are_refused_before_any_work(rd, arch, tmp_path):
    cells = rd.archive_cells(arch.meta)
    assert rd.parse_seeds("1-3,7") == [1, 2, 3, 7]
    for bad in ("", "3-1", "a", "-2"):
        with pytest.raises(ValueError, match="--seeds"):
            rd.parse_seeds(bad)
    assert rd.parse_presets("turing,smartnoise", cells) == ["smartnoise", "turing"]  # cheapest first
    with pytest.raises(ValueError, match="gnmax"):
        rd.parse_presets("gnmax", cells)
    with pytest.raises(ValueError, match="archive's own draw"):
        rd.run_redraws(cells, ["smartnoise"], [0, 1], out_dir=tmp_path, evaluate=_fake([]), code_state=dict)
    assert not (tmp_path / rd.RECORDS).exists()


def test_the_seed_zero_check_tells_the_archives_records_from_others(rd, arch):
    cells = rd.archive_cells(arch.meta)
    rows = arch.records[(arch.records["dataset"] == "cervical_cancer") & (arch.records["implementation"] == "smartnoise")]
    same = rd.check_archive(cells, ["smartnoise"], arch.records, evaluate=lambda cell: rows.copy())
    assert same["smartnoise"]["identical"] and same["smartnoise"]["rows_unmatched"] == 0

    def one_mlp_off(cell):
        out = rows.copy()
        first = out.index[out["classifier"] == "MLP"][0]
        out.loc[first, "auroc"] = np.nextafter(out.loc[first, "auroc"], 2.0)  # one unit in the last place
        return out

    off = rd.check_archive(cells, ["smartnoise"], arch.records, evaluate=one_mlp_off)
    assert not off["smartnoise"]["identical"] and off["smartnoise"]["columns_differing"] == {"auroc": 1}
    assert off["smartnoise"]["within_rounding"] and off["smartnoise"]["rows_differing"][0]["classifier"] == "MLP"

    def one_mlp_moved(cell):
        out = one_mlp_off(cell)
        out.loc[out.index[out["classifier"] == "MLP"][1], "auprc"] += 1e-3
        return out

    moved = rd.check_archive(cells, ["smartnoise"], arch.records, evaluate=one_mlp_moved)
    assert not moved["smartnoise"]["within_rounding"] and moved["smartnoise"]["columns_differing"] == {"auroc": 1, "auprc": 1}
