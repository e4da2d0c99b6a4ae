"""Argument validation and value conversion shared by the figure builders.

``_int``, ``_even``, ``_seed``, ``_real``, ``_base``, ``_choice`` and ``_bool`` check one argument
each and raise a ``TypeError`` or ``ValueError`` naming it; ``_np``, ``_lists`` and ``_fmt`` turn
tensors, arrays and numbers into what plotly and the slider labels take.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

# --- validation helpers ---------------------------------------------------------------------------


def _int(value: object, name: str, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    value = int(value)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        span = f"in [{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be an integer {span}, got {value}")
    return value


def _even(value: object, name: str, lo: int = 2, hi: int | None = None) -> int:
    value = _int(value, name, lo, hi)
    if value % 2:
        raise ValueError(f"{name} must be an even integer, got {value}")
    return value


def _seed(value: object, name: str = "seed") -> int:
    # torch.Generator.manual_seed overflows a C integer beyond 2**63 - 1 (negative seeds wrap).
    return _int(value, name, 0, 2**63 - 1)


def _real(value: object, name: str, lo: float | None = None, hi: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        span = f"in [{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be a number {span}, got {value}")
    return value


def _base(value: object, name: str = "base") -> float:
    value = _real(value, name)
    if value <= 1.0:
        raise ValueError(f"{name} must be a finite number > 1, got {value}")
    return value


def _choice(value: object, name: str, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def _bool(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return value


# --- small utilities ------------------------------------------------------------------------------


def _np(x: torch.Tensor | np.ndarray) -> np.ndarray:
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def _lists(a: Any, decimals: int) -> Any:
    """Rounded nested lists for slider args (NaN -> None; -0.0 -> 0.0 saves a byte each)."""
    arr = np.round(np.asarray(a, dtype=np.float64), decimals) + 0.0
    if np.isnan(arr).any():
        out = arr.astype(object)
        out[np.isnan(arr)] = None
        return out.tolist()
    return arr.tolist()


def _fmt(x: float) -> str:
    """Compact label: 10 000, 500 000, 1e+06, 0.5."""
    if x >= 1e6:
        return f"{x:.0e}".replace("e+0", "e")
    if float(x).is_integer():
        return f"{int(x):,}".replace(",", " ")
    return f"{x:g}"
