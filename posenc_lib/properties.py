"""The numbers chapters 2 and 3 measure: how an encoding table fares against the wish list.

Every function takes a table ``(seq, dim)`` (one row per position, from any scheme in
:mod:`posenc_lib.schemes` or :mod:`posenc_lib.sinusoidal`) or the sinusoid's parameters, and returns
a number or a tensor of numbers. The chapters quote these numbers instead of adjectives:
"unbounded" becomes "the largest value is 999 at ``L = 1000``", "jumpy" becomes "neighbour steps
range from 1 to 3.16".

Distances are Euclidean and computed in float64.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence

import numpy as np
import torch

from ._validation import (
    check_base,
    check_dim,
    check_dtype,
    check_float_tensor,
    check_int,
    check_length,
    check_positions,
    check_positive_int,
    check_size,
)
from .sinusoidal import sinusoidal_frequencies, sinusoidal_table

__all__ = [
    "NumberTable",
    "div_term_errors",
    "div_term_exp_log",
    "div_term_max_abs_difference",
    "div_term_power",
    "div_term_reference",
    "dot_products_at_offset",
    "logit_terms",
    "markdown_table",
    "max_abs_value",
    "measure_scheme",
    "min_pairwise_distance",
    "nearest_row_distances",
    "neighbour_distances",
    "number_table",
    "offset_distances",
    "position_term_along_offset",
    "same_offset_gaps",
    "table_excerpt",
]


def _table(table: object, name: str = "table", *, min_rows: int = 0) -> torch.Tensor:
    """A 2-D floating table ``(seq, dim)`` as float64."""
    table = check_float_tensor(table, name, min_ndim=2)
    if table.ndim != 2:
        raise ValueError(f"{name} must have shape (seq, dim), got shape {tuple(table.shape)}")
    if table.shape[0] < min_rows:
        raise ValueError(
            f"{name} must have at least {min_rows} rows (positions), got {table.shape[0]} "
            f"(shape {tuple(table.shape)})"
        )
    return table.to(torch.float64)


# ------------------------------------------------------------------ the wish list, measured


def max_abs_value(table: torch.Tensor) -> float:
    """Largest ``|entry|`` of a table ``(seq, dim)``: boundedness in one number."""
    t = _table(table, min_rows=1)
    return float(t.abs().max())


def neighbour_distances(table: torch.Tensor) -> torch.Tensor:
    """``‖PE(p+1) − PE(p)‖`` for ``p = 0 … seq−2``: the step between consecutive positions.

    Parameters
    ----------
    table
        ``(seq, dim)`` with ``seq >= 2`` (one row has no neighbour).

    Returns
    -------
    torch.Tensor
        ``(seq − 1,)`` float64.
    """
    return offset_distances(_table(table, min_rows=2), 1)


def offset_distances(table: torch.Tensor, offset: int) -> torch.Tensor:
    """``‖PE(p+k) − PE(p)‖`` for every ``p`` with ``p + k`` in the table (``k = offset ≥ 0``).

    A translation-invariant encoding gives the same number for every ``p``.

    Returns
    -------
    torch.Tensor
        ``(seq − k,)`` float64.
    """
    t = _table(table)
    k = check_int(offset, "offset", minimum=0, what="an integer >= 0")
    if k >= t.shape[0]:
        raise ValueError(f"offset must be < seq = {t.shape[0]}, got {k}")
    return (t[k:] - t[: t.shape[0] - k]).norm(dim=-1)


def dot_products_at_offset(table: torch.Tensor, offset: int) -> torch.Tensor:
    """``PE(p) · PE(p+k)`` for every ``p`` with both positions in the table (``k`` may be < 0).

    Returns
    -------
    torch.Tensor
        ``(seq − |k|,)`` float64, indexed by the smaller of the two positions.
    """
    t = _table(table)
    k = check_int(offset, "offset")
    if abs(k) >= t.shape[0]:
        raise ValueError(f"|offset| must be < seq = {t.shape[0]}, got {k}")
    a, b = (t[: t.shape[0] - k], t[k:]) if k >= 0 else (t[-k:], t[: t.shape[0] + k])
    return (a * b).sum(dim=-1)


def min_pairwise_distance(table: torch.Tensor) -> float:
    """Smallest ``‖PE(p) − PE(q)‖`` over ``p ≠ q``: zero means two positions share a code.

    ``inf`` for a table with fewer than two rows.
    """
    t = _table(table)
    if t.shape[0] < 2:
        return math.inf
    check_size(("table.shape[0]", t.shape[0]), ("table.shape[0]", t.shape[0]),
               what="the (seq, seq) distance matrix")
    dist = torch.cdist(t, t)
    dist.fill_diagonal_(math.inf)
    return float(dist.min())


def nearest_row_distances(reference: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
    """For each row of ``query``, the distance to the closest row of ``reference``.

    Used for extrapolation: how far is a position never seen in training from every seen one?

    Parameters
    ----------
    reference
        ``(n_ref, dim)``, e.g. the table over the training positions.
    query
        ``(n_query, dim)``, e.g. the rows of positions beyond training.

    Returns
    -------
    torch.Tensor
        ``(n_query,)`` float64.
    """
    ref = _table(reference, "reference", min_rows=1)
    qry = _table(query, "query")
    if ref.shape[1] != qry.shape[1]:
        raise ValueError(
            f"reference and query must have the same dim, got {ref.shape[1]} and {qry.shape[1]}"
        )
    if qry.shape[0] == 0:
        return torch.zeros(0, dtype=torch.float64)
    check_size(("query.shape[0]", qry.shape[0]), ("reference.shape[0]", ref.shape[0]),
               what="the (n_query, n_ref) distance matrix")
    return torch.cdist(qry, ref).min(dim=-1).values


def same_offset_gaps(
    encoding: Callable[..., torch.Tensor],
    offset: int,
    lengths: Sequence[int],
    dim: int = 1,
    *,
    position: int = 0,
) -> torch.Tensor:
    """``‖PE(position+k) − PE(position)‖`` in tables of different lengths ``L``.

    For an encoding that is consistent across lengths every entry is the same; the normalised
    encoding ``p/(L−1)`` gives a gap that shrinks like ``1/(L−1)``.

    Parameters
    ----------
    encoding
        ``encoding(seq_len, dim) -> (seq_len, dim)``, e.g. ``normalized_encoding``.
    offset
        The offset ``k`` (>= 0).
    lengths
        Sequence lengths ``L`` to compare; each must exceed ``position + offset``.
    dim
        Feature dimension passed to ``encoding``.
    position
        The first position ``p`` (>= 0).

    Returns
    -------
    torch.Tensor
        ``(len(lengths),)`` float64.
    """
    if not callable(encoding):
        raise TypeError("encoding must be callable as encoding(seq_len, dim)")
    k = check_int(offset, "offset", minimum=0, what="an integer >= 0")
    p = check_int(position, "position", minimum=0, what="an integer >= 0")
    lengths = [check_length(n, "lengths[i]") for n in lengths]
    if not lengths:
        raise ValueError("lengths must not be empty")
    dim = check_positive_int(dim, "dim")
    for n in lengths:
        check_size(("lengths[i]", n), ("dim", dim), what="each (L, dim) table")
    gaps = []
    for n in lengths:
        if p + k >= n:
            raise ValueError(f"each length must exceed position + offset = {p + k}, got {n}")
        t = _table(encoding(n, dim))
        gaps.append(float((t[p + k] - t[p]).norm()))
    return torch.tensor(gaps, dtype=torch.float64)


def measure_scheme(table: torch.Tensor, *, offset: int = 1) -> dict[str, float]:
    """The wish-list numbers of one table ``(seq, dim)``, for a comparison table.

    Returns
    -------
    dict
        ``max_abs`` (boundedness), ``min_pair_distance`` (uniqueness), ``step_min`` /
        ``step_max`` (smallest and largest neighbour step: smoothness), and ``offset_spread``,
        the max minus min of ``‖PE(p+k) − PE(p)‖`` over ``p`` (0 for translation invariance).
    """
    t = _table(table, min_rows=2)
    steps = neighbour_distances(t)
    at_k = offset_distances(t, offset)
    return {
        "max_abs": max_abs_value(t),
        "min_pair_distance": min_pairwise_distance(t),
        "step_min": float(steps.min()),
        "step_max": float(steps.max()),
        "offset_spread": float(at_k.max() - at_k.min()),
    }


# ------------------------------------------------------------------ div_term, two ways


def div_term_exp_log(dim: int, base: float = 10000.0, dtype: torch.dtype = torch.float32
                     ) -> torch.Tensor:
    """``exp(2i · (−ln base / dim))`` in ``dtype``: the ``div_term`` of the Annotated Transformer.

    Returns
    -------
    torch.Tensor
        ``(dim // 2,)`` in ``dtype``; mathematically equal to :func:`div_term_power`.
    """
    return sinusoidal_frequencies(dim, base, method="exp_log", dtype=dtype)


def div_term_power(dim: int, base: float = 10000.0, dtype: torch.dtype = torch.float32
                   ) -> torch.Tensor:
    """``base ** (−2i / dim)`` in ``dtype``: the formula of the paper, evaluated directly.

    Returns
    -------
    torch.Tensor
        ``(dim // 2,)`` in ``dtype``.
    """
    return sinusoidal_frequencies(dim, base, method="power", dtype=dtype)


def div_term_reference(dim: int, base: float = 10000.0) -> np.ndarray:
    """``base ** (−2i / dim)`` in NumPy's extended precision (``longdouble``).

    On x86-64 Linux ``longdouble`` keeps 64 mantissa bits against float64's 53, enough to measure
    float64 rounding. Returns a ``(dim // 2,)`` ``np.longdouble`` array.
    """
    dim = check_dim(dim)
    base = check_base(base)
    two_i = np.arange(0, dim, 2).astype(np.longdouble)
    return np.exp(-two_i / np.longdouble(dim) * np.log(np.longdouble(base)))


def div_term_max_abs_difference(dim: int, base: float = 10000.0,
                                dtype: torch.dtype = torch.float32) -> float:
    """``max_i |exp_log_i − power_i|`` when both are computed in ``dtype``."""
    dtype = check_dtype(dtype)
    a = div_term_exp_log(dim, base, dtype).to(torch.float64)
    b = div_term_power(dim, base, dtype).to(torch.float64)
    return float((a - b).abs().max())


def div_term_errors(dim: int, base: float = 10000.0, dtype: torch.dtype = torch.float32
                    ) -> dict[str, float]:
    """Largest relative error of each ``div_term`` formula in ``dtype`` against the reference.

    Returns
    -------
    dict
        ``{"exp_log": …, "power": …, "eps": …}``, where ``eps`` is the machine epsilon of
        ``dtype`` (an error of about ``eps/2`` is a correctly rounded result).
    """
    dtype = check_dtype(dtype)
    ref = div_term_reference(dim, base)
    out = {}
    for name, fn in (("exp_log", div_term_exp_log), ("power", div_term_power)):
        got = fn(dim, base, dtype).to(torch.float64).numpy().astype(np.longdouble)
        out[name] = float(np.max(np.abs(got - ref) / ref))
    out["eps"] = float(torch.finfo(dtype).eps)
    return out


# ------------------------------------------------------------------ logits after projection


def logit_terms(
    x_q: torch.Tensor,
    x_k: torch.Tensor,
    pe_q: torch.Tensor,
    pe_k: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
) -> dict[str, torch.Tensor]:
    """The four terms of ``(W_q(x+p))ᵀ (W_k(y+q))`` when positions are added to embeddings.

    With ``A = W_qᵀ W_k`` (each ``W`` of shape ``(d_head, dim)``, acting as ``W @ x``):

    ``(x+p)ᵀ A (y+q) = xᵀAy + xᵀAq + pᵀAy + pᵀAq``.

    All vectors may carry leading batch dimensions ``(..., dim)``; they broadcast.

    Returns
    -------
    dict
        ``content`` (xᵀAy), ``content_position`` (xᵀAq), ``position_content`` (pᵀAy),
        ``position_position`` (pᵀAq), and their sum ``total``, each of the broadcast shape.
    """
    vecs = {}
    for name, v in (("x_q", x_q), ("x_k", x_k), ("pe_q", pe_q), ("pe_k", pe_k)):
        vecs[name] = check_float_tensor(v, name, min_ndim=1).to(torch.float64)
    mats = {}
    for name, w in (("w_q", w_q), ("w_k", w_k)):
        w = check_float_tensor(w, name, min_ndim=2)
        if w.ndim != 2:
            raise ValueError(f"{name} must have shape (d_head, dim), got {tuple(w.shape)}")
        mats[name] = w.to(torch.float64)
    if mats["w_q"].shape != mats["w_k"].shape:
        raise ValueError(
            f"w_q and w_k must have the same shape, got {tuple(mats['w_q'].shape)} "
            f"and {tuple(mats['w_k'].shape)}"
        )
    dim = mats["w_q"].shape[1]
    for name, v in vecs.items():
        if v.shape[-1] != dim:
            raise ValueError(f"{name} must have last dimension {dim}, got {tuple(v.shape)}")
    try:
        shape = torch.broadcast_shapes(*(v.shape[:-1] for v in vecs.values()))
    except RuntimeError:
        shapes = ", ".join(f"{name} {tuple(v.shape)}" for name, v in vecs.items())
        raise ValueError(f"x_q, x_k, pe_q, pe_k must broadcast, got {shapes}") from None
    check_size(("prod(x_q/x_k/pe_q/pe_k broadcast shape)", math.prod(shape)), ("dim", dim),
               what="each broadcast (..., dim) product")
    a = mats["w_q"].T @ mats["w_k"]  # (dim, dim)

    def bilinear(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return ((u @ a) * v).sum(-1)

    terms = {
        "content": bilinear(vecs["x_q"], vecs["x_k"]),
        "content_position": bilinear(vecs["x_q"], vecs["pe_k"]),
        "position_content": bilinear(vecs["pe_q"], vecs["x_k"]),
        "position_position": bilinear(vecs["pe_q"], vecs["pe_k"]),
    }
    terms["total"] = bilinear(vecs["x_q"] + vecs["pe_q"], vecs["x_k"] + vecs["pe_k"])
    return {name: t.expand(shape) for name, t in terms.items()}


def position_term_along_offset(
    matrix: torch.Tensor, offset: int, positions: torch.Tensor | Sequence[int],
    base: float = 10000.0,
) -> torch.Tensor:
    """``PE(m)ᵀ A PE(m+k)`` for each ``m`` in ``positions``: the position–position logit term.

    With ``A = I`` this is the plain dot product, which depends on ``k`` only. With a generic
    projection ``A = W_qᵀW_k`` it changes with ``m`` at fixed ``k``.

    Parameters
    ----------
    matrix
        ``A``, shape ``(dim, dim)``.
    offset
        The offset ``k`` (may be negative).
    positions
        Query positions ``m``, 1-D.
    base
        The sinusoid's base.

    Returns
    -------
    torch.Tensor
        ``(len(positions),)`` float64.
    """
    a = check_float_tensor(matrix, "matrix", min_ndim=2).to(torch.float64)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"matrix must be square (dim, dim), got {tuple(a.shape)}")
    dim = check_dim(a.shape[0], "matrix.shape[0]")
    k = check_int(offset, "offset")
    m = check_positions(positions)
    check_size(("len(positions)", m.shape[0]), ("dim", dim), what="the (seq, dim) tables")
    pe_m = sinusoidal_table(m.numel(), dim, base, dtype=torch.float64, positions=m)
    pe_n = sinusoidal_table(m.numel(), dim, base, dtype=torch.float64, positions=m + k)
    return ((pe_m @ a) * pe_n).sum(-1)


# ------------------------------------------------------------------ showing tables


def table_excerpt(
    table: torch.Tensor, *, first: int = 4, last: int = 2
) -> tuple[list[int], torch.Tensor]:
    """The first ``first`` and last ``last`` columns of a table ``(seq, dim)``.

    Returns
    -------
    (list of int, torch.Tensor)
        The column indices kept and the ``(seq, first + last)`` values.
    """
    t = check_float_tensor(table, "table", min_ndim=2)
    if t.ndim != 2:
        raise ValueError(f"table must have shape (seq, dim), got shape {tuple(t.shape)}")
    first = check_int(first, "first", minimum=0, what="an integer >= 0")
    last = check_int(last, "last", minimum=0, what="an integer >= 0")
    dim = t.shape[1]
    if first + last > dim:
        raise ValueError(
            f"table must have at least first + last = {first} + {last} = {first + last} columns "
            f"to show them, got {dim} (shape {tuple(t.shape)}); pass a smaller first or last"
        )
    cols = list(range(first)) + list(range(dim - last, dim))
    return cols, t[:, cols]


def _format_cells(
    rows: Sequence[Sequence[object]], headers: Sequence[str], digits: object
) -> tuple[list[str], list[list[str]]]:
    """Headers and rows as strings; floats with ``digits`` significant digits."""
    digits = check_int(digits, "digits", minimum=1, what="an integer >= 1")
    head = [str(h) for h in headers]

    def cell(v: object) -> str:
        if isinstance(v, torch.Tensor) and v.ndim == 0:
            v = v.item()
        if isinstance(v, float):
            if math.isinf(v) or math.isnan(v):
                return str(v)
            return f"{v:.{digits}g}"
        return str(v)

    body = []
    for row in rows:
        row = list(row)
        if len(row) != len(head):
            raise ValueError(f"each row must have {len(head)} cells, got {len(row)}: {row!r}")
        body.append([cell(v) for v in row])
    return head, body


def markdown_table(
    rows: Sequence[Sequence[object]], headers: Sequence[str], *, digits: int = 4
) -> str:
    """A Markdown table; floats are printed with ``digits`` significant digits."""
    head, body = _format_cells(rows, headers, digits)

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(head), "|" + "---|" * len(head), *(line(r) for r in body)])


class NumberTable:
    """A small table of measured numbers that displays as HTML in notebooks and in the book.

    (The book renders notebook Markdown output as CommonMark, which has no tables, so the
    table is shown as HTML; ``str()`` gives the Markdown form.)
    """

    def __init__(self, headers: list[str], rows: list[list[str]], markdown: str) -> None:
        self.headers, self.rows, self.markdown = headers, rows, markdown

    def _repr_html_(self) -> str:
        def tr(cells: list[str], tag: str) -> str:
            return "<tr>" + "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in cells) + "</tr>"

        body = "".join(tr(r, "td") for r in self.rows)
        return (f'<table class="table posenc-numbers"><thead>{tr(self.headers, "th")}</thead>'
                f"<tbody>{body}</tbody></table>")

    def __str__(self) -> str:
        return self.markdown

    def __repr__(self) -> str:
        return self.markdown


def number_table(
    rows: Sequence[Sequence[object]], headers: Sequence[str], *, digits: int = 4
) -> NumberTable:
    """A displayable table (HTML in a notebook or the book, Markdown as ``str``).

    Floats are printed with ``digits`` significant digits. Make it the last expression of a cell.
    """
    head, body = _format_cells(rows, headers, digits)
    return NumberTable(head, body, markdown_table(rows, headers, digits=digits))
