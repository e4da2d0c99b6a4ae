"""A table or figure a chapter builds is shown, never silently dropped.

``number_table`` and ``show`` return an object that a notebook displays only when it is the value
of the *last* expression of its cell (or is passed to ``display``). Anywhere else it is built and
thrown away: the page shows nothing, while the prose still says "the table below". This test reads
every code cell of every chapter and names each such call that is not displayed.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").rglob("*.md"))
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.M | re.S)
DISPLAYED_ONLY_LAST = {"number_table", "show", "explorer"}


def _cells(path: Path) -> list[str]:
    cells = []
    for body in CELL.findall(path.read_text(encoding="utf-8")):
        lines = [line for line in body.splitlines() if not line.startswith(":")]
        cells.append("\n".join(lines))
    return cells


def _name(call: ast.expr) -> str | None:
    if not isinstance(call, ast.Call):
        return None
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def dropped_displays(source: str) -> list[str]:
    """The calls of ``source`` whose displayable result is thrown away, as source lines.

    A bare ``number_table(...)`` / ``show(...)`` statement is shown only when it is the last
    top-level statement of the cell; an assignment of one is shown only if the name is used again.
    """
    if re.search(r"^\s*[%!]", source, re.M):  # IPython magics: not plain Python
        return []
    tree = ast.parse(source)
    last = tree.body[-1] if tree.body else None
    lines = source.splitlines()
    dropped = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and _name(node.value) in DISPLAYED_ONLY_LAST:
            if node is not last:
                dropped.append(lines[node.lineno - 1].strip())
        elif isinstance(node, ast.Assign) and _name(node.value) in DISPLAYED_ONLY_LAST:
            names = {t.id for t in node.targets if isinstance(t, ast.Name)}
            used = {
                n.id
                for n in ast.walk(tree)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
            }
            if names and not names & used:
                dropped.append(lines[node.lineno - 1].strip())
    return dropped


def test_the_rule_sees_a_dropped_table_and_spares_a_shown_one() -> None:
    assert dropped_displays('number_table(rows, ["a"])\nprint("done")') == [
        'number_table(rows, ["a"])'
    ]
    assert dropped_displays("for x in xs:\n    show(fig(x))\ny = 1") == ["show(fig(x))"]
    assert dropped_displays('t = number_table(rows, ["a"])\nprint(1)') == [
        't = number_table(rows, ["a"])'
    ]
    assert dropped_displays('x = 1\nnumber_table(rows, ["a"])') == []
    assert dropped_displays('display(number_table(rows, ["a"]))\nprint(1)') == []
    assert dropped_displays('t = number_table(rows, ["a"])\nprint(1)\nt') == []


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_table_or_figure_is_built_and_dropped(path: Path) -> None:
    offenders = [line for cell in _cells(path) for line in dropped_displays(cell)]
    assert not offenders, (
        f"{path.name}: these tables/figures are built but not displayed (make each the last "
        f"expression of its cell, or wrap it in display(...)): {offenders}"
    )
