"""Euler's formula for the complex-numbers chapter: ``e^{iθ} = cos θ + i sin θ``.

The Taylor series ``Σ_k (iθ)^k / k!`` splits into the series of ``cos θ`` (even ``k``) and
``i sin θ`` (odd ``k``); its partial sums spiral onto the unit circle. Multiplying by ``e^{iθ}``
rotates a complex number by ``θ``, which is RoPE in two dimensions.

In floating point the series has a limit of its own: for a large ``|θ|`` the terms grow to about
``e^{|θ|}/√(2π|θ|)`` before they shrink, and adding numbers that large to reach a sum of size 1
cancels away every correct digit (:func:`euler_rounding_scale`).
"""

from __future__ import annotations

import math
import numbers
import warnings

import torch

from ._validation import check_int, check_real

__all__ = [
    "EULER_REFUSE_BOUND",
    "EULER_WARN_BOUND",
    "euler_partial_sums",
    "euler_rounding_bound",
    "euler_rounding_scale",
    "rotate_complex",
]

#: :func:`euler_partial_sums` warns (``RuntimeWarning``) above this rounding bound ...
EULER_WARN_BOUND = 1e-8
#: ... and refuses (``ValueError``) above this one: the sums would have no correct digit left.
EULER_REFUSE_BOUND = 1e-2


def euler_rounding_scale(theta: float, n_terms: int) -> float:
    """The scale of float64's rounding error in the partial sums of ``Σ_k (iθ)^k / k!``.

    ``eps · max_{k < n_terms} |θ|^k / k!``: the largest term added, times float64's machine
    epsilon (``2.2e-16``). Each addition rounds at the scale of the numbers added, so once terms of
    size ``M`` have been added, the sums carry errors of about ``eps·M`` — and the sum the series
    converges to, ``e^{iθ}``, has size 1. At ``θ = 10`` the largest term is about 2 756 and the
    scale 6e-13; at ``θ = 40`` it is about 3.3 (every digit lost). It is a scale, not a bound: the
    rounding errors of the many large terms add up, so the measured error can exceed it by a
    factor up to about the number of terms.

    Parameters
    ----------
    theta : float
        Angle in radians (finite).
    n_terms : int
        Number of terms summed (>= 1).

    Returns
    -------
    float
        The scale, computed from logarithms (no overflow, no summation).
    """
    theta = abs(check_real(theta, "theta"))
    n_terms = check_int(n_terms, "n_terms", minimum=1, what="a positive integer (>= 1)")
    if theta == 0.0:
        return float(torch.finfo(torch.float64).eps)
    # |θ|^k / k! grows while k < |θ| and shrinks after: its largest value below n_terms is at
    # k = min(floor(|θ|), n_terms − 1).
    k = min(math.floor(theta), n_terms - 1)
    log_term = k * math.log(theta) - math.lgamma(k + 1)
    return float(torch.finfo(torch.float64).eps) * math.exp(min(log_term, 700.0))


#: The former name of :func:`euler_rounding_scale` (it is a scale, not a bound).
euler_rounding_bound = euler_rounding_scale


def euler_partial_sums(theta: float, n_terms: int) -> torch.Tensor:
    """Partial sums of the exponential series at ``iθ``.

    Entry ``N − 1`` is ``Σ_{k<N} (iθ)^k / k!`` for ``N = 1 … n_terms``; in exact arithmetic the
    sums converge to ``e^{iθ} = cos θ + i sin θ``. In float64 they carry rounding errors of about
    :func:`euler_rounding_scale` ``(θ, n_terms)``: above ``EULER_WARN_BOUND`` (1e-8) a
    ``RuntimeWarning`` says so, and above ``EULER_REFUSE_BOUND`` (1e-2), where the "converged" sum
    would keep two correct digits at most (``|θ| > 34.1`` with enough terms), a ``ValueError``
    refuses.

    Parameters
    ----------
    theta : float
        Angle in radians (finite).
    n_terms : int
        Number of partial sums (1 … 100 000).

    Returns
    -------
    torch.Tensor
        Shape ``(n_terms,)``, complex128.
    """
    theta = check_real(theta, "theta")
    n_terms = check_int(n_terms, "n_terms", minimum=1, what="a positive integer (>= 1)")
    if n_terms > 100_000:
        raise ValueError(f"n_terms must be <= 100000, got {n_terms}")
    bound = euler_rounding_scale(theta, n_terms)
    if bound > EULER_REFUSE_BOUND:
        raise ValueError(
            f"theta = {theta} with n_terms = {n_terms}: float64 cannot sum this series — its "
            f"terms reach {bound / torch.finfo(torch.float64).eps:.3g}, so rounding errors of "
            f"about {bound:.3g} swamp the sum e^(i·theta) of size 1 (cancellation). Reduce "
            f"theta modulo 2*pi first, or use fewer terms."
        )
    if bound > EULER_WARN_BOUND:
        warnings.warn(
            f"theta = {theta}: the partial sums carry rounding errors of about {bound:.2g} "
            f"(terms up to {bound / torch.finfo(torch.float64).eps:.3g} cancel); reduce theta "
            f"modulo 2*pi for an accurate sum",
            RuntimeWarning,
            stacklevel=2,
        )
    terms = torch.empty(n_terms, dtype=torch.complex128)
    term = complex(1.0, 0.0)
    for k in range(n_terms):
        terms[k] = term  # type: ignore[assignment]  # torch's stubs omit complex scalars
        # (iθ)^{k+1}/(k+1)! from (iθ)^k/k!: no factorial overflow, no large powers.
        term = term * complex(0.0, theta) / (k + 1)
    return terms.cumsum(dim=0)


def rotate_complex(
    z: complex | torch.Tensor, theta: float | torch.Tensor
) -> torch.Tensor:
    """Rotate ``z`` by the angle ``θ``: ``z · e^{iθ}``.

    Parameters
    ----------
    z : complex or torch.Tensor
        A number or a tensor (real or complex) of any shape.
    theta : float or torch.Tensor
        Angle(s) in radians, real and finite, broadcastable against ``z``.

    Returns
    -------
    torch.Tensor
        ``z · e^{iθ}`` with the broadcast shape; complex64 for complex64 or float32/half
        input, complex128 otherwise.
    """
    if isinstance(z, torch.Tensor):
        if z.dtype == torch.bool:
            raise TypeError("z must be a complex or real number/tensor, got a bool tensor")
        out_dtype = torch.complex64 if z.dtype in (
            torch.complex64, torch.float32, torch.float16, torch.bfloat16
        ) else torch.complex128
        zt = z.to(torch.complex128)
    elif isinstance(z, numbers.Complex) and not isinstance(z, bool):
        zt, out_dtype = torch.tensor(complex(z), dtype=torch.complex128), torch.complex128
    else:
        raise TypeError(f"z must be a complex number or a torch.Tensor, got {type(z).__name__}")
    if isinstance(theta, torch.Tensor):
        if theta.dtype.is_complex or theta.dtype == torch.bool:
            raise TypeError(f"theta must be real, got dtype {theta.dtype}")
        th = theta.to(torch.float64)
        if not bool(torch.isfinite(th).all()):
            raise ValueError("theta must be finite, got a NaN or infinite entry")
    else:
        th = torch.tensor(check_real(theta, "theta"), dtype=torch.float64)
    try:
        torch.broadcast_shapes(zt.shape, th.shape)
    except RuntimeError:
        raise ValueError(
            f"theta of shape {tuple(th.shape)} must broadcast with z of shape {tuple(zt.shape)}"
        ) from None
    return (zt * torch.polar(torch.ones_like(th), th)).to(out_dtype)
