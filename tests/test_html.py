"""Every number of the built HTML book is visible: no truncated table, no cut cell, wide tables scroll.

:func:`find_problems` reads one page's HTML and lists what would hide a number from a reader:

* pandas' truncation marker: a table cell or header that is just ``...`` / ``…`` (rows or
  columns dropped by ``display.max_rows`` / ``max_columns``), a cell whose text ends in ``...``
  (``display.max_colwidth``), or a printed frame with ``...`` columns / ``[N rows x M columns]``;
* a cell that an inline style clips (``text-overflow: ellipsis``, ``overflow: hidden``);
* a table that is not inside a horizontally scrolling container: a notebook output block
  (``div.output.text_html``, made ``overflow-x: auto`` by ``book/_static/pategan_audit.css``)
  or the theme's scrollable table wrapper. Whether a table is actually wider than the page is
  measured in a real browser by ``tests/test_browser.py``, which also runs these checks.

The unit tests show that the checks fail on deliberately truncated pandas output; the tests over
``book/_build/html`` run when the book has been built (``make book-smoke``) and are skipped
otherwise.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

bs4 = pytest.importorskip("bs4")

REPO = Path(__file__).resolve().parents[1]
HTML = REPO / "book" / "_build" / "html"
CSS = REPO / "book" / "_static" / "pategan_audit.css"
SKIP_PAGES = {"genindex.html", "search.html", "index.html"}

#: containers our CSS (or the theme) scrolls horizontally
SCROLLING = ("output text_html", "output text_plain", "output stream", "pst-scrollable-table-container", "table-responsive")
_MARKERS = ("...", "…")
_CLIPPING_STYLE = re.compile(r"text-overflow\s*:\s*ellipsis|overflow(-x)?\s*:\s*(hidden|clip)", re.I)
_TEXT_TRUNCATION = (
    re.compile(r"\[\d+ rows x \d+ columns\]"),  # pandas' footer of a truncated frame
    re.compile(r"Length: \d+, dtype: "),  # of a truncated Series
    re.compile(r"\S {2,}\.\.\.( {2,}|$)", re.M),  # a "..." column between two columns
    re.compile(r"^\s*\.\.\.?(\s+\.\.\.)+\s*$", re.M),  # a "..." row
)


#: a Markdown table's delimiter row (``|---|---|``) in a paragraph: the table was not rendered
_RAW_TABLE = re.compile(r"\|\s*:?(?:-{3,}|—+):?\s*\|")  # Sphinx's typography turns --- into —


def _where(cell) -> str:
    table = cell.find_parent("table")
    head = table.get_text(" ", strip=True)[:60] if table is not None else ""
    return f"in the table starting {head!r}"


def _scrolls(table) -> bool:
    for parent in table.parents:
        classes = " ".join(parent.get("class", [])) if hasattr(parent, "get") else ""
        if any(all(c in classes.split() for c in wrapper.split()) for wrapper in SCROLLING):
            return True
    return False


def find_problems(html: str, page: str = "page") -> list[str]:
    """Everything on one page that hides a number (see the module docstring); [] if none."""
    soup = bs4.BeautifulSoup(html, "html.parser")
    article = soup.select_one("article") or soup
    problems: list[str] = []
    for table in article.find_all("table"):
        if not _scrolls(table):
            problems.append(f"{page}: table without a horizontally scrolling container ({table.get_text(' ', strip=True)[:60]!r})")
        for cell in table.find_all(["td", "th"]):
            text = cell.get_text(" ", strip=True)
            if text in _MARKERS:
                problems.append(f"{page}: pandas truncation marker {text!r} {_where(cell)}")
            elif text.endswith(_MARKERS):
                problems.append(f"{page}: cut text cell {text[-40:]!r} {_where(cell)}")
            if _CLIPPING_STYLE.search(cell.get("style", "")):
                problems.append(f"{page}: cell clipped by its style ({cell.get('style')!r}) {_where(cell)}")
    for para in article.find_all("p"):
        if _RAW_TABLE.search(para.get_text(" ", strip=True)):
            problems.append(f"{page}: a Markdown table shown as text ({para.get_text(' ', strip=True)[:60]!r}): "
                            "render notebook Markdown as GFM (nb_render_markdown_format)")
    for block in article.select("div.cell_output pre"):
        text = block.get_text()
        for pattern in _TEXT_TRUNCATION:
            match = pattern.search(text)
            if match:
                problems.append(f"{page}: truncated printed table ({match.group(0).strip()!r})")
                break
    return problems


def _snippet(body: str) -> str:
    """A cell output as myst-nb renders it."""
    return (f'<html><body><article><div class="cell docutils container"><div class="cell_output docutils container">'
            f'<div class="output text_html">{body}</div></div></div></article></body></html>')


def _wide_long() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.random((80, 30)), columns=[f"column {i}" for i in range(30)])
    df["why"] = "a long justification that a reader must be able to read to the very end, " * 2
    return df


# -- the checks fail on truncated output --------------------------------------------------------------

def test_fails_on_truncated_columns_and_rows():
    df = _wide_long()
    with pd.option_context("display.max_columns", 10, "display.max_rows", 20):
        problems = find_problems(_snippet(df._repr_html_()))
    assert any("truncation marker '...'" in p for p in problems), problems


def test_fails_on_a_cut_text_cell():
    df = pd.DataFrame({"table": ["Table 4"], "why": ["a justification much longer than fifty characters, cut by pandas"]})
    with pd.option_context("display.max_colwidth", 30):
        problems = find_problems(_snippet(df._repr_html_()))
    assert any("cut text cell" in p for p in problems), problems


def test_fails_on_a_truncated_printed_frame():
    df = _wide_long()
    with pd.option_context("display.max_columns", 6, "display.max_rows", 10, "display.width", 200):
        text = repr(df)
    html = _snippet(f"<pre>{text}</pre>").replace("output text_html", "output text_plain")
    assert find_problems(html), text


def test_fails_on_a_table_without_scrolling_container():
    table = pd.DataFrame({"a": [1.0]}).to_html()
    html = f"<html><body><article><div class='cell_output'><div class='output'>{table}</div></div></article></body></html>"
    assert any("scrolling container" in p for p in find_problems(html))


def test_fails_on_a_clipping_style():
    html = _snippet('<table><tr><td style="max-width: 5em; overflow: hidden; text-overflow: ellipsis">long text</td></tr></table>')
    assert any("clipped by its style" in p for p in find_problems(html))


def test_fails_on_a_markdown_table_shown_as_text():
    text = "<p>| section | measured | |—|—| | utility | 656 |</p>"  # as Sphinx prints |---|---|
    html = f"<html><body><article>{text}</article></body></html>"
    assert any("Markdown table shown as text" in p for p in find_problems(html))
    assert find_problems("<html><body><article><p>a | b, not a table</p></article></body></html>") == []


def test_setup_page_shows_everything():
    """With the book's display options, the same frames render complete."""
    from pategan_audit.pages.display import PANDAS_OPTIONS

    df = _wide_long()
    flat = [x for kv in PANDAS_OPTIONS.items() for x in kv]
    with pd.option_context(*flat):
        html, text = df._repr_html_(), repr(df)
    assert find_problems(_snippet(html)) == []
    assert find_problems(_snippet(f"<pre>{text}</pre>")) == []
    assert html.count("<tr") == len(df) + 1 and "a long justification" in html


def test_book_css_scrolls_the_output_blocks():
    css = CSS.read_text(encoding="utf-8")
    rule = re.search(r"div\.cell_output div\.output\.text_html[^{]*\{([^}]*)\}", css)
    assert rule and re.search(r"overflow-x\s*:\s*auto", rule.group(1)), "pategan_audit.css must scroll wide outputs"


def test_bookhook_hides_papermills_injected_cell(tmp_path):
    import nbformat

    from pategan_audit.pages.bookhook import hide_injected_parameters

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("seed: int = 0", metadata={"tags": ["parameters", "remove-cell"]}),
                nbformat.v4.new_code_cell("# Parameters\nseed = 1\n", metadata={"tags": ["injected-parameters"]})]
    path = tmp_path / "page.ipynb"
    nbformat.write(nb, str(path))
    hide_injected_parameters(path)
    tags = [c.metadata.get("tags") for c in nbformat.read(str(path), as_version=4).cells]
    assert tags == [["parameters", "remove-cell"], ["injected-parameters", "remove-cell"]]


# -- the built book -----------------------------------------------------------------------------------

def _pages() -> list[str]:
    return sorted(p.name for p in HTML.glob("*.html") if p.name not in SKIP_PAGES) if HTML.exists() else []


built = pytest.mark.skipif(not (HTML / "intro.html").exists(),
                           reason="book/_build/html not built: run `make book-smoke` first")


@pytest.mark.browser
@built
@pytest.mark.parametrize("page", _pages() or ["(no build)"])
def test_built_page_shows_every_number(page):
    html = (HTML / page).read_text(encoding="utf-8")
    assert "_static/pategan_audit.css" in html, f"{page} does not load pategan_audit.css"
    assert "tag_parameters" not in html and "tag_injected-parameters" not in html, \
        f"{page} shows its raw parameters cell (tag it remove-cell; the page shows parameters_table)"
    problems = find_problems(html, page)
    assert not problems, "\n".join(problems)
