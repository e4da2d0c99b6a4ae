"""Figure builders: the numbers drawn are the core library's, at every static slider step."""

from __future__ import annotations

import cmath
import math

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from posenc_lib import (
    alibi_bias,
    euler_partial_sums,
    interleaved_to_half_permutation,
    rope_inv_freq,
    sinusoidal_table,
    yarn_inv_freq,
)
from posenc_lib.display import StaticFigure
from posenc_lib.viz._style import BASE_GRID, INK, MUTED, PAPER, _with
from posenc_lib.viz.alibi import alibi_heatmaps
from posenc_lib.viz.attention import attention_heatmap
from posenc_lib.viz.conventions import convention_pairs_figure
from posenc_lib.viz.decay import decay_curves
from posenc_lib.viz.euler import rotation_figure, unit_circle
from posenc_lib.viz.heatmap import encoding_heatmap, heatmap_static_rows
from posenc_lib.viz.offset import rope_offset_figure
from posenc_lib.viz.spectrum import METHODS, wavelength_spectrum
from posenc_lib.viz.spiral import default_pairs, rope_spiral


def _steps(fig: go.Figure, k: int = 0) -> list:
    return list(fig.layout.sliders[k].steps)


def _html_kb(fig: go.Figure) -> float:
    return len(StaticFigure(fig).to_html().encode()) / 1e3


# --- encoding heatmap ---


def test_heatmap_without_sliders_is_the_exact_table() -> None:
    fig = encoding_heatmap(40, 24, 500.0, sliders=False)
    (trace,) = fig.data
    np.testing.assert_array_equal(trace.z, sinusoidal_table(40, 24, 500.0).numpy())
    assert trace.zmid == 0 and trace.colorscale == go.Heatmap(colorscale="RdBu").colorscale


@pytest.mark.parametrize("scheme", ["integer", "normalized", "binary"])
def test_heatmap_other_schemes_use_their_tables(scheme: str) -> None:
    from posenc_lib import binary_encoding, integer_encoding, normalized_encoding

    table = {
        "integer": integer_encoding,
        "normalized": normalized_encoding,
        "binary": binary_encoding,
    }[scheme](16, 8)
    fig = encoding_heatmap(16, 8, scheme=scheme)
    np.testing.assert_allclose(fig.data[0].z, table.numpy(), atol=5e-5)  # 4 decimals


@pytest.mark.parametrize("scheme", ["integer", "normalized", "binary"])
def test_naive_schemes_get_a_static_length_slider(scheme: str) -> None:
    from posenc_lib import binary_encoding, integer_encoding, normalized_encoding

    build = {
        "integer": integer_encoding,
        "normalized": normalized_encoding,
        "binary": binary_encoding,
    }[scheme]
    fig = encoding_heatmap(64, 16, scheme=scheme)
    (slider,) = fig.layout.sliders
    lengths = [int(step.label) for step in slider.steps]
    assert lengths[slider.active] == 64 and 1024 in lengths
    for step, length in zip(slider.steps, lengths, strict=True):
        rows = heatmap_static_rows(length)
        labels = step.args[0]["y"][0]
        z = np.asarray(step.args[0]["z"][0], dtype=float)
        drawn = [k for k, label in enumerate(labels) if label != "⋮"]
        assert [int(labels[k]) for k in drawn] == rows.tolist()
        np.testing.assert_allclose(z[drawn], build(length, 16).numpy()[rows], atol=5e-5)
        assert np.isnan(np.delete(z, drawn, axis=0)).all()  # the gap row is blank
        if scheme == "integer":  # the colour scale follows the unbounded values
            assert step.args[0]["zmax"][0] == length - 1
        if scheme == "normalized" and length > 2:  # the same offset shrinks as L grows
            assert z[1, 0] - z[0, 0] == pytest.approx(1 / (length - 1), abs=5e-5)
        if scheme == "binary" and length >= 2:  # bit 0 flips at every shown position
            assert np.all(np.diff(z[drawn][: min(length, 32), 0]) != 0)


def test_static_rows_are_consecutive_windows_never_strided() -> None:
    np.testing.assert_array_equal(heatmap_static_rows(40), np.arange(40))
    rows = heatmap_static_rows(128)
    np.testing.assert_array_equal(rows, np.r_[0:32, 96:128])
    for length in (65, 1000, 4096):
        first, last = np.split(heatmap_static_rows(length), 2)
        assert (np.diff(first) == 1).all() and (np.diff(last) == 1).all()
        assert last[-1] == length - 1
    for bad in (0, 2.5, -3, 5000):
        with pytest.raises((ValueError, TypeError), match="seq_len"):
            heatmap_static_rows(bad)


def test_heatmap_every_static_step_holds_the_sampled_table() -> None:
    fig = encoding_heatmap()  # seq_len 128, dim 128, base 10 000
    rows = heatmap_static_rows(128)
    assert len(rows) == 64 and (np.diff(rows[:32]) == 1).all()  # consecutive: no aliasing
    drawn = np.r_[0:32, 33:65]  # row 32 of each z is the blank gap between the two windows
    buttons = fig.layout.updatemenus[0].buttons
    labels = [s.label for s in _steps(fig)]
    assert "10 000" in labels and "500 000" in labels and labels[0] == "10" and labels[-1] == "1e6"
    for button in buttons:
        d = int(button.label.split("= ")[1])
        visible = button.args[0]["visible"]
        g = visible.index(True)
        x = np.asarray(button.args[0]["x"][g])
        for step, base in zip(_steps(fig), _with(BASE_GRID, 1e4), strict=True):
            z = np.asarray(step.args[0]["z"][g], dtype=float)
            want = sinusoidal_table(128, d, base).numpy()[rows][:, x]
            np.testing.assert_allclose(z[drawn], want, atol=0.0051)  # rounded to 2 decimals
            assert np.isnan(z[32]).all()
    # The figure opens on the caller's values: base 10 000, d = 128.
    assert fig.layout.sliders[0].active == labels.index("10 000")
    shown = [t for t in fig.data if t.visible]
    assert len(shown) == 1
    z0 = np.asarray(shown[0].z, dtype=float)[drawn]
    np.testing.assert_allclose(
        z0, sinusoidal_table(128, 128).numpy()[rows][:, np.asarray(shown[0].x)], atol=5e-5
    )
    assert list(shown[0].y[:3]) == ["0", "1", "2"] and shown[0].y[32] == "⋮"
    assert _html_kb(fig) < 330


def test_heatmap_opens_on_off_grid_values() -> None:
    fig = encoding_heatmap(20, 10, 777.0)
    assert "777" in [s.label for s in _steps(fig)]
    assert "d = 10" in [b.label for b in fig.layout.updatemenus[0].buttons]


# --- spiral ---


def test_spiral_helices_and_clock_are_rope_rotations() -> None:
    fig = rope_spiral(dim=16, seq_len=50, pairs=[0, 3], position=7)
    theta = rope_inv_freq(16).numpy()
    m = np.arange(50)
    for trace, i in zip(fig.data[:2], [0, 3], strict=True):
        np.testing.assert_allclose(trace.x, np.cos(m * theta[i]), atol=1e-12)
        np.testing.assert_allclose(trace.y, np.sin(m * theta[i]), atol=1e-12)
        np.testing.assert_array_equal(trace.z, m)
    tips = fig.data[-1]
    angle = np.arctan2(tips.y, tips.x)
    np.testing.assert_allclose(np.cos(angle - 7 * theta), 1.0, atol=1e-9)
    for step, base in zip(_steps(fig), _with(BASE_GRID, 1e4), strict=True):
        t = rope_inv_freq(16, base).numpy()
        np.testing.assert_allclose(step.args[0]["x"][1], np.cos(m * t[3]), atol=6e-4)


def test_spiral_default_pairs_span_fast_to_slow() -> None:
    assert default_pairs(64) == [0, 2, 9, 31]


# --- decay: tests/test_decay_figure.py ---


# --- Euler ---


def test_unit_circle_axes_hold_every_path_of_each_theta_step() -> None:
    fig = unit_circle(theta=1.0, n_terms=6)
    theta_slider = fig.layout.sliders[0]
    for step in theta_slider.steps:
        assert step.method == "update"
        lim = step.args[1]["xaxis.range"][1]
        assert step.args[1]["yaxis.range"] == [-lim, lim]
        for xs, ys in zip(step.args[0]["x"], step.args[0]["y"], strict=True):
            assert max(abs(v) for v in xs + ys) < lim  # no path leaves the frame
    # at θ = 2π the partial sums reach about 47 before they converge
    last = theta_slider.steps[-1]
    assert float(last.label) == pytest.approx(2 * math.pi, abs=0.01)
    assert last.args[1]["xaxis.range"][1] > 40
    with pytest.raises(ValueError, match="theta"):
        unit_circle(theta=40.0)


def test_unit_circle_path_ends_at_the_partial_sum() -> None:
    fig = unit_circle(theta=1.0, n_terms=6)
    shown = [t for t in fig.data[2:] if t.visible and t.xaxis in (None, "x")]
    assert len(shown) == 1
    end = complex(shown[0].x[-1], shown[0].y[-1])
    assert end == pytest.approx(complex(euler_partial_sums(1.0, 6)[-1].item()))
    # the inset (fixed scale) shows the same S_6 next to the unit circle
    (inset_end,) = [t for t in fig.data if t.visible and t.xaxis == "x2"]
    assert complex(inset_end.x[0], inset_end.y[0]) == pytest.approx(end, abs=1e-9)
    assert list(fig.layout.xaxis2.range) == [-1.4, 1.4]
    terms = [s.label for s in _steps(fig, 1)]
    assert terms[0] == "1" and terms[-1] == "20"
    for step in _steps(fig, 0):
        th = float(step.label)
        px, py = step.args[0]["x"][0][1], step.args[0]["y"][0][1]
        assert px**2 + py**2 == pytest.approx(1.0, abs=1e-3)
        assert math.cos(math.atan2(py, px) - th) == pytest.approx(1.0, abs=1e-4)
        # With 20 terms every θ ≤ 2π is reached within 0.01.
        last = complex(step.args[0]["x"][-1][-1], step.args[0]["y"][-1][-1])
        assert abs(last - complex(px, py)) < 1e-2


# --- ALiBi ---


def test_alibi_bias_and_weights_per_head() -> None:
    fig = alibi_heatmaps(n_heads=6, seq_len=10, head=2)
    bias = alibi_bias(6, 10).numpy()
    steps = _steps(fig)
    assert len(steps) == 6 and fig.layout.sliders[0].active == 2
    for h, step in enumerate(steps):
        z = np.array(step.args[0]["z"][0], dtype=float)
        want = np.where(np.isfinite(bias[h]), bias[h], np.nan)
        np.testing.assert_allclose(z, want, atol=6e-4)
        w = np.asarray(step.args[0]["z"][1], dtype=float)
        np.testing.assert_allclose(w.sum(-1), 1.0, atol=6e-3)
        assert np.all(np.triu(w, 1) == 0)  # the causal mask gives exactly zero weight


# --- RoPE calculator ---


def test_spectrum_factor_steps_match_the_scaling_functions() -> None:
    fig = wavelength_spectrum(dim=64, train_len=4096, method="yarn", factor=4.0)
    methods = [b.label for b in fig.layout.updatemenus[0].buttons]
    assert len(methods) == len(METHODS) == 7
    yarn = 1 + list(METHODS).index("yarn")
    assert fig.data[yarn].visible is True
    for step in _steps(fig):
        f = float(step.label)
        ys = step.args[0]["y"]
        inv, _ = yarn_inv_freq(64, 1e4, f, 4096)
        np.testing.assert_allclose(ys[yarn - 1], 2 * np.pi / inv.numpy(), rtol=1e-3, atol=0.06)
        pi = np.asarray(step.args[0]["customdata"][list(METHODS).index("pi")])
        np.testing.assert_allclose(pi, f, rtol=1e-3)  # PI interpolates every pair by s
        assert ys[-1] == [4096 * f] * 2


# --- attention, rotation, offset, conventions ---


def test_attention_heatmap_keeps_chinese_and_repeated_tokens() -> None:
    w = torch.softmax(torch.randn(4, 4, generator=torch.Generator().manual_seed(0)), -1)
    fig = attention_heatmap(w, ["我", "爱", "你", "我"])
    assert list(fig.layout.xaxis.ticktext) == ["我", "爱", "你", "我"]
    np.testing.assert_allclose(fig.data[0].z, w.numpy(), rtol=1e-6)
    assert "Noto Sans CJK SC" in fig.layout.template.layout.font.family


def test_rotation_multiplies_by_e_i_theta() -> None:
    fig = rotation_figure(theta=0.5, z=1 + 0.5j)
    w = complex(fig.data[2].x[1], fig.data[2].y[1])
    assert w == pytest.approx((1 + 0.5j) * complex(math.cos(0.5), math.sin(0.5)))
    for step in _steps(fig):
        x, y = step.args[0]["x"][0][1], step.args[0]["y"][0][1]
        assert math.hypot(x, y) == pytest.approx(abs(1 + 0.5j), abs=2e-4)


def test_rope_score_is_constant_under_a_shared_shift() -> None:
    fig = rope_offset_figure(dim=32, offset=8, max_offset=32)
    rope_score, added = np.asarray(fig.data[2].y), np.asarray(fig.data[3].y)
    assert np.ptp(rope_score) < 1e-10
    assert np.ptp(added) > 0.1  # additive sinusoids do not give a shift-invariant score
    assert (
        fig.data[4].x[0] == 8
        and fig.layout.sliders[0].steps[fig.layout.sliders[0].active].label == "8"
    )


def test_convention_figure_draws_the_permutation() -> None:
    fig = convention_pairs_figure(8, sliders=False)
    perm = interleaved_to_half_permutation(8).tolist()
    assert list(fig.data[3].text) == [str(p) for p in perm]
    top, bottom = fig.data[2].marker.color, fig.data[3].marker.color
    for slot, feature in enumerate(perm):  # the feature keeps its pair colour after the move
        assert bottom[slot] == top[feature]


# --- look and feel, validation ---


def _luminance(hex_colour: str) -> float:
    rgb = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def test_template_text_contrast_meets_wcag_aaa() -> None:
    lo, hi = sorted((_luminance(INK), _luminance(PAPER)))
    assert (hi + 0.05) / (lo + 0.05) >= 7
    lo, hi = sorted((_luminance(MUTED), _luminance(PAPER)))
    assert (hi + 0.05) / (lo + 0.05) >= 4.5


def test_scaled_turn_draws_w_times_the_turn_and_its_real_part_as_the_score() -> None:
    from posenc_lib.viz.euler import scaled_turn_figure

    w, theta = 1.5 * cmath.exp(0.6j), 0.4
    fig = scaled_turn_figure(w=w, theta=theta, r=3)
    r_slider, arg_slider = fig.layout.sliders
    for step in r_slider.steps:
        r = int(step.label)
        xs, ys = step.args[0]["x"], step.args[0]["y"]
        for arrow, drop, sign in ((1, 3, 1), (2, 4, -1)):  # w·e^{±irθ} and its drop
            product = w * cmath.exp(sign * 1j * r * theta)
            tip = (xs[arrow][1], ys[arrow][1])
            assert tip == pytest.approx((product.real, product.imag), abs=1e-4)
            assert abs(product) == pytest.approx(abs(w), abs=1e-12)  # scaled by |w|, not more
            assert xs[drop] == pytest.approx([product.real] * 2, abs=1e-4) and ys[drop][1] == 0.0
        score = (w * cmath.exp(1j * r * theta)).real
        assert f"= {score:+.3f} at +r" in step.args[1]["title.text"]
    titles = {round(float(s.label), 2): s.args[1]["title.text"] for s in arg_slider.steps}
    even = (1.5 * cmath.exp(1j * 3 * theta)).real  # arg w = 0: the same score at +r and −r
    assert f"{even:+.3f} at +r, {even:+.3f} at −r" in titles[0.0]
    odd = (1.5j * cmath.exp(1j * 3 * theta)).real  # arg w = π/2: opposite scores
    assert f"{odd:+.3f} at +r, {-odd:+.3f} at −r" in titles[1.57]
    with pytest.raises(ValueError, match="w must be"):
        scaled_turn_figure(w=0j)
    with pytest.raises(ValueError, match="theta"):
        scaled_turn_figure(theta=0.0)
    with pytest.raises(TypeError, match="w must be"):
        scaled_turn_figure(w="1+1j")


BUILDERS = [
    encoding_heatmap,
    rope_spiral,
    decay_curves,
    unit_circle,
    alibi_heatmaps,
    wavelength_spectrum,
    rotation_figure,
    rope_offset_figure,
    convention_pairs_figure,
]


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda b: b.__name__)
def test_static_figures_are_small_titled_and_templated(builder) -> None:
    fig = builder()
    assert fig.layout.template.layout.paper_bgcolor == PAPER
    assert fig.layout.title.text
    assert _html_kb(fig) < 330


@pytest.mark.parametrize(
    ("builder", "kwargs", "name"),
    [
        (encoding_heatmap, {"dim": 7}, "dim"),
        (encoding_heatmap, {"base": -1.0}, "base"),
        (encoding_heatmap, {"scheme": "learned"}, "scheme"),
        (encoding_heatmap, {"seq_len": 0}, "seq_len"),
        (rope_spiral, {"pairs": [0, 99]}, "pairs"),
        (rope_spiral, {"position": 999}, "position"),
        (decay_curves, {"max_distance": 0}, "max_distance"),
        (decay_curves, {"base": float("inf")}, "base"),
        (unit_circle, {"n_terms": 0}, "n_terms"),
        (unit_circle, {"theta": float("nan")}, "theta"),
        (alibi_heatmaps, {"n_heads": 0}, "n_heads"),
        (alibi_heatmaps, {"head": 8}, "head"),
        (wavelength_spectrum, {"factor": 0.5}, "factor"),
        (wavelength_spectrum, {"method": "rope"}, "method"),
        (rotation_figure, {"z": 0j}, "z"),
        (rope_offset_figure, {"offset": 65}, "offset"),
        (convention_pairs_figure, {"dim": 3}, "dim"),
    ],
)
def test_bad_parameters_raise_value_error_naming_them(builder, kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        builder(**kwargs)


def test_wrong_types_raise_type_error() -> None:
    with pytest.raises(TypeError, match="dim"):
        encoding_heatmap(dim=64.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="weights"):
        attention_heatmap([[1.0]], ["a"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tokens"):
        attention_heatmap(np.eye(2), ["a"])


def test_extreme_values_build() -> None:
    encoding_heatmap(512, 512, 1e6, sliders=False)
    rope_spiral(dim=512, base=1e6, seq_len=1024, sliders=False)
    unit_circle(theta=-4 * math.pi, n_terms=200, sliders=False)
    alibi_heatmaps(n_heads=64, seq_len=256, head=63, sliders=False)
    wavelength_spectrum(dim=512, base=1e6, factor=64.0, method="llama3", sliders=False)
    decay_curves(dim=4, base=1.5, max_distance=1, sliders=False)


def test_dimension_buttons_keep_the_categorical_position_axis() -> None:
    fig = encoding_heatmap(seq_len=128, dim=128)
    for button in fig.layout.updatemenus[0].buttons:
        assert button.args[1]["yaxis.type"] == "category"
        assert button.args[1]["yaxis.autorange"] == "reversed"


def test_shared_turn_readout_is_the_same_at_every_step() -> None:
    from posenc_lib.viz.euler import shared_turn_figure

    fig = shared_turn_figure(alpha=1.0, beta=0.25)
    readouts = {s.args[1]["title.text"].split("=", 1)[1] for s in fig.layout.sliders[0].steps}
    assert readouts == {f" {math.cos(0.75):.3f} + {math.sin(0.75):.3f} i"}
    step = fig.layout.sliders[0].steps[6]  # shared turn π/2: arrow 1 is at angle 1 + π/2
    assert step.args[0]["x"][0][1] == pytest.approx(math.cos(1 + math.pi / 2), abs=1e-4)
    with pytest.raises(ValueError, match="alpha"):
        shared_turn_figure(alpha=float("nan"))


def test_compound_turn_velocity_is_a_quarter_turn_and_polygons_end_at_the_compound() -> None:
    from posenc_lib.viz.euler import compound_turn_figure

    fig = compound_turn_figure(theta=2.0, n_values=(4, 32))
    steps = fig.layout.sliders[0].steps
    assert len(steps) == 13 + 1  # 0 … π in steps of π/12, plus θ = 2.0
    grid = sorted({*np.round(np.linspace(0.0, math.pi, 13), 4).tolist(), 2.0})
    for theta, step in zip(grid, steps, strict=True):
        assert step.label == f"{theta:.2f}"
        xs, ys = step.args[0]["x"], step.args[0]["y"]
        z = complex(xs[3][1], ys[3][1])  # position arrow tip
        tip = complex(xs[4][1], ys[4][1])  # velocity arrow tip, drawn from z
        assert z == pytest.approx(cmath.exp(1j * theta), abs=2e-4)
        assert tip - z == pytest.approx(1j * z, abs=3e-4)  # velocity i·z: ⊥ position, length 1
        assert complex(xs[0][-1], ys[0][-1]) == pytest.approx(z, abs=2e-4)  # the arc ends at z
        for index, n in ((1, 4), (2, 32)):
            end = complex(xs[index][-1], ys[index][-1])
            assert len(xs[index]) == n + 1
            assert end == pytest.approx((1 + 1j * theta / n) ** n, abs=2e-4)
        if theta > 0.5:  # more nudges land closer
            assert abs(complex(xs[2][-1], ys[2][-1]) - z) < abs(complex(xs[1][-1], ys[1][-1]) - z)
    with pytest.raises(ValueError, match="theta"):
        compound_turn_figure(theta=7.0)
    with pytest.raises(ValueError, match="n_values"):
        compound_turn_figure(n_values=(0,))
    with pytest.raises(TypeError, match="n_values"):
        compound_turn_figure(n_values=4)


def test_shared_turn_second_slider_turns_z2_alone_and_changes_the_readout() -> None:
    from posenc_lib.viz.euler import shared_turn_figure

    fig = shared_turn_figure(alpha=1.0, beta=0.25)
    lag_steps = fig.layout.sliders[1].steps
    for i, step in enumerate(lag_steps):
        lag = round(2 * math.pi * i / 24, 4)  # the slider's grid: 0 … 2π in 24 steps
        diff = 0.75 - lag  # α − (β + lag)
        sign = "+" if math.sin(diff) >= -5e-4 else "−"
        assert step.args[1]["title.text"].endswith(
            f"= {math.cos(diff):.3f} {sign} {abs(math.sin(diff)):.3f} i"
        )
        assert step.args[0]["x"][0][1] == pytest.approx(math.cos(1.0), abs=1e-4)  # z₁ stays put
    assert len({s.args[1]["title.text"].split("=", 1)[1] for s in lag_steps}) > 20


def test_phasor_sum_ends_at_the_similarity_and_reads_roformers_bound() -> None:
    from posenc_lib import sinusoidal_frequencies
    from posenc_lib.viz.euler import phasor_sum_figure

    dim, base = 64, 10000.0
    theta = sinusoidal_frequencies(dim, base).double()
    fig = phasor_sum_figure(dim, base, offset=20.0)
    path = fig.data[0]
    assert (path.x[0], path.y[0]) == (0.0, 0.0) and len(path.x) == dim // 2 + 1
    assert path.x[-1] == pytest.approx(torch.cos(20 * theta).sum().item(), abs=1e-3)
    assert path.y[-1] == pytest.approx(torch.sin(20 * theta).sum().item(), abs=1e-3)
    steps = {s.label: s for s in fig.layout.sliders[0].steps}
    assert "f(r) = mean |S_j| = 16.50" in steps["0"].args[1]["title.text"]  # (d/2 + 1)/2 at r = 0
    odd = torch.sin(20 * theta).sum().item()
    assert f"Σ sin(rθ_i) = {odd:.2f}" in steps["20"].args[1]["title.text"]  # the odd part
    with pytest.raises(ValueError, match="dim"):
        phasor_sum_figure(dim=63)


def test_rope_clock_score_depends_on_the_offset_only() -> None:
    import numpy as np

    from posenc_lib import sinusoidal_frequencies
    from posenc_lib.viz.euler import rope_clock_figure

    fig = rope_clock_figure(dim=8, m=5, n=2, seed=3)
    both, query = fig.layout.sliders
    assert len({s.args[1]["title.text"].rsplit("=", 1)[1] for s in both.steps}) == 1
    assert len({s.args[1]["title.text"].rsplit("=", 1)[1] for s in query.steps}) > 10
    # The hands of pair 0 (θ = 1) move by one radian per position: after a shift of 4 both hands
    # of dial 0 have turned by 4 rad.
    theta = sinusoidal_frequencies(8).numpy()
    q0 = complex(fig.data[1].x[1], fig.data[1].y[1])
    q4 = complex(both.steps[1].args[0]["x"][0][1], both.steps[1].args[0]["y"][0][1])
    assert q4 == pytest.approx(q0 * np.exp(4j * theta[0]), abs=1e-3)
    with pytest.raises(ValueError, match="dim"):
        rope_clock_figure(dim=18)


# --- chapter 11's trained 2-D scores and chapter 12's K-shift drift: drawn as given ---


def test_rope_2d_scores_figure_draws_the_surfaces_and_keys_as_given() -> None:
    from posenc_lib.viz._style import TEMPLATE
    from posenc_lib.viz.multimodal import rope_2d_scores_figure

    offsets = torch.arange(-2, 3, dtype=torch.float64)
    axial = torch.randn(5, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    mixed = np.outer(np.arange(5.0), np.ones(5)) - 7.0
    targets, others = np.array([[1.0, 1.0], [-1.0, -1.0]]), torch.tensor([[1.0, -1.0]])
    fig = rope_2d_scores_figure({"axial": axial, "mixed": mixed}, offsets, targets=targets,
                                others=others)
    heatmaps = [t for t in fig.data if t.type == "heatmap"]
    markers = [t for t in fig.data if t.type == "scatter"]
    assert len(heatmaps) == len(markers) == 2
    for trace, z in zip(heatmaps, (axial.numpy(), mixed), strict=True):
        np.testing.assert_array_equal(trace.z, z)
        np.testing.assert_array_equal(trace.x, offsets.numpy())
        np.testing.assert_array_equal(trace.y, offsets.numpy())
        assert trace.zmin == -7.0 and trace.zmax == 7.0 and trace.zmid == 0  # max |S| = 7
    for trace in markers:
        np.testing.assert_array_equal(trace.x, [1.0, -1.0, -1.0])  # Δx of targets, then others
        np.testing.assert_array_equal(trace.y, [1.0, -1.0, 1.0])  # Δy
        assert list(trace.marker.symbol) == ["star", "star", "x"]
    assert [a.text for a in fig.layout.annotations] == ["axial", "mixed"]
    assert fig.layout.yaxis.autorange == "reversed" and fig.layout.yaxis2.scaleanchor == "x2"
    assert fig.layout.template == TEMPLATE and fig.layout.template.layout.paper_bgcolor == PAPER
    assert fig.layout.title.text
    assert "scatter3d" not in fig.to_json()
    # no keys: the heatmaps alone
    assert [t.type for t in rope_2d_scores_figure({"a": axial}, offsets).data] == ["heatmap"]


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "name"),
    [
        (({}, [0.0]), {}, ValueError, "surfaces"),
        (({"a": [[1.0]]}, "0"), {}, TypeError, "offsets"),
        (({"a": [[1.0, 0.0], [0.0, 1.0]]}, [1.0, 0.0]), {}, ValueError, "offsets"),
        (({"a": [[1.0, 0.0]]}, [0.0, 1.0]), {}, ValueError, "surfaces"),
        (({"a": [[float("inf")]]}, [0.0]), {}, ValueError, "surfaces"),
        (({"a": [[0.0]]}, [0.0]), {}, ValueError, "surfaces"),
        (({"a": [[1.0]]}, [0.0]), {"targets": [1.0, 2.0, 3.0]}, ValueError, "targets"),
        (({"a": [[1.0]]}, [0.0]), {"others": "ab"}, TypeError, "others"),
    ],
)
def test_rope_2d_scores_figure_rejects_bad_input_naming_it(
    args: tuple, kwargs: dict, error: type, name: str
) -> None:
    from posenc_lib.viz.multimodal import rope_2d_scores_figure

    with pytest.raises(error, match=name):
        rope_2d_scores_figure(*args, **kwargs)


def test_kshift_drift_figure_draws_the_errors_as_given_on_log_axes() -> None:
    from posenc_lib.viz._style import TEMPLATE
    from posenc_lib.viz.serving import kshift_drift_figure

    n_shifts = [1, 2, 4, 256]
    errors = {"bf16": [1e-3, 2e-3, 5e-3, 0.1], "float32": np.array([1e-7, 1e-7, 2e-7, 3e-6])}
    fig = kshift_drift_figure(n_shifts, errors)
    assert [t.name for t in fig.data] == list(errors)
    assert [list(t.x) for t in fig.data] == [n_shifts, n_shifts]
    assert [list(t.y) for t in fig.data] == [list(v) for v in errors.values()]
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert fig.layout.template == TEMPLATE and fig.layout.template.layout.paper_bgcolor == PAPER
    assert fig.layout.title.text
    assert "scatter3d" not in fig.to_json()


@pytest.mark.parametrize(
    ("n_shifts", "errors", "error", "name"),
    [
        ([], {"a": []}, TypeError, "n_shifts"),
        ([1.5], {"a": [0.1]}, TypeError, "n_shifts"),
        ([0, 1], {"a": [0.1, 0.2]}, ValueError, "n_shifts"),
        ([2, 1], {"a": [0.1, 0.2]}, ValueError, "n_shifts"),
        ([1, 2], {}, TypeError, "errors"),
        ([1, 2], {"a": [0.1]}, ValueError, "errors"),
        ([1, 2], {"a": [0.1, 0.0]}, ValueError, "errors"),
        ([1, 2], {"a": [0.1, float("nan")]}, ValueError, "errors"),
        ([1, 2], {"a": [0.1, "x"]}, TypeError, "errors"),
    ],
)
def test_kshift_drift_figure_rejects_bad_input_naming_it(
    n_shifts: list, errors: dict, error: type, name: str
) -> None:
    from posenc_lib.viz.serving import kshift_drift_figure

    with pytest.raises(error, match=name):
        kshift_drift_figure(n_shifts, errors)


def test_id_band_figure_draws_one_bar_per_band_and_the_flat_reference() -> None:
    from posenc_lib.viz.serving import id_band_figure

    shares = [0.5, 0.3, 0.15, 0.05]
    fig = id_band_figure(shares, 512, uniform=0.25)
    bars, reference = fig.data[:-1], fig.data[-1]
    assert len(bars) == 4 and all(bar.fill == "toself" for bar in bars)
    assert [max(bar.y) for bar in bars] == shares and [min(bar.y) for bar in bars] == [0.0] * 4
    assert [(min(bar.x), max(bar.x)) for bar in bars] == [(0, 512), (512, 1024), (1024, 1536),
                                                          (1536, 2048)]
    assert list(reference.y) == [0.25, 0.25] and list(reference.x) == [0, 2048]
    assert [bar.showlegend for bar in bars] == [True, False, False, False]
    assert len(id_band_figure(shares, 512).data) == 4        # no reference line asked for
    assert {t.type for t in fig.data} == {"scatter"}


def test_id_band_figure_draws_each_compared_mix_as_a_step_before_the_reference() -> None:
    from posenc_lib.viz.serving import id_band_figure

    shares, other = [0.5, 0.3, 0.2], [0.4, 0.35, 0.25]
    fig = id_band_figure(shares, 100, uniform=1 / 3, label="cut", compare={"whole": other},
                         uniform_label="one text")
    bars, step, reference = fig.data[:3], fig.data[3], fig.data[4]
    assert [max(bar.y) for bar in bars] == shares and bars[0].name == "cut"
    assert step.name == "whole" and step.fill is None
    assert list(step.x) == [0, 100, 100, 200, 200, 300]
    assert list(step.y) == [0.4, 0.4, 0.35, 0.35, 0.25, 0.25]
    assert reference.name == "one text" and fig.layout.meta["compare"] == {"whole": other}


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "name"),
    [
        (([], 512), {}, ValueError, "shares"),
        (([0.5, -0.1], 512), {}, ValueError, "shares"),
        (("ab", 512), {}, TypeError, "shares"),
        (([0.5], 0), {}, ValueError, "band_width"),
        (([0.5], 512), {"uniform": float("nan")}, ValueError, "uniform"),
        (([0.5], 512), {"compare": {"whole": [0.5, 0.5]}}, ValueError, "compare"),
        (([0.5], 512), {"compare": {"whole": [-0.5]}}, ValueError, "compare"),
        (([0.5], 512), {"compare": [[0.5]]}, TypeError, "compare"),
    ],
)
def test_id_band_figure_rejects_bad_input_naming_it(
    args: tuple, kwargs: dict, error: type, name: str
) -> None:
    from posenc_lib.viz.serving import id_band_figure

    with pytest.raises(error, match=name):
        id_band_figure(*args, **kwargs)


def test_position_drift_figure_draws_the_values_and_marks_the_training_length() -> None:
    from posenc_lib.viz.serving import position_drift_figure

    drift = {"default": [0.0] * 6, "dynamic": torch.tensor([0.0, 0.0, 0.0, 0.1, 0.2, 0.3])}
    fig = position_drift_figure(drift, 3)
    assert [t.name for t in fig.data[:2]] == ["default", "dynamic"]
    assert list(fig.data[1].y) == pytest.approx([0.0, 0.0, 0.0, 0.1, 0.2, 0.3])
    assert list(fig.data[0].x) == list(range(6))
    assert list(fig.data[2].x) == [2.5, 2.5] and fig.layout.meta["train_len"] == 3
    with pytest.raises(ValueError, match="train_len"):
        position_drift_figure(drift, 6)
    with pytest.raises(ValueError, match="dynamic"):
        position_drift_figure({"default": [0.0] * 6, "dynamic": [0.0] * 5}, 3)
    with pytest.raises(TypeError, match="drift"):
        position_drift_figure({}, 3)


def test_depth_error_figure_draws_the_errors_on_a_log_axis() -> None:
    from posenc_lib.viz.serving import depth_error_figure

    errors = {"compaction": [1e-7, 0.9, 1.8], "gaps": [0.0, 1.2, 1.8]}
    fig = depth_error_figure([1, 2, 4], errors)
    assert [t.name for t in fig.data] == list(errors)
    # the measured values in customdata; y the same, an exact 0 lifted to the floor
    assert [list(t.customdata) for t in fig.data] == list(errors.values())
    assert [list(t.y) for t in fig.data] == [[1e-7, 0.9, 1.8], [1e-9, 1.2, 1.8]]
    assert [list(t.x) for t in fig.data] == [[1, 2, 4]] * 2
    assert fig.layout.yaxis.type == "log"  # rounding decades below the errors, not on zero
    assert list(depth_error_figure([1], {"a": [0.0]}, floor=1e-3).data[0].y) == [1e-3]
    with pytest.raises(ValueError, match="floor"):
        depth_error_figure([1], {"a": [0.0]}, floor=0.0)
    with pytest.raises(ValueError, match="depths"):
        depth_error_figure([2, 1], {"a": [0.1, 0.2]})
    with pytest.raises(ValueError, match="errors"):
        depth_error_figure([1, 2], {"a": [0.1]})
    with pytest.raises(TypeError, match="errors"):
        depth_error_figure([1, 2], {})


def test_numberings_figure_colours_what_differs_from_the_text_index_and_steps_cases() -> None:
    from posenc_lib.viz.serving import NUMBERING_ROWS, numberings_figure

    cases = {
        "padded": {"text index": [None, 0, 1], "cache slot": [0, 1, 2],
                   "position id": torch.tensor([0, 0, 1]), "caption": "one pad"},
        "plain": {"text index": [0, 1], "cache slot": [None, None], "position id": [0, 1]},
    }
    fig = numberings_figure(cases)
    (heat,) = fig.data
    assert heat.type == "heatmap" and list(heat.y) == list(NUMBERING_ROWS)
    assert [list(row) for row in heat.z] == [[None, 0.0, 0.0], [1.0, 1.0, 1.0], [1.0, 0.0, 0.0]]
    assert [list(row) for row in heat.text] == [["", "0", "1"], ["0", "1", "2"], ["0", "0", "1"]]
    steps = fig.layout.sliders[0].steps
    assert [step.label for step in steps] == ["padded", "plain"]
    assert steps[1].args[0]["z"][0] == [[0.0, 0.0], [None, None], [0.0, 0.0]]
    assert "one pad" in fig.layout.title.text


@pytest.mark.parametrize(
    ("scenarios", "error", "name"),
    [
        ({}, TypeError, "scenarios"),
        ({"a": [0]}, TypeError, "scenarios"),
        ({"a": {"text index": [0], "cache slot": [0]}}, TypeError, "position id"),
        ({"a": {"text index": [0], "cache slot": [0], "position id": [0, 1]}}, ValueError,
         "same length"),
        ({"a": {"text index": [0], "cache slot": [-1], "position id": [0]}}, ValueError,
         "cache slot"),
        ({"a": {"text index": [0.5], "cache slot": [0], "position id": [0]}}, TypeError,
         "text index"),
    ],
)
def test_numberings_figure_rejects_bad_input_naming_it(scenarios: dict, error: type,
                                                       name: str) -> None:
    from posenc_lib.viz.serving import numberings_figure

    with pytest.raises(error, match=name):
        numberings_figure(scenarios)
