"""The live-explorer frame shared by every explorer: controls above a live plotly figure.

The figure is drawn in the browser by a small anywidget (``posenc_lib/static/live_figure.js``)
with the library's partial plotly.js bundle, sent once per notebook through a shared
:class:`PlotlyLibrary` model, instead of plotly's ``FigureWidget`` (whose 4.96 MB bundle is stored
with every explorer). In Python, ``LiveExplorer.figure`` is a plain ``go.Figure``: explorers update
it in place (``figure.data[i].update(...)``, ``figure.layout...``) inside :meth:`refresh`, which
then sends the figure's JSON once (non-finite numbers as ``null``); ``Plotly.react`` redraws it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import anywidget
import ipywidgets as W
import plotly.graph_objects as go
import traitlets
from plotly.io.json import to_json_plotly

STATIC = Path(__file__).resolve().parent.parent / "static"


@cache
def _plotly_source() -> tuple[str, str]:
    """The partial plotly.js bundle and its version, read once."""
    source = (STATIC / "plotly-3d.min.js").read_text(encoding="utf-8")  # the spiral is 3-D
    match = re.search(r"plotly\.js v(\d+\.\d+\.\d+)", source[:300])
    return source, match.group(1) if match else "unknown"


class PlotlyLibrary(W.Widget):
    """plotly.js for the live figures: one model per kernel, shared by every :class:`FigureView`.

    A notebook stores it once (not once per figure); the browser evaluates it once per page.
    """

    _model_name = traitlets.Unicode("WidgetModel").tag(sync=True)
    source = traitlets.Unicode().tag(sync=True)
    version = traitlets.Unicode().tag(sync=True)


@cache
def plotly_library() -> PlotlyLibrary:
    """The kernel's one :class:`PlotlyLibrary` model."""
    source, version = _plotly_source()
    return PlotlyLibrary(source=source, version=version)


class FigureView(anywidget.AnyWidget):  # type: ignore[misc]
    """Draws a figure sent as JSON with the shared plotly.js; ``show`` sends a new state."""

    _esm = STATIC / "live_figure.js"
    figure = traitlets.Unicode("{}").tag(sync=True)
    library = traitlets.Instance(PlotlyLibrary).tag(sync=True, **W.widget_serialization)

    def __init__(self, figure: go.Figure) -> None:
        super().__init__(library=plotly_library())
        self.show(figure)

    def show(self, figure: go.Figure) -> None:
        """Send ``figure`` to the browser (NaN and infinities become ``null``)."""
        payload = figure.to_plotly_json()
        payload["config"] = {"displaylogo": False, "responsive": True}
        self.figure = to_json_plotly(payload)

_SLIDER_LAYOUT = W.Layout(width="420px")
_STYLE = {"description_width": "140px"}


class LiveExplorer(W.VBox):
    """Controls above a live figure; any control change calls ``update(self)``, then redraws.

    Attributes
    ----------
    controls : dict[str, ipywidgets.Widget]
        The value widgets by parameter name (tests drive them by setting ``.value``).
    figure : plotly.graph_objects.Figure
        Updated in place by ``update`` (inside ``batch_update``); :meth:`refresh` then sends it
        to the browser once per move.
    view : FigureView
        The widget that draws ``figure`` in the browser.
    text : ipywidgets.HTML
        Extra output under the figure (the RoPE calculator's config lines), else empty.

    Raises
    ------
    ValueError
        If an initial value lies outside its control's range (naming the parameter and the
        range), so that a control never shows a value the figure was not drawn for.
    """

    def __init__(
        self,
        figure: go.Figure,
        controls: dict[str, W.ValueWidget],
        update: Callable[[LiveExplorer], None],
    ) -> None:
        _check_ranges(controls)
        self.controls = controls
        self.figure = go.Figure(figure)
        self.view = FigureView(self.figure)
        self.text = W.HTML("")
        self._update = update
        self._busy = False
        super().__init__([W.VBox(list(controls.values())), self.view, self.text])
        for control in controls.values():
            control.observe(self._on_change, names="value")

    @property
    def values(self) -> dict[str, Any]:
        """The current value of every control."""
        return {name: c.value for name, c in self.controls.items()}

    def _on_change(self, _change: dict[str, Any]) -> None:
        # An update may clamp a dependent control (e.g. head < n_heads); do not recurse into it.
        if not self._busy:
            self.refresh()

    def refresh(self) -> None:
        """Recompute from the controls and redraw the figure in place."""
        self._busy = True
        try:
            with self.figure.batch_update():
                self._update(self)
        finally:
            self._busy = False
        self.view.show(self.figure)


# Slider constructors. Each remembers the value it was asked to show: ipywidgets would silently
# clamp a value outside [min, max], so that the control showed a value the figure was not drawn for.
# LiveExplorer refuses such a value instead (a ValueError naming the parameter and the range): the
# ranges are the ones that keep a live update within the 100 ms budget (benchmarks/widgets.py),
# so they are not widened. The static figures (the book) document their own, wider ranges.


def _remember(widget: W.ValueWidget, value: Any) -> W.ValueWidget:
    widget._requested_value = value  # checked by LiveExplorer, see _check_ranges
    return widget


def _range_text(widget: W.ValueWidget) -> str:
    if isinstance(widget, W.FloatLogSlider):
        lo, hi = widget.base**widget.min, widget.base**widget.max
        return f"[{lo:.4g}, {hi:.4g}]"
    return f"[{widget.min}, {widget.max}]"


def _check_ranges(controls: dict[str, W.ValueWidget]) -> None:
    """Refuse an initial value its control cannot show (ipywidgets clamped it)."""
    for name, control in controls.items():
        requested = getattr(control, "_requested_value", None)
        if requested is None or control.value == requested:
            continue
        if isinstance(requested, float) and math.isclose(control.value, requested, rel_tol=1e-9):
            continue
        raise ValueError(
            f"{name} must be in {_range_text(control)} (the live slider's range), got {requested}"
        )


def _log_slider(
    value: float, lo_exp: float, hi_exp: float, description: str, readout_format: str = ".4g"
) -> W.FloatLogSlider:
    """A base-10 log slider over ``10**lo_exp … 10**hi_exp``."""
    return _remember(
        W.FloatLogSlider(
            value=value,
            base=10,
            min=lo_exp,
            max=hi_exp,
            step=0.01,
            description=description,
            readout_format=readout_format,
            style=_STYLE,
            layout=_SLIDER_LAYOUT,
        ),
        value,
    )


def _base_slider(value: float) -> W.FloatLogSlider:
    return _log_slider(value, 1, 6, "base b")


def _int_slider(value: int, lo: int, hi: int, description: str, step: int = 1) -> W.IntSlider:
    return _remember(
        W.IntSlider(
            value=value,
            min=lo,
            max=hi,
            step=step,
            description=description,
            style=_STYLE,
            layout=_SLIDER_LAYOUT,
        ),
        value,
    )


def _int_text(value: int, lo: int, hi: int, description: str) -> W.BoundedIntText:
    return _remember(
        W.BoundedIntText(value=value, min=lo, max=hi, description=description, style=_STYLE),
        value,
    )


def _float_slider(
    value: float, lo: float, hi: float, description: str, step: float = 0.01
) -> W.FloatSlider:
    return _remember(
        W.FloatSlider(
            value=value,
            min=lo,
            max=hi,
            step=step,
            description=description,
            readout_format=".2f",
            style=_STYLE,
            layout=_SLIDER_LAYOUT,
        ),
        value,
    )


def _even_value(value: int) -> int:
    # An IntSlider with step 2 still lets a typed odd value through; RoPE needs an even d.
    return value - value % 2

