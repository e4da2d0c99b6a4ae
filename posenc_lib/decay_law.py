"""The decay law of the sinusoidal (and RoPE) similarity, in closed form (chapter 3).

The normalised similarity ``(2/d) Σ_i cos(k θ_i)`` with ``θ_i = b^(−2i/d)`` is a Riemann sum of
``∫₀¹ cos(k b^(−x)) dx``. Substituting ``u = k b^(−x)`` gives

    ∫₀¹ cos(k b^(−x)) dx = [Ci(k) − Ci(k/b)] / ln b ,

with the cosine integral ``Ci(x) = γ + ln x + ∫₀ˣ (cos t − 1)/t dt``. For ``1 ≪ k ≪ b``,
``Ci(k) ≈ 0`` and ``Ci(k/b) ≈ γ + ln(k/b)``, so the limit is ``1 − (ln k + γ)/ln b``: the similarity
falls with the *logarithm* of the offset, and the base enters only through ``1/ln b``.

``Ci`` is computed here in float64 without SciPy: its power series for ``x <= 2`` and the
continued fraction of ``E₁(ix)`` beyond (the method of Numerical Recipes' ``cisi``), accurate to a
few units in the last place.
"""

from __future__ import annotations

import cmath
import math
from typing import NamedTuple

import torch

from ._validation import check_base, check_choice, check_dim, check_int, check_size

__all__ = [
    "EULER_GAMMA",
    "SumDeviation",
    "cosine_integral",
    "similarity_limit",
    "similarity_log_law",
    "similarity_sum_deviation",
]

EULER_GAMMA = 0.5772156649015329
"""The Euler–Mascheroni constant γ."""

_SERIES_MAX = 2.0  # below: power series; above: continued fraction (both converge fast there)
_MAX_TERMS = 200


def _ci_scalar(x: float) -> float:
    if x <= _SERIES_MAX:
        # Ci(x) = γ + ln x + Σ_{k≥1} (−1)^k x^{2k} / (2k·(2k)!); terms shrink fast for x <= 2.
        total, term, k = 0.0, 1.0, 0
        x2 = x * x
        while True:
            k += 1
            term *= -x2 / ((2 * k - 1) * (2 * k))  # (−1)^k x^{2k} / (2k)!
            add = term / (2 * k)
            total += add
            if abs(add) < 1e-17 * max(abs(total), 1e-300) or k > _MAX_TERMS:
                break
        return EULER_GAMMA + math.log(x) + total
    # Lentz's method for the continued fraction of E₁(ix); Ci(x) = −Re E₁(ix).
    tiny = 1e-300
    b = complex(1.0, x)
    c: complex = complex(1.0 / tiny)
    d = 1.0 / b
    h = d
    for i in range(2, _MAX_TERMS):
        a = -float((i - 1) ** 2)
        b += 2.0
        d = 1.0 / (a * d + b)
        c = b + a / c
        delta = c * d
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    h *= cmath.exp(complex(0.0, -x))
    return -h.real


def cosine_integral(x: torch.Tensor | float) -> torch.Tensor:
    """The cosine integral ``Ci(x) = −∫ₓ^∞ cos(t)/t dt`` for ``x > 0``, in float64.

    Parameters
    ----------
    x : torch.Tensor or float
        Positive, finite arguments, any shape (at most 10⁶ elements: the loop is in Python).

    Returns
    -------
    torch.Tensor
        ``Ci(x)``, float64, the shape of ``x``.
    """
    if isinstance(x, bool) or not isinstance(x, (torch.Tensor, int, float)):
        raise TypeError(f"x must be a float or a real tensor, got {type(x).__name__}")
    t = torch.as_tensor(x, dtype=torch.float64) if not isinstance(x, torch.Tensor) else x
    if t.dtype.is_complex or t.dtype == torch.bool:
        raise TypeError(f"x must be real, got dtype {t.dtype}")
    t = t.detach().to(device="cpu", dtype=torch.float64)
    if t.numel() > 10**6:
        raise ValueError(f"x must have at most 10**6 elements, got {t.numel()}")
    if not bool(torch.isfinite(t).all()) or bool((t <= 0).any()):
        raise ValueError("x must be finite and > 0 (Ci has a logarithmic singularity at 0)")
    flat = [_ci_scalar(v) for v in t.reshape(-1).tolist()]
    return torch.tensor(flat, dtype=torch.float64).reshape(t.shape)


def _offsets(k: torch.Tensor | float) -> torch.Tensor:
    if isinstance(k, bool) or not isinstance(k, (torch.Tensor, int, float)):
        raise TypeError(f"k must be a float or a real tensor, got {type(k).__name__}")
    t = torch.as_tensor(k, dtype=torch.float64) if not isinstance(k, torch.Tensor) else k
    if t.dtype.is_complex or t.dtype == torch.bool:
        raise TypeError(f"k must be real, got dtype {t.dtype}")
    t = t.detach().to(device="cpu", dtype=torch.float64)
    check_size(("k.numel()", t.numel()), what="the offsets")
    if not bool(torch.isfinite(t).all()) or bool((t <= 0).any()):
        raise ValueError("k must be finite and > 0 (the offsets; the limit at k = 0 is 1)")
    return t


def similarity_limit(k: torch.Tensor | float, base: float = 10000.0) -> torch.Tensor:
    """``∫₀¹ cos(k b^(−x)) dx = [Ci(k) − Ci(k/b)] / ln b``: the ``d → ∞`` normalised similarity.

    The limit, as the dimension grows, of ``(2/d) Σ_i cos(k θ_i)`` with ``θ_i = b^(−2i/d)``
    (``sinusoidal_similarity`` divided by ``d/2``).

    Parameters
    ----------
    k : torch.Tensor or float
        Offsets, > 0 (the similarity is even in ``k``; at ``k = 0`` it is 1).
    base : float
        The base ``b`` (> 1).

    Returns
    -------
    torch.Tensor
        float64, the shape of ``k``.
    """
    t = _offsets(k)
    base = check_base(base)
    if base <= 1.0:
        raise ValueError(f"base must be > 1, got {base}")
    return (cosine_integral(t) - cosine_integral(t / base)) / math.log(base)


def similarity_log_law(k: torch.Tensor | float, base: float = 10000.0) -> torch.Tensor:
    """``1 − (ln k + γ)/ln b``: the decay law, valid for ``1 ≪ k ≪ b``.

    Parameters
    ----------
    k : torch.Tensor or float
        Offsets, > 0.
    base : float
        The base ``b`` (> 1).

    Returns
    -------
    torch.Tensor
        float64, the shape of ``k``.
    """
    t = _offsets(k)
    base = check_base(base)
    if base <= 1.0:
        raise ValueError(f"base must be > 1, got {base}")
    return 1.0 - (torch.log(t) + EULER_GAMMA) / math.log(base)


class SumDeviation(NamedTuple):
    """How far the finite-``d`` sum strays from a reference curve over a window of offsets."""

    mean: float
    """Mean of ``sum − reference`` over the window (near 0 for a wobble about the reference)."""
    max: float
    """Largest ``|sum − reference|`` over the window."""
    rms: float
    """Root mean square of ``sum − reference`` over the window."""
    at: int
    """The offset where the largest deviation occurs (the first, on ties)."""


def similarity_sum_deviation(dim: int, base: float = 10000.0, r_min: int = 5, r_max: int = 500,
                             reference: str = "limit") -> SumDeviation:
    """Max and rms of ``(2/d) Σ_i cos(r θ_i) − reference`` over every integer ``r`` in a window.

    ``θ_i = b^(−2i/d)``. The reference is the ``d → ∞`` limit :func:`similarity_limit`
    (``reference="limit"``) or the decay law :func:`similarity_log_law` (``reference="law"``).
    Every integer offset is evaluated, so a wobble between sampled offsets cannot hide.

    Parameters
    ----------
    dim : int
        Even width ``d`` (2 … 65 536).
    base : float
        The base ``b`` (> 1).
    r_min, r_max : int
        The window of offsets, ``1 <= r_min <= r_max <= 10⁵``.
    reference : {"limit", "law"}
        The curve to compare with.

    Returns
    -------
    SumDeviation
        The ``mean`` of ``sum − reference``, the ``max`` of its absolute value, its ``rms``, and
        the offset ``at`` of the max.
    """
    dim = check_dim(dim)
    if dim > 65536:
        raise ValueError(f"dim must be <= 65536, got {dim}")
    base = check_base(base)
    if base <= 1.0:
        raise ValueError(f"base must be > 1, got {base}")
    r_min = check_int(r_min, "r_min", minimum=1)
    r_max = check_int(r_max, "r_max", minimum=r_min)
    if r_max > 10**5:
        raise ValueError(f"r_max must be <= 10**5, got {r_max}")
    reference = check_choice(reference, "reference", ("limit", "law"))
    r = torch.arange(r_min, r_max + 1, dtype=torch.float64)
    theta = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    total = torch.cat([torch.cos(chunk[:, None] * theta).mean(-1)
                       for chunk in r.split(max(1, 2**22 // theta.numel()))])
    curve = similarity_limit(r, base) if reference == "limit" else similarity_log_law(r, base)
    gap = total - curve
    index = int(gap.abs().argmax())
    return SumDeviation(mean=gap.mean().item(), max=gap.abs().max().item(),
                        rms=gap.pow(2).mean().sqrt().item(), at=int(r[index].item()))
