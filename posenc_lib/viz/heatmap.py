"""The encoding heatmap: position × dimension tables of the sinusoidal and naive schemes."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import plotly.graph_objects as go

from .. import schemes, sinusoidal
from ._checks import _base, _bool, _choice, _even, _fmt, _int, _lists, _np
from ._style import (
    BASE_GRID,
    DIM_GRID,
    DIVERGING,
    SEQUENTIAL,
    SEQUENTIAL_ALT,
    _buttons,
    _slider,
    _style,
    _with,
)

__all__ = [
    "SCHEMES",
    "encoding_heatmap",
    "heatmap_static_rows",
]


SCHEMES = ("sinusoidal", "integer", "normalized", "binary")

# Static heatmaps show at most this many rows and (sin, cos) pairs per slider step. The rows are
# consecutive positions (the first and the last _MAX_ROWS // 2), never every k-th position: a
# strided sample aliases (bit 0 of the binary code, or a pair turning one radian per position,
# sampled every other row looks constant or slow).
_MAX_ROWS = 64
_GAP_LABEL = "⋮"
_MAX_PAIRS = 32
# The naive schemes' static figure: a slider over the sequence length L, the knob they depend on
# (integer: the values grow with L; normalised: the step 1/(L − 1) shrinks; binary: more bits).
LENGTH_GRID = (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096)
_MAX_NAIVE_COLUMNS = 32


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
            "position m = %{y}<br>dimension index %{x}<br>PE = %{z:.3f}"
            f"<extra>{inputs}</extra>"
        )
    return (
        "position m = %{y}<br>dimension index %{x}<br>value = %{z:.3g}" f"<extra>{scheme}</extra>"
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
    """Positions a static heatmap step shows: all of them up to 64, else the first and last 32.

    Both windows are consecutive positions, so no pattern is aliased by sampling (a strided sample
    would make a column that flips at every position look constant).

    Parameters
    ----------
    seq_len : int
        Number of positions of the table, 1 … 4096.

    Returns
    -------
    numpy.ndarray
        ``(min(seq_len, 64),)`` increasing integer positions.
    """
    seq_len = _int(seq_len, "seq_len", 1, 4096)
    if seq_len <= _MAX_ROWS:
        return np.arange(seq_len)
    half = _MAX_ROWS // 2
    return np.concatenate((np.arange(half), np.arange(seq_len - half, seq_len)))


def _row_labels(rows: np.ndarray) -> list[str]:
    """Category labels of the shown rows, with a gap row where positions are skipped."""
    labels: list[str] = []
    for k, m in enumerate(rows.tolist()):
        if k and m != rows[k - 1] + 1:
            labels.append(_GAP_LABEL)
        labels.append(str(m))
    return labels


def _with_gap(z: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``z`` (a row per shown position) plus a NaN row (drawn blank) where positions are skipped."""
    jumps = [k for k in range(1, len(rows)) if rows[k] != rows[k - 1] + 1]
    return np.insert(np.asarray(z, dtype=np.float64), jumps, np.nan, axis=0)


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
        "sinusoidal": "Sinusoidal encoding PE(m)₂ᵢ = sin(m·b^(−2i/d)), PE(m)₂ᵢ₊₁ = cos(…)",
        "integer": "Integer encoding: PE(m) = m in every feature (unbounded)",
        "normalized": "Normalised encoding: PE(m) = m / (L − 1) (step depends on L)",
        "binary": "Binary encoding: feature j holds bit j of m (jumpy)",
    }[scheme]
    fig = go.Figure()
    layout: dict[str, Any] = {
        "xaxis": {"title": {"text": f"dimension index (d = {dim})"}},
        "yaxis": {"title": {"text": "position m"}, "autorange": "reversed"},
    }
    colorbar = {"title": {"text": "PE" if scheme == "sinusoidal" else "value"}, "thickness": 14}
    if not sliders:
        (props,) = _heatmap_state(seq_len, dim, base, scheme)
        fig.add_trace(go.Heatmap(**props, colorbar=colorbar))
        fig.update_layout(**layout)
        return _style(fig, title)
    if scheme != "sinusoidal":
        return _naive_heatmap_with_length_slider(fig, seq_len, dim, scheme, title, colorbar, layout)

    rows = heatmap_static_rows(seq_len)
    dims = [int(d) for d in _with(DIM_GRID, dim) if d <= 4096]
    bases = _with(BASE_GRID, base)
    # Group dimensions whose sampled pairs have the same 2i/d: their columns hold identical values
    # (θ_i = b^(-2i/d)), so one z array per base serves the whole group and only x changes.
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
        table = _encoding_table("sinusoidal", seq_len, d, b)
        return _with_gap(table[rows][:, _pair_columns(pairs_of[d])], rows)

    for g in range(len(group_dims)):
        d_show = dim if group_of[dim] == g else group_dims[g][0]
        fig.add_trace(
            go.Heatmap(
                z=_lists(z_for(g, base), 4),
                x=_pair_columns(pairs_of[d_show]),
                y=_row_labels(rows),
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
                    # restate the categorical y-axis: an "update" otherwise lets plotly re-guess
                    # it as linear, which opens a blank band where rows are skipped
                    {"xaxis.title.text": _heatmap_xtitle(d, len(pairs_of[d])),
                     "yaxis.type": "category", "yaxis.autorange": "reversed"},
                    list(range(n)),
                ],
            }
        )
    layout["xaxis"]["title"]["text"] = _heatmap_xtitle(dim, len(pairs_of[dim]))
    layout["yaxis"].update(_static_yaxis(seq_len))
    fig.update_layout(
        **layout,
        sliders=[_slider(steps, bases.index(base), "base b = ")],
        updatemenus=[_buttons(buttons, dims.index(dim))],
        margin={"b": 120},
    )
    return _style(fig, title, height=540)


def _static_yaxis(seq_len: int) -> dict[str, Any]:
    """Categorical position axis: the shown rows stay adjacent, with a blank row at the gap."""
    shown = len(heatmap_static_rows(seq_len))
    text = "position m" if shown == seq_len else (
        f"position m (first and last {_MAX_ROWS // 2} of {seq_len}, consecutive)"
    )
    return {"type": "category", "title": {"text": text}}


def _heatmap_xtitle(dim: int, shown_pairs: int) -> str:
    if shown_pairs == dim // 2:
        return f"dimension index (d = {dim})"
    return f"dimension index (d = {dim}; {shown_pairs} of {dim // 2} pairs shown)"


def _naive_heatmap_with_length_slider(
    fig: go.Figure,
    seq_len: int,
    dim: int,
    scheme: str,
    title: str,
    colorbar: dict[str, Any],
    layout: dict[str, Any],
) -> go.Figure:
    """Integer, normalised or binary table with a static slider over the sequence length."""
    columns = np.arange(min(dim, _MAX_NAIVE_COLUMNS))
    lengths = [
        int(L) for L in _with(LENGTH_GRID, seq_len) if scheme != "binary" or L <= 2**dim
    ]

    def state(length: int) -> dict[str, Any]:
        rows = heatmap_static_rows(length)
        z = _encoding_table(scheme, length, dim, 1.0)[rows][:, columns]  # (rows, columns)
        return {"z": _with_gap(z, rows), "y": _row_labels(rows), **_heatmap_colors(scheme, length)}

    first = state(seq_len)
    first["z"] = _lists(first["z"], 4)
    fig.add_trace(
        go.Heatmap(
            **first,
            x=columns,
            hovertemplate=_heatmap_hover(scheme, 1.0, dim),
            colorbar=colorbar,
        )
    )
    steps = []
    for length in lengths:
        st = state(length)
        steps.append(
            {
                "method": "restyle",
                "label": str(length),
                "args": [
                    {"z": [_lists(st["z"], 4)], "y": [st["y"]], "zmax": [st["zmax"]]},
                    [0],
                ],
            }
        )
    shown = "" if len(columns) == dim else f"; first {len(columns)} of {dim} shown"
    layout["xaxis"]["title"]["text"] = f"dimension index (d = {dim}{shown})"
    # The slider changes L, so the axis title names the window rule, not one length.
    layout["yaxis"].update(type="category", title={
        "text": f"position m (at most the first and last {_MAX_ROWS // 2}, consecutive)"
    })
    fig.update_layout(
        **layout,
        sliders=[_slider(steps, lengths.index(seq_len), "sequence length L = ")],
        margin={"b": 120},
    )
    return _style(fig, title, height=500)
