"""The position inspector against the models' own code (transformers 5.25, tiny random models).

For every supported ``model_type`` a tiny random model is built from its config class (CPU, a few
layers, hidden size 64). Three checks:

* its rotary embedding (per layer type) holds the plan's inverse frequencies and attention factor;
* the q and k each layer hands to attention move, when every position id is shifted by ``o``,
  exactly as the plan's rotation by ``o`` says (and not at all on NoPE layers): this fixes the
  rotated block, its pairing and frequencies, and the per-layer kind, without reading the layer's
  attributes;
* the windows, chunks and query scale the plan names are those of the layers.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

transformers = pytest.importorskip("transformers")

from transformers import AttentionInterface, AutoModel  # noqa: E402
from transformers.masking_utils import AttentionMaskInterface, eager_mask  # noqa: E402

from posenc_lib.architectures import (  # noqa: E402
    SUPPORTED_MODEL_TYPES,
    LayerPosition,
    QueryScale,
    collapse_ranges,
    format_plan,
    position_plan,
    proportional_inv_freq,
)
from posenc_lib.architectures.hf_check import TINY_CONFIGS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

_BASE = dict(vocab_size=97, hidden_size=64, intermediate_size=64, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=512)

# model_type -> config kwargs of a tiny model that still shows the family's layer mix: the
# library's own table (posenc_lib.architectures.hf_check) plus the older families, and Llama with
# its llama3 scaling rather than the default.
TINY: dict[str, dict[str, Any]] = {
    **TINY_CONFIGS,
    "llama": {**_BASE, "num_hidden_layers": 2,
              "rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                                  "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                  "original_max_position_embeddings": 64}},
    "mistral": {**_BASE, "num_hidden_layers": 2, "sliding_window": 8, "head_dim": 16},
    "qwen2": {**_BASE, "num_hidden_layers": 3, "use_sliding_window": True, "sliding_window": 8,
              "max_window_layers": 1,
              "rope_parameters": {"rope_type": "yarn", "rope_theta": 1e6, "factor": 4.0,
                                  "original_max_position_embeddings": 128}},
    "qwen3": {**_BASE, "num_hidden_layers": 2, "head_dim": 16,
              "rope_parameters": {"rope_type": "default", "rope_theta": 5e6}},
    "gptj": {"vocab_size": 97, "n_embd": 64, "n_head": 2, "n_layer": 2, "rotary_dim": 8,
             "n_positions": 512},
    "cohere": {**_BASE, "num_hidden_layers": 2, "pad_token_id": 0},
    "olmo2": {**_BASE, "num_hidden_layers": 2},
    "gemma2": {**_BASE, "num_hidden_layers": 4, "head_dim": 16, "sliding_window": 8,
               "query_pre_attn_scalar": 16},
    "deepseek_v2": {**_BASE, "num_hidden_layers": 2, "moe_intermediate_size": 32,
                    "n_routed_experts": 2, "num_experts_per_tok": 1, "n_group": 1,
                    "topk_group": 1, "first_k_dense_replace": 1, "kv_lora_rank": 16,
                    "q_lora_rank": 32, "qk_rope_head_dim": 8, "qk_nope_head_dim": 16,
                    "v_head_dim": 16, "num_key_value_heads": 4,
                    "rope_parameters": {"rope_type": "yarn", "rope_theta": 10000.0,
                                        "factor": 40.0, "original_max_position_embeddings": 64,
                                        "mscale": 0.707, "mscale_all_dim": 0.707}},
    "glm4": {**_BASE, "num_hidden_layers": 2, "head_dim": 16, "pad_token_id": 0},
    "gemma": {**_BASE, "num_hidden_layers": 2, "head_dim": 16},
}
ALIBI_TINY: dict[str, dict[str, Any]] = {
    "bloom": {"vocab_size": 97, "hidden_size": 48, "n_head": 6, "n_layer": 2},
    "mpt": {"vocab_size": 97, "d_model": 48, "n_heads": 6, "n_layers": 2},
}

CAPTURED: list[tuple[int, torch.Tensor, torch.Tensor, float]] = []
MASKS: list[tuple[int, torch.Tensor]] = []


def _capture(module, query, key, value, attention_mask, **kwargs):  # type: ignore[no-untyped-def]
    """Record the q and k a layer hands to attention, then run the model's own eager attention."""
    CAPTURED.append((int(module.layer_idx), query.detach().clone(), key.detach().clone(),
                     float(kwargs.get("scaling") or 0.0)))
    MASKS.append((int(module.layer_idx), attention_mask))
    eager = importlib.import_module(type(module).__module__).eager_attention_forward
    return eager(module, query, key, value, attention_mask, **kwargs)


AttentionInterface.register("posenc_test_capture", _capture)
# A custom attention without a mask function of its own gets no mask at all: give it the eager one.
AttentionMaskInterface.register("posenc_test_capture", eager_mask)


def _config(model_type: str, kwargs: dict[str, Any]) -> Any:
    return transformers.CONFIG_MAPPING[model_type](**json.loads(json.dumps(kwargs)))


def _model(config: Any) -> Any:
    torch.manual_seed(0)
    model = AutoModel.from_config(config, attn_implementation="posenc_test_capture")
    return model.eval()


@functools.cache
def _tiny(model_type: str) -> tuple[Any, Any]:
    """One tiny model per type, shared by the tests (none of them changes it for good)."""
    config = _config(model_type, TINY[model_type])
    return config, _model(config)


def _run(model: Any, positions: torch.Tensor) -> dict[int, tuple[torch.Tensor, ...]]:
    CAPTURED.clear()
    MASKS.clear()
    ids = torch.arange(positions.shape[0]).remainder(97)[None] + 1
    with torch.no_grad():
        model(input_ids=ids, position_ids=positions[None], attention_mask=torch.ones_like(ids),
              use_cache=False)
    return {layer: (q, k, s) for layer, q, k, s in CAPTURED}


def _rotary_tables(model: Any) -> dict[str | None, tuple[torch.Tensor, float]]:
    """Inverse frequencies and attention factor of the model's rotary embedding, per layer type."""
    rotary = model.rotary_emb
    if hasattr(rotary, "embed_positions"):  # GPT-J: a sin/cos table; row 1 holds the frequencies
        sin, cos = rotary.embed_positions[1].double().chunk(2)
        return {None: (torch.atan2(sin, cos), 1.0)}
    if hasattr(rotary, "inv_freq"):
        return {None: (rotary.inv_freq, float(getattr(rotary, "attention_scaling", 1.0)))}
    return {
        lt: (getattr(rotary, f"{lt}_inv_freq"), float(getattr(rotary, f"{lt}_attention_scaling")))
        for lt in rotary.layer_types
    }


@pytest.mark.parametrize("model_type", sorted(TINY))
def test_plan_matches_rotary_embedding(model_type: str) -> None:
    config, model = _tiny(model_type)
    plan = position_plan(config)
    assert len(plan) == config.num_hidden_layers
    tables = _rotary_tables(model)
    rope_layers = [e for e in plan if e.kind == "rope"]
    assert rope_layers
    for entry in rope_layers:
        inv_freq, factor = tables[entry.layer_type if len(tables) > 1 else None]
        assert entry.inv_freq is not None and entry.inv_freq.dtype == torch.float64
        torch.testing.assert_close(entry.inv_freq.float(), inv_freq.float(), rtol=2e-6, atol=0)
        assert entry.rotary_dim == 2 * inv_freq.shape[0]
        assert math.isclose(entry.attention_factor, factor, rel_tol=1e-6)


@pytest.mark.parametrize("model_type", sorted(TINY))
def test_plan_reproduces_what_each_layer_does_to_q_and_k(model_type: str) -> None:
    config, model = _tiny(model_type)
    plan = position_plan(config)
    seq = 12
    base = _run(model, torch.arange(seq))
    assert sorted(base) == list(range(config.num_hidden_layers))
    kinds = set()
    # Phi-3's LongRoPE switches to its long factors once a position passes the original 64.
    for offset in (5, 37, 50) if model_type == "phi3" else (5, 37, 300):
        shifted = _run(model, torch.arange(seq) + offset)
        for entry in plan:
            q0, k0, _ = base[entry.layer]
            q1, k1, _ = shifted[entry.layer]
            turn = dataclasses.replace(entry, attention_factor=1.0)
            if model_type == "deepseek_v3":
                # DeepSeek de-interleaves its pairs before rotating: the q and k it hands to
                # attention are in the half layout (test_deepseek_interleave checks the map).
                turn = dataclasses.replace(turn, convention="half")
            shift = torch.full((seq,), float(offset))
            torch.testing.assert_close(q1, turn.rotate(q0, shift), rtol=1e-4, atol=1e-4)
            torch.testing.assert_close(k1, turn.rotate(k0, shift), rtol=1e-4, atol=1e-4)
            kinds.add(entry.kind)
            if entry.kind == "rope" and entry.rotated_pairs:
                # the check has teeth: the layer's q really moved
                assert not torch.allclose(q1, q0, atol=1e-3)
    assert kinds == {e.kind for e in plan}


@pytest.mark.parametrize("model_type", sorted(TINY))
def test_windows_chunks_and_sinks_match_the_layers(model_type: str) -> None:
    config, model = _tiny(model_type)
    plan = position_plan(config)
    layers = getattr(model, "layers", None) or getattr(model, "h", None)
    for entry, layer in zip(plan, layers, strict=True):
        attn = getattr(layer, "self_attn", None) or getattr(layer, "attention", None) or layer.attn
        window = getattr(attn, "sliding_window", None)
        if window is None and model_type in ("mistral", "phi3", "ministral3"):
            window = config.sliding_window  # passed to attention from the config
        assert entry.window == window, entry
        if model_type == "llama4_text":
            assert entry.chunk == (config.attention_chunk_size if attn.use_rope else None)
            assert entry.kind == ("rope" if attn.use_rope else "nope")
        assert entry.sinks == hasattr(attn, "sinks")


def test_llama4_query_scale_is_the_model_s() -> None:
    """On NoPE layers Llama 4 multiplies q by log1p(floor((m+1)/floor_scale))·attn_scale + 1."""
    config, model = _tiny("llama4_text")
    plan = position_plan(config)
    nope = [e for e in plan if e.kind == "nope"]
    assert [e.layer for e in nope] == [3] and nope[0].query_scale is not None
    for layer in model.layers:
        layer.self_attn.attn_temperature_tuning = False
    plain = _run(model, torch.arange(20))[3][0]
    for layer in model.layers:
        layer.self_attn.attn_temperature_tuning = True
    tuned = _run(model, torch.arange(20))[3][0]
    scale = nope[0].query_scale(torch.arange(20)).float()
    torch.testing.assert_close(tuned, plain * scale[:, None], rtol=1e-5, atol=1e-6)
    assert scale[3] == 2 * 0 + 1 + 0.1 * math.log(2) and scale[2] == 1.0  # floor_scale 4


def test_deepseek_softmax_scale_is_m_squared() -> None:
    config, model = _tiny("deepseek_v3")
    entry = position_plan(config)[0]
    scaling = _run(model, torch.arange(4))[0][2]
    m = 0.1 * math.log(40) + 1
    assert math.isclose(entry.softmax_scale_factor, m * m)
    assert math.isclose(scaling, (16 + 8) ** -0.5 * entry.softmax_scale_factor, rel_tol=1e-6)
    assert entry.rotary_offset == 16 and entry.rotary_dim == 8 and entry.head_dim == 24


def test_deepseek_interleave() -> None:
    """rope_interleave: pairs (2i, 2i+1) of the projection, rotated, then laid out half-style."""
    from transformers.models.deepseek_v3 import modeling_deepseek_v3 as ds

    from posenc_lib import interleaved_to_half_permutation

    config = _config("deepseek_v3", TINY["deepseek_v3"])
    model = _model(config)
    entry = position_plan(config)[0]
    positions = torch.tensor([0, 3, 17, 250])
    cos, sin = model.rotary_emb(torch.zeros(1), positions[None])
    q = torch.randn(1, 2, 4, 8, generator=torch.Generator().manual_seed(1))
    hf_q, _ = ds.apply_rotary_pos_emb_interleave(q, q, cos, sin)
    padded = torch.cat((torch.zeros(1, 2, 4, 16), q), dim=-1)  # the 16 no-RoPE features first
    ours = entry.rotate(padded, positions)[..., 16:]
    perm = interleaved_to_half_permutation(8)
    torch.testing.assert_close(hf_q, ours[..., perm], rtol=1e-5, atol=1e-6)


def test_longrope_long_factors_past_the_original_length() -> None:
    config = _config("phi3", TINY["phi3"])
    model = _model(config)
    short = position_plan(config)[0]
    long_ = position_plan(config, seq_len=65)[0]
    _run(model, torch.arange(70))  # the model switches when a position passes 64
    assert short.inv_freq is not None and long_.inv_freq is not None
    torch.testing.assert_close(long_.inv_freq.float(), model.rotary_emb.inv_freq, rtol=2e-6, atol=0)
    assert not torch.allclose(short.inv_freq, long_.inv_freq)
    assert short.rotary_dim == 12 and short.head_dim == 16


@pytest.mark.parametrize("model_type", sorted(ALIBI_TINY))
def test_alibi_plans_carry_the_model_s_slopes(model_type: str) -> None:
    config = _config(model_type, ALIBI_TINY[model_type])
    plan = position_plan(config)
    assert {e.kind for e in plan} == {"alibi"} and len(plan) == 2
    if model_type == "bloom":
        from transformers.models.bloom.modeling_bloom import build_alibi_tensor

        hf = build_alibi_tensor(torch.ones(1, 2), 6, torch.float32)[:, 0, 1]  # position 1: slope
    else:
        from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

        table = build_mpt_alibi_tensor(6, 2)  # (heads, 1, seq): m·(j − (seq − 1))
        hf = table[:, 0, 1] - table[:, 0, 0]
    assert plan[0].alibi_slopes is not None
    torch.testing.assert_close(plan[0].alibi_slopes.float(), hf.flatten(), rtol=1e-6, atol=0)


def test_every_supported_type_is_checked() -> None:
    wrappers = {"gemma3", "gemma4", "llama4", "mistral3"}
    untested = (set(SUPPORTED_MODEL_TYPES) - set(TINY) - set(ALIBI_TINY) - wrappers
                - {f"{t}_text" for t in MROPE_TINY} - set(MROPE_TINY))
    assert not untested, untested


def test_unknown_model_type_is_named() -> None:
    with pytest.raises(ValueError, match="'not_a_model'"):
        position_plan({"model_type": "not_a_model", "num_hidden_layers": 2})
    with pytest.raises(TypeError, match="config"):
        position_plan(["llama"])
    # BERT's attention adds no position (it enters as learned embeddings before layer 0): said.
    bert = position_plan({"model_type": "bert", "num_hidden_layers": 2})
    assert [e.kind for e in bert] == ["nope", "nope"] and all(e.bidirectional for e in bert)
    assert any("no rotary module" in note for note in bert.notes)


def test_no_rope_layers_one_means_rope_is_applied() -> None:
    """The flag users misread: in no_rope_layers, 1 marks a layer that DOES use RoPE."""
    cfg = {"model_type": "smollm3", "num_hidden_layers": 4, "hidden_size": 64,
           "num_attention_heads": 4, "no_rope_layers": [0, 1, 1, 1]}
    assert [e.kind for e in position_plan(cfg)] == ["nope", "rope", "rope", "rope"]


def test_proportional_is_not_partial() -> None:
    """Gemma 4's proportional RoPE keeps the whole-head exponents and zeroes the low frequencies."""
    prop = proportional_inv_freq(64, 1e6, 0.25)
    assert int((prop != 0).sum()) == 8 and math.isclose(float(prop[1]), 1e6 ** (-2 / 64))
    from posenc_lib import rope_inv_freq

    partial = rope_inv_freq(16, 1e6)  # NeoX partial: 8 pairs spread over 16 features
    assert not torch.allclose(prop[:8], partial)
    torch.testing.assert_close(prop[:8], rope_inv_freq(64, 1e6)[:8])


def test_collapse_ranges_and_table() -> None:
    assert collapse_ranges([0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 12]) == "0–4, 6–10, 12"
    assert collapse_ranges([]) == ""
    assert collapse_ranges(list(range(1, 24, 2))) == "1, 3, …, 23 (every 2nd)"
    sliding = [i for i in range(48) if (i + 1) % 6]
    assert collapse_ranges(sliding) == "0–4, 6–10, …, 42–46"
    assert collapse_ranges(sliding, max_runs=None).count("–") == 8
    config = {"model_type": "gemma3_text", "num_hidden_layers": 12, "head_dim": 256,
              "sliding_window": 1024, "rope_theta": 1e6, "rope_local_base_freq": 1e4,
              "rope_scaling": {"rope_type": "linear", "factor": 8.0}}
    text = format_plan(position_plan(config))
    assert text.splitlines() == [
        "layers 0–4, 6–10  RoPE base 10 000, rotary 256 of 256, half, window 1 024, causal, "
        "qk-norm (per-head)",
        "layers 5, 11      RoPE base 1 000 000, rotary 256 of 256, half, linear ×8, causal, "
        "qk-norm (per-head)",
    ]
    # A pattern whose last run is cut short by the layer count still shortens (Gemma 3 27B).
    sliding62 = [i for i in range(62) if (i + 1) % 6]
    assert collapse_ranges(sliding62) == "0–4, 6–10, …, 60–61"
    assert collapse_ranges([0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 14]) == "0–2, 4–6, 8–10, 12, 14"


def test_query_scale_forms() -> None:
    beta = QueryScale("llama_4_scaling_beta", 0.1, 16384)
    values = beta(torch.tensor([0.0, 16383.0, 16384.0]))
    torch.testing.assert_close(values, torch.tensor([1.0, 1.0, 1 + 0.1 * math.log(2)],
                                                    dtype=torch.float64))
    with pytest.raises(ValueError, match="form"):
        QueryScale("yarn", 0.1, 10)


def test_layer_position_rejects_bad_input() -> None:
    entry = position_plan({"model_type": "llama", "num_hidden_layers": 1, "hidden_size": 64,
                           "num_attention_heads": 4})[0]
    assert isinstance(entry, LayerPosition)
    with pytest.raises(ValueError, match="head_dim"):
        entry.rotate(torch.zeros(3, 8))
    with pytest.raises(ValueError, match="kind"):
        LayerPosition(layer=0, kind="learned", layer_type="full_attention", head_dim=8)


def test_cli_prints_the_plan(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "cohere2", "num_hidden_layers": 8, "head_dim": 128,
                                "sliding_window": 4096, "rope_theta": 50000.0}))
    out = subprocess.run([sys.executable, "-m", "posenc_lib", "plan", str(path)],
                         capture_output=True, text=True, check=True, cwd=ROOT, timeout=60).stdout
    assert ("layers 0–2, 4–6  RoPE base 50 000, rotary 128 of 128, interleaved, window 4 096, "
            "causal") in out
    assert "layers 3, 7" in out and "NoPE" in out
    vl = tmp_path / "qwen3_vl.json"
    vl.write_text(json.dumps({"model_type": "qwen3_vl", "text_config": {
        "model_type": "qwen3_vl_text", "num_hidden_layers": 4, "head_dim": 128,
        "rope_theta": 5e6, "rope_scaling": {"mrope_section": [24, 20, 20]}}}))
    out = subprocess.run([sys.executable, "-m", "posenc_lib", "plan", str(vl)],
                         capture_output=True, text=True, check=True, cwd=ROOT, timeout=60).stdout
    assert ("layers 0–3  RoPE base 5 000 000, rotary 128 of 128, M-RoPE (t,h,w sections 24/20/20, "
            "interleaved), half") in out
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"model_type": "not_a_model", "num_hidden_layers": 2}))
    run = subprocess.run([sys.executable, "-m", "posenc_lib", "plan", str(bad)],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert run.returncode == 2 and "'not_a_model'" in run.stderr
    # a reader that stops early (`plan ... | head -1`): no BrokenPipeError traceback on stderr
    piped = subprocess.Popen([sys.executable, "-m", "posenc_lib", "plan", str(path)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    piped.stdout.close()  # closed before the plan is written
    _, err = piped.communicate(timeout=60)
    assert piped.returncode == 1 and b"Traceback" not in err and b"BrokenPipe" not in err


# --- presets and the transformers 5 config blocks -------------------------------------------------

from posenc_lib.hf import (  # noqa: E402
    hf_nested_rope_parameters,
    hf_proportional_rope_parameters,
    hf_rope_parameters,
)
from posenc_lib.presets import MODERN_PRESETS, PRESET_CONFIGS, ROPE_PRESETS  # noqa: E402

ALL_PRESETS = {**ROPE_PRESETS, **MODERN_PRESETS}


def test_every_preset_has_a_config() -> None:
    assert set(PRESET_CONFIGS) == set(ALL_PRESETS)
    assert set(MODERN_PRESETS) - set(ROPE_PRESETS) == {"Llama 4 Scout (RoPE layers)"}


@pytest.mark.parametrize("name", sorted(PRESET_CONFIGS))
def test_the_inspector_reads_every_preset(name: str) -> None:
    """The plan's extended layers carry exactly the preset's spectrum and attention factor."""
    preset = ALL_PRESETS[name]
    plan = position_plan(PRESET_CONFIGS[name])
    inv_freq, factor = preset.rope()
    extended = [e for e in plan if e.kind == "rope" and e.inv_freq is not None
                and e.inv_freq.shape == inv_freq.shape and torch.allclose(e.inv_freq, inv_freq)]
    assert extended, format_plan(plan)
    assert all(math.isclose(e.attention_factor, factor) for e in extended)
    assert all(e.rotary_dim == preset.rotary_dim for e in extended)


@pytest.mark.parametrize("name", sorted(PRESET_CONFIGS))
def test_preset_configs_load_into_transformers(name: str) -> None:
    """The same dicts, loaded by transformers' own config class, give the same plan."""
    raw = PRESET_CONFIGS[name]
    cfg = raw.get("text_config", raw)
    model_type = cfg["model_type"]
    config = transformers.CONFIG_MAPPING[model_type](**json.loads(json.dumps(cfg)))
    ours, theirs = position_plan(raw), position_plan(config)
    assert [e.describe() for e in ours] == [e.describe() for e in theirs]
    for a, b in zip(ours, theirs, strict=True):
        if a.inv_freq is not None:
            assert b.inv_freq is not None
            torch.testing.assert_close(a.inv_freq, b.inv_freq)


def test_scout_llama3_with_equal_factors_matches_transformers() -> None:
    """Llama 4 Scout writes low_freq_factor = high_freq_factor = 1: no smooth band."""
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    raw = PRESET_CONFIGS["Llama 4 Scout (RoPE layers)"]["text_config"]
    config = transformers.CONFIG_MAPPING["llama4_text"](**json.loads(json.dumps(raw)))
    hf, _ = ROPE_INIT_FUNCTIONS["llama3"](config)
    ours = MODERN_PRESETS["Llama 4 Scout (RoPE layers)"].rope()[0]
    torch.testing.assert_close(ours.float(), hf, rtol=2e-6, atol=0)
    base = 500000.0 ** -(torch.arange(0, 128, 2, dtype=torch.float64) / 128)
    unchanged = (ours == base).sum().item()
    assert 0 < unchanged < 64 and torch.allclose(ours[unchanged:], base[unchanged:] / 16)


def test_nested_and_proportional_blocks_drive_transformers_models() -> None:
    """hf.py's nested per-layer block with a proportional global type, run by Gemma 4's code."""
    rope = hf_nested_rope_parameters({
        "sliding_attention": hf_rope_parameters("none", dim=16, base=10000.0),
        "full_attention": hf_proportional_rope_parameters(base=1e6, partial_rotary_factor=0.25),
    })
    kwargs = {**TINY["gemma4_text"], "rope_parameters": rope}
    config = _config("gemma4_text", kwargs)
    model = _model(config)
    plan = position_plan(config)
    tables = _rotary_tables(model)
    full = next(e for e in plan if e.layer_type == "full_attention")
    assert full.rope_type == "proportional" and full.rotated_pairs == 4  # 0.25 of 32/2 pairs
    torch.testing.assert_close(full.inv_freq.float(), tables["full_attention"][0], rtol=2e-6,
                               atol=0)
    torch.testing.assert_close(full.inv_freq, proportional_inv_freq(32, 1e6, 0.25))
    with pytest.raises(ValueError, match="rope_type"):
        hf_nested_rope_parameters({"full_attention": {"rope_type": "ntk", "rope_theta": 1e4}})
    with pytest.raises(TypeError, match="per_layer_type"):
        hf_nested_rope_parameters({})
    with pytest.raises(ValueError, match="partial_rotary_factor"):
        hf_proportional_rope_parameters(partial_rotary_factor=1.5)


def test_gemma3_nested_block_from_hf_py() -> None:
    rope = hf_nested_rope_parameters({
        "sliding_attention": hf_rope_parameters("none", dim=16, base=10000.0),
        "full_attention": hf_rope_parameters("pi", dim=16, base=1e6, factor=8.0),
    })
    config = _config("gemma3_text", {**TINY["gemma3_text"], "rope_parameters": rope})
    model = _model(config)
    tables = _rotary_tables(model)
    for entry in position_plan(config):
        torch.testing.assert_close(entry.inv_freq.float(), tables[entry.layer_type][0],
                                   rtol=2e-6, atol=0)
    assert {e.base for e in position_plan(config)} == {1e4, 1e6}



@pytest.mark.parametrize("model_type", sorted(TINY))
def test_windows_and_chunks_are_the_model_s_masks(model_type: str) -> None:
    """Each layer's mask, as the model builds it, lets exactly the plan's keys through."""
    config, model = _tiny(model_type)
    seq = 20
    _run(model, torch.arange(seq))
    masks = {layer: mask for layer, mask in MASKS}
    for entry in position_plan(config):
        mask = masks[entry.layer]
        mask = mask[0, 0] if mask.dim() == 4 else mask
        visible = mask if mask.dtype == torch.bool else mask == 0
        assert torch.equal(visible, entry.visible_keys(seq)), entry.describe()


# --- the chapter's figures ------------------------------------------------------------------------


def test_chapter_figures_are_small_titled_and_checked() -> None:
    from posenc_lib.viz._style import PAPER
    from posenc_lib.viz.architectures import (
        frequency_selection_figure,
        layer_map_figure,
        temperature_figure,
    )

    plans = {name: position_plan(cfg) for name, cfg in PRESET_CONFIGS.items()}
    figures = [layer_map_figure(plans), frequency_selection_figure(), temperature_figure()]
    for fig in figures:
        assert fig.layout.template.layout.paper_bgcolor == PAPER and fig.layout.title.text
        assert len(fig.to_json()) < 330_000
    heat = figures[0].data[0]
    assert heat.z.shape == (len(plans), 61)  # DeepSeek-V3's 61 layers set the width
    prop, neox = figures[1].data[0].y, figures[1].data[1].y
    assert len(prop) == len(neox) == 64 and prop[-1] > 0.03 > 1e-5 > neox[-1]
    with pytest.raises(ValueError, match="proportion"):
        frequency_selection_figure(proportion=0.001)
    with pytest.raises(TypeError, match="plans"):
        layer_map_figure({})
    with pytest.raises(ValueError, match="max_position"):
        temperature_figure(max_position=1)


def test_logit_multiplier_forms() -> None:
    from posenc_lib.architectures import TEMPERATURE_FORMS, logit_multiplier

    p = torch.tensor([0.0, 8191.0, 4095.0])
    assert logit_multiplier("llama4", p, floor=8192).tolist()[:2] == [1.0, 1 + 0.1 * math.log(2)]
    assert math.isclose(logit_multiplier("ssmax", p, ssmax_s=1 / math.log(4096))[2], 1.0)
    assert math.isclose(logit_multiplier("deepseek", p, factor=40.0)[0],
                        (0.1 * math.log(40) + 1) ** 2)
    assert len(TEMPERATURE_FORMS) == 6
    # LongRoPE: a² = 1 + ln s / ln L_orig, Su's ln N / ln L_train at N = s·L_orig (17/12 for
    # Phi-3.5-mini's 131 072 over 4 096), and transformers' own attention factor squared.
    longrope = logit_multiplier("longrope", p, factor=32.0, original=4096)
    assert torch.allclose(longrope, torch.full_like(longrope, 17 / 12), rtol=0, atol=1e-12)
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    from transformers.models.phi3.configuration_phi3 import Phi3Config

    half = [1.0] * 48
    phi = Phi3Config(hidden_size=3072, num_attention_heads=32, max_position_embeddings=131072,
                     rope_parameters={"rope_type": "longrope", "rope_theta": 10000.0,
                                      "short_factor": half, "long_factor": half,
                                      "original_max_position_embeddings": 4096})
    _, hf_factor = ROPE_INIT_FUNCTIONS["longrope"](phi, "cpu")
    assert math.isclose(longrope[0].item(), hf_factor**2, rel_tol=1e-9)
    assert logit_multiplier("longrope", p, factor=1.0, original=4096).tolist() == [1.0] * 3
    with pytest.raises(ValueError, match="original"):
        logit_multiplier("longrope", p, factor=8.0, original=1)
    with pytest.raises(ValueError, match="form"):
        logit_multiplier("alibi", p)
    with pytest.raises(ValueError, match="positions"):
        logit_multiplier("ssmax", torch.tensor([-1.0]))


# --- M-RoPE: the Qwen-VL language models ---------------------------------------------------------

# model_type -> (text config kwargs, section the plan must report, interleaved). Sections differ
# from the defaults where the config sets one; Qwen3-VL's section is set with
# mrope_interleaved = False, which its rotary class ignores (it always interleaves).
MROPE_TINY: dict[str, tuple[dict[str, Any], tuple[int, int, int], bool]] = {
    "qwen2_vl": ({**_BASE, "num_hidden_layers": 2, "head_dim": 16,
                  "rope_parameters": {"rope_type": "default", "rope_theta": 1e6,
                                      "mrope_section": [2, 3, 3]}}, (2, 3, 3), False),
    "qwen2_5_vl": ({**_BASE, "num_hidden_layers": 2, "head_dim": 16,
                    "rope_parameters": {"rope_type": "default", "rope_theta": 50000.0,
                                        "mrope_section": [4, 2, 2]}}, (4, 2, 2), False),
    "qwen3_vl": ({**_BASE, "num_hidden_layers": 2, "head_dim": 16,
                  "rope_parameters": {"rope_type": "default", "rope_theta": 5e5,
                                      "mrope_section": [4, 2, 2],
                                      "mrope_interleaved": False}}, (4, 2, 2), True),
}


@functools.cache
def _mrope_tiny(model_type: str) -> tuple[Any, Any]:
    """The tiny text model of a Qwen-VL type (its language model: where M-RoPE lives)."""
    kwargs, _, _ = MROPE_TINY[model_type]
    config = _config(f"{model_type}_text", kwargs)
    return config, _model(config)


def _pair_angles(model: Any, position_ids: torch.Tensor) -> torch.Tensor:
    """The angle of each frequency pair the model's rotary embedding returns, ``(seq, dim/2)``."""
    x = torch.zeros(1, position_ids.shape[-1], 8)
    cos, sin = model.rotary_emb(x, position_ids[:, None, :])
    half = cos.shape[-1] // 2
    torch.testing.assert_close(cos[..., :half], cos[..., half:])  # the half layout
    return torch.atan2(sin[0, :, :half].double(), cos[0, :, :half].double())


@pytest.mark.parametrize("model_type", sorted(MROPE_TINY))
def test_mrope_plan_matches_the_model_s_rotary_embedding(model_type: str) -> None:
    config, model = _mrope_tiny(model_type)
    _, section, interleaved = MROPE_TINY[model_type]
    plan = position_plan(config)
    assert len(plan) == 2 and {e.kind for e in plan} == {"rope"}
    entry = plan[0]
    assert entry.mrope_section == section and entry.mrope_interleaved is interleaved
    assert entry.inv_freq is not None and entry.inv_freq.dtype == torch.float64
    assert entry.base == config.rope_parameters["rope_theta"]
    torch.testing.assert_close(entry.inv_freq.float(), model.rotary_emb.inv_freq, rtol=2e-6, atol=0)
    # Which axis each pair reads, recovered from the model alone: move one row of the position
    # ids at a time and see which pairs' angles change.
    gen = torch.Generator().manual_seed(1)
    pos = torch.randint(0, 40, (3, 10), generator=gen)
    base = _pair_angles(model, pos)
    axes = torch.full((entry.rotary_dim // 2,), -1)
    for row in range(3):
        moved = pos.clone()
        moved[row] += torch.randint(1, 5, (10,), generator=gen)
        changed = (_pair_angles(model, moved) - base).abs().amax(dim=0) > 1e-6
        assert bool((axes[changed] == -1).all())  # each pair reads one row only
        axes[changed] = row
    assert entry.mrope_axes is not None
    assert axes.tolist() == entry.mrope_axes.tolist()
    # and the whole table: the plan's angles are the model's (cos, sin)
    cos, sin = model.rotary_emb(torch.zeros(1, 10, 8), pos[:, None, :])
    from posenc_lib.multimodal import mrope_cos_sin

    mine = mrope_cos_sin(pos, entry.inv_freq, section, interleaved=interleaved)
    torch.testing.assert_close(cos[0], mine[0], rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(sin[0], mine[1], rtol=1e-4, atol=1e-4)
    # the wrapper config (model_type qwen2_vl …) reads its text_config to the same plan
    wrapper = _config(model_type, {"text_config": MROPE_TINY[model_type][0]})
    assert [e.describe() for e in position_plan(wrapper)] == [e.describe() for e in plan]


def test_mrope_rotate_and_defaults() -> None:
    """Defaults when the config has no section; text rows reduce to 1-D RoPE; the table line."""
    qwen2 = position_plan(transformers.Qwen2VLConfig())[0]
    qwen25 = position_plan(transformers.Qwen2_5_VLConfig())[0]
    assert (qwen25.mrope_section, qwen25.mrope_interleaved, qwen25.base) == (
        (16, 24, 24), False, 1e6)
    qwen3 = position_plan(transformers.Qwen3VLConfig())[0]
    assert (qwen2.mrope_section, qwen2.mrope_interleaved, qwen2.base) == ((16, 24, 24), False, 1e6)
    assert (qwen3.mrope_section, qwen3.mrope_interleaved, qwen3.base) == ((24, 20, 20), True, 5e5)
    assert qwen2.mrope_axis_string == "t" * 16 + "h" * 24 + "w" * 24
    assert qwen3.mrope_axis_string == "thw" * 20 + "tttt"
    assert "M-RoPE (t,h,w sections 16/24/24, contiguous)" in format_plan([qwen2])
    assert "M-RoPE (t,h,w sections 24/20/20, interleaved)" in format_plan([qwen3])
    # a transformers 4 config.json: rope_scaling type "mrope" means plain frequencies
    old = position_plan({"model_type": "qwen2_vl", "num_hidden_layers": 1, "hidden_size": 64,
                         "num_attention_heads": 4,
                         "rope_scaling": {"type": "mrope", "mrope_section": [2, 3, 3]}})[0]
    assert (old.rope_type, old.mrope_section, old.base) == ("default", (2, 3, 3), 1e6)
    x = torch.randn(5, 16, dtype=torch.float64)
    text = torch.arange(5)
    torch.testing.assert_close(old.rotate(x, text.expand(3, 5)), old.rotate(x, text))
    grid = torch.stack([text, text.flip(0), text % 2])
    assert not torch.allclose(old.rotate(x, grid), old.rotate(x, text))
    with pytest.raises(ValueError, match="mrope_section"):
        dataclasses.replace(old, mrope_section=(4, 2, 1))
    with pytest.raises(ValueError, match="convention"):
        dataclasses.replace(old, convention="interleaved")


@pytest.mark.parametrize("model_type", sorted(MROPE_TINY))
def test_mrope_plan_reproduces_what_each_layer_does_to_q_and_k(model_type: str) -> None:
    """Move the (t, h, w) ids of a random sequence: each layer's q and k turn as the plan says."""
    config, model = _mrope_tiny(model_type)
    plan = position_plan(config)
    gen = torch.Generator().manual_seed(2)
    seq = 12
    pos = torch.randint(0, 30, (3, seq), generator=gen)
    ids = torch.arange(seq)[None] + 1

    def run(p: torch.Tensor) -> dict[int, tuple[torch.Tensor, torch.Tensor]]:
        CAPTURED.clear()
        MASKS.clear()
        with torch.no_grad():
            model(input_ids=ids, position_ids=p[:, None, :], attention_mask=torch.ones_like(ids),
                  use_cache=False)
        return {layer: (q, k) for layer, q, k, _ in CAPTURED}

    base = run(pos)
    # One move per axis, the same for every token: relative ids, hence the hidden states feeding
    # later layers, do not change, and only the rotation differs (a different move on each axis).
    shift = torch.tensor([[7], [19], [31]]).expand(3, seq)
    moved = run(pos + shift)
    assert sorted(base) == [e.layer for e in plan]
    for entry in plan:
        (q0, k0), (q1, k1) = base[entry.layer], moved[entry.layer]
        torch.testing.assert_close(q1, entry.rotate(q0, shift), rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(k1, entry.rotate(k0, shift), rtol=1e-4, atol=1e-4)
        # teeth: 1-D RoPE by the time ids, and the other layout where the section allows it,
        # get it wrong
        assert not torch.allclose(q1, entry.rotate(q0, shift[0]), atol=1e-3)
        if entry.mrope_section != (2, 3, 3):  # [2, 3, 3] cannot be dealt out t, h, w, t, …
            other = dataclasses.replace(entry, mrope_interleaved=not entry.mrope_interleaved)
            assert not torch.allclose(q1, other.rotate(q0, shift), atol=1e-3)


# --- the census, published configs and the command line on broken input -------------------------

from posenc_lib.architectures import _resolve, hf_check  # noqa: E402
from posenc_lib.architectures.published import PUBLISHED_CONFIGS, published_config  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "configs"
CENSUS = hf_check.census_types()


@pytest.mark.parametrize("model_type", CENSUS)
def test_census_plan_is_what_the_layers_do(model_type: str) -> None:
    """Every text model type with a rotary module: the plan is right, or refused by name.

    A tiny random model of the type is built from its config class (small sizes on the class
    defaults); per attention layer the plan must predict the shift of q and k, the cos/sin the
    layer receives (frequencies, rotary dims, attention factor) and the mask (window, chunk,
    causal or bidirectional). A tiny model transformers cannot build or whose attention bypasses
    the attention interface is skipped (not counted as covered).
    """
    torch.set_num_threads(1)
    result = hf_check.check_type(model_type)
    if result.status in ("not built", "not captured"):
        assert model_type in hf_check.UNVERIFIED_TYPES, (
            f"{model_type} is {result.status}: add it to hf_check.UNVERIFIED_TYPES")
        pytest.skip(f"{model_type}: {result.status} ({result.detail})")
    if result.status == "refused":
        assert model_type in result.detail or "config" in result.detail, result.detail
        return
    assert result.status == "covered", f"{model_type}: {result.detail}"


def test_census_checks_the_attention_factor_and_the_window() -> None:
    """The census check fails a gpt-oss plan with factor 1 for 1.347, or without its window."""
    config, model = tiny_model_for("gpt_oss")
    plan = position_plan(config)
    assert hf_check.plan_problems(plan, config, model) == []
    assert plan[0].attention_factor == pytest.approx(0.1 * math.log(32) + 1, rel=1e-6)
    no_factor = [dataclasses.replace(e, attention_factor=1.0) for e in plan]
    assert any("factor" in p for p in hf_check.plan_problems(no_factor, config, model))
    no_window = [dataclasses.replace(e, window=None) for e in plan]
    assert any("mask" in p for p in hf_check.plan_problems(no_window, config, model))
    causal = [dataclasses.replace(e, bidirectional=True) for e in plan]
    assert any("mask" in p for p in hf_check.plan_problems(causal, config, model))


def test_census_checks_the_softmax_and_query_scales() -> None:
    """Ministral 3's llama_4_scaling_beta reads position_ids: a correct plan passes the shift
    test (no false alarm), one without or with another beta fails it, and a wrong
    softmax_scale_factor is caught by the scale the layer hands to attention."""
    from posenc_lib.architectures._plan import QueryScale

    rope = {"rope_type": "yarn", "rope_theta": 1e4, "factor": 4.0, "beta_fast": 32.0,
            "beta_slow": 1.0, "original_max_position_embeddings": 8, "llama_4_scaling_beta": 0.1}
    config, model = tiny_model_for("ministral3", rope_parameters=rope, max_position_embeddings=32)
    plan = position_plan(config)
    assert plan[0].query_scale == QueryScale("llama_4_scaling_beta", 0.1, 8)
    assert hf_check.plan_problems(plan, config, model) == []
    for wrong in (None, QueryScale("llama_4_scaling_beta", 0.2, 8)):
        mutated = [dataclasses.replace(e, query_scale=wrong) for e in plan]
        assert any("shift error" in p for p in hf_check.plan_problems(mutated, config, model))
    scaled = [dataclasses.replace(e, softmax_scale_factor=1.1) for e in plan]
    problems = hf_check.plan_problems(scaled, config, model)
    assert "layer 0: softmax scale 0.25 vs plan 0.275" in problems  # head size 16


@pytest.mark.parametrize("model_type", ["llama", "llama4_text"])
def test_census_sees_a_wrong_slowest_pair(model_type: str) -> None:
    """A plan whose slowest pair alone is 8× too fast (a llama3 factor dropped on that pair) fails.

    At head size 16 and a dozen positions that pair turns by 4e-4 rad: cos and sin move by less
    than the absolute tolerance, so only the angle read back from them shows it (mutation caught:
    dropping ``_check_slow_angles``). Real-valued cos/sin (llama) and complex frequencies
    (llama4_text) both.
    """
    rope = {"rope_type": "llama3", "rope_theta": 10000.0, "factor": 8.0, "low_freq_factor": 1.0,
            "high_freq_factor": 4.0, "original_max_position_embeddings": 64}
    config, model = tiny_model_for(model_type, rope_parameters=rope)
    plan = position_plan(config)
    assert hf_check.plan_problems(plan, config, model) == []
    off = [dataclasses.replace(e, inv_freq=torch.cat([e.inv_freq[:-1], 8 * e.inv_freq[-1:]]))
           if e.kind == "rope" else e for e in plan]
    problems = hf_check.plan_problems(off, config, model)
    assert problems and all("shift error" not in p for p in problems), problems
    slowest = next(e for e in plan if e.kind == "rope").rotary_dim // 2 - 1
    assert any(f"pair {slowest} turns" in p and "0.125×" in p
               for p in problems), problems


def tiny_model_for(model_type: str, **overrides: Any) -> tuple[Any, Any]:
    config = hf_check.tiny_config(model_type, **overrides)
    return config, hf_check._capturing_model(config)


def test_embeddinggemma_is_bidirectional_with_the_model_s_window() -> None:
    result = hf_check.check_type("gemma3_text", use_bidirectional_attention=True)
    assert result.status == "covered", result.detail
    config, _ = tiny_model_for("gemma3_text", use_bidirectional_attention=True)
    local = position_plan(config)[0]
    assert local.bidirectional and local.window == 8 // 2 + 1
    assert local.visible_keys(20)[10].nonzero().flatten().tolist() == list(range(6, 15))


def test_fixtures_are_the_published_configs() -> None:
    names = {
        "gemma-3-27b-it.json": "Gemma 3 27B", "gemma-3-4b-it.json": "Gemma 3 4B",
        "gemma-3-12b-it.json": "Gemma 3 12B",
        "embeddinggemma-300m.json": "EmbeddingGemma", "kimi-k2-instruct.json": "Kimi K2",
        "qwen3-next-80b-a3b-instruct.json": "Qwen3-Next-80B-A3B",
        "mistral-7b-v0.1.json": "Mistral 7B v0.1", "phi-3.5-mini-instruct.json": "Phi-3.5-mini",
        "gpt-oss-20b.json": "gpt-oss-20b",
    }
    assert sorted(p.name for p in FIXTURES.glob("*.json")) == sorted(names)
    for file, name in names.items():
        assert json.loads((FIXTURES / file).read_text()) == PUBLISHED_CONFIGS[name][1], file


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "posenc_lib", "plan", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_published_configs_print_the_model_s_plan() -> None:
    """Regression: each published config's printed plan, as transformers resolves it."""
    out = {f.stem: _cli(str(f)).stdout for f in FIXTURES.glob("*.json")}
    g27 = out["gemma-3-27b-it"].splitlines()
    assert g27[1] == ("layers 0–4, 6–10, …, 60–61       RoPE base 10 000, rotary 128 of 128, "
                      "half, window 1 024, causal, qk-norm (per-head)")
    assert g27[2] == ("layers 5, 11, …, 59 (every 6th)  RoPE base 1 000 000, rotary 128 of "
                      "128, half, linear ×8, causal, qk-norm (per-head)")
    assert "'gemma3' wraps a text model" in out["gemma-3-27b-it"]
    assert "rotary 256 of 256" in out["gemma-3-4b-it"] and "34 layers" in out["gemma-3-4b-it"]
    assert "window |m−n| < 257, bidirectional" in out["embeddinggemma-300m"]
    kimi = out["kimi-k2-instruct"]
    assert "read as 'deepseek_v3'" in kimi and "yarn ×32, β 1/1, original 4 096" in kimi
    assert "rotary 64 of 192, interleaved" in kimi and "softmax scale × 1.813" in kimi
    qn = out["qwen3-next-80b-a3b-instruct"]
    assert ("linear_attention layer (state + 4-tap causal conv, offset-specific kernel): no "
            "positional encoding") in qn
    assert "layers 3, 7, …, 47 (every 4th)  RoPE base 10 000 000, rotary 64 of 256" in qn
    assert "layers 0–31  RoPE base 10 000, rotary 128 of 128, half, window 4 096" in out[
        "mistral-7b-v0.1"]
    assert "longrope short factors (L ≤ 4 096; pass --seq-len for longer), cos/sin × 1.19" in out[
        "phi-3.5-mini-instruct"]
    # One digit grouping in a line: the length as the original ("L = 10000 > 4 096" before).
    assert "longrope long factors (L = 10 000 > 4 096)" in _cli(
        str(FIXTURES / "phi-3.5-mini-instruct.json"), "--seq-len", "10000").stdout
    oss = out["gpt-oss-20b"]
    assert "yarn ×32, β 32/1, original 4 096, no truncation, cos/sin × 1.347, window 128" in oss


@pytest.mark.parametrize("name", sorted(PUBLISHED_CONFIGS))
def test_published_plans_agree_with_the_library_s_own_formulas(name: str, monkeypatch) -> None:
    """Two implementations: the model's rotary module (default) and posenc_lib's float64
    formulas (transformers hidden), fed the complete config the model class resolves."""
    with_hf = position_plan(published_config(name))
    complete = _resolve.resolve(published_config(name)).cfg
    monkeypatch.setattr(_resolve, "transformers_or_none", lambda: None)
    if complete["model_type"] not in SUPPORTED_MODEL_TYPES:
        with pytest.raises(ValueError, match=repr(complete["model_type"])):
            position_plan(complete)
        return
    if name == "EmbeddingGemma":  # the class halved the window; the file as written keeps 512
        complete = dict(published_config(name))
    without = position_plan(complete)
    assert len(without) == len(with_hf)
    for a, b in zip(with_hf, without, strict=True):
        assert (a.kind, a.rotary_dim, a.convention, a.window) == (
            b.kind, b.rotary_dim, b.convention, b.window), (name, a.layer)
        if a.kind == "rope":
            torch.testing.assert_close(a.inv_freq, b.inv_freq, rtol=2e-6, atol=0)
            assert a.attention_factor == pytest.approx(b.attention_factor, rel=1e-6)


def test_without_transformers_a_missing_key_is_refused_or_named(monkeypatch) -> None:
    monkeypatch.setattr(_resolve, "transformers_or_none", lambda: None)
    with pytest.raises(ValueError, match="no rope_theta"):
        position_plan(published_config("Gemma 3 27B"))
    plan = position_plan({"model_type": "gemma2", "num_hidden_layers": 4, "head_dim": 16,
                          "rope_theta": 1e4})
    assert any("sliding_window" in note for note in plan.notes)
    assert any("transformers is not installed" in note for note in plan.notes)


def test_with_transformers_a_class_filled_value_is_named() -> None:
    """Values the file leaves out and the config class fills carry a provenance note."""
    gemma = position_plan(published_config("Gemma 3 27B"))
    assert ("rope_parameters.full_attention.rope_theta = 1 000 000 from Gemma3TextConfig "
            "(not in the file)") in gemma.notes
    raw = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
           "num_attention_heads": 4, "rope_theta": 1e4,
           "rope_scaling": {"rope_type": "yarn", "factor": 4.0}}
    plan = position_plan(raw)
    assert ("rope_parameters.original_max_position_embeddings = 2 048 from LlamaConfig "
            "(not in the file)") in plan.notes
    assert "original 2 048" in plan[0].scaling
    assert "original_max_position_embeddings" not in raw["rope_scaling"]  # not mutated
    assert not any("rope_theta" in n for n in plan.notes)  # the file gives it
    written = position_plan({**raw, "rope_scaling": {**raw["rope_scaling"],
                                                     "original_max_position_embeddings": 512}})
    assert [n for n in written.notes if "not in the file" in n] == [
        "rope_parameters.beta_fast = 32, beta_slow = 1, truncate = True "
        "(transformers' YaRN defaults; not in the file)"]


_DEEPSEEK_V3 = {"model_type": "deepseek_v3", "hidden_size": 7168, "num_attention_heads": 128,
                "num_hidden_layers": 2, "max_position_embeddings": 163840, "rope_theta": 10000,
                "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_nope_head_dim": 128,
                "v_head_dim": 128,
                "rope_scaling": {"type": "yarn", "factor": 40, "beta_fast": 32, "beta_slow": 1,
                                 "original_max_position_embeddings": 4096, "mscale": 1.0,
                                 "mscale_all_dim": 1.0}}


def test_with_transformers_class_filled_head_size_is_named() -> None:
    """A head size from the class's default width or head count gets a note; a written one none."""
    bare = position_plan({"model_type": "llama", "rope_theta": 5e5, "num_hidden_layers": 2})
    assert (bare[0].head_dim, bare[0].rotary_dim) == (128, 128)  # LlamaConfig's 4 096 / 32
    assert ("head size 128 = hidden_size 4096 / num_attention_heads 32, with hidden_size and "
            "num_attention_heads from LlamaConfig (not in the file)") in bare.notes
    half = position_plan({"model_type": "llama", "rope_theta": 5e5, "num_hidden_layers": 2,
                          "hidden_size": 2048})
    assert half[0].head_dim == 64 and ("head size 64 = hidden_size 2048 / num_attention_heads "
                                       "32, with num_attention_heads from LlamaConfig "
                                       "(not in the file)") in half.notes
    for written in ({"hidden_size": 2048, "num_attention_heads": 16}, {"head_dim": 64}):
        plan = position_plan({"model_type": "llama", "rope_theta": 5e5, "num_hidden_layers": 2,
                              **written})
        assert not any(n.startswith("head size") for n in plan.notes), written
    # a width under a name LlamaConfig does not read (GPT-2's n_embd) is not the width used
    gpt2_names = position_plan({"model_type": "llama", "rope_theta": 5e5, "num_hidden_layers": 2,
                                "n_embd": 2048, "n_head": 16})
    assert any(n.startswith("head size 128") for n in gpt2_names.notes)
    # MLA's rotary head is its own key (qk_rope_head_dim): no head-size note
    assert not any(n.startswith("head size") for n in position_plan(_DEEPSEEK_V3).notes)


def test_with_transformers_class_filled_rotary_shape_is_named() -> None:
    """The rotary fraction, MLA's rotary head and YaRN's ramp defaults, when the file omits them."""
    phi = {"model_type": "phi", "hidden_size": 2560, "num_attention_heads": 32,
           "num_hidden_layers": 2, "rope_theta": 1e4}
    plan = position_plan(phi)
    assert plan[0].rotary_dim == 40  # PhiConfig's 0.5 of 80
    assert ("rope_parameters.partial_rotary_factor = 0.5 from PhiConfig (not in the file)"
            in plan.notes)
    # written under either of its names: no note (Phi-2's 0.4, Pythia's rotary_pct)
    assert not any("partial_rotary_factor" in n
                   for n in position_plan({**phi, "partial_rotary_factor": 0.4}).notes)
    neox = {"model_type": "gpt_neox", "hidden_size": 256, "num_attention_heads": 4,
            "num_hidden_layers": 2, "rope_theta": 1e4}
    assert any("partial_rotary_factor = 0.25 from GPTNeoXConfig" in n
               for n in position_plan(neox).notes)
    assert not any("partial_rotary_factor" in n
                   for n in position_plan({**neox, "rotary_pct": 0.25}).notes)
    # DeepSeek-V3 without qk_rope_head_dim: the class's 64 is named; the file's YaRN keeps
    # its betas, and only truncate is the function's default
    ds = position_plan(_DEEPSEEK_V3)
    assert "qk_rope_head_dim = 64 from DeepseekV3Config (not in the file)" in ds.notes
    assert ("rope_parameters.truncate = True (transformers' YaRN default; not in the file)"
            in ds.notes)
    assert not any("beta_fast" in n for n in ds.notes)
    assert not any("qk_rope_head_dim" in n for n in position_plan(
        {**_DEEPSEEK_V3, "qk_rope_head_dim": 64}).notes)
    bare = {**_DEEPSEEK_V3, "rope_scaling": {"type": "yarn", "factor": 40,
                                             "original_max_position_embeddings": 4096}}
    assert ("rope_parameters.beta_fast = 32, beta_slow = 1, truncate = True "
            "(transformers' YaRN defaults; not in the file)") in position_plan(bare).notes
    # gpt-oss writes all three (truncate false): nothing to name
    oss = position_plan(published_config("gpt-oss-20b"))
    assert not any("YaRN" in n for n in oss.notes)


def test_without_transformers_yarn_defaults_and_a_null_window(monkeypatch) -> None:
    monkeypatch.setattr(_resolve, "transformers_or_none", lambda: None)
    bare = {**_DEEPSEEK_V3, "rope_scaling": {"type": "yarn", "factor": 40,
                                             "original_max_position_embeddings": 4096}}
    named = _defaulted(position_plan(bare))
    assert "beta_fast = 32, beta_slow = 1, truncate = True (YaRN's defaults)" in named
    assert "qk_rope_head_dim = 64" in named
    assert "head_dim = hidden_size" not in named  # MLA: the head is qk_nope + qk_rope
    mistral = {"model_type": "mistral", "hidden_size": 256, "num_attention_heads": 4,
               "num_hidden_layers": 2, "rope_theta": 1e6, "head_dim": 64}
    assert "sliding_window = None (no window)" in _defaulted(position_plan(mistral))
    stated = position_plan({**mistral, "sliding_window": None})  # the file says: no window
    assert not any("sliding_window" in n for n in stated.notes)
    assert stated[0].window is None


_QWEN3_06B = {"model_type": "qwen3", "hidden_size": 1024, "num_attention_heads": 16,
              "num_key_value_heads": 8, "num_hidden_layers": 4, "rope_theta": 1e6,
              "max_position_embeddings": 40960}


@pytest.mark.parametrize(("config", "key"), [
    # Qwen3-0.6B's shape: hidden / heads = 64, but Qwen3Config fills head_dim 128
    (_QWEN3_06B, "head_dim"),
    ({"model_type": "phi3", "hidden_size": 256, "num_attention_heads": 4,
      "num_hidden_layers": 2, "rope_theta": 1e4, "max_position_embeddings": 131072,
      "rope_scaling": {"type": "longrope", "short_factor": [1.0] * 32,
                       "long_factor": [2.0] * 32}},
     "original_max_position_embeddings"),
    ({"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4,
      "num_hidden_layers": 2, "rope_theta": 5e5, "max_position_embeddings": 131072,
      "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "high_freq_factor": 4.0,
                       "original_max_position_embeddings": 8192}},
     "low_freq_factor"),
])
def test_without_transformers_a_spectrum_default_is_refused(config, key, monkeypatch) -> None:
    monkeypatch.setattr(_resolve, "transformers_or_none", lambda: None)
    with pytest.raises(ValueError, match=key):
        position_plan(config)


def _defaulted(plan) -> str:
    return next(n for n in plan.notes if n.startswith("keys not in the config, defaulted"))


@pytest.mark.parametrize(("name", "drop", "named"), [
    ("Gemma 3 12B (global layers)", "sliding_window_pattern", "sliding_window_pattern = 6"),
    ("Llama 4 Scout (RoPE layers)", "attention_chunk_size", "attention_chunk_size = 8192"),
    ("Llama 4 Scout (RoPE layers)", "no_rope_layers", "no_rope_layers = every 4th layer NoPE"),
    ("gpt-oss-20b", "layer_types", "sliding_window_pattern = 2"),
])
def test_without_transformers_a_family_default_is_named(name, drop, named, monkeypatch) -> None:
    source = PRESET_CONFIGS[name] if name in PRESET_CONFIGS else published_config(name)
    complete = _resolve.resolve(source).cfg
    complete.pop(drop, None)
    complete.pop("layer_types", None)
    monkeypatch.setattr(_resolve, "transformers_or_none", lambda: None)
    plan = position_plan(complete)
    assert named in _defaulted(plan)
    if drop == "attention_chunk_size":  # transformers' Llama4TextConfig default, not "no chunk"
        assert {p.chunk for p in plan if p.kind == "rope"} == {8192}


def test_without_transformers_other_defaults_are_named(monkeypatch) -> None:
    monkeypatch.setattr(_resolve, "transformers_or_none", lambda: None)
    neox = position_plan({"model_type": "gpt_neox", "hidden_size": 256,
                          "num_attention_heads": 4, "num_hidden_layers": 2, "rope_theta": 1e4})
    assert "rotary_pct = 0.25" in _defaulted(neox)
    assert "head_dim = hidden_size / num_attention_heads = 64" in _defaulted(neox)
    assert neox[0].rotary_dim == 16
    ds = position_plan({"model_type": "deepseek_v3", "hidden_size": 256,
                        "num_attention_heads": 4, "num_hidden_layers": 2, "rope_theta": 1e4,
                        "qk_rope_head_dim": 16, "qk_nope_head_dim": 32})
    assert "rope_interleave = True" in _defaulted(ds)
    assert ds[0].convention == "interleaved"
    yarn = position_plan({"model_type": "qwen3", "head_dim": 64, "num_hidden_layers": 2,
                          "hidden_size": 256, "num_attention_heads": 4, "rope_theta": 1e6,
                          "max_position_embeddings": 2048,
                          "rope_scaling": {"rope_type": "yarn", "factor": 4.0}})
    assert "original_max_position_embeddings = max_position_embeddings (2048)" in _defaulted(yarn)
    same = position_plan({**_QWEN3_06B, "hidden_size": 2048})  # 2048 / 16 = the class's 128
    assert "head_dim = hidden_size / num_attention_heads = 128" in _defaulted(same)
    # Qwen3 normalises q and k per head whatever the config says, as with transformers
    assert (same[0].qk_norm, same[0].qk_norm_kind) == (True, "per-head")


@pytest.mark.parametrize(("content", "problem"), [
    (b"", "the file is empty"),
    (b"not json", "not valid JSON"),
    ("{}".encode("utf-16"), "UTF-16"),
    (b"[1, 2]", "must be an object"),
    (b'{"model_type": "llama", "rope_theta": null}', "rope_theta must be a number > 0, got None"),
    (b'{"model_type": "llama", "rope_theta": "1e4"}', "rope_theta must be a number > 0, got '1e4'"),
    (b'{"model_type": "llama", "rope_scaling": {"rope_type": "yarn"}}', "has no 'factor'"),
    (b'{"model_type": "gemma3", "text_config": {"rope_theta": -1}}', "text_config.rope_theta"),
])
def test_cli_names_the_file_and_the_problem(tmp_path: Path, content: bytes, problem: str) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(content)
    run = _cli(str(path))
    assert run.returncode == 2 and run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and problem in lines[0], run.stderr


def test_cli_reads_folders_and_prints_json(tmp_path: Path) -> None:
    assert "no such file" in _cli(str(tmp_path / "missing.json")).stderr
    assert "folder has no config.json" in _cli(str(tmp_path)).stderr
    (tmp_path / "config.json").write_text(json.dumps(published_config("gpt-oss-20b")))
    assert "gpt_oss: 24 layers" in _cli(str(tmp_path)).stdout
    data = json.loads(_cli(str(tmp_path), "--json").stdout)
    assert data["model_type"] == "gpt_oss" and len(data["layers"]) == 24
    first = data["layers"][0]
    assert first["window"] == 128 and first["bidirectional"] is False
    assert first["attention_factor"] == pytest.approx(0.1 * math.log(32) + 1, rel=1e-6)
    assert len(first["inv_freq"]) == 32


def test_seq_len_picks_the_dynamic_ntk_table() -> None:
    """--seq-len runs the model's rotary module at that length: dynamic NTK's grown base, as the
    library's own formula computes it; without it the plan says the table is the static one."""
    from posenc_lib.extension import extended_rope

    cfg = {"model_type": "llama", "num_hidden_layers": 1, "hidden_size": 64,
           "num_attention_heads": 4, "max_position_embeddings": 64,
           "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}
    static, grown = position_plan(cfg)[0], position_plan(cfg, seq_len=2000)[0]
    want, _ = extended_rope("dynamic", dim=16, base=1e4, factor=2.0, original_max_position=64,
                            seq_len=2000)
    torch.testing.assert_close(grown.inv_freq, want, rtol=1e-6, atol=0)
    assert not torch.allclose(static.inv_freq, grown.inv_freq, rtol=1e-2)
    assert "pass --seq-len" in static.describe()
    assert "base 10 000 → " in grown.describe() and "L = 2 000)" in grown.describe()


def test_falcon_alibi_is_planned_as_alibi_with_the_model_s_bias() -> None:
    """falcon-rw-1b style (alibi = true): no rotation, ALiBi bias / √d, as FalconModel does."""
    import transformers

    cfg = transformers.FalconConfig(
        alibi=True, num_hidden_layers=1, hidden_size=64, num_attention_heads=4, vocab_size=97,
        new_decoder_architecture=False, multi_query=False, parallel_attn=True, bias=True,
    )
    cfg._attn_implementation = "eager"
    plan = position_plan(cfg)
    assert [layer.kind for layer in plan] == ["alibi"]
    assert any("sqrt(head_dim)" in note for note in plan.notes)
    torch.manual_seed(0)
    model = transformers.FalconModel(cfg).eval()
    with torch.no_grad():
        for p in model.h[0].self_attention.query_key_value.parameters():
            p.zero_()  # q·k = 0: the attention weights are softmax(position bias) alone
        weights = model(torch.arange(6)[None], output_attentions=True).attentions[0][0].double()
    slopes = plan[0].alibi_slopes
    m = torch.arange(6)
    r = (m[:, None] - m[None, :]).double()
    logits = (-slopes[:, None, None] * r).masked_fill(r < 0, float("-inf"))
    assert torch.allclose(torch.softmax(logits, -1), weights, atol=1e-6)
    # the released falcon-rw-1b shape
    big = position_plan({"model_type": "falcon", "alibi": True, "num_hidden_layers": 24,
                         "hidden_size": 2048, "num_attention_heads": 32})
    assert big[0].describe().startswith("ALiBi") and len(big) == 24


@pytest.mark.parametrize("key,value", [("alibi", True), ("use_alibi", 1),
                                       ("position_embedding_type", "alibi")])
def test_an_unread_alibi_key_is_refused(key: str, value: object) -> None:
    cfg = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
           "num_attention_heads": 4, "rope_theta": 10000.0, key: value}
    with pytest.raises(ValueError, match=r"ALiBi|alibi"):
        position_plan(cfg)


@pytest.mark.parametrize("model_type,extra", [
    ("glm4v_text", {"rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
                                        "partial_rotary_factor": 0.5,
                                        "mrope_section": [8, 12, 12]}}),  # GLM-4.1V
    ("glm_ocr_text", {}),
])
def test_glm_vision_language_text_rotation_pairs_neighbours(model_type: str,
                                                            extra: dict[str, Any]) -> None:
    """The text apply_rotary_pos_emb calls rotate_half_llm (x[..., 0::2]), not the vision
    rotate_half: the plan must rotate as it does (half pairing is off by ~8)."""
    import transformers

    cfg = transformers.AutoConfig.for_model(model_type, **extra)
    layer = position_plan(cfg)[0]
    assert layer.convention == "interleaved"
    module = importlib.import_module(type(cfg).__module__.replace("configuration_", "modeling_"))
    rotary = next(getattr(module, n) for n in dir(module)
                  if n.endswith("RotaryEmbedding") and "Vision" not in n)(cfg)
    torch.manual_seed(0)
    q = torch.randn(1, 2, 12, layer.head_dim, dtype=torch.float64)
    cos, sin = rotary(q.float(), torch.arange(12)[None])
    ref, _ = module.apply_rotary_pos_emb(q, q, cos.double(), sin.double())
    assert torch.allclose(layer.rotate(q, torch.arange(12)), ref, atol=1e-5)


@pytest.mark.parametrize("seq_len", [None, 8192])
def test_phimoe_longrope_is_what_its_rotary_module_does(seq_len: int | None) -> None:
    """PhimoeRotaryEmbedding: cos/sin × short/long_mscale (1.2432 in Phi-3.5-MoE's config),
    table from the config alone (short factors even past 4 096 in transformers 5.25)."""
    import transformers
    from transformers.models.phimoe.modeling_phimoe import (
        PhimoeRotaryEmbedding,
        apply_rotary_pos_emb,
    )

    params = {"rope_type": "longrope", "rope_theta": 10000.0,
              "short_factor": [1.0 + 0.01 * i for i in range(64)],
              "long_factor": [1.0 + 0.5 * i for i in range(64)],
              "short_mscale": 1.243163121016122, "long_mscale": 1.243163121016122,
              "original_max_position_embeddings": 4096}
    cfg = transformers.AutoConfig.for_model(
        "phimoe", hidden_size=4096, num_attention_heads=32, num_key_value_heads=8,
        num_hidden_layers=2, max_position_embeddings=131072, rope_parameters=params)
    plan = position_plan(cfg, seq_len=seq_len)
    assert plan[0].attention_factor == pytest.approx(1.243163121016122, rel=1e-6)
    assert "short factors" in plan[0].describe()
    assert any("short_mscale" in note for note in plan.notes)
    positions = torch.arange(seq_len or 16)
    cos, sin = PhimoeRotaryEmbedding(cfg)(torch.zeros(1, 1, 2, dtype=torch.float64),
                                          positions[None])
    torch.manual_seed(0)
    q = torch.randn(1, 1, positions.numel(), 128, dtype=torch.float64)
    ref, _ = apply_rotary_pos_emb(q, q, cos, sin)
    # the module's angles are float32: up to ~1e-3 at position 8 191
    assert torch.allclose(plan[0].rotate(q, positions), ref, atol=5e-3)


def test_dbrx_rope_theta_the_class_ignores_is_noted() -> None:
    """DBRX's file puts rope_theta 500 000 in attn_config; DbrxConfig (5.25) uses 10 000."""
    import transformers
    from transformers.models.dbrx.modeling_dbrx import DbrxRotaryEmbedding

    raw = {"model_type": "dbrx", "d_model": 6144, "n_heads": 48, "n_layers": 40,
           "max_seq_len": 32768, "vocab_size": 100352,
           "attn_config": {"clip_qkv": 8, "kv_n_heads": 8, "rope_theta": 500000},
           "ffn_config": {"ffn_hidden_size": 10752, "moe_num_experts": 16, "moe_top_k": 4}}
    plan = position_plan(raw)
    table = DbrxRotaryEmbedding(transformers.AutoConfig.for_model(**raw)).inv_freq.double()
    assert torch.allclose(plan[0].inv_freq, table, rtol=1e-6)
    assert plan[0].base == pytest.approx(float(table[1]) ** (-plan[0].rotary_dim / 2), rel=1e-4)
    assert "the file says attn_config.rope_theta = 500 000; transformers uses 10 000" in plan.notes


def test_printed_base_is_the_table_s_base() -> None:
    """A llama config with a per-type block the class ignores: print the base the table uses."""
    import transformers
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    raw = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
           "num_attention_heads": 4,
           "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 1e6}}}
    plan = position_plan(raw)
    table = LlamaRotaryEmbedding(transformers.AutoConfig.for_model(**raw)).inv_freq.double()
    assert torch.allclose(plan[0].inv_freq, table, rtol=1e-6)
    assert plan[0].base == pytest.approx(float(table[1]) ** (-plan[0].rotary_dim / 2), rel=1e-4)
    assert "RoPE base 10 000" in plan[0].describe()
    assert any("1 000 000" in note for note in plan.notes)


def test_types_the_census_cannot_build_say_so() -> None:
    """A plan of a type the census skips carries the 'not verified' note; a covered one (Llama,
    and Falcon since the harness stopped passing its read-only head_dim) not."""
    plan = position_plan({"model_type": "gpt_neox_japanese", "num_hidden_layers": 2,
                          "hidden_size": 64, "num_attention_heads": 4})
    assert any(note.startswith("not verified against transformers") for note in plan.notes)
    falcon = position_plan({"model_type": "falcon", "num_hidden_layers": 2, "hidden_size": 64,
                            "num_attention_heads": 4})
    assert not any(note.startswith("not verified") for note in falcon.notes)
    llama = position_plan({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
                           "num_attention_heads": 4, "rope_theta": 10000.0})
    assert not any(note.startswith("not verified") for note in llama.notes)


def test_embeddinggemma_window_without_transformers_is_halved(monkeypatch) -> None:
    """Gemma3TextConfig stores (512 // 2) + 1 = 257; the plan without transformers must too."""
    raw = json.loads((Path(__file__).parent / "fixtures/configs/embeddinggemma-300m.json")
                     .read_text())
    with_hf = position_plan(raw)
    monkeypatch.setattr(_resolve, "transformers_or_none", lambda: None)
    without = position_plan(raw)
    assert with_hf[0].window == without[0].window == 257


@pytest.mark.parametrize("extra,message", [
    ({"rope_parameters": {"rope_type": "linear", "rope_theta": 1e4, "factor": 0.0}}, "factor"),
    ({"rope_parameters": {"rope_type": "linear", "rope_theta": 1e4, "factor": -2.0}}, "factor"),
    ({"rope_theta": 1e4, "sliding_window": 0}, "sliding_window"),
    ({"rope_theta": 1e4, "sliding_window": -3}, "sliding_window"),
])
def test_factor_and_window_out_of_range_are_refused(extra: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        position_plan({"model_type": "mistral", "num_hidden_layers": 2, "hidden_size": 64,
                       "num_attention_heads": 4, **extra})


def test_transformers_validation_error_keeps_the_line_that_says_what_is_wrong() -> None:
    cfg = {"model_type": "phi3", "num_hidden_layers": 2, "hidden_size": 3072,
           "num_attention_heads": 32,
           "rope_parameters": {"rope_type": "longrope", "rope_theta": 1e4,
                               "short_factor": [1.0] * 64, "long_factor": [1.0] * 48,
                               "original_max_position_embeddings": 4096}}
    with pytest.raises(ValueError, match="short_factor field must have length 48, got 64"):
        position_plan(cfg)


# --- qk-norm kind, ALiBi defaults and gaps, run-time keys, the census counts ---------------------


@pytest.mark.parametrize(("model_type", "kind"), [
    ("qwen3", "per-head"), ("gemma3_text", "per-head"), ("olmo2", "flat"), ("olmo3", "flat"),
    ("llama4_text", "per-head, no weight"), ("cohere", "per-head, weight per head"),
])
def test_qk_norm_kind_is_the_shape_of_the_layer_s_norm(model_type: str, kind: str) -> None:
    """The plan's qk-norm kind matches the weight of the norm the tiny model's attention builds."""
    overrides = {"use_qk_norm": True} if model_type in ("cohere", "llama4_text") else {}
    config, model = tiny_model_for(model_type, **overrides)
    entry = next(e for e in position_plan(config) if e.qk_norm)
    assert entry.qk_norm_kind == kind
    assert f"qk-norm ({kind})" in entry.describe()
    attn = model.layers[entry.layer].self_attn
    norm = next(getattr(attn, n) for n in ("q_norm", "qk_norm") if hasattr(attn, n))
    weights = [p.shape for p in norm.parameters()]
    heads, head = config.num_attention_heads, entry.head_dim
    expected = {"per-head": [(head,)], "flat": [(heads * head,)], "per-head, no weight": [],
                "per-head, weight per head": [(heads, head)]}[kind]
    assert weights == expected


def test_qk_norm_kind_is_checked() -> None:
    with pytest.raises(ValueError, match="qk_norm_kind"):
        LayerPosition(layer=0, kind="nope", layer_type="full_attention", head_dim=8,
                      qk_norm=True, qk_norm_kind="sideways")


def test_mpt_without_alibi_bias_max_says_it_assumed_8() -> None:
    raw = {"model_type": "mpt", "n_layers": 2, "n_heads": 8, "d_model": 64,
           "attn_config": {"alibi": True}}
    plan = position_plan(raw)
    assert any("alibi_bias_max" in n and "default 8 assumed" in n for n in plan.notes)
    assert torch.allclose(plan[0].alibi_slopes, 2.0 ** -torch.arange(1, 9, dtype=torch.float64))
    raw["attn_config"]["alibi_bias_max"] = 16
    plan = position_plan(raw)
    assert not any("alibi_bias_max" in n for n in plan.notes)
    assert torch.allclose(plan[0].alibi_slopes, 4.0 ** -torch.arange(1, 9, dtype=torch.float64))


def test_falcon_bias_gap_is_transformers_bias() -> None:
    """falcon_bf16_bias_error measures the bias FalconModel builds, in float32 and bfloat16."""
    from transformers.models.falcon.modeling_falcon import build_alibi_tensor

    from posenc_lib.alibi import alibi_slopes, falcon_bf16_bias_error

    for heads, head_dim, length, dtype in ((32, 64, 2048, torch.float32),
                                           (12, 48, 300, torch.bfloat16)):
        bias = build_alibi_tensor(torch.ones(1, length, dtype=torch.long), heads, dtype)
        bias = (bias.reshape(heads, length) / math.sqrt(head_dim)).double()
        exact = alibi_slopes(heads, dtype=torch.float64)[:, None] * torch.arange(
            length, dtype=torch.float64) / math.sqrt(head_dim)
        gap = falcon_bf16_bias_error(heads, head_dim, length, dtype)
        assert gap == pytest.approx(float((bias - exact).abs().max()), rel=1e-9)
    # 32 heads of 64 features: bfloat16 rounding of slope·n reaches more than a logit at 2 048.
    assert 1.1 < falcon_bf16_bias_error(32, 64, 2048) < 1.2
    assert falcon_bf16_bias_error(8, 64, 1) == 0.0
    with pytest.raises(ValueError, match="dtype"):
        falcon_bf16_bias_error(8, 64, 16, torch.float64)
    with pytest.raises(ValueError, match="seq_len"):
        falcon_bf16_bias_error(8, 64, 0)
    raw = {"model_type": "falcon", "num_hidden_layers": 2, "num_attention_heads": 32,
           "hidden_size": 2048, "alibi": True}
    notes = position_plan(raw).notes
    assert any("bfloat16" in n and "1.14 logits" in n for n in notes), notes


def test_runtime_only_keys_get_a_note() -> None:
    from posenc_lib.architectures._families import RUNTIME_ONLY_KEYS

    plan = position_plan(PUBLISHED_CONFIGS["Gemma 3 27B"][1])
    assert any(n.startswith("query_pre_attn_scalar = 168 (run time") for n in plan.notes)
    # EmbeddingGemma's 256 at head size 256 is the usual 1/sqrt(head_dim): no note (mutation
    # caught: a note whenever the key is set); at 128 it gets one.
    gemma = dict(PUBLISHED_CONFIGS["EmbeddingGemma"][1])
    assert gemma["head_dim"] == gemma["query_pre_attn_scalar"] == 256
    assert not any("query_pre_attn_scalar" in n for n in position_plan(gemma).notes)
    gemma["query_pre_attn_scalar"] = 128
    assert any(n.startswith("query_pre_attn_scalar = 128 (run time")
               for n in position_plan(gemma).notes)
    raw = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
           "num_attention_heads": 4, "cache_implementation": "static"}
    assert any(n.startswith("cache_implementation = 'static'") for n in position_plan(raw).notes)
    del raw["cache_implementation"]
    assert not any(k in n for n in position_plan(raw).notes for k in RUNTIME_ONLY_KEYS)


def test_dual_chunk_attention_gets_a_note() -> None:
    """Qwen2.5-1M's ``dual_chunk_attention_config`` is never read by transformers: the plan stays
    plain RoPE and says so (mutation caught: the key silently ignored, as before this note)."""
    raw = {"model_type": "qwen2", "num_hidden_layers": 2, "hidden_size": 64,
           "num_attention_heads": 4, "max_position_embeddings": 1010000, "rope_theta": 1e7}
    plain = position_plan(raw)
    assert not any("dual_chunk" in n for n in plain.notes)
    dca = position_plan({**raw, "dual_chunk_attention_config": {"chunk_size": 262144,
                                                                "local_size": 8192}})
    assert [n for n in dca.notes if n not in plain.notes] == [
        n for n in dca.notes if n.startswith("dual_chunk_attention_config is set (not run")]
    assert len([n for n in dca.notes if "dual_chunk" in n]) == 1
    assert all(torch.equal(a.inv_freq, b.inv_freq) for a, b in zip(plain, dca, strict=True))


def test_minimax_attn_type_list_is_noted_as_unread() -> None:
    """MiniMax-Text-01's ``attn_type_list`` (7 linear : 1 softmax) is never read by transformers'
    MiniMax class, which follows ``layer_types`` (default: alternating): the plan follows the
    class and a note says the list went unread (mutation caught: the key silently ignored)."""
    raw = {"model_type": "minimax", "num_hidden_layers": 8, "hidden_size": 64,
           "num_attention_heads": 4}
    plain = position_plan(raw)
    listed = position_plan({**raw, "attn_type_list": [0] * 7 + [1]})
    assert [e.kind for e in listed] == [e.kind for e in plain] == ["rope", "no_attention"] * 4
    assert not any("attn_type_list" in n for n in plain.notes)
    assert [n for n in listed.notes if n not in plain.notes] == [
        n for n in listed.notes if n.startswith("attn_type_list is set (not run by transformers")]
    assert "attn_type_list" not in transformers.MiniMaxConfig().to_dict()


def test_norm_after_rotation_erases_the_cos_sin_factor_and_is_noted() -> None:
    """Llama 4's weightless qk-norm follows the rotation, so a YaRN factor on cos and sin never
    reaches the logits: the q that reaches attention has unit RMS per head whatever the factor,
    and the plan says so; Qwen3 (norm before the rotation) and a plain Llama 4 get no note."""
    yarn = {"rope_type": "yarn", "rope_theta": 5e5, "factor": 4.0,
            "original_max_position_embeddings": 64}
    config, model = hf_check.tiny_model("llama4_text", rope_parameters=yarn)
    plan = position_plan(config)
    rope_layers = [e for e in plan if e.kind == "rope"]
    assert rope_layers and all(e.attention_factor > 1.1 and e.qk_norm for e in rope_layers)
    q = hf_check.layer_qk(model, torch.arange(6))[rope_layers[0].layer][0]
    rms = q.pow(2).mean(-1).sqrt()
    assert torch.allclose(rms, torch.ones_like(rms), atol=1e-3)  # the factor 1.139 is gone
    assert sum(n.startswith("cos/sin × 1.139 does not reach the logits") for n in plan.notes) == 1
    plain_config, _ = hf_check.tiny_model("llama4_text")
    assert not any("does not reach the logits" in n for n in position_plan(plain_config).notes)
    qwen = position_plan({"model_type": "qwen3", "num_hidden_layers": 2, "hidden_size": 64,
                          "num_attention_heads": 4, "head_dim": 16, "rope_parameters": yarn})
    assert qwen[0].attention_factor > 1.1
    assert not any("does not reach the logits" in n for n in qwen.notes)


def test_short_table_on_a_whole_head_model_is_refused() -> None:
    """Llama rotates the whole head; a llama3 block with ``partial_rotary_factor`` 0.5 builds a
    64-wide table for 128-feature heads, and transformers' forward pass fails. The inspector
    refuses that config (it used to plan "rotary 64 of 128"); with the default rope type the key
    is ignored by transformers and the plan rotates all 128; Phi, which slices its rotary block,
    is still planned partial (mutation caught: the refusal applied to every partial model)."""
    from posenc_lib.architectures._rotary import rotates_whole_head

    base = {"model_type": "llama", "num_hidden_layers": 1, "hidden_size": 512,
            "num_attention_heads": 4, "rope_theta": 5e5, "partial_rotary_factor": 0.5,
            "vocab_size": 64, "intermediate_size": 32}
    llama3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
              "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
    with pytest.raises(ValueError, match=r"rotates all 128 features .* table for 64"):
        position_plan({**base, "rope_scaling": llama3})
    config = transformers.AutoConfig.for_model(**{**base, "rope_scaling": llama3})
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(config)
    with pytest.raises(RuntimeError, match="must match"), torch.no_grad():
        model(torch.arange(4)[None])
    assert [(e.rotary_dim, e.head_dim) for e in position_plan(base)] == [(128, 128)]
    phi = position_plan({"model_type": "phi", "num_hidden_layers": 1, "hidden_size": 256,
                         "num_attention_heads": 4, "partial_rotary_factor": 0.5,
                         "rope_scaling": {"rope_type": "linear", "factor": 2.0}})
    assert (phi[0].rotary_dim, phi[0].head_dim) == (32, 64)
    assert rotates_whole_head("llama") is True and rotates_whole_head("phi") is False


def test_inv_freq_holds_transformers_float32_values() -> None:
    """``inv_freq`` is float64 but holds the float32 values transformers' rotary module computes
    (as documented): 100^(−1/2) = 0.1 is 0.10000000149011612, not the float64 0.1."""
    plan = position_plan({"model_type": "llama", "num_hidden_layers": 1, "hidden_size": 16,
                          "num_attention_heads": 4, "rope_theta": 100.0})
    inv_freq = plan[0].inv_freq
    assert inv_freq.dtype == torch.float64 and inv_freq.shape == (2,)
    assert float(inv_freq[1]) == float(torch.tensor(0.1, dtype=torch.float32))
    assert float(inv_freq[1]) != 0.1


def test_window_that_never_binds_gets_a_note() -> None:
    """A window ``W >= max_position_embeddings M`` masks no key at any length up to ``M``; the
    plan says so (Phi-3.5-mini: 262 144 ≥ 131 072) and keeps the window as the model builds it."""
    phi = position_plan(published_config("Phi-3.5-mini"))
    assert {e.window for e in phi} == {262144}
    assert ("window 262 144 ≥ max_position_embeddings 131 072: never binds (layers 0–31 see "
            "every earlier key up to that length)") in phi.notes
    mistral = position_plan(published_config("Mistral 7B v0.1"))  # 4 096 < 32 768: it binds
    assert not any("never binds" in n for n in mistral.notes)
    small = {"model_type": "mistral", "num_hidden_layers": 2, "hidden_size": 64,
             "num_attention_heads": 4, "num_key_value_heads": 4, "max_position_embeddings": 64}
    for window, binds in ((64, False), (63, True)):  # the boundary: q − k reaches M − 1 = 63
        plan = position_plan({**small, "sliding_window": window})
        causal = torch.ones(64, 64, dtype=torch.bool).tril()
        assert bool((plan[0].visible_keys(64) != causal).any()) is binds
        assert any("never binds" in n for n in plan.notes) is not binds, (window, plan.notes)


def test_falcon_h1_multipliers_get_a_note() -> None:
    """Falcon-H1 multiplies every key by ``key_multiplier`` (and the attention input by
    ``attention_in_multiplier``), so every logit: a plan whose config sets one names it; at 1,
    the class default, neither changes anything and neither is named (mutation caught: either key
    missing from RUNTIME_ONLY_KEYS, or a note on every Falcon-H1 plan)."""
    falcon_h1 = transformers.CONFIG_MAPPING["falcon_h1"]
    notes = position_plan(falcon_h1(num_hidden_layers=2, key_multiplier=4.0)).notes
    assert any(n.startswith("key_multiplier = 4.0 (run time") for n in notes), notes
    notes = position_plan(falcon_h1(num_hidden_layers=2, attention_in_multiplier=0.5)).notes
    assert any(n.startswith("attention_in_multiplier = 0.5 (run time") for n in notes), notes
    assert not any("multiplier" in n for n in position_plan(falcon_h1(num_hidden_layers=2)).notes)


# Config attributes of transformers' classes whose names look like a logit scale but that are not
# run-time notes, each with why: the planner reads it, or it never touches attention logits.
_NOT_ATTENTION_LOGIT_KEYS: dict[str, str] = {
    "attn_scale": "Llama 4's NoPE query scale: read by the planner (LayerPosition.query_scale)",
    "attention_out_multiplier": "Falcon-H1: scales the attention output, after the softmax",
    "attention_value_scale": "MiMo-V2-Flash: scales the values, after the softmax",
    "embedding_multiplier": "scales the embeddings (residual stream), not q·k of a layer",
    "residual_multiplier": "Granite: scales each residual branch",
    "lm_head_multiplier": "Falcon-H1: scales the vocabulary logits",
    "logits_mup_width_multiplier": "Inkling: divides the last hidden state (vocabulary logits)",
    "output_multiplier": "Muse: scales the vocabulary logits",
    "final_logit_softcapping": "caps the vocabulary logits, not attention logits",
    "softcap": "Jev: caps its decision head's scores",
    "mlp_multipliers": "Falcon-H1: the MLP's gate and down projections",
    "mlp_gate_softcap": "Inkling 2: the MLP's gate",
    "mlp_up_softcap": "Inkling 2: the MLP's up projection",
    "block_ffn_dim_multiplier": "LFM2: the feed-forward width",
    "moe_router_logit_softcapping": "Laguna: the MoE router's logits",
    "ssm_multipliers": "Falcon-H1: the Mamba mixer",
    "ssm_in_multiplier": "Falcon-H1: the Mamba mixer's input",
    "ssm_out_multiplier": "Falcon-H1: the Mamba mixer's output",
    "guided_attention_loss_scale": "SpeechT5: a training-loss weight",
    "channel_multiplier": "a VQ-GAN's or vision tokenizer's channel widths",
    "depth_multiplier": "MobileNet's channel widths",
    "depthwise_multiplier": "Phi-4-multimodal audio: a depthwise convolution's width",
    "embed_dim_multiplier": "Hiera: the width growth per stage",
    "ffn_multiplier": "MobileViTV2: the feed-forward width",
    "width_multiplier": "MobileViTV2: the channel widths",
}


def test_every_logit_scale_key_of_transformers_is_named() -> None:
    """Every attribute of transformers' config classes named like a logit multiplier, softcap or
    attention scale is either a run-time note (RUNTIME_ONLY_KEYS) or listed above with why not
    (mutation caught: Falcon-H1's key_multiplier or Ergo's global_attention_scale dropped from
    RUNTIME_ONLY_KEYS). Read from the configuration files' text, so no class is imported."""
    import re

    from posenc_lib.architectures._families import RUNTIME_ONLY_KEYS

    pattern = re.compile(r"^\s+(?:self\.)?([a-z0-9_]*(?:multiplier|softcap|attn\w*scal|"
                         r"attention\w*scal)[a-z0-9_]*)\s*(?::[^=\n]*)?=", re.M)
    models = Path(transformers.__file__).parent / "models"
    found: dict[str, str] = {}
    for path in sorted(models.glob("*/configuration_*.py")):
        for name in pattern.findall(path.read_text(encoding="utf-8")):
            found.setdefault(name, path.parent.name)
    assert {"key_multiplier", "attn_logit_softcapping", "query_pre_attn_scalar"} <= set(found)
    unnamed = {name: where for name, where in found.items()
               if name not in RUNTIME_ONLY_KEYS and name not in _NOT_ATTENTION_LOGIT_KEYS}
    assert not unnamed, unnamed


def test_census_summary_counts_what_the_full_planning_counts() -> None:
    quick = hf_check.census_summary()
    assert quick.types == len(CENSUS)
    assert quick.covered + len(quick.refused) + len(quick.unverified) == quick.types
    assert set(quick.unverified) == hf_check.UNVERIFIED_TYPES & set(CENSUS)
    assert quick == hf_check.census_summary(plan_all=True)


def test_entropy_invariant_scale_laws() -> None:
    """λ² = λ₀² + 2 ln(n/L) (Gaussian bulk) and Su's λ₀ ln n / ln L (sharp softmax)."""
    from hypothesis import given
    from hypothesis import strategies as st

    from posenc_lib.architectures import entropy_invariant_scale, softmax_entropy

    @given(st.integers(2, 10**7), st.integers(2, 10**7), st.floats(0.1, 5.0))
    def law(n: int, length: int, lam0: float) -> None:
        square = lam0**2 + 2 * math.log(n / length)
        if square <= 0:
            with pytest.raises(ValueError, match="scale0"):
                entropy_invariant_scale(n, length, lam0)
            return
        lam = entropy_invariant_scale(n, length, lam0)
        # the Gaussian-bulk entropy ln n − λ²/2 is the same at (n, λ) and (L, λ₀)
        assert math.log(n) - lam**2 / 2 == pytest.approx(math.log(length) - lam0**2 / 2,
                                                         abs=1e-9)
        sharp = entropy_invariant_scale(n, length, lam0, regime="sharp")
        assert sharp == pytest.approx(lam0 * math.log(n) / math.log(length))

    law()
    assert entropy_invariant_scale(8 * 4096, 4096, 1.0) == pytest.approx(
        math.sqrt(1 + 2 * math.log(8)))
    # Monte Carlo: Gaussian logits at 8 times the keys keep their entropy with the law's scale.
    g = torch.Generator().manual_seed(1)
    base = softmax_entropy(torch.randn(16, 2048, generator=g, dtype=torch.float64)).mean()
    wide = torch.randn(16, 8 * 2048, generator=g, dtype=torch.float64)
    lam = entropy_invariant_scale(8 * 2048, 2048, 1.0)
    assert abs(float(softmax_entropy(lam * wide).mean() - base)) < 0.1
    assert float(softmax_entropy(wide).mean() - base) == pytest.approx(math.log(8), abs=0.1)
    assert float(softmax_entropy(torch.zeros(5))) == pytest.approx(math.log(5))
    with pytest.raises(ValueError, match="regime"):
        entropy_invariant_scale(10, 5, 1.0, regime="flat")
    with pytest.raises(ValueError, match="n"):
        entropy_invariant_scale(1, 5, 1.0)


# --- released-config shapes the fresh read of 2026-12-05 ran (gF) ------------------------------

# meta-llama/Llama-4-Scout-17B-16E-Instruct config.json, as published (keys the plan does not
# read trimmed): the vision tower writes its own rope_theta 10 000 beside the text model's 500 000.
_SCOUT = {
    "architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
    "text_config": {
        "attention_chunk_size": 8192, "head_dim": 128, "hidden_size": 5120,
        "interleave_moe_layer_step": 1, "intermediate_size": 8192,
        "intermediate_size_mlp": 16384, "max_position_embeddings": 10485760,
        "model_type": "llama4_text", "no_rope_layers": [], "num_attention_heads": 40,
        "num_hidden_layers": 48, "num_key_value_heads": 8, "num_local_experts": 16,
        "rope_scaling": {"factor": 16.0, "high_freq_factor": 1.0, "low_freq_factor": 1.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"},
        "rope_theta": 500000.0, "use_qk_norm": True, "vocab_size": 202048},
    "vision_config": {
        "hidden_size": 1408, "image_size": 336, "intermediate_size": 5632,
        "model_type": "llama4_vision_model", "num_attention_heads": 16,
        "num_hidden_layers": 34, "patch_size": 14, "rope_theta": 10000,
        "vision_output_dim": 4096},
}
# mistralai/Mistral-Small-3.1-24B-Instruct-2503 config.json (trimmed the same way).
_MISTRAL_SMALL_31 = {
    "architectures": ["Mistral3ForConditionalGeneration"], "model_type": "mistral3",
    "text_config": {
        "head_dim": 128, "hidden_size": 5120, "intermediate_size": 32768,
        "max_position_embeddings": 131072, "model_type": "mistral", "num_attention_heads": 32,
        "num_hidden_layers": 40, "num_key_value_heads": 8, "rope_theta": 1000000000.0,
        "sliding_window": None, "vocab_size": 131072},
    "vision_config": {
        "head_dim": 64, "hidden_size": 1024, "image_size": 1540, "intermediate_size": 4096,
        "model_type": "pixtral", "num_attention_heads": 16, "num_hidden_layers": 24,
        "patch_size": 14, "rope_theta": 10000.0},
}


@pytest.mark.parametrize("raw,text_base", [(_SCOUT, 5e5), (_MISTRAL_SMALL_31, 1e9)])
def test_a_vision_tower_s_base_is_not_reported_against_the_text_model(raw, text_base) -> None:
    """The vision encoder's rope_theta (10 000) is the one transformers' vision tower uses; only
    the text model is planned, so no note may call it unused. (Mutation: scanning the whole
    file, as before, adds "the file says vision_config.rope_theta = 10 000; transformers uses
    …" and fails here.)"""
    hf = transformers.AutoConfig.for_model(**copy_without_type(raw), model_type=raw["model_type"])
    # the tower's own rotary base in transformers 5.25, as the file says
    assert hf.vision_config.rope_parameters["rope_theta"] == 10000
    plan = position_plan(raw)
    assert {e.base for e in plan if e.kind == "rope"} == {text_base}
    assert not any("vision_config" in n for n in plan.notes), plan.notes
    assert any("wraps a text model" in n for n in plan.notes)


def copy_without_type(raw: dict[str, Any]) -> dict[str, Any]:
    import copy

    return {k: copy.deepcopy(v) for k, v in raw.items() if k != "model_type"}


def _note_numbers(notes: list[str], key: str) -> list[float]:
    import re

    return [float(m.group(1).replace(" ", "")) for n in notes
            if (m := re.search(rf"{key} = ([\d ]+(?:\.\d+)?) from ", n))]


def test_a_provenance_note_s_number_is_the_plan_s() -> None:
    """gpt-oss-20b without rope_theta: the class fills 150 000, the plan prints it, and the note
    names the same number (mutation: the old one-significant-digit format wrote "2e5")."""
    oss = published_config("gpt-oss-20b")
    del oss["rope_theta"]
    plan = position_plan(oss)
    assert transformers.AutoConfig.for_model(**copy_without_type(oss),
                                             model_type="gpt_oss").rope_parameters[
        "rope_theta"] == 150000
    assert "rope_theta = 150 000 from GptOssConfig (not in the file)" in plan.notes
    assert plan[0].describe().startswith("RoPE base 150 000,")
    assert _note_numbers(plan.notes, "rope_theta") == [plan[0].base] == [150000.0]
    # Gemma 3 27B's global base and a bare YaRN block's original length: the same rule
    gemma = position_plan(published_config("Gemma 3 27B"))
    glob = next(e for e in gemma if e.layer_type == "full_attention")
    assert _note_numbers(gemma.notes, r"full_attention\.rope_theta") == [glob.base] == [1e6]
    yarn = position_plan({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
                          "num_attention_heads": 4, "rope_theta": 1e4,
                          "rope_scaling": {"rope_type": "yarn", "factor": 4.0}})
    assert _note_numbers(yarn.notes, "original_max_position_embeddings") == [2048.0]
    assert "original 2 048" in yarn[0].describe()


# answerdotai/ModernBERT-base config.json as released: per-layer-type bases under
# their own names, and a leftover position_embedding_type "absolute" its code never reads.
_MODERNBERT_BASE = {
    "architectures": ["ModernBertForMaskedLM"], "attention_bias": False,
    "attention_dropout": 0.0, "bos_token_id": 50281, "classifier_activation": "gelu",
    "classifier_bias": False, "classifier_dropout": 0.0, "classifier_pooling": "mean",
    "cls_token_id": 50281, "decoder_bias": True, "deterministic_flash_attn": False,
    "embedding_dropout": 0.0, "eos_token_id": 50282, "global_attn_every_n_layers": 3,
    "global_rope_theta": 160000.0, "gradient_checkpointing": False,
    "hidden_activation": "gelu", "hidden_size": 768, "initializer_cutoff_factor": 2.0,
    "initializer_range": 0.02, "intermediate_size": 1152, "layer_norm_eps": 1e-05,
    "local_attention": 128, "local_rope_theta": 10000.0, "max_position_embeddings": 8192,
    "mlp_bias": False, "mlp_dropout": 0.0, "model_type": "modernbert", "norm_bias": False,
    "norm_eps": 1e-05, "num_attention_heads": 12, "num_hidden_layers": 22,
    "pad_token_id": 50283, "position_embedding_type": "absolute", "sep_token_id": 50282,
    "sparse_pred_ignore_index": -100, "sparse_prediction": False, "torch_dtype": "float32",
    "transformers_version": "4.47.0.dev0", "vocab_size": 50368,
}


def test_modernbert_bases_come_from_the_file() -> None:
    """global_rope_theta / local_rope_theta are the file's bases: no "not in the file" note for
    either (mutation: knowing only rope_theta named both as ModernBertConfig's), and the layers
    rotate with them whatever position_embedding_type says (mutation: honouring it printed
    "attention layers rotate nothing")."""
    from transformers.models.modernbert.modeling_modernbert import ModernBertRotaryEmbedding

    hf = transformers.AutoConfig.for_model(**copy_without_type(_MODERNBERT_BASE),
                                           model_type="modernbert")
    assert {k: v["rope_theta"] for k, v in hf.rope_parameters.items()} == {
        "full_attention": 160000.0, "sliding_attention": 10000.0}
    plan = position_plan(_MODERNBERT_BASE)
    assert not any("rope_theta" in n for n in plan.notes), plan.notes
    assert not any("rotate nothing" in n for n in plan.notes), plan.notes
    rotary = ModernBertRotaryEmbedding(hf)
    for entry in plan:
        assert entry.kind == "rope" and entry.bidirectional
        want = getattr(rotary, f"{entry.layer_type}_inv_freq").double()
        torch.testing.assert_close(entry.inv_freq, want, rtol=1e-6, atol=0)
    assert [e.base for e in plan[:3]] == [160000.0, 10000.0, 10000.0]


# the shape of nvidia/Nemotron-H-8B-Base-8K's config.json (the keys NemotronHConfig reads):
# 52 layers, "M" Mamba-2, "-" MLP, "*" attention.
_NEMOTRON_H_8B = {
    "architectures": ["NemotronHForCausalLM"], "attention_head_dim": 128, "chunk_size": 128,
    "conv_kernel": 4, "expand": 2, "hidden_size": 4096,
    "hybrid_override_pattern": "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-",
    "intermediate_size": 21504, "mamba_head_dim": 64, "mamba_num_heads": 128,
    "max_position_embeddings": 8192, "mlp_hidden_act": "relu2", "model_type": "nemotron_h",
    "n_groups": 8, "num_attention_heads": 32, "num_hidden_layers": 52,
    "num_key_value_heads": 8, "sliding_window": None, "ssm_state_size": 128,
    "vocab_size": 131072,
}


def test_nemotron_h_is_planned_from_its_layer_pattern() -> None:
    """NemotronHConfig's num_hidden_layers is a property to_dict() drops (mutation: reading
    only the dict refuses with "has no num_hidden_layers"); its 4 attention layers rotate
    nothing (no rotary module) and the other 48 carry no position."""
    hf = transformers.AutoConfig.for_model(**copy_without_type(_NEMOTRON_H_8B),
                                           model_type="nemotron_h")
    assert "num_hidden_layers" not in hf.to_dict() and hf.num_hidden_layers == 52
    plan = position_plan(_NEMOTRON_H_8B)
    assert len(plan) == 52
    attends = [e.layer for e in plan if e.kind != "no_attention"]
    assert attends == [i for i, t in enumerate(hf.layers_block_type) if t == "full_attention"]
    assert attends == [7, 18, 29, 40] and {plan[i].kind for i in attends} == {"nope"}


def test_dynamic_ntk_prints_the_base_at_seq_len() -> None:
    """Llama 3 8B's shape (base 500 000, 8 192 positions) with dynamic ×2 at 40 000 tokens: the
    line names the grown base, and the model's own table is RoPE at that base (mutation: the
    old line printed only "base at L = 40000")."""
    from posenc_lib import dynamic_ntk_base, rope_inv_freq

    cfg = {"model_type": "llama", "num_hidden_layers": 1, "hidden_size": 4096,
           "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 8192,
           "rope_theta": 500000.0, "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}
    grown = position_plan(cfg, seq_len=40000)[0]
    base = dynamic_ntk_base(128, 5e5, 2.0, 40000, 8192)
    assert round(base) == 4536466
    assert "dynamic NTK ×2 (base 500 000 → 4 536 466 at L = 40 000)" in grown.describe()
    torch.testing.assert_close(grown.inv_freq, rope_inv_freq(128, base), rtol=2e-6, atol=0)
    short = position_plan(cfg, seq_len=4000)[0]
    assert "dynamic NTK ×2 (base unchanged at L = 4 000 ≤ 8 192)" in short.describe()
    torch.testing.assert_close(short.inv_freq, rope_inv_freq(128, 5e5), rtol=2e-6, atol=0)


def test_bamba_block_types_are_the_config_s_property() -> None:
    """BambaConfig's layers_block_type is a property to_dict() drops: with no
    attn_layer_indices every layer is Mamba (mutation: reading only the dict planned 32 RoPE
    attention layers); with [9, 18, 27] (the released 9B's) those three attend with RoPE."""
    bare = position_plan(transformers.CONFIG_MAPPING["bamba"]())
    assert {e.kind for e in bare} == {"no_attention"} and len(bare) == 32
    released = position_plan(transformers.CONFIG_MAPPING["bamba"](attn_layer_indices=[9, 18, 27]))
    assert [e.layer for e in released if e.kind == "rope"] == [9, 18, 27]


def test_census_sees_the_weights_pairing_of_models_that_deinterleave(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """DeepSeek-V3.2 de-interleaves adjacent pairs before rotating, so its q and k reach attention
    half-split: the shift test alone would pass a plan saying ``half``. The check reads the
    model's source and fails that plan (mutation caught: deepseek_v32 planned in the half layout).
    """
    import posenc_lib.architectures._families as families

    assert hf_check.check_type("deepseek_v32").status == "covered"
    monkeypatch.setattr(families, "ALWAYS_INTERLEAVED", frozenset())
    result = hf_check.check_type("deepseek_v32")
    assert result.status == "mismatch" and "de-interleaves adjacent pairs" in result.detail


def test_feed_forward_layers_of_a_hybrid_are_not_called_recurrent() -> None:
    """Nemotron-H's standalone MLP and MoE layers mix no tokens; its Mamba layers carry a state
    (mutation caught: every non-attention layer printed as 'state carried token by token')."""
    from posenc_lib.architectures import format_plan

    text = format_plan(position_plan(hf_check.tiny_config("nemotron_h")))
    assert "mlp layer (no token mixing): no position" in text
    assert "mlp layer (state carried" not in text and "moe layer (state carried" not in text
    assert "linear_attention layer (state + 4-tap causal conv" in text


def test_gated_deltanet_and_mamba_layers_name_their_short_convolution() -> None:
    """Qwen3-Next's Gated DeltaNet and Jamba's Mamba layers hold a depthwise causal conv whose
    kernel size the config names (``linear_conv_kernel_dim``, ``mamba_d_conv``): the label gives
    the tap count that the built module has (mutation caught: the conv-less recurrent label, or
    the class default 4 printed for a config that sets 3); MiniMax's lightning attention names
    no conv and keeps the recurrent label."""
    import transformers

    from posenc_lib.architectures import format_plan

    for model_type, key in (("qwen3_next", "linear_conv_kernel_dim"), ("jamba", "mamba_d_conv")):
        config, model = hf_check.tiny_model(model_type, **{key: 3})
        plan = position_plan(config)
        convs = [m for m in model.modules() if isinstance(m, torch.nn.Conv1d)]
        assert convs and {c.kernel_size for c in convs} == {(3,)}, model_type
        assert all(c.groups == c.in_channels for c in convs), model_type
        taps = {e.conv_taps for e in plan if e.kind == "no_attention"}
        assert taps == {3}, (model_type, taps)
        assert "state + 3-tap causal conv" in format_plan(plan), model_type
    minimax = position_plan(transformers.CONFIG_MAPPING["minimax"]())
    assert {e.conv_taps for e in minimax if e.kind == "no_attention"} == {None}
    assert "(state carried token by token): no positional encoding" in format_plan(minimax)


def test_short_convolution_layers_are_not_called_recurrent() -> None:
    """LFM2's conv layers keep the last k − 1 inputs and weight each offset separately; they are
    not printed as carrying a state token by token (mutation caught: the recurrent label)."""
    import transformers

    from posenc_lib.architectures import format_plan

    config = transformers.CONFIG_MAPPING["lfm2"](num_hidden_layers=4, full_attn_idxs=[1, 3])
    plan = position_plan(config)
    assert [e.kind for e in plan] == ["no_attention", "rope", "no_attention", "rope"]
    text = format_plan(plan)
    assert "conv layer (last k−1 inputs kept; offset-specific kernel)" in text
    assert "conv layer (state carried" not in text


def test_zamba2_head_size_is_its_attention_head_dim() -> None:
    """Zamba2's attention is twice the hidden size wide: 2·2560/32 = 160 per head, not 80
    (mutation caught: head size read as hidden_size / num_attention_heads)."""
    from transformers import Zamba2Config

    plan = position_plan(Zamba2Config(hidden_size=2560, num_attention_heads=32).to_dict())
    rope = [e for e in plan if e.kind == "rope"]
    assert rope and all(e.head_dim == 160 and e.rotary_dim == 160 for e in rope)


def test_every_type_that_always_deinterleaves_is_listed() -> None:
    """Each census type whose attention calls ``apply_rotary_pos_emb_interleave`` even with
    ``rope_interleave=False`` is in ALWAYS_INTERLEAVED, so its plan says ``interleaved``; a type
    with the switch calls it only when the switch is on. Observed by running each tiny model
    (mutations caught: mistral_large4_text missing from the set, as it once was; a detector that
    ignores the switch, which would call deepseek_v3 with ``rope_interleave=False``
    de-interleaving).
    """
    import importlib

    import transformers
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    from posenc_lib.architectures._families import ALWAYS_INTERLEAVED

    always, switched = set(), set()
    for model_type in CENSUS:
        class_name = MODEL_MAPPING_NAMES.get(model_type)
        if class_name is None:
            continue
        module = importlib.import_module(getattr(transformers, class_name).__module__)
        if not hasattr(module, "apply_rotary_pos_emb_interleave"):
            continue
        if hf_check.check_type(model_type).status != "covered":
            continue  # no plan to check: refused by name (longcat_flash) or not built (axk1)
        config, model = hf_check.tiny_model(model_type)
        if not hf_check.deinterleaves(model, config):
            continue
        if not hasattr(config, "rope_interleave"):
            always.add(model_type)
            continue
        model.config.rope_interleave = False  # the switch a forward pass reads, if it reads it
        (always if hf_check.deinterleaves(model, config) else switched).add(model_type)
    assert "deepseek_v32" in always and "deepseek_v3" in switched
    assert always <= ALWAYS_INTERLEAVED, sorted(always - ALWAYS_INTERLEAVED)
    assert not hf_check.deinterleaves(*hf_check.tiny_model("llama"))


def test_gemma4_plan_says_its_attention_is_unscaled() -> None:
    """Gemma 4 passes softmax scale 1 (q and k are RMS-normalised); the plan says so in a note,
    and the census check expects exactly that scale (mutation caught: a plan silent about it, as
    a port reading the plan would then scale by 1/sqrt(head_dim))."""
    plan = position_plan(hf_check.tiny_config("gemma4_text"))
    assert any(n.startswith("attention is unscaled") for n in plan.notes)
    llama = position_plan(hf_check.tiny_config("llama"))
    assert not any(n.startswith("attention is unscaled") for n in llama.notes)


def test_tiny_model_names_an_unknown_type_and_builds_any_known_one() -> None:
    """tiny_model refuses a type transformers does not know with a ValueError naming the
    parameter, and builds a census type outside TINY_CONFIGS from tiny_config (mutation caught:
    a tiny_model limited to TINY_CONFIGS, or one that raises a KeyError)."""
    with pytest.raises(ValueError, match="model_type must be a model type transformers"):
        hf_check.tiny_model("not_a_model")
    with pytest.raises(TypeError, match="model_type must be a str"):
        hf_check.tiny_model(3)  # type: ignore[arg-type]
    assert "deepseek_v32" not in hf_check.TINY_CONFIGS
    config, model = hf_check.tiny_model("deepseek_v32")
    assert config.model_type == "deepseek_v32" and hf_check.deinterleaves(model, config)


def test_plans_outside_the_census_say_so_and_kimi_linear_mla_is_nope() -> None:
    """A type outside the census is planned with a "not verified" note (mutation caught: a silent
    plan for nemotron_h); Kimi Linear's released config sets rope_theta beside mla_use_nope, and
    its MLA layers rotate nothing in transformers (mutation caught: rope_theta read as RoPE)."""
    import transformers

    notes = position_plan(transformers.CONFIG_MAPPING["nemotron_h"]()).notes
    assert any("outside the census" in n for n in notes), notes
    assert not any("outside the census" in n
                   for n in position_plan(hf_check.tiny_config("llama")).notes)
    kimi = transformers.CONFIG_MAPPING["kimi_linear"]().to_dict()
    kimi.update(mla_use_nope=True, rope_theta=10000.0)
    plan = position_plan(kimi)
    assert {e.kind for e in plan} <= {"nope", "no_attention"} and any(
        e.kind == "nope" for e in plan)
    assert any("mla_use_nope" in n for n in plan.notes)
    # Without the key, transformers' class still builds no rotary module (mutation caught: a
    # file with rope_theta but no mla_use_nope planned as RoPE).
    for flag in (None, False):
        kimi = transformers.CONFIG_MAPPING["kimi_linear"]().to_dict()
        kimi.pop("mla_use_nope", None)
        kimi["rope_theta"] = 10000.0
        if flag is not None:
            kimi["mla_use_nope"] = flag
        plan = position_plan(kimi)
        assert {e.kind for e in plan} <= {"nope", "no_attention"}, flag
        assert any("builds no rotary module" in n for n in plan.notes), plan.notes


@pytest.mark.parametrize(("config", "says"), [
    ({"model_type": "mllama", "text_config": {"model_type": "mllama_text_model",
                                              "num_hidden_layers": 10,
                                              "cross_attention_layers": [3, 8]},
      "vision_config": {"model_type": "mllama_vision_model"}}, "cross_attention_layers"),
    ({"model_type": "roformer"}, "sinusoidal table"),
    ({"model_type": "deberta-v2"}, "disentangled attention"),
    ({"model_type": "xlnet"}, "relative attention"),
    ({"model_type": "mpnet"}, "relative position bias"),
    ({"model_type": "t5"}, "relative_attention_num_buckets"),
    ({"model_type": "bert", "position_embedding_type": "relative_key"}, "relative_key"),
])
def test_models_with_position_inside_attention_are_refused(config: dict, says: str) -> None:
    """Relative biases, disentangled attention, RoFormer's own rotation and Mllama's cross-
    attention layers are refused by name instead of planned as position-free layers (mutation
    caught: the note "attention layers add no position" on DeBERTa-v3 or RoFormer)."""
    with pytest.raises(ValueError, match=says):
        position_plan(config)


def test_hunyuan_alpha_is_a_fixed_base() -> None:
    """Hunyuan's "dynamic" block with alpha is transformers' static ntk_alpha: the plan prints the
    base rope_theta·alpha^(d/(d−2)) its table uses at every length (mutation caught: "base 10 000,
    dynamic NTK" and a base that grows with --seq-len)."""
    config = {"model_type": "hunyuan_v1_moe", "num_hidden_layers": 2, "hidden_size": 256,
              "num_attention_heads": 2, "head_dim": 128, "num_key_value_heads": 1,
              "max_position_embeddings": 32768, "rope_theta": 10000.0, "vocab_size": 100,
              "num_experts": 4, "moe_topk": 2, "intermediate_size": 64,
              "rope_scaling": {"type": "dynamic", "alpha": 1000.0, "factor": 1.0}}
    expected = 10000.0 * 1000.0 ** (128 / 126)
    for seq_len in (None, 65536):
        plan = position_plan(config, seq_len=seq_len)
        assert all(e.rope_type == "ntk_alpha" for e in plan)
        assert all(math.isclose(e.base, expected, rel_tol=1e-4) for e in plan)
        theta = expected ** (-torch.arange(0, 128, 2, dtype=torch.float64) / 128)
        assert torch.allclose(plan[0].inv_freq, theta, rtol=1e-5)


# --- the book's model-table cells (posenc_lib.architectures._table), chapter 10 ------------------

from posenc_lib.architectures import _table  # noqa: E402
from posenc_lib.architectures._rotary import has_rotary_module  # noqa: E402


def test_table_cells_on_released_configs() -> None:
    """Gemma 3 12B's plan reads "LLLLLG ×8" with per-kind cells; Phi-3.5's window never binds;
    Kimi K2's YaRN shows its β 1/1 and DeepSeek-V3's (32/1) does not; Phi-3.5's LongRoPE shows
    its short/long switch at any length; gpt-oss's temperature is
    cos/sin × a with a² on the logit (mutations: a window counted regardless of the limit, the
    usual β printed, a² replaced by a)."""
    gemma = position_plan(published_config("Gemma 3 12B"))
    limit = gemma.config["max_position_embeddings"]
    assert _table.layer_pattern(gemma, limit) == "LLLLLG ×8"
    cells = _table.per_kind_cells(gemma, {"window": _table.window_cell}, limit)
    assert cells == ["L: window 1 024 · G: —"]
    same = _table.per_kind_cells(gemma, {"dim": lambda e, _: str(e.head_dim)}, limit)
    assert same == ["256"]
    phi = position_plan(published_config("Phi-3.5-mini"))
    phi_limit = phi.config["max_position_embeddings"]
    assert phi[0].window is not None and phi[0].window >= phi_limit
    assert not _table.window_binds(phi[0], phi_limit) and _table.window_binds(phi[0])
    assert _table.layer_letter(phi[0], phi_limit) == "G" and _table.layer_letter(phi[0]) == "L"
    assert _table.window_cell(phi[0], phi_limit).endswith("never binds")
    kimi = position_plan(published_config("Kimi K2"))[0]
    assert _table.scaling_cell(kimi) == "yarn ×32, β 1/1"
    assert _table.scaling_cell(position_plan(PRESET_CONFIGS["DeepSeek-V3"])[0]) == "yarn ×40"
    # LongRoPE: the cell states the switch (the plan says which table a given length uses)
    for length in (None, 4096, 4097, 10_000):
        phi_at = position_plan(published_config("Phi-3.5-mini"), seq_len=length)[0]
        assert _table.scaling_cell(phi_at) == "longrope: short ≤ 4 096 < long"
    fixed = dataclasses.replace(phi[0], scaling="longrope short factors (as PhiMoE computes them)")
    assert _table.scaling_cell(fixed) == "longrope short factors"
    oss = position_plan(published_config("gpt-oss-20b"))[0]
    a = 0.1 * math.log(32) + 1
    assert _table.temperature_cell(oss) == f"cos/sin × {a:.3f}"
    assert _table.logit_gain(oss) == f"{a * a:.3f}"
    scout = position_plan(PRESET_CONFIGS["Llama 4 Scout (RoPE layers)"])
    nope = next(e for e in scout if e.kind == "nope")
    assert _table.layer_letter(nope) == "N" and _table.logit_gain(nope).startswith("(1 + 0.1·ln")
    assert _table.layer_pattern(scout, scout.config["max_position_embeddings"]) == "LLLN ×12"


def test_table_pattern_remainder_and_bad_input() -> None:
    """A pattern that does not divide the layer count keeps its remainder; bad input is refused
    by name."""
    plan = position_plan({"model_type": "gemma2", "num_hidden_layers": 5, "hidden_size": 64,
                          "num_attention_heads": 4, "head_dim": 16, "sliding_window": 8})
    assert _table.layer_pattern(plan) == "LG ×2 + L"
    # no repetition, few runs: written as runs (Qwen2 with sliding windows above layer 2 of 4)
    split = position_plan({"model_type": "qwen2", "num_hidden_layers": 4, "hidden_size": 64,
                           "num_attention_heads": 4, "use_sliding_window": True,
                           "sliding_window": 8, "max_window_layers": 2,
                           "max_position_embeddings": 64})
    assert _table.layer_pattern(split, 64) == "G ×2 + L ×2"
    with pytest.raises(ValueError, match="plan"):
        _table.layer_pattern([])
    with pytest.raises(TypeError, match="plan"):
        _table.layer_pattern("LLG")
    with pytest.raises(TypeError, match="entry"):
        _table.window_cell(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_length"):
        _table.window_binds(plan[0], 0)
    with pytest.raises(TypeError, match="columns"):
        _table.per_kind_cells(plan, {"x": "not callable"})  # type: ignore[dict-item]


def test_rotary_detector_finds_sub_models_and_lm_heads() -> None:
    """mllama_text_model has no MODEL_MAPPING_NAMES entry, yet its modelling file assigns
    MllamaRotaryEmbedding: the detector finds it through the config's package (mutation: the
    mapping lookup alone returns False). Mistral 4 has no auto-mapped LM class but defines
    Mistral4ForCausalLM: the census counts it, unverified (its tiny model does not build)."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_MAPPING_NAMES,
    )

    assert "mllama_text_model" not in MODEL_MAPPING_NAMES
    assert has_rotary_module("mllama_text_model")
    assert not has_rotary_module("nemotron_h")
    with pytest.raises(TypeError, match="model_type"):
        has_rotary_module(3)  # type: ignore[arg-type]
    assert "mistral4" not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    assert hf_check._has_lm_head_class("mistral4")
    assert not hf_check._has_lm_head_class("qwen3_vl_vision")  # a vision tower: no LM head
    assert "mistral4" in CENSUS and "mistral4" in hf_check.UNVERIFIED_TYPES
    assert "qwen3_vl_vision" not in CENSUS and "mllama_text_model" not in CENSUS


def test_tiny_config_skips_read_only_properties() -> None:
    """FalconConfig's ``head_dim`` is a property without a setter: the harness leaves it out (so
    Falcon's tiny model builds, 64/4 = 16 per head) and Falcon and Falcon-H1 are census types it
    covers, not unverified ones (mutation caught: every tiny size passed, as before)."""
    import transformers

    falcon = transformers.CONFIG_MAPPING["falcon"]
    assert not hf_check._settable(falcon, "head_dim")
    assert hf_check._settable(falcon, "hidden_size")
    assert hf_check.tiny_config("falcon").head_dim == 16
    assert not {"falcon", "falcon_h1"} & hf_check.UNVERIFIED_TYPES
    assert {"falcon", "falcon_h1"} <= set(CENSUS)


def test_cli_hub_id_offline_fails_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """With HF_HUB_OFFLINE=1 an uncached Hub id gives one line and exit status 2 within seconds;
    the error names HF_HUB_OFFLINE only when it is unset (mutation caught: the hint always
    printed, or never)."""
    import os
    import time

    from posenc_lib.architectures import load_config

    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "posenc_lib", "plan", "no-such-org/no-model"],
                            capture_output=True, text=True, cwd=ROOT, timeout=120, env=env)
    assert result.returncode == 2 and time.monotonic() - start < 30, result.stderr
    assert "not loadable from the Hub" in result.stderr and "HF_HUB_OFFLINE" not in result.stderr

    def unreachable(*args: Any, **kwargs: Any) -> None:
        raise OSError("We couldn't connect to 'https://huggingface.co'")

    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained", unreachable)
    for value, hinted in (("", True), ("1", False), ("0", True)):
        monkeypatch.setenv("HF_HUB_OFFLINE", value)
        with pytest.raises(ValueError, match="not loadable from the Hub") as error:
            load_config("no-such-org/no-model")
        assert ("HF_HUB_OFFLINE=1" in str(error.value)) == hinted, (value, str(error.value))


def test_census_sees_a_real_size_window_by_default() -> None:
    """plan_problems runs long enough to see the config's window: a plan that drops a 40-key
    window fails by default (mutation caught: the old fixed length of 12, where the two masks
    are the same), and passes unseen at an explicit 12."""
    config, model = tiny_model_for("gpt_oss", sliding_window=40)
    plan = position_plan(config)
    assert {e.window for e in plan} == {40, None}
    assert hf_check.min_check_length(plan, config) == 42
    assert hf_check.plan_problems(plan, config, model) == []
    no_window = [dataclasses.replace(e, window=None) for e in plan]
    assert hf_check.min_check_length(no_window, config) == 42  # the config's window still counts
    assert any("mask" in p for p in hf_check.plan_problems(no_window, config, model))
    assert hf_check.plan_problems(no_window, config, model, seq=12) == []
    with pytest.raises(ValueError, match="seq"):
        hf_check.plan_problems(plan, config, model, seq=1)
    with pytest.raises(ValueError, match="floor"):
        hf_check.min_check_length(plan, config, floor=0)


def test_a_window_switched_off_is_noted() -> None:
    """Qwen2's sliding_window with use_sliding_window false plans no window, and the plan says
    the file's window is not applied (mutation caught: a silent drop); switched on, no note."""
    qwen = {"model_type": "qwen2", "num_hidden_layers": 4, "hidden_size": 64,
            "num_attention_heads": 4, "sliding_window": 4096, "use_sliding_window": False,
            "max_window_layers": 0, "max_position_embeddings": 32768}
    plan = position_plan(qwen)
    assert all(e.window is None for e in plan)
    assert ("sliding_window = 4 096 in the file is not applied: Qwen2Config sets the window to "
            "None (use_sliding_window is false)") in plan.notes
    on = position_plan({**qwen, "use_sliding_window": True})
    assert {e.window for e in on} == {4096}
    assert not any("not applied" in n for n in on.notes)


def test_a_string_window_pattern_is_refused_by_name() -> None:
    """EXAONE 4's docstring allows sliding_window_pattern "LLLG", but transformers 5.25's class
    computes `(i + 1) % pattern`: the error names the key and the value instead of relaying
    the TypeError (mutation caught: "unsupported operand type(s)")."""
    exaone = {"model_type": "exaone4", "num_hidden_layers": 4, "hidden_size": 64,
              "num_attention_heads": 4, "head_dim": 16, "sliding_window": 8,
              "sliding_window_pattern": "LLLG"}
    with pytest.raises(ValueError, match="string sliding_window_pattern 'LLLG'"):
        position_plan(exaone)
    assert [e.window for e in position_plan({**exaone, "sliding_window_pattern": 4})] == [
        8, 8, 8, None]
