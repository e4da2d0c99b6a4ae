"""The extrapolation lab: model shapes, each scheme through the library's own function, tasks,
the hand-built NoPE layer, a tiny end-to-end run, and the committed results' consistency."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc_lib import alibi_bias, apply_rope_half, causal_mask, sinusoidal_table
from posenc_lib.lab.model import SCHEMES, ModelConfig, TinyDecoder
from posenc_lib.lab.nope import bos_inputs, counting_head, inverse_map, recover_positions
from posenc_lib.lab.probe import fit_probe, position_probe, r_squared
from posenc_lib.lab.results import (
    check_current,
    learned_table,
    load_artifacts,
    load_nope_model,
    load_results,
    summarise,
)
from posenc_lib.lab.run import jobs, run_lab
from posenc_lib.lab.tasks import CopyTask, MarkovTask, make_task
from posenc_lib.lab.train import (
    ROPE_METHODS,
    LabSettings,
    build_model,
    evaluate,
    rope_method_inv_freq,
    task_for,
    train_run,
)

TINY = LabSettings(
    train_length=8, eval_multiples=(1, 2), steps=3, batch=4, d_model=16, n_heads=2, d_ff=16,
    copy_vocab=12, markov_vocab=5, eval_batch=4, seeds=(0,),
)


def tiny_model(scheme: str, vocab: int = 11) -> TinyDecoder:
    torch.manual_seed(0)
    return TinyDecoder(ModelConfig(vocab=vocab, scheme=scheme, d_model=16, n_heads=2, d_ff=16,
                                   max_len=32))


# --- the model --------------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", SCHEMES)
def test_model_shapes(scheme: str) -> None:
    model = tiny_model(scheme)
    out = model(torch.randint(11, (3, 7)))
    assert out.logits.shape == (3, 7, 11)
    assert len(out.hidden) == model.config.n_layers + 1
    assert all(h.shape == (3, 7, 16) for h in out.hidden)
    assert all(w.shape == (3, 2, 7, 7) for w in out.attention)
    for w in out.attention:  # causal: no weight on future keys, rows sum to one
        assert bool((w.masked_select(~causal_mask(7)) == 0).all())
        torch.testing.assert_close(w.sum(-1), torch.ones(3, 2, 7))


def _layer0_logits_inputs(model: TinyDecoder, tokens: torch.Tensor):
    x = model.blocks[0].norm1(model(tokens).hidden[0])  # (batch, seq, d_model)
    batch, seq, d = x.shape
    q, k, _ = model.blocks[0].attn.qkv(x).split(d, dim=-1)
    heads = model.config.n_heads
    q = q.view(batch, seq, heads, -1).transpose(1, 2)  # (batch, heads, seq, head_dim)
    k = k.view(batch, seq, heads, -1).transpose(1, 2)
    return q, k


def test_rope_model_rotates_q_and_k_with_the_library() -> None:
    model = tiny_model("rope")
    tokens = torch.randint(11, (2, 9))
    q, k = _layer0_logits_inputs(model, tokens)
    positions = torch.arange(9, dtype=torch.float64)
    q, k = apply_rope_half(q, positions), apply_rope_half(k, positions)
    logits = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    expected = torch.softmax(logits.masked_fill(~causal_mask(9), float("-inf")), -1)
    torch.testing.assert_close(model(tokens).attention[0], expected)


def test_rope_inv_freq_argument_changes_only_rope_models() -> None:
    model = tiny_model("rope")
    tokens = torch.randint(11, (1, 6))
    base = model(tokens).logits
    same = model(tokens, inv_freq=model.default_inv_freq()).logits
    other = model(tokens, inv_freq=model.default_inv_freq() / 4).logits
    torch.testing.assert_close(base, same)
    assert not torch.allclose(base, other)
    with pytest.raises(ValueError, match="inv_freq only applies to RoPE"):
        tiny_model("alibi")(tokens, inv_freq=model.default_inv_freq())


def test_alibi_model_adds_the_library_bias() -> None:
    model = tiny_model("alibi")
    tokens = torch.randint(11, (2, 9))
    q, k = _layer0_logits_inputs(model, tokens)
    logits = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + alibi_bias(2, 9)
    torch.testing.assert_close(model(tokens).attention[0], torch.softmax(logits, -1))


def test_additive_schemes_add_the_library_table() -> None:
    tokens = torch.randint(11, (2, 9))
    sin = tiny_model("sinusoidal")
    torch.testing.assert_close(sin(tokens).hidden[0], sin.embed(tokens) + sinusoidal_table(9, 16))
    learned = tiny_model("learned")
    torch.testing.assert_close(learned(tokens).hidden[0],
                               learned.embed(tokens) + learned.pos_table[:9])
    none = tiny_model("none")
    torch.testing.assert_close(none(tokens).hidden[0], none.embed(tokens))


def test_nope_model_without_mask_effects_is_shift_blind_at_the_first_layer() -> None:
    # A NoPE model's first position only sees itself: its output depends on that token alone.
    model = tiny_model("none")
    a = model(torch.tensor([[3, 1, 4, 1, 5]])).logits[0, 0]
    b = model(torch.tensor([[3, 9, 2, 6, 5]])).logits[0, 0]
    torch.testing.assert_close(a, b)


def test_model_bad_input() -> None:
    with pytest.raises(ValueError, match="scheme"):
        ModelConfig(vocab=10, scheme="t5")
    with pytest.raises(ValueError, match="even head size"):
        ModelConfig(vocab=10, d_model=12, n_heads=4)
    with pytest.raises(TypeError, match="config must be a ModelConfig"):
        TinyDecoder({"vocab": 10})
    model = tiny_model("learned")
    with pytest.raises(ValueError, match=r"tokens must lie in \[0, vocab\)"):
        model(torch.tensor([[0, 11]]))
    with pytest.raises(TypeError, match=r"torch\.long"):
        model(torch.zeros(1, 3))
    with pytest.raises(ValueError, match="max_len = 32 rows"):
        model(torch.zeros(1, 33, dtype=torch.long))


# --- tasks ------------------------------------------------------------------------------------


def test_copy_task_layout() -> None:
    task = CopyTask(12)
    inputs, targets, scored = task.batch(torch.Generator().manual_seed(0), 5, 10)
    assert inputs.shape == targets.shape == (5, 10) and scored.tolist() == [False] * 5 + [True] * 5
    assert bool((inputs[:, 5] == CopyTask.SEP).all())
    torch.testing.assert_close(targets[:, 5:], inputs[:, :5])  # the second half copies the first
    for row in inputs[:, :5]:
        assert len(set(row.tolist())) == 5 and CopyTask.SEP not in row.tolist()
    again = task.batch(torch.Generator().manual_seed(0), 5, 10)
    torch.testing.assert_close(again[0], inputs)  # fixed seed, same batch


def test_copy_training_lengths_vary_within_range() -> None:
    task, generator = CopyTask(40), torch.Generator().manual_seed(1)
    lengths = {task.train_batch(generator, 2, 32)[0].shape[1] for _ in range(60)}
    assert lengths <= set(range(16, 33, 2)) and len(lengths) > 3


def test_markov_chain_rows_and_true_loss() -> None:
    task = MarkovTask(6, 0.3, seed=3, train_length=8)
    torch.testing.assert_close(task.transitions.sum(-1), torch.ones(6, 6, dtype=torch.float64))
    inputs, targets, scored = task.batch(torch.Generator().manual_seed(0), 4, 16)
    torch.testing.assert_close(inputs[:, 1:], targets[:, :-1])
    assert scored.tolist() == [t >= 8 for t in range(16)]  # beyond L only
    loss = task.true_loss(inputs, targets)
    assert bool(loss[:, 0].isnan().all()) and bool((loss[:, 1:] >= 0).all())


def test_task_bad_input() -> None:
    generator = torch.Generator()
    with pytest.raises(ValueError, match="even"):
        CopyTask(12).batch(generator, 2, 7)
    with pytest.raises(ValueError, match="distinct"):
        CopyTask(5).batch(generator, 2, 12)
    with pytest.raises(TypeError, match="generator"):
        CopyTask(5).batch(0, 2, 4)
    with pytest.raises(ValueError, match="task must be one of"):
        make_task("sort", vocab=5, train_length=8)
    with pytest.raises(ValueError, match="concentration"):
        MarkovTask(4, -1.0, 0, 8)


# --- the hand-built NoPE layer ----------------------------------------------------------------


def test_counting_head_gives_one_over_t() -> None:
    u = counting_head(bos_inputs(50))
    torch.testing.assert_close(u, 1 / torch.arange(1, 51, dtype=torch.float64), rtol=0, atol=1e-15)


@given(n=st.integers(1, 300))
def test_hand_built_layer_recovers_every_position_exactly(n: int) -> None:
    recovered = recover_positions(n, 300)
    expected = torch.arange(1, n + 1, dtype=torch.float64)
    assert float((recovered - expected).abs().max()) < 1e-6
    assert torch.equal(recovered.round(), expected)


def test_without_the_mask_no_position_survives() -> None:
    recovered = recover_positions(40, 300, causal=False)
    assert torch.equal(recovered.round(), torch.full((40,), 40.0, dtype=torch.float64))
    assert len(set(counting_head(bos_inputs(40), causal=False).tolist())) == 1


def test_inverse_map_fails_beyond_its_knots() -> None:
    recovered = recover_positions(200, 100)
    assert float((recovered[100:] - torch.arange(101, 201)).abs().min()) > 0.01
    assert float(recovered.max()) < 2 * 100  # the last segment saturates below 2N − 1
    w1, b1, w2, _ = inverse_map(10)
    assert w1.shape == b1.shape == w2.shape == (9,)


def test_nope_bad_input() -> None:
    with pytest.raises(ValueError, match="shape"):
        counting_head(torch.zeros(4, 3))
    with pytest.raises(ValueError, match="max_position"):
        inverse_map(1)
    with pytest.raises(ValueError, match="seq_len"):
        bos_inputs(0)


# --- the probe --------------------------------------------------------------------------------


def test_probe_recovers_a_linear_code() -> None:
    generator = torch.Generator().manual_seed(0)
    features = torch.randn(200, 5, generator=generator, dtype=torch.float64)
    target = features @ torch.tensor([1.0, -2.0, 0.5, 0.0, 3.0], dtype=torch.float64) + 7
    weights = fit_probe(features, target, ridge=0.0)
    assert r_squared(features @ weights[:-1] + weights[-1], target) == pytest.approx(1.0)
    assert r_squared(torch.full((200,), float(target.mean())), target) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="constant"):
        r_squared(target, torch.ones(200))


def test_position_probe_on_a_sinusoidal_model_reads_position_in_range() -> None:
    settings = LabSettings(train_length=16, eval_multiples=(1, 2), d_model=32, n_heads=2)
    model = build_model(settings, "markov", "sinusoidal", 0)
    r2 = position_probe(model, task_for(settings, "markov"), 16, 32, layer=0)
    assert r2["in_range"] > 0.99  # the table itself is in the residual stream
    with pytest.raises(ValueError, match="layer"):
        position_probe(model, task_for(settings, "markov"), 16, 32, layer=5)


# --- training and evaluation ------------------------------------------------------------------


def test_settings_digest_and_bad_settings() -> None:
    assert LabSettings().digest() == LabSettings().digest()
    assert LabSettings(steps=7).digest() != LabSettings().digest()
    with pytest.raises(ValueError, match="copy_vocab"):
        LabSettings(copy_vocab=10)
    with pytest.raises(ValueError, match="schemes"):
        LabSettings(schemes=("none", "t5"))


def test_rope_methods_are_plain_at_the_training_length() -> None:
    model = build_model(TINY, "copy", "rope", 0)
    plain = model.default_inv_freq()
    for method in ROPE_METHODS:
        inv_freq, scale = rope_method_inv_freq(model, method, TINY.train_length, TINY.train_length)
        torch.testing.assert_close(inv_freq, plain) and None
        assert scale == 1.0
    slower, _ = rope_method_inv_freq(model, "pi", 4 * TINY.train_length, TINY.train_length)
    torch.testing.assert_close(slower, plain / 4)
    with pytest.raises(ValueError, match="RoPE model"):
        rope_method_inv_freq(build_model(TINY, "copy", "alibi", 0), "pi", 16, 8)


def test_evaluate_bad_method() -> None:
    task = task_for(TINY, "copy")
    with pytest.raises(ValueError, match="needs a RoPE model"):
        evaluate(build_model(TINY, "copy", "none", 0), TINY, task, 8, "yarn")
    with pytest.raises(ValueError, match="method"):
        evaluate(build_model(TINY, "copy", "rope", 0), TINY, task, 8, "xpos")


def test_one_tiny_configuration_end_to_end() -> None:
    record, _ = train_run(TINY, "copy", "rope", 0)
    assert set(record["metrics"]) == set(ROPE_METHODS)
    for by_length in record["metrics"].values():
        assert set(by_length) == {"8", "16"}
        assert all(0.0 <= v <= 1.0 for v in by_length.values())
    assert record["wall_time_s"] > 0 and record["library_version"]
    record, _ = train_run(TINY, "markov", "learned", 0)
    assert all(math.isfinite(v) and v > 0 for v in record["metrics"]["plain"].values())


def test_run_lab_writes_results_and_artifacts(tmp_path) -> None:
    settings = LabSettings(**{**TINY.to_dict(), "schemes": ("none", "learned"),
                              "tasks": ("markov",)})
    results = run_lab(settings, tmp_path, workers=1)
    assert len(results["runs"]) == len(jobs(settings)) == 2
    check_current(load_results(tmp_path / "lab_results.json"), settings)
    artifacts = load_artifacts(tmp_path / "lab_artifacts.npz")
    assert learned_table(artifacts, "markov").shape == (settings.max_eval_length, 16)
    assert "attn/markov/none/2x/layer1" in artifacts
    with pytest.raises(ValueError, match="settings"):
        check_current(results, TINY)


# --- the committed results --------------------------------------------------------------------


@pytest.fixture(scope="module")
def committed() -> dict:
    return load_results()


def test_committed_results_match_the_current_settings(committed: dict) -> None:
    check_current(committed)  # digest and one run per (task, scheme, seed)
    settings = LabSettings()
    for run in committed["runs"]:
        methods = settings.rope_methods if run["scheme"].startswith("rope") else ("plain",)
        assert tuple(run["metrics"]) == methods
        for by_length in run["metrics"].values():
            assert [int(n) for n in by_length] == settings.eval_lengths
            assert all(math.isfinite(v) for v in by_length.values())


def test_committed_summary_covers_every_scheme_and_method(committed: dict) -> None:
    settings = LabSettings()
    for task in settings.tasks:
        assert set(summarise(committed, task)) == set(settings.schemes)
        for method in settings.rope_methods[1:]:
            assert set(summarise(committed, task, method)) == {"rope", "rope_abf"}
    with pytest.raises(ValueError, match="task"):
        summarise(committed, "sort")


def test_committed_learned_table_rows_beyond_L_are_untouched() -> None:
    settings = LabSettings()
    artifacts = load_artifacts()
    for task in settings.tasks:
        initial = build_model(settings, task, "learned", settings.seeds[0]).pos_table.detach()
        initial = initial.numpy().astype(np.float16).astype(np.float32)
        table = learned_table(artifacts, task)
        L = settings.train_length
        assert np.array_equal(table[L:], initial[L:])  # never trained: still the random init
        assert not np.array_equal(table[:L], initial[:L])


def test_committed_nope_model_loads() -> None:
    model = load_nope_model(load_artifacts())
    assert model.config.scheme == "none"
    out = model(torch.zeros(1, 5, dtype=torch.long))
    assert out.logits.shape == (1, 5, LabSettings().markov_vocab)


# --- the figures ------------------------------------------------------------------------------


def _json(fig) -> str:
    text = fig.to_json()
    assert "NaN" not in text and "Infinity" not in text
    return text


def test_lab_figures_from_the_committed_results() -> None:
    from posenc_lib.viz.lab import (
        lab_attention_maps,
        lab_curves,
        learned_table_figure,
        nope_counter_figure,
        rope_methods_curves,
    )

    results, artifacts = load_results(), load_artifacts()
    settings = LabSettings()
    curves = lab_curves(results)
    _json(curves)
    # two traces (band, mean) per scheme and task; the dropdown shows one task at a time
    assert len(curves.data) == 2 * len(settings.schemes) * len(settings.tasks)
    assert len(curves.layout.updatemenus[0].buttons) == len(settings.tasks)
    _json(rope_methods_curves(results))
    maps = lab_attention_maps(artifacts, "copy", train_length=settings.train_length)
    assert len(maps.layout.sliders[0].steps) == 2 * len(settings.schemes)
    assert len(_json(maps)) < 900_000
    table = learned_table(artifacts, "markov")
    _json(learned_table_figure(table, table.copy(), settings.train_length))
    _json(nope_counter_figure())
    with pytest.raises(TypeError, match="results"):
        lab_curves({"runs": []})
    with pytest.raises(ValueError, match="task"):
        lab_attention_maps(artifacts, "sort")
    with pytest.raises(ValueError, match="train_length"):
        learned_table_figure(np.zeros((8, 4), dtype=np.float32), np.zeros((8, 4)), 8)
    with pytest.raises(ValueError, match="shape"):
        learned_table_figure(np.zeros((8, 4), dtype=np.float32), np.zeros((8, 5)), 4)


def test_copy_partner_weight_reads_the_diagonal() -> None:
    from posenc_lib.lab.results import copy_partner_weight

    n = 8
    grid = np.zeros((n, n), dtype=np.float32)
    grid[np.arange(4, 8), np.arange(0, 4)] = 1.0  # every second-half query on its partner
    artifacts = {"attn/copy/rope/1x/layer1": grid, "attn/copy/rope/4x/layer1": grid / 2}
    assert copy_partner_weight(artifacts, "rope", 1) == 1.0
    assert copy_partner_weight(artifacts, "rope", 4) == 1.0
    with pytest.raises(KeyError, match="no attention map"):
        copy_partner_weight(artifacts, "alibi", 1)


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [({"steps": 2**70}, ValueError, "steps"), ({"steps": 2.5}, TypeError, "steps"),
     ({"seed": 2**63 - 1}, ValueError, "seed"), ({"seed": True}, TypeError, "seed")],
)
def test_training_refuses_bad_sizes_before_a_step(kwargs, error, name) -> None:
    # Bad values only: a valid call would train (the adversarial sweep leaves these out).
    from posenc_lib.lab.tasks import CopyTask
    from posenc_lib.lab.train import LabSettings, build_model, train_model, train_run

    settings = LabSettings(train_length=8, eval_multiples=(1,), d_model=8, n_heads=2, d_ff=8)
    model = build_model(settings, "copy", "rope", 0)
    call = {"seed": 0, **kwargs}
    with pytest.raises(error, match=name):
        train_model(model, settings, CopyTask(settings.copy_vocab), **call)
    if name == "seed":
        with pytest.raises(error, match=name):
            train_run(settings, "copy", "rope", call["seed"])


@pytest.mark.parametrize(
    ("sizes", "named"),
    [
        ({"vocab": 10**12}, "vocab"),
        ({"vocab": 2**20, "d_model": 2**10}, "vocab"),
        ({"d_ff": 2**20, "d_model": 2**10}, "d_ff"),
        ({"d_model": 2**14, "n_heads": 2**10}, "d_model"),
        ({"n_layers": 10**6}, "n_layers"),
        ({"scheme": "learned", "max_len": 2**20, "d_model": 2**10}, "max_len"),
    ],
)
def test_model_config_refuses_weights_beyond_the_size_limit(
    sizes: dict[str, object], named: str
) -> None:
    # Refused when the config is made, long before TinyDecoder would try to allocate it.
    with pytest.raises(ValueError, match=named):
        ModelConfig(**{"vocab": 8, **sizes})
