"""Live position × dimension heatmap."""

from __future__ import annotations

from typing import Any

import ipywidgets as W

from ..display import explorer
from ..viz._style import _apply_state
from ..viz.heatmap import SCHEMES, _heatmap_state, encoding_heatmap
from ._live import (
    _STYLE,
    LiveExplorer,
    _base_slider,
    _even_value,
    _int_slider,
)


def heatmap_live(
    seq_len: int = 128, dim: int = 128, base: float = 10000.0, scheme: str = "sinusoidal"
) -> LiveExplorer:
    """The live heatmap UI: base, dimension, length and scheme controls."""
    fig = encoding_heatmap(seq_len, dim, base, scheme, sliders=False)
    controls = {
        "base": _base_slider(base),
        "dim": _int_slider(dim, 16, 512, "dimension d", 2),
        "seq_len": _int_slider(seq_len, 8, 512, "positions L"),
        "scheme": W.Dropdown(
            options=list(SCHEMES), value=scheme, description="scheme", style=_STYLE
        ),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        dim_ = _even_value(v["dim"])
        _apply_state(ui.figure, _heatmap_state(v["seq_len"], dim_, v["base"], v["scheme"]))
        ui.figure.layout.xaxis.title.text = f"dimension index (d = {dim_})"

    return LiveExplorer(fig, controls, update)


def heatmap_explorer(
    seq_len: int = 128, dim: int = 128, base: float = 10000.0, scheme: str = "sinusoidal"
) -> Any:
    """Position × dimension heatmap: live controls in a kernel, static sliders in the book.

    Parameters are those of :func:`posenc_lib.viz.heatmap.encoding_heatmap`.
    """
    return explorer(
        lambda: encoding_heatmap(seq_len, dim, base, scheme),
        lambda: heatmap_live(seq_len, dim, base, scheme),
    )
