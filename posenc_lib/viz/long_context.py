"""Chapter 8's figures: trained vs new arcs, LLaMA 2 Long's all-ones curve, granularity, spirals.

Every number comes from :mod:`posenc_lib.long_context` and :mod:`posenc_lib.rope`.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from .. import long_context, rope
from ._checks import _base, _bool, _even, _fmt, _int, _lists, _np, _real
from ._style import COLORWAY, MUTED, _slider, _style, _with

__all__ = [
    "ABF_BASE_GRID",
    "ARC_METHODS",
    "GRANULARITY_DIMS",
    "abf_pi_crossing",
    "all_ones_figure",
    "arc_ends",
    "arc_figure",
    "base_bound_figure",
    "granularity_figure",
    "interpolation_ramps",
    "pair_spiral_figure",
]

ABF_BASE_GRID: tuple[float, ...] = (1e4, 5e4, 1e5, 5e5, 1e6, 5e6)
GRANULARITY_DIMS: tuple[int, ...] = (32, 64, 128, 512, 4096)


@lru_cache(maxsize=64)
def _score_curve(kind: str, dim: int, base: float, factor: float, max_distance: int,
                 xpos_scale_base: float, points: int) -> tuple[np.ndarray, np.ndarray]:
    # Cached per curve: a live slider over ABF's base leaves RoPE's and PI's curves untouched.
    step = max(1, max_distance // points)
    dist = torch.arange(0, max_distance + 1, step, dtype=torch.float64)
    theta = rope.rope_inv_freq(dim, base) / (factor if kind == "pi" else 1.0)
    xpos = xpos_scale_base if kind == "xpos" else None
    return _np(dist), _np(long_context.all_ones_scores(theta, dist, xpos_scale_base=xpos))


def _score_state(
    dim: int, base: float, abf_base: float, factor: float, max_distance: int,
    xpos_scale_base: float, points: int = 2048,
) -> list[dict[str, Any]]:
    specs = [
        ("rope", base, 1.0, f"RoPE (b = {_fmt(base)})"),
        ("pi", base, factor, f"RoPE PI (s = {_fmt(factor)})"),
        ("abf", abf_base, 1.0, f"RoPE ABF (b = {_fmt(abf_base)})"),
        ("xpos", abf_base, 1.0,
         f"xPos ABF (b = {_fmt(abf_base)}, scale base {_fmt(xpos_scale_base)})"),
    ]
    out = []
    for kind, b, f, name in specs:
        x, y = _score_curve(kind, dim, b, f, max_distance, xpos_scale_base, points)
        out.append({"x": x, "y": y, "name": name})
    return out


def all_ones_figure(
    dim: int = 128,
    base: float = 10000.0,
    abf_base: float = 500000.0,
    factor: float = 8.0,
    max_distance: int = 32768,
    *,
    xpos_scale_base: float = 512.0,
    sliders: bool = True,
) -> go.Figure:
    """LLaMA 2 Long's curve: the raw score ``q·R_r k`` for all-ones ``q``, ``k`` against ``r``.

    Parameters
    ----------
    dim : int
        Head dimension ``d`` (even, 4 … 512).
    base : float
        RoPE's base (for RoPE and RoPE PI).
    abf_base : float
        ABF's adjusted base (500 000 in LLaMA 2 Long).
    factor : float
        PI's scale factor (1 … 64).
    max_distance : int
        Largest distance ``r`` (16 … 131 072); 2 049 points are drawn.
    xpos_scale_base : float
        xPos's scale base (512 in the authors' code; LLaMA 2 Long does not state its value).
    sliders : bool
        Add a slider over ABF's base (:data:`ABF_BASE_GRID`).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    dim = _even(dim, "dim", 4, 512)
    base = _base(base)
    abf_base = _base(abf_base, "abf_base")
    factor = _real(factor, "factor", 1.0, 64.0)
    max_distance = _int(max_distance, "max_distance", 16, 131072)
    xpos_scale_base = _real(xpos_scale_base, "xpos_scale_base", 1.0)
    sliders = _bool(sliders, "sliders")
    state = _score_state(dim, base, abf_base, factor, max_distance, xpos_scale_base)
    fig = go.Figure()
    for props, color, dash in zip(state, COLORWAY, ("solid", "solid", "solid", "dot"),
                                  strict=False):
        fig.add_trace(go.Scatter(
            **props, mode="lines", line={"color": color, "width": 1.4, "dash": dash},
            hovertemplate="r = %{x}<br>score = %{y:.2f}<extra>%{fullData.name}</extra>",
        ))
    fig.update_layout(
        xaxis={"title": {"text": "relative distance r (positions)"}},
        yaxis={"title": {"text": "raw score q·R_r k, q = k = all ones"}},
        legend={"orientation": "h", "x": 0.0, "y": 1.0, "yanchor": "bottom"},
        margin={"t": 110},
    )
    title = f"Attention score with all-ones q and k (d = {dim})"
    if not sliders:
        return _style(fig, title, height=500)
    grid = _with(ABF_BASE_GRID, abf_base)
    steps = []
    for b in grid:
        st = _score_state(dim, base, b, factor, max_distance, xpos_scale_base)
        steps.append({
            "method": "restyle",
            "label": _fmt(b),
            "args": [{"y": [_lists(s["y"], 2) for s in st[2:]],
                      "name": [s["name"] for s in st[2:]]}, [2, 3]],
        })
    fig.update_layout(
        sliders=[_slider(steps, grid.index(abf_base), "ABF base b = ", y=-0.14)],
        margin={"b": 140, "t": 110},
    )
    return _style(fig, title, height=560)


def _granularity_state(dim: int, base: float) -> list[dict[str, Any]]:
    betas = np.geomspace(1.0, 1000.0, 61)
    alphas = np.linspace(1 / 64, 1.0, 64)
    theta = rope.rope_inv_freq(dim, base)
    abf_step = [float(long_context.mean_angle_step(rope.rope_inv_freq(dim, base * b)))
                for b in betas]
    abf_angle = [float(long_context.consecutive_angle(rope.rope_inv_freq(dim, base * b)))
                 for b in betas]
    pi_step = [float(long_context.mean_angle_step(theta * a)) for a in alphas]
    pi_angle = [float(long_context.consecutive_angle(theta * a)) for a in alphas]
    abf_sine = [float(long_context.hermitian_sine(rope.rope_inv_freq(dim, base * b)))
                for b in betas]
    pi_sine = [float(long_context.hermitian_sine(theta * a)) for a in alphas]
    abf_paper = [1 / (np.log(base) + np.log(b)) for b in betas]
    pi_paper = [a / np.log(base) for a in alphas]
    return [
        {"x": betas, "y": abf_step, "name": f"mean angle step (2/d)·Σθ_i, d = {dim}"},
        {"x": betas, "y": abf_paper, "name": "paper: 1/(ln b + ln β)"},
        {"x": betas, "y": abf_angle, "name": "angle between neighbours ∠(R_{n+1}x, R_n x)"},
        {"x": betas, "y": abf_sine, "name": "paper's 'sine similarity' (2/d)·Σ sin θ_i"},
        {"x": alphas, "y": pi_step, "name": f"mean angle step, d = {dim}"},
        {"x": alphas, "y": pi_paper, "name": "paper: α/ln b"},
        {"x": alphas, "y": pi_angle, "name": "angle between neighbours"},
        {"x": alphas, "y": pi_sine, "name": "paper's 'sine similarity'"},
    ]


def granularity_figure(
    dim: int = 128, base: float = 10000.0, *, sliders: bool = True
) -> go.Figure:
    """ABF against PI: how far apart neighbouring positions are, as the knob turns.

    Left: ABF's base ``b·β`` against ``β`` (log axis) — a logarithmic dependence. Right: PI's
    positions ``× α`` against ``α`` — a linear one. Markers: measured mean angle step and the
    exact angle between neighbouring embeddings (equal weight per pair); solid: the paper's
    "sine similarity" ``Im⟨R_{n+1}x, R_n x⟩/‖x‖²`` (:func:`posenc_lib.long_context.hermitian_sine`);
    dashed: the paper's large-``d`` approximations.

    Parameters
    ----------
    dim : int
        Rotary dimension (even, 4 … 4096).
    base : float
        The base ``b`` (> 1).
    sliders : bool
        Add a slider over ``d`` (:data:`GRANULARITY_DIMS`).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    dim = _even(dim, "dim", 4, 4096)
    base = _base(base)
    sliders = _bool(sliders, "sliders")
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1, subplot_titles=(
        "ABF: base b·β", "PI: positions × α"))
    state = _granularity_state(dim, base)
    styles = [
        {"mode": "markers", "marker": {"color": COLORWAY[0], "size": 5}},
        {"mode": "lines", "line": {"color": MUTED, "dash": "dash"}},
        {"mode": "markers", "marker": {"color": COLORWAY[1], "size": 5, "symbol": "diamond"}},
        {"mode": "lines", "line": {"color": COLORWAY[2], "width": 2}},
    ]
    for k, props in enumerate(state):
        col = 1 + k // 4
        fig.add_trace(go.Scatter(**props, **styles[k % 4], legendgroup=str(k % 4),
                                 showlegend=col == 1,
                                 hovertemplate="%{x:.3g} → %{y:.4f} rad<extra></extra>"),
                      row=1, col=col)
    fig.update_xaxes(type="log", title_text="β (base multiplier)", row=1, col=1)
    fig.update_xaxes(title_text="α = 1/s (position multiplier)", row=1, col=2)
    fig.update_yaxes(title_text="angle per position (rad)", rangemode="tozero")
    fig.update_layout(legend={"orientation": "h", "x": 0.0, "y": -0.22, "yanchor": "top"},
                      margin={"b": 120})
    title = f"Granularity: ABF depends on ln β, PI on α (b = {_fmt(base)})"
    if not sliders:
        return _style(fig, title, height=480)
    grid = sorted(set(GRANULARITY_DIMS) | {dim})
    steps = []
    for d in grid:
        st = _granularity_state(d, base)
        steps.append({"method": "restyle", "label": str(d), "args": [
            {"y": [_lists(s["y"], 5) for s in st], "name": [s["name"] for s in st]},
            list(range(8))]})
    fig.update_layout(sliders=[_slider(steps, grid.index(dim), "dimension d = ", y=-0.36)],
                      margin={"b": 190})
    return _style(fig, title, height=560)


_SPIRAL_POINTS = 384  # samples per spiral: keeps the page small (chapter 8 within 4 MB)


def _spiral_spectra(dim: int, base: float, factor: float, abf_base: float
                    ) -> dict[str, torch.Tensor]:
    return {
        "RoPE": rope.rope_inv_freq(dim, base),
        "PI": rope.rope_inv_freq(dim, base) / factor,
        "ABF": rope.rope_inv_freq(dim, abf_base),
    }


def _spiral_grid(pair: int, dim: int, base: float, factor: float, abf_base: float,
                 length: int) -> tuple[int, int]:
    """``(step, end)``: sample every ``step`` positions up to ``end``, never aliasing.

    A sample every ``step`` positions turns the fastest of the three spectra by at most π/8, so
    the drawn curve is the spiral and not a moiré of it; fast pairs are then drawn over the first
    ``384·step`` positions only (they repeat the same circle anyway).
    """
    fastest = max(float(t[pair]) for t in _spiral_spectra(dim, base, factor, abf_base).values())
    # ceil: the slowest pairs' samples reach the last position.
    step = max(1, min(math.ceil(length / _SPIRAL_POINTS), math.floor(math.pi / 8 / fastest)))
    return step, min(length, _SPIRAL_POINTS * step)


def _spiral_title(pair: int, dim: int, base: float, factor: float, abf_base: float,
                  length: int) -> str:
    step, end = _spiral_grid(pair, dim, base, factor, abf_base, length)
    return (f"Pair i = {pair}, positions 0 … {_fmt(end)} (every {step}): angle m·θ_i, "
            f"radius m (d = {dim})")


def _spiral_state(
    pair: int, dim: int, base: float, factor: float, abf_base: float, length: int
) -> list[dict[str, Any]]:
    step, end = _spiral_grid(pair, dim, base, factor, abf_base, length)
    positions = torch.arange(0, end + 1, step, dtype=torch.float64)
    spectra = _spiral_spectra(dim, base, factor, abf_base)
    out = []
    for name, theta in spectra.items():
        angle = rope.rope_angles(positions, theta)[:, pair]
        out.append({
            "x": _np(positions * torch.cos(angle)),
            "y": _np(positions * torch.sin(angle)),
            "customdata": np.stack((_np(positions), _np(angle % (2 * np.pi))), 1),
            "name": f"{name}: θ_{pair} = {float(theta[pair]):.3g} rad/position",
        })
    return out


def abf_pi_crossing(dim: int, base: float, factor: float, abf_base: float) -> tuple[int, ...]:
    """The last pair ABF slows at most as much as PI, and the first it slows more.

    ABF (base ``abf_base``) slows pair ``i`` by ``(abf_base/base)**(2i/dim)``, PI every pair by
    ``factor``; the crossing is the first ``i`` where ABF's slow-down exceeds ``factor``.

    Parameters
    ----------
    dim, base : int, float
        RoPE's head size (even, 4 … 512) and base (> 1).
    factor : float
        PI's factor, in ``[1, 64]``.
    abf_base : float
        ABF's base (> 1).

    Returns
    -------
    tuple of int
        ``(i - 1, i)`` for the first such pair ``i`` (``(i,)`` if ``i = 0``), or ``()`` if ABF
        slows no pair more than PI.
    """
    dim = _even(dim, "dim", 4, 512)
    base = _base(base)
    factor = _real(factor, "factor", 1.0, 64.0)
    abf_base = _base(abf_base, "abf_base")
    for i in range(dim // 2):
        if (abf_base / base) ** (2 * i / dim) > factor:
            return (i - 1, i) if i > 0 else (i,)
    return ()


def pair_spiral_figure(
    pair: int = 40,
    dim: int = 128,
    base: float = 10000.0,
    factor: float = 8.0,
    abf_base: float = 500000.0,
    length: int = 4096,
    *,
    sliders: bool = True,
) -> go.Figure:
    """One pair's angle ``m·θ_i`` drawn as a spiral (radius = position) for RoPE, PI and ABF.

    This is the book's own picture, not the helices of LLaMA 2 Long's Figure 8. Positions are
    sampled finely enough that no pair aliases (at most π/8 per sample); fast pairs are drawn
    over their first 384 samples.

    Parameters
    ----------
    pair : int
        Pair index ``i`` (0 … d/2 − 1).
    dim, base : int, float
        RoPE's dimension and base.
    factor : float
        PI's scale factor.
    abf_base : float
        ABF's base.
    length : int
        Last position drawn (16 … 131 072); at most 385 points per spiral.
    sliders : bool
        Add a slider over the pair index.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    dim = _even(dim, "dim", 4, 512)
    pair = _int(pair, "pair", 0, dim // 2 - 1)
    base = _base(base)
    factor = _real(factor, "factor", 1.0, 64.0)
    abf_base = _base(abf_base, "abf_base")
    length = _int(length, "length", 16, 131072)
    sliders = _bool(sliders, "sliders")
    fig = make_subplots(rows=1, cols=3, subplot_titles=("RoPE", "RoPE PI", "RoPE ABF"),
                        horizontal_spacing=0.05)
    for k, props in enumerate(_spiral_state(pair, dim, base, factor, abf_base, length)):
        fig.add_trace(go.Scatter(
            **props, mode="lines+markers", line={"color": COLORWAY[k], "width": 0.8},
            marker={"size": 3, "color": COLORWAY[k]},
            hovertemplate="position m = %{customdata[0]}<br>m·θ_i mod 2π = %{customdata[1]:.3f}"
                          "<extra></extra>",
        ), row=1, col=k + 1)
    fig.update_xaxes(title_text="m·cos(m·θ_i)", zeroline=True)
    fig.update_yaxes(scaleanchor="x", title_text="m·sin(m·θ_i)", row=1, col=1)
    fig.update_yaxes(scaleanchor="x2", row=1, col=2)
    fig.update_yaxes(scaleanchor="x3", row=1, col=3)
    fig.update_layout(legend={"orientation": "h", "x": 0.0, "y": -0.2, "yanchor": "top"},
                      margin={"b": 110})
    title = _spiral_title(pair, dim, base, factor, abf_base, length)
    if not sliders:
        return _style(fig, title, height=460)
    # The slider's pairs: a coarse grid, the pair shown, and the two pairs either side of the
    # crossing where ABF starts to slow a pair more than PI's factor (so it can be seen).
    grid = sorted(({0, 8, 16, 24, 32, 40, 48, 56, dim // 2 - 1, pair}
                   | set(abf_pi_crossing(dim, base, factor, abf_base))) & set(range(dim // 2)))
    steps = []
    for p in grid:
        st = _spiral_state(p, dim, base, factor, abf_base, length)
        steps.append({"method": "update", "label": str(p), "args": [
            {"x": [_lists(s["x"], 0) for s in st], "y": [_lists(s["y"], 0) for s in st],
             "customdata": [_lists(s["customdata"], 2) for s in st],
             "name": [s["name"] for s in st]},
            {"title.text": _spiral_title(p, dim, base, factor, abf_base, length)},
            [0, 1, 2]]})
    fig.update_layout(sliders=[_slider(steps, grid.index(pair), "pair i = ", y=-0.3)],
                      margin={"b": 170})
    return _style(fig, title, height=540)


# --- every method as a ramp over τ = L/λ ---------------------------------------------------------


def _ramp_curves(dim: int, base: float, factor: float, train_len: int
                 ) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """``(name, τ, fraction)`` per method: ``fraction = ln(θ/θ')/ln s`` against ``τ = L/λ``."""
    from .. import scaling  # local: the figure module stays light to import

    theta = rope.rope_inv_freq(dim, base)
    tau = train_len * theta / (2 * math.pi)  # turns in the training context
    spectra = {
        "PI": scaling.pi_inv_freq(dim, base, factor),
        "NTK-aware": scaling.ntk_inv_freq(dim, base, factor),
        "YaRN (transformers)": scaling.yarn_inv_freq(dim, base, factor, train_len)[0],
        "YaRN (paper, β_slow = 1, β_fast = 32)":
            scaling.yarn_paper_inv_freq(dim, base, factor, train_len)[0],
        "Llama 3.1 (= paper, β_slow = 1, β_fast = 4)":
            scaling.llama3_inv_freq(dim, base, factor, train_len),
    }
    out = []
    for name, inv in spectra.items():
        fraction = torch.log(theta / inv) / math.log(factor)
        out.append((name, _np(tau), _np(fraction)))
    return out


def interpolation_ramps(
    dim: int = 128, base: float = 10000.0, factor: float = 8.0, train_len: int = 4096,
) -> go.Figure:
    """Every method as a ramp: how much of the full factor ``s`` each pair gets, against ``L/λ``.

    The y value is ``ln(θ_i/θ'_i)/ln s``: 0 keeps the pair (extrapolates), 1 divides it by ``s``
    (interpolates). The x value is the number of turns the pair makes in the training context,
    ``τ_i = L/λ_i`` (log scale): the critical pair sits at ``τ = 1``.

    Parameters
    ----------
    dim, base : int, float
        RoPE's dimension (even, 8 … 512) and base.
    factor : float
        Scale factor ``s`` (1.5 … 64).
    train_len : int
        Training context ``L`` (16 … 2**22).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    dim = _even(dim, "dim", 8, 512)
    base = _base(base)
    factor = _real(factor, "factor", 1.5, 64.0)
    train_len = _int(train_len, "train_len", 16, 2**22)
    fig = go.Figure()
    dashes = ["solid", "dot", "solid", "dash", "dashdot"]
    for k, (name, tau, fraction) in enumerate(_ramp_curves(dim, base, factor, train_len)):
        fig.add_trace(go.Scatter(
            x=_lists(tau, 4), y=_lists(fraction, 4), name=name, mode="lines+markers",
            line={"color": COLORWAY[k], "dash": dashes[k], "width": 2}, marker={"size": 4},
            hovertemplate="τ = L/λ = %{x:.3g}<br>share of ln s = %{y:.3f}<extra>" + name
                          + "</extra>",
        ))
    fig.add_vline(x=1.0, line={"color": MUTED, "dash": "dash", "width": 1})
    fig.update_layout(
        xaxis={"title": {"text": "turns in the training context, τ_i = L/λ_i"}, "type": "log",
               "autorange": "reversed"},
        yaxis={"title": {"text": "ln(θ_i/θ'_i) / ln s"}, "range": [-0.05, 1.05]},
        legend={"orientation": "h", "x": 0.0, "y": -0.22, "yanchor": "top"},
        margin={"b": 150},
    )
    title = (f"Each method as a ramp over τ_i = L/λ_i<br><sup>d = {dim}, b = {_fmt(base)}, "
             f"s = {_fmt(factor)}, L = {_fmt(train_len)}; 0 = kept, 1 = divided by s</sup>")
    return _style(fig, title, height=520)


def base_bound_figure(
    bases: Any, lengths: Any, passes: Any, models: dict[str, tuple[float, float]] | None = None
) -> go.Figure:
    """Men et al.'s criterion as a map: where ``B(r) >= 0`` holds up to ``L``, with real models.

    Parameters
    ----------
    bases : array-like
        Shape ``(n_bases,)``, increasing, > 1 (the y axis, log scale).
    lengths : array-like
        Shape ``(n_lengths,)``, increasing, >= 1 (the x axis, log scale).
    passes : array-like
        Shape ``(n_bases, n_lengths)``, bool (:func:`posenc_lib.long_context.base_bound_map`).
    models : dict, optional
        ``{name: (length, base)}`` drawn as markers.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    b = np.asarray(bases, dtype=np.float64).reshape(-1)
    n = np.asarray(lengths, dtype=np.float64).reshape(-1)
    ok = np.asarray(passes, dtype=bool)
    if b.size == 0 or n.size == 0 or ok.shape != (b.size, n.size):
        raise ValueError("passes must have shape (len(bases), len(lengths)), both non-empty")
    if (b <= 1).any() or (n < 1).any() or not (np.isfinite(b).all() and np.isfinite(n).all()):
        raise ValueError("bases must be > 1 and lengths >= 1, all finite")
    fig = go.Figure()
    fig.add_trace(go.Heatmap(
        x=np.round(np.log10(n), 4), y=np.round(np.log10(b), 4), z=ok.astype(int),
        zmin=0, zmax=1, showscale=False,
        colorscale=[[0.0, "#f4d6cf"], [0.5, "#f4d6cf"], [0.5, "#cfe3f4"], [1.0, "#cfe3f4"]],
        hovertemplate="L = 10^%{x:.2f}<br>b = 10^%{y:.2f}<br>passes: %{z}<extra></extra>",
    ))
    for k, (name, (length, base)) in enumerate((models or {}).items()):
        fig.add_trace(go.Scatter(
            x=[round(math.log10(length), 4)], y=[round(math.log10(base), 4)], mode="markers",
            name=name, marker={"size": 10, "color": COLORWAY[k % len(COLORWAY)],
                               "line": {"color": "black", "width": 1}},
            hovertemplate=f"{name}<br>L = {length:,.0f}, b = {base:.3g}<extra></extra>",
        ))
    fig.update_xaxes(title_text="context length L (log₁₀)")
    fig.update_yaxes(title_text="RoPE base b (log₁₀)")
    return _style(fig, "B(r) ≥ 0 for every r ≤ L: blue passes, red fails (d = 128)",
                  height=460)


# --- the arc of angles each pair saw in training, against the arc it must handle at sL ---------

ARC_METHODS: tuple[str, ...] = ("RoPE, unchanged", "PI", "NTK-aware", "YaRN", "Llama 3.1")


def _arc_pairs(pairs: Any, dim: int) -> list[int]:
    if pairs is None:
        return [0, dim // 4, 3 * dim // 8, dim // 2 - 1]
    if isinstance(pairs, (str, bytes)) or not hasattr(pairs, "__iter__"):
        raise TypeError(f"pairs must be a sequence of pair indices, got {pairs!r}")
    out = [_int(p, "pairs", 0, dim // 2 - 1) for p in pairs]
    if not 1 <= len(out) <= 6:
        raise ValueError(f"pairs must hold 1 … 6 pair indices, got {len(out)}")
    return out


def arc_ends(
    dim: int = 128, base: float = 10000.0, factor: float = 4.0, train_len: int = 4096,
    pairs: Any = None,
) -> dict[str, np.ndarray]:
    """Where each pair's arc of angles ends: ``L·θ_i`` in training, ``s·L·θ'_i`` per method.

    Positions ``m ∈ [0, L)`` turn pair ``i`` through the arc ``[0, L·θ_i)``; reading
    ``m ∈ [0, sL)`` with a method's spectrum ``θ'`` turns it through ``[0, sL·θ'_i)``. Where the
    second end passes the first and the first is below ``2π``, the pair meets angles it never saw.

    Parameters
    ----------
    dim, base : int, float
        RoPE's dimension (even, 8 … 512) and base.
    factor : float
        Scale factor ``s`` (1.5 … 64).
    train_len : int
        Training context ``L`` (16 … 2**22).
    pairs : sequence of int, optional
        1 … 6 pair indices; default ``(0, d/4, 3d/8, d/2 − 1)``.

    Returns
    -------
    dict of str to numpy.ndarray
        ``"pairs"`` (shape ``(n,)``, int), ``"trained"`` and one entry per name in
        :data:`ARC_METHODS` (shape ``(n,)``, radians, not reduced mod ``2π``).
    """
    from .. import scaling  # local: the figure module stays light to import

    dim = _even(dim, "dim", 8, 512)
    base = _base(base)
    factor = _real(factor, "factor", 1.5, 64.0)
    train_len = _int(train_len, "train_len", 16, 2**22)
    idx = _arc_pairs(pairs, dim)
    theta = rope.rope_inv_freq(dim, base)
    spectra = {
        "RoPE, unchanged": theta,
        "PI": scaling.pi_inv_freq(dim, base, factor),
        "NTK-aware": scaling.ntk_inv_freq(dim, base, factor),
        "YaRN": scaling.yarn_inv_freq(dim, base, factor, train_len)[0],
        "Llama 3.1": scaling.llama3_inv_freq(dim, base, factor, train_len),
    }
    out: dict[str, np.ndarray] = {"pairs": np.asarray(idx, dtype=np.int64),
                                  "trained": _np(train_len * theta[idx])}
    for name, inv in spectra.items():
        out[name] = _np(factor * train_len * inv[idx])
    return out


def _arc(end: float, radius: float, points: int = 121) -> tuple[list[float], list[float]]:
    """``(x, y)`` of the arc ``[0, min(end, 2π)]`` at ``radius``, drawn as a plain line.

    Plain ``scatter`` traces, not ``scatterpolar``: the book's partial plotly bundles draw only the
    trace types the figures need, and a polar subplot's titles collide on a phone.
    """
    angle = np.linspace(0.0, min(end, 2 * math.pi), points)
    return (np.round(radius * np.cos(angle), 6).tolist(),
            np.round(radius * np.sin(angle), 6).tolist())


def arc_figure(
    dim: int = 128, base: float = 10000.0, factor: float = 4.0, train_len: int = 4096,
    pairs: Any = None,
) -> go.Figure:
    """The trained arc of each pair (grey sector) against the arc each method uses at ``sL``.

    One panel per pair (two per row); the grey sector is ``[0, L·θ_i)`` (a full disc once the
    pair has turned at least once), and each ring, from the inside out, is the arc
    ``[0, sL·θ'_i)`` of :data:`ARC_METHODS` (a full circle once it reaches ``2π``), drawn
    counter-clockwise from the positive x axis. A ring that leaves the grey sector shows angles
    the pair never saw in training.

    Parameters
    ----------
    dim, base, factor, train_len, pairs
        As :func:`arc_ends`.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    ends = arc_ends(dim, base, factor, train_len, pairs)
    idx = ends["pairs"].tolist()
    outer = len(ARC_METHODS) + 0.7
    cols = min(2, len(idx))
    rows = -(-len(idx) // cols)
    titles = [f"pair {i}: {ends['trained'][c] / (2 * math.pi):.3g} turns in L"
              for c, i in enumerate(idx)]
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=titles,
                        horizontal_spacing=0.06, vertical_spacing=0.12)
    for c, i in enumerate(idx):
        row, col = c // cols + 1, c % cols + 1
        trained = float(ends["trained"][c])
        x, y = _arc(trained, outer)
        fig.add_trace(go.Scatter(
            x=[0.0, *x, 0.0], y=[0.0, *y, 0.0], mode="lines", fill="toself",
            fillcolor="rgba(87, 96, 106, 0.18)", line={"color": MUTED, "width": 1},
            name="trained arc [0, Lθ_i)", legendgroup="trained", showlegend=c == 0,
            hovertemplate=f"pair {i}: trained arc ends at Lθ_i = {trained:.3g} rad<extra></extra>",
        ), row=row, col=col)
        for k, name in enumerate(ARC_METHODS):
            end = float(ends[name][c])
            x, y = _arc(end, k + 1.0)
            fig.add_trace(go.Scatter(
                x=x, y=y, mode="lines", name=name, legendgroup=name,
                showlegend=c == 0, line={"color": COLORWAY[k], "width": 3},
                hovertemplate=(f"{name}, pair {i}: arc ends at sLθ'_i = {end:.3g} rad "
                               f"({end / trained:.3g}× the trained arc)<extra></extra>"),
            ), row=row, col=col)
    lim = [-(outer + 0.2), outer + 0.2]
    fig.update_xaxes(visible=False, range=lim, constrain="domain")
    for c in range(len(idx)):
        suffix = "" if c == 0 else str(c + 1)
        fig.update_yaxes(visible=False, range=lim, scaleanchor=f"x{suffix}", scaleratio=1,
                         row=c // cols + 1, col=c % cols + 1)
    fig.update_layout(legend={"orientation": "h", "x": 0.0, "y": -0.04, "yanchor": "top"},
                      margin={"b": 90, "t": 110})
    title = (f"Trained arc (grey) and the arc each method uses at sL<br><sup>d = {dim}, "
             f"b = {_fmt(base)}, s = {_fmt(factor)}, L = {_fmt(train_len)}; rings from the inside: "
             + ", ".join(ARC_METHODS) + "</sup>")
    return _style(fig, title, height=300 * rows + 200)
