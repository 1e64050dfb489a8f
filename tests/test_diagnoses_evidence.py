"""The diagnoses' numbers come from committed experiment outputs (issue #36, deliverable 4): every
number ``diagnoses.toml`` quotes is recomputed from its file with the entry's read rule, every file
has a provenance sidecar, every claim is one of the four statuses, and an "explained" claim has
evidence."""
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from pategan_audit.pages import diagnoses
from pategan_audit.runner import REPO_ROOT

ENTRIES = diagnoses.load_entries()
QUOTES = [(e, q) for e in ENTRIES for q in e.get("quote", [])]
_META_FIELDS = ("experiment", "protocol", "seeds", "git_commit")


def _id(item) -> str:
    e, q = item
    return f"{e['cells'][0]}:{q['name']}"


def _decimals(value: float, fmt: str) -> float:
    """Half a unit of the last place the quote is printed with (its number in the data file is the
    printed one, so the file's must round to it)."""
    if fmt.endswith("f"):
        places = int(fmt.rstrip("f").lstrip(",.") or 0)
        return 0.5 * 10 ** -places + 1e-12
    return 1e-9


@pytest.mark.parametrize("item", QUOTES, ids=[_id(x) for x in QUOTES])
def test_every_quoted_number_is_recomputed_from_its_committed_file(item):
    entry, quote = item
    got = diagnoses.read_quote(quote, entry.get("output", ""))
    places = max(_decimals(quote["value"], quote.get("fmt", ".4f")), _decimals(quote["value"], ".4f"))
    assert got == pytest.approx(quote["value"], abs=places), (entry["cells"], quote["name"], got)


def _outputs() -> set[str]:
    files = {d.output for d in diagnoses.DIAGNOSES if d.output}
    files |= {e["output"] for e in ENTRIES if e.get("output")}
    files |= {q["output"] for _, q in QUOTES if "output" in q}
    return files


@pytest.mark.parametrize("output", sorted(_outputs()))
def test_every_output_is_a_committed_experiment_file_with_a_provenance_sidecar(output):
    path = REPO_ROOT / output
    assert not Path(output).is_absolute() and output.startswith("results/experiments/"), output
    assert path.is_file(), f"{output} is missing"
    meta_path = path.with_name(path.stem + ".meta.json")
    assert meta_path.is_file(), f"{output} has no {meta_path.name}"
    meta = json.loads(meta_path.read_text())
    for field in _META_FIELDS:
        assert meta.get(field), f"{meta_path.name}: no {field} (write 'not recorded' where it is unknown)"
    assert "wall_seconds" in meta or "compute" in meta, f"{meta_path.name}: no compute"


def test_every_status_is_one_of_the_four_and_an_explained_claim_has_evidence():
    assert diagnoses.DIAGNOSES
    for d in diagnoses.DIAGNOSES:
        assert d.status in diagnoses.STATUSES, (d.key, d.status)
        if d.status == "explained":
            assert d.evidence is not None and not math.isnan(d.evidence), d.key
            assert d.output, d.key
        if d.status == "unexplained":
            assert d.tried, d.key
        if d.evidence is not None:
            assert d.output, d.key
    assert len({d.key for d in diagnoses.DIAGNOSES}) == len(diagnoses.DIAGNOSES)


def test_a_cell_without_a_committed_number_claims_no_more_than_plausible():
    """No output: the mechanism is named but no number backs it (never explained or partly)."""
    for d in diagnoses.DIAGNOSES:
        if not d.output:
            assert d.status in ("plausible", "unexplained"), d.key
            assert d.evidence is None, d.key


def test_evidence_is_the_number_in_the_file():
    """The loader's evidence for a data-file cell is what its quote reads from the file now."""
    for e in ENTRIES:
        for written, name in e.get("evidence", {}).items():
            quote = next(q for q in e["quote"] if q["name"] == name)
            key = tuple(written.split("/", 2))
            d = next(d for d in diagnoses.DIAGNOSES if d.key == key)
            assert d.evidence == diagnoses.read_quote(quote, e.get("output", ""))
            assert d.output == e["output"]


def test_the_data_file_rejects_an_unknown_status_and_a_missing_tried(tmp_path):
    bad = tmp_path / "d.toml"
    bad.write_text('[[diagnosis]]\ncells = ["t/r/c"]\ncause = "x"\nstatus = "mostly explained"\n'
                   'experiment = "b"\ntrained = false\n')
    with pytest.raises(ValueError, match="not one of"):
        diagnoses.load_entries(bad)
    bad.write_text('[[diagnosis]]\ncells = ["t/r/c"]\ncause = "x"\nstatus = "unexplained"\n'
                   'experiment = "b"\ntrained = false\n')
    with pytest.raises(ValueError, match="what was tried"):
        diagnoses.load_entries(bad)
    with pytest.raises(ValueError, match="not one of"):
        diagnoses.Diagnosis(key=("t", "r", "c"), cause="x", status="unexplained: tried y", experiment="b")


def test_a_read_rule_that_matches_no_row_or_several_is_an_error(tmp_path):
    (tmp_path / "results" / "experiments").mkdir(parents=True)
    pd.DataFrame({"k": ["a", "a", "b"], "v": [1.0, 2.0, 3.0]}).to_csv(tmp_path / "results/experiments/x.csv",
                                                                      index=False)
    out = "results/experiments/x.csv"
    assert diagnoses.read_quote({"name": "q", "where": {"k": "b"}, "column": "v"}, out, root=tmp_path) == 3.0
    assert diagnoses.read_quote({"name": "q", "where": {"k": "a"}, "column": "v", "agg": "mean"}, out,
                                root=tmp_path) == 1.5
    with pytest.raises(LookupError, match="exactly one"):
        diagnoses.read_quote({"name": "q", "where": {"k": "a"}, "column": "v"}, out, root=tmp_path)
    with pytest.raises(LookupError):
        diagnoses.read_quote({"name": "q", "where": {"k": "c"}, "column": "v", "agg": "max"}, out, root=tmp_path)
    with pytest.raises(FileNotFoundError, match="plausible"):
        diagnoses.read_quote({"name": "q", "column": "v"}, "results/experiments/missing.csv", root=tmp_path)


def test_a_bracket_of_the_papers_value_is_partly_explained_not_explained(tmp_path):
    """A per-classifier redraw on the other side of the paper's value is a bracket: the claim is
    "partly explained" with the redraw as evidence (the scorecard holds it to the tolerance)."""
    path = tmp_path / "per_classifier_x.csv"
    pd.DataFrame([{"table": "table5", "classifier": "MLP", "implementation": "smartnoise", "metric": "auroc",
                   "best_of_all": 0.80, "n_all": 9, "archive": 0.60, "paper": 0.70, "iterations": 33,
                   "tried": "9 new tables"},
                  {"table": "table5", "classifier": "GBM", "implementation": "smartnoise", "metric": "auroc",
                   "best_of_all": 0.65, "n_all": 9, "archive": 0.60, "paper": 0.70, "iterations": 33,
                   "tried": "9 new tables"}]).to_csv(path, index=False)
    got = {d.key[1]: d for d in diagnoses.per_classifier_diagnoses(path)}
    assert got["MLP"].status == "partly explained" and got["MLP"].evidence == 0.80
    assert got["GBM"].status == "unexplained" and got["GBM"].tried.startswith("9 new tables")
    assert all(d.trained for d in got.values())
