"""Checks folded, claims visible: a folded ``# Check:`` cell is labelled with what it checks.

_ext/check_toggles.py relabels myst-nb's "Show code cell source" toggle of a folded check with the
check's own comment; scripts/visible_code.py measures what a chapter shows (visible code lines and
asserts, folded lines) from the built HTML or the sources, and both must agree.
"""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

import pytest
from docutils import nodes

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "_ext"))

import check_toggles  # noqa: E402
import visible_code  # noqa: E402

import chapters  # noqa: E402  (scripts/ is not a package; it is put on the path above)


def test_a_check_is_labelled_with_its_opening_comment() -> None:
    source = (
        "# Check: the two formulas agree to rounding;\n"
        "#   nothing underflows.\n"
        "assert x == y  # not part of the label\n"
    )
    assert (
        check_toggles.check_label(source)
        == "Check: the two formulas agree to rounding; nothing underflows."
    )
    assert check_toggles.check_label("x = 1\n# Check: too late\n") is None
    assert check_toggles.check_label("# A comment\nassert True\n") is None
    long = "# Check: " + "word " * 60
    label = check_toggles.check_label(long)
    assert label is not None and label.endswith(" …") and len(label) < 175


def _cell(code: str, hide_mode: str | None) -> nodes.container:
    cell = nodes.container(
        nb_element="cell_code",
        prompt_show="Show code cell {type}",
        prompt_hide="Hide code cell {type}",
    )
    if hide_mode:
        cell["hide_mode"] = hide_mode
    source = nodes.container(nb_element="cell_code_source")
    source += nodes.literal_block(code, code)
    cell += source
    return cell


def test_only_folded_checks_are_relabelled() -> None:
    document = nodes.section()
    folded_check = _cell("# Check: R_m is orthogonal\nassert ok\n", "input")
    folded_other = _cell("import torch\n", "input")
    visible_check = _cell("# Check: shown on purpose\nassert ok\n", None)
    hidden_cell = _cell("# Check: a {type} in braces\n", "all")
    document += [folded_check, folded_other, visible_check, hidden_cell]
    assert check_toggles.label_checks(document) == 2
    assert folded_check["prompt_show"] == "Check: R_m is orthogonal"
    assert folded_check["prompt_hide"] == "Hide the check"
    assert folded_other["prompt_show"] == "Show code cell {type}"
    assert visible_check["prompt_show"] == "Show code cell {type}"
    # myst-nb fills "{type}" with "source": the check's own braces are kept apart.
    assert "{type}" not in hidden_cell["prompt_show"]


CHAPTER = """---
jupytext:
  text_representation:
    format_name: myst
---

# Title

```{code-cell} ipython3
:tags: [remove-cell]
# Setup
import sys
```

```{code-cell} ipython3
x = 1
assert x == 1

assert x > 0
```

```{code-cell} ipython3
:tags: [hide-input]
# Check: x is one
assert x == 1
```
"""


def test_visible_code_counts_from_the_cell_tags(tmp_path: Path) -> None:
    md = tmp_path / "01_a.md"
    md.write_text(CHAPTER, encoding="utf-8")
    counts = visible_code.from_source(md)
    assert (counts.visible_lines, counts.visible_asserts) == (4, 2)
    assert (counts.folded_lines, counts.folded_asserts, counts.removed_lines) == (2, 1, 2)


def test_visible_code_counts_from_the_page(tmp_path: Path) -> None:
    page = tmp_path / "01_a.html"
    page.write_text(
        '<div class="cell docutils container">\n<div class="cell_input docutils container">\n'
        '<div class="highlight"><pre><span></span>x <span class="o">=</span> 1\n'
        '<span class="k">assert</span> x &gt; 0\n</pre></div></div></div>\n'
        '<div class="cell tag_hide-input docutils container">\n'
        '<details class="admonition hide above-input">\n<summary>…</summary>\n'
        '<div class="cell_input docutils container">\n<div class="highlight"><pre>'
        '# Check: x\n<span class="k">assert</span> x\n</pre></div></div></details></div>\n',
        encoding="utf-8",
    )
    counts = visible_code.from_html(page)
    assert (counts.visible_lines, counts.visible_asserts) == (2, 1)
    assert (counts.folded_lines, counts.folded_asserts) == (2, 1)


BOOK_CHAPTERS = [md for md in chapters.notebook_chapters() if md.parent == chapters.CHAPTERS]


@pytest.mark.book
@pytest.mark.parametrize("md", BOOK_CHAPTERS, ids=[md.stem for md in BOOK_CHAPTERS])
def test_the_built_page_labels_its_folded_checks_and_shows_what_the_tags_say(md: Path) -> None:
    page = visible_code.HTML / "chapters" / f"{md.stem}.html"
    text = page.read_text(encoding="utf-8")
    toggles = re.findall(
        r'<details class="admonition hide[^"]*">\s*<summary[^>]*>\s*'
        r'<p class="collapsed admonition-title">(.*?)</p>.*?<pre>(.*?)</pre>',
        text,
        re.S,
    )
    for label, code in toggles:
        source = html.unescape(re.sub(r"<[^>]+>", "", code))
        expected = check_toggles.check_label(source)
        if expected is not None:
            assert html.unescape(label) == expected, (md.stem, label)
    built, tagged = visible_code.from_html(page), visible_code.from_source(md)
    assert (built.visible_lines, built.visible_asserts, built.folded_lines) == (
        tagged.visible_lines,
        tagged.visible_asserts,
        tagged.folded_lines,
    )
