"""Chapter 8's explorers: the all-ones score curve, ABF-versus-PI granularity, one pair's spiral."""

from __future__ import annotations

import math
from typing import Any

import ipywidgets as W

from ..display import explorer
from ..viz.long_context import (
    _granularity_state,
    _score_state,
    _spiral_state,
    _spiral_title,
    all_ones_figure,
    granularity_figure,
    pair_spiral_figure,
)
from ._live import _SLIDER_LAYOUT, _STYLE, LiveExplorer, _even_value, _int_slider


def _log_slider(value: float, lo: float, hi: float, description: str) -> W.FloatLogSlider:
    return W.FloatLogSlider(
        value=value, base=10, min=math.log10(lo), max=math.log10(hi), step=0.01,
        description=description, readout_format=".4g", style=_STYLE, layout=_SLIDER_LAYOUT,
    )


def score_curve_live(
    dim: int = 128, base: float = 10000.0, abf_base: float = 500000.0, factor: float = 8.0,
    max_distance: int = 32768,
) -> LiveExplorer:
    """Live all-ones curve: ABF's base, PI's factor, RoPE's base and d recompute it."""
    fig = all_ones_figure(dim, base, abf_base, factor, max_distance, sliders=False)
    controls = {
        "abf_base": _log_slider(abf_base, 1e4, 1e7, "ABF base"),
        "factor": _log_slider(factor, 1.0, 64.0, "PI factor s"),
        "base": _log_slider(base, 100.0, 1e6, "RoPE base b"),
        "dim": _int_slider(dim, 8, 256, "dimension d", 2),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        state = _score_state(_even_value(v["dim"]), v["base"], v["abf_base"], v["factor"],
                             max_distance, 512.0, points=1024)
        for trace, props in zip(ui.figure.data, state, strict=True):
            trace.update(props)

    return LiveExplorer(fig, controls, update)


def score_curve_explorer(
    dim: int = 128, base: float = 10000.0, abf_base: float = 500000.0, factor: float = 8.0,
    max_distance: int = 32768,
) -> Any:
    """LLaMA 2 Long's all-ones score curve for RoPE, PI, ABF and xPos ABF, with a base slider."""
    return explorer(
        lambda: all_ones_figure(dim, base, abf_base, factor, max_distance),
        lambda: score_curve_live(dim, base, abf_base, factor, max_distance),
    )


def granularity_live(dim: int = 128, base: float = 10000.0) -> LiveExplorer:
    """Live granularity figure: d and b recompute both panels."""
    fig = granularity_figure(dim, base, sliders=False)
    controls = {
        "dim": _int_slider(dim, 8, 4096, "dimension d", 2),
        "base": _log_slider(base, 100.0, 1e6, "base b"),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        for trace, props in zip(ui.figure.data,
                                _granularity_state(_even_value(v["dim"]), v["base"]),
                                strict=True):
            trace.update(props)

    return LiveExplorer(fig, controls, update)


def granularity_explorer(dim: int = 128, base: float = 10000.0) -> Any:
    """ABF against PI: the angle between neighbouring positions as β and α vary."""
    return explorer(
        lambda: granularity_figure(dim, base),
        lambda: granularity_live(dim, base),
    )


def pair_spiral_live(
    pair: int = 40, dim: int = 128, base: float = 10000.0, factor: float = 8.0,
    abf_base: float = 500000.0, length: int = 4096,
) -> LiveExplorer:
    """Live spirals: the pair index, PI's factor and ABF's base recompute them."""
    fig = pair_spiral_figure(pair, dim, base, factor, abf_base, length, sliders=False)
    controls = {
        "pair": _int_slider(pair, 0, dim // 2 - 1, "pair i"),
        "factor": _log_slider(factor, 1.0, 64.0, "PI factor s"),
        "abf_base": _log_slider(abf_base, 1e4, 1e7, "ABF base"),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        state = _spiral_state(v["pair"], dim, base, v["factor"], v["abf_base"], length)
        for trace, props in zip(ui.figure.data, state, strict=True):
            trace.update(props)
        ui.figure.layout.title.text = _spiral_title(
            v["pair"], dim, base, v["factor"], v["abf_base"], length)

    return LiveExplorer(fig, controls, update)


def pair_spiral_explorer(
    pair: int = 40, dim: int = 128, base: float = 10000.0, factor: float = 8.0,
    abf_base: float = 500000.0, length: int = 4096,
) -> Any:
    """One pair's angle as a spiral under RoPE, PI and ABF (the book's picture, not the paper's)."""
    return explorer(
        lambda: pair_spiral_figure(pair, dim, base, factor, abf_base, length),
        lambda: pair_spiral_live(pair, dim, base, factor, abf_base, length),
    )
