"""The extrapolation lab: model shapes, each scheme through the library's own function (T5's
buckets against transformers'), tasks with and without BOS, the Markov references, the hand-built
NoPE layer, RoPE methods at inference, a tiny end-to-end run, and the committed results'
consistency. Nothing here trains the grid: the runs are tiny (a few steps of a 16-wide model)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc_lib import alibi_bias, apply_rope_half, causal_mask, sinusoidal_table
from posenc_lib.lab.model import SCHEMES, ModelConfig, TinyDecoder, t5_buckets
from posenc_lib.lab.nope import bos_inputs, counting_head, inverse_map, recover_positions
from posenc_lib.lab.probe import fit_probe, position_probe, r_squared
from posenc_lib.lab.results import (
    check_current,
    learned_table,
    load_artifacts,
    load_nope_model,
    load_results,
    log_binned,
    markov_references,
    per_position,
    runs,
    summarise,
)
from posenc_lib.lab.run import jobs, run_lab
from posenc_lib.lab.tasks import CopyTask, MarkovTask, make_task, with_bos
from posenc_lib.lab.train import (
    GRID_ROPE_METHODS,
    ROPE_METHODS,
    LabSettings,
    build_model,
    evaluate,
    evaluate_full,
    fitted,
    rope_method_inv_freq,
    task_for,
    train_run,
)
from posenc_lib.scaling import ntk_inv_freq, pi_inv_freq, yarn_inv_freq

TINY = LabSettings(
    train_length=8, eval_multiples=(1, 1.5, 2), steps=3, batch=4, d_model=16, n_heads=2,
    d_ff=16, copy_layers=1, markov_layers=1, copy_vocab=12, markov_vocab=5, eval_batch=4,
    seeds=(0,), ablation_seeds=(0,), probe_batch=4, val_batch=4, curve_every=2,
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


def test_t5_buckets_equal_transformers_causal_buckets() -> None:
    from transformers.models.t5.modeling_t5 import T5Attention

    n = 300
    pos = torch.arange(n)
    theirs = T5Attention._relative_position_bucket(pos[None, :] - pos[:, None],
                                                   bidirectional=False)
    ours = t5_buckets(n)
    assert torch.equal(ours.tril(), theirs.tril())  # every causal (query, key) pair
    assert int(ours[:16, 0].max()) == 15 and int(ours[-1, 0]) == 31  # exact, then log, then last
    with pytest.raises(ValueError, match="max_distance"):
        t5_buckets(8, 32, 16)


def test_t5_model_adds_the_bucket_bias() -> None:
    model = tiny_model("t5")
    tokens = torch.randint(11, (2, 9))
    q, k = _layer0_logits_inputs(model, tokens)
    bias = model.t5_bias.weight[t5_buckets(9)].permute(2, 0, 1)  # (heads, 9, 9)
    logits = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + bias
    expected = torch.softmax(logits.masked_fill(~causal_mask(9), float("-inf")), -1)
    torch.testing.assert_close(model(tokens).attention[0], expected)


def test_learned_table_initialisation_std_is_a_config_field() -> None:
    torch.manual_seed(0)
    small = TinyDecoder(ModelConfig(vocab=11, scheme="learned", max_len=512, d_model=64))
    torch.manual_seed(0)
    unit = TinyDecoder(ModelConfig(vocab=11, scheme="learned", max_len=512, d_model=64,
                                   learned_init_std=1.0))
    assert abs(float(small.pos_table.detach().std()) - 0.02) < 0.001
    assert abs(float(unit.pos_table.detach().std()) - 1.0) < 0.05
    torch.testing.assert_close(small.pos_table * 50, unit.pos_table)  # same draw, scaled
    with pytest.raises(ValueError, match="learned_init_std"):
        ModelConfig(vocab=11, learned_init_std=0.0)


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
        ModelConfig(vocab=10, scheme="xpos")
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
    assert not bool(loss[:, 1].isnan().any())  # position 1 already has both predecessors


def test_with_bos_prepends_one_unscored_position() -> None:
    task = CopyTask(12)
    plain = task.batch(torch.Generator().manual_seed(0), 3, 10)
    inputs, targets, scored = with_bos(plain, 12)
    assert inputs.shape == targets.shape == (3, 11) and scored.shape == (11,)
    assert bool((inputs[:, 0] == 12).all()) and not bool(scored[0])
    torch.testing.assert_close(inputs[:, 1:], plain[0])
    torch.testing.assert_close(targets[:, 1:], plain[1])
    torch.testing.assert_close(targets[:, 0], plain[0][:, 0])  # BOS predicts the first token
    assert torch.equal(scored[1:], plain[2])
    with pytest.raises(ValueError, match="bos"):
        with_bos(plain, -1)


def test_markov_references_are_ordered_and_the_floor_is_the_mean_true_loss() -> None:
    task = MarkovTask(16, 0.3, seed=1234, train_length=32)
    refs = task.references()
    assert refs["floor"] < refs["current_token"] < refs["uniform"] == pytest.approx(math.log(16))
    pairs = task.stationary_pairs()
    torch.testing.assert_close(torch.einsum("ab,abc->bc", pairs, task.transitions), pairs)
    assert float(pairs.sum()) == pytest.approx(1.0)
    # A long sample's mean true loss converges to the entropy rate (law of large numbers).
    inputs, targets, _ = task.batch(torch.Generator().manual_seed(0), 64, 512)
    sample = float(task.true_loss(inputs, targets)[:, 64:].mean())
    assert abs(sample - refs["floor"]) < 0.03
    # The lab's numbers, quoted in chapter 9: floor 1.877, current token only 2.672.
    assert (round(refs["floor"], 3), round(refs["current_token"], 3)) == (1.877, 2.672)
    assert markov_references(LabSettings()) == refs


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
    r2 = position_probe(model, task_for(settings, "markov"), 16, 32, layer=0, batch=32)
    assert r2["in_range"] > 0.99  # the table itself is in the residual stream
    assert set(r2) == {"in_range", "beyond"}
    nope = build_model(settings, "markov", "none", 0)
    blind = position_probe(nope, task_for(settings, "markov"), 16, 32, layer=0, batch=32,
                           bos=settings.markov_vocab)
    assert blind["in_range"] < 0.2  # token embeddings alone: no position (BOS row aside)
    with pytest.raises(ValueError, match="layer"):
        position_probe(model, task_for(settings, "markov"), 16, 32, layer=5)


# --- training and evaluation ------------------------------------------------------------------


def test_settings_digest_and_bad_settings() -> None:
    assert LabSettings().digest() == LabSettings().digest()
    assert LabSettings(steps=7).digest() != LabSettings().digest()
    with pytest.raises(ValueError, match="copy_vocab"):
        LabSettings(copy_vocab=10)
    with pytest.raises(ValueError, match="schemes"):
        LabSettings(schemes=("none", "xpos"))
    with pytest.raises(ValueError, match="eval_multiples"):
        LabSettings(eval_multiples=(2, 4))
    with pytest.raises(ValueError, match="even integer"):
        LabSettings(eval_multiples=(1, 1.3))
    with pytest.raises(ValueError, match="variants"):
        LabSettings(variants=("bos", "sink"))
    settings = LabSettings()
    assert settings.eval_lengths == [32, 48, 64, 128, 256]
    assert (settings.layers("copy"), settings.layers("markov")) == (3, 2)


def test_jobs_order_and_prefix() -> None:
    settings = LabSettings()
    grid = jobs(settings)
    n = len(settings.schemes) * len(settings.tasks)
    assert len(grid) == len(set(grid)) == 3 * n + n + 2 * 2 + 2
    assert {j[0] for j in grid[:n]} == {"bos"} and {j[3] for j in grid[:n]} == {0}
    # next: the no-BOS ablation of NoPE and ALiBi, then the main grid's second seed
    assert {(j[0], j[2]) for j in grid[n:n + 4]} == {("no_bos", "none"), ("no_bos", "alibi")}
    assert {(j[0], j[3]) for j in grid[n + 4:2 * n + 4]} == {("bos", 1)}
    assert jobs(LabSettings(max_runs=5)) == grid[:5]


def test_rope_methods_are_plain_at_the_training_length() -> None:
    model = build_model(TINY, "copy", "rope", 0)
    plain = model.default_inv_freq()
    for method in ROPE_METHODS:
        inv_freq, scale = rope_method_inv_freq(model, method, TINY.train_length, TINY.train_length)
        torch.testing.assert_close(inv_freq, plain)
        assert scale == 1.0
    slower, _ = rope_method_inv_freq(model, "pi", 4 * TINY.train_length, TINY.train_length)
    torch.testing.assert_close(slower, plain / 4)
    with pytest.raises(ValueError, match="RoPE model"):
        rope_method_inv_freq(build_model(TINY, "copy", "alibi", 0), "pi", 16, 8)


def test_rope_methods_with_and_without_the_temperature() -> None:
    model = build_model(TINY, "copy", "rope", 0)
    dim, base, n, L = model.config.head_dim, model.config.rope_base, 36, 9
    yarn, attention_factor = yarn_inv_freq(dim, base, 4.0, L)
    temperature = attention_factor**2
    assert temperature == pytest.approx((0.1 * math.log(4) + 1) ** 2)
    expected = {
        "yarn": (yarn, temperature), "yarn_no_temp": (yarn, 1.0),
        "pi": (pi_inv_freq(dim, base, 4.0), 1.0), "pi_temp": (pi_inv_freq(dim, base, 4.0),
                                                              temperature),
        "ntk": (ntk_inv_freq(dim, base, 4.0), 1.0), "ntk_temp": (ntk_inv_freq(dim, base, 4.0),
                                                                 temperature),
        "temp": (model.default_inv_freq(), temperature),
    }
    for method, (inv_freq, scale) in expected.items():
        got, got_scale = rope_method_inv_freq(model, method, n, L)
        torch.testing.assert_close(got, inv_freq)
        assert got_scale == pytest.approx(scale), method


def test_evaluate_full_per_position_and_exact_match() -> None:
    model = build_model(TINY, "copy", "rope", 0)
    task = task_for(TINY, "copy")
    for bos in (True, False):
        for method in ("plain", "dynamic_ntk"):
            out = evaluate_full(model, TINY, task, 12, method, bos)  # 1.5 × L
            assert out["loss"].shape == out["accuracy"].shape == (12 + int(bos),)
            assert 0.0 <= out["exact"] <= out["metric"] <= 1.0
        scored = out["accuracy"][-6:]  # the 6 copied tokens are the last 6 positions
        assert out["metric"] == pytest.approx(float(scored.mean()), abs=1e-6)
    # Dynamic NTK scores block by block; its first L + 1 positions are plain RoPE's.
    plain = evaluate_full(model, TINY, task, 16, "plain")
    dynamic = evaluate_full(model, TINY, task, 16, "dynamic_ntk")
    np.testing.assert_allclose(dynamic["loss"][:9], plain["loss"][:9], rtol=1e-6)
    assert not np.allclose(dynamic["loss"][9:], plain["loss"][9:])
    markov = task_for(TINY, "markov")
    out = evaluate_full(build_model(TINY, "markov", "none", 0), TINY, markov, 16)
    assert "exact" not in out and out["metric"] == pytest.approx(float(out["loss"][9:].mean()),
                                                                 rel=1e-5)


def test_fit_gate() -> None:
    settings = LabSettings()
    floor = markov_references(settings)["floor"]
    assert fitted(settings, "copy", 0.95) and not fitted(settings, "copy", 0.949)
    assert fitted(settings, "markov", floor + 0.099)
    assert not fitted(settings, "markov", floor + 0.101)


def test_evaluate_bad_method() -> None:
    task = task_for(TINY, "copy")
    with pytest.raises(ValueError, match="needs a RoPE model"):
        evaluate(build_model(TINY, "copy", "none", 0), TINY, task, 8, "yarn")
    with pytest.raises(ValueError, match="method"):
        evaluate(build_model(TINY, "copy", "rope", 0), TINY, task, 8, "xpos")


def test_one_tiny_configuration_end_to_end() -> None:
    record, model, per_pos = train_run(TINY, "copy", "rope", 0)
    assert set(record["metrics"]) == set(record["exact"]) == set(GRID_ROPE_METHODS)
    for by_length in record["metrics"].values():
        assert set(by_length) == {"8", "12", "16"}
        assert all(0.0 <= v <= 1.0 for v in by_length.values())
    assert [row[0] for row in record["curve"]] == [2, 3]  # every curve_every steps and the end
    assert record["fitted"] == (record["metrics"]["plain"]["8"] >= 0.95)
    assert per_pos["16/accuracy"].shape == (17,) and "yarn/16/loss" in per_pos
    assert model.config.vocab == TINY.copy_vocab + 1  # the BOS token
    assert record["wall_time_s"] > 0 and record["library_version"]
    record, model, _ = train_run(TINY, "markov", "learned", 0, "no_bos")
    assert all(math.isfinite(v) and v > 0 for v in record["metrics"]["plain"].values())
    assert model.config.vocab == TINY.markov_vocab and not record["bos"]
    again, _, _ = train_run(TINY, "markov", "learned", 0, "no_bos")
    assert again["metrics"] == record["metrics"] and again["curve"] == record["curve"]


def test_run_lab_writes_results_and_artifacts(tmp_path) -> None:
    from dataclasses import replace

    settings = replace(TINY, schemes=("none", "learned"), tasks=("markov",))
    results = run_lab(settings, tmp_path, workers=1)
    assert len(results["runs"]) == len(jobs(settings)) == 2 + 2 + 1
    check_current(load_results(tmp_path / "lab_results.json"), settings)
    assert not (tmp_path / "lab_results.partial.json").exists()
    artifacts = load_artifacts(tmp_path / "lab_artifacts.npz")
    assert learned_table(artifacts, "markov").shape == (settings.max_eval_length + 1, 16)
    assert learned_table(artifacts, "markov", "learned_std1").std() > 0.5
    assert per_position(artifacts, "markov", "none", 16, variant="no_bos").shape == (1, 16)
    assert len(runs(results, variant="no_bos")) == 2
    with pytest.raises(ValueError, match="settings"):
        check_current(results, TINY)


# --- the committed results --------------------------------------------------------------------


@pytest.fixture(scope="module")
def committed() -> dict:
    return load_results()


def test_committed_results_match_the_current_settings(committed: dict) -> None:
    check_current(committed)  # digest and one run per job of the grid
    settings = LabSettings()
    for run in committed["runs"]:
        methods = settings.rope_methods if run["scheme"].startswith("rope") else ("plain",)
        assert tuple(run["metrics"]) == methods
        for by_length in run["metrics"].values():
            assert [int(n) for n in by_length] == settings.eval_lengths
            assert all(math.isfinite(v) for v in by_length.values())
        assert run["bos"] == (run["variant"] != "no_bos")
        assert run["layers"] == settings.layers(run["task"])
        in_range = run["metrics"]["plain"][str(settings.train_length)]
        assert run["fitted"] == fitted(settings, run["task"], in_range)
        assert run["curve"][-1][0] == settings.steps


def test_committed_summary_covers_every_scheme_and_method(committed: dict) -> None:
    settings = LabSettings()
    for task in settings.tasks:
        assert set(summarise(committed, task)) == set(settings.schemes)
        for method in settings.rope_methods[1:]:
            assert set(summarise(committed, task, method)) == {"rope", "rope_abf"}
    with pytest.raises(ValueError, match="task"):
        summarise(committed, "sort")


def test_committed_learned_table_rows_beyond_the_training_positions_are_untouched(
    committed: dict,
) -> None:
    settings = LabSettings()
    artifacts = load_artifacts()
    checked = 0
    for variant in ("bos", "no_bos", "learned_std1"):
        for task in settings.tasks:
            if f"table/{variant}/{task}" not in artifacts:
                continue
            seed = settings.seeds[0] if variant == "bos" else settings.ablation_seeds[0]
            initial = build_model(settings, task, "learned", seed, variant).pos_table.detach()
            initial = initial.numpy().astype(np.float16).astype(np.float32)
            table = learned_table(artifacts, task, variant)
            trained = settings.train_length + int(variant != "no_bos")  # BOS is position 0
            assert np.array_equal(table[trained:], initial[trained:])  # never trained
            assert not np.array_equal(table[:trained], initial[:trained])
            checked += 1
    assert checked >= 2


def test_committed_nope_models_load() -> None:
    artifacts = load_artifacts()
    for variant, vocab in (("bos", 17), ("no_bos", 16)):
        if not any(k.startswith(f"nope_markov/{variant}/") for k in artifacts):
            continue
        model = load_nope_model(artifacts, variant=variant)
        assert model.config.scheme == "none" and model.config.vocab == vocab
        out = model(torch.zeros(1, 5, dtype=torch.long))
        assert out.logits.shape == (1, 5, vocab)


def test_log_binned_averages_equal_width_bins_on_a_log_axis() -> None:
    values = np.arange(257, dtype=np.float64)
    centres, means = log_binned(values, start=1, per_octave=2)
    np.testing.assert_allclose(centres, means)  # a linear curve: bin mean = mean position
    assert centres[0] == 1 and centres[-1] > 200 and np.all(np.diff(centres) > 0)
    _, m2 = log_binned(np.stack([values, values + 2]), start=1)
    np.testing.assert_allclose(m2, means + 1)
    with pytest.raises(ValueError, match="start"):
        log_binned(values, start=0)


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
        learning_curves,
        nope_counter_figure,
        position_curves,
        rope_methods_curves,
    )

    results, artifacts = load_results(), load_artifacts()
    settings = LabSettings()
    refs = markov_references(settings)
    curves = lab_curves(results, references=refs)
    _json(curves)
    # two traces (band, mean) per scheme and view, three reference lines; one view at a time
    assert len(curves.data) == 2 * len(settings.schemes) * 3 + 3
    assert len(curves.layout.updatemenus[0].buttons) == 3
    for task in settings.tasks:
        _json(rope_methods_curves(results, task))
        _json(learning_curves(results, task))
    maps = lab_attention_maps(artifacts, "copy", train_length=settings.train_length)
    assert len(maps.layout.sliders[0].steps) == 2 * len(settings.schemes)
    small = lab_attention_maps(artifacts, "copy", ("none", "t5"), settings.train_length,
                               layers=(2,), multiples=(4,))
    assert len(small.data) == 2 and len(small.layout.sliders[0].steps) == 2
    assert small.layout.annotations[0].text == "layer 3"
    n = 4 * settings.train_length + 1
    np.testing.assert_allclose(  # the copying layer's map at 4L, NoPE first, as saved
        np.array(small.data[0].z, dtype=float)[n - 1], artifacts["attn/copy/none/4x/layer2"][n - 1],
        atol=0.005)
    for bad, match in (({"layers": (3,)}, "layers"), ({"layers": ()}, "layers"),
                       ({"multiples": (2,)}, "multiples")):
        with pytest.raises(ValueError, match=match):
            lab_attention_maps(artifacts, "copy", ("none",), **bad)
    table = learned_table(artifacts, "markov")
    _json(learned_table_figure(table, table.copy(), settings.train_length))
    _json(nope_counter_figure())
    nope = per_position(artifacts, "markov", "none", settings.max_eval_length)
    _json(position_curves({"NoPE": log_binned(nope)}, train_length=33, ylabel="loss",
                          title="t", references=refs))
    with pytest.raises(TypeError, match="results"):
        lab_curves({"runs": []})
    with pytest.raises(ValueError, match="task"):
        lab_attention_maps(artifacts, "sort")
    with pytest.raises(ValueError, match="task"):
        rope_methods_curves(results, "sort")
    with pytest.raises(TypeError, match="curves"):
        position_curves({}, train_length=8, ylabel="", title="")
    tokens_fig = position_curves({"NoPE": log_binned(nope)}, train_length=33, ylabel="loss",
                                 title="t", xlabel="chain token t (log scale)")
    assert tokens_fig.layout.xaxis.title.text == "chain token t (log scale)"
    with pytest.raises(TypeError, match="xlabel"):
        position_curves({"NoPE": log_binned(nope)}, train_length=33, ylabel="", title="",
                        xlabel="")
    with pytest.raises(ValueError, match="train_length"):
        learned_table_figure(np.zeros((8, 4), dtype=np.float32), np.zeros((8, 4)), 8)
    with pytest.raises(ValueError, match="shape"):
        learned_table_figure(np.zeros((8, 4), dtype=np.float32), np.zeros((8, 5)), 4)


def test_copy_partner_weight_reads_the_diagonal() -> None:
    from posenc_lib.lab.results import copy_partner_weight

    # Without BOS: 8 positions, m = 4, queries 4…7 read keys 0…3.
    grid = np.zeros((8, 8), dtype=np.float32)
    grid[np.arange(4, 8), np.arange(0, 4)] = 1.0
    # With BOS: 9 positions, m = 4, queries 5…8 read keys 1…4 (the token after the previous
    # occurrence of the current one).
    with_bos_grid = np.zeros((9, 9), dtype=np.float32)
    with_bos_grid[np.arange(5, 9), np.arange(1, 5)] = 1.0
    artifacts = {"attn/copy/rope/1x/layer1": grid, "attn/copy/rope/4x/layer1": with_bos_grid}
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


# --- the sink-plus-window mask, the batches' own chain losses ------------------------------------


def test_model_mask_replaces_the_causal_mask_and_refuses_future_keys() -> None:
    from posenc_lib.serving import streaming_cache_mask

    model = tiny_model("none")
    tokens = torch.randint(0, 11, (2, 12), generator=torch.Generator().manual_seed(0))
    plain = model(tokens)
    same = model(tokens, mask=causal_mask(12))
    assert torch.equal(plain.logits, same.logits)
    windowed = model(tokens, mask=streaming_cache_mask(12, 4, n_sinks=1))
    # the first 5 queries see all their keys (sink + 4 recent), the rest lose the middle keys
    torch.testing.assert_close(windowed.logits[:, :5], plain.logits[:, :5], rtol=0, atol=1e-6)
    assert not torch.allclose(windowed.logits[:, 5:], plain.logits[:, 5:])
    weights = windowed.attention[0].detach()  # (batch, heads, 12, 12)
    assert float(weights[:, :, 8, 1:5].abs().max()) == 0.0  # query 8 sees keys 0 and 5 … 8 only
    future = torch.ones(12, 12, dtype=torch.bool)
    no_self = causal_mask(12) & ~torch.eye(12, dtype=torch.bool)
    for bad in (future, no_self, causal_mask(11), causal_mask(12).float()):
        with pytest.raises(ValueError, match="mask"):
            model(tokens, mask=bad)


def test_sink_window_on_the_committed_nope_models() -> None:
    # The chapter's intervention: each query sees the first token and its last L keys. Inside the
    # range nothing changes; beyond it the BOS model gets much worse, the no-BOS model a little.
    settings = LabSettings()
    artifacts = load_artifacts()
    chain = task_for(settings, "markov")
    L = settings.train_length
    got = {}
    for variant in ("bos", "no_bos"):
        model = load_nope_model(artifacts, settings, variant)
        for n in (L, 2 * L):
            for window in (None, L):
                got[variant, n, window] = evaluate_full(model, settings, chain, n,
                                                        bos=variant == "bos",
                                                        window=window)["metric"]
    assert got["bos", L, L] == got["bos", L, None] and got["no_bos", L, L] == got["no_bos", L, None]
    assert got["bos", 2 * L, None] == pytest.approx(2.272, abs=2e-3)
    assert got["bos", 2 * L, L] == pytest.approx(3.027, abs=2e-3)
    assert got["no_bos", 2 * L, None] == pytest.approx(2.570, abs=2e-3)
    assert got["no_bos", 2 * L, L] == pytest.approx(2.645, abs=2e-3)
    # a window as long as the sequence is the causal mask
    model = load_nope_model(artifacts, settings, "bos")
    assert evaluate_full(model, settings, chain, 2 * L, window=2 * L + 1)["metric"] == got[
        "bos", 2 * L, None]
    with pytest.raises(ValueError, match="window"):
        evaluate_full(model, settings, chain, 2 * L, window=0)
    rope = build_model(TINY, "markov", "rope", 0)
    with pytest.raises(ValueError, match="window"):
        evaluate_full(rope, TINY, task_for(TINY, "markov"), 16, "pi", window=4)


def test_the_batches_own_chain_losses() -> None:
    from posenc_lib.lab.results import (
        current_token_batch_loss,
        per_position_reference,
        reference_loss,
        reference_loss_spread,
        validation_reference_loss,
    )

    settings = LabSettings()
    refs = markov_references(settings)
    assert validation_reference_loss(settings) == pytest.approx(1.8846, abs=1e-4)
    assert reference_loss(settings)[settings.train_length] == pytest.approx(1.8743, abs=1e-4)
    spread = reference_loss_spread(settings, batches=200, seed=0)
    assert spread.shape == (200,)
    assert float(spread.std(ddof=1)) == pytest.approx(0.0222, abs=1e-3)
    # the batches are fresh samples of the stationary chain: their mean is the entropy rate
    assert abs(spread.mean() - refs["floor"]) < 3 * spread.std(ddof=1) / math.sqrt(200)
    mean, se = current_token_batch_loss(settings, 8 * settings.train_length)
    assert (mean, se) == (pytest.approx(2.6687, abs=1e-4), pytest.approx(0.0045, abs=1e-4))
    with pytest.raises(ValueError, match="length"):
        current_token_batch_loss(settings, 100)
    # per position: the same batch, so the scored positions average to the batch figures above
    n = 8 * settings.train_length
    per = per_position_reference(settings, n)
    assert per["chain"].shape == per["current_token"].shape == (n,)
    assert math.isnan(per["chain"][0]) and not np.isnan(per["chain"][1:]).any()
    scored = slice(settings.train_length, n)
    assert per["chain"][scored].mean() == pytest.approx(reference_loss(settings)[n], abs=1e-12)
    assert per["current_token"][scored].mean() == pytest.approx(mean, abs=1e-12)
    # tokens 4-7 of this batch sit 0.09 nats below the entropy rate (the chapter's per-band reading)
    assert per["chain"][2:6].mean() == pytest.approx(1.787, abs=1e-3)
    assert per["chain"][2:6].mean() < refs["floor"] - 0.05
    with pytest.raises(ValueError, match="length"):
        per_position_reference(settings, 100)
    with pytest.raises(ValueError, match="batches"):
        reference_loss_spread(settings, batches=1)
    with pytest.raises(ValueError, match="batches"):
        reference_loss_spread(settings, batches=20_000)


@given(st.integers(min_value=0, max_value=2**31 - 1))
def test_current_token_loss_averages_to_its_reference(seed: int) -> None:
    # Law: over a long stationary sample, the current-token predictor's mean loss is
    # H(x_t | x_{t-1}) and never below the chain's own loss on the same tokens.
    task = MarkovTask(vocab=5, concentration=0.5, seed=3, train_length=8)
    inputs, targets, _ = task.batch(torch.Generator().manual_seed(seed), 64, 200)
    current = task.current_token_loss(inputs, targets)[:, 50:]
    own = task.true_loss(inputs, targets)[:, 50:]
    assert current.shape == own.shape
    assert float(current.mean()) >= float(own.mean()) - 0.02
    assert float(current.mean()) == pytest.approx(task.references()["current_token"], abs=0.05)


def test_budget_curves_plot_the_excess_and_the_evaluation_batch() -> None:
    from posenc_lib.viz.lab import budget_curves

    curves = {"a": [[0, 3.0, 2.5], [10, 2.0, 2.1]], "b (3×)": [[0, 3.0, 2.6], [30, 2.0, 2.0]]}
    fig = budget_curves(curves, gate=0.1, offset=1.9, final={"a": 0.15},
                        references={"zero": 0.0}, ylabel="excess")
    lines = {t.name: t for t in fig.data}
    assert list(lines["a"].y) == pytest.approx([0.6, 0.2])
    assert list(lines["b (3×)"].y) == pytest.approx([0.7, 0.1])
    marker = lines["a: evaluation batch"]
    assert list(marker.x) == [10] and list(marker.y) == pytest.approx([0.15])
    assert list(lines["fit gate"].y) == [0.1, 0.1] and list(lines["fit gate"].x) == [0, 30]
    assert fig.layout.yaxis.title.text == "excess"
    with pytest.raises(ValueError, match="final"):
        budget_curves(curves, gate=0.1, final={"c": 0.1})
    with pytest.raises(ValueError, match="offset"):
        budget_curves(curves, gate=0.1, offset=float("nan"))
    with pytest.raises(ValueError, match="curves"):
        budget_curves({}, gate=0.1)


def test_attention_entropy_of_uniform_and_one_hot_rows() -> None:
    from posenc_lib.lab.results import attention_entropy

    n = 6
    uniform = torch.zeros(n, n).masked_fill(~causal_mask(n), float("-inf")).softmax(-1)  # 1/m
    assert np.allclose(attention_entropy(uniform), np.log(np.arange(1, n + 1)), atol=1e-12)
    one_hot = np.eye(n, dtype=np.float16)
    assert np.array_equal(attention_entropy(one_hot), np.zeros(n))
    batched = attention_entropy(torch.stack([uniform, torch.eye(n)])[:, None])  # (2, 1, n, n)
    assert batched.shape == (2, 1, n) and batched[0, 0, -1] > batched[1, 0, -1] == 0
    with pytest.raises(ValueError, match="sum to 1"):
        attention_entropy(2 * one_hot)
    with pytest.raises(ValueError, match="weights"):
        attention_entropy(np.ones(3))
    with pytest.raises(TypeError, match="weights"):
        attention_entropy([[1.0]])


def test_attention_entropy_by_query_is_ln_m_for_a_head_with_zero_logits() -> None:
    from posenc_lib.lab.results import attention_entropy_by_query

    model = TinyDecoder(ModelConfig(vocab=5, scheme="none", d_model=16, n_heads=2, n_layers=2,
                                    d_ff=16, max_len=12))
    with torch.no_grad():  # zero queries and keys: every logit 0, every query uniform
        for block in model.blocks:
            block.attn.qkv.weight[: 2 * 16].zero_()
    tokens = torch.randint(0, 5, (3, 10), generator=torch.Generator().manual_seed(0))
    entropy = attention_entropy_by_query(model, tokens)
    assert entropy.shape == (2, 2, 10)
    assert np.allclose(entropy, np.log(np.arange(1, 11)), atol=1e-5)
    with pytest.raises(ValueError, match="tokens"):
        attention_entropy_by_query(model, tokens[0])
    with pytest.raises(TypeError, match="model"):
        attention_entropy_by_query(torch.nn.Linear(2, 2), tokens)


def test_distance_profile_finds_the_copy_offset_and_js_distance() -> None:
    from posenc_lib.lab.results import distance_profile, jensen_shannon_distance

    # 9 positions (BOS included), m = 4: the second-half queries 5 … 8 read the key 4 back.
    grid = np.zeros((9, 9))
    grid[:5, 0] = 1.0
    grid[np.arange(5, 9), np.arange(1, 5)] = 1.0
    profile = distance_profile(grid)
    assert profile.shape == (9,) and profile[4] == 1.0 and profile.sum() == 1.0
    # half the weight on the query itself, half on the partner: mass 0.5 at d = 0 and d = 4
    grid[np.arange(5, 9), np.arange(1, 5)] = 0.5
    grid[np.arange(5, 9), np.arange(5, 9)] = 0.5
    mixed = distance_profile(grid)
    assert np.allclose(mixed[[0, 4]], 0.5) and np.isclose(mixed.sum(), 1.0)
    assert np.allclose(distance_profile(grid, np.array([0])), np.eye(9)[0])  # query 0: itself
    assert jensen_shannon_distance(profile, profile) == 0.0
    assert math.isclose(jensen_shannon_distance(np.eye(9)[0], np.eye(9)[4]), 1.0)
    js = jensen_shannon_distance(profile, mixed)
    assert 0 < js < 1 and math.isclose(js, jensen_shannon_distance(mixed, profile))
    # by hand, with the midpoint (1/4 at d = 0, 3/4 at d = 4): KL(p‖mid) = log2(4/3),
    # KL(q‖mid) = 1/2 log2(2) + 1/2 log2(2/3); JS is their mean
    by_hand = (math.log2(4 / 3) + 0.5 + 0.5 * math.log2(2 / 3)) / 2
    assert math.isclose(js, math.sqrt(by_hand))
    future = np.eye(9)
    future[0, :2] = 0.5
    with pytest.raises(ValueError, match="causal"):
        distance_profile(future)
    with pytest.raises(ValueError, match="queries"):
        distance_profile(grid, np.array([9]))
    with pytest.raises(ValueError, match="grid"):
        distance_profile(np.ones((2, 3)))
    with pytest.raises(ValueError, match="p and q"):
        jensen_shannon_distance(profile, profile[:4])


def test_bos_lead_recovers_the_logit_lead_of_a_head_whose_other_keys_tie() -> None:
    from posenc_lib.lab.results import bos_lead

    seq, lead = 40, 0.9  # first key's logit 0.9 above the others: c = e^0.9 ≈ 2.46
    logits = torch.randn(seq, generator=torch.Generator().manual_seed(0))[:, None].expand(seq, seq)
    logits = logits.clone().double()  # query q gives its keys 1 … q a shared random logit b_q
    logits[:, 0] += lead
    logits = logits.masked_fill(torch.ones(seq, seq).triu(1).bool(), float("-inf"))
    on_first = torch.softmax(logits, -1)[:, 0]  # (seq,) weight on key 0 for query q
    c = bos_lead(on_first)
    assert c.shape == (seq - 1,)
    np.testing.assert_allclose(c, math.exp(lead), rtol=1e-12)  # c/(c + m - 1) with c = e^0.9
    assert abs(on_first[9].item() - 2.4596 / (2.4596 + 9)) < 1e-4  # m = 10 keys, by hand
    # the hand-built counting head (weight 1/m) has c = 1; a lead ln m gives c = m, not constant
    m = np.arange(1, seq + 1, dtype=np.float64)
    np.testing.assert_allclose(bos_lead(1 / m), 1.0, rtol=1e-12)
    np.testing.assert_allclose(bos_lead(m / (2 * m - 1))[None], m[None, 1:], rtol=1e-12)
    # a batch of heads keeps its leading axes
    assert bos_lead(np.stack([1 / m, 1 / m])).shape == (2, seq - 1)
    with pytest.raises(ValueError, match="weights"):
        bos_lead(np.array([1.0]))
    with pytest.raises(ValueError, match="weights"):
        bos_lead(np.array([1.0, 1.0, 0.5]))  # m = 2 with all weight on the first key
    with pytest.raises(TypeError, match="weights"):
        bos_lead(np.array([1, 0]))
