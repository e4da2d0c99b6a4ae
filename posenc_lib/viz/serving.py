"""Chapter 12's figures: who may attend to whom under padding, packing, windows and sinks; which ids
packed training rows hold; how far decoding drifts per position; how an edited cache's error grows
with depth; and how a cached key drifts when it is K-shifted again and again.

The plotly bundle has scatter and heatmap traces only, so bars are drawn as filled scatter
rectangles."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch

from .._validation import check_positive
from ..serving import packed_causal_mask, packed_document_ids, sliding_window_mask
from ._checks import _int
from ._style import COLORWAY, MUTED, PAPER, _slider, _style

__all__ = [
    "NUMBERING_ROWS",
    "STREAMING_SINKS",
    "STREAMING_WINDOWS",
    "depth_error_figure",
    "id_band_figure",
    "kshift_drift_figure",
    "numberings_figure",
    "position_drift_figure",
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
        {"label": "packed", "mask": packed_causal_mask(lengths, dtype=torch.bool),
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


def _increasing_counts(values: object, name: str) -> list[int]:
    """A non-empty, strictly increasing sequence of integers >= 1 (an x axis of counts)."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
        raise TypeError(f"{name} must be a non-empty sequence of integers, got {values!r}")
    counts = [_int(n, f"{name}[i]", 1) for n in values]
    if sorted(set(counts)) != counts:
        raise ValueError(f"{name} must be increasing, got {counts}")
    return counts


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
    counts = _increasing_counts(n_shifts, "n_shifts")
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


def _values(values: object, name: str, *, length: int | None = None,
            positive: bool = False) -> list[float]:
    """A finite real sequence as floats (``> 0`` if ``positive``; ``length`` entries if given)."""
    if isinstance(values, (torch.Tensor, np.ndarray)):
        values = values.tolist()
    if isinstance(values, (str, bytes, dict)) or not isinstance(values, Sequence):
        raise TypeError(f"{name} must be a sequence of numbers, got {values!r}")
    out = list(values)
    if not out:
        raise ValueError(f"{name} must not be empty")
    if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in out):
        raise TypeError(f"{name} must hold real numbers")
    if not all(math.isfinite(v) and (v > 0 if positive else v >= 0) for v in out):
        raise ValueError(f"{name} must be finite and {'> 0' if positive else '>= 0'}")
    if length is not None and len(out) != length:
        raise ValueError(f"{name} must have {length} entries, got {len(out)}")
    return [float(v) for v in out]


def id_band_figure(
    shares: Sequence[float], band_width: int, *, uniform: float | None = None, title: str = "",
    label: str = "packed rows", compare: dict[str, Sequence[float]] | None = None,
    uniform_label: str = "unpacked rows (every band equal)",
) -> go.Figure:
    """The share of training tokens per band of position ids, as bars, against a flat reference.

    Parameters
    ----------
    shares : sequence of float
        Shape ``(B,)``: the share of tokens whose id falls in band ``i``, ids ``i·band_width`` to
        ``(i + 1)·band_width − 1``; each ``>= 0``.
    band_width : int
        Ids per band (>= 1).
    uniform : float, optional
        A reference share drawn as a dashed horizontal line (for unpacked rows numbered from 0,
        every band holds ``1/B``). Default: none.
    title : str
        Figure title (default: a description of the axes).
    label : str
        Legend name of the bars (default ``"packed rows"``).
    compare : dict, optional
        ``{name: (B,) shares}``: other mixes drawn as step outlines over the same bands, in the
        given order (each ``>= 0``, as many entries as ``shares``). Default: none.
    uniform_label : str
        Legend name of the reference line.

    Returns
    -------
    plotly.graph_objects.Figure
        One filled scatter rectangle per band (``x`` the band's id range, ``y`` from 0 to its share,
        in ``meta["shares"]``), then one step outline per ``compare`` entry (``y`` the shares of
        each band at its two ends), then the reference line if ``uniform`` is given.
    """
    values = _values(shares, "shares")
    band_width = _int(band_width, "band_width", 1)
    if uniform is not None:
        uniform = _values([uniform], "uniform")[0]
    if compare is not None and not isinstance(compare, dict):
        raise TypeError(f"compare must be a dict of name -> shares, got {type(compare).__name__}")
    others = {str(name): _values(other, f"compare[{name!r}]", length=len(values))
              for name, other in (compare or {}).items()}
    fig = go.Figure()
    for i, share in enumerate(values):
        lo, hi = i * band_width, (i + 1) * band_width
        fig.add_trace(go.Scatter(
            x=[lo, lo, hi, hi, lo], y=[0.0, share, share, 0.0, 0.0], mode="lines",
            fill="toself", fillcolor=COLORWAY[0], line={"color": PAPER, "width": 1},
            name=label, legendgroup="bars", showlegend=i == 0,
            hovertemplate=f"{label}, ids {lo}–{hi - 1}: {share:.1%} of the tokens<extra></extra>",
        ))
    for k, (name, other) in enumerate(others.items()):
        xs = [x for i in range(len(other)) for x in (i * band_width, (i + 1) * band_width)]
        fig.add_trace(go.Scatter(
            x=xs, y=[v for v in other for _ in (0, 1)], mode="lines", name=name,
            line={"color": COLORWAY[(2 + k) % len(COLORWAY)], "width": 3},
            hovertemplate=f"{name}: %{{y:.1%}} of the tokens<extra></extra>",
        ))
    if uniform is not None:
        end = len(values) * band_width
        fig.add_trace(go.Scatter(
            x=[0, end], y=[uniform, uniform], mode="lines", name=uniform_label,
            line={"color": COLORWAY[5], "width": 2, "dash": "dash"},
            hovertemplate=f"unpacked rows: {uniform:.1%} per band<extra></extra>",
        ))
    fig.update_xaxes(title_text="position id", dtick=band_width,
                     range=[0, len(values) * band_width])
    fig.update_yaxes(title_text="share of training tokens", tickformat=".0%", rangemode="tozero")
    fig.update_layout(legend={"orientation": "h", "y": -0.25}, margin={"b": 120},
                      meta={"shares": values, "band_width": band_width, "uniform": uniform,
                            "compare": others})
    return _style(fig, title or "Which position ids a model trains on", height=420)


def position_drift_figure(
    drift: dict[str, Sequence[float]], train_len: int, *, title: str = ""
) -> go.Figure:
    """Per position, how far cached decoding is from a fresh pass, with the training length marked.

    Parameters
    ----------
    drift : dict
        ``{label: (L,) sequence}``: one line per model, entry ``m`` the largest logit difference
        at position ``m`` (each ``>= 0``, all of one length ``L``).
    train_len : int
        The training length (1 … L − 1): a dashed vertical line between positions
        ``train_len − 1`` and ``train_len``, the first position past it.
    title : str
        Figure title (default: a description of the axes).

    Returns
    -------
    plotly.graph_objects.Figure
        One ``go.Scatter`` (lines and markers) per label, ``x = 0 … L − 1`` and ``y`` the values as
        given, then the training-length line (``meta["train_len"]``).
    """
    if not isinstance(drift, dict) or not drift:
        raise TypeError("drift must be a non-empty dict {label: (L,) sequence}")
    lines: dict[str, list[float]] = {}
    length = None
    for label, values in drift.items():
        lines[str(label)] = _values(values, f"drift[{label!r}]", length=length)
        length = len(lines[str(label)])
    assert length is not None
    train_len = _int(train_len, "train_len", 1, max(length - 1, 1))
    positions = list(range(length))
    fig = go.Figure()
    for k, (label, values) in enumerate(lines.items()):
        fig.add_trace(go.Scatter(
            x=positions, y=values, mode="lines+markers", name=label,
            line={"color": COLORWAY[k % len(COLORWAY)], "width": 2},
            hovertemplate=f"{label}<br>position %{{x}}: %{{y:.2e}}<extra></extra>",
        ))
    top = max(max(v) for v in lines.values()) or 1.0
    fig.add_trace(go.Scatter(
        x=[train_len - 0.5, train_len - 0.5], y=[0.0, 1.05 * top], mode="lines",
        name=f"training length {train_len}", hoverinfo="skip",
        line={"color": MUTED, "width": 1.5, "dash": "dash"},
    ))
    fig.update_xaxes(title_text="position m of the decoded token", dtick=1)
    fig.update_yaxes(title_text="largest logit gap to a fresh pass", rangemode="tozero")
    fig.update_layout(legend={"orientation": "h", "y": -0.25}, margin={"b": 120},
                      meta={"train_len": train_len})
    return _style(fig, title or "Cached decoding against a fresh pass, per position", height=420)


def depth_error_figure(
    depths: Sequence[int],
    errors: dict[str, Sequence[float]],
    *,
    title: str = "",
    floor: float = 1e-9,
) -> go.Figure:
    """An edited cache's error against the number of layers, one line per edit, on a log axis.

    A log axis shows an exact first layer as rounding (around 1e-6 in float32), decades below
    the errors of deeper models, where a linear axis would put it on zero with them.

    Parameters
    ----------
    depths : sequence of int
        Shape ``(D,)``, increasing, each >= 1: the layer counts of the models measured.
    errors : dict
        ``{label: (D,) sequence}``: entry ``i`` the largest logit difference from the reference
        pass for the model of ``depths[i]`` layers (each ``>= 0``).
    title : str
        Figure title (default: a description of the axes).
    floor : float
        Errors below it (an exact 0 has no logarithm) are drawn at ``floor``; the hover and
        ``customdata`` keep the measured value. Must be > 0.

    Returns
    -------
    plotly.graph_objects.Figure
        One ``go.Scatter`` (lines and markers) per label, ``x = depths``, ``y = max(error,
        floor)`` and ``customdata`` the errors as given; the y axis is logarithmic.
    """
    counts = _increasing_counts(depths, "depths")
    if not isinstance(errors, dict) or not errors:
        raise TypeError("errors must be a non-empty dict {label: (D,) sequence of errors}")
    floor = check_positive(floor, "floor")
    lines = {str(label): _values(values, f"errors[{label!r}]", length=len(counts))
             for label, values in errors.items()}
    fig = go.Figure()
    symbols = ("circle", "square", "diamond", "triangle-up")
    for k, (label, values) in enumerate(lines.items()):
        fig.add_trace(go.Scatter(
            x=counts, y=[max(v, floor) for v in values], customdata=list(values),
            mode="lines+markers", name=label,
            line={"color": COLORWAY[k % len(COLORWAY)], "width": 2},
            marker={"size": 9, "symbol": symbols[k % len(symbols)]},
            hovertemplate=f"{label}<br>%{{x}} layer(s): %{{customdata:.2e}}<extra></extra>",
        ))
    fig.update_xaxes(title_text="layers", tickvals=counts)
    fig.update_yaxes(title_text="max |logit difference| (log)", type="log", exponentformat="power")
    fig.update_layout(legend={"orientation": "h", "y": -0.25}, margin={"b": 140})
    return _style(fig, title or "An edited cache against the reference pass, by depth", height=440)


#: The rows of :func:`numberings_figure`, top to bottom.
NUMBERING_ROWS: tuple[str, ...] = ("text index", "cache slot", "position id")


def numberings_figure(scenarios: dict[str, dict[str, Any]], *, title: str = "") -> go.Figure:
    """The three numbers a token can carry, per scenario, with a slider over the scenarios.

    A heatmap with three rows, ``NUMBERING_ROWS``: the token's index in the text (``None`` for a
    pad), the cache slot it is stored in (``None`` when nothing is cached) and the position id
    the encoding sees. Each cell shows its number; cache slots and position ids that differ from
    the text index are coloured, so the picture shows where the three numberings part.

    Parameters
    ----------
    scenarios : dict
        ``{label: {"text index": seq, "cache slot": seq, "position id": seq, "caption": str}}``,
        one slider step each, in order. The three sequences of a scenario have the same length
        (1 … 32 entries, one per token of the row or cache, left to right); entries are integers
        ``>= 0`` or ``None``.
    title : str
        Figure title (default: a description of the rows).

    Returns
    -------
    plotly.graph_objects.Figure
        One heatmap (``z`` 0 where a number equals the text index, 1 where it differs, ``None``
        where it is missing; ``text`` the numbers, empty where missing) and one slider whose steps
        restyle it; ``meta["scenarios"]`` holds the validated input.
    """
    if not isinstance(scenarios, dict) or not scenarios:
        raise TypeError(f"scenarios must be a non-empty dict of label -> numberings, got "
                        f"{type(scenarios).__name__}")
    clean: dict[str, dict[str, Any]] = {}
    for label, scenario in scenarios.items():
        if not isinstance(scenario, dict):
            raise TypeError(f"scenarios[{label!r}] must be a dict, got {type(scenario).__name__}")
        rows = {}
        for row in NUMBERING_ROWS:
            values = scenario.get(row)
            if isinstance(values, torch.Tensor):
                values = values.tolist()
            if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
                raise TypeError(f"scenarios[{label!r}][{row!r}] must be a sequence of integers "
                                f"or None, got {values!r}")
            rows[row] = [None if v is None else _int(v, f"scenarios[{label!r}][{row!r}][i]", 0)
                         for v in values]
        lengths = {len(v) for v in rows.values()}
        if len(lengths) != 1 or not 1 <= next(iter(lengths)) <= 32:
            raise ValueError(f"scenarios[{label!r}] must give its three rows the same length, "
                             f"1 … 32 entries; got {[len(v) for v in rows.values()]}")
        caption = scenario.get("caption", "")
        if not isinstance(caption, str):
            raise TypeError(f"scenarios[{label!r}]['caption'] must be a string")
        clean[str(label)] = {**rows, "caption": caption}

    def state(rows: dict[str, Any]) -> dict[str, Any]:
        index = rows["text index"]
        n = len(index)
        z, text = [], []
        for row in NUMBERING_ROWS:
            values = rows[row]
            z.append([None if v is None else (0.0 if row == "text index" or v == index[k] else 1.0)
                      for k, v in enumerate(values)])
            text.append(["" if v is None else str(v) for v in values])  # missing: an empty cell
        return {"z": z, "text": text, "x": list(range(n))}

    labels = list(clean)
    first = clean[labels[0]]
    fig = go.Figure(go.Heatmap(
        **state(first), y=list(NUMBERING_ROWS), zmin=0, zmax=1,
        colorscale=[[0, _CLEAR], [1, COLORWAY[1]]], showscale=False, xgap=2, ygap=2,
        texttemplate="%{text}", textfont={"size": 14},
        hovertemplate="entry %{x}, %{y}: %{text}<extra></extra>",
    ))
    fig.update_xaxes(title="entry of the row or cache, left to right", dtick=1)
    fig.update_yaxes(autorange="reversed")
    head = title or "Three numberings: the text index, the cache slot, the position id"
    steps = [
        {"label": label, "method": "update",
         "args": [{k: [v] for k, v in state(clean[label]).items()},
                  {"title.text": f"{head}<br><sup>{clean[label]['caption']}</sup>"}]}
        for label in labels
    ]
    fig.update_layout(sliders=[_slider(steps, 0, "scenario: ", y=-0.25, pad_t=30)],
                      margin={"t": 90, "b": 130}, meta={"scenarios": clean})
    return _style(fig, f"{head}<br><sup>{first['caption']}</sup>", height=380)
