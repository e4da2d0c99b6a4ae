"""The live-explorer frame shared by every explorer: controls above a plotly ``FigureWidget``."""

from __future__ import annotations

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


def _base_slider(value: float) -> W.FloatLogSlider:
    return W.FloatLogSlider(
        value=value,
        base=10,
        min=1,
        max=6,
        step=0.01,
        description="base b",
        readout_format=".4g",
        style=_STYLE,
        layout=_SLIDER_LAYOUT,
    )


def _int_slider(value: int, lo: int, hi: int, description: str, step: int = 1) -> W.IntSlider:
    return W.IntSlider(
        value=value,
        min=lo,
        max=hi,
        step=step,
        description=description,
        style=_STYLE,
        layout=_SLIDER_LAYOUT,
    )


def _float_slider(
    value: float, lo: float, hi: float, description: str, step: float = 0.01
) -> W.FloatSlider:
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

