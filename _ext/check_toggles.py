"""Sphinx extension: a folded check says what it checks.

A chapter folds the code that verifies a claim (``:tags: [hide-input]``) and opens that code with a
comment ``# Check: <what it checks>``. myst-nb labels every folded cell "Show code cell source";
this extension labels a folded check with its own words instead ("Check: the two formulas agree to
rounding; …"), so a reader sees what was verified without opening it, and opens it to see how.

It runs as a post-transform just before myst-nb's ``HideInputCells`` (priority 199), which builds
the ``<details>`` toggle from the cell's ``prompt_show``/``prompt_hide``.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

MARKER = "# Check:"
LIMIT = 160  # characters of the label; a longer comment is cut at a word, with an ellipsis


def check_label(source: str) -> str | None:
    """The toggle's label for a cell whose code is ``source``: "Check: …" from its opening comment
    (the ``# Check:`` line and the comment lines that continue it), or None for other cells."""
    lines = source.lstrip("\n").splitlines()
    if not lines or not lines[0].startswith(MARKER):
        return None
    words = [lines[0][len(MARKER) :].strip()]
    for line in lines[1:]:
        if not line.startswith("#") or line.startswith(MARKER):
            break
        words.append(line.lstrip("#").strip())
    text = re.sub(r"\s+", " ", " ".join(words)).strip()
    if len(text) > LIMIT:
        text = text[:LIMIT].rsplit(" ", 1)[0].rstrip(",;:") + " …"
    return "Check: " + text


def label_checks(document: nodes.Node) -> int:
    """Relabel every folded ``# Check:`` cell of ``document``; returns how many it labelled."""
    count = 0
    for node in document.findall(nodes.container):
        if node.get("nb_element") != "cell_code" or not node.get("hide_mode"):
            continue
        if not node.children or node.children[0].get("nb_element") != "cell_code_source":
            continue
        label = check_label(node.children[0].astext())
        if label is None:
            continue
        # myst-nb replaces "{type}" in a prompt ("source", "outputs"): a comment keeps its own.
        node["prompt_show"] = label.replace("{type}", "{ type }")
        node["prompt_hide"] = "Hide the check"
        count += 1
    return count


class LabelFoldedChecks(SphinxPostTransform):
    """Give each folded check the label its ``# Check:`` comment states."""

    default_priority = 198  # before myst_nb.sphinx_.HideInputCells (199)
    formats = ("html",)

    def run(self, **kwargs: Any) -> None:
        label_checks(self.document)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_post_transform(LabelFoldedChecks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
