"""ALiBi (Press et al. 2022): a linear distance penalty added to the attention logits.

Head ``h`` adds ``−μ_h·(m − n)`` to the logit of query ``m`` and key ``n ≤ m``. The slopes form a
geometric sequence ``μ_h = 2^(−8(h+1)/n)`` for ``n`` a power of two; other head counts take the
slopes of the nearest smaller power of two and fill up with every other slope of the next one.

Besides the bias itself, this module holds the equivalent forms found in real code and the
quantities the book plots:

* :func:`linear_bias` — the bias for any slopes (the general form ``alibi_bias`` builds on);
* :func:`alibi_bias_authors` — the ``+μ_h·j`` form of the authors' code (and BLOOM's), equal to
  ``alibi_bias`` after the softmax;
* :func:`flash_attn_alibi_bias` — FlashAttention's documented convention (positive
  ``alibi_slopes``, bias ``−slope·|i + k_len − q_len − j|``);
* :func:`alibi_reach` — the distance at which a head's bias has fallen by a given number of nats;
* :func:`alibi_window_mass` — the attention mass a content-free query puts on its last ``window``
  keys, in closed form, for sequences of any length;
* :func:`alibi_precision_error` — per query of a full prefill, how far the attention of a
  content-free query moves when one of the bias forms is stored in bfloat16 or float16;
* :func:`falcon_bf16_bias_error` — how far the ALiBi bias transformers' Falcon adds (built in
  bfloat16 whatever the model's dtype) is from the exact ``μ_h·n/√d``;
* :func:`mass_beyond` — the attention mass a query puts on keys farther than ``r`` back, for any
  logits given by distance (ALiBi's or RoPE's), so that the two are compared on one scale;
* :func:`map_mass_beyond` — the same quantity read off a stored causal attention map (a trained
  model's), averaged over chosen queries.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ._validation import (
    MAX_ELEMENTS,
    check_device,
    check_dtype,
    check_int,
    check_length,
    check_positive,
    check_positive_int,
)

__all__ = [
    "BIAS_FORMS",
    "MAX_HEADS",
    "alibi_bias",
    "alibi_bias_authors",
    "alibi_precision_error",
    "alibi_reach",
    "alibi_slopes",
    "alibi_slopes_shard",
    "alibi_window_mass",
    "falcon_bf16_bias_error",
    "flash_attn_alibi_bias",
    "linear_bias",
    "map_mass_beyond",
    "mass_beyond",
    "packed_alibi_bias",
]

#: The bias forms :func:`alibi_precision_error` compares: BLOOM's row ``+μ_h·n`` (one row for all
#: queries, as the authors' code), MPT's row ``μ_h·(n − (L − 1))`` (the last query's bias, broadcast
#: to every query), the centred row ``μ_h·(n − (L − 1)/2)`` and the per-query relative bias
#: ``−μ_h·(m − n)``.
BIAS_FORMS: tuple[str, ...] = ("bloom", "mpt", "centered", "relative")

#: The largest head count accepted. Real models use at most a few hundred heads; the cap turns a
#: typo such as ``2**70`` into an error instead of a list of 2**70 slopes.
MAX_HEADS = 1 << 16


def _check_heads(n_heads: object) -> int:
    n_heads = check_int(n_heads, "n_heads", minimum=1, what="a positive integer (>= 1)")
    if n_heads > MAX_HEADS:
        raise ValueError(f"n_heads must be a positive integer <= {MAX_HEADS}, got {n_heads}")
    return n_heads


def _check_max_bias(max_bias: object) -> float:
    max_bias = check_positive(max_bias, "max_bias")
    if max_bias > 1024:
        raise ValueError(f"max_bias must be a finite number in (0, 1024], got {max_bias}")
    return max_bias


def _power_of_two_slopes(n: int, max_bias: float) -> torch.Tensor:
    # 2^(-b/n), 2^(-2b/n), ..., 2^(-b): start and ratio are both 2^(-b/n) (b = 8 in the paper).
    k = torch.arange(1, n + 1, dtype=torch.float64)
    return torch.exp2(-max_bias * k / n)


def alibi_slopes(
    n_heads: int, *, max_bias: float = 8.0, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """Per-head slopes ``μ_h`` (Press et al.'s rule, also for head counts that are not 2^k).

    For ``n_heads = 2^k``: ``μ_h = 2^(−8(h+1)/n)`` (8 heads: 1/2, 1/4, …, 1/256). Otherwise, with
    ``c`` the largest power of two at most ``n_heads``: ``slopes(c) + slopes(2c)[0::2][: n − c]``
    (so the result is not sorted). ``max_bias`` replaces the 8 (MPT's ``alibi_bias_max``).

    Parameters
    ----------
    n_heads : int
        Number of heads, ``1 … MAX_HEADS`` (65 536).
    max_bias : float
        The exponent of the last slope of a power-of-two head count, ``μ_{H−1} = 2^(−max_bias)``;
        8 in the paper, in BLOOM and in MPT's default ``alibi_bias_max``.
    dtype : torch.dtype
        Output dtype (computed in float64).

    Returns
    -------
    torch.Tensor
        Shape ``(n_heads,)``, all in ``(0, 1)`` for ``max_bias = 8``.
    """
    n_heads = _check_heads(n_heads)
    max_bias = _check_max_bias(max_bias)
    dtype = check_dtype(dtype)
    closest = 1 << (n_heads.bit_length() - 1)  # largest power of two <= n_heads, exactly
    slopes = _power_of_two_slopes(closest, max_bias)
    if closest != n_heads:
        extra = _power_of_two_slopes(2 * closest, max_bias)[0::2][: n_heads - closest]
        slopes = torch.cat([slopes, extra])
    return slopes.to(dtype)


def alibi_slopes_shard(
    n_heads: int,
    rank: int,
    world_size: int,
    *,
    max_bias: float = 8.0,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """The slopes of one tensor-parallel rank: its slice of the *global* slopes.

    With the heads split evenly over ``world_size`` ranks, rank ``r`` holds heads
    ``[r·n/w, (r + 1)·n/w)`` and must use exactly those heads' slopes,
    ``alibi_slopes(n_heads)[r·n/w : (r + 1)·n/w]`` — neither the first slice on every rank
    (BLOOM's Megatron-DeepSpeed #227, Pai-Megatron-Patch #29) nor ``alibi_slopes(n/w)`` computed
    for the local head count (FlashInfer #1606).

    Parameters
    ----------
    n_heads : int
        Global number of heads, ``1 … MAX_HEADS``.
    rank : int
        This rank, ``0 … world_size − 1``.
    world_size : int
        Number of tensor-parallel ranks (>= 1), a divisor of ``n_heads``.
    max_bias : float
        As in :func:`alibi_slopes`.
    dtype : torch.dtype
        Output dtype (computed in float64).

    Returns
    -------
    torch.Tensor
        Shape ``(n_heads // world_size,)``.

    Raises
    ------
    ValueError
        If ``world_size`` does not divide ``n_heads`` or ``rank`` is not in ``[0, world_size)``.
    """
    n_heads = _check_heads(n_heads)
    world_size = check_int(world_size, "world_size", minimum=1, what="a positive integer (>= 1)")
    if n_heads % world_size:
        raise ValueError(
            f"world_size must divide n_heads = {n_heads} (the heads are split evenly), "
            f"got {world_size}"
        )
    rank = check_int(rank, "rank", minimum=0, what=f"an integer in [0, {world_size - 1}]")
    if rank >= world_size:
        raise ValueError(f"rank must be an integer in [0, {world_size - 1}], got {rank}")
    per_rank = n_heads // world_size
    slopes = alibi_slopes(n_heads, max_bias=max_bias, dtype=torch.float64)
    return slopes[rank * per_rank : (rank + 1) * per_rank].to(check_dtype(dtype))


def _check_slopes(slopes: object, name: str = "slopes") -> torch.Tensor:
    if not isinstance(slopes, torch.Tensor):
        raise TypeError(f"{name} must be a 1-D torch.Tensor of shape (n_heads,), got "
                        f"{type(slopes).__name__}")
    if slopes.dtype.is_complex or slopes.dtype == torch.bool:
        raise TypeError(f"{name} must hold real numbers, got dtype {slopes.dtype}")
    if slopes.ndim != 1 or slopes.shape[0] == 0:
        raise ValueError(f"{name} must have shape (n_heads,) with n_heads >= 1, got shape "
                         f"{tuple(slopes.shape)}")
    slopes = slopes.to(torch.float64)
    if not bool(torch.isfinite(slopes).all()):
        raise ValueError(f"{name} must be finite, got a NaN or infinite entry")
    return slopes


def _check_lengths(q_len: object, k_len: object, causal: object) -> tuple[int, int, bool]:
    q_len = check_length(q_len, "q_len")
    k_len = q_len if k_len is None else check_int(
        k_len, "k_len", minimum=0, what="a non-negative integer"
    )
    if not isinstance(causal, bool):
        raise TypeError(f"causal must be a bool, got {type(causal).__name__}")
    if causal and k_len < q_len:
        raise ValueError(
            f"k_len must be >= q_len = {q_len}, got k_len = {k_len} "
            "(when causal, every query needs its own key)"
        )
    return q_len, k_len, causal


def _check_size(n_heads: int, q_len: int, k_len: int) -> None:
    if n_heads * q_len * k_len > MAX_ELEMENTS:
        raise ValueError(
            f"n_heads·q_len·k_len = {n_heads}·{q_len}·{k_len} exceeds {MAX_ELEMENTS} elements; "
            "build only the rows you need (one decode row: q_len = 1, e.g. "
            f"alibi_bias({n_heads}, 1, {k_len})), add the bias inside the kernel instead "
            "(a FlexAttention score_mod), or use alibi_window_mass for the attention mass"
        )


#: Distances ``m − n`` are integers, exact in float32 up to 2**24 (24 significant bits).
_FLOAT32_EXACT = 1 << 24


def _work_dtype(
    device: torch.device | None, dtype: torch.dtype = torch.float64, k_len: int = 0
) -> torch.dtype:
    # float32 for a float32 bias whose distances float32 holds exactly (k_len <= 2**24): one
    # rounding of μ_h and one of the product, so within a float32 ulp or so of the float64 bias,
    # at half the memory and at full speed on GPUs. float64 otherwise — for a float64 bias, and
    # for bfloat16/float16, which then get the correctly rounded bias — except on MPS (no float64).
    if device is not None and device.type == "mps":
        return torch.float32
    return torch.float32 if dtype == torch.float32 and k_len <= _FLOAT32_EXACT else torch.float64


def _distance(
    q_len: int,
    k_len: int,
    device: torch.device | None = None,
    work: torch.dtype | None = None,
) -> torch.Tensor:
    # Query i sits at position k_len − q_len + i (the last q_len keys, as when decoding).
    work = _work_dtype(device) if work is None else work
    query_pos = torch.arange(k_len - q_len, k_len, dtype=work, device=device)
    return query_pos[:, None] - torch.arange(k_len, dtype=work, device=device)[None, :]


def linear_bias(
    slopes: torch.Tensor,
    q_len: int,
    k_len: int | None = None,
    *,
    causal: bool = True,
    future_slopes: torch.Tensor | None = None,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """The linear bias ``−μ_h·(m − n)`` for any per-head slopes ``μ_h``.

    Query ``i`` sits at absolute position ``k_len − q_len + i``. With ``r = pos(i) − j``:
    ``bias = −μ_h·r`` for ``r ≥ 0``; for ``r < 0`` ``−inf`` when ``causal`` and ``−μ_h·|r|``
    otherwise (the symmetric form for encoders), or ``−ν_h·|r|`` with ``ν = future_slopes``
    (an asymmetric form: different slopes to the left and to the right).

    Parameters
    ----------
    slopes : torch.Tensor
        Shape ``(n_heads,)``, finite.
    q_len : int
        Number of queries (>= 0).
    k_len : int, optional
        Number of keys; default ``q_len``. Must be >= ``q_len`` when ``causal``.
    causal : bool
        Mask future keys with ``−inf``.
    future_slopes : torch.Tensor, optional
        Shape ``(n_heads,)``, finite: the slopes for keys after the query (``r < 0``); only
        with ``causal=False``. Default: ``slopes`` (symmetric).
    dtype : torch.dtype
        Output dtype (floating). A float32 bias is computed in float32 (the slopes rounded to
        float32, the distances exact up to ``k_len = 2**24``), within about one float32 ulp of
        the float64 bias; every other dtype is computed in float64, then cast (on MPS, which has
        no float64: float32). Without ``future_slopes`` the bias takes one
        ``(n_heads, q_len, k_len)`` allocation in the working dtype, plus the cast if ``dtype``
        differs; ``future_slopes`` allocates further tensors of that size (the right-hand form
        and the ``torch.where`` that merges it).
    device : torch.device or str, optional
        Where to build the bias (default: the slopes' device). Building it on the attention's
        device avoids copying an ``(n_heads, q_len, k_len)`` tensor there on every forward.

    Returns
    -------
    torch.Tensor
        Shape ``(n_heads, q_len, k_len)``. The diagonal is ``+0.0`` (not ``−0.0``).
    """
    slopes = _check_slopes(slopes)
    q_len, k_len, causal = _check_lengths(q_len, k_len, causal)
    dtype = check_dtype(dtype)
    dev = check_device(device) or slopes.device
    _check_size(slopes.shape[0], q_len, k_len)
    if future_slopes is not None:
        if causal:
            raise ValueError("future_slopes needs causal=False (a causal mask hides those keys)")
        future = _check_slopes(future_slopes, "future_slopes")
        if future.shape != slopes.shape:
            raise ValueError(f"future_slopes must have shape {tuple(slopes.shape)} like slopes, "
                             f"got {tuple(future.shape)}")
    work = _work_dtype(dev, dtype, k_len)
    distance = _distance(q_len, k_len, dev, work)  # (q_len, k_len): small next to the bias
    # One (n_heads, q_len, k_len) allocation, filled and masked in place (future_slopes: more).
    bias = torch.empty((slopes.shape[0], q_len, k_len), dtype=work, device=dev)
    torch.mul(-slopes.to(dev, work)[:, None, None], distance.abs(), out=bias)
    bias.add_(0.0)  # no −0.0
    if future_slopes is not None:
        ahead = -future.to(dev, work)[:, None, None] * distance.abs() + 0.0
        bias = torch.where(distance < 0, ahead, bias)
    if causal:
        bias.masked_fill_(distance < 0, float("-inf"))
    return bias.to(dtype)


def alibi_bias(
    n_heads: int,
    q_len: int,
    k_len: int | None = None,
    *,
    causal: bool = True,
    max_bias: float = 8.0,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """The ALiBi bias added to attention logits, one ``(q_len, k_len)`` matrix per head.

    Query ``i`` sits at absolute position ``k_len − q_len + i`` (the last ``q_len`` keys, as when
    decoding with a cache). With ``r = pos(i) − j``: ``bias = −μ_h·r`` for ``r ≥ 0``; for ``r < 0``
    ``−inf`` when ``causal`` and ``−μ_h·|r|`` otherwise. See :func:`linear_bias`.

    Parameters
    ----------
    n_heads : int
        Number of heads (>= 1).
    q_len : int
        Number of queries (>= 0).
    k_len : int, optional
        Number of keys (>= ``q_len`` when causal); default ``q_len``.
    causal : bool
        Mask future keys with ``−inf``.
    max_bias : float
        The 8 of the slope formula (MPT's ``alibi_bias_max``), see :func:`alibi_slopes`.
    dtype : torch.dtype
        Output dtype (floating). In a narrow dtype, biases below its smallest finite value
        become ``−inf`` (float16: ``−65 504``, e.g. keys more than 131 008 positions back at slope
        1/2). That is the attention they would get anyway: ``exp(−65 504)`` is 0 in every float
        format, and the key at distance 0 always keeps bias 0, so no row is all ``−inf``.
        float32 is computed in float32, the others in float64 (see :func:`linear_bias`).
    device : torch.device or str, optional
        Where to build the bias (default CPU).

    Returns
    -------
    torch.Tensor
        Shape ``(n_heads, q_len, k_len)``.
    """
    slopes = alibi_slopes(n_heads, max_bias=max_bias, dtype=torch.float64)
    return linear_bias(slopes, q_len, k_len, causal=causal, dtype=dtype, device=device)


def alibi_bias_authors(
    n_heads: int,
    q_len: int,
    k_len: int | None = None,
    *,
    max_bias: float = 8.0,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """The causal bias as the authors' code (and BLOOM) builds it: ``+μ_h·j``, one row for all.

    Every query row gets the same ``μ_h·j`` (``j`` the key position), plus ``−inf`` above the
    causal diagonal. Row ``i`` differs from :func:`alibi_bias` by the constant ``μ_h·pos(i)``, so
    the softmax over keys, and hence the attention, is the same — in exact arithmetic. Cast to
    bfloat16 or float16 (as BLOOM does), the large values ``μ_h·j`` far from key 0 lose their low
    bits and neighbouring keys get equal biases: the attention changes (the appendix *Porting and
    running ALiBi*, section *Numerics*). That is faithful to BLOOM. A shared row that is zero at
    the last key (MPT's) spares the last queries instead of the first. Measured at 112 heads
    (BLOOM's slopes) and 2 048 tokens, for content-free queries, each row moves some weight by more
    than 0.1 at about 92 % of the queries (the share depends on the head count and the length, and
    the heads hit are the steep ones). Only the per-query
    bias ``−μ_h·(m − n)`` of
    :func:`alibi_bias`, zero at every query's own key, keeps it small for every query.

    Parameters
    ----------
    n_heads : int
        Number of heads (>= 1).
    q_len : int
        Number of queries (>= 0).
    k_len : int, optional
        Number of keys (>= ``q_len``); default ``q_len``.
    max_bias : float
        The 8 of the slope formula (MPT's ``alibi_bias_max``), see :func:`alibi_slopes`.
    dtype : torch.dtype
        Output dtype (floating).

    Returns
    -------
    torch.Tensor
        Shape ``(n_heads, q_len, k_len)``: ``μ_h·j`` where ``j ≤ pos(i)``, ``−inf`` elsewhere.
    """
    slopes = alibi_slopes(n_heads, max_bias=max_bias, dtype=torch.float64)
    q_len, k_len, _ = _check_lengths(q_len, k_len, True)
    dtype = check_dtype(dtype)
    _check_size(n_heads, q_len, k_len)
    j = torch.arange(k_len, dtype=torch.float64)
    bias = (slopes[:, None, None] * j).expand(n_heads, q_len, k_len)
    return bias.masked_fill(_distance(q_len, k_len) < 0, float("-inf")).to(dtype)


def flash_attn_alibi_bias(
    alibi_slopes: torch.Tensor,
    q_len: int,
    k_len: int | None = None,
    *,
    causal: bool = True,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """FlashAttention's ALiBi convention, as its docstring states it.

    ``flash_attn_func(..., alibi_slopes=...)`` takes **positive** slopes of shape ``(n_heads,)``
    and adds ``−slope·|i + k_len − q_len − j|`` to the score of query ``i`` and key ``j``
    (keys after the query are then removed by ``causal=True``). With
    ``alibi_slopes = alibi_slopes(n)`` this is :func:`alibi_bias`; passing the negated slopes,
    as with a bias one adds oneself, flips the penalty into a reward.

    Parameters
    ----------
    alibi_slopes : torch.Tensor
        Shape ``(n_heads,)``, as passed to FlashAttention (positive for ALiBi; FlashAttention
        wants them in float32 on the attention's device). Named after FlashAttention's own
        argument.
    q_len : int
        Number of queries (>= 0).
    k_len : int, optional
        Number of keys (>= ``q_len`` when causal); default ``q_len``.
    causal : bool
        Mask keys after the query with ``−inf``.
    dtype : torch.dtype
        Output dtype (floating).

    Returns
    -------
    torch.Tensor
        Shape ``(n_heads, q_len, k_len)``.
    """
    slopes = _check_slopes(alibi_slopes, "alibi_slopes")
    q_len, k_len, causal = _check_lengths(q_len, k_len, causal)
    dtype = check_dtype(dtype)
    _check_size(slopes.shape[0], q_len, k_len)
    i = torch.arange(q_len, dtype=torch.float64)[:, None]
    j = torch.arange(k_len, dtype=torch.float64)[None, :]
    bias = -slopes[:, None, None] * (i + k_len - q_len - j).abs()
    if causal:
        bias = bias.masked_fill(j > i + k_len - q_len, float("-inf"))
    return bias.to(dtype)


def packed_alibi_bias(
    n_heads: int,
    doc_lengths: Sequence[int],
    *,
    max_bias: float = 8.0,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """Causal ALiBi for documents packed into one sequence, with a per-document mask.

    Training packs several documents into one row. The query at position ``m`` of a document may
    only see keys of its own document, at distance ``m − n``; keys of earlier documents are
    masked with ``−inf``. The mask is what keeps documents apart: without it the next document
    attends to the previous one. With it, distances counted inside each document and distances
    counted along the whole row give the same bias on every visible key, since the distance
    between two tokens of one document does not depend on where the document starts.

    Parameters
    ----------
    n_heads : int
        Number of heads (>= 1).
    doc_lengths : sequence of int
        Lengths of the packed documents (each >= 1), in order.
    max_bias, dtype, device
        As in :func:`alibi_bias`.

    Returns
    -------
    torch.Tensor
        Shape ``(n_heads, T, T)`` with ``T = sum(doc_lengths)``; block-diagonal, each block
        ``alibi_bias(n_heads, length)``.
    """
    if isinstance(doc_lengths, (str, bytes)) or not isinstance(doc_lengths, Sequence):
        raise TypeError(f"doc_lengths must be a sequence of positive integers, got "
                        f"{type(doc_lengths).__name__}")
    lengths = [check_int(v, "doc_lengths", minimum=1, what="a positive integer (>= 1)")
               for v in doc_lengths]
    if not lengths:
        raise ValueError("doc_lengths must hold at least one document length, got []")
    total = sum(lengths)
    n_heads = _check_heads(n_heads)
    _check_size(n_heads, total, total)
    dev = check_device(device)
    slopes = alibi_slopes(n_heads, max_bias=max_bias, dtype=torch.float64)
    doc = torch.repeat_interleave(torch.arange(len(lengths), device=dev),
                                  torch.tensor(lengths, device=dev))
    bias = linear_bias(slopes, total, dtype=check_dtype(dtype), device=dev)
    return bias.masked_fill_(doc[:, None] != doc[None, :], float("-inf"))


def alibi_reach(
    n_heads: int, nats: float | Sequence[float] = (1.0, 5.0, 10.0), *, max_bias: float = 8.0
) -> torch.Tensor:
    """Distance at which each head's bias has fallen by ``nats``: ``nats / μ_h``.

    A bias of ``−x`` nats multiplies a key's unnormalised weight by ``e^{−x}``: after 1 nat a key
    keeps 37 % of the weight it would have at distance 0, after 5 nats 0.7 %, after 10 nats
    0.005 %.

    Parameters
    ----------
    n_heads : int
        Number of heads (>= 1).
    nats : float or sequence of float
        Bias drops, each finite and > 0.
    max_bias : float
        The 8 of the slope rule, as in :func:`alibi_slopes` (MPT's ``alibi_bias_max``); finite,
        in ``(0, 1024]``.

    Returns
    -------
    torch.Tensor
        Shape ``(n_heads, len(nats))`` (``(n_heads, 1)`` for one number), float64, in positions:
        entry ``[h, j]`` is ``nats[j] / μ_h``.
    """
    slopes = alibi_slopes(n_heads, max_bias=max_bias, dtype=torch.float64)
    values = [nats] if not isinstance(nats, (Sequence, torch.Tensor)) or isinstance(
        nats, str
    ) else list(nats)
    if len(values) == 0:
        raise ValueError("nats must hold at least one number")
    drops = torch.tensor([check_positive(v, "nats") for v in values], dtype=torch.float64)
    return drops[None, :] / slopes[:, None]


def alibi_window_mass(
    n_heads: int,
    seq_lens: int | Sequence[int] | torch.Tensor,
    window: int,
    *,
    max_bias: float = 8.0,
) -> torch.Tensor:
    """Attention mass on the last ``window`` keys of a content-free query, per head.

    The query sits at the last of ``T`` positions and all logits ``q·k`` are equal, so head ``h``'s
    weights are ``softmax(−μ_h·r)`` over the distances ``r = 0 … T − 1`` (``μ_h`` its slope).
    Summing the geometric series,

    ``mass_h(T) = (1 − e^{−μ_h·min(window, T)}) / (1 − e^{−μ_h·T})``,

    which falls as ``T`` grows but never below ``1 − e^{−μ_h·window}`` (its limit). Computed in
    closed form, so ``T`` may be as large as you like.

    Parameters
    ----------
    n_heads : int
        Number of heads (>= 1).
    seq_lens : int, sequence of int or 1-D integer tensor
        Sequence lengths ``T`` (each >= 1).
    window : int
        Number of most recent keys counted (>= 1), e.g. the training context ``L``.
    max_bias : float
        The 8 of the slope rule, as in :func:`alibi_slopes` (MPT's ``alibi_bias_max``); finite,
        in ``(0, 1024]``.

    Returns
    -------
    torch.Tensor
        Shape ``(n_heads, len(seq_lens))``, float64, in ``(0, 1]``.
    """
    slopes = alibi_slopes(n_heads, max_bias=max_bias, dtype=torch.float64)
    window = check_positive_int(window, "window")
    if isinstance(seq_lens, torch.Tensor):
        if seq_lens.ndim > 1 or seq_lens.dtype.is_floating_point or seq_lens.dtype.is_complex \
                or seq_lens.dtype == torch.bool:
            raise TypeError("seq_lens must be an int, a sequence of ints or a 1-D integer tensor")
        values = [int(v) for v in seq_lens.reshape(-1).tolist()]
    elif isinstance(seq_lens, Sequence) and not isinstance(seq_lens, str):
        values = list(seq_lens)
    else:
        values = [seq_lens]
    if len(values) == 0:
        raise ValueError("seq_lens must hold at least one length")
    # A closed form: nothing of size seq_len is allocated, so any int64 length is fine.
    lengths = torch.tensor([check_positive_int(v, "seq_lens", maximum=2**62) for v in values],
                           dtype=torch.float64)
    mu = slopes[:, None]
    seen = torch.clamp(lengths, max=float(window))[None, :]
    # −expm1(−x) = 1 − e^{−x}, accurate for the tiny μ_h·T of flat heads.
    return torch.expm1(-mu * seen) / torch.expm1(-mu * lengths[None, :])



def alibi_precision_error(
    n_heads: int,
    seq_len: int,
    form: str,
    dtype: torch.dtype = torch.bfloat16,
    *,
    block: int = 8,
) -> torch.Tensor:
    """Per query of a full causal prefill, the largest change of an attention weight when the bias
    is stored in ``dtype``.

    Every query ``m = 0 … seq_len − 1`` is content-free (all ``q·k`` equal), so its attention is the
    softmax of its bias row alone. The row is built as real code builds it — BLOOM's ``+μ_h·n`` and
    MPT's ``μ_h·(n − (L − 1))`` (and the centred ``μ_h·(n − (L − 1)/2)``) in float32 (slopes
    times key positions), the relative
    ``−μ_h·(m − n)`` exactly — then cast to ``dtype``; the softmax is taken in float32, as BLOOM
    does, and compared with the float64 softmax of ``−μ_h·(m − n)``. The row forms differ from the
    relative bias by a constant per query, which the softmax ignores only in exact arithmetic.

    The queries are processed ``block`` at a time, so no ``(n_heads, L, L)`` tensor is built.

    Parameters
    ----------
    n_heads : int
        Number of heads (>= 1), authors' slopes.
    seq_len : int
        Sequence length ``L`` (1 … 16 384).
    form : str
        One of :data:`BIAS_FORMS`: ``"bloom"``, ``"mpt"``, ``"centered"`` (one row
        ``μ_h·(n − (L − 1)/2)``, zero at the middle key: the broadcast row with the smallest
        largest offset) or ``"relative"``.
    dtype : torch.dtype
        The storage dtype of the bias: ``torch.bfloat16``, ``torch.float16`` or ``torch.float32``.
    block : int
        Queries per step (1 … 1 024); memory and speed depend on it, the result only through
        the order of float32 sums (~1e-9).

    Returns
    -------
    torch.Tensor
        Shape ``(seq_len,)``, float64: for query ``m``, ``max_{h, n ≤ m} |w − w_exact|``.
    """
    n_heads = _check_heads(n_heads)
    seq_len = check_int(seq_len, "seq_len", minimum=1, what="an integer in [1, 16384]")
    if seq_len > 16384:
        raise ValueError(f"seq_len must be an integer in [1, 16384], got {seq_len}")
    if not isinstance(form, str) or form not in BIAS_FORMS:
        raise ValueError(f"form must be one of {BIAS_FORMS}, got {form!r}")
    if dtype not in (torch.bfloat16, torch.float16, torch.float32):
        raise ValueError(
            f"dtype must be torch.bfloat16, torch.float16 or torch.float32, got {dtype}"
        )
    block = check_int(block, "block", minimum=1, what="an integer in [1, 1024]")
    if block > 1024:
        raise ValueError(f"block must be an integer in [1, 1024], got {block}")
    slopes = alibi_slopes(n_heads, dtype=torch.float64)
    keys = torch.arange(seq_len, dtype=torch.float64)
    slopes32, keys32 = slopes.float(), keys.float()
    if form == "bloom":
        # BLOOM: the float32 product, cast to the model's dtype
        row = (slopes32[:, None] * keys32).to(dtype)
    elif form == "mpt":
        row = (slopes32[:, None] * (keys32 - (seq_len - 1))).to(dtype)
    elif form == "centered":
        row = (slopes32[:, None] * (keys32 - (seq_len - 1) / 2)).to(dtype)
    out = torch.empty(seq_len, dtype=torch.float64)
    for start in range(0, seq_len, block):
        stop = min(start + block, seq_len)
        queries = torch.arange(start, stop, dtype=torch.float64)
        distance = queries[:, None] - keys[None, :stop]  # (block, stop)
        future = distance < 0
        exact = (-slopes[:, None, None] * distance).masked_fill(future, float("-inf"))
        if form == "relative":
            low = exact.to(dtype)
        else:
            low = row[:, None, :stop].expand(n_heads, stop - start, stop)
        low = low.float().masked_fill(future, float("-inf")).softmax(-1).double()
        change = (low - exact.softmax(-1)).abs()
        out[start:stop] = change.amax(dim=(0, 2))
    return out


def falcon_bf16_bias_error(
    n_heads: int, head_dim: int, seq_len: int, dtype: torch.dtype = torch.float32
) -> float:
    """Largest gap between Falcon's ALiBi bias in transformers and the exact ``μ_h·n/√head_dim``.

    transformers' ``FalconModel`` (``alibi = true``: Falcon-RW) builds the bias as its
    training code did (``build_alibi_tensor``): the float32 slopes are rounded to bfloat16 and
    multiplied by the key position ``n`` in bfloat16 — whatever the model's dtype — then cast
    to the model's ``dtype`` and divided by ``√head_dim``. The row ``+μ_h·n`` is BLOOM's form
    (equal to ``−μ_h·(m − n)`` after the softmax in exact arithmetic); the gap is measured
    against it in float64.

    Parameters
    ----------
    n_heads : int
        Attention heads (>= 1).
    head_dim : int
        Features per head (>= 1); the bias is divided by its square root.
    seq_len : int
        Keys ``n = 0 … seq_len − 1`` (1 … 1 048 576).
    dtype : torch.dtype
        The model's dtype: ``torch.float32``, ``torch.bfloat16`` or ``torch.float16``.

    Returns
    -------
    float
        ``max_{h, n} |bias − μ_h·n/√head_dim|`` in logits. A softmax row sees differences of
        these errors between its keys, so up to twice this moves a logit relative to another.
    """
    import math

    n_heads = _check_heads(n_heads)
    head_dim = check_positive_int(head_dim, "head_dim")
    seq_len = check_int(seq_len, "seq_len", minimum=1, what="an integer in [1, 1048576]")
    if seq_len > 1 << 20:
        raise ValueError(f"seq_len must be an integer in [1, 1048576], got {seq_len}")
    if dtype not in (torch.float32, torch.bfloat16, torch.float16):
        raise ValueError(
            f"dtype must be torch.float32, torch.bfloat16 or torch.float16, got {dtype}"
        )
    check_size_elements = n_heads * seq_len
    if check_size_elements > MAX_ELEMENTS:
        raise ValueError(f"n_heads * seq_len must be <= {MAX_ELEMENTS}, got "
                         f"{check_size_elements}")
    # transformers' slopes: a float32 base raised to int32 powers (as build_alibi_tensor).
    closest = 1 << (n_heads.bit_length() - 1)
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest) - 3))), dtype=torch.float32)
    slopes = torch.pow(base, torch.arange(1, 1 + closest, dtype=torch.int32))
    if closest != n_heads:
        extra = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest) - 3))), dtype=torch.float32)
        rest = min(closest, n_heads - closest)
        powers = torch.arange(1, 1 + 2 * rest, 2, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra, powers)])
    keys = torch.arange(seq_len)
    bias = (slopes[:, None].bfloat16() * keys).to(dtype) / math.sqrt(head_dim)
    exact = alibi_slopes(n_heads, dtype=torch.float64)[:, None] * keys.double() / math.sqrt(
        head_dim)
    return float((bias.double() - exact).abs().max())


def mass_beyond(logits: torch.Tensor, r: int | Sequence[int]) -> torch.Tensor:
    """Attention mass a query puts on keys more than ``r`` positions back.

    ``logits[..., k]`` is the logit of the key at distance ``k`` (``k = 0`` the query's own key,
    ``k = T − 1`` the first token), whatever produced it — ALiBi's ``−μ_h·k``, RoPE's score of a
    query with a key, or both. The result is ``Σ_{k > r} softmax(logits)_k``.

    Parameters
    ----------
    logits : torch.Tensor
        Shape ``(..., T)``, real, finite or ``−inf``; ``T >= 1``.
    r : int or sequence of int
        Distances, each in ``[0, T − 1]``.

    Returns
    -------
    torch.Tensor
        Shape ``(..., len(r))`` (``(...,)`` for one int), float64, in ``[0, 1)``.
    """
    if (not isinstance(logits, torch.Tensor) or logits.dtype.is_complex
            or logits.dtype == torch.bool):
        raise TypeError("logits must be a real torch.Tensor of shape (..., T)")
    if logits.ndim == 0 or logits.shape[-1] == 0:
        raise ValueError(f"logits must have shape (..., T) with T >= 1, got {tuple(logits.shape)}")
    logits = logits.to(torch.float64)
    if bool(torch.isnan(logits).any()) or bool((logits == float("inf")).any()):
        raise ValueError("logits must not hold NaN or +inf")
    length = logits.shape[-1]
    single, idx = _distances(r, length)
    weights = logits.softmax(-1)
    # tail[..., k] = Σ_{j >= k} w_j, summed from the far end so small tails keep their digits.
    tail = weights.flip(-1).cumsum(-1).flip(-1)
    tail = torch.cat([tail, torch.zeros_like(tail[..., :1])], dim=-1)
    out = tail[..., [k + 1 for k in idx]]
    return out[..., 0] if single else out


def map_mass_beyond(
    weights: torch.Tensor,
    r: int | Sequence[int],
    queries: Sequence[int] | torch.Tensor | None = None,
) -> torch.Tensor:
    """Mean attention mass on keys more than ``r`` positions back, read off an attention map.

    For query ``m`` the mass is ``Σ_{n < m − r} weights[..., m, n]``; the result is its mean over
    ``queries``. On the softmax of one content-free ALiBi row this is :func:`mass_beyond` of that
    row; on a trained model's stored map it measures how far the model really looks.

    Parameters
    ----------
    weights : torch.Tensor
        Shape ``(..., T, T)``, real: row ``m`` holds query ``m``'s attention weights over keys
        ``0 … T − 1`` (causal maps have zeros above the diagonal; the rows need not be normalised).
    r : int or sequence of int
        Distances, each in ``[0, T − 1]``.
    queries : sequence of int or torch.Tensor, optional
        Query indices in ``[0, T − 1]`` to average over (default: all ``T``).

    Returns
    -------
    torch.Tensor
        Shape ``(..., len(r))`` (``(...,)`` for one int), float64.
    """
    if (not isinstance(weights, torch.Tensor) or weights.dtype.is_complex
            or weights.dtype == torch.bool):
        raise TypeError("weights must be a real torch.Tensor of shape (..., T, T)")
    if weights.ndim < 2 or weights.shape[-1] != weights.shape[-2] or weights.shape[-1] == 0:
        raise ValueError(f"weights must have shape (..., T, T) with T >= 1, "
                         f"got {tuple(weights.shape)}")
    length = weights.shape[-1]
    single, idx = _distances(r, length)
    if queries is None:
        rows = list(range(length))
    else:
        rows = [check_int(q, "queries", minimum=0, what=f"an integer in [0, {length - 1}]")
                for q in (queries.tolist() if isinstance(queries, torch.Tensor) else queries)]
        if not rows or max(rows) > length - 1:
            raise ValueError(f"queries must hold integers in [0, {length - 1}], got {rows}")
    w = weights.to(torch.float64)[..., rows, :]  # (..., Q, T)
    distance = torch.tensor(rows)[:, None] - torch.arange(length)[None, :]  # (Q, T): m − n
    out = torch.stack([(w * (distance > k)).sum(-1).mean(-1) for k in idx], dim=-1)
    return out[..., 0] if single else out


def _distances(r: int | Sequence[int], length: int) -> tuple[bool, list[int]]:
    """``r`` (one distance or several) checked against a row of ``length`` keys → (one?, list)."""
    single = not isinstance(r, (Sequence, torch.Tensor))
    values = [r] if single else list(r)  # type: ignore[arg-type]
    idx = [check_int(v, "r", minimum=0, what=f"an integer in [0, {length - 1}]") for v in values]
    if not idx or max(idx) > length - 1:
        raise ValueError(f"r must hold integers in [0, {length - 1}], got {values}")
    return single, idx
