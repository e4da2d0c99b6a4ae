"""Tests for posenc_lib.conversion: Meta (interleaved) <-> Hugging Face (half) q/k weights."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_lib.conversion import hf_to_meta_qk_weight, meta_to_hf_qk_weight, rope_scores
from posenc_lib.rope import (
    apply_rope_half,
    apply_rope_interleaved,
    interleaved_to_half_permutation,
)


def _heads(x: torch.Tensor, w: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Project (seq, in) tokens with a (heads*head_dim, in) weight to (heads, seq, head_dim)."""
    seq = x.shape[0]
    return (x @ w.T).reshape(seq, n_heads, -1).transpose(0, 1)


def _scores(x, wq, wk, n_heads, rope):
    q = rope(_heads(x, wq, n_heads))
    k = rope(_heads(x, wk, n_heads))
    return q @ k.transpose(-2, -1)


def _weights(n_heads: int, head_dim: int, d_in: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    wq = torch.randn(n_heads * head_dim, d_in, generator=g, dtype=torch.float64)
    wk = torch.randn(n_heads * head_dim, d_in, generator=g, dtype=torch.float64)
    x = torch.randn(11, d_in, generator=g, dtype=torch.float64)
    return x, wq, wk


def test_converted_weights_give_the_same_scores():
    n_heads, head_dim = 4, 16
    x, wq, wk = _weights(n_heads, head_dim, 24)
    meta = _scores(x, wq, wk, n_heads, apply_rope_interleaved)
    hf = _scores(
        x,
        meta_to_hf_qk_weight(wq, n_heads),
        meta_to_hf_qk_weight(wk, n_heads),
        n_heads,
        apply_rope_half,
    )
    torch.testing.assert_close(hf, meta, rtol=1e-12, atol=1e-10)


def test_forgetting_the_permutation_changes_the_scores():
    n_heads, head_dim = 4, 16
    x, wq, wk = _weights(n_heads, head_dim, 24)
    meta = _scores(x, wq, wk, n_heads, apply_rope_interleaved)
    wrong = _scores(x, wq, wk, n_heads, apply_rope_half)
    rel = (wrong - meta).norm() / meta.norm()
    assert rel > 0.3
    # Position 0 is not rotated at all, so the score of token 0 with itself is unchanged.
    torch.testing.assert_close(wrong[:, 0, 0], meta[:, 0, 0])


def test_matches_the_reshape_used_by_conversion_scripts():
    # The usual script: view(n_heads, head_dim // 2, 2, in).transpose(1, 2).reshape(rows, in).
    n_heads, head_dim, d_in = 3, 8, 5
    w = torch.arange(n_heads * head_dim * d_in, dtype=torch.float32).reshape(-1, d_in)
    expected = (
        w.view(n_heads, head_dim // 2, 2, d_in).transpose(1, 2).reshape(n_heads * head_dim, d_in)
    )
    assert torch.equal(meta_to_hf_qk_weight(w, n_heads), expected)


def test_each_head_uses_interleaved_to_half_permutation():
    n_heads, head_dim = 2, 6
    w = torch.arange(n_heads * head_dim, dtype=torch.float64)
    perm = interleaved_to_half_permutation(head_dim)
    out = meta_to_hf_qk_weight(w, n_heads)
    assert torch.equal(out[:head_dim], w[:head_dim][perm])
    assert torch.equal(out[head_dim:], w[head_dim:][perm])


@settings(max_examples=30, deadline=None)
@given(n_heads=st.integers(1, 5), half_dim=st.integers(1, 8), d_in=st.integers(1, 6))
def test_round_trip(n_heads, half_dim, d_in):
    w = torch.randn(n_heads * 2 * half_dim, d_in)
    assert torch.equal(hf_to_meta_qk_weight(meta_to_hf_qk_weight(w, n_heads), n_heads), w)
    assert torch.equal(meta_to_hf_qk_weight(hf_to_meta_qk_weight(w, n_heads), n_heads), w)


def test_bias_is_permuted_like_the_rows():
    n_heads, head_dim = 2, 8
    w = torch.randn(n_heads * head_dim, 3)
    b = torch.randn(n_heads * head_dim)
    full = torch.cat([w, b[:, None]], dim=1)
    torch.testing.assert_close(
        meta_to_hf_qk_weight(full, n_heads)[:, -1], meta_to_hf_qk_weight(b, n_heads)
    )


def test_bad_arguments():
    w = torch.randn(12, 4)
    with pytest.raises(TypeError, match=r"w must be a torch\.Tensor"):
        meta_to_hf_qk_weight([[1.0]], 1)
    with pytest.raises(ValueError, match="divisible by n_heads"):
        meta_to_hf_qk_weight(w, 5)
    with pytest.raises(ValueError, match="head_dim"):
        meta_to_hf_qk_weight(w, 4)  # head_dim 3 is odd
    with pytest.raises(ValueError, match="n_heads"):
        hf_to_meta_qk_weight(w, 0)
    with pytest.raises(TypeError, match="n_heads"):
        hf_to_meta_qk_weight(w, 2.0)
    with pytest.raises(ValueError, match="shape"):
        meta_to_hf_qk_weight(torch.randn(2, 4, 4), 1)


def test_rope_scores_conventions_agree_up_to_the_permutation():
    g = torch.Generator().manual_seed(1)
    q = torch.randn(2, 9, 16, generator=g, dtype=torch.float64)
    k = torch.randn(2, 9, 16, generator=g, dtype=torch.float64)
    perm = interleaved_to_half_permutation(16)
    inter = rope_scores(q, k, convention="interleaved")
    torch.testing.assert_close(rope_scores(q, k, convention="complex"), inter)
    torch.testing.assert_close(rope_scores(q[..., perm], k[..., perm], convention="half"), inter)


def test_rope_scores_depend_on_the_offset_only():
    g = torch.Generator().manual_seed(2)
    q0 = torch.randn(16, generator=g, dtype=torch.float64)
    k0 = torch.randn(16, generator=g, dtype=torch.float64)
    x_q = q0.expand(6, 16)
    x_k = k0.expand(6, 16)
    for convention in ("interleaved", "half", "complex"):
        s = rope_scores(x_q, x_k, torch.arange(6) + 1000, convention=convention)
        for offset in range(-5, 6):
            diag = torch.diagonal(s, offset=offset)
            torch.testing.assert_close(diag, diag[0].expand_as(diag))


def test_rope_scores_bad_arguments():
    q = torch.randn(4, 8)
    with pytest.raises(ValueError, match="convention"):
        rope_scores(q, q, convention="neox")
    with pytest.raises(ValueError, match="same"):
        rope_scores(q, torch.randn(4, 6))
    with pytest.raises(ValueError, match="dim"):
        rope_scores(torch.randn(4, 7), torch.randn(4, 7))


# --- QK-norm: a per-head norm before the rotation must be permuted with the projection ----------


@pytest.mark.parametrize("layout", ["shared", "per_head", "flat"])
def test_qk_norm_weights_move_with_the_projection_rows(layout: str) -> None:
    from posenc_lib.conversion import hf_to_meta_qk_norm_weight, meta_to_hf_qk_norm_weight

    n_heads, head_dim, d_model, seq = 2, 8, 16, 5
    gen = torch.Generator().manual_seed(3)
    w_q, w_k = torch.randn(2, n_heads * head_dim, d_model, generator=gen, dtype=torch.float64)
    shape = {"shared": (head_dim,), "per_head": (n_heads, head_dim),
             "flat": (n_heads * head_dim,)}[layout]
    q_norm, k_norm = 1 + torch.rand(2, *shape, generator=gen, dtype=torch.float64)
    x = torch.randn(seq, d_model, generator=gen, dtype=torch.float64)

    def heads(w: torch.Tensor, norm: torch.Tensor) -> torch.Tensor:
        h = x @ w.T
        if layout == "flat":  # OLMo 2: RMSNorm over the whole projection, before the head split
            h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * norm
            return h.reshape(seq, n_heads, head_dim).transpose(0, 1)
        h = h.reshape(seq, n_heads, head_dim).transpose(0, 1)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)  # RMSNorm over the head
        return h * (norm[:, None, :] if layout == "per_head" else norm)

    meta = rope_scores(heads(w_q, q_norm), heads(w_k, k_norm), convention="interleaved")
    wq_hf, wk_hf = meta_to_hf_qk_weight(w_q, n_heads), meta_to_hf_qk_weight(w_k, n_heads)
    kwargs = {"n_heads": n_heads, "head_dim": head_dim}
    qn_hf = meta_to_hf_qk_norm_weight(q_norm, **kwargs)
    kn_hf = meta_to_hf_qk_norm_weight(k_norm, **kwargs)
    hf = rope_scores(heads(wq_hf, qn_hf), heads(wk_hf, kn_hf), convention="half")
    torch.testing.assert_close(hf, meta, atol=1e-10, rtol=0)
    forgot = rope_scores(heads(wq_hf, q_norm), heads(wk_hf, k_norm), convention="half")
    assert (forgot - meta).abs().max() > 0.1  # projection permuted, norm weights not: wrong
    assert torch.equal(hf_to_meta_qk_norm_weight(qn_hf, **kwargs), q_norm)
    if layout == "flat":
        # The flat weight permuted as if it were one head of n_heads * head_dim features: wrong.
        one_head = meta_to_hf_qk_norm_weight(q_norm, n_heads=1)
        whole = rope_scores(heads(wq_hf, one_head), heads(wk_hf, kn_hf), convention="half")
        assert (whole - meta).abs().max() > 0.1
        # n_heads alone also reads the flat layout; head_dim alone does not accept it.
        assert torch.equal(meta_to_hf_qk_norm_weight(q_norm, n_heads=n_heads), qn_hf)
        with pytest.raises(ValueError, match="needs n_heads="):
            meta_to_hf_qk_norm_weight(q_norm, head_dim=head_dim)
    if layout == "shared":
        # A (head_dim,) weight is one head: head_dim= or n_heads=1 read it so.
        assert torch.equal(meta_to_hf_qk_norm_weight(q_norm, head_dim=head_dim), qn_hf)
        assert torch.equal(meta_to_hf_qk_norm_weight(q_norm, n_heads=1), qn_hf)
    if layout != "per_head":
        with pytest.raises(ValueError, match=r"ambiguous: pass head_dim= .* or n_heads="):
            meta_to_hf_qk_norm_weight(q_norm)


def test_qk_norm_weight_bad_input() -> None:
    from posenc_lib.conversion import meta_to_hf_qk_norm_weight

    with pytest.raises(ValueError, match="ambiguous"):
        meta_to_hf_qk_norm_weight(torch.ones(8))
    with pytest.raises(ValueError, match="not a multiple of n_heads = 3"):
        meta_to_hf_qk_norm_weight(torch.ones(8), n_heads=3)
    with pytest.raises(ValueError, match="neither head_dim = 4"):
        meta_to_hf_qk_norm_weight(torch.ones(24), n_heads=2, head_dim=4)
    with pytest.raises(ValueError, match="positive even"):
        meta_to_hf_qk_norm_weight(torch.ones(7), n_heads=1)
    with pytest.raises(ValueError, match="n_heads = 3"):
        meta_to_hf_qk_norm_weight(torch.ones(2, 8), n_heads=3)
    with pytest.raises(ValueError, match="got shape"):
        meta_to_hf_qk_norm_weight(torch.ones(2, 2, 4))
    with pytest.raises(ValueError, match="n_heads"):
        meta_to_hf_qk_norm_weight(torch.ones(8), n_heads=0)
    with pytest.raises(TypeError, match=r"torch\.Tensor"):
        meta_to_hf_qk_norm_weight([1.0, 2.0], n_heads=1)  # type: ignore[arg-type]


@pytest.mark.parametrize("family", ["olmo2", "qwen3"])
def test_qk_norm_conversion_against_transformers(family: str) -> None:
    """OLMo 2's flat and Qwen3's per-head QK-norm, run by transformers' own classes.

    The model with HF-layout weights is the reference. The same model with every q/k projection
    and QK-norm weight moved to Meta's interleaved layout, and transformers' own interleaved
    rotation (DeepSeek-V3's apply_rotary_pos_emb_interleave) patched in, gives the same logits;
    leaving the norm weights unmoved, or permuting OLMo 2's flat weight as one head, does not.
    """
    from unittest import mock

    from posenc_lib.conversion import hf_to_meta_qk_norm_weight

    pytest.importorskip("transformers")
    import transformers
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import (
        apply_rotary_pos_emb_interleave,
    )

    if family == "olmo2":
        from transformers.models.olmo2 import modeling_olmo2 as module
        config_cls, model_cls = transformers.Olmo2Config, transformers.Olmo2ForCausalLM
    else:
        from transformers.models.qwen3 import modeling_qwen3 as module
        config_cls, model_cls = transformers.Qwen3Config, transformers.Qwen3ForCausalLM
    heads, kv_heads, head_dim = 4, 2, 8
    config = config_cls(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
        num_attention_heads=heads, num_key_value_heads=kv_heads, head_dim=head_dim,
        max_position_embeddings=64, rms_norm_eps=1e-6, attn_implementation="eager",
        bos_token_id=0, eos_token_id=0, pad_token_id=0,
    )
    torch.manual_seed(0)
    model = model_cls(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(1 + 0.5 * torch.randn_like(p))
    state = model.state_dict()
    q_norm = state["model.layers.0.self_attn.q_norm.weight"]
    assert q_norm.shape == ((heads * head_dim,) if family == "olmo2" else (head_dim,))
    tokens = torch.randint(0, 64, (2, 12), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        reference = model(tokens).logits

    def meta_logits(norm: str) -> torch.Tensor:
        meta = {}
        for key, value in state.items():
            n = heads if ".q_" in key else kv_heads
            if key.endswith(("q_proj.weight", "k_proj.weight")):
                value = hf_to_meta_qk_weight(value, n)
            elif key.endswith(("q_norm.weight", "k_norm.weight")):
                if norm == "moved":
                    value = hf_to_meta_qk_norm_weight(value, n_heads=n, head_dim=head_dim)
                elif norm == "one head":
                    value = hf_to_meta_qk_norm_weight(value, n_heads=1)
            meta[key] = value
        other = model_cls(config).eval()
        other.load_state_dict(meta)
        with mock.patch.object(module, "apply_rotary_pos_emb", apply_rotary_pos_emb_interleave):
            with torch.no_grad():
                return other(tokens).logits

    assert (meta_logits("moved") - reference).abs().max() < 1e-5
    assert (meta_logits("not moved") - reference).abs().max() > 0.05
    if family == "olmo2":
        assert (meta_logits("one head") - reference).abs().max() > 0.05


@pytest.mark.parametrize("rotary_dim", [2, 8, 16])
def test_partial_rotary_conversion_moves_only_the_rotated_rows(rotary_dim: int) -> None:
    from posenc_lib import apply_rope_partial

    n_heads, n_kv, head_dim, d_model, seq = 4, 2, 16, 32, 7
    gen = torch.Generator().manual_seed(5)
    w_q = torch.randn(n_heads * head_dim, d_model, generator=gen, dtype=torch.float64)
    w_k = torch.randn(n_kv * head_dim, d_model, generator=gen, dtype=torch.float64)
    x = torch.randn(seq, d_model, generator=gen, dtype=torch.float64)

    def scores(wq: torch.Tensor, wk: torch.Tensor, convention: str) -> torch.Tensor:
        q = (x @ wq.T).reshape(seq, n_heads, head_dim).transpose(0, 1)
        k = (x @ wk.T).reshape(seq, n_kv, head_dim).transpose(0, 1)
        k = k.repeat_interleave(n_heads // n_kv, dim=0)  # grouped-query attention
        rq = apply_rope_partial(q, rotary_dim, convention=convention)
        rk = apply_rope_partial(k, rotary_dim, convention=convention)
        return rq @ rk.transpose(-2, -1)

    meta = scores(w_q, w_k, "interleaved")
    wq_hf = meta_to_hf_qk_weight(w_q, n_heads, rotary_dim)
    wk_hf = meta_to_hf_qk_weight(w_k, n_kv, rotary_dim)  # key heads: the number of kv heads
    torch.testing.assert_close(scores(wq_hf, wk_hf, "half"), meta, atol=1e-10, rtol=0)
    rows = torch.arange(n_heads * head_dim, dtype=torch.float64)[:, None]
    moved = meta_to_hf_qk_weight(rows, n_heads, rotary_dim)[:, 0].reshape(n_heads, head_dim)
    assert torch.equal(moved[:, rotary_dim:], rows[:, 0].reshape(n_heads, head_dim)[:, rotary_dim:])
    assert torch.equal(hf_to_meta_qk_weight(wq_hf, n_heads, rotary_dim), w_q)
    if rotary_dim < head_dim:  # converting the whole head instead is wrong
        wrong = scores(meta_to_hf_qk_weight(w_q, n_heads), meta_to_hf_qk_weight(w_k, n_kv), "half")
        assert (wrong - meta).abs().max() > 0.1
    with pytest.raises(ValueError, match="rotary_dim must be an even integer <= head_dim = 16"):
        meta_to_hf_qk_weight(w_q, n_heads, 18)


def test_head_dim_catches_query_heads_passed_for_a_gqa_key() -> None:
    """A (2 key/value heads × 8) key projection: n_heads = 2 is right; the query-head count 4
    gives another valid-looking permutation without head_dim, and raises with it."""
    wk = torch.arange(16 * 3, dtype=torch.float64).reshape(16, 3)
    right = meta_to_hf_qk_weight(wk, 2, head_dim=8)
    assert torch.equal(right, meta_to_hf_qk_weight(wk, 2))
    assert not torch.equal(meta_to_hf_qk_weight(wk, 4), right)  # the silent trap
    with pytest.raises(ValueError, match="key/value heads"):
        meta_to_hf_qk_weight(wk, 4, head_dim=8)
    with pytest.raises(ValueError, match="n_heads \\* head_dim"):
        hf_to_meta_qk_weight(wk, 4, head_dim=8)
    assert torch.equal(hf_to_meta_qk_weight(right, 2, head_dim=8), wk)
    with pytest.raises(ValueError, match="head_dim"):
        meta_to_hf_qk_weight(wk, 2, head_dim=0)
