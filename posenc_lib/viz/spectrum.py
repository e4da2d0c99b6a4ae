"""The RoPE calculator: wavelength spectra under context-extension methods, and their HF config."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch

from .. import analysis, rope, scaling
from ._checks import _base, _bool, _choice, _even, _fmt, _int, _lists, _np, _real
from ._style import COLORWAY, INK, SEQUENTIAL_ALT, _buttons, _slider, _style, _with

__all__ = [
    "FACTOR_GRID",
    "METHODS",
    "format_hf_config",
    "hf_rope_config",
    "scaled_inv_freq",
    "wavelength_spectrum",
]


FACTOR_GRID: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
METHODS = ("none", "pi", "ntk", "yarn", "llama3", "abf")
_METHOD_LABEL = {
    "none": "plain RoPE",
    "pi": "position interpolation (PI)",
    "ntk": "NTK-aware",
    "yarn": "YaRN",
    "llama3": "Llama 3.1",
    "abf": "ABF (base 500 000)",
}


def scaled_inv_freq(
    method: str,
    dim: int,
    base: float,
    factor: float,
    train_len: int,
    abf_base: float = 500000.0,
) -> torch.Tensor:
    """The ``(dim//2,)`` inverse frequencies of an extension method (:mod:`posenc_lib.scaling`).

    ``"none"`` is plain RoPE; ``"abf"`` uses ``abf_base`` and ignores ``factor``; ``train_len``
    (>= 1) is the training context of YaRN and Llama 3.1.
    """
    method = _choice(method, "method", METHODS)
    train_len = _int(train_len, "train_len", 1)
    if method == "none":
        return rope.rope_inv_freq(dim, base)
    if method == "pi":
        return scaling.pi_inv_freq(dim, base, factor)
    if method == "ntk":
        return scaling.ntk_inv_freq(dim, base, factor)
    if method == "yarn":
        return scaling.yarn_inv_freq(dim, base, factor, train_len)[0]
    if method == "llama3":
        return scaling.llama3_inv_freq(dim, base, factor, train_len)
    return scaling.abf_inv_freq(dim, abf_base)


def hf_rope_config(
    method: str,
    factor: float,
    train_len: int,
    base: float = 10000.0,
    dim: int = 128,
    abf_base: float = 500000.0,
) -> dict[str, Any]:
    """The Hugging Face config fields (``rope_theta``, ``rope_scaling``) for a method.

    NTK-aware scaling is a change of base, ``b' = b·s^(d/(d−2))``, so it is given as ``rope_theta``
    (read off the spectrum ``ntk_inv_freq`` returns); ABF is ``rope_theta = abf_base``.

    Returns
    -------
    dict
        ``{"rope_theta": float, "rope_scaling": dict | None}``.
    """
    method = _choice(method, "method", METHODS)
    factor = _real(factor, "factor", 1.0)
    train_len = _int(train_len, "train_len", 1)
    base = _base(base)
    dim = _even(dim, "dim", 4)
    if method == "abf":
        return {"rope_theta": float(abf_base), "rope_scaling": None}
    if method == "ntk":
        theta = _np(scaling.ntk_inv_freq(dim, base, factor))
        # θ_1 = b'^(−2/d), so b' = θ_1^(−d/2): the base NTK-aware scaling amounts to.
        return {"rope_theta": round(float(theta[1] ** (-dim / 2)), 1), "rope_scaling": None}
    rope_scaling: dict[str, Any] | None
    if method == "none":
        rope_scaling = None
    elif method == "pi":
        rope_scaling = {"rope_type": "linear", "factor": factor}
    elif method == "yarn":
        rope_scaling = {
            "rope_type": "yarn",
            "factor": factor,
            "original_max_position_embeddings": train_len,
        }
    else:
        rope_scaling = {
            "rope_type": "llama3",
            "factor": factor,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": train_len,
        }
    return {"rope_theta": float(base), "rope_scaling": rope_scaling}


def format_hf_config(config: dict[str, Any]) -> str:
    """``rope_theta = …`` and ``rope_scaling = {…}`` lines as they go into ``config.json``."""
    lines = [f"rope_theta = {config['rope_theta']:g}".replace("e+0", "e").replace("e+", "e")]
    if config["rope_theta"] >= 1e5:
        lines[0] = f"rope_theta = {config['rope_theta']:.1f}"
    if config["rope_scaling"] is not None:
        lines.append(f"rope_scaling = {json.dumps(config['rope_scaling'])}")
    return "\n".join(lines)


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
        cfg = format_hf_config(hf_rope_config(m, factor, train_len, base, max(dim, 4), abf_base))
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
                "name": f"{_METHOD_LABEL[m]}: {cfg.replace(chr(10), ', ')}",
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
        f"RoPE calculator (d = {dim}, b = {_fmt(base)})<br><sup>pairs above L_train never "
        "complete a turn in training</sup>"
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
