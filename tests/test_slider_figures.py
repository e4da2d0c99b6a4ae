"""The slider and menu figures of chapters 10-12: every step draws the library's numbers.

- chapter 10, :func:`layer_map_menu_figure`: one dropdown entry per model, each drawing that model's
  layer categories, slowest-pair wavelengths and windows/chunks from its position plan;
- chapter 11, :func:`mrope_sections_figure`: one slider step per ``mrope_section``, each drawing
  :func:`mrope_axis_map` (contiguous and interleaved) and the wavelengths each axis reads;
- chapter 12, :func:`streaming_cache_figure`: a window slider and a sinks slider whose layers,
  combined at any pair of steps, are :func:`streaming_cache_mask`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc_lib import rope_inv_freq, sliding_window_mask, streaming_cache_mask
from posenc_lib.architectures import position_plan
from posenc_lib.architectures.published import published_config
from posenc_lib.display import StaticFigure
from posenc_lib.multimodal import mrope_axis_map
from posenc_lib.presets import PRESET_CONFIGS
from posenc_lib.viz._style import PAPER
from posenc_lib.viz.architectures import (
    LAYER_CATEGORIES,
    layer_map_figure,
    layer_map_menu_figure,
)
from posenc_lib.viz.multimodal import mrope_section_grid, mrope_sections_figure
from posenc_lib.viz.serving import STREAMING_SINKS, STREAMING_WINDOWS, streaming_cache_figure


def _html_kb(fig: Any) -> float:
    return len(StaticFigure(fig).to_html().encode()) / 1e3


def _drawn(z: Any) -> np.ndarray:
    """The cells a heatmap layer draws (a value, not a gap)."""
    return np.array([[v is not None and not (isinstance(v, float) and math.isnan(v)) for v in row]
                     for row in z])


# --- chapter 12: the StreamingLLM cache -----------------------------------------------------------


@given(st.integers(0, 40), st.integers(1, 45), st.integers(0, 45))
def test_streaming_cache_mask_keeps_sinks_and_the_recent_window(
    seq_len: int, window: int, n_sinks: int
) -> None:
    mask = streaming_cache_mask(seq_len, window, n_sinks)
    m = torch.arange(seq_len)[:, None]
    n = torch.arange(seq_len)[None, :]
    assert torch.equal(mask, (n <= m) & ((n < n_sinks) | (n > m - window)))
    # every query sees min(m + 1, n_sinks + window) keys; without sinks it is the sliding window
    assert mask.sum(-1).tolist() == [min(i + 1, n_sinks + window) for i in range(seq_len)]
    no_sinks = streaming_cache_mask(seq_len, window, 0)
    assert torch.equal(no_sinks, sliding_window_mask(seq_len, window))


def test_streaming_cache_mask_at_the_papers_setting() -> None:
    """StreamingLLM keeps 4 sinks: query 10 with a window of 3 sees keys 0-3 and 8-10."""
    mask = streaming_cache_mask(12, 3, 4)
    assert torch.nonzero(mask[10]).flatten().tolist() == [0, 1, 2, 3, 8, 9, 10]
    assert torch.nonzero(mask[2]).flatten().tolist() == [0, 1, 2]


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"seq_len": 4, "window": 0, "n_sinks": 1}, ValueError, "window"),
        ({"seq_len": 4, "window": 2, "n_sinks": -1}, ValueError, "n_sinks"),
        ({"seq_len": -1, "window": 2, "n_sinks": 1}, ValueError, "seq_len"),
        ({"seq_len": 4, "window": 2.0, "n_sinks": 1}, TypeError, "window"),
    ],
)
def test_streaming_cache_mask_rejects_bad_input(kwargs: dict, error: type, name: str) -> None:
    with pytest.raises(error, match=name):
        streaming_cache_mask(**kwargs)


def test_streaming_figure_every_pair_of_steps_is_the_library_mask() -> None:
    seq_len = 20
    fig = streaming_cache_figure(seq_len)
    window_slider, sink_slider = fig.layout.sliders
    assert [s.label for s in window_slider.steps] == [str(w) for w in STREAMING_WINDOWS]
    assert [s.label for s in sink_slider.steps] == [str(s) for s in STREAMING_SINKS]
    assert window_slider.currentvalue.prefix.startswith("window")
    assert sink_slider.currentvalue.prefix.startswith("sinks")
    # the grey layer is every earlier key; each slider restyles its own layer only
    assert np.array_equal(_drawn(fig.data[0].z), np.tril(np.ones((seq_len, seq_len), bool)))
    assert all(list(s.args[1]) == [1] for s in window_slider.steps)
    assert all(list(s.args[1]) == [2] for s in sink_slider.steps)
    for w_step in window_slider.steps:
        window_layer = _drawn(w_step.args[0]["z"][0])
        w = int(w_step.label)
        assert np.array_equal(window_layer, sliding_window_mask(seq_len, w).numpy())
        for s_step in sink_slider.steps:
            shown = window_layer | _drawn(s_step.args[0]["z"][0])
            expected = streaming_cache_mask(seq_len, w, int(s_step.label)).numpy()
            assert np.array_equal(shown, expected), (w, s_step.label)


def test_streaming_figure_opens_on_its_arguments() -> None:
    fig = streaming_cache_figure(16, window=5, n_sinks=3)
    window_slider, sink_slider = fig.layout.sliders
    labels = [s.label for s in window_slider.steps]
    assert "5" in labels and window_slider.active == labels.index("5")  # an off-grid value added
    assert sink_slider.steps[sink_slider.active].label == "3"
    shown = _drawn(fig.data[1].z) | _drawn(fig.data[2].z)
    assert np.array_equal(shown, streaming_cache_mask(16, 5, 3).numpy())
    names = [t.name for t in fig.data[3:]]
    assert names == ["recent window (W)", "sink (kept for good)", "evicted"]
    assert fig.layout.template.layout.paper_bgcolor == PAPER
    assert _html_kb(fig) < 330


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"seq_len": 1}, "seq_len"), ({"window": 0}, "window"), ({"n_sinks": 21}, "n_sinks"),
     ({"windows": [0, 2]}, "windows"), ({"sinks": [99]}, "sinks")],
)
def test_streaming_figure_rejects_bad_parameters(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        streaming_cache_figure(**kwargs)


# --- chapter 11: M-RoPE sections ------------------------------------------------------------------


def test_section_grid_splits_the_pairs_with_height_equal_width() -> None:
    grid = mrope_section_grid(128)
    assert grid[0] == (0, 32, 32) and grid[-1] == (64, 0, 0) and len(grid) == 9
    assert (16, 24, 24) in grid and (24, 20, 20) in grid  # Qwen2-VL's and Qwen3-VL's sections
    assert all(sum(s) == 64 and s[1] == s[2] for s in grid)


def test_mrope_sections_every_step_is_the_axis_map_and_its_wavelengths() -> None:
    base = 1e6
    fig = mrope_sections_figure((16, 24, 24), base)
    (slider,) = fig.layout.sliders
    grid = mrope_section_grid(128)
    assert [s.label for s in slider.steps] == [str(s[0]) for s in grid]  # s_t; h = w the rest
    assert slider.steps[slider.active].label == "16"
    assert slider.currentvalue.prefix == "pairs reading time: "
    wavelength = (2 * math.pi / rope_inv_freq(128, base)).numpy()
    empty_interleaved = []
    for step, section in zip(slider.steps, grid, strict=True):
        update, layout, traces = step.args
        assert list(traces) == [0, 1, 2, 3]
        assert layout["title.text"].endswith(f"t {section[0]}, h {section[1]}, w {section[2]}")
        contiguous, interleaved = update["z"][0]
        axes = {"contiguous": mrope_axis_map(section).numpy()}
        assert contiguous == [float(a) for a in axes["contiguous"]]
        try:
            axes["interleaved"] = mrope_axis_map(section, interleaved=True).numpy()
            assert interleaved == [float(a) for a in axes["interleaved"]]
        except ValueError:
            assert interleaved == [None] * 64
            assert update["y"][0] == ["contiguous", "interleaved: not realisable"]
            empty_interleaved.append(section)
        else:
            assert update["y"][0] == ["contiguous", "interleaved"]
        for a in range(3):  # the wavelengths each axis reads, per layout
            xs = np.array(update["x"][1 + a])
            ys = update["y"][1 + a]
            expected = np.concatenate([wavelength[axes[k] == a] for k in axes])
            np.testing.assert_allclose(xs, expected, atol=0.006, rtol=0)
            counts = {k: int((axes[k] == a).sum()) for k in axes}
            assert ys == [f"{'thw'[a]}, {k}" for k in axes for _ in range(counts[k])]
    # MRoPE-I needs 3·s_h − 1 <= 64: with h = w it cannot deal out 32, 28 or 24 pairs each
    assert empty_interleaved == [(0, 32, 32), (8, 28, 28), (16, 24, 24)]


def test_mrope_sections_contiguous_gives_each_axis_a_band() -> None:
    """At 16/24/24 time reads only the fastest pairs and width only the slowest; interleaved
    (24/20/20) spreads every axis over the whole spectrum."""
    fig = mrope_sections_figure((16, 24, 24))
    t, h, w = ([x for x, y in zip(tr.x, tr.y, strict=True) if y.endswith("contiguous")]
               for tr in fig.data[1:])
    assert max(t) < min(h) and max(h) < min(w)
    assert len(t) == 16 and len(h) == len(w) == 24
    assert min(t) == pytest.approx(2 * math.pi, abs=0.01)
    step = next(s for s in fig.layout.sliders[0].steps if s.label == "24")
    inter = [[x for x, y in zip(xs, ys, strict=True) if y.endswith("interleaved")]
             for xs, ys in zip(step.args[0]["x"][1:], step.args[0]["y"][1:], strict=True)]
    wavelength = (2 * math.pi / rope_inv_freq(128, 1e6)).numpy()
    for axis in inter:  # each axis reads one of the first 3 pairs and one of the last 6
        assert min(axis) <= wavelength[2] + 0.01 and max(axis) >= wavelength[-6] - 0.01
    assert max(inter[1]) == pytest.approx(wavelength[58], abs=0.01)  # h: pair 3·19 + 1


def test_mrope_sections_figure_is_small_titled_and_rejects_bad_input() -> None:
    fig = mrope_sections_figure()
    assert fig.layout.title.text == "64 frequency pairs (base 1e6): t 16, h 24, w 24"
    assert fig.layout.template.layout.paper_bgcolor == PAPER
    assert _html_kb(fig) < 330
    with pytest.raises(ValueError, match="sections"):
        mrope_sections_figure((16, 24, 24), sections=[(10, 10, 10)])
    with pytest.raises(ValueError, match="mrope_section"):
        mrope_sections_figure((16, 24))
    with pytest.raises(TypeError, match="sections"):
        mrope_sections_figure(sections="16/24/24")  # type: ignore[arg-type]


# --- chapter 10: the layer map, one model at a time -----------------------------------------------


@pytest.fixture(scope="module")
def plans() -> dict:
    configs = {
        "Llama 3.2 1B": PRESET_CONFIGS["Llama 3.2 1B"],
        "Gemma 3 12B": published_config("Gemma 3 12B"),
        "Llama 4 Scout": PRESET_CONFIGS["Llama 4 Scout (RoPE layers)"],
        "gpt-oss-20b": published_config("gpt-oss-20b"),
        "BLOOM-560m": {"model_type": "bloom", "n_layer": 24, "n_head": 16, "hidden_size": 1024},
    }
    return {name: position_plan(cfg) for name, cfg in configs.items()}


def test_layer_menu_each_model_is_its_plan(plans: dict) -> None:
    fig = layer_map_menu_figure(plans, active=1)
    (menu,) = fig.layout.updatemenus
    assert menu.type == "dropdown" and menu.active == 1
    assert [b.label for b in menu.buttons] == list(plans)
    overview = layer_map_figure(plans).data[0].z  # the all-models map: its rows are the cells
    for row, (button, plan) in enumerate(zip(menu.buttons, plans.values(), strict=True)):
        update, traces = button.args
        assert list(traces) == list(range(len(fig.data)))
        assert update["x"][0] == [e.layer for e in plan]
        assert update["z"][0] == [list(overview[row][: len(plan)])]
        waves = {e.layer: float(2 * math.pi / e.inv_freq[e.inv_freq > 0].min())
                 for e in plan if e.kind == "rope"}
        assert update["x"][1] == list(waves)
        np.testing.assert_allclose(update["y"][1], list(waves.values()), rtol=5e-4)
        reach = {e.layer: e.window or e.chunk for e in plan if (e.window or e.chunk)}
        assert dict(zip(update["x"][2], update["y"][2], strict=True)) == reach
        used = {int(v) for v in overview[row] if not math.isnan(v)}
        assert update["visible"][3:] == [k in used for k in range(len(LAYER_CATEGORIES))]


def test_layer_menu_reads_the_released_configs(plans: dict) -> None:
    """Gemma 3 12B: windows of 1 024 keys on five layers of six, base 10^4 there (slowest
    wavelength 2π·10^4^(254/256)); gpt-oss-20b: windows of 128 on every other layer; Llama 4
    Scout: chunks of 8 192 on three layers of four; BLOOM (ALiBi): no wavelength, no window."""
    menu = layer_map_menu_figure(plans).layout.updatemenus[0]
    buttons = {b.label: b.args[0] for b in menu.buttons}
    gemma = buttons["Gemma 3 12B"]
    assert gemma["x"][2] == [i for i in range(48) if i % 6 != 5] and set(gemma["y"][2]) == {1024}
    local = 2 * math.pi * 1e4 ** (254 / 256)
    assert gemma["y"][1][0] == pytest.approx(local, rel=5e-4)
    assert gemma["y"][1][5] > 100 * local  # the global layers: base 10^6, stretched by 8
    oss = buttons["gpt-oss-20b"]
    assert set(oss["y"][2]) == {128} and len(oss["x"][2]) == 12
    scout = buttons["Llama 4 Scout"]
    assert set(scout["y"][2]) == {8192} and len(scout["x"][2]) == 36 and len(scout["x"][1]) == 36
    assert buttons["BLOOM-560m"]["x"][1] == [] and buttons["BLOOM-560m"]["x"][2] == []


def test_layer_menu_figure_is_small_and_rejects_bad_input(plans: dict) -> None:
    fig = layer_map_menu_figure(plans)
    assert fig.layout.title.text and fig.layout.template.layout.paper_bgcolor == PAPER
    assert _html_kb(fig) < 330
    with pytest.raises(ValueError, match="active"):
        layer_map_menu_figure(plans, active=len(plans))
    with pytest.raises(TypeError, match="plans"):
        layer_map_menu_figure({})
    with pytest.raises(TypeError, match="plans"):
        layer_map_menu_figure({"x": [1, 2]})  # type: ignore[dict-item]
