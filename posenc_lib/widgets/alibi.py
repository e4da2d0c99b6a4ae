"""Live ALiBi explorers: one head's bias and attention, each head's reach, ALiBi beside RoPE,
and the attention mass near the query as the sequence grows."""

from __future__ import annotations

from typing import Any

from ..display import explorer
from ..viz._style import _apply_state
from ..viz.alibi import (
    _alibi_lines_state,
    _alibi_state,
    _alibi_title,
    _reach_state,
    _rope_state,
    _window_labels,
    _window_state,
    alibi_heatmaps,
    alibi_reach_figure,
    alibi_rope_figure,
    alibi_window_figure,
)
from ._live import (
    LiveExplorer,
    _base_slider,
    _int_slider,
)


def alibi_live(n_heads: int = 8, seq_len: int = 32, *, head: int = 0) -> LiveExplorer:
    """The live ALiBi UI: number of heads, length, and which head (full resolution, one head)."""
    fig = alibi_heatmaps(n_heads, seq_len, head=head, sliders=False)
    controls = {
        "n_heads": _int_slider(n_heads, 1, 128, "heads"),
        "seq_len": _int_slider(seq_len, 4, 256, "positions L"),
        "head": _int_slider(head, 0, n_heads - 1, "head h"),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        ui.controls["head"].max = v["n_heads"] - 1
        head_ = min(ui.controls["head"].value, v["n_heads"] - 1)
        _apply_state(ui.figure, _alibi_state(v["n_heads"], v["seq_len"], head_))
        ui.figure.layout.title.text = _alibi_title(v["n_heads"])

    return LiveExplorer(fig, controls, update)


def alibi_explorer(n_heads: int = 8, seq_len: int = 32, *, head: int = 0) -> Any:
    """ALiBi bias and attention per head; see :func:`posenc_lib.viz.alibi.alibi_heatmaps`."""
    return explorer(
        lambda: alibi_heatmaps(n_heads, seq_len, head=head),
        lambda: alibi_live(n_heads, seq_len, head=head),
    )


def alibi_reach_live(n_heads: int = 12, context: int = 2048) -> LiveExplorer:
    """The live reach UI: number of heads and the reference context length."""
    fig = alibi_reach_figure(n_heads, context, sliders=False)
    controls = {
        "n_heads": _int_slider(n_heads, 1, 128, "heads"),
        "context": _int_slider(context, 64, 32768, "context length", 64),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        _apply_state(ui.figure, _reach_state(v["n_heads"], v["context"]))
        ui.figure.data[4].name = f"context length {v['context']}"

    return LiveExplorer(fig, controls, update)


def alibi_reach_explorer(n_heads: int = 12, context: int = 2048) -> Any:
    """Each head's reach; see :func:`posenc_lib.viz.alibi.alibi_reach_figure`."""
    return explorer(
        lambda: alibi_reach_figure(n_heads, context),
        lambda: alibi_reach_live(n_heads, context),
    )


def alibi_rope_live(
    n_heads: int = 8, base: float = 10000.0, dim: int = 128, max_distance: int = 1024
) -> LiveExplorer:
    """The live ALiBi-beside-RoPE UI: ALiBi heads, RoPE base, distance range."""
    fig = alibi_rope_figure(n_heads, base, dim, max_distance, sliders=False)
    controls = {
        "n_heads": _int_slider(n_heads, 1, 128, "ALiBi heads"),
        "base": _base_slider(base),
        "max_distance": _int_slider(max_distance, 64, 2048, "max distance", 64),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        _apply_state(
            ui.figure,
            [
                _alibi_lines_state(v["n_heads"], v["max_distance"]),
                _rope_state(dim, v["base"], v["max_distance"], None),
            ],
        )
        ui.figure.update_xaxes(range=[0, v["max_distance"]])
        ui.figure.layout.title.text = (
            f"Distance and the score: ALiBi ({v['n_heads']} heads) beside RoPE (d = {dim})"
        )

    return LiveExplorer(fig, controls, update)


def alibi_rope_explorer(
    n_heads: int = 8, base: float = 10000.0, dim: int = 128, max_distance: int = 1024
) -> Any:
    """ALiBi's bias beside RoPE's decay bound; see
    :func:`posenc_lib.viz.alibi.alibi_rope_figure`."""
    return explorer(
        lambda: alibi_rope_figure(n_heads, base, dim, max_distance),
        lambda: alibi_rope_live(n_heads, base, dim, max_distance),
    )


def alibi_window_live(n_heads: int = 8, window: int = 512, max_factor: int = 16) -> LiveExplorer:
    """The live window-mass UI: number of heads, window L and how far the sequence grows."""
    fig = alibi_window_figure(n_heads, window, max_factor, sliders=False)
    controls = {
        "n_heads": _int_slider(n_heads, 1, 128, "heads"),
        "window": _int_slider(window, 16, 8192, "window L", 16),
        "max_factor": _int_slider(max_factor, 2, 64, "longest T / L"),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        state = _window_state(v["n_heads"], v["window"], v["max_factor"])
        trace = ui.figure.data[0]
        trace.update(x=state["x"], y=state["y"], customdata=state["customdata"],
                     marker={"color": state["marker"]["color"]})
        trace.hovertemplate = (
            "head %{customdata} (μ_h = 2^−%{marker.color:.3g})<br>"
            "sequence length T = %{x}<br>mass beyond the last "
            f"{v['window']} keys = %{{y:.3g}}<extra></extra>"
        )
        ui.figure.data[1].update(**_window_labels(v["n_heads"], v["window"], v["max_factor"]))
        ui.figure.layout.xaxis.title.text = (
            f"sequence length T (tokens, log scale; L = {v['window']})"
        )
        ui.figure.layout.yaxis.title.text = (
            f"mass beyond the last L = {v['window']} keys (log; floor 10⁻⁶)")

    return LiveExplorer(fig, controls, update)


def alibi_window_explorer(n_heads: int = 8, window: int = 512, max_factor: int = 16) -> Any:
    """Attention mass near the query as ``T`` grows; see
    :func:`posenc_lib.viz.alibi.alibi_window_figure`."""
    return explorer(
        lambda: alibi_window_figure(n_heads, window, max_factor),
        lambda: alibi_window_live(n_heads, window, max_factor),
    )
