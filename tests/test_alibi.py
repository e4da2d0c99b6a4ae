"""ALiBi: slopes for every head count, the bias matrix, shift invariance of the softmax."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc_lib import alibi_bias, alibi_slopes, attention
from posenc_lib.alibi import (
    MAX_HEADS,
    alibi_bias_authors,
    alibi_reach,
    alibi_slopes_shard,
    alibi_window_mass,
    flash_attn_alibi_bias,
    linear_bias,
)
from posenc_lib.pitfalls import alibi_bias_wrong_sign, alibi_slopes_literal


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


# --- validation and sizes ---


@pytest.mark.parametrize(
    ("call", "error", "pattern"),
    [
        (lambda: alibi_slopes(2**70), ValueError, r"n_heads must be a positive integer <= 65536"),
        (lambda: alibi_slopes(True), TypeError, r"n_heads must be"),
        (lambda: alibi_slopes(8, max_bias=0.0), ValueError, r"max_bias must be"),
        (lambda: alibi_slopes(8, max_bias=float("nan")), ValueError, r"max_bias must be"),
        (lambda: alibi_bias(4, 3, 2), ValueError, r"k_len must be >= q_len = 3, got k_len = 2"),
        (lambda: alibi_bias(4, 3, -1), ValueError, r"k_len must be a non-negative"),
        (lambda: alibi_bias(4, 2.0), TypeError, r"q_len must be"),
        (lambda: alibi_bias(2**16, 2**12), ValueError, r"n_heads·q_len·k_len"),
        (lambda: alibi_bias_authors(4, 5, 3), ValueError, r"k_len must be >= q_len"),
        (lambda: linear_bias([0.5], 3), TypeError, r"slopes must be a 1-D torch.Tensor"),
        (lambda: linear_bias(torch.ones(2, 2), 3), ValueError, r"slopes must have shape"),
        (lambda: linear_bias(torch.tensor([math.inf]), 3), ValueError, r"slopes must be finite"),
        (lambda: flash_attn_alibi_bias(torch.ones(0), 3), ValueError, r"alibi_slopes must have"),
        (lambda: alibi_reach(8, []), ValueError, r"nats must hold"),
        (lambda: alibi_reach(8, -1.0), ValueError, r"nats must be a finite number > 0"),
        (lambda: alibi_window_mass(8, [0, 4], 2), ValueError, r"seq_lens must be a positive"),
        (lambda: alibi_window_mass(8, 4, 0), ValueError, r"window must be a positive"),
        (lambda: alibi_window_mass(8, torch.tensor([1.5]), 2), TypeError, r"seq_lens must be"),
        (lambda: alibi_window_mass(8, [], 2), ValueError, r"seq_lens must hold"),
    ],
)
def test_bad_input_raises_a_clear_error_at_once(call, error, pattern: str) -> None:
    with pytest.raises(error, match=pattern):
        call()


def test_the_last_allowed_head_count_is_cheap() -> None:
    slopes = alibi_slopes(MAX_HEADS, dtype=torch.float64)
    assert slopes.shape == (MAX_HEADS,) and slopes[-1].item() == 2.0**-8


def test_non_causal_bias_allows_fewer_keys_than_queries() -> None:
    bias = alibi_bias(1, 3, 2, causal=False, dtype=torch.float64)[0] / 2.0**-8
    # queries at positions -1, 0, 1 against keys 0, 1
    assert bias.tolist() == [[-1.0, -2.0], [0.0, -1.0], [-1.0, 0.0]]


# --- the general form and its variants ---


@given(n=st.integers(1, 40), q=st.integers(0, 12), extra=st.integers(0, 12),
       causal=st.booleans())
def test_alibi_bias_is_linear_bias_with_alibi_slopes(
    n: int, q: int, extra: int, causal: bool
) -> None:
    slopes = alibi_slopes(n, dtype=torch.float64)
    got = linear_bias(slopes, q, q + extra, causal=causal, dtype=torch.float64)
    torch.testing.assert_close(got, alibi_bias(n, q, q + extra, causal=causal, dtype=torch.float64))


def test_max_bias_generalises_the_eight() -> None:
    assert alibi_slopes(4, max_bias=4.0, dtype=torch.float64).tolist() == [0.5, 0.25, 0.125, 0.0625]
    # the interleaving rule is the same for every max_bias
    six = alibi_slopes(6, max_bias=16.0, dtype=torch.float64)
    torch.testing.assert_close(six[:4], alibi_slopes(4, max_bias=16.0, dtype=torch.float64))
    torch.testing.assert_close(six[4:], alibi_slopes(8, max_bias=16.0, dtype=torch.float64)[0:4:2])


@given(n=st.integers(1, 16), q=st.integers(1, 12), extra=st.integers(0, 12))
def test_authors_form_gives_the_same_attention(n: int, q: int, extra: int) -> None:
    # +m·j differs from −m·(i−j) by m·pos(i), a constant per row: the softmax cannot see it.
    ours = alibi_bias(n, q, q + extra, dtype=torch.float64)
    theirs = alibi_bias_authors(n, q, q + extra, dtype=torch.float64)
    assert bool((torch.isneginf(ours) == torch.isneginf(theirs)).all())
    shift = (theirs - ours).nan_to_num(nan=0.0)  # −inf − (−inf) is nan on masked cells
    slopes = alibi_slopes(n, dtype=torch.float64)
    rows = (torch.arange(q, dtype=torch.float64) + extra)[None, :, None] * slopes[:, None, None]
    torch.testing.assert_close(shift, rows.expand_as(shift).masked_fill(torch.isneginf(ours), 0.0))
    torch.testing.assert_close(ours.softmax(-1), theirs.softmax(-1), atol=1e-12, rtol=0)


@given(n=st.integers(1, 16), q=st.integers(0, 10), extra=st.integers(0, 10), causal=st.booleans())
def test_flash_attention_convention_is_alibi_with_positive_slopes(
    n: int, q: int, extra: int, causal: bool
) -> None:
    slopes = alibi_slopes(n, dtype=torch.float64)
    flash = flash_attn_alibi_bias(slopes, q, q + extra, causal=causal, dtype=torch.float64)
    ours = alibi_bias(n, q, q + extra, causal=causal, dtype=torch.float64)
    torch.testing.assert_close(flash, ours)
    if q > 1 and n > 0:
        # negated slopes (a bias one would add oneself) reward distance instead
        wrong = flash_attn_alibi_bias(-slopes, q, q + extra, causal=causal, dtype=torch.float64)
        assert bool((wrong[:, -1, 0] > 0).all())


def test_symmetric_form_is_the_distance_in_both_directions() -> None:
    full = alibi_bias(8, 6, causal=False, dtype=torch.float64)
    causal = alibi_bias(8, 6, dtype=torch.float64)
    lower = torch.ones(6, 6, dtype=torch.bool).tril()
    torch.testing.assert_close(full[:, lower], causal[:, lower])
    torch.testing.assert_close(full, full.transpose(-1, -2))


# --- reach and window mass ---


def test_reach_is_where_the_bias_has_fallen_by_that_many_nats() -> None:
    reach = alibi_reach(8)
    assert reach.shape == (8, 3)
    assert reach[:, 0].tolist() == [2.0**k for k in range(1, 9)]  # 1/m: 2, 4, ..., 256
    torch.testing.assert_close(reach[:, 1], 5 * reach[:, 0])
    assert alibi_reach(12, 1.0).shape == (12, 1)
    # at distance 1/m the bias of every head is exactly −1 nat (8 heads: integer distances)
    bias = alibi_bias(8, 257, dtype=torch.float64)
    for h in range(8):
        assert bias[h, -1, 256 - int(reach[h, 0])].item() == -1.0


@given(n=st.integers(1, 12), window=st.integers(1, 40), length=st.integers(1, 200))
def test_window_mass_matches_a_real_softmax(n: int, window: int, length: int) -> None:
    mass = alibi_window_mass(n, [length], window)[:, 0]
    # a content-free query at the last position: zero q and k, bias only
    zeros = torch.zeros(n, 1, 1, dtype=torch.float64)
    keys = torch.zeros(n, length, 1, dtype=torch.float64)
    bias = alibi_bias(n, 1, length, dtype=torch.float64)
    _, weights = attention(zeros, keys, keys, bias=bias)
    torch.testing.assert_close(mass, weights[:, 0, max(0, length - window):].sum(-1),
                               atol=1e-12, rtol=1e-12)


@given(n=st.integers(1, 64), window=st.integers(1, 4096))
def test_window_mass_falls_to_its_limit_and_never_below(n: int, window: int) -> None:
    lengths = [1, window, 2 * window, 8 * window, 10**9]
    mass = alibi_window_mass(n, lengths, window)
    assert bool((mass[:, :2] == 1.0).all())  # T <= window: every key is in the window
    assert bool((mass[:, 1:] <= mass[:, :-1] + 1e-15).all())
    limit = -torch.expm1(-alibi_slopes(n, dtype=torch.float64) * window)
    assert bool((mass >= limit[:, None] - 1e-12).all())
    torch.testing.assert_close(mass[:, -1], limit, rtol=1e-6, atol=0)


def test_reach_and_window_mass_use_max_bias() -> None:
    # MPT's alibi_bias_max = 4 for 8 heads: slopes 2^(−h/2 − 1/2), the flattest 1/16, not 1/256
    slopes = alibi_slopes(8, max_bias=4.0, dtype=torch.float64)
    reach = alibi_reach(8, 10.0, max_bias=4.0)[:, 0]
    torch.testing.assert_close(reach, 10 / slopes, rtol=0, atol=0)
    assert reach.max().item() == 160.0 and alibi_reach(8, 10.0)[:, 0].max().item() == 2560.0
    mass = alibi_window_mass(8, [64, 10**9], 32, max_bias=4.0)
    limit = -torch.expm1(-slopes * 32)
    torch.testing.assert_close(mass[:, 1], limit, rtol=1e-9, atol=0)
    assert not torch.allclose(mass, alibi_window_mass(8, [64, 10**9], 32))  # the default, 8
    for bad in (0.0, -1.0, float("nan"), 2000.0):
        with pytest.raises(ValueError, match="max_bias"):
            alibi_reach(8, max_bias=bad)
        with pytest.raises(ValueError, match="max_bias"):
            alibi_window_mass(8, 10, 2, max_bias=bad)


def test_window_mass_accepts_ints_and_tensors() -> None:
    a = alibi_window_mass(4, 100, 10)
    b = alibi_window_mass(4, torch.tensor([100]), 10)
    assert a.shape == b.shape == (4, 1)
    torch.testing.assert_close(a, b)


# --- the mistakes, on purpose ---


def test_literal_slopes_are_right_only_for_powers_of_two() -> None:
    for n in (1, 2, 4, 8, 16, 32, 64, 128):
        torch.testing.assert_close(alibi_slopes_literal(n, dtype=torch.float64),
                                   alibi_slopes(n, dtype=torch.float64), atol=0, rtol=1e-15)
    for n, worst in ((12, 2.0**5.5), (40, 2.0 ** (8 * 33 / 40 - 1 / 8))):
        ratio = alibi_slopes(n, dtype=torch.float64) / alibi_slopes_literal(n, dtype=torch.float64)
        assert math.isclose(torch.maximum(ratio, 1 / ratio).max().item(), worst, rel_tol=1e-12)
    with pytest.raises(ValueError, match="n_heads"):
        alibi_slopes_literal(2**70)


def test_a_flipped_sign_sends_attention_to_the_first_token() -> None:
    zeros = torch.zeros(8, 64, 4, dtype=torch.float64)
    _, good = attention(zeros, zeros, zeros, bias=alibi_bias(8, 64, dtype=torch.float64))
    _, bad = attention(zeros, zeros, zeros, bias=alibi_bias_wrong_sign(8, 64, dtype=torch.float64))
    assert bool((good[:, -1].argmax(-1) == 63).all())
    assert bool((bad[:, -1].argmax(-1) == 0).all())


def test_bias_diagonal_is_plus_zero_and_device_and_max_bias_are_honoured() -> None:
    from posenc_lib import alibi_bias, alibi_slopes, linear_bias

    bias = alibi_bias(4, 6, dtype=torch.float64)
    diag = torch.diagonal(bias, dim1=-2, dim2=-1)
    assert bool((diag == 0).all()) and not bool(torch.signbit(diag).any())
    meta = alibi_bias(4, 6, device="meta")
    assert meta.device.type == "meta" and meta.shape == (4, 6, 6)
    assert linear_bias(alibi_slopes(4), 3, device="cpu").device.type == "cpu"
    mpt16 = alibi_bias(12, 5, max_bias=16.0, dtype=torch.float64)
    expected = linear_bias(alibi_slopes(12, max_bias=16.0, dtype=torch.float64), 5,
                           dtype=torch.float64)
    assert torch.equal(mpt16, expected) and not torch.equal(mpt16, alibi_bias(12, 5,
                                                                               dtype=torch.float64))


def test_packed_bias_restarts_distances_per_document() -> None:
    from posenc_lib import alibi_bias, packed_alibi_bias

    packed = packed_alibi_bias(6, [3, 5, 2], dtype=torch.float64)
    assert packed.shape == (6, 10, 10)
    for start, length in ((0, 3), (3, 5), (8, 2)):
        block = packed[:, start:start + length, start:start + length]
        assert torch.equal(block, alibi_bias(6, length, dtype=torch.float64))
        # nothing before the document is visible
        assert bool(torch.isneginf(packed[:, start:start + length, :start]).all())
    # one document = the plain bias
    assert torch.equal(packed_alibi_bias(3, [7]), alibi_bias(3, 7))
    with pytest.raises(ValueError, match="doc_lengths"):
        packed_alibi_bias(2, [3, 0])
    with pytest.raises(ValueError, match="doc_lengths"):
        packed_alibi_bias(2, [])
    with pytest.raises(TypeError, match="doc_lengths"):
        packed_alibi_bias(2, 5)


def test_precision_error_row_forms_break_opposite_ends_of_a_prefill() -> None:
    from posenc_lib.alibi import alibi_precision_error

    bloom = alibi_precision_error(16, 512, "bloom")
    mpt = alibi_precision_error(16, 512, "mpt")
    rel = alibi_precision_error(16, 512, "relative")
    assert bloom.shape == mpt.shape == rel.shape == (512,)
    # BLOOM's row is exact near key 0 and breaks late queries; MPT's mirrors it.
    assert bloom[:8].max() < 0.01 and bloom[-1] > 0.1
    assert mpt[-1] < 0.01 and mpt[8] > 0.1
    assert rel.max() < 0.01
    # the centred row halves the largest offset: better than either end's row, still far from exact
    centered = alibi_precision_error(16, 512, "centered")
    assert rel.max() < centered.max() < min(bloom.max(), mpt.max())
    assert centered[255] < 0.01 and centered[16] > 0.05 and centered[-1] > 0.05
    # in float32 every form is exact to float32 rounding; the block size changes only the order
    # of float32 sums
    assert alibi_precision_error(16, 512, "mpt", torch.float32).max() < 1e-5
    assert torch.allclose(alibi_precision_error(4, 64, "bloom", block=5),
                          alibi_precision_error(4, 64, "bloom", block=64), atol=1e-7, rtol=0)
    # the last query of BLOOM's form equals the direct computation on one row
    row = alibi_bias_authors(16, 1, 512, dtype=torch.float32)[:, 0].to(torch.bfloat16)
    exact = alibi_bias(16, 1, 512, dtype=torch.float64)[:, 0].softmax(-1)
    direct = (row.float().softmax(-1).double() - exact).abs().max().item()
    assert math.isclose(bloom[-1].item(), direct, rel_tol=1e-9)
    with pytest.raises(ValueError, match="form"):
        alibi_precision_error(4, 8, "t5")
    with pytest.raises(ValueError, match="dtype"):
        alibi_precision_error(4, 8, "bloom", torch.float64)
    with pytest.raises(ValueError, match="seq_len"):
        alibi_precision_error(4, 0, "bloom")


@given(st.integers(1, 64), st.integers(0, 63))
def test_mass_beyond_is_the_tail_of_the_softmax(length: int, r: int) -> None:
    from posenc_lib.alibi import mass_beyond

    r = min(r, length - 1)
    logits = torch.linspace(2.0, -3.0, length, dtype=torch.float64)
    w = logits.softmax(-1)
    assert math.isclose(mass_beyond(logits, r).item(), w[r + 1:].sum().item(), abs_tol=1e-14)
    assert mass_beyond(logits, length - 1).item() == 0.0


def test_mass_beyond_matches_alibi_window_mass() -> None:
    from posenc_lib.alibi import alibi_window_mass, mass_beyond

    slopes = alibi_slopes(8, dtype=torch.float64)
    logits = -slopes[:, None] * torch.arange(2048, dtype=torch.float64)
    beyond = mass_beyond(logits, [511])
    assert torch.allclose(beyond[:, 0], 1 - alibi_window_mass(8, 2048, 512)[:, 0], atol=1e-12)
    with pytest.raises(ValueError, match="r must"):
        mass_beyond(logits, 2048)
    with pytest.raises(TypeError, match="logits"):
        mass_beyond([1.0, 2.0], 0)


def test_alibi_bias_authors_takes_max_bias() -> None:
    ours = alibi_bias(12, 5, max_bias=16.0, dtype=torch.float64)
    authors = alibi_bias_authors(12, 5, max_bias=16.0, dtype=torch.float64)
    assert torch.allclose(authors.softmax(-1), ours.softmax(-1), atol=1e-15)
    assert not torch.allclose(authors, alibi_bias_authors(12, 5, dtype=torch.float64))


def test_linear_bias_future_slopes_give_an_asymmetric_bias() -> None:
    left = torch.tensor([0.5, 0.25], dtype=torch.float64)
    right = torch.tensor([0.125, 1.0], dtype=torch.float64)
    bias = linear_bias(left, 4, causal=False, future_slopes=right, dtype=torch.float64)
    # query 1: key 0 is one back (−0.5 / −0.25), key 3 two ahead (−0.25 / −2.0)
    assert bias[:, 1, 0].tolist() == [-0.5, -0.25] and bias[:, 1, 3].tolist() == [-0.25, -2.0]
    assert torch.equal(linear_bias(left, 4, causal=False, future_slopes=left, dtype=torch.float64),
                       linear_bias(left, 4, causal=False, dtype=torch.float64))
    # reversal of the sequence maps the bias to the one with the slopes swapped, not to itself
    flipped = bias.flip(1).flip(2)
    assert torch.equal(flipped, linear_bias(right, 4, causal=False, future_slopes=left,
                                            dtype=torch.float64))
    assert not torch.equal(flipped, bias)
    with pytest.raises(ValueError, match="future_slopes needs causal=False"):
        linear_bias(left, 4, future_slopes=right)
    with pytest.raises(ValueError, match="future_slopes must have shape"):
        linear_bias(left, 4, causal=False, future_slopes=right[:1])


def test_shard_slopes_are_the_ranks_slice_of_the_global_slopes() -> None:
    # 12 heads on 4 ranks: rank 2 holds heads 6, 7, 8 — global slopes 2^-7, 2^-8, 2^-0.5
    got = alibi_slopes_shard(12, 2, 4, dtype=torch.float64)
    assert torch.allclose(got, torch.tensor([2.0**-7, 2.0**-8, 2.0**-0.5], dtype=torch.float64),
                          rtol=1e-15, atol=0)
    # not the local head count's slopes (alibi_slopes(3) = 2^-2.67 …) and not the first slice
    assert alibi_slopes_shard(12, 2, 4).tolist() != alibi_slopes(3).tolist()
    assert alibi_slopes_shard(12, 2, 4).tolist() != alibi_slopes(12)[:3].tolist()


@given(st.integers(1, 200), st.integers(1, 16))
def test_shards_concatenate_to_the_global_slopes(n_heads: int, world_size: int) -> None:
    if n_heads % world_size:
        with pytest.raises(ValueError, match="world_size"):
            alibi_slopes_shard(n_heads, 0, world_size)
        return
    parts = [alibi_slopes_shard(n_heads, r, world_size, dtype=torch.float64)
             for r in range(world_size)]
    assert torch.equal(torch.cat(parts), alibi_slopes(n_heads, dtype=torch.float64))


@pytest.mark.parametrize(("rank", "world_size"), [(-1, 4), (4, 4), (0, 0), (1.5, 4)])
def test_shard_rejects_bad_ranks(rank: object, world_size: object) -> None:
    with pytest.raises((ValueError, TypeError), match=r"rank|world_size"):
        alibi_slopes_shard(12, rank, world_size)  # type: ignore[arg-type]


@pytest.mark.parametrize("n", [3, 5, 6, 12, 40, 112])
def test_float32_bias_is_built_in_float32_within_an_ulp_of_float64(n: int) -> None:
    # A float32 bias is computed in float32 (one allocation): within one float32 ulp of the
    # float64 bias, with the same −inf cells and +0.0 (not −0.0) where the distance is 0. Fails
    # if the float32 path rounded a distance, lost the mask or returned −0.0.
    from posenc_lib.alibi import _work_dtype

    for causal in (True, False):
        got = alibi_bias(n, 37, 300, causal=causal)
        ref = alibi_bias(n, 37, 300, causal=causal, dtype=torch.float64)
        assert got.dtype == torch.float32
        assert torch.equal(torch.isneginf(got), torch.isneginf(ref))
        finite = torch.isfinite(ref)
        ulp = torch.finfo(torch.float32).eps * ref[finite].abs()
        assert bool(((got[finite].double() - ref[finite]).abs() <= ulp).all())
        assert not bool(torch.signbit(got[ref == 0]).any())
    # narrower dtypes are still the correctly rounded float64 bias (no double rounding) ...
    for narrow in (torch.bfloat16, torch.float16):
        assert torch.equal(alibi_bias(n, 64, dtype=narrow),
                           alibi_bias(n, 64, dtype=torch.float64).to(narrow))
    # ... and float32 falls back to float64 once float32 can no longer hold every distance.
    assert _work_dtype(None, torch.float32, 2**24) == torch.float32
    assert _work_dtype(None, torch.float32, 2**24 + 1) == torch.float64
    assert _work_dtype(None, torch.bfloat16, 8) == torch.float64


def test_float32_bias_is_really_computed_in_float32() -> None:
    # The float32 path rounds μ_h to float32 before multiplying (within an ulp, see above), so for
    # non-power-of-two slopes some entries differ from the float64 bias rounded once.
    got = alibi_bias(12, 1, 2048)
    once = alibi_bias(12, 1, 2048, dtype=torch.float64).float()
    assert not torch.equal(got, once)
    # power-of-two slopes (8 heads: 2^−1 … 2^−8) times integers below 2**24 are exact in float32
    assert torch.equal(alibi_bias(8, 1, 2048), alibi_bias(8, 1, 2048, dtype=torch.float64).float())


def test_map_mass_beyond_matches_the_row_form_and_a_hand_count() -> None:
    from posenc_lib.alibi import map_mass_beyond, mass_beyond

    # content-free ALiBi: each query's row of the map is the softmax of −μ·(m − n), so the map
    # form equals mass_beyond of that row (keys listed by distance), query by query
    T = 40
    w = alibi_bias(4, T, dtype=torch.float64).softmax(-1)  # (4, T, T)
    m = 37
    by_distance = -alibi_slopes(4, dtype=torch.float64)[:, None] * torch.arange(m + 1.0)
    expected = mass_beyond(by_distance, [0, 5, 20])
    got = map_mass_beyond(w, [0, 5, 20], queries=[m])
    assert torch.allclose(got, expected, atol=1e-14)
    # a hand count: uniform causal attention over 4 keys, query 3 and query 2, beyond r = 1
    uniform = torch.tril(torch.ones(4, 4, dtype=torch.float64)) / torch.arange(1.0, 5.0)[:, None]
    assert math.isclose(map_mass_beyond(uniform, 1, queries=[3]).item(), 0.5)
    assert math.isclose(map_mass_beyond(uniform, 1, queries=[2, 3]).item(), (1 / 3 + 0.5) / 2)
    assert map_mass_beyond(uniform, 0).shape == ()


def test_map_mass_beyond_rejects_bad_input() -> None:
    from posenc_lib.alibi import map_mass_beyond

    w = torch.eye(5)
    with pytest.raises(ValueError, match="weights"):
        map_mass_beyond(torch.ones(5, 4), 1)
    with pytest.raises(ValueError, match="r must"):
        map_mass_beyond(w, 5)
    with pytest.raises(ValueError, match="queries"):
        map_mass_beyond(w, 1, queries=[7])
    with pytest.raises(TypeError, match="weights"):
        map_mass_beyond(w.numpy(), 1)
