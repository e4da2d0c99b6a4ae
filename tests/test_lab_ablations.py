"""The lab's ablation machinery: YaRN's paper ramp, --set overrides, tolerant reproduction."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc_lib.lab.__main__ import largest_difference, parse_overrides
from posenc_lib.lab.ablations import ABLATIONS, _settings
from posenc_lib.lab.train import (
    GRID_ROPE_METHODS,
    LabSettings,
    build_model,
    evaluate_full,
    rope_method_inv_freq,
    task_for,
)
from posenc_lib.rope import rope_inv_freq
from posenc_lib.scaling import yarn_inv_freq, yarn_paper_inv_freq

TINY = LabSettings(train_length=8, eval_multiples=(1, 2), steps=2, batch=2, d_model=16,
                   n_heads=2, copy_layers=1, markov_layers=1, d_ff=16, copy_vocab=12,
                   eval_batch=2, val_batch=2, probe_batch=4, seeds=(0,))


def test_paper_ramp_at_the_labs_head_size() -> None:
    # d = 16, L = 33 positions (BOS included), 4L: pair 0 turns 33/(2π) = 5.25 times, inside
    # [α, β] = [1, 32], so the paper's rule interpolates it; the index ramp keeps it, because its
    # low end, the index of 32 turns (about −1.57), is clamped to pair 0.
    theta = rope_inv_freq(16, 1e4)
    paper, _ = yarn_paper_inv_freq(16, 1e4, 129 / 33, 33)
    reference, _ = yarn_inv_freq(16, 1e4, 129 / 33, 33)
    gamma = (33 / (2 * math.pi) - 1) / 31
    assert float(paper[0] / theta[0]) == pytest.approx((1 - gamma) * 33 / 129 + gamma)
    assert round(float(paper[0] / theta[0]), 3) == 0.358
    assert float(reference[0] / theta[0]) == 1.0


@given(dim=st.sampled_from([8, 16, 64, 128]), factor=st.floats(1.0, 64.0),
       length=st.integers(16, 1 << 17), log_base=st.floats(2.0, 16.0))
def test_paper_ramp_laws(dim: int, factor: float, length: int, log_base: float) -> None:
    base = 10.0 ** log_base
    theta = rope_inv_freq(dim, base)
    freq, attention = yarn_paper_inv_freq(dim, base, factor, length)
    ratio = freq / theta
    turns = length * theta / (2 * math.pi)
    assert torch.all(ratio <= 1 + 1e-12) and torch.all(ratio >= 1 / factor - 1e-12)
    assert torch.all(ratio[turns >= 32] == 1.0)  # fast pairs kept
    torch.testing.assert_close(ratio[turns <= 1], torch.full_like(ratio[turns <= 1], 1 / factor))
    assert torch.all(ratio[1:] <= ratio[:-1] + 1e-12)  # slower pairs are interpolated more
    assert attention == pytest.approx(0.1 * math.log(factor) + 1)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"alpha": 32.0, "beta": 1.0}, "beta must be > alpha"),
    ({"alpha": 0.0}, "alpha"),
    ({"beta": math.nan}, "beta"),
])
def test_paper_ramp_bad_input(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        yarn_paper_inv_freq(16, 1e4, 4.0, 32, **kwargs)


def test_the_clamp_not_the_rounding_keeps_pair_0_at_head_size_16() -> None:
    # i(β) = d·ln(L/(2π·β))/(2·ln b) for d = 16, b = 10⁴, L = 33 positions
    def index(turns: float) -> float:
        return 16 * math.log(33 / (2 * math.pi * turns)) / (2 * math.log(1e4))

    assert index(32.0) == pytest.approx(-1.570, abs=1e-3) and index(1.0) == pytest.approx(1.441,
                                                                                         abs=1e-3)
    from posenc_lib.scaling import yarn_correction_range

    assert yarn_correction_range(16, 1e4, 33) == (0.0, 2.0)  # floor −2 → clamp 0; ceil 2
    low, high = yarn_correction_range(16, 1e4, 33, truncate=False)
    assert low == 0.0 and high == pytest.approx(index(1.0))  # the clamp stays without rounding
    theta = rope_inv_freq(16, 1e4)
    for truncate in (True, False):
        freq, _ = yarn_inv_freq(16, 1e4, 129 / 33, 33, truncate=truncate)
        assert float(freq[0] / theta[0]) == 1.0  # pair 0 kept either way
    # Rounding moves only pair 1: ramp 1/2 (rounded) against 1/1.44 (unrounded), at s = 129/33.
    rounded = float(yarn_inv_freq(16, 1e4, 129 / 33, 33)[0][1] / theta[1])
    unrounded = float(yarn_inv_freq(16, 1e4, 129 / 33, 33, truncate=False)[0][1] / theta[1])
    s = 129 / 33
    assert rounded == pytest.approx(0.5 / s + 0.5)
    assert unrounded == pytest.approx((1 / high) / s + (1 - 1 / high))
    # Without the clamp the ramp would start at −1.57: pair 0 would be interpolated by about half.
    ramp_0 = (0 - index(32.0)) / (index(1.0) - index(32.0))
    assert 0.5 < ramp_0 < 0.55


def test_yarn_unrounded_is_the_index_ramp_without_rounding() -> None:
    assert "yarn_unrounded" not in GRID_ROPE_METHODS
    model = build_model(TINY, "copy", "rope", 0)
    freq, scale = rope_method_inv_freq(model, "yarn_unrounded", 36, 9)
    expected, attention = yarn_inv_freq(8, 1e4, 4.0, 9, truncate=False)
    torch.testing.assert_close(freq, expected)
    assert scale == pytest.approx(attention**2)


def test_yarn_paper_is_a_lab_method_outside_the_main_grid() -> None:
    assert "yarn_paper" not in GRID_ROPE_METHODS and LabSettings().rope_methods == GRID_ROPE_METHODS
    model = build_model(TINY, "copy", "rope", 0)
    freq, scale = rope_method_inv_freq(model, "yarn_paper", 36, 9)
    expected, attention = yarn_paper_inv_freq(8, 1e4, 4.0, 9)
    torch.testing.assert_close(freq, expected)
    assert scale == pytest.approx(attention**2)


def test_yarn_fixed_uses_the_longest_lengths_factor_at_every_length() -> None:
    """``yarn_fixed`` is YaRN at s = (max length + BOS)/(L + BOS) at every length, 1x included."""
    assert "yarn_fixed" not in GRID_ROPE_METHODS
    task = task_for(TINY, "copy")
    model = build_model(TINY, "copy", "rope", 0)
    # at the longest length yarn_fixed is yarn
    at_max = TINY.max_eval_length
    assert evaluate_full(model, TINY, task, at_max, "yarn_fixed")["metric"] == evaluate_full(
        model, TINY, task, at_max, "yarn")["metric"]
    # in range it differs from plain (yarn itself is plain there)
    assert evaluate_full(model, TINY, task, TINY.train_length, "yarn")["metric"] == evaluate_full(
        model, TINY, task, TINY.train_length, "plain")["metric"]
    assert evaluate_full(model, TINY, task, TINY.train_length, "yarn_fixed")["loss"].tolist() != (
        evaluate_full(model, TINY, task, TINY.train_length, "plain")["loss"].tolist())


def test_logit_scale_reaches_every_scheme() -> None:
    task = task_for(TINY, "markov")
    model = build_model(TINY, "markov", "none", 0)
    plain = evaluate_full(model, TINY, task, 8)["metric"]
    assert evaluate_full(model, TINY, task, 8, logit_scale=1.0)["metric"] == plain
    assert evaluate_full(model, TINY, task, 8, logit_scale=4.0)["metric"] != plain
    for bad in (0.0, -1.0, math.inf, True, "2"):
        with pytest.raises(ValueError, match="logit_scale"):
            evaluate_full(model, TINY, task, 8, logit_scale=bad)  # type: ignore[arg-type]


def test_set_overrides_are_typed_and_checked() -> None:
    assert parse_overrides(["lr=0.01", "markov_layers=3", "seeds=0,1"]) == {
        "lr": 0.01, "markov_layers": 3, "seeds": (0, 1)}
    assert parse_overrides(["max_runs=4"]) == {"max_runs": 4}
    for bad, match in (("lr", "key=value"), ("bogus=1", "unknown setting 'bogus'"),
                       ("lr=abc", "cannot read 'abc' as float")):
        with pytest.raises(ValueError, match=match):
            parse_overrides([bad])


def test_largest_difference_tolerates_rounding_not_structure() -> None:
    a = {"m": {"32": 1.9379380}, "c": [[250, 2.0, 1.5]]}
    b = {"m": {"32": 1.9379383}, "c": [[250, 2.0, 1.5]]}
    assert largest_difference(a, b) == pytest.approx(3e-7)
    assert largest_difference(a, {"m": {}, "c": [[250, 2.0, 1.5]]}) == math.inf
    assert largest_difference([1, 2], [1, 2, 3]) == math.inf
    assert largest_difference({"ok": True}, {"ok": False}) == math.inf


def test_ablations_change_only_what_they_say() -> None:
    base = LabSettings()
    for ablation in ABLATIONS:
        settings = _settings(ablation)
        changed = {k for k, v in settings.to_dict().items() if base.to_dict()[k] != v}
        expected = set(ablation.overrides) | ({"rope_methods"} if ablation.extra_methods else set())
        assert changed == expected


def test_hybrid_rotates_every_layer_but_the_last() -> None:
    from posenc_lib.lab.model import ModelConfig, TinyDecoder, nope_layers

    assert nope_layers("hybrid", 3) == (2,) and nope_layers("rope", 3) == ()
    tokens = torch.randint(0, 10, (2, 12))
    fast, slow = rope_inv_freq(8, 1e4), rope_inv_freq(8, 1e4) / 7
    outputs = {}
    for layers in (1, 2):
        torch.manual_seed(0)
        model = TinyDecoder(ModelConfig(vocab=10, scheme="hybrid", d_model=16, n_heads=2,
                                        n_layers=layers, d_ff=16, max_len=16)).eval()
        with torch.no_grad():
            outputs[layers] = [model(tokens, inv_freq=f).logits for f in (fast, slow)]
    # One layer: the only layer is the NoPE one, so the spectrum cannot matter ...
    torch.testing.assert_close(outputs[1][0], outputs[1][1], rtol=0, atol=0)
    # ... two layers: the first is rotary, so it does.
    assert (outputs[2][0] - outputs[2][1]).abs().max() > 1e-3


def test_random_first_token_variant() -> None:
    from posenc_lib.lab.train import prepend_first, train_run

    task = task_for(TINY, "copy")
    batch = task.batch(torch.Generator().manual_seed(0), 6, 8)
    inputs, _, scored = prepend_first(batch, task, True, True, seed=3)
    assert inputs.shape[1] == batch[0].shape[1] + 1 and not scored[0]
    assert int(inputs[:, 0].max()) < task.vocab  # a task token, never the BOS id
    assert len(set(inputs[:, 0].tolist())) > 1  # not one constant token
    again = prepend_first(batch, task, True, True, seed=3)[0]
    assert torch.equal(inputs, again)  # seeded
    constant = prepend_first(batch, task, True, False)[0]
    assert set(constant[:, 0].tolist()) == {task.vocab}
    record, model, _ = train_run(TINY, "copy", "none", 0, "random_first")
    assert model.config.vocab == TINY.copy_vocab and record["variant"] == "random_first"
    assert build_model(TINY, "copy", "none", 0, "bos").config.vocab == TINY.copy_vocab + 1
    with pytest.raises(ValueError, match="bos must be one id"):
        from posenc_lib.lab.tasks import with_bos

        with_bos(batch, torch.zeros(2, dtype=torch.long))


def test_in_range_probe_read_beyond_the_range_saturates() -> None:
    from posenc_lib.lab.probe import probe_readout
    from posenc_lib.lab.results import load_artifacts, load_nope_model

    settings = LabSettings()
    model = load_nope_model(load_artifacts(), settings, "bos")
    task = task_for(settings, "markov")
    n = settings.train_length + 1  # positions 0 … L were trained (BOS at 0)
    read = probe_readout(model, task, n, 4 * settings.train_length + 1, seed=settings.eval_seed,
                         batch=settings.probe_batch, bos=task.vocab)
    inside = torch.arange(1, n, dtype=torch.float64)
    assert (read[1:n] - inside).abs().mean() < 1.5  # the code is read well inside the range
    assert read[-1] < 0.5 * (len(read) - 1)  # ... and saturates beyond it (128 reads as ~53)
    assert read[-1] > read[n + 8] + 5  # still rising overall: a compressed, not a frozen, code
    with pytest.raises(ValueError, match="length"):
        probe_readout(model, task, n, n, bos=task.vocab)


def test_bos_attention_of_a_uniform_head_is_one_over_the_keys() -> None:
    from posenc_lib.lab.model import ModelConfig, TinyDecoder
    from posenc_lib.lab.results import bos_attention

    torch.manual_seed(0)
    model = TinyDecoder(ModelConfig(vocab=10, scheme="none", d_model=16, n_heads=2, n_layers=2,
                                    d_ff=16, max_len=16)).eval()
    with torch.no_grad():
        model.blocks[0].attn.qkv.weight[:32] = 0.0  # queries and keys of block 0: every logit 0
    tokens = torch.randint(0, 10, (3, 12))
    weight = bos_attention(model, tokens, layer=0)
    assert weight.shape == (2, 12) and weight.dtype == torch.float64
    expected = 1 / torch.arange(1, 13, dtype=torch.float64)
    torch.testing.assert_close(weight, expected.expand(2, -1), rtol=1e-6, atol=1e-7)
    assert not torch.allclose(bos_attention(model, tokens, layer=1), expected.expand(2, -1))
    with pytest.raises(ValueError, match="layer must be in"):
        bos_attention(model, tokens, layer=2)
    with pytest.raises(TypeError, match="model"):
        bos_attention("model", tokens)  # type: ignore[arg-type]


def test_trained_nope_first_block_counts_like_the_hand_built_head() -> None:
    from posenc_lib.lab.results import bos_attention, load_artifacts, load_nope_model
    from posenc_lib.lab.train import eval_batch

    settings = LabSettings()
    model = load_nope_model(load_artifacts(), settings, "bos")
    task = task_for(settings, "markov")
    inputs, _, _ = eval_batch(settings, task, settings.train_length, bos=True)
    weight = bos_attention(model, inputs)[:, 1:]  # queries that see 2 … L + 1 keys
    keys = torch.arange(2, settings.train_length + 2, dtype=torch.float64)
    for head in weight:  # log-log slope near −1 in every head: weight ∝ 1/keys
        slope = float(torch.linalg.lstsq(
            torch.stack([keys.log(), torch.ones_like(keys)], 1), head.log()[:, None]
        ).solution[0, 0])
        assert -1.1 < slope < -0.8


@given(values=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=50))
def test_accuracy_standard_error_bound_holds(values: list[float]) -> None:
    from posenc_lib.lab.results import accuracy_standard_error_bound

    a = torch.tensor(values, dtype=torch.float64)
    p = float(a.mean().clamp(0.0, 1.0))
    se = float(a.std(unbiased=False)) / math.sqrt(len(values))
    assert se <= accuracy_standard_error_bound(p, len(values)) + 1e-12


def test_accuracy_standard_error_bound_values() -> None:
    from posenc_lib.lab.results import accuracy_standard_error_bound

    assert accuracy_standard_error_bound(0.5, 64) == 0.0625
    assert accuracy_standard_error_bound(1.0, 64) == 0.0
    # all-or-nothing sequences reach the bound
    a = torch.tensor([1.0] * 48 + [0.0] * 16, dtype=torch.float64)
    bound = accuracy_standard_error_bound(0.75, 64)
    assert float(a.std(unbiased=False)) / 8 == pytest.approx(bound)
    for bad, match in ((1.5, "accuracy must be in"), (math.nan, "accuracy"), (True, "accuracy")):
        with pytest.raises((ValueError, TypeError), match=match):
            accuracy_standard_error_bound(bad, 64)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="sequences"):
        accuracy_standard_error_bound(0.5, 0)


def test_query_scale_is_a_per_query_temperature() -> None:
    task = task_for(TINY, "markov")
    model = build_model(TINY, "markov", "none", 0).eval()
    tokens = torch.randint(0, task.vocab, (2, 10))
    plain = model(tokens)
    ones = model(tokens, query_scale=torch.ones(10))
    torch.testing.assert_close(ones.logits, plain.logits, rtol=0, atol=0)
    # A factor c on every query equals logit_scale = c ...
    torch.testing.assert_close(model(tokens, query_scale=torch.full((10,), 1.7)).logits,
                               model(tokens, logit_scale=1.7).logits, rtol=1e-5, atol=1e-6)
    # ... and a factor on the later queries alone leaves the earlier rows' attention untouched.
    late = torch.cat([torch.ones(6), torch.full((4,), 3.0)])
    scaled = model(tokens, query_scale=late)
    first = scaled.attention[0]
    torch.testing.assert_close(first[:, :, :6], plain.attention[0][:, :, :6], rtol=0, atol=0)
    assert (first[:, :, 6:] - plain.attention[0][:, :, 6:]).abs().max() > 1e-3
    scale = torch.ones(TINY.train_length * 2)
    assert evaluate_full(model, TINY, task, 2 * TINY.train_length, bos=False,
                         query_scale=scale)["metric"] == evaluate_full(
        model, TINY, task, 2 * TINY.train_length, bos=False)["metric"]
    for bad in (torch.ones(9), torch.zeros(10), torch.full((10,), math.nan), torch.ones(10).long()):
        with pytest.raises(ValueError, match="query_scale"):
            model(tokens, query_scale=bad)
    with pytest.raises(ValueError, match="query_scale"):
        evaluate_full(model, TINY, task, 8, query_scale=torch.ones(3))


@pytest.mark.parametrize("variant", ["random_first", "bos"])
def test_one_runs_every_offered_variant(variant: str, capsys: pytest.CaptureFixture) -> None:
    """``lab one --variant random_first`` printed its run, then crashed looking for a committed
    run of a variant the grid does not have; every variant ``--help`` offers must finish."""
    from posenc_lib.lab.__main__ import main

    tiny = ["train_length=8", "eval_multiples=1,2", "batch=2", "d_model=16", "n_heads=2",
            "copy_layers=1", "d_ff=16", "copy_vocab=12", "eval_batch=2", "val_batch=2",
            "probe_batch=4", "seeds=0"]
    main(["one", "--task", "copy", "--scheme", "none", "--variant", variant, "--steps", "2",
          *(arg for setting in tiny for arg in ("--set", setting))])
    out = capsys.readouterr().out
    assert f'"variant": "{variant}"' in out and "committed run" not in out
