"""The live RoPE calculator: wavelength spectrum plus the Hugging Face config."""

from __future__ import annotations

import math
from typing import Any

import ipywidgets as W

from ..display import explorer
from ..viz._checks import _fmt
from ..viz.spectrum import (
    _METHOD_LABEL,
    METHODS,
    _spectrum_state,
    format_hf_config,
    hf_rope_config,
    wavelength_spectrum,
)
from ._live import (
    _STYLE,
    LiveExplorer,
    _even_value,
    _int_slider,
    _int_text,
    _log_slider,
)


def _config_html(config: dict[str, Any]) -> str:
    lines = format_hf_config(config).replace("&", "&amp;").replace("<", "&lt;")
    return f"<b>Hugging Face config.json</b><pre style='margin:4px 0'>{lines}</pre>"


def calculator_live(
    dim: int = 128,
    base: float = 10000.0,
    train_len: int = 4096,
    method: str = "none",
    factor: float = 1.0,
) -> LiveExplorer:
    """The live RoPE calculator: spectrum plus the matching Hugging Face config lines."""
    fig = wavelength_spectrum(dim, base, train_len, method, factor, sliders=False)
    controls = {
        "method": W.Dropdown(
            options=[(_METHOD_LABEL[m], m) for m in METHODS],
            value=method,
            description="method",
            style=_STYLE,
        ),
        "factor": _log_slider(factor, 0, math.log10(64), "scale factor s", ".3g"),
        "train_len": _int_text(train_len, 16, 2**22, "training length"),
        "dim": _int_slider(dim, 8, 512, "dimension d", 2),
        "base": _log_slider(base, 2, 7, "base b"),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        dim_ = _even_value(v["dim"])
        state = _spectrum_state(
            dim_, v["base"], v["train_len"], v["factor"], [v["method"]], 500000.0
        )
        fig_ = ui.figure
        fig_.data[0].update(state[0], name=f"plain RoPE, b = {_fmt(v['base'])}")
        fig_.data[1].update(state[1])
        fig_.data[2].update(
            x=[-0.5, dim_ // 2 - 0.5],
            y=[v["train_len"]] * 2,
            name=f"training context L_train = {_fmt(v['train_len'])}",
        )
        fig_.data[3].update(state[2])
        ui.text.value = _config_html(
            hf_rope_config(v["method"], v["factor"], v["train_len"], v["base"], dim_)
        )

    ui = LiveExplorer(fig, controls, update)
    ui.text.value = _config_html(hf_rope_config(method, factor, train_len, base, dim))
    return ui


def rope_calculator(
    dim: int = 128,
    base: float = 10000.0,
    train_len: int = 4096,
    method: str = "none",
    factor: float = 1.0,
) -> Any:
    """Which pairs a context-extension method interpolates; prints the HF ``rope_scaling``.

    See :func:`posenc_lib.viz.spectrum.wavelength_spectrum`; the static figure names the config of
    each method in its legend.
    """
    return explorer(
        lambda: wavelength_spectrum(dim, base, train_len, method, factor),
        lambda: calculator_live(dim, base, train_len, method, factor),
    )
