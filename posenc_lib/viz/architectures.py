"""Figures of chapter 10: layer maps of real models, frequency selection, temperature vs length."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from ..architectures import LayerPosition, logit_multiplier, proportional_inv_freq
from ..rope import rope_inv_freq
from ._checks import _base, _even, _int, _real
from ._style import COLORWAY, MUTED, _buttons, _style

__all__ = [
    "frequency_selection_figure",
    "layer_map_figure",
    "layer_map_menu_figure",
    "temperature_figure",
]

#: The cell categories of :func:`layer_map_figure`, with their colours.
LAYER_CATEGORIES: tuple[tuple[str, str], ...] = (
    ("RoPE, local (window/chunk)", "#56B4E9"),
    ("RoPE, global", "#0072B2"),
    ("extended RoPE, local", "#F0E442"),
    ("extended RoPE, global", "#E69F00"),
    ("NoPE", "#009E73"),
    ("ALiBi", "#CC79A7"),
    ("proportional RoPE (p-RoPE)", "#D55E00"),
)


def _category(entry: LayerPosition) -> int:
    if entry.kind == "nope":
        return 4
    if entry.kind == "alibi":
        return 5
    if entry.rope_type == "proportional":
        return 6
    local = entry.window is not None or entry.chunk is not None
    rescaled = entry.rope_type not in (None, "default")
    return (2 if rescaled else 0) + (0 if local else 1)


def layer_map_figure(
    plans: Mapping[str, Sequence[LayerPosition]],
    *,
    title: str = "What each layer does with position",
) -> go.Figure:
    """One row per model, one cell per layer, coloured by what the layer does with position.

    "Extended" RoPE is any ``rope_type`` that rescales the spectrum (linear, YaRN, llama3,
    LongRoPE, dynamic); "local" means a sliding window or an attention chunk.

    Parameters
    ----------
    plans : mapping
        ``{model name: position plan}`` (:func:`posenc_lib.architectures.position_plan`);
        rows top to bottom in the mapping's order.
    title : str
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        A categorical heatmap; hovering a cell shows the layer's full description.
    """
    if not isinstance(plans, Mapping) or not plans:
        raise TypeError("plans must be a non-empty mapping {model name: position plan}")
    names = list(plans)
    width = max(len(p) for p in plans.values())
    z = np.full((len(names), width), np.nan)
    text = [["" for _ in range(width)] for _ in names]
    for r, name in enumerate(names):
        plan = plans[name]
        if not plan or not all(isinstance(e, LayerPosition) for e in plan):
            raise TypeError(f"plans[{name!r}] must be a non-empty list of LayerPosition")
        for e in plan:
            z[r, e.layer] = _category(e)
            text[r][e.layer] = f"{name}, layer {e.layer}<br>{e.describe()}"
    n = len(LAYER_CATEGORIES)
    scale = []
    for k, (_, colour) in enumerate(LAYER_CATEGORIES):
        scale += [[k / n, colour], [(k + 1) / n, colour]]
    fig = go.Figure(go.Heatmap(
        z=z, x=list(range(width)), y=names, zmin=-0.5, zmax=n - 0.5, colorscale=scale,
        showscale=False, xgap=1, ygap=3, text=text, hoverinfo="text", hoverongaps=False,
    ))
    used = sorted({int(v) for v in z[~np.isnan(z)]})
    for k in used:  # legend entries only (the heatmap has none)
        label, colour = LAYER_CATEGORIES[k]
        fig.add_trace(go.Scatter(
            x=[None], y=[None], mode="markers", name=label, hoverinfo="skip",
            marker={"symbol": "square", "size": 12, "color": colour},
        ))
    _style(fig, title, height=110 + 34 * len(names))
    fig.update_layout(
        legend={"orientation": "h", "x": 0, "xanchor": "left", "y": -0.12, "yanchor": "top"},
        margin={"t": 50, "b": 110, "l": 10, "r": 10},
        xaxis={"title": {"text": "layer"}, "showgrid": False, "zeroline": False},
        yaxis={"autorange": "reversed", "showgrid": False},
        plot_bgcolor="#ffffff",
    )
    return fig


def frequency_selection_figure(
    head_dim: int = 512, base: float = 1e6, proportion: float = 0.25, context: int = 131072
) -> go.Figure:
    """Partial (GPT-NeoX) against proportional (p-RoPE) RoPE: the frequencies of the turning pairs.

    Both rotate ``k = int(proportion·head_dim/2)`` pairs. Proportional keeps the full head's
    ``θ_j = base^(−2j/head_dim)``, ``j < k`` (the fast end); NeoX partial spreads
    ``θ_j = base^(−2j/(2k))`` over its ``2k`` rotated features, down to ``base^(−1)``. A dotted line
    marks one turn in ``context`` tokens: slower pairs never complete a turn.

    Parameters
    ----------
    head_dim : int
        Head size ``D`` (even).
    base : float
        ``rope_theta``.
    proportion : float
        Share of the pairs that rotate, in (0, 1].
    context : int
        Context length for the reference line (>= 2).

    Returns
    -------
    plotly.graph_objects.Figure
        ``θ_j`` of the ``k`` turning pairs of each scheme, on a log axis.
    """
    head_dim = _even(head_dim, "head_dim", 4, 1 << 14)
    base = _base(base)
    proportion = _real(proportion, "proportion", 0.0, 1.0)
    context = int(_real(context, "context", 2.0, 1e12))
    pairs = int(proportion * head_dim // 2)
    if pairs < 1:
        raise ValueError(f"proportion·head_dim/2 must be >= 1, got {proportion * head_dim / 2}")
    prop = proportional_inv_freq(head_dim, base, proportion).numpy()[:pairs]
    partial = rope_inv_freq(2 * pairs, base).numpy()  # NeoX: the exponents over 2k features
    j = np.arange(pairs)
    one_turn = 2 * math.pi / context
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=j, y=prop, mode="markers", name="proportional (p-RoPE)",
                             marker={"color": COLORWAY[5], "size": 6}))
    fig.add_trace(go.Scatter(x=j, y=partial, mode="markers", name="NeoX partial",
                             marker={"color": COLORWAY[0], "size": 6, "symbol": "diamond"}))
    fig.add_trace(go.Scatter(x=[0, pairs - 1], y=[one_turn, one_turn], mode="lines",
                             name=f"one turn in {context:,} tokens".replace(",", " "),
                             line={"color": MUTED, "dash": "dot"}, hoverinfo="skip"))
    _style(fig, f"The {pairs} turning pairs, two ways", height=430)
    fig.update_layout(
        xaxis={"title": {"text": "j (j-th turning pair)"}},
        yaxis={"title": {"text": "θ_j (rad per token)"}, "type": "log",
               "exponentformat": "power"},
        legend={"orientation": "h", "x": 0, "y": -0.2, "yanchor": "top"},
        margin={"b": 110},
    )
    return fig


def temperature_figure(max_position: int = 10_000_000) -> go.Figure:
    """The logit multiplier of five length-temperature forms against the query position.

    YaRN (s = 32, gpt-oss), DeepSeek's m_s² (s = 40, mscale_all_dim = 1), Llama 4's query scale
    (0.1, floor 8192), ``llama_4_scaling_beta`` (0.1, original context 16 384, Ministral 3) and
    Scalable-Softmax with ``s = 1/ln 4096`` (1 at 4 096 visible keys).

    Parameters
    ----------
    max_position : int
        Right end of the (log) position axis, >= 10.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    top = _real(max_position, "max_position", 10.0, 1e12)
    p = torch.unique(torch.cat((
        torch.logspace(0, math.log10(top), 400, dtype=torch.float64).floor(),
        torch.tensor([8191.0, 8192.0, 16383.0, 16384.0], dtype=torch.float64),
    )))
    p = p[p <= top]
    forms = (
        ("YaRN, s = 32: a²", "yarn", {"factor": 32.0}),
        ("DeepSeek-V3, s = 40: m<sub>s</sub>²", "deepseek", {"factor": 40.0}),
        ("Llama 4 NoPE layers", "llama4", {"scale": 0.1, "floor": 8192}),
        ("llama_4_scaling_beta = 0.1", "llama_4_scaling_beta", {"scale": 0.1, "floor": 16384}),
        ("Scalable-Softmax, σ·ln n", "ssmax", {"ssmax_s": 1 / math.log(4096)}),
    )
    fig = go.Figure()
    for k, (label, form, kw) in enumerate(forms):
        y = logit_multiplier(form, p, **kw).numpy()  # type: ignore[arg-type]
        fig.add_trace(go.Scatter(x=p.numpy() + 1, y=np.round(y, 4), mode="lines", name=label,
                                 line={"color": COLORWAY[k], "shape": "hv"}))
    _style(fig, "Sharper softmax as length grows", height=460)
    fig.update_layout(
        xaxis={"title": {"text": "query position m + 1 (keys visible)"}, "type": "log",
               "exponentformat": "power"},
        yaxis={"title": {"text": "logit multiplier"}, "range": [0, 3.2]},
        legend={"orientation": "h", "x": 0, "y": -0.22, "yanchor": "top"},
        margin={"b": 130},
    )
    return fig


def _slowest_wavelength(entry: LayerPosition) -> float | None:
    """``2π/θ`` of the layer's slowest turning pair (zero frequencies excluded); None if none."""
    if entry.kind != "rope" or entry.inv_freq is None:
        return None
    turning = entry.inv_freq[entry.inv_freq > 0]
    return float(2 * math.pi / turning.min()) if turning.numel() else None


def _reach(entry: LayerPosition) -> int | None:
    """Keys a query may see at most: the window or the chunk; None for full attention."""
    return entry.window if entry.window is not None else entry.chunk


def _layer_menu_state(name: str, plan: Sequence[LayerPosition]) -> list[dict[str, Any]]:
    """Traces of :func:`layer_map_menu_figure` for one model."""
    layers = [e.layer for e in plan]
    cells = [_category(e) for e in plan]
    strip = {"x": layers, "y": [name], "z": [cells],
             "text": [[f"layer {e.layer}<br>{e.describe()}" for e in plan]]}
    waves = [(e.layer, _slowest_wavelength(e)) for e in plan]
    reach = [(e.layer, _reach(e)) for e in plan]
    wave = {"x": [i for i, v in waves if v is not None],
            "y": [float(f"{v:.4g}") for _, v in waves if v is not None]}
    seen = {"x": [i for i, v in reach if v is not None],
            "y": [v for _, v in reach if v is not None]}
    used = set(cells)
    legend = [{"x": [None], "y": [None], "visible": k in used}
              for k in range(len(LAYER_CATEGORIES))]
    return [strip, wave, seen, *legend]


def layer_map_menu_figure(
    plans: Mapping[str, Sequence[LayerPosition]],
    *,
    active: int = 0,
    title: str = "One model's layers: what each does with position",
) -> go.Figure:
    """One model at a time, picked from a dropdown: its layer map and the reach of every layer.

    Top: the model's layers coloured as in :func:`layer_map_figure` (hover for each layer's
    description). Bottom, per layer on a log axis: the wavelength ``2π/θ`` of the slowest pair
    that turns (RoPE layers; Gemma 4's zero frequencies excluded) and the keys a query can see
    when the layer is local (its window or chunk); a full-attention layer has no such marker, as
    it sees every earlier key, and a NoPE or ALiBi layer no wavelength.

    Parameters
    ----------
    plans : mapping
        ``{model name: position plan}`` (:func:`posenc_lib.architectures.position_plan`), in the
        dropdown's order (at most 24).
    active : int
        Index of the model the figure opens on.
    title : str
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: the layer strip (heatmap), slowest wavelengths, window/chunk sizes, then one
        legend-only marker per category of :data:`LAYER_CATEGORIES`; one dropdown over models.
    """
    if not isinstance(plans, Mapping) or not plans:
        raise TypeError("plans must be a non-empty mapping {model name: position plan}")
    if len(plans) > 24:
        raise ValueError(f"plans must hold at most 24 models (one dropdown), got {len(plans)}")
    names = list(plans)
    for name in names:
        plan = plans[name]
        if not plan or not all(isinstance(e, LayerPosition) for e in plan):
            raise TypeError(f"plans[{name!r}] must be a non-empty list of LayerPosition")
    active = _int(active, "active", 0, len(names) - 1)
    states = [_layer_menu_state(name, plans[name]) for name in names]
    state = states[active]
    n = len(LAYER_CATEGORIES)
    scale = []
    for k, (_, colour) in enumerate(LAYER_CATEGORIES):
        scale += [[k / n, colour], [(k + 1) / n, colour]]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.22, 0.78],
                        vertical_spacing=0.06)
    fig.add_trace(go.Heatmap(
        **state[0], zmin=-0.5, zmax=n - 0.5, colorscale=scale, showscale=False, xgap=1,
        hoverinfo="text", name="layers",
    ), row=1, col=1)
    fig.add_trace(go.Scatter(
        **state[1], mode="markers", name="slowest pair's wavelength 2π/θ",
        marker={"color": COLORWAY[0], "size": 8, "symbol": "circle"},
        hovertemplate="layer %{x}: slowest turning pair, wavelength %{y:.4g} tokens"
                      "<extra></extra>",
    ), row=2, col=1)
    fig.add_trace(go.Scatter(
        **state[2], mode="markers", name="keys a query sees (window or chunk)",
        marker={"color": COLORWAY[5], "size": 9, "symbol": "diamond"},
        hovertemplate="layer %{x}: a query sees at most %{y} keys<extra></extra>",
    ), row=2, col=1)
    for k, (label, colour) in enumerate(LAYER_CATEGORIES):  # legend entries only
        fig.add_trace(go.Scatter(
            **state[3 + k], mode="markers", name=label, hoverinfo="skip",
            marker={"symbol": "square", "size": 12, "color": colour},
        ), row=1, col=1)
    fig.update_yaxes(showgrid=False, showticklabels=False, row=1, col=1)
    fig.update_xaxes(showgrid=False, row=1, col=1)
    fig.update_xaxes(title_text="layer", row=2, col=1)
    fig.update_yaxes(title_text="tokens (log scale)", type="log", exponentformat="power",
                     row=2, col=1)
    buttons = []
    for name, traces in zip(names, states, strict=True):
        keys = sorted({key for t in traces for key in t})
        buttons.append({
            "label": name, "method": "restyle",
            "args": [{key: [t.get(key) for t in traces] for key in keys},
                     list(range(len(traces)))],
        })
    _style(fig, title, height=560)
    fig.update_layout(
        updatemenus=[_buttons(buttons, active)],
        legend={"orientation": "h", "x": 0, "xanchor": "left", "y": -0.2, "yanchor": "top"},
        margin={"t": 90, "b": 180, "l": 60, "r": 10},
        plot_bgcolor="#ffffff",
    )
    return fig
