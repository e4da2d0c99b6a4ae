"""ALiBi heatmaps: one head's causal linear bias and the attention pattern it alone gives.

The numbers come from the core modules :mod:`posenc_lib.alibi` and
:mod:`posenc_lib.attention`, which this one only draws.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from ..alibi import alibi_bias, alibi_slopes

# The package re-exports the function ``attention``, which shadows the submodule of that name.
from ..attention import attention as _attention
from ._checks import _bool, _int, _lists, _np
from ._style import SEQUENTIAL, SEQUENTIAL_ALT, _slider, _style

__all__ = [
    "alibi_heatmaps",
]


def _alibi_state(n_heads: int, seq_len: int, head: int) -> list[dict[str, Any]]:
    bias = alibi_bias(n_heads, seq_len, dtype=torch.float64)
    zeros = torch.zeros(1, seq_len, 1, dtype=torch.float64)
    # Content-free queries and keys: the weights are softmax(bias), ALiBi's pure positional pattern.
    _, weights = _attention(zeros, zeros, zeros, bias=bias[head : head + 1])
    slope = float(_np(alibi_slopes(n_heads, dtype=torch.float64))[head])
    b = _np(bias[head])
    b = np.where(np.isfinite(b), b, np.nan)  # masked (−inf) cells are left blank
    extra = f"<extra>head h = {head}, slope m = {slope:.4g}</extra>"
    return [
        {
            "z": b,
            "zmin": -slope * (seq_len - 1),
            "zmax": 0.0,
            "hovertemplate": "query i = %{y}, key j = %{x}<br>bias −m·(i−j) = %{z:.3f}" + extra,
        },
        {
            "z": _np(weights[0]),
            "hovertemplate": "query i = %{y}, key j = %{x}<br>weight = %{z:.3f}" + extra,
        },
    ]


def alibi_heatmaps(
    n_heads: int = 8, seq_len: int = 32, *, head: int = 0, sliders: bool = True
) -> go.Figure:
    """One ALiBi head: its causal bias ``−m_h·(i − j)`` and the attention pattern it alone gives.

    Parameters
    ----------
    n_heads : int
        Number of heads (1 … 128), also non-powers of two.
    seq_len : int
        Sequence length (2 … 512).
    head : int
        The head shown first (0 … n_heads − 1).
    sliders : bool
        Add a slider over the heads.

    Returns
    -------
    plotly.graph_objects.Figure
        Two heatmaps: bias (masked cells blank) and attention weights softmax(bias) per row.
    """
    n_heads = _int(n_heads, "n_heads", 1, 128)
    seq_len = _int(seq_len, "seq_len", 2, 512)
    head = _int(head, "head", 0, n_heads - 1)
    sliders = _bool(sliders, "sliders")
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.14,
        subplot_titles=("bias added to the logits", "attention weights softmax(bias)"),
    )
    state = _alibi_state(n_heads, seq_len, head)
    fig.add_trace(
        go.Heatmap(
            **state[0],
            colorscale=SEQUENTIAL_ALT,
            colorbar={"title": {"text": "bias"}, "x": 0.43, "thickness": 12},
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Heatmap(
            **state[1],
            colorscale=SEQUENTIAL,
            zmin=0.0,
            zmax=1.0,
            colorbar={"title": {"text": "weight"}, "thickness": 12},
        ),
        row=1,
        col=2,
    )
    for c in (1, 2):
        fig.update_xaxes(title_text="key position j", row=1, col=c)
        fig.update_yaxes(title_text="query position i", autorange="reversed", row=1, col=c)
    title = f"ALiBi with {n_heads} heads: slopes m_h form a geometric sequence"
    if sliders:
        steps = []
        for h in range(n_heads):
            st = _alibi_state(n_heads, seq_len, h)
            steps.append(
                {
                    "method": "restyle",
                    "label": str(h),
                    "args": [
                        {
                            "z": [_lists(st[0]["z"], 3), _lists(st[1]["z"], 3)],
                            "zmin": [st[0]["zmin"], 0.0],
                            "hovertemplate": [st[0]["hovertemplate"], st[1]["hovertemplate"]],
                        },
                        [0, 1],
                    ],
                }
            )
        fig.update_layout(sliders=[_slider(steps, head, "head h = ")], margin={"b": 110})
    return _style(fig, title, height=480)
