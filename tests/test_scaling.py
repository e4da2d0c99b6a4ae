"""Context-extension spectra: PI, NTK, dynamic NTK, YaRN, Llama 3.1, ABF."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc_lib import (
    abf_inv_freq,
    dynamic_ntk_inv_freq,
    llama3_inv_freq,
    ntk_inv_freq,
    pi_inv_freq,
    rope_inv_freq,
    wavelengths,
    yarn_correction_range,
    yarn_inv_freq,
)

dims = st.integers(min_value=2, max_value=64).map(lambda n: 2 * n)
factors = st.floats(min_value=1.0, max_value=64.0)


def test_pi_divides_every_frequency() -> None:
    torch.testing.assert_close(pi_inv_freq(64, 10000.0, 4.0), rope_inv_freq(64) / 4, rtol=0,
                               atol=0)


def test_abf_is_a_larger_base() -> None:
    torch.testing.assert_close(abf_inv_freq(128), rope_inv_freq(128, 500000.0), rtol=0, atol=0)
    assert abf_inv_freq(128)[-1] < rope_inv_freq(128)[-1] / 40  # the slowest pair turns ~50x slower


@given(dim=dims, factor=factors)
def test_ntk_keeps_the_fastest_pair_and_interpolates_the_slowest(dim: int, factor: float) -> None:
    theta, ntk = rope_inv_freq(dim), ntk_inv_freq(dim, 10000.0, factor)
    assert ntk[0].item() == 1.0
    assert ntk[-1].item() == pytest.approx(theta[-1].item() / factor, rel=1e-12)
    assert bool((ntk <= theta * (1 + 1e-15)).all())  # no pair speeds up


@given(dim=dims, factor=factors, seq=st.integers(0, 4096))
def test_dynamic_ntk_is_plain_rope_within_the_training_length(
    dim: int, factor: float, seq: int
) -> None:
    assert torch.equal(dynamic_ntk_inv_freq(dim, 10000.0, factor, seq, 4096), rope_inv_freq(dim))


def test_dynamic_ntk_beyond_the_training_length() -> None:
    # at seq = 2·max with factor 2 the effective factor is 2·2 − 1 = 3
    torch.testing.assert_close(dynamic_ntk_inv_freq(64, 10000.0, 2.0, 8192, 4096),
                               ntk_inv_freq(64, 10000.0, 3.0), rtol=1e-14, atol=0)
    # and it grows with the length
    a = dynamic_ntk_inv_freq(64, 10000.0, 2.0, 5000, 4096)[-1]
    b = dynamic_ntk_inv_freq(64, 10000.0, 2.0, 20000, 4096)[-1]
    assert b < a < rope_inv_freq(64)[-1]


def test_yarn_reference_configuration() -> None:
    # d = 64, b = 1e4, s = 4, L = 2048: i(32) = 8.06 -> 8, i(1) = 20.11 -> 21
    assert yarn_correction_range(64, 10000.0, 2048) == (8.0, 21.0)
    inv, mscale = yarn_inv_freq(64, 10000.0, 4.0, 2048)
    theta = rope_inv_freq(64)
    assert mscale == pytest.approx(0.1 * math.log(4.0) + 1.0) == pytest.approx(1.1386294361)
    torch.testing.assert_close(inv[:9], theta[:9], rtol=0, atol=0)  # extrapolated
    torch.testing.assert_close(inv[21:], theta[21:] / 4, rtol=1e-15, atol=0)  # interpolated
    ramp = (14 - 8) / (21 - 8)
    assert inv[14].item() == pytest.approx(theta[14].item() * (ramp / 4 + 1 - ramp), rel=1e-14)


@given(dim=dims, factor=factors, length=st.sampled_from([512, 2048, 4096, 8192]))
def test_yarn_stays_between_interpolation_and_extrapolation(
    dim: int, factor: float, length: int
) -> None:
    inv, mscale = yarn_inv_freq(dim, 10000.0, factor, length)
    theta = rope_inv_freq(dim)
    assert bool((inv <= theta * (1 + 1e-12)).all())
    assert bool((inv >= theta / factor * (1 - 1e-12)).all())
    assert mscale >= 1.0
    ratio = inv / theta  # goes monotonically from 1 down to 1/factor
    assert bool((ratio[1:] <= ratio[:-1] + 1e-12).all())


def test_yarn_with_factor_one_is_plain_rope() -> None:
    inv, mscale = yarn_inv_freq(32, 10000.0, 1.0, 4096)
    torch.testing.assert_close(inv, rope_inv_freq(32), rtol=1e-15, atol=0)
    assert mscale == 1.0


def test_yarn_truncate_false_uses_the_exact_range() -> None:
    low, high = yarn_correction_range(64, 10000.0, 2048, truncate=False)
    assert low == pytest.approx(64 * math.log(2048 / (32 * 2 * math.pi)) / (2 * math.log(1e4)))
    assert 8 < low < 9 and 20 < high < 21
    a, _ = yarn_inv_freq(64, 10000.0, 4.0, 2048, truncate=False)
    b, _ = yarn_inv_freq(64, 10000.0, 4.0, 2048)
    assert (a - b).abs().max() > 1e-4


def test_llama3_reference_configuration() -> None:
    # Llama 3.1: s = 8, low 1, high 4, L = 8192, base 5e5, d = 128
    inv = llama3_inv_freq(128, 500000.0, 8.0, 8192, 1.0, 4.0)
    theta = rope_inv_freq(128, 500000.0)
    lam = wavelengths(theta)
    high = lam < 8192 / 4
    low = lam > 8192 / 1
    mid = ~high & ~low
    torch.testing.assert_close(inv[high], theta[high], rtol=0, atol=0)
    torch.testing.assert_close(inv[low], theta[low] / 8, rtol=0, atol=0)
    # λ_i = 2π·b^(2i/d) < 2048 for i <= 28, > 8192 for i >= 35
    assert high.nonzero().max() == 28 and low.nonzero().min() == 35 and int(mid.sum()) == 6
    s = (8192 / lam[mid] - 1) / (4 - 1)
    torch.testing.assert_close(inv[mid], (1 - s) * theta[mid] / 8 + s * theta[mid])
    # the blend is continuous with the outer regions: ratios stay between 1/8 and 1
    ratio = inv / theta
    assert bool((ratio[1:] <= ratio[:-1] + 1e-15).all())


def test_llama3_factor_one_is_identity() -> None:
    torch.testing.assert_close(llama3_inv_freq(64, 500000.0, 1.0, 8192), rope_inv_freq(64, 5e5),
                               rtol=1e-15, atol=0)
