"""The shuffle figure: one attention head on every ordering of a sentence, with and without PE.

Without a positional encoding, reordering the tokens only relabels the attention matrix: the
weight with which 我 attends to 你 is the same in every ordering. With the sinusoidal encoding
added, the same pair of tokens gets a different weight in each ordering.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from ..permutation import TinySelfAttention, ToyEmbedding
from ..sinusoidal import sinusoidal_table
from ._checks import _base, _bool, _even, _int, _np, _seed
from ._style import COLORWAY, INK, SEQUENTIAL, _slider, _style

__all__ = [
    "order_training_figure",
    "permutation_figure",
    "sentence_orderings",
]

MAX_TOKENS = 4  # 4! = 24 orderings: enough to explore, small enough for the static page


def sentence_orderings(sentence: str) -> list[tuple[int, ...]]:
    """Every ordering of the sentence's characters, the original first.

    Parameters
    ----------
    sentence : str
        2 to 4 characters, each one token (e.g. ``"我爱你"``).

    Returns
    -------
    list of tuple of int
        ``len(sentence)!`` index orders, in lexicographic order (so ``(0, 1, …)`` comes first).
    """
    if not isinstance(sentence, str):
        raise TypeError(f"sentence must be a str, got {type(sentence).__name__}")
    if not 2 <= len(sentence) <= MAX_TOKENS:
        raise ValueError(
            f"sentence must have 2 to {MAX_TOKENS} characters, got {len(sentence)}: {sentence!r}"
        )
    return list(itertools.permutations(range(len(sentence))))


def _permutation_weights(
    sentence: str, order: tuple[int, ...], dim: int, seed: int, base: float
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Tokens in ``order`` and their attention weights ``(seq, seq)`` without and with PE."""
    vocab = list(dict.fromkeys(sentence))  # distinct tokens, first appearance first
    embed = ToyEmbedding(vocab, dim, seed=seed)
    # seed + 1 for the head, as TinyEncoder does: with one seed W_q's rows would repeat the
    # embedding table.
    head = TinySelfAttention(dim, seed=seed + 1)
    tokens = [sentence[i] for i in order]
    x = embed(tokens)  # (seq, dim)
    pe = sinusoidal_table(len(tokens), dim, base, dtype=torch.float64)  # (seq, dim)
    _, plain = head(x)  # (seq, seq)
    _, with_pe = head(x + pe)  # (seq, seq)
    return tokens, _np(plain), _np(with_pe)


def _pair_title(sentence: str, tokens: list[str], plain: np.ndarray, with_pe: np.ndarray) -> str:
    # Follow the sentence's first and last characters wherever the ordering puts them.
    a, b = sentence[0], sentence[-1]
    i, j = tokens.index(a), tokens.index(b)
    return (
        f"ordering “{''.join(tokens)}”: weight {a} → {b} is {plain[i, j]:.3f} without positions, "
        f"{with_pe[i, j]:.3f} with sinusoidal PE"
    )


def _permutation_state(
    sentence: str, order: tuple[int, ...], dim: int, seed: int, base: float
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Trace updates and layout updates for one ordering."""
    tokens, plain, with_pe = _permutation_weights(sentence, order, dim, seed, base)
    n = len(tokens)
    labels = np.array(tokens, dtype=object)
    custom = np.stack(np.broadcast_arrays(labels[:, None], labels[None, :]), -1).tolist()
    traces = [
        {"z": np.round(w, 4).tolist(), "customdata": custom, "text": np.round(w, 2).tolist()}
        for w in (plain, with_pe)
    ]
    ticks = {"tickmode": "array", "tickvals": list(range(n)), "ticktext": tokens}
    layout = {
        "xaxis": ticks,
        "xaxis2": ticks,
        "yaxis": {**ticks, "autorange": "reversed"},
        "yaxis2": {**ticks, "autorange": "reversed"},
        "title.text": _pair_title(sentence, tokens, plain, with_pe),
    }
    return traces, layout


def permutation_figure(
    sentence: str = "我爱你",
    dim: int = 16,
    seed: int = 0,
    order_index: int = 0,
    *,
    base: float = 10000.0,
    sliders: bool = True,
) -> go.Figure:
    """Attention weights of one seeded head for every ordering of ``sentence``.

    Left: token embeddings only, so a reordering merely relabels rows and columns. Right: the
    sinusoidal table ``sinusoidal_table(seq, dim, base)`` added first, so the weights themselves
    change. Numbers come from :class:`posenc_lib.permutation.TinySelfAttention`.

    Parameters
    ----------
    sentence : str
        2 to 4 characters, one token each.
    dim : int
        Embedding width (even, 2 … 512).
    seed : int
        Seed of the embeddings (0 … 2**63 − 1); the head's weights use ``seed + 1``, so
        ``ToyEmbedding(vocab, dim, seed=s)`` and ``TinySelfAttention(dim, seed=s + 1)`` rebuild it.
    order_index : int
        Which ordering to show first, an index into :func:`sentence_orderings`.
    base : float
        Base of the sinusoidal encoding (> 1).
    sliders : bool
        Add a slider over all orderings (static book); ``False`` for the live widget.

    Returns
    -------
    plotly.graph_objects.Figure
        Two heatmaps, ``(seq, seq)`` each.
    """
    orders = sentence_orderings(sentence)
    dim = _even(dim, "dim", 2, 512)
    seed = _seed(seed)
    order_index = _int(order_index, "order_index", 0, len(orders) - 1)
    base = _base(base)
    sliders = _bool(sliders, "sliders")

    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.14,
        subplot_titles=("no positional encoding", "with sinusoidal PE added"),
    )
    traces, layout = _permutation_state(sentence, orders[order_index], dim, seed, base)
    for col, props in enumerate(traces, start=1):
        fig.add_trace(
            go.Heatmap(
                **props,
                colorscale=SEQUENTIAL,
                zmin=0.0,
                zmax=1.0,
                texttemplate="%{text}",
                textfont={"size": 13},
                showscale=col == 2,
                colorbar={"title": {"text": "weight"}, "thickness": 12},
                hovertemplate=(
                    "query “%{customdata[0]}” → key “%{customdata[1]}”"
                    "<br>weight = %{z:.3f}<extra></extra>"
                ),
            ),
            row=1,
            col=col,
        )
    fig.update_layout(
        xaxis={"title": {"text": "key token"}, "tickfont": {"size": 15}},
        xaxis2={"title": {"text": "key token"}, "tickfont": {"size": 15}},
        yaxis={"title": {"text": "query token"}, "tickfont": {"size": 15}},
        yaxis2={"tickfont": {"size": 15}},
    )
    fig.update_layout(
        {k: v for k, v in layout.items() if k != "title.text"}
    )
    if sliders:
        steps = []
        for order in orders:
            step_traces, step_layout = _permutation_state(sentence, order, dim, seed, base)
            data = {
                "z": [t["z"] for t in step_traces],
                "customdata": [t["customdata"] for t in step_traces],
                "text": [t["text"] for t in step_traces],
            }
            steps.append(
                {
                    "method": "update",
                    "label": "".join(sentence[i] for i in order),
                    "args": [data, step_layout, [0, 1]],
                }
            )
        fig.update_layout(
            sliders=[_slider(steps, order_index, "ordering: ", y=-0.2)], margin={"b": 150}
        )
    fig = _style(fig, layout["title.text"], height=480 if sliders else 400)
    fig.update_layout(title={"font": {"size": 14}}, margin={"t": 90})
    return fig


def order_training_figure(losses: dict[str, np.ndarray]) -> go.Figure:
    """Training curves of chapter 1's sequence-vs-reversal task, with the bag floor ``log 2``.

    Parameters
    ----------
    losses : dict[str, np.ndarray]
        One entry per run: a legend name and its ``(steps,)`` training losses in nats
        (:attr:`posenc_lib.order_task.OrderRun.losses`), all of one length.

    Returns
    -------
    go.Figure
        One line per run in the given order, then the dotted line at ``log 2``.
    """
    if not isinstance(losses, dict) or not losses:
        raise TypeError("losses must be a non-empty dict of name -> (steps,) array")
    curves = {}
    for name, values in losses.items():
        y = np.asarray(_np(values), dtype=float)
        if y.ndim != 1 or y.size < 2 or not np.isfinite(y).all():
            raise ValueError(f"losses[{name!r}] must be a finite 1-D array of at least 2 values")
        curves[str(name)] = y
    if len({y.size for y in curves.values()}) != 1:
        raise ValueError("losses must all have the same number of steps")
    steps = np.arange(1, next(iter(curves.values())).size + 1)
    fig = go.Figure()
    for (name, y), colour in zip(curves.items(), itertools.cycle(COLORWAY)):
        fig.add_trace(go.Scatter(
            x=steps.tolist(), y=y.round(4).tolist(), mode="lines", name=name,
            line={"color": colour, "width": 2},
            hovertemplate=f"{name}<br>step %{{x}}: loss %{{y:.3f}}<extra></extra>"))
    # Drawn last and dark, and labelled on the plot: a bag model's curve lies on this line.
    fig.add_trace(go.Scatter(
        x=[1, int(steps[-1])], y=[float(np.log(2))] * 2, mode="lines", name="log 2: a bag's floor",
        line={"color": INK, "dash": "dash", "width": 1.5}, hoverinfo="skip"))
    fig.add_annotation(x=int(steps[-1]), y=float(np.log(2)), text="log 2: a bag's floor",
                       showarrow=False, xanchor="right", yanchor="bottom", yshift=6,
                       font={"color": INK, "size": 12})
    fig.update_xaxes(title_text="training step")
    fig.update_yaxes(title_text="cross-entropy (nats)", rangemode="tozero")
    fig.update_layout(legend={"orientation": "h", "y": -0.25})
    return _style(fig, "Sequence vs its reversal: training loss", height=420)
