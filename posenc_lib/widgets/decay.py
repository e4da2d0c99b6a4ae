"""Live long-term decay curves."""

from __future__ import annotations

from typing import Any

from ..display import explorer
from ..viz._style import _apply_state
from ..viz.decay import _decay_state, decay_curves
from ._live import (
    LiveExplorer,
    _base_slider,
    _even_value,
    _int_slider,
)


def decay_live(dim: int = 128, base: float = 10000.0, max_distance: int = 256) -> LiveExplorer:
    """The live decay UI: base, dimension and distance range."""
    fig = decay_curves(dim, base, max_distance, sliders=False)
    controls = {
        "base": _base_slider(base),
        "dim": _int_slider(dim, 16, 512, "dimension d", 2),
        "max_distance": _int_slider(max_distance, 16, 1024, "max distance"),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        dim_ = _even_value(v["dim"])
        _apply_state(ui.figure, _decay_state(dim_, v["base"], v["max_distance"]))
        for trace in ui.figure.data:
            trace.hovertemplate = (
                trace.hovertemplate.split("<extra>")[0] + f"<extra>d = {dim_}</extra>"
            )

    return LiveExplorer(fig, controls, update)


def decay_explorer(dim: int = 128, base: float = 10000.0, max_distance: int = 256) -> Any:
    """Long-term decay curves; see :func:`posenc_lib.viz.decay.decay_curves`."""
    return explorer(
        lambda: decay_curves(dim, base, max_distance), lambda: decay_live(dim, base, max_distance)
    )
