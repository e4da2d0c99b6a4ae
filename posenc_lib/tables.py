"""Small tables of measured numbers, for notebooks and the book (presentation only).

The measurements themselves live in :mod:`posenc_lib.properties` and the other core modules; this
module only formats them: :func:`number_table` shows rows of numbers as an HTML table (a notebook's
Markdown output is rendered as CommonMark, which has no tables), :func:`markdown_table` gives the
Markdown text, and :func:`table_excerpt` picks the first and last columns of a wide table.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import torch

from ._validation import check_float_tensor, check_int, check_sequence

__all__ = ["NumberTable", "markdown_table", "number_table", "table_excerpt"]


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
    head = [str(h) for h in check_sequence(headers, "headers", of="column names",
                                           allow_str=False)]
    rows = check_sequence(rows, "rows", of="rows", allow_str=False)

    def cell(v: object) -> str:
        if isinstance(v, torch.Tensor) and v.ndim == 0:
            v = v.item()
        if isinstance(v, float):
            if math.isinf(v) or math.isnan(v):
                return str(v)
            return f"{v:.{digits}g}"
        return str(v)

    body = []
    for index, row in enumerate(rows):
        row = check_sequence(row, f"rows[{index}]", of="cells", allow_str=False)
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

    Floats are printed with ``digits`` significant digits. A notebook shows the table only when it
    is the last expression of its cell (or is passed to ``display``); anywhere else it is built
    and silently dropped. ``tests/test_displayed_results.py`` refuses such a call in a chapter.
    """
    head, body = _format_cells(rows, headers, digits)
    return NumberTable(head, body, markdown_table(rows, headers, digits=digits))
