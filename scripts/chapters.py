"""What a chapter is, in one place: used by `make sync` and by tests/test_notebooks.py.

A chapter is a MyST-markdown notebook (``chapters/**/*.md`` with a jupytext header). Its first code
cell is the setup cell, which installs ``posenc_lib[book]`` from the repository and branch
named in ``_config.yml`` when something a chapter imports is missing.
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


def _config() -> dict:
    return dict(yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8")))


def repository_url() -> str:
    """The repository URL: ``repository.url`` in ``_config.yml`` (the one place it is set)."""
    return str(_config()["repository"]["url"]).rstrip("/")


def repository_branch() -> str:
    """The branch (or tag) the chapters install the library from: ``repository.branch``."""
    return str(_config()["repository"].get("branch") or "main")


def library_version() -> str:
    """The version in ``pyproject.toml``: the library the chapters are written against."""
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    match = re.search(r'^version = "([^"]+)"', pyproject, re.M)
    if match is None:
        raise ValueError("pyproject.toml has no version line")
    return match.group(1)


# What a chapter imports beyond the standard library, and the oldest major version it needs:
# the `book` extra of pyproject.toml installs them (transformers 5: chapters 5-8 use its v5 API).
BOOK_MODULES = {"posenc_lib": 0, "torch": 0, "plotly": 6, "anywidget": 0, "transformers": 5}


def library_requirement(url: str | None = None, ref: str | None = None) -> str:
    """The pip requirement the setup cell installs: the library with its ``book`` extra."""
    return f"posenc_lib[book] @ git+{url or repository_url()}@{ref or repository_branch()}"


def setup_cell_source(
    url: str | None = None, ref: str | None = None, version: str | None = None
) -> str:
    """The exact source of every chapter's first code cell.

    When a module a chapter needs is missing or too old (a bare Colab or Binder runtime; Colab's
    own transformers may be 4.x), it installs the library with its ``book`` extra from the
    repository and branch named in ``_config.yml`` (so a fork or a release branch that sets them
    installs its own code); when everything is importable (the book build, ``make live``, a pip
    install) it installs nothing. Either way it prints the versions it runs with and the library
    version the chapter was written for. On Colab it turns on the widget manager the live
    explorers need.
    """
    requirement = library_requirement(url, ref)
    return (
        f"{SETUP_MARKER} in a bare Colab or Binder runtime (the book build has it).\n"
        "import importlib.metadata\n"
        "import importlib.util\n"
        "import subprocess\n"
        "import sys\n"
        "\n"
        f'LIBRARY = "{requirement}"\n'
        f'WRITTEN_FOR = "{version or library_version()}"\n'
        "# What the chapters import, with the oldest major version they work with:\n"
        f"NEEDS = {BOOK_MODULES!r}\n"
        "\n"
        "\n"
        "def _version(name):\n"
        '    return importlib.metadata.version(name.replace("_", "-"))\n'
        "\n"
        "\n"
        "def _major(name):\n"
        "    if importlib.util.find_spec(name) is None:\n"
        "        return -1\n"
        '    return int(_version(name).split(".")[0])\n'
        "\n"
        "\n"
        "if any(_major(name) < major for name, major in NEEDS.items()):\n"
        '    print(f"Installing {LIBRARY} ...")\n'
        '    subprocess.run([sys.executable, "-m", "pip", "install", "-q", LIBRARY], check=True)\n'
        '    importlib.invalidate_caches()\n'
        "# Colab draws ipywidgets 8 and anywidget only with its custom widget manager.\n"
        'if "google.colab" in sys.modules:\n'
        "    from google.colab import output\n"
        "\n"
        "    output.enable_custom_widget_manager()\n"
        'print(", ".join(f"{n} {_version(n)}" for n in NEEDS), f"(for posenc_lib {WRITTEN_FOR})")'

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


def fix_setup_cell(text: str, source: str | None = None) -> str:
    """Replace a chapter's setup cell code with ``source`` (default: :func:`setup_cell_source`).

    The setup cell runs from its marker line to the end of its code cell; the rest of the chapter
    is left as it is.
    """
    source = source or setup_cell_source()
    pattern = re.compile(re.escape(SETUP_MARKER) + r".*?(?=\n```)", re.S)
    return pattern.sub(lambda _: source, text, count=1)
