"""Euler's formula: partial sums of the exponential series, rotation by multiplication."""

from __future__ import annotations

import cmath
import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc_lib import euler_partial_sums, rotate_complex
from posenc_lib.euler import EULER_REFUSE_BOUND, EULER_WARN_BOUND, euler_rounding_bound

angles = st.floats(min_value=-10.0, max_value=10.0)


def test_first_partial_sums() -> None:
    sums = euler_partial_sums(2.0, 4)
    assert sums.dtype == torch.complex128 and sums.shape == (4,)
    # 1, 1 + 2i, 1 + 2i − 2, 1 + 2i − 2 − (8/6)i
    expected = [1 + 0j, 1 + 2j, -1 + 2j, -1 + (2 - 8 / 6) * 1j]
    for got, want in zip(sums.tolist(), expected, strict=True):
        assert got == pytest.approx(want, abs=1e-15)


@given(theta=angles)
def test_partial_sums_converge_to_cos_plus_i_sin(theta: float) -> None:
    last = euler_partial_sums(theta, 60)[-1].item()
    assert last.real == pytest.approx(math.cos(theta), abs=1e-12)
    assert last.imag == pytest.approx(math.sin(theta), abs=1e-12)


def test_real_parts_are_the_cosine_series() -> None:
    sums = euler_partial_sums(1.0, 6)
    # even terms: 1 − 1/2 + 1/24 ; odd terms: 1 − 1/6 + 1/120
    assert sums[4].real.item() == pytest.approx(1 - 1 / 2 + 1 / 24)
    assert sums[5].imag.item() == pytest.approx(1 - 1 / 6 + 1 / 120)
    # far from convergence with few terms: the spiral has not reached the circle yet
    assert abs(abs(euler_partial_sums(6.0, 5)[-1].item()) - 1) > 1


def test_quarter_turn() -> None:
    assert rotate_complex(1 + 0j, math.pi / 2).item() == pytest.approx(1j, abs=1e-15)
    assert rotate_complex(1j, math.pi / 2).item() == pytest.approx(-1, abs=1e-15)


@given(re=angles, im=angles, a=angles, b=angles)
def test_rotation_preserves_modulus_and_composes(re: float, im: float, a: float, b: float) -> None:
    z = complex(re, im)
    once = rotate_complex(z, a)
    assert abs(once.item()) == pytest.approx(abs(z), abs=1e-12)
    twice = rotate_complex(once, b).item()
    assert twice == pytest.approx(rotate_complex(z, a + b).item(), abs=1e-12)
    assert twice == pytest.approx(z * cmath.exp(1j * (a + b)), abs=1e-12)


def test_tensors_broadcast_and_keep_precision() -> None:
    z = torch.tensor([1 + 0j, 0 + 1j], dtype=torch.complex64)
    theta = torch.tensor([[0.0], [math.pi]])
    out = rotate_complex(z, theta)
    assert out.shape == (2, 2) and out.dtype == torch.complex64
    torch.testing.assert_close(out[1], -z, atol=1e-6, rtol=0)
    real = rotate_complex(torch.tensor([2.0], dtype=torch.float64), math.pi / 2)
    assert real.dtype == torch.complex128
    assert real.item() == pytest.approx(2j, abs=1e-15)


def test_errors() -> None:
    with pytest.raises(ValueError, match="n_terms must be a positive integer"):
        euler_partial_sums(1.0, 0)
    with pytest.raises(TypeError, match="n_terms"):
        euler_partial_sums(1.0, 2.5)
    with pytest.raises(ValueError, match="theta must be a finite real number"):
        euler_partial_sums(float("nan"), 3)
    with pytest.raises(TypeError, match="z must be"):
        rotate_complex("1", 0.0)
    with pytest.raises(TypeError, match="theta must be real"):
        rotate_complex(1.0, torch.tensor([1j]))
    with pytest.raises(ValueError, match="theta of shape"):
        rotate_complex(torch.ones(3, dtype=torch.complex128), torch.ones(2))


def test_rounding_bound_tracks_the_real_error_of_the_sums() -> None:
    import warnings

    for theta in (10.0, 15.0, 20.0, 25.0, 30.0):
        bound = euler_rounding_bound(theta, 200)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            last = euler_partial_sums(theta, 200)[-1].item()
        err = abs(last - cmath.exp(1j * theta))
        assert bound / 30 < err < 30 * bound  # the bound is the size of the error
    # the largest term of e^10: 10^10/10! = 2755.73…
    assert euler_rounding_bound(10.0, 200) == pytest.approx(
        torch.finfo(torch.float64).eps * 10**10 / math.factorial(10), rel=1e-9
    )
    # few terms: only the terms actually added count
    assert euler_rounding_bound(40.0, 3) == pytest.approx(
        torch.finfo(torch.float64).eps * 40**2 / 2, rel=1e-9
    )


def test_cancellation_warns_then_refuses() -> None:
    with pytest.warns(RuntimeWarning, match="reduce theta modulo 2"):
        euler_partial_sums(25.0, 200)
    with pytest.raises(ValueError, match="cancellation"):
        euler_partial_sums(40.0, 200)
    with pytest.raises(ValueError, match="cancellation"):
        euler_partial_sums(-100.0, 200)
    assert euler_partial_sums(40.0, 5).shape == (5,)  # far from converged, but exact enough
    assert EULER_WARN_BOUND < EULER_REFUSE_BOUND
    with pytest.raises(ValueError, match="n_terms"):
        euler_partial_sums(1.0, 10**6)


def test_rounding_scale_is_a_scale_not_a_bound() -> None:
    # At θ = 30 the measured error of 200 terms exceeds ε·M (the rounding errors of many large terms
    # add up) but stays within a factor of the number of terms.
    from posenc_lib.euler import euler_rounding_scale

    with pytest.warns(RuntimeWarning):
        error = abs(
            euler_partial_sums(30.0, 200)[-1].item() - complex(math.cos(30.0), math.sin(30.0))
        )
    scale = euler_rounding_scale(30.0, 200)
    assert euler_rounding_bound is euler_rounding_scale
    assert 1e-8 < error < 200 * scale


_COMPLEX32_PROBE = """
import json, warnings, torch
def caught(make):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = make()
    return result, [str(w.message) for w in seen]
half, on_view = caught(
    lambda: torch.view_as_complex(torch.tensor([[1.0, 2.0]], dtype=torch.float16))
)
square, on_first = caught(lambda: half * half)  # (1 + 2i)^2 = -3 + 4i, a new complex32 tensor
_, on_second = caught(lambda: half * half)
print(json.dumps({"dtypes": [str(half.dtype), str(square.dtype)],
                  "square": [square.item().real, square.item().imag],
                  "view": on_view, "first": on_first, "second": on_second}))
"""


def test_complex32_pitfall_as_chapter_4_states_it() -> None:
    # Chapter 4's pitfall: float16 views as complex32 silently; the first new complex32 tensor warns
    # "ComplexHalf support is experimental", once per process (so a fresh process is watched).
    import json
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-c", _COMPLEX32_PROBE],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    seen = json.loads(run.stdout)
    assert seen["dtypes"] == ["torch.complex32", "torch.complex32"]
    assert seen["square"] == [-3.0, 4.0]
    assert seen["view"] == [] and seen["second"] == []
    assert any("ComplexHalf support is experimental" in m for m in seen["first"])
