"""Figures of chapter 6's bug gallery: a per-pair quantity, right against buggy, on a log axis."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go
import torch

from ._style import COLORWAY, MUTED, _style

__all__ = ["offset_profile_figure", "per_pair_figure"]


def per_pair_figure(series: Mapping[str, torch.Tensor | Sequence[float]], *, ylabel: str,
                    title: str, floor: float = 1e-9, threshold: float | None = None,
                    threshold_label: str = "", height: int = 360) -> go.Figure:
    """One marker trace per entry of ``series`` against the pair index, on a log y axis.

    Parameters
    ----------
    series : mapping
        ``{name: values}``, each ``(d/2,)`` non-negative values (e.g. angle steps or phase errors);
        values below ``floor`` are drawn at ``floor`` so that a log axis can show exact zeros.
    ylabel, title : str
        Axis and figure titles.
    threshold : float, optional
        A dotted horizontal line (e.g. 0.1 rad per position), labelled ``threshold_label``.
    """
    if not series:
        raise ValueError("series must hold at least one {name: values} entry")
    if not floor > 0:
        raise ValueError(f"floor must be > 0 for a log axis, got {floor}")
    fig = go.Figure()
    for k, (name, values) in enumerate(series.items()):
        y = torch.as_tensor(values, dtype=torch.float64).clamp_min(floor)
        fig.add_trace(go.Scatter(x=list(range(len(y))), y=y.tolist(), mode="markers", name=name,
                                 marker={"color": COLORWAY[k % len(COLORWAY)], "size": 7}))
    if threshold is not None:
        fig.add_hline(y=threshold, line={"color": MUTED, "dash": "dot"},
                      annotation_text=threshold_label)
    fig.update_xaxes(title={"text": "pair i"})
    fig.update_yaxes(title={"text": ylabel}, type="log")
    return _style(fig, title, height=height)


def offset_profile_figure(profiles: Mapping[str, torch.Tensor | Sequence[float]],
                          offsets: Sequence[int], *, title: str,
                          ylabel: str = "mean |Δ logit|", height: int = 380) -> go.Figure:
    """One line per bug: a quantity (e.g. the mean logit error) against the offset ``r = m − n``.

    Parameters
    ----------
    profiles : mapping
        ``{name: values}``, each ``(len(offsets),)`` finite values, one per offset.
    offsets : sequence of int
        The offsets, increasing, drawn on the x axis.
    title, ylabel : str
        Figure and y-axis titles.
    """
    if not profiles:
        raise ValueError("profiles must hold at least one {name: values} entry")
    x = [int(r) for r in offsets]
    if len(x) < 2 or any(b <= a for a, b in itertools.pairwise(x)):
        raise ValueError(f"offsets must be at least 2 increasing integers, got {list(offsets)}")
    fig = go.Figure()
    for k, (name, values) in enumerate(profiles.items()):
        y = torch.as_tensor(values, dtype=torch.float64)
        if y.shape != (len(x),) or not bool(torch.isfinite(y).all()):
            raise ValueError(f"profiles[{name!r}] must hold {len(x)} finite values, "
                             f"got shape {tuple(y.shape)}")
        fig.add_trace(go.Scatter(
            x=x, y=y.round(decimals=4).tolist(), mode="lines+markers", name=name,
            line={"color": COLORWAY[k % len(COLORWAY)], "width": 2},
            hovertemplate=f"{name}<br>offset %{{x}}: %{{y:.3f}}<extra></extra>"))
    fig.update_xaxes(title={"text": "offset r = m − n"})
    fig.update_yaxes(title={"text": ylabel}, rangemode="tozero")
    fig.update_layout(legend={"orientation": "h", "y": -0.3})
    return _style(fig, title, height=height)
