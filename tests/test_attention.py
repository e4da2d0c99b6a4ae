"""Attention: exact masking, permutation equivariance, and what breaks it."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from posenc_lib import alibi_bias, apply_rope_half, attention, causal_mask


def _qkv(seed: int, seq: int = 6, dim: int = 8) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(2, seq, dim, generator=gen, dtype=torch.float64) for _ in range(3))


def test_causal_mask() -> None:
    assert causal_mask(3).tolist() == [[True, False, False], [True, True, False],
                                       [True, True, True]]
    assert causal_mask(2, 4).tolist() == [[True, True, True, False], [True, True, True, True]]
    assert causal_mask(0).shape == (0, 0)


def test_matches_torch_scaled_dot_product_attention() -> None:
    q, k, v = _qkv(0)
    out, weights = attention(q, k, v, mask=causal_mask(6))
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(out, expected, atol=1e-12, rtol=0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 6, dtype=torch.float64))


def test_masked_weights_are_exactly_zero() -> None:
    q, k, v = _qkv(1)
    _, weights = attention(q * 100, k * 100, v, mask=causal_mask(6))  # large logits, still 0
    assert bool((weights.triu(1) == 0).all())
    # a "large negative" additive mask is not exact, and −1e-9 is no mask at all
    scores = q @ k.transpose(-1, -2) / 8**0.5
    leaky = scores.masked_fill(~causal_mask(6), -1e-9).softmax(-1)
    assert leaky.triu(1).max() > 0.01


@given(seed=st.integers(0, 10_000), seq=st.integers(2, 10))
def test_without_position_information_attention_is_permutation_equivariant(
    seed: int, seq: int
) -> None:
    q, k, v = _qkv(seed, seq)
    perm = torch.randperm(seq, generator=torch.Generator().manual_seed(seed))
    out, weights = attention(q, k, v)
    out_p, weights_p = attention(q[:, perm], k[:, perm], v[:, perm])
    torch.testing.assert_close(out_p, out[:, perm], atol=1e-12, rtol=0)
    torch.testing.assert_close(weights_p, weights[:, perm][:, :, perm], atol=1e-12, rtol=0)


def test_causal_mask_breaks_equivariance() -> None:
    q, k, v = _qkv(3)
    perm = torch.tensor([5, 4, 3, 2, 1, 0])
    out, _ = attention(q, k, v, mask=causal_mask(6))
    out_p, _ = attention(q[:, perm], k[:, perm], v[:, perm], mask=causal_mask(6))
    assert (out_p - out[:, perm]).abs().max() > 0.1


def test_rope_breaks_equivariance() -> None:
    q, k, v = _qkv(4)
    perm = torch.tensor([1, 0, 2, 3, 5, 4])
    out, _ = attention(apply_rope_half(q), apply_rope_half(k), v)
    out_p, _ = attention(apply_rope_half(q[:, perm]), apply_rope_half(k[:, perm]), v[:, perm])
    assert (out_p - out[:, perm]).abs().max() > 1e-3


def test_bias_is_added_and_broadcasts_over_heads() -> None:
    q = torch.randn(3, 5, 4, dtype=torch.float64)
    k = torch.randn(3, 5, 4, dtype=torch.float64)
    v = torch.randn(3, 5, 4, dtype=torch.float64)
    bias = alibi_bias(3, 5, dtype=torch.float64)
    _, weights = attention(q, k, v, bias=bias)
    expected = (q @ k.transpose(-1, -2) / 2 + bias).softmax(-1)
    torch.testing.assert_close(weights, expected, atol=1e-12, rtol=0)
    # a 4-D batch with the per-head bias broadcasting
    out, _ = attention(q.expand(2, 3, 5, 4), k, v, bias=bias)
    assert out.shape == (2, 3, 5, 4)


def test_half_precision_inputs() -> None:
    q, k, v = (t.to(torch.bfloat16) for t in _qkv(5))
    out, weights = attention(q, k, v, mask=causal_mask(6))
    assert out.dtype == weights.dtype == torch.bfloat16
    assert bool((weights.triu(1) == 0).all())


def test_fully_masked_rows_raise_instead_of_returning_nan() -> None:
    q, k, v = _qkv(6)
    mask = causal_mask(6).clone()
    mask[2] = False
    with pytest.raises(ValueError, match="at least one key"):
        attention(q, k, v, mask=mask)
    with pytest.raises(ValueError, match="at least one key"):
        attention(q, k, v, bias=torch.full((6, 6), float("-inf"), dtype=torch.float64))


def test_bad_masks_and_shapes() -> None:
    q, k, v = _qkv(7)
    with pytest.raises(TypeError, match=r"mask must have dtype torch\.bool"):
        attention(q, k, v, mask=causal_mask(6).float())
    with pytest.raises(ValueError, match="mask of shape"):
        attention(q, k, v, mask=causal_mask(5))
    with pytest.raises(ValueError, match="bias of shape"):
        attention(q, k, v, bias=torch.zeros(3, 6, 6, dtype=torch.float64))


# --- bad and extreme inputs: refused clearly, or computed exactly ---------------------------------


@pytest.mark.parametrize("bad", [float("inf"), float("nan")])
def test_bias_with_nan_or_plus_inf_is_refused(bad: float) -> None:
    q, k, v = _qkv(2)
    bias = torch.zeros(6, 6, dtype=torch.float64)
    bias[2, 3] = bad
    with pytest.raises(ValueError, match=r"bias must not hold NaN or \+inf"):
        attention(q, k, v, bias=bias)


@pytest.mark.parametrize("name", ["q", "k", "v"])
def test_non_finite_inputs_are_refused(name: str) -> None:
    qkv = dict(zip("qkv", _qkv(3), strict=True))
    qkv[name] = qkv[name].clone()
    qkv[name][0, 1, 2] = float("nan")
    with pytest.raises(ValueError, match=f"{name} must be finite"):
        attention(qkv["q"], qkv["k"], qkv["v"])


@given(st.integers(0, 2**16), st.sampled_from([1e19, 1e20, 1e25, 1e30]))
def test_logits_that_overflow_float32_are_computed_in_float64(seed: int, size: float) -> None:
    # q, k ~ 1e20 give float32 logits of ~1e40 = inf; the result used to be NaN rows.
    q, k, v = (t.float() for t in _qkv(seed))
    q, k = q * size, k * size
    out, weights = attention(q, k, v, mask=causal_mask(6))
    assert weights.dtype == torch.float32
    assert bool(torch.isfinite(weights).all()) and bool(torch.isfinite(out).all())
    _, exact = attention(q.double(), k.double(), v.double(), mask=causal_mask(6))
    torch.testing.assert_close(weights.double(), exact, atol=1e-6, rtol=0)


def test_bias_that_overflows_float32_is_computed_in_float64() -> None:
    q, k, v = (t.float() for t in _qkv(4))
    bias = torch.full((6, 6), 1e300, dtype=torch.float64)  # +inf once cast to float32
    bias[:, 0] = 1e300 + 1e290
    _, weights = attention(q, k, v, bias=bias)
    assert bool(torch.isfinite(weights).all())
    torch.testing.assert_close(weights[:, :, 0], torch.ones(2, 6))


def test_logits_beyond_float64_are_refused() -> None:
    q = torch.full((1, 2, 4), 1e200, dtype=torch.float64)
    with pytest.raises(ValueError, match="overflows float64"):
        attention(q, q, q)


def test_head_dimension_zero_is_refused() -> None:
    empty = torch.zeros(2, 4, 0)
    with pytest.raises(ValueError, match="feature size d >= 1, got d = 0"):
        attention(empty, empty, torch.zeros(2, 4, 3))


def test_no_keys_is_refused_naming_k() -> None:
    with pytest.raises(ValueError, match=r"k must hold at least one key \(k_len >= 1\)"):
        attention(torch.zeros(2, 4, 8), torch.zeros(2, 0, 8), torch.zeros(2, 0, 8))


def test_no_queries_gives_an_empty_result() -> None:
    out, weights = attention(torch.zeros(2, 0, 8), torch.zeros(2, 3, 8), torch.zeros(2, 3, 5))
    assert out.shape == (2, 0, 5) and weights.shape == (2, 0, 3)


def test_huge_score_matrices_are_refused_before_allocating() -> None:
    x = torch.zeros(10**5, 2)
    with pytest.raises(ValueError, match=r"q.shape\[-2\] \(q_len\) = 100000 × k.shape\[-2\]"):
        attention(x, x, x)
    with pytest.raises(ValueError, match=r"seq_len = 10000000 × k_len = 10000000"):
        causal_mask(10**7)
    with pytest.raises(ValueError, match=r"seq_len must be at most"):
        causal_mask(2**70)
