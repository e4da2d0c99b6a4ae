"""Hold a position plan against transformers' own model code: tiny random models on the CPU.

Needs ``transformers`` (imported on first use). :func:`tiny_model` builds a model of a supported
``model_type`` with hidden size 64 and a few layers, whose attention records the q and k every
layer hands to the softmax; :func:`layer_qk` runs it at chosen position ids;
:func:`shift_error` measures how far those q and k are from the plan's rotation when every
position id is shifted by the same offset (zero, to float32 rounding, when the plan is right: a
NoPE layer must not move at all). The chapter on today's models runs these checks;
``tests/test_architectures.py`` does the same with its own capture code.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from typing import Any

import torch

from .._validation import check_choice, check_positions
from ._families import position_plan

__all__ = [
    "TINY_CONFIGS", "layer_qk", "rotary_tables", "shift_error", "tiny_model", "visible_keys",
]

_BASE = dict(vocab_size=97, hidden_size=64, intermediate_size=64, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=512)
_MOE = dict(num_local_experts=2, num_experts_per_tok=1)
_MLA = dict(moe_intermediate_size=32, n_routed_experts=2, num_experts_per_tok=1, n_group=1,
            topk_group=1, first_k_dense_replace=1, kv_lora_rank=16, q_lora_rank=32,
            qk_rope_head_dim=8, qk_nope_head_dim=16, v_head_dim=16, num_key_value_heads=4)

#: Config kwargs of a tiny model per ``model_type`` that keeps the family's layer mix.
TINY_CONFIGS: dict[str, dict[str, Any]] = {
    "gemma3_text": {**_BASE, "num_hidden_layers": 6, "head_dim": 16, "sliding_window": 8,
                    "query_pre_attn_scalar": 16,
                    "rope_parameters": {
                        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                        "full_attention": {"rope_type": "linear", "rope_theta": 1e6,
                                           "factor": 8.0}}},
    "gemma4_text": {**_BASE, "num_hidden_layers": 6, "head_dim": 16, "global_head_dim": 32,
                    "sliding_window": 8, "hidden_size_per_layer_input": 8,
                    "vocab_size_per_layer_input": 97},
    "cohere2": {**_BASE, "num_hidden_layers": 4, "head_dim": 16, "sliding_window": 8,
                "pad_token_id": 0},
    "llama4_text": {**_BASE, **_MOE, "num_hidden_layers": 4, "head_dim": 16,
                    "intermediate_size_mlp": 64, "attention_chunk_size": 8, "floor_scale": 4,
                    "attn_scale": 0.1, "pad_token_id": 0},
    "smollm3": {**_BASE, "num_hidden_layers": 4, "pad_token_id": 0},
    "olmo3": {**_BASE, "num_hidden_layers": 4, "sliding_window": 8,
              "rope_parameters": {
                  "sliding_attention": {"rope_type": "default", "rope_theta": 500000.0},
                  "full_attention": {"rope_type": "yarn", "rope_theta": 500000.0, "factor": 8.0,
                                     "original_max_position_embeddings": 64,
                                     "attention_factor": 1.2079}}},
    "gpt_oss": {**_BASE, **_MOE, "num_hidden_layers": 2, "head_dim": 16, "sliding_window": 8},
    "deepseek_v3": {**_BASE, **_MLA, "num_hidden_layers": 2,
                    "rope_parameters": {"rope_type": "yarn", "rope_theta": 10000.0,
                                        "factor": 40.0, "original_max_position_embeddings": 64,
                                        "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0,
                                        "mscale_all_dim": 1.0}},
    "gpt_neox": {**_BASE, "num_hidden_layers": 2},
    "glm": {**_BASE, "num_hidden_layers": 2, "head_dim": 16, "pad_token_id": 0},
    "glm4_moe": {**_BASE, "num_hidden_layers": 2, "head_dim": 16, "first_k_dense_replace": 1,
                 "n_routed_experts": 2, "num_experts_per_tok": 1, "moe_intermediate_size": 32,
                 "n_group": 1, "topk_group": 1, "pad_token_id": 0},
    "phi3": {**_BASE, "num_hidden_layers": 2, "original_max_position_embeddings": 64,
             "pad_token_id": 0,
             "rope_parameters": {"rope_type": "longrope", "rope_theta": 10000.0,
                                 "partial_rotary_factor": 0.75,
                                 "short_factor": [1.0 + 0.1 * i for i in range(6)],
                                 "long_factor": [2.0 + i for i in range(6)]}},
    "ministral3": {**_BASE, "num_hidden_layers": 2, "head_dim": 16},
    "llama": {**_BASE, "num_hidden_layers": 2},
}

_CAPTURED: list[tuple[int, torch.Tensor, torch.Tensor, float, Any]] = []
_REGISTERED = False


def _capture(module: Any, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
             attention_mask: Any, **kwargs: Any) -> Any:
    """Record what a layer hands to attention, then run the model's own eager attention."""
    _CAPTURED.append((int(module.layer_idx), query.detach().clone(), key.detach().clone(),
                      float(kwargs.get("scaling") or 0.0), attention_mask))
    eager = importlib.import_module(type(module).__module__).eager_attention_forward
    return eager(module, query, key, value, attention_mask, **kwargs)


def tiny_model(model_type: str, **overrides: Any) -> tuple[Any, Any]:
    """A tiny random transformers model of ``model_type`` whose attention records q and k.

    Parameters
    ----------
    model_type : str
        A key of :data:`TINY_CONFIGS`.
    **overrides
        Config keys to change (e.g. ``rope_parameters``).

    Returns
    -------
    tuple
        ``(config, model)``: the transformers config and the base model in eval mode (seed 0).
    """
    global _REGISTERED
    model_type = check_choice(model_type, "model_type", tuple(TINY_CONFIGS))
    import transformers

    if not _REGISTERED:
        from transformers.masking_utils import AttentionMaskInterface, eager_mask

        transformers.AttentionInterface.register("posenc_capture", _capture)
        # Without a mask function of its own, a custom attention gets no mask at all (no causal
        # mask, no window, no chunk): give it the eager one, so the model runs as designed.
        AttentionMaskInterface.register("posenc_capture", eager_mask)
        _REGISTERED = True
    kwargs = json.loads(json.dumps({**TINY_CONFIGS[model_type], **overrides}))
    # The tiny vocabulary and original lengths make transformers log notices (token ids out of
    # range, a YaRN factor that differs from max/original) that do not apply to a random model.
    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    try:
        config = transformers.CONFIG_MAPPING[model_type](**kwargs)
        torch.manual_seed(0)
        model = transformers.AutoModel.from_config(config, attn_implementation="posenc_capture")
    finally:
        transformers.logging.set_verbosity(verbosity)
    return config, model.eval()


def layer_qk(model: Any, positions: torch.Tensor) -> dict[int, tuple[torch.Tensor, ...]]:
    """``{layer: (q, k, softmax_scale)}`` as each layer hands them to attention.

    Parameters
    ----------
    model : transformers model
        From :func:`tiny_model`.
    positions : torch.Tensor
        Position ids, shape ``(seq,)``; the tokens are fixed (``1, 2, …``), so only the
        positions change between calls.

    Returns
    -------
    dict
        q and k of shape ``(1, heads, seq, head_dim)``; the scale as a float.
    """
    positions = check_positions(positions).long()
    _CAPTURED.clear()
    ids = torch.arange(positions.shape[0]).remainder(96)[None] + 1
    with torch.no_grad():
        model(input_ids=ids, position_ids=positions[None],
              attention_mask=torch.ones_like(ids), use_cache=False)
    return {layer: (q, k, torch.tensor(s)) for layer, q, k, s, _ in _CAPTURED}


def visible_keys(model: Any, seq: int) -> dict[int, torch.Tensor]:
    """``{layer: (seq, seq) bool}``: which keys each query may attend to, from the layer's mask.

    Read from the additive (or boolean) mask transformers hands each layer's attention: sliding
    windows and attention chunks show up here, so they can be checked against the plan.
    """
    layer_qk(model, torch.arange(seq))
    out: dict[int, torch.Tensor] = {}
    for layer, _, _, _, mask in _CAPTURED:
        m = mask[0, 0] if mask.dim() == 4 else mask
        out[layer] = m if m.dtype == torch.bool else m == 0
    return out


def rotary_tables(model: Any) -> dict[str | None, tuple[torch.Tensor, float]]:
    """The model's rotary inverse frequencies and attention factor, per layer type."""
    rotary = model.rotary_emb
    if hasattr(rotary, "inv_freq"):
        return {None: (rotary.inv_freq, float(getattr(rotary, "attention_scaling", 1.0)))}
    return {
        lt: (getattr(rotary, f"{lt}_inv_freq"), float(getattr(rotary, f"{lt}_attention_scaling")))
        for lt in rotary.layer_types
    }


def shift_error(config: Any, model: Any, offset: int, seq: int = 12) -> dict[int, float]:
    """Per layer: how far the model's q and k at positions ``p + offset`` are from the plan.

    The plan says a RoPE layer turns its q and k by ``offset·θ`` when all positions move by
    ``offset`` (the hidden states entering each layer do not change: everything before is
    relative), and a NoPE layer leaves them alone. Returns the largest absolute difference
    between the model's shifted q, k and the plan's rotation of the unshifted ones.

    Parameters
    ----------
    config, model
        From :func:`tiny_model`.
    offset : int
        The common shift (>= 0).
    seq : int
        Number of tokens.

    Returns
    -------
    dict
        ``{layer: max |difference|}``.
    """
    plan = position_plan(config)
    base = layer_qk(model, torch.arange(seq))
    moved = layer_qk(model, torch.arange(seq) + offset)
    shift = torch.full((seq,), float(offset))
    out: dict[int, float] = {}
    for entry in plan:
        turn = dataclasses.replace(entry, attention_factor=1.0)
        if getattr(config, "model_type", "") == "deepseek_v3":
            # DeepSeek de-interleaves its pairs before rotating: q and k reach attention in the
            # half layout.
            turn = dataclasses.replace(turn, convention="half")
        (q0, k0, _), (q1, k1, _) = base[entry.layer], moved[entry.layer]
        out[entry.layer] = max(
            float((q1 - turn.rotate(q0, shift)).abs().max()),
            float((k1 - turn.rotate(k0, shift)).abs().max()),
        )
    return out
