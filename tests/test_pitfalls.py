"""Tests for posenc_lib.pitfalls: each reproduced bug really differs from its fixed counterpart."""

from __future__ import annotations

import math

import pytest
import torch

from posenc_lib.attention import attention, causal_mask
from posenc_lib.pitfalls import (
    attention_tiny_fill,
    meta_rope_angles_float32,
    rope_missing_minus,
    rope_table_layout_mismatch,
    seed_attention_buggy,
    sinusoidal_table_div_term_multiplied,
)
from posenc_lib.rope import apply_rope_interleaved, rope_angles, rope_inv_freq
from posenc_lib.sinusoidal import sinusoidal_table


def _qkv(seq: int = 6, dim: int = 8, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(2, seq, dim, generator=g, dtype=torch.float64) for _ in range(3))


def test_seed_attention_ignores_its_mask():
    q, k, v = _qkv()
    mask = causal_mask(6)
    out_bug, w_bug = seed_attention_buggy(q, k, v, mask=mask)
    out_none, w_none = attention(q, k, v)
    out_fix, w_fix = attention(q, k, v, mask=mask)
    # With the mask, the buggy weights are exactly the unmasked ones...
    torch.testing.assert_close(w_bug, w_none)
    torch.testing.assert_close(out_bug, out_none)
    # ... so future positions keep real weight, where the fixed attention gives exactly 0.
    future = ~mask
    assert float(w_bug[..., future].min()) > 1e-3
    assert torch.all(w_fix[..., future] == 0)
    assert float((out_bug - out_fix).abs().max()) > 0.1


def test_seed_attention_is_fine_without_a_mask():
    q, k, v = _qkv(seed=1)
    torch.testing.assert_close(seed_attention_buggy(q, k, v)[1], attention(q, k, v)[1])


def test_tiny_fill_leaves_weight_on_masked_positions():
    q, k, v = _qkv(seed=2)
    mask = causal_mask(6)
    _, w = attention_tiny_fill(q, k, v, mask=mask)
    _, w_fix = attention(q, k, v, mask=mask)
    # Row 0 may attend only to key 0, yet the five masked keys (logit ~0) keep weight.
    assert float(w[..., 0, 1:].sum(-1).min()) > 0.05
    torch.testing.assert_close(w_fix[..., 0, 0], torch.ones_like(w_fix[..., 0, 0]))
    # Masked logits are -1e-9 ~ 0: the weight is exp(0) / row sum.
    logits = q @ k.transpose(-2, -1) / math.sqrt(8)
    expected = torch.softmax(logits.masked_fill(~mask, 0.0), dim=-1)
    torch.testing.assert_close(w, expected)


def test_div_term_multiplied_differs_from_the_table():
    bug = sinusoidal_table_div_term_multiplied(50, 16, dtype=torch.float64)
    good = sinusoidal_table(50, 16, dtype=torch.float64)
    assert bug.shape == good.shape == (50, 16)
    # Pair 0 has div_term 1, so it agrees; every other pair spins base**(2i/d) rad per position.
    torch.testing.assert_close(bug[:, :2], good[:, :2])
    assert float((bug - good).abs().max()) > 1.0
    p = torch.arange(50, dtype=torch.float64)
    torch.testing.assert_close(bug[:, 2], torch.sin(p * 10000.0 ** (2 / 16)))


def test_missing_minus_is_not_a_rotation():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(20, 8, generator=g, dtype=torch.float64)
    bug = rope_missing_minus(x)
    good = apply_rope_interleaved(x)
    torch.testing.assert_close(bug[0], good[0])  # position 0: cos = 1, sin = 0
    torch.testing.assert_close(good.norm(dim=-1), x.norm(dim=-1))
    assert float((bug.norm(dim=-1) - x.norm(dim=-1)).abs().max()) > 0.1


def test_missing_minus_breaks_relativity():
    g = torch.Generator().manual_seed(4)
    q0 = torch.randn(8, generator=g, dtype=torch.float64)
    k0 = torch.randn(8, generator=g, dtype=torch.float64)
    x_q, x_k = q0.expand(30, 8), k0.expand(30, 8)
    s_bug = rope_missing_minus(x_q) @ rope_missing_minus(x_k).T
    s_good = apply_rope_interleaved(x_q) @ apply_rope_interleaved(x_k).T
    d_good = torch.diagonal(s_good, offset=3)
    d_bug = torch.diagonal(s_bug, offset=3)
    assert float(d_good.max() - d_good.min()) < 1e-9
    assert float(d_bug.max() - d_bug.min()) > 0.1


def test_table_layout_mismatch_is_not_a_rotation_and_breaks_relativity():
    g = torch.Generator().manual_seed(5)
    q0, k0 = torch.randn(2, 16, generator=g, dtype=torch.float64)
    x_q, x_k = q0.expand(40, 16), k0.expand(40, 16)
    bug_q = rope_table_layout_mismatch(x_q)
    torch.testing.assert_close(bug_q[0], q0)  # position 0: cos = 1, sin = 0
    assert float((bug_q.norm(dim=-1) - q0.norm()).abs().max()) > 0.05
    s_bug = bug_q @ rope_table_layout_mismatch(x_k).T
    d_bug = torch.diagonal(s_bug, offset=3)
    assert float(d_bug.max() - d_bug.min()) > 0.1
    # the block of pair (j, j + d/2): rows [cos α, -sin α] and [sin β, cos β], α = m θ_(j//2),
    # β = m θ_(j//2 + d/4); checked on basis vectors at position 7
    m, d = 7.0, 16
    theta = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    for j in range(d // 2):
        alpha, beta = m * theta[j // 2], m * theta[j // 2 + d // 4]
        e_j = torch.zeros(8, d, dtype=torch.float64)
        e_j[7, j] = 1.0
        out = rope_table_layout_mismatch(e_j)[7]
        assert float(abs(out[j] - torch.cos(alpha))) < 1e-12
        assert float(abs(out[j + d // 2] - torch.sin(beta))) < 1e-12


def test_float32_angles_drift_at_long_positions():
    dim = 128
    positions = torch.tensor([0, 100, 1_000_000])
    exact = rope_angles(positions, rope_inv_freq(dim))
    approx = meta_rope_angles_float32(positions, dim)
    assert approx.dtype == torch.float32 and approx.shape == (3, 64)
    err = (approx.double() - exact).abs()
    assert float(err[0].max()) == 0.0
    assert float(err[1].max()) < 1e-4
    assert 0.01 < float(err[2].max()) < 0.1


def test_bad_arguments():
    q, k, v = _qkv()
    with pytest.raises(TypeError, match="q"):
        seed_attention_buggy([1.0], k, v)
    with pytest.raises(ValueError, match="last dimension"):
        attention_tiny_fill(q, k[..., :4], v)
    with pytest.raises(ValueError, match="mask"):
        seed_attention_buggy(q, k, v, mask=torch.ones(5, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match="dim"):
        sinusoidal_table_div_term_multiplied(4, 7)
    with pytest.raises(ValueError, match="dim"):
        rope_missing_minus(torch.randn(3, 5))
    with pytest.raises(ValueError, match="base"):
        meta_rope_angles_float32(torch.arange(3), 8, base=-1.0)
    with pytest.raises(ValueError, match="positions"):
        rope_missing_minus(torch.randn(3, 4), torch.arange(4))
    with pytest.raises(ValueError, match="multiple of 4"):
        rope_table_layout_mismatch(torch.randn(3, 6))
