"""Live RoPE spiral: each pair a helix over position."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..display import explorer
from ..viz._style import _apply_state
from ..viz.spiral import _check_pairs, _spiral_state, default_pairs, rope_spiral
from ._live import (
    LiveExplorer,
    _base_slider,
    _even_value,
    _int_slider,
)


def spiral_live(
    dim: int = 64,
    base: float = 10000.0,
    seq_len: int = 256,
    pairs: Sequence[int] | None = None,
    *,
    position: int = 10,
) -> LiveExplorer:
    """The live spiral UI: base, dimension, length and clock position."""
    fixed = None if pairs is None else list(pairs)
    fig = rope_spiral(dim, base, seq_len, fixed, position=position, sliders=False)
    n_pairs = len(_check_pairs(fixed, dim))
    lo_dim = 2 * (max(fixed) + 1) if fixed else max(8, 2 * n_pairs)
    controls = {
        "base": _base_slider(base),
        "dim": _int_slider(dim, min(lo_dim, dim), 512, "dimension d", 2),
        "seq_len": _int_slider(seq_len, 16, 1024, "positions L"),
        "position": _int_slider(position, 0, seq_len - 1, "clock at m"),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        dim_ = _even_value(v["dim"])
        ui.controls["position"].max = v["seq_len"] - 1
        pos = min(ui.controls["position"].value, v["seq_len"] - 1)
        chosen = fixed if fixed is not None else default_pairs(dim_, n_pairs)
        if len(chosen) != n_pairs:  # small d: fewer distinct pairs; repeat the last one
            chosen = (chosen + chosen[-1:] * n_pairs)[:n_pairs]
        state = _spiral_state(dim_, v["base"], v["seq_len"], chosen, pos)
        _apply_state(ui.figure, state)
        for trace, i in zip(ui.figure.data[:n_pairs], chosen, strict=True):
            trace.name = f"pair i = {i}"
        ui.figure.layout.annotations[1].text = f"all {dim_ // 2} pairs at position m = {pos}"

    return LiveExplorer(fig, controls, update)


def spiral_explorer(
    dim: int = 64,
    base: float = 10000.0,
    seq_len: int = 256,
    pairs: Sequence[int] | None = None,
    *,
    position: int = 10,
) -> Any:
    """RoPE pairs as helices plus clock hands; see :func:`posenc_lib.viz.spiral.rope_spiral`."""
    return explorer(
        lambda: rope_spiral(dim, base, seq_len, pairs, position=position),
        lambda: spiral_live(dim, base, seq_len, pairs, position=position),
    )
