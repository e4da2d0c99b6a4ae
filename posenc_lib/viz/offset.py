"""RoPE scores under a shared shift of both positions, against added sinusoidal encodings."""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from .. import rope, sinusoidal
from ._checks import _base, _bool, _even, _int, _lists, _np, _seed
from ._style import COLORWAY, INK, _slider, _style

__all__ = [
    "rope_offset_figure",
]


def _offset_vectors(dim: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    q, k = torch.randn(2, dim, generator=gen, dtype=torch.float64)
    return q, k


def _offset_scores(
    dim: int, base: float, seed: int, m: int, n: int, max_offset: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q, k = _offset_vectors(dim, seed)
    t = torch.arange(max_offset + 1, dtype=torch.float64)
    qr = rope.apply_rope_interleaved(q.expand(t.numel(), dim), m + t, base=base)
    kr = rope.apply_rope_interleaved(k.expand(t.numel(), dim), n + t, base=base)
    rope_score = (qr * kr).sum(-1)
    # Contrast: adding sinusoidal encodings instead leaves cross terms q·PE(n+t) that move with t.
    pe_q = sinusoidal.sinusoidal_table(t.numel(), dim, base, dtype=torch.float64, positions=m + t)
    pe_k = sinusoidal.sinusoidal_table(t.numel(), dim, base, dtype=torch.float64, positions=n + t)
    added = ((q + pe_q) * (k + pe_k)).sum(-1)
    return _np(t), _np(rope_score), _np(added)


def _offset_state(
    dim: int, base: float, offset: int, seed: int, m: int, n: int, max_offset: int
) -> list[dict[str, Any]]:
    t, score, added = _offset_scores(dim, base, seed, m, n, max_offset)
    q, k = _offset_vectors(dim, seed)
    pos = torch.tensor([float(m + offset), float(n + offset)], dtype=torch.float64)
    qr = _np(rope.apply_rope_interleaved(q.expand(1, dim), pos[:1], base=base))[0]
    kr = _np(rope.apply_rope_interleaved(k.expand(1, dim), pos[1:], base=base))[0]
    return [
        {"x": [0.0, qr[0]], "y": [0.0, qr[1]]},
        {"x": [0.0, kr[0]], "y": [0.0, kr[1]]},
        {"x": t, "y": score},
        {"x": t, "y": added},
        {
            "x": [offset, offset],
            "y": [score[offset], added[offset]],
            "hovertemplate": "shift Δ = %{x}<br>score = %{y:.4f}<extra></extra>",
        },
    ]


def rope_offset_figure(
    dim: int = 64,
    base: float = 10000.0,
    offset: int = 0,
    seed: int = 0,
    *,
    m: int = 7,
    n: int = 2,
    max_offset: int = 64,
    sliders: bool = True,
) -> go.Figure:
    """``⟨RoPE(q, m+Δ), RoPE(k, n+Δ)⟩`` as a shared shift Δ moves: it does not change.

    Left: pair 0 of the rotated query and key (both turn, the angle between them stays).
    Right: the score against Δ, and for contrast ``(q + PE(m+Δ))·(k + PE(n+Δ))``.

    Parameters
    ----------
    dim : int
        Dimension ``d`` (even, 2 … 1024).
    base : float
        Base ``b`` (> 1).
    offset : int
        The shift Δ shown (0 … max_offset).
    seed : int
        Seed of the random ``q`` and ``k`` (0 … 2**63 − 1).
    m, n : int
        Positions of query and key before the shift (0 … 10^9); the default ``m = 7, n = 2``
        puts the key in the query's past, as a causal model scores it.
    max_offset : int
        Largest shift drawn (1 … 4096).
    sliders : bool
        Add a slider over Δ (about 17 steps).

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: q arrow, k arrow, RoPE score curve, additive-PE curve, markers at Δ.
    """
    dim = _even(dim, "dim", 2, 1024)
    base = _base(base)
    max_offset = _int(max_offset, "max_offset", 1, 4096)
    offset = _int(offset, "offset", 0, max_offset)
    seed = _seed(seed)
    m = _int(m, "m", 0, 10**9)
    n = _int(n, "n", 0, 10**9)
    sliders = _bool(sliders, "sliders")
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.4, 0.6],
        horizontal_spacing=0.12,
        subplot_titles=(
            "pair 0 of RoPE(q, m+Δ) and RoPE(k, n+Δ)",
            "score against the shared shift Δ",
        ),
    )
    st = _offset_state(dim, base, offset, seed, m, n, max_offset)
    fig.add_trace(
        go.Scatter(
            **st[0],
            mode="lines+markers",
            name=f"q at m + Δ (m = {m})",
            line={"color": COLORWAY[0], "width": 3},
            marker={"size": [0, 10]},
            hovertemplate="q pair 0: (%{x:.3f}, %{y:.3f})<extra></extra>",
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Scatter(
            **st[1],
            mode="lines+markers",
            name=f"k at n + Δ (n = {n})",
            line={"color": COLORWAY[1], "width": 3},
            marker={"size": [0, 10]},
            hovertemplate="k pair 0: (%{x:.3f}, %{y:.3f})<extra></extra>",
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Scatter(
            **st[2],
            mode="lines",
            name="RoPE: ⟨RoPE(q, m+Δ), RoPE(k, n+Δ)⟩",
            line={"color": COLORWAY[2], "width": 3},
            hovertemplate="Δ = %{x}<br>RoPE score = %{y:.6f}<extra></extra>",
        ),
        row=1,
        col=2,
    )
    fig.add_trace(
        go.Scatter(
            **st[3],
            mode="lines",
            name="sinusoids added to q and k (no W): (q+PE(m+Δ))·(k+PE(n+Δ))",
            line={"color": COLORWAY[3], "dash": "dash"},
            hovertemplate="Δ = %{x}<br>score = %{y:.4f}<extra></extra>",
        ),
        row=1,
        col=2,
    )
    fig.add_trace(
        go.Scatter(
            **st[4],
            mode="markers",
            name="current shift Δ",
            marker={"size": 11, "color": INK, "symbol": "diamond"},
        ),
        row=1,
        col=2,
    )
    lim = 1.15 * float(
        max(
            np.hypot(*_np(_offset_vectors(dim, seed)[0])[:2]),
            np.hypot(*_np(_offset_vectors(dim, seed)[1])[:2]),
            0.1,
        )
    )
    fig.update_xaxes(title_text="feature 0", range=[-lim, lim], row=1, col=1)
    fig.update_yaxes(title_text="feature 1", range=[-lim, lim], scaleanchor="x", row=1, col=1)
    fig.update_xaxes(title_text="shared shift Δ (positions)", row=1, col=2)
    fig.update_yaxes(title_text="attention score (logit)", row=1, col=2)
    fig.update_layout(legend={"orientation": "h", "x": 0.0, "y": -0.2, "yanchor": "top"})
    title = f"RoPE scores depend on m − n = {m - n} only: shift both positions and nothing changes"
    if not sliders:
        return _style(fig, title, height=520)
    stride = max(1, max_offset // 16)
    ts = sorted(set(range(0, max_offset + 1, stride)) | {offset})
    steps = []
    for t in ts:
        s = _offset_state(dim, base, t, seed, m, n, max_offset)
        steps.append(
            {
                "method": "restyle",
                "label": str(t),
                "args": [
                    {
                        "x": [_lists(s[0]["x"], 4), _lists(s[1]["x"], 4), [t, t]],
                        "y": [_lists(s[0]["y"], 4), _lists(s[1]["y"], 4), _lists(s[4]["y"], 4)],
                    },
                    [0, 1, 4],
                ],
            }
        )
    fig.update_layout(
        sliders=[_slider(steps, ts.index(offset), "shift t = ", y=-0.34, pad_t=10)],
        margin={"b": 180},
    )
    return _style(fig, title, height=600)
