"""The built HTML book: a page per chapter, nothing loaded from the internet, pages of sane size."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bookpages import HTML, ROOT, built_pages, require_build

pytestmark = pytest.mark.book

PAGES = built_pages()
IDS = [p.relative_to(HTML).as_posix() for p in PAGES]
# A page's own HTML with its figures (shared _static assets not counted): DESIGN.md §5.
PAGE_BUDGET_BYTES = 1_500_000

EXTERNAL_ASSET = re.compile(
    r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*["'](?:https?:)?//""", re.IGNORECASE
)


@pytest.fixture(scope="module", autouse=True)
def _built() -> None:
    require_build()


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_every_toc_entry_has_a_page(page: Path) -> None:
    assert page.is_file(), f"{page} was not built"


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_page_loads_nothing_from_the_internet(page: Path) -> None:
    html = page.read_text(encoding="utf-8")
    external = [m.group(0) for m in EXTERNAL_ASSET.finditer(html)]
    assert external == [], f"external assets in {page.name}: {external[:3]}"
    for cdn in ("cdn.plot.ly", "cdn.jsdelivr", "unpkg.com", "require.min.js", "html-manager"):
        assert cdn not in html, f"{page.name} references {cdn}"


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_page_declares_an_icon_that_exists(page: Path) -> None:
    # Without <link rel="icon">, browsers ask for /favicon.ico and log a 404 console error. (The
    # browser test cannot see that request: Playwright skips favicons while it routes requests.)
    html = page.read_text(encoding="utf-8")
    match = re.search(r'<link rel="icon" href="([^"?]+)', html)
    assert match, f"{page.name} declares no icon"
    assert (page.parent / match.group(1)).resolve().is_file()


# The API reference grows with the library (one autodoc entry per public function); it loads no
# figures and no plotly, so it gets a budget of its own.
API_PAGE_BUDGET_BYTES = 2_000_000  # 1.83 MB at 545 entries (2026-12-07)


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_page_stays_within_its_size_budget(page: Path) -> None:
    budget = API_PAGE_BUDGET_BYTES if page.name == "api.html" else PAGE_BUDGET_BYTES
    assert page.stat().st_size <= budget, f"{page.name}: {page.stat().st_size} bytes"


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_figures_are_html_not_dropped_mime_bundles(page: Path) -> None:
    html = page.read_text(encoding="utf-8")
    assert "application/vnd.plotly" not in html
    plotly = re.search(r'<script[^>]*src="[^"]*_static/plotly[^"]*"', html)
    figures = re.search(r'<script[^>]*src="[^"]*_static/figures\.js[^"]*"[^>]*>', html)
    assert plotly is None, "plotly.js in a <script> tag: figures.js fetches it when needed"
    if 'class="plotly-graph-div"' in html:
        # Drawn by the book's figures.js (deferred: never parser-blocking), which fetches the
        # book's own bundle; every figure div has its JSON.
        assert figures, "a page with figures lacks figures.js"
        assert "defer" in figures.group(0)
        bundle = re.search(r'data-bundle="(plotly(-3d)?\.min\.js)"', figures.group(0))
        assert bundle and (HTML / "_static" / bundle.group(1)).is_file()
        # Every figure div has its data, moved out of the page into a script loaded on demand.
        ids = re.findall(r'<div id="([^"]+)" class="plotly-graph-div"', html)
        sources = dict(re.findall(
            r'<script type="application/json" data-plotly-figure="([^"]+)" data-src="([^"]+)">'
            r"</script>", html))
        assert ids and set(ids) == set(sources)
        figures = {i: _figure_from_script(page.parent / src, i) for i, src in sources.items()}
        assert all(set(f) >= {"data", "layout", "config"} for f in figures.values())
        # The 3-D bundle only where a 3-D figure needs it (it is 0.56 MB heavier).
        three_d = any(t.get("type") == "scatter3d" for f in figures.values() for t in f["data"])
        assert bool(bundle.group(2)) == three_d
    else:
        assert figures is None, "figures.js (and so plotly.js) loaded on a page with no figure"


def _figure_from_script(path: Path, figure_id: str) -> dict:
    """The figure a _figures/<id>.js script stores, as _ext/offline_assets.py writes it."""
    text = path.read_text(encoding="utf-8")
    prefix = f'(window.posencFigures = window.posencFigures || {{}})["{figure_id}"] = '
    assert text.startswith(prefix) and text.endswith(";\n"), path.name
    return json.loads(text[len(prefix) : -2])


def test_local_copies_of_mathjax_and_plotly_are_served() -> None:
    for bundle in ("plotly.min.js", "plotly-3d.min.js"):
        served = (HTML / "_static" / bundle).read_bytes()
        assert served == (ROOT / "posenc_lib" / "static" / bundle).read_bytes()
    # The theme's 1.5 MB icon script is emptied (its CSS web fonts draw the icons).
    assert (HTML / "_static" / "scripts" / "fontawesome.js").stat().st_size < 200
    assert (HTML / "_static" / "figures.js").is_file()
    parts = ("startup.js", "core.js", "input/tex.js", "output/chtml.js", "a11y/assistive-mml.js")
    for part in parts:
        assert (HTML / "_static" / "mathjax" / part).is_file(), part


SEARCH_SCRIPTS = ("searchindex.js", "_static/searchtools.js", "_static/language_data.js")


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_page_head_loads_only_what_the_book_uses(page: Path) -> None:
    html = page.read_text(encoding="utf-8")
    # MathJax in parts (startup.js fetches TeX input, CommonHTML output, assistive MathML), not
    # the 1.2 MB tex-chtml.js with its menu.
    assert "mathjax/tex-chtml.js" not in html
    if 'class="math' in html:
        assert re.search(r'<script defer="defer" src="[^"]*_static/mathjax/startup\.js', html)
        assert '"load": ["input/tex", "output/chtml", "a11y/assistive-mml"]' in html
    # No parser-blocking search index outside search.html (search-as-you-type is off).
    loaded = re.findall(r'<script src="(?:\.\./)*([^"?]+)', html)
    search = set(loaded) & set(SEARCH_SCRIPTS)
    assert not search, f"{page.name} loads {search}"


def test_search_page_keeps_its_index() -> None:
    html = (HTML / "search.html").read_text(encoding="utf-8")
    for script in SEARCH_SCRIPTS:
        assert f'src="{script}' in html, script


def test_preface_carries_math_and_a_figure_with_a_slider() -> None:
    html = (HTML / "chapters" / "preface.html").read_text(encoding="utf-8")
    assert "plotly-graph-div" in html and 'class="math' in html
    first = re.search(r'data-plotly-figure="([^"]+)" data-src="([^"]+)"', html)
    assert first is not None
    figure = _figure_from_script(HTML / "chapters" / first.group(2), first.group(1))
    assert figure["layout"]["sliders"]


def test_launch_buttons_open_the_paired_notebook() -> None:
    html = (HTML / "chapters" / "preface.html").read_text(encoding="utf-8")
    assert re.search(r"colab\.research\.google\.com/github/[^\"']+/chapters/preface\.ipynb", html)
    assert re.search(r"mybinder\.org/v2/gh/[^\"']+chapters/preface\.ipynb", html)


def test_the_ipynb_download_is_the_reader_notebook() -> None:
    # The page's download button serves the committed twin (readable markdown, figures that draw
    # when run), not the executed notebook (raw MyST, the static page's figure placeholders).
    twins = sorted((ROOT / "chapters").rglob("*.ipynb"))
    assert twins
    for twin in twins:
        download = HTML / "_sources" / twin.relative_to(ROOT)
        assert download.is_file(), download
        assert download.read_bytes() == twin.read_bytes(), download
        assert "{cite:p}" not in download.read_text(encoding="utf-8"), download


def test_every_executed_chapter_is_in_the_execution_cache() -> None:
    # A re-build with nothing changed reuses these instead of executing the chapters again.
    import sys

    from jupyter_cache import get_cache

    sys.path.insert(0, str(HTML.parent.parent / "scripts"))
    import chapters

    cache = get_cache(HTML.parent / ".jupyter_cache")
    by_path = {Path(r.uri).resolve(): r for r in cache.list_project_records()}
    for md in chapters.notebook_chapters():
        assert md in by_path, f"{md.name} was never registered for execution"
        assert cache.get_cached_project_nb(by_path[md].pk) is not None, f"{md.name}: no cached run"
