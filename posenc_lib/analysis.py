"""Quantities the book plots: RoFormer's decay bound, sinusoid similarity, wavelengths.

* :func:`rope_decay_bound` — with ``S_j = Σ_{i<j} e^{i·r·θ_i}``, RoFormer (section
  3.4.3) bounds ``|⟨RoPE(q, m), RoPE(k, n)⟩|`` by ``max|h| · Σ_j |S_j|`` for ``r = m − n``; the
  book plots the relative bound ``f(r) = (1/(d/2))·Σ_{j=1}^{d/2} |S_j|``, which starts at
  ``(d/2 + 1)/2`` and decays.
* :func:`sinusoidal_similarity` — ``PE(p)·PE(p+k) = Σ_i cos(k·ω_i)``, independent of ``p``.
* :func:`wavelengths` — ``λ_i = 2π/θ_i`` positions per full turn of pair ``i``.
"""

from __future__ import annotations

import math

import torch

from ._validation import check_base, check_dim, check_inv_freq, check_length
from .rope import rope_inv_freq

__all__ = ["rope_decay_bound", "sinusoidal_similarity", "wavelengths"]

# Rows of r per chunk: bounds the (chunk, d/2) complex intermediate to a few MB.
_CHUNK = 4096


def rope_decay_bound(
    dim: int,
    base: float = 10000.0,
    max_distance: int = 256,
    *,
    inv_freq: torch.Tensor | None = None,
) -> torch.Tensor:
    """RoFormer's relative upper bound on the RoPE attention score at distance ``r``.

    ``f(r) = (1/(d/2)) · Σ_{j=1}^{d/2} |S_j|`` with ``S_j = Σ_{i=0}^{j−1} e^{i·r·θ_i}``, for
    ``r = 0 … max_distance``. ``f(0) = (d/2 + 1)/2``; the curve decays with oscillations.

    Parameters
    ----------
    dim : int
        Rotary dimension ``d`` (positive, even); RoFormer plots ``d = 128``.
    base : float
        The base ``b``, used when ``inv_freq`` is not given.
    max_distance : int
        Largest relative distance ``r`` (>= 0).
    inv_freq : torch.Tensor, optional
        Shape ``(dim // 2,)``: a scaled spectrum (PI, ABF, YaRN …) instead of ``base``.

    Returns
    -------
    torch.Tensor
        Shape ``(max_distance + 1,)``, float64; entry ``r`` is ``f(r)``.
    """
    dim = check_dim(dim)
    base = check_base(base)
    max_distance = check_length(max_distance, "max_distance")
    theta = rope_inv_freq(dim, base) if inv_freq is None else check_inv_freq(inv_freq, dim)
    theta = theta.cpu()
    out = torch.empty(max_distance + 1, dtype=torch.float64)
    for start in range(0, max_distance + 1, _CHUNK):
        r = torch.arange(start, min(start + _CHUNK, max_distance + 1), dtype=torch.float64)
        phase = torch.outer(r, theta)
        partial = torch.polar(torch.ones_like(phase), phase).cumsum(dim=-1)  # S_1 … S_{d/2}
        out[start : start + r.numel()] = partial.abs().mean(dim=-1)
    return out


def sinusoidal_similarity(
    dim: int, base: float = 10000.0, max_distance: int = 256
) -> torch.Tensor:
    """Dot product of sinusoidal encodings at offset ``k``: ``PE(p)·PE(p+k) = Σ_i cos(k·ω_i)``.

    The value does not depend on ``p`` and is symmetric in ``k`` (the encoding cannot tell
    "before" from "after").

    Parameters
    ----------
    dim : int
        Feature dimension ``d`` (positive, even).
    base : float
        The base ``b``.
    max_distance : int
        Largest offset ``|k|`` (>= 0).

    Returns
    -------
    torch.Tensor
        Shape ``(2·max_distance + 1,)``, float64; entry ``max_distance + k`` holds offset ``k``
        for ``k = −max_distance … max_distance``. The centre value is ``d/2``.
    """
    dim = check_dim(dim)
    base = check_base(base)
    max_distance = check_length(max_distance, "max_distance")
    offsets = torch.arange(-max_distance, max_distance + 1, dtype=torch.float64)
    return torch.cos(torch.outer(offsets, rope_inv_freq(dim, base))).sum(dim=-1)


def wavelengths(inv_freq: torch.Tensor) -> torch.Tensor:
    """Wavelengths ``λ_i = 2π / θ_i``: how many positions pair ``i`` needs for one full turn.

    Parameters
    ----------
    inv_freq : torch.Tensor
        Shape ``(dim // 2,)``, positive.

    Returns
    -------
    torch.Tensor
        Shape ``(dim // 2,)``, float64, in positions.
    """
    inv_freq = check_inv_freq(inv_freq, positive=True)
    return 2 * math.pi / inv_freq
