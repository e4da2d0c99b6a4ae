"""Chapter 12's mask gallery: who may attend to whom under padding, packing and windows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
import torch

from ..serving import packed_causal_mask, packed_document_ids, sliding_window_mask
from ._checks import _int
from ._style import COLORWAY, _slider, _style

__all__ = ["serving_masks_figure"]

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
