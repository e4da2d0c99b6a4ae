"""Figures of chapter 6's bug gallery: a per-pair quantity, right against buggy, on a log axis."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go
import torch

from ._style import COLORWAY, MUTED, _style

__all__ = ["per_pair_figure"]


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
