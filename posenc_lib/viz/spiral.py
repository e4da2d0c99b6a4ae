"""The RoPE spiral: each rotary pair as a helix over position, and all pairs as clock hands."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from .. import rope
from .._validation import MAX_ELEMENTS
from ._checks import _base, _bool, _even, _fmt, _int, _lists, _np
from ._style import BASE_GRID, COLORWAY, MUTED, SEQUENTIAL, _slider, _style, _with

__all__ = [
    "default_pairs",
    "rope_spiral",
]


def default_pairs(dim: int, count: int = 4) -> list[int]:
    """``count`` pair indices spread log-evenly over ``0 … dim/2 − 1`` (fast to slow).

    ``dim`` is even (>= 2); ``count`` >= 1. Fewer than ``count`` indices come back when ``dim/2``
    has fewer distinct log-even picks.
    """
    dim = _even(dim, "dim", 2, MAX_ELEMENTS)
    count = _int(count, "count", 1)
    half = dim // 2
    picks = np.unique(np.round(np.geomspace(1, half, min(count, half))).astype(int) - 1)
    return [int(p) for p in picks]


def _rope_unit_turns(dim: int, base: float, positions: torch.Tensor) -> np.ndarray:
    """``(seq, dim)``: RoPE applied to ``(1, 0, 1, 0, …)``, i.e. ``cos mθ_i, sin mθ_i`` per pair."""
    unit = torch.zeros(dim, dtype=torch.float64)
    unit[0::2] = 1.0
    x = unit.expand(positions.numel(), dim)
    return _np(rope.apply_rope_interleaved(x, positions, base=base))


def _spiral_state(
    dim: int, base: float, seq_len: int, pairs: list[int], position: int
) -> list[dict[str, Any]]:
    positions = torch.arange(seq_len, dtype=torch.float64)
    turns = _rope_unit_turns(dim, base, positions)
    state: list[dict[str, Any]] = [
        {"x": turns[:, 2 * i], "y": turns[:, 2 * i + 1], "z": positions.numpy()} for i in pairs
    ]
    half = dim // 2
    here = _rope_unit_turns(dim, base, torch.tensor([float(position)], dtype=torch.float64))[0]
    theta = _np(rope.rope_inv_freq(dim, base))
    # Hand length shrinks with i, like a clock: fast pairs long, slow pairs short.
    radius = 1.0 - 0.75 * np.arange(half) / max(half - 1, 1)
    tip_x = radius * here[0::2]
    tip_y = radius * here[1::2]
    line_x = np.stack((np.zeros(half), tip_x, np.full(half, np.nan)), 1).reshape(-1)
    line_y = np.stack((np.zeros(half), tip_y, np.full(half, np.nan)), 1).reshape(-1)
    angle = np.mod(position * theta, 2 * np.pi)
    state.append({"x": line_x, "y": line_y})
    state.append(
        {
            "x": tip_x,
            "y": tip_y,
            "customdata": np.stack((np.arange(half), theta, angle), 1),
            "marker": {"color": np.arange(half), "cmin": 0, "cmax": max(half - 1, 1)},
            "hovertemplate": (
                "pair i = %{customdata[0]}<br>θ_i = %{customdata[1]:.3g} rad/position<br>"
                f"angle m·θ_i mod 2π = %{{customdata[2]:.3f}} rad<extra>m = {position}</extra>"
            ),
        }
    )
    return state


def rope_spiral(
    dim: int = 64,
    base: float = 10000.0,
    seq_len: int = 256,
    pairs: Sequence[int] | None = None,
    *,
    position: int = 10,
    sliders: bool = True,
) -> go.Figure:
    """Each chosen RoPE pair as a helix (cos mθ_i, sin mθ_i, m), and all pairs as clock hands.

    Parameters
    ----------
    dim : int
        Rotary dimension ``d`` (even, 2 … 1024).
    base : float
        Base ``b`` (> 1).
    seq_len : int
        Positions ``m = 0 … seq_len − 1`` along each helix (2 … 4096).
    pairs : sequence of int, optional
        Pair indices ``i`` to draw as helices (default: four spread from fast to slow).
    position : int
        The position ``m`` whose rotation angles the clock view shows (0 … seq_len − 1).
    sliders : bool
        Add a base slider (steps over :data:`BASE_GRID`).

    Returns
    -------
    plotly.graph_objects.Figure
        A 3-D scene with ``len(pairs)`` helices and a 2-D clock with ``dim/2`` hands.
    """
    dim = _even(dim, "dim", 2, 1024)
    base = _base(base)
    seq_len = _int(seq_len, "seq_len", 2, 4096)
    position = _int(position, "position", 0, seq_len - 1)
    sliders = _bool(sliders, "sliders")
    pairs = _check_pairs(pairs, dim)
    fig = make_subplots(
        rows=1,
        cols=2,
        specs=[[{"type": "scene"}, {"type": "xy"}]],
        column_widths=[0.58, 0.42],
        subplot_titles=(
            "each pair i: (cos mθ_i, sin mθ_i) over position m",
            f"all {dim // 2} pairs at position m = {position}",
        ),
    )
    state = _spiral_state(dim, base, seq_len, pairs, position)
    for k, i in enumerate(pairs):
        fig.add_trace(
            go.Scatter3d(
                **state[k],
                mode="lines",
                name=f"pair i = {i}",
                line={"width": 4, "color": COLORWAY[k % len(COLORWAY)]},
                hovertemplate=(
                    f"pair i = {i}<br>position m = %{{z}}<br>cos mθ_i = %{{x:.3f}}"
                    "<br>sin mθ_i = %{y:.3f}<extra></extra>"
                ),
            ),
            row=1,
            col=1,
        )
    fig.add_trace(
        go.Scatter(
            **state[-2],
            mode="lines",
            line={"color": MUTED, "width": 1},
            hoverinfo="skip",
            showlegend=False,
        ),
        row=1,
        col=2,
    )
    tips = {k: v for k, v in state[-1].items() if k != "marker"}
    fig.add_trace(
        go.Scatter(
            **tips,
            mode="markers",
            showlegend=False,
            marker={
                **state[-1]["marker"],
                "size": 7,
                "colorscale": SEQUENTIAL,
                "colorbar": {"title": {"text": "pair i"}, "thickness": 12, "x": 1.02},
            },
        ),
        row=1,
        col=2,
    )
    fig.update_layout(
        scene={
            "xaxis": {"title": {"text": "cos mθ_i"}, "range": [-1.1, 1.1]},
            "yaxis": {"title": {"text": "sin mθ_i"}, "range": [-1.1, 1.1]},
            "zaxis": {"title": {"text": "position m"}},
            "aspectmode": "manual",
            "aspectratio": {"x": 1, "y": 1, "z": 1.4},
            # Far enough back that the axis titles and ticks fit inside the scene.
            "camera": {
                "eye": {"x": 1.9, "y": 1.9, "z": 0.8},
                "center": {"x": 0, "y": 0, "z": -0.1},
            },
        },
        xaxis={"title": {"text": "cos mθ_i (scaled by hand length)"}, "range": [-1.1, 1.1]},
        yaxis={"title": {"text": "sin mθ_i"}, "range": [-1.1, 1.1], "scaleanchor": "x"},
        legend={"orientation": "h", "x": 0.0, "y": -0.02, "xanchor": "left", "yanchor": "top"},
    )
    if sliders:
        bases = _with(BASE_GRID, base)
        n = len(fig.data)
        steps = []
        for b in bases:
            st = _spiral_state(dim, b, seq_len, pairs, position)
            args: dict[str, Any] = {
                "x": [_lists(s["x"], 3) for s in st],
                "y": [_lists(s["y"], 3) for s in st],
                "customdata": [None] * (n - 1) + [_lists(st[-1]["customdata"], 4)],
            }
            steps.append({"method": "restyle", "label": _fmt(b), "args": [args, list(range(n))]})
        fig.update_layout(
            sliders=[_slider(steps, bases.index(base), "base b = ", y=-0.14)], margin={"b": 150}
        )
    return _style(
        fig,
        f"RoPE as rotation: pair i turns by θ_i = b^(−2i/d) per position (d = {dim})",
        height=540,
    )


def _check_pairs(pairs: Sequence[int] | None, dim: int) -> list[int]:
    if pairs is None:
        return default_pairs(dim)
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Sequence) or len(pairs) == 0:
        raise TypeError(f"pairs must be a non-empty sequence of pair indices, got {pairs!r}")
    out = [_int(p, "pairs", 0, dim // 2 - 1) for p in pairs]
    if len(set(out)) != len(out):
        raise ValueError(f"pairs must not repeat an index, got {list(out)}")
    if len(out) > 8:
        raise ValueError(f"pairs must hold at most 8 indices, got {len(out)}")
    return out
