"""RoPE settings of real models, each value with its source: the RoPE calculator's presets.

A :class:`RopePreset` holds what a model's ``config.json`` says about RoPE (head and rotary
dimension, base, extension method and its options, training and configured context) and turns it
into the Hugging Face config block with :func:`posenc_lib.hf.hf_config_fields`, or into the
library's spectrum with :func:`posenc_lib.extension.extended_rope`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from ._validation import check_dim, check_int
from .extension import extended_rope
from .hf import hf_config_fields

__all__ = ["PER_LAYER_MODEL_TYPES", "ROPE_PRESETS", "RopePreset"]


@dataclass(frozen=True)
class RopePreset:
    """One model's RoPE, as its config states it.

    Attributes
    ----------
    model : str
        Model name.
    head_dim : int
        Query/key head dimension that carries RoPE (DeepSeek-V2 and V3: the rotary part only,
        ``qk_rope_head_dim``).
    rotary_dim : int
        Rotated features per head ``d`` (``head_dim·partial_rotary_factor``).
    base : float
        ``rope_theta``.
    method : str
        Extension method (:data:`posenc_lib.extension.EXTENSION_METHODS`).
    factor : float
        Scale factor ``s``.
    train_len : int
        Training (original) context ``L_train``.
    context : int
        ``max_position_embeddings`` of the config.
    options : dict
        Method options (YaRN's mscale, LongRoPE's lists, Llama 3.1's frequency factors).
    source : str
        Where the values come from.
    model_type : str
        The transformers ``model_type`` whose config class reads the block. ``"gpt_neox"`` writes
        its own transformers 4 keys, ``rotary_emb_base`` and ``rotary_pct``, in place of
        ``rope_theta`` and ``partial_rotary_factor``. ``"gemma3_text"`` and ``"olmo3"`` mix
        sliding-window and full-attention layers: transformers 5 reads their ``rope_parameters``
        per layer type, so the block is ``{"full_attention": {...}, "sliding_attention": {...}}``.
    sliding_base : float or None
        ``rope_theta`` of the sliding-window layers (unscaled RoPE) for those two model types.
    """

    model: str
    head_dim: int
    rotary_dim: int
    base: float
    method: str
    factor: float
    train_len: int
    context: int
    source: str
    options: dict[str, Any] = field(default_factory=dict)
    model_type: str = "llama"
    sliding_base: float | None = None

    def __post_init__(self) -> None:
        check_dim(self.head_dim, "head_dim")
        check_dim(self.rotary_dim, "rotary_dim")
        # Context lengths are numbers here, not sizes of anything built: no size limit.
        check_int(self.train_len, "train_len", minimum=1, what="a positive integer")
        check_int(self.context, "context", minimum=1, what="a positive integer")

    @property
    def partial_rotary_factor(self) -> float | None:
        """``rotary_dim/head_dim`` when only part of the head rotates, else None."""
        return None if self.rotary_dim == self.head_dim else self.rotary_dim / self.head_dim

    def hf_fields(self, *, legacy: bool = False) -> dict[str, Any]:
        """The ``config.json`` fields (:func:`posenc_lib.hf.hf_config_fields`), in the keys of
        the model's own config class (GPT-NeoX: ``rotary_emb_base``, ``rotary_pct``)."""
        fields = hf_config_fields(
            self.method, dim=self.rotary_dim, base=self.base, factor=self.factor,
            original_max_position=self.train_len, legacy=legacy,
            max_position_embeddings=None if self.method == "dynamic" else self.context,
            partial_rotary_factor=self.partial_rotary_factor, **self.options,
        )
        if self.model_type in PER_LAYER_MODEL_TYPES:
            sliding = self.base if self.sliding_base is None else self.sliding_base
            if legacy:
                if self.model_type == "gemma3_text":  # Gemma 3's transformers 4 key
                    fields["rope_local_base_freq"] = sliding
            else:  # a flat block would leave full_attention at the class default, unscaled
                fields["rope_parameters"] = {
                    "full_attention": fields["rope_parameters"],
                    "sliding_attention": {"rope_type": "default", "rope_theta": sliding},
                }
        if legacy and self.model_type == "gpt_neox":
            # GPTNeoXConfig reads these two names (and ignores rope_theta at the top level).
            fields["rotary_emb_base"] = fields.pop("rope_theta")
            fields["rotary_pct"] = fields.pop("partial_rotary_factor", 1.0)
        return fields

    def rope(self, seq_len: int | None = None) -> tuple[torch.Tensor, float]:
        """``(inv_freq, attention_factor)`` (:func:`posenc_lib.extension.extended_rope`)."""
        return extended_rope(
            self.method, dim=self.rotary_dim, base=self.base, factor=self.factor,
            original_max_position=self.train_len, seq_len=seq_len, **self.options,
        )


#: Model types whose transformers 5 config reads ``rope_parameters`` per layer type.
PER_LAYER_MODEL_TYPES: tuple[str, ...] = ("gemma3_text", "olmo3")


# microsoft/Phi-3.5-mini-instruct config.json, rope_scaling (48 = 96/2 values each).
_PHI35_LONG: tuple[float, ...] = (
    1.0800000429153442, 1.1100000143051147, 1.1399999856948853, 1.340000033378601,
    1.5899999141693115, 1.600000023841858, 1.6200000047683716, 2.620000123977661,
    3.2300000190734863, 3.2300000190734863, 4.789999961853027, 7.400000095367432,
    7.700000286102295, 9.09000015258789, 12.199999809265137, 17.670000076293945,
    24.46000099182129, 28.57000160217285, 30.420001983642578, 30.840002059936523,
    32.590003967285156, 32.93000411987305, 42.320003509521484, 44.96000289916992,
    50.340003967285156, 50.45000457763672, 57.55000305175781, 57.93000411987305,
    58.21000289916992, 60.1400032043457, 62.61000442504883, 62.62000274658203,
    62.71000289916992, 63.1400032043457, 63.1400032043457, 63.77000427246094,
    63.93000411987305, 63.96000289916992, 63.970001220703125, 64.02999877929688,
    64.06999969482422, 64.08000183105469, 64.12000274658203, 64.41000366210938,
    64.4800033569336, 64.51000213623047, 64.52999877929688, 64.83999633789062,
)
_PHI35_SHORT: tuple[float, ...] = (
    1.0, 1.0199999809265137, 1.0299999713897705, 1.0299999713897705,
    1.0499999523162842, 1.0499999523162842, 1.0499999523162842, 1.0499999523162842,
    1.0499999523162842, 1.0699999332427979, 1.0999999046325684, 1.1099998950958252,
    1.1599998474121094, 1.1599998474121094, 1.1699998378753662, 1.2899998426437378,
    1.339999794960022, 1.679999828338623, 1.7899998426437378, 1.8199998140335083,
    1.8499997854232788, 1.8799997568130493, 1.9099997282028198, 1.9399996995925903,
    1.9899996519088745, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346,
    2.0199997425079346, 2.0199997425079346, 2.0199997425079346, 2.0299997329711914,
    2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914,
    2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914,
    2.0799996852874756, 2.0899996757507324, 2.189999580383301, 2.2199995517730713,
    2.5899994373321533, 2.729999542236328, 2.749999523162842, 2.8399994373321533,
)

#: Real models by name (the RoPE calculator's menu); sources in each ``source``.
#:
#: :meta hide-value:
ROPE_PRESETS: dict[str, RopePreset] = {
    p.model: p
    for p in (
        RopePreset("Llama 2 7B", 128, 128, 10000.0, "none", 1.0, 4096, 4096,
                   "meta-llama/Llama-2-7b-hf config.json; Touvron et al. 2023"),
        RopePreset("Code Llama 7B", 128, 128, 1e6, "abf", 4.0, 4096, 16384,
                   "codellama/CodeLlama-7b-hf config.json (rope_theta 1e6, 16 384 positions); "
                   "Rozière et al. 2023: fine-tuned at 16 384 from Llama 2's 4 096"),
        RopePreset("LLaMA 2 Long 7B", 128, 128, 500000.0, "abf", 8.0, 4096, 32768,
                   "Xiong et al. 2023 (§4.1: base 500 000, continual pretraining at 32 768); "
                   "no public checkpoint"),
        RopePreset("Llama 3 8B", 128, 128, 500000.0, "none", 1.0, 8192, 8192,
                   "meta-llama/Meta-Llama-3-8B config.json"),
        RopePreset("Llama 3.1 8B", 128, 128, 500000.0, "llama3", 8.0, 8192, 131072,
                   "meta-llama/Llama-3.1-8B config.json (rope_scaling llama3)",
                   {"low_freq_factor": 1.0, "high_freq_factor": 4.0}),
        RopePreset("Mistral 7B v0.1", 128, 128, 10000.0, "none", 1.0, 8192, 32768,
                   "mistralai/Mistral-7B-v0.1 config.json (32 768 positions, sliding window "
                   "4 096); Jiang et al. 2023, Table 1: context_len 8 192 (trained length)",
                   model_type="mistral"),
        RopePreset("Qwen2.5-7B-Instruct + YaRN", 128, 128, 1e6, "yarn", 4.0, 32768, 32768,
                   "Qwen/Qwen2.5-7B-Instruct config.json (rope_theta 1e6, 32 768) and its "
                   "README's opt-in rope_scaling (yarn, factor 4)", model_type="qwen2"),
        RopePreset("GPT-NeoX-20B", 96, 24, 10000.0, "none", 1.0, 2048, 2048,
                   "EleutherAI/gpt-neox-20b config.json (rotary_pct 0.25, 6144/64 = 96)",
                   model_type="gpt_neox"),
        RopePreset("DeepSeek-V2-Lite", 64, 64, 10000.0, "yarn", 40.0, 4096, 163840,
                   "deepseek-ai/DeepSeek-V2-Lite config.json (qk_rope_head_dim 64, "
                   "163 840 positions)",
                   {"beta_fast": 32.0, "beta_slow": 1.0, "mscale": 0.707,
                    "mscale_all_dim": 0.707}, model_type="deepseek_v2"),
        RopePreset("Phi-3.5-mini-instruct", 96, 96, 10000.0, "longrope", 32.0, 4096, 131072,
                   "microsoft/Phi-3.5-mini-instruct config.json (longrope, 131 072 positions)",
                   {"short_factor": list(_PHI35_SHORT), "long_factor": list(_PHI35_LONG)},
                   model_type="phi3"),
    )
}


# --- 2024–2026 models (chapter 10) ----------------------------------------------------------------
# For a model that mixes layers, the preset is the RoPE of its *extended* (global/full) layers;
# the whole per-layer picture is in PRESET_CONFIGS and posenc_lib.architectures.position_plan.

#: The 2024–2026 presets (Llama 4 Scout included), for chapter 10 and the inspector.
#:
#: :meta hide-value:
MODERN_PRESETS: dict[str, RopePreset] = {
    p.model: p
    for p in (
        RopePreset("Llama 3.2 1B", 64, 64, 500000.0, "llama3", 32.0, 8192, 131072,
                   "meta-llama/Llama-3.2-1B config.json (rope_scaling llama3, factor 32, "
                   "head_dim 64, 16 layers)",
                   {"low_freq_factor": 1.0, "high_freq_factor": 4.0}),
        RopePreset("Llama 4 Scout (RoPE layers)", 128, 128, 500000.0, "llama3", 16.0, 8192,
                   10485760,
                   "meta-llama/Llama-4-Scout-17B-16E config.json text_config (rope_scaling "
                   "llama3, factor 16, low = high = 1; every 4th layer NoPE; chunk 8 192)",
                   {"low_freq_factor": 1.0, "high_freq_factor": 1.0}),
        RopePreset("Gemma 3 12B (global layers)", 256, 256, 1e6, "pi", 8.0, 32768, 131072,
                   "google/gemma-3-12b-it config.json text_config (rope_scaling linear 8 on "
                   "the global layers, rope_local_base_freq 1e4 on the sliding ones, window "
                   "1 024, pattern 6); Gemma Team 2025: pre-trained at 32K, rescaled to 128K",
                   model_type="gemma3_text", sliding_base=10000.0),
        RopePreset("OLMo 3 7B (full layers)", 128, 128, 500000.0, "yarn", 8.0, 8192, 65536,
                   "allenai/Olmo-3-7B config.json (one flat rope_scaling yarn block, which "
                   "transformers' Olmo3Config puts on the full-attention layers; window 4 096 "
                   "on the others)",
                   {"beta_fast": 32.0, "beta_slow": 1.0,
                    "attention_factor": 1.2079441541679836}, model_type="olmo3",
                   sliding_base=500000.0),
        RopePreset("gpt-oss-20b", 64, 64, 150000.0, "yarn", 32.0, 4096, 131072,
                   "openai/gpt-oss-20b config.json (rope_scaling yarn, truncate false; "
                   "= transformers GptOssConfig defaults)",
                   {"beta_fast": 32.0, "beta_slow": 1.0, "truncate": False},
                   model_type="gpt_oss"),
        RopePreset("Qwen3-4B-Instruct-2507", 128, 128, 5e6, "none", 1.0, 262144, 262144,
                   "Qwen/Qwen3-4B-Instruct-2507 config.json (rope_theta 5e6, 262 144 positions, "
                   "no rope_scaling)", model_type="qwen3"),
        RopePreset("DeepSeek-V3", 64, 64, 10000.0, "yarn", 40.0, 4096, 163840,
                   "deepseek-ai/DeepSeek-V3 config.json (qk_rope_head_dim 64 beside "
                   "qk_nope_head_dim 128; mscale = mscale_all_dim = 1)",
                   {"beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0},
                   model_type="deepseek_v3"),
    )
}
# Llama 4 Scout's low_freq_factor == high_freq_factor (both 1) is valid for transformers but makes
# it log a warning when the block is loaded; chapter 8 loads every ROPE_PRESETS entry with stderr
# treated as an error, so the calculator's menu takes the others only.
ROPE_PRESETS.update({k: v for k, v in MODERN_PRESETS.items() if not k.startswith("Llama 4")})


def _flat(preset: RopePreset) -> dict[str, Any]:
    """A preset's own ``config.json`` rope keys (transformers 4 form)."""
    fields = preset.hf_fields(legacy=True)
    return {k: v for k, v in fields.items() if v is not None}


#: The position-relevant part of each preset model's ``config.json`` (what
#: :func:`posenc_lib.architectures.position_plan` reads): model type, layer count, head size and
#: the layer mix. Sources as in each preset's ``source``.
#:
#: :meta hide-value:
PRESET_CONFIGS: dict[str, dict[str, Any]] = {
    "Llama 2 7B": {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
                   "num_attention_heads": 32, **_flat(ROPE_PRESETS["Llama 2 7B"])},
    "Code Llama 7B": {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
                      "num_attention_heads": 32, **_flat(ROPE_PRESETS["Code Llama 7B"])},
    "LLaMA 2 Long 7B": {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
                        "num_attention_heads": 32, **_flat(ROPE_PRESETS["LLaMA 2 Long 7B"])},
    "Llama 3 8B": {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
                   "num_attention_heads": 32, **_flat(ROPE_PRESETS["Llama 3 8B"])},
    "Llama 3.1 8B": {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
                     "num_attention_heads": 32, **_flat(ROPE_PRESETS["Llama 3.1 8B"])},
    "Mistral 7B v0.1": {"model_type": "mistral", "num_hidden_layers": 32, "hidden_size": 4096,
                        "num_attention_heads": 32, "sliding_window": 4096,
                        **_flat(ROPE_PRESETS["Mistral 7B v0.1"])},
    "Qwen2.5-7B-Instruct + YaRN": {"model_type": "qwen2", "num_hidden_layers": 28,
                                   "hidden_size": 3584, "num_attention_heads": 28,
                                   **_flat(ROPE_PRESETS["Qwen2.5-7B-Instruct + YaRN"])},
    "GPT-NeoX-20B": {"model_type": "gpt_neox", "num_hidden_layers": 44, "hidden_size": 6144,
                     "num_attention_heads": 64, "rotary_pct": 0.25, "rotary_emb_base": 10000,
                     "max_position_embeddings": 2048},
    "DeepSeek-V2-Lite": {"model_type": "deepseek_v2", "num_hidden_layers": 27,
                         "hidden_size": 2048, "num_attention_heads": 16,
                         "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
                         **_flat(ROPE_PRESETS["DeepSeek-V2-Lite"])},
    "Phi-3.5-mini-instruct": {"model_type": "phi3", "num_hidden_layers": 32,
                              "hidden_size": 3072, "num_attention_heads": 32,
                              "original_max_position_embeddings": 4096,
                              **_flat(ROPE_PRESETS["Phi-3.5-mini-instruct"])},
    "Llama 3.2 1B": {"model_type": "llama", "num_hidden_layers": 16, "hidden_size": 2048,
                     "num_attention_heads": 32, "head_dim": 64,
                     **_flat(MODERN_PRESETS["Llama 3.2 1B"])},
    "Llama 4 Scout (RoPE layers)": {
        "model_type": "llama4", "text_config": {
            "model_type": "llama4_text", "num_hidden_layers": 48, "hidden_size": 5120,
            "num_attention_heads": 40, "head_dim": 128, "attention_chunk_size": 8192,
            # as released: an empty list, which Llama4TextConfig fills from
            # no_rope_layer_interval (default 4): RoPE on layers i with (i + 1) % 4 != 0
            "no_rope_layers": [],
            "attn_temperature_tuning": True, "floor_scale": 8192, "attn_scale": 0.1,
            **_flat(MODERN_PRESETS["Llama 4 Scout (RoPE layers)"])}},
    "Gemma 3 12B (global layers)": {
        "model_type": "gemma3", "text_config": {
            "model_type": "gemma3_text", "num_hidden_layers": 48, "hidden_size": 3840,
            "num_attention_heads": 16, "head_dim": 256, "sliding_window": 1024,
            "sliding_window_pattern": 6, "rope_local_base_freq": 10000.0,
            "max_position_embeddings": 131072, "rope_theta": 1e6,
            "rope_scaling": {"rope_type": "linear", "factor": 8.0}}},
    "OLMo 3 7B (full layers)": {
        "model_type": "olmo3", "num_hidden_layers": 32, "hidden_size": 4096,
        "num_attention_heads": 32, "sliding_window": 4096,
        **_flat(MODERN_PRESETS["OLMo 3 7B (full layers)"])},
    "gpt-oss-20b": {"model_type": "gpt_oss", "num_hidden_layers": 24, "hidden_size": 2880,
                    "num_attention_heads": 64, "head_dim": 64, "sliding_window": 128,
                    **_flat(MODERN_PRESETS["gpt-oss-20b"])},
    "Qwen3-4B-Instruct-2507": {"model_type": "qwen3", "num_hidden_layers": 36,
                               "hidden_size": 2560, "num_attention_heads": 32, "head_dim": 128,
                               **_flat(MODERN_PRESETS["Qwen3-4B-Instruct-2507"])},
    "DeepSeek-V3": {"model_type": "deepseek_v3", "num_hidden_layers": 61, "hidden_size": 7168,
                    "num_attention_heads": 128, "qk_rope_head_dim": 64,
                    "qk_nope_head_dim": 128, "rope_interleave": True,
                    **_flat(MODERN_PRESETS["DeepSeek-V3"])},
}
__all__ += ["MODERN_PRESETS", "PRESET_CONFIGS"]
