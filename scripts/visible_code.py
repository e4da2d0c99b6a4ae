"""How much code a chapter shows its reader: visible code lines, visible asserts, folded lines.

The book's rule: code shown to the reader teaches; the harness goes into folded cells
(``hide-input``, first line ``# Check: …``) or into tests/, and a chapter shows at most about ten
asserts, each a claim the reader should watch being verified. This prints, per chapter, the table
the integrator publishes:

    python scripts/visible_code.py            # from the built book (_build/html), else the sources
    python scripts/visible_code.py --source   # from the chapters' .md (cell tags)

Lines are source lines, as the page shows them. *Visible*: cells shown with their code.
*Folded*: code behind a toggle (``hide-input``, ``hide-cell``). Cells removed from the page
(``remove-cell``, ``remove-input``: the setup cell, glue-only cells) are counted apart.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import jupytext

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
ASSERT = re.compile(r"^\s*assert\b", re.M)
FOLDED_TAGS = {"hide-input", "hide-cell"}
REMOVED_TAGS = {"remove-cell", "remove-input"}


@dataclass
class Counts:
    chapter: str
    visible_lines: int = 0
    visible_asserts: int = 0
    folded_lines: int = 0
    folded_asserts: int = 0
    removed_lines: int = 0
    visible_cells: list[str] = field(default_factory=list)

    def add(self, source: str, where: str) -> None:
        lines = len(source.strip("\n").splitlines())
        asserts = len(ASSERT.findall(source))
        if where == "visible":
            self.visible_lines += lines
            self.visible_asserts += asserts
            self.visible_cells.append(source)
        elif where == "folded":
            self.folded_lines += lines
            self.folded_asserts += asserts
        else:
            self.removed_lines += lines


def from_source(md: Path) -> Counts:
    """Counts from the chapter's cell tags (what the build will show)."""
    counts = Counts(md.stem)
    for cell in jupytext.read(md, fmt="md:myst").cells:
        if cell.cell_type != "code":
            continue
        tags = set(cell.metadata.get("tags", []))
        where = "removed" if tags & REMOVED_TAGS else "folded" if tags & FOLDED_TAGS else "visible"
        counts.add(cell.source, where)
    return counts


CELL_INPUT = re.compile(r'<div class="cell_input[^"]*">.*?<pre>(?P<code>.*?)</pre>', re.S)


def from_html(page: Path) -> Counts:
    """Counts from a built page: a cell's code is folded when it sits in myst-nb's toggle."""
    counts = Counts(page.stem)
    text = page.read_text(encoding="utf-8")
    for match in CELL_INPUT.finditer(text):
        cell_start = text.rfind('<div class="cell ', 0, match.start())
        folded = '<details class="admonition hide' in text[cell_start : match.start()]
        code = html.unescape(re.sub(r"<[^>]+>", "", match.group("code")))
        counts.add(code, "folded" if folded else "visible")
    return counts


def table(rows: list[Counts], removed: bool) -> str:
    head = "| chapter | visible code lines | visible asserts | folded lines | folded asserts |"
    rule = "|---|---|---|---|---|"
    if removed:
        head += " removed lines |"
        rule += "---|"
    out = [head, rule]
    for c in rows:
        line = (
            f"| {c.chapter} | {c.visible_lines} | {c.visible_asserts} | {c.folded_lines} | "
            f"{c.folded_asserts} |"
        )
        out.append(line + (f" {c.removed_lines} |" if removed else ""))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--source",
        action="store_true",
        help="count from the chapters' .md (default: the built HTML if present)",
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "scripts"))
    from chapters import CHAPTERS, notebook_chapters

    chapters = [md for md in notebook_chapters() if md.parent == CHAPTERS]
    built = [HTML / "chapters" / f"{md.stem}.html" for md in chapters]
    if not args.source and all(page.exists() for page in built):
        print(f"From the built book ({HTML.relative_to(ROOT)}):")
        print(table([from_html(page) for page in built], removed=False))
    else:
        print("From the chapters' sources (cell tags):")
        print(table([from_source(md) for md in chapters], removed=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
