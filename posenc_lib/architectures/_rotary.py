"""The model's own rotary module: its frequencies, attention factor, pairing and qk-norm.

When transformers is installed, the plan's spectrum is not recomputed from the config: the
text model's rotary-embedding class is built from the config object and its ``inv_freq`` and
``attention_scaling`` are read (per layer type where the class keeps one table a type). A length
given with ``seq_len`` is run through the module's ``forward``, so dynamic NTK and LongRoPE pick
the table the model would use there. The pairing (``rotate_half`` over halves, or over
neighbours ``x[..., ::2]``, or complex multiplication) is read from the modelling module.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
import sys
from typing import Any

import torch

__all__ = [
    "builds_only_bidirectional_masks",
    "modeling_module", "pairing_convention", "qk_norm", "qk_norm_kind", "rotary_module_tables"]


@functools.cache
def modeling_module(model_type: str) -> Any:
    """transformers' modelling module of ``model_type``'s base model, or None."""
    try:
        from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES
    except ImportError:  # pragma: no cover
        return None
    name = MODEL_MAPPING_NAMES.get(model_type)
    if name is None:
        return None
    name = name[0] if isinstance(name, (tuple, list)) else name
    transformers = importlib.import_module("transformers")
    try:
        cls = getattr(transformers, str(name))
    except (AttributeError, ImportError):
        return None
    return sys.modules[cls.__module__]


def _source(obj: Any) -> str:
    try:
        return inspect.getsource(obj)
    except (OSError, TypeError):
        return ""


#: Words a modelling module uses when it rotates only part of each head (in its attention or in
#: its ``apply_rotary_pos_emb``): a module with none of them rotates the whole head.
_PARTIAL_MARKERS = ("rotary_dim", "rotary_ndims", "rotary_emb_dim", "partial_rotary", "q_rot",
                    "query_rot", "_rot =", "cos.shape[-1]", "rope_dim", "qk_rope_head_dim")


@functools.cache
def rotates_whole_head(model_type: str) -> bool | None:
    """Whether ``model_type``'s attention in transformers rotates every feature of each head.

    Read from the modelling module's source: True when it never slices a rotary block (none of
    ``_PARTIAL_MARKERS`` occurs: Llama, Mistral, Qwen2/3), False when it does (Phi, GPT-NeoX,
    GLM, the Phi-3 family, DeepSeek's MLA). Such a whole-head model given a rope block whose
    ``partial_rotary_factor`` builds a shorter table fails in its forward pass (a size
    mismatch between the head and cos/sin). None when the module cannot be read.

    Parameters
    ----------
    model_type : str
        A transformers model type.

    Returns
    -------
    bool or None
    """
    module = modeling_module(model_type)
    source = _source(module) if module is not None else ""
    if not source:
        return None
    return not any(marker in source for marker in _PARTIAL_MARKERS)


_ROTARY_ASSIGN = re.compile(r"rotary_emb\w*\s*=\s*(\w+RotaryEmbedding)\(")


@functools.cache
def _modeling_path(model_type: str) -> str | None:
    """The file of ``model_type``'s modelling module, found without importing it, or None.

    Through the base model's class in ``MODEL_MAPPING_NAMES`` (None when transformers does not
    define that class); a type with no entry there (a sub-model such as ``mllama_text_model``)
    through its config class's package instead (``…/mllama/configuration_mllama.py`` →
    ``…/mllama/modeling_mllama.py``).

    Parameters
    ----------
    model_type : str
        A transformers ``model_type``.

    Returns
    -------
    str or None
        The path of the ``modeling_….py`` file.
    """
    import importlib.util

    try:
        from transformers import CONFIG_MAPPING
        from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

        transformers = importlib.import_module("transformers")
        name = MODEL_MAPPING_NAMES.get(model_type)
        name = name[0] if isinstance(name, (tuple, list)) else name
        if name:  # a base model class named in the list (and None if transformers lacks it)
            where = getattr(transformers, "_class_to_module", {}).get(str(name))
            spec = importlib.util.find_spec(f"transformers.{where}") if where else None
        elif model_type in CONFIG_MAPPING:
            package, _, module = CONFIG_MAPPING[model_type].__module__.rpartition(".")
            if not module.startswith("configuration_"):
                return None
            spec = importlib.util.find_spec(
                f"{package}.modeling_{module.removeprefix('configuration_')}")
        else:
            return None
    except Exception:
        return None
    return spec.origin if spec is not None else None


def has_rotary_module(model_type: str) -> bool:
    """Whether the base model's modelling file assigns a ``…RotaryEmbedding`` to ``rotary_emb``.

    Read from the file's text without importing it (the census asks this of every type); the
    file is found through ``MODEL_MAPPING_NAMES``, or for a type with no entry there through its
    config class's package (:func:`_modeling_path`). Falls back to importing the module when no
    file is found. Vision and audio rotary classes do not count.

    Parameters
    ----------
    model_type : str
        A transformers ``model_type`` (``"llama"``, ``"mllama_text_model"``).

    Returns
    -------
    bool
    """
    if not isinstance(model_type, str):
        raise TypeError(f"model_type must be a str, got {type(model_type).__name__}")
    path = _modeling_path(model_type)
    if path is None:
        return _rotary_class(model_type) is not None
    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    names = [c for c in _ROTARY_ASSIGN.findall(source) if "Vision" not in c and "Audio" not in c]
    return any(re.search(rf"^class {n}\b", source, re.MULTILINE) or f"import {n}" in source
               or f" {n}," in source or f" {n}\n" in source for n in names)


@functools.cache
def _rotary_class(model_type: str) -> Any:
    module = modeling_module(model_type)
    if module is None:
        return None
    source = _source(module)
    candidates = re.findall(r"rotary_emb\w*\s*=\s*(\w+RotaryEmbedding)\(", source)
    candidates = [c for c in candidates if "Vision" not in c and "Audio" not in c]
    for name in candidates:
        cls = getattr(module, name, None)
        if cls is not None:
            return cls
    return None


def rotary_module_tables(
    hf_config: Any, seq_len: int | None = None
) -> dict[str | None, tuple[torch.Tensor, float]] | None:
    """``{layer_type or None: (inv_freq, attention_scaling)}`` from the model's rotary module.

    Parameters
    ----------
    hf_config : transformers config
        The text model's config object.
    seq_len : int, optional
        Run the module's ``forward`` at positions up to ``seq_len − 1`` first (dynamic NTK,
        LongRoPE switch their table there).

    Returns
    -------
    dict or None
        Inverse frequencies as float64 of shape ``(rotary_dim // 2,)``; None when the model has
        no rotary module transformers builds from the config alone.
    """
    cls = _rotary_class(hf_config.model_type)
    if cls is None:
        return None
    try:
        rotary = cls(config=hf_config)
    except Exception:
        return None
    types: list[str | None]
    if hasattr(rotary, "inv_freq"):
        types = [None]
    else:
        types = [t for t in sorted(set(getattr(hf_config, "layer_types", None) or ()))
                 if hasattr(rotary, f"{t}_inv_freq")]
        if not types:
            return None
    if hf_config.model_type == "phimoe" and types == [None]:
        return {None: _phimoe_table(rotary, seq_len)}
    if seq_len is not None and seq_len > 0:
        _run_forward(rotary, hf_config, types, seq_len)
    out: dict[str | None, tuple[torch.Tensor, float]] = {}
    for t in types:
        prefix = "" if t is None else f"{t}_"
        inv = getattr(rotary, f"{prefix}inv_freq")
        scale = getattr(rotary, f"{prefix}attention_scaling", 1.0)
        out[t] = (inv.detach().to(torch.float64).flatten(), float(scale))
    return out


def _phimoe_table(rotary: Any, seq_len: int | None) -> tuple[torch.Tensor, float]:
    """What PhimoeRotaryEmbedding.forward uses: inv_freq from ``rope_init_fn(config)`` (no length),
    cos/sin times the config's short_mscale or long_mscale (not ``attention_scaling``)."""
    inv_freq, _ = rotary.rope_init_fn(rotary.config)
    positions = torch.arange(max(int(seq_len or 1), 1))[None]
    cos, _ = rotary(torch.zeros(1, 1, 2, dtype=torch.float64), positions)
    return inv_freq.detach().to(torch.float64).flatten(), float(cos[0, 0, 0])


def _run_forward(rotary: Any, hf_config: Any, types: list[str | None], seq_len: int) -> None:
    x = torch.zeros(1, 1, 2)
    positions = torch.tensor([[seq_len - 1]])
    for t in types:
        try:
            if t is None:
                rotary(x, positions)
            else:
                rotary(x, positions, layer_type=t)
        except Exception:
            continue


def _text_rotate(module: Any) -> Any:
    """The rotate function the text ``apply_rotary_pos_emb`` calls, else ``rotate_half``."""
    apply = getattr(module, "apply_rotary_pos_emb", None)
    if apply is not None:
        for name in re.findall(r"\b(rotate_\w*)\(", _source(apply)):
            func = getattr(module, name, None)
            if callable(func):
                return func
    return getattr(module, "rotate_half", None)


@functools.cache
def pairing_convention(model_type: str) -> str | None:
    """``"half"``, ``"interleaved"`` or ``"complex"`` as the modelling module rotates; None.

    Read from the rotate function the text ``apply_rotary_pos_emb`` calls (``x[..., ::2]`` or
    ``x[..., 0::2]`` pairs neighbours), else the module's ``rotate_half``, or a complex
    ``apply_rotary_emb`` (``view_as_complex``). GLM-4.1V and GLM-OCR define a vision
    ``rotate_half`` (halves) beside the text's ``rotate_half_llm`` (neighbours).
    """
    module = modeling_module(model_type)
    if module is None:
        return None
    rotate = _text_rotate(module)
    if rotate is not None:
        return "interleaved" if "::2" in _source(rotate) else "half"
    if getattr(module, "rotate_every_two", None) is not None:  # GPT-J, CodeGen
        return "interleaved"
    if "view_as_complex" in _source(module):
        return "complex"
    return None


@functools.cache
def builds_only_bidirectional_masks(model_type: str) -> bool:
    """The modelling module builds bidirectional masks and never a causal one (encoders)."""
    module = modeling_module(model_type)
    if module is None:
        return False
    source = _source(module)
    return "create_bidirectional" in source and "create_causal_mask" not in source


_QK_FLAGS = ("use_qk_norm", "qk_layernorm", "qk_norm", "use_qk_layernorm")


def qk_norm(model_type: str, cfg: dict[str, Any]) -> bool | None:
    """Whether q and k are normalised per head before attention (None: not known).

    The config's flag (``use_qk_norm``, ``qk_layernorm``) when it has one; else whether the
    model's attention class builds a ``q_norm``.
    """
    for flag in _QK_FLAGS:
        if flag in cfg and isinstance(cfg[flag], bool):
            return cfg[flag]
    module = modeling_module(model_type)
    if module is None:
        return None
    for name, obj in vars(module).items():
        if name.endswith("Attention") and inspect.isclass(obj) and "Vision" not in name:
            source = _source(obj)
            if "self.q_norm" in source or "self.q_layernorm" in source:
                return True
    return False


_NORM_CALL = re.compile(r"self\.(?:q_norm|q_layernorm|qk_norm)\s*=\s*([\w.]+)\(")


def _call_arguments(source: str, start: int) -> str:
    """The text between the parenthesis opening at ``start - 1`` and its match."""
    depth, i = 1, start
    while i < len(source) and depth:
        depth += {"(": 1, ")": -1}.get(source[i], 0)
        i += 1
    return source[start:i - 1]


@functools.cache
def qk_norm_kind(model_type: str) -> str | None:
    """How the model's text attention normalises q (and k): one of ``QK_NORM_KINDS``.

    Read from the attention class's source in transformers: the arguments of the norm it builds
    for ``q_norm`` / ``q_layernorm`` / ``qk_norm``. A size of ``head_dim`` is a norm per head;
    (or ``hidden_size // num_heads``); ``num_attention_heads * head_dim`` or ``hidden_size`` is one
    norm over the whole projection (``"flat"``); no size or ``with_scale=False`` / a weightless
    class is a norm per head without a learned weight; Cohere's and Chameleon's
    ``(num_attention_heads, head_dim)`` and StableLM's ``…LayerNormPerHead`` are per head with a
    weight per head and feature. None when the model builds no such norm or the call is not
    recognised.

    Parameters
    ----------
    model_type : str
        A transformers model type.

    Returns
    -------
    str or None
    """
    module = modeling_module(model_type)
    if module is None:
        return None
    for name, obj in vars(module).items():
        if not (name.endswith("Attention") and inspect.isclass(obj)) or "Vision" in name:
            continue
        source = _source(obj)
        match = _NORM_CALL.search(source)
        if match is None:
            continue
        cls_name, args = match.group(1), _call_arguments(source, match.end())
        head = "head_dim" in args
        if "with_scale=False" in args or "Weightless" in cls_name or "L2Norm" in cls_name or (
            not head and "hidden_size" not in args and "embed_dim" not in args
            and "heads" not in args
        ):
            return "per-head, no weight"
        if "PerHead" in cls_name or re.search(
            r"\(\s*(config\.num_attention_heads|self\.num_heads)\s*,", args
        ):
            return "per-head, weight per head"
        first = args.split(",")[0]
        if "//" in first and "heads" in first:  # hidden_size // num_heads: the head size
            return "per-head"
        if any(w in first for w in ("num_attention_heads", "num_heads", "hidden_size",
                                    "embed_dim")):
            return "flat"
        if head:
            return "per-head"
        return None
    return None
