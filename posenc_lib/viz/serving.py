"""Chapter 12's figures: who may attend to whom under padding, packing, windows and sinks, and how
a cached key drifts when it is K-shifted again and again."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch

from ..serving import packed_causal_mask, packed_document_ids, sliding_window_mask
from ._checks import _int
from ._style import COLORWAY, _slider, _style

__all__ = [
    "STREAMING_SINKS",
    "STREAMING_WINDOWS",
    "kshift_drift_figure",
    "serving_masks_figure",
    "streaming_cache_figure",
]

_SEEN = COLORWAY[0]
_CLEAR = "#eaeef2"


def _masks(lengths: Sequence[int], n_pad: int, windows: Sequence[int]) -> list[dict[str, Any]]:
    """One entry per slider step: its label, its ``(seq, seq)`` mask and a one-line caption."""
    total = sum(lengths)
    causal = torch.ones(total, total, dtype=torch.bool).tril()
    padded = causal.clone()
    padded[:, :n_pad] = False  # pad keys are masked for every query
    padded[:n_pad] = False  # pad queries produce nothing anyone reads
    steps = [
        {"label": "causal", "mask": causal,
         "caption": f"causal: query i sees keys 0…i ({total} tokens)"},
        {"label": f"left pad {n_pad}", "mask": padded,
         "caption": f"{n_pad} pad slots on the left: masked as keys; real ids restart at 0"},
        {"label": "packed", "mask": packed_causal_mask(lengths),
         "caption": "packed " + " + ".join(str(n) for n in lengths)
         + ": one causal block per document"},
    ]
    for window in windows:
        steps.append({"label": f"window {window}", "mask": sliding_window_mask(total, window),
                      "caption": f"sliding window W = {window}: W keys, the query's own included"})
    return steps


def serving_masks_figure(
    lengths: Sequence[int] = (4, 3, 5), n_pad: int = 3, windows: Sequence[int] = (2, 3, 4, 6)
) -> go.Figure:
    """Attention masks of chapter 12 in one heatmap, with a slider over the cases.

    Parameters
    ----------
    lengths : sequence of int
        Document lengths of the packed row (each 1–32, total at most 64).
    n_pad : int
        Left padding slots in the padded case (0 … total − 1).
    windows : sequence of int
        Sliding-window sizes shown (each 1 … 64).

    Returns
    -------
    plotly.graph_objects.Figure
        One heatmap (query × key, blue = may attend) and a slider whose steps are the cases.
    """
    if isinstance(lengths, (str, bytes)) or not isinstance(lengths, Sequence) or not lengths:
        raise TypeError(f"lengths must be a non-empty sequence of integers, got {lengths!r}")
    lengths = [_int(n, "lengths[i]", 1, 32) for n in lengths]
    total = sum(lengths)
    if total > 64:
        raise ValueError(f"lengths must sum to at most 64 (one readable grid), got {total}")
    n_pad = _int(n_pad, "n_pad", 0, total - 1)
    if isinstance(windows, (str, bytes)) or not isinstance(windows, Sequence):
        raise TypeError(f"windows must be a sequence of integers, got {windows!r}")
    windows = [_int(w, "windows[i]", 1, 64) for w in windows]
    steps = _masks(lengths, n_pad, windows)
    docs = packed_document_ids(lengths).tolist()
    hover = "query %{y}, key %{x}: %{customdata}<extra></extra>"

    def trace_state(mask: torch.Tensor) -> dict[str, Any]:
        z = mask.to(torch.float64).tolist()
        text = [["attends" if v else "masked" for v in row] for row in z]
        return {"z": z, "customdata": text}

    fig = go.Figure(
        go.Heatmap(
            **trace_state(steps[0]["mask"]),
            zmin=0, zmax=1, colorscale=[[0, _CLEAR], [1, _SEEN]], showscale=False,
            xgap=1, ygap=1, hovertemplate=hover,
        )
    )
    fig.update_xaxes(title="key position", dtick=1, constrain="domain")
    fig.update_yaxes(title="query position", autorange="reversed", dtick=1,
                     scaleanchor="x", constrain="domain")
    slider_steps = [
        {
            "label": step["label"],
            "method": "update",
            "args": [
                {k: [v] for k, v in trace_state(step["mask"]).items()},
                {"title.text": f"Who may attend to whom<br><sup>{step['caption']}</sup>"},
            ],
        }
        for step in steps
    ]
    fig.update_layout(
        sliders=[_slider(slider_steps, 0, "mask: ", y=-0.1, pad_t=30)],
        margin={"t": 80, "b": 90},
        meta={"documents": docs},
    )
    return _style(fig, f"Who may attend to whom<br><sup>{steps[0]['caption']}</sup>", height=560)


#: The window sizes and sink counts offered by the sliders of :func:`streaming_cache_figure`.
STREAMING_WINDOWS: tuple[int, ...] = (2, 3, 4, 6, 8, 12, 16)
STREAMING_SINKS: tuple[int, ...] = (0, 1, 2, 4)

_SINK = COLORWAY[1]
_EVICTED = "#c9d1d9"


def _part(mask: torch.Tensor) -> dict[str, Any]:
    """A heatmap layer that draws the ``True`` cells of ``mask`` (1) and leaves the rest a gap."""
    return {"z": [[1 if v else None for v in row] for row in mask.tolist()]}


def _window_part(seq_len: int, window: int) -> dict[str, Any]:
    return _part(sliding_window_mask(seq_len, window))


def _sink_part(seq_len: int, n_sinks: int) -> dict[str, Any]:
    """The sinks' cells: earlier-or-own keys among the first ``n_sinks``."""
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool).tril()
    return _part(causal & (torch.arange(seq_len)[None, :] < n_sinks))


def streaming_cache_figure(
    seq_len: int = 20,
    window: int = 4,
    n_sinks: int = 2,
    *,
    windows: Sequence[int] = STREAMING_WINDOWS,
    sinks: Sequence[int] = STREAMING_SINKS,
) -> go.Figure:
    """StreamingLLM's cache as a mask: which keys each query sees, with a slider for each knob.

    Three heatmap layers, query × key: every earlier key in grey (evicted unless a layer above
    covers it), the ``window`` most recent keys in blue (the query's own included, as
    :func:`posenc_lib.serving.sliding_window_mask`), the first ``n_sinks`` keys in orange. The
    coloured cells together are :func:`posenc_lib.serving.streaming_cache_mask`. One slider sets
    the window (restyling the blue layer only), the other the number of sinks (the orange layer
    only), so the two combine freely in the static page.

    Parameters
    ----------
    seq_len : int
        Tokens drawn (2 … 64).
    window : int
        Window the figure opens on (1 … seq_len); added to ``windows`` if missing.
    n_sinks : int
        Sinks the figure opens on (0 … seq_len); added to ``sinks`` if missing.
    windows, sinks : sequence of int
        The slider steps (each in the ranges above).

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: evicted (grey), window (blue), sinks (orange), then two legend-only markers; slider
        0 is the window, slider 1 the number of sinks.
    """
    seq_len = _int(seq_len, "seq_len", 2, 64)
    window = _int(window, "window", 1, seq_len)
    n_sinks = _int(n_sinks, "n_sinks", 0, seq_len)
    grids = []
    for name, grid, value, lo in (("windows", windows, window, 1), ("sinks", sinks, n_sinks, 0)):
        if isinstance(grid, (str, bytes)) or not isinstance(grid, Sequence) or not grid:
            raise TypeError(f"{name} must be a non-empty sequence of integers, got {grid!r}")
        checked = {_int(v, f"{name}[i]", lo, seq_len) for v in grid}
        grids.append(sorted(checked | {value}))
    window_grid, sink_grid = grids
    positions = list(range(seq_len))
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool).tril()
    # The grey layer has no hover of its own: under a coloured cell it would say "evicted".
    layers = (
        ("evicted", _part(causal), _EVICTED, None),
        ("window", _window_part(seq_len, window), _SEEN, "in the recent window"),
        ("sinks", _sink_part(seq_len, n_sinks), _SINK, "a sink: kept for good"),
    )
    fig = go.Figure()
    for name, props, colour, words in layers:
        hover: dict[str, Any] = (
            {"hoverinfo": "skip"} if words is None else
            {"hovertemplate": f"query %{{y}}, key %{{x}}: {words}<extra></extra>"}
        )
        fig.add_trace(go.Heatmap(
            **props, x=positions, y=positions, name=name, zmin=0, zmax=1,
            colorscale=[[0, colour], [1, colour]], showscale=False, xgap=1, ygap=1,
            hoverongaps=False, **hover,
        ))
    for label, colour in (("recent window (W)", _SEEN), ("sink (kept for good)", _SINK),
                          ("evicted", _EVICTED)):
        fig.add_trace(go.Scatter(
            x=[None], y=[None], mode="markers", name=label, hoverinfo="skip",
            marker={"symbol": "square", "size": 12, "color": colour},
        ))
    fig.update_xaxes(title="key position n", dtick=2, constrain="domain")
    fig.update_yaxes(title="query position m", autorange="reversed", dtick=2,
                     scaleanchor="x", constrain="domain")
    window_steps = [
        {"label": str(w), "method": "restyle",
         "args": [{"z": [_window_part(seq_len, w)["z"]]}, [1]]}
        for w in window_grid
    ]
    sink_steps = [
        {"label": str(s), "method": "restyle",
         "args": [{"z": [_sink_part(seq_len, s)["z"]]}, [2]]}
        for s in sink_grid
    ]
    fig.update_layout(
        sliders=[
            {**_slider(window_steps, window_grid.index(window), "window W = ", y=-0.1, pad_t=30),
             "len": 0.56},
            {**_slider(sink_steps, sink_grid.index(n_sinks), "sinks = ", y=-0.1, pad_t=30),
             "x": 0.64, "len": 0.36},
        ],
        legend={"orientation": "h", "x": 0.0, "y": 1.0, "yanchor": "bottom"},
        margin={"t": 110, "b": 100},
        meta={"windows": window_grid, "sinks": sink_grid},
    )
    return _style(fig, "Which keys a StreamingLLM cache keeps for each query", height=640)


def kshift_drift_figure(
    n_shifts: Sequence[int], errors: dict[str, Sequence[float]], *, title: str = ""
) -> go.Figure:
    """A cached key's error against the number of K-shifts it went through, one line per cache.

    The errors are measured by the caller (e.g. :func:`posenc_lib.serving.repeated_kshift`
    against the float64 key at its new position); this only draws them, unrounded, on log axes.

    Parameters
    ----------
    n_shifts : sequence of int
        Shape ``(S,)``, ``S >= 1``: the shift counts, each >= 1 (a log axis), increasing.
    errors : dict
        ``{label: (S,) sequence}``: one line per cache or schedule, entry ``i`` the error after
        ``n_shifts[i]`` shifts; finite and > 0 (a log axis).
    title : str
        Figure title (default: a description of the axes).

    Returns
    -------
    plotly.graph_objects.Figure
        One ``go.Scatter`` (lines and markers) per label, in the order given, with
        ``x = n_shifts`` and ``y`` the errors as given (floats).
    """
    if isinstance(n_shifts, (str, bytes)) or not isinstance(n_shifts, Sequence) or not n_shifts:
        raise TypeError(f"n_shifts must be a non-empty sequence of integers, got {n_shifts!r}")
    counts = [_int(n, "n_shifts[i]", 1) for n in n_shifts]
    if sorted(set(counts)) != counts:
        raise ValueError(f"n_shifts must be increasing, got {counts}")
    if not isinstance(errors, dict) or not errors:
        raise TypeError("errors must be a non-empty dict {label: (S,) sequence of errors}")
    lines: dict[str, list[float]] = {}
    for label, values in errors.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
            raise TypeError(f"errors[{label!r}] must be a sequence of numbers, got {values!r}")
        if len(values) != len(counts):
            raise ValueError(f"errors[{label!r}] must have one value per entry of n_shifts "
                             f"({len(counts)}), got {len(values)}")
        if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values):
            raise TypeError(f"errors[{label!r}] must hold real numbers")
        if not all(math.isfinite(v) and v > 0 for v in values):
            raise ValueError(f"errors[{label!r}] must be finite and > 0 (a log axis)")
        lines[str(label)] = [float(v) for v in values]
    fig = go.Figure()
    for k, (label, values) in enumerate(lines.items()):
        fig.add_trace(go.Scatter(
            x=counts, y=values, mode="lines+markers", name=label,
            line={"color": COLORWAY[k % len(COLORWAY)], "width": 1.5},
            hovertemplate=f"{label}<br>%{{x}} shifts: error %{{y:.1e}}<extra></extra>",
        ))
    fig.update_xaxes(type="log", title_text="K-shifts of one position")
    fig.update_yaxes(type="log", title_text="worst relative key error")
    fig.update_layout(legend={"orientation": "h", "y": -0.25}, margin={"b": 150})
    return _style(fig, title or "A cached key's error after repeated K-shifts", height=480)
