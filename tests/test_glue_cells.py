"""A glue call never prints a loose number under a cell.

``posenc_lib.glue.glue`` returns the value it stores, so a bare ``glue(...)`` as the last statement
of a code cell is the cell's displayed result: the reader sees a raw number such as
``0.4729987009288021`` under a folded check. Write ``_ = glue(...)`` or glue before the end.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").rglob("*.md"))
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.M | re.S)


def _cells(path: Path) -> list[str]:
    cells = []
    for body in CELL.findall(path.read_text(encoding="utf-8")):
        lines = [line for line in body.splitlines() if not line.startswith(":")]
        cells.append("\n".join(lines))
    return cells


def _ends_with_bare_glue(source: str) -> bool:
    if re.search(r"^\s*[%!]", source, re.M):  # IPython magics: not plain Python
        return False
    tree = ast.parse(source)
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return False
    call = tree.body[-1].value
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            and call.func.id == "glue")


def test_the_rule_sees_a_bare_glue_and_spares_an_assignment() -> None:
    assert _ends_with_bare_glue('x = 1\nglue("x", x)')
    assert not _ends_with_bare_glue('_ = glue("x", 1)')
    assert not _ends_with_bare_glue('glue("x", 1)\nassert True')


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_cell_ends_with_a_bare_glue_call(path: Path) -> None:
    offenders = [cell.splitlines()[-1] for cell in _cells(path) if _ends_with_bare_glue(cell)]
    assert not offenders, f"{path.name}: cells ending in a bare glue(...) print it: {offenders}"
