"""Shared argument checks for every public function of ``posenc_lib``.

Each check raises ``TypeError`` for a value of the wrong kind and ``ValueError`` for a value of the
right kind outside its allowed range. Messages name the parameter, the allowed values and what was
received, so a reader who passes ``dim=7`` learns at once what went wrong.

The size policy
---------------
No public function builds a tensor of more than :data:`MAX_ELEMENTS` elements (2**27, about
1.3·10^8: 1 GiB in float64), and no chunked loop does more than that many elements of work.
:func:`check_size` enforces it *before* anything is allocated, with a ``ValueError`` naming the
parameters whose product is too large, so ``sinusoidal_table(10**6, 10**6)`` or ``dim=2**70``
fails at once instead of trying to allocate terabytes, overflowing a C integer or looping for
minutes. Every function that takes a size (``dim``, ``seq_len``, ``n_heads``, ``max_len``,
``max_distance`` …) or whose result grows with the product of its inputs' sizes (an outer product,
a ``(q_len, k_len)`` score matrix) calls it; :func:`check_dim`, :func:`check_length` and
:func:`check_positive_int` apply it to a single size. Counts of objects built one at a time in
Python (``TinyEncoder``'s ``n_layers``) are bounded by the much smaller :data:`MAX_PYTHON_ITEMS`
(4096), for the same reason.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable, Mapping, Sequence, Set

import torch

_HALF_DTYPES = (torch.float16, torch.bfloat16)

MAX_ELEMENTS: int = 2**27
"""Largest number of elements a public function builds (or works through): 2**27 ≈ 1.3·10^8."""

MAX_PYTHON_ITEMS: int = 4096
"""Largest number of objects a public function builds one by one in Python (e.g. layers)."""


def _describe(value: object) -> str:
    """Short ``repr`` of a bad value with its type, e.g. ``3.0 (float)``."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(value).__name__})"


def check_int(value: object, name: str, *, minimum: int | None = None, what: str = "") -> int:
    """Return ``value`` as a Python int; reject bools, floats and values below ``minimum``.

    ``what`` is the wording of the allowed range, e.g. ``"a positive integer"``.
    """
    if what == "":
        what = "an integer" if minimum is None else f"an integer >= {minimum}"
    # bool is an int subclass, but dim=True is always a mistake.
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        integral_tensor = (
            isinstance(value, torch.Tensor)
            and value.ndim == 0
            and not (value.dtype.is_floating_point or value.dtype.is_complex)
            and value.dtype != torch.bool
        )
        if integral_tensor:
            value = int(torch.as_tensor(value).item())
        else:
            raise TypeError(f"{name} must be {what}, got {_describe(value)}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be {what}, got {value}")
    return value


def _parameter(label: str) -> str:
    """The parameter a size label is about: ``"max_distance + 1"`` -> ``"max_distance"``."""
    words = re.findall(r"[A-Za-z_][\w.]*(?:\[[^\]]*\])?", label)
    words = [w for w in words if w not in ("len", "prod")]
    return words[0] if words else label


def check_size(*sizes: tuple[str, int], what: str = "the result") -> int:
    """Refuse, before allocating, a result of ``prod(sizes)`` elements above :data:`MAX_ELEMENTS`.

    Parameters
    ----------
    *sizes : tuple of (str, int)
        ``(name, size)`` factors of the element count, named as the caller knows them, e.g.
        ``("seq_len", seq_len), ("dim", dim)``; sizes are validated non-negative integers.
    what : str
        What would be built, for the message (e.g. ``"the (seq_len, dim) table"``).

    Returns
    -------
    int
        The element count ``prod(sizes)`` (at most ``MAX_ELEMENTS``).

    Raises
    ------
    ValueError
        Naming the factor that alone exceeds the limit, or else all factors and their product.
    """
    for name, size in sizes:
        if size > MAX_ELEMENTS:
            raise ValueError(
                f"{name} must be at most {MAX_ELEMENTS} (posenc_lib's size limit MAX_ELEMENTS), "
                f"got {name} = {size}"
            )
    total = math.prod(size for _, size in sizes)
    if total > MAX_ELEMENTS:
        factors = " × ".join(f"{name} = {size}" for name, size in sizes)
        names = ", ".join(dict.fromkeys(_parameter(name) for name, _ in sizes))
        raise ValueError(
            f"{what} would have {factors} = {total} elements, more than posenc_lib's size limit "
            f"MAX_ELEMENTS = {MAX_ELEMENTS}; reduce {names}"
        )
    return total


def check_device(device: object, name: str = "device") -> torch.device | None:
    """``None``, a ``torch.device``, a device string (``"cpu"``, ``"cuda:0"``) or a CUDA index.

    Returns the ``torch.device`` (``None`` stays ``None``); a device that does not exist on this
    machine (``"cuda"`` without a GPU) is refused too.
    """
    if device is None:
        return None
    if isinstance(device, bool) or not isinstance(device, (torch.device, str, int)):
        raise TypeError(
            f"{name} must be a torch.device or a device string such as 'cpu', "
            f"got {_describe(device)}"
        )
    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError, TypeError):
        raise ValueError(
            f"{name} must be a torch.device or a device string such as 'cpu' or 'cuda:0', "
            f"got {_describe(device)}"
        ) from None
    available = {
        "cpu": True,
        "meta": True,
        "cuda": torch.cuda.is_available(),
        "mps": torch.backends.mps.is_available(),
    }.get(dev.type, True)
    if not available:
        raise ValueError(f"{name} {str(dev)!r} is not available on this machine")
    return dev


def check_dim(dim: object, name: str = "dim", *, minimum: int = 2) -> int:
    """A positive even feature dimension (``minimum`` 4 where ``d/(d-2)`` appears)."""
    what = "a positive even integer" if minimum <= 2 else f"an even integer >= {minimum}"
    dim = check_int(dim, name, what=what)
    if dim < minimum or dim % 2 != 0:
        raise ValueError(f"{name} must be {what}, got {dim}")
    check_size((name, dim))
    return dim


def check_positive_int(value: object, name: str, *, maximum: int = MAX_ELEMENTS) -> int:
    """An integer in ``[1, maximum]`` (head counts, feature sizes, term and layer counts).

    Counts of things built one by one in Python (layers, series terms) pass
    ``maximum=MAX_PYTHON_ITEMS``; sizes of tensors keep the default :data:`MAX_ELEMENTS`.
    """
    value = check_int(value, name, minimum=1, what="a positive integer (>= 1)")
    if value > maximum:
        limit = {MAX_ELEMENTS: " (posenc_lib's size limit MAX_ELEMENTS)",
                 MAX_PYTHON_ITEMS: " (posenc_lib's size limit MAX_PYTHON_ITEMS)"}.get(maximum, "")
        raise ValueError(f"{name} must be at most {maximum}{limit}, got {name} = {value}")
    return value


def check_length(value: object, name: str) -> int:
    """A sequence length: an integer >= 0 (and at most :data:`MAX_ELEMENTS`)."""
    value = check_int(value, name, minimum=0, what="a non-negative integer")
    check_size((name, value))
    return value


def check_seed(value: object, name: str = "seed") -> int:
    """A random seed ``torch.Generator.manual_seed`` takes without a C overflow: 0 … 2**63 − 1."""
    value = check_int(value, name, minimum=0, what="an integer in [0, 2**63 - 1]")
    if value >= 2**63:
        raise ValueError(f"{name} must be an integer in [0, 2**63 - 1], got {value}")
    return value


def check_real(value: object, name: str) -> float:
    """A finite real number (Python number or 0-d real tensor), returned as float."""
    if isinstance(value, torch.Tensor) and value.ndim == 0 and not value.dtype.is_complex \
            and value.dtype != torch.bool:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a finite real number, got {_describe(value)}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value}")
    return value


def check_positive(value: object, name: str) -> float:
    """A finite number > 0 (``base``, ``scale``)."""
    try:
        value = check_real(value, name)
    except (TypeError, ValueError) as err:
        kind = type(err)
        raise kind(str(err).replace("a finite real number", "a finite number > 0")) from None
    if value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


def check_base(base: object, name: str = "base") -> float:
    """The RoPE / sinusoid base: finite and > 0 (1 is allowed; it gives zero frequencies)."""
    return check_positive(base, name)


DEFAULT_BASE = 10000.0
"""The original Transformer's and RoFormer's base: used when neither base nor inv_freq is given."""


def resolve_base(base: object, inv_freq: object, name: str = "base") -> float:
    """``base`` (default :data:`DEFAULT_BASE`), refused together with ``inv_freq``.

    ``inv_freq`` fixes every frequency, so a ``base`` passed with it would be silently ignored;
    asking for both is a mistake worth a clear error.
    """
    if base is not None and inv_freq is not None:
        raise ValueError(
            f"pass either {name}= or inv_freq=, not both: inv_freq fixes every frequency, so "
            f"{name}={base!r} would be ignored"
        )
    return check_base(DEFAULT_BASE if base is None else base, name)


def check_factor(factor: object, name: str = "factor") -> float:
    """A context-extension factor: finite and >= 1 (1 means no scaling)."""
    try:
        value = check_real(factor, name)
    except (TypeError, ValueError) as err:
        kind = type(err)
        raise kind(str(err).replace("a finite real number", "a finite number >= 1")) from None
    if value < 1:
        raise ValueError(f"{name} must be a finite number >= 1, got {value}")
    return value


def check_dtype(dtype: object, name: str = "dtype") -> torch.dtype:
    """A floating-point torch dtype."""
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(
            f"{name} must be a floating-point torch.dtype (e.g. torch.float32), "
            f"got {_describe(dtype)}"
        )
    return dtype


def check_float_tensor(x: object, name: str = "x", *, min_ndim: int = 1) -> torch.Tensor:
    """A real floating-point tensor with at least ``min_ndim`` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {_describe(x)}")
    if not x.dtype.is_floating_point:
        raise TypeError(
            f"{name} must have a floating-point dtype (float16, bfloat16, float32, float64), "
            f"got {x.dtype}"
        )
    if x.ndim < min_ndim:
        shape = "(..., seq, dim)" if min_ndim == 2 else f"at least {min_ndim} dimension(s)"
        raise ValueError(f"{name} must have shape {shape}, got shape {tuple(x.shape)}")
    return x


def check_rope_input(x: object, name: str = "x") -> tuple[torch.Tensor, int, int]:
    """A ``(..., seq, dim)`` float tensor with even ``dim``; returns ``(x, seq, dim)``."""
    x = check_float_tensor(x, name, min_ndim=2)
    dim = x.shape[-1]
    if dim == 0 or dim % 2 != 0:
        raise ValueError(
            f"{name}.shape[-1] (dim) must be a positive even integer, got {dim} "
            f"(shape {tuple(x.shape)})"
        )
    return x, x.shape[-2], dim


def check_positions(
    positions: object, seq_len: int | None = None, name: str = "positions"
) -> torch.Tensor:
    """A 1-D tensor of finite real positions (of length ``seq_len`` when given), as float64.

    Lists, tuples and ranges are accepted and converted, since readers often type ``[0, 1, 2]``.
    """
    if isinstance(positions, (Sequence, range)) and not isinstance(positions, (str, bytes)):
        try:
            positions = torch.as_tensor(list(positions), dtype=torch.float64)
        except (TypeError, ValueError, RuntimeError):
            raise TypeError(
                f"{name} must be a 1-D tensor of real numbers, got {_describe(positions)}"
            ) from None
    if not isinstance(positions, torch.Tensor):
        raise TypeError(f"{name} must be a 1-D torch.Tensor, got {_describe(positions)}")
    if positions.dtype.is_complex or positions.dtype == torch.bool:
        raise TypeError(f"{name} must hold integers or real floats, got dtype {positions.dtype}")
    if positions.ndim != 1:
        raise ValueError(
            f"{name} must be 1-D with shape (seq,), got shape {tuple(positions.shape)}"
        )
    if seq_len is not None and positions.shape[0] != seq_len:
        raise ValueError(
            f"{name} must have length seq = {seq_len} (x.shape[-2]), "
            f"got length {positions.shape[0]}"
        )
    positions = positions.to(torch.float64)
    if not bool(torch.isfinite(positions).all()):
        raise ValueError(f"{name} must be finite, got a NaN or infinite entry")
    return positions


def check_inv_freq(
    inv_freq: object, dim: int | None = None, name: str = "inv_freq", *, positive: bool = False
) -> torch.Tensor:
    """A 1-D tensor of finite inverse frequencies (length ``dim // 2`` when given), as float64."""
    if not isinstance(inv_freq, torch.Tensor):
        raise TypeError(f"{name} must be a 1-D torch.Tensor, got {_describe(inv_freq)}")
    if inv_freq.dtype.is_complex or inv_freq.dtype == torch.bool:
        raise TypeError(f"{name} must hold real numbers, got dtype {inv_freq.dtype}")
    if inv_freq.ndim != 1:
        raise ValueError(
            f"{name} must be 1-D with shape (dim//2,), got shape {tuple(inv_freq.shape)}"
        )
    if dim is not None and inv_freq.shape[0] != dim // 2:
        raise ValueError(
            f"{name} must have length dim // 2 = {dim // 2}, got length {inv_freq.shape[0]}"
        )
    inv_freq = inv_freq.to(torch.float64)
    if not bool(torch.isfinite(inv_freq).all()):
        raise ValueError(f"{name} must be finite, got a NaN or infinite entry")
    if positive and not bool((inv_freq > 0).all()):
        raise ValueError(f"{name} must be > 0 everywhere")
    return inv_freq


def check_sequence(
    value: object, name: str, *, of: str = "items", allow_str: bool = True,
    hashable: bool = False,
) -> list:
    """An ordered, finite collection (list, tuple, range, str …) as a list.

    ``None``, a number, a mapping or a set (no order) gives a ``TypeError`` naming ``name``
    instead of Python's "'NoneType' object is not iterable"; so does a ``str`` when
    ``allow_str`` is false. With ``hashable``, every item must be hashable (it is used as a key).
    """
    kind = f"a sequence of {of} (a list or tuple)"
    if (
        value is None
        or isinstance(value, (bytes, bytearray, Mapping, Set))
        or (isinstance(value, str) and not allow_str)
        or not isinstance(value, Iterable)
    ):
        raise TypeError(f"{name} must be {kind}, got {_describe(value)}")
    items = list(value)
    if hashable:
        for index, item in enumerate(items):
            try:
                hash(item)
            except TypeError:
                raise TypeError(
                    f"{name} must hold hashable {of} (e.g. str or int), got an unhashable "
                    f"{type(item).__name__} at index {index}"
                ) from None
    return items


def check_angles(angles: torch.Tensor, what: str = "positions × inv_freq") -> torch.Tensor:
    """Angles (float64) that did not overflow: finite positions times finite frequencies can
    still exceed float64's largest value (about 1.8e308), and cos/sin of ``inf`` is NaN."""
    if not bool(torch.isfinite(angles).all()):
        raise ValueError(
            f"the angles {what} overflow float64 (|angle| > {torch.finfo(torch.float64).max:.3g})"
            ": use smaller positions or frequencies (an angle that large has lost every digit of "
            "its phase anyway)"
        )
    return angles


def check_choice(value: object, name: str, choices: Sequence[str]) -> str:
    """One of a fixed set of strings."""
    if not isinstance(value, str) or value not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype to do arithmetic in: half types are upcast to float32, others kept."""
    return torch.float32 if dtype in _HALF_DTYPES else dtype
