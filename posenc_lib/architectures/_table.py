"""The plan as text: layers with the same description grouped, index ranges collapsed."""

from __future__ import annotations

from collections.abc import Sequence

from .._validation import _describe
from ._plan import LayerPosition

__all__ = ["collapse_ranges", "format_plan"]


def collapse_ranges(indices: Sequence[int], *, max_runs: int | None = 4) -> str:
    """``[0, 1, 2, 3, 4, 6, 7, 8, 9, 10]`` → ``"0–4, 6–10"``; long regular patterns shortened.

    Consecutive indices become ``a–b`` runs (en dash). When there are more than ``max_runs``
    runs and they repeat with one period (same length, same step: a layer pattern; the last run
    may be cut short), only the first two and the last are written, with ``…`` between:
    ``"0–4, 6–10, …, 42–46"`` or ``"0–4, 6–10, …, 60–61"``; single
    indices in steps of ``k`` read ``"1, 3, …, 23 (every 2nd)"``.

    Parameters
    ----------
    indices : sequence of int
        Layer indices, in any order.
    max_runs : int or None
        Runs written in full before a regular pattern is shortened; None: never shorten.

    Returns
    -------
    str
    """
    if isinstance(indices, (str, bytes)) or not isinstance(indices, Sequence):
        raise TypeError(f"indices must be a sequence of integers, got {_describe(indices)}")
    values = sorted({int(i) for i in indices})
    runs: list[tuple[int, int]] = []
    for v in values:
        if runs and v == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], v)
        else:
            runs.append((v, v))
    text = [f"{a}" if a == b else f"{a}–{b}" for a, b in runs]
    if max_runs is None or len(runs) <= max_runs:
        return ", ".join(text)
    lengths = {b - a for a, b in runs[:-1]}
    steps = {runs[i + 1][0] - runs[i][0] for i in range(len(runs) - 1)}
    last = runs[-1][1] - runs[-1][0]
    # A pattern may end early: the last run cut short by the layer count (Gemma 3 27B: 60–61).
    if len(lengths) == 1 and len(steps) == 1 and last <= next(iter(lengths)):
        step = steps.pop()
        suffix = f" (every {_ordinal(step)})" if lengths == {0} and last == 0 else ""
        return f"{text[0]}, {text[1]}, …, {text[-1]}{suffix}"
    return ", ".join(text)


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


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
