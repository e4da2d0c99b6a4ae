"""What a chapter is, in one place: used by `make sync` and by tests/test_notebooks.py.

A chapter is a MyST-markdown notebook (``chapters/**/*.md`` with a jupytext header). Its first code
cell is the setup cell, which installs ``posenc_lib`` from the repository named in ``_config.yml``.
Its paired ``.ipynb`` (for Colab and Binder) is generated from the ``.md`` and carries no outputs.
"""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"
SETUP_MARKER = "# Setup: makes posenc_lib importable"


def repository_url() -> str:
    """The repository URL: ``repository.url`` in ``_config.yml`` (the one place it is set)."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    return str(config["repository"]["url"]).rstrip("/")


def setup_cell_source(url: str | None = None) -> str:
    """The exact source of every chapter's first code cell."""
    url = url or repository_url()
    return (
        f"{SETUP_MARKER} in a bare Colab or Binder runtime (the book build has it).\n"
        "import importlib.util\n"
        "import subprocess\n"
        "import sys\n"
        "\n"
        'if importlib.util.find_spec("posenc_lib") is None:\n'
        "    subprocess.run(\n"
        '        [sys.executable, "-m", "pip", "install", "-q",\n'
        f'         "posenc_lib @ git+{url}"],\n'
        "        check=True,\n"
        "    )"
    )


def notebook_chapters(folder: Path = CHAPTERS) -> list[Path]:
    """Every chapter written as a notebook (markdown pages without a jupytext header are not).

    Hidden folders are skipped: JupyterLab's ``.ipynb_checkpoints/`` copies are not chapters.
    """
    return sorted(
        path
        for path in folder.rglob("*.md")
        if not any(part.startswith(".") for part in path.relative_to(folder).parts)
        and path.read_text(encoding="utf-8").startswith("---\njupytext:")
    )


def read_chapter(path: Path) -> nbformat.NotebookNode:
    return jupytext.read(path, fmt="md:myst")


def paired_notebook(path: Path) -> nbformat.NotebookNode:
    """The output-free notebook that ``make sync`` writes next to the chapter."""
    nb = read_chapter(path)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.id = f"cell-{index:03d}"  # stable ids keep the .ipynb diff-free between syncs
    # Colab shows cells with a form view collapsed: the setup cell stays out of the reader's way.
    first_code = next((c for c in nb.cells if c.cell_type == "code"), None)
    if first_code is not None and first_code.source.startswith(SETUP_MARKER):
        first_code.metadata["cellView"] = "form"
    nb.metadata.pop("jupytext", None)
    nb.metadata["colab"] = {"provenance": []}
    return nb


def notebook_text(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb, version=4) + "\n"


def fix_setup_cell_url(text: str, url: str) -> str:
    """Point a chapter's setup cell at ``url`` (the other chapters' text is left as it is)."""
    return re.sub(r'"posenc_lib @ git\+[^"]*"', f'"posenc_lib @ git+{url}"', text)
