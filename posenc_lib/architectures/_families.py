"""Read a config (transformers object or ``config.json`` dict): one :class:`LayerPosition` a layer.

Each supported ``model_type`` has a :class:`_Family` row: its pairing convention, its default
``rope_theta`` and the rules that pick, per layer, RoPE or NoPE, the window or chunk and the query
scale. The rules follow the model code of transformers 5.25 (the parity tests build a tiny random
model of each type and compare).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from .._validation import MAX_PYTHON_ITEMS, check_int
from ..alibi import alibi_slopes, falcon_bf16_bias_error
from ..extension import extended_rope
from ..rope import partial_rotary_dim
from ..scaling import dynamic_ntk_base
from ._plan import LayerPosition, QueryScale, _number, proportional_inv_freq
from ._table import collapse_ranges

__all__ = ["RUNTIME_ONLY_KEYS", "SUPPORTED_MODEL_TYPES", "TEXT_TYPES", "Plan", "position_plan"]

# transformers rope_type -> posenc_lib.extension method.
_METHODS = {
    "default": "none", "linear": "pi", "dynamic": "dynamic", "yarn": "yarn",
    "llama3": "llama3", "longrope": "longrope",
}
_YARN_OPTIONS = ("beta_fast", "beta_slow", "truncate", "attention_factor")
#: What transformers' ``_compute_yarn_parameters`` (5.25) and posenc_lib use when a yarn block
#: leaves a key out; a plan names each one it used.
_YARN_DEFAULTS: dict[str, Any] = {"beta_fast": 32.0, "beta_slow": 1.0, "truncate": True}

_LayerRule = Callable[[dict[str, Any], int, str], bool]


@dataclass(frozen=True)
class _Family:
    convention: str = "half"
    theta: float = 10000.0
    # layer types when the config does not list them: (config, n_layers) -> list
    layer_types: Callable[[dict[str, Any], int], list[str]] | None = None
    # does layer i (of this layer type) apply RoPE?
    uses_rope: _LayerRule | None = None
    # the layer types that get the config's sliding_window (None: every layer, if set)
    window_types: tuple[str, ...] | None = ("sliding_attention",)
    nested: bool = False  # v5 rope_parameters nested per layer type
    alibi: bool = False
    # M-RoPE (Qwen-VL language models): the section when the config omits it, and the layout
    mrope_section: tuple[int, int, int] | None = None
    mrope_interleaved: bool = False


# The local:global period a family's class uses when the config lists no layer_types.
_PERIOD = {"gemma2": 2, "gemma3_text": 6, "gemma4_text": 6, "cohere2": 4, "olmo3": 4,
           "gpt_oss": 2}


def _pattern(name: str, default: int, sliding_first: bool = True) -> Callable[
    [dict[str, Any], int], list[str]
]:
    def rule(cfg: dict[str, Any], n: int) -> list[str]:
        period = int(cfg.get(name) or default)
        return [
            "sliding_attention" if (i + 1) % period else "full_attention" for i in range(n)
        ]
    return rule


def _gemma4_types(cfg: dict[str, Any], n: int) -> list[str]:
    types = _pattern("sliding_window_pattern", _PERIOD["gemma4_text"])(cfg, n)
    types[-1] = "full_attention"  # Gemma 4 forces its last layer to full attention
    return types


def _no_rope_flags(cfg: dict[str, Any], n: int) -> list[int]:
    """``no_rope_layers``: 1 where RoPE IS applied (Llama 4, SmolLM3); default every 4th is 0."""
    flags = cfg.get("no_rope_layers")
    if not flags:
        interval = int(cfg.get("no_rope_layer_interval") or 4)
        flags = [int((i + 1) % interval != 0) for i in range(n)]
    if len(flags) != n:
        raise ValueError(
            f"no_rope_layers must have num_hidden_layers = {n} entries, got {len(flags)}"
        )
    return [int(f) for f in flags]


def _llama4_types(cfg: dict[str, Any], n: int) -> list[str]:
    chunk = cfg.get("attention_chunk_size")
    return [
        "chunked_attention" if flag and chunk is not None else "full_attention"
        for flag in _no_rope_flags(cfg, n)
    ]


def _smollm3_types(cfg: dict[str, Any], n: int) -> list[str]:
    sliding = cfg.get("use_sliding_window") and cfg.get("sliding_window") is not None
    return [
        "sliding_attention" if sliding and not flag else "full_attention"
        for flag in _no_rope_flags(cfg, n)
    ]


def _qwen_types(cfg: dict[str, Any], n: int) -> list[str]:
    sliding = cfg.get("use_sliding_window") and cfg.get("sliding_window") is not None
    first = cfg.get("max_window_layers")
    first = 28 if first is None else int(first)  # Qwen2Config / Qwen3Config's default
    return ["sliding_attention" if sliding and i >= first else "full_attention" for i in range(n)]


def _flagged(cfg: dict[str, Any], i: int, layer_type: str) -> bool:
    return bool(_no_rope_flags(cfg, int(cfg["num_hidden_layers"]))[i])


# head_dim a family's config class fills when the file leaves it out, whatever hidden_size and
# num_attention_heads say (transformers 5.25: Qwen3Config's 128, Gemma's 256...). Without
# transformers a config of these types that leaves head_dim out is refused unless
# hidden_size / num_attention_heads happens to equal it.
_CLASS_HEAD_DIM = {"qwen3": 128, "qwen3_vl_text": 128, "ministral3": 128, "glm": 128,
                   "glm4": 128, "gemma": 256, "gemma2": 256, "gemma3_text": 256,
                   "gemma4_text": 256, "llama4_text": 128, "gpt_oss": 64}

_FAMILIES: dict[str, _Family] = {
    "llama": _Family(window_types=()),
    "mistral": _Family(window_types=None),
    "ministral3": _Family(window_types=None),
    "qwen2": _Family(layer_types=_qwen_types),
    "qwen3": _Family(layer_types=_qwen_types),
    "phi3": _Family(window_types=None),
    "olmo2": _Family(window_types=()),
    "gpt_neox": _Family(window_types=()),
    "gptj": _Family(convention="interleaved", window_types=()),
    "cohere": _Family(convention="interleaved", window_types=()),
    "glm": _Family(convention="interleaved", window_types=()),
    "glm4": _Family(convention="interleaved", window_types=()),
    "glm4_moe": _Family(window_types=()),  # GLM-4.5: partial rotary, NeoX (half) layout
    "gemma": _Family(window_types=()),
    "gemma2": _Family(layer_types=_pattern("sliding_window_pattern", _PERIOD["gemma2"])),
    "gemma3_text": _Family(
        layer_types=_pattern("sliding_window_pattern", _PERIOD["gemma3_text"]), nested=True,
    ),
    "gemma4_text": _Family(layer_types=_gemma4_types, nested=True),
    "cohere2": _Family(
        convention="interleaved",
        layer_types=_pattern("sliding_window_pattern", _PERIOD["cohere2"]),
        uses_rope=lambda cfg, i, t: t == "sliding_attention",
    ),
    "llama4_text": _Family(
        convention="complex", theta=500000.0, layer_types=_llama4_types, uses_rope=_flagged,
        window_types=(),
    ),
    "smollm3": _Family(theta=2000000.0, layer_types=_smollm3_types, uses_rope=_flagged),
    "olmo3": _Family(layer_types=_pattern("sliding_window_pattern", _PERIOD["olmo3"]),
                     nested=True),
    "gpt_oss": _Family(layer_types=_pattern("sliding_window_pattern", _PERIOD["gpt_oss"])),
    "deepseek_v2": _Family(window_types=()),
    "deepseek_v3": _Family(window_types=()),
    # M-RoPE: Qwen2-VL and Qwen2.5-VL split the pairs into contiguous t/h/w blocks (default
    # [16, 24, 24]); Qwen3-VL's rotary class interleaves them whatever the config says
    # (mrope_interleaved is ignored), default [24, 20, 20].
    "qwen2_vl_text": _Family(theta=1e6, layer_types=_qwen_types, mrope_section=(16, 24, 24)),
    "qwen2_5_vl_text": _Family(theta=1e6, layer_types=_qwen_types, mrope_section=(16, 24, 24)),
    "qwen3_vl_text": _Family(theta=5e5, window_types=(), mrope_section=(24, 20, 20),
                             mrope_interleaved=True),
    "bloom": _Family(alibi=True, window_types=()),
    "mpt": _Family(alibi=True, window_types=()),
}

# Multimodal wrappers whose text model is a supported type (read without transformers; with it,
# ``get_text_config`` unwraps any wrapper).
TEXT_TYPES = {
    "gemma3": "gemma3_text", "gemma4": "gemma4_text", "llama4": "llama4_text",
    "qwen2_vl": "qwen2_vl_text", "qwen2_5_vl": "qwen2_5_vl_text", "qwen3_vl": "qwen3_vl_text",
    "mistral3": "ministral3",
}

#: The ``model_type`` values with a family row of their own (read even without transformers);
#: with transformers installed, :func:`position_plan` also reads every other text model type
#: whose attention layers it can describe from the config object and the model's rotary module.
SUPPORTED_MODEL_TYPES: tuple[str, ...] = tuple(sorted({*_FAMILIES, *TEXT_TYPES}))

# Layer types of a hybrid's layers that are not attention (linear attention, Mamba, conv,
# recurrent): they carry no position encoding. Any other type naming attention is attention.
_NOT_ATTENTION = ("linear_attention",)


#: Config keys naming the kernel size of the short causal convolution inside a linear-attention
#: or Mamba layer (Qwen3-Next's Gated DeltaNet, Jamba and Bamba, Nemotron-H, Kimi Linear).
_CONV_TAP_KEYS = ("linear_conv_kernel_dim", "short_conv_kernel_size", "mamba_d_conv",
                  "conv_kernel")


def _conv_taps(cfg: Mapping[str, Any]) -> int | None:
    """Kernel size of a hybrid's in-layer short convolution, from the config; None if not named.

    Parameters
    ----------
    cfg : Mapping
        The config as a dict (top level, then ``linear_attn_config`` as Kimi Linear nests it).

    Returns
    -------
    int or None
        The first positive int among :data:`_CONV_TAP_KEYS`.
    """
    nested = cfg.get("linear_attn_config")
    for node in (cfg, nested if isinstance(nested, Mapping) else {}):
        for key in _CONV_TAP_KEYS:
            value = node.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None


def _is_attention(layer_type: str) -> bool:
    # "hybrid" (Zamba 2, Falcon-H1): attention beside a Mamba mixer in the same layer.
    return layer_type in ("attention", "hybrid") or (
        layer_type.endswith("attention") and layer_type not in _NOT_ATTENTION
    )


# How the family rows normalise q and k when their config asks for it (read without
# transformers; with it, from the attention class, ``_rotary.qk_norm_kind``).
_QK_NORM_KIND = {"llama4_text": "per-head, no weight", "olmo2": "flat", "olmo3": "flat",
                 "cohere": "per-head, weight per head"}

# Types whose attention always normalises q and k, with no config key (transformers 5.25).
_ALWAYS_QK_NORM = {"olmo2": "flat", "olmo3": "flat", "qwen3": "per-head",
                   "gemma3_text": "per-head"}

# Types whose attention applies RoPE on windowed layers only once windows are configured (read
# from their modelling code in transformers 5.25: ``if self.sliding_window is None or
# self.is_sliding``, ``force_rope``, ``position_embeddings if layer_type == "sliding_attention"``).
#: Types whose attention always de-interleaves its rotary pairs (transformers 5.25 calls
#: ``apply_rotary_pos_emb_interleave`` with no ``rope_interleave`` switch): their weights pair
#: adjacent features, the layout a port must keep.
ALWAYS_INTERLEAVED = frozenset({"axk2", "bailing_hybrid", "deepseek_v32", "dots3_note",
                                "dots3_note_text", "glm_moe_dsa", "hy_v4", "hy_v4_vl",
                                "hy_v4_vl_text", "longcat_flash", "mistral_large4",
                                "mistral_large4_text"})
#: Types whose attention passes softmax scale 1 whatever the head size (transformers 5.25: Gemma
#: 4's attention sets ``self.scaling = 1.0``, its q and k being RMS-normalised); not a config key.
UNIT_SOFTMAX_SCALE_TYPES = frozenset({"gemma4_text", "gemma4_unified_text",
                                      "embedding_gemma2_text"})
_SLIDING_ROPE_ONLY = ("afmoe", "cohere2_moe", "exaone4", "exaone_moe", "lara_mini")


class Plan(list):  # type: ignore[type-arg]
    """A list of :class:`LayerPosition`, one per layer, with what the reader should know.

    Attributes
    ----------
    model_type : str
        The text model's type.
    notes : list of str
        Wrappers unwrapped, types read as another, keys defaulted (without transformers).
    config : dict
        The text model's config as read (with transformers: every default filled by its class),
        e.g. for ``num_key_value_heads`` when sizing a KV cache.
    """

    model_type: str = ""
    notes: list[str]
    config: dict[str, Any]

    def __init__(self, layers: list[LayerPosition], model_type: str, notes: list[str],
                 config: dict[str, Any] | None = None) -> None:
        super().__init__(layers)
        self.model_type = model_type
        self.notes = list(notes)
        self.config = dict(config or {})


def _first(cfg: Mapping[str, Any], *names: str, default: Any = None) -> Any:
    for name in names:
        if cfg.get(name) is not None:
            return cfg[name]
    return default


def _head_dim(cfg: dict[str, Any]) -> int:
    if cfg.get("head_dim"):
        return int(cfg["head_dim"])
    if cfg.get("attention_head_dim"):  # Zamba2: its attention is twice the hidden size wide
        return int(cfg["attention_head_dim"])
    hidden = _first(cfg, "hidden_size", "n_embd", "d_model")
    heads = _first(cfg, "num_attention_heads", "n_head", "n_heads")
    if hidden is None or heads is None:
        raise ValueError("config needs head_dim, or hidden_size and num_attention_heads")
    return int(hidden) // int(heads)


def _rope_block(
    cfg: dict[str, Any], family: _Family, layer_type: str, defaulted: list[str] | None = None,
) -> dict[str, Any]:
    """The layer type's ``rope_parameters`` with ``rope_type``, ``rope_theta`` filled in.

    ``defaulted`` (reading a raw dict without transformers) collects the keys filled in.
    """
    params = cfg.get("rope_parameters") or cfg.get("rope_scaling") or {}
    params = dict(params)
    nested = any(isinstance(v, Mapping) for v in params.values())
    if nested:
        params = dict(params.get(layer_type) or {})
    elif family.nested:
        # A transformers 4 config.json: its rope_scaling is for the global layers only (Gemma 3,
        # OLMo 3); Gemma 3's local layers take rope_local_base_freq.
        if layer_type != "full_attention":
            if cfg.get("model_type") == "olmo3":
                theta = _needs(cfg, defaulted, "rope_theta", family.theta)
            else:
                theta = _needs(cfg, defaulted, "rope_local_base_freq", 10000.0)
            params = {"rope_type": "default", "rope_theta": theta}
    if "rope_type" not in params:
        params["rope_type"] = params.get("type", "default")
    if params["rope_type"] == "mrope":  # transformers 4 Qwen-VL configs: plain RoPE frequencies
        params["rope_type"] = "default"
    if "rope_theta" not in params:
        params["rope_theta"] = _first(cfg, "rope_theta", "rotary_emb_base")
        if params["rope_theta"] is None:
            if defaulted is not None:
                raise ValueError(
                    f"config of model_type {cfg.get('model_type')!r} has no rope_theta; "
                    "transformers (not installed) would fill the model class's default: "
                    "install transformers or add it"
                )
            params["rope_theta"] = family.theta
    if "partial_rotary_factor" not in params:
        partial = _first(cfg, "partial_rotary_factor", "rotary_pct")
        if partial is None and cfg.get("model_type") == "gpt_neox":
            partial = _needs(cfg, defaulted, "rotary_pct", 0.25)
        if partial is not None:
            params["partial_rotary_factor"] = partial
    kind = params["rope_type"]
    if defaulted is not None and kind == "yarn":
        # transformers' _compute_yarn_parameters reads these with defaults; they move the ramp
        missing = [f"{key} = {value if isinstance(value, bool) else _number(value)}"
                   for key, value in _YARN_DEFAULTS.items() if params.get(key) is None]
        if missing:
            defaulted.append(", ".join(missing)
                             + (" (YaRN's default)" if len(missing) == 1 else " (YaRN's defaults)"))
    if defaulted is not None and kind == "llama3":
        for key in ("low_freq_factor", "high_freq_factor", "original_max_position_embeddings"):
            if params.get(key) is None:
                raise ValueError(
                    f"config of model_type {cfg.get('model_type')!r}: its llama3 rope block has "
                    f"no {key}, which transformers requires; add it"
                )
    if kind in ("yarn", "llama3", "longrope"):
        # Phi-3 keeps the training length outside the rope block, and it wins there.
        original = _first(cfg, "original_max_position_embeddings") if "phi3" == cfg.get(
            "model_type") else None
        in_block = _first(params, "original_max_position_embeddings")
        if defaulted is not None and kind == "longrope" and not (original or in_block):
            raise ValueError(
                f"config of model_type {cfg.get('model_type')!r}: its longrope block has no "
                "original_max_position_embeddings (nor the top level), and the short/long "
                "switch and the cos/sin factor depend on it; transformers (not installed) "
                "would fill the model class's default: install transformers or add it"
            )
        if defaulted is not None and not (original or in_block):
            defaulted.append("original_max_position_embeddings = max_position_embeddings "
                             f"({cfg.get('max_position_embeddings')!r})")
        params["original_max_position_embeddings"] = original or _first(
            params, "original_max_position_embeddings",
            default=cfg.get("max_position_embeddings"),
        )
    return params


def _rope_entry_fields(
    cfg: dict[str, Any], family: _Family, layer_type: str, head_dim: int, seq_len: int | None,
    table: tuple[torch.Tensor, float] | None = None, defaulted: list[str] | None = None,
) -> dict[str, Any]:
    """RoPE fields of a layer: from the model's rotary module (``table``) when given."""
    params = _rope_block(cfg, family, layer_type, defaulted)
    rope_type = params["rope_type"]
    base = float(params["rope_theta"])
    scaling = _scaling_text(params, seq_len)
    if rope_type == "dynamic" and seq_len is not None:
        scaling = _dynamic_text(params, cfg, head_dim, base, seq_len)
    if table is not None:
        inv_freq, attention = table
        rotary_dim = head_dim if rope_type == "proportional" else 2 * int(inv_freq.shape[0])
        return dict(rope_type=rope_type, base=base, rotary_dim=rotary_dim, inv_freq=inv_freq,
                    attention_factor=float(attention), scaling=scaling)
    partial = float(params.get("partial_rotary_factor", 1.0))
    if cfg.get("model_type") == "gptj":
        rotary_dim = int(cfg.get("rotary_dim") or head_dim)
    elif rope_type == "proportional":
        rotary_dim = head_dim
    else:
        rotary_dim = partial_rotary_dim(head_dim, partial)
    factor = params.get("factor")
    if rope_type == "proportional":
        inv_freq = proportional_inv_freq(head_dim, base, partial) / float(factor or 1.0)
        return dict(
            rope_type=rope_type, base=base, rotary_dim=rotary_dim, inv_freq=inv_freq,
            attention_factor=1.0, scaling=scaling,
        )
    if rope_type not in _METHODS:
        raise ValueError(
            f"rope_type {rope_type!r} is not supported; supported: "
            f"{', '.join(sorted([*_METHODS, 'proportional']))}"
        )
    method = _METHODS[rope_type]
    original = params.get("original_max_position_embeddings")
    if factor is None and rope_type in ("yarn", "longrope"):
        factor = cfg["max_position_embeddings"] / original
    options: dict[str, Any] = {}
    if rope_type == "yarn":
        options = {k: params[k] for k in _YARN_OPTIONS if params.get(k) is not None}
        fast, slow = options.get("beta_fast", 32.0), options.get("beta_slow", 1.0)
        if float(fast) == float(slow):
            # Kimi K2 (beta_fast = beta_slow = 1): transformers accepts it (its ramp widens an
            # empty range by 0.001). Rounded to whole pair indices the two correction points
            # then straddle the same index as with fast a hair above slow.
            options["beta_fast"] = float(fast) * (1 + 1e-12)
        # transformers reads truncate from the top level of rope_parameters
        if params.get("mscale") and params.get("mscale_all_dim"):
            options["mscale"] = params["mscale"]
            options["mscale_all_dim"] = params["mscale_all_dim"]
    elif rope_type == "llama3":
        options = {k: params[k] for k in ("low_freq_factor", "high_freq_factor") if k in params}
    elif rope_type == "longrope":
        options = {k: params[k] for k in ("short_factor", "long_factor") if k in params}
        if params.get("attention_factor") is not None:
            options["attention_factor"] = params["attention_factor"]
    if rope_type == "dynamic":
        original = cfg.get("max_position_embeddings")
    inv_freq, attention = extended_rope(
        method, dim=rotary_dim, base=base, factor=float(factor or 1.0),
        original_max_position=original, seq_len=seq_len, **options,
    )
    return dict(
        rope_type=rope_type, base=base, rotary_dim=rotary_dim, inv_freq=inv_freq,
        attention_factor=float(attention), scaling=scaling,
    )


def _dynamic_text(params: Mapping[str, Any], cfg: Mapping[str, Any], head_dim: int,
                  base: float, seq_len: int) -> str:
    """Dynamic NTK at ``seq_len``: the base the model's table uses there (transformers grows it
    from ``max_position_embeddings``, with the rotary dims of the head)."""
    factor = float(params.get("factor") or 1.0)
    length = cfg.get("max_position_embeddings")
    if not isinstance(length, int) or isinstance(length, bool) or length < 1:
        raise ValueError("rope_type 'dynamic' needs max_position_embeddings (an integer >= 1), "
                         f"got {length!r}")
    dim = partial_rotary_dim(head_dim, float(params.get("partial_rotary_factor", 1.0)))
    grown = dynamic_ntk_base(dim, base, factor, seq_len, length)
    if seq_len <= length:
        return (f"dynamic NTK ×{factor:g} (base unchanged at L = {_number(seq_len)} ≤ "
                f"{_number(length)})")
    return (f"dynamic NTK ×{factor:g} (base {_number(base)} → {_number(round(grown))} at "
            f"L = {_number(seq_len)})")


def _mscale_squared(params: Mapping[str, Any], cfg: dict[str, Any]) -> float:
    """DeepSeek's softmax-scale factor ``m(s, mscale_all_dim)²`` (as yarn_apply_mscale)."""
    if params.get("rope_type", "default") == "default" or not params.get("mscale_all_dim"):
        return 1.0
    factor = float(params["factor"])
    m = 1.0 if factor <= 1 else 0.1 * float(params["mscale_all_dim"]) * math.log(factor) + 1.0
    return m * m


def _fill_class_defaults(cfg: dict[str, Any], model_type: str, defaulted: list[str]) -> None:
    """Without transformers: fill the keys a family's class would fill, naming each in
    ``defaulted``, or refuse one whose default would change the spectrum unseen.

    Raises
    ------
    ValueError
        ``head_dim`` absent where the family's class fills a fixed head size (Qwen3's 128,
        Gemma's 256...) that differs from ``hidden_size / num_attention_heads``.
    """
    mla = model_type in ("deepseek_v2", "deepseek_v3") or cfg.get("qk_rope_head_dim")
    if cfg.get("head_dim") is None and not mla:  # MLA's head is qk_nope + qk_rope, named later
        derived = _head_dim(cfg)
        fixed = _CLASS_HEAD_DIM.get(model_type)
        if fixed is not None and fixed != derived:
            raise ValueError(
                f"config of model_type {model_type!r} has no head_dim: its config class fills "
                f"{fixed}, not hidden_size / num_attention_heads = {derived}; transformers (not "
                "installed) would use the class's value: install transformers or add head_dim"
            )
        defaulted.append(f"head_dim = hidden_size / num_attention_heads = {derived}")
    if not cfg.get("layer_types"):
        if model_type in _PERIOD and cfg.get("sliding_window_pattern") is None:
            defaulted.append(f"sliding_window_pattern = {_PERIOD[model_type]} (the class's "
                             "local:global period)")
        if model_type in ("llama4_text", "smollm3") and not cfg.get("no_rope_layers"):
            interval = _needs(cfg, defaulted, "no_rope_layer_interval", 4)
            defaulted.append(f"no_rope_layers = every {interval}th layer NoPE "
                             f"(from no_rope_layer_interval = {interval})")
        if (model_type in ("qwen2", "qwen3", "qwen2_vl_text", "qwen2_5_vl_text")
                and cfg.get("use_sliding_window") and cfg.get("sliding_window") is not None):
            _needs(cfg, defaulted, "max_window_layers", 28)
    if model_type == "llama4_text":
        cfg["attention_chunk_size"] = _needs(cfg, defaulted, "attention_chunk_size", 8192)
        cfg["attn_temperature_tuning"] = _needs(cfg, defaulted, "attn_temperature_tuning", True)
        cfg["use_qk_norm"] = _needs(cfg, defaulted, "use_qk_norm", True)
    if model_type == "deepseek_v3":
        cfg["rope_interleave"] = _needs(cfg, defaulted, "rope_interleave", True)
    if model_type == "gemma4_text":
        _needs(cfg, defaulted, "global_head_dim", 512)
    family = _FAMILIES[model_type]
    if family.mrope_section is not None:
        params = cfg.get("rope_parameters") or cfg.get("rope_scaling") or {}
        if isinstance(params, Mapping) and not params.get("mrope_section"):
            defaulted.append(f"mrope_section = {list(family.mrope_section)}")


def _needs(cfg: dict[str, Any], defaulted: list[str] | None, key: str, value: Any) -> Any:
    """``cfg[key]`` or ``value``; without transformers, a defaulted key is written down."""
    if cfg.get(key) is not None:
        return cfg[key]
    if defaulted is not None and value is not None:
        defaulted.append(f"{key} = {value!r}")
    return value


def _rope_per_type(cfg: dict[str, Any], i: int, layer_type: str) -> bool:
    """A nested ``rope_parameters`` whose block for this layer type is None: a NoPE layer."""
    params = cfg.get("rope_parameters")
    return not (isinstance(params, Mapping) and layer_type in params and params[layer_type] is None)


def _rope_where_theta(cfg: dict[str, Any], i: int, layer_type: str) -> bool:
    """``layer_rope_theta[i]`` zero or None: a NoPE layer."""
    return bool(cfg["layer_rope_theta"][i])


def _sliding_rope(cfg: dict[str, Any], i: int, layer_type: str) -> bool:
    """RoPE on windowed layers only, once the model has windows (EXAONE 4, Command A MoE…)."""
    return layer_type == "sliding_attention" or not cfg.get("sliding_window") or bool(
        cfg.get("force_rope")
    )


def _generic_family(model_type: str, cfg: dict[str, Any], layer_types: list[str]) -> _Family:
    """A family row read from the config and the modelling module (transformers installed)."""
    from ._rotary import pairing_convention

    convention = pairing_convention(model_type) or "half"
    uses_rope: _LayerRule | None = None
    if cfg.get("no_rope_layers"):
        uses_rope = _flagged
    elif isinstance(cfg.get("layer_rope_theta"), list):
        uses_rope = _rope_where_theta
    elif model_type in _SLIDING_ROPE_ONLY:
        uses_rope = _sliding_rope
    elif isinstance(cfg.get("rope_parameters"), Mapping) and any(
        v is None for v in cfg["rope_parameters"].values()
    ):
        uses_rope = _rope_per_type
    if "sliding_attention" in layer_types or cfg.get("layer_types"):
        window_types: tuple[str, ...] | None = ("sliding_attention",)
    elif cfg.get("sliding_window") and cfg.get("use_sliding_window", True) is not False:
        window_types = None
    else:
        window_types = ()
    return _Family(convention=convention, uses_rope=uses_rope, window_types=window_types)


def _hybrid_layer_types(cfg: dict[str, Any], n: int) -> list[str] | None:
    """Layer kinds of hybrids that do not list ``layer_types`` (Jamba, Bamba, Zamba, Nemotron-H)."""
    blocks = cfg.get("layers_block_type")
    if isinstance(blocks, list) and len(blocks) == n:
        return ["full_attention" if b in ("attention", "hybrid", "*") else str(b) for b in blocks]
    period, offset = cfg.get("attn_layer_period"), cfg.get("attn_layer_offset")
    if period and offset is not None:
        return ["full_attention" if i % int(period) == int(offset) else "mamba" for i in range(n)]
    indices = cfg.get("attn_layer_indices")
    if isinstance(indices, list):
        return ["full_attention" if i in indices else "mamba" for i in range(n)]
    return None


def _bidirectional(cfg: dict[str, Any], model_type: str, hf: Any) -> bool:
    """Encoders, EmbeddingGemma (``use_bidirectional_attention``), Gemma 4's ``"all"``."""
    flag = cfg.get("use_bidirectional_attention")
    if flag is True or flag == "all" or cfg.get("is_causal") is False:
        return True
    if hf is None:
        return False
    from transformers.models.auto.modeling_auto import MODEL_FOR_MASKED_LM_MAPPING_NAMES

    if model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES and not cfg.get("is_decoder"):
        return True
    from ._rotary import builds_only_bidirectional_masks

    return builds_only_bidirectional_masks(model_type)


def _scaling_text(params: Mapping[str, Any], seq_len: int | None) -> str | None:
    """The rope block's scaling in words, with its factors and the table in use."""
    kind = params.get("rope_type", "default")
    factor = params.get("factor")
    original = params.get("original_max_position_embeddings")
    orig = "?" if original is None else f"{int(original):,}".replace(",", " ")
    if kind in (None, "default"):
        return None
    if kind == "linear":
        return f"linear ×{float(factor or 0):g}"
    if kind == "dynamic":  # the base at --seq-len is added by _rope_entry_fields
        return f"dynamic NTK ×{float(factor or 0):g} (static table: pass --seq-len)"
    if kind == "yarn":
        text = (f"yarn ×{float(factor or 0):g}, β {float(params.get('beta_fast') or 32):g}/"
                f"{float(params.get('beta_slow') or 1):g}, original {orig}")
        if params.get("truncate") is False:
            text += ", no truncation"
        return text
    if kind == "llama3":
        low = float(params.get("low_freq_factor", 1))
        return (f"llama3 ×{float(factor or 0):g}, low/high {low:g}"
                f"/{float(params.get('high_freq_factor', 4)):g}, original {orig}")
    if kind == "longrope":
        if seq_len is None:
            return f"longrope short factors (L ≤ {orig}; pass --seq-len for longer)"
        long = original is not None and seq_len > int(original)
        sign = ">" if long else "≤"
        return (f"longrope {'long' if long else 'short'} factors "
                f"(L = {_number(seq_len)} {sign} {orig})")
    if kind == "proportional":
        return None if factor in (None, 1, 1.0) else f"proportional ×{float(factor):g}"
    return str(kind)


#: Types whose attention the plan cannot describe yet (checked in transformers 5.25), with why.
REFUSED_TYPES: dict[str, str] = {
    "nanochat": "its rotate_half turns pairs the other way (cat(x2, -x1)), which the plan's "
    "conventions do not express",
    "deepseek_v4": "its compressed attention layers build keys the plan does not model",
    "hrm_text": "its recurrent reasoning modules reuse attention layers out of order",
    "recurrent_gemma": "its block types and layer_types disagree in transformers' config",
    "moshi": "its depth decoder's attention takes no rotary embedding from the model",
    "doge": "its dynamic-mask attention is not a window the plan can state",
    "flint": "its windowed and global layers use position in ways not yet read from its code",
    "codegen": "its fused q/k/v projection is split per model-parallel shard before the "
    "rotation, which the plan has not been checked against",
    "longcat_flash": "each decoder layer holds two attention blocks (its num_hidden_layers is "
    "2·num_layers), which a plan of one entry per layer does not describe",
    "mllama_text_model": "its cross_attention_layers attend to image tokens without rotation, "
    "beside causal RoPE self-attention layers; the plan has no kind for cross-attention",
    "roformer": "it rotates q and k with its own sinusoidal table inside each self-attention, "
    "not with a rotary module the plan reads",
    "xlnet": "its relative attention adds position terms inside every layer",
    "mpnet": "it adds a T5-style relative position bias inside every layer",
    "deberta": "its disentangled attention adds relative position terms inside every layer",
    "deberta-v2": "its disentangled attention adds relative position terms inside every layer",
    "sew-d": "its disentangled attention adds relative position terms inside every layer",
    "transfo-xl": "its relative attention adds position terms inside every layer",
}

#: Config settings that put relative position terms inside attention (no rotary module), with
#: what they do: a plan would call such a model's layers position-free.
_RELATIVE_SETTINGS: dict[str, str] = {
    "relative_attention_num_buckets": "a T5-style bucketed relative bias inside every layer",
    "relative_attention": "relative position terms inside every layer",
}


def position_plan(config: object, *, seq_len: int | None = None) -> Plan:
    """What every attention layer of a model does with position, read as the model reads it.

    With transformers installed the config is the model's own config object
    (``posenc_lib.architectures._resolve.resolve``: defaults filled by the model class, a
    multimodal wrapper unwrapped to its text model), and the frequencies and cos/sin factor are
    read from the model's rotary module. Without transformers the dict is read as written; a
    RoPE config without ``rope_theta`` is refused and every other defaulted key is listed in
    :attr:`Plan.notes`.

    Parameters
    ----------
    config : transformers config or dict
        A ``PretrainedConfig`` or the dict of a ``config.json`` (transformers 4 ``rope_scaling``
        or 5 ``rope_parameters``, flat or nested per layer type). A dict is rebuilt by its model
        class: pass a config object, not ``to_dict()`` output, for EmbeddingGemma-style models
        whose class rewrites the window.
    seq_len : int, optional
        Current length, for the two length-dependent types: ``dynamic`` (NTK base grows past the
        training length) and ``longrope`` (long factors past it, short ones otherwise).

    Returns
    -------
    Plan
        One :class:`LayerPosition` per layer, in order; ``.notes`` and ``.model_type``.

    Raises
    ------
    ValueError
        A type that cannot be described (named in the message), a missing layer count or head
        size, a ``rope_type`` the library does not know, a bad ``rope_theta`` or YaRN block.
    TypeError
        ``config`` is neither a dict nor a config object.
    """
    from ._rotary import qk_norm, qk_norm_kind, rotary_module_tables

    if seq_len is not None:
        seq_len = check_int(seq_len, "seq_len", minimum=0, what="a non-negative integer")
    resolved, n = _preflight(config)
    cfg, hf, model_type = dict(resolved.cfg), resolved.hf_config, resolved.model_type
    cfg["num_hidden_layers"] = n
    notes = list(resolved.notes)
    if model_type in UNIT_SOFTMAX_SCALE_TYPES:
        notes.append("attention is unscaled: transformers passes softmax scale 1, not "
                     "1/sqrt(head_dim) (q and k are RMS-normalised)")
    if model_type in _unverified_types():
        notes.append("not verified against transformers' layers (the test harness cannot yet "
                     "build or capture its tiny model)")
    elif hf is not None and model_type not in _census():
        notes.append(f"not verified against transformers' layers: {model_type!r} is outside the "
                     "census of text models with a rotary module, so this plan is read from "
                     "the config and its class's defaults only")
    defaulted: list[str] | None = None if hf is not None else []
    family = _FAMILIES.get(model_type)
    if family is None and hf is None:
        raise ValueError(
            f"model_type {model_type!r} is not supported by position_plan without transformers; "
            f"supported: {', '.join(SUPPORTED_MODEL_TYPES)}"
        )
    if defaulted is not None:
        _fill_class_defaults(cfg, model_type, defaulted)
    if cfg.get("layer_types"):
        layer_types = [str(t) for t in cfg["layer_types"]]
    elif family is not None and family.layer_types is not None:
        layer_types = family.layer_types(cfg, n)
    else:
        layer_types = _hybrid_layer_types(cfg, n) or ["full_attention"] * n
    if len(layer_types) != n:
        raise ValueError(
            f"layer_types must have num_hidden_layers = {n} entries, got {len(layer_types)}"
        )
    if family is None:
        family = _generic_family(model_type, cfg, layer_types)
    if model_type == "falcon" and cfg.get("alibi"):
        # transformers' FalconAttention skips the rotation when config.alibi is true and
        # FalconModel adds the ALiBi bias divided by sqrt(head_dim) to the mask.
        head = _head_dim(cfg)
        layers = _alibi_plan(cfg, model_type, n, layer_types, bias_scale=head**-0.5)
        notes.append(f"alibi = true: no rotary; transformers divides the ALiBi bias by "
                     f"sqrt(head_dim) = sqrt({head}), so the slopes here are "
                     f"2^(-8h/H) / {head**0.5:.4g}")
        length = int(cfg.get("max_position_embeddings") or 2048)
        heads = int(_first(cfg, "num_attention_heads", "n_head"))
        gap = falcon_bf16_bias_error(heads, head, length)
        notes.append(f"transformers' Falcon builds the ALiBi bias in bfloat16 whatever the "
                     f"model's dtype (its build_alibi_tensor): over "
                     f"{_number(length)} keys it is up to {gap:.3g} logits from the exact "
                     f"slope·distance/sqrt(head_dim) these slopes give")
        return _finish(Plan(layers, model_type, notes, cfg), config)
    if family.alibi:
        layers = _alibi_plan(cfg, model_type, n, layer_types, notes=notes, raw=config)
        return _finish(Plan(layers, model_type, notes, cfg), config)
    _refuse_unread_alibi(cfg, model_type)
    head_dim = _head_dim(cfg)
    if cfg.get("qk_rope_head_dim") and cfg.get("qk_nope_head_dim"):  # MLA: every layer's q/k
        head_dim = int(cfg["qk_nope_head_dim"]) + int(cfg["qk_rope_head_dim"])
    tables = rotary_module_tables(hf, seq_len) if hf is not None else None
    has_rope = True
    if hf is not None and tables is None and model_type not in _FAMILIES and not (
        _first(cfg, "rope_theta") or _blocks(cfg)
    ):
        has_rope = False
        notes.append("no rotary module and no rope parameters: attention layers add no "
                     "position (order reaches them from elsewhere: embeddings before the first "
                     "layer, a hybrid's recurrent layers, or the causal mask alone)")
    if cfg.get("mla_use_nope") is True:
        # Kimi Linear: its MLA layers have no rotary module, whatever rope_theta says.
        has_rope = False
        notes.append("mla_use_nope = true (a key of the released config and its remote code; "
                     "transformers' KimiLinear class builds no rotary module): the MLA "
                     "attention layers rotate nothing")
    elif model_type == "kimi_linear":
        # transformers' class deletes its rotary module whatever the file says; only the remote
        # code reads mla_use_nope, so a file without it (or with false) differs there.
        has_rope = False
        notes.append(f"kimi_linear: transformers' KimiLinear class builds no rotary module, so "
                     f"the MLA attention layers rotate nothing (mla_use_nope = "
                     f"{cfg.get('mla_use_nope')!r} here; the remote code rotates unless it is "
                     f"true)")
    kind = cfg.get("position_embedding_type", "rope")
    if hf is not None and not any(w in str(kind) for w in ("rope", "rotary")) and (
        _reads_position_embedding_type(model_type)
    ):
        # Granite 4.0 hybrids: position_embedding_type None switches the rotary module off.
        has_rope = False
        notes.append(f"position_embedding_type = {kind!r}: attention layers rotate nothing")
    window = cfg.get("sliding_window")
    if window is None and hf is not None:
        try:  # a property, not a key (ModernBERT: half its local_attention)
            window = getattr(hf, "sliding_window", None)
        except Exception:
            window = None
        window = window if isinstance(window, int) and not isinstance(window, bool) else None
    if "sliding_window" not in cfg and defaulted is not None and family.window_types != () and any(
        family.window_types is None or t in family.window_types for t in layer_types
    ):
        defaulted.append("sliding_window = None (no window)")
    if cfg.get("use_sliding_window") is False or (
        model_type in ("qwen2", "qwen3", "smollm3", "qwen2_vl_text", "qwen2_5_vl_text")
        and not cfg.get("use_sliding_window")
    ):
        window = None
    bidirectional = _bidirectional(cfg, model_type, hf)
    if hf is None and bidirectional and window and model_type == "gemma3_text":
        # Gemma3TextConfig (EmbeddingGemma) stores (W // 2) + 1 when use_bidirectional_attention:
        # its mask keeps |m − n| < W // 2 + 1.
        window = int(window) // 2 + 1
        notes.append(f"use_bidirectional_attention: window |m−n| < {window} (transformers' "
                     "Gemma3TextConfig halves sliding_window)")
    if bidirectional and window and model_type not in _FAMILIES:
        # transformers' bidirectional window keeps |m − n| <= sliding_window: W + 1 in the
        # plan's "|m − n| < window" (Gemma 3's class already stores its window that way).
        window = int(window) + 1
    norm = qk_norm(model_type, cfg) if hf is not None else next(
        (cfg[k] for k in ("use_qk_norm", "qk_layernorm") if isinstance(cfg.get(k), bool)),
        True if model_type in _ALWAYS_QK_NORM else None,
    )
    norm_kind = None
    if norm:
        norm_kind = qk_norm_kind(model_type) if hf is not None else _QK_NORM_KIND.get(
            model_type, _ALWAYS_QK_NORM.get(model_type))
    plan: list[LayerPosition] = []
    cache: dict[str, dict[str, Any]] = {}
    for i, layer_type in enumerate(layer_types):
        if not _is_attention(layer_type):
            taps = (None if layer_type in ("conv", "mlp", "moe") else _conv_taps(cfg))
            plan.append(LayerPosition(layer=i, kind="no_attention", layer_type=layer_type,
                                      head_dim=head_dim, conv_taps=taps))
            continue
        layer_head_dim = head_dim
        if model_type == "gemma4_text" and layer_type == "full_attention":
            layer_head_dim = int(_gemma4_override(cfg, i, "head_dim", head_dim))
        elif isinstance(cfg.get("per_layer_config"), Mapping):  # EmbeddingGemma 2's globals
            per_layer = cfg["per_layer_config"]
            override = next((per_layer[k] for k in (i, str(i)) if k in per_layer), None)
            if isinstance(override, Mapping) and override.get("head_dim"):
                layer_head_dim = int(override["head_dim"])
        uses_rope = has_rope and (family.uses_rope is None or family.uses_rope(cfg, i, layer_type))
        entry: dict[str, Any] = dict(layer=i, layer_type=layer_type, head_dim=layer_head_dim,
                                     bidirectional=bidirectional, qk_norm=norm,
                                     qk_norm_kind=norm_kind)
        if family.window_types is None or layer_type in family.window_types:
            entry["window"] = int(window) if window else None
        if layer_type == "chunked_attention":
            entry["chunk"] = int(cfg["attention_chunk_size"])
        if model_type == "gpt_oss":
            entry["sinks"] = True
        params = _rope_block(cfg, family, layer_type, defaulted if uses_rope else None)
        if params.get("llama_4_scaling_beta") is not None:
            entry["query_scale"] = QueryScale(
                "llama_4_scaling_beta", float(params["llama_4_scaling_beta"]),
                int(params["original_max_position_embeddings"]),
            )
        if not uses_rope:
            if model_type == "llama4_text" and cfg.get("attn_temperature_tuning", True):
                entry["query_scale"] = QueryScale(
                    "llama4", float(_needs(cfg, defaulted, "attn_scale", 0.1)),
                    int(_needs(cfg, defaulted, "floor_scale", 8192)),
                )
            if model_type == "llama4_text":
                # Llama 4 normalises q and k on its RoPE layers only
                entry["qk_norm"], entry["qk_norm_kind"] = False, None
            plan.append(LayerPosition(kind="nope", **entry))
            continue
        table = None
        if tables is not None:
            table = tables.get(layer_type, tables.get(None))
        if model_type in ("deepseek_v2", "deepseek_v3") or cfg.get("qk_rope_head_dim"):
            rope_dim = int(_needs(cfg, defaulted, "qk_rope_head_dim", 64))
            nope_dim = int(_needs(cfg, defaulted, "qk_nope_head_dim", 128))
            rope_cfg = {**cfg, "head_dim": rope_dim}
            fields = _rope_entry_fields(rope_cfg, family, layer_type, rope_dim, seq_len, table,
                                        defaulted)
            # V2 rotates adjacent pairs as complex numbers; V3 adjacent pairs too when
            # rope_interleave (its checkpoints), else transformers' half layout.
            if model_type == "deepseek_v2":
                convention = "complex"
            elif model_type in ALWAYS_INTERLEAVED:
                convention = "interleaved"
            elif "rope_interleave" in cfg or model_type == "deepseek_v3":
                convention = "interleaved" if cfg.get("rope_interleave", True) else "half"
            else:
                convention = family.convention
            plan.append(LayerPosition(
                kind="rope", rotary_offset=nope_dim, convention=convention,
                softmax_scale_factor=_mscale_squared(params, cfg),
                **{**entry, "head_dim": nope_dim + rope_dim}, **fields,
            ))
            continue
        key = f"{layer_type}/{layer_head_dim}"
        if key not in cache:
            cache[key] = _rope_entry_fields(
                {**cfg, "head_dim": layer_head_dim}, family, layer_type, layer_head_dim, seq_len,
                table, defaulted,
            )
        if family.mrope_section is not None:
            section = params.get("mrope_section") or family.mrope_section
            entry["mrope_section"] = tuple(int(s) for s in section)
            entry["mrope_interleaved"] = family.mrope_interleaved
        plan.append(LayerPosition(
            kind="rope", convention=family.convention, **entry, **cache[key]
        ))
    if model_type == "phimoe" and tables is not None and plan and plan[0].kind == "rope" and (
        plan[0].rope_type == "longrope"
    ):
        plan = _phimoe_longrope(plan, cfg, notes)
    if tables is not None:
        plan = _base_from_table(plan, notes)
        plan = _ntk_alpha(plan, cfg, model_type, notes)
    if isinstance(config, Mapping):
        _note_unused_bases(config, plan, notes)
    if defaulted:
        notes.append("keys not in the config, defaulted: " + ", ".join(dict.fromkeys(defaulted)))
    return _finish(Plan(plan, model_type, notes, cfg), config)


#: Config keys that change attention at run time but are not part of a position plan, with what
#: they do; a plan whose config sets one carries a note instead of passing over it in silence
#: (a multiplier set to 1 changes nothing and gets none).
RUNTIME_ONLY_KEYS: dict[str, str] = {
    "attn_logit_softcapping": "attention logits pass through c·tanh(logit/c), which bounds "
    "every logit, its position terms included",
    "query_pre_attn_scalar": "the softmax scale is 1/sqrt(query_pre_attn_scalar), not "
    "1/sqrt(head_dim)",
    "attention_multiplier": "the softmax scale is this number, not 1/sqrt(head_dim)",
    "key_multiplier": "every key is multiplied by this number before the rotation (Falcon-H1), "
    "so every logit is too",
    "attention_in_multiplier": "the attention layer's input is multiplied by this number "
    "(Falcon-H1): q and k both scale with it, so without biases every logit scales by its square",
    "global_attention_scale": "q and k of the full-attention layers are multiplied by the square "
    "root of this number (Ergo), so their logits are multiplied by it",
    "attn_implementation": "the attention kernel, chosen when the model is loaded: a kernel "
    "that ignores the window or the bias changes what each query sees",
    "cache_implementation": "the KV cache class generate() uses: a sliding-window or hybrid "
    "cache keeps only each windowed layer's last keys",
}

#: Position keys some checkpoints ship for their own inference code that transformers never
#: reads: the plan shows what transformers runs, and a note says what the key would change.
NOT_RUN_KEYS: dict[str, str] = {
    "dual_chunk_attention_config": "Dual Chunk Attention (Qwen2.5-1M): the checkpoint's own "
    "inference code gives a query other position indices for keys in its chunk, the previous "
    "chunk and earlier ones; transformers never reads this key, so the plan is plain RoPE",
    "attn_type_list": "MiniMax-Text-01's own code picks linear (0) or softmax (1) attention per "
    "layer from this list; transformers' MiniMax class reads layer_types instead, so the plan "
    "follows layer_types (or the class's default), not this list",
}

#: The :data:`RUNTIME_ONLY_KEYS` that are plain multipliers: at 1 they change nothing.
_NEUTRAL_AT_ONE = frozenset({"key_multiplier", "attention_in_multiplier", "global_attention_scale"})


def _finish(plan: Plan, raw: object) -> Plan:
    """Add a note for every :data:`RUNTIME_ONLY_KEYS` or :data:`NOT_RUN_KEYS` entry the config
    sets, and for windows that never bind.

    A multiplier at 1 and a ``query_pre_attn_scalar`` equal to every attending layer's head size
    (Gemma 2's 256 at head size 256: the usual 1/sqrt(head_dim)) change nothing and get none.
    A window ``W`` at least the config's ``max_position_embeddings`` ``M`` excludes no key at any
    length up to ``M`` (Phi-3.5-mini: 262 144 ≥ 131 072): the plan keeps the window as the model
    builds it and names the layers in a note.
    """
    _refuse_short_table_on_whole_head(plan)
    _note_unbinding_windows(plan)
    _note_norm_after_rotation(plan)
    sources: list[Mapping[str, Any]] = [plan.config]
    if isinstance(raw, Mapping):
        sources.append(raw)
        if isinstance(raw.get("text_config"), Mapping):
            sources.append(raw["text_config"])
    for key, what in RUNTIME_ONLY_KEYS.items():
        value = next((src[key] for src in sources if src.get(key) not in (None, False)), None)
        if value is None or (key in _NEUTRAL_AT_ONE and value == 1):
            continue
        if key == "query_pre_attn_scalar" and _is_every_head_dim(plan, value):
            continue
        note = f"{key} = {value!r} (run time, not in the plan): {what}"
        if note not in plan.notes:
            plan.notes.append(note)
    for key, what in NOT_RUN_KEYS.items():
        if any(src.get(key) not in (None, False) for src in sources):
            note = f"{key} is set (not run by transformers, not in the plan): {what}"
            if note not in plan.notes:
                plan.notes.append(note)
    return plan


def _refuse_short_table_on_whole_head(plan: Plan) -> None:
    """Refuse a plan whose rotary table is shorter than the head on a model that rotates it all.

    transformers' Llama-style attention rotates every feature of q and k; a rope block (llama3,
    YaRN …) that applies ``partial_rotary_factor`` builds a table for part of the head, and the
    forward pass fails with a size mismatch. No model runs such a config, so no plan describes it.
    """
    from ._rotary import rotates_whole_head

    short = next((e for e in plan if e.kind == "rope" and e.rotary_offset == 0
                  and e.rotary_dim < e.head_dim and e.rope_type != "proportional"), None)
    if short is None or not rotates_whole_head(plan.model_type):
        return
    raise ValueError(
        f"{plan.model_type}: transformers' attention rotates all {short.head_dim} features of "
        f"each head, but the {short.rope_type} block's partial_rotary_factor builds a table for "
        f"{short.rotary_dim} of them; transformers' forward pass fails on this config (a size "
        "mismatch), so there is no plan")


#: Model types whose weightless qk-norm follows the rotation (transformers 5.25's
#: ``modeling_llama4``: ``apply_rotary_emb``, then ``qk_norm``). The norm rescales each rotated
#: head to unit RMS, so a cos/sin factor (YaRN, LongRoPE) never reaches the logits.
_NORM_AFTER_ROTATION = frozenset({"llama4_text"})


def _note_norm_after_rotation(plan: Plan) -> None:
    """Note a cos/sin factor that a weightless qk-norm after the rotation removes.

    ``LayerPosition.rotate`` and :func:`logit_gain` still apply ``attention_factor`` (what the
    rotary module computes); the note says that the model's logits do not carry it.
    """
    if plan.model_type not in _NORM_AFTER_ROTATION:
        return
    factors = sorted({e.attention_factor for e in plan if e.kind == "rope" and e.qk_norm
                      and e.rotary_dim == e.head_dim and not math.isclose(e.attention_factor, 1.0)})
    if factors:
        shown = ", ".join(f"{f:.3f}" for f in factors)
        plan.notes.append(
            f"cos/sin × {shown} does not reach the logits: the weightless qk-norm follows the "
            "rotation on the RoPE layers and rescales q and k to unit RMS, which removes the "
            "factor (rotate() and logit_gain still apply it)")


def _note_unbinding_windows(plan: Plan) -> None:
    """Note each window ``W >= max_position_embeddings``: it never binds at a configured length."""
    limit = plan.config.get("max_position_embeddings")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        return
    layers: dict[int, list[int]] = {}
    for entry in plan:
        if entry.window is not None and entry.window >= limit:
            layers.setdefault(entry.window, []).append(entry.layer)
    for window, where in layers.items():
        note = (f"window {_number(window)} ≥ max_position_embeddings {_number(limit)}: never "
                f"binds (layers {collapse_ranges(where)} see every earlier key up to that length)")
        if note not in plan.notes:
            plan.notes.append(note)


def _is_every_head_dim(plan: Plan, value: object) -> bool:
    """Whether ``value`` is the head size of every attending layer of ``plan`` (one at least)."""
    dims = {e.head_dim for e in plan if e.kind != "no_attention"}
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and bool(dims)
            and all(d is not None and math.isclose(float(value), float(d)) for d in dims))


def _preflight(config: object) -> tuple[Any, int]:
    """Resolve the config and make the refusals that need no rotary module: ``(resolved, n)``."""
    from ._resolve import resolve

    resolved = resolve(config)
    cfg, model_type = resolved.cfg, resolved.model_type
    _check_factor_and_window(cfg)
    n = _first(cfg, "num_hidden_layers", "n_layer", "n_layers")
    if n is None:
        raise ValueError(f"config of model_type {model_type!r} has no num_hidden_layers")
    n = check_int(n, "num_hidden_layers", minimum=1)
    if n > MAX_PYTHON_ITEMS:
        raise ValueError(f"num_hidden_layers must be <= {MAX_PYTHON_ITEMS}, got {n}")
    if model_type in REFUSED_TYPES:
        raise ValueError(
            f"model_type {model_type!r} cannot be described by position_plan: "
            f"{REFUSED_TYPES[model_type]}"
        )
    kind = str(cfg.get("position_embedding_type") or "")
    if kind.startswith("relative_key"):
        raise ValueError(
            f"model_type {model_type!r} with position_embedding_type = {kind!r} cannot be "
            "described by position_plan: it adds learned relative position terms inside every "
            "layer")
    for key, what in _RELATIVE_SETTINGS.items():
        if cfg.get(key) not in (None, False, 0):
            raise ValueError(
                f"model_type {model_type!r} with {key} = {cfg[key]!r} cannot be described by "
                f"position_plan: {what}")
    if _FAMILIES.get(model_type) is None and resolved.hf_config is None:
        raise ValueError(
            f"model_type {model_type!r} is not supported by position_plan without transformers; "
            f"supported: {', '.join(SUPPORTED_MODEL_TYPES)}"
        )
    _head_dim(cfg)
    return resolved, n


def plan_refusal(config: object) -> str | None:
    """The error :func:`position_plan` gives before reading the rotary module, or None.

    Quick (no modelling module is imported): a bad config, no layer count, a type in
    ``REFUSED_TYPES``, no head size.
    """
    try:
        _preflight(config)
    except (ValueError, TypeError) as err:
        return str(err)
    return None


def _check_factor_and_window(cfg: Mapping[str, Any]) -> None:
    """Refuse a rope ``factor`` <= 0 and a ``sliding_window`` < 1 (silently wrong plans)."""
    for block in _blocks(cfg):
        factor = block.get("factor")
        if factor is None:
            continue
        ok = isinstance(factor, (int, float)) and not isinstance(factor, bool)
        if not ok or not math.isfinite(factor) or factor <= 0:
            raise ValueError(f"rope factor must be a finite number > 0, got {factor!r}")
    window = cfg.get("sliding_window")
    if cfg.get("use_sliding_window") is False:  # Qwen2-MoE's class stores 0 with the window off
        return
    if window is not None and (
        not isinstance(window, int) or isinstance(window, bool) or window < 1
    ):
        raise ValueError(f"sliding_window must be an integer >= 1 or null, got {window!r}")


def _reads_position_embedding_type(model_type: str) -> bool:
    """Whether the model's code reads ``config.position_embedding_type`` (Granite 4.0 hybrids,
    ESM do; ModernBERT's released files write ``"absolute"`` and its code rotates anyway)."""
    from ._rotary import _source, modeling_module

    module = modeling_module(model_type)
    return module is not None and "position_embedding_type" in _source(module)


@functools.cache
def _census() -> frozenset[str]:
    from .hf_check import census_types

    return frozenset(census_types())


def _unverified_types() -> frozenset[str]:
    from .hf_check import UNVERIFIED_TYPES

    return UNVERIFIED_TYPES


_BASE_KEYS = ("rope_theta", "rotary_emb_base", "rope_base")


def _raw_bases(node: Any, where: str = "") -> list[tuple[str, float]]:
    """Every ``rope_theta``/``rotary_emb_base``/``rope_base`` in the text model's part of a raw
    config: a multimodal wrapper is read through its text config, and a nested block that
    names its own ``model_type`` (a vision or audio encoder: Llama 4's ``vision_config``) is
    another model's, not planned."""
    found: list[tuple[str, float]] = []
    if isinstance(node, Mapping) and not where:
        from ._resolve import _WRAPPER_KEYS

        wrapper = next((k for k in _WRAPPER_KEYS if isinstance(node.get(k), Mapping)), None)
        if wrapper is not None:
            return _raw_bases(node[wrapper], f"{wrapper}.")
    if isinstance(node, Mapping):
        for key, value in node.items():
            name = f"{where}{key}"
            if isinstance(value, Mapping) and isinstance(value.get("model_type"), str):
                continue
            if key in _BASE_KEYS and isinstance(value, (int, float)) and not isinstance(
                value, bool
            ):
                found.append((name, float(value)))
            elif isinstance(value, (Mapping, list)):
                found += _raw_bases(value, name + ".")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += _raw_bases(value, f"{where}{i}.")
    return found


def _note_unused_bases(raw: Mapping[str, Any], plan: list[LayerPosition],
                       notes: list[str]) -> None:
    """Note a base in the file that no RoPE layer of the model uses (DBRX's attn_config)."""
    used = {float(p.base) for p in plan if p.kind == "rope" and p.base is not None}
    if not used:
        return
    for name, value in _raw_bases(raw):
        if not any(math.isclose(value, b, rel_tol=1e-6) for b in used):
            in_use = " / ".join(_number(b) for b in sorted(used))
            notes.append(f"the file says {name} = {_number(value)}; transformers uses "
                         f"{in_use}")


def _base_from_table(plan: list[LayerPosition], notes: list[str]) -> list[LayerPosition]:
    """Print the base the model's table uses: for plain RoPE, ``inv_freq[1]^(−rotary_dim/2)``."""
    out = []
    for p in plan:
        if (p.kind == "rope" and p.rope_type == "default" and p.inv_freq is not None
                and p.inv_freq.numel() >= 2 and p.base is not None and p.rotary_offset == 0
                and float(p.inv_freq[1]) > 0):
            table_base = float(p.inv_freq[1]) ** (-p.rotary_dim / 2)
            if not math.isclose(table_base, p.base, rel_tol=1e-4):
                table_base = float(round(table_base, 0)) if table_base > 100 else table_base
                note = (f"the config's rope_theta {_number(p.base)} is not what transformers' "
                        f"rotary table uses ({_number(table_base)}); the plan prints the table's")
                if note not in notes:
                    notes.append(note)
                p = dataclasses.replace(p, base=table_base)
        out.append(p)
    return out


def _ntk_alpha(plan: list[LayerPosition], cfg: Mapping[str, Any], model_type: str,
               notes: list[str]) -> list[LayerPosition]:
    """Hunyuan: a "dynamic" block with ``alpha`` is a fixed base ``θ·α^(d/(d−2))`` in
    transformers (its ``ntk_alpha`` rope type); print the base the table uses."""
    blocks = _blocks(cfg)
    alpha = blocks[0].get("alpha") if blocks else None
    kind = (blocks[0].get("rope_type") or blocks[0].get("type")) if blocks else None
    if not model_type.startswith("hunyuan") or not alpha or kind != "dynamic":
        return plan
    out = []
    for p in plan:
        if p.kind == "rope" and p.inv_freq is not None and p.inv_freq.numel() >= 2:
            table_base = float(p.inv_freq[1]) ** (-p.rotary_dim / 2)
            p = dataclasses.replace(
                p, rope_type="ntk_alpha", base=float(f"{table_base:.5g}"),
                scaling=f"NTK-alpha α = {float(alpha):g}, a fixed base at every length")
        out.append(p)
    notes.append(f"rope_type 'dynamic' with alpha = {float(alpha):g}: transformers uses the "
                 "fixed base rope_theta·alpha^(d/(d−2)) at every length (its 'ntk_alpha'), "
                 "not dynamic NTK")
    return out


def _phimoe_longrope(plan: list[LayerPosition], cfg: dict[str, Any],
                     notes: list[str]) -> list[LayerPosition]:
    """Phi-3.5-MoE: say which LongRoPE table and cos/sin factor transformers' module uses."""
    params = _blocks(cfg)[0] if _blocks(cfg) else {}
    layer = plan[0]
    assert layer.inv_freq is not None and layer.base is not None
    half = layer.rotary_dim // 2
    exps = torch.arange(0, layer.rotary_dim, 2, dtype=torch.float64) / layer.rotary_dim
    which = "short"
    for name in ("short", "long"):
        factors = params.get(f"{name}_factor")
        if factors is not None and len(factors) == half:
            expected = 1.0 / (torch.tensor(factors, dtype=torch.float64) * layer.base**exps)
            if torch.allclose(expected, layer.inv_freq, rtol=1e-5):
                which = name
                break
    scaling = f"longrope {which} factors (as transformers' PhimoeRotaryEmbedding computes them)"
    notes.append(
        "Phi-3.5-MoE: transformers' PhimoeRotaryEmbedding multiplies cos/sin by the config's "
        f"short_mscale/long_mscale (here {layer.attention_factor:.4g}), not LongRoPE's "
        f"attention factor, and builds its table from the config alone ({which} factors)"
    )
    return [dataclasses.replace(p, scaling=scaling) if p.kind == "rope" else p for p in plan]


def _blocks(cfg: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    params = cfg.get("rope_parameters") or cfg.get("rope_scaling")
    if not isinstance(params, Mapping):
        return []
    nested = [v for v in params.values() if isinstance(v, Mapping)]
    return nested or [params]


def _gemma4_override(cfg: dict[str, Any], i: int, name: str, default: int) -> Any:
    per_layer = cfg.get("per_layer_config") or {}
    for key in (i, str(i), f"{i:02d}"):
        if key in per_layer and name in per_layer[key]:
            return per_layer[key][name]
    return cfg.get("global_head_dim", 512) if name == "head_dim" else default


def _refuse_unread_alibi(cfg: Mapping[str, Any], model_type: str) -> None:
    """Refuse a config asking for ALiBi when the plan would read it as RoPE or NoPE."""
    holders = [("", cfg)]
    if isinstance(cfg.get("attn_config"), Mapping):
        holders.append(("attn_config.", cfg["attn_config"]))
    for prefix, holder in holders:
        for key in ("alibi", "use_alibi"):
            if holder.get(key):
                raise ValueError(
                    f"model_type {model_type!r}: {prefix}{key} = {holder[key]!r} asks for ALiBi, "
                    "which position_plan does not read for this type; refusing rather than "
                    "printing a RoPE/NoPE plan"
                )
        if str(holder.get("position_embedding_type", "")).lower() == "alibi":
            raise ValueError(
                f"model_type {model_type!r}: {prefix}position_embedding_type = 'alibi', which "
                "position_plan does not read for this type; refusing rather than printing a "
                "RoPE/NoPE plan"
            )


def _alibi_plan(
    cfg: dict[str, Any], model_type: str, n: int, layer_types: list[str],
    bias_scale: float = 1.0, notes: list[str] | None = None, raw: object = None,
) -> list[LayerPosition]:
    heads = int(_first(cfg, "n_head", "num_attention_heads", "n_heads"))
    max_bias = 8.0
    if model_type == "mpt":
        attn = cfg.get("attn_config") or {}
        if isinstance(attn, Mapping) and attn.get("alibi") is False:
            raise ValueError("this MPT config has attn_config.alibi = False (learned positions)")
        raw_attn = raw.get("attn_config") if isinstance(raw, Mapping) else attn
        if isinstance(raw_attn, Mapping) and raw_attn.get("alibi_bias_max") is not None:
            max_bias = float(raw_attn["alibi_bias_max"])
        elif notes is not None:
            notes.append("attn_config.alibi_bias_max is not in the config: MPT's default 8 "
                         "assumed (as MptAttentionConfig fills it), slopes 2^(-8h/H)")
    slopes = alibi_slopes(heads, max_bias=max_bias, dtype=torch.float64) * bias_scale
    return [
        LayerPosition(
            layer=i, kind="alibi", layer_type=layer_types[i], head_dim=_head_dim(cfg),
            alibi_slopes=slopes,
        )
        for i in range(n)
    ]
