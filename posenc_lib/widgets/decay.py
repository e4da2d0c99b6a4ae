"""Live long-term decay curves."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..display import explorer
from ..viz._style import _apply_state
from ..viz.decay import DECAY_CURVES, _check_curves, _decay_state, decay_curves
from ._live import (
    LiveExplorer,
    _base_slider,
    _even_value,
    _int_slider,
)

# Slider ranges; the largest values keep one live update within 100 ms (benchmarks/widgets.py).
_DIM_RANGE = (16, 512)
_DISTANCE_RANGE = (16, 4096)


def _in_range(value: int, bounds: tuple[int, int], name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if not bounds[0] <= value <= bounds[1]:
        raise ValueError(
            f"{name} must be in [{bounds[0]}, {bounds[1]}] (the live slider's range), got {value}"
        )
    return value


def decay_live(
    dim: int = 128,
    base: float = 10000.0,
    max_distance: int = 256,
    curves: Sequence[str] = DECAY_CURVES,
) -> LiveExplorer:
    """The live decay UI: base, dimension and distance range, for the chosen ``curves``."""
    dim = _in_range(dim, _DIM_RANGE, "dim")
    max_distance = _in_range(max_distance, _DISTANCE_RANGE, "max_distance")
    curves = _check_curves(curves)
    fig = decay_curves(dim, base, max_distance, curves=curves, sliders=False)
    controls = {
        "base": _base_slider(base),
        "dim": _int_slider(dim, *_DIM_RANGE, "dimension d", 2),
        "max_distance": _int_slider(max_distance, *_DISTANCE_RANGE, "max distance"),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        dim_ = _even_value(v["dim"])
        _apply_state(ui.figure, _decay_state(dim_, v["base"], v["max_distance"], curves))
        for trace in ui.figure.data:
            trace.hovertemplate = (
                trace.hovertemplate.split("<extra>")[0] + f"<extra>d = {dim_}</extra>"
            )

    return LiveExplorer(fig, controls, update)


def decay_explorer(
    dim: int = 128,
    base: float = 10000.0,
    max_distance: int = 256,
    curves: Sequence[str] = DECAY_CURVES,
) -> Any:
    """Long-term decay curves; see :func:`posenc_lib.viz.decay.decay_curves`."""
    return explorer(
        lambda: decay_curves(dim, base, max_distance, curves=curves),
        lambda: decay_live(dim, base, max_distance, curves),
    )
