"""The attention heatmap: labelled query × key weights, tokens on the axes (CJK included)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
import torch

from .._validation import check_sequence
from ._checks import _np
from ._style import SEQUENTIAL, _style

__all__ = [
    "attention_heatmap",
]


def attention_heatmap(
    weights: torch.Tensor | np.ndarray,
    tokens: Sequence[str],
    *,
    key_tokens: Sequence[str] | None = None,
    title: str = "Attention weights",
) -> go.Figure:
    """Labelled attention weights: rows are queries, columns keys (CJK tokens render).

    Parameters
    ----------
    weights : torch.Tensor or numpy.ndarray
        Shape ``(q_len, k_len)``, finite.
    tokens : sequence of str
        ``q_len`` query tokens (also the keys unless ``key_tokens`` is given).
    key_tokens : sequence of str, optional
        ``k_len`` key tokens.
    title : str
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        A heatmap on numeric axes labelled with the tokens (repeated tokens stay separate).
    """
    if not isinstance(weights, (torch.Tensor, np.ndarray)):
        raise TypeError(
            f"weights must be a torch.Tensor or numpy array, got {type(weights).__name__}"
        )
    w = _np(weights)
    if w.dtype.kind not in "fiu":
        raise TypeError(
            f"weights must hold real numbers (attention weights are in [0, 1]), got dtype {w.dtype}"
        )
    w = w.astype(np.float64)
    if w.ndim != 2 or 0 in w.shape:
        raise ValueError(f"weights must have shape (q_len, k_len), got shape {w.shape}")
    if not np.isfinite(w).all():
        raise ValueError("weights must be finite (masked weights are 0, not -inf)")
    tokens = check_sequence(tokens, "tokens", of="str", allow_str=False)
    keys = tokens if key_tokens is None else check_sequence(
        key_tokens, "key_tokens", of="str", allow_str=False)
    for name, toks, n in (("tokens", tokens, w.shape[0]), ("key_tokens", keys, w.shape[1])):
        if not all(isinstance(t, str) for t in toks):
            raise TypeError(f"{name} must be a sequence of str, got {toks!r}")
        if len(toks) != n:
            raise ValueError(f"{name} must have {n} entries to match weights, got {len(toks)}")
    qi, kj = np.meshgrid(np.arange(w.shape[0]), np.arange(w.shape[1]), indexing="ij")
    custom = np.stack(
        (np.asarray(tokens, dtype=object)[qi], np.asarray(keys, dtype=object)[kj]), -1
    )
    small = max(w.shape) <= 16
    fig = go.Figure(
        go.Heatmap(
            z=w,
            x=np.arange(w.shape[1]),
            y=np.arange(w.shape[0]),
            customdata=custom,
            colorscale=SEQUENTIAL,
            zmin=0.0,
            zmax=max(1.0, float(w.max())),
            texttemplate="%{z:.2f}" if small else None,
            textfont={"size": 12},
            colorbar={"title": {"text": "weight"}, "thickness": 12},
            hovertemplate=(
                "query %{y} “%{customdata[0]}” → key %{x} “%{customdata[1]}”"
                "<br>weight = %{z:.3f}<extra></extra>"
            ),
        )
    )
    fig.update_layout(
        xaxis={
            "title": {"text": "key token"},
            "tickmode": "array",
            "tickvals": list(range(w.shape[1])),
            "ticktext": list(keys),
            "side": "bottom",  # as in the shuffle explorer (viz.permutation), so the two agree
            "tickfont": {"size": 15},
        },
        yaxis={
            "title": {"text": "query token"},
            "tickmode": "array",
            "tickvals": list(range(w.shape[0])),
            "ticktext": list(tokens),
            "autorange": "reversed",
            "tickfont": {"size": 15},
        },
    )
    side = 120 + 40 * w.shape[0]
    return _style(fig, title, height=min(max(side, 320), 720))
