"""The naive schemes of chapter 2, each with the property it fails."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc_lib import binary_encoding, integer_encoding, normalized_encoding


def test_integer_encoding_repeats_p_times_scale() -> None:
    table = integer_encoding(5, 3)
    assert table.shape == (5, 3) and table.dtype == torch.float32
    assert table[:, 0].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert torch.equal(table[:, 0], table[:, 2])
    scaled = integer_encoding(5, 2, scale=0.25, dtype=torch.float64)
    assert scaled[4].tolist() == [1.0, 1.0]


def test_integer_encoding_is_unbounded() -> None:
    # The failure the book measures: values grow with the length.
    assert integer_encoding(1000, 1).max().item() == 999.0


def test_normalized_encoding_spans_zero_to_one_and_its_step_depends_on_length() -> None:
    short, long = normalized_encoding(5, 2), normalized_encoding(101, 2)
    assert short[:, 0].tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert long[0, 0] == 0.0 and long[-1, 0] == 1.0
    # the gap between neighbours is 1/(L-1): the same offset means different things
    assert (short[1, 0] - short[0, 0]).item() == pytest.approx(0.25)
    assert (long[1, 0] - long[0, 0]).item() == pytest.approx(0.01)


def test_normalized_encoding_of_a_single_position_is_zero() -> None:
    assert normalized_encoding(1, 4).tolist() == [[0.0] * 4]
    assert normalized_encoding(0, 4).shape == (0, 4)


def test_binary_encoding_lsb_first() -> None:
    table = binary_encoding(8, 4)
    assert table[5].tolist() == [1.0, 0.0, 1.0, 0.0]  # 5 = 0b0101
    assert table[6].tolist() == [0.0, 1.0, 1.0, 0.0]  # 6 = 0b0110
    assert table[7].tolist() == [1.0, 1.0, 1.0, 0.0]


@given(dim=st.integers(min_value=1, max_value=9))
def test_binary_codes_are_unique_and_decode_to_p(dim: int) -> None:
    n = 2**dim
    table = binary_encoding(n, dim, dtype=torch.float64)
    weights = 2.0 ** torch.arange(dim, dtype=torch.float64)
    assert torch.equal(table @ weights, torch.arange(n, dtype=torch.float64))
    assert set(table.unique().tolist()) <= {0.0, 1.0}


def test_binary_encoding_with_many_bits_pads_with_zeros() -> None:
    table = binary_encoding(3, 70)
    assert table.shape == (3, 70)
    assert table[:, 2:].abs().sum() == 0
    assert table[2, :2].tolist() == [0.0, 1.0]


def test_binary_encoding_rejects_more_positions_than_codes() -> None:
    with pytest.raises(ValueError, match=r"seq_len must be <= 2\*\*dim = 8"):
        binary_encoding(9, 3)
    assert binary_encoding(8, 3).shape == (8, 3)
