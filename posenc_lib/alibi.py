"""ALiBi (Press et al. 2021): a linear distance penalty added to the attention logits.

Head ``h`` adds ``−m_h·(i − j)`` to the logit of query ``i`` and key ``j ≤ i``. The slopes form a
geometric sequence ``m_h = 2^(−8(h+1)/n)`` for ``n`` a power of two; other head counts take the
slopes of the nearest smaller power of two and fill up with every other slope of the next one.
"""

from __future__ import annotations

import math

import torch

from ._validation import check_dtype, check_int, check_length, check_positive_int

__all__ = ["alibi_bias", "alibi_slopes"]


def _power_of_two_slopes(n: int) -> list[float]:
    # 2^(-8/n), 2^(-16/n), ..., 2^(-8) : ratio and start are both 2^(-8/n).
    return [2.0 ** (-8.0 * (h + 1) / n) for h in range(n)]


def alibi_slopes(n_heads: int, *, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Per-head slopes ``m_h``.

    For ``n_heads = 2^k``: ``m_h = 2^(−8(h+1)/n)`` (8 heads: 1/2, 1/4, …, 1/256). Otherwise, with
    ``c`` the largest power of two below ``n_heads``: ``slopes(c) + slopes(2c)[0::2][: n − c]``
    (so the result is not sorted).

    Parameters
    ----------
    n_heads : int
        Number of heads (>= 1).
    dtype : torch.dtype
        Output dtype (computed in float64).

    Returns
    -------
    torch.Tensor
        Shape ``(n_heads,)``.
    """
    n_heads = check_positive_int(n_heads, "n_heads")
    dtype = check_dtype(dtype)
    closest = 2 ** math.floor(math.log2(n_heads))
    slopes = _power_of_two_slopes(closest)
    if closest != n_heads:
        slopes += _power_of_two_slopes(2 * closest)[0::2][: n_heads - closest]
    return torch.tensor(slopes, dtype=torch.float64).to(dtype)


def alibi_bias(
    n_heads: int,
    q_len: int,
    k_len: int | None = None,
    *,
    causal: bool = True,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """The ALiBi bias added to attention logits, one ``(q_len, k_len)`` matrix per head.

    Query ``i`` sits at absolute position ``k_len − q_len + i`` (the last ``q_len`` keys, as when
    decoding with a cache). With ``r = pos(i) − j``: ``bias = −m_h·r`` for ``r ≥ 0``; for ``r < 0``
    ``−inf`` when ``causal`` and ``−m_h·|r|`` otherwise.

    Parameters
    ----------
    n_heads : int
        Number of heads (>= 1).
    q_len : int
        Number of queries (>= 0).
    k_len : int, optional
        Number of keys (>= ``q_len``); default ``q_len``.
    causal : bool
        Mask future keys with ``−inf``.
    dtype : torch.dtype
        Output dtype (floating).

    Returns
    -------
    torch.Tensor
        Shape ``(n_heads, q_len, k_len)``.
    """
    slopes = alibi_slopes(n_heads, dtype=torch.float64)
    q_len = check_length(q_len, "q_len")
    k_len = q_len if k_len is None else check_int(
        k_len, "k_len", minimum=0, what="a non-negative integer"
    )
    if k_len < q_len:
        raise ValueError(f"k_len must be >= q_len = {q_len}, got k_len = {k_len}")
    if not isinstance(causal, bool):
        raise TypeError(f"causal must be a bool, got {type(causal).__name__}")
    dtype = check_dtype(dtype)
    query_pos = torch.arange(k_len - q_len, k_len, dtype=torch.float64)
    distance = query_pos[:, None] - torch.arange(k_len, dtype=torch.float64)[None, :]
    bias = -slopes[:, None, None] * distance.abs()
    if causal:
        bias = bias.masked_fill(distance < 0, float("-inf"))
    return bias.to(dtype)
