"""The plan as text: layers with the same description grouped, index ranges collapsed."""

from __future__ import annotations

from collections.abc import Sequence

from .._validation import _describe
from ._plan import LayerPosition

__all__ = ["collapse_ranges", "format_plan"]


def collapse_ranges(indices: Sequence[int]) -> str:
    """``[0, 1, 2, 3, 4, 6, 7]`` → ``"0–4, 6–7"`` (en dash; single indices stay single).

    Parameters
    ----------
    indices : sequence of int
        Layer indices, in any order, no repeats needed.

    Returns
    -------
    str
    """
    if isinstance(indices, (str, bytes)) or not isinstance(indices, Sequence):
        raise TypeError(f"indices must be a sequence of integers, got {_describe(indices)}")
    values = sorted({int(i) for i in indices})
    parts: list[str] = []
    start = prev = None
    for v in values:
        if start is None:
            start = prev = v
        elif v == prev + 1:  # type: ignore[operator]
            prev = v
        else:
            parts.append(f"{start}" if start == prev else f"{start}–{prev}")
            start = prev = v
    if start is not None:
        parts.append(f"{start}" if start == prev else f"{start}–{prev}")
    return ", ".join(parts)


def format_plan(plan: Sequence[LayerPosition], *, title: str | None = None) -> str:
    """One line per distinct layer setting, in order of first appearance.

    ``layers 0–4, 6–10 …: RoPE base 10 000, half, window 1 024``.

    Parameters
    ----------
    plan : sequence of LayerPosition
        From :func:`position_plan`.
    title : str, optional
        A first line (e.g. the model name).

    Returns
    -------
    str
    """
    if isinstance(plan, (str, bytes)) or not isinstance(plan, Sequence) or not all(
        isinstance(e, LayerPosition) for e in plan
    ):
        raise TypeError(f"plan must be a list of LayerPosition, got {_describe(plan)}")
    groups: dict[str, list[int]] = {}
    for entry in plan:
        groups.setdefault(entry.describe(), []).append(entry.layer)
    labels = {
        text: ("layer " if len(layers) == 1 else "layers ") + collapse_ranges(layers)
        for text, layers in groups.items()
    }
    width = max((len(label) for label in labels.values()), default=0)
    lines = [] if title is None else [title]
    lines += [f"{labels[text]:<{width}}  {text}" for text in groups]
    return "\n".join(lines)
