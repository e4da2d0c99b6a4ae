"""The naive position encodings of chapter 2, each failing one property of the wish list.

* integer: ``PE(p) = p·scale`` in every feature (unbounded; large positions swamp the embedding);
* normalised: ``PE(p) = p / (L - 1)`` (bounded, but the step between neighbours depends on ``L``);
* binary: bit ``j`` of ``p`` in feature ``j`` (bounded and unique, but discrete and jumpy).
"""

from __future__ import annotations

import torch

from ._validation import (
    check_dtype,
    check_length,
    check_positive,
    check_positive_int,
    check_size,
)

__all__ = ["binary_encoding", "integer_encoding", "normalized_encoding"]


def integer_encoding(
    seq_len: int, dim: int, *, scale: float = 1.0, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """Encode position ``p`` as the value ``p·scale`` repeated in all ``dim`` features.

    Parameters
    ----------
    seq_len : int
        Number of positions ``L`` (>= 0).
    dim : int
        Number of features (>= 1; need not be even).
    scale : float
        Multiplier (> 0). ``scale < 1`` is the "multiplicative scaling" fix that shrinks values but
        also shrinks the gap between neighbouring positions.
    dtype : torch.dtype
        Output dtype (computed in float64 first).

    Returns
    -------
    torch.Tensor
        Shape ``(seq_len, dim)``; row ``p`` is ``p·scale``.
    """
    seq_len = check_length(seq_len, "seq_len")
    dim = check_positive_int(dim, "dim")
    scale = check_positive(scale, "scale")
    dtype = check_dtype(dtype)
    check_size(("seq_len", seq_len), ("dim", dim), what="the (seq_len, dim) table")
    column = torch.arange(seq_len, dtype=torch.float64) * scale
    return column[:, None].expand(seq_len, dim).to(dtype).contiguous()


def normalized_encoding(
    seq_len: int, dim: int, *, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """Encode position ``p`` as ``p / (seq_len - 1)`` in every feature, so values lie in [0, 1].

    For ``seq_len = 1`` the single position is encoded as 0 (there is no span to divide by).

    Parameters
    ----------
    seq_len : int
        Number of positions ``L`` (>= 0).
    dim : int
        Number of features (>= 1).
    dtype : torch.dtype
        Output dtype.

    Returns
    -------
    torch.Tensor
        Shape ``(seq_len, dim)``.
    """
    seq_len = check_length(seq_len, "seq_len")
    dim = check_positive_int(dim, "dim")
    dtype = check_dtype(dtype)
    check_size(("seq_len", seq_len), ("dim", dim), what="the (seq_len, dim) table")
    column = torch.arange(seq_len, dtype=torch.float64) / max(seq_len - 1, 1)
    return column[:, None].expand(seq_len, dim).to(dtype).contiguous()


def binary_encoding(seq_len: int, dim: int, *, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Encode position ``p`` by its binary digits: feature ``j`` holds bit ``j`` (LSB first).

    Parameters
    ----------
    seq_len : int
        Number of positions (>= 0, at most ``2**dim`` so every position gets a distinct code).
    dim : int
        Number of bits (>= 1).
    dtype : torch.dtype
        Output dtype.

    Returns
    -------
    torch.Tensor
        Shape ``(seq_len, dim)`` of zeros and ones: ``out[p, j] = (p >> j) & 1``.
    """
    seq_len = check_length(seq_len, "seq_len")
    dim = check_positive_int(dim, "dim")
    dtype = check_dtype(dtype)
    check_size(("seq_len", seq_len), ("dim", dim), what="the (seq_len, dim) table")
    # seq_len <= MAX_ELEMENTS < 2**63, so only small dims can be too few bits (no 2**dim for a
    # huge dim: that integer alone would take minutes to build).
    if dim < 63 and seq_len > 2**dim:
        raise ValueError(
            f"seq_len must be <= 2**dim = {2**dim} so that positions get distinct codes, "
            f"got seq_len = {seq_len} with dim = {dim}"
        )
    # seq_len <= 2**dim, so bits above 62 are always 0 and int64 shifts stay in range.
    p = torch.arange(seq_len, dtype=torch.int64)[:, None]
    bits = torch.arange(min(dim, 63), dtype=torch.int64)
    table = torch.zeros(seq_len, dim, dtype=dtype)
    table[:, : bits.numel()] = ((p >> bits) & 1).to(dtype)
    return table
