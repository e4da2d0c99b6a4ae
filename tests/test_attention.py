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
