"""Chapter 2's figures: what each candidate encoding does with length and with offsets.

- :func:`length_lines`: one feature of the integer and the normalised code against the position,
  for several sequence lengths (the integer code is length-free but unbounded, the normalised one
  bounded but different at every length);
- :func:`similarity_maps`: ``PE·PEᵀ`` per scheme; constant diagonals are translation invariance
  (wish 5);
- :func:`counter_maps`: the binary counter as ±1, the same counter with its corners rounded off
  (``sin(π(m + ½)/2^j)``), and the sinusoidal table, on one colour scale;
- :func:`octave_decay_figure`: the similarity ``g(r) = PE(0)·PE(r) / ‖PE(0)‖²`` of sine–cosine
  pairs against the offset (log axis), for several sets of frequencies, with its mean over each
  octave ``2^k <= r < 2^(k+1)`` drawn as steps (wish 4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from .. import schemes
from ..sinusoidal import sinusoidal_table
from ._checks import _int, _np
from ._style import COLORWAY, DIVERGING, _buttons, _style

__all__ = [
    "counter_maps",
    "length_lines",
    "octave_decay_figure",
    "rounded_counter",
    "similarity_maps",
]

_DASHES = ("solid", "dot", "dash", "dashdot", "longdash", "longdashdot")
# octave_decay_figure's sets: Okabe-Ito without sky blue (too close to the first blue) and yellow
_SET_COLOURS = (COLORWAY[0], COLORWAY[1], COLORWAY[2], COLORWAY[3], COLORWAY[5], COLORWAY[7])
_MAX_MAP = 128  # positions per similarity map: 5 maps of 128² stay well under the page budget
_MAX_OCTAVES = 16  # offsets up to 2^16 − 1
_MAX_PAIRS = 2048  # frequencies per set (a d = 4096 table)
_CHUNK = 4096  # offsets per block when summing cos(rθ_i), so memory stays O(_CHUNK · pairs)


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
        One ``(seq, seq)`` heatmap per table, colour range fixed to [−1, 1]. Grid cells after the
        last table (five tables on a 2 × 3 grid) are left without axes.
    """
    if not isinstance(tables, Mapping) or not 1 <= len(tables) <= 6:
        raise ValueError("tables must be a mapping of 1 to 6 names to (seq, dim) tables")
    cols = _int(cols, "cols", 1, 3)
    rows = -(-len(tables) // cols)
    # Cells past the last table get no axes at all (an empty frame would read as a missing map).
    specs: list[list[dict[str, Any] | None]] = [
        [{} if r * cols + c < len(tables) else None for c in range(cols)] for r in range(rows)
    ]
    fig = make_subplots(
        rows=rows,
        cols=cols,
        specs=specs,
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


def _pair_similarity(theta: np.ndarray, n_offsets: int) -> np.ndarray:
    """``g(r) = mean_i cos(r θ_i)`` for ``r = 0 … n_offsets − 1``, float64, in blocks of offsets."""
    g = np.empty(n_offsets, dtype=np.float64)
    for start in range(0, n_offsets, _CHUNK):
        r = np.arange(start, min(start + _CHUNK, n_offsets), dtype=np.float64)
        g[start : start + len(r)] = np.cos(r[:, None] * theta[None, :]).mean(-1)
    return g


def _min_max_offsets(g: np.ndarray, octaves: int, points_per_octave: int) -> np.ndarray:
    """Offsets ``r >= 1`` to draw: every one in a short octave; in a long one, the smallest and the
    largest ``g`` of each of ``points_per_octave / 2`` runs of consecutive offsets (min–max
    decimation: every kept point is an exact ``g(r)``, and the band it draws is that of all ``r``).
    """
    keep: list[np.ndarray] = []
    for k in range(octaves):
        r = np.arange(2**k, 2 ** (k + 1))
        if len(r) <= points_per_octave:
            keep.append(r)
            continue
        for run in np.array_split(r, points_per_octave // 2):
            lo, hi = run[np.argmin(g[run])], run[np.argmax(g[run])]
            keep.append(np.array(sorted({int(lo), int(hi)})))
    return np.concatenate(keep)


def octave_decay_figure(
    frequencies: Mapping[str, torch.Tensor | np.ndarray | Sequence[float]],
    *,
    octaves: int = 15,
    points_per_octave: int = 256,
    line: str | None = None,
) -> go.Figure:
    """The similarity ``g(r) = PE(0)·PE(r) / ‖PE(0)‖²`` of sine–cosine pairs against the offset
    ``r`` (log axis), one set of frequencies per colour, with its mean over each octave as steps.

    For a table of pairs ``(sin rθ_i, cos rθ_i)``, ``‖PE(0)‖² = d/2`` and ``g(r)`` is the mean of
    ``cos(r θ_i)`` over the pairs: the scale-free dot product at offset ``r``, the same at every
    position (translation invariance). Every set gets a thick step, its mean over every octave
    ``2^k <= r < 2^(k+1)``, ``k = 0 … octaves − 1`` (click a legend entry to hide it, double-click
    to keep it alone), and a thin line, ``g(r)`` itself; one set's line is drawn at a time, chosen
    from the menu, because several oscillating lines hide each other.

    Where an octave holds more offsets than ``points_per_octave``, the thin line is min–max
    decimated: in each of ``points_per_octave / 2`` runs of consecutive offsets it keeps the offsets
    of the smallest and the largest ``g``. Every drawn point is an exact ``(r, g(r))``, and the
    band the line sweeps is that of every offset. The steps are means over *every* offset of their
    octave.

    Parameters
    ----------
    frequencies : mapping of str to 1-D tensor, array or sequence of float
        Name → angles per position ``θ_i`` (radians), shape ``(d/2,)``: one to six sets, each of
        1 … 2048 finite numbers. Sets may differ in size (a ``d = 16`` and a ``d = 512`` table).
    octaves : int
        Number of octaves, 1 … 16: offsets ``1 … 2^octaves − 1``.
    points_per_octave : int
        Even, 8 … 4096: the most points a thin line keeps per octave.
    line : str or None
        The set whose thin line is drawn first (a key of ``frequencies``); ``None``: the first.

    Returns
    -------
    plotly.graph_objects.Figure
        Per set, in the mapping's order, two traces: the line (``x`` = offsets ``r``, ``y`` =
        ``g(r)``, shape ``(points,)``; visible for ``line`` only) and the steps
        (``x = 2^0 … 2^octaves``, shape ``(octaves + 1,)``; ``y`` = the octave means, the last
        repeated to close the step, drawn with ``line_shape = "hv"``). A dropdown menu picks the
        line.
    """
    if not isinstance(frequencies, Mapping) or not 1 <= len(frequencies) <= len(_DASHES):
        raise ValueError("frequencies must be a mapping of 1 to 6 names to 1-D angle arrays")
    octaves = _int(octaves, "octaves", 1, _MAX_OCTAVES)
    points_per_octave = _int(points_per_octave, "points_per_octave", 8, 4096)
    if points_per_octave % 2:
        raise ValueError(f"points_per_octave must be even, got {points_per_octave}")
    sets: dict[str, np.ndarray] = {}
    for name, theta in frequencies.items():
        if not isinstance(name, str):
            raise ValueError(f"frequencies must be keyed by names (str), got {name!r}")
        try:
            raw = _np(theta) if isinstance(theta, torch.Tensor) else theta
            t = np.asarray(raw, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise ValueError(f"frequencies[{name!r}] must be a 1-D array of numbers") from err
        if t.ndim != 1 or not 1 <= t.size <= _MAX_PAIRS or not np.isfinite(t).all():
            raise ValueError(
                f"frequencies[{name!r}] must be 1-D with 1 … {_MAX_PAIRS} finite angles, "
                f"got shape {t.shape}"
            )
        sets[name] = t
    names = list(sets)
    if line is None:
        line = names[0]
    if line not in sets:
        raise ValueError(f"line must be one of the names in frequencies, got {line!r}")
    n_offsets = 2**octaves
    edges = 2 ** np.arange(octaves + 1)
    octave_text = [f"{edges[k]} ≤ r < {edges[k + 1]}" for k in range(octaves)]
    fig = go.Figure()
    for i, (name, theta) in enumerate(sets.items()):
        g = _pair_similarity(theta, n_offsets)
        r = _min_max_offsets(g, octaves, points_per_octave)
        means = np.array([g[edges[k] : edges[k + 1]].mean() for k in range(octaves)])
        colour = _SET_COLOURS[i]
        fig.add_trace(
            go.Scatter(
                x=r,
                y=g[r],
                mode="lines",
                name=f"g(r), {name}",
                showlegend=False,
                visible=name == line,
                line={"color": colour, "width": 1},
                hovertemplate=f"{name}<br>r = %{{x}}<br>g(r) = %{{y:.3f}}<extra></extra>",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=edges,
                y=np.append(means, means[-1]),
                mode="lines",
                line_shape="hv",
                name=name,
                line={"color": colour, "width": 3.5, "dash": _DASHES[i]},
                customdata=[*octave_text, octave_text[-1]],
                hovertemplate=f"{name}<br>mean over %{{customdata}}: %{{y:.3f}}<extra></extra>",
            )
        )
    lines = list(range(0, 2 * len(names), 2))  # the thin lines' trace indices
    buttons = [
        {
            "label": f"thin line: {name}",
            "method": "restyle",
            "args": [{"visible": [other == name for other in names]}, lines],
        }
        for name in names
    ]
    fig.update_xaxes(title_text="offset r (log axis)", type="log", range=[0, octaves * np.log10(2)])
    fig.update_yaxes(title_text="g(r) = PE(0)·PE(r) / ‖PE(0)‖²", range=[-1.05, 1.05])
    fig.update_layout(
        updatemenus=[_buttons(buttons, names.index(line))],
        legend={"orientation": "h", "x": 0.0, "xanchor": "left", "y": -0.18, "yanchor": "top"},
        margin={"t": 90, "b": 150},
    )
    title = "Similarity by offset: thin g(r), thick its mean over each octave"
    return _style(fig, title, height=600)
