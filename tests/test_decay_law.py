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
