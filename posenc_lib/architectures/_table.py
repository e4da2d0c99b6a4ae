"""The plan as text: layers with the same description grouped, index ranges collapsed."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Mapping, Sequence

from .._validation import _describe
from ._plan import LayerPosition

__all__ = [
    "collapse_ranges",
    "format_plan",
    "layer_letter",
    "layer_pattern",
    "logit_gain",
    "per_kind_cells",
    "scaling_cell",
    "temperature_cell",
    "window_binds",
    "window_cell",
]


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


# --- cells of the book's model tables (chapter 10): one layer → one short string ---------------


def _check_entry(entry: object) -> None:
    if not isinstance(entry, LayerPosition):
        raise TypeError(f"entry must be a LayerPosition, got {_describe(entry)}")


def _check_max_length(max_length: object) -> None:
    if max_length is not None and (
        isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1
    ):
        raise ValueError(f"max_length must be a positive int or None, got {_describe(max_length)}")


def window_binds(entry: LayerPosition, max_length: int | None = None) -> bool:
    """Whether the layer's window ever hides a key: it has one, shorter than ``max_length``.

    A window no shorter than the config's ``max_position_embeddings`` never binds (Phi-3.5-mini:
    262 144 ≥ 131 072).

    Parameters
    ----------
    entry : LayerPosition
        One layer of a plan.
    max_length : int or None
        The config's ``max_position_embeddings``; None: any window binds.

    Returns
    -------
    bool
    """
    _check_entry(entry)
    _check_max_length(max_length)
    return entry.window is not None and (max_length is None or entry.window < max_length)


def layer_letter(entry: LayerPosition, max_length: int | None = None) -> str:
    """``"G"`` RoPE seeing every key the mask allows, ``"L"`` RoPE with a binding window or a
    chunk, ``"N"`` an attention layer without rotation (NoPE, or ALiBi), ``"–"`` no attention.

    Parameters
    ----------
    entry : LayerPosition
        One layer of a plan.
    max_length : int or None
        The config's ``max_position_embeddings`` (see :func:`window_binds`).

    Returns
    -------
    str
        One character.
    """
    _check_entry(entry)
    if entry.kind == "no_attention":
        return "–"
    local = window_binds(entry, max_length) or entry.chunk is not None
    return ("L" if local else "G") if entry.kind == "rope" else "N"


def layer_pattern(plan: Sequence[LayerPosition], max_length: int | None = None) -> str:
    """The plan's letters (:func:`layer_letter`) as their shortest period times its count.

    ``"LLLLLG ×8"`` for Gemma 3 12B; a remainder is appended (``"LLLLLG ×10 + LL"``). A plan
    that does not repeat but falls into at most three runs is written as its runs
    (``"G ×14 + L ×14"`` for Qwen2 with ``max_window_layers = 14``).

    Parameters
    ----------
    plan : sequence of LayerPosition, length ≥ 1
        From :func:`position_plan`.
    max_length : int or None
        The config's ``max_position_embeddings`` (see :func:`window_binds`).

    Returns
    -------
    str
    """
    if isinstance(plan, (str, bytes)) or not isinstance(plan, Sequence) or not all(
        isinstance(e, LayerPosition) for e in plan
    ):
        raise TypeError(f"plan must be a list of LayerPosition, got {_describe(plan)}")
    if not plan:
        raise ValueError("plan must have at least one layer, got an empty list")
    letters = "".join(layer_letter(e, max_length) for e in plan)
    period = next(p for p in range(1, len(letters) + 1)
                  if all(c == letters[i % p] for i, c in enumerate(letters)))
    reps, rest = divmod(len(letters), period)
    if reps == 1:  # no repetition: a few long runs read better than the whole string
        runs = [(letter, len(list(group))) for letter, group in itertools.groupby(letters)]
        if len(runs) <= 3:
            return " + ".join(f"{letter} ×{count}" for letter, count in runs)
    return f"{letters[:period]} ×{reps}" + (f" + {letters[-rest:]}" if rest else "")


def temperature_cell(entry: LayerPosition) -> str:
    """The layer's length-related factors: ``"cos/sin × 1.347"``, ``"softmax × 1.813"``, a query
    scale, or ``"—"``.

    Parameters
    ----------
    entry : LayerPosition
        One layer of a plan.

    Returns
    -------
    str
    """
    _check_entry(entry)
    parts = []
    if not math.isclose(entry.attention_factor, 1.0):
        parts.append(f"cos/sin × {entry.attention_factor:.3f}")
    if not math.isclose(entry.softmax_scale_factor, 1.0):
        parts.append(f"softmax × {entry.softmax_scale_factor:.3f}")
    if entry.query_scale is not None:
        parts.append(entry.query_scale.describe())
    return ", ".join(parts) or "—"


def logit_gain(entry: LayerPosition) -> str:
    """The temperature's multiplier on the rotated part of a logit, :math:`a^2 m_s^2` · query scale.

    ``a`` (the factor on cos and sin) counts on RoPE layers only; a query scale is appended as
    its formula. ``"1"`` when nothing scales.

    Parameters
    ----------
    entry : LayerPosition
        One layer of a plan.

    Returns
    -------
    str
        ``"1.813"``, ``"(1 + 0.1·ln(1 + ⌊(m+1)/8192⌋))"``, or ``"1"``.
    """
    _check_entry(entry)
    gain = (entry.attention_factor**2 if entry.kind == "rope" else 1.0)
    gain *= entry.softmax_scale_factor
    text = "" if math.isclose(gain, 1.0) else f"{gain:.3f}"
    if entry.query_scale is not None:
        formula = entry.query_scale.describe().split(" × ", 1)[1]
        text = " · ".join(filter(None, [text, formula]))
    return text or "1"


def window_cell(entry: LayerPosition, max_length: int | None = None) -> str:
    """``"window 1 024"``, ``"chunk 8 192"``, ``"|m−n| < 512"`` (bidirectional) or ``"—"``.

    A window that never binds (:func:`window_binds`) says so.

    Parameters
    ----------
    entry : LayerPosition
        One layer of a plan.
    max_length : int or None
        The config's ``max_position_embeddings``.

    Returns
    -------
    str
    """
    _check_entry(entry)
    if entry.chunk:
        return f"chunk {entry.chunk:,}".replace(",", " ")
    if not entry.window:
        return "—"
    text = (f"|m−n| < {entry.window}" if entry.bidirectional
            else f"window {entry.window:,}".replace(",", " "))
    return text if window_binds(entry, max_length) else f"{text} ≥ max. length: never binds"


# _families._scaling_text's wording for a LongRoPE table chosen by length: "L ≤ 4 096;" or
# "L = 5 000 > 4 096)"; the group is the original length (PhiMoE's fixed table does not match).
_LONGROPE_SWITCH = re.compile(r"\(L (?:= [\d ]+ )?[≤>] ([\d ]+)[;)]")


def scaling_cell(entry: LayerPosition) -> str:
    """The rope type and factor (``"yarn ×32"``), with YaRN's β when it is not the usual 32/1.

    Kimi K2 reads ``"yarn ×32, β 1/1"``; a layer without scaling reads ``"none"``. A LongRoPE
    layer that switches tables at its original length reads ``"longrope: short ≤ 4 096 < long"``
    (Phi-3.5-mini), whatever ``seq_len`` the plan was made for.

    Parameters
    ----------
    entry : LayerPosition
        One layer of a plan.

    Returns
    -------
    str
    """
    _check_entry(entry)
    switch = _LONGROPE_SWITCH.search(entry.scaling or "")
    if entry.rope_type == "longrope" and switch is not None:
        return f"longrope: short ≤ {switch.group(1)} < long"
    head, *rest = (entry.scaling or "none").split(", ")
    betas = [r for r in rest if r.startswith("β ") and r != "β 32/1"]
    return ", ".join([head.split(" (")[0], *betas])


def per_kind_cells(
    plan: Sequence[LayerPosition],
    columns: Mapping[str, Callable[[LayerPosition, int | None], str]],
    max_length: int | None = None,
) -> list[str]:
    """One cell per column for a whole model: one value if every kind of layer shares it, else
    each kind's value after its letter (``"L: 10 000 · G: 1 000 000"``).

    The kinds are :func:`layer_letter`'s, each represented by its first layer; layers without
    attention have no cells.

    Parameters
    ----------
    plan : sequence of LayerPosition
        From :func:`position_plan`, with at least one attention layer.
    columns : mapping of str to callable
        Column name → ``cell(entry, max_length)`` (e.g. :func:`window_cell`).
    max_length : int or None
        The config's ``max_position_embeddings`` (see :func:`window_binds`).

    Returns
    -------
    list of str
        ``len(columns)`` cells, in the columns' order.
    """
    if isinstance(plan, (str, bytes)) or not isinstance(plan, Sequence) or not all(
        isinstance(e, LayerPosition) for e in plan
    ):
        raise TypeError(f"plan must be a list of LayerPosition, got {_describe(plan)}")
    if not isinstance(columns, Mapping) or not all(callable(c) for c in columns.values()):
        raise TypeError(f"columns must map names to callables, got {_describe(columns)}")
    kinds: dict[str, LayerPosition] = {}
    for entry in plan:
        if entry.kind != "no_attention":
            kinds.setdefault(layer_letter(entry, max_length), entry)
    if not kinds:
        raise ValueError("plan must have at least one attention layer")
    cells = []
    for cell in columns.values():
        values = {letter: cell(entry, max_length) for letter, entry in kinds.items()}
        cells.append(next(iter(values.values())) if len(set(values.values())) == 1
                     else " · ".join(f"{k}: {v}" for k, v in values.items()))
    return cells
