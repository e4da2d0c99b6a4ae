"""Chapter 2's figures: what each candidate encoding does with length and with offsets.

- :func:`length_lines`: one feature of the integer and the normalised code against the position,
  for several sequence lengths (the integer code is length-free but unbounded, the normalised one
  bounded but different at every length);
- :func:`similarity_maps`: ``PE·PEᵀ`` per scheme; constant diagonals are translation invariance
  (wish 5);
- :func:`counter_maps`: the binary counter as ±1, the same counter with its corners rounded off
  (``sin(π(m + ½)/2^j)``), and the sinusoidal table, on one colour scale.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from .. import schemes
from ..sinusoidal import sinusoidal_table
from ._checks import _int, _np
from ._style import COLORWAY, DIVERGING, _style

__all__ = [
    "counter_maps",
    "length_lines",
    "rounded_counter",
    "similarity_maps",
]

_DASHES = ("solid", "dot", "dash", "dashdot", "longdash", "longdashdot")
_MAX_MAP = 128  # positions per similarity map: 5 maps of 128² stay well under the page budget


def length_lines(lengths: Sequence[int] = (10, 100, 1000)) -> go.Figure:
    """Feature 0 of the integer code ``m`` and the normalised code ``m/(L − 1)`` against ``m``.

    One colour and one dash style per length, the same in both panels and the legend. Both x axes
    are logarithmic, so the lines start at ``m = 1`` (``m = 0`` has no place on a log axis).

    Parameters
    ----------
    lengths : sequence of int
        One to six sequence lengths ``L``, each 2 … 4096.

    Returns
    -------
    plotly.graph_objects.Figure
        Two panels (integer, normalised), one line per length, positions ``1 … L − 1``.
    """
    if isinstance(lengths, (str, bytes)) or not isinstance(lengths, Sequence):
        raise TypeError("lengths must be a sequence of ints")
    if not 1 <= len(lengths) <= 6:
        raise ValueError(f"lengths must hold 1 to 6 lengths, got {len(lengths)}")
    lengths = [_int(n, "lengths", 2, 4096) for n in lengths]
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.12,
        subplot_titles=("integer: PE(m) = m", "normalised: PE(m) = m / (L − 1)"),
    )
    for i, n in enumerate(lengths):
        m = np.arange(1, n)
        for col, table in (
            (1, schemes.integer_encoding(n, 1)),
            (2, schemes.normalized_encoding(n, 1)),
        ):
            fig.add_trace(
                go.Scatter(
                    x=m,
                    y=np.round(_np(table)[1:, 0].astype(np.float64), 5),
                    mode="lines",
                    name=f"L = {n}",
                    legendgroup=str(n),
                    showlegend=col == 1,
                    # thicker first lines, so lines that coincide stay visible under later ones
                    line={
                        "width": 2 + (len(lengths) - 1 - i),
                        "dash": _DASHES[i],
                        "color": COLORWAY[i],
                    },
                    hovertemplate=f"L = {n}<br>m = %{{x}}<br>PE = %{{y:.4g}}<extra></extra>",
                ),
                row=1,
                col=col,
            )
    fig.update_xaxes(title_text="position m (log axis)", type="log")
    fig.update_yaxes(title_text="PE(m), feature 0", type="log", row=1, col=1)
    fig.update_yaxes(title_text="PE(m), feature 0", range=[0, 1.05], row=1, col=2)
    fig.update_layout(legend={"orientation": "h", "y": -0.25, "x": 0.0}, margin={"b": 110})
    return _style(fig, "The same position, different lengths", height=420)


def similarity_maps(tables: Mapping[str, torch.Tensor | np.ndarray], *, cols: int = 3) -> go.Figure:
    """``PE(m)·PE(n) / max_m ‖PE(m)‖²`` for each table, one heatmap per scheme, shared colours.

    Each map has square cells (its y axis is anchored to its x axis), so diagonals run at 45°, and
    axis titles and ticks name the positions: ``m`` down the rows, ``n`` across the columns.

    Parameters
    ----------
    tables : mapping of str to tensor
        Name → ``(seq, dim)`` table, one to six of them, ``seq <= 128``, not all zero.
    cols : int
        Panels per row (1 … 3).

    Returns
    -------
    plotly.graph_objects.Figure
        One ``(seq, seq)`` heatmap per table, colour range fixed to [−1, 1].
    """
    if not isinstance(tables, Mapping) or not 1 <= len(tables) <= 6:
        raise ValueError("tables must be a mapping of 1 to 6 names to (seq, dim) tables")
    cols = _int(cols, "cols", 1, 3)
    rows = -(-len(tables) // cols)
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=list(tables),
        horizontal_spacing=0.06,
        vertical_spacing=0.12,
    )
    for k, (name, table) in enumerate(tables.items()):
        t = np.asarray(_np(table), dtype=np.float64)
        if t.ndim != 2 or not 2 <= t.shape[0] <= _MAX_MAP:
            raise ValueError(
                f"tables[{name!r}] must be (seq, dim) with 2 <= seq <= {_MAX_MAP}, "
                f"got shape {t.shape}"
            )
        norm_sq = float((t * t).sum(-1).max())
        if norm_sq == 0.0:
            raise ValueError(f"tables[{name!r}] must not be all zeros")
        sim = t @ t.T / norm_sq
        fig.add_trace(
            go.Heatmap(
                z=np.round(sim, 3),
                colorscale=DIVERGING,
                zmid=0.0,
                zmin=-1.0,
                zmax=1.0,
                showscale=k == 0,
                colorbar={"title": {"text": "PE·PE / max‖PE‖²"}, "thickness": 12, "len": 0.6},
                hovertemplate=(
                    f"{name}<br>m = %{{y}}, n = %{{x}}<br>similarity = %{{z:.3f}}<extra></extra>"
                ),
            ),
            row=k // cols + 1,
            col=k % cols + 1,
        )
        anchor = "x" if k == 0 else f"x{k + 1}"
        fig.update_yaxes(
            scaleanchor=anchor,
            scaleratio=1,
            constrain="domain",
            autorange="reversed",
            title_text="position m" if k % cols == 0 else None,
            row=k // cols + 1,
            col=k % cols + 1,
        )
        fig.update_xaxes(
            constrain="domain", title_text="position n", row=k // cols + 1, col=k % cols + 1
        )
    fig.update_xaxes(showticklabels=True, nticks=4)
    fig.update_yaxes(showticklabels=True, nticks=4)
    return _style(
        fig, "PE(m)·PE(n): constant diagonals = translation invariance", height=320 * rows + 80
    )


def rounded_counter(seq_len: int, bits: int) -> np.ndarray:
    """``sin(π (m + ½) / 2^j)`` for ``m < seq_len``, ``j < bits``: a smooth wave per binary digit.

    Its sign is ``1 − 2·bit_j(m)`` — the binary counter's digit ``j`` as ±1 — so it is the
    binary counter with its corners rounded off: frequencies ``θ_j = π / 2^j``, halving from
    digit to digit.

    Parameters
    ----------
    seq_len : int
        Number of positions (1 … 4096).
    bits : int
        Number of digits (1 … 16).

    Returns
    -------
    numpy.ndarray
        ``(seq_len, bits)`` float64 array with entries in ``[−1, 1]``.
    """
    seq_len = _int(seq_len, "seq_len", 1, 4096)
    bits = _int(bits, "bits", 1, 16)
    m = np.arange(seq_len, dtype=np.float64)[:, None]
    return np.sin(np.pi * (m + 0.5) / 2.0 ** np.arange(bits))


def counter_maps(
    seq_len: int = 64, bits: int = 6, dim: int = 16, base: float = 10000.0
) -> go.Figure:
    """Three position × feature tables side by side, one colour scale ``[−1, 1]``.

    Left, the binary counter ``1 − 2·bit_j(m)``; middle, :func:`rounded_counter`; right, the
    sinusoidal table (``sin, cos`` of ``m·base^(−2i/dim)``, interleaved).

    Parameters
    ----------
    seq_len : int
        Positions (2 … 128), one row each.
    bits : int
        Binary digits (1 … 16) of the first two panels.
    dim : int
        Features of the sinusoidal table (even, 2 … 64).
    base : float
        Base of the sinusoidal table (> 1).

    Returns
    -------
    plotly.graph_objects.Figure
        Three heatmaps, rows = positions ``m`` (top to bottom), columns = features.
    """
    seq_len = _int(seq_len, "seq_len", 2, _MAX_MAP)
    bits = _int(bits, "bits", 1, 16)
    dim = _int(dim, "dim", 2, 64)
    if dim % 2:
        raise ValueError(f"dim must be even, got {dim}")
    if isinstance(base, bool) or not isinstance(base, (int, float)) or not base > 1:
        raise ValueError(f"base must be a number > 1, got {base!r}")
    m = np.arange(seq_len)
    binary = 1.0 - 2.0 * ((m[:, None] >> np.arange(bits)) & 1)
    sinusoid = _np(sinusoidal_table(seq_len, dim, float(base), dtype=torch.float64))
    panels = {
        "binary digits, 1 − 2·bit": binary,
        "smoothed: sin(π(m + ½)/2ʲ)": rounded_counter(seq_len, bits),
        f"sinusoidal, b = {base:g}": np.asarray(sinusoid, dtype=np.float64),
    }
    fig = make_subplots(rows=1, cols=3, subplot_titles=list(panels), horizontal_spacing=0.07)
    for k, (name, table) in enumerate(panels.items()):
        fig.add_trace(
            go.Heatmap(
                z=np.round(table, 3),
                colorscale=DIVERGING,
                zmid=0.0,
                zmin=-1.0,
                zmax=1.0,
                showscale=k == 2,
                colorbar={"thickness": 12, "len": 0.7},
                hovertemplate=f"{name}<br>m = %{{y}}, feature %{{x}}<br>%{{z:.3f}}<extra></extra>",
            ),
            row=1,
            col=k + 1,
        )
        fig.update_xaxes(title_text="feature", row=1, col=k + 1)
    fig.update_yaxes(autorange="reversed")
    fig.update_yaxes(title_text="position m", row=1, col=1)
    return _style(fig, "A binary counter, smoothed, and the sinusoid", height=460)
