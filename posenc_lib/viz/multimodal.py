"""Positions beyond a line: which axis each frequency reads, 2-D scores, multimodal position ids."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from .. import multimodal as mm
from .. import rope
from ._checks import _base, _bool, _even, _fmt, _int, _lists, _np, _seed
from ._style import COLORWAY, INK, _slider, _style

__all__ = [
    "IMAGE_SIZES",
    "MROPE_MODELS",
    "mrope_axes_figure",
    "mrope_fastest_turn_figure",
    "mrope_section_grid",
    "mrope_sections_figure",
    "position_ids_figure",
    "rope_2d_scores_figure",
    "rope_2d_similarity_figure",
]

MROPE_MODELS: tuple[tuple[str, tuple[int, int, int], bool, float], ...] = (
    ("Qwen2-VL / 2.5-VL", (16, 24, 24), False, 1e6),
    ("Qwen3-VL (MRoPE-I)", (24, 20, 20), True, 5e6),
)
"""``(label, mrope_section, interleaved, rope_theta)`` of the released checkpoints.

Qwen2-VL-7B-Instruct and Qwen2.5-VL-7B-Instruct: ``rope_theta`` 1 000 000 (also transformers'
default); Qwen3-VL-8B-Instruct and the other Qwen3-VL dense checkpoints: 5 000 000, ten times
transformers 5.25's default ``Qwen3VLTextConfig`` (500 000).
"""

IMAGE_SIZES: tuple[tuple[int, int], ...] = (
    (2, 2), (4, 4), (4, 8), (8, 4), (8, 8), (4, 12), (12, 4), (12, 12),
)
"""Image grids ``(h, w)`` in patches offered by the slider of :func:`position_ids_figure`."""

_AXIS_COLOURS = (COLORWAY[5], COLORWAY[0], COLORWAY[2])  # t, h, w


def mrope_axes_figure(
    models: Sequence[tuple[Any, ...]] = MROPE_MODELS, base: float = 1e6
) -> go.Figure:
    """Which position id (t, h or w) each frequency pair of M-RoPE reads, one row per model.

    Parameters
    ----------
    models : sequence of (str, sequence of int, bool[, float])
        ``(label, mrope_section, interleaved[, rope_theta])``; all sections must have the same
        sum ``dim/2``. A row's ``rope_theta`` sets the wavelengths in its hover text.
    base : float
        RoPE base of the rows that give none (> 1).

    Returns
    -------
    plotly.graph_objects.Figure
        One heatmap: rows = models, columns = frequency pairs, colour = axis.
    """
    base = _base(base)
    if isinstance(models, (str, bytes)) or not isinstance(models, Sequence) or not models:
        raise TypeError(
            "models must be a non-empty sequence of (label, mrope_section, interleaved)"
        )
    if len(models) > 16:
        raise ValueError(f"models must hold at most 16 rows, got {len(models)}")
    for i, row in enumerate(models):
        if not isinstance(row, tuple) or len(row) not in (3, 4):
            raise TypeError(
                f"models[{i}] must be a tuple (label, mrope_section, interleaved[, rope_theta]), "
                f"got {row!r}"
            )
    maps = [mm.mrope_axis_map(row[1], interleaved=row[2]) for row in models]
    n = maps[0].shape[0]
    if any(m.shape[0] != n for m in maps):
        raise ValueError("models must share one head size: every sum(mrope_section) must be equal")
    labels = [str(row[0]) for row in models]
    bases = [_base(row[3], f"models[{i}] rope_theta") if len(row) == 4 else base
             for i, row in enumerate(models)]
    z = np.stack([_np(m) for m in maps]).astype(float)
    custom = np.stack([_np(2 * np.pi / rope.rope_inv_freq(2 * n, b)) for b in bases])
    text = [[mm.MROPE_AXES[int(a)] for a in m] for m in maps]
    colorscale = []
    for a, colour in enumerate(_AXIS_COLOURS):
        colorscale += [[a / 3, colour], [(a + 1) / 3, colour]]
    fig = go.Figure(
        go.Heatmap(
            z=z, x=list(range(n)), y=labels, text=text,
            customdata=custom, zmin=-0.5, zmax=2.5, colorscale=colorscale, xgap=1, ygap=4,
            colorbar={"tickvals": [0, 1, 2], "ticktext": ["t (time)", "h (height)", "w (width)"],
                      "len": 0.9, "thickness": 12},
            hovertemplate="%{y}<br>pair %{x} reads %{text}<br>wavelength %{customdata:.4g} "
                          "positions<extra></extra>",
        )
    )
    fig.update_xaxes(title_text="frequency pair i (fast → slow)")
    fig.update_yaxes(autorange="reversed")
    return _style(fig, "Which position id each frequency pair reads", height=140 + 70 * len(labels))


def _similarity_state(dim: int, base: float, max_offset: int, seed: int) -> list[dict[str, Any]]:
    offsets = torch.arange(-max_offset, max_offset + 1, dtype=torch.float64)
    axial = mm.rope_2d_similarity(offsets, offsets, *mm.axial_rope_frequencies(dim, base))
    mixed = mm.rope_2d_similarity(
        offsets, offsets, *mm.rope_mixed_frequencies(dim, base, seed=seed))
    return [{"z": _lists(_np(axial), 3)}, {"z": _lists(_np(mixed), 3)}]


def _mixed_direction(dim: int, base: float, seed: int) -> float:
    """RoPE-Mixed's random direction φ in degrees: the first pair's ``(f_row, f_col)`` angle."""
    f_row, f_col = mm.rope_mixed_frequencies(dim, base, seed=seed)
    return math.degrees(math.atan2(f_row[0].item(), f_col[0].item()))


def _direction_label(phi: float) -> str:
    return f"φ = {phi:.1f}° ({phi % 90:.1f}° mod 90°)"


def rope_2d_similarity_figure(
    dim: int = 64,
    base: float = 100.0,
    max_offset: int = 12,
    seed: int = 0,
    *,
    sliders: bool = True,
) -> go.Figure:
    """The 2-D RoPE similarity over a grid of offsets ``(Δy, Δx)``: axial against RoPE-Mixed.

    Each cell is :func:`posenc_lib.multimodal.rope_2d_similarity`, the mean over pairs of
    ``cos(Δy·f^row_i + Δx·f^col_i)`` with ``(Δy, Δx)`` = query minus key: axial RoPE
    (``"blocks"``) on the left, RoPE-Mixed at its random initialisation on the right.

    Parameters
    ----------
    dim : int
        Head dimension (multiple of 4, 4 … 512).
    base : float
        Base of both frequency sets (> 1).
    max_offset : int
        Largest offset drawn on each axis (1 … 64); each panel is ``(2·max_offset + 1)`` square.
    seed : int
        Seed of RoPE-Mixed's random direction φ.
    sliders : bool
        Add a slider over the directions φ of 8 seeds (0 … 7 and ``seed``), ordered by φ mod 90°
        and labelled by φ.

    Returns
    -------
    plotly.graph_objects.Figure
        Two heatmaps sharing one colour scale, from the smallest value of any panel or slider
        step up to 1.
    """
    dim = _even(dim, "dim", 4, 512)
    if dim % 4:
        raise ValueError(f"dim must be a multiple of 4, got {dim}")
    base = _base(base)
    max_offset = _int(max_offset, "max_offset", 1, 64)
    seed = _seed(seed)
    sliders = _bool(sliders, "sliders")
    offsets = list(range(-max_offset, max_offset + 1))
    state = _similarity_state(dim, base, max_offset, seed)
    seeds = sorted(set(range(8)) | {seed}) if sliders else [seed]
    phis = {s: _mixed_direction(dim, base, s) for s in seeds}
    seeds.sort(key=lambda s: (phis[s] % 90, s))
    mixed_z = {s: _similarity_state(dim, base, max_offset, s)[1]["z"] for s in seeds}
    zmin = min(min(map(min, z)) for z in [state[0]["z"], *mixed_z.values()])
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=("axial", "RoPE-Mixed (initial)"))
    for col, props in enumerate(state, start=1):
        fig.add_trace(
            go.Heatmap(
                **props, x=offsets, y=offsets, zmin=zmin, zmax=1, colorscale="RdBu",
                reversescale=True, showscale=col == 2, colorbar={"thickness": 12, "len": 0.9},
                hovertemplate="Δy %{y}, Δx %{x}<br>mean similarity %{z:.3f}<extra></extra>",
            ),
            row=1, col=col,
        )
        span = [-max_offset - 0.5, max_offset + 0.5]
        fig.update_xaxes(title_text="Δx (query − key)", range=span, constrain="domain",
                         row=1, col=col)
        fig.update_yaxes(title_text="Δy (query − key)" if col == 1 else None, range=span,
                         constrain="domain", row=1, col=col)
    title = f"2-D RoPE: mean similarity of random q = k at offset (Δy, Δx), d = {dim}"
    if not sliders:
        title += f"; RoPE-Mixed {_direction_label(phis[seed])}"
        return _style(fig, title, height=470)
    steps = [{"method": "restyle", "label": f"{phis[s] % 90:.1f}°",
              "args": [{"z": [mixed_z[s]]}, [1]]} for s in seeds]
    fig.update_layout(
        sliders=[_slider(steps, seeds.index(seed), "RoPE-Mixed direction φ mod 90°: ")])
    return _style(fig, title, height=560)


def _offset_pairs(value: Any, name: str) -> np.ndarray:
    """``value`` as a finite ``(K, 2)`` float array of ``(Δy, Δx)`` offsets (``K`` may be 0)."""
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be a (K, 2) array of (Δy, Δx) offsets, got {value!r}")
    a = np.asarray(_np(value), dtype=np.float64)
    if a.size == 0:
        return a.reshape(0, 2)
    if a.ndim != 2 or a.shape[1] != 2 or not np.isfinite(a).all():
        raise ValueError(f"{name} must be a finite (K, 2) array of (Δy, Δx) offsets, "
                         f"got shape {a.shape}")
    return a


def rope_2d_scores_figure(
    surfaces: dict[str, Any],
    offsets: Any,
    *,
    targets: Any = (),
    others: Any = (),
    title: str = "",
) -> go.Figure:
    """Scores ``S(Δy, Δx)`` of 2-D heads over a grid of offsets, side by side, keys marked.

    The scores are computed by the caller (e.g. a trained head's query at ``(0, 0)`` against its
    key at every offset, :func:`posenc_lib.multimodal.apply_rope_2d`); this only draws them,
    unrounded, on one colour scale symmetric about 0 (the largest ``|S|`` of all panels).

    Parameters
    ----------
    surfaces : dict
        ``{panel title: (N, N) array}``, one to four panels; row ``i`` is ``Δy = offsets[i]``,
        column ``j`` is ``Δx = offsets[j]``; finite, not all zero. Tensors and arrays accepted.
    offsets : array-like
        Shape ``(N,)``, ``N >= 1``: the offsets of both axes, finite and increasing.
    targets, others : array-like
        Shape ``(K, 2)``, rows ``(Δy, Δx)``: keys marked with stars (the targets) and crosses
        (the other keys) on every panel; empty (default) marks nothing.
    title : str
        Figure title (default: a description of the panels).

    Returns
    -------
    plotly.graph_objects.Figure
        Per panel a ``go.Heatmap`` (``x = y = offsets``, ``z`` the surface), then, if any key is
        marked, a ``go.Scatter`` with ``x = Δx`` and ``y = Δy`` of ``targets`` followed by
        ``others``. Rows run downwards (``Δy`` increasing), as in an image.
    """
    if not isinstance(surfaces, dict) or not 1 <= len(surfaces) <= 4:
        raise ValueError("surfaces must be a dict {panel title: (N, N) array} of 1 to 4 panels")
    if isinstance(offsets, (str, bytes)):
        raise TypeError(f"offsets must be an (N,) array of numbers, got {offsets!r}")
    grid = np.asarray(_np(offsets), dtype=np.float64)
    if grid.ndim != 1 or grid.size == 0 or not np.isfinite(grid).all() or (
            np.diff(grid) <= 0).any():
        raise ValueError(f"offsets must be a finite, increasing (N,) array with N >= 1, "
                         f"got shape {grid.shape}")
    panels = {}
    for name, surface in surfaces.items():
        z = np.asarray(_np(surface), dtype=np.float64)
        if z.shape != (grid.size, grid.size) or not np.isfinite(z).all():
            raise ValueError(f"surfaces[{name!r}] must be a finite ({grid.size}, {grid.size}) "
                             f"array (one row and column per offset), got shape {z.shape}")
        panels[str(name)] = z
    limit = max(float(np.abs(z).max()) for z in panels.values())
    if limit == 0.0:
        raise ValueError("surfaces must not all be zero (no colour scale to draw)")
    stars, crosses = _offset_pairs(targets, "targets"), _offset_pairs(others, "others")
    keys = np.concatenate([stars, crosses])
    symbols = ["star"] * len(stars) + ["x"] * len(crosses)
    fig = make_subplots(rows=1, cols=len(panels), horizontal_spacing=0.12,
                        subplot_titles=list(panels))
    for col, z in enumerate(panels.values(), start=1):
        fig.add_trace(go.Heatmap(
            x=grid, y=grid, z=z, zmin=-limit, zmax=limit, zmid=0, colorscale="RdBu",
            reversescale=True, showscale=col == len(panels),
            colorbar={"title": {"text": "S"}, "thickness": 12, "len": 0.9},
            hovertemplate="Δy %{y}, Δx %{x}: S = %{z:.2f}<extra></extra>",
        ), row=1, col=col)
        if len(keys):
            fig.add_trace(go.Scatter(
                x=keys[:, 1], y=keys[:, 0], mode="markers",
                marker={"symbol": symbols, "size": 11, "color": INK},
                name="targets (stars), the other keys (crosses)", showlegend=col == 1,
                hovertemplate="key at offset Δy %{y}, Δx %{x}<extra></extra>",
            ), row=1, col=col)
        anchor = "x" if col == 1 else f"x{col}"
        fig.update_xaxes(title_text="Δx (columns)", dtick=1, constrain="domain", row=1, col=col)
        fig.update_yaxes(title_text="Δy (rows)" if col == 1 else None, dtick=1,
                         autorange="reversed", scaleanchor=anchor, constrain="domain",
                         row=1, col=col)
    fig.update_layout(legend={"orientation": "h", "y": -0.2}, margin={"b": 90})
    return _style(fig, title or "Scores S(Δy, Δx) at offset (Δy, Δx) = query − key", height=460)


def _ids_state(segments: Sequence[tuple[object, ...]], merge: int) -> list[dict[str, Any]]:
    ids, _ = mm.mrope_position_ids(segments, spatial_merge_size=merge)
    x = list(range(ids.shape[1]))
    out: list[dict[str, Any]] = [{"x": x, "y": ids[a].tolist()} for a in range(3)]
    # grey bands under the vision tokens: one closed polygon per segment, separated by None
    bx: list[float | None] = []
    by: list[float | None] = []
    start, top = 0, int(ids.max()) + 1
    for seg in segments:
        kind = seg[0]
        if kind == "text":
            n = int(seg[1])  # type: ignore[call-overload]
        else:
            t, h, w = (int(v) for v in seg[1:4])  # type: ignore[call-overload]
            n = t * (h // merge) * (w // merge)
            lo, hi = start - 0.5, start + n - 0.5
            bx += [lo, hi, hi, lo, lo, None]
            by += [-0.5, -0.5, top, top, -0.5, None]
        start += n
    out.append({"x": bx, "y": by})
    return out


def _with_image(segments: Sequence[tuple[object, ...]], h: int, w: int) -> list[tuple[object, ...]]:
    out = list(segments)
    for i, seg in enumerate(out):
        if seg[0] == "image":
            out[i] = ("image", seg[1], h, w)
            break
    return out


def position_ids_figure(
    segments: Sequence[tuple[object, ...]] = (("text", 4), ("image", 1, 8, 4), ("text", 4)),
    spatial_merge_size: int = 2,
    *,
    sliders: bool = True,
) -> go.Figure:
    """The t, h and w position ids of a mixed sequence, token by token.

    Parameters
    ----------
    segments : sequence of tuple
        As :func:`posenc_lib.multimodal.mrope_position_ids`: ``("text", n)``,
        ``("image", t, h, w)``, ``("video", t, h, w[, time_interval])``.
    spatial_merge_size : int
        Merge size ``m`` (1 … 8).
    sliders : bool
        Add a slider over the size of the first image (:data:`IMAGE_SIZES`), if there is one.

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: t ids, h ids, w ids, grey bands under the vision tokens.
    """
    merge = _int(spatial_merge_size, "spatial_merge_size", 1, 8)
    sliders = _bool(sliders, "sliders")
    state = _ids_state(segments, merge)
    fig = go.Figure()
    names = ("t (time)", "h (height)", "w (width)")
    dashes = ("solid", "dot", "dash")
    for a in range(3):
        fig.add_trace(go.Scatter(
            **state[a], mode="lines+markers", name=names[a],
            line={"color": _AXIS_COLOURS[a], "dash": dashes[a], "width": 2},
            marker={"size": 7 - a, "symbol": ("circle", "square", "diamond")[a]},
            hovertemplate=f"token %{{x}}<br>{names[a][0]} id %{{y}}<extra></extra>",
        ))
    fig.add_trace(go.Scatter(
        **state[3], mode="lines", fill="toself", fillcolor="rgba(140,149,159,0.18)",
        line={"width": 0}, name="vision tokens", hoverinfo="skip",
    ))
    fig.update_xaxes(title_text="token index in the sequence")
    fig.update_yaxes(title_text="position id", rangemode="tozero")
    fig.update_layout(legend={"orientation": "h", "x": 0.0, "y": 1.0, "yanchor": "bottom"},
                      margin={"t": 110})
    title = "M-RoPE position ids, token by token"
    has_image = any(seg[0] == "image" for seg in segments)
    if not (sliders and has_image):
        return _style(fig, title, height=440)
    current = next((int(seg[2]), int(seg[3])) for seg in segments  # type: ignore[call-overload]
                   if seg[0] == "image")
    sizes = list(IMAGE_SIZES) if current in IMAGE_SIZES else [*IMAGE_SIZES, current]
    steps = []
    for h, w in sizes:
        traces = _ids_state(_with_image(segments, h, w), merge)
        steps.append({
            "method": "restyle", "label": f"{h}×{w}",
            "args": [{"x": [t["x"] for t in traces], "y": [t["y"] for t in traces]}, [0, 1, 2, 3]],
        })
    fig.update_layout(sliders=[_slider(steps, sizes.index(current),
                                       "image grid h × w (patches): ")])
    # The merge rule under the axis title, not inside the plot, where a phone's wrapped note
    # covered the ids of the larger grids.
    fig.update_xaxes(title_text="token index in the sequence<br><span style='font-size:11px'>"
                                f"merge {merge}×{merge}: an h×w grid becomes "
                                f"(h/{merge})·(w/{merge}) tokens</span>")
    return _style(fig, title, height=520)




def mrope_section_grid(head_dim: int = 128, step: int = 8) -> tuple[tuple[int, int, int], ...]:
    """Sections ``(s_t, s, s)`` with ``s_t = 0, step, 2·step, …`` and height = width (Qwen's way).

    Parameters
    ----------
    head_dim : int
        Rotated features per head (even, 4 … 1024); the sections split its ``head_dim/2`` pairs.
    step : int
        Spacing of ``s_t`` (even, >= 2, so ``head_dim/2 − s_t`` stays even when ``head_dim/2`` is).

    Returns
    -------
    tuple of (int, int, int)
        Every ``(s_t, (n − s_t)/2, (n − s_t)/2)`` with ``n = head_dim/2``, ``s_t`` a multiple of
        ``step`` and ``n − s_t`` even.
    """
    head_dim = _even(head_dim, "head_dim", 4, 1024)
    step = _even(step, "step", 2, head_dim // 2)
    n = head_dim // 2
    return tuple((t, (n - t) // 2, (n - t) // 2) for t in range(0, n + 1, step) if (n - t) % 2 == 0)


_LAYOUTS = ("contiguous", "interleaved")


def _mrope_sections_state(
    section: tuple[int, int, int], base: float
) -> list[dict[str, Any]]:
    """Traces of :func:`mrope_sections_figure` at one section: heatmap, then t, h, w dots."""
    n = sum(section)
    wavelength = _np(2 * np.pi / rope.rope_inv_freq(2 * n, base))
    z: list[list[float | None]] = []
    text: list[list[str]] = []
    dots: list[dict[str, list[Any]]] = [{"x": [], "y": []} for _ in range(3)]
    labels: list[str] = []
    for layout in _LAYOUTS:
        try:
            axes = _np(mm.mrope_axis_map(section, interleaved=layout == "interleaved")).tolist()
        except ValueError:  # MRoPE-I cannot deal these counts out in turn: an empty row, says so
            z.append([None] * n)
            text.append(["cannot interleave"] * n)
            labels.append(f"{layout}: not realisable")
            continue
        labels.append(layout)
        z.append([float(a) for a in axes])
        text.append([mm.MROPE_AXES[a] for a in axes])
        for i, a in enumerate(axes):
            dots[a]["x"].append(round(float(wavelength[i]), 2))
            dots[a]["y"].append(f"{mm.MROPE_AXES[a]}, {layout}")
    custom = [[round(float(v), 2) for v in wavelength]] * 2
    return [{"z": z, "text": text, "customdata": custom, "y": labels}, *dots]


def mrope_sections_figure(
    mrope_section: Sequence[int] = (16, 24, 24),
    base: float = 1e6,
    *,
    sections: Sequence[Sequence[int]] | None = None,
) -> go.Figure:
    """How ``mrope_section`` splits the frequency pairs among t, h and w, with a slider over splits.

    Top: which id each pair reads (:func:`posenc_lib.multimodal.mrope_axis_map`), contiguous
    (Qwen2-VL, Qwen2.5-VL) and interleaved (MRoPE-I, Qwen3-VL); the interleaved row is empty, and
    labelled "interleaved: not realisable", for a section MRoPE-I cannot realise. Bottom: the
    wavelength ``2π/θ_i`` of every pair each axis reads,
    ``θ_i = base^(−2i/d)``, ``d = 2·sum(mrope_section)``, one row of dots per axis and layout.

    Parameters
    ----------
    mrope_section : sequence of int
        ``(s_t, s_h, s_w)`` the figure opens on; added to ``sections`` if missing.
    base : float
        ``rope_theta`` (> 1).
    sections : sequence of (int, int, int), optional
        The slider steps, all with the same sum as ``mrope_section`` (at most 33); default
        :func:`mrope_section_grid` of ``d``.

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: the axis heatmap, then the wavelength dots of t, h and w; one slider over sections.
    """
    section = mm._check_section(mrope_section)
    base = _base(base)
    n = sum(section)
    if sections is None:
        sections = mrope_section_grid(2 * n) if n % 2 == 0 and n >= 4 else ()
    if isinstance(sections, (str, bytes)) or not isinstance(sections, Sequence):
        raise TypeError(f"sections must be a sequence of (s_t, s_h, s_w), got {sections!r}")
    steps_at = [mm._check_section(s) for s in sections]
    if any(sum(s) != n for s in steps_at):
        raise ValueError(f"sections must all sum to sum(mrope_section) = {n} (one head size)")
    grid = sorted(set(steps_at) | {section})
    if len(grid) > 33:
        raise ValueError(f"sections must hold at most 33 splits, got {len(grid)}")
    state = _mrope_sections_state(section, base)
    fig = make_subplots(rows=2, cols=1, row_heights=[0.3, 0.7], vertical_spacing=0.16)
    colorscale = []
    for a, colour in enumerate(_AXIS_COLOURS):
        colorscale += [[a / 3, colour], [(a + 1) / 3, colour]]
    fig.add_trace(go.Heatmap(
        **state[0], x=list(range(n)), zmin=-0.5, zmax=2.5,
        colorscale=colorscale, showscale=False, xgap=1, ygap=4, hoverongaps=False,
        hovertemplate="%{y}: pair %{x} reads %{text}<br>wavelength %{customdata:.4g} "
                      "positions<extra></extra>",
    ), row=1, col=1)
    names = ("t (time)", "h (height)", "w (width)")
    for a in range(3):
        fig.add_trace(go.Scatter(
            **state[1 + a], mode="markers", name=names[a],
            marker={"color": _AXIS_COLOURS[a], "size": 7, "symbol": "line-ns-open",
                    "line": {"width": 2, "color": _AXIS_COLOURS[a]}},
            hovertemplate="%{y}: wavelength %{x:.4g} positions<extra></extra>",
        ), row=2, col=1)
    rows = [f"{axis}, {layout}" for layout in _LAYOUTS for axis in mm.MROPE_AXES]
    fig.update_xaxes(title_text="frequency pair i (fast → slow)", row=1, col=1)
    fig.update_yaxes(autorange="reversed", row=1, col=1)
    fig.update_xaxes(title_text="wavelength 2π/θ_i (positions), log scale", type="log",
                     exponentformat="power", row=2, col=1)
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=rows,
                     autorange="reversed", row=2, col=1)
    def title(s: tuple[int, int, int]) -> str:
        return f"{n} frequency pairs (base {_fmt(base)}): t {s[0]}, h {s[1]}, w {s[2]}"

    # A step's label is s_t alone (nine labels like "16/24/24" would overlap on a phone); the
    # title says the whole split.
    steps = []
    for s in grid:
        traces = _mrope_sections_state(s, base)
        steps.append({
            "method": "update", "label": str(s[0]),
            "args": [{
                "z": [traces[0]["z"], None, None, None],
                "text": [traces[0]["text"], None, None, None],
                "x": [list(range(n)), *(t["x"] for t in traces[1:])],
                "y": [traces[0]["y"], *(t["y"] for t in traces[1:])],
            }, {"title.text": title(s)}, [0, 1, 2, 3]],
        })
    fig.update_layout(
        sliders=[_slider(steps, grid.index(section), "pairs reading time: ", y=-0.1, pad_t=30)],
        legend={"orientation": "h", "x": 0.0, "y": 1.0, "yanchor": "bottom"},
        margin={"t": 100, "b": 110},
    )
    return _style(fig, title(section), height=640)


def _mrope_turn_np(*args: Any, **kwargs: Any) -> dict[str, np.ndarray]:
    return {k: v.numpy() for k, v in mm.mrope_fastest_turn(*args, **kwargs).items()}


def mrope_fastest_turn_figure(
    models: Sequence[tuple[Any, ...]] = MROPE_MODELS, tokens: int = 46
) -> go.Figure:
    """How far the fastest height and width pairs of M-RoPE turn across one image, per model.

    One panel per model: the angle :func:`posenc_lib.multimodal.mrope_fastest_turn` of the
    fastest pair reading height and of the fastest pair reading width, against the offset from
    the first row (column), on a log scale, with a dashed line at one full turn (2π).

    Parameters
    ----------
    models : sequence of (str, sequence of int, bool, float)
        ``(label, mrope_section, interleaved, rope_theta)``, one to four rows
        (default :data:`MROPE_MODELS`).
    tokens : int
        Side of the square image in merged tokens (2 … 4096).

    Returns
    -------
    plotly.graph_objects.Figure
        Per panel two ``go.Scatter`` (h, then w) with ``x = 1 … tokens − 1`` and ``y`` the
        angle in radians (offset 0, angle 0, is left out of the log scale).
    """
    if isinstance(models, (str, bytes)) or not isinstance(models, Sequence) or not models:
        raise TypeError("models must be a non-empty sequence of "
                        "(label, mrope_section, interleaved, rope_theta)")
    if len(models) > 4:
        raise ValueError(f"models must hold at most 4 rows, got {len(models)}")
    for i, row in enumerate(models):
        if not isinstance(row, tuple) or len(row) != 4:
            raise TypeError(f"models[{i}] must be a tuple (label, mrope_section, interleaved, "
                            f"rope_theta), got {row!r}")
    tokens = _int(tokens, "tokens", 2, 4096)
    turns = [_mrope_turn_np(row[1], _base(row[3], f"models[{i}] rope_theta"), tokens,
                                interleaved=_bool(row[2], f"models[{i}] interleaved"))
             for i, row in enumerate(models)]
    fig = make_subplots(rows=1, cols=len(models), shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=[str(row[0]) for row in models])
    offsets = list(range(1, tokens))
    names = {"h": "fastest height pair (down the rows)",
             "w": "fastest width pair (along the columns)"}
    for col, turn in enumerate(turns, start=1):
        for a, axis in ((1, "h"), (2, "w")):
            fig.add_trace(go.Scatter(
                x=offsets, y=turn[axis][1:].tolist(), mode="lines", name=names[axis],
                line={"color": _AXIS_COLOURS[a], "width": 3, "dash": "solid" if a == 1 else "dot"},
                showlegend=col == 1,
                hovertemplate=f"{axis}: offset %{{x}}, angle %{{y:.3g}} rad<extra></extra>",
            ), row=1, col=col)
        fig.add_hline(y=2 * np.pi, line={"color": INK, "width": 1, "dash": "dash"},
                      annotation_text="one full turn (2π)", annotation_position="top left",
                      row=1, col=col)
        fig.update_xaxes(title_text="offset from the first row / column (tokens)", row=1, col=col)
    fig.update_yaxes(type="log", exponentformat="power")
    fig.update_yaxes(title_text="angle of the pair (rad), log scale", row=1, col=1)
    fig.update_layout(legend={"orientation": "h", "y": -0.25}, margin={"b": 110})
    title = f"Across a {tokens} × {tokens}-token image: how far each axis's fastest pair turns"
    return _style(fig, title, height=460)
