"""Temperature against length: the six logit multipliers models use, in one place.

Every form multiplies attention logits by a factor that grows like the logarithm of a length, to
keep the softmax from flattening as more keys compete (the "distracted attention" of long
inputs). They differ in *which* length (the configured extension factor, the query's own
position, or the number of visible keys) and in *where* the factor is applied (cos/sin, the
softmax scale, the query).
"""

from __future__ import annotations

import math

import torch

from .._validation import (
    check_choice,
    check_factor,
    check_int,
    check_positions,
    check_positive,
)
from ..extension import yarn_attention_factor
from ._plan import QueryScale

__all__ = ["TEMPERATURE_FORMS", "entropy_invariant_scale", "logit_multiplier", "softmax_entropy"]

#: The forms :func:`logit_multiplier` knows.
TEMPERATURE_FORMS: tuple[str, ...] = (
    "yarn", "longrope", "deepseek", "llama4", "llama_4_scaling_beta", "ssmax",
)


def logit_multiplier(
    form: str,
    positions: torch.Tensor,
    *,
    factor: float = 32.0,
    mscale_all_dim: float = 1.0,
    scale: float = 0.1,
    floor: int = 8192,
    ssmax_s: float = 0.43,
    original: int = 4096,
) -> torch.Tensor:
    """What a logit at query position ``m`` is multiplied by, for one of six forms.

    * ``"yarn"``: cos and sin × ``a = 0.1·ln s + 1``, so a logit × ``a²`` (every position;
      the rotated features only: a partial-rotary head's pass-through part keeps × 1);
    * ``"longrope"``: cos and sin × ``a = √(1 + ln s / ln L_orig)`` (Phi-3's LongRoPE, with
      ``L_orig`` = ``original``), so a logit × ``a² = ln(s·L_orig) / ln L_orig``: Su's
      ``ln N / ln L_train`` at the extended length ``N = s·L_orig`` (every position);
    * ``"deepseek"``: the softmax scale × ``m_s² = (0.1·mscale_all_dim·ln s + 1)²`` (MLA,
      both the RoPE and the no-RoPE part of the logit);
    * ``"llama4"``: the query × ``1 + scale·ln(1 + ⌊(m+1)/floor⌋)`` (Llama 4's NoPE layers);
    * ``"llama_4_scaling_beta"``: the query × ``1 + scale·ln(1 + ⌊m/floor⌋)`` (Ministral 3,
      Mistral 4; every layer; ``floor`` = original context);
    * ``"ssmax"``: Scalable-Softmax, logits × ``σ·ln n`` (σ = ``ssmax_s``) with ``n = m + 1``
      visible keys.

    Parameters
    ----------
    form : str
        One of :data:`TEMPERATURE_FORMS`.
    positions : torch.Tensor
        Query positions ``m >= 0``, shape ``(seq,)``.
    factor : float
        Extension factor ``s`` (>= 1) for ``"yarn"``, ``"longrope"`` and ``"deepseek"``.
    mscale_all_dim : float
        DeepSeek's coefficient (> 0).
    scale, floor : float, int
        ``attn_scale`` / ``llama_4_scaling_beta`` and ``floor_scale`` / original context.
    ssmax_s : float
        Scalable-Softmax's per-head scale ``s`` (> 0).
    original : int
        LongRoPE's original context ``L_orig`` (>= 2, ``original_max_position_embeddings``).

    Returns
    -------
    torch.Tensor
        Shape ``(seq,)``, float64.
    """
    form = check_choice(form, "form", TEMPERATURE_FORMS)
    p = check_positions(positions)
    if bool((p < 0).any()):
        raise ValueError("positions must be >= 0")
    ones = torch.ones_like(p)
    if form == "yarn":
        return ones * yarn_attention_factor(check_factor(factor)) ** 2
    if form == "longrope":
        s = check_factor(factor)
        length = check_int(original, "original", minimum=2)
        return ones * (1.0 if s <= 1 else 1.0 + math.log(s) / math.log(length))
    if form == "deepseek":
        s = check_factor(factor)
        c = check_positive(mscale_all_dim, "mscale_all_dim")
        m = 1.0 if s <= 1 else 0.1 * c * math.log(s) + 1.0
        return ones * m * m
    if form in ("llama4", "llama_4_scaling_beta"):
        return QueryScale(form, check_positive(scale, "scale"), int(floor))(p)
    return check_positive(ssmax_s, "ssmax_s") * torch.log(p + 1)


def entropy_invariant_scale(n: int, train_len: int, scale0: float, *,
                            regime: str = "gaussian") -> float:
    """The logit scale ``η`` that keeps softmax entropy at ``N`` keys what it was at ``L_train``.

    With logits ``η·z_j`` and weights ``p_j`` the entropy is ``H = ln Σ e^{η z_k} − η Σ p_j z_j``
    (the book's notation, chapter 10: ``z`` logits, ``p`` weights, ``N`` visible keys).

    * ``"gaussian"``: a broad bulk of unit-variance Gaussian ``z_j`` and many keys (while
      ``η² < 2 ln N``): ``ln((1/N) Σ e^{η z}) → η²/2`` and ``Σ p_j z_j → η``, so
      ``H ≈ ln N − η²/2`` and holding ``H`` fixed gives ``η² = η₀² + 2 ln(N/L_train)``.
    * ``"sharp"``: Su's argument (kexue.fm 8823, 9034): ``H ≈ ln N − η(z_max − z̄)``; a sharp
      softmax has entropy small next to ``ln N``, so ``η ∝ ln N``: ``η = η₀ ln N / ln L_train``.

    Parameters
    ----------
    n : int
        Visible keys now, ``N`` (>= 2).
    train_len : int
        Visible keys at training, ``L_train`` (>= 2).
    scale0 : float
        The scale ``η₀`` at ``L_train`` (> 0).
    regime : str
        ``"gaussian"`` or ``"sharp"``.

    Returns
    -------
    float
        ``η``; for ``"gaussian"`` a ``ValueError`` if ``η₀² + 2 ln(N/L_train) <= 0``.
    """
    n = check_int(n, "n", minimum=2)
    train_len = check_int(train_len, "train_len", minimum=2)
    scale0 = check_positive(scale0, "scale0")
    check_choice(regime, "regime", ("gaussian", "sharp"))
    if regime == "sharp":
        return scale0 * math.log(n) / math.log(train_len)
    square = scale0**2 + 2 * math.log(n / train_len)
    if square <= 0:
        raise ValueError(f"scale0**2 + 2 ln(n / train_len) must be > 0, got {square:.4g}: "
                         "n is too short for this scale0 to be kept")
    return math.sqrt(square)


def softmax_entropy(logits: torch.Tensor) -> torch.Tensor:
    """Entropy (nats) of ``softmax(logits)`` over the last axis, float64.

    Parameters
    ----------
    logits : torch.Tensor
        Shape ``(..., n)``, floating point, finite.

    Returns
    -------
    torch.Tensor
        Shape ``(...)``, float64.
    """
    from .._validation import check_float_tensor

    logits = check_float_tensor(logits, "logits", min_ndim=1).double()
    log_p = logits.log_softmax(-1)
    return -(log_p.exp() * log_p).sum(-1)
