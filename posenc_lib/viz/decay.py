"""Long-term decay curves: RoFormer's bound, sinusoidal PE·PE and empirical RoPE scores."""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch

from .. import analysis, rope
from ._checks import _base, _bool, _even, _fmt, _int, _lists, _np
from ._style import BASE_GRID, COLORWAY, DIM_GRID, _buttons, _slider, _style, _with

__all__ = [
    "decay_curves",
]


def _decay_state(
    dim: int, base: float, max_distance: int, n_samples: int = 32, seed: int = 0
) -> list[dict[str, Any]]:
    k = np.arange(max_distance + 1)
    bound = _np(analysis.rope_decay_bound(dim, base, max_distance))
    sim = _np(analysis.sinusoidal_similarity(dim, base, max_distance))[max_distance:]
    # Random unit directions, q = k: the score <RoPE(q, 0), RoPE(q, r)> at every distance r.
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(n_samples, dim, generator=gen)
    q = q / q.norm(dim=-1, keepdim=True)
    positions = torch.arange(max_distance + 1, dtype=torch.float64)
    rotated = rope.apply_rope_interleaved(
        q[:, None, :].expand(n_samples, max_distance + 1, dim), positions, base=base
    )
    score = _np((rotated * q[:, None, :]).sum(-1).mean(0)).astype(np.float64)
    curves = (bound / bound[0], sim / sim[0], score / score[0])
    return [{"x": k, "y": c} for c in curves]


def decay_curves(
    dim: int = 128,
    base: float = 10000.0,
    max_distance: int = 256,
    *,
    n_samples: int = 32,
    seed: int = 0,
    sliders: bool = True,
) -> go.Figure:
    """Long-term decay against relative distance: RoFormer's bound, PE·PE, and RoPE scores.

    Every curve is divided by its own value at distance 0 so that the three share one axis.

    Parameters
    ----------
    dim : int
        Dimension ``d`` (even, 4 … 1024).
    base : float
        Base ``b`` (> 1).
    max_distance : int
        Largest relative distance drawn (1 … 8192).
    n_samples : int
        Random unit directions ``q = k`` averaged for the empirical RoPE score (1 … 1024).
    seed : int
        Seed of those directions.
    sliders : bool
        Add a base slider (:data:`BASE_GRID`) and a dimension dropdown (:data:`DIM_GRID`).

    Returns
    -------
    plotly.graph_objects.Figure
        Three line traces (per dimension of the dropdown when ``sliders``), x = distance 0 … max.
    """
    dim = _even(dim, "dim", 4, 1024)
    base = _base(base)
    max_distance = _int(max_distance, "max_distance", 1, 8192)
    n_samples = _int(n_samples, "n_samples", 1, 1024)
    seed = _int(seed, "seed", 0)
    sliders = _bool(sliders, "sliders")
    names = (
        "RoFormer upper bound (1/(d/2))·Σ_j |Σ_{i<j} e^{i·k·θ_i}|",
        "sinusoidal PE(p)·PE(p+k) = Σ_i cos(k·θ_i)",
        f"mean ⟨RoPE(q, m), RoPE(q, m+k)⟩ over {n_samples} random unit q",
    )
    dashes = ("solid", "dash", "dot")
    dims = [int(d) for d in _with(DIM_GRID, dim) if d <= 1024] if sliders else [dim]
    fig = go.Figure()
    for d in dims:
        for j, props in enumerate(_decay_state(d, base, max_distance, n_samples, seed)):
            fig.add_trace(
                go.Scatter(
                    **props,
                    mode="lines",
                    name=names[j],
                    visible=d == dim,
                    legendgroup=str(j),
                    line={"color": COLORWAY[j], "dash": dashes[j], "width": 2},
                    hovertemplate=(
                        f"distance k = %{{x}}<br>normalised value = %{{y:.3f}}"
                        f"<extra>d = {d}</extra>"
                    ),
                )
            )
    fig.update_layout(
        xaxis={"title": {"text": "relative distance k = n − m (tokens)"}},
        yaxis={"title": {"text": "value ÷ value at k = 0"}},
        legend={"orientation": "h", "x": 0.0, "y": -0.18, "yanchor": "top"},
    )
    title = "Long-term decay (each curve normalised to 1 at k = 0)"
    if not sliders:
        return _style(fig, title)
    bases = _with(BASE_GRID, base)
    n = len(fig.data)
    steps = []
    for b in bases:
        ys = [
            _lists(p["y"], 3)
            for d in dims
            for p in _decay_state(d, b, max_distance, n_samples, seed)
        ]
        steps.append({"method": "restyle", "label": _fmt(b), "args": [{"y": ys}, list(range(n))]})
    buttons = [
        {
            "method": "restyle",
            "label": f"d = {d}",
            "args": [{"visible": [dd == d for dd in dims for _ in range(3)]}, list(range(n))],
        }
        for d in dims
    ]
    fig.update_layout(
        sliders=[_slider(steps, bases.index(base), "base b = ", y=-0.32, pad_t=10)],
        updatemenus=[_buttons(buttons, dims.index(dim))],
        margin={"b": 180},
    )
    return _style(fig, title, height=560)
