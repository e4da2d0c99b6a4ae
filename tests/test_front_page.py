"""The README and CONTRIBUTING say what the book has: checked against the chapters themselves.

- README's table of movable figures and live explorers (``scripts/interactive_figures.py``): the
  explorers each chapter's code calls (from the sources, always), and the figures with a slider or
  a menu on each built page (needs ``make book``).
- README and the install page give the two-line CPU install (PyTorch's CPU wheel index, then the
  library), pinned to the torch the reader's set pins.
- CONTRIBUTING lists every chapter label that exists.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import interactive_figures as figures  # noqa: E402  (a script, not a package)

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _readme_rows() -> dict[str, list[str]]:
    rows = {}
    for line in figures.readme_table(README).splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        rows[cells[0]] = cells
    return rows


def test_readme_names_each_pages_live_explorers() -> None:
    """The last column of README's table is the explorers each page's code cells call."""
    readme = _readme_rows()
    expected = {row.title: row.markdown() for row in figures.rows(with_counts=False)}
    for title, line in expected.items():
        live = line.strip().strip("|").split("|")[-1].strip()
        if title not in readme:
            # A page without figures is left out of the table; it must not call an explorer.
            assert live == "none", f"{title!r} calls {live} but is not in README's table"
            continue
        assert readme[title][-1] == live, f"README's live explorers for {title!r}"
    assert set(readme) <= set(expected), (
        f"README lists pages the book lacks: {set(readme) - set(expected)}"
    )


def test_the_explorer_scan_sees_calls_not_imports_or_comments() -> None:
    source = (
        "```{code-cell} ipython3\nfrom posenc_lib.widgets import heatmap_explorer\n"
        "# decay_explorer() is in chapter 5\nw = heatmap_explorer(d=64)\nrope_calculator()\n```\n"
        "Prose that mentions spiral_explorer() is not code.\n"
    )
    assert figures.live_explorers(source) == ("heatmap_explorer", "rope_calculator")


def test_every_explorer_the_table_names_is_a_live_widget() -> None:
    from posenc_lib import widgets

    named = {name for row in figures.rows(with_counts=False) for name in row.explorers}
    assert named, "no chapter calls an explorer: the scan is broken"
    assert named <= set(widgets.__all__), named - set(widgets.__all__)


@pytest.mark.book
def test_readme_counts_each_pages_movable_figures() -> None:
    """README's table is the one the built book gives: figures, with a slider, with a menu."""
    from bookpages import require_build

    require_build()
    assert figures.readme_table(README) == figures.table(), (
        "README's table is out of date: run `python scripts/interactive_figures.py --write`"
    )


def test_contributing_lists_every_chapter_label() -> None:
    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    listed = contributing.split("Labels that exist", 1)[1].split("Refer with", 1)[0]
    sources = [*(ROOT / "chapters").glob("*.md"), *(ROOT / "chapters" / "appendix").glob("*.md")]
    labels = {
        label
        for path in sources
        for label in re.findall(r"^\((ch-[a-z0-9-]+)\)=", path.read_text(encoding="utf-8"), re.M)
    }
    missing = sorted(label for label in labels if f"`{label}`" not in listed)
    assert missing == [], f"CONTRIBUTING.md does not list {missing}"
    stale = sorted(set(re.findall(r"`(ch-[a-z0-9-]+)`", listed)) - labels)
    assert stale == [], f"CONTRIBUTING.md lists labels no chapter has: {stale}"


CPU_INDEX = "--index-url https://download.pytorch.org/whl/cpu"
LIBRARY = '"posenc_lib @ git+https://github.com/positional-encoding-book/positional-encoding-book"'


@pytest.mark.parametrize("path", ["README.md", "chapters/appendix/install.md"])
def test_the_cpu_install_is_two_lines_torch_first_at_the_pinned_version(path: str) -> None:
    """torch from PyTorch's CPU index at the version the reader's set pins, then the library."""
    pinned = re.search(
        r"^torch==(\S+)", (ROOT / "requirements" / "reader.txt").read_text(encoding="utf-8"), re.M
    )
    assert pinned, "requirements/reader.txt pins no torch"
    lines = [line.strip() for line in (ROOT / path).read_text(encoding="utf-8").splitlines()]
    torch_line = f"pip install torch=={pinned.group(1)} {CPU_INDEX}"
    assert torch_line in lines, f"{path} lacks `{torch_line}`"
    after = lines[lines.index(torch_line) + 1]
    assert after == f"pip install {LIBRARY}", f"{path}: the library line must follow, got {after!r}"
