"""Live shuffle of a sentence through one attention head."""

from __future__ import annotations

from typing import Any

import ipywidgets as W

from ..display import explorer
from ..viz._style import _apply_state
from ..viz.permutation import _permutation_state, permutation_figure, sentence_orderings
from ._live import (
    _STYLE,
    LiveExplorer,
    _base_slider,
)


def permutation_live(
    sentence: str = "我爱你", dim: int = 16, seed: int = 0, *, base: float = 10000.0
) -> LiveExplorer:
    """The live shuffle UI: the ordering of the sentence and the encoding's base."""
    orders = sentence_orderings(sentence)
    fig = permutation_figure(sentence, dim, seed, base=base, sliders=False)
    labels = ["".join(sentence[i] for i in order) for order in orders]
    controls = {
        "order": W.Dropdown(
            options=list(zip(labels, range(len(orders)), strict=True)),
            value=0,
            description="ordering",
            style=_STYLE,
        ),
        "base": _base_slider(base),
    }

    def update(ui: LiveExplorer) -> None:
        v = ui.values
        traces, layout = _permutation_state(sentence, orders[v["order"]], dim, seed, v["base"])
        _apply_state(ui.figure, traces)
        title = layout.pop("title.text")
        ui.figure.update_layout(layout, title={"text": title})

    return LiveExplorer(fig, controls, update)


def permutation_explorer(
    sentence: str = "我爱你", dim: int = 16, seed: int = 0, *, base: float = 10000.0
) -> Any:
    """Shuffle a sentence; see :func:`posenc_lib.viz.permutation.permutation_figure`."""
    return explorer(
        lambda: permutation_figure(sentence, dim, seed, base=base),
        lambda: permutation_live(sentence, dim, seed, base=base),
    )
