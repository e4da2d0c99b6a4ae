"""Chapter 8's measurements: turns, bands, all-ones scores, granularity, PI's error bound."""

from __future__ import annotations

import cmath
import itertools
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_lib import apply_rope_interleaved, llama3_inv_freq, pi_inv_freq, rope_inv_freq
from posenc_lib.extension import (
    extended_rope,
    logn_attention_scale,
    longrope_attention_factor,
    yarn_attention_factor,
)
from posenc_lib.long_context import (
    all_ones_scores,
    consecutive_angle,
    interpolation_error,
    mean_angle_step,
    mean_angle_step_limit,
    pair_bands,
    pi_extrapolation_bound,
    pi_interpolation_bound,
    score_curve,
    turns_within,
    xpos_decay,
)
from posenc_lib.scaling import yarn_paper_inv_freq


def test_turns_and_the_slow_pairs() -> None:
    turns = turns_within(rope_inv_freq(128), 4096)
    assert (turns < 1).nonzero().flatten().tolist() == list(range(46, 64))
    assert turns[0] == pytest.approx(4095 / (2 * math.pi))


def test_bands() -> None:
    theta = rope_inv_freq(128, 5e5)
    bands = pair_bands(theta, llama3_inv_freq(128, 5e5, 8.0, 8192), 8.0)
    assert bands.bincount(minlength=4).tolist() == [29, 29, 6, 0]
    assert pair_bands(theta, pi_inv_freq(128, 5e5, 4.0), 4.0).unique().tolist() == [1]
    assert pair_bands(theta, theta, 1.0).unique().tolist() == [0]
    with pytest.raises(ValueError, match="scaled_inv_freq"):
        pair_bands(theta, theta * 2, 2.0)


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 32).map(lambda h: 2 * h), st.floats(10.0, 1e6), st.integers(0, 5000))
def test_all_ones_score_is_the_rope_score_of_ones(dim: int, base: float, delta: int) -> None:
    theta = rope_inv_freq(dim, base)
    ones = torch.ones(1, dim, dtype=torch.float64)
    rotated = apply_rope_interleaved(ones, torch.tensor([float(delta)]), base=base)
    expected = (rotated @ ones.T).item()
    got = all_ones_scores(theta, torch.tensor([float(delta)])).item()
    assert got == pytest.approx(expected, abs=1e-9 * dim)


def test_xpos_damps_every_pair() -> None:
    zeta = xpos_decay(128)
    assert zeta[0] == pytest.approx(0.4 / 1.4) and bool((zeta < 1).all())
    theta = rope_inv_freq(128, 5e5)
    d = torch.tensor([0.0, 4096.0])
    plain, damped = all_ones_scores(theta, d), all_ones_scores(theta, d, xpos_scale_base=512.0)
    assert damped[0] == plain[0] == 128 and abs(damped[1]) < abs(plain[1])
    with pytest.raises(ValueError, match="distances"):
        all_ones_scores(theta, torch.tensor([-1.0]))


def test_granularity_limits_and_dependences() -> None:
    b = 1e4
    assert mean_angle_step(rope_inv_freq(8192, b * 50)).item() == pytest.approx(
        mean_angle_step_limit(b * 50), rel=2e-3)
    assert mean_angle_step_limit(b, 0.25) == pytest.approx(0.25 * (1 - 1e-4) / math.log(b))
    abf, pi = rope_inv_freq(128, 5e5), rope_inv_freq(128) / 4
    assert consecutive_angle(abf) > 3 * consecutive_angle(pi)
    x = torch.zeros(1, 8, dtype=torch.float64)
    x[0, 0] = 1.0  # all energy in pair 0: the angle is θ_0 = 1 rad
    assert consecutive_angle(rope_inv_freq(8), x).item() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="non-zero"):
        consecutive_angle(rope_inv_freq(8), torch.zeros(8))


def test_score_curve_matches_rotation_and_interpolation_bound_holds() -> None:
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(2, 4, 64, generator=g, dtype=torch.float64)
    theta = rope_inv_freq(64)
    s = torch.tensor([7.0])
    expected = (apply_rope_interleaved(q[:, None, :], s)[:, 0] * k).sum(-1)
    torch.testing.assert_close(score_curve(q, k, theta, s)[..., 0], expected)
    err = interpolation_error(q, k, theta, 256)
    h = (torch.complex(q[..., 0::2], q[..., 1::2])
         * torch.complex(k[..., 0::2], k[..., 1::2]).conj()).abs().amax(-1)
    for e, hm in zip(err, h, strict=True):
        assert 0 < e <= pi_interpolation_bound(theta, float(hm))


def test_extrapolation_bound_is_twice_max_h_times_the_partial_sums() -> None:
    # Chen et al. 2023, §2.3: |a(Δ)| ≤ 2·max|h|·Σ_{k=1}^{d/2} |A_k(Δ)|, A_k(Δ) = Σ_{j<k} e^{iΔθ_j};
    # the partial sums brute-forced here with cmath, independently of the library.
    dim, base, h_max = 64, 1e4, 0.75
    bound = pi_extrapolation_bound(dim, base, 3000, h_max)
    thetas = [base ** (-2 * j / dim) for j in range(dim // 2)]
    for delta in (0, 1, 7, 100, 2048, 3000):
        partial, total = 0j, 0.0
        for t in thetas:
            partial += cmath.exp(1j * delta * t)
            total += abs(partial)
        assert bound[delta].item() == pytest.approx(2 * h_max * total, rel=1e-12)
    assert bound[0].item() == pytest.approx(2 * h_max * (32 * 33 / 2))  # Σ_k k at Δ = 0


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_extrapolation_bound_bounds_the_score(seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(2, 32, generator=g, dtype=torch.float64)
    h = (torch.complex(q[0::2], q[1::2]) * torch.complex(k[0::2], k[1::2]).conj()).abs().max()
    offsets = torch.arange(0, 2001, dtype=torch.float64)
    score = score_curve(q, k, rope_inv_freq(32), offsets).abs()
    assert bool((score <= pi_extrapolation_bound(32, 1e4, 2000, float(h)) + 1e-9).all())


def test_yarn_paper_form_and_attention_factors() -> None:
    theta = rope_inv_freq(128)
    paper, _ = yarn_paper_inv_freq(128, 1e4, 8.0, 4096)
    r = 4096 * theta / (2 * math.pi)
    assert torch.equal(paper[r >= 32], theta[r >= 32])
    torch.testing.assert_close(paper[r <= 1], theta[r <= 1] / 8)
    assert yarn_attention_factor(1.0) == 1.0
    assert yarn_attention_factor(40.0, 1.0, 0.707) == pytest.approx(
        (0.1 * math.log(40) + 1) / (0.0707 * math.log(40) + 1))
    assert longrope_attention_factor(32.0, 4096) == pytest.approx(math.sqrt(1 + 5 / 12))
    # One mscale alone: transformers falls back to 0.1·ln s + 1 (a real config can set only one).
    assert yarn_attention_factor(2.0, mscale=0.5) == yarn_attention_factor(2.0)
    assert yarn_attention_factor(2.0, mscale_all_dim=0.5) == 0.1 * math.log(2.0) + 1
    with pytest.raises(ValueError, match="mscale"):
        yarn_attention_factor(2.0, mscale=-1.0)


def test_extended_rope_errors() -> None:
    with pytest.raises(ValueError, match="original_max_position"):
        extended_rope("dynamic", dim=64, factor=2.0)
    with pytest.raises(TypeError, match="short_factor"):
        extended_rope("yarn", dim=64, original_max_position=16, short_factor=[1.0])
    with pytest.raises(ValueError, match="long_factor"):
        extended_rope("longrope", dim=8, original_max_position=16, short_factor=[1.0] * 4,
                      long_factor=[1.0] * 3)
    with pytest.raises(ValueError, match="seq_len"):
        extended_rope("dynamic", dim=64, original_max_position=16, seq_len=-1)


def test_hermitian_sine_is_the_papers_quantity_and_corrects_its_constants() -> None:
    from posenc_lib.long_context import (
        hermitian_sine,
        hermitian_sine_limit,
        paper_granularity_constant,
        sine_integral,
    )

    assert sine_integral(1.0) == pytest.approx(0.946083070367183, rel=1e-15)
    assert sine_integral(0.0) == 0.0 and sine_integral(-2.0) == -sine_integral(2.0)
    # Im⟨R_{n+1}x, R_n x⟩/‖x‖², computed from the rotation itself, for random x.
    g = torch.Generator().manual_seed(1)
    x = torch.randn(5, 64, generator=g, dtype=torch.float64)
    theta = rope_inv_freq(64, 5e5)
    z = torch.complex(x[:, 0::2], x[:, 1::2])
    a, b = z * torch.exp(1j * 8 * theta), z * torch.exp(1j * 7 * theta)
    direct = (a * b.conj()).sum(-1).imag / (z.abs() ** 2).sum(-1)
    torch.testing.assert_close(hermitian_sine(theta, x), direct, rtol=1e-12, atol=0)
    # The paper's C_d is unnormalised: (2/d)·C_d is the equal-share similarity.
    for d in (128, 4096):
        abf = rope_inv_freq(d, 5e5)
        assert hermitian_sine(abf).item() == pytest.approx(
            2 / d * paper_granularity_constant(abf).item(), rel=1e-12)
    assert paper_granularity_constant(rope_inv_freq(4096, 5e5)).item() > 140
    # The exact limit is Si(1)/ln(bβ), below the paper's 1/ln(bβ); d = 4096 is within 0.3 %.
    assert hermitian_sine_limit(5e5) == pytest.approx(0.0721, abs=5e-5)
    assert hermitian_sine_limit(1e4, 0.25) == pytest.approx(0.02705, abs=5e-6)
    assert hermitian_sine(rope_inv_freq(4096, 5e5)).item() == pytest.approx(
        hermitian_sine_limit(5e5), rel=3e-3)
    # Theorem 1's upper bound (max_k x_k²/‖x‖²)·C_d fails by a factor 2 for x = all ones.
    ones = torch.ones(128, dtype=torch.float64)
    abf = rope_inv_freq(128, 5e5)
    paper_upper = paper_granularity_constant(abf).item() / 128
    assert hermitian_sine(abf, ones).item() == pytest.approx(2 * paper_upper, rel=1e-12)
    with pytest.raises(ValueError, match="scale"):
        hermitian_sine_limit(1e4, 5.0)
    with pytest.raises(ValueError, match="x"):
        sine_integral(10.0)


def test_pair_spiral_samples_never_alias() -> None:
    from posenc_lib.viz.long_context import _spiral_grid, _spiral_state

    for pair in range(64):
        step, end = _spiral_grid(pair, 128, 1e4, 8.0, 5e5, 4096)
        # Every position (step 1: what the model sees), or a step that turns by at most π/8.
        assert step == 1 or step * float(rope_inv_freq(128, 1e4)[pair]) <= math.pi / 8, pair
        assert end // step <= 384
        if step > 1:
            for s in _spiral_state(pair, 128, 1e4, 8.0, 5e5, 4096):
                a = torch.tensor(s["customdata"][:, 1])
                turn = torch.remainder(a[1:] - a[:-1], 2 * math.pi)
                assert bool((turn <= math.pi / 8 + 1e-9).all()), pair
    assert _spiral_grid(40, 128, 1e4, 8.0, 5e5, 4096) == (11, 4096)  # slow pairs: the full range


def test_interpolation_ramps_figure() -> None:
    from posenc_lib.viz.long_context import interpolation_ramps

    fig = interpolation_ramps()
    assert "τ_i = L/λ_i" in fig.layout.xaxis.title.text  # the book's turns τ_i, not r (a distance)
    traces = {t.name: (np.array(t.x, dtype=float), np.array(t.y, dtype=float)) for t in fig.data}
    r, pi = traces["PI"]
    assert np.allclose(pi, 1.0, atol=1e-3)  # PI divides every pair by s
    _, ntk = traces["NTK-aware"]
    assert ntk[0] == 0.0 and abs(ntk[-1] - 1) < 1e-3 and 0.72 < ntk[46] < 0.74  # critical pair
    for name in ("YaRN (transformers)", "YaRN (paper, β_slow = 1, β_fast = 32)",
                 "Llama 3.1 (= paper, β_slow = 1, β_fast = 4)"):
        _, y = traces[name]
        assert np.all(y[r > 32] < 1e-3) and np.all(y[r < 1] > 1 - 1e-3), name
    _, llama = traces["Llama 3.1 (= paper, β_slow = 1, β_fast = 4)"]
    assert np.all(llama[r > 4] < 1e-3)  # Llama keeps everything above 4 turns
    with pytest.raises(ValueError, match="factor"):
        interpolation_ramps(factor=1.0)


def test_hermitian_sine_is_not_the_sine_of_the_angle() -> None:
    from posenc_lib.long_context import consecutive_angle, hermitian_sine

    abf = rope_inv_freq(128, 5e5)
    assert hermitian_sine(abf).item() == pytest.approx(0.0788, abs=5e-5)
    assert math.sin(consecutive_angle(abf).item()) == pytest.approx(0.209, abs=5e-4)


def test_first_negative_distance_and_base_bound_map_reproduce_men_et_al() -> None:
    from posenc_lib.long_context import base_bound_map, first_negative_distance

    assert first_negative_distance(rope_inv_freq(128, 1e4), 4096) == 1707
    assert first_negative_distance(rope_inv_freq(128, 1e6), 32768) == 27115
    assert first_negative_distance(rope_inv_freq(128, 1e4), 1000) is None
    bases = torch.logspace(4, 6, 101, dtype=torch.float64)  # ratio 10^0.02
    lengths = torch.tensor([4096, 32768])
    ok = base_bound_map(128, bases, lengths)
    smallest = [bases[ok[:, j]].min().item() for j in range(2)]
    # the smallest passing base on this grid, which steps over narrower passing islands
    # (smallest_passing_base finds 2.70e4 at 4 096)
    assert smallest[0] == pytest.approx(2.88e4, rel=5e-3)
    assert smallest[1] == pytest.approx(6.31e5, rel=5e-3)
    # not monotone: some larger base fails at 4 096
    first_pass = int(ok[:, 0].nonzero()[0])
    assert not bool(ok[first_pass:, 0].all())
    with pytest.raises(ValueError, match="bases"):
        base_bound_map(128, torch.tensor([1.0]), lengths)
    with pytest.raises(ValueError, match="lengths"):
        base_bound_map(128, bases[:2], torch.tensor([2**21]))


def test_negative_offsets_counts_and_depths() -> None:
    from posenc_lib.long_context import first_negative_distance, negative_offsets

    # Qwen2.5 (b = 1e6) at 32 768: 4 offsets, 27 115 … 28 316, by 1.2 % of B(0).
    count, depth = negative_offsets(rope_inv_freq(128, 1e6), 32768)
    assert count == 4 and depth == pytest.approx(-0.01211, abs=1e-4)
    # Llama 2 (b = 1e4) at 4 096: 420 offsets, by 13 %; LLaMA 2 Long (5e5) at 32 768: 57, by 6.3 %.
    count, depth = negative_offsets(rope_inv_freq(128, 1e4), 4096)
    assert count == 420 and depth == pytest.approx(-0.13067, abs=1e-4)
    count, depth = negative_offsets(rope_inv_freq(128, 5e5), 32768)
    assert count == 57 and depth == pytest.approx(-0.06315, abs=1e-4)
    # a passing base: no negative offset and a positive minimum; across chunk boundaries the
    # count equals a direct scan
    count, depth = negative_offsets(rope_inv_freq(128, 1e6), 16384)
    assert count == 0 and depth > 0
    theta = rope_inv_freq(64, 3e3)
    r = torch.arange(20001.0)
    direct = torch.cos(r[:, None] * theta).sum(-1)
    count, depth = negative_offsets(theta, 20000)
    assert count == int((direct < 0).sum()) > 0
    assert depth == pytest.approx(direct.min().item() / 32, abs=1e-12)
    assert (count > 0) == (first_negative_distance(theta, 20000) is not None)
    # the horizon is inclusive: B(1707) < 0 at b = 1e4 is the first negative offset
    assert negative_offsets(rope_inv_freq(128, 1e4), 1706)[0] == 0
    assert negative_offsets(rope_inv_freq(128, 1e4), 1707)[0] == 1
    with pytest.raises(ValueError, match="horizon"):
        negative_offsets(theta, 0)
    with pytest.raises(ValueError, match="horizon"):
        negative_offsets(theta, 2**20 + 1)
    with pytest.raises(TypeError, match="inv_freq"):
        negative_offsets([1.0, 0.1], 10)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="inv_freq"):
        negative_offsets(torch.zeros(0, dtype=torch.float64), 10)


def test_base_bound_figure_draws_the_map_and_models() -> None:
    from posenc_lib.viz.long_context import base_bound_figure

    ok = torch.tensor([[False, False], [True, False], [True, True]])
    fig = base_bound_figure([1e4, 1e5, 1e6], [4096, 32768], ok, {"Llama 2": (4096, 1e4)})
    assert fig.data[0].z.tolist() == [[0, 0], [1, 0], [1, 1]] and fig.data[1].name == "Llama 2"
    assert fig.layout.title.text.startswith("B(r) ≥ 0 for every r ≤ L")
    with pytest.raises(ValueError, match="shape"):
        base_bound_figure([1e4], [4096, 32768], ok)


def test_smallest_passing_base_reproduces_men_et_al_and_is_exact() -> None:
    from posenc_lib.long_context import first_negative_distance, smallest_passing_base

    # Men et al.'s Table 1 prints 4.3e3 (1K), 2.7e4 (4K) and 8.4e4 (8K); the 4 096 value is a
    # narrow island below the long passing run that starts near 2.863e4.
    for length, expected in ((1024, 4293.4), (4096, 26952.3), (8192, 83763.8)):
        base = smallest_passing_base(length)
        assert base == pytest.approx(expected, rel=1e-5)
        assert first_negative_distance(rope_inv_freq(128, base), length) is None
        assert first_negative_distance(rope_inv_freq(128, base * (1 - 1e-6)), length) is not None
    assert first_negative_distance(rope_inv_freq(128, 27000.0), 4096) is not None
    assert first_negative_distance(rope_inv_freq(128, 26960.0), 4096) is None


@settings(max_examples=12, deadline=None)
@given(st.integers(8, 256), st.integers(8, 256), st.sampled_from([8, 16, 32]))
def test_smallest_passing_base_is_monotone_and_the_bound_holds_only_from_it(
    l1: int, l2: int, dim: int
) -> None:
    from posenc_lib.long_context import first_negative_distance, smallest_passing_base

    short, long_ = sorted((l1, l2))
    b_short, b_long = smallest_passing_base(short, dim), smallest_passing_base(long_, dim)
    assert b_short <= b_long * (1 + 1e-6)  # equal bases are found to the walk's step
    for length, base in ((short, b_short), (long_, b_long)):
        assert first_negative_distance(rope_inv_freq(dim, base), length) is None
        if base > 10:  # the walk starts at low = 10
            below = rope_inv_freq(dim, base * (1 - 1e-6))
            assert first_negative_distance(below, length) is not None


def test_smallest_passing_base_rejects_bad_input() -> None:
    from posenc_lib.long_context import smallest_passing_base

    with pytest.raises(ValueError, match="length"):
        smallest_passing_base(0)
    with pytest.raises(ValueError, match="length"):
        smallest_passing_base(2**21)
    with pytest.raises(TypeError, match="length"):
        smallest_passing_base(4096.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="dim"):
        smallest_passing_base(64, 7)
    with pytest.raises(ValueError, match="low"):
        smallest_passing_base(64, low=1.0)
    with pytest.raises(ValueError, match="min_step"):
        smallest_passing_base(64, min_step=0.1)


def test_softmax_entropy_shift_follows_the_gaussian_law() -> None:
    from posenc_lib.long_context import softmax_entropy_shift

    h_l, h_sl, h_same = softmax_entropy_shift(4096, 8.0, 1.0, trials=16)
    assert h_same == h_sl
    # i.i.d. N(0, σ²) logits: H ≈ ln n − σ²/2 for large n
    assert h_l == pytest.approx(math.log(4096) - 0.5, abs=0.02)
    assert h_sl - h_l == pytest.approx(math.log(8), rel=0.02)
    # YaRN's logit multiplier (0.1 ln 8 + 1)² undoes about a quarter of the rise at σ = 1 …
    scale = (0.1 * math.log(8) + 1) ** 2
    h_l, h_sl, h_y = softmax_entropy_shift(4096, 8.0, 1.0, scale, trials=16)
    assert 0.22 < (h_sl - h_y) / (h_sl - h_l) < 0.32
    # … and all of it at σ = 2
    h_l, h_sl, h_y = softmax_entropy_shift(4096, 8.0, 2.0, scale, trials=16)
    assert 0.9 < (h_sl - h_y) / (h_sl - h_l) < 1.1
    with pytest.raises(ValueError, match="sigma"):
        softmax_entropy_shift(4096, 8.0, 0.0)
    with pytest.raises(ValueError, match="factor"):
        softmax_entropy_shift(4096, 100.0, 1.0)
    with pytest.raises(ValueError, match="length"):
        softmax_entropy_shift(1, 8.0, 1.0)


def test_logn_attention_scale_values() -> None:
    # 1 up to the training length; log_L(m) past it: log_8192(65 536) = 16/13
    assert logn_attention_scale(8192, 8192) == 1.0 and logn_attention_scale(1, 8192) == 1.0
    assert logn_attention_scale(65536, 8192) == pytest.approx(16 / 13, rel=1e-15)
    assert logn_attention_scale(8193, 8192) > 1.0


@given(st.integers(2, 10**6), st.integers(1, 10**7))
def test_logn_attention_scale_is_monotone_and_at_least_one(train_len: int, m: int) -> None:
    here, next_ = logn_attention_scale(m, train_len), logn_attention_scale(m + 1, train_len)
    assert 1.0 <= here <= next_


@pytest.mark.parametrize(("m", "train_len"), [(0, 8), (5, 1), (2.5, 8), (True, 8)])
def test_logn_attention_scale_rejects_bad_input(m: object, train_len: object) -> None:
    with pytest.raises((ValueError, TypeError), match=r"position|train_len"):
        logn_attention_scale(m, train_len)  # type: ignore[arg-type]


def test_base_bound_runs_finds_the_alternating_runs_above_the_smallest_base() -> None:
    from posenc_lib.long_context import base_bound_runs, first_negative_distance

    # At 4 096 (d = 128) a passing run starts near 28 631, a failing one near 29 081, an island
    # passes near 30 129–30 196 and fails again from about 30 202 (a fine scan at 2e-5).
    runs = base_bound_runs(4096, low=28_000.0, high=31_000.0)
    assert [p for p, _, _ in runs] == [False, True, False, True, False]
    starts = [lo for _, lo, _ in runs[1:]]
    assert starts == pytest.approx([28_631, 29_081, 30_129, 30_202], rel=5e-4)
    for passes, lo, hi in runs:  # every run's ends have the run's verdict
        for base in (lo, hi):
            fails = first_negative_distance(rope_inv_freq(128, base), 4096) is not None
            assert fails is not passes


@settings(max_examples=10, deadline=None)
@given(st.integers(8, 512), st.floats(50.0, 5000.0), st.floats(1.1, 4.0))
def test_base_bound_runs_alternate_and_hold_every_sample(length: int, low: float,
                                                          span: float) -> None:
    from posenc_lib.long_context import base_bound_map, base_bound_runs

    runs = base_bound_runs(length, 16, low=low, high=low * span, rel_step=1e-3)
    assert all(a[0] != b[0] for a, b in itertools.pairwise(runs))
    assert runs[0][1] == pytest.approx(low) and runs[-1][2] <= low * span * (1 + 1e-12)
    assert all(lo <= hi for _, lo, hi in runs)
    assert all(a[2] < b[1] for a, b in itertools.pairwise(runs))
    ends = torch.tensor([b for _, lo, hi in runs for b in (lo, hi)], dtype=torch.float64)
    verdicts = base_bound_map(16, ends, torch.tensor([length]))[:, 0].tolist()
    assert verdicts == [p for p, _, _ in runs for _ in (0, 1)]


def test_base_bound_runs_rejects_bad_input() -> None:
    from posenc_lib.long_context import base_bound_runs

    with pytest.raises(ValueError, match="low and high"):
        base_bound_runs(4096, low=5e4, high=4e4)
    with pytest.raises(ValueError, match="low and high"):
        base_bound_runs(4096, low=1.0, high=4e4)
    with pytest.raises(ValueError, match="rel_step"):
        base_bound_runs(4096, low=1e4, high=2e4, rel_step=0.5)
    with pytest.raises(ValueError, match="100 000"):
        base_bound_runs(4096, low=10.0, high=1e9, rel_step=1e-5)
    with pytest.raises(ValueError, match="length"):
        base_bound_runs(0, low=1e4, high=2e4)
    with pytest.raises(TypeError, match="length"):
        base_bound_runs(4096.0, low=1e4, high=2e4)  # type: ignore[arg-type]


def test_pair_spiral_slider_has_the_abf_pi_crossing() -> None:
    from posenc_lib.viz.long_context import abf_pi_crossing, pair_spiral_figure

    # Base 50·b at d = 128: pair i is slowed 50^(i/64); 50^(22/64) = 3.84 ≤ 4 < 50^(23/64) = 4.08.
    assert abf_pi_crossing(128, 1e4, 4.0, 5e5) == (22, 23)
    assert abf_pi_crossing(128, 1e4, 8.0, 5e5) == (34, 35)  # 50^(34/64) = 7.99
    assert abf_pi_crossing(128, 1e4, 64.0, 5e5) == ()  # 50^(63/64) < 64: ABF never slows more
    assert abf_pi_crossing(128, 1e4, 1.0, 5e5) == (0, 1)  # every pair but 0 slowed more than 1×
    with pytest.raises(ValueError, match="factor"):
        abf_pi_crossing(128, 1e4, 0.5, 5e5)
    labels = [s["label"] for s in pair_spiral_figure(pair=10, factor=4.0).layout.sliders[0].steps]
    assert "22" in labels and "23" in labels
