"""How a causal mask leaks absolute position: a NoPE layer built by hand (no training).

The input carries no position at all. Every token has the same feature ``1``; the first token
(a beginning-of-sequence marker) also has a second feature ``1``. One attention head with
*zero* query and key weights gives every key the same logit, so the causal softmax spreads the
query at position ``t`` (1-based) evenly over its ``t`` visible keys. The value reads only the
marker feature, non-zero at the first token alone, so the head outputs exactly ``1/t``.
A ReLU feed-forward map that interpolates ``1/k ↦ k`` through the knots ``k = 1 … N`` then
returns ``t`` itself. Without the mask every query sees all ``n`` keys and outputs ``1/n``:
the same number at every position, from which no position can be recovered.
"""

from __future__ import annotations

import torch

from .._validation import check_int, check_positive_int, check_size
from ..attention import attention, causal_mask

__all__ = [
    "bos_inputs",
    "counting_head",
    "inverse_map",
    "recover_positions",
]


def bos_inputs(seq_len: int) -> torch.Tensor:
    """Position-free inputs ``(seq_len, 2)``, float64: ``[1, 1]`` for the first token, ``[1, 0]``
    for every other one."""
    seq_len = check_positive_int(seq_len, "seq_len")
    check_size(("seq_len", seq_len), ("2", 2), what="the (seq_len, 2) inputs")
    x = torch.zeros(seq_len, 2, dtype=torch.float64)
    x[:, 0] = 1.0
    x[0, 1] = 1.0
    return x


def counting_head(x: torch.Tensor, *, causal: bool = True) -> torch.Tensor:
    """The hand-set attention head: zero ``W_q``, ``W_k``; ``W_v`` reads feature 1.

    Parameters
    ----------
    x : torch.Tensor
        Shape ``(seq, 2)`` (e.g. :func:`bos_inputs`).
    causal : bool
        Apply the causal mask (``True``) or let every token see every token.

    Returns
    -------
    torch.Tensor
        Shape ``(seq,)``: ``1/t`` at 1-based position ``t`` when causal, ``1/seq`` everywhere
        otherwise.
    """
    if not isinstance(x, torch.Tensor) or x.ndim != 2 or x.shape[-1] != 2:
        raise ValueError("x must be a tensor of shape (seq, 2), e.g. bos_inputs(seq)")
    if not isinstance(causal, bool):
        raise TypeError(f"causal must be a bool, got {type(causal).__name__}")
    w_q = torch.zeros(2, 1, dtype=x.dtype)  # identical (zero) logits for every key
    w_k = torch.zeros(2, 1, dtype=x.dtype)
    w_v = torch.tensor([[0.0], [1.0]], dtype=x.dtype)  # the marker feature only
    mask = causal_mask(x.shape[0]) if causal else None  # (seq, seq)
    out, _ = attention(x @ w_q, x @ w_k, x @ w_v, mask=mask)  # (seq, 1)
    return out[:, 0]


def inverse_map(max_position: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, float]:
    """A one-hidden-layer ReLU map with ``f(1/k) = k`` for ``k = 1 … max_position``.

    ``f(u) = b₂ + Σ_j w₂[j]·relu(u − c_j)``: the piecewise-linear interpolant of the points
    ``(1/k, k)``, with ``N − 1`` hidden units at the knots ``c = 0, 1/(N−1), 1/(N−2), …, 1/2``
    (the first unit carries the segment through ``(1/N, N)`` and ``(1/(N−1), N−1)``, extended
    down to ``u = 0``). Below ``1/N`` (positions beyond ``N``) it continues that segment
    linearly and is wrong.

    Returns
    -------
    tuple
        ``(w1, b1, w2, b2)``: ``w1`` ``(N − 1,)`` ones, ``b1`` ``(N − 1,)`` = ``−c``,
        ``w2`` ``(N − 1,)``, ``b2`` a float; float64.
    """
    n = check_int(max_position, "max_position", minimum=2)
    check_size(("max_position", n))
    ks = torch.arange(n, 0, -1, dtype=torch.float64)  # N, N−1, …, 1
    knots_u = 1.0 / ks  # ascending: 1/N … 1
    slopes = (ks[1:] - ks[:-1]) / (knots_u[1:] - knots_u[:-1])  # (N−1,) per segment
    # relu(u − 0) carries the first slope (u > 0 always); each later knot changes the slope.
    centres = torch.cat([torch.zeros(1, dtype=torch.float64), knots_u[1:-1]])  # (N−1,)
    w2 = torch.cat([slopes[:1], slopes[1:] - slopes[:-1]])  # (N−1,)
    b2 = float(ks[0] - slopes[0] * knots_u[0])
    return torch.ones_like(centres), -centres, w2, b2


def recover_positions(seq_len: int, max_position: int, *, causal: bool = True) -> torch.Tensor:
    """The hand-built layer end to end: ``(seq_len,)`` float64 positions ``1 … seq_len``
    (exact up to float rounding for ``seq_len <= max_position`` with the causal mask)."""
    u = counting_head(bos_inputs(seq_len), causal=causal)  # (seq,)
    w1, b1, w2, b2 = inverse_map(max_position)
    hidden = torch.relu(u[:, None] * w1 + b1)  # (seq, hidden)
    return hidden @ w2 + b2  # (seq,)
