"""Deliberately buggy code, kept so the book can show each bug failing next to its fix.

Every function here reproduces, in our own code, a mistake or a limit, labelled in its docstring:
a mistake found in public positional-encoding code (the source is named), a constructed mistake
for which no public instance is cited, or a precision limit that is a deliberate trade-off rather
than a bug. Nothing in this module is meant to be used in a model: each docstring names the
problem and the correct counterpart elsewhere in ``posenc_lib``. The functions still validate
their arguments, so that a demonstration fails only for the reason it is meant to fail.
"""

from __future__ import annotations

import math

import torch

from posenc_lib._validation import (
    check_base,
    check_dim,
    check_dtype,
    check_float_tensor,
    check_int,
    check_length,
    check_positions,
    check_positive_int,
    check_rope_input,
    check_size,
)

__all__ = [
    "alibi_bias_wrong_sign",
    "alibi_slopes_literal",
    "attention_tiny_fill",
    "meta_rope_angles_float32",
    "rope_missing_minus",
    "rope_table_layout_mismatch",
    "seed_attention_buggy",
    "sinusoidal_table_div_term_multiplied",
]


def _check_qkv(q: object, k: object, v: object) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    q = check_float_tensor(q, "q", min_ndim=2)
    k = check_float_tensor(k, "k", min_ndim=2)
    v = check_float_tensor(v, "v", min_ndim=2)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must share the last dimension, got {tuple(q.shape)} and {tuple(k.shape)}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k and v must share the sequence dimension, got {tuple(k.shape)} and {tuple(v.shape)}"
        )
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(f"q, k and v must share a dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    try:
        lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(
            "the leading (batch/head) dimensions of q, k and v must broadcast, got "
            f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}"
        ) from None
    check_size(
        ("prod(q.shape[:-2]) (batch × heads)", math.prod(lead)),
        ("q.shape[-2] (seq_q)", q.shape[-2]), ("k.shape[-2] (seq_k)", k.shape[-2]),
        what="the (..., seq_q, seq_k) attention weights",
    )
    return q, k, v


def _check_mask(mask: object, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor | None:
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"mask must be a torch.Tensor or None, got {type(mask).__name__}")
    try:
        torch.broadcast_shapes(mask.shape, (*q.shape[:-1], k.shape[-2]))
    except RuntimeError:
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to the scores' shape "
            f"{(*q.shape[:-1], k.shape[-2])}"
        ) from None
    return mask


def seed_attention_buggy(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """BUG: the mask is silently ignored (and its fill value is a tiny number, not a large one).

    A faithful reproduction of the pattern in the first seed article's ``attention()``: the masked
    logits are written to a *new* variable, and the softmax is then taken of the *unmasked* logits,
    so ``mask`` changes nothing. The fill value is ``-1e-9`` (a number extremely close to zero)
    where a large negative number such as ``-1e9`` or ``-inf`` was meant, so even with the
    assignment repaired the masked positions would keep almost their full weight
    (see :func:`attention_tiny_fill`).

    Fixed counterpart: :func:`posenc_lib.attention.attention`, whose masked weights are exactly 0.

    Parameters
    ----------
    q, k, v
        ``(..., seq_q, d)``, ``(..., seq_k, d)``, ``(..., seq_k, d_v)``.
    mask
        Boolean or 0/1 tensor broadcastable to ``(..., seq_q, seq_k)``; 0/False = must not attend.

    Returns
    -------
    (out, weights)
        ``(..., seq_q, d_v)`` and ``(..., seq_q, seq_k)``.
    """
    q, k, v = _check_qkv(q, k, v)
    mask = _check_mask(mask, q, k)
    att_logits = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
    if mask is not None:
        # The bug, kept on purpose: the result goes to a variable that is overwritten below.
        att_scores = att_logits.masked_fill(mask == 0, -1e-9)
    att_scores = torch.softmax(att_logits, dim=-1)  # softmax of the UNMASKED logits
    return att_scores @ v, att_scores


def attention_tiny_fill(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """BUG: masked logits are set to ``-1e-9``, a tiny number, instead of ``-1e9`` or ``-inf``.

    The seed's attention with only its first bug (the overwritten variable) repaired. The masked
    logits become about 0, so after the softmax every masked position still gets a weight of
    about ``exp(0) / sum`` -- comparable to the allowed ones.

    Fixed counterpart: :func:`posenc_lib.attention.attention`.

    Shapes as in :func:`seed_attention_buggy`.
    """
    q, k, v = _check_qkv(q, k, v)
    mask = _check_mask(mask, q, k)
    att_logits = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
    if mask is not None:
        att_logits = att_logits.masked_fill(mask == 0, -1e-9)  # the bug: -1e-9, not -1e9
    weights = torch.softmax(att_logits, dim=-1)
    return weights @ v, weights


def sinusoidal_table_div_term_multiplied(
    seq_len: int, dim: int, base: float = 10000.0, *, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """BUG: positions are *multiplied* by ``div_term = base**(2i/dim)`` instead of divided by it.

    Found in public code: goodfire-ai/spd pull request #88 ("multiplying rather than dividing")
    and aharley/pips issue #30 (a growing ``div_term`` multiplies the coordinate).

    The formula is ``sin(p / base**(2i/d))``. Code that names ``base**(2i/d)`` the "division
    term" and then writes ``position * div_term`` (or that negates the exponent and then divides)
    turns the angle per position of pair ``i`` into ``base**(2i/d)`` radians: instead of
    wavelengths from ``2*pi`` up to ``2*pi*base`` positions, every pair but the first spins
    faster than once per position, and the table looks like noise.

    Fixed counterpart: :func:`posenc_lib.sinusoidal.sinusoidal_table`.

    Returns
    -------
    torch.Tensor
        ``(seq_len, dim)``, sines in even columns and cosines in odd columns, as the fixed table.
    """
    seq_len = check_length(seq_len, "seq_len")
    dim = check_dim(dim)
    base = check_base(base)
    dtype = check_dtype(dtype)
    check_size(("seq_len", seq_len), ("dim", dim), what="the (seq_len, dim) table")
    position = torch.arange(seq_len, dtype=torch.float64)[:, None]
    div_term = base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    angles = position * div_term  # the bug: should be position / div_term
    table = torch.empty(seq_len, dim, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)
    return table.to(dtype)


def _interleaved_table(x: torch.Tensor, seq: int, dim: int, positions: torch.Tensor | None,
                       base: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``x`` in float64 and interleaved cos/sin tables ``(seq, dim)``: angles θ0, θ0, θ1, θ1, …"""
    base = check_base(base)
    if positions is None:
        positions = torch.arange(seq, dtype=torch.float64)
    positions = check_positions(positions, seq)
    inv_freq = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    angles = positions[:, None] * inv_freq  # (seq, dim/2), float64 as in the library
    cos = torch.cos(angles).repeat_interleave(2, dim=-1)
    sin = torch.sin(angles).repeat_interleave(2, dim=-1)
    return x.to(torch.float64), cos, sin


def rope_missing_minus(
    x: torch.Tensor, positions: torch.Tensor | None = None, *, base: float = 10000.0
) -> torch.Tensor:
    """BUG (constructed; no public instance cited): the interleaved "rotate" step loses its minus.

    Correct RoPE (interleaved pairs ``(2i, 2i+1)``) computes
    ``x * cos + stack([-x[..., 1::2], x[..., ::2]]) * sin``. Dropping the minus gives
    ``stack([x[..., 1::2], x[..., ::2]])``: each 2x2 block becomes ``[[cos, sin], [sin, cos]]``,
    which is not a rotation. Norms change with the position, and ``q . k`` no longer depends
    on the offset alone.

    Fixed counterpart: :func:`posenc_lib.rope.apply_rope_interleaved`.

    Parameters
    ----------
    x
        ``(..., seq, dim)`` with even ``dim``.
    positions
        ``(seq,)``; default ``arange(seq)``.

    Returns
    -------
    torch.Tensor
        Same shape and dtype as ``x``.
    """
    x, seq, dim = check_rope_input(x)
    x64, cos, sin = _interleaved_table(x, seq, dim, positions, base)
    swapped = torch.stack([x64[..., 1::2], x64[..., ::2]], dim=-1).flatten(-2)  # minus missing
    return (x64 * cos + swapped * sin).to(x.dtype)


def rope_table_layout_mismatch(
    x: torch.Tensor, positions: torch.Tensor | None = None, *, base: float = 10000.0
) -> torch.Tensor:
    """BUG (public): a cos/sin table built for interleaved pairs, rotated as half-split pairs.

    The table repeats each angle for adjacent features, ``repeat_interleave(2)``:
    ``[θ_0, θ_0, θ_1, θ_1, …]``, the pairs ``(2i, 2i+1)``; the rotation is Hugging Face's
    ``x * cos + rotate_half(x) * sin``, which pairs feature ``j`` with ``j + d/2``. Each half is
    right for its own convention; together the block of pair ``(j, j + d/2)`` is
    ``[[cos α, −sin α], [sin β, cos β]]`` with ``α = m·θ_⌊j/2⌋`` and ``β = m·θ_(⌊j/2⌋ + d/4)``:
    not a rotation (its determinant is ``cos(α − β)``), so norms change with the position and
    ``q . k`` no longer depends on the offset alone. Found in a tutorial
    (raiyanyahya/how-to-train-your-gpt, issue #6, 2026); transformers' Qwen2.5-Omni speech
    decoder had the converse (a half-split table with an interleaved rotation, issue #47328).

    Fixed counterparts: :func:`posenc_lib.rope.apply_rope_half` (half-split table and rotation) and
    :func:`posenc_lib.rope.apply_rope_interleaved` (both interleaved).

    Parameters
    ----------
    x
        ``(..., seq, dim)`` with ``dim`` a multiple of 4 (so that ``d/2`` is even).
    positions
        ``(seq,)``; default ``arange(seq)``.

    Returns
    -------
    torch.Tensor
        Same shape and dtype as ``x``.
    """
    x, seq, dim = check_rope_input(x)
    if dim % 4 != 0:
        raise ValueError(f"dim (x's last dimension) must be a multiple of 4 here, got {dim}")
    x64, cos, sin = _interleaved_table(x, seq, dim, positions, base)  # θ0, θ0, θ1, θ1, …
    half = dim // 2
    rotated_half = torch.cat([-x64[..., half:], x64[..., :half]], dim=-1)  # pairs (j, j + d/2)
    return (x64 * cos + rotated_half * sin).to(x.dtype)


def meta_rope_angles_float32(
    positions: torch.Tensor, dim: int, base: float = 10000.0
) -> torch.Tensor:
    """PRECISION LIMIT (not a bug): float32 RoPE angles, as in Meta's ``precompute_freqs_cis``.

    The reference code computes ``freqs = 1 / base**(arange(0, dim, 2) / dim)`` in float32 and
    then ``outer(t, freqs)`` in float32. Both the frequencies and the product are rounded to
    24-bit mantissas, so at position ``10**6`` (angle up to ``10**6`` radians, where a float32
    ulp is 0.0625) an angle is off by a few hundredths of a radian.

    Fixed counterpart: :func:`posenc_lib.rope.rope_angles` with
    :func:`posenc_lib.rope.rope_inv_freq`, which compute in float64.

    Parameters
    ----------
    positions
        ``(seq,)`` integer or float positions.
    dim
        Even head dimension.

    Returns
    -------
    torch.Tensor
        ``(seq, dim // 2)`` float32 angles in radians (not reduced modulo ``2*pi``).
    """
    dim = check_dim(dim)
    base = check_base(base)
    positions = check_positions(positions)
    check_size(("len(positions)", positions.shape[0]), ("dim // 2", dim // 2),
               what="the (seq, dim // 2) angles")
    freqs = 1.0 / (base ** (torch.arange(0, dim, 2)[: dim // 2].float() / dim))
    t = positions.to(torch.float32)
    return torch.outer(t, freqs).float()


def alibi_slopes_literal(n_heads: int, *, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """BUG: ALiBi slopes read literally as ``2^(−8k/n)``, ``k = 1 … n``, for every head count.

    The paper's general sentence ("the geometric sequence that starts at 2^(−8/n) and uses that
    same value as its ratio") gives these slopes, and for ``n`` a power of two they are right.
    For other head counts the authors' code -- and every model trained with it (BLOOM,
    Baichuan-13B) -- uses the slopes of the nearest smaller power of two followed by every other
    slope of the next one. A checkpoint run with the literal slopes gets the wrong slope on most
    heads (up to ~45x off at 12 heads and ~89x at 40).

    Fixed counterpart: :func:`posenc_lib.alibi.alibi_slopes`.

    Returns
    -------
    torch.Tensor
        Shape ``(n_heads,)``, decreasing.
    """
    from posenc_lib.alibi import MAX_HEADS  # the same cap as the fixed function

    n_heads = check_int(n_heads, "n_heads", minimum=1, what="a positive integer (>= 1)")
    if n_heads > MAX_HEADS:
        raise ValueError(f"n_heads must be a positive integer <= {MAX_HEADS}, got {n_heads}")
    dtype = check_dtype(dtype)
    k = torch.arange(1, n_heads + 1, dtype=torch.float64)
    return torch.exp2(-8.0 * k / n_heads).to(dtype)  # the bug: right only for n = 2^a


def alibi_bias_wrong_sign(
    n_heads: int, seq_len: int, *, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """BUG: the causal ALiBi bias with its sign flipped, ``+μ·(m − n)`` instead of ``−μ·(m − n)``.

    Easy to write when porting code that adds ``+m·j`` (see
    :func:`posenc_lib.alibi.alibi_bias_authors`) to a kernel that takes ``m − n``: the far past
    is then *rewarded*, and a content-free query attends mostly to the first token.

    Fixed counterpart: :func:`posenc_lib.alibi.alibi_bias`.

    Returns
    -------
    torch.Tensor
        Shape ``(n_heads, seq_len, seq_len)``, ``−inf`` above the diagonal.
    """
    from posenc_lib.alibi import alibi_bias

    n_heads = check_positive_int(n_heads, "n_heads")
    seq_len = check_length(seq_len, "seq_len")
    check_size(("n_heads", n_heads), ("seq_len", seq_len), ("seq_len", seq_len),
               what="the (n_heads, seq_len, seq_len) bias")
    bias = alibi_bias(n_heads, seq_len, dtype=torch.float64)
    flipped = (-bias).masked_fill(torch.isneginf(bias), float("-inf"))  # the bug: + instead of −
    return flipped.to(check_dtype(dtype))
