"""Sphinx extension: serve every script the book needs from its own ``_static`` folder.

- plotly.js is the partial bundle that ``posenc_lib`` ships (``posenc_lib/static/plotly.min.js``:
  only the traces the book draws, built from npm by ``js/plotly-bundle``, at the plotly.js version
  of the installed ``plotly`` package). It and ``figures.js`` (which draws each figure when it
  nears the viewport, see ``posenc_lib/display.py``) are added only to pages that have a figure,
  both deferred: they never block parsing, so a page's text is interactive before plotly loads.
- The stock page's ``data-mode=""`` makes pydata-sphinx-theme log "Got invalid theme mode": a tiny
  inline script sets the stored (or automatic) mode before the theme's deferred script reads it.
- Thebe (live code on the page, loaded from a CDN) is not used: its scripts and styles are dropped,
  which also removes the "THEBE_JS_URL has already been declared" console error. So are
  sphinx-design's (jupyter-book loads it; the book uses none of its tabs, grids or cards).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.application import Sphinx

HERE = Path(__file__).parent
PLOTLY_JS = HERE.parent / "posenc_lib" / "static" / "plotly.min.js"
FIGURES_JS = HERE / "figures.js"
FIGURE_MARKER = 'class="plotly-graph-div"'


def _copy_assets(app: Sphinx, exc: Exception | None) -> None:
    if exc is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(PLOTLY_JS, static / "plotly.min.js")
    shutil.copyfile(FIGURES_JS, static / "figures.js")


def _add_plotly_where_figures_are(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object
) -> None:
    if FIGURE_MARKER in str(context.get("body", "")):
        # Added to this page only; deferred scripts run in order, after the document is parsed.
        app.add_js_file("plotly.min.js", priority=800, defer="defer")
        app.add_js_file("figures.js", priority=801, defer="defer")


# Runs in <head> before the theme's deferred script; "auto" follows the reader's OS preference.
THEME_MODE_JS = (
    "(function(){var m=null;try{m=localStorage.getItem('mode');}catch(e){}"
    "if(m!=='light'&&m!=='dark'&&m!=='auto'){m='auto';}"
    "document.documentElement.dataset.mode=m;})();"
)


UNUSED_ASSETS = ("thebe", "sphinx-design", "design-tabs")


def _is_unused_asset(asset: object) -> bool:
    filename = str(getattr(asset, "filename", asset) or "")
    body = str(getattr(asset, "attributes", {}).get("body", ""))
    return any(name in filename for name in UNUSED_ASSETS) or "THEBE_JS_URL" in body


def _drop_unused(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object
) -> None:
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [asset for asset in context[key] if not _is_unused_asset(asset)]


def setup(app: Sphinx) -> dict[str, object]:
    if not PLOTLY_JS.is_file():
        raise FileNotFoundError(f"{PLOTLY_JS} is missing: run `make plotly-bundle`")
    app.add_js_file(None, body=THEME_MODE_JS, priority=50)
    app.connect("html-page-context", _add_plotly_where_figures_are)
    app.connect("build-finished", _copy_assets)
    app.connect("html-page-context", _drop_unused, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
