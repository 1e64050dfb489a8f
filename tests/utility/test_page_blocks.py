"""pategan_audit.utility.page.blocks: blocks are written and displayed in order."""
import json

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from pategan_audit.report import Section
from pategan_audit.utility.page import blocks


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
