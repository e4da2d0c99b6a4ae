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
    """

    def __init__(
        self,
        figure: go.Figure,
        controls: dict[str, W.ValueWidget],
        update: Callable[[LiveExplorer], None],
    ) -> None:
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


# Slider constructors. An explorer's initial value is validated by its figure builder first (the
# figure is drawn for exactly that value); a valid value outside the slider's usual range widens
# the range to include it, so the control always shows the value the figure was drawn for
# (ipywidgets would silently clamp it). The usual ranges are the ones that meet the live-update
# budget; a caller who passes a larger value chooses a slower update.


def _widen(value: float, lo: float, hi: float) -> tuple[float, float]:
    return min(lo, value), max(hi, value)


def _log_slider(
    value: float, lo_exp: float, hi_exp: float, description: str, readout_format: str = ".4g"
) -> W.FloatLogSlider:
    """A base-10 log slider over ``10**lo_exp … 10**hi_exp`` (widened to hold ``value``)."""
    exp = math.log10(value)
    if exp < lo_exp:
        lo_exp = math.floor(exp * 100) / 100
    if exp > hi_exp:
        hi_exp = math.ceil(exp * 100) / 100
    return W.FloatLogSlider(
        value=value,
        base=10,
        min=lo_exp,
        max=hi_exp,
        step=0.01,
        description=description,
        readout_format=readout_format,
        style=_STYLE,
        layout=_SLIDER_LAYOUT,
    )


def _base_slider(value: float) -> W.FloatLogSlider:
    return _log_slider(value, 1, 6, "base b")


def _int_slider(value: int, lo: int, hi: int, description: str, step: int = 1) -> W.IntSlider:
    lo, hi = _widen(value, lo, hi)
    return W.IntSlider(
        value=value,
        min=lo,
        max=hi,
        step=step,
        description=description,
        style=_STYLE,
        layout=_SLIDER_LAYOUT,
    )


def _int_text(value: int, lo: int, hi: int, description: str) -> W.BoundedIntText:
    lo, hi = _widen(value, lo, hi)
    return W.BoundedIntText(value=value, min=lo, max=hi, description=description, style=_STYLE)


def _float_slider(
    value: float, lo: float, hi: float, description: str, step: float = 0.01
) -> W.FloatSlider:
    lo, hi = _widen(value, lo, hi)
    return W.FloatSlider(
        value=value,
        min=lo,
        max=hi,
        step=step,
        description=description,
        readout_format=".2f",
        style=_STYLE,
        layout=_SLIDER_LAYOUT,
    )


def _even_value(value: int) -> int:
    # An IntSlider with step 2 still lets a typed odd value through; RoPE needs an even d.
    return value - value % 2

