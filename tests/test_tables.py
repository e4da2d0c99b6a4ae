"""Presentation helpers: tables of measured numbers."""

from __future__ import annotations

import math

import pytest
import torch

from posenc_lib.sinusoidal import sinusoidal_table
from posenc_lib.tables import markdown_table, number_table, table_excerpt

F64 = torch.float64


def test_table_excerpt_and_markdown():
    t = sinusoidal_table(3, 512, dtype=F64)
    cols, vals = table_excerpt(t, first=4, last=2)
    assert cols == [0, 1, 2, 3, 510, 511]
    assert torch.equal(vals, t[:, cols])
    assert vals[1, 0].item() == pytest.approx(math.sin(1.0))
    rows = [["我", 0.123456, 1], ["a|b", float("inf"), 2]]
    md = markdown_table(rows, ["token", "v", "n"], digits=3)
    assert md.splitlines()[0] == "| token | v | n |"
    assert "0.123" in md and "a\\|b" in md and "inf" in md
    with pytest.raises(ValueError, match="cells"):
        markdown_table([[1, 2]], ["a"])
    table = number_table([["<b>", 1.5]], ["x", "y"], digits=2)
    html = table._repr_html_()
    assert html.startswith("<table") and "&lt;b&gt;" in html and "<td>1.5</td>" in html
    assert str(table) == markdown_table([["<b>", 1.5]], ["x", "y"], digits=2)
    with pytest.raises(ValueError, match="digits"):
        number_table([[1]], ["a"], digits=0)
    with pytest.raises(ValueError, match="first"):
        table_excerpt(t, first=400, last=200)
