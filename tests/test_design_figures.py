"""Chapter 2's figures: the length lines and the PE·PEᵀ similarity maps."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from posenc_lib import binary_encoding, sinusoidal_table
from posenc_lib.viz.design import length_lines, similarity_maps


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
