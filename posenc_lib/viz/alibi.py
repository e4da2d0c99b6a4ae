"""ALiBi figures: one head's bias and attention, each head's reach, ALiBi beside RoPE's decay,
the attention mass a query keeps near itself as the sequence grows, and how far a trained
model's layers really look.

The numbers come from the core modules :mod:`posenc_lib.alibi`, :mod:`posenc_lib.attention` and
:mod:`posenc_lib.analysis`, which this one only draws. Masked cells and line breaks are sent to
the browser as ``None`` (JSON ``null``), never as NaN.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from ..alibi import alibi_reach, alibi_slopes, linear_bias
from ..analysis import rope_decay_bound

# The package re-exports the function ``attention``, which shadows the submodule of that name.
from ..attention import attention as _attention
from ._checks import _base, _bool, _even, _fmt, _int, _lists, _np
from ._style import (
    BASE_GRID,
    COLORWAY,
    GRID,
    INK,
    MUTED,
    SEQUENTIAL,
    SEQUENTIAL_ALT,
    _slider,
    _style,
    _with,
)

__all__ = [
    "HEADS_GRID",
    "alibi_heatmaps",
    "alibi_lab_figure",
    "alibi_learned_mass_figure",
    "alibi_precision_figure",
    "alibi_reach_figure",
    "alibi_rope_figure",
    "alibi_window_figure",
]

#: Head counts of the static heads sliders: powers of two and the real non-powers (12,
#: Baichuan-13B's 40, BLOOM-176B's 112).
HEADS_GRID: tuple[int, ...] = (1, 2, 4, 8, 12, 16, 32, 40, 64, 112)
# Static heatmaps: at most this many query/key positions and heads per figure (sampled evenly),
# so that n_heads = 128, seq_len = 512 stays a ~100 kB figure.
_MAX_CELLS = 40
_MAX_HEAD_STEPS = 12
_REACH_NATS = (1.0, 5.0, 10.0)
_WINDOW_POINTS = 16

# JSON null for plotly (a gap or a blank cell); never NaN, which the widget protocol rejects.
_NONE = np.array(None, dtype=object)
_GAP = np.array([None], dtype=object)  # one null appended between traces' segments


def _none_where_masked(a: np.ndarray, decimals: int | None = None) -> Any:
    """``a`` with ``None`` where it is not finite (−inf masked cells).

    Rounded nested lists for static slider steps; an object array otherwise, which a live
    ``FigureWidget`` validates ~10x faster than nested lists (8 ms against 80 ms at 256 × 256).
    """
    finite = np.isfinite(a)
    if decimals is None:
        return np.where(finite, a, _NONE)
    a = np.round(np.where(finite, a, 0.0), decimals) + 0.0
    return np.where(finite, a, _NONE).tolist()


def _sampled(n: int, at_most: int) -> np.ndarray:
    """``at_most`` evenly spread indices of ``0 … n − 1`` (first and last included), or all."""
    if n <= at_most:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, at_most).round().astype(int))


# --- one head: bias and attention ----------------------------------------------------------------


_BIAS_CLIP = 10.0  # nats: the bias panel's colour range is [−10, 0] for every head


def _alibi_title(n_heads: int) -> str:
    return f"ALiBi, {n_heads} heads: one head's bias (colours clip at −10) and attention"


def _alibi_state(
    n_heads: int, seq_len: int, head: int, positions: np.ndarray | None = None,
    decimals: int | None = None,
) -> list[dict[str, Any]]:
    slope = float(_np(alibi_slopes(n_heads, dtype=torch.float64))[head])
    # One head only (the live figure redraws it on every move).
    bias = linear_bias(torch.tensor([slope], dtype=torch.float64), seq_len, dtype=torch.float64)
    zeros = torch.zeros(1, seq_len, 1, dtype=torch.float64)
    # Content-free queries and keys: the weights are softmax(bias), ALiBi's pure positional pattern.
    _, weights = _attention(zeros, zeros, zeros, bias=bias)
    b, w = _np(bias[0]), _np(weights[0])
    if positions is not None:
        b, w = b[np.ix_(positions, positions)], w[np.ix_(positions, positions)]
    axis = np.arange(seq_len) if positions is None else positions
    extra = f"<extra>head h = {head}, slope μ = {slope:.4g}</extra>"
    return [
        {
            "x": axis,
            "y": axis,
            "z": _none_where_masked(b, decimals),  # masked (−inf) cells are left blank
            # One fixed range for every head (clipped at −10 nats, a 4.5e-5 weight ratio), so the
            # head slider changes the colours, not only the colour bar's labels.
            "zmin": -_BIAS_CLIP,
            "zmax": 0.0,
            "hovertemplate": "query m = %{y}, key n = %{x}<br>bias −μ·(m−n) = %{z:.3f}" + extra,
        },
        {
            "x": axis,
            "y": axis,
            "z": w if decimals is None else _lists(w, decimals),
            "hovertemplate": "query m = %{y}, key n = %{x}<br>weight = %{z:.3f}" + extra,
        },
    ]


def alibi_heatmaps(
    n_heads: int = 8, seq_len: int = 32, *, head: int = 0, sliders: bool = True
) -> go.Figure:
    """One ALiBi head: its causal bias ``−μ_h·(m − n)`` and the attention pattern it alone gives.

    Parameters
    ----------
    n_heads : int
        Number of heads (1 … 128), also non-powers of two.
    seq_len : int
        Sequence length (2 … 512).
    head : int
        The head shown first (0 … n_heads − 1).
    sliders : bool
        Add a slider over the heads. The static figure shows at most 12 heads (evenly spread,
        ``head`` included) and at most 40 query and key positions (evenly spread, the last
        included); hover shows the true positions. Without sliders every position is drawn.

    Returns
    -------
    plotly.graph_objects.Figure
        Two heatmaps: bias (masked cells blank) and attention weights softmax(bias) per row.
    """
    n_heads = _int(n_heads, "n_heads", 1, 128)
    seq_len = _int(seq_len, "seq_len", 2, 512)
    head = _int(head, "head", 0, n_heads - 1)
    sliders = _bool(sliders, "sliders")
    positions = _sampled(seq_len, _MAX_CELLS) if sliders else None
    decimals = 3 if sliders else None
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.16,
        subplot_titles=("bias added to the logits", "attention weights softmax(bias)"),
    )
    state = _alibi_state(n_heads, seq_len, head, positions, decimals)
    left_end = fig.layout.xaxis.domain[1]
    fig.add_trace(
        go.Heatmap(
            **state[0],
            colorscale=SEQUENTIAL_ALT,
            # The left colour bar sits in the gap; the right panel has no y title to collide with.
            colorbar={"title": {"text": "bias"}, "x": left_end + 0.01, "xanchor": "left",
                      "thickness": 12, "len": 0.9},
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
            colorbar={"title": {"text": "weight"}, "thickness": 12, "len": 0.9},
        ),
        row=1,
        col=2,
    )
    for c in (1, 2):
        fig.update_xaxes(title_text="key position n", row=1, col=c)
        fig.update_yaxes(autorange="reversed", row=1, col=c)
    fig.update_yaxes(title_text="query position m", row=1, col=1)
    title = _alibi_title(n_heads)
    if sliders:
        shown = sorted(set(_sampled(n_heads, _MAX_HEAD_STEPS).tolist()) | {head})
        steps = []
        for h in shown:
            st = _alibi_state(n_heads, seq_len, h, positions, decimals)
            steps.append(
                {
                    "method": "restyle",
                    "label": str(h),
                    "args": [
                        {
                            "z": [st[0]["z"], st[1]["z"]],
                            "zmin": [-_BIAS_CLIP, 0.0],
                            "hovertemplate": [st[0]["hovertemplate"], st[1]["hovertemplate"]],
                        },
                        [0, 1],
                    ],
                }
            )
        fig.update_layout(
            sliders=[_slider(steps, shown.index(head), "head h = ")], margin={"b": 110}
        )
    return _style(fig, title, height=480)


# --- each head's reach ---------------------------------------------------------------------------


def _reach_state(n_heads: int, context: int) -> list[dict[str, Any]]:
    reach = _np(alibi_reach(n_heads, _REACH_NATS))  # (n_heads, 3)
    slopes = _np(alibi_slopes(n_heads, dtype=torch.float64))
    heads = np.arange(n_heads)
    # One stem per head from its 1-nat to its 10-nat distance, broken with None between heads.
    stem_x = np.stack([heads, heads, np.full(n_heads, None)], 1).reshape(-1).tolist()
    stem_y = np.stack([reach[:, 0], reach[:, 2], np.full(n_heads, None)], 1).reshape(-1).tolist()
    states: list[dict[str, Any]] = [{"x": stem_x, "y": stem_y}]
    for k, nats in enumerate(_REACH_NATS):
        states.append(
            {
                "x": heads,
                "y": reach[:, k],
                "customdata": slopes,
                "hovertemplate": (
                    "head h = %{x}, slope μ = %{customdata:.4g}<br>"
                    f"bias −{nats:g} nat at distance {nats:g}/μ = %{{y:.4g}}<extra></extra>"
                ),
            }
        )
    states.append({"x": [-0.5, n_heads - 0.5], "y": [context, context]})
    return states


def alibi_reach_figure(
    n_heads: int = 12, context: int = 2048, *, sliders: bool = True
) -> go.Figure:
    """Each head's reach: the distances ``1/μ_h``, ``5/μ_h``, ``10/μ_h`` where its bias has fallen
    by 1, 5 and 10 nats (the weight of a key by ``e^{−1}``, ``e^{−5}``, ``e^{−10}``).

    Parameters
    ----------
    n_heads : int
        Number of heads (1 … 128).
    context : int
        A context length drawn as a reference line (1 … 10⁶), e.g. the training length.
    sliders : bool
        Add a slider over :data:`HEADS_GRID` (and ``n_heads``).

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: the stems, the 1/5/10-nat markers per head (x = head index, log y = distance),
        and the context line.
    """
    n_heads = _int(n_heads, "n_heads", 1, 128)
    context = _int(context, "context", 1, 10**6)
    sliders = _bool(sliders, "sliders")
    state = _reach_state(n_heads, context)
    fig = go.Figure()
    fig.add_trace(go.Scatter(**state[0], mode="lines", line={"color": GRID, "width": 6},
                             hoverinfo="skip", showlegend=False))
    symbols = ("circle", "diamond", "square")
    for k, nats in enumerate(_REACH_NATS):
        fig.add_trace(
            go.Scatter(
                **state[k + 1],
                mode="markers",
                name=f"bias −{nats:g} nat (weight × e^−{nats:g})",
                marker={"color": COLORWAY[k], "symbol": symbols[k], "size": 8},
            )
        )
    fig.add_trace(
        go.Scatter(**state[4], mode="lines", name=f"context length {context}",
                   line={"color": MUTED, "dash": "dash", "width": 1.5}, hoverinfo="skip")
    )
    fig.update_layout(
        xaxis={"title": {"text": "head h (in the order the slopes are assigned)"}},
        yaxis={"title": {"text": "distance r = m − n (tokens, log scale)"}, "type": "log"},
        # Legend in its own band under the title (the template's top margin is too small for both).
        legend={"orientation": "h", "x": 0.0, "y": 1.02, "yanchor": "bottom"},
        margin={"t": 110},
    )
    title = "How far each ALiBi head looks"
    if not sliders:
        return _style(fig, title, height=500)
    grid = [int(n) for n in _with(HEADS_GRID, n_heads)]
    steps = []
    for n in grid:
        st = _reach_state(n, context)
        steps.append(
            {
                "method": "restyle",
                "label": str(n),
                "args": [
                    {
                        "x": [s["x"] if isinstance(s["x"], list) else s["x"].tolist() for s in st],
                        "y": [s["y"] if isinstance(s["y"], list) else _lists(s["y"], 3)
                              for s in st],
                        "customdata": [None, *[_lists(s["customdata"], 6) for s in st[1:4]],
                                       None],
                    },
                    list(range(5)),
                ],
            }
        )
    fig.update_layout(
        sliders=[_slider(steps, grid.index(n_heads), "heads H = ", y=-0.16, pad_t=10)],
        margin={"b": 130, "t": 110},
    )
    return _style(fig, title, height=560)


# --- ALiBi beside RoPE ---------------------------------------------------------------------------


def _alibi_lines_state(n_heads: int, max_distance: int) -> dict[str, Any]:
    slopes = _np(alibi_slopes(n_heads, dtype=torch.float64))
    ends = np.full(n_heads, float(max_distance))
    # A straight line per head from (0, 0) to (R, −μ·R); None breaks the line between heads.
    x = np.stack([np.zeros(n_heads), ends, np.full(n_heads, None)], 1).reshape(-1).tolist()
    y = np.stack([np.zeros(n_heads), -slopes * ends, np.full(n_heads, None)], 1)
    heads = np.repeat(np.arange(n_heads), 3)
    m = np.repeat(slopes, 3)
    text = [f"head {h}, μ = {s:.4g}" for h, s in zip(heads, m, strict=True)]
    return {"x": x, "y": [None if v is None else round(float(v), 4) for v in y.reshape(-1)],
            "text": text}


def _rope_state(dim: int, base: float, max_distance: int, decimals: int | None) -> dict[str, Any]:
    f = _np(rope_decay_bound(dim, base, max_distance))
    y = f / f[0]
    return {"x": np.arange(max_distance + 1), "y": y if decimals is None else _lists(y, decimals),
            "hovertemplate": (f"distance r = %{{x}}<br>f(r)/f(0) = %{{y:.3f}}"
                              f"<extra>RoPE, d = {dim}, b = {_fmt(base)}</extra>")}


def alibi_rope_figure(
    n_heads: int = 8,
    base: float = 10000.0,
    dim: int = 128,
    max_distance: int = 1024,
    *,
    sliders: bool = True,
) -> go.Figure:
    """ALiBi beside RoPE: what distance does to the score of a fixed ``q·k``.

    Left: ALiBi adds ``−μ_h·r`` to the logit, a straight line per head that never turns back.
    Right: RoPE adds nothing, but RoFormer's bound on ``|q·k|`` shrinks with distance; drawn
    relative to distance 0, ``f(r)/f(0)`` (:func:`posenc_lib.analysis.rope_decay_bound`).

    Parameters
    ----------
    n_heads : int
        ALiBi heads (1 … 128).
    base : float
        RoPE base ``b`` (> 1).
    dim : int
        RoPE head dimension ``d`` (even, 4 … 1024).
    max_distance : int
        Largest distance drawn (8 … 2048).
    sliders : bool
        Add a heads slider (:data:`HEADS_GRID`) for ALiBi and a base slider (:data:`BASE_GRID`)
        for RoPE; they move independently.

    Returns
    -------
    plotly.graph_objects.Figure
        Two panels: trace 0 the ALiBi lines, trace 1 the RoPE relative bound.
    """
    n_heads = _int(n_heads, "n_heads", 1, 128)
    base = _base(base)
    dim = _even(dim, "dim", 4, 1024)
    max_distance = _int(max_distance, "max_distance", 8, 2048)
    sliders = _bool(sliders, "sliders")
    decimals = 3 if sliders else None
    fig = make_subplots(
        rows=1, cols=2, horizontal_spacing=0.12,
        subplot_titles=("ALiBi: bias −μ_h·r added to the logit",
                        "RoPE: bound on |q·k| relative to r = 0"),
    )
    fig.add_trace(
        go.Scatter(**_alibi_lines_state(n_heads, max_distance), mode="lines",
                   line={"color": COLORWAY[0], "width": 1.5}, name="ALiBi heads",
                   hovertemplate="distance r = %{x}<br>bias = %{y:.3f} nat<br>%{text}"
                                 "<extra></extra>"),
        row=1, col=1,
    )
    fig.add_trace(
        go.Scatter(**_rope_state(dim, base, max_distance, decimals), mode="lines",
                   line={"color": COLORWAY[1], "width": 2}, name="RoPE f(r)/f(0)"),
        row=1, col=2,
    )
    fig.update_xaxes(title_text="distance r = m − n (tokens)", range=[0, max_distance])
    fig.update_yaxes(title_text="bias (nats)", range=[-10.5, 0.5], row=1, col=1)
    fig.update_yaxes(title_text="f(r) / f(0)", range=[0, 1.05], row=1, col=2)
    fig.update_layout(showlegend=False)
    title = f"Distance and the score: ALiBi ({n_heads} heads) beside RoPE (d = {dim})"
    if not sliders:
        return _style(fig, title, height=460)
    heads = [int(n) for n in _with(HEADS_GRID, n_heads)]
    head_steps = []
    for n in heads:
        st = _alibi_lines_state(n, max_distance)
        head_steps.append({"method": "restyle", "label": str(n),
                           "args": [{"x": [st["x"]], "y": [st["y"]], "text": [st["text"]]}, [0]]})
    bases = _with(BASE_GRID, base)
    base_steps = []
    for b in bases:
        st = _rope_state(dim, b, max_distance, decimals)
        base_steps.append({"method": "restyle", "label": _fmt(b),
                           "args": [{"y": [st["y"]], "hovertemplate": [st["hovertemplate"]]},
                                    [1]]})
    fig.update_layout(
        sliders=[
            _slider(head_steps, heads.index(n_heads), "ALiBi heads H = ", y=-0.2, pad_t=10),
            _slider(base_steps, bases.index(base), "RoPE base b = ", y=-0.46, pad_t=10),
        ],
        margin={"b": 220},
    )
    return _style(fig, title, height=620)


# --- attention mass near the query ---------------------------------------------------------------


LEAK_FLOOR = 1e-6  # leaked mass below this is drawn on the floor of the log axis


def _leak(n_heads: int, lengths: np.ndarray, window: int) -> np.ndarray:
    """``1 − mass = (e^{−mL} − e^{−mT})/(1 − e^{−mT})``, computed without cancellation."""
    m = _np(alibi_slopes(n_heads, dtype=torch.float64))[:, None]
    t = lengths[None, :].astype(float)
    return (np.exp(-m * window) - np.exp(-m * t)) / -np.expm1(-m * t)


def _mu_text(slope: float) -> str:
    """A slope as ``1/2^e`` written out (``1/256``), or ``2^−e`` when ``e`` is fractional."""
    e = math.log2(1.0 / slope)
    return f"1/{2 ** round(e)}" if abs(e - round(e)) < 1e-9 else f"2^−{e:.3g}"


def _slope_label(h: int, slope: float) -> str:
    """``head h (μ = 1/256)``: the name the book gives a head."""
    return f"head {h} (μ = {_mu_text(slope)})"


#: Curves are named beside their right end for at most this many heads (more would overlap).
_WINDOW_LABELLED_HEADS = 16


def _window_state(n_heads: int, window: int, max_factor: int) -> dict[str, Any]:
    lengths = np.unique(np.geomspace(window, max_factor * window, _WINDOW_POINTS).round())
    leak = np.maximum(_leak(n_heads, lengths, window), LEAK_FLOOR)
    slopes = _np(alibi_slopes(n_heads, dtype=torch.float64))
    n = len(lengths)
    x = np.concatenate([np.append(lengths, _GAP) for _ in range(n_heads)]).tolist()
    y = np.concatenate([np.append([float(f"{v:.4g}") for v in row], _GAP) for row in leak]).tolist()
    # The marker colour, log2(1/μ_h), and the head index tell the heads apart (hover, colour bar).
    colour = np.repeat(np.log2(1.0 / slopes), n + 1)
    head = np.repeat(np.arange(n_heads), n + 1).tolist()
    return {"x": x, "y": y, "customdata": head, "marker": {"color": np.round(colour, 3).tolist()}}


def _window_labels(n_heads: int, window: int, max_factor: int) -> dict[str, Any]:
    """Names at the right end of each curve above the floor; the heads on the floor share one."""
    if n_heads > _WINDOW_LABELLED_HEADS:
        return {"x": [], "y": [], "text": []}
    end = float(max_factor * window)
    leak = _leak(n_heads, np.array([end]), window)[:, 0]
    slopes = _np(alibi_slopes(n_heads, dtype=torch.float64))
    above = [h for h in range(n_heads) if leak[h] > LEAK_FLOOR]
    x = [end] * len(above)
    y = [float(f"{leak[h]:.4g}") for h in above]
    text = [_slope_label(h, float(slopes[h])) for h in above]
    floor = [h for h in range(n_heads) if leak[h] <= LEAK_FLOOR]
    if floor:
        x.append(end)
        y.append(LEAK_FLOOR)
        text.append(f"{len(floor)} steepest heads (μ ≥ {_mu_text(float(slopes[floor].min()))})"
                    if len(floor) > 1 else _slope_label(floor[0], float(slopes[floor[0]])))
    return {"x": x, "y": y, "text": text}


def alibi_window_figure(
    n_heads: int = 8, window: int = 512, max_factor: int = 16, *, sliders: bool = True
) -> go.Figure:
    """Attention mass a content-free query leaks beyond its last ``window`` keys as ``T`` grows.

    ``1 − (1 − e^{−μ·L}) / (1 − e^{−μ·T})`` per head (one minus
    :func:`posenc_lib.alibi.alibi_window_mass`), on a log axis, for sequence lengths ``T`` from
    ``L = window`` to ``max_factor·L``: it rises from 0, then flattens at ``e^{−μ·L}``. Values
    below :data:`LEAK_FLOOR` (10⁻⁶) are drawn at the floor, so steep heads lie on it.

    Parameters
    ----------
    n_heads : int
        Number of heads (1 … 128).
    window : int
        The window ``L``, e.g. the training length (1 … 10⁶).
    max_factor : int
        The longest sequence drawn, in multiples of ``L`` (2 … 1024).
    sliders : bool
        Add a slider over :data:`HEADS_GRID` (and ``n_heads``).

    Returns
    -------
    plotly.graph_objects.Figure
        Trace 0: one line-and-marker trace (heads separated by ``None``), markers coloured by
        ``log₂(1/μ_h)``, hover naming ``head h (μ_h = 2^−log₂(1/μ_h))``; trace 1: the names
        ``head h (μ = 1/2^e)`` at the right end of the curves above the floor, one name for the
        heads on the floor (none beyond 16 heads); log x = sequence length.
    """
    n_heads = _int(n_heads, "n_heads", 1, 128)
    window = _int(window, "window", 1, 10**6)
    max_factor = _int(max_factor, "max_factor", 2, 1024)
    sliders = _bool(sliders, "sliders")
    state = _window_state(n_heads, window, max_factor)
    marker = {
        **state.pop("marker"),
        "colorscale": SEQUENTIAL,
        "cmin": 0.0,
        "cmax": 8.0,
        "size": 5,
        "colorbar": {"title": {"text": "log₂(1/μ_h)"}, "thickness": 12},
    }
    fig = go.Figure(
        go.Scatter(
            **state, mode="lines+markers", marker=marker, line={"color": GRID, "width": 1},
            hovertemplate=("head %{customdata} (μ_h = 2^−%{marker.color:.3g})<br>"
                           "sequence length T = %{x}<br>mass beyond the last "
                           f"{window} keys = %{{y:.3g}}<extra></extra>"),
        )
    )
    fig.add_trace(go.Scatter(**_window_labels(n_heads, window, max_factor), mode="text",
                             textposition="top left", hoverinfo="skip",
                             textfont={"size": 11}))
    fig.update_layout(
        xaxis={"title": {"text": f"sequence length T (tokens, log scale; L = {window})"},
               "type": "log"},
        yaxis={"title": {"text": f"mass beyond the last L = {window} keys (log; floor 10⁻⁶)"},
               "type": "log", "range": [math.log10(LEAK_FLOOR) - 0.2, 0.05]},
        showlegend=False,
    )
    title = "Attention a content-free query leaks beyond its last L keys as T grows"
    if not sliders:
        return _style(fig, title, height=480)
    grid = [int(n) for n in _with(HEADS_GRID, n_heads)]
    steps = []
    for n in grid:
        st = _window_state(n, window, max_factor)
        lab = _window_labels(n, window, max_factor)
        steps.append(
            {
                "method": "restyle",
                "label": str(n),
                "args": [{"x": [st["x"], lab["x"]], "y": [st["y"], lab["y"]],
                          "customdata": [st["customdata"], None],
                          "text": [None, lab["text"]],
                          "marker.color": [st["marker"]["color"], None]}, [0, 1]],
            }
        )
    fig.update_layout(
        sliders=[_slider(steps, grid.index(n_heads), "heads H = ", y=-0.16, pad_t=10)],
        margin={"b": 130},
    )
    return _style(fig, title, height=540)


def alibi_precision_figure(errors: dict[str, Any], *, title: str = "") -> go.Figure:
    """Per-query distortion of the attention, one line per bias form, on a log axis.

    Parameters
    ----------
    errors : dict
        ``{label: (L,) array}``, e.g. :func:`posenc_lib.alibi.alibi_precision_error` per form;
        all of one length ``L >= 1``, finite and >= 0.
    title : str
        Figure title (default: a description of the axes).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    if not isinstance(errors, dict) or not errors:
        raise ValueError("errors must be a non-empty dict {label: (L,) array}")
    series = {str(k): np.asarray(v, dtype=np.float64).reshape(-1) for k, v in errors.items()}
    lengths = {a.size for a in series.values()}
    if len(lengths) != 1 or 0 in lengths:
        raise ValueError("every array in errors must have the same length L >= 1")
    if any(not np.isfinite(a).all() or (a < 0).any() for a in series.values()):
        raise ValueError("errors must be finite and >= 0")
    fig = go.Figure()
    for k, (label, a) in enumerate(series.items()):
        x = np.arange(a.size)
        fig.add_trace(go.Scatter(x=x, y=np.round(np.maximum(a, 1e-6), 6), mode="lines", name=label,
                                 line={"color": COLORWAY[k % len(COLORWAY)], "width": 1.5}))
    fig.update_xaxes(title_text="query position m", gridcolor=GRID)
    fig.update_yaxes(title_text="largest change of an attention weight", type="log", gridcolor=GRID)
    return _style(fig, title or "Attention moved by storing the bias in bfloat16, per query",
                  height=400)


def alibi_lab_figure(
    copy: dict[str, dict[int, float]], markov: dict[str, dict[int, float]], train_length: int
) -> go.Figure:
    """Two panels against the evaluation length: copy accuracy and Markov loss, one line per model.

    Parameters
    ----------
    copy, markov : dict
        ``{label: {length: value}}`` (e.g. the means of :func:`posenc_lib.lab.results.summarise`),
        each with at least one length.
    train_length : int
        The training length ``L`` (>= 1), drawn as a dashed line; the x axis is ``length / L``.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    train_length = _int(train_length, "train_length", 1, 1 << 20)
    for name, panel in (("copy", copy), ("markov", markov)):
        if not isinstance(panel, dict) or not panel or not all(
                isinstance(v, dict) and v for v in panel.values()):
            raise ValueError(f"{name} must be a non-empty dict {{label: {{length: value}}}}")
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12, subplot_titles=(
        "copy accuracy (needs the far past)", "Markov loss, nats (needs the recent past)"))
    labels = list(dict.fromkeys([*copy, *markov]))
    for col, panel in ((1, copy), (2, markov)):
        for label, by_len in panel.items():
            k = labels.index(label)
            lengths = sorted(by_len)
            fig.add_trace(go.Scatter(
                x=[n / train_length for n in lengths], y=[round(by_len[n], 4) for n in lengths],
                mode="lines+markers", name=label, legendgroup=label, showlegend=col == 1,
                line={"color": COLORWAY[k % len(COLORWAY)]},
                hovertemplate=f"{label}<br>length %{{x}}·L<br>%{{y:.3f}}<extra></extra>",
            ), row=1, col=col)
        fig.add_vline(x=1.0, line={"color": MUTED, "dash": "dash", "width": 1}, row=1, col=col)
        fig.update_xaxes(type="log", title_text="evaluation length / L", row=1, col=col)
    return _style(fig, f"The lab's models past their training length L = {train_length}",
                  height=420)


def alibi_learned_mass_figure(
    panels: dict[str, dict[str, Any]], *, reference: str = "content-free", title: str = ""
) -> go.Figure:
    """Attention mass on keys more than ``r`` positions back against ``r``: one panel per
    sequence length, one line per layer, the content-free reference dashed.

    The curves are computed by the caller (e.g. :func:`posenc_lib.alibi.map_mass_beyond` on the
    lab's stored maps, and on the softmax of the bias alone for the reference); this only draws
    them, unrounded.

    Parameters
    ----------
    panels : dict
        ``{panel title: {label: (R,) array}}``, one to four panels, each with at least one curve;
        entry ``r`` of a curve is the mass beyond distance ``r = 0 … R − 1`` (``R >= 1``, the same
        for every curve of a panel), finite. Tensors, arrays and sequences are accepted.
    reference : str
        Label of the curve drawn dashed in the text colour (where a panel has it): the
        content-free queries, as :func:`posenc_lib.alibi.alibi_window_mass` averages them.
    title : str
        Figure title (default: a description of the axes).

    Returns
    -------
    plotly.graph_objects.Figure
        Panel ``i`` holds one ``go.Scatter`` per curve, in the order given, with ``x = 0 … R − 1``
        and ``y`` the curve; a label's legend entry is shown once.
    """
    if not isinstance(panels, dict) or not 1 <= len(panels) <= 4:
        raise ValueError(
            "panels must be a dict {panel title: {label: (R,) array}} of 1 to 4 panels")
    if not isinstance(reference, str):
        raise TypeError(f"reference must be a str, got {type(reference).__name__}")
    checked: dict[str, dict[str, np.ndarray]] = {}
    for name, curves in panels.items():
        if not isinstance(curves, dict) or not curves:
            raise ValueError(f"panels[{name!r}] must be a non-empty dict {{label: (R,) array}}")
        arrays = {str(k): np.asarray(_np(v), dtype=np.float64) for k, v in curves.items()}
        if any(a.ndim != 1 for a in arrays.values()):
            raise ValueError(f"panels[{name!r}]: every curve must be one-dimensional, shape (R,)")
        sizes = {a.size for a in arrays.values()}
        if len(sizes) != 1 or 0 in sizes:
            raise ValueError(f"panels[{name!r}]: every curve must have the same length R >= 1")
        if not all(np.isfinite(a).all() for a in arrays.values()):
            raise ValueError(f"panels[{name!r}]: the curves must be finite")
        checked[str(name)] = arrays
    fig = make_subplots(rows=1, cols=len(checked), shared_yaxes=True,
                        subplot_titles=list(checked))
    labels = list(dict.fromkeys(k for curves in checked.values() for k in curves if k != reference))
    for col, curves in enumerate(checked.values(), start=1):
        for label, curve in curves.items():
            line = ({"color": INK, "dash": "dash", "width": 1.5} if label == reference else
                    {"color": COLORWAY[labels.index(label) % len(COLORWAY)], "width": 1.5})
            fig.add_trace(go.Scatter(
                x=np.arange(curve.size), y=curve, mode="lines", name=label, legendgroup=label,
                showlegend=label not in {t.name for t in fig.data}, line=line,
                hovertemplate=f"{label}<br>r = %{{x}}: %{{y:.3f}}<extra></extra>",
            ), row=1, col=col)
        fig.update_xaxes(title_text="distance r", row=1, col=col)
    fig.update_yaxes(title_text="attention mass more than r back", row=1, col=1)
    fig.update_layout(legend={"orientation": "h", "y": -0.25}, margin={"b": 110})
    return _style(fig, title or "How far the trained model looks: attention mass more than r back",
                  height=440)
