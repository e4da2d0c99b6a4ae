"""Permutations of tokens, and a tiny seeded Transformer to watch them act (chapter 1).

Chapter 1 proves that self-attention without positions is permutation-equivariant:
``f(P X) = P f(X)``. This module gives the pieces to check that with real numbers: permutation
matrices, a seeded toy vocabulary, a single-head self-attention with ``W_q``, ``W_k``, ``W_v``
(computed through :func:`posenc_lib.attention.attention`), a position-wise feed-forward layer, and a
tiny encoder stack that can optionally add a positional table or use a causal mask, the two things
that break the symmetry.

Shapes follow the book: ``x`` is ``(..., seq, dim)``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import torch
from torch import nn

from ._validation import (
    MAX_PYTHON_ITEMS,
    check_dtype,
    check_int,
    check_positive_int,
    check_sequence,
    check_size,
)
from .attention import attention

__all__ = [
    "MAX_SYMMETRY_TOKENS",
    "TinyEncoder",
    "TinyFeedForward",
    "TinySelfAttention",
    "ToyEmbedding",
    "band_mask",
    "equivariance_gap",
    "inverse_permutation",
    "mask_symmetries",
    "permutation_between",
    "permutation_matrix",
    "permute_tokens",
]


def _as_order(order: Sequence[int] | torch.Tensor, name: str = "order") -> torch.Tensor:
    """Validate a permutation of ``0 … n-1`` and return it as a 1-D int64 tensor."""
    if isinstance(order, torch.Tensor):
        if order.dtype.is_floating_point or order.dtype.is_complex or order.dtype == torch.bool:
            raise TypeError(f"{name} must hold integers, got dtype {order.dtype}")
        idx = order.to(torch.int64)
    else:
        try:
            items = list(order)
        except TypeError as exc:
            raise TypeError(f"{name} must be a sequence of ints or a 1-D tensor") from exc
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in items):
            raise TypeError(f"{name} must be a sequence of ints, got {items!r}")
        idx = torch.tensor(items, dtype=torch.int64)
    if idx.dim() != 1:
        raise ValueError(f"{name} must be 1-D, got shape {tuple(idx.shape)}")
    n = idx.numel()
    if n == 0:
        raise ValueError(f"{name} must not be empty")
    if not torch.equal(torch.sort(idx).values, torch.arange(n)):
        raise ValueError(f"{name} must be a permutation of 0 … {n - 1}, got {idx.tolist()}")
    return idx


def permutation_matrix(order: Sequence[int] | torch.Tensor, *, dtype=torch.float64) -> torch.Tensor:
    """The permutation matrix ``P`` with ``P @ X == X[order]``.

    Row ``i`` of ``P`` is the standard basis vector ``e_{order[i]}``, so multiplying from the left
    moves row ``order[i]`` of ``X`` to row ``i``.

    Parameters
    ----------
    order
        A permutation of ``0 … n-1`` (list of ints or 1-D integer tensor).
    dtype
        Floating dtype of the result.

    Returns
    -------
    torch.Tensor
        ``(n, n)``, orthogonal: ``P @ P.T == I``.
    """
    idx = _as_order(order)
    dtype = check_dtype(dtype)
    n = idx.numel()
    check_size(("len(order)", n), ("len(order)", n), what="the (n, n) permutation matrix")
    p = torch.zeros(n, n, dtype=dtype)
    p[torch.arange(n), idx] = 1
    return p


def inverse_permutation(order: Sequence[int] | torch.Tensor) -> torch.Tensor:
    """The order that undoes ``order``: ``x[order][inverse] == x``. Returns ``(n,)`` int64."""
    idx = _as_order(order)
    inv = torch.empty_like(idx)
    inv[idx] = torch.arange(idx.numel())
    return inv


def permute_tokens(x: torch.Tensor, order: Sequence[int] | torch.Tensor) -> torch.Tensor:
    """Reorder the sequence axis of ``x`` (shape ``(..., seq, dim)``): returns ``x[..., order, :]``.

    This is ``P @ x`` for ``P = permutation_matrix(order)``, without building ``P``.
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() < 2:
        raise ValueError(f"x must have shape (..., seq, dim), got shape {tuple(x.shape)}")
    idx = _as_order(order)
    if idx.numel() != x.shape[-2]:
        raise ValueError(
            f"order has {idx.numel()} entries but x has seq = {x.shape[-2]} "
            f"(shape {tuple(x.shape)})"
        )
    return x.index_select(-2, idx)


def permutation_between(source: Sequence, target: Sequence) -> list[int]:
    """The order with ``[source[j] for j in order] == target``, for sequences of distinct items.

    ``permutation_between("我爱你", "你爱我") == [2, 1, 0]``.
    """
    src = check_sequence(source, "source", of="tokens", hashable=True)
    tgt = check_sequence(target, "target", of="tokens", hashable=True)
    if len(set(src)) != len(src):
        raise ValueError(f"source must hold distinct items, got {src!r}")
    if len(tgt) != len(src) or set(src) != set(tgt):
        raise ValueError(f"target must be a reordering of source, got {src!r} and {tgt!r}")
    where = {item: j for j, item in enumerate(src)}
    return [where[item] for item in tgt]


def _check_dim(dim: int, name: str = "dim") -> int:
    return check_positive_int(dim, name)


def _check_seed(seed: int) -> int:
    # torch.Generator.manual_seed takes [-2**63, 2**64): anything else is a C overflow.
    seed = check_int(seed, "seed", what="an integer in [-2**63, 2**64)")
    if not -(2**63) <= seed < 2**64:
        raise ValueError(f"seed must be an integer in [-2**63, 2**64), got {seed}")
    return seed


def _check_x(x: torch.Tensor, dim: int, dtype: torch.dtype) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if not x.dtype.is_floating_point:
        raise TypeError(f"x must be a floating tensor, got dtype {x.dtype}")
    if x.dim() < 2 or x.shape[-1] != dim:
        raise ValueError(f"x must have shape (..., seq, {dim}), got {tuple(x.shape)}")
    if x.dtype != dtype:
        raise TypeError(
            f"x must have the weights' dtype {dtype}, got x of dtype {x.dtype} "
            f"(convert x with x.to({dtype}), or build the module with dtype={x.dtype})"
        )


class ToyEmbedding(nn.Module):
    """A seeded token-embedding table over a small vocabulary of strings.

    The same token always gets the same vector, wherever it stands: an embedding layer knows
    *what* a token is, never *where* it is.

    Parameters
    ----------
    vocab
        Distinct tokens, e.g. ``["我", "爱", "你"]``.
    dim
        Embedding width.
    seed
        Seed of the weights (a local generator; the global RNG is untouched).
    dtype
        Weight dtype (float64 by default so checks can use tight tolerances).
    """

    def __init__(self, vocab: Sequence[str], dim: int, *, seed: int = 0,
                 dtype: torch.dtype = torch.float64) -> None:
        super().__init__()
        vocab = check_sequence(vocab, "vocab", of="str tokens", allow_str=False)
        if not vocab or not all(isinstance(t, str) for t in vocab):
            raise TypeError("vocab must be a non-empty sequence of str")
        if len(set(vocab)) != len(vocab):
            raise ValueError(f"vocab must hold distinct tokens, got {vocab!r}")
        dim = _check_dim(dim)
        seed = _check_seed(seed)
        dtype = check_dtype(dtype)
        check_size(("len(vocab)", len(vocab)), ("dim", dim), what="the (vocab, dim) table")
        self.vocab = vocab
        self.index = {t: i for i, t in enumerate(vocab)}
        gen = torch.Generator().manual_seed(seed)
        self.weight = nn.Parameter(torch.randn(len(vocab), dim, generator=gen, dtype=dtype))
        self.requires_grad_(False)  # a fixed demo table: outputs print without grad_fn

    def ids(self, tokens: Sequence[str]) -> torch.Tensor:
        """Token ids, ``(seq,)`` int64; unknown tokens raise ``ValueError``."""
        tokens = check_sequence(tokens, "tokens", of="str tokens", hashable=True)
        missing = [t for t in tokens if t not in self.index]
        if missing:
            raise ValueError(f"tokens not in the vocabulary {self.vocab!r}: {missing!r}")
        return torch.tensor([self.index[t] for t in tokens], dtype=torch.int64)

    def forward(self, tokens: Sequence[str]) -> torch.Tensor:
        """Embeddings of ``tokens``, ``(seq, dim)``."""
        return self.weight[self.ids(tokens)]


def _seeded_linear(
    dim_in: int, dim_out: int, gen: torch.Generator, dtype: torch.dtype
) -> nn.Linear:
    # Scaled by 1/√dim_in so activations keep unit size through the toy stack.
    layer = nn.Linear(dim_in, dim_out, bias=False, dtype=dtype)
    weight = torch.randn(dim_out, dim_in, generator=gen, dtype=dtype) / math.sqrt(dim_in)
    with torch.no_grad():
        layer.weight.copy_(weight)
    return layer


class TinySelfAttention(nn.Module):
    """Single-head self-attention ``softmax(Q Kᵀ/√d) V`` with ``Q, K, V = X W_q, X W_k, X W_v``.

    Seeded, bias-free, no positional information of its own. The scores and the softmax are
    computed by :func:`posenc_lib.attention.attention`.

    Parameters
    ----------
    dim
        Feature width ``d`` of the input and of ``Q``, ``K``, ``V``.
    seed
        Seed of ``W_q``, ``W_k``, ``W_v``.
    dtype
        Weight dtype.
    """

    def __init__(self, dim: int, *, seed: int = 0, dtype: torch.dtype = torch.float64) -> None:
        super().__init__()
        dim = _check_dim(dim)
        seed = _check_seed(seed)
        dtype = check_dtype(dtype)
        check_size(("dim", dim), ("dim", dim), what="each (dim, dim) weight")
        gen = torch.Generator().manual_seed(seed)
        self.dim = dim
        self.w_q = _seeded_linear(dim, dim, gen, dtype)
        self.w_k = _seeded_linear(dim, dim, gen, dtype)
        self.w_v = _seeded_linear(dim, dim, gen, dtype)
        self.requires_grad_(False)

    def project(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(Q, K, V)``, each ``(..., seq, dim)``; ``x`` must have the weights' dtype."""
        _check_x(x, self.dim, self.w_q.weight.dtype)
        return self.w_q(x), self.w_k(x), self.w_v(x)

    def scores(self, x: torch.Tensor) -> torch.Tensor:
        """The logits ``A = Q Kᵀ / √d`` before the softmax, ``(..., seq, seq)``."""
        q, k, _ = self.project(x)
        return q @ k.transpose(-2, -1) / math.sqrt(self.dim)

    def forward(self, x: torch.Tensor, *, mask: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """Returns ``(out, weights)``: ``(..., seq, dim)`` and ``(..., seq, seq)``.

        ``mask`` is boolean ``(seq, seq)``, True where a query may attend (e.g. ``causal_mask``).
        """
        q, k, v = self.project(x)
        return attention(q, k, v, mask=mask)


class TinyFeedForward(nn.Module):
    """Position-wise feed-forward layer ``W_2 · relu(W_1 x)``, applied to each row on its own."""

    def __init__(self, dim: int, hidden: int | None = None, *, seed: int = 0,
                 dtype: torch.dtype = torch.float64) -> None:
        super().__init__()
        dim = _check_dim(dim)
        hidden = 4 * dim if hidden is None else _check_dim(hidden, "hidden")
        seed = _check_seed(seed)
        dtype = check_dtype(dtype)
        check_size(("dim", dim), ("hidden", hidden), what="each (hidden, dim) weight")
        gen = torch.Generator().manual_seed(seed)
        self.dim = dim
        self.w_1 = _seeded_linear(dim, hidden, gen, dtype)
        self.w_2 = _seeded_linear(hidden, dim, gen, dtype)
        self.requires_grad_(False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(..., seq, dim)`` → ``(..., seq, dim)``; ``x`` must have the weights' dtype."""
        _check_x(x, self.dim, self.w_1.weight.dtype)
        return self.w_2(torch.relu(self.w_1(x)))


class TinyEncoder(nn.Module):
    """Embedding → (+ optional positional table) → ``n_layers`` × [attention, feed-forward].

    Each layer is ``h = h + attn(h)`` then ``h = h + ffn(h)`` (residuals, no normalisation, which
    would be position-wise anyway). Without a table and without a causal mask the whole stack is
    permutation-equivariant; :meth:`sentence_vector` (mean over positions) is invariant.

    Parameters
    ----------
    vocab
        Distinct tokens.
    dim
        Model width.
    n_layers
        Number of attention + feed-forward layers.
    seed
        One seed for every weight (each layer derives its own from it).
    """

    def __init__(self, vocab: Sequence[str], dim: int, *, n_layers: int = 2, seed: int = 0,
                 dtype: torch.dtype = torch.float64) -> None:
        super().__init__()
        dim = _check_dim(dim)
        seed = _check_seed(seed)
        n_layers = check_positive_int(n_layers, "n_layers", maximum=MAX_PYTHON_ITEMS)
        _check_seed(seed + 2 * n_layers)  # every layer's seed is valid
        check_size(
            ("n_layers", n_layers), ("7·dim", 7 * dim), ("dim", dim),
            what="the weights of all layers (3·dim² attention + 4·dim² feed-forward per layer)",
        )
        self.dim = dim
        self.embed = ToyEmbedding(vocab, dim, seed=seed, dtype=dtype)
        self.attn = nn.ModuleList(
            TinySelfAttention(dim, seed=seed + 1 + 2 * i, dtype=dtype) for i in range(n_layers)
        )
        self.ffn = nn.ModuleList(
            TinyFeedForward(dim, seed=seed + 2 + 2 * i, dtype=dtype) for i in range(n_layers)
        )

    def forward(self, tokens: Sequence[str], *, positional: torch.Tensor | None = None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        """Hidden states ``(seq, dim)`` of ``tokens``.

        ``positional`` is an optional ``(seq, dim)`` table added to the embeddings (e.g.
        ``sinusoidal_table(seq, dim)``); ``mask`` an optional boolean ``(seq, seq)`` attention mask.
        """
        h = self.embed(tokens)
        if positional is not None:
            if not isinstance(positional, torch.Tensor):
                raise TypeError("positional must be a torch.Tensor of shape (seq, dim)")
            if positional.shape != h.shape:
                raise ValueError(
                    f"positional must have shape {tuple(h.shape)}, got {tuple(positional.shape)}"
                )
            h = h + positional.to(h.dtype)
        for attn, ffn in zip(self.attn, self.ffn, strict=True):
            h = h + attn(h, mask=mask)[0]
            h = h + ffn(h)
        return h

    def sentence_vector(self, tokens: Sequence[str], **kwargs) -> torch.Tensor:
        """Mean-pooled hidden state ``(dim,)``: a bag-of-words summary when no position is given."""
        return self.forward(tokens, **kwargs).mean(dim=-2)


def equivariance_gap(f: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor,
                     order: Sequence[int] | torch.Tensor) -> float:
    """``max |f(P x) − P f(x)|``: zero (up to rounding) exactly when ``f`` commutes with this ``P``.

    ``f`` maps ``(..., seq, dim)`` to ``(..., seq, dim')``; ``x`` is ``(..., seq, dim)``.
    """
    if not callable(f):
        raise TypeError("f must be callable")
    lhs = f(permute_tokens(x, order))
    rhs = permute_tokens(f(x), order)
    if lhs.shape != rhs.shape:
        raise ValueError(
            f"f changed shape under the permutation: {tuple(lhs.shape)} vs {tuple(rhs.shape)}"
        )
    return float((lhs - rhs).detach().abs().max())


def band_mask(seq_len: int, window: int) -> torch.Tensor:
    """Boolean bidirectional sliding-window ("local attention") mask, ``True`` where allowed.

    Query ``m`` may attend to key ``n`` when ``|m − n| <= window``: a symmetric band around the
    diagonal, as in local-attention encoders. (A causal sliding window is
    ``band_mask(L, w) & causal_mask(L)``.)

    Parameters
    ----------
    seq_len : int
        Number of positions (>= 0).
    window : int
        Half-width of the band (>= 0); ``window >= seq_len - 1`` allows everything.

    Returns
    -------
    torch.Tensor
        Shape ``(seq_len, seq_len)``, bool, symmetric.
    """
    seq_len = check_int(seq_len, "seq_len", minimum=0, what="a non-negative integer")
    window = check_int(window, "window", minimum=0, what="a non-negative integer")
    check_size(("seq_len", seq_len), ("seq_len", seq_len), what="the (seq_len, seq_len) mask")
    m = torch.arange(seq_len)
    # |m - n| <= seq_len - 1, so a wider window is the same band (and a huge int must not overflow)
    return (m[:, None] - m[None, :]).abs() <= min(window, seq_len)


MAX_SYMMETRY_TOKENS = 8
"""Largest ``seq_len`` :func:`mask_symmetries` searches: 8! = 40 320 permutations."""


def mask_symmetries(mask: torch.Tensor) -> list[tuple[int, ...]]:
    """Every permutation ``π`` that preserves a square mask: ``P M Pᵀ = M`` (``M[π][:, π] == M``).

    Attention with a fixed mask ``M`` is equivariant exactly under these permutations (chapter 1):
    the reordered input gives logits ``P A Pᵀ + M``, equivariance needs ``P (A + M) Pᵀ``.
    Brute force over all ``n!`` orders, so ``n`` is at most :data:`MAX_SYMMETRY_TOKENS`.

    Parameters
    ----------
    mask : torch.Tensor
        Boolean ``(n, n)`` mask, ``True`` where a query may attend, ``1 <= n <= 8``.

    Returns
    -------
    list of tuple of int
        The preserving orders in lexicographic order (the identity always first).
    """
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise TypeError("mask must be a boolean torch.Tensor of shape (n, n)")
    if mask.dim() != 2 or mask.shape[0] != mask.shape[1]:
        raise ValueError(f"mask must be square (n, n), got shape {tuple(mask.shape)}")
    n = mask.shape[0]
    if not 1 <= n <= MAX_SYMMETRY_TOKENS:
        raise ValueError(f"mask must have 1 <= n <= {MAX_SYMMETRY_TOKENS} rows, got n = {n}")
    keep = []
    for perm in itertools.permutations(range(n)):
        idx = torch.tensor(perm)
        if torch.equal(mask[idx][:, idx], mask):
            keep.append(perm)
    return keep
