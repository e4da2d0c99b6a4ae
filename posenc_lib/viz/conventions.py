"""The two RoPE pairing conventions, interleaved (2i, 2i+1) and half (i, i + d/2), side by side."""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from .. import rope
from ._checks import _bool, _even, _np
from ._style import COLORWAY, GRID, MUTED, PAPER, SEQUENTIAL, _buttons, _style, _with

__all__ = [
    "convention_pairs_figure",
]


def _pair_colors(half: int) -> list[str]:
    if half <= len(COLORWAY):
        return COLORWAY[:half]
    import plotly.colors as pc  # only needed for many pairs

    return pc.sample_colorscale(SEQUENTIAL, [i / (half - 1) for i in range(half)])


def _convention_state(dim: int) -> list[dict[str, Any]]:
    """Four traces: permutation lines, pair arcs, top (interleaved) and bottom (half) features."""
    perm = _np(rope.interleaved_to_half_permutation(dim)).astype(int)
    half = dim // 2
    colors = np.asarray(_pair_colors(half), dtype=object)
    feat = np.arange(dim)
    top_pair = feat // 2  # interleaved: features (2i, 2i+1) form pair i
    bottom_pair = feat % half  # half: slots (i, i + d/2) form pair i
    nan = np.full((dim, 1), np.nan)
    # Permutation lines: slot s of the half layout holds feature perm[s].
    line_x = np.hstack((perm[:, None], feat[:, None], nan)).reshape(-1)
    line_y = np.hstack((np.ones((dim, 1)), np.zeros((dim, 1)), nan)).reshape(-1)
    # Arcs joining the two members of each pair: above the top row, below the bottom row.
    u = np.linspace(0, np.pi, 16)
    i = np.arange(half)[:, None]
    arcs_x, arcs_y = [], []
    for a, b, y0, sign in ((2 * i, 2 * i + 1, 1.0, 1.0), (i, i + half, 0.0, -1.0)):
        arcs_x.append(np.hstack(((a + b) / 2 - (b - a) / 2 * np.cos(u), nan[:half])))
        arcs_y.append(np.hstack((y0 + sign * (0.08 + 0.3 * (b - a) / dim) * np.sin(u), nan[:half])))
    return [
        {"x": line_x, "y": line_y},
        {
            "x": np.concatenate(arcs_x).reshape(-1).round(3),
            "y": np.concatenate(arcs_y).reshape(-1).round(3),
        },
        {
            "x": feat,
            "y": np.ones(dim),
            "text": [str(j) for j in feat],
            "marker": {"color": colors[top_pair].tolist()},
            "customdata": top_pair,
        },
        {
            "x": feat,
            "y": np.zeros(dim),
            "text": [str(p) for p in perm],
            "marker": {"color": colors[bottom_pair].tolist()},
            "customdata": np.stack((bottom_pair, perm), 1),
        },
    ]


def _convention_traces(dim: int, visible: bool) -> list[go.Scatter]:
    st = _convention_state(dim)
    node = {
        "mode": "markers+text",
        "textposition": "middle center",
        "showlegend": False,
        "textfont": {"color": PAPER, "size": 10},
        "visible": visible,
    }
    return [
        go.Scatter(
            **st[0],
            mode="lines",
            line={"color": GRID, "width": 1.5},
            hoverinfo="skip",
            showlegend=False,
            visible=visible,
        ),
        go.Scatter(
            **st[1],
            mode="lines",
            line={"color": MUTED, "width": 1.5},
            hoverinfo="skip",
            showlegend=False,
            visible=visible,
        ),
        go.Scatter(
            **{k: v for k, v in st[2].items() if k != "marker"},
            **node,
            marker={**st[2]["marker"], "size": 20},
            hovertemplate="interleaved: feature %{x} is in pair i = %{customdata}<extra></extra>",
        ),
        go.Scatter(
            **{k: v for k, v in st[3].items() if k != "marker"},
            **node,
            marker={**st[3]["marker"], "size": 20},
            hovertemplate=(
                "half: slot %{x} holds feature %{customdata[1]}, pair i = "
                "%{customdata[0]}<extra></extra>"
            ),
        ),
    ]


def convention_pairs_figure(dim: int = 16, *, sliders: bool = True) -> go.Figure:
    """Which features rotate together: interleaved ``(2i, 2i+1)`` vs half ``(i, i + d/2)``.

    The grey lines draw ``perm = interleaved_to_half_permutation(dim)``: slot ``s`` of the half
    layout holds feature ``perm[s]``, and then both conventions rotate the same pairs.

    Parameters
    ----------
    dim : int
        Dimension ``d`` (even, 2 … 64).
    sliders : bool
        Add a dropdown over d ∈ {4, 8, 16, 32}.

    Returns
    -------
    plotly.graph_objects.Figure
        Top row: features in the interleaved layout; bottom row: the half layout.
    """
    dim = _even(dim, "dim", 2, 64)
    sliders = _bool(sliders, "sliders")
    dims = [int(d) for d in _with((4, 8, 16, 32), dim)] if sliders else [dim]
    fig = go.Figure()
    counts = []
    for d in dims:
        traces = _convention_traces(d, d == dim)
        counts.append(len(traces))
        fig.add_traces(traces)
    fig.update_layout(
        xaxis={
            "title": {"text": "feature index (top) / slot in the half layout (bottom)"},
            "showgrid": False,
            "zeroline": False,
        },
        yaxis={
            "tickmode": "array",
            "tickvals": [0, 1],
            "range": [-0.55, 1.55],
            "ticktext": ["half: (i, i + d/2)", "interleaved: (2i, 2i+1)"],
            "showgrid": False,
            "zeroline": False,
        },
    )
    title = f"Two ways to pair features (d = {dim}); lines: the permutation between them"
    if sliders and len(dims) > 1:
        buttons = []
        for d in dims:
            vis = [dd == d for dd, c in zip(dims, counts, strict=True) for _ in range(c)]
            buttons.append(
                {
                    "method": "update",
                    "label": f"d = {d}",
                    "args": [
                        {"visible": vis},
                        {
                            "title.text": f"Two ways to pair features (d = {d}); lines: the "
                            "permutation "
                            "between them"
                        },
                    ],
                }
            )
        fig.update_layout(updatemenus=[_buttons(buttons, dims.index(dim))])
    return _style(fig, title, height=380)
