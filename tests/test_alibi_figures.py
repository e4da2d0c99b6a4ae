"""ALiBi figures and live explorers: the numbers drawn are the library's, at every static step;
nothing NaN or infinite reaches the browser; every live explorer's messages are valid JSON."""

from __future__ import annotations

import math
import warnings

import ipywidgets
import numpy as np
import plotly.graph_objects as go
import pytest
import torch
from ipywidgets.widgets.widget import _remove_buffers
from jupyter_client.session import json_packer

from posenc_lib import alibi_bias, alibi_slopes, rope_decay_bound
from posenc_lib import widgets as Wd
from posenc_lib.alibi import alibi_reach, alibi_window_mass
from posenc_lib.display import StaticFigure
from posenc_lib.viz.alibi import (
    HEADS_GRID,
    alibi_heatmaps,
    alibi_reach_figure,
    alibi_rope_figure,
    alibi_window_figure,
)


def _floats(obj: object) -> list[float]:
    """Every float in a nested plotly JSON structure (numpy arrays included)."""
    if isinstance(obj, dict):
        return [f for v in obj.values() for f in _floats(v)]
    if isinstance(obj, (list, tuple)):
        return [f for v in obj for f in _floats(v)]
    if isinstance(obj, np.ndarray):
        return _floats(obj.tolist())
    if isinstance(obj, float):
        return [obj]
    return []


def _finite_everywhere(fig: go.Figure) -> bool:
    return all(math.isfinite(f) for f in _floats(fig.to_plotly_json()))


def _kb(fig: go.Figure) -> float:
    return len(StaticFigure(fig).to_html().encode()) / 1e3


def _grid(values: list) -> np.ndarray:
    return np.array([[np.nan if v is None else v for v in row] for row in values], dtype=float)


# --- heatmaps ---


def test_heatmap_steps_hold_the_bias_and_weights_with_none_for_masked_cells() -> None:
    fig = alibi_heatmaps(n_heads=6, seq_len=10, head=2)
    bias = alibi_bias(6, 10, dtype=torch.float64).numpy()
    steps = fig.layout.sliders[0].steps
    assert [s.label for s in steps] == [str(h) for h in range(6)]
    for h, step in enumerate(steps):
        z = step.args[0]["z"][0]
        assert all((v is None) == (j > i) for i, row in enumerate(z) for j, v in enumerate(row))
        np.testing.assert_allclose(_grid(z), np.where(np.isfinite(bias[h]), bias[h], np.nan),
                                   atol=6e-4)
        w = np.asarray(step.args[0]["z"][1], dtype=float)
        np.testing.assert_allclose(w.sum(-1), 1.0, atol=6e-3)
        assert np.all(np.triu(w, 1) == 0)
    assert _finite_everywhere(fig)


def test_heatmap_at_its_largest_values_is_sampled_and_small() -> None:
    fig = alibi_heatmaps(n_heads=128, seq_len=512, head=127)
    steps = fig.layout.sliders[0].steps
    assert len(steps) <= 13 and steps[fig.layout.sliders[0].active].label == "127"
    positions = np.asarray(fig.data[0].x)
    assert positions[0] == 0 and positions[-1] == 511 and len(positions) <= 40
    bias = alibi_bias(128, 512, dtype=torch.float64)[127].numpy()[np.ix_(positions, positions)]
    z = _grid(steps[-1].args[0]["z"][0])
    np.testing.assert_allclose(z, np.where(np.isfinite(bias), bias, np.nan), atol=6e-4)
    assert _kb(fig) < 300 and _finite_everywhere(fig)


def test_heatmap_colour_bar_sits_between_the_panels_and_collides_with_no_title() -> None:
    fig = alibi_heatmaps()
    left_end, right_start = fig.layout.xaxis.domain[1], fig.layout.xaxis2.domain[0]
    assert left_end <= fig.data[0].colorbar.x < right_start
    assert fig.layout.yaxis.title.text == "query position m"
    assert fig.layout.yaxis2.title.text is None  # the right panel shares the left's y title


def test_live_heatmap_is_full_resolution_and_json_safe() -> None:
    ui = Wd.alibi_live(n_heads=3, seq_len=40)
    ui.controls["head"].value = 2
    z = ui.figure.data[0].z
    bias = alibi_bias(3, 40, dtype=torch.float64)[2].numpy()
    assert len(z) == 40 and all(v is None for v in z[0][1:])
    np.testing.assert_allclose(_grid(z), np.where(np.isfinite(bias), bias, np.nan))


# --- reach ---


def test_reach_steps_are_the_library_reach_for_every_head_count() -> None:
    fig = alibi_reach_figure(n_heads=12, context=4096)
    steps = fig.layout.sliders[0].steps
    assert [int(s.label) for s in steps] == list(HEADS_GRID)
    for step in steps:
        n = int(step.label)
        reach = alibi_reach(n).numpy()
        for k in range(3):
            assert step.args[0]["x"][k + 1] == list(range(n))
            np.testing.assert_allclose(step.args[0]["y"][k + 1], reach[:, k], atol=6e-4)
    assert fig.data[4].y == (4096, 4096)
    np.testing.assert_allclose(fig.data[1].customdata, alibi_slopes(12, dtype=torch.float64))


# --- ALiBi beside RoPE ---


def test_alibi_lines_end_at_minus_m_r_and_rope_steps_are_the_decay_bound() -> None:
    fig = alibi_rope_figure(n_heads=8, base=1e4, dim=64, max_distance=512)
    y = fig.data[0].y
    ends = [y[3 * h + 1] for h in range(8)]
    np.testing.assert_allclose(ends, -512 * alibi_slopes(8, dtype=torch.float64).numpy(), rtol=1e-4)
    assert y[2::3] == (None,) * 8  # breaks between the heads
    head_slider, base_slider = fig.layout.sliders
    assert [int(s.label) for s in head_slider.steps] == list(HEADS_GRID)
    for step in base_slider.steps:
        base = float(step.label.replace(" ", "").replace("e", "e+")) if "e" in step.label \
            else float(step.label.replace(" ", ""))
        f = rope_decay_bound(64, base, 512).numpy()
        np.testing.assert_allclose(step.args[0]["y"][0], f / f[0], atol=6e-4)
        assert list(step.args[1]) == [1]  # the base slider moves only the RoPE curve
    assert all(list(s.args[1]) == [0] for s in head_slider.steps)
    assert _kb(alibi_rope_figure(128, 1e6, 1024, 2048)) < 300


# --- window mass ---


def test_window_steps_are_the_closed_form_mass() -> None:
    fig = alibi_window_figure(n_heads=8, window=256, max_factor=8)
    for step in fig.layout.sliders[0].steps:
        n = int(step.label)
        x, y = step.args[0]["x"][0], step.args[0]["y"][0]
        per_head = len(x) // n
        lengths = [int(v) for v in x[: per_head - 1]]
        assert lengths[0] == 256 and lengths[-1] == 2048
        leak = np.maximum(1 - alibi_window_mass(n, lengths, 256).numpy(), 1e-6)  # the floor
        got = np.array([v for v in y if v is not None]).reshape(n, -1)
        np.testing.assert_allclose(got, leak, rtol=1e-3, atol=1e-9)
        assert fig.layout.yaxis.type == "log"
    assert _kb(alibi_window_figure(128, 10**6, 1024)) < 300


def test_window_curves_are_named_by_head_and_slope() -> None:
    # 8 heads, L = 512, to 16L: heads 5, 6, 7 leave the floor (leaks e^−8, e^−4, e^−2), the rest
    # share one name; each name sits at its own curve's right end.
    fig = alibi_window_figure(n_heads=8, window=512, max_factor=16)
    names = fig.data[1]
    assert list(names.text) == ["head 5 (μ = 1/64)", "head 6 (μ = 1/128)", "head 7 (μ = 1/256)",
                                "5 steepest heads (μ ≥ 1/32)"]
    np.testing.assert_allclose(names.y[:3], [math.exp(-8), math.exp(-4), math.exp(-2)], rtol=1e-3)
    assert set(fig.data[0].customdata) == set(range(8))  # the hover's head index
    for step in fig.layout.sliders[0].steps:  # every slider step renames the curves
        n, text = int(step.label), step.args[0]["text"][1]
        assert list(step.args[1]) == [0, 1]
        assert (text == []) if n > 16 else text[0].startswith("head ")


# --- bad parameters ---


@pytest.mark.parametrize(
    ("builder", "kwargs", "name"),
    [
        (alibi_heatmaps, {"n_heads": 129}, "n_heads"),
        (alibi_heatmaps, {"seq_len": 513}, "seq_len"),
        (alibi_reach_figure, {"n_heads": 0}, "n_heads"),
        (alibi_reach_figure, {"context": 0}, "context"),
        (alibi_rope_figure, {"base": 1.0}, "base"),
        (alibi_rope_figure, {"dim": 7}, "dim"),
        (alibi_rope_figure, {"max_distance": 4096}, "max_distance"),
        (alibi_window_figure, {"window": 0}, "window"),
        (alibi_window_figure, {"max_factor": 1}, "max_factor"),
    ],
)
def test_bad_parameters_raise_value_error_naming_them(builder, kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        builder(**kwargs)


def test_bad_explorer_parameters_raise_in_both_modes(monkeypatch: pytest.MonkeyPatch) -> None:
    for static in ("1", ""):
        monkeypatch.setenv("POSENC_STATIC", static)
        with pytest.raises(ValueError, match="n_heads"):
            Wd.alibi_reach_explorer(n_heads=0)
        with pytest.raises(ValueError, match="window"):
            Wd.alibi_window_explorer(window=0)
        with pytest.raises(TypeError, match="n_heads"):
            Wd.alibi_rope_explorer(n_heads=2.5)


# --- every live explorer on the wire ---

LIVE = sorted(name for name in Wd.__all__ if name.endswith("_live"))


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """Serialise every widget message as the kernel does (jupyter_client, allow_nan=False).

    In a kernel a NaN in a message only logs "Message serialization failed"; here, with warnings
    as errors, it fails the test.
    """
    sent: list[dict] = []

    def send(self, msg, buffers=None) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            json_packer(msg)
        sent.append(msg)

    monkeypatch.setattr(ipywidgets.Widget, "_send", send)
    return sent


@pytest.mark.parametrize("name", LIVE)
def test_every_live_explorer_sends_only_json(wire: list[dict], name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ui = getattr(Wd, name)()
        json_packer(_remove_buffers(ui.view.get_state())[0])  # the state sent on display
        for control in ui.controls.values():
            if hasattr(control, "max") and hasattr(control, "min"):
                for value in (control.max, control.min, control.value):
                    control.value = value - value % 2 if getattr(control, "step", 1) == 2 \
                        else value
            elif hasattr(control, "options"):
                for option in control.options:
                    control.value = option[1] if isinstance(option, tuple) else option
    assert wire  # the moves really produced messages


def test_alibi_heatmap_head_slider_changes_the_colours() -> None:
    # A fixed colour range: the normalised colours differ between heads (they did not when the
    # range was −m·(L−1) per head), and the title claims nothing about the slopes.
    from posenc_lib.viz.alibi import _alibi_state, alibi_heatmaps

    def normalised(head: int) -> np.ndarray:
        st = _alibi_state(8, 32, head)[0]
        z = np.array([[np.nan if v is None else v for v in row] for row in st["z"]], dtype=float)
        return (np.clip(z, st["zmin"], st["zmax"]) - st["zmin"]) / (st["zmax"] - st["zmin"])

    assert np.nanmax(np.abs(normalised(0) - normalised(7))) > 0.5
    assert "geometric" not in alibi_heatmaps(12).layout.title.text


def test_alibi_lab_figure_draws_both_panels_and_validates() -> None:
    from posenc_lib.viz.alibi import alibi_lab_figure

    fig = alibi_lab_figure({"ALiBi": {32: 1.0, 64: 0.5}}, {"ALiBi": {32: 1.9, 64: 1.95},
                                                           "RoPE": {32: 1.9, 64: 3.0}}, 32)
    assert len(fig.data) == 3 and list(fig.data[0].x) == [1.0, 2.0]
    with pytest.raises(ValueError, match="copy"):
        alibi_lab_figure({}, {"a": {1: 1.0}}, 32)


def test_alibi_precision_figure_validates() -> None:
    from posenc_lib.viz.alibi import alibi_precision_figure

    fig = alibi_precision_figure({"a": [0.0, 0.5], "b": [0.1, 0.2]})
    assert len(fig.data) == 2
    with pytest.raises(ValueError, match="same length"):
        alibi_precision_figure({"a": [0.0], "b": [0.1, 0.2]})


def test_alibi_learned_mass_figure_draws_its_curves_unrounded_in_the_book_template() -> None:
    from posenc_lib.viz._style import INK, TEMPLATE
    from posenc_lib.viz.alibi import alibi_learned_mass_figure

    rng = np.random.default_rng(0)
    panels = {
        "T = L": {"layer 0": torch.rand(7, dtype=torch.float64), "content-free": rng.random(7)},
        "T = 4L": {"layer 0": rng.random(31).tolist(), "content-free": rng.random(31)},
    }
    fig = alibi_learned_mass_figure(panels)
    drawn = [(trace.name, trace.xaxis, list(trace.x), list(trace.y)) for trace in fig.data]
    expected = [(label, axis, list(range(len(curve))), np.asarray(curve, dtype=float).tolist())
                for (_, curves), axis in zip(panels.items(), ("x", "x2"), strict=True)
                for label, curve in curves.items()]
    assert drawn == expected
    assert [t.showlegend for t in fig.data] == [True, True, False, False]
    assert fig.data[1].line.dash == "dash" and fig.data[1].line.color == INK
    assert fig.layout.template == TEMPLATE and fig.layout.title.text
    assert "scatter3d" not in fig.to_json()


@pytest.mark.parametrize(
    ("panels", "kwargs", "error", "name"),
    [
        ({}, {}, ValueError, "panels"),
        ([("a", {"x": [0.1]})], {}, ValueError, "panels"),
        ({"a": {}}, {}, ValueError, "panels"),
        ({"a": {"x": [0.1, 0.2], "y": [0.1]}}, {}, ValueError, "same length"),
        ({"a": {"x": [[0.1, 0.2]]}}, {}, ValueError, "one-dimensional"),
        ({"a": {"x": [0.1, float("nan")]}}, {}, ValueError, "finite"),
        ({"a": {"x": [0.1]}}, {"reference": 1}, TypeError, "reference"),
    ],
)
def test_alibi_learned_mass_figure_rejects_bad_input_naming_it(
    panels, kwargs: dict, error: type, name: str
) -> None:
    from posenc_lib.viz.alibi import alibi_learned_mass_figure

    with pytest.raises(error, match=name):
        alibi_learned_mass_figure(panels, **kwargs)
