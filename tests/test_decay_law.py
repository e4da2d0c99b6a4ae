"""The cosine integral and the closed-form decay law of the sinusoidal similarity."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_lib import sinusoidal_similarity
from posenc_lib.decay_law import (
    EULER_GAMMA,
    cosine_integral,
    similarity_limit,
    similarity_log_law,
)

# Ci(x) to 16 digits (mpmath.ci), on both sides of the series / continued-fraction switch at 2.
KNOWN = {
    1e-8: -17.843465079050834,
    0.5: -0.1777840788066129,
    1.0: 0.33740392290096816,
    2.0: 0.422980828774865,
    2.0001: 0.4229600196800707,
    5.0: -0.19002974965664388,
    10.0: -0.04545643300445537,
    100.0: -0.005148825142610492,
    1e5: 3.5758791572935135e-07,
}


def test_cosine_integral_matches_known_values() -> None:
    x = torch.tensor(list(KNOWN), dtype=torch.float64)
    expected = torch.tensor(list(KNOWN.values()), dtype=torch.float64)
    assert torch.allclose(cosine_integral(x), expected, rtol=1e-14, atol=1e-17)


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=0.05, max_value=200.0))
def test_derivative_of_ci_is_cos_over_x(x: float) -> None:
    h = 1e-5 * x
    slope = (cosine_integral(x + h) - cosine_integral(x - h)).item() / (2 * h)
    assert slope == pytest.approx(math.cos(x) / x, abs=1e-7)


def test_limit_is_the_large_d_similarity_and_the_log_law_its_middle() -> None:
    k = torch.tensor([20.0, 100.0, 500.0], dtype=torch.float64)
    limit = similarity_limit(k)
    total = sinusoidal_similarity(2**16, 10000.0, max_distance=500)[500:] / 2**15
    assert torch.allclose(limit, total[[20, 100, 500]], atol=2e-4)
    law = similarity_log_law(k)
    assert torch.allclose(law, 1 - (torch.log(k) + EULER_GAMMA) / math.log(1e4))
    assert (law - limit).abs().max() < 5e-3  # 1 ≪ k ≪ b
    # a larger base decays more slowly, by the factor ln b
    assert similarity_log_law(100.0, 1e6) > similarity_log_law(100.0, 1e4)


def test_bad_inputs_are_rejected() -> None:
    with pytest.raises(ValueError, match="x"):
        cosine_integral(0.0)
    with pytest.raises(TypeError, match="x"):
        cosine_integral("1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="k"):
        similarity_limit(torch.tensor([1.0, -1.0]))
    with pytest.raises(ValueError, match="base"):
        similarity_log_law(5.0, base=1.0)


def test_sum_deviation_over_every_offset() -> None:
    from posenc_lib import similarity_sum_deviation

    # d = 512, b = 10⁴: close to the integral up to r = 100, then a wobble that grows with r.
    near = similarity_sum_deviation(512, 10000.0, 5, 100)
    mid = similarity_sum_deviation(512, 10000.0, 100, 500)
    far = similarity_sum_deviation(512, 10000.0, 1500, 2500)
    assert near.max == pytest.approx(0.00434, abs=1e-4)
    assert mid.max == pytest.approx(0.03675, abs=1e-4) and mid.at == 424
    assert mid.rms == pytest.approx(0.01483, abs=1e-4)
    assert far.max == pytest.approx(0.06343, abs=1e-4)
    assert far.rms == pytest.approx(0.02537, abs=1e-4)
    assert abs(mid.mean) < mid.rms / 5
    # against the log law, r = 10 … 500: the deviation shrinks as d grows
    law = {d: similarity_sum_deviation(d, 10000.0, 10, 500, reference="law").max
           for d in (64, 128, 512)}
    assert law[64] == pytest.approx(0.2053, abs=1e-3)
    assert law[128] == pytest.approx(0.1275, abs=1e-3)
    assert law[512] == pytest.approx(0.03668, abs=1e-4)
    # the max is attained at `at`, straight from the sum
    theta = 10000.0 ** (-torch.arange(0, 512, 2, dtype=torch.float64) / 512)
    at = torch.tensor([float(mid.at)], dtype=torch.float64)
    direct = torch.cos(at[:, None] * theta).mean(-1) - similarity_limit(at)
    assert abs(direct.item()) == pytest.approx(mid.max, rel=1e-12)


@settings(max_examples=20, deadline=None)
@given(st.sampled_from([8, 32, 128]), st.integers(1, 300), st.integers(0, 200))
def test_sum_deviation_statistics_are_consistent(dim: int, r_min: int, width: int) -> None:
    from posenc_lib import similarity_sum_deviation

    dev = similarity_sum_deviation(dim, 10000.0, r_min, r_min + width)
    assert abs(dev.mean) <= dev.rms + 1e-15 and dev.rms <= dev.max + 1e-15
    assert r_min <= dev.at <= r_min + width


def test_sum_deviation_rejects_bad_input() -> None:
    from posenc_lib import similarity_sum_deviation

    with pytest.raises(ValueError, match="dim"):
        similarity_sum_deviation(7)
    with pytest.raises(ValueError, match="r_max"):
        similarity_sum_deviation(64, 10000.0, 10, 5)
    with pytest.raises(ValueError, match="r_max"):
        similarity_sum_deviation(64, 10000.0, 1, 10**6)
    with pytest.raises(ValueError, match="r_min"):
        similarity_sum_deviation(64, 10000.0, 0, 5)
    with pytest.raises(ValueError, match="reference"):
        similarity_sum_deviation(64, reference="sum")
    with pytest.raises(ValueError, match="base"):
        similarity_sum_deviation(64, base=1.0)
    with pytest.raises(TypeError, match="r_min"):
        similarity_sum_deviation(64, 10000.0, 1.5, 5)  # type: ignore[arg-type]
