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
import math
import sys
from typing import Any

import torch

from .._validation import check_positions
from ._families import UNIT_SOFTMAX_SCALE_TYPES, position_plan

__all__ = [
    "TINY_CONFIGS",
    "CensusSummary",
    "TypeCheck",
    "census",
    "census_summary",
    "census_types",
    "check_type",
    "layer_qk",
    "min_check_length",
    "plan_problems",
    "rotary_tables",
    "shift_error",
    "tiny_config",
    "tiny_model",
    "visible_keys",
]

_BASE = dict(vocab_size=97, hidden_size=64, intermediate_size=64, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=512)
_MOE = dict(num_local_experts=2, num_experts_per_tok=1)
_MLA = dict(moe_intermediate_size=32, n_routed_experts=2, num_experts_per_tok=1, n_group=1,
            topk_group=1, first_k_dense_replace=1, kv_lora_rank=16, q_lora_rank=32,
            qk_rope_head_dim=8, qk_nope_head_dim=16, v_head_dim=16, num_key_value_heads=4)

#: Config kwargs of a tiny model per ``model_type`` that keeps the family's layer mix.
#:
#: :meta hide-value:
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
        A key of :data:`TINY_CONFIGS`, or any other model type transformers knows (its config
        then gets small sizes on the class defaults, as :func:`tiny_config` gives them).
    **overrides
        Config keys to change (e.g. ``rope_parameters``).

    Returns
    -------
    tuple
        ``(config, model)``: the transformers config and the base model in eval mode (seed 0).
    """
    global _REGISTERED
    import transformers

    if not isinstance(model_type, str):
        raise TypeError(f"model_type must be a str, got {type(model_type).__name__}")
    if model_type not in transformers.CONFIG_MAPPING:
        raise ValueError(
            f"model_type must be a model type transformers {transformers.__version__} knows (a "
            f"key of transformers.CONFIG_MAPPING, e.g. 'llama'), got {model_type!r}")

    if not _REGISTERED:
        from transformers.masking_utils import AttentionMaskInterface, eager_mask

        transformers.AttentionInterface.register("posenc_capture", _capture)
        # Without a mask function of its own, a custom attention gets no mask at all (no causal
        # mask, no window, no chunk): give it the eager one, so the model runs as designed.
        AttentionMaskInterface.register("posenc_capture", eager_mask)
        _REGISTERED = True
    # The tiny vocabulary and original lengths make transformers log notices (token ids out of
    # range, a YaRN factor that differs from max/original) that do not apply to a random model.
    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    try:
        config = tiny_config(model_type, **overrides)
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


# transformers' function that regroups adjacent rotary pairs into the half layout, then rotates.
_DEINTERLEAVING_ROTATION = "apply_rotary_pos_emb_interleave"


def deinterleaves(model: Any, config: Any) -> bool:
    """Whether the model's attention de-interleaves its rotary pairs before rotating.

    transformers' MLA models rotate with ``apply_rotary_pos_emb_interleave``, which rotates
    adjacent pairs of the weights' layout by first regrouping them into the half layout: q and k
    then reach attention half-split, so a shift test sees ``half`` although the weights pair
    adjacent features. Some models call it always (DeepSeek-V3.2, GLM-MoE-DSA), others only under
    ``config.rope_interleave`` (DeepSeek-V3). Observed, not read from the source: the function is
    wrapped in the model's module for one short forward pass, and its calls are counted.

    Parameters
    ----------
    model : transformers model
        From :func:`tiny_model` (its attention records q and k).
    config : transformers config
        The model's config; unused, kept so that callers pass the pair they hold.

    Returns
    -------
    bool
        True when at least one layer called the de-interleaving rotation during a forward pass of
        12 tokens; False when none did, or the model's module has no such function.
    """
    del config  # the forward pass already reads it
    module = sys.modules.get(type(model).__module__)
    rotation = getattr(module, _DEINTERLEAVING_ROTATION, None)
    if module is None or rotation is None:
        return False
    calls = 0

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        return rotation(*args, **kwargs)

    setattr(module, _DEINTERLEAVING_ROTATION, counted)
    try:
        layer_qk(model, torch.arange(12))
    finally:
        setattr(module, _DEINTERLEAVING_ROTATION, rotation)
    return calls > 0


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
    paired = deinterleaves(model, config)
    out: dict[int, float] = {}
    for entry in plan:
        turn = dataclasses.replace(entry, attention_factor=1.0)
        if entry.convention == "interleaved" and paired:
            # the model de-interleaves its pairs before rotating: q and k reach attention in the
            # half layout.
            turn = dataclasses.replace(turn, convention="half")
        (q0, k0, _), (q1, k1, _) = base[entry.layer], moved[entry.layer]
        out[entry.layer] = max(
            float((q1 - turn.rotate(q0, shift)).abs().max()),
            float((k1 - turn.rotate(k0, shift)).abs().max()),
        )
    return out


# --- the census: every text model type with a rotary module, held against its own layers -------

#: The 26 types the census cannot hold against their layers in transformers 5.25 (23 whose tiny
#: model the harness cannot yet build or capture, Mistral 4's among them, 3 whose attention
#: bypasses the attention interface): their plans carry a note.
#: ``tests/test_architectures.py`` fails when the census skips a type missing here.
UNVERIFIED_TYPES: frozenset[str] = frozenset({
    "axk1", "bailing_hybrid", "cohere_compass_text", "cosmos3_edge_text", "dbrx",
    "dots3_note_text", "esm", "esmc", "gemma3n_text", "glm4v_moe_text",
    "glm4v_text", "glm_image_text", "glm_ocr_text", "gpt_neox_japanese", "gte",
    "hunyuan_vl_text", "hy_v4_vl_text", "jina_embeddings_v3", "kolibri1_1",
    "kyutai_speech_to_text", "mistral4", "nomic_bert", "qwen4_exp_text", "youtu", "zamba2", "zaya",
})

# Small sizes for any config class; only the keys the class has are set.
_TINY_SIZES: dict[str, Any] = dict(
    vocab_size=97, hidden_size=64, intermediate_size=64, num_attention_heads=4,
    num_key_value_heads=2, head_dim=16, max_position_embeddings=512, pad_token_id=0,
    moe_intermediate_size=32, shared_expert_intermediate_size=32, num_experts=4,
    num_local_experts=4, n_routed_experts=4, num_experts_per_tok=2, n_group=1, topk_group=1,
    first_k_dense_replace=1, kv_lora_rank=16, q_lora_rank=32, qk_rope_head_dim=8,
    qk_nope_head_dim=16, v_head_dim=16, linear_key_head_dim=16, linear_value_head_dim=16,
    linear_num_key_heads=2, linear_num_value_heads=4, global_head_dim=32,
    hidden_size_per_layer_input=8, vocab_size_per_layer_input=97, intermediate_size_mlp=64,
    attention_chunk_size=8, mamba_d_state=8, mamba_n_heads=8, mamba_head_dim=16,
    mamba_d_head=16, mamba_d_ssm=128, ssm_state_size=8, mamba_n_groups=1, n_shared_experts=1,
)


def census_types() -> list[str]:
    """Text model types of the installed transformers whose model builds a rotary module.

    A type counts when transformers has a base model for it that is a text model — a causal or
    masked LM class in the auto mappings, a multimodal model's ``…_text`` half, or a base model
    ``XModel`` whose modelling module defines ``XForCausalLM`` or ``XForMaskedLM`` although the
    auto mappings leave it out (Mistral 4 in transformers 5.25) — its config has no nested text
    config (a multimodal wrapper is planned through its text model) and its modelling module
    assigns a ``…RotaryEmbedding`` to ``rotary_emb``.

    Returns
    -------
    list of str
        Sorted model types.
    """
    from transformers import CONFIG_MAPPING
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
        MODEL_MAPPING_NAMES,
    )

    from ._rotary import has_rotary_module

    text = {*MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, *MODEL_FOR_MASKED_LM_MAPPING_NAMES}
    out = []
    for model_type in sorted(MODEL_MAPPING_NAMES):
        if model_type not in CONFIG_MAPPING:
            continue
        try:
            cls = CONFIG_MAPPING[model_type]
            if "text_config" in (getattr(cls, "sub_configs", None) or {}):
                continue
            if not has_rotary_module(model_type):
                continue
            if (model_type not in text and not model_type.endswith("_text")
                    and not _has_lm_head_class(model_type)):
                continue
        except Exception:
            continue
        out.append(model_type)
    return out


def _has_lm_head_class(model_type: str) -> bool:
    """Whether ``XModel``'s modelling file defines ``XForCausalLM`` or ``XForMaskedLM``.

    Catches text models that transformers' auto mappings leave out (``mistral4`` in 5.25); read
    from the file's text, without importing it.
    """
    import re

    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    from ._rotary import _modeling_path

    name = MODEL_MAPPING_NAMES.get(model_type)
    name = name[0] if isinstance(name, (tuple, list)) else name
    path = _modeling_path(model_type)
    if not name or not str(name).endswith("Model") or path is None:
        return False
    stem = str(name).removesuffix("Model")
    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    return re.search(rf"^class {stem}For(CausalLM|MaskedLM)\(", source, re.MULTILINE) is not None


def tiny_config(model_type: str, **overrides: Any) -> Any:
    """A tiny config of ``model_type``: :data:`TINY_CONFIGS` or small sizes on the defaults."""
    import transformers

    cls = transformers.CONFIG_MAPPING[model_type]
    if model_type in TINY_CONFIGS:
        return cls(**json.loads(json.dumps({**TINY_CONFIGS[model_type], **overrides})))
    default = cls()
    kwargs = {k: v for k, v in _TINY_SIZES.items() if _has(default, k) and _settable(cls, k)}
    pattern = max(int(_get(default, "sliding_window_pattern") or 0),
                  int(_get(default, "full_attention_interval") or 0),
                  int(_get(default, "no_rope_layer_interval") or 0), 4)
    kwargs["num_hidden_layers"] = pattern
    if _get(default, "sliding_window"):
        kwargs["sliding_window"] = 8
    if _get(default, "kv_lora_rank"):  # MLA: as many key/value heads as query heads
        kwargs["num_key_value_heads"] = kwargs.get("num_attention_heads", 4)
    if _get(default, "rotary_dim"):  # GPT-J, CodeGen: a rotary block inside the 16 features
        kwargs["rotary_dim"] = 8
    rope = _get(default, "rope_parameters")
    if model_type.startswith("qwen") and model_type.endswith("vl_text"):  # M-RoPE: 2 + 3 + 3
        section = [4, 2, 2] if model_type.startswith("qwen3") else [2, 3, 3]
        kwargs["rope_parameters"] = {**(rope or {}), "mrope_section": section}
    if "attn_layer_indices" in default.to_dict():  # Bamba: attention on layers 1 and 3
        kwargs["attn_layer_indices"] = [1, 3]
    types = _get(default, "layer_types")
    if (isinstance(types, list) and set(types) == {"linear_attention"}
            and "layer_types" in default.to_dict() and "attn_layer_indices" not in kwargs):
        kwargs["layer_types"] = ["linear_attention", "full_attention"] * (pattern // 2)
    try:
        return cls(**{**kwargs, **overrides})
    except Exception:
        types = _get(default, "layer_types")
        if not isinstance(types, list) or len(types) <= pattern:
            raise
        # A class that keeps an explicit default layer list (Zamba2): its first layers.
        kwargs["layer_types"] = types[:pattern]
        return cls(**{**kwargs, **overrides})


def _settable(cls: type, key: str) -> bool:
    """Whether ``key`` may be passed to ``cls``: not a read-only property (Falcon's ``head_dim``).

    Parameters
    ----------
    cls : type
        A transformers config class.
    key : str
        An attribute name.

    Returns
    -------
    bool
        False only when the class defines ``key`` as a property without a setter.
    """
    import inspect

    attr = inspect.getattr_static(cls, key, None)
    return not (isinstance(attr, property) and attr.fset is None)


def _has(config: Any, key: str) -> bool:
    try:
        return hasattr(config, key)
    except Exception:
        return True


def _get(config: Any, key: str) -> Any:
    try:
        return getattr(config, key, None)
    except Exception:
        return None


_EMBEDDINGS: dict[int, Any] = {}


def _record_embeddings(module: Any, args: tuple, kwargs: dict) -> None:
    value = kwargs.get("position_embeddings")
    if value is not None:
        _EMBEDDINGS[int(module.layer_idx)] = value


@dataclasses.dataclass
class TypeCheck:
    """What the census found for one type."""

    model_type: str
    status: str  # "covered", "refused", "mismatch", "not built", "not captured"
    detail: str = ""


def check_type(
    model_type: str, seq: int = 12, offset: int = 5, tol: float = 2e-3, **overrides: Any
) -> TypeCheck:
    """Hold :func:`~posenc_lib.architectures.position_plan` against a tiny random model.

    Layer by layer, for ``model_type``.

    Per attention layer: the q and k the layer hands to attention move under a common position
    shift exactly as the plan's rotation says (block, pairing, frequencies; NoPE: not at all),
    with the plan's ``llama_4_scaling_beta`` query scale; the cos and sin the layer receives are
    ``attention_factor·cos(m·θ_i)`` with the plan's frequencies and factor over ``rotary_dim``
    features; the softmax scale it passes to attention is the plan's ``softmax_scale_factor``
    times ``1/sqrt(q size)`` (or the config's ``attention_multiplier`` /
    ``query_pre_attn_scalar``); the mask is the plan's (causal or bidirectional, window,
    chunk). A layer the plan calls ``no_attention`` must not attend. Not compared: sinks,
    qk-norm and Llama 4's NoPE-layer query scale (it reads the token index, not the positions).
    """
    import transformers

    # A tiny random model makes transformers log notices (token ids beyond the tiny vocabulary,
    # reference kernels standing in for fused ones) that say nothing about its positions.
    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    try:
        return _check_type(model_type, seq, offset, tol, **overrides)
    finally:
        transformers.logging.set_verbosity(verbosity)


def _check_type(
    model_type: str, seq: int, offset: int, tol: float, **overrides: Any
) -> TypeCheck:
    try:
        config = tiny_config(model_type, **overrides)
    except Exception as err:
        return TypeCheck(model_type, "not built", f"config: {str(err).splitlines()[0][:120]}")
    try:
        plan = position_plan(config)
    except (ValueError, TypeError) as err:
        return TypeCheck(model_type, "refused", str(err).splitlines()[0][:160])
    try:
        model = _capturing_model(config)
    except Exception as err:
        return TypeCheck(model_type, "not built", f"model: {str(err).splitlines()[0][:120]}")
    try:
        problems = plan_problems(plan, config, model, seq=seq, offset=offset, tol=tol)
    except _NotCaptured:
        return TypeCheck(model_type, "not captured", "its attention does not go through "
                         "transformers' attention interface")
    except Exception as err:
        return TypeCheck(model_type, "not built", f"forward: {str(err).splitlines()[0][:120]}")
    if problems:
        return TypeCheck(model_type, "mismatch", "; ".join(problems[:3]))
    return TypeCheck(model_type, "covered")


class _NotCaptured(RuntimeError):
    pass


def _capturing_model(config: Any) -> Any:
    import transformers

    tiny_model("llama")  # registers the capturing attention
    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    try:
        torch.manual_seed(0)
        model = transformers.AutoModel.from_config(config, attn_implementation="posenc_capture")
    finally:
        transformers.logging.set_verbosity(verbosity)
    return model.eval()


def plan_problems(plan: Any, config: Any, model: Any | None = None, *, seq: int | None = None,
                  offset: int = 5, tol: float = 2e-3) -> list[str]:
    """Where a plan disagrees with the model's layers; empty when it is right.

    Runs the model (built from ``config`` when not given) at positions ``0..seq−1`` and shifted
    by ``offset`` (and, for a ``llama_4_scaling_beta`` query scale, shifted past its length), and
    compares per layer: the shift of q and k (with the query scale), the cos/sin the layer
    receives (``attention_factor·cos(m·θ_i)`` over ``rotary_dim`` features), the softmax scale
    it passes to attention, and the mask. Sinks and qk-norm are not compared.

    Parameters
    ----------
    plan : list of LayerPosition
        The plan to check (e.g. from :func:`~posenc_lib.architectures.position_plan`, or altered
        to see a check fail).
    config, model
        A tiny transformers config and its model (from :func:`tiny_model`).
    seq : int, optional
        Tokens per run. A mask check sees a window or chunk of ``W`` keys only if ``seq ≥ W + 2``
        (a key ``W`` or more positions back must exist); a shorter run cannot tell a window of
        ``W`` from none. By default, :func:`min_check_length` of the plan and the config (at
        least 12), so a wrong window in either is seen; a smaller ``seq`` given explicitly is
        the caller's choice (the census runs at 12, where its tiny models' windows of 8 fit).

    Returns
    -------
    list of str
        One line per disagreement.
    """
    if seq is None:
        seq = min_check_length(plan, config)
    elif not isinstance(seq, int) or isinstance(seq, bool) or seq < 2:
        raise ValueError(f"seq must be an int >= 2, got {seq!r}")
    model = _capturing_model(config) if model is None else model
    hooks = [m.register_forward_pre_hook(_record_embeddings, with_kwargs=True)
             for m in model.modules() if hasattr(m, "layer_idx") and type(m).__name__.endswith(
                 "Attention")]
    try:
        _EMBEDDINGS.clear()
        base = layer_qk(model, torch.arange(seq))
        masks = {layer: mask for layer, _, _, _, mask in _CAPTURED}
        embeddings = dict(_EMBEDDINGS)
        moved = layer_qk(model, torch.arange(seq) + offset)
        far_offset = _query_scale_offset(plan, config)
        far = None if far_offset is None else layer_qk(model, torch.arange(seq) + far_offset)
    finally:
        for h in hooks:
            h.remove()
    if not base:
        raise _NotCaptured
    weights_paired = deinterleaves(model, config)
    problems = _compare(plan, config, base, moved, masks, embeddings, seq, offset, tol,
                        deinterleaved=weights_paired)
    if far is not None and far_offset is not None:
        # past the query scale's length: the plan's multiplier must account for the change
        problems += [p for p in _compare(plan, config, base, far, masks, {}, seq, far_offset,
                                         tol, shift_only=True, deinterleaved=weights_paired)
                     if p not in problems]
    return problems


def min_check_length(plan: Any, config: Any, floor: int = 12) -> int:
    """Tokens a run needs for its masks to show every window and chunk of a plan and a config.

    Parameters
    ----------
    plan : list of LayerPosition
        Its ``window`` and ``chunk`` values are read.
    config : transformers config
        Its ``sliding_window`` and ``attention_chunk_size`` are read, where set to an int.
    floor : int
        The least length returned.

    Returns
    -------
    int
        ``max(floor, W + 2)`` for the largest window or chunk ``W`` in either.
    """
    if not isinstance(floor, int) or isinstance(floor, bool) or floor < 2:
        raise ValueError(f"floor must be an int >= 2, got {floor!r}")
    spans = [getattr(e, key, None) for e in plan for key in ("window", "chunk")]
    reach = [value for value in spans if isinstance(value, int) and not isinstance(value, bool)]
    for key in ("sliding_window", "attention_chunk_size"):
        value = _get(config, key)
        if isinstance(value, int) and not isinstance(value, bool):
            reach.append(value)
    return max([floor] + [value + 2 for value in reach])


def _query_scale_offset(plan: Any, config: Any) -> int | None:
    """A shift that carries positions ``0..`` past the query scale's length, or None.

    Taken from the plan's ``llama_4_scaling_beta`` query scales and from the config's rope block,
    so a plan that drops a query scale the model applies is caught too. Llama 4's own multiplier
    (its NoPE layers) is not checked: transformers computes it from the token index (the cache
    length), not from ``position_ids``, so shifting the positions leaves it unchanged.
    """
    floors = [int(e.query_scale.floor) for e in plan
              if getattr(e, "query_scale", None) is not None
              and e.query_scale.form == "llama_4_scaling_beta"]
    params = _get(config, "rope_parameters")
    blocks = [params] if isinstance(params, dict) else []
    for block in blocks:
        if block.get("llama_4_scaling_beta") is not None:
            floors.append(int(block.get("original_max_position_embeddings")
                              or _get(config, "max_position_embeddings") or 0))
    floors = [f for f in floors if f > 0]
    return max(floors) if floors else None


def _expected_softmax_scale(entry: Any, config: Any, q_dim: int) -> float:
    """The scale the layer should pass to attention: the config's own scale key (Granite's
    ``attention_multiplier``, Gemma's ``query_pre_attn_scalar``) or ``1/sqrt(q_dim)``, times
    the plan's ``softmax_scale_factor``."""
    multiplier = _get(config, "attention_multiplier")
    scalar = _get(config, "query_pre_attn_scalar")
    if _get(config, "model_type") in UNIT_SOFTMAX_SCALE_TYPES:
        base = 1.0
    elif isinstance(multiplier, (int, float)) and multiplier:
        base = float(multiplier)
    elif isinstance(scalar, (int, float)) and scalar:
        base = float(scalar) ** -0.5
    else:
        base = q_dim ** -0.5
    return base * float(entry.softmax_scale_factor)


def _compare(plan: Any, config: Any, base: dict, moved: dict, masks: dict, embeddings: dict,
             seq: int, offset: int, tol: float, shift_only: bool = False,
             deinterleaved: bool = False) -> list[str]:
    problems: list[str] = []
    shift = torch.full((seq,), float(offset))
    start = torch.arange(seq, dtype=torch.float64)
    for entry in plan:
        layer = entry.layer
        if entry.kind == "no_attention":
            if layer in base:
                problems.append(f"layer {layer}: plan says no attention, the layer attends")
            continue
        if layer not in base:
            problems.append(f"layer {layer}: no attention captured")
            continue
        turn = dataclasses.replace(entry, attention_factor=1.0)
        if deinterleaved and entry.kind == "rope":
            # the weights pair adjacent features; q and k reach attention de-interleaved
            if entry.convention != "interleaved":
                problems.append(f"layer {layer}: the model de-interleaves adjacent pairs of its "
                                f"weights, plan says {entry.convention}")
            turn = dataclasses.replace(turn, convention="half")
        (q0, k0, s0), (q1, k1, _) = base[layer], moved[layer]
        if q0.shape[-1] != entry.head_dim:
            problems.append(f"layer {layer}: head size {q0.shape[-1]} vs plan {entry.head_dim}")
            continue
        want_q = turn.rotate(q0, shift)
        if entry.query_scale is not None and entry.query_scale.form != "llama4":
            # Ministral 3's multiplier reads position_ids: it moves with the shift (Llama 4's
            # reads the token index, which the shift leaves alone)
            ratio = entry.query_scale(start + offset) / entry.query_scale(start)
            want_q = want_q * ratio[:, None].to(want_q.dtype)
        err = max(float((q1 - want_q).abs().max()),
                  float((k1 - turn.rotate(k0, shift)).abs().max()))
        scale = max(float(q0.abs().max()), float(k0.abs().max()), 1.0)
        if err > tol * scale:
            problems.append(f"layer {layer}: shift error {err:.2g}")
        if shift_only:
            continue
        got_scale = float(s0)
        if got_scale:  # 0: the layer passed no scaling (its kernel's own default)
            want_scale = _expected_softmax_scale(entry, config, int(q0.shape[-1]))
            if not math.isclose(got_scale, want_scale, rel_tol=1e-4):
                problems.append(f"layer {layer}: softmax scale {got_scale:.5g} vs plan "
                                f"{want_scale:.5g}")
        if entry.kind == "rope":
            message = _check_cos_sin(entry, embeddings.get(layer), seq, tol)
            if message:
                problems.append(f"layer {layer}: {message}")
        mask = masks.get(layer)
        expected = entry.visible_keys(seq)
        seen = torch.ones(seq, seq, dtype=torch.bool) if mask is None else (
            mask[0, 0] if mask.dim() == 4 else mask)
        if mask is not None and seen.dtype != torch.bool:
            seen = seen == 0
        if seen.shape != expected.shape or not torch.equal(seen.cpu(), expected):
            problems.append(f"layer {layer}: mask differs from the plan's visible keys")
    return problems


def _check_cos_sin(entry: Any, value: Any, seq: int, tol: float) -> str | None:
    """The layer's cos/sin (or complex frequencies) against ``a·cos(mθ)``, ``a·sin(mθ)``."""
    if isinstance(value, torch.Tensor) and not value.is_complex():
        value = None  # GPT-J hands over its whole sin/cos table: the layer indexes it itself
    if value is None:
        # The layer builds its rotation itself (GPT-J): only the shift test sees it, and it
        # cannot see a factor on cos and sin, so the plan must not claim one.
        if math.isclose(entry.attention_factor, 1.0):
            return None
        return "no cos/sin reached the layer"
    if isinstance(value, dict):
        value = value.get(entry.layer_type)
    positions = torch.arange(seq, dtype=torch.float64)[:, None]
    angles = positions * entry.inv_freq[None].to(torch.float64)
    a = entry.attention_factor
    if isinstance(value, torch.Tensor) and value.is_complex():
        got = value.reshape(-1, value.shape[-1])[:seq].to(torch.complex128)
        want = a * torch.polar(torch.ones_like(angles), angles)
        if got.shape != want.shape:
            return f"frequency table shape {tuple(got.shape)} vs plan {tuple(want.shape)}"
        err = float((got - want).abs().max())
        if err > tol * max(a, 1.0) * 4:
            return f"complex frequencies off by {err:.2g}"
        return _check_slow_angles(got.real, got.imag, angles)
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        return "cos/sin in an unknown form"
    cos, sin = (t.reshape(-1, t.shape[-1])[:seq].to(torch.float64) for t in value)
    if float(cos[0].abs().max()) == 0.0 < float(sin[0].abs().max()):
        cos, sin = sin, cos  # GPT-J hands over (sin, cos): at position 0, sin = 0

    width = entry.rotary_dim
    if cos.shape[-1] == width // 2:  # gpt-oss: one cos per pair, not repeated
        cos_pairs, sin_pairs = cos, sin
    elif cos.shape[-1] != width:
        return f"cos/sin cover {cos.shape[-1]} features, plan rotates {width}"
    elif entry.convention == "interleaved" and not torch.allclose(cos[:, 0::2], cos[:, 1::2]):
        cos_pairs, sin_pairs = cos[:, : width // 2], sin[:, : width // 2]
    elif entry.convention == "interleaved":
        cos_pairs, sin_pairs = cos[:, 0::2], sin[:, 0::2]
    else:
        cos_pairs, sin_pairs = cos[:, : width // 2], sin[:, : width // 2]
    err = max(float((cos_pairs - a * angles.cos()).abs().max()),
              float((sin_pairs - a * angles.sin()).abs().max()))
    if err > tol * max(a, 1.0) * 4:
        return f"cos/sin differ from attention_factor·cos(mθ) by {err:.2g} (factor {a:.4g})"
    return _check_slow_angles(cos_pairs, sin_pairs, angles)


def _check_slow_angles(cos_pairs: torch.Tensor, sin_pairs: torch.Tensor,
                       angles: torch.Tensor) -> str | None:
    """Each pair's angle, read back from its cos/sin, within 0.1 % of the plan's ``m·θ_i``.

    The absolute cos/sin test above is nearly blind to the slowest pairs at a dozen positions
    (a tiny Llama with Llama 3's scaling ×8, head size 16: its slowest pair turns 4.3e-4 rad by
    position 11, and a plan 8× too fast there moves sin by 3e-3, under the tolerance). The angle
    ``atan2(sin, cos)`` is free of the attention factor and of that blindness; float32 tables
    are good to ~1e-6 of it. Rows past half a turn are skipped (the angle wraps).
    """
    got = torch.atan2(sin_pairs, cos_pairs)
    usable = (angles.abs() < 3.0) & (angles != 0)
    if not bool(usable.any()):
        return None
    miss = (got - angles).abs() - (1e-3 * angles.abs() + 1e-6)
    miss = torch.where(usable, miss, torch.zeros_like(miss))
    if float(miss.max()) <= 0:
        return None
    pair = int(miss.max(dim=0).values.argmax())
    row = int(miss[:, pair].argmax())
    return (f"pair {pair} turns {float(got[row, pair]):.3g} rad at position {row}, plan says "
            f"{float(angles[row, pair]):.3g} (frequency off by "
            f"{float(got[row, pair] / angles[row, pair]):.3g}×)")


def census(types: list[str] | None = None) -> list[TypeCheck]:
    """:func:`check_type` for every type of :func:`census_types` (or ``types``)."""
    import transformers

    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    try:
        return [check_type(t) for t in (census_types() if types is None else types)]
    finally:
        transformers.logging.set_verbosity(verbosity)


@dataclasses.dataclass(frozen=True)
class CensusSummary:
    """The census in numbers: ``types = covered + refused + unverified``.

    Attributes
    ----------
    types : int
        Text model types of the installed transformers with a rotary module
        (:func:`census_types`).
    covered : int
        ``types − refused − unverified``, computed by subtraction (no model is run here);
        ``tests/test_architectures.py`` holds each of these types' plans against a tiny
        model's layers (:func:`check_type`) and fails when one is not covered.
    refused : tuple of str
        Types :func:`~posenc_lib.architectures.position_plan` refuses with an error naming them.
    unverified : tuple of str
        Types in :data:`UNVERIFIED_TYPES` (no tiny model built or captured; plans carry a note).
    """

    types: int
    covered: int
    refused: tuple[str, ...]
    unverified: tuple[str, ...]


def census_summary(*, plan_all: bool = False) -> CensusSummary:
    """Count the census of the installed transformers without building a model.

    A type is refused when planning its tiny config (:func:`tiny_config`) raises the error
    :func:`~posenc_lib.architectures.position_plan` gives for a type it cannot describe; the
    quick default checks only the refusals made before the rotary module is read (no layer
    count or head size, a type in ``REFUSED_TYPES``), ``plan_all=True`` plans every type in
    full (slower: it imports every modelling module). Types in :data:`UNVERIFIED_TYPES` are
    counted apart; ``covered`` is what remains (a subtraction, not a run: the census test in
    ``tests/test_architectures.py`` runs :func:`check_type` on each type and fails when one of
    these is not covered).

    Parameters
    ----------
    plan_all : bool
        Plan every type in full instead of the quick refusal check.

    Returns
    -------
    CensusSummary
    """
    import transformers

    from ._families import plan_refusal

    types = census_types()
    unverified = tuple(t for t in types if t in UNVERIFIED_TYPES)
    refused: list[str] = []
    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    try:
        for model_type in types:
            if model_type in UNVERIFIED_TYPES:
                continue
            config = tiny_config(model_type)
            if plan_all:
                try:
                    position_plan(config)
                except (ValueError, TypeError):
                    refused.append(model_type)
            elif plan_refusal(config) is not None:
                refused.append(model_type)
    finally:
        transformers.logging.set_verbosity(verbosity)
    covered = len(types) - len(refused) - len(unverified)
    return CensusSummary(len(types), covered, tuple(refused), unverified)


if __name__ == "__main__":  # python -m posenc_lib.architectures.hf_check
    torch.set_num_threads(1)
    results = census()
    for r in results:
        print(f"{r.model_type:28} {r.status:12} {r.detail}")
    covered = sum(r.status == "covered" for r in results)
    print(f"covers {covered} of {len(results)} types")
