"""Numbers from a chapter's computation into its prose.

A chapter computes a number in a code cell and calls :func:`glue`; its prose then writes
``{glue:text}`name:.3f``` instead of typing the number, so the sentence changes when the code does.
In the book build this is myst-nb's ``glue`` (the value is stored in the executed notebook and
substituted by the build). The reader notebooks (Colab, Binder) are generated with the values of
the executed build already written into their markdown, so no role is ever shown raw; in a kernel
without myst-nb, :func:`glue` stores nothing and only returns the value.

myst-nb formats a glued value from its ``text/plain`` representation. NumPy 2 prints a scalar as
``np.float64(0.5)``, which a format spec such as ``:.3f`` cannot read, so :func:`glue` turns NumPy
and torch scalars into plain Python numbers first.
"""

from __future__ import annotations

import math
import numbers
import re
from typing import Any

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _plain(value: Any) -> int | float | str:
    """``value`` as a Python int, float or str; a one-element array or tensor is unwrapped."""
    if isinstance(value, bool):
        raise TypeError("value must be a number or a string, not a bool (glue a str instead)")
    if isinstance(value, str):
        return value
    item = getattr(value, "item", None)  # numpy scalars, 0-d arrays, one-element tensors
    if item is not None and not isinstance(value, numbers.Number | str):
        size = getattr(value, "size", None)
        size = size() if callable(size) else size
        numel = getattr(value, "numel", None)
        count = numel() if callable(numel) else size
        if count not in (None, 1) and not (isinstance(count, tuple) and math.prod(count) == 1):
            raise TypeError(f"value must be a scalar; got an array of {count} elements")
        value = item()
    elif item is not None:
        value = item()
    if isinstance(value, bool):
        raise TypeError("value must be a number or a string, not a bool (glue a str instead)")
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(f"value must be finite to be quoted in prose; got {number}")
        return number
    raise TypeError(f"value must be a number or a string; got {type(value).__name__}")


def glue(name: str, value: Any) -> int | float | str:
    """Store ``value`` under ``name`` for the prose (``{glue:text}`name:fmt```) and return it.

    Parameters
    ----------
    name
        A Python identifier, unique in the chapter (myst-nb keys glued values by it).
    value
        A number (Python, NumPy or a one-element torch tensor) or a string. NaN and infinities are
        refused: a sentence should never quote one silently.

    Returns
    -------
    int, float or str
        The value as a plain Python object, as it is stored.

    Raises
    ------
    ValueError
        If ``name`` is not an identifier or ``value`` is not finite.
    TypeError
        If ``value`` is not a scalar number or a string.
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"name must be a Python identifier such as 'copy_acc_2l'; got {name!r}")
    plain = _plain(value)
    try:
        from myst_nb import glue as _myst_glue  # type: ignore[import-untyped]
    except ImportError:  # a reader's kernel: the notebook's markdown already holds the values
        return plain
    _myst_glue(name, plain, display=False)
    return plain
