"""The RoPE calculator: wavelength spectra under context-extension methods, and their HF config."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch

from .. import analysis, extension, hf, rope
from .._validation import check_factor, check_positive_int
from ..presets import ROPE_PRESETS, RopePreset
from ._checks import _base, _bool, _choice, _even, _fmt, _int, _lists, _np, _real
from ._style import COLORWAY, INK, SEQUENTIAL_ALT, _buttons, _slider, _style, _with

__all__ = [
    "FACTOR_GRID",
    "METHODS",
    "calculator_figure",
    "config_text",
    "scaled_inv_freq",
    "wavelength_spectrum",
]


FACTOR_GRID: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
METHODS = ("none", "pi", "ntk", "dynamic", "yarn", "llama3", "abf")
_METHOD_LABEL = {
    "none": "plain RoPE",
    "pi": "position interpolation (PI)",
    "ntk": "NTK-aware",
    "dynamic": "dynamic NTK (at s·L_train)",
    "yarn": "YaRN",
    "llama3": "Llama 3.1",
    "abf": "ABF (base 500 000)",
    "longrope": "LongRoPE",
}


def scaled_inv_freq(
    method: str,
    dim: int,
    base: float,
    factor: float,
    train_len: int,
    abf_base: float = 500000.0,
) -> torch.Tensor:
    """The ``(dim//2,)`` spectrum of a method (:func:`posenc_lib.extension.extended_rope`).

    ``"abf"`` uses ``abf_base`` and ignores ``factor``; ``"dynamic"`` is taken at the target
    length ``s·L_train``.
    """
    method = _choice(method, "method", METHODS)
    factor = check_factor(factor)
    train_len = check_positive_int(train_len, "train_len")
    if not math.isfinite(factor * train_len):
        raise ValueError(f"factor · train_len must be finite, got factor = {factor}")
    target = round(factor * train_len)
    return extension.extended_rope(
        method,
        dim=dim,
        base=abf_base if method == "abf" else base,
        factor=factor,
        original_max_position=train_len,
        seq_len=target,
    )[0]


def _config_line(method: str, dim: int, base: float, factor: float, train_len: int,
                 abf_base: float) -> str:
    params = hf.hf_rope_parameters(
        method, dim=dim, base=abf_base if method == "abf" else base, factor=factor,
        original_max_position=train_len,
    )
    return json.dumps(params)


def _spectrum_state(
    dim: int,
    base: float,
    train_len: int,
    factor: float,
    methods: Sequence[str],
    abf_base: float,
) -> list[dict[str, Any]]:
    theta = rope.rope_inv_freq(dim, base)
    lam = _np(analysis.wavelengths(theta))
    pairs = np.arange(dim // 2)
    state: list[dict[str, Any]] = [{"x": pairs, "y": lam}]
    for m in methods:
        scaled = scaled_inv_freq(m, dim, base, factor, train_len, abf_base)
        ratio = _np(theta / scaled)
        cfg = _config_line(m, dim, base, factor, train_len, abf_base)
        state.append(
            {
                "x": pairs,
                "y": _np(analysis.wavelengths(scaled)),
                "customdata": ratio,
                "marker": {
                    "color": ratio,
                    "cmin": 1.0,
                    "cmax": max(float(ratio.max()), factor, 1.0001),
                },
                "name": f"{_METHOD_LABEL[m]}: {cfg}",
            }
        )
    state.append(
        {
            "x": [-0.5, dim // 2 - 0.5],
            "y": [train_len * factor] * 2,
            "name": f"target context s·L_train = {_fmt(train_len * factor)}",
        }
    )
    return state


def wavelength_spectrum(
    dim: int = 128,
    base: float = 10000.0,
    train_len: int = 4096,
    method: str = "none",
    factor: float = 1.0,
    *,
    abf_base: float = 500000.0,
    sliders: bool = True,
) -> go.Figure:
    """The RoPE calculator: wavelength ``λ_i = 2π/θ_i`` of every pair against the training length.

    Markers are coloured by ``θ_i/θ'_i``: 1 means the method leaves the pair alone (it
    extrapolates), ``s`` means the pair is fully interpolated.

    Parameters
    ----------
    dim : int
        Rotary dimension (even, 4 … 1024).
    base : float
        Base ``b`` (> 1).
    train_len : int
        Training context ``L_train`` (16 … 2**22).
    method : {"none", "pi", "ntk", "yarn", "llama3", "abf"}
        Context-extension method (:mod:`posenc_lib.scaling`).
    factor : float
        Scale factor ``s`` (1 … 1024); ABF ignores it.
    abf_base : float
        The raised base of ABF (500 000 in LLaMA 2 Long).
    sliders : bool
        Add a method dropdown and a factor slider (:data:`FACTOR_GRID`).

    Returns
    -------
    plotly.graph_objects.Figure
        Log-scale wavelengths: original (grey), scaled (one trace per method), and the lines
        ``L_train`` and ``s·L_train``.
    """
    dim = _even(dim, "dim", 4, 1024)
    base = _base(base)
    train_len = _int(train_len, "train_len", 16, 2**22)
    method = _choice(method, "method", METHODS)
    factor = _real(factor, "factor", 1.0, 1024.0)
    abf_base = _base(abf_base, "abf_base")
    sliders = _bool(sliders, "sliders")
    methods = list(METHODS) if sliders else [method]
    state = _spectrum_state(dim, base, train_len, factor, methods, abf_base)
    fig = go.Figure(
        go.Scatter(
            **state[0],
            mode="markers",
            name=f"plain RoPE, b = {_fmt(base)}",
            marker={"color": "#8c959f", "size": 6, "symbol": "circle-open"},
            hovertemplate="pair i = %{x}<br>λ_i = %{y:.4g} positions<extra>plain RoPE</extra>",
        )
    )
    for m, props in zip(methods, state[1:-1], strict=True):
        fig.add_trace(
            go.Scatter(
                **{k: v for k, v in props.items() if k != "marker"},
                mode="markers",
                visible=m == method,
                marker={
                    **props["marker"],
                    "size": 7,
                    "colorscale": SEQUENTIAL_ALT,
                    "colorbar": {"title": {"text": "θ_i / θ'_i"}, "thickness": 12},
                },
                hovertemplate=(
                    "pair i = %{x}<br>λ'_i = %{y:.4g} positions<br>"
                    "θ_i / θ'_i = %{customdata:.3g}<extra></extra>"
                ),
            )
        )
    fig.add_trace(
        go.Scatter(
            x=[-0.5, dim // 2 - 0.5],
            y=[train_len, train_len],
            mode="lines",
            name=f"training context L_train = {_fmt(train_len)}",
            line={"color": INK, "dash": "dash", "width": 1.5},
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            **state[-1], mode="lines", line={"color": COLORWAY[5], "dash": "dot"}, hoverinfo="skip"
        )
    )
    fig.update_layout(
        xaxis={"title": {"text": "pair index i"}},
        yaxis={"title": {"text": "wavelength λ_i = 2π/θ_i (positions)"}, "type": "log"},
        legend={"orientation": "h", "x": 0.0, "y": -0.18, "yanchor": "top"},
    )
    title = (
        f"RoPE spectra under each method (d = {dim}, b = {_fmt(base)})<br><sup>pairs above "
        "L_train never complete a turn in training</sup>"
    )
    if not sliders:
        return _style(fig, title, height=560)
    factors = _with(FACTOR_GRID, factor)
    n_m = len(methods)
    idx = [*range(1, n_m + 1), n_m + 2]
    steps = []
    for f in factors:
        st = _spectrum_state(dim, base, train_len, f, methods, abf_base)
        steps.append(
            {
                "method": "restyle",
                "label": _fmt(f),
                "args": [
                    {
                        "y": [_lists(s["y"], 1) for s in st[1:-1]] + [[train_len * f] * 2],
                        "customdata": [_lists(s["customdata"], 3) for s in st[1:-1]] + [None],
                        "marker.color": [_lists(s["marker"]["color"], 3) for s in st[1:-1]]
                        + [None],
                        "marker.cmax": [s["marker"]["cmax"] for s in st[1:-1]] + [None],
                        "name": [s["name"] for s in st[1:]],
                    },
                    idx,
                ],
            }
        )
    buttons = [
        {
            "method": "restyle",
            "label": _METHOD_LABEL[m],
            "args": [{"visible": [mm == m for mm in methods]}, list(range(1, n_m + 1))],
        }
        for m in methods
    ]
    fig.update_layout(
        sliders=[_slider(steps, factors.index(factor), "scale factor s = ", y=-0.42, pad_t=10)],
        updatemenus=[_buttons(buttons, methods.index(method))],
        margin={"b": 230},
    )
    return _style(fig, title, height=650)


# --- the calculator: real-model presets and the config blocks they need ---------------------------


def config_text(preset: RopePreset) -> tuple[str, str]:
    """The transformers 5 and transformers 4 config blocks of a preset (long lists shortened)."""
    return (
        hf.format_hf_config(preset.hf_fields(), max_list=3),
        hf.format_hf_config(preset.hf_fields(legacy=True), max_list=3),
    )


def _html_block(title: str, text: str) -> str:
    return f"<b>{title}</b><br>" + text.replace("\n", "<br>").replace(" ", "\u00a0")


def _calculator_state(preset: RopePreset) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    d = preset.rotary_dim
    theta = rope.rope_inv_freq(d, preset.base)
    target = round(preset.factor * preset.train_len)
    scaled, attention = preset.rope(seq_len=max(target, preset.context))
    ratio = _np(theta / scaled)
    pairs = np.arange(d // 2)
    traces: list[dict[str, Any]] = [
        {"x": pairs, "y": _np(analysis.wavelengths(theta)),
         "name": f"plain RoPE, b = {_fmt(preset.base)}"},
        {
            "x": pairs,
            "y": _np(analysis.wavelengths(scaled)),
            "customdata": ratio,
            "marker.color": ratio,
            "marker.cmax": max(float(ratio.max()), 1.0001),
            "name": f"{_METHOD_LABEL[preset.method]}, attention factor {attention:.4g}",
        },
        {"x": [-0.5, d // 2 - 0.5], "y": [preset.train_len] * 2,
         "name": f"training context L_train = {_fmt(preset.train_len)}"},
        {"x": [-0.5, d // 2 - 0.5], "y": [target] * 2,
         "name": f"target context s·L_train = {_fmt(target)}"},
    ]
    v5, v4 = config_text(preset)
    partial = (
        f", {preset.rotary_dim} of {preset.head_dim} features rotate"
        if preset.partial_rotary_factor is not None else ""
    )
    layout = {
        "title.text": (
            f"RoPE calculator: {preset.model}<br><sup>d = {d}{partial}, "
            f"b = {_fmt(preset.base)}, method {preset.method}, s = {_fmt(preset.factor)}</sup>"
        ),
        "annotations[0].text": _html_block("transformers 5 (config.json)", v5),
        "annotations[1].text": _html_block("transformers 4 (config.json)", v4),
    }
    return traces, layout


def _check_preset(preset: object) -> RopePreset:
    if isinstance(preset, RopePreset):
        return preset
    return ROPE_PRESETS[_choice(preset, "preset", tuple(ROPE_PRESETS))]


def calculator_figure(
    preset: str | RopePreset = "Llama 3.1 8B", *, sliders: bool = True
) -> go.Figure:
    """The RoPE calculator: a model's spectrum and the exact Hugging Face config it needs.

    Parameters
    ----------
    preset : str or RopePreset
        A key of :data:`posenc_lib.presets.ROPE_PRESETS`, or a preset of your own.
    sliders : bool
        Add a dropdown over every preset of :data:`~posenc_lib.presets.ROPE_PRESETS`.

    Returns
    -------
    plotly.graph_objects.Figure
        Log-scale wavelengths (original, scaled, ``L_train`` and ``s·L_train``) above the
        transformers 5 ``rope_parameters`` and transformers 4 ``rope_theta`` + ``rope_scaling``.
    """
    preset = _check_preset(preset)
    sliders = _bool(sliders, "sliders")
    traces, layout = _calculator_state(preset)
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        mode="markers", marker={"color": "#8c959f", "size": 6, "symbol": "circle-open"},
        hovertemplate="pair i = %{x}<br>λ_i = %{y:.4g} positions<extra>plain RoPE</extra>",
    ))
    fig.add_trace(go.Scatter(
        mode="markers",
        marker={"size": 7, "colorscale": SEQUENTIAL_ALT, "cmin": 1.0,
                "colorbar": {"title": {"text": "θ_i / θ'_i"}, "thickness": 12, "len": 0.6,
                             "y": 1.0, "yanchor": "top"}},
        hovertemplate=(
            "pair i = %{x}<br>λ'_i = %{y:.4g} positions<br>θ_i / θ'_i = %{customdata:.3g}"
            "<extra></extra>"
        ),
    ))
    fig.add_trace(go.Scatter(mode="lines", line={"color": INK, "dash": "dash", "width": 1.5},
                             hoverinfo="skip"))
    fig.add_trace(go.Scatter(mode="lines", line={"color": COLORWAY[5], "dash": "dot"},
                             hoverinfo="skip"))
    for trace, props in zip(fig.data, traces, strict=True):
        trace.update({k.replace("marker.", ""): v for k, v in props.items()
                      if not k.startswith("marker.")})
        if "marker.color" in props:
            trace.marker.update(color=props["marker.color"], cmax=props["marker.cmax"])
    mono = {"family": "DejaVu Sans Mono, Menlo, Consolas, monospace", "size": 11, "color": INK}
    for x in (0.0, 0.52):
        fig.add_annotation(x=x, y=-0.16, xref="paper", yref="paper", xanchor="left",
                           yanchor="top", align="left", showarrow=False, font=mono, text="")
    fig.update_layout({k: v for k, v in layout.items() if k != "title.text"})
    fig.update_layout(
        xaxis={"title": {"text": "pair index i"}},
        yaxis={"title": {"text": "wavelength λ_i = 2π/θ_i (positions)"}, "type": "log"},
        legend={"orientation": "h", "x": 0.0, "y": 1.02, "yanchor": "bottom"},
        margin={"b": 300, "t": 150},
    )
    fig = _style(fig, layout["title.text"], height=720)
    if not sliders:
        return fig
    names = list(ROPE_PRESETS)
    if preset.model not in ROPE_PRESETS:
        names.insert(0, preset.model)
    buttons = []
    for name in names:
        p = preset if name == preset.model else ROPE_PRESETS[name]
        st, lay = _calculator_state(p)
        data = {
            "x": [list(map(float, t["x"])) for t in st],
            "y": [_lists(t["y"], 2) for t in st],
            "name": [t["name"] for t in st],
            "customdata": [None, _lists(st[1]["customdata"], 3), None, None],
            "marker.color": [None, _lists(st[1]["marker.color"], 3), None, None],
            "marker.cmax": [None, st[1]["marker.cmax"], None, None],
        }
        buttons.append({"method": "update", "label": name, "args": [data, lay]})
    menu = _buttons(buttons, names.index(preset.model))
    menu.update(y=1.3, yanchor="bottom")  # beside the title, above the legend
    fig.update_layout(updatemenus=[menu])
    return fig
