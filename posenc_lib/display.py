"""How figures reach the reader: live widgets in a kernel, static-slider HTML in the book.

The switch is decided once, here, from the environment variable ``POSENC_STATIC``. The Makefile's
book build sets ``POSENC_STATIC=1``; Jupyter, Colab and Binder leave it unset and get live widgets.

In static mode a plotly figure is emitted as ``text/html``: an empty ``<div>`` (sized as the figure
will be, so the page does not jump) and the figure's JSON in a ``<script type="application/json">``
that nothing executes. The book build (``_ext/offline_assets.py``) moves that JSON out of the page
into a small script of its own and adds ``_static/figures.js`` (deferred; no CDN) to pages that
have a figure: when a figure comes near the viewport, figures.js loads its data and the book's own
plotly.js and draws it, so the page's text is interactive before plotly even loads.
Plotly >= 6 otherwise emits only a mime bundle that myst-nb cannot render, and the figure would
silently vanish from the page.

Outside the book (Jupyter, Colab, Binder, VS Code) a figure is a :class:`NotebookFigure`: plotly's
own mime type (JupyterLab and VS Code draw it) and a self-drawing ``text/html`` for front-ends that
do not know it (Colab, a plain notebook viewer). The first such figure of a kernel carries the
library's partial plotly.js inline (the bundle the live explorers share); later figures reuse it,
and an output drawn in a frame of its own (Colab) loads the same plotly.js version on demand.
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
import re
import uuid
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from ._extras import require_widgets

require_widgets("posenc_lib.display", "plotly")

import plotly.graph_objects as go  # noqa: E402  (after the check above)
from plotly.utils import PlotlyJSONEncoder  # noqa: E402

STATIC_ENV_VAR = "POSENC_STATIC"
# The attribute that ties a figure's JSON to its <div>; _ext/figures.js looks for it.
FIGURE_DATA_ATTR = "data-plotly-figure"

# One configuration for every static figure: no plotly logo, no link to an online editor.
PLOTLY_CONFIG: dict[str, Any] = {"displaylogo": False, "responsive": True}

# A page's figures are for the eye: 6 significant digits are finer than a pixel at any size the
# book draws and than every hover format it uses, and binary float64 arrays go out as float32
# (7 digits). Together they roughly halve a chapter's figure bytes (benchmarks/pages.py).
SIGNIFICANT_DIGITS = 6
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_FLOAT32_TINY = float(np.finfo(np.float32).tiny)


def _round(value: float) -> float | int:
    if not math.isfinite(value):
        return value
    if value.is_integer() and abs(value) < 2**53:
        return int(value)  # "3" rather than "3.0": the same number to JavaScript
    return float(f"{value:.{SIGNIFICANT_DIGITS}g}")


def _float32_array(spec: dict[str, Any]) -> dict[str, Any]:
    """A plotly binary array spec (``{"dtype": "f8", "bdata": …}``) re-encoded as float32.

    Left as float64 when a finite value would overflow or lose its exponent in float32.
    """
    values = np.frombuffer(base64.b64decode(spec["bdata"]), dtype="<f8")
    finite = np.abs(values[np.isfinite(values)])
    nonzero = finite[finite > 0]
    overflows = finite.size and finite.max() > _FLOAT32_MAX
    underflows = nonzero.size and nonzero.min() < _FLOAT32_TINY
    if overflows or underflows:
        return spec
    packed = base64.b64encode(values.astype("<f4").tobytes()).decode("ascii")
    return {**spec, "dtype": "f4", "bdata": packed}


def compact(value: Any) -> Any:
    """``value`` (a figure's JSON-ready dict, or any part of it) with its numbers made compact.

    Python and NumPy floats are rounded to :data:`SIGNIFICANT_DIGITS` significant digits, and
    whole ones become ints (NaN and infinities are kept: the JSON encoder writes them as
    ``null``); NumPy arrays become lists, and
    plotly's binary float64 arrays become float32 arrays. Strings, ints and bools are unchanged.
    """
    if isinstance(value, (bool, int, str)) or value is None:
        return value
    if isinstance(value, (float, np.floating)):
        return _round(float(value))
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.ndarray):
        return compact(value.tolist())
    if isinstance(value, dict):
        if value.get("dtype") == "f8" and isinstance(value.get("bdata"), str):
            return _float32_array(value)
        return {key: compact(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [compact(item) for item in value]
    return value


def figure_json(figure: go.Figure) -> str:
    """The figure (with the book's plotly config) as compact JSON, safe inside ``<script>``.

    Numbers are made compact by :func:`compact`; non-finite numbers are written as ``null``;
    every ``<`` is escaped (``\\u003c``), so no string in the figure can close the script or open
    a comment.
    """
    payload = compact(figure.to_plotly_json())
    payload["config"] = PLOTLY_CONFIG
    text = json.dumps(payload, cls=PlotlyJSONEncoder, separators=(",", ":"))
    return text.replace("<", "\\u003c")


def static_mode() -> bool:
    """Return True when figures should be emitted as static HTML (the book build).

    Read at every call, so a test can flip it with ``monkeypatch.setenv``.
    """
    return os.environ.get(STATIC_ENV_VAR, "").strip().lower() in {"1", "true", "yes", "on"}


class StaticFigure:
    """A plotly figure that displays as self-contained HTML using a page-level ``Plotly``.

    Parameters
    ----------
    figure
        The figure to display. Its sliders and buttons keep working without a kernel.
    """

    def __init__(self, figure: go.Figure) -> None:
        if not isinstance(figure, go.Figure):
            raise TypeError(
                f"figure must be a plotly.graph_objects.Figure, got {type(figure).__name__}"
            )
        self.figure = figure

    def to_html(self) -> str:
        """An empty, sized ``<div>`` and the figure's JSON; the page's ``figures.js`` draws it.

        plotly.js is not embedded and nothing here executes: the JSON (:func:`figure_json`) sits
        in a ``<script type="application/json">``.
        """
        text = figure_json(self.figure)
        div_id = f"fig-{uuid.uuid4().hex}"
        height = self.figure.layout.height
        style = f"height:{int(height)}px; width:100%;" if height else "height:100%; width:100%;"
        return (
            f'<div id="{div_id}" class="plotly-graph-div" style="{style}"></div>'
            f'<script type="application/json" {FIGURE_DATA_ATTR}="{html.escape(div_id)}">'
            f"{text}</script>"
        )

    def _repr_html_(self) -> str:
        return self.to_html()

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> dict[str, str]:
        # Only text/html: myst-nb renders it, and no plotly mime type is left for it to drop.
        return {"text/html": self.to_html(), "text/plain": "<StaticFigure>"}


PLOTLY_BUNDLE = Path(__file__).parent / "static" / "plotly-3d.min.js"
# The key under which the page keeps plotly.js; posenc_lib/static/live_figure.js uses the same.
PLOTLY_GLOBAL = "__posencPlotly"
PLOTLY_CDN = "https://cdn.plot.ly/plotly-{version}.min.js"


@cache
def plotly_bundle() -> tuple[str, str]:
    """The library's partial plotly.js bundle (with 3-D) and its plotly.js version."""
    source = PLOTLY_BUNDLE.read_text(encoding="utf-8")
    match = re.search(r"plotly\.js v(\d+\.\d+\.\d+)", source[:300])
    if match is None:
        raise ValueError(f"{PLOTLY_BUNDLE} does not name its plotly.js version")
    return source, match.group(1)


class NotebookFigure:
    """A plotly figure that draws in JupyterLab, VS Code, Colab, Binder and a plain notebook.

    Its mime bundle has plotly's own JSON mime type (preferred where a plotly renderer is
    installed) and a ``text/html`` that draws the figure itself, with plotly.js
    inline in the first figure a kernel shows (see the module docstring).

    Parameters
    ----------
    figure
        The figure to display.
    """

    library_sent = False  # per kernel: has a figure carried plotly.js into the page yet?

    def __init__(self, figure: go.Figure) -> None:
        if not isinstance(figure, go.Figure):
            raise TypeError(
                f"figure must be a plotly.graph_objects.Figure, got {type(figure).__name__}"
            )
        self.figure = figure

    def to_html(self, *, include_plotlyjs: bool) -> str:
        """A sized ``<div>`` and a script that draws the figure into it.

        The script uses the page's plotly.js (the live explorers' or an earlier figure's); with
        ``include_plotlyjs`` it brings the partial bundle itself, and without either it loads the
        same version from plotly's CDN (an output in a frame of its own, as in Colab).
        """
        source, version = plotly_bundle()
        div_id = f"fig-{uuid.uuid4().hex}"
        height = self.figure.layout.height
        style = f"height:{int(height)}px; width:100%;" if height else "width:100%;"
        # In a JSON string, "</" is written "<\/": nothing in the bundle can close the script.
        bundle = json.dumps(source).replace("</", "<\\/") if include_plotlyjs else "null"
        cdn = PLOTLY_CDN.format(version=version)
        script = (
            "(function () {\n"
            f'  var key = "{PLOTLY_GLOBAL}", version = "{version}", source = {bundle};\n'
            f'  var el = document.getElementById("{div_id}");\n'
            f"  var figure = {figure_json(self.figure)};\n"
            "  var cache = (globalThis[key] = globalThis[key] || {});\n"
            "  if (!cache[version] && source) {\n"
            "    // define/module/exports shadowed: the bundle sets a global even with RequireJS.\n"
            '    cache[version] = new Function("define", "module", "exports",\n'
            '                                  source + "\\n;return Plotly;")();\n'
            "  }\n"
            "  var draw = function (Plotly) {\n"
            "    Plotly.newPlot(el, figure.data, figure.layout, figure.config);\n"
            "  };\n"
            "  var Plotly = cache[version] || window.Plotly;\n"
            "  if (Plotly) { draw(Plotly); return; }\n"
            '  var tag = document.createElement("script");\n'
            f'  tag.src = "{cdn}";\n'
            "  tag.onload = function () { cache[version] = window.Plotly; draw(window.Plotly); };\n"
            "  document.head.appendChild(tag);\n"
            "})();"
        )
        return (f'<div id="{div_id}" class="plotly-graph-div" style="{style}"></div>'
                f"<script>{script}</script>")

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> dict[str, Any]:
        first = not NotebookFigure.library_sent
        NotebookFigure.library_sent = True
        return {
            "application/vnd.plotly.v1+json": json.loads(figure_json(self.figure)),
            "text/html": self.to_html(include_plotlyjs=first),
            "text/plain": f"<NotebookFigure: {len(self.figure.data)} trace(s)>",
        }


def show(figure: go.Figure) -> Any:
    """Return an object that displays ``figure`` well where the code runs.

    In the book build (static mode) this is a :class:`StaticFigure`; in a kernel it is a
    :class:`NotebookFigure`, which JupyterLab, VS Code, Colab and a plain notebook all draw.
    """
    if static_mode():
        return StaticFigure(figure)
    return NotebookFigure(figure)


def explorer(build_static: Callable[[], go.Figure], build_live: Callable[[], Any]) -> Any:
    """Pick between a static-slider figure and a live ipywidgets UI, once, by mode.

    Parameters
    ----------
    build_static
        Builds the figure with precomputed slider steps (used in the book build).
    build_live
        Builds the ipywidgets UI that recomputes on every control change.
    """
    if static_mode():
        return StaticFigure(build_static())
    return build_live()
