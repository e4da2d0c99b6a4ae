"""RoPE: reference vectors, the relative-position law, conventions, accuracy, the module."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_lib import (
    CONVENTIONS,
    RotaryEmbedding,
    apply_rope_complex,
    apply_rope_half,
    apply_rope_interleaved,
    interleaved_to_half_permutation,
    rope_angles,
    rope_cos_sin,
    rope_inv_freq,
    rope_rotation_matrix,
    rotate_half,
)

APPLY = {
    "interleaved": apply_rope_interleaved,
    "half": apply_rope_half,
    "complex": apply_rope_complex,
}

even_dims = st.integers(min_value=1, max_value=16).map(lambda n: 2 * n)
positions_st = st.floats(min_value=-2000, max_value=2000)
bases = st.floats(min_value=2.0, max_value=1e6)


def _vector(seed: int, dim: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(dim, generator=gen, dtype=torch.float64)


def _at(fn: Callable[..., torch.Tensor], x: torch.Tensor, position: float,
        **kw: object) -> torch.Tensor:
    """Rotate a single vector ``x`` (dim,) as if it sat at ``position``."""
    pos = torch.tensor([position], dtype=torch.float64)
    return fn(x[None, :], pos, **kw)[0]


# --- reference values --------------------------------------------------------------------------


def test_inv_freq_values() -> None:
    assert rope_inv_freq(4).tolist() == [1.0, 0.01]
    theta = rope_inv_freq(128, 500000.0)
    assert theta.dtype == torch.float64 and theta.shape == (64,)
    assert theta[-1].item() == pytest.approx(500000.0 ** (-126 / 128), rel=1e-14)


def test_half_reference_vector() -> None:
    x = torch.tensor([[1.0, 2.0, 3.0, 4.0]] * 2, dtype=torch.float64)
    expected = [-1.98411065, 1.95990067, 2.46237790, 4.01979967]
    assert apply_rope_half(x)[1].tolist() == pytest.approx(expected, abs=5e-9)
    assert apply_rope_half(x)[0].tolist() == [1.0, 2.0, 3.0, 4.0]  # position 0: identity


def test_interleaved_and_complex_reference_vector() -> None:
    # pairs (1, 2) turned by 1 rad and (3, 4) by 0.01 rad
    x = torch.tensor([[1.0, 2.0, 3.0, 4.0]] * 2, dtype=torch.float64)
    expected = [-1.14263966, 1.92207560, 2.95985067, 4.02979950]
    assert apply_rope_interleaved(x)[1].tolist() == pytest.approx(expected, abs=5e-9)
    assert apply_rope_complex(x)[1].tolist() == pytest.approx(expected, abs=5e-9)


def test_rotation_sign_is_counter_clockwise() -> None:
    # (1, 0) at angle +π/2 goes to (0, 1), as in HF and Meta: x0 cos − x1 sin, x0 sin + x1 cos.
    x = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    theta = torch.tensor([1.0], dtype=torch.float64)
    for fn in APPLY.values():
        out = fn(x, torch.tensor([math.pi / 2]), inv_freq=theta)
        assert out[0].tolist() == pytest.approx([0.0, 1.0], abs=1e-7)


def test_rope_angles_is_the_outer_product_in_float64() -> None:
    angles = rope_angles(torch.tensor([0, 1, 10]), rope_inv_freq(4))
    assert angles.dtype == torch.float64
    assert angles.tolist() == [[0.0, 0.0], [1.0, 0.01], [10.0, 0.1]]


def test_rotate_half() -> None:
    x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    assert rotate_half(x).tolist() == [-3.0, -4.0, 1.0, 2.0]


def test_rope_cos_sin_layouts() -> None:
    pos, theta = torch.arange(3), rope_inv_freq(4)
    cos, sin = rope_cos_sin(pos, theta, torch.float64)
    angles = rope_angles(pos, theta)
    assert cos.shape == sin.shape == (3, 4)
    assert torch.equal(cos, torch.cat((angles.cos(), angles.cos()), -1))
    cos_i, sin_i = rope_cos_sin(pos, theta, torch.float64, convention="interleaved")
    assert torch.equal(cos_i, angles.cos().repeat_interleave(2, dim=-1))
    assert torch.equal(sin_i[:, 0::2], angles.sin()) and torch.equal(sin_i[:, 1::2], angles.sin())
    cos16, _ = rope_cos_sin(pos, theta, torch.float16, scale=2.0)
    assert cos16.dtype == torch.float16
    assert torch.equal(cos16, (2 * cos).to(torch.float16))


# --- laws for all inputs -----------------------------------------------------------------------


@pytest.mark.parametrize("convention", list(APPLY))
@given(m=positions_st, n=positions_st, shift=positions_st, dim=even_dims, seed=st.integers(0, 99))
def test_score_depends_only_on_the_offset(
    convention: str, m: float, n: float, shift: float, dim: int, seed: int
) -> None:
    fn = APPLY[convention]
    q, k = _vector(seed, dim), _vector(seed + 1000, dim)
    score = _at(fn, q, m) @ _at(fn, k, n)
    shifted = _at(fn, q, m + shift) @ _at(fn, k, n + shift)
    tol = 1e-8 * (1 + float(q.norm() * k.norm()))
    assert shifted.item() == pytest.approx(score.item(), abs=tol)
    if convention != "half":  # and it is q·R_{n−m}·k
        assert (q @ rope_rotation_matrix(n - m, dim) @ k).item() == pytest.approx(score.item(),
                                                                                abs=tol)


@pytest.mark.parametrize("convention", list(APPLY))
@given(dim=even_dims, seq=st.integers(1, 20), base=bases, seed=st.integers(0, 99))
def test_rope_preserves_norms(convention: str, dim: int, seq: int, base: float, seed: int) -> None:
    x = torch.randn(2, seq, dim, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    positions = torch.linspace(-50.0, 3000.0, seq, dtype=torch.float64)
    out = APPLY[convention](x, positions, base=base)
    torch.testing.assert_close(out.norm(dim=-1), x.norm(dim=-1), atol=1e-10, rtol=1e-12)


@given(dim=even_dims, seq=st.integers(1, 16), base=bases, seed=st.integers(0, 99))
def test_complex_equals_interleaved(dim: int, seq: int, base: float, seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(3, seq, dim, generator=gen, dtype=torch.float64)
    positions = torch.randint(0, 100_000, (seq,), generator=gen)
    torch.testing.assert_close(apply_rope_complex(x, positions, base=base),
                               apply_rope_interleaved(x, positions, base=base),
                               atol=1e-10, rtol=0)
    x32 = x.float()
    torch.testing.assert_close(apply_rope_complex(x32, positions, base=base),
                               apply_rope_interleaved(x32, positions, base=base),
                               atol=1e-5, rtol=0)


@given(dim=even_dims, seq=st.integers(1, 16), base=bases, seed=st.integers(0, 99))
def test_interleaved_and_half_agree_up_to_the_permutation(
    dim: int, seq: int, base: float, seed: int
) -> None:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(2, seq, dim, generator=gen, dtype=torch.float64)
    positions = torch.randint(-1000, 1000, (seq,), generator=gen)
    perm = interleaved_to_half_permutation(dim)
    torch.testing.assert_close(apply_rope_interleaved(x, positions, base=base)[..., perm],
                               apply_rope_half(x[..., perm], positions, base=base),
                               atol=1e-12, rtol=0)


def test_permutation_values_and_that_the_conventions_really_differ() -> None:
    assert interleaved_to_half_permutation(8).tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    x = torch.randn(5, 8, dtype=torch.float64)
    # without the permutation the two conventions disagree: that is the checkpoint-conversion bug
    assert (apply_rope_interleaved(x) - apply_rope_half(x)).abs().max() > 0.1


@given(m=positions_st, n=positions_st, dim=even_dims, base=bases)
def test_rotation_matrix_is_orthogonal_and_composes(m: float, n: float, dim: int,
                                                    base: float) -> None:
    r_m, r_n = rope_rotation_matrix(m, dim, base), rope_rotation_matrix(n, dim, base)
    eye = torch.eye(dim, dtype=torch.float64)
    torch.testing.assert_close(r_m.T @ r_m, eye, atol=1e-12, rtol=0)
    torch.testing.assert_close(r_m.T @ r_n, rope_rotation_matrix(n - m, dim, base),
                               atol=1e-9, rtol=0)


@given(m=positions_st, dim=even_dims, seed=st.integers(0, 99))
def test_rotation_matrix_matches_the_functional_form(m: float, dim: int, seed: int) -> None:
    x = _vector(seed, dim)
    torch.testing.assert_close(rope_rotation_matrix(m, dim) @ x,
                               _at(apply_rope_interleaved, x, m), atol=1e-10, rtol=0)


def test_rotation_matrix_is_block_diagonal() -> None:
    r = rope_rotation_matrix(3.0, 6)
    mask = torch.zeros(6, 6, dtype=torch.bool)
    for i in range(0, 6, 2):
        mask[i : i + 2, i : i + 2] = True
    assert r[~mask].abs().max() == 0
    assert r[0, 1].item() == pytest.approx(-math.sin(3.0)) and r[1, 0].item() == pytest.approx(
        math.sin(3.0)
    )


def test_custom_inv_freq_overrides_base() -> None:
    x = torch.randn(4, 8, dtype=torch.float64)
    theta = rope_inv_freq(8, 500000.0)
    for fn in APPLY.values():
        torch.testing.assert_close(fn(x, inv_freq=theta), fn(x, base=500000.0))
        assert (fn(x, inv_freq=theta) - fn(x)).abs().max() > 1e-3


def test_default_positions_are_arange_and_batch_dims_broadcast() -> None:
    x = torch.randn(2, 3, 7, 8, dtype=torch.float64)
    for fn in APPLY.values():
        out = fn(x)
        assert out.shape == x.shape
        torch.testing.assert_close(out, fn(x, torch.arange(7)))
        torch.testing.assert_close(out[1, 2], fn(x[1, 2]))


# --- accuracy and dtypes -----------------------------------------------------------------------


@pytest.mark.parametrize("convention", list(APPLY))
def test_float32_at_position_one_million_matches_float64(convention: str) -> None:
    fn = APPLY[convention]
    positions = torch.arange(1_000_000, 1_000_064)
    x = torch.randn(4, 64, 128)
    out = fn(x, positions)
    exact = fn(x.double(), positions)
    assert out.dtype == torch.float32
    assert (out.double() - exact).abs().max() < 1e-4
    # Meta's float32 outer product is visibly off there (about 0.03 rad): the test can fail.
    naive = torch.outer(positions.float(), rope_inv_freq(128).float())
    assert (naive.double() - rope_angles(positions, rope_inv_freq(128))).abs().max() > 0.01


@pytest.mark.parametrize("convention", list(APPLY))
@pytest.mark.parametrize(("dtype", "tol"), [(torch.float16, 4e-3), (torch.bfloat16, 3e-2)])
def test_half_precision_keeps_dtype_and_accuracy(
    convention: str, dtype: torch.dtype, tol: float
) -> None:
    x = torch.randn(2, 50, 32).to(dtype)
    positions = torch.arange(10_000, 10_050)
    out = APPLY[convention](x, positions)
    assert out.dtype == dtype
    exact = APPLY[convention](x.double(), positions)
    # error of one rounding of the output (relative to |x| <~ 4)
    assert (out.double() - exact).abs().max() < tol * 4


# --- the module --------------------------------------------------------------------------------


@pytest.mark.parametrize("convention", list(APPLY))
def test_module_matches_the_functions(convention: str) -> None:
    layer = RotaryEmbedding(16, convention=convention)
    q, k = torch.randn(2, 4, 9, 16), torch.randn(2, 1, 9, 16)  # fewer key heads broadcast fine
    q_rot, k_rot = layer(q, k)
    fn = APPLY[convention]
    torch.testing.assert_close(q_rot, fn(q), atol=1e-6, rtol=0)
    torch.testing.assert_close(k_rot, fn(k), atol=1e-6, rtol=0)
    positions = torch.arange(100, 109)
    q_rot, _ = layer(q, k, positions)
    torch.testing.assert_close(q_rot, fn(q, positions), atol=1e-5, rtol=0)


def test_module_caches_tables_per_length_device_and_dtype() -> None:
    layer = RotaryEmbedding(8)
    q = torch.randn(1, 5, 8)
    layer(q, q)
    assert layer.table_builds == 1
    first = layer.cos_sin(5, "cpu", torch.float32)
    layer(q, q)
    assert layer.table_builds == 1  # reused, not rebuilt
    # By default half inputs are rotated with the float32 table: no second table.
    assert layer.cos_sin(5, "cpu", torch.float16)[0].dtype == torch.float32
    assert layer.table_builds == 1
    hf_like = RotaryEmbedding(8, compute_dtype=None)  # tables in the inputs' own dtype
    hf_like(q, q)
    cos16 = hf_like.cos_sin(5, "cpu", torch.float16)[0]
    assert cos16.dtype == torch.float16 and hf_like.table_builds == 2
    assert torch.equal(cos16, first[0].to(torch.float16))
    layer.double()  # moving the module drops stale tables
    assert layer.inv_freq.dtype == torch.float64
    out, _ = layer(q.double(), q.double())
    torch.testing.assert_close(out, apply_rope_half(q.double()))


def test_module_half_precision_and_custom_spectrum() -> None:
    theta = rope_inv_freq(8, 500000.0) / 4
    layer = RotaryEmbedding(8, inv_freq=theta)
    q = torch.randn(3, 6, 8, dtype=torch.float16)
    q_rot, k_rot = layer(q, q)
    assert q_rot.dtype == k_rot.dtype == torch.float16
    exact = apply_rope_half(q.double(), inv_freq=theta)
    assert (q_rot.double() - exact).abs().max() < 1e-2


@pytest.mark.parametrize("convention", list(APPLY))
def test_module_attention_scaling_multiplies_the_output(convention: str) -> None:
    q = torch.randn(2, 6, 8, dtype=torch.float64)
    plain, _ = RotaryEmbedding(8, convention=convention)(q, q)
    scaled, _ = RotaryEmbedding(8, convention=convention, attention_scaling=1.25)(q, q)
    torch.testing.assert_close(scaled, 1.25 * plain)


def test_module_rejects_bad_inputs() -> None:
    layer = RotaryEmbedding(8)
    q = torch.randn(1, 4, 8)
    with pytest.raises(ValueError, match="dim = 8"):
        layer(torch.randn(1, 4, 6), torch.randn(1, 4, 6))
    with pytest.raises(ValueError, match="same seq length"):
        layer(q, torch.randn(1, 5, 8))
    with pytest.raises(TypeError, match="same dtype"):
        layer(q, q.double())
    with pytest.raises(ValueError, match=r"shape \(seq,\) or \(batch, seq\) with seq = 4"):
        layer(q, q, torch.arange(3))
    with pytest.raises(ValueError, match="convention must be one of"):
        RotaryEmbedding(8, convention="neox")
    with pytest.raises(ValueError, match="inv_freq must have length dim // 2 = 4"):
        RotaryEmbedding(8, inv_freq=torch.ones(3))


# --- the module stays exact: casts, stale caches, handed-out tables, empty inputs, gradients ------

CASTS = {
    "half": (lambda m: m.half(), torch.float16),
    "bfloat16": (lambda m: m.to(torch.bfloat16), torch.bfloat16),
    "float": (lambda m: m.double().float(), torch.float32),
}


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("cast", list(CASTS))
def test_casting_the_module_keeps_the_frequencies_float64(convention: str, cast: str) -> None:
    # Before the fix .half() rounded inv_freq to float16: at position 20 000 the cached path was
    # off by whole radians. A cast module must give bit for bit what a fresh module gives.
    to, dtype = CASTS[cast]
    seq = 20_001
    q = torch.randn(1, seq, 16, generator=torch.Generator().manual_seed(0)).to(dtype)
    layer = RotaryEmbedding(16, convention=convention)
    layer(q, q)  # fill the cache before the cast
    to(layer)
    assert layer.inv_freq.dtype == torch.float64
    torch.testing.assert_close(layer.inv_freq, rope_inv_freq(16), rtol=0, atol=0)
    fresh = RotaryEmbedding(16, convention=convention)
    assert torch.equal(layer(q, q)[0], fresh(q, q)[0])
    exact = APPLY[convention](q[..., -1:, :].double(), torch.tensor([seq - 1]))
    assert (layer(q, q)[0][..., -1:, :].double() - exact).abs().max() < 0.05


def test_assigning_or_editing_inv_freq_rebuilds_the_tables() -> None:
    q = torch.randn(2, 6, 8, dtype=torch.float64)
    doubled = rope_inv_freq(8) * 2
    layer = RotaryEmbedding(8)
    layer(q, q)
    layer.inv_freq = doubled.float()  # assigned: validated and kept in float64
    assert layer.inv_freq.dtype == torch.float64
    torch.testing.assert_close(layer(q, q)[0], apply_rope_half(q, inv_freq=doubled))
    layer = RotaryEmbedding(8)
    layer(q, q)
    layer.inv_freq.mul_(2)  # in place
    torch.testing.assert_close(layer(q, q)[0], apply_rope_half(q, inv_freq=doubled))
    layer = RotaryEmbedding(8)
    layer(q, q)
    layer.inv_freq.data.mul_(2)  # behind autograd's back, no version bump: reset by hand
    stale, _ = layer(q, q)
    assert not torch.allclose(stale, apply_rope_half(q, inv_freq=doubled))  # documented
    layer.reset_tables()
    torch.testing.assert_close(layer(q, q)[0], apply_rope_half(q, inv_freq=doubled))
    with pytest.raises(ValueError, match="inv_freq must have length dim // 2 = 4"):
        layer.inv_freq = torch.ones(3)
    with pytest.raises(TypeError, match=r"inv_freq must be a 1-D torch\.Tensor"):
        layer.inv_freq = [1.0, 2.0]


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_changing_attention_scaling_rebuilds_the_tables(convention: str) -> None:
    q = torch.randn(2, 6, 8, dtype=torch.float64)
    layer = RotaryEmbedding(8, convention=convention)
    plain, _ = layer(q, q)
    layer.attention_scaling = 1.5
    torch.testing.assert_close(layer(q, q)[0], 1.5 * plain)
    with pytest.raises(ValueError, match="attention_scaling must be a finite number > 0"):
        layer.attention_scaling = -1.0


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_cos_sin_hands_out_copies(convention: str) -> None:
    q = torch.randn(1, 5, 8, dtype=torch.float64)
    layer = RotaryEmbedding(8, convention=convention)
    before, _ = layer(q, q)
    for table in layer.cos_sin(5, "cpu", torch.float64):
        table.zero_()
    assert torch.equal(layer(q, q)[0], before)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"seq_len": 2.7}, TypeError, r"seq_len must be a non-negative integer, got 2\.7"),
        ({"seq_len": "5"}, TypeError, r"seq_len must be a non-negative integer"),
        ({"seq_len": -1}, ValueError, r"seq_len must be a non-negative integer, got -1"),
        ({"seq_len": None}, TypeError, r"seq_len must be a non-negative integer"),
        ({"seq_len": True}, TypeError, r"seq_len must be"),
        ({"seq_len": 2**70}, ValueError, r"seq_len must be at most"),
        ({"seq_len": 10**8}, ValueError, r"seq_len = 100000000 × dim = 8"),
        ({"seq_len": 3, "dtype": torch.int64}, TypeError, r"dtype must be a floating-point"),
        ({"seq_len": 3, "dtype": "float32"}, TypeError, r"dtype must be a floating-point"),
        ({"seq_len": 3, "device": "bogus"}, ValueError, r"device must be a torch.device"),
    ],
)
def test_cos_sin_validates_its_arguments(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        RotaryEmbedding(8).cos_sin(**kwargs)


@pytest.mark.parametrize("shape", [(0, 3, 8), (2, 0, 8), (0, 0, 8)])
@pytest.mark.parametrize("convention", CONVENTIONS)
def test_empty_batch_or_sequence_gives_an_empty_result(
    shape: tuple[int, ...], convention: str
) -> None:
    x = torch.zeros(shape)
    assert APPLY[convention](x).shape == shape
    q_rot, k_rot = RotaryEmbedding(8, convention=convention)(x, x)
    assert q_rot.shape == k_rot.shape == shape


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_backward_works_every_time_with_a_learned_spectrum(convention: str) -> None:
    q = torch.randn(2, 5, 8, dtype=torch.float64)
    theta = rope_inv_freq(8).requires_grad_(True)
    layer = RotaryEmbedding(8, inv_freq=theta, convention=convention)
    grads = []
    for _ in range(2):
        q_rot, k_rot = layer(q, q)
        (q_rot * k_rot).sum().backward()
        grads.append(theta.grad.clone())
        theta.grad = None
    torch.testing.assert_close(grads[0], grads[1])
    assert grads[0].abs().sum() > 0
    # The buffer itself may require grad too.
    layer = RotaryEmbedding(8, convention=convention)
    layer.inv_freq.requires_grad_(True)
    for _ in range(2):
        layer(q, q)[0].sum().backward()


# --- one growing table, indexed by positions (what generation needs) ----------------------------


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_decoding_4096_steps_builds_no_table_after_warm_up(convention: str) -> None:
    layer = RotaryEmbedding(16, convention=convention)
    x = torch.randn(1, 2, 1, 16, dtype=torch.float64)  # one token at a time
    for step in range(4096):  # warm-up: the table grows geometrically, 16, 32, …, 4096
        layer(x, x, offset=step)
    grown = layer.table_builds
    assert grown == 1 + 8  # log2(4096 / 16) doublings after the first table
    assert layer.capacity("cpu", torch.float64) == 4096
    layer.reserve(4096, "cpu", torch.float64)  # explicit positions index the reserved table
    assert layer.table_builds == grown  # the table already has 4 096 rows
    for step in range(4096):  # a second generation, with explicit positions this time
        out, _ = layer(x, x, torch.tensor([step]))
    assert layer.table_builds == grown  # 0 builds over 4 096 steps
    exact = APPLY[convention](x[0].double(), torch.tensor([4095]))
    torch.testing.assert_close(out[0], exact, atol=1e-12, rtol=0)


def test_reserve_then_decode_builds_once_and_lengths_do_not_churn() -> None:
    layer = RotaryEmbedding(8)
    layer.reserve(4096, "cpu", torch.float32)
    assert layer.table_builds == 1
    for length in range(1, 300):  # full-length calls of growing length reuse the one table
        q = torch.randn(1, length, 8)
        layer(q, q)
    q = torch.randn(1, 5, 8)
    layer(q, q, torch.tensor([4000, 3, 17, 4095, 0]))
    assert layer.table_builds == 1


@pytest.mark.parametrize("convention", ["half", "interleaved"])
def test_cos_and_sin_come_back_in_one_shape_laid_out_for_the_convention(convention: str) -> None:
    layer = RotaryEmbedding(8, convention=convention)
    cos, sin = layer.cos_sin(7, "cpu", torch.float64)
    ref_cos, ref_sin = rope_cos_sin(torch.arange(7), rope_inv_freq(8), torch.float64,
                                    convention=convention)
    assert cos.shape == sin.shape == (7, 8)
    torch.testing.assert_close(cos, ref_cos, atol=1e-15, rtol=0)
    torch.testing.assert_close(sin, ref_sin, atol=1e-15, rtol=0)


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_offset_is_the_positions_it_stands_for_and_fractional_positions_are_exact(
    convention: str,
) -> None:
    layer = RotaryEmbedding(8, convention=convention)
    q = torch.randn(2, 5, 8, dtype=torch.float64)
    by_offset, _ = layer(q, q, offset=37)
    by_positions, _ = layer(q, q, torch.arange(37, 42))
    assert torch.equal(by_offset, by_positions)
    torch.testing.assert_close(by_offset, APPLY[convention](q, torch.arange(37, 42)),
                               atol=1e-12, rtol=0)
    interpolated = torch.arange(5, dtype=torch.float64) / 4 - 1.0  # negative and fractional
    builds = layer.table_builds
    out, _ = layer(q, q, interpolated)
    assert layer.table_builds == builds + 1  # computed directly, counted
    torch.testing.assert_close(out, APPLY[convention](q, interpolated), atol=1e-12, rtol=0)
    with pytest.raises(ValueError, match="either positions or offset"):
        layer(q, q, torch.arange(5), offset=1)
    with pytest.raises(ValueError, match="offset must be a non-negative integer"):
        layer(q, q, offset=-1)


@settings(max_examples=40, deadline=None)
@given(positions=st.lists(st.integers(0, 3000), min_size=1, max_size=12))
def test_indexed_rows_equal_the_functional_rotation(positions: list[int]) -> None:
    layer = RotaryEmbedding(16, convention="half")
    x = torch.randn(len(positions), 16, dtype=torch.float64,
                    generator=torch.Generator().manual_seed(len(positions)))
    out, _ = layer(x, x, torch.tensor(positions))
    torch.testing.assert_close(out, apply_rope_half(x, torch.tensor(positions)),
                               atol=1e-12, rtol=0)


# --- bfloat16 inputs: which paths round once (chapter 6's table) --------------------------------


def test_bfloat16_paths_that_compute_in_float32_round_once() -> None:
    from posenc_lib import RotaryEmbedding, apply_rope_complex, apply_rope_half

    gen = torch.Generator().manual_seed(2)
    q = torch.randn(1, 4, 256, 64, generator=gen).bfloat16()
    half_ref = apply_rope_half(q.float()).bfloat16()
    inter_ref = apply_rope_interleaved(q.float()).bfloat16()
    # float32 arithmetic, one rounding at the end: bit-exact.
    assert torch.equal(apply_rope_half(q), half_ref)
    assert torch.equal(apply_rope_interleaved(q), inter_ref)
    # The complex product rounds once too, but its float32 bits differ: a handful of elements
    # cross a bfloat16 rounding boundary (one unit in the last place).
    for out in (apply_rope_complex(q), RotaryEmbedding(64, convention="complex")(q, q)[0]):
        assert (out != inter_ref).sum() < q.numel() / 10_000
        ulp = torch.finfo(torch.bfloat16).eps * inter_ref.double().abs().clamp_min(1e-30)
        assert ((out.double() - inter_ref.double()).abs() <= ulp * 1.01).all()
    # The module by default (float32 compute) rounds once: bit-exact like the functions.
    for convention, ref in (("half", half_ref), ("interleaved", inter_ref)):
        assert torch.equal(RotaryEmbedding(64, convention=convention)(q, q)[0], ref)
    # With compute_dtype=None it computes in bfloat16 (transformers' arithmetic): not bit-exact,
    # larger error.
    exact = apply_rope_half(q.double())
    for convention, ref in (("half", half_ref), ("interleaved", inter_ref)):
        out = RotaryEmbedding(64, convention=convention, compute_dtype=None)(q, q)[0]
        assert out.dtype == torch.bfloat16
        assert (out == ref).double().mean() < 0.9
        reference = exact if convention == "half" else apply_rope_interleaved(q.double())
        assert (out.double() - reference).abs().max() > 1.2 * (
            ref.double() - reference).abs().max()


@pytest.mark.parametrize("reserved", [0, 64])
@pytest.mark.parametrize("convention", ["half", "interleaved", "complex"])
def test_negative_integer_positions_are_refused_with_or_without_a_reserved_table(
    convention: str, reserved: int
) -> None:
    layer = RotaryEmbedding(8, convention=convention, max_positions=reserved)
    q = torch.randn(1, 3, 8, dtype=torch.float64)
    upper = "64\\)" if reserved else "∞\\)"
    for positions in (torch.tensor([-1, 0, 1]), torch.tensor([[0, 1, 2], [-3, 0, 1]])):
        with pytest.raises(ValueError, match=rf"positions must lie in \[0, {upper}, got -[13]"):
            layer(q, q, positions)
    with pytest.raises(ValueError, match="positions must lie in"):
        layer(q, q, offset=torch.tensor(-2))
    # float positions may be negative: the rotation by a negative angle, computed directly
    out, _ = layer(q, q, torch.tensor([-1.0, 0.0, 1.0], dtype=torch.float64))
    torch.testing.assert_close(out, APPLY[convention](q, torch.tensor([-1.0, 0.0, 1.0])),
                               atol=1e-12, rtol=0)
