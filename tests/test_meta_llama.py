"""A Meta-layout LLaMA forward pass equals transformers' LlamaForCausalLM after the conversion."""

from __future__ import annotations

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.modeling_gguf_pytorch_utils import LlamaTensorProcessor

from posenc_lib.conversion import (
    hf_to_meta_qk_weight,
    meta_llama_logits,
    meta_to_hf_llama_state_dict,
    meta_to_hf_qk_weight,
)

VOCAB, D_MODEL, N_LAYERS, HIDDEN = 48, 32, 2, 40


def _meta_params(n_heads: int, n_kv_heads: int, seed: int = 0) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    kv_dim = D_MODEL // n_heads * n_kv_heads

    def r(*shape: int) -> torch.Tensor:
        return 0.3 * torch.randn(*shape, generator=gen)

    params = {
        "tok_embeddings.weight": r(VOCAB, D_MODEL),
        "norm.weight": 1 + r(D_MODEL),
        "output.weight": r(VOCAB, D_MODEL),
    }
    for i in range(N_LAYERS):
        params |= {
            f"layers.{i}.attention_norm.weight": 1 + r(D_MODEL),
            f"layers.{i}.attention.wq.weight": r(D_MODEL, D_MODEL),
            f"layers.{i}.attention.wk.weight": r(kv_dim, D_MODEL),
            f"layers.{i}.attention.wv.weight": r(kv_dim, D_MODEL),
            f"layers.{i}.attention.wo.weight": r(D_MODEL, D_MODEL),
            f"layers.{i}.ffn_norm.weight": 1 + r(D_MODEL),
            f"layers.{i}.feed_forward.w1.weight": r(HIDDEN, D_MODEL),
            f"layers.{i}.feed_forward.w2.weight": r(D_MODEL, HIDDEN),
            f"layers.{i}.feed_forward.w3.weight": r(HIDDEN, D_MODEL),
        }
    return params


def _hf_model(n_heads: int, n_kv_heads: int, theta: float) -> LlamaForCausalLM:
    config = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=D_MODEL,
        intermediate_size=HIDDEN,
        num_hidden_layers=N_LAYERS,
        num_attention_heads=n_heads,
        num_key_value_heads=n_kv_heads,
        rms_norm_eps=1e-5,
        max_position_embeddings=128,
        tie_word_embeddings=False,
        rope_parameters={"rope_type": "default", "rope_theta": theta},
        attn_implementation="eager",
    )
    return LlamaForCausalLM(config).eval()


@pytest.mark.parametrize(
    ("n_heads", "n_kv_heads", "theta"), [(4, 4, 1e4), (4, 2, 5e5), (2, 1, 1e4)]
)
def test_converted_weights_give_meta_logits(n_heads: int, n_kv_heads: int, theta: float) -> None:
    params = _meta_params(n_heads, n_kv_heads)
    model = _hf_model(n_heads, n_kv_heads, theta)
    model.load_state_dict(meta_to_hf_llama_state_dict(params, n_heads, n_kv_heads), strict=True)
    tokens = torch.randint(0, VOCAB, (2, 11), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        hf = model(tokens).logits
    meta = meta_llama_logits(params, tokens, n_heads=n_heads, n_kv_heads=n_kv_heads,
                             rope_theta=theta)
    torch.testing.assert_close(meta, hf, atol=2e-5, rtol=1e-5)
    # Without the permutation the same weights give other logits (beyond the first token).
    wrong = dict(meta_to_hf_llama_state_dict(params, n_heads, n_kv_heads))
    for i in range(N_LAYERS):
        for meta, hf_name in (("wq", "q_proj"), ("wk", "k_proj")):
            wrong[f"model.layers.{i}.self_attn.{hf_name}.weight"] = params[
                f"layers.{i}.attention.{meta}.weight"
            ]
    model.load_state_dict(wrong, strict=True)
    with torch.no_grad():
        forgot = model(tokens).logits
    torch.testing.assert_close(forgot[:, 0], hf[:, 0], atol=2e-5, rtol=1e-5)
    assert (forgot[:, 1:] - hf[:, 1:]).abs().max() > 0.05


def test_start_pos_shifts_every_position() -> None:
    params = _meta_params(4, 4)
    tokens = torch.randint(0, VOCAB, (1, 6), generator=torch.Generator().manual_seed(2))
    at_0 = meta_llama_logits(params, tokens, n_heads=4)
    at_100 = meta_llama_logits(params, tokens, n_heads=4, start_pos=100)
    # RoPE sees only offsets inside the window, so shifting every position changes nothing.
    torch.testing.assert_close(at_100, at_0, atol=1e-5, rtol=1e-5)


def test_q_k_permutation_equals_transformers_gguf_reverse_permute() -> None:
    # transformers' own un-permutation of llama.cpp (Meta-layout) q/k weights, imported as is.
    w = torch.randn(4 * 16, 24)
    processor = LlamaTensorProcessor(config={"num_attention_heads": 4, "num_key_value_heads": 2})
    theirs = processor._reverse_permute_weights(w.numpy(), 4, 4)
    torch.testing.assert_close(meta_to_hf_qk_weight(w, 4), torch.from_numpy(theirs))
    kv = torch.randn(2 * 16, 24)
    theirs_k = processor._reverse_permute_weights(kv.numpy(), 4, 2)
    torch.testing.assert_close(meta_to_hf_qk_weight(kv, 2), torch.from_numpy(theirs_k))
    torch.testing.assert_close(hf_to_meta_qk_weight(meta_to_hf_qk_weight(w, 4), 4), w)


@pytest.mark.parametrize(
    ("mutate", "error", "pattern"),
    [
        (lambda p: p.pop("norm.weight"), ValueError, "missing"),
        (lambda p: p.update({"extra.weight": torch.ones(1)}), ValueError, "unexpected"),
        (lambda p: p.update({"norm.weight": torch.ones(D_MODEL, dtype=torch.long)}), TypeError,
         "norm.weight"),
    ],
)
def test_bad_state_dicts_are_refused(mutate, error: type, pattern: str) -> None:
    params = _meta_params(4, 4)
    mutate(params)
    with pytest.raises(error, match=pattern):
        meta_llama_logits(params, torch.zeros(1, 3, dtype=torch.long), n_heads=4)


def test_bad_arguments_name_the_parameter() -> None:
    params = _meta_params(4, 4)
    tokens = torch.zeros(1, 3, dtype=torch.long)
    with pytest.raises(ValueError, match="n_heads"):
        meta_llama_logits(params, tokens, n_heads=3)
    with pytest.raises(ValueError, match="n_kv_heads"):
        meta_llama_logits(params, tokens, n_heads=4, n_kv_heads=3)
    with pytest.raises(ValueError, match="start_pos"):
        meta_llama_logits(params, tokens, n_heads=4, start_pos=-1)
    with pytest.raises(ValueError, match="tokens"):
        meta_llama_logits(params, tokens + VOCAB, n_heads=4)
    with pytest.raises(TypeError, match="tokens"):
        meta_llama_logits(params, tokens.float(), n_heads=4)
    with pytest.raises(TypeError, match="params"):
        meta_llama_logits([], tokens, n_heads=4)  # type: ignore[arg-type]


def test_metas_own_rotary_function_runs_inside_the_forward_pass() -> None:
    # Meta's apply_rotary_emb (llama/model.py), written out as Meta writes it: complex pairs.
    def meta_apply_rotary_emb(xq, xk, freqs_cis):  # type: ignore[no-untyped-def]
        xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
        xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
        assert freqs_cis.shape == (xq_.shape[1], xq_.shape[-1])
        shape = [d if i in (1, xq_.ndim - 1) else 1 for i, d in enumerate(xq_.shape)]
        freqs_cis = freqs_cis.view(*shape)
        xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
        xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
        return xq_out.type_as(xq), xk_out.type_as(xk)

    params = _meta_params(4, 2, seed=4)
    vocab = params["tok_embeddings.weight"].shape[0]
    tokens = torch.randint(0, vocab, (2, 9), generator=torch.Generator().manual_seed(4))
    ours = meta_llama_logits(params, tokens, n_heads=4, n_kv_heads=2, start_pos=5)
    theirs = meta_llama_logits(params, tokens, n_heads=4, n_kv_heads=2, start_pos=5,
                               rotary=meta_apply_rotary_emb)
    torch.testing.assert_close(theirs, ours, atol=1e-5, rtol=1e-5)
    swapped = meta_llama_logits(params, tokens, n_heads=4, n_kv_heads=2, start_pos=5,
                                rotary=lambda q, k, f: meta_apply_rotary_emb(q, k, f.conj()))
    assert (swapped - ours).abs().max() > 1e-2  # the function passed in is really used
    with pytest.raises(TypeError, match="rotary must be a callable"):
        meta_llama_logits(params, tokens, n_heads=4, rotary=3)  # type: ignore[arg-type]
