"""RoFormer's decay bound, the sinusoid similarity curve, wavelengths."""

from __future__ import annotations

import cmath
import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc_lib import (
    pi_inv_freq,
    rope_decay_bound,
    rope_inv_freq,
    sinusoidal_similarity,
    sinusoidal_table,
    wavelengths,
)


def _bound_by_hand(r: float, theta: list[float]) -> float:
    """The bound as written in the paper, with plain Python complex numbers."""
    partial, total = 0j, 0.0
    for t in theta:
        partial += cmath.exp(1j * r * t)
        total += abs(partial)
    return total / len(theta)


def test_roformer_decay_values_at_d128() -> None:
    bound = rope_decay_bound(128, 10000.0, 256)
    assert bound.shape == (257,) and bound.dtype == torch.float64
    expected = {0: 32.5, 1: 31.53816614, 2: 28.95598847, 5: 20.84535778, 10: 17.95413714,
                50: 12.62945249, 100: 10.22732995, 200: 7.24477075, 256: 6.54309732}
    for r, value in expected.items():
        assert bound[r].item() == pytest.approx(value, abs=1e-8), r


def test_decay_trend_not_strict_monotonicity() -> None:
    bound = rope_decay_bound(128)
    windows = [bound[:50].mean(), bound[50:150].mean(), bound[150:].mean()]
    assert windows[0] > windows[1] > windows[2]
    assert bool((bound[1:] <= bound[0]).all())
    assert bool((bound[1:] > bound[:-1]).any())  # it oscillates: some steps go up


@given(n=st.integers(1, 64))
def test_bound_at_zero_is_half_of_d_over_2_plus_1(n: int) -> None:
    assert rope_decay_bound(2 * n, max_distance=0).item() == pytest.approx((n + 1) / 2, rel=1e-14)


@given(dim=st.sampled_from([4, 16, 64]), r=st.integers(0, 3000), base=st.floats(10.0, 1e6))
def test_bound_matches_the_formula(dim: int, r: int, base: float) -> None:
    theta = rope_inv_freq(dim, base).tolist()
    assert rope_decay_bound(dim, base, r)[r].item() == pytest.approx(
        _bound_by_hand(r, theta), abs=1e-9
    )


def test_chunked_evaluation_is_seamless() -> None:
    long = rope_decay_bound(32, max_distance=9000)
    assert long.shape == (9001,)
    assert long[4095:4098].tolist() == pytest.approx(
        [_bound_by_hand(r, rope_inv_freq(32).tolist()) for r in (4095, 4096, 4097)], abs=1e-9
    )


def test_bound_with_a_scaled_spectrum_decays_slower() -> None:
    plain = rope_decay_bound(128, max_distance=512)
    interpolated = rope_decay_bound(128, max_distance=512, inv_freq=pi_inv_freq(128, 1e4, 4.0))
    # PI by 4 stretches distances: f_PI(4r) = f(r)
    torch.testing.assert_close(interpolated[::4], plain[:129], atol=1e-10, rtol=0)


def test_sinusoidal_similarity_values() -> None:
    sim = sinusoidal_similarity(8, max_distance=3)
    assert sim.shape == (7,)
    assert sim[3].item() == 4.0  # d/2 at offset 0
    omega = [10000.0 ** (-2 * i / 8) for i in range(4)]
    assert sim[5].item() == pytest.approx(sum(math.cos(2 * w) for w in omega), abs=1e-14)


@given(dim=st.integers(1, 32).map(lambda n: 2 * n), base=st.floats(2.0, 1e5))
def test_sinusoidal_similarity_is_symmetric(dim: int, base: float) -> None:
    sim = sinusoidal_similarity(dim, base, 40)
    torch.testing.assert_close(sim, sim.flip(0), atol=1e-12, rtol=0)
    assert bool((sim <= dim / 2 + 1e-12).all())


@given(p=st.integers(0, 400), dim=st.sampled_from([4, 16, 128]))
def test_sinusoidal_similarity_is_independent_of_position(p: int, dim: int) -> None:
    table = sinusoidal_table(p + 41, dim, dtype=torch.float64)
    dots = table[p + 1 : p + 41] @ table[p]  # offsets 1 … 40 from p
    torch.testing.assert_close(dots, sinusoidal_similarity(dim, max_distance=40)[41:],
                               atol=1e-10, rtol=0)


def test_wavelengths() -> None:
    lam = wavelengths(rope_inv_freq(128))
    assert lam[0].item() == pytest.approx(2 * math.pi)
    assert lam[-1].item() == pytest.approx(2 * math.pi * 10000.0 ** (126 / 128), rel=1e-14)
    assert bool((lam[1:] > lam[:-1]).all())
    with pytest.raises(ValueError, match="inv_freq must be > 0"):
        wavelengths(torch.tensor([1.0, 0.0]))
