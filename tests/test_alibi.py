"""ALiBi: slopes for every head count, the bias matrix, shift invariance of the softmax."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc_lib import alibi_bias, alibi_slopes, attention


def test_slopes_for_powers_of_two() -> None:
    assert alibi_slopes(1, dtype=torch.float64).tolist() == [2.0**-8]
    assert alibi_slopes(2, dtype=torch.float64).tolist() == [2.0**-4, 2.0**-8]
    assert alibi_slopes(8, dtype=torch.float64).tolist() == [2.0**-k for k in range(1, 9)]
    sixteen = alibi_slopes(16, dtype=torch.float64).tolist()
    assert sixteen == pytest.approx([2.0 ** (-k / 2) for k in range(1, 17)], rel=1e-15)


def test_slopes_for_other_head_counts() -> None:
    # slopes(4) followed by every other slope of slopes(8), truncated
    assert alibi_slopes(6, dtype=torch.float64).tolist() == [
        0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125,
    ]
    twelve = alibi_slopes(12, dtype=torch.float64).tolist()
    expected = [2.0**-k for k in range(1, 9)] + [2.0**-0.5, 2.0**-1.5, 2.0**-2.5, 2.0**-3.5]
    assert twelve == pytest.approx(expected, rel=1e-15)
    assert alibi_slopes(3, dtype=torch.float64).tolist() == [2.0**-4, 2.0**-8, 2.0**-2]


@given(n=st.integers(1, 100))
def test_slopes_are_distinct_and_in_range(n: int) -> None:
    slopes = alibi_slopes(n, dtype=torch.float64)
    assert slopes.shape == (n,)
    assert len(set(slopes.tolist())) == n
    assert bool((slopes > 0).all()) and bool((slopes < 1).all())


def test_bias_values_causal_and_not() -> None:
    bias = alibi_bias(1, 4, dtype=torch.float64)[0]  # slope 2^-8
    m = 2.0**-8
    assert bias[3].tolist() == [-3 * m, -2 * m, -m, 0.0]
    assert bias[0, 1:].tolist() == [float("-inf")] * 3
    full = alibi_bias(2, 4, causal=False, dtype=torch.float64)
    torch.testing.assert_close(full, full.transpose(-1, -2))  # −m·|i−j| is symmetric
    assert full[0, 0].tolist() == [0.0, -1 / 16, -2 / 16, -3 / 16]
    assert bool(torch.isfinite(full).all())


def test_bias_with_a_cache_puts_queries_at_the_end() -> None:
    bias = alibi_bias(8, 2, 5, dtype=torch.float64)
    assert bias.shape == (8, 2, 5)
    # query 0 sits at position 3, query 1 at position 4
    assert bias[0, 0].tolist() == [-1.5, -1.0, -0.5, 0.0, float("-inf")]
    assert bias[0, 1].tolist() == [-2.0, -1.5, -1.0, -0.5, 0.0]
    torch.testing.assert_close(bias[:, -1], alibi_bias(8, 5, dtype=torch.float64)[:, -1])


@given(n=st.integers(1, 12), seq=st.integers(1, 24))
def test_softmax_is_unchanged_by_the_authors_per_row_shift(n: int, seq: int) -> None:
    # Press et al.'s code adds +m·j instead of −m·(i−j): it differs by m·i per row.
    bias = alibi_bias(n, seq, dtype=torch.float64)
    slopes = alibi_slopes(n, dtype=torch.float64)
    j = torch.arange(seq, dtype=torch.float64)
    authors = (slopes[:, None, None] * j).expand(n, seq, seq)
    authors = authors.masked_fill(torch.isneginf(bias), float("-inf"))
    torch.testing.assert_close(bias.softmax(-1), authors.softmax(-1), atol=1e-12, rtol=0)
    # and a flipped sign (a known bug) changes it
    if seq > 2:
        flipped = (-bias).masked_fill(torch.isneginf(bias), float("-inf"))
        assert (flipped.softmax(-1) - bias.softmax(-1)).abs().max() > 1e-6


def test_bias_works_inside_attention_and_prefers_near_keys() -> None:
    q = torch.zeros(4, 16, 8)  # constant queries: logits are pure bias
    v = torch.eye(16).expand(4, 16, 16)
    _, weights = attention(q, torch.zeros(4, 16, 8), v, bias=alibi_bias(4, 16))
    assert bool((weights.triu(1) == 0).all())
    last = weights[:, -1]
    assert bool((last[:, 1:] >= last[:, :-1]).all())  # monotone in distance
    # steeper heads concentrate more on the nearest key
    assert last[0, -1] > last[-1, -1]


def test_dtype_argument() -> None:
    assert alibi_bias(2, 3).dtype == torch.float32
    assert alibi_bias(2, 3, dtype=torch.bfloat16).dtype == torch.bfloat16
    assert alibi_bias(2, 0).shape == (2, 0, 0)
