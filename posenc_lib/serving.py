"""Positions at training and serving time: padding, packing, cache shifts, sinks and windows.

Chapter 12's library. Each function is the one-line rule a serving or training stack must get right:

- :func:`position_ids_from_mask` — under padding, a token's position is the number of real tokens
  before it (``attention_mask.cumsum(-1) − 1``), not its column index;
- :func:`packed_position_ids` and :func:`packed_causal_mask` — in a packed row, positions restart at
  every document and a query sees only the earlier tokens of its own document;
- :func:`sliding_window_mask` — a window of ``W`` keys *includes* the query's own key
  (Hugging Face's ``kv > q − W``);
- :func:`streaming_cache_mask` — StreamingLLM's cache: a query sees the first ``n_sinks`` keys
  (the attention sinks) and the ``window`` most recent ones, its own included;
- :func:`rerotate_keys` — a RoPE key cached at position ``p`` becomes the key at ``p + shift`` by
  one more rotation (llama.cpp's K-shift, StreamingLLM's positions within the cache);
- :func:`layer_rope_frequencies` and :func:`shift_cache` — a K-shift of a whole transformers cache,
  each layer with its own frequencies (Gemma 3's local and global bases, SmolLM3's NoPE layers);
- :func:`sink_softmax` — gpt-oss's learned attention sinks: one extra logit per head in the
  softmax, dropped afterwards, so a query's weights may sum to less than one;
- :func:`audit_positions` — every trap above, flagged on a batch before it reaches a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ._validation import (
    _describe,
    check_base,
    check_choice,
    check_float_tensor,
    check_int,
    check_inv_freq,
    check_length,
    check_real,
    check_size,
)
from .rope import CONVENTIONS, apply_rope_complex, apply_rope_half, apply_rope_interleaved

__all__ = [
    "AUDIT_CODES",
    "PositionIssue",
    "audit_positions",
    "layer_rope_frequencies",
    "packed_causal_mask",
    "packed_document_ids",
    "packed_position_ids",
    "position_ids_from_mask",
    "quantize_keys_absmax",
    "repeated_kshift",
    "rerotate_keys",
    "shift_cache",
    "sink_softmax",
    "sliding_window_mask",
    "streaming_cache_mask",
    "tree_attention_mask",
    "tree_position_ids",
    "zigzag_shard_indices",
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


def packed_causal_mask(
    lengths: Sequence[int] | torch.Tensor, *, dtype: torch.dtype
) -> torch.Tensor:
    """Causal mask of a packed row: a query sees the earlier keys of its own document only.

    transformers 5.25 hands a 4-D mask to the attention as it is. SDPA reads a bool mask as
    "``True`` = attend"; eager attention *adds* the mask to the scores (``attn_weights +
    attention_mask``), so a bool mask there adds 1 and 0 and masks nothing. For eager pass an
    additive mask (``dtype=torch.float32``, or the model's dtype), which both backends read alike.
    ``dtype`` has no default because the bool form is silently wrong on eager: name the form.
    FlashAttention takes no 4-D mask: give it the boundaries as ``cu_seq_lens_q``/``cu_seq_lens_k``.

    Parameters
    ----------
    lengths : sequence of int or 1-D integer tensor
        The documents' lengths, each >= 1.
    dtype : torch.dtype
        Keyword only, required: ``torch.bool`` for a bool mask (``True`` = attend; SDPA and
        boolean combinations), or a floating dtype for an additive one: ``0`` where a query may
        attend, ``torch.finfo(dtype).min`` elsewhere (eager and SDPA).

    Returns
    -------
    torch.Tensor
        Shape ``(total, total)`` with ``total = sum(lengths)``: block-diagonal, each block
        lower-triangular; bool (``True`` where a query may attend) or additive of ``dtype``.
    """
    if not isinstance(dtype, torch.dtype) or not (dtype == torch.bool or dtype.is_floating_point):
        raise TypeError(
            f"dtype must be torch.bool (a bool mask, read by SDPA) or a floating torch.dtype (an "
            f"additive mask, read by eager and SDPA), got {_describe(dtype)}"
        )
    values = _lengths(lengths)
    total = sum(values)
    check_size(("total", total), ("total", total), what="the (total, total) mask")
    docs = packed_document_ids(values)
    same_document = docs[:, None] == docs[None, :]
    allowed = same_document & torch.ones(total, total, dtype=torch.bool).tril()
    if dtype == torch.bool:
        return allowed
    return torch.zeros(total, total, dtype=dtype).masked_fill(~allowed, torch.finfo(dtype).min)


def sliding_window_mask(
    seq_len: int,
    window: int,
    *,
    offset: int = 0,
    lengths: Sequence[int] | torch.Tensor | None = None,
) -> torch.Tensor:
    """Causal sliding-window mask: a query at ``m`` sees keys ``n`` with ``m − window < n <= m``.

    ``window`` counts keys *including the query's own*, as Hugging Face's masks do
    (``kv_idx > q_idx − sliding_window``); a query therefore sees ``min(m + 1, window)`` keys.
    The other convention in circulation, ``m − window <= n <= m`` (``window + 1`` keys, as in
    Mistral's original reference code), is ``sliding_window_mask(seq_len, window + 1)``.

    With ``offset`` cached positions before the queries (decoding one token, a prefill chunk, a
    cached prefix), the ``seq_len`` queries sit at positions ``offset … offset + seq_len − 1`` and
    the keys at ``0 … offset + seq_len − 1``. With ``lengths`` (a packed row) a query also sees
    only keys of its own document: the window and the document mask, both at once.

    Parameters
    ----------
    seq_len : int
        Number of queries (>= 0).
    window : int
        Keys per query, the query's own included (>= 1).
    offset : int
        Positions already in the cache before the first query (>= 0).
    lengths : sequence of int or 1-D integer tensor, optional
        Document lengths of a packed row, summing to ``offset + seq_len``.

    Returns
    -------
    torch.Tensor
        Shape ``(seq_len, offset + seq_len)``, bool, ``True`` where a query may attend.
    """
    seq_len = check_length(seq_len, "seq_len")
    window = check_int(window, "window", minimum=1, what="a positive integer (keys per query)")
    offset = check_int(
        offset, "offset", minimum=0, what="a non-negative integer (cached positions)"
    )
    k_len = offset + seq_len
    check_size(("seq_len", seq_len), ("offset + seq_len", k_len), what="the (seq_len, k_len) mask")
    distance = (torch.arange(seq_len)[:, None] + offset) - torch.arange(k_len)[None, :]
    # A window wider than the sequence never binds; clamping keeps 2**70 out of an int64 compare.
    mask = (distance >= 0) & (distance < min(window, k_len + 1))
    if lengths is not None:
        values = _lengths(lengths)
        if sum(values) != k_len:
            raise ValueError(
                f"lengths must sum to offset + seq_len = {k_len} (every key's document), "
                f"got sum(lengths) = {sum(values)}"
            )
        docs = packed_document_ids(values)
        mask &= docs[offset:, None] == docs[None, :]
    return mask


def streaming_cache_mask(seq_len: int, window: int, n_sinks: int) -> torch.Tensor:
    """Which keys a query sees in a StreamingLLM cache: ``n_sinks`` first keys + a recent window.

    StreamingLLM (Xiao et al., 2024) keeps the keys and values of the first ``n_sinks`` tokens
    (the attention sinks; the paper keeps 4) and of the most recent tokens, and evicts the rest.
    Here ``window`` counts the recent keys *including the query's own*, as
    :func:`sliding_window_mask` does: a query at ``m`` sees key ``n`` when ``n <= m`` and
    ``n < n_sinks`` or ``m − window < n``. So it sees ``min(m + 1, n_sinks + window)`` keys, and
    ``n_sinks = 0`` is :func:`sliding_window_mask`. In StreamingLLM's own cache a kept key's
    position is its rank among the kept keys (its slot), not its place in the text; this mask
    says only which keys are kept.

    Parameters
    ----------
    seq_len : int
        Number of tokens, queries and keys alike (>= 0).
    window : int
        Recent keys per query, the query's own included (>= 1).
    n_sinks : int
        First keys every query keeps (>= 0).

    Returns
    -------
    torch.Tensor
        Shape ``(seq_len, seq_len)``, bool, ``True`` where query ``m`` (row) sees key ``n``.
    """
    seq_len = check_length(seq_len, "seq_len")
    window = check_int(window, "window", minimum=1, what="a positive integer (recent keys)")
    n_sinks = check_int(
        n_sinks, "n_sinks", minimum=0, what="a non-negative integer (sink keys kept)"
    )
    check_size(("seq_len", seq_len), ("seq_len", seq_len), what="the (seq_len, seq_len) mask")
    sinks = torch.arange(seq_len)[None, :] < n_sinks
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool).tril()
    return sliding_window_mask(seq_len, window) | (sinks & causal)


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
    rotary_dim: int | None = None,
) -> torch.Tensor:
    """Move cached RoPE keys by ``shift`` positions: one more rotation by ``shift·θᵢ`` per pair.

    A key rotated for position ``p`` becomes, exactly up to rounding, the key rotated for ``p +
    shift`` — because rotations by the *same* frequencies compose: ``R(shift·θ)·R(p·θ) = R((p +
    shift)·θ)``. That is llama.cpp's K-shift after it evicts cached tokens (``shift < 0``). It holds
    only while the frequencies ``θᵢ`` stay the same: when a method changes them with the length
    (dynamic NTK, LongRoPE's short/long switch) a shift is not enough. It moves *positions*
    exactly; in every layer but the first, a cached key's content still remembers tokens that were
    evicted, so a shifted cache is not a recomputation of the shortened text.

    ``shift`` may also be a ``(seq,)`` tensor, one shift per cached key; with a frequency
    difference as ``inv_freq`` the call corrects each key's rotation for a change of frequencies
    (dynamic NTK). In a model of several layers both are exact only in the first layer: a deeper
    layer's keys were computed from hidden states that attended to the evicted tokens, or with the
    old frequencies (chapter 12 measures both). To rotate raw keys the first time, use
    :func:`~posenc_lib.rope.apply_rope_half` (or the convention's ``apply_rope_*``).

    ``convention`` must be the layout *of the cache*, which is not always the checkpoint's:

    - Llama, Mistral, Qwen, Gemma in transformers: ``"half"`` (``rotate_half``);
    - GPT-J in transformers, llama.cpp's ``LLAMA_ROPE_TYPE_NORM`` models: ``"interleaved"``;
    - Meta's Llama ``model.py`` (complex pairs): ``"complex"``, the same numbers as
      ``"interleaved"``;
    - DeepSeek-V3 (MLA) in transformers 5.25: ``"half"``, although ``rope_interleave=True``:
      its ``apply_rotary_pos_emb_interleave`` reads the pairs ``(2i, 2i+1)`` and writes the
      rotated key de-interleaved, ``[x_even | x_odd]``;
    - DeepSeek-V2 (MLA) in transformers 5.25: ``"interleaved"`` (or ``"complex"``): its
      ``apply_rotary_emb`` rotates complex pairs ``(2i, 2i+1)`` through ``view_as_complex`` and
      keeps them in place. Both DeepSeek classes hold the latent in ``layer.keys`` and the
      rotary key alone in ``layer.values``; DeepSeek's own ``model.py`` caches ``k_pe`` in the
      interleaved (complex) layout;
    - partial rotary (GPT-NeoX, Phi-2, Qwen3.5): the first ``rotary_dim`` features, in that model's
      pairing; pass ``rotary_dim``.

    Parameters
    ----------
    keys : torch.Tensor
        Shape ``(..., seq, dim)``, float; RoPE-rotated keys in ``convention``'s layout.
    shift : float or torch.Tensor
        Positions to move by: one number for every key, or shape ``(seq,)`` (one per key).
    base : float, optional
        RoPE base the keys were rotated with (the model's ``rope_theta``). Give ``base`` or
        ``inv_freq``, exactly one: there is no default, because a K-shift with another model's
        base moves the keys to wrong positions without an error.
    inv_freq : torch.Tensor, optional
        Shape ``(dim // 2,)``: the inverse frequencies the keys were rotated with.
    convention : str
        ``"half"`` (Hugging Face / GPT-NeoX), ``"interleaved"`` (GPT-J) or ``"complex"`` (Meta).
    rotary_dim : int, optional
        Rotate only the first ``rotary_dim`` features (even, ``2 <= rotary_dim <= dim``) and leave
        the rest untouched, as partial-rotary models do; ``inv_freq`` then has
        ``rotary_dim // 2`` entries. Default: all ``dim`` features.

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
    if base is None and inv_freq is None:
        raise ValueError(
            "rerotate_keys needs the frequencies the keys were rotated with: pass base= (the "
            "model's rope_theta, e.g. 10000.0) or inv_freq="
        )
    dim = keys.shape[-1]
    if rotary_dim is not None:
        rotary_dim = check_int(rotary_dim, "rotary_dim", minimum=2, what="an even integer >= 2")
        if rotary_dim % 2 or rotary_dim > dim:
            raise ValueError(
                f"rotary_dim must be even and at most the key size {dim}, got {rotary_dim}"
            )
    else:
        rotary_dim = dim
    rot, rest = keys[..., :rotary_dim], keys[..., rotary_dim:]
    if inv_freq is not None:
        rot = _APPLY[convention](rot, positions, inv_freq=inv_freq)
    else:
        rot = _APPLY[convention](rot, positions, base=base)
    return torch.cat((rot, rest), dim=-1) if rest.shape[-1] else rot


_KSHIFT_ARITHMETIC = ("float32", "storage")


def repeated_kshift(
    keys: torch.Tensor,
    shift: float,
    n_shifts: int,
    *,
    base: float | None = None,
    inv_freq: torch.Tensor | None = None,
    dtype: torch.dtype = torch.bfloat16,
    arithmetic: str = "float32",
) -> torch.Tensor:
    """K-shift a low-precision cache ``n_shifts`` times by ``shift``, rounding after each shift.

    A rolling cache that stores keys after RoPE and K-shifts them at every eviction (say one
    token per decoding step) moves the *same* cached keys once per eviction, and stores the result
    back in the cache's dtype each time, so the rounding errors of the shifts add up; one shift by
    the total, or rotating pre-RoPE keys once to their final position, rounds once. (llama.cpp's
    server, by default, discards half of the non-kept tokens at each context shift, ``n_discard =
    n_left / 2``, so a key is shifted about once before it is discarded.) Keys are in the
    ``"half"`` layout (Hugging Face).

    Parameters
    ----------
    keys : torch.Tensor
        Shape ``(..., seq, dim)``, float; RoPE-rotated keys, rounded to ``dtype`` before the first
        shift.
    shift : float
        Positions each shift moves the keys by (negative after an eviction).
    n_shifts : int
        Number of shifts, >= 1.
    base, inv_freq :
        The frequencies the keys were rotated with, exactly one of them (as in ``rerotate_keys``).
    dtype : torch.dtype
        The cache's floating dtype, to which every shift is rounded (default bfloat16).
    arithmetic : str
        ``"float32"``: angles in float64, products in float32, then rounded to ``dtype``
        (``rerotate_keys`` on a half-precision cache). ``"storage"``: as ``transformers``' own
        ``apply_rotary_pos_emb`` would do it on the cache: angles in float32, ``cos``/``sin``
        rounded to ``dtype`` and the products taken in ``dtype``.

    Returns
    -------
    torch.Tensor
        Shape ``(n_shifts + 1, ..., seq, dim)``, dtype ``dtype``: the keys after 0, 1, …,
        ``n_shifts`` shifts.
    """
    keys = check_float_tensor(keys, "keys", min_ndim=2)
    shift = check_real(shift, "shift")
    n_shifts = check_int(n_shifts, "n_shifts", minimum=1)
    arithmetic = check_choice(arithmetic, "arithmetic", _KSHIFT_ARITHMETIC)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating torch.dtype, got {_describe(dtype)}")
    if (base is None) == (inv_freq is None):
        raise ValueError("pass exactly one of base= and inv_freq=")
    dim = keys.shape[-1]
    if dim % 2:
        raise ValueError(f"keys must have an even last dimension, got {dim}")
    if inv_freq is None:
        base = check_base(base)
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    else:
        inv_freq = check_inv_freq(inv_freq, dim)
    out = [keys.to(dtype)]
    if arithmetic == "storage":
        angles = (float(shift) * inv_freq.to(torch.float32)).repeat(2)
        cos, sin = angles.cos().to(dtype), angles.sin().to(dtype)
    for _ in range(n_shifts):
        x = out[-1]
        if arithmetic == "float32":
            out.append(rerotate_keys(x, float(shift), inv_freq=inv_freq).to(dtype))
        else:
            half = dim // 2
            rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
            out.append(x * cos + rotated * sin)
    return torch.stack(out)


_QUANT_GROUPS = ("channel", "token")


def quantize_keys_absmax(
    keys: torch.Tensor, *, group: str = "channel", bits: int = 8
) -> torch.Tensor:
    """Round cached keys to signed ``bits``-bit integers with an absmax scale, and back.

    Symmetric absmax quantisation: each group's scale is its largest ``|value|`` divided by
    ``2**(bits-1) - 1``, and every value is rounded to the nearest multiple of the scale (the
    integers stay in ``[-(2**(bits-1) - 1), 2**(bits-1) - 1]``). ``group="channel"`` takes one
    scale per feature over the ``seq`` tokens (KIVI and KVQuant quantise keys this way, because a
    few key channels are much larger than the rest); ``group="token"`` one scale per key over its
    ``dim`` features. The result is the dequantised tensor, what attention reads back.

    Whether the keys are quantised before or after RoPE is the caller's choice: quantise the raw
    keys and rotate the result (pre-RoPE), or rotate first (post-RoPE). A rotation mixes each
    pair of channels by an angle that changes with the position, so a per-channel scale after
    RoPE covers both channels of a pair (chapter 12 measures the difference).

    Parameters
    ----------
    keys : torch.Tensor
        Shape ``(..., seq, dim)``, float.
    group : str
        ``"channel"`` (one scale per feature, over the tokens) or ``"token"`` (one scale per key).
    bits : int
        Bits of the signed integer, 2 to 16 (default 8: int8).

    Returns
    -------
    torch.Tensor
        Shape ``(..., seq, dim)``, the dtype of ``keys`` (computed in at least float32): the
        dequantised keys. A group of zeros stays zero.
    """
    keys = check_float_tensor(keys, "keys", min_ndim=2)
    group = check_choice(group, "group", _QUANT_GROUPS)
    bits = check_int(bits, "bits", minimum=2, what="an integer from 2 to 16")
    if bits > 16:
        raise ValueError(f"bits must be an integer from 2 to 16, got {bits}")
    top = 2 ** (bits - 1) - 1
    axis = -2 if group == "channel" else -1
    work = keys.to(torch.promote_types(keys.dtype, torch.float32))  # bf16/f16: float32 inside
    scale = work.abs().amax(dim=axis, keepdim=True) / top
    safe = torch.where(scale > 0, scale, torch.ones_like(scale))
    return (torch.round(work / safe).clamp(-top, top) * scale).to(keys.dtype)


def _parents(parents: object) -> list[int]:
    if isinstance(parents, torch.Tensor):
        if parents.ndim != 1 or parents.dtype.is_floating_point or parents.dtype == torch.bool:
            raise TypeError(f"parents must be a 1-D integer tensor or a list of int, got "
                            f"{_describe(parents)}")
        parents = parents.tolist()
    if not isinstance(parents, Sequence) or isinstance(parents, str):
        raise TypeError(f"parents must be a sequence of int, got {_describe(parents)}")
    values = [check_int(p, f"parents[{i}]") for i, p in enumerate(parents)]
    if not values:
        raise ValueError("parents must name at least one draft token")
    for i, p in enumerate(values):
        if not -1 <= p < i:
            raise ValueError(
                f"parents[{i}] must be -1 (a child of the prefix's last token) or the index of an "
                f"earlier draft token, 0 <= parent < {i}; got {p}"
            )
    return values


def tree_position_ids(parents: Sequence[int] | torch.Tensor, prefix_length: int) -> torch.Tensor:
    """Position ids of a draft tree verified in one forward: prefix length + depth.

    Tree speculative decoding (Medusa, EAGLE, SpecInfer) packs several drafts into one row of
    draft tokens. Each token's position is the number of real tokens before it *on its own
    branch*: the cached prefix plus its ancestors in the tree, not its column in the row.

    Parameters
    ----------
    parents : sequence of int or 1-D integer tensor
        Shape ``(n,)``: ``parents[i]`` is the index of draft token ``i``'s parent in the row, or
        ``-1`` for a child of the prefix's last token. Parents come before their children
        (``parents[i] < i``).
    prefix_length : int
        Number of tokens already in the cache (>= 0).

    Returns
    -------
    torch.Tensor
        Shape ``(n,)``, int64: ``prefix_length + depth``, the depth of a child of the prefix 0.
    """
    values = _parents(parents)
    prefix_length = check_int(prefix_length, "prefix_length", minimum=0)
    depth: list[int] = []
    for p in values:
        depth.append(0 if p < 0 else depth[p] + 1)
    return prefix_length + torch.tensor(depth, dtype=torch.long)


def tree_attention_mask(
    parents: Sequence[int] | torch.Tensor,
    prefix_length: int,
    *,
    dtype: torch.dtype,
) -> torch.Tensor:
    """The tree mask of a draft tree: each draft token sees the prefix, its ancestors and itself.

    It replaces the causal mask of the verifying forward; with ``tree_position_ids`` every
    root-to-leaf path scores as that path alone, run as a linear draft.

    Parameters
    ----------
    parents : sequence of int or 1-D integer tensor
        Shape ``(n,)``, as in ``tree_position_ids``.
    prefix_length : int
        Number of cached tokens (>= 0); every draft token may attend to all of them.
    dtype : torch.dtype
        ``torch.bool`` for a bool mask (``True`` = attend; SDPA reads it as a mask, eager adds it
        to the scores), or a floating dtype for an additive one (``0`` or
        ``torch.finfo(dtype).min``), which eager and SDPA attention both read as a mask. No
        default, as in ``packed_causal_mask``: the bool form is silently wrong on eager, so the
        caller names the form.

    Returns
    -------
    torch.Tensor
        Shape ``(n, prefix_length + n)``: rows are the draft tokens, columns the cached keys then
        the draft keys.
    """
    if not isinstance(dtype, torch.dtype) or not (dtype == torch.bool or dtype.is_floating_point):
        raise TypeError(
            f"dtype must be torch.bool (a bool mask, read by SDPA) or a floating torch.dtype (an "
            f"additive mask, read by eager and SDPA), got {_describe(dtype)}"
        )
    values = _parents(parents)
    prefix_length = check_int(prefix_length, "prefix_length", minimum=0)
    n = len(values)
    check_size(("n", n), ("prefix_length + n", prefix_length + n), what="the tree mask")
    allowed = torch.zeros(n, prefix_length + n, dtype=torch.bool)
    allowed[:, :prefix_length] = True
    for i, p in enumerate(values):
        if p >= 0:
            allowed[i, prefix_length:] = allowed[p, prefix_length:]
        allowed[i, prefix_length + i] = True
    if dtype == torch.bool:
        return allowed
    return torch.zeros(allowed.shape, dtype=dtype).masked_fill(~allowed, torch.finfo(dtype).min)


def zigzag_shard_indices(seq_len: int, n_ranks: int) -> list[torch.Tensor]:
    """The tokens each rank holds under zig-zag (load-balanced) context parallelism.

    The row is cut into ``2 · n_ranks`` equal chunks and rank ``r`` takes chunks ``r`` and
    ``2 · n_ranks − 1 − r``, so that every rank has the same number of causal query–key pairs. A
    rank's tokens are not contiguous: their global indices, returned here, are the position ids
    the rank must use, and the causal mask compares them, not the rank's local columns.

    Parameters
    ----------
    seq_len : int
        Tokens in the row, a positive multiple of ``2 · n_ranks`` (pad the row to the next
        multiple first; the error message names it).
    n_ranks : int
        Number of context-parallel ranks (>= 1).

    Returns
    -------
    list of torch.Tensor
        ``n_ranks`` int64 tensors of shape ``(seq_len // n_ranks,)``: the global positions of rank
        ``r``'s tokens, in the order the rank holds them.
    """
    seq_len = check_int(seq_len, "seq_len", minimum=1)
    n_ranks = check_int(n_ranks, "n_ranks", minimum=1)
    if seq_len % (2 * n_ranks):
        padded = -(-seq_len // (2 * n_ranks)) * 2 * n_ranks
        raise ValueError(
            f"seq_len must be a multiple of 2 * n_ranks = {2 * n_ranks}, got {seq_len}; "
            f"pad the row to {padded} tokens (the next multiple), as ring-attention code does"
        )
    chunks = torch.arange(seq_len).view(2 * n_ranks, -1)
    return [torch.cat((chunks[r], chunks[2 * n_ranks - 1 - r])) for r in range(n_ranks)]


def layer_rope_frequencies(config: object) -> list[torch.Tensor | None]:
    """The inverse frequencies each layer's cached keys were rotated with, as a K-shift needs them.

    A model may rotate its layers differently: Gemma 3's sliding layers use ``rope_theta`` 10 000
    and its global layers 1 000 000 (with linear scaling in the larger checkpoints), SmolLM3
    leaves every fourth layer without RoPE (``no_rope_layers``), Llama 4 its chunked/NoPE mix. A
    K-shift with one set of frequencies for every layer is then wrong in the layers that differ.
    The frequencies are read by :func:`posenc_lib.architectures.position_plan`, from the model's
    own rotary module when transformers is installed: a module freshly built from ``config``,
    whose float32 values are what ``from_pretrained(dtype=torch.bfloat16)`` keeps. A model cast
    afterwards with ``model.to(torch.bfloat16)`` rotated its keys with ``inv_freq`` rounded to
    bf16 in transformers 5.25 (the serving-notes appendix measures it); read those from the
    model's own ``rotary_emb.inv_freq`` instead.

    Parameters
    ----------
    config : transformers config or dict
        The model's config (anything :func:`posenc_lib.architectures.position_plan` accepts).

    Returns
    -------
    list of (torch.Tensor or None)
        One entry per layer: shape ``(rotary_dim // 2,)``, float64, for a RoPE layer (pairs that
        do not turn have frequency 0); ``None`` for a layer whose cached keys carry no rotation
        (NoPE, ALiBi, or no attention at all).

    Raises
    ------
    ValueError
        A RoPE layer whose rotary block does not start at feature 0 (MLA: shift its rotary key
        with :func:`rerotate_keys`), or a config that
        :func:`posenc_lib.architectures.position_plan` refuses.
    """
    from .architectures import position_plan

    frequencies: list[torch.Tensor | None] = []
    for entry in position_plan(config):
        if entry.kind != "rope":
            frequencies.append(None)
            continue
        if entry.rotary_offset != 0 or entry.inv_freq is None:
            raise ValueError(
                f"layer {entry.layer} rotates features from {entry.rotary_offset} on (MLA): its "
                "rotary key is cached apart; shift it with rerotate_keys"
            )
        frequencies.append(entry.inv_freq.double())
    return frequencies


def shift_cache(
    cache: object,
    shift: float | torch.Tensor,
    frequencies: Sequence[torch.Tensor | None] | torch.Tensor,
    *,
    keep: torch.Tensor | None = None,
    convention: str = "half",
) -> object:
    """Evict cached tokens and move the rest by ``shift`` positions, layer by layer, in place.

    For each layer of a transformers cache (``cache.layers[l].keys`` and ``.values``, shape
    ``(batch, kv_heads, seq, head_dim)``): keep the tokens ``keep`` (all when ``None``) and turn
    the kept keys by :func:`rerotate_keys` with *that layer's* frequencies; a layer whose entry is
    ``None`` (no RoPE) is only evicted. The rotated block is the first ``2·len(inv_freq)``
    features, as in transformers' partial-rotary models. The positions are exact; the content of
    deeper layers still remembers evicted tokens (see :func:`rerotate_keys`).

    Parameters
    ----------
    cache : transformers Cache
        An object with ``.layers``, each with tensors ``.keys`` and ``.values`` (a
        ``DynamicCache``). A sliding-window layer must not have rolled yet.
    shift : float or torch.Tensor
        Positions to move the kept keys by: one number, or shape ``(kept,)``.
    frequencies : sequence of (torch.Tensor or None), or torch.Tensor
        One entry per cache layer, as :func:`layer_rope_frequencies` returns; a single tensor
        means the same frequencies in every layer (correct only when every layer uses them).
    keep : torch.Tensor, optional
        1-D integer indices of the cached tokens to keep, in order.
    convention : str
        The cache's pair layout (see :func:`rerotate_keys`: ``"half"`` for most transformers
        models, DeepSeek-V3 included; ``"interleaved"`` for GPT-J and DeepSeek-V2).

    Returns
    -------
    The same cache, modified.
    """
    layers = getattr(cache, "layers", None)
    if layers is None:
        raise TypeError(f"cache must be a transformers Cache with .layers, got {_describe(cache)}")
    if isinstance(frequencies, torch.Tensor):
        per_layer: list[torch.Tensor | None] = [frequencies] * len(layers)
    elif isinstance(frequencies, Sequence) and not isinstance(frequencies, str):
        per_layer = list(frequencies)
    else:
        raise TypeError(
            "frequencies must be a tensor or a list with one tensor or None per layer, "
            f"got {_describe(frequencies)}"
        )
    if len(per_layer) != len(layers):
        raise ValueError(
            f"frequencies must have one entry per cache layer ({len(layers)}), got {len(per_layer)}"
        )
    for i, inv_freq in enumerate(per_layer):
        if inv_freq is not None and not isinstance(inv_freq, torch.Tensor):
            raise TypeError(f"frequencies[{i}] must be a tensor or None, got {_describe(inv_freq)}")
    for i, layer in enumerate(layers):
        keys, values = layer.keys, layer.values
        seq = keys.shape[-2]
        rolled = getattr(layer, "cumulative_length", seq)
        if rolled != seq:
            raise ValueError(
                f"layer {i} is a sliding-window layer that has already dropped "
                f"{rolled - seq} tokens; its slots no longer match positions"
            )
        if keep is not None:
            if not isinstance(keep, torch.Tensor) or keep.ndim != 1 or keep.dtype.is_floating_point:
                raise TypeError("keep must be a 1-D integer tensor of cached token indices")
            if keep.numel() and (int(keep.min()) < 0 or int(keep.max()) >= seq):
                raise ValueError(f"keep must index the {seq} cached tokens, got {keep.tolist()}")
            keys, values = keys[:, :, keep], values[:, :, keep]
        inv_freq = per_layer[i]
        if inv_freq is not None:
            rotated = rerotate_keys(
                keys.double(), shift, inv_freq=inv_freq.double(), convention=convention,
                rotary_dim=2 * inv_freq.numel(),
            )
            keys = rotated.to(layer.keys.dtype)
        layer.keys, layer.values = keys, values
        if hasattr(layer, "cumulative_length"):
            layer.cumulative_length = keys.shape[-2]
    return cache


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


# --- the position-id audit ------------------------------------------------------------------------

AUDIT_CODES = (
    "padding-without-ids",
    "right-padding-generate",
    "ids-disagree-with-mask",
    "jump-read-as-boundary",
    "packed-with-2d-mask",
    "packed-with-cache",
    "packed-batch-flash",
    "packed-ids-not-restarted",
    "4d-mask-misread",
    "dynamic-ntk-with-cache",
    "dynamic-ntk-mixed-batch",
    "longrope-switch-with-cache",
)
"""What :func:`audit_positions` can flag, each a trap chapter 12 measures on a real model."""

_ROPE_TYPES = ("default", "linear", "yarn", "dynamic", "longrope", "llama3", "none")
_ATTN_IMPLEMENTATIONS = ("eager", "sdpa", "flash_attention_2", "flash_attention_3")
_ENCODINGS = ("absolute", "rope", "alibi", "nope")


@dataclass(frozen=True)
class PositionIssue:
    """One trap found by :func:`audit_positions`: its code, the rows it hits and what goes wrong."""

    code: str
    rows: tuple[int, ...]
    message: str


def _int_matrix(x: object, name: str, batch: int | None = None) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a (batch, seq) integer torch.Tensor, got {_describe(x)}")
    if x.dtype.is_floating_point or x.dtype.is_complex:
        raise TypeError(f"{name} must hold integers, got dtype {x.dtype}")
    if x.ndim != 2:
        raise ValueError(f"{name} must have shape (batch, seq), got shape {tuple(x.shape)}")
    if batch is not None and x.shape[0] != batch:
        raise ValueError(
            f"{name} must have batch size {batch} (as input_ids), got shape {tuple(x.shape)}"
        )
    return x.long()


def _document_starts(mask: torch.Tensor, batch: int) -> torch.Tensor:
    """Queries that start a document in a 4-D mask ``(batch or 1, heads, seq, k_len)``.

    A query starts a document where its first allowed key is its own (key column
    ``k_len - seq + i`` for query ``i``); allowed means True (bool), nonzero (integer) or not a
    large negative number (additive). Returns a ``(batch, seq)`` bool tensor (head 0 is read).
    """
    plane = mask[:, 0]
    if plane.dtype == torch.bool:
        allowed = plane
    elif plane.dtype.is_floating_point:
        allowed = plane > torch.finfo(plane.dtype).min / 2
    else:
        allowed = plane != 0
    seq, k_len = plane.shape[-2:]
    own = torch.arange(k_len - seq, k_len)
    first = allowed.int().argmax(-1)  # the first allowed key (0 if none is allowed)
    own_allowed = allowed.gather(-1, own.expand(plane.shape[0], seq)[..., None])[..., 0]
    return (own_allowed & (first == own)).expand(batch, seq)


def audit_positions(
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
    position_ids: torch.Tensor | None = None,
    *,
    cache_length: int = 0,
    use_cache: bool = True,
    generate: bool = False,
    rope_type: str = "default",
    original_max_position: int | None = None,
    attn_implementation: str = "sdpa",
    encoding: str | None = None,
    cache_ids: str | None = None,
    jumps_intended: bool = False,
    training: bool = False,
) -> list[PositionIssue]:
    """Flag the position traps of a batch about to go through a transformers causal LM.

    Each code of :data:`AUDIT_CODES` is a failure chapter 12 measures (transformers 5.25):

    - ``padding-without-ids``: a padded 2-D mask, no ``position_ids``, a ``forward`` of your own:
      the model numbers columns, pads included (wrong on the prompt for absolute encodings, on the
      first token after right padding for RoPE);
    - ``right-padding-generate``: ``generate`` on a row that ends in padding continues the ids
      from the last pad's 0 (the new token gets id 1) and predicts from a pad slot's logits;
    - ``ids-disagree-with-mask``: given ``position_ids`` on real tokens differ from the real
      tokens counted by the mask (cache included) — a chunked prefill or a cached prefix that
      restarts at 0, a batch numbered by columns, or ids that jump forward inside a row (the
      distances across the jump grow) unless ``jumps_intended`` declares them (PoSE). Under
      ``encoding="rope"`` with fixed frequencies (any ``rope_type`` but ``"dynamic"`` and
      ``"longrope"``) and nothing cached, ids that differ from the counted ones by one constant
      per row are accepted: RoPE sees only offsets;
    - ``jump-read-as-boundary``: ids jump forward inside a row (a step > 1 between real tokens)
      with no mask, no cache and a mask-based backend (eager, SDPA): transformers 5.25 splits the
      row wherever the step is not 1, so the tokens after the jump stop seeing those before it.
      Raised whatever ``jumps_intended`` says (a PoSE row needs a mask, all ones or a 4-D causal
      one);
    - ``packed-with-2d-mask``: ids restart inside a row (packing) but a 2-D ``attention_mask`` is
      given — even all ones, as a tokenizer returns it — so the mask builder does not infer
      document boundaries and documents attend to each other;
    - ``packed-with-cache``: packing with a cache (``use_cache`` on, the config default): the same
      inference is skipped on the mask-based backends (eager, SDPA);
    - ``packed-batch-flash``: packed rows in a batch of more than one row under FlashAttention
      with no padding mask: transformers' ``_is_packed_sequence`` reads ids as packed only for a
      batch of one row, so the rows are not split into their documents (eager and SDPA, with no
      mask and no cache, do split them);
    - ``packed-ids-not-restarted``: a 4-D mask holds document blocks (a query whose first allowed
      key is its own starts a document) but the position ids (given, or the model's column ids)
      are not 0 there: a learned or sinusoidal table embeds the wrong positions (GPT-2 under
      the block mask), and a length-dependent RoPE (``"dynamic"``, ``"longrope"``) gets its
      frequencies from the larger ids; raised for ``encoding`` ``"absolute"`` or ``None``, or
      such a ``rope_type`` (RoPE with fixed frequencies sees only offsets inside a document);
    - ``4d-mask-misread``: a 4-D mask the backend does not read as a mask: a bool or integer one
      on eager attention, which adds it to the scores as 0/1 (nothing is masked), or any 4-D mask
      under FlashAttention, whose unpadding reads a ``(batch, seq)`` padding mask;
    - ``dynamic-ntk-with-cache``: dynamic NTK past its training length with a cache: keys cached
      with the old frequencies are never re-rotated (a prefill with an empty cache is exact; the
      next cached step is not);
    - ``dynamic-ntk-mixed-batch``: dynamic NTK on a batch whose largest position id + 1 (the
      length transformers' ``dynamic_rope_update`` scales every row's frequencies for) passes the
      training length: each row whose own largest real id + 1 is smaller gets frequencies scaled
      for another row's length, not its own (the frequencies are also kept between calls, which
      no input shows);
    - ``longrope-switch-with-cache``: a step that crosses LongRoPE's original length with keys
      cached below it (transformers' Phi-3 ``generate`` re-prefills; a loop of your own does not).
      A step whose cache already lies past the switch (``cache_length`` >
      ``original_max_position``) is not flagged: the audit assumes the caller re-prefilled at
      the switch, which it cannot check, so an empty result there does not mean that a cache
      built below the switch is fine.

    ``encoding`` narrows the position codes to what the model's encoding can notice (measured in
    chapter 12): ``"absolute"`` (learned or sinusoidal table: every padded row without ids is
    wrong); ``"rope"`` (a row padded on the left only is shifted as a whole, which RoPE with
    fixed frequencies does not see; padding after a real token is flagged — and every padded row
    when ``rope_type`` is ``"dynamic"`` or ``"longrope"`` and the padded length passes
    ``original_max_position``, as the pads' ids then change the frequencies); ``"alibi"`` (an
    ALiBi whose bias numbers keys by the mask's cumulative sum, as BLOOM's does, so neither
    ``padding-without-ids`` nor ``ids-disagree-with-mask`` applies; an ALiBi that numbers keys
    by column, as MPT's does, is hurt by right padding like RoPE: audit it with ``"rope"`` or
    ``None``) and ``"nope"`` (the ids are not read). ``right-padding-generate`` applies under
    every encoding: ``generate`` predicts the next token from a pad slot whatever the encoding.
    ``None`` (the default) assumes nothing and flags every padded row. The other packing codes
    are about the mask and apply to every encoding.

    A padded step *after a cache* with no ``position_ids`` under ``"rope"`` is right only if the
    cache was numbered by column too (a common shift); if the prefill passed counted ids
    (``position_ids_from_mask``), the step's column id is off by the row's pads. ``cache_ids``
    says which: ``"column"`` passes such a row, ``"counted"`` flags it, and ``None`` (unknown,
    the default) flags it as ``padding-without-ids`` with a message that the verdict depends on
    how the prefill was numbered. Given ``position_ids`` are compared with the counted ones,
    or with the column ids ``cache_length, cache_length + 1, …`` under ``cache_ids="column"``.

    A 4-D ``attention_mask`` is taken to be an explicit (block) mask and silences the other
    packing codes (its blocks are read only for ``packed-ids-not-restarted``; a sliding window of
    one key would read as documents of one token); on eager it must be additive
    (``packed_causal_mask(lengths, dtype=...)``), else
    ``4d-mask-misread``. Under FlashAttention (``attn_implementation="flash_attention_2"`` or
    ``"_3"``) transformers infers the documents from restarting ids for a batch of one row
    whose 2-D mask has no padding (an all-ones mask becomes ``None``), cache or not:
    ``packed-with-cache`` is not raised there, ``packed-with-2d-mask`` only when the batch's mask
    holds padding, ``packed-batch-flash`` when a batch of several rows has packed rows and no
    padding, and ``4d-mask-misread`` for any 4-D mask.

    Parameters
    ----------
    input_ids : torch.Tensor
        Shape ``(batch, seq)``, integer: the tokens of this step (after ``cache_length`` cached).
    attention_mask : torch.Tensor, optional
        Shape ``(batch, seq)`` or ``(batch, cache_length + seq)``, 0/1 (the 2-D mask, covering the
        cache as transformers expects when decoding), or 4-D ``(batch, 1, seq, k_len)``.
    position_ids : torch.Tensor, optional
        Shape ``(batch, seq)``, ``(1, seq)`` or ``(seq,)``, integer: the ids passed to
        ``forward``. A 1-D ``(seq,)`` tensor, such as ``torch.arange(seq)``, is read as
        ``(1, seq)`` and broadcast to every row, as transformers broadcasts it.
    cache_length : int
        Tokens already in the KV cache (>= 0).
    use_cache : bool
        Whether the forward builds a cache (transformers' default: the config's ``use_cache``).
    generate : bool
        The batch goes through ``generate`` (which computes ids from the mask itself).
    rope_type : str
        ``rope_parameters["rope_type"]``: one of ``"default"``, ``"linear"``, ``"yarn"``,
        ``"dynamic"``, ``"longrope"``, ``"llama3"`` or ``"none"``.
    original_max_position : int, optional
        The training length, required for ``"dynamic"`` and ``"longrope"``.
    attn_implementation : str
        The model's ``attn_implementation``: ``"eager"``, ``"sdpa"`` (the default, as in
        transformers 5.25; both mask-based, the packing traps apply), ``"flash_attention_2"`` or
        ``"flash_attention_3"``.
    encoding : str, optional
        ``"absolute"``, ``"rope"``, ``"alibi"`` or ``"nope"``; ``None`` when unknown.
    cache_ids : str, optional
        How the cached tokens were numbered: ``"counted"`` (``position_ids_from_mask``, as
        ``generate`` does) or ``"column"`` (a forward without ``position_ids``); ``None`` when
        unknown. Read only when ``cache_length > 0``: for a padded row with no ``position_ids``
        under ``encoding="rope"`` with fixed frequencies, and for given ``position_ids``.
    jumps_intended : bool
        The ids jump forward on purpose (PoSE's skips): a jump is then not a disagreement with
        the mask, only a boundary when no mask and no cache keep the row one document.
    training : bool
        The forward is a training forward with no step after it (no cache read, no
        ``generate``): a right-padded row without ``position_ids`` is then exact (its real tokens
        sit in the first columns, so the column ids are the counted ones) and not flagged.

    Returns
    -------
    list of PositionIssue
        Empty when none of the traps applies.
    """
    ids = _int_matrix(input_ids, "input_ids")
    batch, seq = ids.shape
    if seq == 0:
        raise ValueError("input_ids must hold at least one token per row, got seq = 0")
    cache_length = check_int(cache_length, "cache_length", minimum=0,
                             what="a non-negative integer (tokens in the cache)")
    for switch, name in ((use_cache, "use_cache"), (generate, "generate"),
                         (jumps_intended, "jumps_intended"), (training, "training")):
        if not isinstance(switch, bool):
            raise TypeError(f"{name} must be a bool, got {_describe(switch)}")
    if training and (generate or cache_length > 0):
        raise ValueError("training=True describes a forward with no step after it: it cannot go "
                         f"with generate=True or a cache (cache_length = {cache_length})")
    rope_type = check_choice(rope_type, "rope_type", _ROPE_TYPES)
    attn_implementation = check_choice(attn_implementation, "attn_implementation",
                                       _ATTN_IMPLEMENTATIONS)
    flash = attn_implementation.startswith("flash_attention")
    if cache_ids is not None:
        cache_ids = check_choice(cache_ids, "cache_ids", ("counted", "column"))
    if encoding is not None:
        encoding = check_choice(encoding, "encoding", _ENCODINGS)
        if encoding != "rope" and rope_type not in ("default", "none"):
            raise ValueError(
                f"rope_type {rope_type!r} needs encoding 'rope' (or None), got {encoding!r}"
            )
    reads_ids = encoding not in ("alibi", "nope")
    limit = 0  # the training length, for the two RoPE types that switch at it
    if rope_type in ("dynamic", "longrope"):
        if original_max_position is None:
            raise ValueError(f"rope_type {rope_type!r} needs original_max_position (the training "
                             "length)")
        limit = check_int(original_max_position, "original_max_position",
                          minimum=1, what="a positive integer")
    explicit_mask, misread = False, ""
    if attention_mask is None:
        full_mask = torch.ones(batch, cache_length + seq, dtype=torch.long)
    elif isinstance(attention_mask, torch.Tensor) and attention_mask.ndim == 4:
        if attention_mask.shape[0] not in (1, batch) or attention_mask.shape[-2] != seq:
            raise ValueError(
                f"a 4-D attention_mask must have shape (batch, heads, seq, k_len) with batch "
                f"{batch} (or 1) and seq {seq}, got {tuple(attention_mask.shape)}"
            )
        if attention_mask.shape[-1] < seq:
            raise ValueError(
                f"a 4-D attention_mask must have k_len >= seq = {seq} (the keys include this "
                f"step's), got shape {tuple(attention_mask.shape)}"
            )
        explicit_mask = True
        if attn_implementation.startswith("flash_attention"):
            misread = ("FlashAttention takes no 4-D mask (its unpadding reads a (batch, seq) "
                       "padding mask); pass the boundaries as cu_seq_lens_q/k, e.g. from "
                       "DataCollatorWithFlattening(return_flash_attn_kwargs=True)")
        elif attn_implementation == "eager" and not attention_mask.dtype.is_floating_point:
            misread = (f"a {attention_mask.dtype} 4-D mask on eager attention is added to the "
                       "scores as 0/1 and masks nothing; pass an additive mask, "
                       "packed_causal_mask(lengths, dtype=torch.float32)")
        full_mask = torch.ones(batch, cache_length + seq, dtype=torch.long)
    else:
        mask = _int_matrix(attention_mask, "attention_mask", batch)
        if not bool(((mask == 0) | (mask == 1)).all()):
            raise ValueError("attention_mask must hold only 0 and 1")
        if mask.shape[1] == cache_length + seq:
            full_mask = mask
        elif mask.shape[1] == seq:
            full_mask = torch.cat([torch.ones(batch, cache_length, dtype=torch.long), mask], 1)
        else:
            raise ValueError(
                f"attention_mask must cover seq = {seq} or cache_length + seq = "
                f"{cache_length + seq} columns, got {mask.shape[1]}"
            )
        if bool((full_mask.sum(-1) == 0).any()):
            raise ValueError("attention_mask has a row with no real token")
    if position_ids is not None:
        if isinstance(position_ids, torch.Tensor) and position_ids.ndim == 1:
            position_ids = position_ids[None]  # (seq,) -> (1, seq), as transformers broadcasts
        position_ids = _int_matrix(position_ids, "position_ids")
        if position_ids.shape[0] not in (1, batch) or position_ids.shape[1] != seq:
            raise ValueError(
                f"position_ids must have shape ({batch}, {seq}) or (1, {seq}), "
                f"got {tuple(position_ids.shape)}"
            )
        if bool((position_ids < 0).any()):
            raise ValueError("position_ids must be >= 0")
        position_ids = position_ids.expand(batch, seq)

    issues: list[PositionIssue] = []

    def flag(code: str, rows: torch.Tensor | list[int], message: str) -> None:
        rows = [int(r) for r in (rows.nonzero().flatten() if isinstance(rows, torch.Tensor)
                                 else rows)]
        if rows:
            issues.append(PositionIssue(code, tuple(rows), message))

    if explicit_mask and misread:
        flag("4d-mask-misread", list(range(batch)), misread)
    real = full_mask[:, -seq:].bool()
    padded = (full_mask == 0).any(-1)
    if generate:
        flag("right-padding-generate", full_mask[:, -1] == 0,
             "generate on a right-padded row: the new token gets id 1 (the last pad's 0 + 1) "
             "and is predicted from a pad slot; pad on the left")
    elif position_ids is None and attention_mask is not None and not explicit_mask and reads_ids:
        # Under RoPE a left-padded row moves as a whole, which only a gap after a real token
        # breaks — unless the frequencies follow the largest id (dynamic NTK, LongRoPE's switch)
        # and the pads' column ids carry it past the training length.
        length_dependent = rope_type in ("dynamic", "longrope") and cache_length + seq > limit
        advice = "pass position_ids_from_mask(attention_mask)[:, -seq:]"
        if encoding == "rope" and not length_dependent:
            seen = full_mask.cumsum(-1) > 0
            shifted = padded & ~((full_mask == 0) & seen).any(-1)  # pads before the first token
            padded = padded & ~shifted
            if cache_length > 0 and cache_ids == "counted":
                flag("padding-without-ids", shifted,
                     "a step without position_ids after a prefill with counted ids: the step's "
                     "column id is off by the row's pads; " + advice)
            elif cache_length > 0 and cache_ids is None:
                flag("padding-without-ids", shifted,
                     "a padded step without position_ids after a cache: right only if the "
                     "prefill numbered columns too (a common shift), wrong if it passed counted "
                     "ids; say cache_ids='column' or 'counted', or " + advice)
        if training:  # right padding only: the real tokens hold the first columns' ids
            padded = padded & ((full_mask.cumsum(-1) - 1) != torch.arange(full_mask.shape[1])
                               ).masked_fill(full_mask == 0, False).any(-1)
        flag("padding-without-ids", padded,
             "padded rows without position_ids: forward numbers columns, pads included; "
             + advice)
    packed = torch.zeros(batch, dtype=torch.bool)
    if position_ids is not None:
        step = position_ids[:, 1:] - position_ids[:, :-1]
        both_real = real[:, 1:] & real[:, :-1]
        packed = ((step <= 0) & both_real).any(-1)
        column_cache = cache_ids == "column" and cache_length > 0
        expected = (torch.arange(cache_length, cache_length + seq).expand(batch, seq)
                    if column_cache else position_ids_from_mask(full_mask)[:, -seq:])
        offset = (position_ids - expected).masked_fill(~real, 0)
        if encoding == "rope" and rope_type not in ("dynamic", "longrope") and cache_length == 0:
            # fixed frequencies see only offsets: one constant per row (on real tokens) is fine
            first_real = real.int().argmax(-1, keepdim=True)
            offset = (offset - offset.gather(-1, first_real)).masked_fill(~real, 0)
        disagree = (offset != 0).any(-1) & ~packed & reads_ids
        jump = ((step > 1) & both_real).any(-1)
        # eager and SDPA infer documents from the ids only with no mask and no cache
        read_as_boundary = (attention_mask is None and not use_cache and cache_length == 0
                            and not flash)
        accepted = read_as_boundary or jumps_intended
        flag("jump-read-as-boundary", jump & ~packed if read_as_boundary else [],
             "position ids jump forward inside the row (a step > 1) with no mask and no cache: "
             "eager and SDPA read every step that is not 1 as a document boundary and split the "
             "row. If the jump is intended (PoSE), pass an attention mask (all ones, or a 4-D "
             "causal one) to keep the row one document; if the row packs documents, number "
             "each from 0")
        flag("ids-disagree-with-mask", disagree & ~jump,
             ("position_ids differ from the column ids of a cache numbered by column: "
              f"expected {cache_length}, {cache_length + 1}, …") if column_cache else
             ("position_ids differ from the real tokens counted by the mask (cache included): "
              "expected position_ids_from_mask(mask)[:, -seq:], e.g. a chunk or cached prefix "
              "must continue at the number of cached real tokens"))
        flag("ids-disagree-with-mask", disagree & jump if not accepted else [],
             "position ids jump forward inside the row (a step > 1): the distances across the "
             "jump are larger than the text's; if the jump is intended (PoSE), say "
             "jumps_intended=True, otherwise pass position_ids_from_mask(mask)[:, -seq:]")
        if not explicit_mask:
            # FlashAttention drops an all-ones 2-D mask and then reads the documents off the ids
            mask_kept = attention_mask is not None and not (flash and bool(full_mask.all()))
            if mask_kept:
                flag("packed-with-2d-mask", packed,
                     "position ids restart inside the row (packing) but a 2-D attention_mask is "
                     "given: transformers does not infer the documents, they attend to each other;"
                     " drop the 2-D mask or pass packed_causal_mask as a 4-D mask (additive on"
                     " eager)")
            if (use_cache or cache_length > 0) and not flash:
                flag("packed-with-cache", packed,
                     "packing with a cache: eager and SDPA masks skip the document inference; "
                     "use_cache=False or a 4-D packed_causal_mask (additive on eager)")
            if flash and not mask_kept and batch > 1:
                flag("packed-batch-flash", packed,
                     "packed rows in a batch of several rows: FlashAttention infers documents "
                     "from the ids only for a batch of one row; pack into one row or pass "
                     "cu_seq_lens_q/k (DataCollatorWithFlattening(return_flash_attn_kwargs=True))")
    if isinstance(attention_mask, torch.Tensor) and explicit_mask and reads_ids and (
            encoding in ("absolute", None) or rope_type in ("dynamic", "longrope")):
        starts = _document_starts(attention_mask, batch)
        used = (position_ids if position_ids is not None
                else torch.arange(cache_length, cache_length + seq).expand(batch, seq))
        flag("packed-ids-not-restarted", (starts & (used != 0)).any(-1),
             "the 4-D mask holds document blocks but the position ids do not restart at 0 where "
             "a document begins: an absolute table (or a RoPE whose frequencies follow the "
             "largest id) sees the wrong positions; pass packed_position_ids(lengths)")
    total = cache_length + seq
    if rope_type == "dynamic" and (use_cache or cache_length > 0) and total > limit:
        flag("dynamic-ntk-with-cache", list(range(batch)),
             f"dynamic NTK past its training length {limit} with a cache: "
             + ("cached keys keep the old frequencies" if cache_length > 0 else
                "this pass is exact, but the keys it caches keep this length's frequencies, so "
                "the next cached step is stale")
             + "; cache keys before RoPE (YaRN; rerotate_keys by m(θ'−θ) on rotated keys, "
             "equal to a fresh pass in the first layer only) or prefill again at every step")
    if rope_type == "dynamic":
        # transformers' dynamic_rope_update: one set of frequencies per call, for
        # max(position_ids) + 1 over the whole batch (pads included)
        if position_ids is not None:
            used = position_ids
        elif generate:
            used = position_ids_from_mask(full_mask)[:, -seq:]
        else:
            used = torch.arange(cache_length, total).expand(batch, seq)
        batch_length = int(used.max()) + 1
        own_length = used.masked_fill(~real, -1).amax(-1) + 1
        if batch_length > limit:
            flag("dynamic-ntk-mixed-batch", own_length < batch_length,
                 f"dynamic NTK scales the frequencies of the whole batch for its largest "
                 f"position id + 1 ({batch_length}), past the training length {limit}: these "
                 "rows are shorter and get frequencies scaled for another row's length; batch "
                 "rows of equal length, or run them alone")
    if rope_type == "longrope" and not generate and 0 < cache_length <= limit < total:
        flag("longrope-switch-with-cache", list(range(batch)),
             f"this step crosses LongRoPE's original length {limit} with keys "
             "cached under the short factors; drop the cache and prefill again")
    return issues
