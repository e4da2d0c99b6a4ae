"""The sinusoidal positional encoding of Vaswani et al. (2017), section 3.5.

.. math::

    \\mathrm{PE}(m, 2i) = \\sin(m\\,\\theta_i), \\quad
    \\mathrm{PE}(m, 2i+1) = \\cos(m\\,\\theta_i), \\quad
    \\theta_i = b^{-2i/d}.

Everything is computed in float64 and cast at the end, so the table stays accurate at large
positions even when the caller wants float32 or half precision.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ._validation import (
    check_angles,
    check_base,
    check_choice,
    check_dim,
    check_dtype,
    check_float_tensor,
    check_int,
    check_length,
    check_positions,
    check_real,
    check_size,
)

__all__ = [
    "SinusoidalPositionalEncoding",
    "pair_multiplication_matrix",
    "sinusoidal_complex",
    "sinusoidal_frequencies",
    "sinusoidal_shift_matrix",
    "sinusoidal_table",
]


def sinusoidal_frequencies(
    dim: int, base: float = 10000.0, *, method: str = "power", dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """Angular frequencies ``θ_i = base^(-2i/dim)`` of the sinusoidal encoding.

    Parameters
    ----------
    dim : int
        Feature dimension ``d`` (positive, even).
    base : float
        The base ``b`` (10 000 in the paper).
    method : {"power", "exp_log"}
        ``"power"`` evaluates ``base ** (-2i/d)`` directly; ``"exp_log"`` evaluates
        ``exp(2i · (-ln b / d))``, the ``div_term`` of many public implementations. Both are the
        same number mathematically; computing them in float32 shows the rounding difference.
    dtype : torch.dtype
        Floating dtype the arithmetic is done in (float64 by default).

    Returns
    -------
    torch.Tensor
        Shape ``(dim // 2,)``.
    """
    dim = check_dim(dim)
    base = check_base(base)
    method = check_choice(method, "method", ("power", "exp_log"))
    dtype = check_dtype(dtype)
    two_i = torch.arange(0, dim, 2, dtype=dtype)
    if method == "power":
        return torch.tensor(base, dtype=dtype) ** (-two_i / dim)
    return torch.exp(two_i * (-math.log(base) / dim))


def sinusoidal_table(
    seq_len: int,
    dim: int,
    base: float = 10000.0,
    *,
    dtype: torch.dtype = torch.float32,
    positions: torch.Tensor | None = None,
) -> torch.Tensor:
    """The sinusoidal table ``PE``, one row per position.

    ``PE[p, 2i] = sin(p·θ_i)`` and ``PE[p, 2i+1] = cos(p·θ_i)`` with ``θ_i = base^(-2i/dim)``
    (sin and cos interleaved, as in the paper, not concatenated).

    Parameters
    ----------
    seq_len : int
        Number of positions (>= 0).
    dim : int
        Feature dimension ``d`` (positive, even).
    base : float
        The base ``b`` (> 0, finite).
    dtype : torch.dtype
        Output dtype; the table is computed in float64 and cast.
    positions : torch.Tensor, optional
        Shape ``(seq_len,)``: positions to encode instead of ``0 … seq_len-1`` (may be float).

    Returns
    -------
    torch.Tensor
        Shape ``(seq_len, dim)``.
    """
    seq_len = check_length(seq_len, "seq_len")
    dim = check_dim(dim)
    base = check_base(base)
    dtype = check_dtype(dtype)
    check_size(("seq_len", seq_len), ("dim", dim), what="the (seq_len, dim) table")
    if positions is None:
        pos = torch.arange(seq_len, dtype=torch.float64)
    else:
        pos = check_positions(positions, seq_len)
    angles = torch.outer(pos, sinusoidal_frequencies(dim, base))  # (seq_len, dim // 2)
    check_angles(angles, "positions × frequencies")
    table = torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)
    return table.to(dtype)


def sinusoidal_shift_matrix(offset: float, dim: int, base: float = 10000.0) -> torch.Tensor:
    """The shift map ``Φ(r)`` with ``PE(n + r) = Φ(r) · PE(n)`` for every position ``n``.

    Block diagonal with one 2×2 block per (sin, cos) pair ``i`` (clockwise by ``rθ_i``)::

        [[ cos rθ_i,  sin rθ_i],
         [-sin rθ_i,  cos rθ_i]]

    It depends on the shift ``r`` only: with ``r = m − n``, ``PE(m) = Φ(r) · PE(n)``. That a
    linear map exists is what makes attending by relative position learnable in principle from
    an absolute encoding (Vaswani et al.'s hypothesis); whether training finds it is not implied.

    Parameters
    ----------
    offset : float
        The shift ``r`` in positions (any finite real).
    dim : int
        Feature dimension ``d`` (positive, even).
    base : float
        The base ``b``.

    Returns
    -------
    torch.Tensor
        Shape ``(dim, dim)``, float64.
    """
    offset = check_real(offset, "offset")
    dim = check_dim(dim)
    check_size(("dim", dim), ("dim", dim), what="the (dim, dim) matrix")
    base = check_base(base)
    angle = offset * sinusoidal_frequencies(dim, base)
    cos, sin = angle.cos(), angle.sin()
    matrix = torch.zeros(dim, dim, dtype=torch.float64)
    idx = torch.arange(0, dim, 2)
    # sin(a+b) = sin a cos b + cos a sin b ; cos(a+b) = cos a cos b - sin a sin b
    matrix[idx, idx] = cos
    matrix[idx, idx + 1] = sin
    matrix[idx + 1, idx] = -sin
    matrix[idx + 1, idx + 1] = cos
    return matrix


def sinusoidal_complex(seq_len: int, dim: int, base: float = 10000.0) -> torch.Tensor:
    """The sinusoidal encoding in complex form: ``z[p, i] = cos(pθ_i) + i·sin(pθ_i) = e^{i·pθ_i}``.

    Pair ``i`` of :func:`sinusoidal_table` holds ``(sin, cos)``; read as the complex number
    ``cos + i·sin`` it is ``e^{i·p·θ_i}``, and the shift ``PE(p) → PE(p + k)`` becomes the
    multiplication ``z[p + k, i] = e^{i·k·θ_i} · z[p, i]``. (Reading the pair in storage order,
    ``sin + i·cos``, gives ``i·e^{−i·p·θ_i}`` instead: a different number.)

    Parameters
    ----------
    seq_len : int
        Number of positions (>= 0).
    dim : int
        Feature dimension ``d`` (positive, even); there are ``d/2`` complex entries per row.
    base : float
        The base ``b``.

    Returns
    -------
    torch.Tensor
        Shape ``(seq_len, dim // 2)``, complex128.
    """
    seq_len = check_length(seq_len, "seq_len")
    dim = check_dim(dim)
    base = check_base(base)
    check_size(("seq_len", seq_len), ("dim", dim // 2), what="the (seq_len, dim/2) complex table")
    angles = torch.outer(
        torch.arange(seq_len, dtype=torch.float64), sinusoidal_frequencies(dim, base)
    )
    return torch.polar(torch.ones_like(angles), angles)


def pair_multiplication_matrix(weights: torch.Tensor) -> torch.Tensor:
    """The real ``(d, d)`` matrix that multiplies feature pair ``i`` by the complex ``w_i``.

    Pair ``i`` is ``(x_{2i}, x_{2i+1})``, read as ``x_{2i} + i·x_{2i+1}``; multiplying it by
    ``w_i = a + i·b`` is the 2×2 block ``[[a, −b], [b, a]]`` (a rotation scaled by ``|w_i|``).
    These block-diagonal matrices are exactly the matrices that commute with every shift
    :func:`sinusoidal_shift_matrix` ``Φ(r)``: they act on each pair as a complex number, and
    complex numbers commute.

    Parameters
    ----------
    weights : torch.Tensor
        ``(d/2,)`` complex (or real) numbers ``w_i``, finite.

    Returns
    -------
    torch.Tensor
        Shape ``(d, d)``, float64, block diagonal.
    """
    if not isinstance(weights, torch.Tensor):
        raise TypeError(f"weights must be a 1-D torch.Tensor, got {type(weights).__name__}")
    if weights.ndim != 1 or weights.numel() == 0:
        raise ValueError(f"weights must be 1-D and non-empty, got shape {tuple(weights.shape)}")
    if weights.dtype == torch.bool:
        raise TypeError("weights must be a complex or real tensor, got bool")
    if weights.numel() > 4096:
        raise ValueError(f"weights must hold at most 4096 pairs, got {weights.numel()}")
    w = weights.to(torch.complex128)
    if not bool(torch.isfinite(torch.view_as_real(w)).all()):
        raise ValueError("weights must be finite")
    a, b = w.real, w.imag
    dim = 2 * w.numel()
    matrix = torch.zeros(dim, dim, dtype=torch.float64)
    idx = torch.arange(0, dim, 2)
    matrix[idx, idx] = a
    matrix[idx, idx + 1] = -b
    matrix[idx + 1, idx] = b
    matrix[idx + 1, idx + 1] = a
    return matrix


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the sinusoidal table to token embeddings, then applies dropout.

    Parameters
    ----------
    dim : int
        Feature dimension ``d`` (positive, even).
    dropout : float
        Dropout probability in ``[0, 1]`` applied after the addition. The paper applies dropout
        0.1 here; the default 0 keeps outputs deterministic for the book's checks.
    max_len : int
        Longest sequence the precomputed table covers (>= 1).
    base : float
        The base ``b``.

    Notes
    -----
    The table is a non-persistent float64 buffer (not saved in ``state_dict``, since it is a
    function of the hyper-parameters) and is cast to the input's dtype on each call. Module-wide
    casts (``.half()``, ``.to(torch.bfloat16)``) move the buffer's device but keep it float64, so
    a float32 input still gets the exact table. On a device without float64 (Apple's MPS) the
    float64-built table is stored as float32.
    """

    pe: torch.Tensor

    def __init__(
        self, dim: int, dropout: float = 0.0, max_len: int = 5000, base: float = 10000.0
    ) -> None:
        super().__init__()
        self.dim = check_dim(dim)
        dropout = check_real(dropout, "dropout")
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"dropout must be a probability in [0, 1], got {dropout}")
        self.max_len = check_int(max_len, "max_len", minimum=1, what="a positive integer (>= 1)")
        check_size(("max_len", self.max_len), ("dim", self.dim), what="the (max_len, dim) table")
        self.base = check_base(base)
        self.dropout = nn.Dropout(dropout)
        table = sinusoidal_table(self.max_len, self.dim, self.base, dtype=torch.float64)
        self.register_buffer("pe", table, persistent=False)

    def _apply(self, fn, recurse=True):  # type: ignore[no-untyped-def]
        # nn.Module.half()/.to(dtype) cast every floating buffer; keep the table float64 (only
        # its device follows fn), so rounding happens once, when it is added to x. A device without
        # float64 (Apple's MPS) gets the float64-built table stored as float32.
        table = self.pe
        self.pe = table.float()  # what fn moves: a float32 copy, accepted by every device
        super()._apply(fn, recurse)
        device = self.pe.device
        dtype = torch.float32 if device.type == "mps" else torch.float64
        self.pe = table.to(device=device, dtype=dtype)
        return self

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """Return ``dropout(x + PE[offset : offset + seq])``.

        Parameters
        ----------
        x : torch.Tensor
            Shape ``(batch, seq, dim)`` (any leading dimensions are accepted), floating point.
        offset : int
            Position of ``x``'s first row (0 … ``max_len − seq``). With a KV cache, the tokens of
            a decoding step start at the number of tokens already cached, not at 0.

        Returns
        -------
        torch.Tensor
            Same shape and dtype as ``x``.
        """
        x = check_float_tensor(x, "x", min_ndim=2)
        seq, dim = x.shape[-2], x.shape[-1]
        if dim != self.dim:
            raise ValueError(f"x.shape[-1] must equal dim = {self.dim}, got {dim}")
        offset = check_int(offset, "offset", minimum=0)
        if offset + seq > self.max_len:
            raise ValueError(
                f"offset + seq = {offset} + {seq} (x.shape[-2]) exceeds max_len = {self.max_len}; "
                "build the module with a larger max_len"
            )
        table = self.pe[offset : offset + seq]
        return self.dropout(x + table.to(dtype=x.dtype, device=x.device))

    def extra_repr(self) -> str:
        return f"dim={self.dim}, max_len={self.max_len}, base={self.base}"
