"""Rotary position embedding (RoPE, Su et al. 2021) in its three conventions.

Pair ``i`` of a query or key at position ``m`` is rotated by the angle ``m·θ_i`` with
``θ_i = base^(-2i/d)``:

.. math::

    (x_a, x_b) \\mapsto (x_a\\cos m\\theta_i - x_b\\sin m\\theta_i,\\;
                         x_a\\sin m\\theta_i + x_b\\cos m\\theta_i).

The conventions differ only in which two features form pair ``i``:

* ``interleaved``: features ``(2i, 2i+1)`` (RoFormer, GPT-J, the seed article's code);
* ``half``: features ``(i, i + d/2)`` (Hugging Face ``rotate_half``, GPT-NeoX);
* ``complex``: ``(2i, 2i+1)`` read as one complex number (Meta LLaMA's ``view_as_complex``).

*Partial* rotary (:func:`apply_rope_partial`) rotates only the first ``rotary_dim`` features of a
head, with frequencies ``base^(-2i/rotary_dim)``, and passes the others through unchanged: GPT-NeoX
(``rotary_pct = 0.25``, half convention) and GPT-J (``rotary_dim = 64`` of 256, interleaved).

Angles are computed in float64 (a float32 outer product ``m·θ``, as in Meta's and Hugging Face's
code, is off by up to 0.052 rad at ``m = 10^6`` for ``d = 128``); cos/sin are then cast to the
working dtype. Half-precision inputs are rotated in
float32 and cast back, so they keep their dtype.
"""

from __future__ import annotations

import torch
from torch import nn

from ._validation import (
    check_angles,
    check_base,
    check_choice,
    check_device,
    check_dim,
    check_dtype,
    check_float_tensor,
    check_inv_freq,
    check_length,
    check_positions,
    check_positive,
    check_real,
    check_rope_input,
    check_size,
    compute_dtype,
    resolve_base,
)

__all__ = [
    "CONVENTIONS",
    "RotaryEmbedding",
    "apply_rope_complex",
    "apply_rope_half",
    "apply_rope_interleaved",
    "apply_rope_partial",
    "interleaved_to_half_permutation",
    "partial_rotary_dim",
    "rope_angles",
    "rope_cos_sin",
    "rope_inv_freq",
    "rope_rotation_matrix",
    "rotate_half",
]

CONVENTIONS = ("half", "interleaved", "complex")


def rope_inv_freq(dim: int, base: float = 10000.0) -> torch.Tensor:
    """Inverse frequencies ``θ_i = base^(-2i/dim)``, ``i = 0 … dim/2 - 1``.

    Parameters
    ----------
    dim : int
        Rotary dimension ``d`` (positive, even).
    base : float
        The base ``b`` (10 000 in RoFormer and LLaMA 2, 500 000 in LLaMA 2 Long / LLaMA 3).

    Returns
    -------
    torch.Tensor
        Shape ``(dim // 2,)``, float64, radians per position.
    """
    dim = check_dim(dim)
    base = check_base(base)
    return torch.tensor(base, dtype=torch.float64) ** (
        -torch.arange(0, dim, 2, dtype=torch.float64) / dim
    )


def rope_angles(positions: torch.Tensor, inv_freq: torch.Tensor) -> torch.Tensor:
    """Rotation angles ``m·θ_i`` for every position ``m`` and pair ``i``, in float64.

    Parameters
    ----------
    positions : torch.Tensor
        Shape ``(seq,)``, integer or float positions.
    inv_freq : torch.Tensor
        Shape ``(dim // 2,)``, e.g. from :func:`rope_inv_freq` or a scaling function.

    Returns
    -------
    torch.Tensor
        Shape ``(seq, dim // 2)``, float64: ``angles[m, i] = positions[m] · inv_freq[i]``.
    """
    positions = check_positions(positions)
    inv_freq = check_inv_freq(inv_freq)
    check_size(
        ("len(positions)", positions.shape[0]), ("len(inv_freq)", inv_freq.shape[0]),
        what="the (seq, dim // 2) angles",
    )
    return check_angles(torch.outer(positions, inv_freq.to(positions.device)))


def rope_cos_sin(
    positions: torch.Tensor,
    inv_freq: torch.Tensor,
    dtype: torch.dtype = torch.float32,
    *,
    convention: str = "half",
    scale: float = 1.0,
    device: torch.device | str | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The ``(cos, sin)`` tables a RoPE layer multiplies with, laid out for a convention.

    Parameters
    ----------
    positions : torch.Tensor
        Shape ``(seq,)``.
    inv_freq : torch.Tensor
        Shape ``(dim // 2,)``.
    dtype : torch.dtype
        Output dtype (the angles are float64 before the cast).
    convention : {"half", "interleaved"}
        ``"half"`` gives ``cat(cos θ, cos θ)`` as Hugging Face does (pairs ``(i, i+d/2)``);
        ``"interleaved"`` repeats each value twice (pairs ``(2i, 2i+1)``).
    scale : float
        Multiplies both tables (YaRN's attention factor, > 0; 1 otherwise).
    device : torch.device or str, optional
        Where to put the tables (default: the device of ``positions``).

    Returns
    -------
    tuple of torch.Tensor
        ``cos`` and ``sin``, each of shape ``(seq, dim)``.
    """
    dtype = check_dtype(dtype)
    convention = check_choice(convention, "convention", ("half", "interleaved"))
    scale = check_positive(scale, "scale")
    device = check_device(device)
    angles = rope_angles(positions, inv_freq)
    check_size(
        ("len(positions)", angles.shape[0]), ("dim", 2 * angles.shape[1]),
        what="each (seq, dim) table",
    )
    cos, sin = angles.cos() * scale, angles.sin() * scale
    if convention == "half":
        cos, sin = torch.cat((cos, cos), dim=-1), torch.cat((sin, sin), dim=-1)
    else:
        cos, sin = cos.repeat_interleave(2, dim=-1), sin.repeat_interleave(2, dim=-1)
    return cos.to(device=device, dtype=dtype), sin.to(device=device, dtype=dtype)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """Hugging Face's ``rotate_half``: ``cat(-x[..., d/2:], x[..., :d/2])``.

    Parameters
    ----------
    x : torch.Tensor
        Shape ``(..., dim)`` with even ``dim``.

    Returns
    -------
    torch.Tensor
        Same shape as ``x``; pair ``(i, i+d/2)`` turned by a quarter turn, ``(a, b) -> (-b, a)``.
    """
    x = check_float_tensor(x, "x", min_ndim=1)
    dim = x.shape[-1]
    if dim == 0 or dim % 2 != 0:
        raise ValueError(f"x.shape[-1] (dim) must be a positive even integer, got {dim}")
    x1, x2 = x[..., : dim // 2], x[..., dim // 2 :]
    return torch.cat((-x2, x1), dim=-1)


# --- the arithmetic kernels (no validation; callers validate) ------------------------------------


def _rotate_half_layout(x: torch.Tensor, cos: torch.Tensor, sin_half: torch.Tensor) -> torch.Tensor:
    """``x·cos + rotate_half(x)·sin`` with one output allocation and no ``torch.cat``.

    ``cos`` is ``(seq, d)`` (= ``cat(c, c)``); ``sin_half`` is ``(seq, d/2)``.
    """
    h = x.shape[-1] // 2
    out = torch.mul(x, cos)
    out[..., :h].addcmul_(x[..., h:], sin_half, value=-1.0)
    out[..., h:].addcmul_(x[..., :h], sin_half)
    return out


def _rotate_interleaved_layout(
    x: torch.Tensor, cos: torch.Tensor, sin_half: torch.Tensor
) -> torch.Tensor:
    """Rotate pairs ``(2i, 2i+1)``; ``cos`` is ``(seq, d)`` with each value repeated twice."""
    out = torch.mul(x, cos)
    out[..., 0::2].addcmul_(x[..., 1::2], sin_half, value=-1.0)
    out[..., 1::2].addcmul_(x[..., 0::2], sin_half)
    return out


def _rotate_complex(x: torch.Tensor, freqs_cis: torch.Tensor) -> torch.Tensor:
    """LLaMA's form: view pairs ``(2i, 2i+1)`` as complex numbers and multiply by ``e^{imθ}``."""
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    # An explicit pair count (not -1): an empty batch or sequence reshapes too.
    pairs = x.to(work).reshape(*x.shape[:-1], x.shape[-1] // 2, 2).contiguous()
    xc = torch.view_as_complex(pairs)
    out = torch.view_as_real(xc * freqs_cis).flatten(-2)
    return out.to(x.dtype)


def _resolve(
    x: object, positions: torch.Tensor | None, base: float | None, inv_freq: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Validate a functional call; return ``(x, angles)`` with float64 angles ``(seq, d/2)``."""
    x, seq, dim = check_rope_input(x)
    base = resolve_base(base, inv_freq)
    if inv_freq is None:
        inv_freq = rope_inv_freq(dim, base)
    else:
        inv_freq = check_inv_freq(inv_freq, dim)
    if positions is None:
        positions = torch.arange(seq, dtype=torch.float64)
    else:
        positions = check_positions(positions, seq)
    angles = check_angles(torch.outer(positions.cpu(), inv_freq.cpu())).to(x.device)
    return x, angles


def apply_rope_interleaved(
    x: torch.Tensor,
    positions: torch.Tensor | None = None,
    *,
    base: float | None = None,
    inv_freq: torch.Tensor | None = None,
) -> torch.Tensor:
    """Rotate pairs ``(2i, 2i+1)`` of ``x`` by ``m·θ_i`` (RoFormer's real form).

    ``out[2i] = x[2i]·cos mθ_i − x[2i+1]·sin mθ_i``,
    ``out[2i+1] = x[2i]·sin mθ_i + x[2i+1]·cos mθ_i``.

    Parameters
    ----------
    x : torch.Tensor
        Shape ``(..., seq, dim)``, floating point, ``dim`` even.
    positions : torch.Tensor, optional
        Shape ``(seq,)``; default ``arange(seq)``.
    base : float, optional
        ``θ_i = base^(-2i/dim)``; default 10000. Not together with ``inv_freq``.
    inv_freq : torch.Tensor, optional
        Shape ``(dim // 2,)``, instead of ``base`` (e.g. a scaled spectrum from ``scaling``);
        passing both raises ``ValueError``.

    Returns
    -------
    torch.Tensor
        Same shape and dtype as ``x``.
    """
    x, angles = _resolve(x, positions, base, inv_freq)
    work = compute_dtype(x.dtype)
    cos = angles.cos().repeat_interleave(2, dim=-1).to(work)
    sin = angles.sin().to(work)
    return _rotate_interleaved_layout(x.to(work), cos, sin).to(x.dtype)


def apply_rope_half(
    x: torch.Tensor,
    positions: torch.Tensor | None = None,
    *,
    base: float | None = None,
    inv_freq: torch.Tensor | None = None,
) -> torch.Tensor:
    """Rotate pairs ``(i, i + dim/2)`` of ``x`` by ``m·θ_i`` (Hugging Face / GPT-NeoX form).

    ``out = x·cos + rotate_half(x)·sin`` with ``cos = cat(cos mθ, cos mθ)`` (likewise ``sin``).

    Parameters
    ----------
    x : torch.Tensor
        Shape ``(..., seq, dim)``, floating point, ``dim`` even.
    positions : torch.Tensor, optional
        Shape ``(seq,)``; default ``arange(seq)``.
    base : float, optional
        ``θ_i = base^(-2i/dim)``; default 10000. Not together with ``inv_freq``.
    inv_freq : torch.Tensor, optional
        Shape ``(dim // 2,)``, instead of ``base``; passing both raises ``ValueError``.

    Returns
    -------
    torch.Tensor
        Same shape and dtype as ``x``.
    """
    x, angles = _resolve(x, positions, base, inv_freq)
    work = compute_dtype(x.dtype)
    cos = angles.cos().repeat(1, 2).to(work)
    sin = angles.sin().to(work)
    return _rotate_half_layout(x.to(work), cos, sin).to(x.dtype)


def apply_rope_complex(
    x: torch.Tensor,
    positions: torch.Tensor | None = None,
    *,
    base: float | None = None,
    inv_freq: torch.Tensor | None = None,
) -> torch.Tensor:
    """Meta LLaMA's form: ``x`` pairs ``(2i, 2i+1)`` as complex numbers times ``e^{i·m·θ_i}``.

    Same result as :func:`apply_rope_interleaved`. float16/bfloat16 inputs are upcast to float32
    (complex half is not generally supported) and cast back.

    Parameters
    ----------
    x : torch.Tensor
        Shape ``(..., seq, dim)``, floating point, ``dim`` even.
    positions : torch.Tensor, optional
        Shape ``(seq,)``; default ``arange(seq)``.
    base : float, optional
        ``θ_i = base^(-2i/dim)``; default 10000. Not together with ``inv_freq``.
    inv_freq : torch.Tensor, optional
        Shape ``(dim // 2,)``, instead of ``base``; passing both raises ``ValueError``.

    Returns
    -------
    torch.Tensor
        Same shape and dtype as ``x``.
    """
    x, angles = _resolve(x, positions, base, inv_freq)
    freqs_cis = torch.polar(torch.ones_like(angles), angles)  # complex128, (seq, dim // 2)
    if x.dtype != torch.float64:
        freqs_cis = freqs_cis.to(torch.complex64)
    return _rotate_complex(x, freqs_cis)


def partial_rotary_dim(head_dim: int, partial_rotary_factor: float) -> int:
    """The number of rotated features, ``int(head_dim · partial_rotary_factor)``, as transformers.

    GPT-NeoX's ``rotary_pct`` and transformers' ``partial_rotary_factor`` give the rotated share of
    each head; transformers truncates ``head_dim · factor`` to an integer.

    Parameters
    ----------
    head_dim : int
        Features per head (positive, even).
    partial_rotary_factor : float
        Share of the head that is rotated, in ``(0, 1]``.

    Returns
    -------
    int
        ``rotary_dim``, a positive even integer ``<= head_dim``.
    """
    head_dim = check_dim(head_dim, "head_dim")
    factor = check_positive(partial_rotary_factor, "partial_rotary_factor")
    if factor > 1.0:
        raise ValueError(
            f"partial_rotary_factor must be in (0, 1], got {partial_rotary_factor!r}"
        )
    rotary_dim = int(head_dim * factor)
    if rotary_dim == 0 or rotary_dim % 2 != 0:
        raise ValueError(
            f"int(head_dim * partial_rotary_factor) = int({head_dim} * {factor}) = {rotary_dim} "
            "must be a positive even integer"
        )
    return rotary_dim


def apply_rope_partial(
    x: torch.Tensor,
    rotary_dim: int,
    positions: torch.Tensor | None = None,
    *,
    convention: str = "half",
    base: float = 10000.0,
) -> torch.Tensor:
    """Partial RoPE: rotate the first ``rotary_dim`` features of ``x``, keep the rest unchanged.

    The rotated block is RoPE of dimension ``rotary_dim`` (``θ_i = base^(-2i/rotary_dim)``, pairs
    chosen by ``convention`` *within* the block); features ``rotary_dim …`` pass through, so they
    carry no position at all. GPT-NeoX rotates ``rotary_pct = 0.25`` of each head with the half
    convention; GPT-J rotates ``rotary_dim = 64`` of 256 features with the interleaved one.
    ``rotary_dim == dim`` is plain RoPE.

    Parameters
    ----------
    x : torch.Tensor
        Shape ``(..., seq, dim)``, floating point.
    rotary_dim : int
        Number of rotated features (positive, even, ``<= dim``); see :func:`partial_rotary_dim`.
    positions : torch.Tensor, optional
        Shape ``(seq,)``; default ``arange(seq)``.
    convention : {"half", "interleaved", "complex"}
        Pairing inside the rotated block (``"half"``: ``(i, i + rotary_dim/2)``).
    base : float
        The base ``b``.

    Returns
    -------
    torch.Tensor
        Same shape and dtype as ``x``.
    """
    x = check_float_tensor(x, "x", min_ndim=2)
    dim = x.shape[-1]
    rotary_dim = check_dim(rotary_dim, "rotary_dim")
    if rotary_dim > dim:
        raise ValueError(
            f"rotary_dim must be <= x.shape[-1] = {dim}, got {rotary_dim}"
        )
    convention = check_choice(convention, "convention", CONVENTIONS)
    apply = {
        "half": apply_rope_half,
        "interleaved": apply_rope_interleaved,
        "complex": apply_rope_complex,
    }[convention]
    rotated = apply(x[..., :rotary_dim], positions, base=base)
    return torch.cat((rotated, x[..., rotary_dim:]), dim=-1)


def rope_rotation_matrix(
    position: float,
    dim: int,
    base: float | None = None,
    *,
    inv_freq: torch.Tensor | None = None,
) -> torch.Tensor:
    """The block-diagonal rotation ``R_m`` (interleaved layout) with ``RoPE(x, m) = R_m x``.

    Block ``i`` (rows and columns ``2i, 2i+1``) is
    ``[[cos mθ_i, −sin mθ_i], [sin mθ_i, cos mθ_i]]``.
    ``R_m`` is orthogonal and ``R_mᵀ R_n = R_{n−m}``, which is why ``⟨R_m q, R_n k⟩`` depends
    on ``n − m`` only.

    Parameters
    ----------
    position : float
        The position ``m`` (any finite real).
    dim : int
        Dimension ``d`` (positive, even).
    base : float, optional
        ``θ_i = base^(-2i/dim)``; default 10000. Not together with ``inv_freq``.
    inv_freq : torch.Tensor, optional
        Shape ``(dim // 2,)``, instead of ``base``; passing both raises ``ValueError``.

    Returns
    -------
    torch.Tensor
        Shape ``(dim, dim)``, float64.
    """
    position = check_real(position, "position")
    dim = check_dim(dim)
    check_size(("dim", dim), ("dim", dim), what="the (dim, dim) matrix")
    base = resolve_base(base, inv_freq)
    theta = rope_inv_freq(dim, base) if inv_freq is None else check_inv_freq(inv_freq, dim)
    angle = check_angles(position * theta.cpu(), "position × inv_freq")
    cos, sin = angle.cos(), angle.sin()
    matrix = torch.zeros(dim, dim, dtype=torch.float64)
    even = torch.arange(0, dim, 2)
    matrix[even, even] = cos
    matrix[even, even + 1] = -sin
    matrix[even + 1, even] = sin
    matrix[even + 1, even + 1] = cos
    return matrix


def interleaved_to_half_permutation(dim: int) -> torch.Tensor:
    """The feature permutation that turns the interleaved convention into the half one.

    ``perm = [0, 2, …, d−2, 1, 3, …, d−1]`` satisfies
    ``apply_rope_interleaved(x)[..., perm] == apply_rope_half(x[..., perm])``: applying ``perm``
    to the rows of ``W_q`` and ``W_k`` converts a Meta checkpoint to Hugging Face's layout.

    Parameters
    ----------
    dim : int
        Dimension ``d`` (positive, even).

    Returns
    -------
    torch.Tensor
        Shape ``(dim,)``, int64.
    """
    dim = check_dim(dim)  # at most MAX_ELEMENTS
    return torch.cat((torch.arange(0, dim, 2), torch.arange(1, dim, 2)))


class RotaryEmbedding(nn.Module):
    """RoPE as a layer: ``forward(q, k, positions=None) -> (q_rot, k_rot)``.

    For the default positions ``arange(seq)`` the cos/sin tables are built once per
    ``(seq, device, dtype)``, directly in the input's dtype, and reused; the rotation then costs one
    multiply and two fused multiply-adds per element, without ``rotate_half``'s ``torch.cat``.

    Parameters
    ----------
    dim : int
        Rotary dimension ``d`` (positive, even); the last dimension of ``q`` and ``k``.
    base : float, optional
        The base ``b``; default 10000. Not together with ``inv_freq`` (``ValueError``).
    inv_freq : torch.Tensor, optional
        Shape ``(dim // 2,)``: a custom spectrum, e.g. from
        :func:`posenc_lib.scaling.yarn_inv_freq`.
    convention : {"half", "interleaved", "complex"}
        Which features form a pair (see the module docstring).
    attention_scaling : float
        Multiplies cos and sin (YaRN's attention factor); 1 for plain RoPE.

    Notes
    -----
    ``inv_freq`` is a ``(dim // 2,)`` float64 buffer; assigning it validates the new spectrum and
    stores it as float64, and assigning ``attention_scaling`` validates it (finite, > 0).
    ``table_builds`` counts how many times tables were built (a cached forward pass does not add
    to it). The cache can never go stale or be corrupted:

    * casting the module (``.half()``, ``.to(torch.bfloat16)``, ``.float()``) moves ``inv_freq``
      to the new device but keeps it float64, and drops the tables; new tables are rounded once
      from float64 angles, so a cast module is as exact as a fresh one;
    * the cache is keyed on the *values* of ``inv_freq`` and on ``attention_scaling`` (and
      ``convention``): assigning either, or modifying ``inv_freq`` in place, rebuilds the tables
      at the next call (checking costs one comparison of ``dim // 2`` numbers);
    * :meth:`cos_sin` returns copies, so a caller who edits them changes nothing here;
    * when ``inv_freq`` requires grad (a learned spectrum) and autograd is on, tables are built
      afresh on every call, so each forward pass has its own graph and backward works every time.

    Explicit ``positions`` are not cached (they may change every call). Half-precision tables are
    rounded once from float64, so the cached path is as accurate as the functional one up to the
    rounding of the arithmetic itself.
    """

    inv_freq: torch.Tensor
    _MAX_CACHE = 8

    def __init__(
        self,
        dim: int,
        base: float | None = None,
        *,
        inv_freq: torch.Tensor | None = None,
        convention: str = "half",
        attention_scaling: float = 1.0,
    ) -> None:
        super().__init__()
        self.dim = check_dim(dim)
        self.base = resolve_base(base, inv_freq)
        self.convention = check_choice(convention, "convention", CONVENTIONS)
        self.attention_scaling = attention_scaling  # validated by __setattr__
        freqs = rope_inv_freq(self.dim, self.base) if inv_freq is None else check_inv_freq(
            inv_freq, self.dim
        )
        self.register_buffer("inv_freq", freqs.clone(), persistent=False)
        self.table_builds = 0
        self._cache: dict[tuple[int, torch.device, torch.dtype], tuple[torch.Tensor, ...]] = {}
        self._cache_key: tuple[torch.Tensor, float, str] | None = None

    def __setattr__(self, name: str, value: object) -> None:
        if name == "inv_freq" and "inv_freq" in self.__dict__.get("_buffers", {}):
            value = check_inv_freq(value, self.dim)  # float64, on the value's device
        elif name == "attention_scaling":
            value = check_positive(value, "attention_scaling")
        super().__setattr__(name, value)  # type: ignore[arg-type]  # validated above
        if name in ("inv_freq", "attention_scaling", "convention") and "_cache" in self.__dict__:
            self._cache = {}

    def extra_repr(self) -> str:
        return f"dim={self.dim}, base={self.base}, convention={self.convention!r}"

    def _tables(
        self, positions: torch.Tensor, device: torch.device, dtype: torch.dtype
    ) -> tuple[torch.Tensor, ...]:
        self.table_builds += 1
        inv_freq = self.inv_freq.to(torch.float64)
        angles = check_angles(torch.outer(positions.to(inv_freq.device), inv_freq).cpu())
        if self.convention == "complex":
            freqs = torch.polar(torch.full_like(angles, self.attention_scaling), angles)
            work = torch.complex128 if dtype == torch.float64 else torch.complex64
            return (freqs.to(device=device, dtype=work),)
        cos = angles.cos() * self.attention_scaling
        sin = angles.sin() * self.attention_scaling
        cos = cos.repeat(1, 2) if self.convention == "half" else cos.repeat_interleave(2, dim=-1)
        return cos.to(device=device, dtype=dtype), sin.to(device=device, dtype=dtype)

    def _cached_tables(
        self, seq_len: int, device: torch.device, dtype: torch.dtype
    ) -> tuple[torch.Tensor, ...]:
        """The tables for ``arange(seq_len)``, from the cache when it is still valid."""
        positions = torch.arange(seq_len, dtype=torch.float64)
        if self.inv_freq.requires_grad and torch.is_grad_enabled():
            return self._tables(positions, device, dtype)  # a fresh graph for every call
        key = self._cache_key
        fresh = (
            key is not None
            and key[1] == self.attention_scaling
            and key[2] == self.convention
            and key[0].device == self.inv_freq.device
            and torch.equal(key[0], self.inv_freq)
        )
        if not fresh:
            self._cache = {}
            self._cache_key = (
                self.inv_freq.detach().clone(), self.attention_scaling, self.convention
            )
        cache_key = (seq_len, device, dtype)
        tables = self._cache.get(cache_key)
        if tables is None:
            if len(self._cache) >= self._MAX_CACHE:
                self._cache.clear()
            tables = self._tables(positions, device, dtype)
            self._cache[cache_key] = tables
        return tables

    def cos_sin(
        self, seq_len: int, device: torch.device | str = "cpu", dtype: torch.dtype = torch.float32
    ) -> tuple[torch.Tensor, ...]:
        """The tables for positions ``0 … seq_len-1``, as the cached forward pass uses them.

        Parameters
        ----------
        seq_len : int
            Number of positions (>= 0).
        device : torch.device or str
            Device of the tables.
        dtype : torch.dtype
            Floating dtype the real conventions' tables are built in (``"complex"`` gives
            complex128 for float64 and complex64 otherwise).

        Returns
        -------
        tuple of torch.Tensor
            ``(cos (seq, d), sin (seq, d/2))`` for the real conventions and
            ``(freqs_cis (seq, d/2) complex,)`` for ``"complex"``. They are copies: modifying them
            does not touch the cache.
        """
        seq_len = check_length(seq_len, "seq_len")
        check_size(("seq_len", seq_len), ("dim", self.dim), what="the (seq_len, dim) tables")
        checked = check_device(device)
        dtype = check_dtype(dtype)
        where = self.inv_freq.device if checked is None else checked
        return tuple(t.clone() for t in self._cached_tables(seq_len, where, dtype))

    def _apply(self, fn, recurse=True):  # type: ignore[no-untyped-def]  # nn.Module's signature
        # .half()/.to(dtype) would round the spectrum: move it to the new device, keep float64,
        # and drop the tables built for the old device or dtype.
        freqs = self.inv_freq
        module = super()._apply(fn, recurse)
        self._buffers["inv_freq"] = freqs.to(device=self._buffers["inv_freq"].device)
        self._cache = {}
        return module

    def _rotate(self, x: torch.Tensor, tables: tuple[torch.Tensor, ...]) -> torch.Tensor:
        if self.convention == "half":
            return _rotate_half_layout(x, tables[0], tables[1])
        if self.convention == "interleaved":
            return _rotate_interleaved_layout(x, tables[0], tables[1])
        return _rotate_complex(x, tables[0])

    def forward(
        self, q: torch.Tensor, k: torch.Tensor, positions: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Rotate queries and keys.

        Parameters
        ----------
        q, k : torch.Tensor
            Shape ``(..., seq, dim)`` each, same ``seq``, ``dim`` and dtype (leading dimensions may
            differ, e.g. fewer key heads).
        positions : torch.Tensor, optional
            Shape ``(seq,)``; default ``arange(seq)`` (the cached path).

        Returns
        -------
        tuple of torch.Tensor
            ``(q_rot, k_rot)`` with the shapes and dtype of ``q`` and ``k``.
        """
        q, seq, dim = check_rope_input(q, "q")
        k, k_seq, k_dim = check_rope_input(k, "k")
        if dim != self.dim or k_dim != self.dim:
            raise ValueError(
                f"q and k must have last dimension dim = {self.dim}, got {dim} and {k_dim}"
            )
        if k_seq != seq:
            raise ValueError(f"q and k must have the same seq length, got {seq} and {k_seq}")
        if q.dtype != k.dtype:
            raise TypeError(f"q and k must have the same dtype, got {q.dtype} and {k.dtype}")
        work = compute_dtype(q.dtype) if self.convention == "complex" else q.dtype
        if positions is None:
            tables = self._cached_tables(seq, q.device, work)
        else:
            tables = self._tables(check_positions(positions, seq), q.device, work)
        return self._rotate(q, tables), self._rotate(k, tables)
