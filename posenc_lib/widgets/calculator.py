"""The RoPE calculator and the wavelength spectrum: live controls, Hugging Face config printed."""

from __future__ import annotations

import math
from typing import Any

import ipywidgets as W

from ..display import explorer
from ..hf import format_hf_config, hf_config_fields
from ..presets import ROPE_PRESETS, RopePreset
from ..viz._checks import _base, _choice, _even, _fmt, _int, _real
from ..viz.spectrum import (
    _METHOD_LABEL,
    METHODS,
    _calculator_state,
    _spectrum_state,
    calculator_figure,
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

_ABF_BASE = 500000.0
_CUSTOM = "custom (the controls below)"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;")


def _configs_html(fields5: dict[str, Any], fields4: dict[str, Any]) -> str:
    return (
        "<div style='display:flex;gap:2em;flex-wrap:wrap'>"
        f"<div><b>transformers 5 config.json</b><pre style='margin:4px 0'>"
        f"{_escape(format_hf_config(fields5, max_list=3))}</pre></div>"
        f"<div><b>transformers 4 config.json</b><pre style='margin:4px 0'>"
        f"{_escape(format_hf_config(fields4, max_list=3))}</pre></div></div>"
    )


def _fields(method: str, dim: int, base: float, factor: float, train_len: int,
            legacy: bool) -> dict[str, Any]:
    # The spectrum explorer compares plain RoPE at the base control with ABF at 500 000.
    return hf_config_fields(
        method, dim=dim, base=_ABF_BASE if method == "abf" else base, factor=factor,
        original_max_position=train_len, legacy=legacy,
    )


def _controls(dim: int, base: float, train_len: int, method: str, factor: float,
              methods: tuple[str, ...] = METHODS, labels: dict[str, str] | None = None,
              ) -> dict[str, W.ValueWidget]:
    labels = labels or _METHOD_LABEL
    return {
        "method": W.Dropdown(
            options=[(labels[m], m) for m in methods],
            value=method,
            description="method",
            style=_STYLE,
        ),
        "factor": _log_slider(factor, 0, math.log10(64), "scale factor s", ".3g"),
        "train_len": _int_text(train_len, 16, 2**22, "training length"),
        "dim": _int_slider(dim, 8, 512, "dimension d", 2),
        "base": _log_slider(base, 2, 7, "base b"),
    }


def _check_args(dim: int, base: float, train_len: int, method: str, factor: float,
                methods: tuple[str, ...] = METHODS) -> None:
    _even(dim, "dim", 8, 512)
    _base(base)
    _int(train_len, "train_len", 16, 2**22)
    _choice(method, "method", methods)
    _real(factor, "factor", 1.0, 64.0)


def spectrum_live(
    dim: int = 128,
    base: float = 10000.0,
    train_len: int = 4096,
    method: str = "none",
    factor: float = 1.0,
) -> LiveExplorer:
    """The live spectrum: every control recomputes the wavelengths and the config blocks."""
    _check_args(dim, base, train_len, method, factor)
    fig = wavelength_spectrum(dim, base, train_len, method, factor, sliders=False)

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        dim_ = _even_value(v["dim"])
        state = _spectrum_state(
            dim_, v["base"], v["train_len"], v["factor"], [v["method"]], _ABF_BASE
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
        args = (v["method"], dim_, v["base"], v["factor"], v["train_len"])
        ui.text.value = _configs_html(_fields(*args, False), _fields(*args, True))

    ui = LiveExplorer(fig, _controls(dim, base, train_len, method, factor), update)
    ui.refresh()
    return ui


def spectrum_explorer(
    dim: int = 128,
    base: float = 10000.0,
    train_len: int = 4096,
    method: str = "yarn",
    factor: float = 8.0,
) -> Any:
    """Which pairs each context-extension method extrapolates, interpolates or blends.

    Static: :func:`posenc_lib.viz.spectrum.wavelength_spectrum` with a method menu and a factor
    slider. Live: every control recomputes, and the Hugging Face config blocks are printed.
    """
    _check_args(dim, base, train_len, method, factor)
    return explorer(
        lambda: wavelength_spectrum(dim, base, train_len, method, factor),
        lambda: spectrum_live(dim, base, train_len, method, factor),
    )


# The calculator's methods: the spectrum explorer's plus LongRoPE (which needs a preset's lists).
_CALC_METHODS = (*METHODS, "longrope")
_CALC_LABEL = {**_METHOD_LABEL, "abf": "ABF (the base control is the raised base)"}


def _custom(dim: int, base: float, train_len: int, method: str, factor: float,
            carried: RopePreset | None = None) -> RopePreset:
    """Your settings as a preset; ``carried`` is the preset they started from, if any.

    The base control is used as it reads, also for ABF (whose base *is* the raised base). Options
    that the controls do not show (YaRN's mscales and betas, Llama 3.1's frequency factors,
    LongRoPE's lists) are kept from the carried preset while its method and dimension are kept;
    so is its ``max_position_embeddings`` while the factor and the training length are unchanged.
    LongRoPE without lists of the right length uses uniform lists (1 below, ``s`` beyond the
    training length): a plain position interpolation in LongRoPE's form. An explicit
    ``attention_factor`` is dropped when the factor moves (it was the preset's), and the carried
    preset's ``model_type`` and sliding-layer base are kept, so that Gemma 3's and OLMo 3's
    blocks stay per layer type. So is its rotary fraction ``rotary_dim/head_dim``: the dimension
    control is the rotated size ``d``, and the head grows with it (GPT-NeoX-20B: 24 of 96
    features rotate; at ``d`` = 32, 32 of 128), so that the block keeps ``rotary_pct`` /
    ``partial_rotary_factor`` 0.25. A fraction that gives no even integer head size at ``d``
    falls back to a fully rotated head.
    """
    options: dict[str, Any] = {}
    context = train_len if method == "dynamic" else round(factor * train_len)
    if carried is not None and carried.method == method and carried.rotary_dim == dim:
        options = dict(carried.options)
        if carried.factor != factor:
            # an explicit attention factor belongs to the preset's factor (OLMo 3's 0.1 ln 8 + 1)
            options.pop("attention_factor", None)
        if (method != "dynamic" and carried.factor == factor
                and carried.train_len == train_len):
            context = carried.context
    if method == "longrope" and len(options.get("long_factor", ())) != dim // 2:
        options = {"short_factor": [1.0] * (dim // 2), "long_factor": [factor] * (dim // 2)}
    # The config class that reads the block: Gemma 3 and OLMo 3 read it per layer type, with the
    # sliding layers' own base, whatever the controls say.
    layout: dict[str, Any] = {}
    head_dim = dim
    if carried is not None:
        layout = {"model_type": carried.model_type, "sliding_base": carried.sliding_base}
        scaled = dim * carried.head_dim / carried.rotary_dim  # keep the rotary fraction
        if scaled == int(scaled) and int(scaled) % 2 == 0:
            head_dim = int(scaled)
    return RopePreset(_CUSTOM, head_dim, dim, base, method, factor, train_len, context,
                      "your settings", options, **layout)


def calculator_live(
    dim: int = 128,
    base: float = 10000.0,
    train_len: int = 4096,
    method: str = "none",
    factor: float = 1.0,
    *,
    preset: str | None = None,
) -> LiveExplorer:
    """The live RoPE calculator: a model preset or your own settings, spectrum and config."""
    _check_args(dim, base, train_len, method, factor, _CALC_METHODS)
    if preset is not None:
        _choice(preset, "preset", tuple(ROPE_PRESETS))
    start = ROPE_PRESETS[preset] if preset else _custom(dim, base, train_len, method, factor)
    fig = calculator_figure(start, sliders=False)
    controls: dict[str, W.ValueWidget] = {
        "preset": W.Dropdown(options=[_CUSTOM, *ROPE_PRESETS], value=preset or _CUSTOM,
                             description="model preset", style=_STYLE),
        **_controls(dim, base, train_len, method, factor, _CALC_METHODS, _CALC_LABEL),
    }
    last: dict[str, str | None] = {"preset": None}  # the first refresh applies the preset
    carried: dict[str, RopePreset | None] = {"preset": None}  # the preset custom mode came from

    def update(ui: LiveExplorer) -> None:
        c = ui.controls
        name = c["preset"].value
        if name != _CUSTOM and name != last["preset"]:
            p = ROPE_PRESETS[name]
            carried["preset"] = p
            c["method"].value = p.method
            c["factor"].value = min(p.factor, 64.0)
            c["train_len"].value = p.train_len
            c["dim"].value = max(p.rotary_dim, 8)
            c["base"].value = p.base
        elif name != _CUSTOM:
            c["preset"].value = name = _CUSTOM  # a control moved away from the preset
        last["preset"] = name
        v = ui.values
        p = ROPE_PRESETS[name] if name != _CUSTOM else _custom(
            _even_value(v["dim"]), v["base"], v["train_len"], v["method"], v["factor"],
            carried["preset"],
        )
        traces, layout = _calculator_state(p)
        for trace, props in zip(ui.figure.data, traces, strict=True):
            trace.update({k.replace("marker.", ""): val for k, val in props.items()
                          if not k.startswith("marker.")})
            if "marker.color" in props:
                trace.marker.update(color=props["marker.color"], cmax=props["marker.cmax"])
        ui.figure.update_layout(layout)
        ui.text.value = _configs_html(p.hf_fields(), p.hf_fields(legacy=True))

    ui = LiveExplorer(fig, controls, update)
    ui.refresh()
    return ui


def rope_calculator(
    dim: int = 128,
    base: float = 10000.0,
    train_len: int = 4096,
    method: str = "none",
    factor: float = 1.0,
    *,
    preset: str | None = None,
) -> Any:
    """The RoPE calculator: a real model's RoPE (or yours) and the exact Hugging Face config.

    Static: :func:`posenc_lib.viz.spectrum.calculator_figure` with a menu over every preset of
    :data:`posenc_lib.presets.ROPE_PRESETS` (plus your settings when no preset is given). Live:
    a preset menu and dim/base/length/method/factor controls that recompute the spectrum and
    print the transformers 5 and transformers 4 config blocks.
    """
    _check_args(dim, base, train_len, method, factor, _CALC_METHODS)
    if preset is not None:
        _choice(preset, "preset", tuple(ROPE_PRESETS))
    start = ROPE_PRESETS[preset] if preset else _custom(dim, base, train_len, method, factor)
    return explorer(
        lambda: calculator_figure(start),
        lambda: calculator_live(dim, base, train_len, method, factor, preset=preset),
    )


def _check_html(text: str) -> str:
    # Imported here: the checker asks transformers, which the calculator itself does not need.
    from ..config_check import check_rope_config

    try:
        summary = check_rope_config(text).summary()
    except (TypeError, ValueError) as err:
        summary = f"error: {err}"
    return f"<pre style='margin:4px 0;white-space:pre-wrap'>{_escape(summary)}</pre>"


def config_checker(text: str = "") -> Any:
    """Paste a ``config.json``: its RoPE keys, what transformers does with them, what is wrong.

    Live: a text box and the report of :func:`posenc_lib.config_check.check_rope_config`,
    recomputed on every edit (bad input shows its error message). Static (the book build): the
    report for ``text``.

    Parameters
    ----------
    text : str
        The initial ``config.json`` text (a JSON object).

    Returns
    -------
    ipywidgets.VBox or IPython.display.HTML
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str (the config.json text), got {type(text).__name__}")
    from ..display import static_mode

    if static_mode():
        from IPython.display import HTML

        return HTML(_check_html(text))
    box = W.Textarea(value=text, description="config.json", style=_STYLE,
                     layout=W.Layout(width="100%", height="12em"))
    report = W.HTML(_check_html(text))

    def refresh(change: dict[str, Any]) -> None:
        report.value = _check_html(change["new"])

    box.observe(refresh, names="value")
    return W.VBox([box, report])
