"""check_rope_config: a pasted config.json read as transformers reads it, with its problems."""

from __future__ import annotations

import json

import pytest
import torch

from posenc_lib import llama3_inv_freq, rope_inv_freq, yarn_inv_freq
from posenc_lib.config_check import check_rope_config

LLAMA31 = {
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "max_position_embeddings": 131072,
    "rope_theta": 500000.0,
    "rope_scaling": {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    },
}


def test_a_correct_llama31_config_has_no_problems_and_transformers_spectrum() -> None:
    report = check_rope_config(json.dumps(LLAMA31))
    assert report.problems == [] and report.rope_type == "llama3" and report.head_dim == 128
    assert torch.allclose(report.inv_freq, llama3_inv_freq(128, 5e5, 8.0, 8192), rtol=3e-6)
    assert report.attention_factor == 1.0
    assert "rope_scaling.low_freq_factor" in report.found


def test_plain_config_is_default_rope() -> None:
    report = check_rope_config({"head_dim": 64, "rope_theta": 1e4, "max_position_embeddings": 2048})
    assert report.rope_type == "default" and report.problems == []
    assert torch.allclose(report.inv_freq, rope_inv_freq(64, 1e4).double())


def test_yarn_without_original_is_flagged_and_uses_the_long_context() -> None:
    cfg = {
        "head_dim": 128,
        "rope_theta": 1e4,
        "max_position_embeddings": 32768,
        "rope_scaling": {"rope_type": "yarn", "factor": 8.0},
    }
    report = check_rope_config(cfg)
    assert any("original_max_position_embeddings" in p for p in report.problems)
    # transformers measures the ramp against max_position_embeddings
    assert torch.allclose(report.inv_freq, yarn_inv_freq(128, 1e4, 8.0, 32768)[0], rtol=1e-6)


def test_inconsistent_and_legacy_keys_are_reported() -> None:
    cfg = {
        "hidden_size": 3584,
        "num_attention_heads": 28,
        "max_position_embeddings": 32768,
        "rope_theta": 1e6,
        "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
    }
    report = check_rope_config(cfg)
    problems = report.problems
    assert any("#38224" in p for p in problems)
    # The legacy key "type" is a note, not a problem: transformers 5 reads it as rope_type.
    assert not any("'type'" in p for p in problems) and any("'type'" in n for n in report.notes)
    assert report.rope_type == "yarn" and "note: rope_scaling uses the old key" in report.summary()
    longrope = {
        "head_dim": 96,
        "max_position_embeddings": 131072,
        "rope_theta": 1e4,
        "rope_scaling": {
            "rope_type": "longrope",
            "short_factor": [1.0] * 48,
            "long_factor": [1.0] * 40,
            "original_max_position_embeddings": 4096,
        },
    }
    assert any("long_factor" in p for p in check_rope_config(longrope).problems)
    unknown = {"head_dim": 64, "rope_scaling": {"rope_type": "ntk", "factor": 2.0}}
    report = check_rope_config(unknown)
    assert any("not one of" in p for p in report.problems) and report.inv_freq is None


def test_bad_input_raises_clear_errors() -> None:
    with pytest.raises(ValueError, match="valid JSON"):
        check_rope_config("{not json")
    with pytest.raises(TypeError, match="config must be a dict"):
        check_rope_config(["head_dim"])
    with pytest.raises(ValueError, match="head size"):
        check_rope_config({"rope_theta": 1e4})
    with pytest.raises(ValueError, match="rope_theta"):
        check_rope_config({"head_dim": 64, "rope_theta": "big"})


# --- with model_type: the model's own config class and rotary module ------------------------------

DEEPSEEK_V3 = {  # deepseek-ai/DeepSeek-V3 config.json, RoPE-relevant fields
    "model_type": "deepseek_v3",
    "hidden_size": 7168,
    "num_attention_heads": 128,
    "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128,
    "v_head_dim": 128,
    "kv_lora_rank": 512,
    "q_lora_rank": 1536,
    "max_position_embeddings": 163840,
    "rope_theta": 10000,
    "rope_scaling": {
        "type": "yarn",
        "factor": 40,
        "original_max_position_embeddings": 4096,
        "beta_fast": 32,
        "beta_slow": 1,
        "mscale": 1.0,
        "mscale_all_dim": 1.0,
    },
}


def test_deepseek_v3_rotates_qk_rope_head_dim_not_hidden_over_heads() -> None:
    report = check_rope_config(DEEPSEEK_V3)
    assert report.head_dim == report.rotary_dim == 64  # not 7168/128 = 56
    ours = yarn_inv_freq(64, 1e4, 40.0, 4096)[0]
    torch.testing.assert_close(report.inv_freq, ours, rtol=3e-6, atol=0)


def test_per_layer_gemma3_block_is_read_for_the_full_attention_layers() -> None:
    from posenc_lib.presets import ROPE_PRESETS

    preset = ROPE_PRESETS["Gemma 3 12B (global layers)"]
    cfg = {
        "model_type": "gemma3",
        "text_config": {
            "model_type": "gemma3_text",
            "hidden_size": 3840,
            "num_attention_heads": 16,
            "head_dim": 256,
            **preset.hf_fields(),
        },
    }
    report = check_rope_config(cfg)
    assert report.rope_type == "linear" and report.base == 1e6 and report.factor == 8.0
    assert not any("rope_theta" in p for p in report.problems)
    torch.testing.assert_close(report.inv_freq, preset.rope()[0], rtol=3e-6, atol=0)


def test_phi3_su_is_read_as_longrope() -> None:
    cfg = {
        "model_type": "phi3",
        "hidden_size": 3072,
        "num_attention_heads": 32,
        "max_position_embeddings": 131072,
        "original_max_position_embeddings": 4096,
        "rope_theta": 10000.0,
        "rope_scaling": {"type": "su", "short_factor": [1.0] * 48, "long_factor": [2.0] * 48},
    }
    report = check_rope_config(cfg)
    assert report.rope_type == "longrope" and report.inv_freq is not None
    assert not any("refuses" in p for p in report.problems)


def test_legacy_rope_scaling_beside_rope_parameters_is_what_transformers_runs() -> None:
    cfg = {
        "model_type": "llama",
        **LLAMA31,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0},
    }
    report = check_rope_config(cfg)
    assert report.rope_type == "llama3" and report.base == 500000.0
    torch.testing.assert_close(
        report.inv_freq, llama3_inv_freq(128, 5e5, 8.0, 8192), rtol=3e-6, atol=0
    )


def test_a_config_transformers_rejects_is_a_problem() -> None:
    cfg = {
        "model_type": "llama",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "max_position_embeddings": 32768,
        "rope_theta": 1e4,
        "rope_scaling": {
            "rope_type": "yarn",
            "factor": 4.0,
            "original_max_position_embeddings": 8192,
            "beta_fast": "32",
        },
    }
    report = check_rope_config(cfg)
    assert report.inv_freq is None and any("rejects" in p for p in report.problems)
    assert "no problems found" not in report.summary()


def test_correct_dynamic_block_is_clean_with_one_note_on_the_training_length() -> None:
    llama2 = {  # Llama-2-style: max_position_embeddings is the training length
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "max_position_embeddings": 4096,
        "rope_theta": 1e4,
        "rope_scaling": {"rope_type": "dynamic", "factor": 8.0},
    }
    report = check_rope_config(llama2)
    assert report.problems == [] and "no problems found" in report.summary()
    assert len(report.notes) == 1 and "training length" in report.notes[0]
    assert "(4096)" in report.notes[0] and report.inv_freq is not None
    # what the tool can know is wrong: max_position_embeddings beyond the declared training length
    too_long = {
        **llama2,
        "max_position_embeddings": 32768,
        "rope_scaling": {
            "rope_type": "dynamic",
            "factor": 8.0,
            "original_max_position_embeddings": 4096,
        },
    }
    report = check_rope_config(too_long)
    assert len(report.problems) == 1 and "must be the training length" in report.problems[0]
    assert report.notes == []


def test_legacy_type_key_alone_is_a_note_and_runs_like_rope_type() -> None:
    legacy = {
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "max_position_embeddings": 16384,
        "rope_theta": 1e4,
        "rope_scaling": {"type": "linear", "factor": 4.0},
    }
    modern = {**legacy, "rope_scaling": {"rope_type": "linear", "factor": 4.0}}
    old, new = check_rope_config(legacy), check_rope_config(modern)
    assert old.problems == [] == new.problems
    assert len(old.notes) == 1 and new.notes == []
    assert old.rope_type == new.rope_type == "linear"
    assert old.inv_freq is not None and new.inv_freq is not None
    assert torch.equal(old.inv_freq, new.inv_freq)
    expected = rope_inv_freq(128, 1e4).to(old.inv_freq.dtype) / 4
    assert torch.allclose(old.inv_freq, expected, rtol=1e-6)
