"""What happens to RoPE beyond its training context, measured: chapter 8's quantities.

* :func:`turns_within` — how many full turns each pair makes over ``L`` positions (pairs below one
  turn never saw all their angles in training);
* :func:`pair_bands` — per pair, whether a method extrapolates it (``θ' = θ``), interpolates it
  (``θ' = θ/s``), blends the two, or scales it by more than ``s``;
* :func:`all_ones_scores` — LLaMA 2 Long's curve: the score ``q·R_Δ k`` with all-ones ``q`` and
  ``k`` against the distance ``Δ``, optionally with xPos's per-pair decay;
* :func:`first_negative_distance`, :func:`negative_offsets`, :func:`base_bound_map`,
  :func:`smallest_passing_base` — Men et al.'s "base bounds the context": the first distance at
  which ``B(Δ) = Σ_i cos(Δ·θ_i)`` turns negative, how many distances it is negative at and how
  deep, which (base, length) pairs keep it non-negative up to the length, and the smallest base
  that does;
* :func:`mean_angle_step`, :func:`mean_angle_step_limit`, :func:`consecutive_angle`,
  :func:`hermitian_sine`, :func:`hermitian_sine_limit` — the granularity argument of LLaMA 2
  Long's appendix (ABF versus PI);
* :func:`score_curve`, :func:`interpolation_error`, :func:`pi_interpolation_bound`,
  :func:`pi_extrapolation_bound` — position interpolation's error bound (Chen et al. 2023).

Scores use the complex form of a pair: with ``h_j = q_j·conj(k_j)`` (pairs ``(2j, 2j+1)`` read as
complex numbers), the RoPE score at offset ``Δ = m − n`` is ``a(Δ) = Re Σ_j h_j·e^{i·Δ·θ_j}``.
"""

from __future__ import annotations

import math

import torch

from ._validation import (
    check_base,
    check_dim,
    check_factor,
    check_float_tensor,
    check_int,
    check_inv_freq,
    check_positions,
    check_positive,
    check_real,
)
from .analysis import rope_decay_bound

__all__ = [
    "BANDS",
    "all_ones_scores",
    "base_bound_map",
    "base_bound_runs",
    "consecutive_angle",
    "first_negative_distance",
    "hermitian_sine",
    "hermitian_sine_limit",
    "interpolation_error",
    "mean_angle_step",
    "mean_angle_step_limit",
    "negative_offsets",
    "pair_bands",
    "paper_granularity_constant",
    "pi_extrapolation_bound",
    "pi_interpolation_bound",
    "score_curve",
    "sine_integral",
    "smallest_passing_base",
    "softmax_entropy_shift",
    "turns_within",
    "xpos_decay",
]

BANDS: tuple[str, ...] = ("extrapolated", "interpolated", "blended", "beyond s")

# Distances per chunk: bounds the (chunk, d/2) intermediates to a few MB.
_CHUNK = 8192


def turns_within(inv_freq: torch.Tensor, length: int) -> torch.Tensor:
    """Full turns each pair makes between offsets 0 and ``length − 1``: ``θ_i·(L − 1)/(2π)``.

    A pair with fewer than one turn never showed the model all its angles in a context of
    ``length`` positions.

    Parameters
    ----------
    inv_freq : torch.Tensor
        Shape ``(d/2,)``, the spectrum ``θ_i``.
    length : int
        Context length ``L`` (>= 1).

    Returns
    -------
    torch.Tensor
        Shape ``(d/2,)``, float64.
    """
    theta = check_inv_freq(inv_freq)
    length = check_int(length, "length", minimum=1, what="a positive integer")
    return theta * (length - 1) / (2 * math.pi)


def pair_bands(
    inv_freq: torch.Tensor, scaled_inv_freq: torch.Tensor, factor: float, *, rtol: float = 1e-3
) -> torch.Tensor:
    """Which band each pair falls in under a method: an index into :data:`BANDS`.

    With the ratio ``r_i = θ_i/θ'_i``: 0 extrapolated (``r ≈ 1``), 1 interpolated (``r ≈ s``),
    2 blended (``1 < r < s``), 3 beyond ``s`` (``r > s``, e.g. ABF's slow pairs). A ratio below 1
    (a pair sped up) counts as extrapolated only within ``rtol``; otherwise it is an error.

    Parameters
    ----------
    inv_freq, scaled_inv_freq : torch.Tensor
        Shape ``(d/2,)``: the original and the method's spectrum (positive).
    factor : float
        Scale factor ``s`` (>= 1).
    rtol : float
        Relative tolerance for "equal" (> 0).

    Returns
    -------
    torch.Tensor
        Shape ``(d/2,)``, int64 in ``0 … 3``.
    """
    theta = check_inv_freq(inv_freq, positive=True)
    scaled = check_inv_freq(scaled_inv_freq, name="scaled_inv_freq", positive=True)
    if scaled.shape != theta.shape:
        raise ValueError(
            f"scaled_inv_freq must have the shape of inv_freq {tuple(theta.shape)}, "
            f"got {tuple(scaled.shape)}"
        )
    factor = check_factor(factor)
    rtol = check_positive(rtol, "rtol")
    ratio = theta / scaled
    if bool((ratio < 1 - rtol).any()):
        raise ValueError("scaled_inv_freq must not exceed inv_freq (no method speeds a pair up)")
    bands = torch.full(ratio.shape, 2, dtype=torch.int64)
    bands[ratio > factor * (1 + rtol)] = 3
    bands[(ratio - factor).abs() <= rtol * factor] = 1
    bands[(ratio - 1).abs() <= rtol] = 0  # wins over 1 when s = 1
    return bands


def xpos_decay(dim: int, gamma: float = 0.4) -> torch.Tensor:
    """xPos's per-pair decay base ``ζ_i = (2i + γ·d)/((1 + γ)·d)`` (Sun et al. 2022).

    The score at distance ``Δ`` is multiplied by ``ζ_i^(Δ/scale_base)`` in pair ``i``: fast
    pairs (small ``i``) decay most.

    Parameters
    ----------
    dim : int
        Rotary dimension ``d`` (positive, even).
    gamma : float
        xPos's ``γ`` (> 0); 0.4 in the authors' code.

    Returns
    -------
    torch.Tensor
        Shape ``(d/2,)``, float64, in ``(0, 1)``.
    """
    dim = check_dim(dim)
    gamma = check_positive(gamma, "gamma")
    i = torch.arange(dim // 2, dtype=torch.float64)
    return (2 * i + gamma * dim) / ((1 + gamma) * dim)


def all_ones_scores(
    inv_freq: torch.Tensor,
    distances: torch.Tensor,
    *,
    xpos_scale_base: float | None = None,
    xpos_gamma: float = 0.4,
) -> torch.Tensor:
    """Raw score ``q·R_Δ k`` for all-ones ``q``, ``k`` in ``R^d``: ``Σ_i 2·cos(Δ·θ_i)``.

    LLaMA 2 Long (Xiong et al. 2023, §4.1) plots this against the distance ``Δ`` to show how
    RoPE, PI and ABF decay. With ``xpos_scale_base`` set, each pair is also damped by xPos's
    ``ζ_i^(Δ/scale_base)`` (:func:`xpos_decay`).

    Parameters
    ----------
    inv_freq : torch.Tensor
        Shape ``(d/2,)``.
    distances : torch.Tensor
        Shape ``(n,)``, offsets ``Δ >= 0``.
    xpos_scale_base : float, optional
        xPos's scale base (> 0; 512 in the authors' code). None: plain RoPE.
    xpos_gamma : float
        xPos's ``γ``.

    Returns
    -------
    torch.Tensor
        Shape ``(n,)``, float64; ``d`` at ``Δ = 0``.
    """
    theta = check_inv_freq(inv_freq)
    dist = check_positions(distances, name="distances")
    if bool((dist < 0).any()):
        raise ValueError("distances must be >= 0 (the query is at or after the key)")
    zeta = None
    if xpos_scale_base is not None:
        xpos_scale_base = check_positive(xpos_scale_base, "xpos_scale_base")
        zeta = xpos_decay(2 * theta.numel(), xpos_gamma)
    out = torch.empty(dist.numel(), dtype=torch.float64)
    for start in range(0, dist.numel(), _CHUNK):
        d = dist[start : start + _CHUNK, None]
        terms = 2 * torch.cos(d * theta)
        if zeta is not None and xpos_scale_base is not None:
            terms = terms * zeta ** (d / xpos_scale_base)
        out[start : start + d.shape[0]] = terms.sum(-1)
    return out


def mean_angle_step(inv_freq: torch.Tensor) -> torch.Tensor:
    """The mean angle per position over the pairs, ``(2/d)·Σ_i θ_i`` (radians).

    Our reading of LLaMA 2 Long's granularity constant: how far, on average, a pair turns
    between neighbouring positions. For large ``d`` it tends to :func:`mean_angle_step_limit`:
    ``≈ 1/ln b`` for RoPE, ``1/(ln b + ln β)`` for ABF (base ``b·β``), ``α/ln b`` for PI.

    Parameters
    ----------
    inv_freq : torch.Tensor
        Shape ``(d/2,)``.

    Returns
    -------
    torch.Tensor
        0-d, float64.
    """
    return check_inv_freq(inv_freq).mean()


def mean_angle_step_limit(base: float, scale: float = 1.0) -> float:
    """Large-``d`` limit of :func:`mean_angle_step` for ``θ_i = scale·base^(-2i/d)``.

    ``scale·∫_0^1 b^(−t) dt = scale·(1 − 1/b)/ln b``; the paper's approximations drop the
    ``1/b``: ``1/ln(bβ)`` for ABF, ``α/ln b`` for PI (``scale = α``).

    Parameters
    ----------
    base : float
        The base (> 1).
    scale : float
        Multiplier of every ``θ_i`` (> 0; PI's ``α = 1/s``).

    Returns
    -------
    float
    """
    base = check_base(base)
    if base <= 1:
        raise ValueError(f"base must be a finite number > 1, got {base}")
    scale = check_positive(scale, "scale")
    return scale * (1 - 1 / base) / math.log(base)


def _pair_weights(theta: torch.Tensor, x: torch.Tensor | None) -> torch.Tensor:
    """Each pair's share ``w_i`` of ``‖x‖²`` (``(..., d/2)``); equal shares ``2/d`` without x."""
    if x is None:
        return torch.full_like(theta, 1 / theta.numel())
    x = check_float_tensor(x, "x").to(torch.float64)
    if x.shape[-1] != 2 * theta.numel():
        raise ValueError(
            f"x.shape[-1] must be 2·len(inv_freq) = {2 * theta.numel()}, got {x.shape[-1]}"
        )
    energy = x[..., 0::2] ** 2 + x[..., 1::2] ** 2
    total = energy.sum(-1, keepdim=True)
    if bool((total == 0).any()):
        raise ValueError("x must be non-zero (the angle of a zero vector is undefined)")
    return energy / total


def hermitian_sine(inv_freq: torch.Tensor, x: torch.Tensor | None = None) -> torch.Tensor:
    """LLaMA 2 Long's granularity: ``Im⟨R_{n+1}x, R_n x⟩/‖x‖² = Σ_i w_i sin θ_i``.

    Appendix B of Xiong et al. (2023) measures how far apart RoPE puts one vector ``x`` at
    positions ``n`` and ``n + 1`` by what it calls a sine similarity: the imaginary part of the
    Hermitian inner product ``⟨a, b⟩ = Σ_i a_i·conj(b_i)`` of ``a = R_{n+1}x`` and ``b = R_n x``
    (pairs as complex numbers), over ``‖x‖²``. That is ``Σ_i w_i sin θ_i``, ``w_i`` the share of
    ``‖x‖²`` in pair ``i``, independent of ``n``. It is **not** the sine of the Euclidean angle
    between ``a`` and ``b`` (that is ``sin(consecutive_angle)``, ``√(1 − (Σ_i w_i cos θ_i)²)``):
    at ``d = 128``, base 500 000 and equal shares the two are 0.0788 and 0.209.

    Parameters
    ----------
    inv_freq : torch.Tensor
        Shape ``(d/2,)``.
    x : torch.Tensor, optional
        Shape ``(..., d)``, non-zero, pairs interleaved ``(2i, 2i+1)``. Without it every pair has
        the same share ``2/d`` (``x`` all ones), and the result is ``(2/d)·C_d``
        (:func:`paper_granularity_constant`).

    Returns
    -------
    torch.Tensor
        Shape ``(...)`` (0-d without ``x``), float64.
    """
    theta = check_inv_freq(inv_freq)
    return (_pair_weights(theta, x) * torch.sin(theta)).sum(-1)


def paper_granularity_constant(inv_freq: torch.Tensor) -> torch.Tensor:
    """The paper's ``C_d = Σ_i sin θ_i`` (Xiong et al. 2023, Theorem 1), unnormalised.

    It grows with ``d`` (5.04 at ``d = 128``, 148 at ``d = 4096`` for ``b = 500 000``); the
    paper's limits ``1/(ln b + ln β)`` and ``α/ln b`` hold for ``(2/d)·C_d`` instead
    (:func:`hermitian_sine_limit`).

    Parameters
    ----------
    inv_freq : torch.Tensor
        Shape ``(d/2,)``.

    Returns
    -------
    torch.Tensor
        0-d, float64.
    """
    return torch.sin(check_inv_freq(inv_freq)).sum()


def sine_integral(x: float) -> float:
    """``Si(x) = ∫_0^x sin(t)/t dt`` for ``|x| <= 4`` (power series, float64-exact there).

    Parameters
    ----------
    x : float
        Finite, ``|x| <= 4``.

    Returns
    -------
    float
    """
    x = check_real(x, "x")
    if abs(x) > 4:
        raise ValueError(f"x must be in [-4, 4] (the series' range here), got {x}")
    total, term, n = 0.0, x, 0  # term = (−1)^n x^(2n+1)/(2n+1)!
    while abs(term) > 1e-18 * max(abs(total), 1e-300) or n < 2:
        total += term / (2 * n + 1)
        n += 1
        term *= -x * x / ((2 * n) * (2 * n + 1))
        if n > 60:
            break
    return total


def hermitian_sine_limit(base: float, scale: float = 1.0) -> float:
    """Large-``d`` limit of :func:`hermitian_sine` (equal shares) for ``θ_i = scale·base^(-2i/d)``.

    ``∫_0^1 sin(scale·b^(−u)) du = (Si(scale) − Si(scale/b))/ln b``: ``≈ Si(1)/ln(bβ)`` for ABF
    (0.0721 at ``bβ = 500 000``), ``≈ Si(α)/ln b`` for PI (0.0270 at ``α = 1/4``, ``b = 10⁴``).
    The paper's ``1/ln(bβ)`` and ``α/ln b`` replace ``sin θ`` by ``θ`` (upper bounds).

    Parameters
    ----------
    base : float
        The base (> 1).
    scale : float
        Multiplier of every ``θ_i``, in ``(0, 4]`` (PI's ``α = 1/s``).

    Returns
    -------
    float
    """
    base = check_base(base)
    if base <= 1:
        raise ValueError(f"base must be a finite number > 1, got {base}")
    scale = check_positive(scale, "scale")
    if scale > 4:
        raise ValueError(f"scale must be in (0, 4], got {scale}")
    return (sine_integral(scale) - sine_integral(scale / base)) / math.log(base)


def consecutive_angle(inv_freq: torch.Tensor, x: torch.Tensor | None = None) -> torch.Tensor:
    """Angle between the embeddings of one vector at neighbouring positions, ``∠(R_{n+1}x, R_n x)``.

    ``cos ∠ = Σ_i w_i cos θ_i`` with ``w_i`` the share of ``‖x‖²`` in pair ``i``; it does not
    depend on ``n``. Without ``x`` every pair has the same share ``2/d``.

    Parameters
    ----------
    inv_freq : torch.Tensor
        Shape ``(d/2,)``.
    x : torch.Tensor, optional
        Shape ``(..., d)``, non-zero, pairs interleaved ``(2i, 2i+1)``.

    Returns
    -------
    torch.Tensor
        Shape ``(...)`` (0-d without ``x``), float64, radians in ``[0, π]``.
    """
    theta = check_inv_freq(inv_freq)
    if x is None:
        weights = torch.full_like(theta, 1 / theta.numel())
    else:
        x = check_float_tensor(x, "x").to(torch.float64)
        if x.shape[-1] != 2 * theta.numel():
            raise ValueError(
                f"x.shape[-1] must be 2·len(inv_freq) = {2 * theta.numel()}, got {x.shape[-1]}"
            )
        energy = x[..., 0::2] ** 2 + x[..., 1::2] ** 2
        total = energy.sum(-1, keepdim=True)
        if bool((total == 0).any()):
            raise ValueError("x must be non-zero (the angle of a zero vector is undefined)")
        weights = energy / total
    return torch.arccos((weights * torch.cos(theta)).sum(-1).clamp(-1.0, 1.0))


def _complex_pairs(v: torch.Tensor, name: str) -> torch.Tensor:
    v = check_float_tensor(v, name).to(torch.float64)
    if v.shape[-1] % 2:
        raise ValueError(f"{name}.shape[-1] must be even, got {v.shape[-1]}")
    return torch.complex(v[..., 0::2], v[..., 1::2])


def score_curve(
    q: torch.Tensor, k: torch.Tensor, inv_freq: torch.Tensor, offsets: torch.Tensor
) -> torch.Tensor:
    """RoPE score of ``q`` at position ``n + s`` with ``k`` at ``n``, for each offset ``s``.

    ``a(s) = Re Σ_j h_j e^{i·s·θ_j}`` with ``h_j = q_j·conj(k_j)`` (interleaved pairs); equal to
    ``apply_rope_interleaved(q, s)·apply_rope_interleaved(k, 0)`` and defined for any real ``s``.

    Parameters
    ----------
    q, k : torch.Tensor
        Shape ``(..., d)`` (broadcastable).
    inv_freq : torch.Tensor
        Shape ``(d/2,)``.
    offsets : torch.Tensor
        Shape ``(n,)``, real offsets.

    Returns
    -------
    torch.Tensor
        Shape ``(..., n)``, float64.
    """
    h = _complex_pairs(q, "q") * _complex_pairs(k, "k").conj()
    theta = check_inv_freq(inv_freq, h.shape[-1] * 2)
    s = check_positions(offsets, name="offsets")
    phase = torch.polar(torch.ones(s.numel(), theta.numel(), dtype=torch.float64),
                        s[:, None] * theta)
    return (h[..., None, :] * phase).real.sum(-1)


def interpolation_error(
    q: torch.Tensor, k: torch.Tensor, inv_freq: torch.Tensor, length: int, samples: int = 8
) -> torch.Tensor:
    """Largest gap between the score at fractional offsets and the straight line between integers.

    For ``s`` in ``[0, length − 1]`` sampled ``samples`` times per unit: ``max |a(s) − a_lin(s)|``,
    where ``a_lin`` joins ``a(⌊s⌋)`` and ``a(⌈s⌉)``. This is what position interpolation asks of a
    model: to read the score between the integer offsets it was trained on.

    Parameters
    ----------
    q, k : torch.Tensor
        Shape ``(..., d)``.
    inv_freq : torch.Tensor
        Shape ``(d/2,)``.
    length : int
        Training context ``L`` (>= 2).
    samples : int
        Points per unit offset (>= 2).

    Returns
    -------
    torch.Tensor
        Shape ``(...)``, float64.
    """
    length = check_int(length, "length", minimum=2, what="an integer >= 2")
    samples = check_int(samples, "samples", minimum=2, what="an integer >= 2")
    s = torch.arange((length - 1) * samples + 1, dtype=torch.float64) / samples
    a = score_curve(q, k, inv_freq, s)
    grid = a[..., ::samples]  # integer offsets 0 … L−1
    lo = grid[..., :-1].repeat_interleave(samples, -1)
    hi = grid[..., 1:].repeat_interleave(samples, -1)
    t = (s[:-1] - s[:-1].floor())
    line = lo + t * (hi - lo)
    return (a[..., :-1] - line).abs().amax(-1)


def pi_interpolation_bound(inv_freq: torch.Tensor, h_max: float = 1.0) -> float:
    """Bound on :func:`interpolation_error` at a midpoint: ``max|h|·Σ_j θ_j²/8``.

    A linear interpolant misses a function by at most ``max|a''|·(s−s₁)(s₂−s)/2`` and
    ``|a''| ≤ max|h|·Σθ_j²``. Chen et al. replace the sum by its integral, ``≈ d/(4 ln b)``,
    which gives their ``d·max|h|/(32 ln b) = d·max|h|/294.73`` at ``b = 10⁴``.

    Parameters
    ----------
    inv_freq : torch.Tensor
        Shape ``(d/2,)``.
    h_max : float
        ``max_j |h_j|`` (> 0).

    Returns
    -------
    float
    """
    theta = check_inv_freq(inv_freq)
    h_max = check_positive(h_max, "h_max")
    return h_max * float((theta**2).sum()) / 8


def pi_extrapolation_bound(
    dim: int, base: float, distances: int, h_max: float = 1.0
) -> torch.Tensor:
    """RoFormer's bound on ``|a(Δ)|`` as Chen et al. compare with it: ``2·max|h|·Σ_k |A_k(Δ)|``.

    Abel summation gives ``|a(Δ)| ≤ max_j |h_j − h_{j+1}| · Σ_{k=1}^{d/2} |A_k(Δ)|`` with the
    partial sums ``A_k(Δ) = Σ_{j<k} e^{i·Δ·θ_j}`` (RoFormer §3.4.3). Knowing only ``max_j |h_j|``,
    ``|h_j − h_{j+1}| ≤ 2·max|h|``, which is the form of Chen et al. 2023 (§2.3); it equals
    ``2·h_max·(d/2)·rope_decay_bound(Δ)``.

    Parameters
    ----------
    dim : int
        Rotary dimension ``d``.
    base : float
        The base ``b``.
    distances : int
        Largest offset (>= 0); offsets ``Δ = 0 … distances``.
    h_max : float
        ``max_j |h_j|`` (> 0).

    Returns
    -------
    torch.Tensor
        Shape ``(distances + 1,)``, float64; entry ``Δ`` is the bound at offset ``Δ``.
    """
    dim = check_dim(dim)
    h_max = check_positive(h_max, "h_max")
    return 2 * h_max * (dim // 2) * rope_decay_bound(dim, base, distances)


def first_negative_distance(inv_freq: torch.Tensor, horizon: int) -> int | None:
    """First distance ``Δ`` in ``0 … horizon`` at which ``B(Δ) = Σ_i cos(Δ·θ_i)`` is negative.

    ``B`` is Men et al.'s (2024) measure of how much more attention a key similar to the query
    gets than a random one at distance ``Δ`` (half the all-ones score,
    :func:`all_ones_scores`). It oscillates: after its first negative value it turns positive
    again, so "first negative" is not "negative from here on".

    Parameters
    ----------
    inv_freq : torch.Tensor
        Shape ``(d/2,)``.
    horizon : int
        Largest distance checked, ``1 … 2**20``.

    Returns
    -------
    int or None
        The first negative ``Δ``, or None if ``B >= 0`` on all of ``0 … horizon``.
    """
    theta = check_inv_freq(inv_freq)
    horizon = check_int(horizon, "horizon", minimum=1, what="an integer in [1, 1048576]")
    if horizon > 1 << 20:
        raise ValueError(f"horizon must be an integer in [1, 1048576], got {horizon}")
    for start in range(0, horizon + 1, _CHUNK):
        d = torch.arange(start, min(start + _CHUNK, horizon + 1), dtype=torch.float64)
        negative = (torch.cos(d[:, None] * theta).sum(-1) < 0).nonzero()
        if negative.numel():
            return start + int(negative[0])
    return None


def negative_offsets(inv_freq: torch.Tensor, horizon: int) -> tuple[int, float]:
    """How often and how deeply ``B(Δ) = Σ_i cos(Δ·θ_i)`` is negative on ``0 … horizon``.

    :func:`first_negative_distance` gives Men et al.'s (2024) pass/fail verdict; this gives its
    size: the number of offsets with ``B(Δ) < 0`` and the smallest value of ``B(Δ)/B(0)``
    (``B(0) = d/2``). A base that fails at a handful of offsets by 1 % of ``B(0)`` and one that
    fails at a tenth of them by 13 % get the same verdict but not the same numbers.

    Parameters
    ----------
    inv_freq : torch.Tensor
        Shape ``(d/2,)``, the spectrum ``θ_i``.
    horizon : int
        Largest distance checked, ``1 … 2**20``.

    Returns
    -------
    tuple of (int, float)
        The count of ``Δ`` in ``0 … horizon`` with ``B(Δ) < 0`` (0 when the base passes), and
        ``min_Δ B(Δ)/B(0)`` over the same range (negative exactly when the count is positive).

    Raises
    ------
    TypeError
        If ``inv_freq`` is not a real tensor or ``horizon`` not an integer.
    ValueError
        If ``horizon`` is out of range or ``inv_freq`` is not a non-empty 1-D spectrum.

    Examples
    --------
    >>> from posenc_lib import rope_inv_freq
    >>> count, depth = negative_offsets(rope_inv_freq(128, 1e6), 32768)
    >>> count, round(depth, 3)
    (4, -0.012)
    """
    theta = check_inv_freq(inv_freq)
    if theta.numel() == 0:
        raise ValueError("inv_freq must hold at least one pair, got an empty tensor")
    horizon = check_int(horizon, "horizon", minimum=1, what="an integer in [1, 1048576]")
    if horizon > 1 << 20:
        raise ValueError(f"horizon must be an integer in [1, 1048576], got {horizon}")
    count, lowest = 0, math.inf
    for start in range(0, horizon + 1, _CHUNK):
        d = torch.arange(start, min(start + _CHUNK, horizon + 1), dtype=torch.float64)
        b = torch.cos(d[:, None] * theta).sum(-1)
        count += int((b < 0).sum())
        lowest = min(lowest, float(b.min()))
    return count, lowest / theta.numel()


def base_bound_map(
    dim: int, bases: torch.Tensor, lengths: torch.Tensor
) -> torch.Tensor:
    """Pass/fail of Men et al.'s criterion over a grid: ``B(Δ) >= 0`` for every ``Δ <= L``.

    ``out[k, j]`` is True when base ``bases[k]`` keeps ``B(Δ) = Σ_i cos(Δ·θ_i)`` non-negative for
    all ``Δ`` in ``0 … lengths[j]``. The criterion is not monotone in the base: a base can pass and
    a slightly larger one fail, so "the smallest base that passes" (Men et al.'s lower bound) and
    "the smallest base from which every larger one passes" differ.

    Parameters
    ----------
    dim : int
        Head size ``d`` (even, >= 2).
    bases : torch.Tensor
        Shape ``(n_bases,)``, each > 1.
    lengths : torch.Tensor
        Shape ``(n_lengths,)``, integers in ``1 … 2**20``.

    Returns
    -------
    torch.Tensor
        Shape ``(n_bases, n_lengths)``, bool.
    """
    dim = check_dim(dim)
    bases = check_float_tensor(bases, "bases").to(torch.float64).reshape(-1)
    if bases.numel() == 0 or bool((bases <= 1).any()) or not bool(torch.isfinite(bases).all()):
        raise ValueError("bases must be a non-empty 1-D tensor of finite numbers > 1")
    if not isinstance(lengths, torch.Tensor) or lengths.ndim != 1 or lengths.numel() == 0:
        raise TypeError("lengths must be a non-empty 1-D torch.Tensor of integers")
    values = [check_int(int(v), "lengths", minimum=1, what="an integer in [1, 1048576]")
              for v in lengths.tolist()]
    if max(values) > 1 << 20 or bool((lengths != lengths.round()).any()):
        raise ValueError("lengths must hold integers in [1, 1048576]")
    horizon = max(values)
    i = torch.arange(dim // 2, dtype=torch.float64)
    first = []
    for base in bases.tolist():
        neg = first_negative_distance(base ** (-2 * i / dim), horizon)
        first.append(horizon + 1 if neg is None else neg)
    first_t = torch.tensor(first, dtype=torch.float64)
    return first_t[:, None] > torch.tensor(values, dtype=torch.float64)[None, :]



def base_bound_runs(
    length: int, dim: int = 128, *, low: float, high: float, rel_step: float = 2e-4
) -> list[tuple[bool, float, float]]:
    """Runs of passing and failing bases for Men et al.'s criterion at one length.

    Samples the bases ``low·e^{k·rel_step}`` up to ``high`` (a geometric grid), decides each with
    :func:`base_bound_map`, and groups consecutive samples with the same verdict. Above the
    smallest passing base (:func:`smallest_passing_base`) passing and failing runs alternate
    over a wide range, so neither "the smallest passing base" nor a coarse grid says where every
    larger base passes; this strip shows it at a stated resolution. A run narrower than a
    relative ``rel_step`` can fall between two samples and be missed.

    Parameters
    ----------
    length : int
        Context length ``L``, ``1 … 2**20``.
    dim : int, default 128
        Head size ``d`` (positive, even).
    low, high : float
        The range of bases, ``1 < low < high``.
    rel_step : float, default 2e-4
        Step of the grid in ``ln b``, in ``[1e-6, 0.1]``; at most 100 000 samples.

    Returns
    -------
    list of (bool, float, float)
        ``(passes, first base, last base)`` per run, in increasing base; runs alternate in
        ``passes`` and together hold every sample.

    Raises
    ------
    ValueError
        If an argument is out of its range, or the grid would exceed 100 000 samples.
    """
    length = check_int(length, "length", minimum=1, what="an integer in [1, 1048576]")
    if length > 1 << 20:
        raise ValueError(f"length must be an integer in [1, 1048576], got {length}")
    dim = check_dim(dim)
    low, high = check_positive(low, "low"), check_positive(high, "high")
    if not 1 < low < high:
        raise ValueError(f"low and high must satisfy 1 < low < high, got low={low}, high={high}")
    rel_step = check_positive(rel_step, "rel_step")
    if not 1e-6 <= rel_step <= 0.1:
        raise ValueError(f"rel_step must be in [1e-6, 0.1], got {rel_step}")
    n_samples = math.floor(math.log(high / low) / rel_step) + 1
    if n_samples > 100_000:
        raise ValueError(f"the grid from low={low} to high={high} at rel_step={rel_step} has "
                         f"{n_samples} samples; at most 100 000 (raise rel_step)")
    bases = low * torch.exp(rel_step * torch.arange(n_samples, dtype=torch.float64))
    verdicts = base_bound_map(dim, bases, torch.tensor([length]))[:, 0].tolist()
    runs: list[tuple[bool, float, float]] = []
    for base, passes in zip(bases.tolist(), verdicts, strict=True):
        if runs and runs[-1][0] == passes:
            runs[-1] = (passes, runs[-1][1], base)
        else:
            runs.append((passes, base, base))
    return runs


def _base_bound_step(length: int, x: torch.Tensor, log_base: float) -> float | None:
    """Certified step in ``ln b`` over which some ``B(Δ)`` stays negative; None if ``b`` passes.

    ``x`` holds ``2i/d``. For a distance ``Δ`` with ``B(Δ) < 0`` at ``ln b``, Taylor's theorem in
    ``t = ln b`` with ``|∂²B/∂t²| <= Σ_i x_i²(u_i + u_i²)``, ``u_i = Δ·θ_i``, bounds ``B`` above
    by a quadratic on every larger base (the ``θ_i`` only shrink as ``b`` grows); ``B(Δ)`` stays
    negative up to that quadratic's root. The distances are scanned in chunks, and the first chunk
    with a negative ``B`` gives the step (the largest root within it).
    """
    theta = torch.exp(-log_base * x)
    for start in range(1, length + 1, _CHUNK):
        delta = torch.arange(start, min(start + _CHUNK, length + 1), dtype=torch.float64)
        u = delta[:, None] * theta
        b = torch.cos(u).sum(-1)
        negative = b < 0
        if bool(negative.any()):
            un, bn = u[negative], b[negative]
            slope = (x * un * torch.sin(un)).sum(-1)
            curvature = (x * x * (un + un * un)).sum(-1)
            root = (-slope + torch.sqrt(slope * slope - 2 * curvature * bn)) / curvature
            return float(root.max())
    return None


def smallest_passing_base(
    length: int, dim: int = 128, *, low: float = 10.0, min_step: float = 1e-7
) -> float:
    """The smallest RoPE base ``>= low`` that passes Men et al.'s (2024) bound at ``length``.

    Men et al.'s lower bound on the base is the smallest ``b`` for which
    ``B(Δ) = Σ_i cos(Δ·b^(-2i/d))`` stays non-negative for every ``Δ`` in ``0 … length``. The
    set of passing bases is not an interval: it has narrow islands (at ``d = 128`` and 4 096
    tokens, the integer bases 26 953 … 26 973 pass, the next passing run starts near 28 629, and
    passing and failing runs alternate up to about 5.9e4), which a grid or a bisection steps
    over. This function therefore walks up from ``low`` with certified steps: at each failing
    base, a second-order bound on ``B`` in ``ln b`` gives a distance over which some ``B(Δ)``
    provably stays negative, and the walk jumps exactly that far (at least ``min_step`` in
    ``ln b``). Every base it skips fails, so the first passing base it reaches is the smallest
    one, except for islands narrower than a relative ``min_step``.

    Parameters
    ----------
    length : int
        Context length ``L``: every ``Δ`` in ``0 … L`` must keep ``B(Δ) >= 0``; ``1 … 2**20``.
    dim : int, default 128
        Head size ``d`` (positive, even).
    low : float, default 10.0
        Where the walk starts: a base > 1. The answer is the smallest passing base ``>= low``.
    min_step : float, default 1e-7
        Smallest step of the walk in ``ln b``, in ``[1e-12, 1e-3]``.

    Returns
    -------
    float
        The first passing base: ``B(Δ) >= 0`` for every ``Δ <= length`` there, and every base
        in ``[low, result)`` fails (up to islands narrower than ``min_step``).

    Raises
    ------
    ValueError
        If an argument is out of its range.

    Examples
    --------
    >>> round(smallest_passing_base(1024))
    4293
    """
    length = check_int(length, "length", minimum=1, what="an integer in [1, 1048576]")
    if length > 1 << 20:
        raise ValueError(f"length must be an integer in [1, 1048576], got {length}")
    dim = check_dim(dim)
    low = check_positive(low, "low")
    if low <= 1:
        raise ValueError(f"low must be a finite number > 1, got {low}")
    min_step = check_positive(min_step, "min_step")
    if not 1e-12 <= min_step <= 1e-3:
        raise ValueError(f"min_step must be in [1e-12, 1e-3], got {min_step}")
    x = 2 * torch.arange(dim // 2, dtype=torch.float64) / dim
    log_base = math.log(low)
    while True:
        step = _base_bound_step(length, x, log_base)
        if step is None:
            return math.exp(log_base)
        log_base += max(step, min_step)


def softmax_entropy_shift(
    length: int, factor: float, sigma: float, logit_scale: float = 1.0, *,
    trials: int = 64, seed: int = 0,
) -> tuple[float, float, float]:
    """Mean softmax entropy over ``L`` and ``s·L`` keys, and over ``s·L`` with sharpened logits.

    The logits are i.i.d. normal with standard deviation ``sigma`` (one query, content only, no
    position). A softmax over more keys is flatter: its entropy grows by about ``ln s`` from ``L``
    to ``s·L`` keys. Multiplying the logits by ``logit_scale`` (YaRN's ``1/t``, the square of
    its attention factor) lowers it again. The three entropies (nats) are means over ``trials``
    draws, with the same draws' first ``L`` logits used for the ``L``-key softmax.

    Parameters
    ----------
    length : int
        Training length ``L``, ``2 … 2**17``.
    factor : float
        Extension factor ``s``, in ``[1, 64]``; ``s·L`` is rounded to an integer.
    sigma : float
        Standard deviation of the logits, > 0.
    logit_scale : float, default 1.0
        Multiplier of the logits over ``s·L`` keys, > 0.
    trials : int, default 64
        Number of independent draws, ``1 … 4096``.
    seed : int, default 0
        Seed of the generator.

    Returns
    -------
    tuple of float
        ``(H_L, H_sL, H_sL_scaled)``.
    """
    length = check_int(length, "length", minimum=2, what="an integer in [2, 131072]")
    if length > 1 << 17:
        raise ValueError(f"length must be an integer in [2, 131072], got {length}")
    factor = check_factor(factor)
    if factor > 64:
        raise ValueError(f"factor must be in [1, 64], got {factor}")
    sigma = check_positive(sigma, "sigma")
    logit_scale = check_positive(logit_scale, "logit_scale")
    trials = check_int(trials, "trials", minimum=1, what="an integer in [1, 4096]")
    if trials > 4096:
        raise ValueError(f"trials must be an integer in [1, 4096], got {trials}")
    seed = check_int(seed, "seed")
    long_n = round(factor * length)
    gen = torch.Generator().manual_seed(seed)
    out = torch.zeros(3, dtype=torch.float64)
    for _ in range(trials):
        z = sigma * torch.randn(long_n, generator=gen, dtype=torch.float64)
        for k, logits in enumerate((z[:length], z, logit_scale * z)):
            p = torch.softmax(logits, 0)
            out[k] -= float((p * torch.log(p)).sum())
    out /= trials
    return float(out[0]), float(out[1]), float(out[2])
