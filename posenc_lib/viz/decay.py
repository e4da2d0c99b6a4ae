"""Long-term decay curves: RoFormer's bound, the sinusoidal similarity, and the spread of scores.

Three curves against the relative distance ``r = m − n``, each chosen by name in ``curves``:

* ``"bound"`` — the *shape* of RoFormer's relative upper bound, ``f(r)/f(0)`` (chapter 5);
* ``"similarity"`` — ``PE(p)·PE(p+r)/(d/2) = (2/d)·Σ_i cos(r·θ_i)``, which is also the mean RoPE
  score of a random unit ``q`` with itself at offset ``r`` (chapters 3 and 5);
* ``"envelope"`` — the lowest and highest score of single random unit ``q`` with themselves over
  ``n_samples`` draws (:func:`posenc_lib.analysis.rope_self_score_envelope`), a band around the
  mean ``"similarity"``: how far one query strays from the mean curve (chapter 5). Not drawn by
  default;
* ``"spread"`` — the measured standard deviation of the RoPE score of *independent* random unit
  ``q``, ``k`` at offset ``r``: flat at about ``1/√d``, the noise floor that the aligned score
  decays towards (chapter 5).

"similarity", "envelope" and "spread" share one unit (a unit ``q`` scores 1 with itself at
``r = 0``). The bound is in another unit: it is divided by its own value at ``r = 0`` to compare
*shapes*, and it is not a bound on the other curves (the absolute bound for unit vectors is far
above them).

Up to :data:`MAX_DISTANCE_WITH_SLIDERS` (512) every distance is drawn on a linear axis; beyond it
the figure samples about 150 distances evenly on a logarithmic axis from 1 to ``max_distance``
(8192 at most), so that a figure reaching thousands of tokens stays small.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch

from .. import analysis
from ._checks import _base, _bool, _even, _fmt, _int, _lists, _np, _seed
from ._style import BASE_GRID, COLORWAY, DIM_GRID, _buttons, _slider, _style, _with

__all__ = [
    "CURVE_NAMES",
    "DECAY_CURVES",
    "MAX_DISTANCE_WITH_SLIDERS",
    "decay_curves",
]

DECAY_CURVES: tuple[str, ...] = ("bound", "similarity", "spread")
"""The curves drawn by default."""
CURVE_NAMES: tuple[str, ...] = ("bound", "similarity", "envelope", "spread")
"""Every curve the figure can draw, in the order it draws them."""
# The static figure precomputes every curve for every (base, dimension) of its controls; past this
# distance one figure would take most of a page's 1.5 MB budget (DESIGN.md): at 512 and d = 1024
# it writes about 0.7 MB of JSON.
MAX_DISTANCE_WITH_SLIDERS = 512
_MAX_DISTANCE = 8192
_LOG_POINTS = 150
_MAX_SAMPLES = 512
_DASHES = {"bound": "solid", "similarity": "dash", "spread": "dot", "envelope": "solid"}
_COLOURS = {"bound": COLORWAY[0], "similarity": COLORWAY[1], "spread": COLORWAY[2],
            "envelope": COLORWAY[1]}
_ENVELOPE_FILL = "rgba(230, 159, 0, 0.25)"  # COLORWAY[1], translucent


def _check_curves(curves: object) -> tuple[str, ...]:
    if isinstance(curves, str) or not isinstance(curves, Sequence):
        raise TypeError(f"curves must be a sequence of names from {CURVE_NAMES}, got {curves!r}")
    chosen = tuple(curves)
    if not chosen or len(set(chosen)) != len(chosen) or not set(chosen) <= set(CURVE_NAMES):
        raise ValueError(
            f"curves must be distinct names from {CURVE_NAMES} (at least one), got {curves!r}"
        )
    return tuple(c for c in CURVE_NAMES if c in chosen)  # a fixed order: colours stay put


def _names(curves: tuple[str, ...], n_samples: int) -> list[str]:
    text = {
        "bound": "shape of RoFormer's bound, f(r)/f(0) (own unit)",
        "similarity": "PE(p)·PE(p+r)/(d/2) = mean RoPE score of a unit q with itself",
        "spread": f"spread (std) of RoPE scores of independent unit q, k ({n_samples} pairs)",
        "envelope": f"lowest to highest score of one unit q with itself ({n_samples} draws)",
    }
    return [text[c] for c in curves]


_TITLE_PARTS = {
    "bound": "RoFormer's bound",
    "similarity": "the aligned score",
    "spread": "unrelated scores",
    "envelope": "its range over single queries",
}


def _title(curves: tuple[str, ...]) -> str:
    """The figure title, naming exactly the curves drawn."""
    parts = [_TITLE_PARTS[c] for c in curves]
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    if len(parts) == 3:
        listed = f"{parts[0]}, {parts[1]}, and {parts[2]}"
    return f"Long-term decay: {listed}"


def _decay_state(
    dim: int,
    base: float,
    max_distance: int,
    curves: tuple[str, ...] = DECAY_CURVES,
    n_samples: int = 128,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """``{"x", "y"}`` of each chosen curve (x = the distances :func:`_distances` draws)."""
    k = _distances(max_distance)
    out = []
    for name in curves:
        if name == "bound":
            y = _np(analysis.rope_decay_bound(dim, base, max_distance))
            y = y / y[0]
        elif name == "similarity":
            sim = _np(analysis.sinusoidal_similarity(dim, base, max_distance))[max_distance:]
            y = sim / (dim / 2)
        elif name == "envelope":
            low, high = analysis.rope_self_score_envelope(
                dim, base, max_distance, n_samples=n_samples, seed=seed,
                offsets=torch.from_numpy(k),
            )
            # One closed polygon (upper edge out, lower edge back), filled: one trace per band.
            out.append({"x": np.concatenate([k, k[::-1]]),
                        "y": np.concatenate([_np(high), _np(low)[::-1]])})
            continue
        else:
            y = _np(analysis.rope_score_spread(dim, base, max_distance, n_samples=n_samples,
                                               seed=seed))
        out.append({"x": k, "y": y[k]})
    return out


def _distances(max_distance: int) -> np.ndarray:
    """Every distance up to 512; beyond, ~150 distances evenly spaced on a log axis from 1."""
    if max_distance <= MAX_DISTANCE_WITH_SLIDERS:
        return np.arange(max_distance + 1)
    return np.unique(np.round(np.geomspace(1, max_distance, _LOG_POINTS)).astype(np.int64))


def decay_curves(
    dim: int = 128,
    base: float = 10000.0,
    max_distance: int = 256,
    *,
    curves: Sequence[str] = DECAY_CURVES,
    n_samples: int = 128,
    seed: int = 0,
    sliders: bool = True,
) -> go.Figure:
    """Long-term decay against relative distance: bound, sinusoidal similarity, spread of scores.

    Parameters
    ----------
    dim : int
        Dimension ``d`` (even, 4 … 1024).
    base : float
        Base ``b`` (> 1).
    max_distance : int
        Largest relative distance drawn: 1 … 8192 (beyond 512 on a logarithmic axis, sampled);
        with ``sliders`` and the ``"spread"`` curve, 1 … :data:`MAX_DISTANCE_WITH_SLIDERS` (512),
        since every slider state is precomputed and the spread is measured at every distance.
    curves : sequence of {"bound", "similarity", "envelope", "spread"}
        Which curves to draw (see the module docstring); chapter 3 draws only ``"similarity"``.
    n_samples : int
        Independent ``(q, k)`` pairs measured for ``"spread"``, random queries for
        ``"envelope"`` (2 … 512).
    seed : int
        Seed of those draws (0 … 2**63 − 1).
    sliders : bool
        Add a base slider (:data:`BASE_GRID`) and a dimension dropdown (:data:`DIM_GRID`).

    Returns
    -------
    plotly.graph_objects.Figure
        One trace per chosen curve (per dimension of the dropdown when ``sliders``),
        x = distance 0 … max_distance: a line, or for ``"envelope"`` a filled closed polygon.
    """
    dim = _even(dim, "dim", 4, 1024)
    base = _base(base)
    sliders = _bool(sliders, "sliders")
    curves = _check_curves(curves)
    top = MAX_DISTANCE_WITH_SLIDERS if sliders and "spread" in curves else _MAX_DISTANCE
    max_distance = _int(max_distance, "max_distance", 1, top)
    n_samples = _int(n_samples, "n_samples", 2, _MAX_SAMPLES)
    seed = _seed(seed)
    names = _names(curves, n_samples)
    n_curves = len(curves)
    dims = [int(d) for d in _with(DIM_GRID, dim) if d <= 1024] if sliders else [dim]
    fig = go.Figure()
    for d in dims:
        for j, props in enumerate(_decay_state(d, base, max_distance, curves, n_samples, seed)):
            name = curves[j]
            band = name == "envelope"
            fig.add_trace(
                go.Scatter(
                    **props,
                    mode="lines",
                    name=names[j],
                    visible=d == dim,
                    legendgroup=name,
                    fill="toself" if band else None,
                    fillcolor=_ENVELOPE_FILL if band else None,
                    line={
                        "color": _COLOURS[name],
                        "dash": _DASHES[name],
                        "width": 0.5 if band else 2,
                    },
                    hovertemplate=(
                        f"distance r = %{{x}}<br>value = %{{y:.3f}}<extra>d = {d}</extra>"
                    ),
                )
            )
    if curves == ("similarity",):
        y_title = "PE(p)·PE(p+r) ÷ (d/2)"
        title = "Sinusoidal similarity against distance (1 at r = 0)"
    else:
        y_title = "each curve ÷ its value at r = 0"
        title = _title(curves)
    log_axis = max_distance > MAX_DISTANCE_WITH_SLIDERS
    fig.update_layout(
        xaxis={"title": {"text": "relative distance r = m − n (tokens)"
                         + (", log scale" if log_axis else "")},
               "type": "log" if log_axis else "linear"},
        yaxis={"title": {"text": y_title}},
        legend={"orientation": "h", "x": 0.0, "y": -0.18, "yanchor": "top"},
    )
    if not sliders:
        return _style(fig, title)
    bases = _with(BASE_GRID, base)
    n = len(fig.data)
    steps = []
    for b in bases:
        ys = [
            _lists(p["y"], 3)
            for d in dims
            for p in _decay_state(d, b, max_distance, curves, n_samples, seed)
        ]
        steps.append({"method": "restyle", "label": _fmt(b), "args": [{"y": ys}, list(range(n))]})
    buttons = [
        {
            "method": "restyle",
            "label": f"d = {d}",
            "args": [{"visible": [dd == d for dd in dims for _ in range(n_curves)]},
                     list(range(n))],
        }
        for d in dims
    ]
    fig.update_layout(
        sliders=[_slider(steps, bases.index(base), "base b = ", y=-0.32, pad_t=10)],
        updatemenus=[_buttons(buttons, dims.index(dim))],
        margin={"b": 180},
    )
    return _style(fig, title, height=560)
