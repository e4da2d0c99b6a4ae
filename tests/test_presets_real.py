"""Each RoPE preset against its model's recorded ``config.json`` and its own config class.

The ``RECORDED`` values are the RoPE fields of each model's published ``config.json`` (Hugging Face
Hub; Qwen2.5's ``rope_scaling`` is the one its README tells users to add; LLaMA 2 Long has no
public checkpoint and is checked against its paper's numbers instead). The presets' emitted blocks
must load into the model's own transformers config class without a single log record or warning,
use that class's keys (GPT-NeoX: ``rotary_emb_base``, ``rotary_pct``), and give the library's
spectrum.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import pytest
import torch
from transformers import AutoConfig

from posenc_lib.config_check import model_rope
from posenc_lib.presets import PER_LAYER_MODEL_TYPES, ROPE_PRESETS, RopePreset

# model -> (model_type, recorded config.json RoPE fields, trained length from the model's paper).
RECORDED: dict[str, tuple[str, dict[str, Any], int]] = {
    "Llama 2 7B": ("llama", {"max_position_embeddings": 4096, "rope_scaling": None}, 4096),
    "Code Llama 7B": ("llama", {"max_position_embeddings": 16384, "rope_theta": 1000000,
                                "rope_scaling": None}, 4096),
    "LLaMA 2 Long 7B": ("llama", {"max_position_embeddings": 32768, "rope_theta": 500000}, 4096),
    "Llama 3 8B": ("llama", {"max_position_embeddings": 8192, "rope_theta": 500000.0,
                             "rope_scaling": None}, 8192),
    "Llama 3.1 8B": ("llama", {"max_position_embeddings": 131072, "rope_theta": 500000.0,
                               "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0,
                                                "high_freq_factor": 4.0,
                                                "original_max_position_embeddings": 8192,
                                                "rope_type": "llama3"}}, 8192),
    # 32 768 positions in the config, but trained at 8 192 (Jiang et al. 2023, Table 1).
    "Mistral 7B v0.1": ("mistral", {"max_position_embeddings": 32768, "rope_theta": 10000.0,
                                    "sliding_window": 4096}, 8192),
    "Qwen2.5-7B-Instruct + YaRN": ("qwen2", {"max_position_embeddings": 32768,
                                             "rope_theta": 1000000.0,
                                             "rope_scaling": {"factor": 4.0,
                                                              "original_max_position_embeddings":
                                                                  32768, "type": "yarn"}}, 32768),
    "GPT-NeoX-20B": ("gpt_neox", {"max_position_embeddings": 2048, "rotary_emb_base": 10000,
                                  "rotary_pct": 0.25, "hidden_size": 6144,
                                  "num_attention_heads": 64}, 2048),
    "DeepSeek-V2-Lite": ("deepseek_v2", {"max_position_embeddings": 163840, "rope_theta": 10000,
                                         "qk_rope_head_dim": 64,
                                         "rope_scaling": {"beta_fast": 32, "beta_slow": 1,
                                                          "factor": 40, "mscale": 0.707,
                                                          "mscale_all_dim": 0.707,
                                                          "original_max_position_embeddings": 4096,
                                                          "type": "yarn"}}, 4096),
    "Phi-3.5-mini-instruct": ("phi3", {"max_position_embeddings": 131072,
                                       "original_max_position_embeddings": 4096,
                                       "rope_theta": 10000.0, "hidden_size": 3072,
                                       "num_attention_heads": 32,
                                       "rope_scaling": {"type": "longrope"}}, 4096),
}


# Presets whose config.json is not recorded here: they are checked against their own config class
# only (test_block_loads_into_the_models_own_config_class_silently, the per-layer tests).
NOT_RECORDED = {"DeepSeek-V3", "Gemma 3 12B (global layers)", "Llama 3.2 1B",
                "OLMo 3 7B (full layers)", "Qwen3-4B-Instruct-2507", "gpt-oss-20b"}


def test_every_preset_is_recorded_or_named_as_not_recorded() -> None:
    """Chapter 8 says which presets are checked against a recorded config.json (mutation caught:
    a new preset with neither a record nor a place in NOT_RECORDED)."""
    assert set(RECORDED) | NOT_RECORDED == set(ROPE_PRESETS)
    assert not set(RECORDED) & NOT_RECORDED


@pytest.mark.parametrize("name", sorted(ROPE_PRESETS))
def test_preset_names_its_models_own_config_class(name: str) -> None:
    """The model_type the blocks are loaded into is the model's, as its config.json names it in
    PRESET_CONFIGS (mutation caught: a preset left at the default "llama", as gpt-oss, Qwen3 and
    DeepSeek-V3 once were)."""
    from posenc_lib.presets import PRESET_CONFIGS

    cfg = PRESET_CONFIGS[name]
    assert ROPE_PRESETS[name].model_type == cfg.get("text_config", cfg)["model_type"]


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_preset_matches_the_recorded_config(name: str) -> None:
    p = ROPE_PRESETS[name]
    model_type, real, trained = RECORDED[name]
    assert p.model_type == model_type
    assert p.context == real["max_position_embeddings"]
    assert p.train_len == trained
    base = real.get("rope_theta", real.get("rotary_emb_base", 10000.0))  # Llama 2: the default
    assert p.base == float(base)
    scaling = real.get("rope_scaling") or {}
    if "factor" in scaling:
        assert p.factor == float(scaling["factor"])
        assert p.train_len == scaling["original_max_position_embeddings"]
    for key in ("beta_fast", "beta_slow", "mscale", "mscale_all_dim", "low_freq_factor",
                "high_freq_factor"):
        if key in scaling:
            assert p.options[key] == float(scaling[key]), key
    if "rotary_pct" in real:
        head = real["hidden_size"] / real["num_attention_heads"]
        assert p.rotary_dim == real["rotary_pct"] * head
    if "qk_rope_head_dim" in real:
        assert p.rotary_dim == p.head_dim == real["qk_rope_head_dim"]
    if model_type == "phi3":
        assert p.head_dim == real["hidden_size"] // real["num_attention_heads"]
        original = real["original_max_position_embeddings"]
        assert p.factor == real["max_position_embeddings"] / original
        assert len(p.options["long_factor"]) == len(p.options["short_factor"]) == p.head_dim // 2


def _config_kwargs(p: RopePreset) -> dict[str, Any]:
    if p.model_type in ("deepseek_v2", "deepseek_v3"):
        return {"hidden_size": 128, "num_attention_heads": 2, "qk_rope_head_dim": p.head_dim,
                "qk_nope_head_dim": 16, "v_head_dim": 16, "kv_lora_rank": 16, "q_lora_rank": None}
    kwargs: dict[str, Any] = {"hidden_size": 2 * p.head_dim, "num_attention_heads": 2}
    if p.model_type != "gpt_neox":
        kwargs["num_key_value_heads"] = 2
    if p.model_type in ("llama", "gemma3_text", "gpt_oss", "qwen3"):
        kwargs["head_dim"] = p.head_dim
    return kwargs


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:
            self.messages.append(record.getMessage())


@pytest.mark.parametrize("legacy", [False, True])
@pytest.mark.parametrize("name", sorted(ROPE_PRESETS))
def test_block_loads_into_the_models_own_config_class_silently(name: str, legacy: bool) -> None:
    p = ROPE_PRESETS[name]
    fields = p.hf_fields(legacy=legacy)
    if legacy and p.model_type == "gpt_neox":
        assert {"rotary_emb_base", "rotary_pct"} <= set(fields) and "rope_theta" not in fields
    records = _Records()
    logger = logging.getLogger("transformers")
    logger.addHandler(records)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            config = AutoConfig.for_model(p.model_type, **_config_kwargs(p), **fields)
    finally:
        logger.removeHandler(records)
    assert records.messages == []
    inv, att = model_rope(config)  # the model's own rotary module (full-attention layers)
    ours, ours_att = p.rope()
    torch.testing.assert_close(inv, ours, rtol=2e-6, atol=0)
    assert att == pytest.approx(ours_att, rel=1e-12)
    if p.model_type in PER_LAYER_MODEL_TYPES:  # the sliding layers keep plain RoPE
        inv_s, att_s = model_rope(config, "sliding_attention")
        plain = p.sliding_base ** (-torch.arange(0, p.rotary_dim, 2, dtype=torch.float64)
                                   / p.rotary_dim)
        torch.testing.assert_close(inv_s, plain, rtol=2e-6, atol=0)
        assert att_s == 1.0


@pytest.mark.parametrize("name", ["Gemma 3 12B (global layers)", "OLMo 3 7B (full layers)"])
def test_a_flat_block_would_lose_the_scaling_of_a_per_layer_model(name: str) -> None:
    """Why these presets write rope_parameters per layer type: a flat block is not applied."""
    p = ROPE_PRESETS[name]
    flat = dict(p.hf_fields())
    flat["rope_parameters"] = dict(flat["rope_parameters"]["full_attention"])
    config = AutoConfig.for_model(p.model_type, **_config_kwargs(p), **flat)
    inv, _ = model_rope(config)
    assert not torch.allclose(inv, p.rope()[0], rtol=1e-3, atol=0)


def test_long_context_presets_table_lists_every_preset_with_its_values() -> None:
    """The calculator's preset table (chapter 8's appendix) lists each preset with its values."""
    from pathlib import Path

    from posenc_lib.presets import ROPE_PRESETS

    page = Path(__file__).resolve().parents[1] / "chapters" / "appendix" / "long_context_notes.md"
    rows = [line for line in page.read_text().splitlines() if line.startswith("| ")]
    assert len(ROPE_PRESETS) == 16
    for name, preset in ROPE_PRESETS.items():
        matches = [r for r in rows if r.split("|")[1].strip().startswith(name.split(" (")[0])]
        assert len(matches) == 1, name
        cells = [c.strip().replace(" ", "") for c in matches[0].split("|")[1:-1]]
        assert cells[1].startswith(str(preset.rotary_dim)), name
        assert cells[2] == f"{preset.base:.0f}", name
        assert cells[4] == ("–" if preset.factor == 1.0 else f"{preset.factor:g}"), name
        assert cells[5] == str(preset.train_len) and cells[6] == str(preset.context), name
