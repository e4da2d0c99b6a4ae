"""Partial rotary: GPT-NeoX's rotary_pct and GPT-J's rotary_dim, checked against transformers."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import GPTJConfig, GPTNeoXConfig
from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding
from transformers.models.gpt_neox.modeling_gpt_neox import (
    apply_rotary_pos_emb as neox_apply_rotary_pos_emb,
)
from transformers.models.gptj.modeling_gptj import GPTJRotaryEmbedding
from transformers.models.gptj.modeling_gptj import apply_rotary_pos_emb as gptj_apply_rotary_pos_emb

from posenc_lib import (
    apply_rope_half,
    apply_rope_interleaved,
    apply_rope_partial,
    partial_rotary_dim,
    rope_inv_freq,
)


def test_gpt_neox_quarter_rotary_matches_transformers() -> None:
    # GPT-NeoX-20B: 64 heads of 96 features, rotary_pct = 0.25 -> 24 rotated features.
    config = GPTNeoXConfig(hidden_size=96 * 4, num_attention_heads=4, rotary_pct=0.25)
    assert config.rope_parameters["partial_rotary_factor"] == 0.25
    rotary_dim = partial_rotary_dim(96, config.rope_parameters["partial_rotary_factor"])
    assert rotary_dim == 24
    torch.manual_seed(0)
    q, k = torch.randn(2, 2, 4, 17, 96)  # (batch, heads, seq, head_dim)
    position_ids = torch.arange(30, 47)[None, :].expand(2, -1)
    cos, sin = GPTNeoXRotaryEmbedding(config)(q, position_ids)
    assert cos.shape[-1] == rotary_dim  # transformers' table covers the rotated block only
    hf_q, hf_k = neox_apply_rotary_pos_emb(q, k, cos, sin)
    positions = torch.arange(30, 47)
    torch.testing.assert_close(apply_rope_partial(q, rotary_dim, positions), hf_q,
                               atol=2e-5, rtol=0)
    torch.testing.assert_close(apply_rope_partial(k, rotary_dim, positions), hf_k,
                               atol=2e-5, rtol=0)
    assert torch.equal(hf_q[..., rotary_dim:], q[..., rotary_dim:])  # the rest is untouched


def test_gpt_j_rotary_dim_64_of_256_matches_transformers() -> None:
    config = GPTJConfig(n_embd=256 * 2, n_head=2, rotary_dim=64, n_positions=64)
    torch.manual_seed(1)
    x = torch.randn(2, 9, 2, 256)  # GPT-J's layout: (batch, seq, heads, head_dim)
    position_ids = torch.arange(5, 14)[None, :].expand(2, -1)
    sin, cos = GPTJRotaryEmbedding(config)(x, position_ids)
    hf_rot = gptj_apply_rotary_pos_emb(x[..., :64], sin, cos)
    hf = torch.cat([hf_rot, x[..., 64:]], dim=-1)  # what GPTJAttention.forward does
    ours = apply_rope_partial(x.transpose(1, 2), 64, torch.arange(5, 14), convention="interleaved")
    torch.testing.assert_close(ours.transpose(1, 2), hf, atol=2e-5, rtol=0)


@settings(max_examples=30, deadline=None)
@given(
    half_rotary=st.integers(1, 8),
    extra_pairs=st.integers(0, 8),
    convention=st.sampled_from(["half", "interleaved", "complex"]),
    start=st.integers(0, 1000),
)
def test_partial_is_rope_of_the_block_and_identity_elsewhere(
    half_rotary: int, extra_pairs: int, convention: str, start: int
) -> None:
    rotary_dim, dim = 2 * half_rotary, 2 * (half_rotary + extra_pairs)
    x = torch.randn(3, 5, dim, dtype=torch.float64)
    positions = torch.arange(start, start + 5)
    out = apply_rope_partial(x, rotary_dim, positions, convention=convention)
    full = {"half": apply_rope_half, "interleaved": apply_rope_interleaved}.get(
        convention, apply_rope_interleaved
    )
    torch.testing.assert_close(out[..., :rotary_dim], full(x[..., :rotary_dim], positions))
    assert torch.equal(out[..., rotary_dim:], x[..., rotary_dim:])
    # Norms are kept, and the scores of the rotated block depend on the offset only.
    torch.testing.assert_close(out.norm(dim=-1), x.norm(dim=-1))
    shifted = apply_rope_partial(x, rotary_dim, positions + 17, convention=convention)
    torch.testing.assert_close(shifted @ shifted.transpose(-2, -1), out @ out.transpose(-2, -1))


def test_full_rotary_dim_is_plain_rope() -> None:
    x = torch.randn(4, 10, 16, dtype=torch.float64)
    torch.testing.assert_close(apply_rope_partial(x, 16), apply_rope_half(x))


@pytest.mark.parametrize(
    ("call", "error", "pattern"),
    [
        (lambda x: apply_rope_partial(x, 18), ValueError, "rotary_dim"),
        (lambda x: apply_rope_partial(x, 3), ValueError, "rotary_dim"),
        (lambda x: apply_rope_partial(x, 0), ValueError, "rotary_dim"),
        (lambda x: apply_rope_partial(x, 4.0), TypeError, "rotary_dim"),
        (lambda x: apply_rope_partial(x, 4, convention="neox"), ValueError, "convention"),
        (lambda x: apply_rope_partial(x.long(), 4), TypeError, "x"),
        (lambda x: partial_rotary_dim(16, 1.5), ValueError, "partial_rotary_factor"),
        (lambda x: partial_rotary_dim(16, 0.0), ValueError, "partial_rotary_factor"),
        (lambda x: partial_rotary_dim(16, 0.1), ValueError, "partial_rotary_factor"),
        (lambda x: partial_rotary_dim(15, 0.5), ValueError, "head_dim"),
    ],
)
def test_bad_arguments_name_the_parameter(call, error: type, pattern: str) -> None:
    x = torch.randn(2, 3, 16)
    with pytest.raises(error, match=pattern):
        call(x)


def test_gpt_neox_and_gpt_j_rotary_sizes() -> None:
    assert partial_rotary_dim(96, 0.25) == 24  # GPT-NeoX-20B
    assert partial_rotary_dim(256, 0.25) == 64  # GPT-J-6B's rotary_dim = 64 of 256
    assert partial_rotary_dim(128, 1.0) == 128


def test_partial_rotary_with_a_scaled_spectrum_matches_transformers() -> None:
    # GPT-NeoX's quarter rotary with linear position interpolation (factor 4): transformers
    # divides the rotated block's 12 frequencies by 4; apply_rope_partial takes them as inv_freq.
    config = GPTNeoXConfig(
        hidden_size=96 * 4, num_attention_heads=4,
        rope_parameters={"rope_type": "linear", "factor": 4.0, "rope_theta": 10000.0,
                         "partial_rotary_factor": 0.25},
    )
    rotary = GPTNeoXRotaryEmbedding(config)
    scaled = rope_inv_freq(24) / 4
    torch.testing.assert_close(rotary.inv_freq.double(), scaled, atol=1e-7, rtol=0)
    q = torch.randn(1, 4, 10, 96, generator=torch.Generator().manual_seed(3))
    positions = torch.arange(100, 110)
    cos, sin = rotary(q, positions[None, :])
    hf_q, _ = neox_apply_rotary_pos_emb(q, q, cos, sin)
    ours = apply_rope_partial(q, 24, positions, inv_freq=scaled)
    torch.testing.assert_close(ours, hf_q, atol=2e-5, rtol=0)
    unscaled = apply_rope_partial(q, 24, positions)
    assert (unscaled - hf_q).abs().max() > 0.1  # the spectrum really is used
    with pytest.raises(ValueError, match=r"rotary_dim // 2 = 12"):
        apply_rope_partial(q, 24, positions, inv_freq=rope_inv_freq(96))
