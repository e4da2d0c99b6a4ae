"""Quantities the book plots: RoFormer's decay bound, sinusoid similarity, wavelengths.

* :func:`rope_decay_bound` — with ``S_j = Σ_{i<j} e^{i·r·θ_i}``, RoFormer (section
  3.4.3) bounds ``|⟨RoPE(q, m), RoPE(k, n)⟩|`` by ``max_i |h_(i+1) − h_i| · Σ_j |S_j|`` for
  ``r = m − n``, ``h_i = q_i·conj(k_i)`` (summation by parts, ``h_(d/2) = 0``); the
  book plots the relative bound ``f(r) = (1/(d/2))·Σ_{j=1}^{d/2} |S_j|``, which starts at
  ``(d/2 + 1)/2`` and decays.
* :func:`sinusoidal_similarity` — ``PE(p)·PE(p+k) = Σ_i cos(k·ω_i)``, independent of ``p``.
* :func:`rope_score_spread` — the measured spread (standard deviation) of the RoPE score of
  *independent* random unit ``q``, ``k`` at each offset: about ``1/√d`` at every offset, since a
  rotation does not change how unrelated vectors score.
* :func:`rope_self_score_envelope` — the lowest and highest RoPE score of a random unit ``q``
  with itself at each offset, over a set of draws: the spread around the mean that
  :func:`sinusoidal_similarity` gives.
* :func:`wavelengths` — ``λ_i = 2π/θ_i`` positions per full turn of pair ``i``.
"""

from __future__ import annotations

import math

import torch

from ._validation import (
    check_base,
    check_dim,
    check_int,
    check_inv_freq,
    check_length,
    check_seed,
    check_size,
    resolve_base,
)
from .rope import rope_inv_freq

__all__ = [
    "rope_decay_bound",
    "rope_score_spread",
    "rope_self_score_envelope",
    "sinusoidal_similarity",
    "wavelengths",
]

# Rows of r per chunk: bounds the (chunk, d/2) complex intermediate to a few MB.
_CHUNK = 4096


def rope_decay_bound(
    dim: int,
    base: float | None = None,
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
    base : float, optional
        The base ``b``; default 10000. Not together with ``inv_freq`` (``ValueError``).
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
    base = resolve_base(base, inv_freq)
    max_distance = check_length(max_distance, "max_distance")
    check_size(
        ("max_distance + 1", max_distance + 1), ("dim // 2", dim // 2),
        what="the bound's (max_distance + 1, dim // 2) partial sums",
    )
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
        for ``k = −max_distance … max_distance``. The centre value is ``d/2``. Index with
        ``[max_distance + k]``, not ``[k]``: entry ``k`` is the offset ``k − max_distance``.
    """
    dim = check_dim(dim)
    base = check_base(base)
    max_distance = check_length(max_distance, "max_distance")
    check_size(
        ("2·max_distance + 1", 2 * max_distance + 1), ("dim // 2", dim // 2),
        what="the (2·max_distance + 1, dim // 2) cosines",
    )
    offsets = torch.arange(-max_distance, max_distance + 1, dtype=torch.float64)
    return torch.cos(torch.outer(offsets, rope_inv_freq(dim, base))).sum(dim=-1)


def rope_score_spread(
    dim: int,
    base: float = 10000.0,
    max_distance: int = 256,
    *,
    n_samples: int = 256,
    seed: int = 0,
) -> torch.Tensor:
    """Measured spread of ``⟨RoPE(q, m), RoPE(k, m + r)⟩`` for independent random unit ``q``, ``k``.

    ``n_samples`` pairs ``(q, k)`` are drawn uniformly from the unit sphere (independently); for
    every offset ``r = 0 … max_distance`` the function returns the sample standard deviation of
    their RoPE scores. The exact value is ``1/√d`` at every offset (a rotation ``R`` keeps
    ``E[(qᵀRk)²] = tr(RRᵀ)/d² = 1/d``), so the curve is flat up to sampling noise: unrelated
    tokens are neither pushed apart nor drawn together by distance. In the same units, a unit
    ``q`` scores 1 with itself at ``r = 0``.

    Parameters
    ----------
    dim : int
        Rotary dimension ``d`` (positive, even, <= 4096).
    base : float
        The base ``b``.
    max_distance : int
        Largest offset ``r`` (0 … 65 536).
    n_samples : int
        Number of independent pairs (2 … 1024).
    seed : int
        Seed of the pairs (0 … 2**63 − 1).

    Returns
    -------
    torch.Tensor
        Shape ``(max_distance + 1,)``, float64.
    """
    dim, base, max_distance, n_samples, seed = _check_sampling(
        dim, base, max_distance, n_samples, seed
    )
    gen = torch.Generator().manual_seed(seed)
    q, k = torch.randn(2, n_samples, dim, generator=gen, dtype=torch.float64)
    q = q / q.norm(dim=-1, keepdim=True)
    k = k / k.norm(dim=-1, keepdim=True)
    # Pairs (2i, 2i+1) as complex numbers: h_i = q_i·conj(k_i) = a_i + i·b_i, and the score at
    # offset r is Re Σ_i h_i e^{-i·r·θ_i} = a·cos(rθ) + b·sin(rθ): two (n, d/2) @ (d/2, r) products.
    a = q[:, 0::2] * k[:, 0::2] + q[:, 1::2] * k[:, 1::2]
    b = q[:, 1::2] * k[:, 0::2] - q[:, 0::2] * k[:, 1::2]
    theta = rope_inv_freq(dim, base)
    out = torch.empty(max_distance + 1, dtype=torch.float64)
    for start in range(0, max_distance + 1, _CHUNK):
        r = torch.arange(start, min(start + _CHUNK, max_distance + 1), dtype=torch.float64)
        phase = torch.outer(theta, r)
        scores = a @ phase.cos() + b @ phase.sin()  # (n_samples, chunk)
        out[start : start + r.numel()] = scores.std(dim=0)
    return out


def _check_sampling(
    dim: object, base: object, max_distance: object, n_samples: object, seed: object
) -> tuple[int, float, int, int, int]:
    dim = check_dim(dim)
    if dim > 4096:
        raise ValueError(f"dim must be an even integer in [2, 4096], got {dim}")
    base = check_base(base)
    max_distance = check_length(max_distance, "max_distance")
    if max_distance > 65536:
        raise ValueError(f"max_distance must be an integer in [0, 65536], got {max_distance}")
    n_samples = check_int(n_samples, "n_samples", minimum=2, what="an integer in [2, 1024]")
    if n_samples > 1024:
        raise ValueError(f"n_samples must be an integer in [2, 1024], got {n_samples}")
    return dim, base, max_distance, n_samples, check_seed(seed)


def rope_self_score_envelope(
    dim: int,
    base: float = 10000.0,
    max_distance: int = 256,
    *,
    n_samples: int = 128,
    seed: int = 0,
    offsets: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Lowest and highest RoPE score of a random unit ``q`` with itself, at each offset.

    ``n_samples`` queries are drawn uniformly from the unit sphere. The score of ``q`` at
    position ``m + r`` with itself as a key at ``m`` is ``Σ_i e_i cos(r·θ_i)``, with
    ``e_i = q_{2i}² + q_{2i+1}²`` the energy of pair ``i`` (``Σ_i e_i = 1``). Its mean over
    ``q`` is ``(2/d)·Σ_i cos(r·θ_i)``, :func:`sinusoidal_similarity` divided by ``d/2``; this
    function returns how far single draws stray from that mean: the minimum and the maximum over
    the draws at every offset. At ``r = 0`` both are 1.

    Parameters
    ----------
    dim : int
        Rotary dimension ``d`` (positive, even, <= 4096).
    base : float
        The base ``b``.
    max_distance : int
        Largest offset ``r`` (0 … 65 536).
    n_samples : int
        Number of random queries (2 … 1024).
    seed : int
        Seed of the draws (0 … 2**63 − 1).
    offsets : torch.Tensor, optional
        1-D integer offsets in ``[0, max_distance]`` to evaluate (a figure on a log axis needs a
        few hundred, not every offset); default every offset ``0 … max_distance``.

    Returns
    -------
    (torch.Tensor, torch.Tensor)
        ``(lowest, highest)``, each of shape ``(max_distance + 1,)`` (or of ``offsets``), float64.
    """
    dim, base, max_distance, n_samples, seed = _check_sampling(
        dim, base, max_distance, n_samples, seed
    )
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(n_samples, dim, generator=gen, dtype=torch.float64)
    q = q / q.norm(dim=-1, keepdim=True)
    energy = q[:, 0::2] ** 2 + q[:, 1::2] ** 2  # (n, d/2), rows sum to 1
    theta = rope_inv_freq(dim, base)
    if offsets is None:
        offsets = torch.arange(max_distance + 1)
    elif (
        not isinstance(offsets, torch.Tensor)
        or offsets.ndim != 1
        or offsets.dtype.is_floating_point
        or offsets.dtype.is_complex
        or offsets.dtype == torch.bool
    ):
        raise TypeError(f"offsets must be a 1-D integer torch.Tensor, got {offsets!r:.80}")
    elif offsets.numel() and (int(offsets.min()) < 0 or int(offsets.max()) > max_distance):
        raise ValueError(f"offsets must lie in [0, max_distance = {max_distance}]")
    n = offsets.numel()
    low = torch.empty(n, dtype=torch.float64)
    high = torch.empty(n, dtype=torch.float64)
    for start in range(0, n, _CHUNK):
        r = offsets[start : start + _CHUNK].to(torch.float64)
        scores = energy @ torch.outer(theta, r).cos()  # (n_samples, chunk)
        low[start : start + r.numel()] = scores.min(dim=0).values
        high[start : start + r.numel()] = scores.max(dim=0).values
    return low, high


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
