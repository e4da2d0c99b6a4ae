"""Sphinx extension: the book serves everything it loads itself, and each page only what it uses.

- plotly.js is a partial bundle that ``posenc_lib`` ships (``posenc_lib/static/``, built from npm
  by ``js/plotly-bundle`` at the plotly.js version of the installed ``plotly`` package): only the
  traces the book draws, ``plotly.min.js`` (scatter, heatmap; 1.2 MB) or, on a page with a 3-D
  figure, ``plotly-3d.min.js`` (plus scatter3d; 1.8 MB). It and ``figures.js`` (which draws each
  figure when it nears the viewport, see ``posenc_lib/display.py``) is added, deferred, only to
  pages that have a figure, and fetches the bundle only when the first figure nears the viewport:
  plotly never blocks or competes with parsing, so a page's text is interactive before it loads.
- Each figure's JSON (written into the page by ``posenc_lib/display.py``) is moved out of the page
  into ``_figures/<id>.js``, which ``figures.js`` loads when the figure nears the viewport: the
  page's HTML carries only its text, and figures below the fold cost nothing until scrolled to.
- A page's ".ipynb" download is the chapter's committed reader notebook (``make sync``), the one
  the launch buttons open, not the executed notebook with raw MyST and figure placeholders.
- The theme's ``fontawesome.js`` (1.5 MB, swaps icons for SVG) is emptied: the theme's stylesheet
  already draws the same icons with Font Awesome's web fonts. Its ``<script>`` tag is written by
  the theme's template macros, not the page context, so the file is replaced after the build.
- The stock page's ``data-mode=""`` makes pydata-sphinx-theme log "Got invalid theme mode": a tiny
  inline script sets the stored (or automatic) mode before the theme's deferred script reads it.
- MathJax (served by sphinx-mathjax-offline) is loaded as its parts, not the 1.2 MB
  ``tex-chtml.js``: ``startup.js`` fetches the core, TeX input, CommonHTML output and the
  assistive-MathML module (screen readers) — 0.76 MB. Left out: the right-click menu and its
  speech tools, which the book does not use.
- pydata-sphinx-theme loads Sphinx's search scripts and the whole search index (0.15 MB) in
  every page's ``<head>``, parser-blocking, for its search-as-you-type mode, which the book leaves
  off: its search box submits to ``search.html``, which loads them itself. They are removed from
  every other page after the build.
- The themes' sidebar toggles are bound to a hidden button (pydata-sphinx-theme 0.17.1,
  sphinx-book-theme 1.3.0): ``navigation.js`` makes the visible ones forward their click to it.
  ``phone.css`` keeps every page within a phone's width (long code and signatures wrap, wide
  equations and inline formulas scroll inside their box with a shadow cue, tables keep their words
  whole and scroll sideways) and lets a swipe over a figure scroll; on any screen it keeps a
  figure's output box dark in the dark theme. ``navigation.js`` also keeps search highlights to
  the result page (whole words) and writes the search page's snippets around the query.
- Thebe (live code on the page, loaded from a CDN) is not used: its scripts and styles are dropped,
  which also removes the "THEBE_JS_URL has already been declared" console error. So are
  sphinx-design's (jupyter-book loads it; the book uses none of its tabs, grids or cards).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from sphinx.application import Sphinx

HERE = Path(__file__).parent
BUNDLES = HERE.parent / "posenc_lib" / "static"
PLOTLY_JS = ("plotly.min.js", "plotly-3d.min.js")
# Both folders join html_static_path, so Sphinx copies them and stamps their URLs with a digest.
STATIC_DIRS = (BUNDLES, HERE / "static")  # the plotly bundles; figures.js, navigation.js, phone.css
FIGURE_MARKER = 'class="plotly-graph-div"'
THREE_D_MARKER = '"type":"scatter3d"'


def _add_static_dirs(app: Sphinx, config: object) -> None:
    for folder in STATIC_DIRS:
        if str(folder) not in config.html_static_path:  # type: ignore[attr-defined]
            config.html_static_path.append(str(folder))  # type: ignore[attr-defined]


# MathJax's parts, fetched by startup.js: what tex-chtml.js holds, minus the menu.
MATHJAX_STARTUP = "mathjax/startup.js"
MATHJAX_PARTS = ["input/tex", "output/chtml", "a11y/assistive-mml"]


def _load_mathjax_in_parts(app: Sphinx, config: object) -> None:
    # Runs after every extension's setup(), so it overrides sphinx-mathjax-offline's tex-chtml.js.
    config.mathjax_path = MATHJAX_STARTUP  # type: ignore[attr-defined]
    mathjax = dict(config.mathjax3_config or {})  # type: ignore[attr-defined]
    loader = dict(mathjax.get("loader", {}))
    loader["load"] = list(dict.fromkeys([*loader.get("load", []), *MATHJAX_PARTS]))
    mathjax["loader"] = loader
    config.mathjax3_config = mathjax  # type: ignore[attr-defined]


# The theme's <head> lines for search-as-you-type (off in this book); search.html keeps its own.
SEARCH_TAGS = re.compile(
    r'[ \t]*<script src="(?:\.\./)*(?:_static/searchtools\.js|_static/language_data\.js|'
    r'searchindex\.js)"></script>\n?'
)


def _drop_search_scripts(app: Sphinx, exc: Exception | None) -> None:
    if exc is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        if page.name == "search.html" and page.parent == Path(app.outdir):
            continue
        text = page.read_text(encoding="utf-8")
        lean = SEARCH_TAGS.sub("", text)
        if lean != text:
            page.write_text(lean, encoding="utf-8")


def _download_the_reader_notebooks(app: Sphinx, exc: Exception | None) -> None:
    """The page's ".ipynb" download is the chapter's reader notebook, as the launch buttons open.

    Sphinx copies the *executed* notebook there: raw MyST in its markdown, and figures that are
    the static page's placeholders, blank anywhere but the book. The committed twin next to each
    chapter (``make sync``) reads as the book does and draws its figures when run.
    """
    if exc is not None or app.builder.format != "html":
        return
    sources = Path(app.outdir) / "_sources"
    for download in sources.rglob("*.ipynb"):
        twin = Path(app.srcdir) / download.relative_to(sources)
        if twin.is_file():
            shutil.copyfile(twin, download)


def _empty_fontawesome(app: Sphinx, exc: Exception | None) -> None:
    if exc is not None or app.builder.format != "html":
        return
    fontawesome = Path(app.outdir) / "_static" / "scripts" / "fontawesome.js"
    if fontawesome.is_file():
        fontawesome.write_text(FONTAWESOME_STUB, encoding="utf-8")
        fontawesome.with_name("fontawesome.js.map").unlink(missing_ok=True)


# Each figure's JSON, as posenc_lib/display.py writes it into the page.
FIGURE_JSON = re.compile(
    r'<script type="application/json" data-plotly-figure="(?P<id>fig-[0-9a-f]+)">'
    r"(?P<json>.*?)</script>",
    re.S,
)
FIGURES_DIR = "_figures"


def _figure_script(figure_id: str, figure_json: str) -> str:
    # A script, not a .json file: <script src> also works when the page is opened as file://.
    store = "(window.posencFigures = window.posencFigures || {})"
    return f'{store}["{figure_id}"] = {figure_json};\n'


def _add_plotly_where_figures_are(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object
) -> None:
    body = str(context.get("body", ""))
    if FIGURE_MARKER not in body:
        return
    # Added to this page only, deferred; figures.js fetches the bundle when a figure nears.
    bundle = PLOTLY_JS[1] if THREE_D_MARKER in body else PLOTLY_JS[0]
    app.add_js_file("figures.js", priority=800, defer="defer", **{"data-bundle": bundle})
    # Each figure's data moves out of the page into _figures/<id>.js, fetched by figures.js when
    # the figure nears the viewport: the page's HTML is its text, parsed as fast as without figures.
    folder = Path(app.outdir) / FIGURES_DIR
    folder.mkdir(exist_ok=True)

    def move_out(match: re.Match[str]) -> str:
        figure_id = match.group("id")
        (folder / f"{figure_id}.js").write_text(
            _figure_script(figure_id, match.group("json")), encoding="utf-8"
        )
        src = context["pathto"](f"{FIGURES_DIR}/{figure_id}.js", 1)
        return (f'<script type="application/json" data-plotly-figure="{figure_id}" '
                f'data-src="{src}"></script>')

    context["body"] = FIGURE_JSON.sub(move_out, body)


# Runs in <head> before the theme's deferred script; "auto" follows the reader's OS preference.
THEME_MODE_JS = (
    "(function(){var m=null;try{m=localStorage.getItem('mode');}catch(e){}"
    "if(m!=='light'&&m!=='dark'&&m!=='auto'){m='auto';}"
    "document.documentElement.dataset.mode=m;})();"
)


UNUSED_ASSETS = ("thebe", "sphinx-design", "design-tabs")
FONTAWESOME_STUB = "/* Emptied by _ext/offline_assets.py: the theme CSS's fonts draw icons */\n"


def _is_unused_asset(asset: object) -> bool:
    filename = str(getattr(asset, "filename", asset) or "")
    body = str(getattr(asset, "attributes", {}).get("body", ""))
    return any(name in filename for name in UNUSED_ASSETS) or "THEBE_JS_URL" in body


# The book's own scripts and stylesheet, as served: their comments and indentation dropped (they
# are written to be read in the repository; a chapter's cold read-through is held to 4 MB by the
# browser test). Only whole-line // comments (none of the scripts has a template literal) and
# /* */ blocks (the stylesheet has no string holding one).
OWN_SCRIPTS = ("figures.js", "navigation.js", "search.js")
OWN_STYLES = ("phone.css",)
COMMENT_LINE = re.compile(r"^\s*//.*\n", re.M)
CSS_COMMENT = re.compile(r"/\*.*?\*/\s*", re.S)


def _slim_own_assets(app: Sphinx, exc: Exception | None) -> None:
    if exc is not None or app.builder.format != "html":
        return
    for names, comments in ((OWN_SCRIPTS, COMMENT_LINE), (OWN_STYLES, CSS_COMMENT)):
        for name in names:
            served = Path(app.outdir) / "_static" / name
            if served.is_file():
                text = comments.sub("", served.read_text(encoding="utf-8"))
                served.write_text(re.sub(r"^[ \t]+", "", text, flags=re.M), encoding="utf-8")


def _add_search_snippets(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object
) -> None:
    if pagename == "search":  # snippets around the query, math written plainly (search.js)
        app.add_js_file("search.js", priority=800, defer="defer")


def _drop_unused(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object
) -> None:
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [asset for asset in context[key] if not _is_unused_asset(asset)]


def setup(app: Sphinx) -> dict[str, object]:
    for name in PLOTLY_JS:
        if not (BUNDLES / name).is_file():
            raise FileNotFoundError(f"{BUNDLES / name} is missing: run `make plotly-bundle`")
    app.add_js_file(None, body=THEME_MODE_JS, priority=50)
    # Every page: sidebar toggles that work (navigation.js), and a page that fits a phone.
    app.add_js_file("navigation.js", priority=800, defer="defer")
    app.add_css_file("phone.css", priority=900)
    app.connect("html-page-context", _add_plotly_where_figures_are)
    app.connect("config-inited", _add_static_dirs)
    app.connect("config-inited", _load_mathjax_in_parts)
    app.connect("build-finished", _drop_search_scripts)
    app.connect("build-finished", _empty_fontawesome)
    app.connect("build-finished", _download_the_reader_notebooks)
    app.connect("build-finished", _slim_own_assets)
    app.connect("html-page-context", _add_search_snippets)
    app.connect("html-page-context", _drop_unused, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
