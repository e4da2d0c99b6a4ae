"""Sphinx extension: serve every script the book needs from its own ``_static`` folder.

- plotly.js is copied from the installed ``plotly`` wheel (so its version always matches the
  Python package that wrote the figures) and loaded on every page, before any figure's script.
- The stock page's ``data-mode=""`` makes pydata-sphinx-theme log "Got invalid theme mode": a tiny
  inline script sets the stored (or automatic) mode before the theme's deferred script reads it.
- Thebe (live code on the page, loaded from a CDN) is not used: its scripts and styles are dropped,
  which also removes the "THEBE_JS_URL has already been declared" console error.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import plotly
from sphinx.application import Sphinx

HERE = Path(__file__).parent
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def _copy_assets(app: Sphinx, exc: Exception | None) -> None:
    if exc is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(PLOTLY_JS, static / "plotly.min.js")


# Runs in <head> before the theme's deferred script; "auto" follows the reader's OS preference.
THEME_MODE_JS = (
    "(function(){var m=null;try{m=localStorage.getItem('mode');}catch(e){}"
    "if(m!=='light'&&m!=='dark'&&m!=='auto'){m='auto';}"
    "document.documentElement.dataset.mode=m;})();"
)


def _is_thebe_asset(asset: object) -> bool:
    filename = str(getattr(asset, "filename", asset) or "")
    body = str(getattr(asset, "attributes", {}).get("body", ""))
    return "thebe" in filename or "THEBE_JS_URL" in body


def _drop_thebe(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object
) -> None:
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [asset for asset in context[key] if not _is_thebe_asset(asset)]


def setup(app: Sphinx) -> dict[str, object]:
    if not PLOTLY_JS.is_file():
        raise FileNotFoundError(f"plotly.min.js not found in the plotly package at {PLOTLY_JS}")
    # Loaded synchronously in <head>, so `Plotly` exists when a figure's inline script runs.
    app.add_js_file("plotly.min.js", priority=100)
    app.add_js_file(None, body=THEME_MODE_JS, priority=50)
    app.connect("build-finished", _copy_assets)
    app.connect("html-page-context", _drop_thebe, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
