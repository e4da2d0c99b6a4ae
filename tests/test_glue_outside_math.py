"""A glued number is never written inside math: MathJax would show the raw ``{glue:text}`` role.

myst-nb substitutes ``{glue:text}`key``` only in prose; inside ``$…$`` or ``$$…$$`` the role
reaches the page as literal markup (chapter 6 once showed three of them).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "chapters").rglob("*.md"))

_FENCE = re.compile(r"^(```|~~~).*?^\1\s*$", re.S | re.M)
_DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.S)
_INLINE = re.compile(r"(?<![\\$])\$(?!\$)((?:\\.|[^$\\])+?)\$", re.S)


def glue_roles_in_math(text: str) -> list[tuple[int, str]]:
    """Line numbers and spans of math (inline or display) that hold a ``{glue:`` role."""
    # Blank out fenced blocks (code cells, {math} directives hold no glue) but keep line numbers.
    text = _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    found = []
    for pattern in (_DISPLAY, _INLINE):
        for match in pattern.finditer(text):
            if "{glue" in match.group(1):
                found.append((text.count("\n", 0, match.start()) + 1, match.group(0)[:80]))
        # Display math is blanked before the inline scan, whose single $ would pair across it.
        text = pattern.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return found


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_glue_role_inside_math(path: Path) -> None:
    assert glue_roles_in_math(path.read_text(encoding="utf-8")) == []


def test_the_detector_finds_glue_in_inline_and_display_math() -> None:
    text = (
        "shape $(1, 32, {glue:text}`n:.0f`, 128)$ and $x$\n"
        "a {glue:text}`ok:.2f` outside, $a$ and $b$\n"
        "$$\nL = {glue:text}`big`\n$$\n"
        "```{code-cell} ipython3\nprint('$ {glue:text}`x` $')\n```\n"
    )
    found = glue_roles_in_math(text)
    assert [line for line, _ in found] == [3, 1]
