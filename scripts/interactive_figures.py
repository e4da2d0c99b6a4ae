"""Which figures a reader can move, chapter by chapter: the README's table, from the book itself.

Two sources, so that the README never promises more than there is:

- the chapters' sources (``chapters/*.md``): the live explorers each one calls
  (``posenc_lib.widgets``: ``*_explorer(...)`` and ``rope_calculator(...)``), which recompute at any
  value in a notebook (Jupyter, Colab, Binder) and are static figures with precomputed sliders in
  the book;
- the built book (``_build/html``, after ``make book``): how many figures each page draws, and how
  many of them have a slider or a dropdown menu in the static page.

``python scripts/interactive_figures.py`` prints the table; ``--write`` puts it into README.md
between its ``interactive-figures`` markers. ``tests/test_front_page.py`` checks that the README's
table is this one (the explorers column from the sources alone; the counts need the build).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
README = ROOT / "README.md"
START = "<!-- interactive-figures:start (scripts/interactive_figures.py --write) -->"
END = "<!-- interactive-figures:end -->"
HEADER = (
    "| page | figures | with a slider | with a menu | live explorers (recompute in a notebook) |\n"
    "|---|---|---|---|---|"
)
# A code cell of a MyST chapter, and an explorer called in it (not imported, not in a comment).
CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)
CALL = re.compile(r"^(?!\s*(?:#|from |import ))[^\n#]*?\b(\w+_explorer|rope_calculator)\(", re.M)
FIGURE_ID = re.compile(r'data-plotly-figure="(fig-[0-9a-f]+)"')


@dataclass(frozen=True)
class Row:
    page: str  # the _toc.yml entry, e.g. "chapters/08_long_context"
    title: str
    explorers: tuple[str, ...]
    figures: int | None = None  # None: the book is not built
    with_slider: int | None = None
    with_menu: int | None = None

    def markdown(self) -> str:
        def count(n: int | None) -> str:
            return "?" if n is None else str(n)

        live = ", ".join(f"`{name}`" for name in self.explorers) or "none"
        return (
            f"| {self.title} | {count(self.figures)} | {count(self.with_slider)} | "
            f"{count(self.with_menu)} | {live} |"
        )


def toc_pages() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    pages = [toc["root"]]
    for part in toc.get("parts", []):
        pages += [chapter["file"] for chapter in part.get("chapters", [])]
    return pages


def title_of(source: str) -> str:
    match = re.search(r"^# (.+)$", source, re.M)
    return match.group(1).strip() if match else "?"


def live_explorers(source: str) -> tuple[str, ...]:
    """The explorers a chapter's code cells call, in order of first call."""
    names: list[str] = []
    for cell in CODE_CELL.findall(source):
        for name in CALL.findall(cell):
            if name not in names:
                names.append(name)
    return tuple(names)


def _figure_layout(figure_id: str) -> dict:
    script = (HTML / "_figures" / f"{figure_id}.js").read_text(encoding="utf-8")
    return json.loads(script.split("] = ", 1)[1].rstrip().rstrip(";")).get("layout", {})


def page_figures(page: str) -> tuple[int, int, int] | None:
    """(figures, with a slider, with a dropdown menu) on the built page; None if not built."""
    html = HTML / f"{page}.html"
    if not html.is_file():
        return None
    layouts = [_figure_layout(i) for i in FIGURE_ID.findall(html.read_text(encoding="utf-8"))]
    sliders = sum(1 for layout in layouts if layout.get("sliders"))
    menus = sum(
        1
        for layout in layouts
        if any(menu.get("type") != "buttons" for menu in layout.get("updatemenus", []))
    )
    return len(layouts), sliders, menus


def rows(with_counts: bool = True) -> list[Row]:
    out = []
    for page in toc_pages():
        source = (ROOT / f"{page}.md").read_text(encoding="utf-8")
        counts = page_figures(page) if with_counts else None
        figures, with_slider, with_menu = counts if counts else (None, None, None)
        if page.endswith("appendix/api") or (counts is not None and figures == 0):
            continue  # the API reference names explorers; pages without figures are not listed
        out.append(
            Row(page, title_of(source), live_explorers(source), figures, with_slider, with_menu)
        )
    return out


def table(with_counts: bool = True) -> str:
    return "\n".join([HEADER, *(row.markdown() for row in rows(with_counts))])


def readme_table(readme: str) -> str:
    """The table between the README's markers."""
    if START not in readme or END not in readme:
        raise ValueError(f"README.md has no {START!r} … {END!r} block")
    return readme.split(START, 1)[1].split(END, 1)[0].strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update README.md's table")
    args = parser.parse_args()
    if not (HTML / "index.html").is_file():
        print("the book is not built (make book): figure counts are shown as ?", file=sys.stderr)
    text = table()
    if not args.write:
        print(text)
        return 0
    readme = README.read_text(encoding="utf-8")
    old = readme_table(readme)
    head, rest = readme.split(START, 1)
    tail = rest.split(END, 1)[1]
    README.write_text(f"{head}{START}\n{text}\n{END}{tail}", encoding="utf-8")
    print("README.md: table updated" if old != text else "README.md: table already current")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
