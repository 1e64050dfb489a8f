"""benchmarks/suite_time.py: the JUnit comparison behind "the suite no slower" (issue 39)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import suite_time  # noqa: E402


def _report(path: Path, cases: list[tuple[str, str, float, str]]) -> Path:
    body = []
    for classname, name, seconds, outcome in cases:
        inner = "" if outcome == "passed" else f"<{outcome} message='x'/>"
        body.append(f'<testcase classname="{classname}" name="{name}" time="{seconds}">{inner}</testcase>')
    path.write_text(f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{"".join(body)}</testsuite></testsuites>')
    return path


@pytest.fixture
def tree(tmp_path):
    for rel in ("tests/test_a.py", "tests/sub/test_b.py", "tests/test_new.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    return tmp_path


def test_reports_are_compared_test_by_test(tree):
    base = suite_time.read_junit(_report(tree / "base.xml", [
        ("tests.test_a", "test_x", 2.0, "passed"), ("tests.test_a", "test_y", 1.0, "passed"),
        ("tests.sub.test_b.TestB", "test_z", 4.0, "failure"), ("tests.test_a", "test_gone", 0.5, "passed")]))
    new = suite_time.read_junit(_report(tree / "new.xml", [
        ("tests.test_a", "test_x", 1.0, "passed"), ("tests.test_a", "test_y", 1.0, "skipped"),
        ("tests.sub.test_b.TestB", "test_z", 5.0, "passed"), ("tests.test_new", "test_n", 3.0, "passed")]))
    out = suite_time.compare(base, new, changed_files={"tests/sub/test_b.py"}, roots=(tree,))
    assert out["tests"] == {"base": 4, "new": 4, "common": 3, "only_base": 1, "only_new": 1}
    assert out["failed"] == {"base": ["tests/sub/test_b.py::test_z"], "new": []}
    assert out["sum_of_test_seconds"] == {"base": 7.5, "new": 10.0}
    assert out["common"] == {"base_s": 7.0, "new_s": 7.0, "new_over_base": 1.0}
    assert out["common_in_untouched_files"] == {"tests": 2, "base_s": 3.0, "new_s": 2.0, "new_over_base": 0.667}
    assert out["common_in_touched_files"] == {"tests": 1, "base_s": 4.0, "new_s": 5.0, "new_over_base": 1.25}
    assert out["only_new_s"] == 3.0 and out["only_base_s"] == 0.5
    assert out["only_new_by_file"] == {"tests/test_new.py": {"tests": 1, "seconds": 3.0}}
    assert out["largest_slowdowns"][0] == {"test": "tests/sub/test_b.py::test_z", "base_s": 4.0, "new_s": 5.0}
    assert out["largest_speedups"][0]["test"] == "tests/test_a.py::test_x"


def test_a_class_name_resolves_to_its_file(tree):
    assert suite_time.file_of_test("tests.sub.test_b.TestB", (tree,)) == "tests/sub/test_b.py"
    assert suite_time.file_of_test("tests.nowhere", (tree,)) is None


def test_the_base_must_be_an_earlier_commit(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["suite_time.py", "--base", "HEAD"])
    with pytest.raises(SystemExit):
        suite_time.main()
    assert "is HEAD" in capsys.readouterr().err
