"""The archive table of the "How to reproduce" page (:mod:`pategan_audit.pages.archives`): every
number comes from the archive's meta.json, a partial archive says "k of n", a missing one "not
computed" with its command, and the book hook writes it where ``book/reproduce.md`` includes it."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from pategan_audit import archive as A
from pategan_audit.pages.bookhook import ARCHIVE_TABLE, SUMMARY_TARGET, place_archive_table
from pategan_audit.pages import archives as T

REPO = Path(__file__).resolve().parents[2]


def _cell(dataset, n_models, n_tables, max_iter, preset="borealis"):
    return {"kind": "setting_b", "dataset": dataset, "implementation": preset, "epsilon": 1.0,
            "n_models": n_models, "n_tables": n_tables, "max_iter": max_iter, "subsample": None}


def _utility_meta(**extra):
    cells = [_cell("cervical_cancer", 5, 5, 10_000), _cell("cervical_cancer", 5, 5, 10_000, "updated"),
             _cell("epileptic_seizure", 2, 2, 2_000), {"kind": "setting_a", "dataset": "epileptic_seizure"}]
    meta = {"profile": "large", "cells": cells, "complete": True, "settings_done": 4, "wall_seconds": 5_400.0,
            "core_seconds_measured": 9_000.0, "cpus": 2, "git_commit": "0123456789abcdef" * 2 + "01234567",
            "sessions": [{"cpus": 2, "device": "cpu", "git_commit": "f" * 40},
                         {"cpus": 16, "device": "cuda", "git_commit": "f" * 40}]}
    return {**meta, **extra}


def _records():
    return pd.DataFrame({"implementation": ["borealis"], "dataset": ["cervical_cancer"], "auroc": [0.5]})


@pytest.fixture
def store(tmp_path):
    A.write_archive("utility_gnmax_large", _records(), _utility_meta(), directory=tmp_path)
    A.write_archive("utility_sweep_large", _records(),
                    _utility_meta(complete=False, settings_done=3, wall_seconds=45.0, core_seconds_measured=0.0,
                                  sessions=[{"git_commit": "e" * 40}], cpus=4),
                    directory=tmp_path)
    A.write_archive("audit_groundhog_large", _records(),
                    {"profile": "smoke", "profile_knobs": {"n_per_world": 30},
                     "settings": [{"attack": "groundhog", "implementation": p, "iterations": it}
                                  for p, it in (("original", 50), ("borealis", 50), ("synthcity", 20))],
                     "complete": False, "settings_done": 1, "wall_seconds": 30_000.0,
                     "core_seconds_measured": 36_000.0, "cpus": 2, "git_commit": "d" * 40},
                    directory=tmp_path)
    return tmp_path


NAMES = ["utility_gnmax_large", "utility_sweep_large", "audit_groundhog_large", "utility_best25_large"]


def test_every_archive_says_what_it_feeds():
    assert set(T.FEEDS) == set(A.ARCHIVES)


def test_rows_are_read_from_meta(store):
    table = T.archive_table(store, names=NAMES).set_index("archive")
    full = table.loc["utility_gnmax_large"]
    assert full["status"] == "complete"
    assert full["compute"] == "90 min wall-clock, 2.5 core-hours"
    assert full["machine"] == "2 CPUs; 16 CPUs + cuda"
    assert full["code"].startswith("`0123456789`")
    assert full["protocol"] == ("profile `large`; cervical_cancer: best of 5 × 5 = 25, cap 10,000; "
                                "epileptic_seizure: best of 2 × 2 = 4, cap 2,000")
    assert full["regenerate"] == "python -m pategan_audit.archive utility_gnmax_large"
    assert full["feeds"] == T.FEEDS["utility_gnmax_large"]

    audit = table.loc["audit_groundhog_large"]
    assert audit["protocol"] == "profile `smoke`; 30 shadow models per world; groundhog cap 50 (synthcity 20)"
    assert audit["compute"] == "8.3 h wall-clock, 10.0 core-hours"
    assert audit["regenerate"] == "python -m pategan_audit.archive audit_groundhog_large --profile smoke"


def test_a_partial_archive_says_k_of_n(store):
    row = T.archive_table(store, names=NAMES).set_index("archive").loc["utility_sweep_large"]
    assert row["status"] == "partial: 3 of 4 cells"
    assert row["compute"] == "45 s wall-clock, core time not measured"
    assert row["machine"] == "4 CPUs"  # no session recorded its machine: the meta's CPU count
    groundhog = T.archive_table(store, names=NAMES).set_index("archive").loc["audit_groundhog_large"]
    assert groundhog["status"] == "partial: 1 of 3 settings"


def test_a_missing_archive_is_not_computed_with_its_command(store):
    row = T.archive_table(store, names=NAMES).set_index("archive").loc["utility_best25_large"]
    assert row["status"] == T.NOT_COMPUTED
    assert row["regenerate"] == "python -m pategan_audit.archive utility_best25_large"
    assert row["compute"] == row["protocol"] == row["code"] == ""


def test_an_unknown_commit_is_provenance_unknown(store):
    row = T.archive_table(store, names=NAMES).set_index("archive").loc["audit_groundhog_large"]
    assert row["code"] == "`dddddddddd`: provenance unknown"


def test_unknown_names_are_refused_before_reading():
    with pytest.raises(ValueError, match="unknown archives"):
        T.archive_table(names=["utility_huge"])
    with pytest.raises(ValueError, match="unknown archive"):
        T.regenerate_command("utility_huge")


def test_markdown_counts_and_rows(store):
    text = T.table_markdown(T.archive_table(store, names=NAMES))
    assert text.startswith("4 archives: 1 complete, 2 partial, 1 not computed.")
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert len(rows) == len(NAMES)
    assert all(line.count(" | ") == len(T.COLUMNS) - 1 for line in rows)


def test_every_archive_has_a_row_and_a_regenerate_command_the_cli_accepts(tmp_path):
    table = T.archive_table(tmp_path)  # an empty store: every archive not computed
    assert list(table["status"].unique()) == [T.NOT_COMPUTED]
    assert sorted(table["archive"]) == sorted(A.ARCHIVES)
    for command in table["regenerate"]:
        name = command.split()[3]
        python = T.INTERPRETERS.get(name, "python")
        assert name in A.ARCHIVES and command.startswith(f"{python} -m pategan_audit.archive ")
    assert T.regenerate_command("audit_alternatives_large") == \
        ".venv-alt/bin/python -m pategan_audit.archive audit_alternatives_large"
    assert set(T.INTERPRETERS) <= set(A.ARCHIVES)


def test_the_hook_writes_the_table_where_the_page_includes_it(store, tmp_path):
    book = tmp_path / "book"
    assert place_archive_table(book, directory=store)
    written = (book / SUMMARY_TARGET / ARCHIVE_TABLE).read_text()
    assert written == T.table_markdown(T.archive_table(store))
    assert not place_archive_table(book, directory=store)  # unchanged: left alone
    page = (REPO / "book" / "reproduce.md").read_text()
    assert f"```{{include}} {SUMMARY_TARGET.as_posix()}/{ARCHIVE_TABLE}\n```" in page


def test_the_book_build_hook_writes_the_table(tmp_path):
    from types import SimpleNamespace

    from pategan_audit.pages.bookhook import _on_builder_inited

    config = SimpleNamespace(pategan_audit_notebooks=[], pategan_audit_profile="smoke", pategan_audit_always_run=[])
    _on_builder_inited(SimpleNamespace(srcdir=str(tmp_path / "book"), config=config))
    text = (tmp_path / "book" / SUMMARY_TARGET / ARCHIVE_TABLE).read_text()
    assert text.startswith(f"{len(A.ARCHIVES)} archives: ")
    assert all(f"| `{name}` |" in text for name in A.ARCHIVES)


def test_an_uneven_audit_split_is_named_in_the_protocol():
    meta = {"profile": "ceiling10k", "profile_knobs": {"n_per_world": 10_600, "outputs": [400, 200, 10_000]},
            "settings": [{"attack": "querybased", "implementation": "original", "iterations": 100}]}
    assert "10,600 shadow models per world (400 / 200 / 10,000 train / validation / test)" in T.protocol(meta)
