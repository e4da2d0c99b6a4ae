"""The naive position encodings of chapter 2, each failing one property of the wish list.

* integer: ``PE(m) = m·scale`` in every feature (unbounded; large positions swamp the embedding);
* normalised: ``PE(m) = m / (L - 1)`` (bounded, but the step between neighbours depends on ``L``);
* binary: bit ``j`` of ``m`` in feature ``j`` (bounded and unique, but discrete and jumpy);
* learned: a table with one free row per position, shown as it starts training (seeded random
  rows; it ends at ``max_len`` and nothing ties one row to the next);
* sines only: ``sin(m·θ_j)`` in every feature, no cosine (bounded and smooth, but the dot product
  at a fixed offset depends on the position).
"""

from __future__ import annotations

import torch

from ._validation import (
    check_base,
    check_dtype,
    check_length,
    check_positive,
    check_positive_int,
    check_seed,
    check_size,
)

__all__ = [
    "NoRowError",
    "binary_encoding",
    "integer_encoding",
    "learned_encoding",
    "normalized_encoding",
    "sines_only_encoding",
]


class NoRowError(ValueError):
    """A table was asked for a position it has no row for: a capacity limit, not a bad argument.

    Raised by :func:`binary_encoding` past ``2**dim`` positions and by :func:`learned_encoding`
    past ``max_len``. It subclasses ``ValueError``, so code that catches ``ValueError`` still
    does; :func:`~posenc_lib.properties.scorecard` catches only this one, so that any other
    ``ValueError`` (a bug, a bad argument) propagates instead of reading as "no row".
    """


def integer_encoding(
    seq_len: int, dim: int, *, scale: float = 1.0, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """Encode position ``m`` as the value ``m·scale`` repeated in all ``dim`` features.

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
        Output dtype (computed in float64 first). A table whose largest entry overflows it
        raises ``ValueError`` (float16 from ``seq_len`` = 65 521 at ``scale = 1``: 65 520
        rounds to ``inf``).

    Returns
    -------
    torch.Tensor
        Shape ``(seq_len, dim)``; row ``m`` is ``m·scale``.
    """
    seq_len = check_length(seq_len, "seq_len")
    dim = check_positive_int(dim, "dim")
    scale = check_positive(scale, "scale")
    dtype = check_dtype(dtype)
    check_size(("seq_len", seq_len), ("dim", dim), what="the (seq_len, dim) table")
    column = torch.arange(seq_len, dtype=torch.float64) * scale
    largest = (seq_len - 1) * scale if seq_len else 0.0
    if torch.isinf(torch.tensor(largest, dtype=torch.float64).to(dtype)):
        # The point of this encoding is that it grows without bound; in a narrow dtype it grows
        # past the largest finite value and would silently become inf.
        raise ValueError(
            f"the largest entry (seq_len − 1)·scale = {largest:.6g} overflows {dtype} (largest "
            f"finite value {torch.finfo(dtype).max:.6g}): use a wider dtype, or a smaller seq_len "
            "or scale"
        )
    return column[:, None].expand(seq_len, dim).to(dtype).contiguous()


def normalized_encoding(
    seq_len: int, dim: int, *, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """Encode position ``m`` as ``m / (seq_len - 1)`` in every feature, so values lie in [0, 1].

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
    """Encode position ``m`` by its binary digits: feature ``j`` holds bit ``j`` (LSB first).

    Parameters
    ----------
    seq_len : int
        Number of positions (>= 0, at most ``2**dim`` so every position gets a distinct code;
        more raises :class:`NoRowError`, a ``ValueError``).
    dim : int
        Number of bits (>= 1).
    dtype : torch.dtype
        Output dtype.

    Returns
    -------
    torch.Tensor
        Shape ``(seq_len, dim)`` of zeros and ones: ``out[m, j] = (m >> j) & 1``.
    """
    seq_len = check_length(seq_len, "seq_len")
    dim = check_positive_int(dim, "dim")
    dtype = check_dtype(dtype)
    check_size(("seq_len", seq_len), ("dim", dim), what="the (seq_len, dim) table")
    # seq_len <= MAX_ELEMENTS < 2**63, so only small dims can be too few bits (no 2**dim for a
    # huge dim: that integer alone would take minutes to build).
    if dim < 63 and seq_len > 2**dim:
        raise NoRowError(
            f"seq_len must be <= 2**dim = {2**dim} so that positions get distinct codes, "
            f"got seq_len = {seq_len} with dim = {dim}"
        )
    # seq_len <= 2**dim, so bits above 62 are always 0 and int64 shifts stay in range.
    p = torch.arange(seq_len, dtype=torch.int64)[:, None]
    bits = torch.arange(min(dim, 63), dtype=torch.int64)
    table = torch.zeros(seq_len, dim, dtype=dtype)
    table[:, : bits.numel()] = ((p >> bits) & 1).to(dtype)
    return table


def learned_encoding(
    seq_len: int,
    dim: int,
    *,
    max_len: int = 1024,
    seed: int = 0,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """The first ``seq_len`` rows of a learned position table, as it is before training.

    BERT and GPT-2 learn one free vector per position, an ``(max_len, dim)`` table whose rows
    start as independent normal draws: ``N(0, 0.02²)`` in Hugging Face ``transformers`` (the
    ``initializer_range`` of ``BertConfig`` and ``GPT2Config``), ``N(0, 0.01²)`` for ``wpe`` in the
    model code OpenAI released with GPT-2, while a bare ``nn.Embedding`` starts at ``N(0, 1)``.
    This function draws standard normal rows; the
    scale does not matter for what chapter 2 measures (length dependence, scale-free spreads and
    distances, the missing rows past ``max_len``). Training moves the rows, but two things stay:
    the table has exactly ``max_len`` rows, and nothing in its form relates row ``m`` to row
    ``m + k``. This function returns that starting point, seeded, so that chapter 2 can measure
    the structure a learned table does *not* come with.

    Parameters
    ----------
    seq_len : int
        Number of positions (0 … ``max_len``).
    dim : int
        Number of features (>= 1).
    max_len : int
        Rows of the table (>= 1); a longer ``seq_len`` raises :class:`NoRowError` (a
        ``ValueError``), as a position beyond the table has no vector.
    seed : int
        Seed of the random rows (>= 0); row ``m`` does not depend on ``seq_len``.
    dtype : torch.dtype
        Output dtype.

    Returns
    -------
    torch.Tensor
        Shape ``(seq_len, dim)``.
    """
    seq_len = check_length(seq_len, "seq_len")
    dim = check_positive_int(dim, "dim")
    max_len = check_positive_int(max_len, "max_len")
    seed = check_seed(seed)
    dtype = check_dtype(dtype)
    if seq_len > max_len:
        raise NoRowError(
            f"seq_len must be <= max_len = {max_len}: a learned table has no row for position "
            f"{max_len} or later, got seq_len = {seq_len}"
        )
    if max_len * dim > 2**27:
        raise ValueError(f"max_len * dim must be <= 2**27 entries, got {max_len} * {dim}")
    gen = torch.Generator().manual_seed(seed)
    table = torch.randn(max_len, dim, generator=gen, dtype=torch.float64)
    return table[:seq_len].to(dtype)


def sines_only_encoding(
    seq_len: int, dim: int, base: float = 10000.0, *, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """``PE(m)_j = sin(m·ω_j)`` with ``ω_j = base^(−j/dim)``: sinusoids without the cosines.

    The ``dim`` features use ``dim`` geometrically spaced frequencies from 1 down to about
    ``1/base``, as the sinusoidal table's pairs do, but each frequency appears once, as a sine.

    Parameters
    ----------
    seq_len : int
        Number of positions ``L`` (>= 0).
    dim : int
        Number of features (>= 1).
    base : float
        Base ``b`` of the frequencies (> 0, finite).
    dtype : torch.dtype
        Output dtype (angles are computed in float64).

    Returns
    -------
    torch.Tensor
        Shape ``(seq_len, dim)``; row 0 is all zeros.
    """
    seq_len = check_length(seq_len, "seq_len")
    dim = check_positive_int(dim, "dim")
    base = check_base(base)
    dtype = check_dtype(dtype)
    theta = base ** (-torch.arange(dim, dtype=torch.float64) / dim)
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return angles.sin().to(dtype)
