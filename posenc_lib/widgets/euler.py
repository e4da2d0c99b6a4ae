"""Live unit circle (Euler's formula) and complex rotation."""

from __future__ import annotations

import math
from typing import Any

from ..display import explorer
from ..viz._style import _apply_state
from ..viz.euler import (
    _euler_axes,
    _euler_state,
    _rotation_state,
    rotation_figure,
    unit_circle,
)
from ._live import (
    LiveExplorer,
    _float_slider,
    _int_slider,
)


def euler_live(theta: float = 1.0, n_terms: int = 6) -> LiveExplorer:
    """The live unit-circle UI: angle and number of Taylor terms."""
    fig = unit_circle(theta, n_terms, sliders=False)
    controls = {
        "theta": _float_slider(theta, -2 * math.pi, 2 * math.pi, "θ (rad)"),
        "n_terms": _int_slider(n_terms, 1, 30, "terms n"),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        point, path = _euler_state(v["theta"], v["n_terms"])
        ui.figure.data[1].update(point)
        ui.figure.data[2].update(path, customdata=list(range(v["n_terms"] + 1)))
        ui.figure.update_layout(_euler_axes(v["theta"], v["n_terms"]))  # keep the path in frame

    return LiveExplorer(fig, controls, update)


def euler_explorer(theta: float = 1.0, n_terms: int = 6) -> Any:
    """``e^{iθ}`` and its Taylor partial sums; see :func:`posenc_lib.viz.euler.unit_circle`."""
    return explorer(lambda: unit_circle(theta, n_terms), lambda: euler_live(theta, n_terms))


def rotation_live(theta: float = 0.5, z: complex = 1 + 0.5j) -> LiveExplorer:
    """The live rotation UI: the angle θ."""
    fig = rotation_figure(theta, z, sliders=False)
    controls = {"theta": _float_slider(theta, -2 * math.pi, 2 * math.pi, "θ (rad)")}

    def update(ui: LiveExplorer) -> None:
        state = _rotation_state(ui.values["theta"], complex(z))
        _apply_state(ui.figure, [{}, {}, *state])

    return LiveExplorer(fig, controls, update)


def rotation_explorer(theta: float = 0.5, z: complex = 1 + 0.5j) -> Any:
    """``z`` and ``z·e^{iθ}``; see :func:`posenc_lib.viz.euler.rotation_figure`."""
    return explorer(lambda: rotation_figure(theta, z), lambda: rotation_live(theta, z))
