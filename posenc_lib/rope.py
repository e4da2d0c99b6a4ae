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
    return x, check_angles(_angles_on(positions, inv_freq, x.device))


def _angles_on(
    positions: torch.Tensor, inv_freq: torch.Tensor, device: torch.device
) -> torch.Tensor:
    """float64 angles ``positions ⊗ inv_freq`` computed on ``device`` (no host round-trip).

    MPS has no float64, so there the angles are computed on the CPU and copied once.
    """
    where = torch.device("cpu") if device.type == "mps" else device
    angles = torch.outer(
        positions.to(device=where, dtype=torch.float64),
        inv_freq.to(device=where, dtype=torch.float64),
    )
    return angles if where == device else angles.to(device)


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
        raise ValueError(
            f"rotary_dim must be <= x.shape[-1] = {dim}, got {rotary_dim}"
        )
    convention = check_choice(convention, "convention", CONVENTIONS)
    apply = {
        "half": apply_rope_half,
        "interleaved": apply_rope_interleaved,
        "complex": apply_rope_complex,
    }[convention]
    if inv_freq is not None:
        if isinstance(inv_freq, torch.Tensor) and inv_freq.ndim == 1 and (
            inv_freq.shape[0] != rotary_dim // 2
        ):
            raise ValueError(
                f"inv_freq must have length rotary_dim // 2 = {rotary_dim // 2}, "
                f"got length {inv_freq.shape[0]}"
            )
        inv_freq = check_inv_freq(inv_freq, rotary_dim)
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


class RotaryEmbedding(nn.Module):
    """RoPE as a layer: ``forward(q, k, positions=None, *, offset=0) -> (q_rot, k_rot)``.

    The layer keeps **one table per (device, dtype)** of cos/sin values for positions
    ``0 … capacity-1``, on the device of the inputs, rounded once from float64 angles. Every call
    *indexes* it: ``positions=None`` slices rows ``offset … offset+seq-1`` (Meta's
    ``freqs_cis[start_pos : start_pos + seqlen]``, no host round-trip at all), explicit
    non-negative integer positions gather their rows. When a call needs a position beyond the
    table, the table is rebuilt at least twice as long (geometric growth), so decoding ``N``
    tokens one at a time builds it about ``log2 N`` times, and not at all after
    :meth:`reserve` or a first pass of the same length. The rotation then costs one multiply and
    one fused multiply-add per element, without ``rotate_half``'s ``torch.cat``.

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
    ``table_builds`` counts how many times a table was built (an indexed call does not add to
    it). The tables can never go stale or be corrupted:

    * casting the module (``.half()``, ``.to(torch.bfloat16)``, ``.float()``) moves ``inv_freq``
      to the new device but keeps it float64, and drops the tables. (Hugging Face's rotary
      modules keep ``inv_freq`` as an ordinary buffer, which such a cast rounds to bfloat16:
      :ref:`ch-rope-code` measures what that does.) New tables are rounded once from float64
      angles, so a cast module is as exact as a fresh one;
    * assigning ``inv_freq``, ``attention_scaling`` or ``convention`` drops the tables; an
      in-place edit of ``inv_freq`` is detected by its version counter and, for a CPU spectrum,
      by comparing its ``dim // 2`` values (an accelerator spectrum edited through ``.data``
      needs :meth:`reset_tables`, because reading it back would cost a host round-trip);
    * :meth:`cos_sin` returns copies, so a caller who edits them changes nothing here;
    * when ``inv_freq`` requires grad (a learned spectrum) and autograd is on, the rows needed are
      computed afresh on every call, so each forward pass has its own graph.

    Positions that are negative or not integers (e.g. interpolated positions ``m / s``) cannot
    index a table; their rows are computed directly from float64 angles, and each such call
    counts as one build.
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
        # (device, dtype) -> tables for positions 0 … capacity-1 (capacity = first dim)
        self._tables: dict[tuple[torch.device, torch.dtype], tuple[torch.Tensor, ...]] = {}
        self._spectrum_seen: tuple[int, int, torch.Tensor] | None = None

    def __setattr__(self, name: str, value: object) -> None:
        if name == "inv_freq" and "inv_freq" in self.__dict__.get("_buffers", {}):
            value = check_inv_freq(value, self.dim)  # float64, on the value's device
        elif name == "attention_scaling":
            value = check_positive(value, "attention_scaling")
        elif name == "convention" and "convention" in self.__dict__:
            value = check_choice(value, "convention", CONVENTIONS)
        super().__setattr__(name, value)  # type: ignore[arg-type]  # validated above
        if name in ("inv_freq", "attention_scaling", "convention") and "_tables" in self.__dict__:
            self.reset_tables()

    def extra_repr(self) -> str:
        return f"dim={self.dim}, base={self.base}, convention={self.convention!r}"

    def reset_tables(self) -> None:
        """Drop every table; the next call builds afresh."""
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
            Working dtype of the table.

        Returns
        -------
        int
            Its number of rows.
        """
        checked = check_device(device)
        dtype = check_dtype(dtype)
        where = self.inv_freq.device if checked is None else checked
        table = self._tables.get(self._key(where, dtype))
        return 0 if table is None else table[0].shape[0]

    # --- building -------------------------------------------------------------------------------

    def _key(self, device: torch.device, dtype: torch.dtype) -> tuple[torch.device, torch.dtype]:
        if device.type != "cpu" and device.index is None:  # "cuda" and "cuda:0" are one table
            device = torch.empty(0, device=device).device
        return device, self._work_dtype(dtype)

    def _work_dtype(self, dtype: torch.dtype) -> torch.dtype:
        if self.convention == "complex":
            return torch.complex128 if dtype == torch.float64 else torch.complex64
        return dtype

    def _build(
        self, positions: torch.Tensor, device: torch.device, dtype: torch.dtype
    ) -> tuple[torch.Tensor, ...]:
        """Tables for ``positions`` (float64, any values), on ``device``, in ``dtype``'s work type.

        Real conventions: ``(cos (n, d), sin (n, d/2))``; complex: ``(freqs_cis (n, d/2),)``.
        """
        self.table_builds += 1
        angles = check_angles(_angles_on(positions, self.inv_freq, device))
        if self.convention == "complex":
            freqs = torch.polar(torch.full_like(angles, self.attention_scaling), angles)
            return (freqs.to(self._work_dtype(dtype)),)
        cos = angles.cos() * self.attention_scaling
        sin = angles.sin() * self.attention_scaling
        cos = cos.repeat(1, 2) if self.convention == "half" else cos.repeat_interleave(2, dim=-1)
        return cos.to(dtype), sin.to(dtype)

    def _spectrum_unchanged(self) -> bool:
        """Whether ``inv_freq`` is the spectrum the tables were built from (cheap checks)."""
        freqs = self.inv_freq
        seen = self._spectrum_seen
        if seen is None or seen[0] != freqs._version or seen[1] != freqs.data_ptr():
            return False
        # On the CPU the values can be compared for free; this catches edits through .data.
        return freqs.device.type != "cpu" or torch.equal(seen[2], freqs)

    def _table(
        self, needed: int, device: torch.device, dtype: torch.dtype
    ) -> tuple[torch.Tensor, ...]:
        """The table for ``(device, dtype)`` with at least ``needed`` rows, grown if necessary."""
        if not self._spectrum_unchanged():
            self._tables = {}
            freqs = self.inv_freq
            snapshot = freqs.detach().clone() if freqs.device.type == "cpu" else freqs[:0]
            self._spectrum_seen = (freqs._version, freqs.data_ptr(), snapshot)
        key = self._key(device, dtype)
        table = self._tables.get(key)
        have = 0 if table is None else table[0].shape[0]
        if table is None or have < needed:
            capacity = max(needed, 2 * have, self._MIN_CAPACITY)
            check_size(("capacity", capacity), ("dim", self.dim), what="the (capacity, dim) table")
            positions = torch.arange(capacity, dtype=torch.float64, device=key[0])
            table = self._build(positions, key[0], dtype)
            self._tables[key] = table
        return table

    def reserve(
        self, length: int, device: torch.device | str = "cpu", dtype: torch.dtype = torch.float32
    ) -> None:
        """Build the table for positions ``0 … length-1`` now (Meta precomputes twice its maximum).

        Parameters
        ----------
        length : int
            Number of positions (>= 0).
        device : torch.device or str
            Device of the table.
        dtype : torch.dtype
            Dtype of the inputs the table will serve.
        """
        length = check_length(length, "length")
        checked = check_device(device)
        dtype = check_dtype(dtype)
        check_size(("length", length), ("dim", self.dim), what="the (length, dim) table")
        where = self.inv_freq.device if checked is None else checked
        if length > 0 and not self._grad_path():
            self._table(length, where, self._work_dtype_for(dtype))

    def _grad_path(self) -> bool:
        return self.inv_freq.requires_grad and torch.is_grad_enabled()

    def _rows(
        self,
        positions: torch.Tensor | None,
        offset: int,
        seq: int,
        device: torch.device,
        dtype: torch.dtype,
    ) -> tuple[torch.Tensor, ...]:
        """The table rows for this call: a slice, a gather, or (when they cannot index) fresh."""
        if positions is None:
            if self._grad_path():  # a fresh graph for every call
                span = torch.arange(offset, offset + seq, dtype=torch.float64)
                return self._build(span, device, dtype)
            table = self._table(offset + seq, device, dtype)
            return tuple(t[offset : offset + seq] for t in table)
        if seq == 0 or self._grad_path():
            return self._build(positions, device, dtype)
        # One read of a few scalars decides between indexing and computing the rows.
        if positions.is_floating_point():
            lo, hi, fractional = torch.stack(
                (positions.min(), positions.max(), (positions != positions.round()).any().double())
            ).tolist()
        else:  # integer positions are whole numbers already
            lo, hi = (int(v) for v in torch.aminmax(positions))
            fractional = False
        # Rows that cannot index a table (negative, fractional, or beyond the size limit) are
        # computed directly; the angle check then names an overflow instead of a table size.
        if lo < 0 or fractional or hi + 1 > MAX_ELEMENTS // self.dim:
            return self._build(positions, device, dtype)
        table = self._table(int(hi) + 1, device, dtype)
        index = positions.to(device=table[0].device, dtype=torch.long)
        return tuple(t.index_select(0, index) for t in table)

    def cos_sin(
        self, seq_len: int, device: torch.device | str = "cpu", dtype: torch.dtype = torch.float32
    ) -> tuple[torch.Tensor, ...]:
        """The tables for positions ``0 … seq_len-1``, as the forward pass uses them.

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
            ``(cos (seq, d), sin (seq, d))`` for the real conventions, laid out for the
            convention (``"half"``: ``cat(c, c)``; ``"interleaved"``: each value twice), and
            ``(freqs_cis (seq, d/2) complex,)`` for ``"complex"``. They are copies: modifying them
            does not touch the layer's table.
        """
        seq_len = check_length(seq_len, "seq_len")
        check_size(("seq_len", seq_len), ("dim", self.dim), what="the (seq_len, dim) tables")
        checked = check_device(device)
        dtype = check_dtype(dtype)
        where = self.inv_freq.device if checked is None else checked
        with torch.no_grad():
            rows = self._rows(None, 0, seq_len, where, self._work_dtype_for(dtype))
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
        return compute_dtype(dtype) if self.convention == "complex" else dtype

    def _apply(self, fn, recurse=True):  # type: ignore[no-untyped-def]  # nn.Module's signature
        # .half()/.to(dtype) would round the spectrum: move it to the new device, keep float64,
        # and drop the tables built for the old device or dtype.
        freqs = self.inv_freq
        module = super()._apply(fn, recurse)
        self._buffers["inv_freq"] = freqs.to(device=self._buffers["inv_freq"].device)
        self.reset_tables()
        return module

    def _rotate(self, x: torch.Tensor, tables: tuple[torch.Tensor, ...]) -> torch.Tensor:
        if self.convention == "half":
            return _rotate_half_layout(x, tables[0], tables[1])
        if self.convention == "interleaved":
            return _rotate_interleaved_layout(x, tables[0], tables[1])
        return _rotate_complex(x, tables[0])

    def forward(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        positions: torch.Tensor | None = None,
        *,
        offset: int = 0,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Rotate queries and keys.

        Parameters
        ----------
        q, k : torch.Tensor
            Shape ``(..., seq, dim)`` each, same ``seq``, ``dim`` and dtype (leading dimensions may
            differ, e.g. fewer key heads).
        positions : torch.Tensor, optional
            Shape ``(seq,)``; default ``arange(offset, offset + seq)``.
        offset : int
            First position when ``positions`` is not given (>= 0): during generation, the number
            of tokens already in the key–value cache (Meta's ``start_pos``).

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
        offset = check_length(offset, "offset")
        if positions is not None:
            if offset != 0:
                raise ValueError("give either positions or offset, not both")
            if isinstance(positions, torch.Tensor) and positions.dtype in _INDEX_DTYPES and (
                positions.shape == (seq,)
            ):
                pass  # integers are finite: they index the table as they are
            else:
                positions = check_positions(positions, seq)
        else:
            check_size(("offset + seq", offset + seq), ("dim", self.dim), what="the table")
        tables = self._rows(positions, offset, seq, q.device, self._work_dtype_for(q.dtype))
        return self._rotate(q, tables), self._rotate(k, tables)
