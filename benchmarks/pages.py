"""Page-load figures of the built book, in Debian's chromium (headless, cache off, network closed).

For every page of ``_toc.yml``, in one run:

- **DOMInteractive** (ms after navigation start) of the page, and of the same page with every
  figure and plotly.js removed (a stripped copy served beside it); the **ratio** of the two is the
  cost that figures add before a reader can use the text (goal <= 1.25). Each is the median of
  several alternating cold loads in one reused tab (cache off); pages without figures show how
  close to 1.00 the noise lets a ratio be.
- **first view**: the bytes a cold view of the page fetches before any scrolling (HTML, scripts,
  styles, fonts; uncompressed, as ``make serve`` sends them).
- **read through**: the bytes once the reader has scrolled to every figure (so every figure is
  drawn and plotly.js fetched; goal <= 4 MB a chapter), how many of them are plotly.js, and the
  same bytes gzip-compressed (as GitHub Pages sends them).
- **math**: ms until MathJax has typeset every formula of the page.

Run: ``.venv/bin/python benchmarks/pages.py [--html _build/html] [--repeats 9] [page.html ...]``
(``--html`` may point at another build, e.g. an older one, to compare.)
"""

from __future__ import annotations

import argparse
import gzip
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--enable-unsafe-swiftshader", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update"]
STRIPPED_PREFIX = "nofigures-"

# Both ways a figure has been written: JSON drawn by figures.js, or plotly's inline newPlot script.
FIGURE_PATTERNS = [
    r'<script[^>]*src="[^"]*_static/(?:plotly(?:-3d)?\.min|figures)\.js[^"]*"[^>]*></script>',
    r'<script type="application/json" data-plotly-figure="[^"]*"[^>]*>.*?</script>',
    r'<script type="text/javascript">\s*window\.PLOTLYENV.*?</script>',
    r'<div id="[^"]*" class="plotly-graph-div"[^>]*></div>',
]


def strip_figures(html: str) -> str:
    """The page with every figure and plotly.js removed."""
    for pattern in FIGURE_PATTERNS:
        html = re.sub(pattern, "", html, flags=re.S)
    return html


def toc_pages() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    entries = [toc["root"]] + [c["file"] for p in toc.get("parts", []) for c in p["chapters"]]
    return [f"{entry}.html" for entry in entries]


def gzipped(site: Path, base: str, urls: list[str]) -> int:
    """The bytes of these files gzip-compressed (level 6, as a web server would)."""
    total = 0
    for url in urls:
        path = site / url[len(base) + 1 :].split("?")[0]
        if path.is_file():
            total += len(gzip.compress(path.read_bytes(), compresslevel=6))
    return total


def load(page: object, url: str, math_count: int) -> dict[str, Any]:
    """One cold load in ``page``: DOMInteractive, bytes fetched (and plotly's), math typeset time.

    The page (one renderer process, reused for every load) routes every request, which turns
    chromium's cache off: each load fetches everything again, as a first visit does, without the
    noise of starting a new browser context for each load.
    """
    fetched: dict[str, int] = {}

    def finished(request: object) -> None:
        sizes = request.sizes()  # type: ignore[attr-defined]
        fetched[request.url] = sizes["responseBodySize"]  # type: ignore[attr-defined]

    page.on("requestfinished", finished)  # type: ignore[attr-defined]
    try:
        page.goto(url, wait_until="load")  # type: ignore[attr-defined]
        if math_count:
            page.wait_for_function(  # type: ignore[attr-defined]
                f"() => document.querySelectorAll('mjx-container').length >= {math_count}",
                polling=20,
            )
        math_ms = float(page.evaluate("performance.now()")) if math_count else 0.0  # type: ignore[attr-defined]
        page.wait_for_load_state("networkidle")  # type: ignore[attr-defined]
        first_view = sum(fetched.values())
        figures = page.locator(".plotly-graph-div")  # type: ignore[attr-defined]
        for index in range(figures.count()):
            figure = figures.nth(index)
            figure.scroll_into_view_if_needed()
            page.wait_for_function(  # type: ignore[attr-defined]
                "gd => !!(gd._fullLayout && gd.querySelector('.main-svg'))",
                arg=figure.element_handle(),
            )
        page.wait_for_load_state("networkidle")  # type: ignore[attr-defined]
        dom = float(
            page.evaluate("performance.getEntriesByType('navigation')[0].domInteractive")  # type: ignore[attr-defined]
        )
    finally:
        page.remove_listener("requestfinished", finished)  # type: ignore[attr-defined]
    plotly = sum(size for u, size in fetched.items() if "plotly" in u)
    return {
        "dom": dom, "first": first_view, "bytes": sum(fetched.values()), "plotly": plotly,
        "math": math_ms,
        "urls": list(fetched),
    }


def new_page(browser: object, origin: str) -> object:
    """A page that may fetch from ``origin`` only; routing every request also disables caching."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(origin) else r.abort())
    return page


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("pages", nargs="*", help="only these pages (default: every page)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "html"
        shutil.copytree(options.html, site)
        pages = [p for p in toc_pages() if not options.pages or p in options.pages]
        math_counts = {}
        for name in pages:
            path = site / name
            html = path.read_text(encoding="utf-8")
            math_counts[name] = len(re.findall(r'class="math[ "]', html))
            path.with_name(STRIPPED_PREFIX + path.name).write_text(
                strip_figures(html), encoding="utf-8"
            )
        # A server process of its own: a thread here would wait on this process's GIL.
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = subprocess.Popen(
            [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
             "--directory", str(site)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        print(f"{options.html}: median of {options.repeats} cold loads each (cache off)")
        print(f"{'page':40s} {'DOMInteractive':>14s} {'no figures':>10s} {'ratio':>6s} "
              f"{'first view':>10s} {'read through':>12s} {'plotly':>7s} {'gzip':>7s} "
              f"{'math':>7s}")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                page = new_page(browser, base)
                load(page, f"{base}/{pages[0]}", 0)  # warm the renderer once, outside the figures
                for name in pages:
                    stripped = str(Path(name).with_name(STRIPPED_PREFIX + Path(name).name))
                    full, bare = [], []
                    for _ in range(options.repeats):  # alternate, so load drifts hit both
                        full.append(load(page, f"{base}/{name}", math_counts[name]))
                        bare.append(load(page, f"{base}/{stripped}", 0))
                    dom = statistics.median(r["dom"] for r in full)
                    dom_bare = statistics.median(r["dom"] for r in bare)
                    last = full[-1]
                    packed = gzipped(site, base, last["urls"])
                    math = statistics.median(r["math"] for r in full)
                    print(
                        f"{name:40s} {dom:12.0f}ms {dom_bare:8.0f}ms {dom / dom_bare:6.2f} "
                        f"{last['first'] / 1e6:8.2f}MB {last['bytes'] / 1e6:10.2f}MB "
                        f"{last['plotly'] / 1e6:5.2f}MB "
                        f"{packed / 1e6:5.2f}MB {math:5.0f}ms"
                    )
            finally:
                browser.close()
                server.terminate()
                server.wait(timeout=10)


if __name__ == "__main__":
    main()
