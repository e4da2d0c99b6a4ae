"""The live frame: a light figure widget that sends JSON, and one shared copy of plotly.js."""

from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np

from posenc_lib import widgets as Wd
from posenc_lib.widgets._live import FigureView, plotly_library


def _array(value: Any) -> np.ndarray:
    """An array as plotly's JSON carries it: a list, or base64 ``bdata`` with dtype and shape."""
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = [int(s) for s in str(value.get("shape", len(flat))).split(",")]
        return flat.reshape(shape)
    return np.asarray(value, dtype=float)


def test_a_move_sends_the_new_figure_as_json() -> None:
    ui = Wd.heatmap_live(seq_len=16, dim=16)
    before = ui.view.figure
    ui.controls["seq_len"].value = 20
    sent = json.loads(ui.view.figure)
    assert ui.view.figure != before
    assert _array(sent["data"][0]["z"]).shape == (20, 16)
    assert np.asarray(ui.figure.data[0].z).shape == (20, 16)  # the Python figure agrees


def test_non_finite_numbers_reach_the_browser_without_breaking_json() -> None:
    # ALiBi's masked cells are NaN in Python. The widget protocol refuses NaN in JSON: arrays go
    # as binary (plotly.js reads NaN there as a gap) and any other non-finite number as null.
    ui = Wd.alibi_live(n_heads=4, seq_len=8)
    ui.controls["seq_len"].value = 9
    z = _array(json.loads(ui.view.figure)["data"][0]["z"])
    assert z.shape == (9, 9) and np.isnan(z).any()
    assert "NaN" not in ui.view.figure and "Infinity" not in ui.view.figure


def test_every_figure_shares_one_plotly_library() -> None:
    views = [Wd.euler_live().view, Wd.decay_live(dim=32).view]
    assert all(isinstance(v, FigureView) for v in views)
    assert {id(v.library) for v in views} == {id(plotly_library())}
    assert plotly_library().source.startswith("/*! plotly.js v")
    # The figure widget itself carries no plotly.js: a notebook stores the library once.
    assert all(len(v.figure) < 200_000 for v in views)
