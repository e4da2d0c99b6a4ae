"""Euler's formula for the complex-numbers chapter: ``e^{iθ} = cos θ + i sin θ``.

The Taylor series ``Σ_k (iθ)^k / k!`` splits into the series of ``cos θ`` (even ``k``) and
``i sin θ`` (odd ``k``); its partial sums spiral onto the unit circle. Multiplying by ``e^{iθ}``
rotates a complex number by ``θ``, which is RoPE in two dimensions.
"""

from __future__ import annotations

import numbers

import torch

from ._validation import check_int, check_real

__all__ = ["euler_partial_sums", "rotate_complex"]


def euler_partial_sums(theta: float, n_terms: int) -> torch.Tensor:
    """Partial sums of the exponential series at ``iθ``.

    Entry ``N − 1`` is ``Σ_{k<N} (iθ)^k / k!`` for ``N = 1 … n_terms``; the sums converge to
    ``e^{iθ} = cos θ + i sin θ``.

    Parameters
    ----------
    theta : float
        Angle in radians (finite).
    n_terms : int
        Number of partial sums (>= 1).

    Returns
    -------
    torch.Tensor
        Shape ``(n_terms,)``, complex128.
    """
    theta = check_real(theta, "theta")
    n_terms = check_int(n_terms, "n_terms", minimum=1, what="a positive integer (>= 1)")
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
