"""Context extension for RoPE: new inverse frequencies for a longer context than trained on.

Every function returns a ``(dim // 2,)`` float64 spectrum that plugs into ``inv_freq=`` of the
``rope`` functions. With ``θ_i = base^(-2i/d)`` and scale factor ``s``:

* position interpolation (PI, Chen et al. 2023): ``θ_i / s`` (positions squeezed by ``s``);
* NTK-aware: ``base' = base·s^(d/(d−2))`` (low frequencies interpolated, high ones kept);
* dynamic NTK: NTK with ``s`` replaced by ``s·L/L_train − (s − 1)`` once ``L > L_train``;
* YaRN (Peng et al. 2023): a ramp between interpolation and extrapolation over pair index;
* Llama 3.1: interpolate long wavelengths, keep short ones, blend in between;
* ABF (Xiong et al. 2023): just a larger base, ``rope_inv_freq(dim, 500000)``.
"""

from __future__ import annotations

import math

import torch

from ._validation import (
    check_base,
    check_dim,
    check_factor,
    check_int,
    check_positive,
)
from .rope import rope_inv_freq

__all__ = [
    "abf_inv_freq",
    "dynamic_ntk_base",
    "dynamic_ntk_inv_freq",
    "llama3_inv_freq",
    "ntk_inv_freq",
    "pi_inv_freq",
    "yarn_correction_range",
    "yarn_inv_freq",
    "yarn_paper_inv_freq",
]


def _check_max_position(value: object, name: str) -> int:
    return check_int(value, name, minimum=1, what="a positive integer (>= 1)")


def abf_inv_freq(dim: int, base: float = 500000.0) -> torch.Tensor:
    """Adjusted base frequency (LLaMA 2 Long): ``rope_inv_freq(dim, base)`` with base 500 000.

    Parameters
    ----------
    dim : int
        Rotary dimension (positive, even).
    base : float
        The raised base.

    Returns
    -------
    torch.Tensor
        Shape ``(dim // 2,)``, float64.
    """
    return rope_inv_freq(dim, base)


def pi_inv_freq(dim: int, base: float = 10000.0, factor: float = 1.0) -> torch.Tensor:
    """Position interpolation: ``θ_i / factor`` (equivalently, positions ``m → m / factor``).

    Parameters
    ----------
    dim : int
        Rotary dimension (positive, even).
    base : float
        The base ``b``.
    factor : float
        Scale factor ``s = L_new / L_train`` (>= 1).

    Returns
    -------
    torch.Tensor
        Shape ``(dim // 2,)``, float64.
    """
    factor = check_factor(factor)
    return rope_inv_freq(dim, base) / factor


def _ntk_base(base: float, factor: float, dim: int, culprit: str = "factor") -> float:
    """NTK-aware base ``b·s^(d/(d−2))``: the slowest pair is interpolated by exactly ``s``.

    Computed through logarithms so that a huge ``factor`` is refused by name (``culprit``)
    instead of giving ``inf`` (blamed on ``base`` later) or a Python ``OverflowError``.
    """
    try:
        new_base = base * factor ** (dim / (dim - 2))
    except OverflowError:
        new_base = math.inf
    if not math.isfinite(new_base):
        log_base = math.log(base) + dim / (dim - 2) * math.log(factor)
        raise ValueError(
            f"{culprit} = {factor:g} is too large: the NTK base base·s^(dim/(dim−2)) = "
            f"e^{log_base:.4g} overflows float64 (base = {base:g}, dim = {dim})"
        )
    return new_base


def ntk_inv_freq(dim: int, base: float = 10000.0, factor: float = 1.0) -> torch.Tensor:
    """NTK-aware scaling: RoPE with ``base' = base · factor^(d/(d−2))``.

    The exponent makes the lowest frequency exactly ``θ_{d/2−1} / factor`` (interpolated) while
    ``θ_0 = 1`` is unchanged (extrapolated).

    Parameters
    ----------
    dim : int
        Rotary dimension (even, >= 4 so that ``d − 2 > 0``).
    base : float
        The base ``b``.
    factor : float
        Scale factor (>= 1).

    Returns
    -------
    torch.Tensor
        Shape ``(dim // 2,)``, float64.
    """
    dim = check_dim(dim, minimum=4)
    base = check_base(base)
    factor = check_factor(factor)
    return rope_inv_freq(dim, _ntk_base(base, factor, dim))


def dynamic_ntk_inv_freq(
    dim: int, base: float, factor: float, seq_len: int, max_position: int
) -> torch.Tensor:
    """Dynamic NTK: NTK scaling whose factor grows with the current length ``seq_len``.

    ``base' = base · (factor·seq_len/max_position − (factor − 1))^(d/(d−2))`` when
    ``seq_len > max_position``; plain :func:`posenc_lib.rope.rope_inv_freq` otherwise
    (as in Hugging Face).

    Parameters
    ----------
    dim : int
        Rotary dimension (even, >= 4).
    base : float
        The base ``b``.
    factor : float
        Scale factor (>= 1).
    seq_len : int
        Current sequence length (>= 0).
    max_position : int
        Training context ``L_train`` (>= 1).

    Returns
    -------
    torch.Tensor
        Shape ``(dim // 2,)``, float64.
    """
    dim = check_dim(dim, minimum=4)
    base = check_base(base)
    factor = check_factor(factor)
    seq_len = check_int(seq_len, "seq_len", minimum=0, what="a non-negative integer")
    max_position = _check_max_position(max_position, "max_position")
    return rope_inv_freq(dim, dynamic_ntk_base(dim, base, factor, seq_len, max_position))


def dynamic_ntk_base(dim: int, base: float, factor: float, seq_len: int,
                     max_position: int) -> float:
    """The base dynamic NTK uses at length ``seq_len``: :func:`dynamic_ntk_inv_freq`'s ``base'``.

    ``base · (factor·seq_len/max_position − (factor − 1))^(d/(d−2))`` past ``max_position``;
    ``base`` itself up to it (transformers' ``_compute_dynamic_ntk_parameters``). Llama 3 8B's
    shape (base 500 000, head 128, 8 192 positions) with ``factor`` 2 at 40 000 tokens:
    ``4 536 450`` (rounded).

    Parameters
    ----------
    dim : int
        Rotary dimension (even, >= 4).
    base : float
        The configured base ``b``.
    factor : float
        Scale factor (>= 1).
    seq_len : int
        Current sequence length (>= 0).
    max_position : int
        Training context ``L_train`` (>= 1).

    Returns
    -------
    float
        The effective base.
    """
    dim = check_dim(dim, minimum=4)
    base = check_base(base)
    factor = check_factor(factor)
    seq_len = check_int(seq_len, "seq_len", minimum=0, what="a non-negative integer")
    max_position = _check_max_position(max_position, "max_position")
    if seq_len <= max_position:
        return base
    # Effective factor: 1 at max_position, rising linearly to `factor` at factor·max_position.
    ratio = factor * seq_len / max_position - (factor - 1)
    return _ntk_base(base, ratio, dim,
                     "the effective factor (from factor and seq_len / max_position)")


def yarn_correction_range(
    dim: int,
    base: float,
    original_max_position: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    *,
    truncate: bool = True,
) -> tuple[float, float]:
    """YaRN's pair-index range ``(low, high)`` over which the ramp goes from 0 to 1.

    ``i(r) = d·ln(L/(2π·r)) / (2·ln b)`` is the pair whose wavelength fits ``r`` times into ``L``;
    ``low = max(floor(i(β_fast)), 0)``, ``high = min(ceil(i(β_slow)), d − 1)`` (no rounding when
    ``truncate`` is False; the clamps apply either way).

    When no pair turns ``β_fast`` times within ``L`` (a small head or a short context),
    ``i(β_fast)`` is negative and the clamp at 0 starts the ramp at pair 0, which the ramp then
    keeps whole whatever its turn count. At head size 16, ``b = 10⁴``, ``L = 33``:
    ``i(32) ≈ −1.57`` (floor −2, clamped to 0) and ``i(1) ≈ 1.44`` (ceil 2).

    The clamp at ``d − 1`` copies transformers (and the YaRN reference code) exactly: the ramp
    runs over the ``d/2`` pairs, so a clamp at ``d/2 − 1`` would be the natural bound, but the
    two differ once ``i(β_slow)`` passes the last pair (``L/2π > b^(1−2/d)``, e.g. ``d = 128``,
    ``b = 10⁴``, ``L = 131 072``), and parity with transformers is what a config needs.

    Returns
    -------
    tuple of float
        ``(low, high)``.
    """
    dim = check_dim(dim)
    base = check_base(base)
    if base == 1.0:
        raise ValueError("base must be a finite number > 0 and != 1 for YaRN, got 1.0")
    original_max_position = _check_max_position(original_max_position, "original_max_position")
    beta_fast = check_positive(beta_fast, "beta_fast")
    beta_slow = check_positive(beta_slow, "beta_slow")
    if beta_fast < beta_slow:  # equal is allowed, as in transformers (Kimi K2: both 1)
        raise ValueError(
            f"beta_fast must be >= beta_slow, got beta_fast = {beta_fast}, beta_slow = {beta_slow}"
        )
    if not isinstance(truncate, bool):
        raise TypeError(f"truncate must be a bool, got {type(truncate).__name__}")

    def index(rotations: float) -> float:
        # Logs of each factor: rotations·2π may overflow (beta_fast = 1e308) where its log does not.
        log_ratio = math.log(original_max_position) - math.log(rotations) - math.log(2 * math.pi)
        return dim * log_ratio / (2 * math.log(base))

    low, high = index(beta_fast), index(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    return float(max(low, 0)), float(min(high, dim - 1))


def yarn_inv_freq(
    dim: int,
    base: float,
    factor: float,
    original_max_position: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    *,
    truncate: bool = True,
) -> tuple[torch.Tensor, float]:
    """YaRN ("NTK-by-parts"): interpolate slow pairs, keep fast ones, ramp linearly in between.

    ``ramp_i = clamp((i − low)/(high − low), 0, 1)``;
    ``θ'_i = (θ_i/s)·ramp_i + θ_i·(1 − ramp_i)``; attention factor ``0.1·ln s + 1``
    (multiply cos and sin, or equivalently the logits by its square).

    Parameters
    ----------
    dim : int
        Rotary dimension (positive, even).
    base : float
        The base ``b`` (> 0, != 1).
    factor : float
        Scale factor ``s`` (>= 1).
    original_max_position : int
        Training context ``L`` (>= 1).
    beta_fast, beta_slow : float
        Rotation counts bounding the ramp (``beta_fast >= beta_slow > 0``; equal ends give a
        one-index ramp, as in transformers).
    truncate : bool
        Round the range outward to integers (True, Hugging Face's default and the paper's code).

    Returns
    -------
    tuple
        ``(inv_freq, attention_factor)``: shape ``(dim // 2,)`` float64, and a float.

    Notes
    -----
    Matches ``transformers``' ``"yarn"`` for its defaults. Hugging Face can also derive the
    attention factor from ``mscale``/``mscale_all_dim`` (DeepSeek) or take it from the config;
    here it is always ``0.1·ln s + 1`` (1 when ``s = 1``).
    """
    factor = check_factor(factor)
    low, high = yarn_correction_range(
        dim, base, original_max_position, beta_fast, beta_slow, truncate=truncate
    )
    if low == high:
        high += 0.001  # same guard as the reference code: avoids 0/0 in the ramp
    theta = rope_inv_freq(dim, base)
    ramp = ((torch.arange(dim // 2, dtype=torch.float64) - low) / (high - low)).clamp(0.0, 1.0)
    inv_freq = (theta / factor) * ramp + theta * (1.0 - ramp)
    attention_factor = 0.1 * math.log(factor) + 1.0
    return inv_freq, attention_factor


def llama3_inv_freq(
    dim: int,
    base: float,
    factor: float,
    original_max_position: int,
    low_freq_factor: float = 1.0,
    high_freq_factor: float = 4.0,
) -> torch.Tensor:
    """Llama 3.1 scaling: by wavelength ``λ_i = 2π/θ_i`` against the old context ``L``.

    ``λ > L/low_freq_factor``: ``θ/s``; ``λ < L/high_freq_factor``: ``θ`` unchanged; otherwise
    ``(1 − t)·θ/s + t·θ`` with ``t = (L/λ − low_freq_factor)/(high_freq_factor − low_freq_factor)``.
    Llama 3.1 uses ``s = 8``, ``low = 1``, ``high = 4``, ``L = 8192``, ``base = 500 000``.

    Parameters
    ----------
    dim : int
        Rotary dimension (positive, even).
    base : float
        The base ``b``.
    factor : float
        Scale factor ``s`` (>= 1).
    original_max_position : int
        Old context ``L`` (>= 1).
    low_freq_factor, high_freq_factor : float
        ``0 < low_freq_factor <= high_freq_factor`` (equal: no smooth band, as Llama 4 Scout).

    Returns
    -------
    torch.Tensor
        Shape ``(dim // 2,)``, float64.
    """
    factor = check_factor(factor)
    original_max_position = _check_max_position(original_max_position, "original_max_position")
    low_freq_factor = check_positive(low_freq_factor, "low_freq_factor")
    high_freq_factor = check_positive(high_freq_factor, "high_freq_factor")
    if low_freq_factor > high_freq_factor:
        raise ValueError(
            "low_freq_factor must be <= high_freq_factor, got "
            f"low_freq_factor = {low_freq_factor}, high_freq_factor = {high_freq_factor}"
        )
    theta = rope_inv_freq(dim, base)
    wavelen = 2 * math.pi / theta
    context = float(original_max_position)  # a Python int may exceed int64 (2**70 is valid)
    low_freq_wavelen = context / low_freq_factor
    high_freq_wavelen = context / high_freq_factor
    # low == high (Llama 4 Scout: both 1) leaves no smooth band: the ramp is never used.
    t = (context / wavelen - low_freq_factor) / max(high_freq_factor - low_freq_factor, 1e-300)
    blended = (1 - t) * theta / factor + t * theta
    out = torch.where(wavelen > low_freq_wavelen, theta / factor, blended)
    return torch.where(wavelen < high_freq_wavelen, theta, out)


def yarn_paper_inv_freq(
    dim: int,
    base: float,
    factor: float,
    original_max_position: int,
    alpha: float = 1.0,
    beta: float = 32.0,
) -> tuple[torch.Tensor, float]:
    """YaRN's rule as the paper states it: a ramp that is continuous in each pair's turn count.

    Pair ``i`` turns ``r_i = L·θ_i/(2π)`` times within the training context ``L``;
    ``γ_i = clamp((r_i − α)/(β − α), 0, 1)`` and ``θ'_i = (1 − γ_i)·θ_i/s + γ_i·θ_i``
    (Peng et al. 2023, Eq. 18–19). :func:`yarn_inv_freq` is the reference code's form instead
    (and Hugging Face's): its ramp is linear in the *pair index* between the indices of ``β`` and
    ``α`` turns, rounded outward to whole indices, with the low end clamped at pair 0. At large
    head sizes the two nearly agree. At a head size of 16 they do not: where no pair turns ``β``
    times, the index of ``β`` turns is negative and its clamp to 0 keeps pair 0 whole (with or
    without the rounding), a pair that the paper's rule partly interpolates.

    Parameters
    ----------
    dim : int
        Rotary dimension (positive, even).
    base : float
        The base ``b`` (> 0, != 1).
    factor : float
        Scale factor ``s`` (>= 1).
    original_max_position : int
        Training context ``L`` (>= 1).
    alpha, beta : float
        Turn counts where the ramp ends: pairs with fewer than ``alpha`` turns are interpolated
        (θ/s), pairs with more than ``beta`` are kept (``0 < alpha < beta``).

    Returns
    -------
    tuple
        ``(inv_freq, attention_factor)``: shape ``(dim // 2,)`` float64, and ``0.1·ln s + 1``.
    """
    factor = check_factor(factor)
    original_max_position = _check_max_position(original_max_position, "original_max_position")
    alpha = check_positive(alpha, "alpha")
    beta = check_positive(beta, "beta")
    if beta <= alpha:
        raise ValueError(f"beta must be > alpha, got alpha = {alpha}, beta = {beta}")
    theta = rope_inv_freq(dim, base)  # validates dim and base
    turns = float(original_max_position) * theta / (2 * math.pi)  # (dim // 2,)
    gamma = ((turns - alpha) / (beta - alpha)).clamp(0.0, 1.0)
    inv_freq = (1.0 - gamma) * theta / factor + gamma * theta
    return inv_freq, 0.1 * math.log(factor) + 1.0
