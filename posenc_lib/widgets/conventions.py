"""Live interleaved vs half pairing of features."""

from __future__ import annotations

from typing import Any

from ..display import explorer
from ..viz._style import _apply_state
from ..viz.conventions import _convention_state, convention_pairs_figure
from ._live import (
    LiveExplorer,
    _even_value,
    _int_slider,
)


def convention_live(dim: int = 16) -> LiveExplorer:
    """The live pairing UI: the dimension."""
    fig = convention_pairs_figure(dim, sliders=False)
    controls = {"dim": _int_slider(dim, 2, 64, "dimension d", 2)}

    def update(ui: LiveExplorer) -> None:
        dim_ = _even_value(ui.values["dim"])
        _apply_state(ui.figure, _convention_state(dim_))
        ui.figure.layout.title.text = (
            f"Two ways to pair features (d = {dim_}); lines: the permutation between them"
        )

    return LiveExplorer(fig, controls, update)


def convention_explorer(dim: int = 16) -> Any:
    """Interleaved vs half pairing.

    See :func:`posenc_lib.viz.conventions.convention_pairs_figure`.
    """
    return explorer(lambda: convention_pairs_figure(dim), lambda: convention_live(dim))
