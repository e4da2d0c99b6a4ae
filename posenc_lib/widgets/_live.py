"""The live-explorer frame shared by every explorer: controls above a plotly ``FigureWidget``."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ipywidgets as W
import plotly.graph_objects as go

_SLIDER_LAYOUT = W.Layout(width="420px")
_STYLE = {"description_width": "140px"}


class LiveExplorer(W.VBox):
    """Controls above a ``go.FigureWidget``; any control change calls ``update(self)``.

    Attributes
    ----------
    controls : dict[str, ipywidgets.Widget]
        The value widgets by parameter name (tests drive them by setting ``.value``).
    figure : plotly.graph_objects.FigureWidget
        Updated in place, inside ``batch_update`` so the browser redraws once per move.
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
        self.figure = go.FigureWidget(figure)
        self.text = W.HTML("")
        self._update = update
        self._busy = False
        super().__init__([W.VBox(list(controls.values())), self.figure, self.text])
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

