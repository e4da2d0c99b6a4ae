"""Live ALiBi bias and attention per head."""

from __future__ import annotations

from typing import Any

from ..display import explorer
from ..viz._style import _apply_state
from ..viz.alibi import _alibi_state, alibi_heatmaps
from ._live import (
    LiveExplorer,
    _int_slider,
)


def alibi_live(n_heads: int = 8, seq_len: int = 32, *, head: int = 0) -> LiveExplorer:
    """The live ALiBi UI: number of heads, length, and which head."""
    fig = alibi_heatmaps(n_heads, seq_len, head=head, sliders=False)
    controls = {
        "n_heads": _int_slider(n_heads, 1, 64, "heads"),
        "seq_len": _int_slider(seq_len, 4, 256, "positions L"),
        "head": _int_slider(head, 0, n_heads - 1, "head h"),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        ui.controls["head"].max = v["n_heads"] - 1
        head_ = min(ui.controls["head"].value, v["n_heads"] - 1)
        _apply_state(ui.figure, _alibi_state(v["n_heads"], v["seq_len"], head_))
        ui.figure.layout.title.text = (
            f"ALiBi with {v['n_heads']} heads: slopes m_h form a geometric sequence"
        )

    return LiveExplorer(fig, controls, update)


def alibi_explorer(n_heads: int = 8, seq_len: int = 32, *, head: int = 0) -> Any:
    """ALiBi bias and attention per head; see :func:`posenc_lib.viz.alibi.alibi_heatmaps`."""
    return explorer(
        lambda: alibi_heatmaps(n_heads, seq_len, head=head),
        lambda: alibi_live(n_heads, seq_len, head=head),
    )
