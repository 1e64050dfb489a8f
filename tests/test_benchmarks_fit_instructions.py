"""benchmarks/fit_instructions.py: the count it reads from callgrind's output, and its refusals."""
import pytest

from ._benchmarks import load_benchmark


@pytest.fixture(scope="module")
def fi():
    return load_benchmark("fit_instructions")


def test_the_count_is_the_totals_line(fi):
    out = "version: 1\ncreator: callgrind-3.19.0\nevents: Ir\nsummary: 0\nfn=(1) main\n5 12\ntotals: 2789955381\n"
    assert fi.totals(out) == 2789955381  # totals, not the 0 of a summary written before counting began
    assert fi.totals("events: Ir\nsummary: 41\n") == 41
    with pytest.raises(ValueError, match="did valgrind run to the end"):
        fi.totals("events: Ir\n")


def test_unknown_presets_are_refused_before_any_work(fi):
    with pytest.raises(ValueError, match="unknown presets \\['adult'\\]; choose from original"):
        fi.check(["updated", "adult"])


def test_a_missing_base_is_a_usage_error(fi, capsys):
    with pytest.raises(SystemExit):
        fi.main([])
    assert "--base COMMIT [COMMIT ...] is needed" in capsys.readouterr().err
