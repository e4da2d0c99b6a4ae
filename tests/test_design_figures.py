"""Chapter 2's figures: the length lines, the PE·PEᵀ similarity maps, the counter maps and the
octave decay figure."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from posenc_lib import binary_encoding, sinusoidal_table
from posenc_lib.viz.design import length_lines, octave_decay_figure, similarity_maps


def test_length_lines_integer_is_length_free_normalised_is_not() -> None:
    fig = length_lines((10, 100))
    integer = [np.asarray(t.y) for t in fig.data if t.xaxis == "x"]
    normalised = [np.asarray(t.y) for t in fig.data if t.xaxis == "x2"]
    assert len(integer) == len(normalised) == 2
    np.testing.assert_array_equal(integer[1][:9], integer[0])  # same values at every length
    assert integer[1][-1] == 99 and normalised[0][-1] == normalised[1][-1] == 1.0
    # positions start at m = 1 (log axes): index 4 is m = 5
    assert fig.data[0].x[0] == 1 and fig.data[0].x[4] == 5
    assert abs(normalised[0][4] - 5 / 9) < 1e-5 and abs(normalised[1][4] - 5 / 99) < 1e-5


def test_length_lines_one_colour_per_length_in_both_panels() -> None:
    fig = length_lines((10, 100, 1000))
    by_length: dict[str, set[str]] = {}
    for trace in fig.data:
        by_length.setdefault(trace.name, set()).add(trace.line.color)
    assert all(len(colours) == 1 for colours in by_length.values())  # left = right = legend
    assert len({next(iter(c)) for c in by_length.values()}) == 3  # and the lengths differ


def test_similarity_maps_show_scaled_gram_matrices() -> None:
    sin = sinusoidal_table(32, 16, dtype=torch.float64)
    fig = similarity_maps({"sin": sin, "binary": binary_encoding(32, 16, dtype=torch.float64)})
    z = np.asarray(fig.data[0].z, dtype=float)
    np.testing.assert_allclose(z, (sin @ sin.T / 8).numpy(), atol=1e-3)  # ‖PE‖² = d/2 = 8
    for k in range(32):  # constant diagonals: translation invariance
        assert np.ptp(np.diagonal(z, k)) < 2e-3
    assert fig.data[0].zmin == -1.0 and fig.data[1].zmax == 1.0
    assert [a.text for a in fig.layout.annotations] == ["sin", "binary"]


def test_similarity_maps_have_square_cells_and_named_axes() -> None:
    tables = {name: sinusoidal_table(32, 16) for name in ("a", "b", "c", "d")}
    fig = similarity_maps(tables, cols=2)
    for k in range(4):
        suffix = "" if k == 0 else str(k + 1)
        yaxis, xaxis = fig.layout[f"yaxis{suffix}"], fig.layout[f"xaxis{suffix}"]
        assert yaxis.scaleanchor == f"x{suffix}" and yaxis.scaleratio == 1  # cells are square
        assert xaxis.title.text == "position n" and xaxis.showticklabels
    assert fig.layout.yaxis.title.text == fig.layout.yaxis3.title.text == "position m"


def test_similarity_maps_leave_no_empty_axes() -> None:
    # Five tables on a 2 × 3 grid: five maps, five pairs of axes, no sixth empty frame.
    tables = {name: sinusoidal_table(16, 8) for name in "abcde"}
    fig = similarity_maps(tables)
    axes = [key for key in fig.layout.to_plotly_json() if key.startswith(("xaxis", "yaxis"))]
    assert len(fig.data) == 5 and len(axes) == 10
    assert "xaxis6" not in axes and "yaxis6" not in axes
    assert [t.xaxis for t in fig.data] == ["x", "x2", "x3", "x4", "x5"]
    assert [a.text for a in fig.layout.annotations] == list("abcde")


@pytest.mark.parametrize(
    ("call", "error", "name"),
    [
        (lambda: length_lines(()), ValueError, "lengths"),
        (lambda: length_lines((1,)), ValueError, "lengths"),
        (lambda: length_lines("ab"), TypeError, "lengths"),
        (lambda: similarity_maps({}), ValueError, "tables"),
        (lambda: similarity_maps({"z": torch.zeros(4, 2)}), ValueError, "tables"),
        (lambda: similarity_maps({"big": torch.ones(200, 2)}), ValueError, "tables"),
        (lambda: similarity_maps({"a": torch.ones(4, 2)}, cols=0), ValueError, "cols"),
        (lambda: octave_decay_figure({}), ValueError, "frequencies"),
        (lambda: octave_decay_figure([1.0]), ValueError, "frequencies"),
        (lambda: octave_decay_figure({"a": torch.ones(2, 2)}), ValueError, "frequencies"),
        (lambda: octave_decay_figure({"a": [float("nan")]}), ValueError, "frequencies"),
        (lambda: octave_decay_figure({"a": ["x"]}), ValueError, "frequencies"),
        (lambda: octave_decay_figure({"a": [1.0]}, octaves=0), ValueError, "octaves"),
        (lambda: octave_decay_figure({"a": [1.0]}, octaves=2.5), TypeError, "octaves"),
        (lambda: octave_decay_figure({"a": [1.0]}, points_per_octave=9), ValueError,
         "points_per_octave"),
        (lambda: octave_decay_figure({"a": [1.0]}, line="b"), ValueError, "line"),
    ],
)
def test_bad_arguments_name_the_parameter(call, error: type, name: str) -> None:
    with pytest.raises(error, match=name):
        call()


@pytest.mark.parametrize("bits", [1, 4, 10])
def test_rounded_counter_has_the_sign_of_the_binary_digits(bits: int) -> None:
    from posenc_lib.viz.design import rounded_counter

    m = np.arange(2**bits + 37)  # past 2^bits the counter wraps, and so does the sign
    digits = (m[:, None] >> np.arange(bits)) & 1
    waves = rounded_counter(len(m), bits)
    np.testing.assert_array_equal(np.sign(waves), 1 - 2 * digits)
    assert np.abs(waves).max() <= 1.0


def test_counter_maps_share_one_colour_scale() -> None:
    from posenc_lib.viz.design import counter_maps

    fig = counter_maps(seq_len=32, bits=5, dim=8)
    assert [np.asarray(t.z).shape for t in fig.data] == [(32, 5), (32, 5), (32, 8)]
    assert all(t.zmin == -1.0 and t.zmax == 1.0 for t in fig.data)
    np.testing.assert_array_equal(np.asarray(fig.data[0].z)[:4, 0], [1, -1, 1, -1])  # bit 0
    with pytest.raises(ValueError, match="dim"):
        counter_maps(dim=7)
    with pytest.raises(ValueError, match="seq_len"):
        counter_maps(seq_len=1000)


def _g_full(theta: torch.Tensor, n: int) -> np.ndarray:
    """g(r) = PE(0)·PE(r) / ‖PE(0)‖² for r < n, from a sine–cosine table built independently."""
    angles = torch.arange(n, dtype=torch.float64)[:, None] * theta  # (n, d/2)
    table = torch.stack([angles.sin(), angles.cos()], -1).flatten(-2)  # (n, d)
    return (table @ table[0] / table[0].pow(2).sum()).numpy()


def test_octave_decay_lines_are_the_similarity_and_steps_its_octave_means() -> None:
    geometric = 1e4 ** (-torch.arange(0, 16, 2, dtype=torch.float64) / 16)  # θ_i, d = 16
    uniform = torch.rand(5, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    fig = octave_decay_figure({"geometric": geometric, "uniform": uniform}, octaves=10,
                              points_per_octave=32)
    assert len(fig.data) == 4
    # The geometric set is the library's sinusoidal table: its line is PE(0)·PE(r)/‖PE(0)‖².
    table = sinusoidal_table(1024, 16, dtype=torch.float64)
    g_table = (table @ table[0] / table[0].pow(2).sum()).numpy()
    for (line, steps), theta in zip((fig.data[0:2], fig.data[2:4]), (geometric, uniform),
                                    strict=True):
        g = _g_full(theta, 1024)
        r = np.asarray(line.x)
        np.testing.assert_allclose(np.asarray(line.y), g[r], atol=1e-12)
        # Steps: x = 1, 2, 4, …, 1024; y = the mean over every offset of each octave.
        np.testing.assert_array_equal(np.asarray(steps.x), 2 ** np.arange(11))
        means = [g[2**k:2 ** (k + 1)].mean() for k in range(10)]
        np.testing.assert_allclose(np.asarray(steps.y), [*means, means[-1]], atol=1e-12)
        assert steps.line.shape == "hv"
        # Min–max decimation: per octave the line reaches the true extremes of g.
        for k in range(10):
            inside = (r >= 2**k) & (r < 2 ** (k + 1))
            drawn = np.asarray(line.y)[inside]
            assert abs(drawn.max() - g[2**k:2 ** (k + 1)].max()) < 1e-12
            assert abs(drawn.min() - g[2**k:2 ** (k + 1)].min()) < 1e-12
        assert (np.diff(r) > 0).all() and r[0] == 1 and r[-1] <= 1023
    np.testing.assert_allclose(np.asarray(fig.data[0].y), g_table[np.asarray(fig.data[0].x)],
                               atol=1e-12)
    # Short octaves keep every offset; long ones at most points_per_octave.
    r = np.asarray(fig.data[0].x)
    np.testing.assert_array_equal(r[r < 64], np.arange(1, 64))
    assert ((r >= 512) & (r < 1024)).sum() <= 32


def test_octave_decay_menu_shows_one_line_at_a_time() -> None:
    sets = {name: [0.5 * (k + 1)] for k, name in enumerate("abc")}
    fig = octave_decay_figure(sets, octaves=4, line="b")
    assert [t.visible for t in fig.data[0::2]] == [False, True, False]
    assert all(t.visible is not False for t in fig.data[1::2])  # every step is drawn
    menu = fig.layout.updatemenus[0]
    assert menu.active == 1 and len(menu.buttons) == 3
    visible, indices = menu.buttons[2].args
    assert visible == {"visible": [False, False, True]} and list(indices) == [0, 2, 4]
    assert fig.layout.xaxis.type == "log"
