"""Live explorers: ipywidgets controls that recompute a plotly ``FigureWidget`` on every move.

Each ``*_explorer`` is one call in a chapter. Through :func:`posenc_lib.display.explorer` it shows
the live UI in a kernel and, in the book build (``POSENC_STATIC=1``), the static figure of
:mod:`posenc_lib.viz` with plotly's own sliders. The live figure is the same builder with
``sliders=False``, refreshed in place by the same ``_*_state`` functions, so both show the same
numbers; only the live one takes any value in range instead of a grid.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as W
import plotly.graph_objects as go

from .display import explorer
from .viz._checks import _fmt
from .viz._style import _apply_state
from .viz.alibi import _alibi_state, alibi_heatmaps
from .viz.conventions import _convention_state, convention_pairs_figure
from .viz.decay import _decay_state, decay_curves
from .viz.euler import _euler_state, _rotation_state, rotation_figure, unit_circle
from .viz.heatmap import SCHEMES, _heatmap_state, encoding_heatmap
from .viz.offset import _offset_state, rope_offset_figure
from .viz.permutation import _permutation_state, permutation_figure, sentence_orderings
from .viz.spectrum import (
    _METHOD_LABEL,
    METHODS,
    _spectrum_state,
    format_hf_config,
    hf_rope_config,
    wavelength_spectrum,
)
from .viz.spiral import _check_pairs, _spiral_state, default_pairs, rope_spiral

__all__ = [
    "LiveExplorer",
    "alibi_explorer",
    "convention_explorer",
    "decay_explorer",
    "euler_explorer",
    "heatmap_explorer",
    "offset_explorer",
    "permutation_explorer",
    "rope_calculator",
    "rotation_explorer",
    "spiral_explorer",
]

_SLIDER_LAYOUT = W.Layout(width="420px")
_STYLE = {"description_width": "140px"}


class LiveExplorer(W.VBox):
    """Controls above a ``go.FigureWidget``; any control change calls ``update(self)``.

    Attributes
    ----------
    controls : dict[str, ipywidgets.Widget]
        The value widgets by parameter name (tests drive them by setting ``.value``).
    figure : plotly.graph_objects.FigureWidget
        Updated in place, inside ``batch_update`` so the browser redraws once per move.
    text : ipywidgets.HTML
        Extra output under the figure (the RoPE calculator's config lines), else empty.
    """

    def __init__(
        self,
        figure: go.Figure,
        controls: dict[str, W.ValueWidget],
        update: Callable[[LiveExplorer], None],
    ) -> None:
        self.controls = controls
        self.figure = go.FigureWidget(figure)
        self.text = W.HTML("")
        self._update = update
        self._busy = False
        super().__init__([W.VBox(list(controls.values())), self.figure, self.text])
        for control in controls.values():
            control.observe(self._on_change, names="value")

    @property
    def values(self) -> dict[str, Any]:
        """The current value of every control."""
        return {name: c.value for name, c in self.controls.items()}

    def _on_change(self, _change: dict[str, Any]) -> None:
        # An update may clamp a dependent control (e.g. head < n_heads); do not recurse into it.
        if not self._busy:
            self.refresh()

    def refresh(self) -> None:
        """Recompute from the controls and redraw the figure in place."""
        self._busy = True
        try:
            with self.figure.batch_update():
                self._update(self)
        finally:
            self._busy = False


def _base_slider(value: float) -> W.FloatLogSlider:
    return W.FloatLogSlider(
        value=value,
        base=10,
        min=1,
        max=6,
        step=0.01,
        description="base b",
        readout_format=".4g",
        style=_STYLE,
        layout=_SLIDER_LAYOUT,
    )


def _int_slider(value: int, lo: int, hi: int, description: str, step: int = 1) -> W.IntSlider:
    return W.IntSlider(
        value=value,
        min=lo,
        max=hi,
        step=step,
        description=description,
        style=_STYLE,
        layout=_SLIDER_LAYOUT,
    )


def _float_slider(
    value: float, lo: float, hi: float, description: str, step: float = 0.01
) -> W.FloatSlider:
    return W.FloatSlider(
        value=value,
        min=lo,
        max=hi,
        step=step,
        description=description,
        readout_format=".2f",
        style=_STYLE,
        layout=_SLIDER_LAYOUT,
    )


def _even_value(value: int) -> int:
    # An IntSlider with step 2 still lets a typed odd value through; RoPE needs an even d.
    return value - value % 2


# --- heatmap -------------------------------------------------------------------------------------


def heatmap_live(
    seq_len: int = 128, dim: int = 128, base: float = 10000.0, scheme: str = "sinusoidal"
) -> LiveExplorer:
    """The live heatmap UI: base, dimension, length and scheme controls."""
    fig = encoding_heatmap(seq_len, dim, base, scheme, sliders=False)
    controls = {
        "base": _base_slider(base),
        "dim": _int_slider(dim, 16, 512, "dimension d", 2),
        "seq_len": _int_slider(seq_len, 8, 512, "positions L"),
        "scheme": W.Dropdown(
            options=list(SCHEMES), value=scheme, description="scheme", style=_STYLE
        ),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        dim_ = _even_value(v["dim"])
        _apply_state(ui.figure, _heatmap_state(v["seq_len"], dim_, v["base"], v["scheme"]))
        ui.figure.layout.xaxis.title.text = f"dimension index (d = {dim_})"

    return LiveExplorer(fig, controls, update)


def heatmap_explorer(
    seq_len: int = 128, dim: int = 128, base: float = 10000.0, scheme: str = "sinusoidal"
) -> Any:
    """Position × dimension heatmap: live controls in a kernel, static sliders in the book.

    Parameters are those of :func:`posenc_lib.viz.heatmap.encoding_heatmap`.
    """
    return explorer(
        lambda: encoding_heatmap(seq_len, dim, base, scheme),
        lambda: heatmap_live(seq_len, dim, base, scheme),
    )


# --- spiral --------------------------------------------------------------------------------------


def spiral_live(
    dim: int = 64,
    base: float = 10000.0,
    seq_len: int = 256,
    pairs: Sequence[int] | None = None,
    *,
    position: int = 10,
) -> LiveExplorer:
    """The live spiral UI: base, dimension, length and clock position."""
    fixed = None if pairs is None else list(pairs)
    fig = rope_spiral(dim, base, seq_len, fixed, position=position, sliders=False)
    n_pairs = len(_check_pairs(fixed, dim))
    lo_dim = 2 * (max(fixed) + 1) if fixed else max(8, 2 * n_pairs)
    controls = {
        "base": _base_slider(base),
        "dim": _int_slider(dim, min(lo_dim, dim), 512, "dimension d", 2),
        "seq_len": _int_slider(seq_len, 16, 1024, "positions L"),
        "position": _int_slider(position, 0, seq_len - 1, "clock at m"),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        dim_ = _even_value(v["dim"])
        ui.controls["position"].max = v["seq_len"] - 1
        pos = min(ui.controls["position"].value, v["seq_len"] - 1)
        chosen = fixed if fixed is not None else default_pairs(dim_, n_pairs)
        if len(chosen) != n_pairs:  # small d: fewer distinct pairs; repeat the last one
            chosen = (chosen + chosen[-1:] * n_pairs)[:n_pairs]
        state = _spiral_state(dim_, v["base"], v["seq_len"], chosen, pos)
        _apply_state(ui.figure, state)
        for trace, i in zip(ui.figure.data[:n_pairs], chosen, strict=True):
            trace.name = f"pair i = {i}"
        ui.figure.layout.annotations[1].text = f"all {dim_ // 2} pairs at position m = {pos}"

    return LiveExplorer(fig, controls, update)


def spiral_explorer(
    dim: int = 64,
    base: float = 10000.0,
    seq_len: int = 256,
    pairs: Sequence[int] | None = None,
    *,
    position: int = 10,
) -> Any:
    """RoPE pairs as helices plus clock hands; see :func:`posenc_lib.viz.spiral.rope_spiral`."""
    return explorer(
        lambda: rope_spiral(dim, base, seq_len, pairs, position=position),
        lambda: spiral_live(dim, base, seq_len, pairs, position=position),
    )


# --- decay ---------------------------------------------------------------------------------------


def decay_live(dim: int = 128, base: float = 10000.0, max_distance: int = 256) -> LiveExplorer:
    """The live decay UI: base, dimension and distance range."""
    fig = decay_curves(dim, base, max_distance, sliders=False)
    controls = {
        "base": _base_slider(base),
        "dim": _int_slider(dim, 16, 512, "dimension d", 2),
        "max_distance": _int_slider(max_distance, 16, 1024, "max distance"),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        dim_ = _even_value(v["dim"])
        _apply_state(ui.figure, _decay_state(dim_, v["base"], v["max_distance"]))
        for trace in ui.figure.data:
            trace.hovertemplate = (
                trace.hovertemplate.split("<extra>")[0] + f"<extra>d = {dim_}</extra>"
            )

    return LiveExplorer(fig, controls, update)


def decay_explorer(dim: int = 128, base: float = 10000.0, max_distance: int = 256) -> Any:
    """Long-term decay curves; see :func:`posenc_lib.viz.decay.decay_curves`."""
    return explorer(
        lambda: decay_curves(dim, base, max_distance), lambda: decay_live(dim, base, max_distance)
    )


# --- Euler ---------------------------------------------------------------------------------------


def euler_live(theta: float = 1.0, n_terms: int = 6) -> LiveExplorer:
    """The live unit-circle UI: angle and number of Taylor terms."""
    fig = unit_circle(theta, n_terms, sliders=False)
    controls = {
        "theta": _float_slider(theta, -2 * math.pi, 2 * math.pi, "θ (rad)"),
        "n_terms": _int_slider(n_terms, 1, 30, "terms n"),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        point, path = _euler_state(v["theta"], v["n_terms"])
        ui.figure.data[1].update(point)
        ui.figure.data[2].update(path, customdata=list(range(v["n_terms"] + 1)))

    return LiveExplorer(fig, controls, update)


def euler_explorer(theta: float = 1.0, n_terms: int = 6) -> Any:
    """``e^{iθ}`` and its Taylor partial sums; see :func:`posenc_lib.viz.euler.unit_circle`."""
    return explorer(lambda: unit_circle(theta, n_terms), lambda: euler_live(theta, n_terms))


# --- ALiBi ---------------------------------------------------------------------------------------


def alibi_live(n_heads: int = 8, seq_len: int = 32, *, head: int = 0) -> LiveExplorer:
    """The live ALiBi UI: number of heads, length, and which head."""
    fig = alibi_heatmaps(n_heads, seq_len, head=head, sliders=False)
    controls = {
        "n_heads": _int_slider(n_heads, 1, 64, "heads"),
        "seq_len": _int_slider(seq_len, 4, 256, "positions L"),
        "head": _int_slider(head, 0, n_heads - 1, "head h"),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        ui.controls["head"].max = v["n_heads"] - 1
        head_ = min(ui.controls["head"].value, v["n_heads"] - 1)
        _apply_state(ui.figure, _alibi_state(v["n_heads"], v["seq_len"], head_))
        ui.figure.layout.title.text = (
            f"ALiBi with {v['n_heads']} heads: slopes m_h form a geometric sequence"
        )

    return LiveExplorer(fig, controls, update)


def alibi_explorer(n_heads: int = 8, seq_len: int = 32, *, head: int = 0) -> Any:
    """ALiBi bias and attention per head; see :func:`posenc_lib.viz.alibi.alibi_heatmaps`."""
    return explorer(
        lambda: alibi_heatmaps(n_heads, seq_len, head=head),
        lambda: alibi_live(n_heads, seq_len, head=head),
    )


# --- RoPE calculator -----------------------------------------------------------------------------


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
        "factor": W.FloatLogSlider(
            value=factor,
            base=10,
            min=0,
            max=math.log10(64),
            step=0.01,
            description="scale factor s",
            readout_format=".3g",
            style=_STYLE,
            layout=_SLIDER_LAYOUT,
        ),
        "train_len": W.BoundedIntText(
            value=train_len, min=16, max=2**22, description="training length", style=_STYLE
        ),
        "dim": _int_slider(dim, 8, 512, "dimension d", 2),
        "base": W.FloatLogSlider(
            value=base,
            base=10,
            min=2,
            max=7,
            step=0.01,
            description="base b",
            readout_format=".4g",
            style=_STYLE,
            layout=_SLIDER_LAYOUT,
        ),
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


# --- rotation, offset, conventions ---------------------------------------------------------------


def rotation_live(theta: float = 0.5, z: complex = 1 + 0.5j) -> LiveExplorer:
    """The live rotation UI: the angle θ."""
    fig = rotation_figure(theta, z, sliders=False)
    controls = {"theta": _float_slider(theta, -2 * math.pi, 2 * math.pi, "θ (rad)")}

    def update(ui: LiveExplorer) -> None:
        state = _rotation_state(ui.values["theta"], complex(z))
        _apply_state(ui.figure, [{}, {}, *state])

    return LiveExplorer(fig, controls, update)


def rotation_explorer(theta: float = 0.5, z: complex = 1 + 0.5j) -> Any:
    """``z`` and ``z·e^{iθ}``; see :func:`posenc_lib.viz.euler.rotation_figure`."""
    return explorer(lambda: rotation_figure(theta, z), lambda: rotation_live(theta, z))


def offset_live(
    dim: int = 64,
    base: float = 10000.0,
    offset: int = 0,
    seed: int = 0,
    *,
    m: int = 2,
    n: int = 7,
    max_offset: int = 64,
) -> LiveExplorer:
    """The live shift UI: the shift t, dimension and base."""
    fig = rope_offset_figure(
        dim, base, offset, seed, m=m, n=n, max_offset=max_offset, sliders=False
    )
    controls = {
        "offset": _int_slider(offset, 0, max_offset, "shift t"),
        "dim": _int_slider(dim, 2, 512, "dimension d", 2),
        "base": _base_slider(base),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        state = _offset_state(
            _even_value(v["dim"]), v["base"], v["offset"], seed, m, n, max_offset
        )
        _apply_state(ui.figure, state)

    return LiveExplorer(fig, controls, update)


def offset_explorer(
    dim: int = 64,
    base: float = 10000.0,
    offset: int = 0,
    seed: int = 0,
    *,
    m: int = 2,
    n: int = 7,
    max_offset: int = 64,
) -> Any:
    """RoPE scores under a shared shift; see :func:`posenc_lib.viz.offset.rope_offset_figure`."""
    kw = {"m": m, "n": n, "max_offset": max_offset}
    return explorer(
        lambda: rope_offset_figure(dim, base, offset, seed, **kw),
        lambda: offset_live(dim, base, offset, seed, **kw),
    )


def convention_live(dim: int = 16) -> LiveExplorer:
    """The live pairing UI: the dimension."""
    fig = convention_pairs_figure(dim, sliders=False)
    controls = {"dim": _int_slider(dim, 2, 64, "dimension d", 2)}

    def update(ui: LiveExplorer) -> None:
        dim_ = _even_value(ui.values["dim"])
        _apply_state(ui.figure, _convention_state(dim_))
        ui.figure.layout.title.text = (
            f"Two ways to pair features (d = {dim_}); lines: the permutation between them"
        )

    return LiveExplorer(fig, controls, update)


def convention_explorer(dim: int = 16) -> Any:
    """Interleaved vs half pairing.

    See :func:`posenc_lib.viz.conventions.convention_pairs_figure`.
    """
    return explorer(lambda: convention_pairs_figure(dim), lambda: convention_live(dim))


# --- permutation ---------------------------------------------------------------------------------


def permutation_live(
    sentence: str = "我爱你", dim: int = 16, seed: int = 0, *, base: float = 10000.0
) -> LiveExplorer:
    """The live shuffle UI: the ordering of the sentence and the encoding's base."""
    orders = sentence_orderings(sentence)
    fig = permutation_figure(sentence, dim, seed, base=base, sliders=False)
    labels = ["".join(sentence[i] for i in order) for order in orders]
    controls = {
        "order": W.Dropdown(
            options=list(zip(labels, range(len(orders)), strict=True)),
            value=0,
            description="ordering",
            style=_STYLE,
        ),
        "base": _base_slider(base),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        traces, layout = _permutation_state(sentence, orders[v["order"]], dim, seed, v["base"])
        _apply_state(ui.figure, traces)
        title = layout.pop("title.text")
        ui.figure.update_layout(layout, title={"text": title})

    return LiveExplorer(fig, controls, update)


def permutation_explorer(
    sentence: str = "我爱你", dim: int = 16, seed: int = 0, *, base: float = 10000.0
) -> Any:
    """Shuffle a sentence; see :func:`posenc_lib.viz.permutation.permutation_figure`."""
    return explorer(
        lambda: permutation_figure(sentence, dim, seed, base=base),
        lambda: permutation_live(sentence, dim, seed, base=base),
    )
