"""Euler's formula drawn: ``e^{iθ}`` as a motion (velocity ``i·z``, and the compound turns
``(1 + iθ/n)^n``), with its Taylor partial sums, rotation by ``e^{iθ}``, and two arrows turned
together (``z₁·conj(z₂)`` does not change under a shared turn).

The numbers come from the core module :mod:`posenc_lib.euler`, which this one only draws.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
import plotly.graph_objects as go

from ..euler import euler_partial_sums, rotate_complex
from ..sinusoidal import sinusoidal_frequencies
from ._checks import _base, _bool, _even, _int, _lists, _np, _real, _seed
from ._style import COLORWAY, GRID, MUTED, _slider, _style, _with

__all__ = [
    "compound_turn_figure",
    "phasor_sum_figure",
    "rope_clock_figure",
    "rotation_figure",
    "scaled_turn_figure",
    "shared_turn_figure",
    "unit_circle",
]


_THETA_GRID = tuple(np.round(np.linspace(0.0, 2 * np.pi, 25), 4).tolist())
# The unit-circle figure's θ grid: −2π … 2π in steps of π/6 (negative angles turn clockwise).
_EULER_THETA_GRID = tuple(np.round(np.linspace(-2 * np.pi, 2 * np.pi, 25), 4).tolist())
_INSET = {"x": [0.70, 0.99], "y": [0.70, 0.99]}  # paper coordinates of the unit-circle inset
_TERMS_GRID = tuple(range(1, 21))


def _euler_path(theta: float, n_terms: int) -> dict[str, Any]:
    sums = _np(euler_partial_sums(theta, n_terms))
    path = np.concatenate(([0.0 + 0.0j], sums))  # 0 → S_1 → … → S_n, one term per segment
    target = complex(_np(rotate_complex(1.0, theta)).item())
    err = abs(sums[-1] - target)
    return {
        "x": path.real,
        "y": path.imag,
        "name": f"partial sum with {n_terms} term{'s' * (n_terms > 1)}: |S − e^(iθ)| = {err:.2g}",
    }


def _euler_limit(theta: float, n_terms: int | list[int]) -> float:
    """Half-width of axes that hold the unit circle and every partial-sum path drawn for ``θ``.

    The partial sums wander far from the circle before they converge (up to about 47 at
    ``θ = 2π``), so the frame is fitted to them rather than fixed.
    """
    counts = [n_terms] if isinstance(n_terms, int) else n_terms
    sums = _np(euler_partial_sums(theta, max(counts)))
    extent = max(1.0, float(np.abs(sums.real).max()), float(np.abs(sums.imag).max()))
    return round(1.15 * extent + 0.1, 2)


def _euler_axes(theta: float, n_terms: int | list[int]) -> dict[str, Any]:
    """Layout ranges (both axes, equal) fitted by :func:`_euler_limit`."""
    lim = _euler_limit(theta, n_terms)
    return {"xaxis.range": [-lim, lim], "yaxis.range": [-lim, lim]}


def _euler_point(theta: float) -> dict[str, Any]:
    target = complex(_np(rotate_complex(1.0, theta)).item())
    return {"x": [0.0, target.real], "y": [0.0, target.imag]}


def _euler_state(theta: float, n_terms: int) -> list[dict[str, Any]]:
    return [_euler_point(theta), _euler_path(theta, n_terms)]


def unit_circle(theta: float = 1.0, n_terms: int = 6, *, sliders: bool = True) -> go.Figure:
    """``e^{iθ} = cos θ + i sin θ`` on the unit circle, and the Taylor partial sums reaching it.

    Parameters
    ----------
    theta : float
        The angle θ in radians (−4π … 4π; beyond, float64 sums lose digits to cancellation, see
        :func:`posenc_lib.euler.euler_rounding_scale`).
    n_terms : int
        Terms of ``Σ (iθ)^k / k!`` summed (1 … 200).
    sliders : bool
        Add a θ slider (−2π … 2π in steps of π/6) and a slider over the number of terms N
        (1 … 20). Each θ step refits the axes to every partial-sum path of that θ; an inset keeps
        the unit circle, ``e^{iθ}`` and the last partial sum ``S_N`` at a fixed scale.

    Returns
    -------
    plotly.graph_objects.Figure
        The circle, the vector ``e^{iθ}``, and the partial-sum path ``0 → S_1 → … → S_N``
        (one path trace per term count when ``sliders``, then the inset's circle, ``e^{iθ}`` and
        one ``S_N`` marker per term count).
    """
    theta = _real(theta, "theta", -4 * math.pi, 4 * math.pi)
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
    thetas = _with(_EULER_THETA_GRID, theta) if sliders else [theta]
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
    lim = _euler_limit(theta, terms)
    fig.update_layout(
        xaxis={"title": {"text": "real part"}, "range": [-lim, lim], "zeroline": True},
        yaxis={"title": {"text": "imaginary part"}, "range": [-lim, lim], "scaleanchor": "x"},
        legend={"orientation": "h", "x": 0.0, "y": -0.15, "yanchor": "top"},
    )
    title = "e^(iθ) on the unit circle, and the partial sums S_N = Σ_{n<N} (iθ)^n / n!"
    if not sliders:
        return _style(fig, title, height=560)
    paths = list(range(2, len(fig.data)))
    # Inset: the unit circle at a fixed scale, so convergence stays visible when the main frame
    # is fitted to partial sums that swing out to ~47.
    inset_axes = {"xaxis": "x2", "yaxis": "y2", "showlegend": False}
    fig.add_trace(go.Scatter(x=np.cos(phi).round(3), y=np.sin(phi).round(3), mode="lines",
                             line={"color": MUTED, "width": 1}, hoverinfo="skip", **inset_axes))
    fig.add_trace(go.Scatter(**_euler_point(theta), mode="lines", hoverinfo="skip",
                             line={"color": COLORWAY[5], "width": 2}, **inset_axes))
    inset_target = len(fig.data) - 1
    for t in terms:
        end = _euler_path(theta, t)
        fig.add_trace(go.Scatter(x=[end["x"][-1]], y=[end["y"][-1]], mode="markers",
                                 visible=t == n_terms, marker={"size": 8, "color": COLORWAY[0]},
                                 hovertemplate=f"S_{t} = %{{x:.4f}} + %{{y:.4f}} i<extra></extra>",
                                 **inset_axes))
    ends = list(range(inset_target + 1, len(fig.data)))
    fig.update_layout(
        xaxis2={"domain": _INSET["x"], "range": [-1.4, 1.4], "anchor": "y2", "visible": False},
        yaxis2={"domain": _INSET["y"], "range": [-1.4, 1.4], "anchor": "x2", "visible": False,
                "scaleanchor": "x2"},
    )
    fig.add_shape(type="rect", xref="paper", yref="paper", x0=_INSET["x"][0], x1=_INSET["x"][1],
                  y0=_INSET["y"][0], y1=_INSET["y"][1], line={"color": GRID},
                  fillcolor="rgba(255,255,255,0.9)", layer="below")
    theta_steps = []
    for th in thetas:
        ps = [_euler_path(th, t) for t in terms]
        theta_steps.append(
            {
                "method": "update",
                "label": f"{th:.2f}",
                "args": [
                    {
                        "x": [_lists(_euler_point(th)["x"], 4)] + [_lists(p["x"], 4) for p in ps]
                        + [_lists(_euler_point(th)["x"], 4)]
                        + [[round(float(p["x"][-1]), 4)] for p in ps],
                        "y": [_lists(_euler_point(th)["y"], 4)] + [_lists(p["y"], 4) for p in ps]
                        + [_lists(_euler_point(th)["y"], 4)]
                        + [[round(float(p["y"][-1]), 4)] for p in ps],
                        "name": ["e^(iθ) = cos θ + i sin θ"] + [p["name"] for p in ps]
                        + ["e^(iθ)"] + [f"S_{t}" for t in terms],
                    },
                    _euler_axes(th, terms),
                    [1, *paths, inset_target, *ends],
                ],
            }
        )
    term_steps = [
        {
            "method": "restyle",
            "label": str(t),
            "args": [{"visible": [tt == t for tt in terms] * 2}, [*paths, *ends]],
        }
        for t in terms
    ]
    fig.update_layout(
        sliders=[
            _slider(theta_steps, thetas.index(theta), "θ (rad) = ", y=-0.24, pad_t=10),
            _slider(term_steps, terms.index(n_terms), "terms N = ", y=-0.46, pad_t=10),
        ],
        margin={"b": 250},
    )
    return _style(fig, title, height=720)


def _rotation_state(theta: float, z: complex) -> list[dict[str, Any]]:
    w = complex(_np(rotate_complex(z, theta)).item())
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


_SHIFT_GRID = tuple(np.round(np.linspace(0.0, 2 * np.pi, 25), 4).tolist())


def _shared_turn_state(
    z1: complex, z2: complex, shift: float, lag: float | None = None
) -> tuple[list[dict[str, Any]], str]:
    w1 = complex(rotate_complex(complex(z1), shift))  # z1·e^{i·shift}
    w2 = complex(rotate_complex(complex(z2), shift + (lag or 0.0)))  # z2 turned once more
    product = w1 * w2.conjugate()
    traces = [
        {"x": [0.0, round(w1.real, 4)], "y": [0.0, round(w1.imag, 4)]},
        {"x": [0.0, round(w2.real, 4)], "y": [0.0, round(w2.imag, 4)]},
    ]
    what = f"shared turn {shift:.2f} rad" if lag is None else f"z₂ alone turned {lag:.2f} rad"
    title = (f"{what}: z₁·conj(z₂) = {product.real:.3f} "
             f"{'+' if product.imag >= 0 else '−'} {abs(product.imag):.3f} i")
    return traces, title


def shared_turn_figure(
    alpha: float = 1.2, beta: float = 0.3, shift: float = 0.0, *, sliders: bool = True
) -> go.Figure:
    """Two unit-length arrows at angles ``α`` and ``β``, turned together or one of them alone.

    The readout in the title is ``z₁·conj(z₂) = e^{i(α − β)}`` for the turned arrows: its real
    part is their dot product, its imaginary part ``sin(α − β)``. The first slider turns both
    arrows by a shared amount and the readout does not move, the identity rotary embeddings are
    built on; the second turns ``z₂`` alone (starting again from ``α``, ``β``), which changes
    ``α − β`` and with it the readout.

    Parameters
    ----------
    alpha, beta : float
        Angles of the two arrows in radians (−10π … 10π).
    shift : float
        Shared turn shown first (−10π … 10π; added to the slider's grid 0 … 2π).
    sliders : bool
        Add a slider over the shared turn and one over a turn of ``z₂`` alone (0 … 2π).

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: unit circle, arrow 1, arrow 2.
    """
    alpha = _real(alpha, "alpha", -10 * math.pi, 10 * math.pi)
    beta = _real(beta, "beta", -10 * math.pi, 10 * math.pi)
    shift = _real(shift, "shift", -10 * math.pi, 10 * math.pi)
    sliders = _bool(sliders, "sliders")
    z1, z2 = complex(math.cos(alpha), math.sin(alpha)), complex(math.cos(beta), math.sin(beta))
    phi = np.linspace(0, 2 * np.pi, 121)
    fig = go.Figure(go.Scatter(x=np.cos(phi).round(4), y=np.sin(phi).round(4), mode="lines",
                               line={"color": GRID}, hoverinfo="skip", name="unit circle"))
    traces, title = _shared_turn_state(z1, z2, shift)
    for trace, name, colour in zip(traces, (f"z₁ (angle α = {alpha:.2f} + turn)",
                                            f"z₂ (angle β = {beta:.2f} + turn)"),
                                   (COLORWAY[0], COLORWAY[5]), strict=True):
        fig.add_trace(go.Scatter(**trace, mode="lines+markers", name=name,
                                 line={"color": colour, "width": 3}, marker={"size": [0, 11]},
                                 hoverinfo="skip"))
    fig.update_layout(
        xaxis={"title": {"text": "real part"}, "range": [-1.3, 1.3]},
        yaxis={"title": {"text": "imaginary part"}, "range": [-1.3, 1.3], "scaleanchor": "x"},
        legend={"orientation": "h", "x": 0.0, "y": -0.15, "yanchor": "top"},
    )
    if not sliders:
        return _style(fig, title, height=520)
    shifts = _with(_SHIFT_GRID, shift)
    steps = []
    for sh in shifts:
        st, ttl = _shared_turn_state(z1, z2, sh)
        steps.append({"method": "update", "label": f"{sh:.2f}",
                      "args": [{"x": [t["x"] for t in st], "y": [t["y"] for t in st]},
                               {"title.text": ttl}, [1, 2]]})
    lags = list(_SHIFT_GRID)
    lag_steps = []
    for lag in lags:
        st, ttl = _shared_turn_state(z1, z2, 0.0, lag)
        lag_steps.append({"method": "update", "label": f"{lag:.2f}",
                          "args": [{"x": [t["x"] for t in st], "y": [t["y"] for t in st]},
                                   {"title.text": ttl}, [1, 2]]})
    fig.update_layout(
        sliders=[_slider(steps, shifts.index(shift), "turn both (rad) = ", y=-0.22, pad_t=10),
                 _slider(lag_steps, 0, "turn z₂ alone (rad) = ", y=-0.42, pad_t=10)],
        margin={"b": 230},
    )
    fig = _style(fig, title, height=680)
    fig.update_layout(title={"font": {"size": 14}})
    return fig


_R_GRID = tuple(range(0, 16))


def _scaled_turn_state(w: complex, theta: float, r: int) -> tuple[list[dict[str, Any]], str]:
    """The unit arrow e^{irθ}, the products w·e^{±irθ}, and their drops onto the real axis."""
    unit = complex(math.cos(r * theta), math.sin(r * theta))
    ahead, behind = w * unit, w * unit.conjugate()  # w·e^{irθ} (offset +r), w·e^{−irθ} (−r)
    traces = [{"x": [0.0, round(unit.real, 4)], "y": [0.0, round(unit.imag, 4)]}]
    for p in (ahead, behind):
        traces.append({"x": [0.0, round(p.real, 4)], "y": [0.0, round(p.imag, 4)]})
    for p in (ahead, behind):  # the drop from the arrow's tip to its real part
        traces.append({"x": [round(p.real, 4)] * 2, "y": [round(p.imag, 4), 0.0]})
    even, odd = (ahead.real + behind.real) / 2, (ahead.real - behind.real) / 2
    title = (f"r = {r}, arg w = {math.atan2(w.imag, w.real) % (2 * math.pi):.2f}: "
             f"score Re[w·e^(irθ)] = {ahead.real:+.3f} at +r, {behind.real:+.3f} at −r"
             f"<br>even part (Re w)·cos rθ = {even:+.3f}, odd part −(Im w)·sin rθ = {odd:+.3f}")
    return traces, title


def scaled_turn_figure(
    w: complex = 1.5 * complex(math.cos(0.6), math.sin(0.6)),
    theta: float = 0.4,
    r: int = 3,
    *,
    sliders: bool = True,
) -> go.Figure:
    """Multiplying by a general complex ``w`` scales by ``|w|`` and turns by ``arg w``.

    The figure draws the unit arrow ``e^{irθ}`` and the products ``w·e^{irθ}`` and
    ``w·e^{−irθ}``, each with its drop onto the real axis: ``Re[w·e^{±irθ}]`` is the score of one
    RoPE pair with ``w = q_i·conj(k_i)`` at offsets ``±r``. Its even part ``Re w·cos rθ`` is the
    same at ``±r``, its odd part ``−Im w·sin rθ`` flips sign: a real ``w`` scores ``+r`` and
    ``−r`` alike, an imaginary ``w`` tells them apart.

    Parameters
    ----------
    w : complex
        The multiplier (non-zero, ``|w| <= 5``).
    theta : float
        The pair's angle per position, in radians (0 < θ <= π).
    r : int
        The offset shown first (0 … 100; added to the slider's grid 0 … 15).
    sliders : bool
        Add a slider over ``r`` (at the given ``w``) and one over ``arg w`` (at the given ``r``,
        ``|w|`` fixed, 0 … 2π in steps of π/12).

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: unit circle, circle of radius ``|w|``, ``e^{irθ}``, ``w·e^{irθ}``,
        ``w·e^{−irθ}``, and the two drops onto the real axis (``+r``, ``−r``).
    """
    if isinstance(w, bool) or not isinstance(w, numbers.Complex):
        raise TypeError(f"w must be a complex number, got {w!r} ({type(w).__name__})")
    w = complex(w)
    if not (math.isfinite(w.real) and math.isfinite(w.imag)) or w == 0 or abs(w) > 5:
        raise ValueError(f"w must be finite, non-zero and |w| <= 5, got {w}")
    theta = _real(theta, "theta", 0.0, math.pi)
    if theta == 0.0:
        raise ValueError("theta must be > 0, got 0.0")
    r = _int(r, "r", 0, 100)
    sliders = _bool(sliders, "sliders")
    phi = np.linspace(0, 2 * np.pi, 121)
    lim = 1.25 * max(abs(w), 1.0)
    fig = go.Figure()
    for radius, name, dash in ((1.0, "unit circle", None), (abs(w), f"|w| = {abs(w):.2f}", "dot")):
        fig.add_trace(go.Scatter(x=(radius * np.cos(phi)).round(4),
                                 y=(radius * np.sin(phi)).round(4), mode="lines",
                                 line={"color": GRID, "dash": dash}, hoverinfo="skip", name=name))
    traces, title = _scaled_turn_state(w, theta, r)
    looks = (("e^(irθ) (unit)", MUTED, 2, None), ("w·e^(irθ): offset +r", COLORWAY[0], 3, None),
             ("w·e^(−irθ): offset −r", COLORWAY[5], 3, None),
             ("score at +r (real part)", COLORWAY[0], 1, "dot"),
             ("score at −r (real part)", COLORWAY[5], 1, "dot"))
    for trace, (name, colour, width, dash) in zip(traces, looks, strict=True):
        fig.add_trace(go.Scatter(**trace, mode="lines+markers", name=name,
                                 line={"color": colour, "width": width, "dash": dash},
                                 marker={"size": [0, 11]}, hoverinfo="skip"))
    fig.update_layout(
        xaxis={"title": {"text": "real part (the score)"}, "range": [-lim, lim]},
        yaxis={"title": {"text": "imaginary part"}, "range": [-lim, lim], "scaleanchor": "x"},
        legend={"orientation": "h", "x": 0.0, "y": -0.15, "yanchor": "top"},
    )
    if not sliders:
        fig = _style(fig, title, height=560)
        fig.update_layout(title={"font": {"size": 13}})
        return fig
    rs = sorted(set(_R_GRID) | {r})
    r_steps = []
    for r_ in rs:
        st, ttl = _scaled_turn_state(w, theta, r_)
        r_steps.append({"method": "update", "label": f"{r_}",
                        "args": [{"x": [t["x"] for t in st], "y": [t["y"] for t in st]},
                                 {"title.text": ttl}, [2, 3, 4, 5, 6]]})
    arg_w = math.atan2(w.imag, w.real) % (2 * math.pi)
    args = _with(_THETA_GRID, round(arg_w, 4))
    arg_steps = []
    for a in args:
        st, ttl = _scaled_turn_state(abs(w) * complex(math.cos(a), math.sin(a)), theta, r)
        arg_steps.append({"method": "update", "label": f"{a:.2f}",
                          "args": [{"x": [t["x"] for t in st], "y": [t["y"] for t in st]},
                                   {"title.text": ttl}, [2, 3, 4, 5, 6]]})
    fig.update_layout(
        sliders=[_slider(r_steps, rs.index(r), "offset r = ", y=-0.24, pad_t=10),
                 _slider(arg_steps, args.index(round(arg_w, 4)), "arg w (rad) = ", y=-0.42,
                         pad_t=10)],
        margin={"b": 230},
    )
    fig = _style(fig, title, height=700)
    fig.update_layout(title={"font": {"size": 13}})
    return fig


_OFFSET_GRID = (0, 1, 2, 3, 5, 8, 13, 20, 30, 50, 80, 130, 200, 300, 500, 800, 1300, 2000)


def _phasor_state(theta: np.ndarray, offset: float) -> tuple[dict[str, Any], str]:
    phases = np.exp(1j * offset * theta)  # e^{i·r·θ_i}, one unit arrow per pair
    partial = np.concatenate([[0.0], np.cumsum(phases)])  # S_0 = 0, S_1, …, S_{d/2}
    half = len(theta)
    similarity = float(partial[-1].real)
    odd_part = float(partial[-1].imag)  # Σ sin(rθ_i): odd in r, the part that carries direction
    bound = float(np.abs(partial[1:]).mean())
    at_zero = (half + 1) / 2  # f(0): the vertices S_j = j, j = 1 … d/2, average (d/2 + 1)/2
    title = (f"r = {offset:g}: Re Σ e^(irθ_i) = Σ cos(rθ_i) = {similarity:.2f} "
             f"(of {half} at r = 0);  f(r) = mean |S_j| = {bound:.2f} (of {at_zero:g} at r = 0)"
             f"<br>Im Σ e^(irθ_i) = Σ sin(rθ_i) = {odd_part:.2f}")
    trace = {"x": partial.real.round(4).tolist(), "y": partial.imag.round(4).tolist()}
    return trace, title


def phasor_sum_figure(
    dim: int = 64, base: float = 10000.0, offset: float = 20.0, *, sliders: bool = True
) -> go.Figure:
    """The phasors ``e^{i r θ_i}`` of the ``d/2`` pairs laid head to tail, for one offset ``r``.

    The path ends at ``Σ_i e^{irθ_i}``: its real part is the similarity ``Σ_i cos(rθ_i)`` of two
    sinusoidal encodings ``r`` apart, and the mean distance of the path's vertices ``S_j`` from the
    origin, ``f(r)``, is proportional to RoFormer's bound on RoPE scores (its "relative upper
    bound"; the factor ``max_i |h_{i+1} − h_i|`` depends on the query and key). At ``r = 0``
    the arrows line up (length ``d/2``); as ``r`` grows the fast pairs' arrows curl up, the path
    stays short.

    Parameters
    ----------
    dim : int
        Even width ``d`` (2 … 1024).
    base : float
        Base ``b`` of ``θ_i = b^(−2i/d)``.
    offset : float
        Offset ``r`` shown first (0 … 10⁶; added to the slider's grid 0 … 2000).
    sliders : bool
        Add a slider over ``r``.

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: the head-to-tail path ``0, S_1, …, S_{d/2}`` and its end point.
    """
    dim = _even(dim, "dim", 2, 1024)
    base = _base(base)
    offset = _real(offset, "offset", 0.0, 1e6)
    sliders = _bool(sliders, "sliders")
    theta = _np(sinusoidal_frequencies(dim, base))
    trace, title = _phasor_state(theta, offset)
    fig = go.Figure(go.Scatter(**trace, mode="lines+markers", name="partial sums S_j",
                               line={"color": COLORWAY[0], "width": 2}, marker={"size": 4},
                               hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=[0.0, 0.0], y=[0.0, 0.0], mode="markers", name="origin",
                             marker={"color": MUTED, "size": 9}, hoverinfo="skip"))
    half = dim // 2
    fig.update_layout(
        xaxis={"title": {"text": "real part"}, "range": [-0.35 * half, 1.05 * half]},
        yaxis={"title": {"text": "imaginary part"}, "range": [-0.35 * half, 0.7 * half],
               "scaleanchor": "x"},
        legend={"orientation": "h", "x": 0.0, "y": -0.15, "yanchor": "top"},
    )
    if not sliders:
        return _style(fig, title, height=560)
    offsets = _with(_OFFSET_GRID, offset)
    steps = []
    for off in offsets:
        st, ttl = _phasor_state(theta, off)
        steps.append({"method": "update", "label": f"{off:g}",
                      "args": [{"x": [st["x"]], "y": [st["y"]]}, {"title.text": ttl}, [0]]})
    fig.update_layout(
        sliders=[_slider(steps, offsets.index(offset), "offset r = ", y=-0.26, pad_t=10)],
        margin={"b": 150},
    )
    fig = _style(fig, title, height=640)
    fig.update_layout(title={"font": {"size": 13}})
    return fig


_CLOCK_SHIFTS = tuple(range(0, 61, 4))


def _clock_state(
    q: np.ndarray, k: np.ndarray, theta: np.ndarray, m: int, n: int, *, moved: str
) -> tuple[list[dict[str, Any]], str]:
    """Arrows of q turned by mθ_i and k turned by nθ_i, one dial per pair, and the score."""
    q_rot, k_rot = q * np.exp(1j * m * theta), k * np.exp(1j * n * theta)
    traces = []
    for z in (q_rot, k_rot):
        xs: list[float | None] = []
        ys: list[float | None] = []
        for i, w in enumerate(z):
            cx = 2.6 * i
            xs += [cx, round(cx + float(w.real), 4), None]
            ys += [0.0, round(float(w.imag), 4), None]
        traces.append({"x": xs, "y": ys})
    score = float((q_rot * k_rot.conj()).real.sum())
    title = f"{moved}: m = {m}, n = {n}, m − n = {m - n}; score qᵀk = {score:.3f}"
    return traces, title


def rope_clock_figure(
    dim: int = 8, base: float = 10000.0, m: int = 5, n: int = 2, *, seed: int = 0,
    sliders: bool = True,
) -> go.Figure:
    """RoPE as ``d/2`` clocks: pair ``i`` of a query turns by ``mθ_i`` and of a key by ``nθ_i``.

    The hands turn at different speeds (``θ_i = b^(−2i/d)``); the score ``qᵀk`` of the rotated
    vectors depends only on ``m − n``. The first slider moves query and key together (the score
    does not change); the second moves the query alone (it does).

    Parameters
    ----------
    dim : int
        Even width ``d`` (2 … 16; one dial per pair).
    base : float
        Base ``b``.
    m, n : int
        Query and key positions shown first (0 … 10⁴).
    seed : int
        Seed of the random query and key pairs (lengths 0.5 … 1).
    sliders : bool
        Add the two sliders (shifts 0 … 60).

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: the dials, the query's hands, the key's hands.
    """
    dim = _even(dim, "dim", 2, 16)
    base = _base(base)
    m = _int(m, "m", 0, 10**4)
    n = _int(n, "n", 0, 10**4)
    seed = _seed(seed)
    sliders = _bool(sliders, "sliders")
    theta = _np(sinusoidal_frequencies(dim, base))
    rng = np.random.default_rng(int(seed))
    half = dim // 2
    q = rng.uniform(0.5, 1.0, half) * np.exp(1j * rng.uniform(0, 2 * np.pi, half))
    k = rng.uniform(0.5, 1.0, half) * np.exp(1j * rng.uniform(0, 2 * np.pi, half))
    t = np.linspace(0, 2 * np.pi, 61)
    fig = go.Figure()
    xs: list[float | None] = []
    ys: list[float | None] = []
    for i in range(half):
        xs += [*np.round(2.6 * i + np.cos(t), 3).tolist(), None]
        ys += [*np.round(np.sin(t), 3).tolist(), None]
        fig.add_annotation(x=2.6 * i, y=-1.3, showarrow=False, font={"size": 11, "color": MUTED},
                           text=f"pair {i}: θ = {theta[i]:.3g}")
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line={"color": GRID, "width": 1.5},
                             hoverinfo="skip", showlegend=False))
    traces, title = _clock_state(q, k, theta, m, n, moved="start")
    for trace, name, colour in zip(traces, ("query q, turned by mθ_i", "key k, turned by nθ_i"),
                                   (COLORWAY[0], COLORWAY[5]), strict=True):
        fig.add_trace(go.Scatter(**trace, mode="lines+markers", name=name, hoverinfo="skip",
                                 line={"color": colour, "width": 3},
                                 marker={"size": [0, 8, 0] * half}))
    fig.update_xaxes(visible=False, range=[-1.4, 2.6 * (half - 1) + 1.4], scaleanchor="y")
    fig.update_yaxes(visible=False, range=[-1.6, 1.3])
    fig.update_layout(legend={"orientation": "h", "x": 0.0, "y": -0.05, "yanchor": "top"})
    if not sliders:
        return _style(fig, title, height=360)

    def steps_for(moves: list[tuple[int, int]], what: str) -> list[dict[str, Any]]:
        out = []
        for (mm, nn), shift in zip(moves, _CLOCK_SHIFTS, strict=True):
            st, ttl = _clock_state(q, k, theta, mm, nn, moved=what)
            out.append({"method": "update", "label": str(shift),
                        "args": [{"x": [s_["x"] for s_ in st], "y": [s_["y"] for s_ in st]},
                                 {"title.text": ttl}, [1, 2]]})
        return out

    both = steps_for([(m + s_, n + s_) for s_ in _CLOCK_SHIFTS], "both moved")
    query = steps_for([(m + s_, n) for s_ in _CLOCK_SHIFTS], "query moved")
    fig.update_layout(
        sliders=[_slider(both, 0, "move query and key by ", y=-0.25, pad_t=10),
                 _slider(query, 0, "move the query alone by ", y=-0.55, pad_t=10)],
        margin={"b": 230},
    )
    fig = _style(fig, title, height=520)
    fig.update_layout(title={"font": {"size": 13}})
    return fig


_COMPOUND_THETA_GRID = tuple(np.round(np.linspace(0.0, np.pi, 13), 4).tolist())  # steps of π/12


def _compound_turn_state(
    theta: float, n_values: tuple[int, ...]
) -> tuple[list[dict[str, Any]], str]:
    """The arc to ``e^{iθ}``, the polygons ``(1 + iθ/n)^k``, the position and its velocity."""
    phi = np.linspace(0.0, theta, 61)
    traces = [{"x": _lists(np.cos(phi), 4), "y": _lists(np.sin(phi), 4)}]
    misses = []
    for n in n_values:
        vertices = (1 + 1j * theta / n) ** np.arange(n + 1)  # k = 0 … n small quarter-turn nudges
        traces.append({"x": _lists(vertices.real, 4), "y": _lists(vertices.imag, 4)})
        misses.append(abs(vertices[-1] - complex(math.cos(theta), math.sin(theta))))
    z = complex(math.cos(theta), math.sin(theta))
    velocity = 1j * z  # unit length, a quarter turn from the position
    traces.append({"x": [0.0, round(z.real, 4)], "y": [0.0, round(z.imag, 4)]})
    traces.append({"x": [round(z.real, 4), round(z.real + velocity.real, 4)],
                   "y": [round(z.imag, 4), round(z.imag + velocity.imag, 4)]})
    gaps = ", ".join(f"{miss:.3f} (n = {n})" for n, miss in zip(n_values, misses, strict=True))
    title = f"θ = {theta:.2f}: arc length θ; (1 + iθ/n)^n misses e^(iθ) by {gaps}"
    return traces, title


def compound_turn_figure(
    theta: float = 2.0, n_values: tuple[int, ...] = (4, 8, 32), *, sliders: bool = True
) -> go.Figure:
    """Euler's formula as a motion: ``e^{iφ}`` runs along the unit circle with velocity ``i·z``.

    The figure draws the arc from ``1`` to ``e^{iθ}`` (length ``θ``), the position ``z = e^{iθ}``
    with its velocity ``i·z`` (a quarter turn from the position, unit length), and for each ``n``
    the polygon of the compound turns ``(1 + iθ/n)^k``, ``k = 0 … n``: ``n`` small quarter-turn
    nudges, whose end approaches ``e^{iθ}`` as ``n`` grows (spiralling slightly outwards, the
    modulus being ``(1 + θ²/n²)^{n/2}``).

    Parameters
    ----------
    theta : float
        Angle shown first, in radians (0 … π; added to the slider's grid 0 … π in steps of π/12).
    n_values : tuple of int
        Numbers of nudges, one polygon each (1 … 6 values, each 1 … 256).
    sliders : bool
        Add a slider over ``θ`` (static book).

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: unit circle, arc, one polygon per ``n``, position arrow, velocity arrow.
    """
    theta = _real(theta, "theta", 0.0, math.pi)
    if not isinstance(n_values, (tuple, list)) or not 1 <= len(n_values) <= 6:
        raise TypeError(f"n_values must be a tuple of 1 to 6 integers, got {n_values!r}")
    n_values = tuple(_int(n, "n_values", 1, 256) for n in n_values)
    sliders = _bool(sliders, "sliders")
    circle = np.linspace(0, 2 * np.pi, 121)
    fig = go.Figure(go.Scatter(x=np.cos(circle).round(4), y=np.sin(circle).round(4), mode="lines",
                               line={"color": GRID}, hoverinfo="skip", name="unit circle"))
    traces, title = _compound_turn_state(theta, n_values)
    fig.add_trace(go.Scatter(**traces[0], mode="lines", name="arc to e^(iθ), length θ",
                             line={"color": COLORWAY[0], "width": 5}, hoverinfo="skip"))
    for index, n in enumerate(n_values):
        fig.add_trace(go.Scatter(**traces[1 + index], mode="lines+markers",
                                 name=f"(1 + iθ/{n})^k, k = 0 … {n}",
                                 line={"color": COLORWAY[(2 + index) % 8], "width": 1.5},
                                 marker={"size": 5}, hoverinfo="skip"))
    fig.add_trace(go.Scatter(**traces[-2], mode="lines+markers", name="position z = e^(iθ)",
                             line={"color": MUTED, "width": 2}, marker={"size": [0, 10]},
                             hoverinfo="skip"))
    fig.add_trace(go.Scatter(**traces[-1], mode="lines+markers", name="velocity i·z (length 1)",
                             line={"color": COLORWAY[5], "width": 3},
                             marker={"size": [0, 10], "symbol": "triangle-up"}, hoverinfo="skip"))
    fig.update_layout(
        xaxis={"title": {"text": "real part"}, "range": [-2.8, 2.1]},
        yaxis={"title": {"text": "imaginary part"}, "range": [-1.2, 2.3], "scaleanchor": "x"},
        legend={"orientation": "h", "x": 0.0, "y": -0.15, "yanchor": "top"},
    )
    if not sliders:
        return _style(fig, title, height=600)
    grid = _with(_COMPOUND_THETA_GRID, theta)
    moved = list(range(1, len(fig.data)))
    steps = []
    for value in grid:
        st, ttl = _compound_turn_state(value, n_values)
        steps.append({"method": "update", "label": f"{value:.2f}",
                      "args": [{"x": [t["x"] for t in st], "y": [t["y"] for t in st]},
                               {"title.text": ttl}, moved]})
    fig.update_layout(sliders=[_slider(steps, grid.index(theta), "θ (rad) = ", y=-0.3, pad_t=10)],
                      margin={"b": 200})
    fig = _style(fig, title, height=720)
    fig.update_layout(title={"font": {"size": 13}})
    return fig
