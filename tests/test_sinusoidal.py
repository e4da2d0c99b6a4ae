"""The sinusoidal encoding: reference values, the shift law, the module."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_lib import (
    SinusoidalPositionalEncoding,
    sinusoidal_frequencies,
    sinusoidal_shift_matrix,
    sinusoidal_table,
)

even_dims = st.integers(min_value=1, max_value=32).map(lambda n: 2 * n)
bases = st.floats(min_value=2.0, max_value=1e6)


def test_pe_of_position_one_at_d4_matches_the_paper() -> None:
    # Vaswani et al.: [sin 1, cos 1, sin 0.01, cos 0.01]
    table = sinusoidal_table(2, 4, dtype=torch.float64)
    expected = torch.tensor([0.84147098, 0.54030231, 0.00999983, 0.99995000], dtype=torch.float64)
    torch.testing.assert_close(table[1], expected, atol=5e-9, rtol=0)


def test_position_zero_is_sin0_cos0_and_layout_is_interleaved() -> None:
    table = sinusoidal_table(10, 8, dtype=torch.float64)
    assert table.shape == (10, 8)
    assert table[0].tolist() == [0.0, 1.0] * 4
    # column 0 is sin(p), column 1 is cos(p): interleaved, not concatenated
    p = torch.arange(10, dtype=torch.float64)
    torch.testing.assert_close(table[:, 0], p.sin(), atol=1e-15, rtol=0)
    torch.testing.assert_close(table[:, 1], p.cos(), atol=1e-15, rtol=0)
    # the slowest pair has ω = base^(-6/8)
    torch.testing.assert_close(table[:, 6], (p * 10000.0 ** (-6 / 8)).sin(), atol=1e-15, rtol=0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_dtype_is_respected_and_values_are_rounded_from_float64(dtype: torch.dtype) -> None:
    table = sinusoidal_table(50, 16, dtype=dtype)
    exact = sinusoidal_table(50, 16, dtype=torch.float64)
    assert table.dtype == dtype
    assert torch.equal(table, exact.to(dtype))


def test_large_positions_stay_accurate_in_float32() -> None:
    positions = torch.arange(1_000_000, 1_000_016)
    table = sinusoidal_table(16, 64, positions=positions)
    exact = sinusoidal_table(16, 64, positions=positions, dtype=torch.float64)
    assert (table.double() - exact).abs().max() < 1e-6
    # what a float32 angle computation would give: visibly wrong (> 1e-3)
    naive_angles = positions.float()[:, None] * sinusoidal_frequencies(64, dtype=torch.float32)
    assert (naive_angles.sin().double() - exact[:, 0::2]).abs().max() > 1e-3


def test_norm_of_every_row_is_sqrt_half_dim() -> None:
    table = sinusoidal_table(300, 32, dtype=torch.float64)
    torch.testing.assert_close(table.norm(dim=-1), torch.full((300,), 4.0, dtype=torch.float64))


@given(
    p=st.floats(min_value=-500, max_value=500),
    k=st.floats(min_value=-500, max_value=500),
    dim=even_dims,
    base=bases,
)
def test_shift_law_pe_of_p_plus_k_is_m_k_times_pe_p(
    p: float, k: float, dim: int, base: float
) -> None:
    def pe(position: float) -> torch.Tensor:
        at = torch.tensor([position], dtype=torch.float64)
        return sinusoidal_table(1, dim, base, dtype=torch.float64, positions=at)[0]

    torch.testing.assert_close(sinusoidal_shift_matrix(k, dim, base) @ pe(p), pe(p + k),
                               atol=1e-9, rtol=0)


@given(k=st.floats(min_value=-100, max_value=100), dim=even_dims)
def test_shift_matrix_is_a_rotation(k: float, dim: int) -> None:
    m = sinusoidal_shift_matrix(k, dim)
    torch.testing.assert_close(m.T @ m, torch.eye(dim, dtype=torch.float64), atol=1e-12, rtol=0)
    # M(k) M(-k) = I: shifting forward then back is the identity
    torch.testing.assert_close(m @ sinusoidal_shift_matrix(-k, dim),
                               torch.eye(dim, dtype=torch.float64), atol=1e-12, rtol=0)


def test_exp_log_and_power_frequencies_agree_in_float64_but_not_bitwise_in_float32() -> None:
    power = sinusoidal_frequencies(512, method="power")
    exp_log = sinusoidal_frequencies(512, method="exp_log")
    torch.testing.assert_close(power, exp_log, rtol=1e-13, atol=0)
    p32 = sinusoidal_frequencies(512, method="power", dtype=torch.float32)
    e32 = sinusoidal_frequencies(512, method="exp_log", dtype=torch.float32)
    rel = ((p32.double() - e32.double()).abs() / power).max().item()
    assert 0 < rel < 1e-5  # they differ by a few float32 ulps, no more
    assert power[0] == 1.0 and math.isclose(power[-1].item(), 10000.0 ** (-510 / 512))


def test_positions_argument_selects_rows() -> None:
    full = sinusoidal_table(20, 8)
    picked = sinusoidal_table(3, 8, positions=torch.tensor([4, 0, 19]))
    torch.testing.assert_close(picked, full[[4, 0, 19]], atol=1e-7, rtol=0)


def test_empty_table() -> None:
    assert sinusoidal_table(0, 6).shape == (0, 6)


def test_module_adds_the_table_and_keeps_dtype() -> None:
    module = SinusoidalPositionalEncoding(16, max_len=64)
    x = torch.randn(3, 10, 16)
    out = module(x)
    torch.testing.assert_close(out, x + sinusoidal_table(10, 16), atol=1e-6, rtol=0)
    half = module(x.to(torch.bfloat16))
    assert half.dtype == torch.bfloat16
    # zero embeddings give back the table itself
    torch.testing.assert_close(module(torch.zeros(1, 64, 16, dtype=torch.float64))[0],
                               sinusoidal_table(64, 16, dtype=torch.float64))


def test_module_table_is_not_in_the_state_dict() -> None:
    assert "pe" not in SinusoidalPositionalEncoding(8).state_dict()


def test_module_dropout_applies_only_in_training() -> None:
    module = SinusoidalPositionalEncoding(8, dropout=0.5, max_len=32)
    x = torch.zeros(4, 32, 8)
    module.eval()
    torch.testing.assert_close(module(x), x + sinusoidal_table(32, 8))
    module.train()
    torch.manual_seed(0)
    out = module(x)
    zeros = (out == 0).float().mean().item()
    assert 0.3 < zeros < 0.7  # about half of the entries dropped
    kept = out != 0
    # kept entries are scaled by 1/(1-p) = 2
    torch.testing.assert_close(out[kept], 2 * (x + sinusoidal_table(32, 8)).expand_as(out)[kept])


def test_module_rejects_too_long_sequences_and_wrong_dim() -> None:
    module = SinusoidalPositionalEncoding(8, max_len=10)
    with pytest.raises(ValueError, match=r"0 \+ 11.*max_len = 10"):
        module(torch.zeros(1, 11, 8))
    with pytest.raises(ValueError, match="dim = 8"):
        module(torch.zeros(1, 5, 6))
    with pytest.raises(TypeError, match="x must have a floating-point dtype"):
        module(torch.zeros(1, 5, 8, dtype=torch.int64))


def test_complex_form_is_cos_plus_i_sin_and_shifts_by_multiplication() -> None:
    from posenc_lib.sinusoidal import sinusoidal_complex

    z = sinusoidal_complex(50, 16, 500.0)
    table = sinusoidal_table(50, 16, 500.0, dtype=torch.float64)
    torch.testing.assert_close(z.real, table[:, 1::2])
    torch.testing.assert_close(z.imag, table[:, 0::2])
    step = torch.polar(torch.ones(8, dtype=torch.float64), sinusoidal_frequencies(16, 500.0))
    torch.testing.assert_close(z[1:], z[:-1] * step)
    # the storage-order reading (sin + i·cos) is i·e^{−ipθ}, not e^{ipθ}
    stored = torch.view_as_complex(table.reshape(50, 8, 2).contiguous())
    torch.testing.assert_close(stored, 1j * z.conj())
    with pytest.raises(ValueError, match="dim"):
        sinusoidal_complex(3, 5)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**16), k=st.floats(-500, 500))
def test_pair_multiplications_commute_with_every_shift(seed: int, k: float) -> None:
    from posenc_lib.sinusoidal import pair_multiplication_matrix

    g = torch.Generator().manual_seed(seed)
    w = torch.randn(4, generator=g, dtype=torch.complex128)
    a = pair_multiplication_matrix(w)
    m = sinusoidal_shift_matrix(k, 8)
    torch.testing.assert_close(a @ m, m @ a, atol=1e-12, rtol=0)
    x = torch.randn(4, generator=g, dtype=torch.complex128)
    torch.testing.assert_close(
        a @ torch.view_as_real(x).flatten(), torch.view_as_real(w * x).flatten()
    )


def test_pair_multiplication_matrix_validates() -> None:
    from posenc_lib.sinusoidal import pair_multiplication_matrix

    with pytest.raises(TypeError, match="weights"):
        pair_multiplication_matrix([1.0])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="weights"):
        pair_multiplication_matrix(torch.zeros(2, 2))
    with pytest.raises(ValueError, match="finite"):
        pair_multiplication_matrix(torch.tensor([float("nan")]))


def test_module_casts_keep_the_table_in_float64() -> None:
    module = SinusoidalPositionalEncoding(16, max_len=32)
    module.to(torch.bfloat16)
    assert module.pe.dtype == torch.float64
    x = torch.zeros(1, 32, 16)
    assert torch.equal(module(x)[0], sinusoidal_table(32, 16))  # exact float32 table
    module.half()
    assert module.pe.dtype == torch.float64
    assert module(x.half()).dtype == torch.float16


def test_module_offset_is_the_position_of_the_first_row():
    # A decoding step with a KV cache: one new token at position 7 gets PE(7), not PE(0).
    module = SinusoidalPositionalEncoding(16, max_len=32)
    x = torch.zeros(2, 1, 16, dtype=torch.float64)
    table = sinusoidal_table(32, 16, dtype=torch.float64)
    assert torch.equal(module(x, offset=7)[0, 0], table[7])
    assert not torch.allclose(module(x, offset=7)[0, 0], table[0])
    # The whole sequence in one call equals the same rows fed in two chunks.
    full = torch.randn(1, 10, 16, dtype=torch.float64)
    chunks = torch.cat([module(full[:, :6]), module(full[:, 6:], offset=6)], dim=1)
    assert torch.equal(module(full), chunks)
    with pytest.raises(ValueError, match=r"offset \+ seq = 30 \+ 3.*max_len = 32"):
        module(torch.zeros(1, 3, 16), offset=30)
    with pytest.raises(ValueError, match="offset"):
        module(x, offset=-1)
