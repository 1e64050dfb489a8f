"""pategan_audit.pages.report.Section: one results folder holds one run. A new run moves the previous
run's outputs aside before writing, so a run stopped mid-way never leaves a mix of two runs'
files under one run.json (issue #37)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import matplotlib.pyplot as plt
import pandas as pd

from pategan_audit.pages.report import Section

PREVIOUS = ".previous"  # where the previous run goes: <results>/.previous/<section>/ (report.PREVIOUS)


def _files(folder):
    return sorted(p.name for p in folder.iterdir())


def _figure():
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    return fig


def _previous_run(results):
    """A finished book run of the utility section: two tables and a figure."""
    old = Section("utility", profile="book", eps=1.0, seed=0, results_dir=results)
    old.table(pd.DataFrame({"a": [1]}), "table4")
    old.table(pd.DataFrame({"a": [2]}), "table5")
    old.figure(_figure(), "figure1")
    plt.close("all")
    return old


def test_a_new_run_starts_from_an_empty_folder_and_keeps_the_last_run_aside(tmp_path, capsys):
    results = tmp_path / "results"
    _previous_run(results)
    capsys.readouterr()
    new = Section("utility", profile="smoke", eps=2.0, seed=0, results_dir=results)
    new.table(pd.DataFrame({"b": [3]}), "table6")
    folder = results / "utility"
    assert _files(folder) == ["run.json", "table6.csv"]
    run = json.loads((folder / "run.json").read_text())
    assert run["profile"] == "smoke" and run["outputs"] == ["table6.csv"]
    # it says so: on stderr (the parameters differ) and in run.json
    err = capsys.readouterr().err
    assert "previous run's 5 files" in err and "profile book" in err and PREVIOUS in err
    assert run["replaced"]["files"] == 5 and run["replaced"]["run"]["profile"] == "book"
    backup = results / PREVIOUS / "utility"
    assert _files(backup) == ["figure1.pdf", "figure1.png", "run.json", "table4.csv", "table5.csv"]
    # only the last run is kept aside
    Section("utility", profile="smoke", eps=2.0, seed=0, results_dir=results)
    assert _files(backup) == ["run.json", "table6.csv"]
    assert _files(folder) == ["run.json"]


def test_a_rerun_with_the_same_parameters_is_quiet_but_recorded(tmp_path, capsys):
    results = tmp_path / "results"
    Section("auditing", profile="smoke", eps=1.0, seed=0, results_dir=results).table(pd.DataFrame({"a": [1]}), "t")
    capsys.readouterr()
    again = Section("auditing", profile="smoke", eps=1.0, seed=0, results_dir=results)
    assert capsys.readouterr().err == ""
    assert again.replaced["files"] == 2 and _files(results / "auditing") == ["run.json"]
    assert json.loads((results / "auditing" / "run.json").read_text())["replaced"]["files"] == 2


def test_an_empty_or_missing_folder_replaces_nothing(tmp_path):
    sec = Section("utility", profile="smoke", eps=1.0, seed=0, results_dir=tmp_path)
    assert sec.replaced is None and "replaced" not in json.loads((tmp_path / "utility" / "run.json").read_text())
    assert not (tmp_path / PREVIOUS).exists()


def test_a_figure_written_early_is_in_the_folder_at_the_end(tmp_path):
    sec = Section("training_traces", profile="smoke", eps=1.0, seed=0, results_dir=tmp_path)
    sec.figure(_figure(), "figure2")
    plt.close("all")
    for i in range(3):
        sec.table(pd.DataFrame({"a": [i]}), f"t{i}")
    sec.scorecard([{"table": "figure2", "row": "r", "column": "c", "ours": 1.0}])
    folder = tmp_path / "training_traces"
    assert _files(folder) == ["figure2.pdf", "figure2.png", "run.json", "scorecard.csv", "t0.csv", "t1.csv", "t2.csv"]
    assert json.loads((folder / "run.json").read_text())["outputs"][:2] == ["figure2.png", "figure2.pdf"]


def test_a_run_killed_mid_way_leaves_its_own_outputs_only(tmp_path):
    """The reviewer's case: a notebook run killed in a folder that held another run's files left
    new and old files under the new run's run.json."""
    results = tmp_path / "results"
    _previous_run(results)
    script = textwrap.dedent(f"""
        import os, signal
        import pandas as pd
        from pategan_audit.pages.report import Section
        sec = Section("utility", profile="smoke", eps=2.0, seed=0, results_dir={str(results)!r})
        sec.table(pd.DataFrame({{"a": [9]}}), "table4")
        os.kill(os.getpid(), signal.SIGKILL)  # killed before the run writes table5 and figure1
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == -9, done.stderr
    folder = results / "utility"
    assert _files(folder) == ["run.json", "table4.csv"]
    run = json.loads((folder / "run.json").read_text())
    assert run["profile"] == "smoke" and run["outputs"] == ["table4.csv"]
    assert (folder / "table4.csv").read_text().splitlines()[1] == "0,9"
    assert "table5.csv" in _files(results / PREVIOUS / "utility")  # the killed-over run is kept aside
