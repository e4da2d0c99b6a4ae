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
working dtype. The functions (:func:`apply_rope_half`, :func:`apply_rope_interleaved`,
:func:`apply_rope_complex`) rotate half-precision inputs in float32 and cast back, rounding once;
so does :class:`RotaryEmbedding` in every convention with its default
``compute_dtype=torch.float32``. With ``compute_dtype=None`` its ``"half"`` and ``"interleaved"``
conventions keep cos/sin in the input's dtype and compute in it (as Hugging Face's
``apply_rotary_pos_emb`` does), so bfloat16 inputs are rounded at every step. Every path keeps
the input's dtype.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ._validation import (
    MAX_ELEMENTS,
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
_INDEX_DTYPES = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)
_HALF_DTYPES = (torch.float16, torch.bfloat16)


def _reject_half_positions(positions: torch.Tensor, name: str = "positions") -> None:
    """Refuse float16/bfloat16 positions by dtype (no value is read).

    float16 holds integers exactly only up to 2048 (3001 is stored as 3000) and bfloat16 only up
    to 256, so such positions would be silently rounded.
    """
    if positions.dtype in _HALF_DTYPES:
        raise TypeError(
            f"{name} must be an integer tensor or float32/float64, got dtype {positions.dtype}: "
            "half-precision positions are rounded (float16 holds integers exactly only up to "
            "2048, bfloat16 up to 256)"
        )


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
    return _inv_freq_on(check_dim(dim), check_base(base), None)


def _inv_freq_on(dim: int, base: float, device: torch.device | None) -> torch.Tensor:
    """:func:`rope_inv_freq` built directly on ``device`` (validated ``dim`` and ``base``).

    Every value is made on ``device`` (``None``: torch's default device) from Python numbers, so
    nothing is copied from the host: on an accelerator it launches kernels and waits for none.
    """
    exponents = torch.arange(0, dim, 2, dtype=torch.float64, device=device) / dim
    return torch.pow(base, -exponents)


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
        ("len(positions)", positions.shape[0]),
        ("len(inv_freq)", inv_freq.shape[0]),
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
        ("len(positions)", angles.shape[0]),
        ("dim", 2 * angles.shape[1]),
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


def _finite_on_host(values: torch.Tensor, message: str) -> None:
    """Raise ``ValueError(message)`` if a **CPU** tensor has a NaN or infinite entry.

    The values are read through NumPy, which dispatches no operator: on the CPU this is a memory
    read, not a synchronisation. Tensors on an accelerator are not read (that would stall the
    launch queue); there a non-finite value gives NaN in the output instead of an error.
    """
    if values.device.type == "cpu" and values.numel() > 0:
        if not np.isfinite(values.detach().numpy()).all():
            raise ValueError(message)


def _positions_tensor(positions: object, seq: int, name: str = "positions") -> torch.Tensor:
    """1-D positions of length ``seq`` as float64, checked without a host synchronisation.

    Shape and dtype are checked everywhere; finiteness only on the CPU (see
    :func:`_finite_on_host`). Lists and ranges go through :func:`check_positions`.
    """
    if not isinstance(positions, torch.Tensor):
        return check_positions(positions, seq, name)
    if positions.dtype.is_complex or positions.dtype == torch.bool:
        raise TypeError(f"{name} must hold integers or real floats, got dtype {positions.dtype}")
    _reject_half_positions(positions, name)
    if positions.ndim != 1:
        raise ValueError(
            f"{name} must be 1-D with shape (seq,), got shape {tuple(positions.shape)}"
        )
    if positions.shape[0] != seq:
        raise ValueError(
            f"{name} must have length seq = {seq} (x.shape[-2]), got length {positions.shape[0]}"
        )
    positions = positions.to(torch.float64)
    _finite_on_host(positions, f"{name} must be finite, got a NaN or infinite entry")
    return positions


def _spectrum(inv_freq: object, dim: int) -> torch.Tensor:
    """:func:`check_inv_freq` without a host synchronisation (values checked on the CPU only)."""
    if not isinstance(inv_freq, torch.Tensor):
        return check_inv_freq(inv_freq, dim)  # raises its TypeError
    if (
        inv_freq.dtype.is_complex
        or inv_freq.dtype == torch.bool
        or inv_freq.ndim != 1
        or (inv_freq.shape[0] != dim // 2)
    ):
        check_inv_freq(inv_freq.detach().cpu(), dim)  # bad input only: raise its clear error
    inv_freq = inv_freq.to(torch.float64)
    _finite_on_host(inv_freq, "inv_freq must be finite, got a NaN or infinite entry")
    return inv_freq


_OVERFLOW = (
    "the angles positions × inv_freq overflow float64 (|angle| > 1.8e+308): use smaller "
    "positions or frequencies (an angle that large has lost every digit of its phase anyway)"
)


def _resolve(
    x: object, positions: torch.Tensor | None, base: float | None, inv_freq: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Validate a functional call; return ``(x, angles)`` with float64 angles ``(seq, d/2)``.

    Shapes and dtypes are checked always, values (finite positions, a finite spectrum, angles
    that do not overflow) only for CPU tensors, so no device value is read back. The default
    spectrum and positions are built on ``x``'s device (on a device without float64, MPS, on the
    CPU). The only copies between host and device are those of arguments the caller left
    elsewhere (``positions`` or ``inv_freq`` on the CPU with ``x`` on an accelerator: one blocking
    copy each, at every call) and, on MPS, the float64 work: positions on the device go to the
    CPU and the angles come back, at every call.
    """
    x, seq, dim = check_rope_input(x)
    base = resolve_base(base, inv_freq)
    where = _float64_home(x.device)
    if inv_freq is None:
        inv_freq = _inv_freq_on(dim, base, where)
    else:
        inv_freq = _spectrum(inv_freq, dim)
    if positions is None:
        positions = torch.arange(seq, dtype=torch.float64, device=where)
    else:
        positions = _positions_tensor(positions, seq)
    angles = _angles_on(positions, inv_freq, x.device)
    _finite_on_host(angles, _OVERFLOW)
    return x, angles


# Device types without float64 (Apple's MPS): float64 work for them runs on the CPU.
_NO_FLOAT64 = frozenset({"mps"})


def _float64_home(device: torch.device) -> torch.device:
    """Where float64 work for ``device`` runs: ``device``, or the CPU if it has no float64."""
    return torch.device("cpu") if device.type in _NO_FLOAT64 else device


def _angles_on(
    positions: torch.Tensor, inv_freq: torch.Tensor, device: torch.device
) -> torch.Tensor:
    """Angles ``positions ⊗ inv_freq``, shape ``(n, d/2)``, computed in float64 for ``device``.

    Computed on ``device`` (no host round-trip) and returned in float64, except on a device
    without float64 (MPS): there they are computed on the CPU in float64 and copied once, as
    float32 (the only place a float64 value would otherwise land on such a device).
    """
    where = _float64_home(device)
    angles = torch.outer(
        positions.to(device=where, dtype=torch.float64),
        inv_freq.to(device=where, dtype=torch.float64),
    )
    return angles if where == device else angles.to(device=device, dtype=torch.float32)


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
        raise ValueError(f"partial_rotary_factor must be in (0, 1], got {partial_rotary_factor!r}")
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
    base: float | None = None,
    inv_freq: torch.Tensor | None = None,
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
    base : float, optional
        The base ``b`` (default 10 000); not together with ``inv_freq``.
    inv_freq : torch.Tensor, optional
        Shape ``(rotary_dim // 2,)``: a scaled spectrum for the rotated block (position
        interpolation, NTK, YaRN, … computed for dimension ``rotary_dim``); overrides ``base``.

    Returns
    -------
    torch.Tensor
        Same shape and dtype as ``x``.
    """
    x = check_float_tensor(x, "x", min_ndim=2)
    dim = x.shape[-1]
    rotary_dim = check_dim(rotary_dim, "rotary_dim")
    if rotary_dim > dim:
        raise ValueError(f"rotary_dim must be <= x.shape[-1] = {dim}, got {rotary_dim}")
    convention = check_choice(convention, "convention", CONVENTIONS)
    apply = {
        "half": apply_rope_half,
        "interleaved": apply_rope_interleaved,
        "complex": apply_rope_complex,
    }[convention]
    if inv_freq is not None:
        if (
            isinstance(inv_freq, torch.Tensor)
            and inv_freq.ndim == 1
            and (inv_freq.shape[0] != rotary_dim // 2)
        ):
            raise ValueError(
                f"inv_freq must have length rotary_dim // 2 = {rotary_dim // 2}, "
                f"got length {inv_freq.shape[0]}"
            )
        inv_freq = _spectrum(inv_freq, rotary_dim)
    rotated = apply(x[..., :rotary_dim], positions, base=base, inv_freq=inv_freq)
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


def _check_compute_dtype(value: object) -> torch.dtype | None:
    if value is None:
        return None
    if not isinstance(value, torch.dtype):
        raise TypeError(
            f"compute_dtype must be None, torch.float32 or torch.float64, got {value!r}"
        )
    if value not in (torch.float32, torch.float64):
        raise ValueError(f"compute_dtype must be None, torch.float32 or torch.float64, got {value}")
    return value


class RotaryEmbedding(nn.Module):
    """RoPE as a layer: ``forward(q, k, positions=None, *, offset=0) -> (q_rot, k_rot)``.

    The layer keeps **one table per (device, dtype)** of cos/sin values for positions
    ``0 … capacity-1``, on the device of the inputs, rounded once from float64 angles. A model
    builds **one** ``RotaryEmbedding`` and hands the same object to every attention layer (as
    Hugging Face's models keep one rotary module per model): the layers then share one table.

    Every forward path runs without a host synchronisation (no device value is read back to
    Python, and nothing is copied between the host and the device;
    ``tests/test_rope_serving.py`` counts them with :mod:`posenc_lib.host_sync` and runs every
    path on the ``meta`` device, which has no values to read) **provided** the tensors it is given
    are already on ``q``'s device: the module (``.to(device)``), ``positions`` and a tensor
    ``offset``. CPU position ids with a GPU ``q`` cost one blocking host-to-device copy per call
    (PyTorch's copy waits in both directions), and a module left on the CPU one per table build;
    copy them beforehand, or with ``non_blocking=True`` from pinned memory. List positions are
    read and copied (a host read and a copy per call).

    * ``offset`` (a Python int, Meta's ``start_pos``): slices rows ``offset … offset+seq-1``. The
      needed length is known on the host, so the table grows when a call needs more rows, to
      ``min(max(next_pow2(needed), 2·capacity, 16, reserved), max_rows)`` with
      ``max_rows = MAX_ELEMENTS // dim`` (``2**27 // dim``: 1 048 576 rows at ``dim = 128``):
      decoding ``N > 16`` tokens one at a time from an empty module builds it
      ``1 + ⌈log2(N / 16)⌉`` times (9 for ``N = 4096``), and a prefill of ``L`` tokens leaves
      ``next_pow2(L)`` rows. One call at a large offset builds every row up to it (time and
      memory linear in the offset): reserve the context length at start-up. Rows beyond
      ``max_rows`` are computed directly for that call, never refused. ``offset`` may also be a
      0-d integer tensor (a position counter kept on the device): it is then
      ``positions = offset + arange(seq)``, below.
    * integer ``positions`` of shape ``(seq,)`` or ``(batch, seq)`` (left padding, packed
      sequences; Hugging Face's ``position_ids``): after :meth:`reserve` (or ``max_positions=``),
      they gather their rows from the table with ``index_select``. Before, positions held on the
      CPU grow the table as ``offset`` does, to cover their largest value (read through NumPy:
      a memory read, no synchronisation), and gather from it; positions on an accelerator (or
      ``meta``) have their rows computed directly at every call, as Hugging Face does (here in
      float64, Hugging Face in float32), because finding their largest value would read the
      device: reserve there. Integer positions on the CPU are checked against the table on the
      host (their largest value, a memory read) before a gather on another device.
    * floating-point ``positions`` (e.g. interpolated ``m / s``): always computed directly.

    Negative integer positions are refused (``ValueError``) whether or not a table is reserved
    (checked on the CPU only, like the other value checks below); float positions may be
    negative.

    Each direct computation counts as one build in ``table_builds``.

    **Validated on construction and in** :meth:`reserve`: ``dim``, ``base``/``inv_freq``
    (finite), ``convention``, ``attention_scaling``, the reserved length against the size
    limit. **Checked on every call** (host metadata only): shapes, dtypes, ``offset`` as a
    non-negative Python int. **Not checked per call on an accelerator**, because checking would
    read device values: that integer positions lie in ``[0, reserved)`` (an index outside the
    table raises a device-side assert in ``index_select`` on CUDA), that float positions are
    finite, and that their angles do not overflow (NaN comes out instead). On the CPU, where
    reading costs no synchronisation, these are checked through NumPy and raise ``ValueError``.

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
    max_positions : int
        Positions ``0 … max_positions-1`` that explicit integer positions may index (as
        :meth:`reserve`); 0 (default) reserves nothing: integer positions on the CPU then grow
        the table as needed, positions on another device are computed directly. At most
        ``MAX_ELEMENTS // dim``.
    compute_dtype : torch.dtype or None
        The least precise dtype the rotation is computed in. ``torch.float32`` (default) or
        ``torch.float64``: inputs of a less precise dtype (bfloat16, float16) are upcast,
        rotated with tables of this dtype and rounded **once** to their own dtype at the end,
        as the ``apply_rope_*`` functions and Meta's complex code do; more precise inputs keep
        their dtype. ``None``: the real conventions compute in the inputs' dtype with tables
        rounded to it (bfloat16 inputs: bfloat16 tables and bfloat16 products, as transformers'
        Llama does; about a third of the outputs then differ from the once-rounded rotation);
        ``"complex"`` still computes half inputs in float32.

    Notes
    -----
    ``inv_freq`` is a ``(dim // 2,)`` float64 buffer; assigning it validates the new spectrum and
    stores it as float64, and assigning ``attention_scaling`` validates it (finite, > 0).
    ``table_builds`` counts how many times rows were computed (a slice or gather does not add to
    it). The tables do not go stale:

    * casting the module (``.half()``, ``.to(torch.bfloat16)``, ``.float()``) moves ``inv_freq``
      to the new device but keeps it float64, and drops the tables. (Hugging Face's rotary
      modules keep ``inv_freq`` as an ordinary buffer, which such a cast rounds to bfloat16:
      :ref:`ch-rope-code` measures what that does.) New tables are rounded once from float64
      angles, so a cast module is as exact as a fresh one;
    * assigning ``inv_freq``, ``attention_scaling`` or ``convention`` drops the tables, and so
      does an in-place edit of ``inv_freq`` (its version counter changes). An edit through
      ``.data`` bypasses the version counter: call :meth:`reset_tables` after one (comparing
      values on every call would read device values);
    * :meth:`cos_sin` returns copies, so a caller who edits them changes nothing here;
    * when ``inv_freq`` requires grad (a learned spectrum) and autograd is on, the rows needed are
      computed afresh on every call, so each forward pass has its own graph. ``inv_freq`` is a
      non-persistent buffer even then: it is in neither ``parameters()`` nor ``state_dict()``,
      so hand it to the optimiser and save it yourself;
    * built under ``with torch.device("meta")`` and materialised with ``to_empty(device=...)``,
      ``inv_freq`` is recomputed (from ``base``, or from the CPU copy of a custom spectrum).

    ``(batch, seq)`` positions with ``q`` or ``k`` of batch 1 broadcast: the outputs then have
    batch ``batch``, not 1. ``q`` and ``k`` may differ in rank (each gets rows with as many head
    dimensions as it has). Float16/bfloat16 positions are refused (``TypeError``): they hold
    integers exactly only up to 2048 and 256.
    """

    inv_freq: torch.Tensor
    _MIN_CAPACITY = 16

    def __init__(
        self,
        dim: int,
        base: float | None = None,
        *,
        inv_freq: torch.Tensor | None = None,
        convention: str = "half",
        attention_scaling: float = 1.0,
        max_positions: int = 0,
        compute_dtype: torch.dtype | None = torch.float32,
    ) -> None:
        super().__init__()
        self.dim = check_dim(dim)
        self.compute_dtype = compute_dtype  # validated by __setattr__
        self.base = resolve_base(base, inv_freq)
        self.convention = check_choice(convention, "convention", CONVENTIONS)
        self.attention_scaling = attention_scaling  # validated by __setattr__
        freqs = (
            rope_inv_freq(self.dim, self.base)
            if inv_freq is None
            else check_inv_freq(inv_freq, self.dim)
        )
        self.register_buffer("inv_freq", freqs.clone(), persistent=False)
        # The device the module lives on. inv_freq stays float64 on it, except on a device
        # without float64 (MPS), where inv_freq stays on the CPU and only tables move.
        self._device = freqs.device
        # What to rebuild inv_freq from when it has no values (built on the meta device and then
        # materialised with to_empty): None = base^(-2i/dim); otherwise a CPU copy of the spectrum.
        self._freqs_source: torch.Tensor | None = (
            None if inv_freq is None else self._cpu_source(self.inv_freq)
        )
        self.table_builds = 0
        # (device, dtype) -> tables for positions 0 … capacity-1 (capacity = first dim)
        self._tables: dict[tuple[torch.device, torch.dtype], tuple[torch.Tensor, ...]] = {}
        self._spectrum_seen: tuple[int, int] | None = None
        self.reserved = 0
        max_positions = check_length(max_positions, "max_positions")
        if max_positions:
            self._reserve_rows(max_positions, "max_positions")

    @staticmethod
    def _cpu_source(freqs: torch.Tensor) -> torch.Tensor | None:
        """A CPU copy of a spectrum, or an empty tensor when its values are not on the host."""
        if freqs.device.type == "cpu":
            return freqs.detach().clone()
        return torch.empty(0, dtype=torch.float64)  # unknown: not copied back (no sync)

    @property
    def max_rows(self) -> int:
        """The longest table the size limit allows: ``MAX_ELEMENTS // dim`` rows."""
        return MAX_ELEMENTS // self.dim

    def __setattr__(self, name: str, value: object) -> None:
        if name == "inv_freq" and "inv_freq" in self.__dict__.get("_buffers", {}):
            value = check_inv_freq(value, self.dim)  # float64, on the value's device
            self.__dict__["_freqs_source"] = self._cpu_source(value)
            if _float64_home(self.__dict__["_device"]) != value.device:
                self.__dict__["_device"] = value.device  # the module follows its spectrum
        elif name == "attention_scaling":
            value = check_positive(value, "attention_scaling")
        elif name == "compute_dtype":
            value = _check_compute_dtype(value)
        elif name == "convention" and "convention" in self.__dict__:
            value = check_choice(value, "convention", CONVENTIONS)
        super().__setattr__(name, value)  # type: ignore[arg-type]  # validated above
        if name in ("inv_freq", "attention_scaling", "convention") and "_tables" in self.__dict__:
            self.reset_tables()

    def extra_repr(self) -> str:
        cdt = self.compute_dtype
        extra = "" if cdt == torch.float32 else f", compute_dtype={cdt}"
        return (
            f"dim={self.dim}, base={self.base}, convention={self.convention!r}, "
            f"reserved={self.reserved}{extra}"
        )

    def reset_tables(self) -> None:
        """Drop every table; the next call builds afresh (the reserved length is kept)."""
        self._tables = {}
        self._spectrum_seen = None

    def capacity(
        self, device: torch.device | str = "cpu", dtype: torch.dtype = torch.float32
    ) -> int:
        """Number of positions the table for ``(device, dtype)`` holds now (0 if none).

        Parameters
        ----------
        device : torch.device or str
            Device of the table.
        dtype : torch.dtype
            Dtype of the inputs the table serves.

        Returns
        -------
        int
            Its number of rows.
        """
        checked = check_device(device)
        dtype = check_dtype(dtype)
        where = self._device if checked is None else checked
        table = self._tables.get(self._key(where, self._work_dtype_for(dtype)))
        return 0 if table is None else table[0].shape[0]

    # --- building -------------------------------------------------------------------------------

    def _key(self, device: torch.device, dtype: torch.dtype) -> tuple[torch.device, torch.dtype]:
        if device.type not in ("cpu", "meta") and device.index is None:  # "cuda" is "cuda:0"
            device = torch.empty(0, device=device).device
        return device, self._work_dtype(dtype)

    def _work_dtype(self, dtype: torch.dtype) -> torch.dtype:
        if self.convention == "complex":
            return torch.complex128 if dtype == torch.float64 else torch.complex64
        return dtype

    def _build(
        self, positions: torch.Tensor, device: torch.device, dtype: torch.dtype
    ) -> tuple[torch.Tensor, ...]:
        """Rows for ``positions`` (any shape, any values), on ``device``, in the work type.

        Real conventions: ``(cos (..., d), sin (..., d/2))``; complex: ``(freqs_cis (..., d/2),)``.
        """
        self.table_builds += 1
        shape = positions.shape
        # On a device without float64 (MPS) the float64 work runs on the CPU and only the
        # rounded tables are copied to the device.
        where = _float64_home(device)
        angles = _angles_on(positions.reshape(-1), self.inv_freq, where)
        _finite_on_host(angles, _OVERFLOW)
        angles = angles.reshape(*shape, angles.shape[-1])
        if self.convention == "complex":
            freqs = torch.polar(torch.full_like(angles, self.attention_scaling), angles)
            return (freqs.to(device=device, dtype=self._work_dtype(dtype)),)
        cos = angles.cos() * self.attention_scaling
        sin = angles.sin() * self.attention_scaling
        cos = (
            torch.cat((cos, cos), -1)
            if self.convention == "half"
            else (cos.repeat_interleave(2, dim=-1))
        )
        return cos.to(device=device, dtype=dtype), sin.to(device=device, dtype=dtype)

    def _table(
        self, needed: int, device: torch.device, dtype: torch.dtype, *, round_up: bool = True
    ) -> tuple[torch.Tensor, ...]:
        """The table for ``(device, dtype)`` with at least ``needed`` rows (``<= max_rows``).

        A table grown on demand (``round_up``) gets ``needed`` rounded up to a power of two, so a
        prefill of ``L`` tokens leaves room for the decode steps after it; :meth:`reserve` builds
        exactly the length asked for.
        """
        freqs = self.inv_freq
        seen = (freqs._version, freqs.data_ptr())  # host metadata: no value is read
        if self._spectrum_seen != seen:
            self._tables = {}
            self._spectrum_seen = seen
        key = self._key(device, dtype)
        table = self._tables.get(key)
        have = 0 if table is None else table[0].shape[0]
        if table is None or have < needed:
            # Grow geometrically, never past what the size limit allows.
            wanted = 1 << (needed - 1).bit_length() if round_up and needed > 1 else needed
            capacity = min(max(wanted, 2 * have, self._MIN_CAPACITY, self.reserved), self.max_rows)
            positions = torch.arange(capacity, dtype=torch.float64, device=_float64_home(key[0]))
            table = self._build(positions, key[0], dtype)
            self._tables[key] = table
        return table

    def _reserve_rows(self, length: int, name: str) -> None:
        if length > self.max_rows:
            raise ValueError(
                f"{name} must be at most MAX_ELEMENTS // dim = {self.max_rows} (a ({name}, dim) "
                f"table of more than posenc_lib's size limit MAX_ELEMENTS = {MAX_ELEMENTS} "
                f"elements), got {name} = {length}"
            )
        self.reserved = max(self.reserved, length)

    def reserve(
        self,
        length: int,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        """Build the table for positions ``0 … length-1`` now, and let explicit positions index it.

        Meta precomputes twice its maximum sequence length; a server reserves its context
        length. After ``reserve(n)``, integer ``positions`` must lie in ``[0, c)``, where the
        capacity ``c >= n`` is the table's current length (the offset path may have grown it
        further; checked on the CPU, not on an accelerator). Reserving is cumulative: the
        largest length reserved so far holds for every device and dtype.

        Parameters
        ----------
        length : int
            Number of positions (>= 0, at most ``max_rows``).
        device : torch.device or str, optional
            Device of the table; default the module's own (where its ``inv_freq`` lives, so a
            module moved with ``.to(device)`` reserves there).
        dtype : torch.dtype
            Dtype of the inputs the table will serve.
        """
        length = check_length(length, "length")
        checked = check_device(device)
        dtype = check_dtype(dtype)
        self._reserve_rows(length, "length")
        where = self._device if checked is None else checked
        if length > 0 and not self._grad_path():
            self._table(length, where, self._work_dtype_for(dtype), round_up=False)

    def _grad_path(self) -> bool:
        return self.inv_freq.requires_grad and torch.is_grad_enabled()

    def _slice(
        self, offset: int, seq: int, device: torch.device, dtype: torch.dtype
    ) -> tuple[torch.Tensor, ...]:
        """Rows ``offset … offset+seq-1``: a slice of the table (host-known length)."""
        if self._grad_path() or offset + seq > self.max_rows:
            span = torch.arange(
                offset, offset + seq, dtype=torch.float64, device=_float64_home(device)
            )
            return self._build(span, device, dtype)
        table = self._table(offset + seq, device, dtype)
        return tuple(t[offset : offset + seq] for t in table)

    def _gather(
        self,
        positions: torch.Tensor,
        device: torch.device,
        dtype: torch.dtype,
        lead: tuple[int, ...] = (),
    ) -> tuple[torch.Tensor, ...]:
        """Rows for explicit positions ``(seq,)`` or ``(batch, seq)``, with no host synchronisation.

        ``(batch, seq)`` positions give rows ``(batch, *lead, seq, ·)`` (``lead`` ones stand for
        the head dimensions of ``q``).
        """
        needed = self.reserved
        host_max: int | None = None
        if (
            not positions.is_floating_point()
            and positions.device.type == "cpu"
            and positions.numel() > 0
            and (needed == 0 or device.type != "cpu")  # a CPU gather checks its own index
        ):
            # Integer positions on the host: their largest value is a memory read (no
            # synchronisation). Without a reserved table the table grows to cover it, as on the
            # offset path, instead of computing rows afresh at every call; with one, it is checked
            # against the table here before a gather on another device (a CUDA gather past the
            # end would raise a device-side assert instead of this ValueError).
            host_max = int(positions.detach().numpy().max())
            if needed == 0:
                needed = host_max + 1
                if needed > self.max_rows:
                    needed = 0  # beyond the size limit: computed directly, never refused
        positions = positions.to(device)
        if positions.is_floating_point() or needed == 0 or self._grad_path():
            # (On MPS, which has no float64, the positions go to the CPU: one blocking copy.)
            home = _float64_home(device)
            rows = self._build(positions.to(device=home, dtype=torch.float64), device, dtype)
            if positions.ndim == 1:
                return rows
            return tuple(t.unflatten(0, (t.shape[0], *lead)) for t in rows)
        table = self._table(needed, device, dtype)
        beyond = ValueError(
            f"integer positions must lie in [0, {table[0].shape[0]}) (the reserved table): "
            "reserve(length) a longer table, or pass float positions to compute their rows "
            "directly"
        )
        if host_max is not None and host_max >= table[0].shape[0]:
            raise beyond
        index = positions if positions.ndim == 1 else positions.reshape(-1)
        if index.dtype not in (torch.int64, torch.int32):
            index = index.to(torch.long)
        try:
            rows = tuple(t.index_select(0, index) for t in table)
        except IndexError:  # the CPU checks the index; CUDA raises a device-side assert instead
            raise beyond from None
        if positions.ndim == 1:
            return rows
        batch, seq = positions.shape  # (batch·seq, ·) -> (batch, *lead, seq, ·)
        return tuple(t.view(batch, *lead, seq, t.shape[-1]) for t in rows)

    def cos_sin(
        self,
        seq_len: int,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float32,
        *,
        offset: int = 0,
    ) -> tuple[torch.Tensor, ...]:
        """The tables for positions ``offset … offset+seq_len-1``, as the forward pass uses them.

        Like ``forward(..., offset=offset)``, this slices the table (grown on demand, on any
        device: the length needed is known on the host), so a decode loop that fetches its rows
        here builds a table on an accelerator too, where :meth:`cos_sin_at` with unreserved
        positions on the device computes them afresh at every call.

        Parameters
        ----------
        seq_len : int
            Number of positions (>= 0).
        device : torch.device or str, optional
            Device of the tables; default the module's own.
        dtype : torch.dtype
            Floating dtype the real conventions' tables are built in (``"complex"`` gives
            complex128 for float64 and complex64 otherwise).
        offset : int
            First position (>= 0), a Python int (Meta's ``start_pos``).

        Returns
        -------
        tuple of torch.Tensor
            ``(cos (seq, d), sin (seq, d))`` for the real conventions, laid out for the
            convention (``"half"``: ``cat(c, c)``; ``"interleaved"``: each value twice), and
            ``(freqs_cis (seq, d/2) complex,)`` for ``"complex"``. They are copies: modifying them
            does not touch the layer's table.
        """
        seq_len = check_length(seq_len, "seq_len")
        offset = check_length(offset, "offset")
        check_size(("seq_len", seq_len), ("dim", self.dim), what="the (seq_len, dim) tables")
        checked = check_device(device)
        dtype = check_dtype(dtype)
        where = self._device if checked is None else checked
        with torch.no_grad():
            rows = self._slice(offset, seq_len, where, self._work_dtype_for(dtype))
        return self._laid_out(rows)

    def cos_sin_at(
        self,
        positions: torch.Tensor,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float32,
    ) -> tuple[torch.Tensor, ...]:
        """The rows of :meth:`cos_sin` for explicit positions, gathered without a host read.

        What a Hugging Face-style rotary module returns from ``(x, position_ids)``: unlike
        ``cos_sin(int(position_ids.max()) + 1)[position_ids]``, it neither reads the largest id
        on the host nor copies the whole prefix at every decode step.

        Parameters
        ----------
        positions : torch.Tensor
            Shape ``(seq,)`` or ``(batch, seq)``: integers (>= 0) index the table as in
            :meth:`forward`; real floats are computed directly.
        device : torch.device or str, optional
            Device of the rows; default the module's own.
        dtype : torch.dtype
            Dtype of the inputs the rows will serve, as in :meth:`cos_sin`.

        Returns
        -------
        tuple of torch.Tensor
            As :meth:`cos_sin`, with the rows in ``positions``' shape: ``(…, d)`` cos and sin
            for the real conventions, ``(…, d/2)`` complex for ``"complex"``.
        """
        if not isinstance(positions, torch.Tensor):
            raise TypeError(f"positions must be a torch.Tensor, got {type(positions).__name__}")
        if positions.ndim not in (1, 2):
            raise ValueError(
                f"positions must have shape (seq,) or (batch, seq), got {tuple(positions.shape)}"
            )
        checked = check_device(device)
        dtype = check_dtype(dtype)
        seq = positions.shape[-1]
        probe = torch.empty(1, 1, seq, self.dim, device="meta")  # shape checks only
        positions = self._check_positions(positions, probe, probe, seq)
        where = self._device if checked is None else checked
        with torch.no_grad():
            rows = self._gather(positions, where, self._work_dtype_for(dtype))
        return self._laid_out(rows)

    def _laid_out(self, rows: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
        """Table rows ``(cos, sin_half)`` or ``(freqs_cis,)`` as copies in the public layout."""
        if self.convention == "complex":
            return (rows[0].clone(),)
        cos, sin_half = rows
        if self.convention == "half":
            sin = torch.cat((sin_half, sin_half), dim=-1)
        else:
            sin = sin_half.repeat_interleave(2, dim=-1)
        return cos.clone(), sin

    def _work_dtype_for(self, dtype: torch.dtype) -> torch.dtype:
        # The complex convention rotates half inputs in float32 (complex half is not supported).
        work = compute_dtype(dtype) if self.convention == "complex" else dtype
        least = self.compute_dtype
        if least is not None and work.itemsize < least.itemsize:
            return least  # upcast; the result is rounded once to the input dtype in _rotate
        return work

    def _apply(self, fn, recurse=True):  # type: ignore[no-untyped-def]  # nn.Module's signature
        # .half()/.to(dtype) would round the spectrum: move it to the new device, keep float64,
        # and drop the tables built for the old device or dtype. fn never sees inv_freq (on MPS,
        # which has no float64, moving it there would fail): a float32 probe tells the device.
        freqs = self._buffers.pop("inv_freq")
        try:
            module = super()._apply(fn, recurse)
        finally:
            self._buffers["inv_freq"] = freqs
        device = fn(torch.empty(0, device=freqs.device)).device
        if freqs.device.type == "meta" and device.type != "meta":
            # to_empty() out of the meta device: there are no values to move; rebuild them.
            freqs = self._rebuilt_freqs()
        self._device = device
        self._buffers["inv_freq"] = freqs.to(device=_float64_home(device))
        self.reset_tables()
        return module

    def _rebuilt_freqs(self) -> torch.Tensor:
        source = self._freqs_source
        if source is None:
            return rope_inv_freq(self.dim, self.base).to("cpu")
        if source.numel() == 0:
            raise ValueError(
                "inv_freq was set on a device other than the CPU and the module was then moved "
                "to the meta device: its values are lost; assign inv_freq again after to_empty()"
            )
        return source

    def _rotate(self, x: torch.Tensor, tables: tuple[torch.Tensor, ...]) -> torch.Tensor:
        if self.convention == "complex":
            return _rotate_complex(x, tables[0])
        rotate = _rotate_half_layout if self.convention == "half" else _rotate_interleaved_layout
        if tables[0].dtype == x.dtype:
            return rotate(x, tables[0], tables[1])
        # compute_dtype above the input's: rotate upcast, round once.
        return rotate(x.to(tables[0].dtype), tables[0], tables[1]).to(x.dtype)

    def _check_positions(
        self, positions: object, q: torch.Tensor, k: torch.Tensor, seq: int
    ) -> torch.Tensor:
        """Shape and dtype of explicit positions (host metadata only)."""
        if not isinstance(positions, torch.Tensor):
            return check_positions(positions, seq)  # a list or range: host data
        if positions.dtype.is_complex or positions.dtype == torch.bool:
            raise TypeError(
                f"positions must hold integers or real floats, got dtype {positions.dtype}"
            )
        _reject_half_positions(positions)
        if positions.ndim not in (1, 2) or positions.shape[-1] != seq:
            raise ValueError(
                f"positions must have shape (seq,) or (batch, seq) with seq = {seq} "
                f"(q.shape[-2]), got shape {tuple(positions.shape)}"
            )
        if positions.ndim == 2:
            batch = positions.shape[0]
            for name, x in (("q", q), ("k", k)):
                if x.ndim < 3 or x.shape[0] not in (1, batch):
                    raise ValueError(
                        f"positions of shape (batch, seq) = {tuple(positions.shape)} need {name} "
                        f"of shape (batch, ..., seq, dim) with batch = {batch}, "
                        f"got {name}.shape = {tuple(x.shape)}"
                    )
        if positions.is_floating_point():
            _finite_on_host(positions, "positions must be finite, got a NaN or infinite entry")
        elif positions.device.type == "cpu" and positions.numel() > 0:
            # One rule with or without a reserved table: integer positions index rows 0, 1, ...
            low = int(positions.detach().numpy().min())  # a memory read on the CPU, no sync
            if low < 0:
                upper = f"{self.reserved})" if self.reserved else "∞)"
                raise ValueError(
                    f"integer positions must lie in [0, {upper}, got {low}; pass float "
                    "positions to rotate by negative angles"
                )
        return positions

    def forward(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        positions: torch.Tensor | None = None,
        *,
        offset: int | torch.Tensor = 0,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Rotate queries and keys, without a host synchronisation.

        Parameters
        ----------
        q, k : torch.Tensor
            Shape ``(..., seq, dim)`` each, same ``seq``, ``dim`` and dtype (leading dimensions may
            differ, e.g. fewer key heads). With ``(batch, seq)`` positions:
            ``(batch, ..., seq, dim)``, e.g. ``(batch, heads, seq, dim)``.
        positions : torch.Tensor, optional
            Shape ``(seq,)`` or ``(batch, seq)`` (one row of positions per sequence: left padding,
            packed sequences); default ``arange(offset, offset + seq)``. Integer positions index
            the reserved table (see :meth:`reserve`), or without one, on the CPU, a table grown to
            cover them (elsewhere their rows are computed directly); float positions (float32 or
            float64) are computed directly. Put them on ``q``'s device beforehand: otherwise each
            call makes a blocking host-to-device copy.
        offset : int or torch.Tensor
            First position when ``positions`` is not given (>= 0): during generation, the number
            of tokens already in the key–value cache (Meta's ``start_pos``). A 0-d integer tensor
            is read as ``positions = offset + arange(seq)`` on its device (keep it on ``q``'s
            device; a CPU tensor is copied at every call).

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
        work = self._work_dtype_for(q.dtype)
        if isinstance(offset, torch.Tensor):
            if offset.ndim != 0 or offset.dtype not in _INDEX_DTYPES:
                raise TypeError(
                    "offset must be a non-negative Python int or a 0-d integer tensor, got a "
                    f"tensor of shape {tuple(offset.shape)} and dtype {offset.dtype}"
                )
            if positions is not None:
                raise ValueError("give either positions or offset, not both")
            positions = offset.to(torch.long) + torch.arange(seq, device=offset.device)
            offset = 0
        offset = check_length(offset, "offset")
        if positions is None:
            tables = self._slice(offset, seq, q.device, work)
        else:
            if offset != 0:
                raise ValueError("give either positions or offset, not both")
            positions = self._check_positions(positions, q, k, seq)
            tables = self._gather(positions, q.device, work)
            if positions.ndim == 2:
                # (batch, seq, ·) rows -> (batch, 1, …, 1, seq, ·), with as many ones as each
                # tensor has head dimensions: q and k may differ in rank (e.g. k without a head
                # dimension), and rows shaped for q's rank would broadcast k's batch wrongly.
                return self._rotate(q, self._with_heads(tables, q)), self._rotate(
                    k, self._with_heads(tables, k)
                )
        return self._rotate(q, tables), self._rotate(k, tables)

    @staticmethod
    def _with_heads(tables: tuple[torch.Tensor, ...], x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """``(batch, seq, ·)`` rows viewed as ``(batch, 1, …, 1, seq, ·)`` for ``x``'s rank."""
        ones = (1,) * (x.ndim - 3)
        return tuple(t.view(t.shape[0], *ones, *t.shape[1:]) for t in tables)
