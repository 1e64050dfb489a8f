"""Real-browser test of the built HTML book (headless Debian chromium).

Serves ``book/_build/html`` on 127.0.0.1, loads every page headless, checks that it renders,
that every image loads (``naturalWidth > 0`` inside the browser), that no cell shows an error
or traceback, and saves a screenshot of each page under ``book/_build/screenshots/``.

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
import subprocess
import threading
from pathlib import Path

import pytest

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

CHECKER = """<!doctype html><html><head><title>pending</title></head><body>
<iframe id="f" src="/{page}" style="width:1200px;height:900px"></iframe>
<pre id="result">pending</pre>
<script>
document.getElementById('f').addEventListener('load', function () {{
  setTimeout(function () {{
    var d = document.getElementById('f').contentDocument;
    var imgs = Array.from(d.images);
    var broken = imgs.filter(function (i) {{ return !(i.complete && i.naturalWidth > 0); }}).map(function (i) {{ return i.src; }});
    var text = d.body ? d.body.innerText : '';
    var errs = d.querySelectorAll('.output.error, .output_error, div.cell_output .traceback, .ansi-red-fg').length;
    var res = {{title: d.title, images: imgs.length, broken: broken, error_blocks: errs,
               traceback: /Traceback \\(most recent call last\\)/.test(text), chars: text.length}};
    document.getElementById('result').textContent = JSON.stringify(res);
  }}, 1500);
}});
</script></body></html>"""


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass

    def do_GET(self):  # noqa: N802
        if self.path.startswith("/__check__/"):
            page = self.path[len("/__check__/"):]
            body = CHECKER.format(page=page).encode()
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
    ("auditing.html", "audit_querybased_large", "Figure 5a, <code class=\"docutils literal notranslate\"><span class=\"pre\">large</span></code> profile"),
])
def test_archived_runs_are_shown(page, archive, marker):
    """A committed archive must appear on its page with its provenance caption."""
    if not (REPO / "results" / "archive" / archive / "meta.json").exists():
        pytest.skip(f"archive {archive} not committed")
    html = (HTML / page).read_text(encoding="utf-8")
    assert marker in html, f"{page} does not show the archived run {archive}"
    assert f"archived run <code class=\"docutils literal notranslate\"><span class=\"pre\">{archive}</span></code>" in html


@pytest.mark.parametrize("page", _pages())
def test_page_renders_in_chromium(page, server, tmp_path):
    browser = _chromium()
    assert browser, "chromium not found: apt-get install chromium"
    res = _run(browser, ["--dump-dom", f"{server}/__check__/{page}"], tmp_path / "profile")
    match = re.search(r'<pre id="result">(.*?)</pre>', res.stdout, re.S)
    assert match, f"{page}: checker page did not render (stderr tail: {res.stderr[-500:]})"
    raw = match.group(1).replace("&quot;", '"').replace("&amp;", "&")
    assert raw != "pending", f"{page}: page did not finish loading in the browser"
    result = json.loads(raw)
    assert result["chars"] > 200, f"{page}: page body is (nearly) empty"
    assert not result["broken"], f"{page}: images failed to load: {result['broken']}"
    assert result["error_blocks"] == 0 and not result["traceback"], f"{page}: shows an error or traceback"
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / page.replace(".html", ".png")
    _run(browser, [f"--screenshot={shot}", "--window-size=1280,2000", f"{server}/{page}"], tmp_path / "profile2")
    assert shot.exists() and shot.stat().st_size > 5000, f"{page}: screenshot missing or blank"
