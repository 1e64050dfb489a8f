"""pategan_audit.auditing.page.blocks: the page's blocks are written and displayed in order."""
import json

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from pategan_audit.auditing.page import blocks
from pategan_audit.report import Section


@pytest.fixture
def shown(monkeypatch):
    import IPython.display

    out = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: out.append(obj))
    return out


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
