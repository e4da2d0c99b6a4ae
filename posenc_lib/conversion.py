"""Moving q/k projection weights between Meta's interleaved and Hugging Face's half RoPE layouts.

Meta's LLaMA code rotates the feature pairs ``(2i, 2i+1)`` of every head; Hugging Face's
``rotate_half`` (and GPT-NeoX) rotates the pairs ``(i, i + head_dim/2)``. The two give the same
attention scores once the output rows of the query and key projections are permuted, head by head,
with :func:`posenc_lib.rope.interleaved_to_half_permutation`. Values and output projections are not
touched: RoPE never acts on them.
"""

from __future__ import annotations

import torch

from posenc_lib._validation import check_base, check_choice, check_positive_int, check_rope_input
from posenc_lib.rope import (
    apply_rope_complex,
    apply_rope_half,
    apply_rope_interleaved,
    interleaved_to_half_permutation,
)

__all__ = ["hf_to_meta_qk_weight", "meta_to_hf_qk_weight", "rope_scores"]

_CONVENTIONS = ("interleaved", "half", "complex")


def _per_head_row_permutation(w: object, n_heads: object, *, inverse: bool) -> torch.Tensor:
    if not isinstance(w, torch.Tensor):
        raise TypeError(f"w must be a torch.Tensor, got {type(w).__name__}")
    if w.ndim not in (1, 2):
        raise ValueError(
            "w must be a projection weight (n_heads*head_dim, in_features) or a bias "
            f"(n_heads*head_dim,), got shape {tuple(w.shape)}"
        )
    n_heads = check_positive_int(n_heads, "n_heads")
    rows = w.shape[0]
    if rows % n_heads != 0:
        raise ValueError(f"w.shape[0] = {rows} must be divisible by n_heads = {n_heads}")
    head_dim = rows // n_heads
    if head_dim == 0 or head_dim % 2 != 0:
        raise ValueError(
            f"head_dim = w.shape[0] // n_heads = {head_dim} must be a positive even integer"
        )
    perm = interleaved_to_half_permutation(head_dim).to(torch.long)
    if inverse:
        perm = torch.argsort(perm)
    # Row r of head h moves as a block: new row (h, j) is old row (h, perm[j]).
    index = (torch.arange(n_heads)[:, None] * head_dim + perm[None, :]).reshape(-1)
    return w.index_select(0, index)


def meta_to_hf_qk_weight(w: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Permute a query or key projection from Meta's interleaved layout to HF's half layout.

    With ``w_hf = meta_to_hf_qk_weight(w_meta, n_heads)``, the scores
    ``apply_rope_half(x @ w_hf.T)`` (per head) equal ``apply_rope_interleaved(x @ w_meta.T)``:
    head by head, output row ``j`` of ``w_hf`` is row ``perm[j]`` of ``w_meta``, with
    ``perm = interleaved_to_half_permutation(head_dim)``. For grouped-query attention pass the
    number of *key/value* heads when converting the key projection.

    Parameters
    ----------
    w
        ``(n_heads * head_dim, in_features)`` weight, or a ``(n_heads * head_dim,)`` bias.
    n_heads
        Number of heads the rows are split into; ``head_dim`` must be even.

    Returns
    -------
    torch.Tensor
        Same shape and dtype as ``w``, rows permuted (a new tensor).
    """
    return _per_head_row_permutation(w, n_heads, inverse=False)


def hf_to_meta_qk_weight(w: torch.Tensor, n_heads: int) -> torch.Tensor:
    """The inverse of :func:`meta_to_hf_qk_weight`: HF's half layout back to Meta's interleaved one.

    Parameters and return value as in :func:`meta_to_hf_qk_weight`.
    """
    return _per_head_row_permutation(w, n_heads, inverse=True)


def rope_scores(
    q: torch.Tensor,
    k: torch.Tensor,
    positions: torch.Tensor | None = None,
    *,
    convention: str = "half",
    base: float = 10000.0,
) -> torch.Tensor:
    """Raw attention scores ``RoPE(q) @ RoPE(k).T`` under one convention (no scaling, no softmax).

    Parameters
    ----------
    q, k
        ``(..., seq, dim)`` queries and keys at the same ``positions``.
    positions
        ``(seq,)``; default ``arange(seq)``.
    convention
        ``"interleaved"`` (pairs ``(2i, 2i+1)``), ``"half"`` (pairs ``(i, i+dim/2)``) or
        ``"complex"`` (Meta's ``view_as_complex`` form, same pairs as interleaved).

    Returns
    -------
    torch.Tensor
        ``(..., seq, seq)``: entry ``[m, n]`` is the rotated query at ``m`` dotted with the rotated
        key at ``n``.
    """
    q, seq_q, dim_q = check_rope_input(q, "q")
    k, seq_k, dim_k = check_rope_input(k, "k")
    if dim_q != dim_k or seq_q != seq_k:
        raise ValueError(
            f"q and k must have the same (seq, dim), got {tuple(q.shape)} and {tuple(k.shape)}"
        )
    convention = check_choice(convention, "convention", _CONVENTIONS)
    base = check_base(base)
    apply = {
        "interleaved": apply_rope_interleaved,
        "half": apply_rope_half,
        "complex": apply_rope_complex,
    }[convention]
    return apply(q, positions, base=base) @ apply(k, positions, base=base).transpose(-2, -1)
