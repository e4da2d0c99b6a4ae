"""Parity with Hugging Face transformers (installed 5.x): RoPE application and scaling spectra.

Configs are built locally (no hub download). In transformers 5.x the RoPE settings live in
``config.rope_parameters`` (``rope_type``, ``rope_theta``, ``factor`` …). HF computes in float32,
so comparisons use float32-level tolerances; ours are float64.
"""

from __future__ import annotations

import pytest
import torch
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.llama.modeling_llama import (
    LlamaRotaryEmbedding,
    apply_rotary_pos_emb,
)
from transformers.models.llama.modeling_llama import rotate_half as hf_rotate_half

from posenc_lib import (
    RotaryEmbedding,
    apply_rope_half,
    dynamic_ntk_inv_freq,
    llama3_inv_freq,
    pi_inv_freq,
    rope_cos_sin,
    rope_inv_freq,
    rotate_half,
    yarn_inv_freq,
)


def _config(head_dim: int, max_position: int = 4096, **rope: object) -> LlamaConfig:
    return LlamaConfig(
        hidden_size=head_dim * 4,
        num_attention_heads=4,
        head_dim=head_dim,
        max_position_embeddings=max_position,
        rope_parameters=rope,
    )


def _close(hf: torch.Tensor, ours: torch.Tensor, rtol: float = 2e-6) -> None:
    torch.testing.assert_close(hf.double(), ours, rtol=rtol, atol=0)


@pytest.mark.parametrize(("head_dim", "theta"), [(64, 10000.0), (128, 500000.0), (16, 1e6)])
def test_apply_rope_half_matches_llama(head_dim: int, theta: float) -> None:
    config = _config(head_dim, rope_type="default", rope_theta=theta)
    layer = LlamaRotaryEmbedding(config)
    torch.manual_seed(0)
    q, k = torch.randn(2, 4, 33, head_dim), torch.randn(2, 4, 33, head_dim)
    position_ids = torch.arange(100, 133)[None, :].expand(2, -1)
    cos, sin = layer(q, position_ids)
    hf_q, hf_k = apply_rotary_pos_emb(q, k, cos, sin)
    positions = torch.arange(100, 133)
    # HF's float32 angles lose ~m·2^-24 rad: small positions keep that below 1e-4
    torch.testing.assert_close(apply_rope_half(q, positions, base=theta), hf_q, atol=1e-4, rtol=0)
    torch.testing.assert_close(apply_rope_half(k, positions, base=theta), hf_k, atol=1e-4, rtol=0)
    ours_q, ours_k = RotaryEmbedding(head_dim, theta)(q, k, positions)
    torch.testing.assert_close(ours_q, hf_q, atol=1e-4, rtol=0)
    torch.testing.assert_close(ours_k, hf_k, atol=1e-4, rtol=0)
    our_cos, our_sin = rope_cos_sin(positions, rope_inv_freq(head_dim, theta))
    torch.testing.assert_close(our_cos, cos[0], atol=5e-5, rtol=0)
    torch.testing.assert_close(our_sin, sin[0], atol=5e-5, rtol=0)


def test_rotate_half_matches() -> None:
    x = torch.randn(3, 5, 8)
    assert torch.equal(rotate_half(x), hf_rotate_half(x))


def test_hf_float32_angles_drift_at_large_positions_while_ours_do_not() -> None:
    config = _config(128, rope_type="default", rope_theta=10000.0)
    q = torch.randn(1, 1, 8, 128)
    positions = torch.arange(1_000_000, 1_000_008)
    cos, sin = LlamaRotaryEmbedding(config)(q, positions[None, :])
    hf_q, _ = apply_rotary_pos_emb(q, q, cos, sin)
    exact = apply_rope_half(q.double(), positions)
    assert (hf_q.double() - exact).abs().max() > 1e-3
    assert (apply_rope_half(q, positions).double() - exact).abs().max() < 1e-5


@pytest.mark.parametrize(("head_dim", "theta", "factor"), [(64, 1e4, 2.0), (128, 5e5, 8.0),
                                                            (32, 1e4, 1.0)])
def test_linear_scaling(head_dim: int, theta: float, factor: float) -> None:
    config = _config(head_dim, rope_type="linear", rope_theta=theta, factor=factor)
    inv, attention_factor = ROPE_INIT_FUNCTIONS["linear"](config)
    _close(inv, pi_inv_freq(head_dim, theta, factor))
    assert attention_factor == 1.0


@pytest.mark.parametrize(("head_dim", "theta", "factor"), [(64, 1e4, 2.0), (128, 5e5, 4.0)])
@pytest.mark.parametrize("seq_len", [1000, 4096, 5000, 16384])
def test_dynamic_ntk(head_dim: int, theta: float, factor: float, seq_len: int) -> None:
    config = _config(head_dim, 4096, rope_type="dynamic", rope_theta=theta, factor=factor)
    inv, _ = ROPE_INIT_FUNCTIONS["dynamic"](config, seq_len=seq_len)
    _close(inv, dynamic_ntk_inv_freq(head_dim, theta, factor, seq_len, 4096))


YARN_CASES = [
    # head_dim, theta, factor, original, extra rope keys
    (64, 1e4, 4.0, 2048, {}),
    (128, 1e4, 16.0, 4096, {}),
    (128, 1e6, 4.0, 32768, {}),  # Qwen-style
    (64, 1e4, 8.0, 4096, {"beta_fast": 16.0, "beta_slow": 2.0}),
    (64, 1e4, 4.0, 2048, {"truncate": False}),
    (32, 5e5, 2.0, 8192, {"truncate": False, "beta_fast": 64.0, "beta_slow": 0.5}),
]


@pytest.mark.parametrize(("head_dim", "theta", "factor", "original", "extra"), YARN_CASES)
def test_yarn(head_dim: int, theta: float, factor: float, original: int, extra: dict) -> None:
    config = _config(
        head_dim, int(original * factor), rope_type="yarn", rope_theta=theta, factor=factor,
        original_max_position_embeddings=original, **extra,
    )
    inv, attention_factor = ROPE_INIT_FUNCTIONS["yarn"](config)
    ours, ours_factor = yarn_inv_freq(
        head_dim, theta, factor, original,
        extra.get("beta_fast", 32.0), extra.get("beta_slow", 1.0),
        truncate=extra.get("truncate", True),
    )
    _close(inv, ours)
    assert ours_factor == pytest.approx(attention_factor, rel=1e-12)


LLAMA3_CASES = [
    (128, 5e5, 8.0, 8192, 1.0, 4.0),  # Llama 3.1
    (64, 5e5, 32.0, 8192, 1.0, 4.0),  # Llama 3.2 style
    (128, 1e4, 4.0, 2048, 2.0, 8.0),
    (32, 1e4, 2.0, 512, 0.5, 1.5),
]


@pytest.mark.parametrize(("head_dim", "theta", "factor", "original", "low", "high"),
                         LLAMA3_CASES)
def test_llama3(head_dim: int, theta: float, factor: float, original: int, low: float,
                high: float) -> None:
    config = _config(
        head_dim, int(original * factor), rope_type="llama3", rope_theta=theta, factor=factor,
        original_max_position_embeddings=original, low_freq_factor=low, high_freq_factor=high,
    )
    inv, _ = ROPE_INIT_FUNCTIONS["llama3"](config)
    _close(inv, llama3_inv_freq(head_dim, theta, factor, original, low, high), rtol=3e-6)


@pytest.mark.parametrize(("factor", "original"), [(4.0, 2048), (8.0, 4096)])
def test_yarn_layer_matches_hf_cos_sin_with_attention_factor(factor: float, original: int) -> None:
    config = _config(64, int(original * factor), rope_type="yarn", rope_theta=1e4, factor=factor,
                     original_max_position_embeddings=original)
    hf_layer = LlamaRotaryEmbedding(config)
    q = torch.randn(1, 2, 16, 64)
    positions = torch.arange(16)
    cos, sin = hf_layer(q, positions[None, :])
    inv, attention_factor = yarn_inv_freq(64, 1e4, factor, original)
    hf_q, _ = apply_rotary_pos_emb(q, q, cos, sin)
    ours = RotaryEmbedding(64, inv_freq=inv, attention_scaling=attention_factor)
    ours_q, _ = ours(q, q)
    torch.testing.assert_close(ours_q, hf_q, atol=1e-5, rtol=0)
