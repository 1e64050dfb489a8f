"""pategan_audit.pages.blocks: blocks are written and displayed in order."""
import json

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from pategan_audit.pages import blocks
from pategan_audit.pages.report import Section


@pytest.fixture
def shown(monkeypatch):
    import IPython.display
    import myst_nb

    out = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: out.append(obj))
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display: out.append(("glue", name, value, display)))
    return out


def test_publish_writes_and_displays_in_order(tmp_path, shown):
    section = Section("utility", profile="smoke", eps=1.0, seed=0, results_dir=tmp_path)
    frame = pd.DataFrame({"a": [1.0, 2.0]})
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    blocks.publish(section, [
        *blocks.table("t", frame), blocks.SaveTable("only_written", frame), blocks.Text("**caption**"),
        blocks.Figure("f", fig), blocks.Glue("g", "1.00 %"), blocks.scorecard([]),
        blocks.scorecard([{"table": "table4", "row": "credit", "column": "original", "ours": 0.5, "runs": "r"}]),
    ])
    assert shown[0] is frame
    assert shown[1].data == "**caption**"
    assert shown[2].data.startswith(b"\x89PNG")
    assert shown[3] == ("glue", "g", "1.00 %", False)
    assert len(shown) == 4
    assert not plt.fignum_exists(fig.number)
    outputs = json.loads((tmp_path / "utility" / "run.json").read_text())["outputs"]
    assert outputs == ["t.csv", "only_written.csv", "f.png", "f.pdf", "scorecard.csv"]
    card = pd.read_csv(tmp_path / "utility" / "scorecard.csv")
    assert card[["table", "row", "column", "ours"]].values.tolist() == [["table4", "credit", "original", 0.5]]


def test_publish_rejects_what_is_not_a_block(tmp_path):
    section = Section("utility", profile="smoke", eps=1.0, seed=0, results_dir=tmp_path)
    with pytest.raises(TypeError, match="not a page block"):
        blocks.publish(section, ["text"])


def test_publish_prints_saves_and_shows_figures_in_order(tmp_path, shown, capsys):
    section = Section("auditing", profile="smoke", eps=1.0, seed=0, results_dir=tmp_path)
    frame = pd.DataFrame({"a": [1.0, 2.0]})
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    save, show = blocks.figure("f", fig)
    blocks.publish(section, [blocks.Print("profile=smoke"), save, blocks.SaveTable("records", frame, index=False),
                             blocks.Text("**caption**"), show])
    assert capsys.readouterr().out == "profile=smoke\n"
    assert shown[0].data == "**caption**" and shown[1] is fig
    assert not plt.fignum_exists(fig.number)
    outputs = json.loads((tmp_path / "auditing" / "run.json").read_text())["outputs"]
    assert outputs == ["f.png", "f.pdf", "records.csv"]
    assert (tmp_path / "auditing" / "records.csv").read_text().splitlines()[0] == "a"  # no index column


def test_table_writes_and_shows(tmp_path, shown):
    section = Section("auditing", profile="smoke", eps=1.0, seed=0, results_dir=tmp_path)
    frame = pd.DataFrame({"a": [1.0]})
    blocks.publish(section, blocks.table("t", frame))
    assert shown == [frame] and (tmp_path / "auditing" / "t.csv").exists()
