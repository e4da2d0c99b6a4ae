"""The Hugging Face config blocks: transformers reads them back into the library's spectra."""

from __future__ import annotations

import math

import pytest
import torch
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding

from posenc_lib import (
    extended_rope,
    hf_config_fields,
    hf_legacy_rope_config,
    hf_rope_parameters,
)
from posenc_lib.hf import format_hf_config
from posenc_lib.presets import PER_LAYER_MODEL_TYPES, ROPE_PRESETS


def _hf(fields: dict, head_dim: int, seq_len: int | None = None) -> tuple[torch.Tensor, float]:
    config = LlamaConfig(hidden_size=4 * head_dim, num_attention_heads=4, head_dim=head_dim,
                         **fields)
    kind = config.rope_parameters["rope_type"]
    if kind == "default":
        return GPTNeoXRotaryEmbedding.compute_default_rope_parameters(config)
    return ROPE_INIT_FUNCTIONS[kind](config, seq_len=seq_len)


GRID = [(16, 1e4, 1.5, 512), (64, 1e4, 2.0, 2048), (128, 5e5, 8.0, 8192),
        (96, 1e6, 4.0, 32768), (32, 500.0, 32.0, 1024)]
METHODS = ("none", "pi", "ntk", "dynamic", "yarn", "llama3", "abf")


@pytest.mark.parametrize("legacy", [False, True])
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(("dim", "base", "factor", "length"), GRID)
def test_transformers_reads_our_config_as_our_spectrum(
    method: str, dim: int, base: float, factor: float, length: int, legacy: bool
) -> None:
    fields = hf_config_fields(method, dim=dim, base=base, factor=factor,
                              original_max_position=length, legacy=legacy)
    inv, att = _hf(fields, dim)
    ours, ours_att = extended_rope(method, dim=dim, base=base, factor=factor,
                                   original_max_position=length)
    torch.testing.assert_close(inv.double(), ours, rtol=3e-6, atol=0)
    assert att == pytest.approx(ours_att, rel=1e-12)


@pytest.mark.parametrize("seq_len", [100, 4096, 5000, 20000])
def test_dynamic_at_the_current_length(seq_len: int) -> None:
    fields = hf_config_fields("dynamic", dim=64, base=1e4, factor=4.0, original_max_position=4096)
    inv, _ = _hf(fields, 64, seq_len=seq_len)
    ours, _ = extended_rope("dynamic", dim=64, base=1e4, factor=4.0, original_max_position=4096,
                            seq_len=seq_len)
    torch.testing.assert_close(inv.double(), ours, rtol=3e-6, atol=0)


@pytest.mark.parametrize("options", [
    {"beta_fast": 16.0, "beta_slow": 2.0}, {"truncate": False},
    {"mscale": 0.707, "mscale_all_dim": 0.707}, {"mscale": 1.0, "mscale_all_dim": 0.707},
    {"attention_factor": 1.5}, {"mscale": 0.707}, {"mscale_all_dim": 0.707},
])
def test_yarn_options(options: dict) -> None:
    fields = hf_config_fields("yarn", dim=64, base=1e4, factor=40.0, original_max_position=4096,
                              **options)
    inv, att = _hf(fields, 64)
    ours, ours_att = extended_rope("yarn", dim=64, base=1e4, factor=40.0,
                                   original_max_position=4096, **options)
    torch.testing.assert_close(inv.double(), ours, rtol=3e-6, atol=0)
    assert att == pytest.approx(ours_att, rel=1e-12)


@pytest.mark.parametrize("name", list(ROPE_PRESETS))
@pytest.mark.parametrize("legacy", [False, True])
def test_every_preset(name: str, legacy: bool) -> None:
    preset = ROPE_PRESETS[name]
    fields = preset.hf_fields(legacy=legacy)
    if preset.model_type in PER_LAYER_MODEL_TYPES:  # own class: tests/test_presets_real.py
        fields.pop("rope_local_base_freq", None)
        if not legacy:
            fields["rope_parameters"] = fields["rope_parameters"]["full_attention"]
    if legacy and preset.model_type == "gpt_neox":  # its own keys; LlamaConfig reads Llama's
        fields["rope_theta"] = fields.pop("rotary_emb_base")
        fields["partial_rotary_factor"] = fields.pop("rotary_pct")
    inv, att = _hf(fields, preset.head_dim)
    ours, ours_att = preset.rope()
    torch.testing.assert_close(inv.double(), ours, rtol=3e-6, atol=0)
    assert att == pytest.approx(ours_att, rel=1e-12)


def test_longrope_long_factors_beyond_the_original_length() -> None:
    preset = ROPE_PRESETS["Phi-3.5-mini-instruct"]
    inv, _ = _hf(preset.hf_fields(), 96, seq_len=5000)
    torch.testing.assert_close(inv.double(), preset.rope(seq_len=5000)[0], rtol=3e-6, atol=0)
    assert not torch.allclose(preset.rope(seq_len=5000)[0], preset.rope(seq_len=4096)[0])


def test_shapes_of_the_blocks() -> None:
    assert hf_rope_parameters("abf", dim=128, base=500000.0) == {
        "rope_type": "default", "rope_theta": 500000.0}
    ntk = hf_rope_parameters("ntk", dim=128, base=1e4, factor=8.0)["rope_theta"]
    assert ntk == pytest.approx(1e4 * 8 ** (128 / 126)) and round(ntk) == 82685
    assert hf_legacy_rope_config("pi", dim=64, factor=2.0) == {
        "rope_theta": 10000.0, "rope_scaling": {"rope_type": "linear", "factor": 2.0}}
    assert hf_legacy_rope_config("none", dim=64)["rope_scaling"] is None
    fields = hf_config_fields("dynamic", dim=64, factor=4.0, original_max_position=2048)
    assert fields["max_position_embeddings"] == 2048  # transformers' training length
    assert hf_config_fields("yarn", dim=64, factor=4.0,
                            original_max_position=2048)["max_position_embeddings"] == 8192
    neox = ROPE_PRESETS["GPT-NeoX-20B"].hf_fields(legacy=True)
    assert neox["rotary_pct"] == 0.25 and neox["rope_scaling"] is None  # GPT-NeoX's own keys
    text = format_hf_config(ROPE_PRESETS["Phi-3.5-mini-instruct"].hf_fields(), max_list=3)
    assert "… 48 values …" in text and '"rope_type": "longrope"' in text


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"method": "ntk-aware"}, "method"),
    ({"method": "pi", "factor": 0.5}, "factor"),
    ({"method": "pi", "factor": float("nan")}, "factor"),
    ({"method": "yarn", "factor": 2.0}, "original_max_position"),
    ({"method": "llama3", "factor": 2.0}, "original_max_position"),
    ({"method": "longrope", "original_max_position": 4096}, "short_factor"),
    ({"method": "abf", "base": "500000"}, "base"),
    ({"method": "abf", "base": float("nan")}, "base"),
    ({"method": "abf", "base": -5.0}, "base"),
    ({"method": "pi", "dim": 7}, "dim"),
    ({"method": "ntk", "dim": 2}, "dim"),
    ({"method": "pi", "beta_fast": 3.0}, "beta_fast"),
    ({"method": "yarn", "original_max_position": 0}, "original_max_position"),
    ({"method": "yarn", "original_max_position": 4096, "mscale": -0.7}, "mscale"),
    ({"method": "llama3", "original_max_position": 4096, "low_freq_factor": 5.0}, "low_freq"),
    ({"method": "none", "partial_rotary_factor": 1.5}, "partial_rotary_factor"),
])
def test_bad_input_names_the_parameter(kwargs: dict, match: str) -> None:
    kwargs = {"dim": 64, **kwargs}
    with pytest.raises((ValueError, TypeError), match=match):
        hf_rope_parameters(kwargs.pop("method"), **kwargs)


def test_dynamic_with_another_max_position_is_rejected() -> None:
    with pytest.raises(ValueError, match="max_position_embeddings"):
        hf_config_fields("dynamic", dim=64, factor=2.0, original_max_position=2048,
                         max_position_embeddings=4096)
    with pytest.raises(ValueError, match="original_max_position"):
        hf_config_fields("none", dim=64, original_max_position=None)
    assert math.isfinite(hf_rope_parameters("none", dim=64)["rope_theta"])


@pytest.mark.parametrize("beta", [1.0, 4.0, 32.0])
def test_yarn_with_equal_ramp_ends_matches_transformers(beta: float) -> None:
    # Kimi K2's config sets beta_fast = beta_slow = 1: transformers runs it (a one-index ramp).
    from posenc_lib.scaling import yarn_inv_freq

    config = LlamaConfig(hidden_size=4 * 64, num_attention_heads=4, head_dim=64,
                         max_position_embeddings=4096 * 32,
                         rope_parameters={"rope_type": "yarn", "rope_theta": 50_000.0,
                                          "factor": 32.0, "original_max_position_embeddings": 4096,
                                          "beta_fast": beta, "beta_slow": beta})
    inv, attention = ROPE_INIT_FUNCTIONS["yarn"](config)
    ours, ours_attention = yarn_inv_freq(64, 50_000.0, 32.0, 4096, beta, beta)
    torch.testing.assert_close(inv.double(), ours, rtol=3e-6, atol=0)
    assert attention == pytest.approx(ours_attention, rel=1e-12)
