"""``benchmarks/train_speed.py --single-fit``: the two-tree protocol (issue 39, "a single fit is no
slower than today") run on one preset with HEAD as its own base, and its refusals of bad input."""
import json
import math
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from pategan_audit import runner
from tests._benchmarks import load_benchmark

train_speed = load_benchmark("train_speed")


def test_a_base_that_is_no_commit_is_refused_before_any_work(capsys):
    with pytest.raises(SystemExit) as stopped:
        train_speed.main(["--single-fit", "--base", "no-such-commit-7f3a"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "--base 'no-such-commit-7f3a' is not a commit of this repository" in err
    assert "git rev-parse" in err  # says how to find a good one
    with pytest.raises(ValueError, match="is not a commit"):
        train_speed.resolve_commit("0" * 40)


def test_single_fit_needs_a_base_and_known_presets(capsys):
    with pytest.raises(SystemExit):
        train_speed.main(["--single-fit"])
    assert "--single-fit needs --base COMMIT" in capsys.readouterr().err
    with pytest.raises(ValueError, match="choose among original, updated"):
        train_speed.check_single_fit("HEAD", ["pategan"], 5)
    with pytest.raises(ValueError, match="--rounds 0: use a positive integer"):
        train_speed.check_single_fit("HEAD", ["turing"], 0)
    with pytest.raises(ValueError, match="--pairs 0: use a positive integer"):
        train_speed.check_single_fit("HEAD", ["turing"], 5, 0)


def _row(cpu_base, cpu_new, diff=0.0):
    """A :func:`time_preset` row of one pair with the given per-round CPU seconds (wall = CPU)."""
    fits = {arm: [{"cpu_s": c, "wall_s": c, "iterations": 3, "load": [1.0, 1.0]} for c in cpus]
            for arm, cpus in (("base", cpu_base), ("new", cpu_new))}
    paired = float(np.median([n / b for n, b in zip(cpu_new, cpu_base)]))
    return {"preset": "turing", "fits": fits, "cpu_ratio_paired": paired, "iterations_base": [3], "iterations_new": [3],
            "load_min": 1.0, "load_max": 1.0, "samples_equal": diff == 0.0, "sample_max_abs_diff": diff}


def test_pairs_are_pooled_over_all_their_fits():
    """Two pairs, one whose new worker is 20 % slower and one 20 % faster (what identical code
    gives between two processes): pooled, the ratio is 1, and each pair's own ratio is listed."""
    row = train_speed.pool_pairs([_row([1.0, 1.0, 1.0], [1.2, 1.2, 1.2]), _row([1.0, 1.0, 1.0], [0.8, 0.8, 0.8])])
    assert row["pair_cpu_ratios"] == pytest.approx([1.2, 0.8])
    assert row["cpu_ratio"] == pytest.approx(1.0) and row["base_cpu_s"] == 1.0
    assert len(row["fits"]["new"]) == 6 and {f["pair"] for f in row["fits"]["new"]} == {0, 1}
    assert row["samples_equal"] and row["sample_max_abs_diff"] == 0.0
    differ = train_speed.pool_pairs([_row([1.0], [1.0]), _row([1.0], [1.0], diff="columns, shapes or missing values differ")])
    assert not differ["samples_equal"] and differ["sample_max_abs_diff"].startswith("columns")
    single = _row([1.0], [2.0])
    assert train_speed.pool_pairs([single]) is single


def test_sample_difference():
    a = {"columns": ["x", "y"], "sample": np.array([[0.0, 1.0], [np.nan, 2.0]])}
    assert train_speed.sample_difference(a, a) == 0.0
    shifted = {"columns": ["x", "y"], "sample": a["sample"] + np.array([[0.0, 0.5], [0.0, 0.0]])}
    assert train_speed.sample_difference(a, shifted) == 0.5
    assert train_speed.sample_difference(a, {**a, "columns": ["x", "z"]}) == math.inf
    assert train_speed.sample_difference(a, {**a, "sample": np.nan_to_num(a["sample"])}) == math.inf


@pytest.mark.slow
def test_head_against_itself_one_preset(tmp_path):
    out = tmp_path / "single_fit.json"
    head = train_speed.resolve_commit("HEAD")  # by id: a commit landing meanwhile does not move the base
    train_speed.single_fit(head, ["turing"], rounds=2, pairs=2, extra_kwargs={"turing": {"max_iter": 3}}, out=out)
    data = json.loads(out.read_text())
    assert data["base"] == data["base_commit"] == head
    assert len(data["head_commit"]) == 40
    for key in ("cpu_count", "threads", "torch", "rounds", "loadavg_1min_before_after", "uncommitted_src_changes"):
        assert key in data
    assert data["threads"] == 1 and data["rounds"] == 2 and data["pairs"] == 2
    # each worker names its package inside its own tree (no machine paths in the results)
    assert data["workers"]["base"]["package"] == data["workers"]["new"]["package"] == "src/pategan_audit/__init__.py"
    worktree = Path(tempfile.gettempdir()) / f"{train_speed.WORKTREE_PREFIX}{head[:12]}"
    assert not worktree.exists()  # removed at the end
    listed = subprocess.run(["git", "worktree", "list"], cwd=runner.REPO_ROOT, capture_output=True, text=True).stdout
    assert str(worktree) not in listed
    (row,) = data["results"]
    assert row["preset"] == "turing" and row["iterations_base"] == row["iterations_new"] == [3]
    assert len(row["fits"]["base"]) == len(row["fits"]["new"]) == 4 and len(row["pair_cpu_ratios"]) == 2
    for key in ("cpu_ratio", "wall_ratio"):
        assert math.isfinite(row[key]) and row[key] > 0
    assert row["cpu_ratio"] == pytest.approx(row["new_cpu_s"] / row["base_cpu_s"])
    if not data["uncommitted_src_changes"]:  # both arms run the same code: the same numbers
        assert row["samples_equal"] and row["sample_max_abs_diff"] == 0.0


@pytest.mark.slow
def test_a_worker_refuses_a_package_from_another_tree(tmp_path):
    with pytest.raises(RuntimeError, match="not from"):
        train_speed.FitWorker("stray", tmp_path, 1)  # no package under tmp_path: the installed tree is imported
