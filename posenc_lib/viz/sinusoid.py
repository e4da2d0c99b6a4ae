"""Chapter 3's figures: the sinusoidal encoding as clock hands, its wavelengths against a training
length, and the four terms of an attention logit.

- :func:`clock_hands`: each (sin, cos) pair of ``PE(m)`` as a hand on its own dial, with a slider
  over the position ``p``;
- :func:`training_arcs`: how far each pair turns over a training length, with a slider over that
  length; pairs that do not complete a turn meet unseen angles beyond it;
- :func:`decay_law_figure`: the normalised similarity against the offset with its closed-form
  limit and decay law, and a slider over the base;
- :func:`logit_terms_figure`: content, cross and position terms of a logit against the query
  position at a fixed offset (the numbers of :func:`posenc_lib.properties.logit_terms`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch

from ..decay_law import similarity_limit, similarity_log_law
from ..sinusoidal import (
    pair_multiplication_matrix,
    sinusoidal_frequencies,
    sinusoidal_shift_matrix,
    sinusoidal_table,
)
from ._checks import _base, _even, _int, _lists, _np, _seed
from ._style import COLORWAY, GRID, MUTED, _slider, _style

__all__ = [
    "POSITION_GRID",
    "TRAIN_GRID",
    "clock_hands",
    "decay_law_figure",
    "logit_terms_figure",
    "patch_similarity_figure",
    "position_term_figure",
    "training_arcs",
]

POSITION_GRID = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
TRAIN_GRID = (64, 128, 256, 512, 1024, 2048, 4096, 8192, 32768)
_COLS = 4  # dials per row


def _hands(theta: np.ndarray, position: int) -> tuple[list[float | None], list[float | None]]:
    """Line segments from each dial's centre to (sin mθ_i, cos mθ_i) on it, None-separated."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    for i, th in enumerate(theta):
        cx, cy = 2.6 * (i % _COLS), -2.6 * (i // _COLS)
        angle = position * float(th)
        # the pair is (sin, cos): draw sin on x and cos on y, so m = 0 points up, like 12 o'clock
        xs += [cx, round(cx + math.sin(angle), 4), None]
        ys += [cy, round(cy + math.cos(angle), 4), None]
    return xs, ys


def clock_hands(dim: int = 16, base: float = 10000.0, position: int = 10, *,
                sliders: bool = True) -> go.Figure:
    """``PE(m)`` as ``dim/2`` clock hands: pair ``i`` points at angle ``m·θ_i`` on its own dial.

    Parameters
    ----------
    dim : int
        Even width, 2 … 32 (one dial per pair).
    base : float
        Base ``b`` (> 1).
    position : int
        Position shown first, 0 … 10 000 (added to the slider's grid).
    sliders : bool
        Add a slider over positions (static book).

    Returns
    -------
    plotly.graph_objects.Figure
        One dial per pair; the hand of pair ``i`` is ``(sin mθ_i, cos mθ_i)``.
    """
    dim = _even(dim, "dim", 2, 32)
    base = _base(base)
    position = _int(position, "position", 0, 10_000)
    theta = _np(sinusoidal_frequencies(dim, base))
    fig = go.Figure()
    t = np.linspace(0, 2 * math.pi, 61)
    for i, th in enumerate(theta):
        cx, cy = 2.6 * (i % _COLS), -2.6 * (i // _COLS)
        fig.add_trace(go.Scatter(
            x=np.round(cx + np.sin(t), 3), y=np.round(cy + np.cos(t), 3), mode="lines",
            line={"color": GRID, "width": 1.5}, hoverinfo="skip", showlegend=False))
        fig.add_annotation(x=cx, y=cy - 1.25, showarrow=False, font={"size": 11, "color": MUTED},
                           text=f"pair {i}: λ = {2 * math.pi / th:,.0f}" if th < 1 else
                           f"pair {i}: λ = 2π")
    xs, ys = _hands(theta, position)
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines+markers", showlegend=False,
                             line={"color": COLORWAY[0], "width": 3},
                             marker={"size": [0, 7, 0] * len(theta)}, hoverinfo="skip"))
    rows = -(-len(theta) // _COLS)
    fig.update_xaxes(visible=False, range=[-1.4, 2.6 * (_COLS - 1) + 1.4], scaleanchor="y")
    fig.update_yaxes(visible=False, range=[-2.6 * (rows - 1) - 1.6, 1.3])
    title = f"PE(m) as {len(theta)} clock hands (d = {dim}, b = {base:g})"
    if sliders:
        grid = sorted(set(POSITION_GRID) | {position})
        steps = []
        for p in grid:
            hx, hy = _hands(theta, p)
            steps.append({"method": "restyle", "label": str(p),
                          "args": [{"x": [hx], "y": [hy]}, [len(theta)]]})
        fig.update_layout(sliders=[_slider(steps, grid.index(position), "position m = ")],
                          margin={"b": 90})
    return _style(fig, title, height=170 * rows + 170)


def _arc_state(theta: np.ndarray, train_len: int) -> tuple[np.ndarray, int, str]:
    turns = (train_len - 1) * theta / (2 * math.pi)  # turns covered over positions 0 … L − 1
    unseen = int((turns < 1).sum())
    return turns, unseen, f"L_train = {train_len}: {unseen} of {len(theta)} pairs under one turn"


def training_arcs(dim: int = 512, base: float = 10000.0, train_len: int = 512, *,
                  sliders: bool = True) -> go.Figure:
    """Turns each pair makes over a training length ``L``: ``(L − 1)·θ_i / 2π``, log scale.

    Pairs below one turn (the shaded band) meet angles beyond ``L`` that training never showed.

    Parameters
    ----------
    dim : int
        Even width, 2 … 4096.
    base : float
        Base ``b`` (> 1).
    train_len : int
        Training length shown first, 2 … 10⁶ (added to the slider's grid).
    sliders : bool
        Add a slider over training lengths (static book).

    Returns
    -------
    plotly.graph_objects.Figure
        One marker per pair.
    """
    dim = _even(dim, "dim", 2, 4096)
    base = _base(base)
    train_len = _int(train_len, "train_len", 2, 10**6)
    theta = _np(sinusoidal_frequencies(dim, base)).astype(np.float64)
    pairs = np.arange(len(theta))
    turns, _, title = _arc_state(theta, train_len)
    fig = go.Figure(go.Scatter(
        x=pairs, y=_lists(turns, 5), mode="markers", marker={"size": 5, "color": COLORWAY[0]},
        hovertemplate="pair %{x}<br>%{y:.3g} turns over training<extra></extra>",
        name="turns of pair i"))
    # the band below one turn, as a filled trace (data coordinates, safe on a log axis)
    n_pairs = len(theta)
    fig.add_trace(go.Scatter(
        x=[-0.5, n_pairs - 0.5, n_pairs - 0.5, -0.5, -0.5], y=[1e-9, 1e-9, 1.0, 1.0, 1e-9],
        fill="toself", fillcolor="rgba(213, 94, 0, 0.12)", mode="lines",
        line={"color": COLORWAY[5], "width": 1, "dash": "dash"}, hoverinfo="skip",
        name="under one turn: unseen angles past L_train"))
    fig.update_layout(legend={"orientation": "h", "y": 1.02, "x": 0.0, "yanchor": "bottom"})
    fig.update_xaxes(title_text="pair i (θ_i = b^(−2i/d))")
    # one fixed range for every slider step: from the slowest pair at the shortest length shown
    shortest = min(train_len, *TRAIN_GRID) if sliders else train_len
    longest = max(train_len, *TRAIN_GRID) if sliders else train_len
    low = (shortest - 1) * theta.min() / (2 * math.pi)
    high = (longest - 1) * theta.max() / (2 * math.pi)
    fig.update_yaxes(title_text="turns over positions 0 … L − 1", type="log",
                     range=[math.log10(low) - 0.3, math.log10(max(high, 2.0)) + 0.3])
    if sliders:
        grid = sorted(set(TRAIN_GRID) | {train_len})
        steps = []
        for n in grid:
            t, _, ttl = _arc_state(theta, n)
            steps.append({"method": "update", "label": f"{n:,}",
                          "args": [{"y": [_lists(t, 5)]}, {"title.text": ttl}, [0]]})
        fig.update_layout(sliders=[_slider(steps, grid.index(train_len), "L_train = ")],
                          margin={"b": 110})
    fig.update_layout(margin={"t": 110})
    return _style(fig, title, height=460)


def logit_terms_figure(terms: Mapping[str, torch.Tensor | np.ndarray],
                       positions: Sequence[float] | torch.Tensor | np.ndarray,
                       *, offset: int) -> go.Figure:
    """The four terms of a logit (and their sum) against the query position at a fixed offset.

    Parameters
    ----------
    terms : mapping
        ``content``, ``content_position``, ``position_content``, ``position_position`` and
        ``total``, each ``(n,)`` (as returned by :func:`posenc_lib.properties.logit_terms`).
    positions : sequence of float
        The ``n`` query positions ``m``.
    offset : int
        The fixed offset ``k = n − m`` (for the title).

    Returns
    -------
    plotly.graph_objects.Figure
        Five lines.
    """
    names = {"content": "content xᵀAy", "content_position": "content–position xᵀA·PE(n)",
             "position_content": "position–content PE(m)ᵀA·y",
             "position_position": "position–position PE(m)ᵀA·PE(n)", "total": "logit (sum)"}
    if not isinstance(terms, Mapping) or set(terms) != set(names):
        raise ValueError(f"terms must map exactly {sorted(names)} to (n,) arrays")
    m = np.asarray(_np(positions) if isinstance(positions, torch.Tensor) else positions,
                   dtype=np.float64)
    offset = _int(offset, "offset", -10**6, 10**6)
    fig = go.Figure()
    for j, (key, label) in enumerate(names.items()):
        y = np.asarray(_np(terms[key]), dtype=np.float64)
        if y.shape != m.shape:
            raise ValueError(f"terms[{key!r}] must have the shape of positions {m.shape}, "
                             f"got {y.shape}")
        line: dict[str, Any] = {"color": COLORWAY[j % len(COLORWAY)],
                                "width": 3 if key == "total" else 2}
        if key == "total":
            line["dash"] = "dot"
        hover = f"{label}<br>m = %{{x}}<br>%{{y:.3f}}<extra></extra>"
        fig.add_trace(go.Scatter(x=m, y=np.round(y, 4), mode="lines", name=label, line=line,
                                 hovertemplate=hover))
    fig.update_xaxes(title_text="query position m (key at n = m + k)")
    fig.update_yaxes(title_text="term of the logit")
    fig.update_layout(legend={"orientation": "h", "y": -0.3, "x": 0.0}, margin={"b": 150})
    return _style(fig, f"Same two tokens, same offset k = {offset}, sliding along the sequence",
                  height=480)


def _log_offsets(max_distance: int, n: int = 240) -> np.ndarray:
    """Integer offsets 1 … max_distance, every one up to 60, then log-spaced (unique)."""
    dense = np.arange(1, min(60, max_distance) + 1)
    if max_distance <= 60:
        return dense
    sparse = np.unique(np.round(np.geomspace(61, max_distance, n)).astype(int))
    return np.concatenate([dense, sparse])


def _decay_law_state(dim: int, base: float, k: np.ndarray) -> list[dict[str, Any]]:
    kt = torch.as_tensor(k, dtype=torch.float64)  # the offsets r
    theta = sinusoidal_frequencies(dim, base).to(torch.float64)
    total = torch.cos(kt[:, None] * theta).mean(-1)  # (2/d) Σ_i cos(rθ_i)
    limit = similarity_limit(kt, base)
    law = similarity_log_law(kt, base)
    return [{"y": _lists(_np(total), 4)}, {"y": _lists(_np(limit), 4)},
            {"y": _lists(_np(law), 4)}]


def decay_law_figure(dim: int = 512, base: float = 10000.0, max_distance: int = 20000, *,
                     sliders: bool = True) -> go.Figure:
    """The normalised similarity ``(2/d) Σ cos(rθ_i)`` against the offset ``r`` (log axis), with its
    ``d → ∞`` limit ``[Ci(r) − Ci(r/b)]/ln b`` and the decay law ``1 − (ln r + γ)/ln b``.

    A faint line keeps ``b = 10 000`` for reference while the slider changes the base; the
    y-axis range is fixed so the base's effect is visible.

    Parameters
    ----------
    dim : int
        Even width, 2 … 4096.
    base : float
        Base shown first (> 1; added to the slider's grid).
    max_distance : int
        Largest offset, 10 … 10⁶ (every offset up to 60, then about 240 log-spaced ones).
    sliders : bool
        Add a slider over bases (static book).

    Returns
    -------
    plotly.graph_objects.Figure
        Reference, sum, limit and log-law lines.
    """
    dim = _even(dim, "dim", 2, 4096)
    base = _base(base)
    max_distance = _int(max_distance, "max_distance", 10, 10**6)
    k = _log_offsets(max_distance)
    reference = _decay_law_state(dim, 10000.0, k)[0]["y"]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=k, y=reference, mode="lines", name="sum at b = 10 000 (reference)",
                             line={"color": GRID, "width": 4}, hoverinfo="skip"))
    styles = (("sum (2/d) Σ cos(rθ_i)", {"color": COLORWAY[0], "width": 2}),
              ("limit [Ci(r) − Ci(r/b)]/ln b", {"color": COLORWAY[1], "width": 2, "dash": "dash"}),
              ("decay law 1 − (ln r + γ)/ln b", {"color": COLORWAY[5], "width": 2, "dash": "dot"}))
    for (name, line), state in zip(styles, _decay_law_state(dim, base, k), strict=True):
        hover = f"{name}<br>r = %{{x}}<br>%{{y:.3f}}<extra></extra>"
        fig.add_trace(go.Scatter(x=k, y=state["y"], mode="lines", name=name, line=line,
                                 hovertemplate=hover))
    fig.update_xaxes(title_text="offset r", type="log")
    fig.update_yaxes(title_text="similarity / (d/2)", range=[-0.35, 1.05])
    # legend between the title and the plot: it covers neither
    fig.update_layout(legend={"orientation": "h", "y": 1.02, "x": 0.0, "yanchor": "bottom"},
                      margin={"t": 150, "b": 60})
    if sliders:
        from ._style import BASE_GRID, _with

        grid = _with(BASE_GRID, base)
        steps = []
        for b in grid:
            st = _decay_law_state(dim, b, k)
            steps.append({"method": "restyle", "label": f"{b:g}",
                          "args": [{"y": [s["y"] for s in st]}, [1, 2, 3]]})
        fig.update_layout(sliders=[_slider(steps, grid.index(base), "base b = ")],
                          margin={"b": 130})
    return _style(fig, f"The decay law at d = {dim}", height=560)


_TERM_OFFSETS = tuple(range(-12, 13))


def _projections(dim: int, base: float, seed: int, shift: int) -> dict[str, torch.Tensor]:
    """The four projections ``A`` of :func:`position_term_figure`, float64 ``(dim, dim)``."""
    gen = torch.Generator().manual_seed(seed)
    random_a = torch.randn(dim, dim, generator=gen, dtype=torch.float64) / math.sqrt(dim)
    w = torch.randn(dim // 2, generator=gen, dtype=torch.complex128)
    return {
        "A = I (plain dot product)": torch.eye(dim, dtype=torch.float64),
        f"A = Φ({shift}) (a shift)": sinusoidal_shift_matrix(shift, dim, base),
        "A commutes with every shift (random w)": pair_multiplication_matrix(w),
        "A random (generic)": random_a,
    }


def _position_terms(
    projections: Mapping[str, torch.Tensor], dim: int, base: float, m: torch.Tensor, offset: int
) -> list[list[float]]:
    pe_m = sinusoidal_table(len(m), dim, base, dtype=torch.float64, positions=m)
    pe_n = sinusoidal_table(len(m), dim, base, dtype=torch.float64, positions=m + offset)
    return [
        _lists(((pe_m @ a) * pe_n).sum(-1), 4)  # PE(m)ᵀ A PE(n), n = m + offset = m − r
        for a in projections.values()
    ]


def position_term_figure(
    dim: int = 64, base: float = 10000.0, offset: int = 3, *, shift: int = 5, seed: int = 1,
    sliders: bool = True,
) -> go.Figure:
    """The position–position term ``PE(m)ᵀ A PE(n)`` along the sequence, for four ``A``.

    The key sits at ``n = m + offset``, so ``r = m − n = −offset``; the figure and its slider are
    labelled with ``r``. ``A = I`` gives a flat line at ``Σ cos(rθ_i)``, the same at ``+r`` and
    ``−r``; a shift ``A = Φ(j)`` and any ``A`` that commutes with every shift give flat lines that
    differ between ``+r`` and ``−r`` (a signed, relative signal); a generic random ``A`` gives a
    line that drifts with the absolute position ``m``.

    Parameters
    ----------
    dim : int
        Even width ``d`` (2 … 512).
    base : float
        Base ``b``.
    offset : int
        ``n − m = −r`` shown first (−10⁴ … 10⁴; added to the slider's grid −12 … 12).
    shift : int
        ``j`` of the shift ``A = Φ(j)`` (−10⁴ … 10⁴).
    seed : int
        Seed of the random ``A`` and of the random weights ``w`` of the commuting ``A``.
    sliders : bool
        Add a slider over ``r = −offset`` (labelled with ``r``, ascending).

    Returns
    -------
    plotly.graph_objects.Figure
        Four lines over ``m = 0 … 199``.
    """
    dim = _even(dim, "dim", 2, 512)
    base = _base(base)
    offset = _int(offset, "offset", -(10**4), 10**4)
    shift = _int(shift, "shift", -(10**4), 10**4)
    seed = _seed(seed)
    if not isinstance(sliders, bool):
        raise TypeError(f"sliders must be a bool, got {type(sliders).__name__}")
    projections = _projections(dim, base, seed, shift)
    m = torch.arange(200, dtype=torch.float64)
    fig = go.Figure()
    for j, (name, y) in enumerate(
        zip(projections, _position_terms(projections, dim, base, m, offset), strict=True)
    ):
        hover = f"{name}<br>m = %{{x}}<br>%{{y:.3f}}<extra></extra>"
        fig.add_trace(go.Scatter(x=m.tolist(), y=y, mode="lines", name=name,
                                 line={"color": COLORWAY[j], "width": 2}, hovertemplate=hover))
    fig.update_xaxes(title_text="query position m (key at n = m − r)")
    fig.update_yaxes(title_text="PE(m)ᵀ A PE(n)")
    fig.update_layout(legend={"orientation": "h", "y": -0.22, "x": 0.0})
    title = "Position–position term along the sequence: flat lines depend on r alone"
    if not sliders:
        fig.update_layout(margin={"b": 150})
        return _style(fig, f"{title} (r = {-offset})", height=520)
    offsets = sorted(set(_TERM_OFFSETS) | {offset}, reverse=True)  # ascending r = −offset
    steps = [{"method": "restyle", "label": f"{-k}",
              "args": [{"y": _position_terms(projections, dim, base, m, k)}]} for k in offsets]
    fig.update_layout(sliders=[_slider(steps, offsets.index(offset), "r = m − n = ", y=-0.42,
                                       pad_t=10)], margin={"b": 220})
    return _style(fig, title, height=600)


def _patch_state(table: torch.Tensor, grid: int, patch: int) -> list[list[float]]:
    return _lists((table @ table[patch]).reshape(grid, grid), 3)


def patch_similarity_figure(
    grid: int = 14, dim: int = 64, base: float = 10000.0, patch: int = 7, *, sliders: bool = True
) -> go.Figure:
    """Dot products of one image patch's 2-D sinusoidal encoding with every patch of the grid.

    The 2-D table gives half the features to the column and half to the row (MAE's order), each a
    1-D table of width ``d/2``; the dot product is the sum of the two axes' similarities, so the
    map is a cross-shaped ridge centred on the chosen patch and depends only on ``(Δr, Δc)``.

    Parameters
    ----------
    grid : int
        Patches per side (2 … 64).
    dim : int
        Width ``d``, a multiple of 4 (4 … 1024).
    base : float
        Base ``b``.
    patch : int
        The chosen patch is ``(patch, patch)`` on the diagonal (0 … grid − 1).
    sliders : bool
        Add a slider moving the chosen patch along the diagonal.

    Returns
    -------
    plotly.graph_objects.Figure
        One heatmap, rows top to bottom.
    """
    grid = _int(grid, "grid", 2, 64)
    dim = _int(dim, "dim", 4, 1024)
    if dim % 4:
        raise ValueError(f"dim must be a multiple of 4 (two halves of (sin, cos) pairs), got {dim}")
    base = _base(base)
    patch = _int(patch, "patch", 0, grid - 1)
    if not isinstance(sliders, bool):
        raise TypeError(f"sliders must be a bool, got {type(sliders).__name__}")
    axis = sinusoidal_table(grid, dim // 2, base, dtype=torch.float64)
    rows, cols = torch.meshgrid(torch.arange(grid), torch.arange(grid), indexing="ij")
    table = torch.cat([axis[cols.flatten()], axis[rows.flatten()]], dim=1)  # [column | row]
    index = patch * grid + patch
    fig = go.Figure(go.Heatmap(
        z=_patch_state(table, grid, index), x=list(range(grid)), y=list(range(grid)),
        colorscale="RdBu", zmid=0.0, colorbar={"title": {"text": "dot product"}},
        hovertemplate="row %{y}, column %{x}<br>%{z:.2f}<extra></extra>"))
    fig.update_xaxes(title_text="column c", constrain="domain")
    fig.update_yaxes(title_text="row r", autorange="reversed", scaleanchor="x")
    title = f"PE₂D(r, c) · PE₂D(patch) on a {grid} × {grid} grid, d = {dim}"
    if not sliders:
        return _style(fig, title, height=560)
    steps = [{"method": "restyle", "label": f"({j}, {j})",
              "args": [{"z": [_patch_state(table, grid, j * grid + j)]}]} for j in range(grid)]
    fig.update_layout(sliders=[_slider(steps, patch, "chosen patch (r, c) = ", y=-0.12,
                                       pad_t=10)], margin={"b": 110})
    return _style(fig, title, height=620)
