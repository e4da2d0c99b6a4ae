"""Live RoPE scores under a shared shift of both positions."""

from __future__ import annotations

from typing import Any

from ..display import explorer
from ..viz._style import _apply_state
from ..viz.offset import _offset_state, rope_offset_figure
from ._live import (
    LiveExplorer,
    _base_slider,
    _even_value,
    _int_slider,
)


def offset_live(
    dim: int = 64,
    base: float = 10000.0,
    offset: int = 0,
    seed: int = 0,
    *,
    m: int = 7,
    n: int = 2,
    max_offset: int = 64,
) -> LiveExplorer:
    """The live shift UI: the shift Δ, dimension and base."""
    fig = rope_offset_figure(
        dim, base, offset, seed, m=m, n=n, max_offset=max_offset, sliders=False
    )
    controls = {
        "offset": _int_slider(offset, 0, max_offset, "shift Δ"),
        "dim": _int_slider(dim, 2, 512, "dimension d", 2),
        "base": _base_slider(base),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        state = _offset_state(
            _even_value(v["dim"]), v["base"], v["offset"], seed, m, n, max_offset
        )
        _apply_state(ui.figure, state)

    return LiveExplorer(fig, controls, update)


def offset_explorer(
    dim: int = 64,
    base: float = 10000.0,
    offset: int = 0,
    seed: int = 0,
    *,
    m: int = 7,
    n: int = 2,
    max_offset: int = 64,
) -> Any:
    """RoPE scores under a shared shift; see :func:`posenc_lib.viz.offset.rope_offset_figure`."""
    kw: dict[str, Any] = {"m": m, "n": n, "max_offset": max_offset}
    return explorer(
        lambda: rope_offset_figure(dim, base, offset, seed, **kw),
        lambda: offset_live(dim, base, offset, seed, **kw),
    )
