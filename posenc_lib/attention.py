"""Scaled dot-product attention with an exact mask, for the book's checks and demos.

``weights = softmax(q kᵀ / √d + bias)`` with masked logits set to ``−inf``, so a masked weight is
exactly 0 (a "large negative" such as ``−1e9`` only makes it tiny, and ``−1e-9`` does nothing).
"""

from __future__ import annotations

import math

import torch

from ._validation import check_float_tensor, check_int, check_length, check_real, check_size

__all__ = ["attention", "causal_mask"]


def causal_mask(seq_len: int, k_len: int | None = None) -> torch.Tensor:
    """Boolean causal mask, ``True`` where a query may attend.

    Query ``i`` sits at position ``k_len − seq_len + i`` and may see keys ``j`` at or before it.

    Parameters
    ----------
    seq_len : int
        Number of queries (>= 0).
    k_len : int, optional
        Number of keys (>= ``seq_len``); default ``seq_len``.

    Returns
    -------
    torch.Tensor
        Shape ``(seq_len, k_len)``, bool; lower-triangular when ``k_len == seq_len``.
    """
    seq_len = check_length(seq_len, "seq_len")
    k_len = seq_len if k_len is None else check_int(
        k_len, "k_len", minimum=0, what="a non-negative integer"
    )
    if k_len < seq_len:
        raise ValueError(f"k_len must be >= seq_len = {seq_len}, got k_len = {k_len}")
    check_size(("seq_len", seq_len), ("k_len", k_len), what="the (seq_len, k_len) mask")
    return torch.ones(seq_len, k_len, dtype=torch.bool).tril(diagonal=k_len - seq_len)


def _broadcast(shape: tuple[int, ...], target: tuple[int, ...], name: str) -> None:
    try:
        result = torch.broadcast_shapes(shape, target)
    except RuntimeError:
        result = None
    if result != target:
        raise ValueError(
            f"{name} of shape {shape} must broadcast to the logits' shape {target}"
        )


def _logits(
    q: torch.Tensor, k: torch.Tensor, bias: torch.Tensor | None, scale: float, work: torch.dtype
) -> torch.Tensor | None:
    """``q·kᵀ·scale + bias`` in ``work``, or ``None`` if a finite input overflowed to ±inf/NaN."""
    logits = torch.matmul(q.to(work), k.to(work).transpose(-2, -1)) * scale
    if not bool(torch.isfinite(logits).all()):
        return None
    if bias is not None:
        logits = logits + bias.to(work)
        # bias holds no NaN/+inf, so NaN/+inf (or -inf where bias was finite) means overflow.
        overflow = torch.isposinf(logits) | torch.isnan(logits)
        overflow |= torch.isneginf(logits) & torch.isfinite(bias)
        if bool(overflow.any()):
            return None
    return logits


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    mask: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    scale: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product attention returning the output and the weights.

    ``weights = softmax(q·kᵀ·scale + bias, masked to −inf where mask is False)``,
    ``out = weights · v``.

    Parameters
    ----------
    q : torch.Tensor
        Shape ``(..., q_len, d)``.
    k : torch.Tensor
        Shape ``(..., k_len, d)``.
    v : torch.Tensor
        Shape ``(..., k_len, d_v)``. Leading dimensions of ``q``, ``k``, ``v`` must broadcast.
    mask : torch.Tensor, optional
        Bool, broadcastable to ``(..., q_len, k_len)``; ``True`` = may attend.
    bias : torch.Tensor, optional
        Float, broadcastable to ``(..., q_len, k_len)``, added to the logits (e.g. ALiBi's
        ``(heads, q_len, k_len)``); ``−inf`` entries act as a mask; NaN and ``+inf`` are refused.
    scale : float, optional
        Logit scale, default ``1/√d``.

    Returns
    -------
    tuple of torch.Tensor
        ``out`` of shape ``(..., q_len, d_v)`` and ``weights`` of shape ``(..., q_len, k_len)``,
        both in the dtype of ``q``. Masked weights are exactly 0.

    Raises
    ------
    ValueError
        If ``d = 0``, if there are no keys (``k_len = 0``), if ``q``, ``k``, ``v`` or ``bias`` hold
        NaN or ``+inf``, or if a query row has no key it may attend to (its softmax would be NaN).

    Notes
    -----
    Logits that overflow the working dtype (``q``, ``k`` ~ 1e20 in float32) are recomputed in
    float64, where the softmax subtracts each row's maximum, so large inputs give the exact
    weights instead of NaN rows; logits beyond float64 are refused.
    """
    q = check_float_tensor(q, "q", min_ndim=2)
    k = check_float_tensor(k, "k", min_ndim=2)
    v = check_float_tensor(v, "v", min_ndim=2)
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(f"q, k and v must share a dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must have the same feature size d, got q {tuple(q.shape)}, k {tuple(k.shape)}"
        )
    if q.shape[-1] == 0:
        raise ValueError(
            f"q and k must have a feature size d >= 1, got d = 0 (q of shape {tuple(q.shape)})"
        )
    if k.shape[-2] == 0:
        raise ValueError(
            f"k must hold at least one key (k_len >= 1) for the softmax, got k of shape "
            f"{tuple(k.shape)}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k and v must have the same length k_len, got k {tuple(k.shape)}, v {tuple(v.shape)}"
        )
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not bool(torch.isfinite(t).all()):
            raise ValueError(f"{name} must be finite, got a NaN or infinite entry")
    try:
        lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(
            "the leading (batch/head) dimensions of q, k and v must broadcast, got "
            f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}"
        ) from None
    logits_shape = (*lead, q.shape[-2], k.shape[-2])
    check_size(
        ("prod(q.shape[:-2]) (batch × heads, broadcast with k, v)", math.prod(lead)),
        ("q.shape[-2] (q_len)", q.shape[-2]), ("k.shape[-2] (k_len)", k.shape[-2]),
        what="the (..., q_len, k_len) attention weights",
    )
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else check_real(scale, "scale")
    if bias is not None:
        bias = check_float_tensor(bias, "bias", min_ndim=0)
        _broadcast(tuple(bias.shape), logits_shape, "bias")
        if bool(torch.isnan(bias).any() | torch.isposinf(bias).any()):
            raise ValueError(
                "bias must not hold NaN or +inf (use -inf, or mask, to block a key), "
                "got a NaN or +inf entry"
            )

    # Half precision: softmax in float32, then back.
    work = torch.float32 if q.dtype in (torch.float16, torch.bfloat16) else q.dtype
    logits = _logits(q, k, bias, scale, work)
    if logits is None and work != torch.float64:
        # q·kᵀ (+ bias) overflowed the working dtype: redo the logits and the softmax in float64.
        work = torch.float64
        logits = _logits(q, k, bias, scale, work)
    if logits is None:
        raise ValueError(
            "q·kᵀ·scale + bias overflows float64; make q, k, scale or bias smaller "
            f"(largest |q| = {q.abs().max().item():.3g}, |k| = {k.abs().max().item():.3g})"
        )
    logits = logits.expand(logits_shape)
    if mask is not None:
        if not isinstance(mask, torch.Tensor):
            raise TypeError(f"mask must be a bool torch.Tensor, got {type(mask).__name__}")
        if mask.dtype != torch.bool:
            raise TypeError(
                f"mask must have dtype torch.bool (True = may attend), got {mask.dtype}"
            )
        _broadcast(tuple(mask.shape), logits_shape, "mask")
        logits = logits.masked_fill(~mask, float("-inf"))
    blocked = torch.isneginf(logits).all(dim=-1)
    if bool(blocked.any()):
        raise ValueError(
            "every query must be allowed to attend to at least one key; "
            f"{int(blocked.sum())} row(s) are fully masked by mask/bias"
        )
    weights = torch.softmax(logits, dim=-1)  # subtracts each row's maximum: no overflow
    out = torch.matmul(weights, v.to(work))
    return out.to(q.dtype), weights.to(q.dtype)
