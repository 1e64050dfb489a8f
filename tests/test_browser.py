"""Real-browser test of the built HTML book (headless Debian chromium).

Serves ``book/_build/html`` on 127.0.0.1, loads every page headless at a 1280 px wide window and
checks that it renders, that every image loads (``naturalWidth > 0`` inside the browser), that no
cell shows an error or traceback, and that every number is readable:

* no table is wider than the text column unless a horizontally scrolling container holds it;
* no table cell is clipped (its content wider than the cell while overflow is hidden, or an
  ellipsis);
* table text is at least 12 CSS px (9 pt);
* every figure is shown large enough that text of :data:`pategan_audit.pages.display.MIN_FONT_PT`
  points (the smallest the plotting theme draws) is at least 9 pt on the page: shown width /
  natural width x the PNG's dpi >= 96;
* the static checks of ``tests/test_html.py`` (pandas' ``...`` markers, cut cells) pass.

It saves screenshots of every page, top to bottom, under ``book/_build/screenshots/``
(``<page>-NN.png``, 1280 x 2000 px each), to be looked at before a change to the book is
called done.

Run after building the book: ``make book-smoke && make browser-test`` (CI does this).
Skipped unless ``PATEGAN_AUDIT_BROWSER=1`` (set by ``make browser-test``), because it needs a
built book and chromium.
"""
from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import struct
import subprocess
import threading
from pathlib import Path

import pytest

from pategan_audit.pages.display import MIN_FONT_PT
from tests.test_html import find_problems  # the static checks, run on every page here too

REPO = Path(__file__).resolve().parents[1]
HTML = REPO / "book" / "_build" / "html"
SHOTS = REPO / "book" / "_build" / "screenshots"
SKIP_PAGES = {"genindex.html", "search.html", "index.html"}  # index.html is a meta-refresh to intro.html
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(os.environ.get("PATEGAN_AUDIT_BROWSER") != "1", reason="set PATEGAN_AUDIT_BROWSER=1 (make browser-test)"),
]

WIDTH, SHOT_HEIGHT, MAX_SHOTS = 1280, 2000, 60
MIN_TABLE_PX = 12.0  # 9 pt
MIN_FIGURE_SCALE = 96.0 * 0.98  # shown/natural width x dpi: 9 pt figure text >= 9 pt on the page (2 % for rounding)

CHECKER = """<!doctype html><html><head><title>pending</title></head><body>
<iframe id="f" src="/{page}" style="width:{width}px;height:900px"></iframe>
<pre id="result">pending</pre>
<script>
document.getElementById('f').addEventListener('load', function () {{
  setTimeout(function () {{
    var d = document.getElementById('f').contentDocument;
    var win = document.getElementById('f').contentWindow;
    var imgs = Array.from(d.images);
    var broken = imgs.filter(function (i) {{ return !(i.complete && i.naturalWidth > 0); }}).map(function (i) {{ return i.src; }});
    var text = d.body ? d.body.innerText : '';
    var errs = d.querySelectorAll('.output.error, .output_error, div.cell_output .traceback, .ansi-red-fg').length;
    var art = d.querySelector('article.bd-article') || d.querySelector('main') || d.body;
    var artBox = art.getBoundingClientRect();
    function label(el) {{ return (el.innerText || '').replace(/\\s+/g, ' ').trim().slice(0, 70); }}
    function scroller(el) {{
      for (var p = el.parentElement; p && p !== art; p = p.parentElement) {{
        var ox = win.getComputedStyle(p).overflowX;
        if (ox === 'auto' || ox === 'scroll') return p;
      }}
      return null;
    }}
    var overflowing = [], cut = [], minTablePx = 1e9, smallTables = [];
    Array.from(art.querySelectorAll('table')).forEach(function (t) {{
      var box = t.getBoundingClientRect(), sc = scroller(t);
      if (!sc && box.right > artBox.right + 1) overflowing.push(label(t));
      if (sc && sc.getBoundingClientRect().right > artBox.right + 1) overflowing.push('(scroller wider than the page) ' + label(t));
      var small = false;
      Array.from(t.querySelectorAll('td, th')).forEach(function (c) {{
        var cs = win.getComputedStyle(c), px = parseFloat(cs.fontSize);
        if (c.innerText.trim()) {{ minTablePx = Math.min(minTablePx, px); if (px < {min_px}) small = true; }}
        if ((cs.overflowX !== 'visible' && c.scrollWidth > c.clientWidth + 1) || cs.textOverflow === 'ellipsis')
          cut.push(label(c));
      }});
      if (small) smallTables.push(label(t));
    }});
    var figures = Array.from(art.querySelectorAll('.cell_output img')).map(function (i) {{
      return {{src: i.getAttribute('src'), natural: i.naturalWidth, shown: i.getBoundingClientRect().width}};
    }});
    var res = {{title: d.title, images: imgs.length, broken: broken, error_blocks: errs,
               traceback: /Traceback \\(most recent call last\\)/.test(text), chars: text.length,
               article_width: artBox.width, height: d.documentElement.scrollHeight,
               overflowing: overflowing, cut: cut, small_tables: smallTables,
               min_table_px: minTablePx === 1e9 ? null : minTablePx, figures: figures}};
    document.getElementById('result').textContent = JSON.stringify(res);
  }}, 1500);
}});
</script></body></html>"""

# One screenshot of a page: the page in a frame as tall as the whole page, shifted up by {top} px,
# seen through a window of SHOT_HEIGHT px (the theme's sticky header stays at the page's top).
SHOOTER = """<!doctype html><html><head><style>html, body {{ margin: 0; overflow: hidden; }}</style></head><body>
<iframe src="/{page}" style="border: 0; display: block; width: {width}px; height: {height}px; margin-top: -{top}px"></iframe>
</body></html>"""


def _png_dpi(path: Path) -> float | None:
    """The dpi a PNG records (its pHYs chunk; matplotlib writes the figure's dpi), None if absent."""
    data = path.read_bytes()
    at = data.find(b"pHYs")
    if at < 0:
        return None
    x, _, unit = struct.unpack(">IIB", data[at + 4:at + 13])
    return x * 0.0254 if unit == 1 else None


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass

    def do_GET(self):  # noqa: N802
        if self.path.startswith(("/__check__/", "/__shot__/")):
            if self.path.startswith("/__check__/"):
                body = CHECKER.format(page=self.path[len("/__check__/"):], width=WIDTH, min_px=MIN_TABLE_PX).encode()
            else:  # /__shot__/<page>/<page height>/<top>
                page, height, top = self.path[len("/__shot__/"):].rsplit("/", 2)
                body = SHOOTER.format(page=page, width=WIDTH, height=int(height), top=int(top)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


@pytest.fixture(scope="module")
def server():
    if not (HTML / "intro.html").exists():
        pytest.fail("book/_build/html/intro.html missing: build the book first (make book-smoke)")
    handler = functools.partial(_Handler, directory=str(HTML))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def _pages() -> list[str]:
    return sorted(p.name for p in HTML.glob("*.html") if p.name not in SKIP_PAGES) if HTML.exists() else []


def _run(browser: str, args: list[str], tmp: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [browser, *FLAGS, f"--user-data-dir={tmp}", "--virtual-time-budget=8000", *args],
        capture_output=True, text=True, timeout=120,
    )


def test_book_has_the_section_pages():
    for page in ("intro.html", "implementations.html", "utility.html", "training_traces.html", "auditing.html"):
        assert (HTML / page).exists(), f"{page} not built"


@pytest.mark.parametrize("page", ["utility.html", "training_traces.html", "auditing.html"])
def test_figure_pages_show_figures(page):
    """The pages that regenerate the paper's figures must actually contain images."""
    html = (HTML / page).read_text(encoding="utf-8")
    assert len(re.findall(r"<img\b", html)) >= 1, f"{page} shows no figure"


@pytest.mark.parametrize("page, archive, marker", [
    ("utility.html", "utility_large", "Table 4, <code class=\"docutils literal notranslate\"><span class=\"pre\">large</span></code> profile"),
    *[("auditing.html", name, "Figure 5 at 1,000 shadow models per world") for name in (
        "audit_querybased_large", "audit_querybased_fixed_size_large", "audit_querybased_controlled_large",
        "audit_groundhog_large", "audit_corrected_large")],
])
def test_archived_runs_are_shown(page, archive, marker):
    """A committed archive must appear on its page with its provenance caption."""
    if not (REPO / "results" / "archive" / archive / "meta.json").exists():
        pytest.skip(f"archive {archive} not committed")
    html = (HTML / page).read_text(encoding="utf-8")
    assert marker in html, f"{page} does not show the archived run {archive}"
    caption = f"archived run <code class=\"docutils literal notranslate\"><span class=\"pre\">{archive}</span></code>"
    assert caption in html or f"<th>{archive}</th>" in html  # a caption, or a row of the provenance table


@pytest.mark.parametrize("page", _pages())
def test_page_renders_in_chromium(page, server, tmp_path):
    browser = _chromium()
    assert browser, "chromium not found: apt-get install chromium"
    res = _run(browser, ["--dump-dom", f"--window-size={WIDTH + 100},1000", f"{server}/__check__/{page}"], tmp_path / "profile")
    match = re.search(r'<pre id="result">(.*?)</pre>', res.stdout, re.S)
    assert match, f"{page}: checker page did not render (stderr tail: {res.stderr[-500:]})"
    raw = match.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    assert raw != "pending", f"{page}: page did not finish loading in the browser"
    result = json.loads(raw)
    (SHOTS / "checks").mkdir(parents=True, exist_ok=True)
    (SHOTS / "checks" / page.replace(".html", ".json")).write_text(json.dumps(result, indent=1))

    # screenshots first, so that a failing page can be looked at
    for old in SHOTS.glob(page.replace(".html", "-*.png")):
        old.unlink()
    height = max(int(result["height"]), SHOT_HEIGHT)
    shots = []
    for i, top in enumerate(range(0, min(height, MAX_SHOTS * SHOT_HEIGHT), SHOT_HEIGHT)):
        shot = SHOTS / f"{page.replace('.html', '')}-{i:02d}.png"
        _run(browser, [f"--screenshot={shot}", f"--window-size={WIDTH},{SHOT_HEIGHT}",
                       f"{server}/__shot__/{page}/{height}/{top}"], tmp_path / "profile2")
        shots.append(shot)
    assert all(s.exists() and s.stat().st_size > 5000 for s in shots), f"{page}: screenshot missing or blank"

    assert result["chars"] > 200, f"{page}: page body is (nearly) empty"
    assert not result["broken"], f"{page}: images failed to load: {result['broken']}"
    assert result["error_blocks"] == 0 and not result["traceback"], f"{page}: shows an error or traceback"
    assert not result["overflowing"], f"{page}: tables wider than the text column without a scroll bar: {result['overflowing']}"
    assert not result["cut"], f"{page}: clipped table cells: {result['cut']}"
    assert not result["small_tables"], (f"{page}: table text below {MIN_TABLE_PX:g} px (smallest {result['min_table_px']} px): "
                                        f"{result['small_tables']}")
    small_figures = []
    for fig in result["figures"]:
        path = HTML / fig["src"]
        dpi = _png_dpi(path) if path.suffix == ".png" and path.exists() else None
        if dpi and fig["natural"]:
            scale = fig["shown"] / fig["natural"] * dpi
            if scale < MIN_FIGURE_SCALE:
                small_figures.append(f"{fig['src']} ({fig['natural']} px at {dpi:.0f} dpi shown {fig['shown']:.0f} px wide: "
                                     f"{MIN_FONT_PT:g} pt text appears {MIN_FONT_PT * scale / 96:.1f} pt)")
    assert not small_figures, f"{page}: figures shrunk so that their smallest text is below 9 pt: {small_figures}"
    problems = find_problems((HTML / page).read_text(encoding="utf-8"), page)
    assert not problems, "\n".join(problems)
