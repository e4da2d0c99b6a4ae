"""Positions at training and serving time: padding, packing, cache shifts, sinks and windows.

Chapter 12's library. Each function is the one-line rule a serving or training stack must get right:

- :func:`position_ids_from_mask` — under padding, a token's position is the number of real tokens
  before it (``attention_mask.cumsum(-1) − 1``), not its column index;
- :func:`packed_position_ids` and :func:`packed_causal_mask` — in a packed row, positions restart at
  every document and a query sees only the earlier tokens of its own document;
- :func:`sliding_window_mask` — a window of ``W`` keys *includes* the query's own key
  (Hugging Face's ``kv > q − W``);
- :func:`rerotate_keys` — a RoPE key cached at position ``p`` becomes the key at ``p + shift`` by
  one more rotation (llama.cpp's K-shift, StreamingLLM's positions within the cache);
- :func:`sink_softmax` — gpt-oss's learned attention sinks: one extra logit per head in the
  softmax, dropped afterwards, so a query's weights may sum to less than one.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ._validation import (
    _describe,
    check_choice,
    check_float_tensor,
    check_int,
    check_length,
    check_size,
)
from .rope import CONVENTIONS, apply_rope_complex, apply_rope_half, apply_rope_interleaved

__all__ = [
    "packed_causal_mask",
    "packed_document_ids",
    "packed_position_ids",
    "position_ids_from_mask",
    "rerotate_keys",
    "sink_softmax",
    "sliding_window_mask",
]


def position_ids_from_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """Position ids of a padded batch: the number of real tokens before each token.

    ``attention_mask.cumsum(-1) − 1`` on real tokens, as Hugging Face's ``generate`` computes them;
    padding slots get 0, as ``generate`` gives them in transformers 5 (any valid index would do:
    they are masked out).
    The result does not depend on which side the padding is on: a row's real tokens are numbered
    ``0, 1, 2 …`` in order.

    Parameters
    ----------
    attention_mask : torch.Tensor
        Shape ``(batch, seq)``, integer or bool, 1 (True) for a real token and 0 for padding.

    Returns
    -------
    torch.Tensor
        Shape ``(batch, seq)``, int64 position ids.
    """
    if not isinstance(attention_mask, torch.Tensor):
        raise TypeError(
            "attention_mask must be a (batch, seq) torch.Tensor of 0/1, "
            f"got {_describe(attention_mask)}"
        )
    if attention_mask.dtype.is_floating_point or attention_mask.dtype.is_complex:
        raise TypeError(
            f"attention_mask must hold integers or bools (0/1), got dtype {attention_mask.dtype}"
        )
    if attention_mask.ndim != 2:
        raise ValueError(
            "attention_mask must have shape (batch, seq), "
            f"got shape {tuple(attention_mask.shape)}"
        )
    mask = attention_mask.long()
    if not bool(((mask == 0) | (mask == 1)).all()):
        raise ValueError("attention_mask must hold only 0 and 1")
    positions = mask.cumsum(-1) - 1
    return positions.masked_fill(mask == 0, 0)


def _lengths(lengths: object) -> list[int]:
    """Document lengths: a non-empty sequence (or 1-D integer tensor) of positive integers."""
    if isinstance(lengths, torch.Tensor):
        if lengths.ndim != 1 or lengths.dtype.is_floating_point or lengths.dtype == torch.bool:
            raise TypeError(
                f"lengths must be a 1-D integer tensor or a sequence of positive integers, "
                f"got a tensor of shape {tuple(lengths.shape)} and dtype {lengths.dtype}"
            )
        lengths = lengths.tolist()
    if not isinstance(lengths, Sequence) or isinstance(lengths, (str, bytes)):
        raise TypeError(
            f"lengths must be a sequence of positive integers, got {_describe(lengths)}"
        )
    if len(lengths) == 0:
        raise ValueError("lengths must hold at least one document length, got an empty sequence")
    values = [check_int(n, "lengths[i]", minimum=1, what="a positive integer") for n in lengths]
    check_size(("sum(lengths)", sum(values)), what="the packed row")
    return values


def packed_position_ids(lengths: Sequence[int] | torch.Tensor) -> torch.Tensor:
    """Position ids of documents packed into one row: ``0 … n−1`` for each document in turn.

    Parameters
    ----------
    lengths : sequence of int or 1-D integer tensor
        The documents' lengths, each >= 1.

    Returns
    -------
    torch.Tensor
        Shape ``(sum(lengths),)``, int64.
    """
    values = _lengths(lengths)
    return torch.cat([torch.arange(n, dtype=torch.long) for n in values])


def packed_document_ids(lengths: Sequence[int] | torch.Tensor) -> torch.Tensor:
    """Which document each slot of a packed row belongs to: ``0, 0, …, 1, 1, …``.

    Parameters
    ----------
    lengths : sequence of int or 1-D integer tensor
        The documents' lengths, each >= 1.

    Returns
    -------
    torch.Tensor
        Shape ``(sum(lengths),)``, int64.
    """
    values = _lengths(lengths)
    counts = torch.tensor(values, dtype=torch.long)
    return torch.repeat_interleave(torch.arange(len(values)), counts)


def packed_causal_mask(lengths: Sequence[int] | torch.Tensor) -> torch.Tensor:
    """Causal mask of a packed row: a query sees the earlier keys of its own document only.

    Parameters
    ----------
    lengths : sequence of int or 1-D integer tensor
        The documents' lengths, each >= 1.

    Returns
    -------
    torch.Tensor
        Shape ``(total, total)`` with ``total = sum(lengths)``, bool, ``True`` where a query may
        attend: block-diagonal, each block lower-triangular.
    """
    values = _lengths(lengths)
    total = sum(values)
    check_size(("total", total), ("total", total), what="the (total, total) mask")
    docs = packed_document_ids(values)
    same_document = docs[:, None] == docs[None, :]
    return same_document & torch.ones(total, total, dtype=torch.bool).tril()


def sliding_window_mask(seq_len: int, window: int) -> torch.Tensor:
    """Causal sliding-window mask: query ``i`` sees keys ``j`` with ``i − window < j <= i``.

    ``window`` counts keys *including the query's own*, as Hugging Face's masks do
    (``kv_idx > q_idx − sliding_window``); a query therefore sees ``min(i + 1, window)`` keys.
    The other convention in circulation, ``i − window <= j <= i`` (``window + 1`` keys, as in
    Mistral's original reference code), is ``sliding_window_mask(seq_len, window + 1)``.

    Parameters
    ----------
    seq_len : int
        Number of positions (>= 0).
    window : int
        Keys per query, the query's own included (>= 1).

    Returns
    -------
    torch.Tensor
        Shape ``(seq_len, seq_len)``, bool, ``True`` where a query may attend.
    """
    seq_len = check_length(seq_len, "seq_len")
    window = check_int(window, "window", minimum=1, what="a positive integer (keys per query)")
    check_size(("seq_len", seq_len), ("seq_len", seq_len), what="the (seq_len, seq_len) mask")
    offset = torch.arange(seq_len)[:, None] - torch.arange(seq_len)[None, :]
    # A window wider than the sequence never binds; clamping keeps 2**70 out of an int64 compare.
    return (offset >= 0) & (offset < min(window, seq_len + 1))


_APPLY = {
    "half": apply_rope_half,
    "interleaved": apply_rope_interleaved,
    "complex": apply_rope_complex,
}


def rerotate_keys(
    keys: torch.Tensor,
    shift: float | torch.Tensor,
    *,
    base: float | None = None,
    inv_freq: torch.Tensor | None = None,
    convention: str = "half",
) -> torch.Tensor:
    """Move cached RoPE keys by ``shift`` positions: one more rotation by ``shift·θᵢ`` per pair.

    A key rotated for position ``p`` becomes, exactly up to rounding, the key rotated for ``p +
    shift`` — because rotations by the *same* frequencies compose: ``R(shift·θ)·R(p·θ) = R((p +
    shift)·θ)``. That is llama.cpp's K-shift after it evicts cached tokens (``shift < 0``). It holds
    only while the frequencies ``θᵢ`` stay the same: when a method changes them with the length
    (dynamic NTK, LongRoPE's short/long switch) a shift is not enough. It moves *positions*
    exactly; in every layer but the first, a cached key's content still remembers tokens that were
    evicted, so a shifted cache is not a recomputation of the shortened text.

    Parameters
    ----------
    keys : torch.Tensor
        Shape ``(..., seq, dim)``, float; RoPE-rotated keys in ``convention``'s layout.
    shift : float or torch.Tensor
        Positions to move by: one number for every key, or shape ``(seq,)`` (one per key).
    base : float, optional
        RoPE base (default 10 000 when ``inv_freq`` is not given); not both.
    inv_freq : torch.Tensor, optional
        Shape ``(dim // 2,)``: the inverse frequencies the keys were rotated with.
    convention : str
        ``"half"`` (Hugging Face / GPT-NeoX), ``"interleaved"`` (GPT-J) or ``"complex"`` (Meta).

    Returns
    -------
    torch.Tensor
        Same shape and dtype as ``keys``.
    """
    convention = check_choice(convention, "convention", CONVENTIONS)
    keys = check_float_tensor(keys, "keys", min_ndim=2)
    seq = keys.shape[-2]
    if isinstance(shift, torch.Tensor) and shift.ndim == 1:
        positions = shift
    elif isinstance(shift, torch.Tensor) and shift.ndim == 0:
        positions = shift.expand(seq)
    elif isinstance(shift, torch.Tensor):
        raise ValueError(
            "shift must be a number or a 1-D tensor of shape (seq,), "
            f"got shape {tuple(shift.shape)}"
        )
    else:
        if isinstance(shift, bool) or not isinstance(shift, (int, float)):
            raise TypeError(
                f"shift must be a real number or a (seq,) tensor, got {_describe(shift)}"
            )
        positions = torch.full((seq,), float(shift), dtype=torch.float64)
    if base is not None and inv_freq is not None:
        raise ValueError("pass either base or inv_freq, not both")
    if inv_freq is not None:
        return _APPLY[convention](keys, positions, inv_freq=inv_freq)
    return _APPLY[convention](keys, positions, base=10000.0 if base is None else base)


def sink_softmax(logits: torch.Tensor, sink_logits: torch.Tensor) -> torch.Tensor:
    """Softmax with one learned sink logit per head (gpt-oss), the sink's column dropped.

    ``weights = softmax([logits, s_h])[..., :-1]``: the sink takes a share
    ``e^{s_h} / (e^{s_h} + Σ_j e^{logit_j})`` of each query's attention and contributes no value,
    so the weights over real keys sum to less than one — a head can attend to "nothing".
    Masked logits may be ``−inf``.

    Parameters
    ----------
    logits : torch.Tensor
        Shape ``(..., heads, q_len, k_len)``, float: scaled scores plus mask.
    sink_logits : torch.Tensor
        Shape ``(heads,)``: one sink logit per head.

    Returns
    -------
    torch.Tensor
        Shape ``(..., heads, q_len, k_len)``, the attention weights over the real keys.
    """
    logits = check_float_tensor(logits, "logits", min_ndim=3)
    sink_logits = check_float_tensor(sink_logits, "sink_logits", min_ndim=1)
    heads = logits.shape[-3]
    if sink_logits.ndim != 1 or sink_logits.shape[0] != heads:
        raise ValueError(
            f"sink_logits must have shape (heads,) = ({heads},) to match logits.shape[-3], "
            f"got shape {tuple(sink_logits.shape)}"
        )
    if not bool(torch.isfinite(sink_logits).all()):
        raise ValueError("sink_logits must be finite")
    sinks = sink_logits.to(logits.dtype)[:, None, None].expand(*logits.shape[:-1], 1)
    combined = torch.cat([logits, sinks], dim=-1)
    return torch.softmax(combined, dim=-1)[..., :-1]
