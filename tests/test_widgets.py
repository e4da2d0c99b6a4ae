"""Live explorers: moving a control recomputes the FigureWidget; one call picks the right mode."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import plotly.graph_objects as go
import pytest

from posenc_lib import alibi_bias, euler_partial_sums, rope_decay_bound, sinusoidal_table
from posenc_lib import widgets as Wd
from posenc_lib.display import STATIC_ENV_VAR, StaticFigure
from posenc_lib.presets import ROPE_PRESETS

EXPLORERS = [
    (Wd.heatmap_explorer, Wd.heatmap_live),
    (Wd.spiral_explorer, Wd.spiral_live),
    (Wd.decay_explorer, Wd.decay_live),
    (Wd.euler_explorer, Wd.euler_live),
    (Wd.alibi_explorer, Wd.alibi_live),
    (Wd.rope_calculator, Wd.calculator_live),
    (Wd.rotation_explorer, Wd.rotation_live),
    (Wd.offset_explorer, Wd.offset_live),
    (Wd.convention_explorer, Wd.convention_live),
    (Wd.permutation_explorer, Wd.permutation_live),
    (Wd.spectrum_explorer, Wd.spectrum_live),
    (Wd.score_curve_explorer, Wd.score_curve_live),
    (Wd.granularity_explorer, Wd.granularity_live),
    (Wd.pair_spiral_explorer, Wd.pair_spiral_live),
]


@pytest.mark.parametrize(("explorer", "live"), EXPLORERS, ids=lambda f: f.__name__)
def test_one_call_gives_static_html_or_a_live_ui(
    monkeypatch: pytest.MonkeyPatch, explorer, live
) -> None:
    monkeypatch.setenv(STATIC_ENV_VAR, "1")
    shown = explorer()
    assert isinstance(shown, StaticFigure)
    bundle = shown._repr_mimebundle_()
    assert set(bundle) == {"text/html", "text/plain"} and "plotly-graph-div" in bundle["text/html"]
    monkeypatch.delenv(STATIC_ENV_VAR)
    ui = explorer()
    assert isinstance(ui, Wd.LiveExplorer) and isinstance(ui.figure, go.Figure)
    assert json.loads(ui.view.figure)["data"]  # the browser gets the figure as JSON


def test_heatmap_recomputes_on_base_dim_and_length() -> None:
    ui = Wd.heatmap_live()
    ui.controls["base"].value = 123456.0  # off any static grid
    ui.controls["dim"].value = 40
    ui.controls["seq_len"].value = 77
    np.testing.assert_array_equal(ui.figure.data[0].z, sinusoidal_table(77, 40, 123456.0).numpy())
    ui.controls["scheme"].value = "binary"
    assert set(np.unique(ui.figure.data[0].z)) == {0.0, 1.0}


def test_spiral_follows_base_and_position() -> None:
    ui = Wd.spiral_live(dim=16, seq_len=32, pairs=[1])
    ui.controls["base"].value = 100.0
    theta1 = 100.0 ** (-2 / 16)
    np.testing.assert_allclose(ui.figure.data[0].x, np.cos(np.arange(32) * theta1), atol=1e-12)
    ui.controls["seq_len"].value = 16
    assert ui.controls["position"].max == 15  # the clock position stays in range
    ui.controls["position"].value = 15
    assert "m = 15" in ui.figure.layout.annotations[1].text


def test_decay_follows_base_and_dim() -> None:
    ui = Wd.decay_live()
    ui.controls["base"].value = 500000.0
    ui.controls["dim"].value = 64
    b = rope_decay_bound(64, 500000.0, 256).numpy()
    np.testing.assert_allclose(ui.figure.data[0].y, b / b[0])


def test_euler_follows_theta_and_terms() -> None:
    ui = Wd.euler_live()
    ui.controls["n_terms"].value = 9
    ui.controls["theta"].value = 2.5
    path = ui.figure.data[2]
    assert len(path.x) == 10
    assert complex(path.x[-1], path.y[-1]) == pytest.approx(
        complex(euler_partial_sums(2.5, 9)[-1].item())
    )
    ui.controls["theta"].value = 6.0  # the partial sums swing out to ~37: the frame follows
    lim = ui.figure.layout.xaxis.range[1]
    path = ui.figure.data[2]
    assert max(map(abs, [*path.x, *path.y])) < lim
    assert list(ui.figure.layout.yaxis.range) == [-lim, lim]


def test_alibi_head_is_clamped_when_heads_shrink() -> None:
    ui = Wd.alibi_live()
    ui.controls["head"].value = 7
    ui.controls["n_heads"].value = 3
    assert ui.controls["head"].value == 2
    bias = alibi_bias(3, 32).numpy()[2]
    z = np.array([[np.nan if v is None else v for v in row] for row in ui.figure.data[0].z])
    np.testing.assert_allclose(z, np.where(np.isfinite(bias), bias, np.nan))  # None = masked


def test_calculator_prints_the_hugging_face_config() -> None:
    ui = Wd.calculator_live()
    ui.controls["method"].value = "yarn"
    ui.controls["factor"].value = 4.0
    assert '"rope_type": "yarn"' in ui.text.value and '"factor": 4.0' in ui.text.value
    assert '"original_max_position_embeddings": 4096' in ui.text.value
    assert "rope_parameters" in ui.text.value and "rope_scaling" in ui.text.value  # both forms
    ui.controls["method"].value = "abf"
    ui.controls["base"].value = 500000.0  # for ABF the base control is the raised base
    assert '"rope_theta": 500000.0' in ui.text.value and '"rope_scaling": null' in ui.text.value
    ui.controls["method"].value = "pi"
    np.testing.assert_allclose(ui.figure.data[1].customdata, 4.0)


def test_calculator_honours_the_base_control_for_abf() -> None:
    ui = Wd.calculator_live(preset="Code Llama 7B")
    assert ui.controls["base"].value == 1e6 and '"rope_theta": 1000000.0' in ui.text.value
    ui.controls["factor"].value = 8.0  # leaves the preset; the base still reads 10^6
    assert ui.controls["preset"].value.startswith("custom")
    assert '"rope_theta": 1000000.0' in ui.text.value and "500000" not in ui.text.value


def test_calculator_keeps_a_presets_options_in_custom_mode() -> None:
    ui = Wd.calculator_live(preset="DeepSeek-V2-Lite")
    ui.controls["base"].value = 20000.0
    assert ui.controls["preset"].value.startswith("custom")
    for key in ('"mscale": 0.707', '"mscale_all_dim": 0.707', '"beta_fast": 32.0',
                '"max_position_embeddings": 163840'):
        assert key in ui.text.value, key
    assert ui.figure.data[1].name.endswith("attention factor 1")  # not 0.1·ln 40 + 1 = 1.369
    ui.controls["dim"].value = 128  # another dimension: the preset's options no longer apply
    assert '"mscale"' not in ui.text.value


def test_calculator_offers_longrope_and_keeps_phi_lists() -> None:
    ui = Wd.calculator_live(preset="Phi-3.5-mini-instruct")
    assert ui.controls["method"].value == "longrope"
    ui.controls["factor"].value = 16.0
    assert ui.controls["method"].value == "longrope" and "… 48 values …, 64.84]" in ui.text.value
    ui.controls["dim"].value = 64  # no lists of that length: uniform ones (1 below, s beyond)
    assert '"long_factor": [16.0, 16.0, … 32 values …, 16.0]' in ui.text.value


def test_mistral_preset_trained_at_8192() -> None:
    ui = Wd.calculator_live(preset="Mistral 7B v0.1")
    assert ui.controls["train_len"].value == 8192
    ui.controls["method"].value = "yarn"
    ui.controls["factor"].value = 4.0
    assert '"original_max_position_embeddings": 8192' in ui.text.value


def test_calculator_presets_set_the_controls_and_print_their_config() -> None:
    ui = Wd.calculator_live(preset="DeepSeek-V2-Lite")
    assert ui.controls["factor"].value == 40.0 and ui.controls["dim"].value == 64
    assert '"mscale_all_dim": 0.707' in ui.text.value
    ui.controls["preset"].value = "Phi-3.5-mini-instruct"
    assert "… 48 values …" in ui.text.value and "Phi-3.5" in ui.figure.layout.title.text
    ui.controls["factor"].value = 2.0  # moving a control leaves the preset
    assert ui.controls["preset"].value.startswith("custom")


def test_offset_and_rotation_and_conventions_update() -> None:
    ui = Wd.offset_live()
    ui.controls["offset"].value = 20
    assert ui.figure.data[4].x[0] == 20
    rot = Wd.rotation_live()
    rot.controls["theta"].value = np.pi / 2
    assert rot.figure.data[2].x[1] == pytest.approx(-0.5) and rot.figure.data[2].y[1] == 1.0
    conv = Wd.convention_live()
    conv.controls["dim"].value = 6
    assert list(conv.figure.data[3].text) == ["0", "2", "4", "1", "3", "5"]


@pytest.mark.parametrize("live", [e[1] for e in EXPLORERS], ids=lambda f: f.__name__)
def test_extreme_slider_values_raise_nothing(live) -> None:
    ui = live()
    for control in ui.controls.values():
        if hasattr(control, "max") and hasattr(control, "min"):
            if getattr(control, "step", None) == 2 or control.description == "dimension d":
                control.value = control.max - control.max % 2
                control.value = control.min + control.min % 2
            else:
                control.value = control.max
                control.value = control.min
        elif hasattr(control, "options"):
            for option in control.options:
                control.value = option[1] if isinstance(option, tuple) else option


def test_bad_explorer_parameters_raise_value_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(STATIC_ENV_VAR, raising=False)
    with pytest.raises(ValueError, match="dim"):
        Wd.heatmap_explorer(dim=3)
    with pytest.raises(ValueError, match="method"):
        Wd.rope_calculator(method="magic")
    monkeypatch.setenv(STATIC_ENV_VAR, "1")
    with pytest.raises(ValueError, match="n_heads"):
        Wd.alibi_explorer(n_heads=0)


# Initial values outside a slider's range (within the figure's own range): refused, naming the
# parameter (ipywidgets used to clamp them silently, e.g. dim 1024 drawn, the slider showing 512).
OUT_OF_RANGE = [
    (Wd.heatmap_live, {"dim": 1024}, "dim"),
    (Wd.heatmap_live, {"seq_len": 4}, "seq_len"),
    (Wd.heatmap_live, {"base": 2.0}, "base"),
    (Wd.heatmap_live, {"base": 1e8}, "base"),
    (Wd.decay_live, {"dim": 8}, "dim"),
    (Wd.offset_live, {"dim": 1024}, "dim"),
    (Wd.spiral_live, {"seq_len": 2048, "position": 2000}, "seq_len"),
    (Wd.euler_live, {"theta": 10.0}, "theta"),
    (Wd.euler_live, {"n_terms": 100}, "n_terms"),
    (Wd.rotation_live, {"theta": -30.0}, "theta"),
    (Wd.calculator_live, {"factor": 1000.0}, "factor"),
    (Wd.calculator_live, {"base": 1e8}, "base"),
    (Wd.calculator_live, {"dim": 1024}, "dim"),
    (Wd.alibi_live, {"seq_len": 300}, "seq_len"),
    (Wd.permutation_live, {"base": 5.0}, "base"),
]


@pytest.mark.parametrize(
    ("live", "kwargs", "control"), OUT_OF_RANGE,
    ids=[f"{f.__name__}-{c}={kw[c]}" for f, kw, c in OUT_OF_RANGE],
)
def test_a_value_outside_its_control_is_refused_naming_it(live, kwargs, control) -> None:
    # The message names the control and its range (the calculator checks its arguments up front,
    # for the static figure too, with the same ranges as its sliders).
    pattern = rf"^{control} must be (in|a number in|an integer in) \[.*\]"
    with pytest.raises(ValueError, match=pattern):
        live(**kwargs)


@pytest.mark.parametrize(
    ("live", "kwargs", "control"),
    [
        (Wd.heatmap_live, {"dim": 512, "seq_len": 8, "base": 10.0}, "dim"),
        (Wd.calculator_live, {"factor": 64.0, "base": 1e7, "train_len": 2**22}, "factor"),
        (Wd.euler_live, {"theta": -6.28, "n_terms": 30}, "theta"),
    ],
)
def test_values_at_the_ends_of_a_range_are_shown_as_given(live, kwargs, control) -> None:
    ui = live(**kwargs)
    for name, value in kwargs.items():
        assert ui.controls[name].value == pytest.approx(value, rel=1e-9)


def test_config_checker_reports_live_and_static(monkeypatch: pytest.MonkeyPatch) -> None:
    text = ('{"head_dim": 128, "rope_theta": 500000.0, "max_position_embeddings": 131072, '
            '"rope_scaling": {"rope_type": "yarn", "factor": 8.0}}')
    monkeypatch.setenv(STATIC_ENV_VAR, "1")
    shown = Wd.config_checker(text)
    assert "original_max_position_embeddings" in shown.data
    monkeypatch.delenv(STATIC_ENV_VAR)
    ui = Wd.config_checker(text)
    box, report = ui.children
    assert "yarn" in report.value
    box.value = "{not json"
    assert "error: config must be valid JSON" in report.value
    with pytest.raises(TypeError, match="text"):
        Wd.config_checker(3)


@pytest.mark.parametrize("preset", ["Gemma 3 12B (global layers)", "OLMo 3 7B (full layers)"])
def test_a_nudged_per_layer_preset_keeps_its_per_layer_block(preset: str) -> None:
    """Gemma 3 and OLMo 3 read rope_parameters per layer type: after a factor change the printed
    block is still per layer type, loads into the preset's own config class with the full-
    attention layers scaled by the new factor, and drops the preset's explicit attention factor
    (mutation caught: a custom mode that prints a flat block, which the class ignores)."""
    import html
    import re

    import transformers

    from posenc_lib.presets import ROPE_PRESETS

    ui = Wd.calculator_live(preset=preset)
    start = ROPE_PRESETS[preset]
    ui.controls["factor"].value = start.factor + 1
    assert ui.controls["preset"].value.startswith("custom")
    match = re.search(r"\{.*?\n\}", html.unescape(ui.text.value), re.S)
    assert match, ui.text.value
    fields = json.loads(match.group(0))
    block = fields["rope_parameters"]
    assert set(block) == {"full_attention", "sliding_attention"}, block
    assert "attention_factor" not in block["full_attention"]
    config = transformers.CONFIG_MAPPING[start.model_type](**fields)
    assert config.rope_parameters["full_attention"]["factor"] == start.factor + 1
    assert config.rope_parameters["sliding_attention"]["rope_type"] == "default"


def _own_config_kwargs(model_type: str, head_dim: int) -> dict[str, Any]:
    """Sizes of a tiny config of ``model_type`` with heads of ``head_dim`` features."""
    if model_type in ("deepseek_v2", "deepseek_v3"):  # MLA: the rotary part is qk_rope_head_dim
        return {"hidden_size": 128, "num_attention_heads": 2, "qk_rope_head_dim": head_dim,
                "qk_nope_head_dim": 16, "v_head_dim": 16, "kv_lora_rank": 16,
                "q_lora_rank": None}
    kwargs: dict[str, Any] = {"hidden_size": 2 * head_dim, "num_attention_heads": 2}
    if model_type != "gpt_neox":
        kwargs["num_key_value_heads"] = 2
    if model_type in ("llama", "gemma3_text", "gpt_oss", "qwen3"):
        kwargs["head_dim"] = head_dim
    return kwargs


def _printed_blocks(text: str, preset: Any) -> list[dict[str, Any]]:
    """The transformers 5 and 4 blocks the calculator printed, parsed (abbreviated LongRoPE lists
    are filled in from the preset, whose lists custom mode keeps at the same factor length)."""
    import html
    import re

    blocks = re.findall(r"\{.*?\n\}", html.unescape(text), re.S)
    assert len(blocks) == 2, text
    out = []
    for block in blocks:
        block = re.sub(r"\[[^\[\]]*… \d+ values …[^\[\]]*\]", "null", block)
        fields = json.loads(block)
        for scaling in (fields.get("rope_parameters"), fields.get("rope_scaling")):
            for key in ("short_factor", "long_factor"):
                if isinstance(scaling, dict) and key in scaling and scaling[key] is None:
                    scaling[key] = list(preset.options[key])
        out.append(fields)
    return out


@pytest.mark.parametrize("control", ["factor", "train_len"])
@pytest.mark.parametrize("name", sorted(ROPE_PRESETS))
def test_a_nudged_preset_keeps_its_rotary_fraction(name: str, control: str) -> None:
    """Moving a control away from a preset keeps its head size and rotary fraction: both printed
    blocks load into the model's own config class and rotate the preset's d features with the
    new setting (mutation caught: custom mode that sets the head size to d, which printed
    GPT-NeoX-20B's block with rotary_pct 1.0 and no partial_rotary_factor — 96 rotated features
    in place of 24)."""
    import torch
    import transformers

    from posenc_lib.config_check import model_rope
    from posenc_lib.extension import extended_rope

    start = ROPE_PRESETS[name]
    ui = Wd.calculator_live(preset=name)
    factor, train_len = start.factor, start.train_len
    if control == "factor":
        factor = start.factor + 1
        ui.controls["factor"].value = factor
    else:
        train_len = start.train_len + 1024
        ui.controls["train_len"].value = train_len
    assert ui.controls["preset"].value.startswith("custom")
    options = dict(start.options)
    if factor != start.factor:
        options.pop("attention_factor", None)  # the preset's, for its own factor
    want, _ = extended_rope(start.method, dim=start.rotary_dim, base=start.base, factor=factor,
                            original_max_position=train_len, **options)
    for legacy, fields in zip((False, True), _printed_blocks(ui.text.value, start), strict=True):
        rope = fields.get("rope_parameters", {})
        rope = rope.get("full_attention", rope)
        pct = fields.get("rotary_pct", rope.get("partial_rotary_factor",
                                                fields.get("partial_rotary_factor")))
        assert pct == start.partial_rotary_factor, (legacy, fields)  # None: all features rotate
        config = transformers.CONFIG_MAPPING[start.model_type](
            **_own_config_kwargs(start.model_type, start.head_dim), **fields)
        inv, _ = model_rope(config)
        assert inv.numel() == start.rotary_dim // 2, (legacy, inv.numel())
        torch.testing.assert_close(inv, want, rtol=2e-6, atol=0)


def test_a_nudged_partial_rotary_preset_grows_its_head_with_d() -> None:
    """GPT-NeoX-20B rotates 24 of 96 features; at d = 32 the custom head is 128, rotary_pct 0.25."""
    ui = Wd.calculator_live(preset="GPT-NeoX-20B")
    ui.controls["dim"].value = 32
    v5, v4 = _printed_blocks(ui.text.value, None)
    assert v4["rotary_pct"] == v5["rope_parameters"]["partial_rotary_factor"] == 0.25
    assert "of 128 features rotate" in ui.figure.layout.title.text
