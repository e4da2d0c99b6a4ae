"""Plotly figure builders: parameters in, ``plotly.graph_objects.Figure`` out.

Every number drawn comes from the core of :mod:`posenc_lib` (tables, rotations, biases, bounds,
spectra); this module only lays them out. Each builder takes ``sliders=True`` to add plotly's own
sliders and buttons with precomputed steps, so the figure stays explorable in the static book (no
kernel). The live widgets of :mod:`posenc_lib.widgets` build the same figures with
``sliders=False`` and refresh them through the private ``_*_state`` functions below, so the static
and the live figure always show the same numbers.

Static steps restyle only the arrays that change, rounded (2-3 decimals) and, for large
heatmaps, sampled on a coarser grid, to keep each figure's HTML near 300 kB.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from . import alibi, analysis, euler, rope, scaling, schemes, sinusoidal

# The package re-exports the function ``attention``, which shadows the submodule of that name.
from .attention import attention as _attention

__all__ = [
    "BASE_GRID",
    "DIM_GRID",
    "FACTOR_GRID",
    "METHODS",
    "SCHEMES",
    "TEMPLATE",
    "alibi_heatmaps",
    "attention_heatmap",
    "convention_pairs_figure",
    "decay_curves",
    "encoding_heatmap",
    "hf_rope_config",
    "rope_offset_figure",
    "rope_spiral",
    "rotation_figure",
    "scaled_inv_freq",
    "unit_circle",
    "wavelength_spectrum",
]

# --- the shared look ------------------------------------------------------------------------------

# CJK fonts are listed so that tokens such as 我 爱 你 render wherever one is installed.
FONT_FAMILY = (
    '"Noto Sans", "Noto Sans CJK SC", "Source Han Sans SC", "PingFang SC", "Microsoft YaHei", '
    '"Helvetica Neue", Arial, sans-serif'
)
INK = "#1f2328"  # text; 15.8:1 against PAPER (WCAG AAA)
PAPER = "#ffffff"  # opaque on purpose: the figure reads the same in the theme's light and dark mode
GRID = "#d8dee4"
MUTED = "#57606a"  # secondary lines and labels; 6.4:1 against PAPER
# Okabe-Ito: distinguishable with the common colour-vision deficiencies, and in grey print.
COLORWAY = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]
DIVERGING = "RdBu"  # for values in [-1, 1], always with zmid=0
SEQUENTIAL = "Viridis"
SEQUENTIAL_ALT = "Cividis"

_AXIS = {
    "gridcolor": GRID,
    "zerolinecolor": "#8c959f",
    "linecolor": "#8c959f",
    "ticks": "outside",
    "tickcolor": "#8c959f",
    "title": {"standoff": 6},
    "automargin": True,
}

TEMPLATE = go.layout.Template(
    layout={
        "font": {"family": FONT_FAMILY, "size": 13, "color": INK},
        "title": {"font": {"size": 16}, "x": 0.01, "xanchor": "left"},
        "paper_bgcolor": PAPER,
        "plot_bgcolor": PAPER,
        "colorway": COLORWAY,
        "xaxis": _AXIS,
        "yaxis": _AXIS,
        "scene": {
            "xaxis": {"gridcolor": GRID, "backgroundcolor": PAPER},
            "yaxis": {"gridcolor": GRID, "backgroundcolor": PAPER},
            "zaxis": {"gridcolor": GRID, "backgroundcolor": PAPER},
        },
        "hoverlabel": {"font": {"family": FONT_FAMILY, "size": 12}},
        "legend": {"bgcolor": "rgba(255,255,255,0.85)", "font": {"size": 12}},
        "margin": {"l": 60, "r": 20, "t": 60, "b": 50},
        "coloraxis": {"colorbar": {"outlinewidth": 0, "ticks": "outside"}},
    }
)

# --- static slider grids --------------------------------------------------------------------------

BASE_GRID: tuple[float, ...] = (10.0, 100.0, 1e3, 1e4, 1e5, 5e5, 1e6)
DIM_GRID: tuple[int, ...] = (16, 32, 64, 128, 256, 512)
FACTOR_GRID: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
SCHEMES = ("sinusoidal", "integer", "normalized", "binary")
METHODS = ("none", "pi", "ntk", "yarn", "llama3", "abf")
_METHOD_LABEL = {
    "none": "plain RoPE",
    "pi": "position interpolation (PI)",
    "ntk": "NTK-aware",
    "yarn": "YaRN",
    "llama3": "Llama 3.1",
    "abf": "ABF (base 500 000)",
}

# Static heatmaps show at most this many rows and (sin, cos) pairs per slider step.
_MAX_ROWS = 64
_MAX_PAIRS = 32


# --- validation helpers ---------------------------------------------------------------------------


def _int(value: object, name: str, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    value = int(value)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        span = f"in [{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be an integer {span}, got {value}")
    return value


def _even(value: object, name: str, lo: int = 2, hi: int | None = None) -> int:
    value = _int(value, name, lo, hi)
    if value % 2:
        raise ValueError(f"{name} must be an even integer, got {value}")
    return value


def _real(value: object, name: str, lo: float | None = None, hi: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        span = f"in [{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be a number {span}, got {value}")
    return value


def _base(value: object, name: str = "base") -> float:
    value = _real(value, name)
    if value <= 1.0:
        raise ValueError(f"{name} must be a finite number > 1, got {value}")
    return value


def _choice(value: object, name: str, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def _bool(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return value


# --- small utilities ------------------------------------------------------------------------------


def _np(x: torch.Tensor | np.ndarray) -> np.ndarray:
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def _lists(a: Any, decimals: int) -> Any:
    """Rounded nested lists for slider args (NaN -> None; -0.0 -> 0.0 saves a byte each)."""
    arr = np.round(np.asarray(a, dtype=np.float64), decimals) + 0.0
    if np.isnan(arr).any():
        return np.where(np.isnan(arr), None, arr).tolist()
    return arr.tolist()


def _with(grid: Sequence[float], value: float) -> list[float]:
    """The grid with ``value`` added, sorted, so the figure opens on the caller's value."""
    out = sorted({float(g) for g in grid} | {float(value)})
    return out


def _fmt(x: float) -> str:
    """Compact label: 10 000, 500 000, 1e+06, 0.5."""
    if x >= 1e6:
        return f"{x:.0e}".replace("e+0", "e")
    if float(x).is_integer():
        return f"{int(x):,}".replace(",", " ")
    return f"{x:g}"


def _style(fig: go.Figure, title: str, *, height: int = 460) -> go.Figure:
    fig.update_layout(template=TEMPLATE, title={"text": title}, height=height)
    return fig


def _slider(
    steps: list[dict[str, Any]], active: int, prefix: str, *, y: float = -0.08, pad_t: int = 40
) -> dict[str, Any]:
    return {
        "active": active,
        "steps": steps,
        "currentvalue": {"prefix": prefix, "font": {"size": 13}},
        "x": 0.0,
        "len": 1.0,
        "y": y,
        "yanchor": "top",
        "pad": {"t": pad_t, "b": 0},
        "bgcolor": "#eaeef2",
        "activebgcolor": COLORWAY[0],
        "bordercolor": "#8c959f",
        "font": {"color": INK},
    }


def _buttons(buttons: list[dict[str, Any]], active: int, *, x: float = 1.0) -> dict[str, Any]:
    return {
        "type": "dropdown",
        "active": active,
        "buttons": buttons,
        "x": x,
        "xanchor": "right",
        "y": 1.0,
        "yanchor": "bottom",
        "pad": {"b": 8},
        "bgcolor": "#f6f8fa",
        "bordercolor": "#8c959f",
        "font": {"color": INK},
        "showactive": True,
    }


def _apply_state(fig: go.Figure, state: list[dict[str, Any]]) -> None:
    for trace, props in zip(fig.data, state, strict=True):
        trace.update(props)


# --- 1. encoding heatmap --------------------------------------------------------------------------


def _encoding_table(scheme: str, seq_len: int, dim: int, base: float) -> np.ndarray:
    if scheme == "sinusoidal":
        table = sinusoidal.sinusoidal_table(seq_len, dim, base)
    elif scheme == "integer":
        table = schemes.integer_encoding(seq_len, dim)
    elif scheme == "normalized":
        table = schemes.normalized_encoding(seq_len, dim)
    else:
        table = schemes.binary_encoding(seq_len, dim)
    return _np(table)


def _heatmap_colors(scheme: str, seq_len: int) -> dict[str, Any]:
    if scheme == "sinusoidal":
        return {"colorscale": DIVERGING, "zmid": 0.0, "zmin": -1.0, "zmax": 1.0}
    if scheme == "integer":
        return {"colorscale": SEQUENTIAL, "zmin": 0.0, "zmax": float(max(seq_len - 1, 1))}
    return {
        "colorscale": SEQUENTIAL_ALT if scheme == "binary" else SEQUENTIAL,
        "zmin": 0.0,
        "zmax": 1.0,
    }


def _heatmap_hover(scheme: str, base: float, dim: int | None) -> str:
    if scheme == "sinusoidal":
        inputs = f"b = {_fmt(base)}" + ("" if dim is None else f", d = {dim}")
        return (
            "position p = %{y}<br>dimension index %{x}<br>PE = %{z:.3f}"
            f"<extra>{inputs}</extra>"
        )
    return (
        "position p = %{y}<br>dimension index %{x}<br>value = %{z:.3g}" f"<extra>{scheme}</extra>"
    )


def _heatmap_state(seq_len: int, dim: int, base: float, scheme: str) -> list[dict[str, Any]]:
    """Full-resolution trace properties (the live widget and ``sliders=False``)."""
    z = _encoding_table(scheme, seq_len, dim, base)
    return [
        {
            "z": z,
            "x": np.arange(dim),
            "y": np.arange(seq_len),
            "hovertemplate": _heatmap_hover(scheme, base, dim),
            **_heatmap_colors(scheme, seq_len),
        }
    ]


def _sample_pairs(dim: int, max_pairs: int = _MAX_PAIRS) -> np.ndarray:
    """Evenly spaced pair indices; for d/2 a multiple of ``max_pairs`` they share 2i/d across d."""
    half = dim // 2
    if half <= max_pairs:
        return np.arange(half)
    return np.unique(np.floor(np.arange(max_pairs) * half / max_pairs).astype(int))


def _pair_columns(pairs: np.ndarray) -> np.ndarray:
    return np.stack((2 * pairs, 2 * pairs + 1), axis=1).reshape(-1)


def heatmap_static_rows(seq_len: int) -> np.ndarray:
    """Positions a static heatmap step shows: all of them up to 64, else every k-th."""
    stride = max(1, math.ceil(seq_len / _MAX_ROWS))
    return np.arange(0, seq_len, stride)


def encoding_heatmap(
    seq_len: int = 128,
    dim: int = 128,
    base: float = 10000.0,
    scheme: str = "sinusoidal",
    *,
    sliders: bool = True,
) -> go.Figure:
    """Position × dimension heatmap of an encoding table.

    Parameters
    ----------
    seq_len : int
        Number of positions (rows), 1 … 4096.
    dim : int
        Feature dimension (columns), even, 2 … 4096.
    base : float
        Base ``b`` of the sinusoidal scheme (> 1); ignored by the other schemes.
    scheme : {"sinusoidal", "integer", "normalized", "binary"}
        Which table to draw (:mod:`posenc_lib.sinusoidal`, :mod:`posenc_lib.schemes`).
    sliders : bool
        Add a base slider and a dimension dropdown (sinusoidal scheme). Their steps show the exact
        table at a subset of rows (at most 64) and (sin, cos) pairs (at most 32), rounded to
        2 decimals, which keeps the HTML small; the figure opens on those steps too.

    Returns
    -------
    plotly.graph_objects.Figure
        One heatmap trace per group of dimensions with identical sampled columns (static) or a
        single full ``(seq_len, dim)`` heatmap (``sliders=False``).
    """
    seq_len = _int(seq_len, "seq_len", 1, 4096)
    dim = _even(dim, "dim", 2, 4096)
    base = _base(base)
    scheme = _choice(scheme, "scheme", SCHEMES)
    sliders = _bool(sliders, "sliders")
    if scheme == "binary" and seq_len > 2**dim:
        raise ValueError(f"seq_len must be <= 2**dim for the binary scheme, got {seq_len}, d={dim}")
    title = {
        "sinusoidal": "Sinusoidal encoding PE(p, 2i) = sin(p·b^(−2i/d)), PE(p, 2i+1) = cos(…)",
        "integer": "Integer encoding: PE(p) = p in every feature (unbounded)",
        "normalized": "Normalised encoding: PE(p) = p / (L − 1) (step depends on L)",
        "binary": "Binary encoding: feature j holds bit j of p (jumpy)",
    }[scheme]
    fig = go.Figure()
    layout = {
        "xaxis": {"title": {"text": f"dimension index (d = {dim})"}},
        "yaxis": {"title": {"text": "position p"}, "autorange": "reversed"},
    }
    colorbar = {"title": {"text": "PE" if scheme == "sinusoidal" else "value"}, "thickness": 14}
    if not (sliders and scheme == "sinusoidal"):
        (props,) = _heatmap_state(seq_len, dim, base, scheme)
        fig.add_trace(go.Heatmap(**props, colorbar=colorbar))
        fig.update_layout(**layout)
        return _style(fig, title)

    rows = heatmap_static_rows(seq_len)
    dims = [int(d) for d in _with(DIM_GRID, dim) if d <= 4096]
    bases = _with(BASE_GRID, base)
    # Group dimensions whose sampled pairs have the same 2i/d: their columns hold identical values
    # (ω_i = b^(-2i/d)), so one z array per base serves the whole group and only x changes.
    groups: dict[tuple[Fraction, ...], list[int]] = {}
    pairs_of: dict[int, np.ndarray] = {}
    for d in dims:
        pairs_of[d] = _sample_pairs(d)
        key = tuple(Fraction(2 * int(i), d) for i in pairs_of[d])
        groups.setdefault(key, []).append(d)
    group_dims = list(groups.values())
    group_of = {d: g for g, ds in enumerate(group_dims) for d in ds}

    def z_for(g: int, b: float) -> np.ndarray:
        d = group_dims[g][0]
        return _encoding_table("sinusoidal", seq_len, d, b)[rows][:, _pair_columns(pairs_of[d])]

    for g in range(len(group_dims)):
        d_show = dim if group_of[dim] == g else group_dims[g][0]
        fig.add_trace(
            go.Heatmap(
                z=z_for(g, base),
                x=_pair_columns(pairs_of[d_show]),
                y=rows,
                visible=group_of[dim] == g,
                hovertemplate=_heatmap_hover("sinusoidal", base, None),
                colorbar=colorbar,
                **_heatmap_colors("sinusoidal", seq_len),
            )
        )
    n = len(group_dims)
    steps = []
    for b in bases:
        steps.append(
            {
                "method": "restyle",
                "label": _fmt(b),
                "args": [
                    {
                        "z": [_lists(z_for(g, b), 2) for g in range(n)],
                        "hovertemplate": [_heatmap_hover("sinusoidal", b, None)] * n,
                    },
                    list(range(n)),
                ],
            }
        )
    buttons = []
    for d in dims:
        xs = [
            _pair_columns(pairs_of[d if group_of[d] == g else group_dims[g][0]]).tolist()
            for g in range(n)
        ]
        buttons.append(
            {
                "method": "update",
                "label": f"d = {d}",
                "args": [
                    {"visible": [group_of[d] == g for g in range(n)], "x": xs},
                    {"xaxis.title.text": _heatmap_xtitle(d, len(pairs_of[d]))},
                    list(range(n)),
                ],
            }
        )
    layout["xaxis"]["title"]["text"] = _heatmap_xtitle(dim, len(pairs_of[dim]))
    fig.update_layout(
        **layout,
        sliders=[_slider(steps, bases.index(base), "base b = ")],
        updatemenus=[_buttons(buttons, dims.index(dim))],
        margin={"b": 120},
    )
    return _style(fig, title, height=540)


def _heatmap_xtitle(dim: int, shown_pairs: int) -> str:
    if shown_pairs == dim // 2:
        return f"dimension index (d = {dim})"
    return f"dimension index (d = {dim}; {shown_pairs} of {dim // 2} pairs shown)"


# --- 2. RoPE spiral -------------------------------------------------------------------------------


def default_pairs(dim: int, count: int = 4) -> list[int]:
    """``count`` pair indices spread log-evenly over ``0 … dim/2 − 1`` (fast to slow)."""
    half = dim // 2
    picks = np.unique(np.round(np.geomspace(1, half, min(count, half))).astype(int) - 1)
    return [int(p) for p in picks]


def _rope_unit_turns(dim: int, base: float, positions: torch.Tensor) -> np.ndarray:
    """``(seq, dim)``: RoPE applied to ``(1, 0, 1, 0, …)``, i.e. ``cos mθ_i, sin mθ_i`` per pair."""
    unit = torch.zeros(dim, dtype=torch.float64)
    unit[0::2] = 1.0
    x = unit.expand(positions.numel(), dim)
    return _np(rope.apply_rope_interleaved(x, positions, base=base))


def _spiral_state(
    dim: int, base: float, seq_len: int, pairs: list[int], position: int
) -> list[dict[str, Any]]:
    positions = torch.arange(seq_len, dtype=torch.float64)
    turns = _rope_unit_turns(dim, base, positions)
    state: list[dict[str, Any]] = [
        {"x": turns[:, 2 * i], "y": turns[:, 2 * i + 1], "z": positions.numpy()} for i in pairs
    ]
    half = dim // 2
    here = _rope_unit_turns(dim, base, torch.tensor([float(position)], dtype=torch.float64))[0]
    theta = _np(rope.rope_inv_freq(dim, base))
    # Hand length shrinks with i, like a clock: fast pairs long, slow pairs short.
    radius = 1.0 - 0.75 * np.arange(half) / max(half - 1, 1)
    tip_x = radius * here[0::2]
    tip_y = radius * here[1::2]
    line_x = np.stack((np.zeros(half), tip_x, np.full(half, np.nan)), 1).reshape(-1)
    line_y = np.stack((np.zeros(half), tip_y, np.full(half, np.nan)), 1).reshape(-1)
    angle = np.mod(position * theta, 2 * np.pi)
    state.append({"x": line_x, "y": line_y})
    state.append(
        {
            "x": tip_x,
            "y": tip_y,
            "customdata": np.stack((np.arange(half), theta, angle), 1),
            "marker": {"color": np.arange(half), "cmin": 0, "cmax": max(half - 1, 1)},
            "hovertemplate": (
                "pair i = %{customdata[0]}<br>θ_i = %{customdata[1]:.3g} rad/position<br>"
                f"angle m·θ_i mod 2π = %{{customdata[2]:.3f}} rad<extra>m = {position}</extra>"
            ),
        }
    )
    return state


def rope_spiral(
    dim: int = 64,
    base: float = 10000.0,
    seq_len: int = 256,
    pairs: Sequence[int] | None = None,
    *,
    position: int = 10,
    sliders: bool = True,
) -> go.Figure:
    """Each chosen RoPE pair as a helix (cos mθ_i, sin mθ_i, m), and all pairs as clock hands.

    Parameters
    ----------
    dim : int
        Rotary dimension ``d`` (even, 2 … 1024).
    base : float
        Base ``b`` (> 1).
    seq_len : int
        Positions ``m = 0 … seq_len − 1`` along each helix (2 … 4096).
    pairs : sequence of int, optional
        Pair indices ``i`` to draw as helices (default: four spread from fast to slow).
    position : int
        The position ``m`` whose rotation angles the clock view shows (0 … seq_len − 1).
    sliders : bool
        Add a base slider (steps over :data:`BASE_GRID`).

    Returns
    -------
    plotly.graph_objects.Figure
        A 3-D scene with ``len(pairs)`` helices and a 2-D clock with ``dim/2`` hands.
    """
    dim = _even(dim, "dim", 2, 1024)
    base = _base(base)
    seq_len = _int(seq_len, "seq_len", 2, 4096)
    position = _int(position, "position", 0, seq_len - 1)
    sliders = _bool(sliders, "sliders")
    pairs = _check_pairs(pairs, dim)
    fig = make_subplots(
        rows=1,
        cols=2,
        specs=[[{"type": "scene"}, {"type": "xy"}]],
        column_widths=[0.58, 0.42],
        subplot_titles=(
            "each pair i: (cos mθ_i, sin mθ_i) over position m",
            f"all {dim // 2} pairs at position m = {position}",
        ),
    )
    state = _spiral_state(dim, base, seq_len, pairs, position)
    for k, i in enumerate(pairs):
        fig.add_trace(
            go.Scatter3d(
                **state[k],
                mode="lines",
                name=f"pair i = {i}",
                line={"width": 4, "color": COLORWAY[k % len(COLORWAY)]},
                hovertemplate=(
                    f"pair i = {i}<br>position m = %{{z}}<br>cos mθ_i = %{{x:.3f}}"
                    "<br>sin mθ_i = %{y:.3f}<extra></extra>"
                ),
            ),
            row=1,
            col=1,
        )
    fig.add_trace(
        go.Scatter(
            **state[-2],
            mode="lines",
            line={"color": MUTED, "width": 1},
            hoverinfo="skip",
            showlegend=False,
        ),
        row=1,
        col=2,
    )
    tips = {k: v for k, v in state[-1].items() if k != "marker"}
    fig.add_trace(
        go.Scatter(
            **tips,
            mode="markers",
            showlegend=False,
            marker={
                **state[-1]["marker"],
                "size": 7,
                "colorscale": SEQUENTIAL,
                "colorbar": {"title": {"text": "pair i"}, "thickness": 12, "x": 1.02},
            },
        ),
        row=1,
        col=2,
    )
    fig.update_layout(
        scene={
            "xaxis": {"title": {"text": "cos mθ_i"}, "range": [-1.1, 1.1]},
            "yaxis": {"title": {"text": "sin mθ_i"}, "range": [-1.1, 1.1]},
            "zaxis": {"title": {"text": "position m"}},
            "aspectmode": "manual",
            "aspectratio": {"x": 1, "y": 1, "z": 1.6},
        },
        xaxis={"title": {"text": "cos mθ_i (scaled by hand length)"}, "range": [-1.1, 1.1]},
        yaxis={"title": {"text": "sin mθ_i"}, "range": [-1.1, 1.1], "scaleanchor": "x"},
        legend={"x": 0.0, "y": 1.0},
    )
    if sliders:
        bases = _with(BASE_GRID, base)
        n = len(fig.data)
        steps = []
        for b in bases:
            st = _spiral_state(dim, b, seq_len, pairs, position)
            args: dict[str, Any] = {
                "x": [_lists(s["x"], 3) for s in st],
                "y": [_lists(s["y"], 3) for s in st],
                "customdata": [None] * (n - 1) + [_lists(st[-1]["customdata"], 4)],
            }
            steps.append({"method": "restyle", "label": _fmt(b), "args": [args, list(range(n))]})
        fig.update_layout(
            sliders=[_slider(steps, bases.index(base), "base b = ")], margin={"b": 110}
        )
    return _style(
        fig,
        f"RoPE as rotation: pair i turns by θ_i = b^(−2i/d) per position (d = {dim})",
        height=540,
    )


def _check_pairs(pairs: Sequence[int] | None, dim: int) -> list[int]:
    if pairs is None:
        return default_pairs(dim)
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Sequence) or len(pairs) == 0:
        raise TypeError(f"pairs must be a non-empty sequence of pair indices, got {pairs!r}")
    out = [_int(p, "pairs", 0, dim // 2 - 1) for p in pairs]
    if len(set(out)) != len(out):
        raise ValueError(f"pairs must not repeat an index, got {list(out)}")
    if len(out) > 8:
        raise ValueError(f"pairs must hold at most 8 indices, got {len(out)}")
    return out


# --- 3. decay curves ------------------------------------------------------------------------------


def _decay_state(
    dim: int, base: float, max_distance: int, n_samples: int = 32, seed: int = 0
) -> list[dict[str, Any]]:
    k = np.arange(max_distance + 1)
    bound = _np(analysis.rope_decay_bound(dim, base, max_distance))
    sim = _np(analysis.sinusoidal_similarity(dim, base, max_distance))[max_distance:]
    # Random unit directions, q = k: the score <RoPE(q, 0), RoPE(q, r)> at every distance r.
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(n_samples, dim, generator=gen)
    q = q / q.norm(dim=-1, keepdim=True)
    positions = torch.arange(max_distance + 1, dtype=torch.float64)
    rotated = rope.apply_rope_interleaved(
        q[:, None, :].expand(n_samples, max_distance + 1, dim), positions, base=base
    )
    score = _np((rotated * q[:, None, :]).sum(-1).mean(0)).astype(np.float64)
    curves = (bound / bound[0], sim / sim[0], score / score[0])
    return [{"x": k, "y": c} for c in curves]


def decay_curves(
    dim: int = 128,
    base: float = 10000.0,
    max_distance: int = 256,
    *,
    n_samples: int = 32,
    seed: int = 0,
    sliders: bool = True,
) -> go.Figure:
    """Long-term decay against relative distance: RoFormer's bound, PE·PE, and RoPE scores.

    Every curve is divided by its own value at distance 0 so that the three share one axis.

    Parameters
    ----------
    dim : int
        Dimension ``d`` (even, 4 … 1024).
    base : float
        Base ``b`` (> 1).
    max_distance : int
        Largest relative distance drawn (1 … 8192).
    n_samples : int
        Random unit directions ``q = k`` averaged for the empirical RoPE score (1 … 1024).
    seed : int
        Seed of those directions.
    sliders : bool
        Add a base slider (:data:`BASE_GRID`) and a dimension dropdown (:data:`DIM_GRID`).

    Returns
    -------
    plotly.graph_objects.Figure
        Three line traces (per dimension of the dropdown when ``sliders``), x = distance 0 … max.
    """
    dim = _even(dim, "dim", 4, 1024)
    base = _base(base)
    max_distance = _int(max_distance, "max_distance", 1, 8192)
    n_samples = _int(n_samples, "n_samples", 1, 1024)
    seed = _int(seed, "seed", 0)
    sliders = _bool(sliders, "sliders")
    names = (
        "RoFormer upper bound (1/(d/2))·Σ_j |Σ_{i<j} e^{i·k·θ_i}|",
        "sinusoidal PE(p)·PE(p+k) = Σ_i cos(k·ω_i)",
        f"mean ⟨RoPE(q, m), RoPE(q, m+k)⟩ over {n_samples} random unit q",
    )
    dashes = ("solid", "dash", "dot")
    dims = [int(d) for d in _with(DIM_GRID, dim) if d <= 1024] if sliders else [dim]
    fig = go.Figure()
    for d in dims:
        for j, props in enumerate(_decay_state(d, base, max_distance, n_samples, seed)):
            fig.add_trace(
                go.Scatter(
                    **props,
                    mode="lines",
                    name=names[j],
                    visible=d == dim,
                    legendgroup=str(j),
                    line={"color": COLORWAY[j], "dash": dashes[j], "width": 2},
                    hovertemplate=(
                        f"distance k = %{{x}}<br>normalised value = %{{y:.3f}}"
                        f"<extra>d = {d}</extra>"
                    ),
                )
            )
    fig.update_layout(
        xaxis={"title": {"text": "relative distance k = n − m (tokens)"}},
        yaxis={"title": {"text": "value ÷ value at k = 0"}},
        legend={"orientation": "h", "x": 0.0, "y": -0.18, "yanchor": "top"},
    )
    title = "Long-term decay (each curve normalised to 1 at k = 0)"
    if not sliders:
        return _style(fig, title)
    bases = _with(BASE_GRID, base)
    n = len(fig.data)
    steps = []
    for b in bases:
        ys = [
            _lists(p["y"], 3)
            for d in dims
            for p in _decay_state(d, b, max_distance, n_samples, seed)
        ]
        steps.append({"method": "restyle", "label": _fmt(b), "args": [{"y": ys}, list(range(n))]})
    buttons = [
        {
            "method": "restyle",
            "label": f"d = {d}",
            "args": [{"visible": [dd == d for dd in dims for _ in range(3)]}, list(range(n))],
        }
        for d in dims
    ]
    fig.update_layout(
        sliders=[_slider(steps, bases.index(base), "base b = ", y=-0.32, pad_t=10)],
        updatemenus=[_buttons(buttons, dims.index(dim))],
        margin={"b": 180},
    )
    return _style(fig, title, height=560)


# --- 4. Euler: the unit circle and Taylor partial sums --------------------------------------------

_THETA_GRID = tuple(np.round(np.linspace(0.0, 2 * np.pi, 25), 4).tolist())
_TERMS_GRID = tuple(range(1, 21))


def _euler_path(theta: float, n_terms: int) -> dict[str, Any]:
    sums = _np(euler.euler_partial_sums(theta, n_terms))
    path = np.concatenate(([0.0 + 0.0j], sums))  # 0 → S_1 → … → S_n, one term per segment
    target = complex(_np(euler.rotate_complex(1.0, theta)).item())
    err = abs(sums[-1] - target)
    return {
        "x": path.real,
        "y": path.imag,
        "name": f"partial sum with {n_terms} term{'s' * (n_terms > 1)}: |S − e^(iθ)| = {err:.2g}",
    }


def _euler_point(theta: float) -> dict[str, Any]:
    target = complex(_np(euler.rotate_complex(1.0, theta)).item())
    return {"x": [0.0, target.real], "y": [0.0, target.imag]}


def _euler_state(theta: float, n_terms: int) -> list[dict[str, Any]]:
    return [_euler_point(theta), _euler_path(theta, n_terms)]


def unit_circle(theta: float = 1.0, n_terms: int = 6, *, sliders: bool = True) -> go.Figure:
    """``e^{iθ} = cos θ + i sin θ`` on the unit circle, and the Taylor partial sums reaching it.

    Parameters
    ----------
    theta : float
        The angle θ in radians (−100 … 100).
    n_terms : int
        Terms of ``Σ (iθ)^k / k!`` summed (1 … 200).
    sliders : bool
        Add a θ slider (0 … 2π in steps of π/12) and a slider over the number of terms (1 … 20).

    Returns
    -------
    plotly.graph_objects.Figure
        The circle, the vector ``e^{iθ}``, and the partial-sum path ``0 → S_1 → … → S_n``
        (one path trace per term count when ``sliders``).
    """
    theta = _real(theta, "theta", -100.0, 100.0)
    n_terms = _int(n_terms, "n_terms", 1, 200)
    sliders = _bool(sliders, "sliders")
    phi = np.linspace(0, 2 * np.pi, 181)  # the outline only; no number of the lesson comes from it
    fig = go.Figure(
        go.Scatter(
            x=np.cos(phi).round(4),
            y=np.sin(phi).round(4),
            mode="lines",
            line={"color": MUTED, "width": 1},
            hoverinfo="skip",
            name="unit circle |z| = 1",
        )
    )
    fig.add_trace(
        go.Scatter(
            **_euler_point(theta),
            mode="lines+markers",
            name="e^(iθ) = cos θ + i sin θ",
            line={"color": COLORWAY[5], "width": 3},
            marker={"size": [0, 11], "color": COLORWAY[5]},
            hovertemplate="e^(iθ) = %{x:.4f} + %{y:.4f} i<extra></extra>",
        )
    )
    terms = _with(_TERMS_GRID, n_terms) if sliders else [n_terms]
    terms = [int(t) for t in terms]
    thetas = _with(_THETA_GRID, theta) if sliders else [theta]
    for t in terms:
        fig.add_trace(
            go.Scatter(
                **_euler_path(theta, t),
                mode="lines+markers",
                visible=t == n_terms,
                line={"color": COLORWAY[0], "width": 2},
                marker={"size": 6},
                customdata=np.arange(t + 1),
                hovertemplate="S_%{customdata} = %{x:.4f} + %{y:.4f} i<extra></extra>",
            )
        )
    lim = 2.6
    fig.update_layout(
        xaxis={"title": {"text": "real part"}, "range": [-lim, lim], "zeroline": True},
        yaxis={"title": {"text": "imaginary part"}, "range": [-lim, lim], "scaleanchor": "x"},
        legend={"orientation": "h", "x": 0.0, "y": -0.15, "yanchor": "top"},
    )
    title = "e^(iθ) on the unit circle, and the Taylor partial sums Σ_{k<n} (iθ)^k / k!"
    if not sliders:
        return _style(fig, title, height=560)
    paths = list(range(2, len(fig.data)))
    theta_steps = []
    for th in thetas:
        ps = [_euler_path(th, t) for t in terms]
        theta_steps.append(
            {
                "method": "restyle",
                "label": f"{th:.2f}",
                "args": [
                    {
                        "x": [_lists(_euler_point(th)["x"], 4)] + [_lists(p["x"], 4) for p in ps],
                        "y": [_lists(_euler_point(th)["y"], 4)] + [_lists(p["y"], 4) for p in ps],
                        "name": ["e^(iθ) = cos θ + i sin θ"] + [p["name"] for p in ps],
                    },
                    [1, *paths],
                ],
            }
        )
    term_steps = [
        {
            "method": "restyle",
            "label": str(t),
            "args": [{"visible": [tt == t for tt in terms]}, paths],
        }
        for t in terms
    ]
    fig.update_layout(
        sliders=[
            _slider(theta_steps, thetas.index(theta), "θ (rad) = ", y=-0.26, pad_t=10),
            _slider(term_steps, terms.index(n_terms), "terms n = ", y=-0.42, pad_t=10),
        ],
        margin={"b": 230},
    )
    return _style(fig, title, height=720)


# --- 5. ALiBi -------------------------------------------------------------------------------------


def _alibi_state(n_heads: int, seq_len: int, head: int) -> list[dict[str, Any]]:
    bias = alibi.alibi_bias(n_heads, seq_len, dtype=torch.float64)
    zeros = torch.zeros(1, seq_len, 1, dtype=torch.float64)
    # Content-free queries and keys: the weights are softmax(bias), ALiBi's pure positional pattern.
    _, weights = _attention(zeros, zeros, zeros, bias=bias[head : head + 1])
    slope = float(_np(alibi.alibi_slopes(n_heads, dtype=torch.float64))[head])
    b = _np(bias[head])
    b = np.where(np.isfinite(b), b, np.nan)  # masked (−inf) cells are left blank
    extra = f"<extra>head h = {head}, slope m = {slope:.4g}</extra>"
    return [
        {
            "z": b,
            "zmin": -slope * (seq_len - 1),
            "zmax": 0.0,
            "hovertemplate": "query i = %{y}, key j = %{x}<br>bias −m·(i−j) = %{z:.3f}" + extra,
        },
        {
            "z": _np(weights[0]),
            "hovertemplate": "query i = %{y}, key j = %{x}<br>weight = %{z:.3f}" + extra,
        },
    ]


def alibi_heatmaps(
    n_heads: int = 8, seq_len: int = 32, *, head: int = 0, sliders: bool = True
) -> go.Figure:
    """One ALiBi head: its causal bias ``−m_h·(i − j)`` and the attention pattern it alone gives.

    Parameters
    ----------
    n_heads : int
        Number of heads (1 … 128), also non-powers of two.
    seq_len : int
        Sequence length (2 … 512).
    head : int
        The head shown first (0 … n_heads − 1).
    sliders : bool
        Add a slider over the heads.

    Returns
    -------
    plotly.graph_objects.Figure
        Two heatmaps: bias (masked cells blank) and attention weights softmax(bias) per row.
    """
    n_heads = _int(n_heads, "n_heads", 1, 128)
    seq_len = _int(seq_len, "seq_len", 2, 512)
    head = _int(head, "head", 0, n_heads - 1)
    sliders = _bool(sliders, "sliders")
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.14,
        subplot_titles=("bias added to the logits", "attention weights softmax(bias)"),
    )
    state = _alibi_state(n_heads, seq_len, head)
    fig.add_trace(
        go.Heatmap(
            **state[0],
            colorscale=SEQUENTIAL_ALT,
            colorbar={"title": {"text": "bias"}, "x": 0.43, "thickness": 12},
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
            colorbar={"title": {"text": "weight"}, "thickness": 12},
        ),
        row=1,
        col=2,
    )
    for c in (1, 2):
        fig.update_xaxes(title_text="key position j", row=1, col=c)
        fig.update_yaxes(title_text="query position i", autorange="reversed", row=1, col=c)
    title = f"ALiBi with {n_heads} heads: slopes m_h form a geometric sequence"
    if sliders:
        steps = []
        for h in range(n_heads):
            st = _alibi_state(n_heads, seq_len, h)
            steps.append(
                {
                    "method": "restyle",
                    "label": str(h),
                    "args": [
                        {
                            "z": [_lists(st[0]["z"], 3), _lists(st[1]["z"], 3)],
                            "zmin": [st[0]["zmin"], 0.0],
                            "hovertemplate": [st[0]["hovertemplate"], st[1]["hovertemplate"]],
                        },
                        [0, 1],
                    ],
                }
            )
        fig.update_layout(sliders=[_slider(steps, head, "head h = ")], margin={"b": 110})
    return _style(fig, title, height=480)


# --- 6. RoPE calculator: wavelength spectrum ------------------------------------------------------


def scaled_inv_freq(
    method: str,
    dim: int,
    base: float,
    factor: float,
    train_len: int,
    abf_base: float = 500000.0,
) -> torch.Tensor:
    """The ``(dim//2,)`` inverse frequencies of an extension method (:mod:`posenc_lib.scaling`).

    ``"none"`` is plain RoPE; ``"abf"`` uses ``abf_base`` and ignores ``factor``.
    """
    method = _choice(method, "method", METHODS)
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


# --- 7. attention heatmap -------------------------------------------------------------------------


def attention_heatmap(
    weights: torch.Tensor | np.ndarray,
    tokens: Sequence[str],
    *,
    key_tokens: Sequence[str] | None = None,
    title: str = "Attention weights",
) -> go.Figure:
    """Labelled attention weights: rows are queries, columns keys (CJK tokens render).

    Parameters
    ----------
    weights : torch.Tensor or numpy.ndarray
        Shape ``(q_len, k_len)``, finite.
    tokens : sequence of str
        ``q_len`` query tokens (also the keys unless ``key_tokens`` is given).
    key_tokens : sequence of str, optional
        ``k_len`` key tokens.
    title : str
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        A heatmap on numeric axes labelled with the tokens (repeated tokens stay separate).
    """
    if not isinstance(weights, (torch.Tensor, np.ndarray)):
        raise TypeError(
            f"weights must be a torch.Tensor or numpy array, got {type(weights).__name__}"
        )
    w = _np(weights).astype(np.float64)
    if w.ndim != 2 or 0 in w.shape:
        raise ValueError(f"weights must have shape (q_len, k_len), got shape {w.shape}")
    if not np.isfinite(w).all():
        raise ValueError("weights must be finite (masked weights are 0, not -inf)")
    keys = tokens if key_tokens is None else key_tokens
    for name, toks, n in (("tokens", tokens, w.shape[0]), ("key_tokens", keys, w.shape[1])):
        if isinstance(toks, str) or not all(isinstance(t, str) for t in toks):
            raise TypeError(f"{name} must be a sequence of str, got {toks!r}")
        if len(toks) != n:
            raise ValueError(f"{name} must have {n} entries to match weights, got {len(toks)}")
    qi, kj = np.meshgrid(np.arange(w.shape[0]), np.arange(w.shape[1]), indexing="ij")
    custom = np.stack(
        (np.asarray(tokens, dtype=object)[qi], np.asarray(keys, dtype=object)[kj]), -1
    )
    small = max(w.shape) <= 16
    fig = go.Figure(
        go.Heatmap(
            z=w,
            x=np.arange(w.shape[1]),
            y=np.arange(w.shape[0]),
            customdata=custom,
            colorscale=SEQUENTIAL,
            zmin=0.0,
            zmax=max(1.0, float(w.max())),
            texttemplate="%{z:.2f}" if small else None,
            textfont={"size": 12},
            colorbar={"title": {"text": "weight"}, "thickness": 12},
            hovertemplate=(
                "query %{y} “%{customdata[0]}” → key %{x} “%{customdata[1]}”"
                "<br>weight = %{z:.3f}<extra></extra>"
            ),
        )
    )
    fig.update_layout(
        xaxis={
            "title": {"text": "key token"},
            "tickmode": "array",
            "tickvals": list(range(w.shape[1])),
            "ticktext": list(keys),
            "side": "top",
            "tickfont": {"size": 15},
        },
        yaxis={
            "title": {"text": "query token"},
            "tickmode": "array",
            "tickvals": list(range(w.shape[0])),
            "ticktext": list(tokens),
            "autorange": "reversed",
            "tickfont": {"size": 15},
        },
    )
    side = 120 + 40 * w.shape[0]
    return _style(fig, title, height=min(max(side, 320), 720))


# --- 8. rotation by e^{iθ} -----------------------------------------------------------------------


def _rotation_state(theta: float, z: complex) -> list[dict[str, Any]]:
    w = complex(_np(euler.rotate_complex(z, theta)).item())
    r = 0.35 * abs(z)
    # The arc is geometry only: it marks the angle from arg z to arg z + θ.
    a = np.linspace(np.angle(z), np.angle(z) + theta, 40)
    return [
        {
            "x": [0.0, w.real],
            "y": [0.0, w.imag],
            "hovertemplate": (
                f"z·e^(iθ) = {w.real:.3f} + {w.imag:.3f} i" f"<extra>θ = {theta:.3f}</extra>"
            ),
        },
        {"x": r * np.cos(a), "y": r * np.sin(a)},
    ]


def rotation_figure(
    theta: float = 0.5, z: complex = 1 + 0.5j, *, sliders: bool = True
) -> go.Figure:
    """A vector ``z`` and ``z·e^{iθ}`` in the complex plane: multiplying by ``e^{iθ}`` rotates by θ.

    Parameters
    ----------
    theta : float
        Rotation angle in radians (−10π … 10π).
    z : complex
        The vector to rotate (non-zero, modulus at most 100).
    sliders : bool
        Add a θ slider (0 … 2π in steps of π/12).

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: unit circle, ``z``, ``z·e^{iθ}``, the angle arc.
    """
    theta = _real(theta, "theta", -10 * math.pi, 10 * math.pi)
    if isinstance(z, bool) or not isinstance(z, numbers.Complex):
        raise TypeError(f"z must be a complex number, got {z!r} ({type(z).__name__})")
    z = complex(z)
    if not (math.isfinite(z.real) and math.isfinite(z.imag)) or z == 0 or abs(z) > 100:
        raise ValueError(f"z must be finite, non-zero and |z| <= 100, got {z}")
    sliders = _bool(sliders, "sliders")
    phi = np.linspace(0, 2 * np.pi, 121)
    lim = 1.25 * max(abs(z), 1.0)
    fig = go.Figure(
        go.Scatter(
            x=(abs(z) * np.cos(phi)).round(4),
            y=(abs(z) * np.sin(phi)).round(4),
            mode="lines",
            line={"color": GRID},
            hoverinfo="skip",
            name=f"circle |w| = |z| = {abs(z):.3g}",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[0.0, z.real],
            y=[0.0, z.imag],
            mode="lines+markers",
            name="z",
            line={"color": COLORWAY[0], "width": 3},
            marker={"size": [0, 11]},
            hovertemplate=f"z = {z.real:.3f} + {z.imag:.3f} i<extra></extra>",
        )
    )
    state = _rotation_state(theta, z)
    fig.add_trace(
        go.Scatter(
            **state[0],
            mode="lines+markers",
            name="z·e^(iθ)",
            line={"color": COLORWAY[5], "width": 3},
            marker={"size": [0, 11]},
        )
    )
    fig.add_trace(
        go.Scatter(
            **state[1],
            mode="lines",
            name="angle θ",
            line={"color": MUTED, "dash": "dot"},
            hoverinfo="skip",
        )
    )
    fig.update_layout(
        xaxis={"title": {"text": "real part"}, "range": [-lim, lim]},
        yaxis={"title": {"text": "imaginary part"}, "range": [-lim, lim], "scaleanchor": "x"},
        legend={"orientation": "h", "x": 0.0, "y": -0.15, "yanchor": "top"},
    )
    title = "Multiplying by e^(iθ) rotates z by θ and keeps its length"
    if not sliders:
        return _style(fig, title, height=520)
    thetas = _with(_THETA_GRID, theta)
    steps = []
    for th in thetas:
        st = _rotation_state(th, z)
        steps.append(
            {
                "method": "restyle",
                "label": f"{th:.2f}",
                "args": [
                    {
                        "x": [_lists(s["x"], 4) for s in st],
                        "y": [_lists(s["y"], 4) for s in st],
                        "hovertemplate": [st[0]["hovertemplate"], None],
                    },
                    [2, 3],
                ],
            }
        )
    fig.update_layout(
        sliders=[_slider(steps, thetas.index(theta), "θ (rad) = ", y=-0.26, pad_t=10)],
        margin={"b": 150},
    )
    return _style(fig, title, height=600)


# --- 9. RoPE scores under a shared shift ---------------------------------------------------------


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
            "hovertemplate": "shift t = %{x}<br>score = %{y:.4f}<extra></extra>",
        },
    ]


def rope_offset_figure(
    dim: int = 64,
    base: float = 10000.0,
    offset: int = 0,
    seed: int = 0,
    *,
    m: int = 2,
    n: int = 7,
    max_offset: int = 64,
    sliders: bool = True,
) -> go.Figure:
    """``⟨RoPE(q, m+t), RoPE(k, n+t)⟩`` as a shared shift t moves: it does not change.

    Left: pair 0 of the rotated query and key (both turn, the angle between them stays).
    Right: the score against t, and for contrast ``(q + PE(m+t))·(k + PE(n+t))``.

    Parameters
    ----------
    dim : int
        Dimension ``d`` (even, 2 … 1024).
    base : float
        Base ``b`` (> 1).
    offset : int
        The shift t shown (0 … max_offset).
    seed : int
        Seed of the random ``q`` and ``k``.
    m, n : int
        Positions of query and key before the shift (≥ 0).
    max_offset : int
        Largest shift drawn (1 … 4096).
    sliders : bool
        Add a slider over t (about 17 steps).

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: q arrow, k arrow, RoPE score curve, additive-PE curve, markers at t.
    """
    dim = _even(dim, "dim", 2, 1024)
    base = _base(base)
    max_offset = _int(max_offset, "max_offset", 1, 4096)
    offset = _int(offset, "offset", 0, max_offset)
    seed = _int(seed, "seed", 0)
    m = _int(m, "m", 0)
    n = _int(n, "n", 0)
    sliders = _bool(sliders, "sliders")
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.4, 0.6],
        horizontal_spacing=0.12,
        subplot_titles=(
            "pair 0 of RoPE(q, m+t) and RoPE(k, n+t)",
            "score against the shared shift t",
        ),
    )
    st = _offset_state(dim, base, offset, seed, m, n, max_offset)
    fig.add_trace(
        go.Scatter(
            **st[0],
            mode="lines+markers",
            name=f"q at m + t (m = {m})",
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
            name=f"k at n + t (n = {n})",
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
            name="RoPE: ⟨RoPE(q, m+t), RoPE(k, n+t)⟩",
            line={"color": COLORWAY[2], "width": 3},
            hovertemplate="t = %{x}<br>RoPE score = %{y:.6f}<extra></extra>",
        ),
        row=1,
        col=2,
    )
    fig.add_trace(
        go.Scatter(
            **st[3],
            mode="lines",
            name="added sinusoid: (q+PE(m+t))·(k+PE(n+t))",
            line={"color": COLORWAY[3], "dash": "dash"},
            hovertemplate="t = %{x}<br>score = %{y:.4f}<extra></extra>",
        ),
        row=1,
        col=2,
    )
    fig.add_trace(
        go.Scatter(
            **st[4],
            mode="markers",
            name="current shift t",
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
    fig.update_xaxes(title_text="shared shift t (positions)", row=1, col=2)
    fig.update_yaxes(title_text="attention score (logit)", row=1, col=2)
    fig.update_layout(legend={"orientation": "h", "x": 0.0, "y": -0.2, "yanchor": "top"})
    title = f"RoPE scores depend on n − m = {n - m} only: shift both positions and nothing changes"
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


# --- 10. interleaved vs half pairing --------------------------------------------------------------


def _pair_colors(half: int) -> list[str]:
    if half <= len(COLORWAY):
        return COLORWAY[:half]
    import plotly.colors as pc  # only needed for many pairs

    return pc.sample_colorscale(SEQUENTIAL, [i / (half - 1) for i in range(half)])


def _convention_state(dim: int) -> list[dict[str, Any]]:
    """Four traces: permutation lines, pair arcs, top (interleaved) and bottom (half) features."""
    perm = _np(rope.interleaved_to_half_permutation(dim)).astype(int)
    half = dim // 2
    colors = np.asarray(_pair_colors(half), dtype=object)
    feat = np.arange(dim)
    top_pair = feat // 2  # interleaved: features (2i, 2i+1) form pair i
    bottom_pair = feat % half  # half: slots (i, i + d/2) form pair i
    nan = np.full((dim, 1), np.nan)
    # Permutation lines: slot s of the half layout holds feature perm[s].
    line_x = np.hstack((perm[:, None], feat[:, None], nan)).reshape(-1)
    line_y = np.hstack((np.ones((dim, 1)), np.zeros((dim, 1)), nan)).reshape(-1)
    # Arcs joining the two members of each pair: above the top row, below the bottom row.
    u = np.linspace(0, np.pi, 16)
    i = np.arange(half)[:, None]
    arcs_x, arcs_y = [], []
    for a, b, y0, sign in ((2 * i, 2 * i + 1, 1.0, 1.0), (i, i + half, 0.0, -1.0)):
        arcs_x.append(np.hstack(((a + b) / 2 - (b - a) / 2 * np.cos(u), nan[:half])))
        arcs_y.append(np.hstack((y0 + sign * (0.08 + 0.3 * (b - a) / dim) * np.sin(u), nan[:half])))
    return [
        {"x": line_x, "y": line_y},
        {
            "x": np.concatenate(arcs_x).reshape(-1).round(3),
            "y": np.concatenate(arcs_y).reshape(-1).round(3),
        },
        {
            "x": feat,
            "y": np.ones(dim),
            "text": [str(j) for j in feat],
            "marker": {"color": colors[top_pair].tolist()},
            "customdata": top_pair,
        },
        {
            "x": feat,
            "y": np.zeros(dim),
            "text": [str(p) for p in perm],
            "marker": {"color": colors[bottom_pair].tolist()},
            "customdata": np.stack((bottom_pair, perm), 1),
        },
    ]


def _convention_traces(dim: int, visible: bool) -> list[go.Scatter]:
    st = _convention_state(dim)
    node = {
        "mode": "markers+text",
        "textposition": "middle center",
        "showlegend": False,
        "textfont": {"color": PAPER, "size": 10},
        "visible": visible,
    }
    return [
        go.Scatter(
            **st[0],
            mode="lines",
            line={"color": GRID, "width": 1.5},
            hoverinfo="skip",
            showlegend=False,
            visible=visible,
        ),
        go.Scatter(
            **st[1],
            mode="lines",
            line={"color": MUTED, "width": 1.5},
            hoverinfo="skip",
            showlegend=False,
            visible=visible,
        ),
        go.Scatter(
            **{k: v for k, v in st[2].items() if k != "marker"},
            **node,
            marker={**st[2]["marker"], "size": 20},
            hovertemplate="interleaved: feature %{x} is in pair i = %{customdata}<extra></extra>",
        ),
        go.Scatter(
            **{k: v for k, v in st[3].items() if k != "marker"},
            **node,
            marker={**st[3]["marker"], "size": 20},
            hovertemplate=(
                "half: slot %{x} holds feature %{customdata[1]}, pair i = "
                "%{customdata[0]}<extra></extra>"
            ),
        ),
    ]


def convention_pairs_figure(dim: int = 16, *, sliders: bool = True) -> go.Figure:
    """Which features rotate together: interleaved ``(2i, 2i+1)`` vs half ``(i, i + d/2)``.

    The grey lines draw ``perm = interleaved_to_half_permutation(dim)``: slot ``s`` of the half
    layout holds feature ``perm[s]``, and then both conventions rotate the same pairs.

    Parameters
    ----------
    dim : int
        Dimension ``d`` (even, 2 … 64).
    sliders : bool
        Add a dropdown over d ∈ {4, 8, 16, 32}.

    Returns
    -------
    plotly.graph_objects.Figure
        Top row: features in the interleaved layout; bottom row: the half layout.
    """
    dim = _even(dim, "dim", 2, 64)
    sliders = _bool(sliders, "sliders")
    dims = [int(d) for d in _with((4, 8, 16, 32), dim)] if sliders else [dim]
    fig = go.Figure()
    counts = []
    for d in dims:
        traces = _convention_traces(d, d == dim)
        counts.append(len(traces))
        fig.add_traces(traces)
    fig.update_layout(
        xaxis={
            "title": {"text": "feature index (top) / slot in the half layout (bottom)"},
            "showgrid": False,
            "zeroline": False,
        },
        yaxis={
            "tickmode": "array",
            "tickvals": [0, 1],
            "range": [-0.55, 1.55],
            "ticktext": ["half: (i, i + d/2)", "interleaved: (2i, 2i+1)"],
            "showgrid": False,
            "zeroline": False,
        },
    )
    title = f"Two ways to pair features (d = {dim}); lines: the permutation between them"
    if sliders and len(dims) > 1:
        buttons = []
        for d in dims:
            vis = [dd == d for dd, c in zip(dims, counts, strict=True) for _ in range(c)]
            buttons.append(
                {
                    "method": "update",
                    "label": f"d = {d}",
                    "args": [
                        {"visible": vis},
                        {
                            "title.text": f"Two ways to pair features (d = {d}); lines: the "
                            "permutation "
                            "between them"
                        },
                    ],
                }
            )
        fig.update_layout(updatemenus=[_buttons(buttons, dims.index(dim))])
    return _style(fig, title, height=380)
