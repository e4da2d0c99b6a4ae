"""What a chapter is, in one place: used by `make sync` and by tests/test_notebooks.py.

A chapter is a MyST-markdown notebook (``chapters/**/*.md`` with a jupytext header). Its first code
cell is the setup cell, which installs ``posenc_lib[book]`` from the repository and branch
named in ``_config.yml`` when something a chapter imports is missing.
Its paired ``.ipynb`` (for Colab and Binder) is generated from the ``.md`` and carries no outputs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jupytext
import nbformat
import yaml
from reader_markdown import (
    GLUED,
    BuildGlue,
    GlueSource,
    Labels,
    Page,
    collect_labels,
    convert,
    parse_bib,
)

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"
# Where the book build (myst-nb) leaves the executed notebooks and their glued values.
EXECUTED = ROOT / "_build" / "jupyter_execute"
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
# the `book` extra of pyproject.toml installs them (transformers 5: chapters 5-8 use its v5 API;
# PIL: transformers' image processors, which chapter 11 runs, import it).
BOOK_MODULES = {"posenc_lib": 0, "torch": 0, "plotly": 6, "anywidget": 0, "transformers": 5,
                "PIL": 10}
# Import names whose installed distribution has another name.
DISTRIBUTIONS = {"PIL": "pillow"}


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
        "# What the chapters need, with the oldest major version they work with:\n"
        f"NEEDS = {BOOK_MODULES!r}\n"
        f"DISTRIBUTION = {DISTRIBUTIONS!r}\n"
        "\n"
        "\n"
        "def _version(name):\n"
        '    return importlib.metadata.version(DISTRIBUTION.get(name, name.replace("_", "-")))\n'
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


def book_url() -> str:
    """The published book: ``html.baseurl`` in ``_config.yml`` when set, else the GitHub Pages
    address of ``repository.url`` (where ``.github/workflows/pages.yml`` publishes it)."""
    config = _config()
    base = str((config.get("html") or {}).get("baseurl") or "").rstrip("/")
    if base:
        return base
    match = re.match(r"https://github\.com/([^/]+)/([^/]+)$", repository_url())
    if match is None:
        raise ValueError("set html.baseurl in _config.yml: the repository is not on GitHub")
    return f"https://{match.group(1)}.github.io/{match.group(2)}"


def book_docs() -> list[str]:
    """Every page of the book in the table of contents' order (``chapters/03_sinusoidal``)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    docs = [toc["root"]]
    for part in toc.get("parts", []):
        docs += [entry["file"] for entry in part.get("chapters", [])]
    # Pages not (yet) in the table of contents still resolve, after the listed ones.
    others = sorted(str(p.relative_to(ROOT).with_suffix("")) for p in CHAPTERS.rglob("*.md")
                    if ".ipynb_checkpoints" not in p.parts)
    return docs + [d for d in others if d not in docs]


def book_labels() -> Labels:
    return collect_labels(ROOT, book_docs())


def math_macros() -> dict[str, str]:
    """The book's argument-free MathJax macros (``sphinx.config.mathjax3_config``)."""
    config = _config().get("sphinx", {}).get("config", {})
    macros = config.get("mathjax3_config", {}).get("tex", {}).get("macros", {})
    return {name: value for name, value in macros.items() if isinstance(value, str)}


def bibliography() -> dict[str, dict[str, str]]:
    return parse_bib((ROOT / "references.bib").read_text(encoding="utf-8"))


def reader_intro(doc: str, title: str) -> str:
    """The visible first cell of a notebook twin: what it runs with and how it gets it."""
    return (
        "**Running this notebook** (Colab, Binder, Jupyter). The first code cell installs what "
        "the chapters need when it is missing — the library with its `book` extra (live "
        "widgets, plotly, transformers 5):\n\n"
        f"```\npip install \"{library_requirement()}\"\n```\n\n"
        "and prints the versions it runs with. torch comes with Colab and Binder; elsewhere "
        "install the CPU build first (see the book's "
        f"[install page]({book_url()}/chapters/appendix/install.html)). "
        f"This notebook is generated from the book's page [{title}]({book_url()}/{doc}.html); "
        "solutions to the exercises are folded: click to open them."
    )


def _hide(cell: nbformat.NotebookNode, source: bool, outputs: bool) -> None:
    """JupyterLab's own fold marks: the cell stays, its code (or output) starts folded."""
    if source:
        cell.metadata.setdefault("jupyter", {})["source_hidden"] = True
    if outputs:
        cell.metadata.setdefault("jupyter", {})["outputs_hidden"] = True


FOLDED_SOURCE = {"remove-cell", "remove-input", "hide-input", "hide-cell"}


def paired_notebook(
    path: Path,
    labels: Labels | None = None,
    bib: dict[str, dict[str, str]] | None = None,
    glue: GlueSource | None = None,
) -> nbformat.NotebookNode:
    """The output-free notebook that ``make sync`` writes next to the chapter.

    Its markdown is plain Jupyter markdown (see ``reader_markdown``): links, (Author, year)
    citations with a reference list, admonitions as blockquotes, solutions folded in
    ``<details>``, glued numbers filled in from the executed build (``glue``, default
    :data:`EXECUTED`; a chapter without glue needs no build). A visible first cell says what the
    setup cell installs. Cells the book hides keep their code, folded
    (``remove-cell``/``hide-*``/``remove-input`` tags): JupyterLab's ``source_hidden`` and
    Colab's ``cellView: form``.
    """
    nb = read_chapter(path)
    doc = str(path.relative_to(ROOT).with_suffix(""))
    page = Page(doc, labels or book_labels(), bib or bibliography(), book_url(), math_macros(),
                glue=glue or BuildGlue(EXECUTED))
    cells = []
    for cell in nb.cells:
        tags = set(cell.metadata.get("tags", []))
        if cell.cell_type == "markdown":
            if "remove-cell" in tags:
                continue  # book-only text
            cell.source = convert(cell.source, page)
        elif cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
            folded = bool(tags & FOLDED_SOURCE)
            _hide(cell, source=folded,
                  outputs=bool(tags & {"remove-output", "hide-output", "hide-cell"}))
            if folded:
                # Colab's own fold: the code starts collapsed (a checked claim's harness).
                cell.metadata["cellView"] = "form"
        cells.append(cell)
    first_code = next((i for i, c in enumerate(cells) if c.cell_type == "code"), None)
    if first_code is not None and cells[first_code].source.startswith(SETUP_MARKER):
        # Colab shows cells with a form view collapsed: the setup cell stays out of the way.
        cells[first_code].metadata["cellView"] = "form"
        heading = re.search(r"^# (.+)$", "\n".join(c.source for c in cells
                                                     if c.cell_type == "markdown"), re.M)
        title = heading.group(1).strip() if heading else doc
        cells.insert(first_code, nbformat.v4.new_markdown_cell(reader_intro(doc, title)))
    if page.cited:
        cells.append(nbformat.v4.new_markdown_cell(page.references()))
    for index, cell in enumerate(cells):
        cell.id = f"cell-{index:03d}"  # stable ids keep the .ipynb diff-free between syncs
    nb.cells = cells
    nb.metadata.pop("jupytext", None)
    nb.metadata["colab"] = {"provenance": []}
    return nb


def without_glued_values(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` whose glued values (``<span title="computed: …">``) read ``…``.

    Two twins generated from the same ``.md`` on two machines differ at most there (a float's
    last digit): tests/test_notebooks.py compares twins through this, and the values themselves
    against the build with a tolerance of one unit in the last digit shown.
    """
    copy = nbformat.from_dict(json.loads(json.dumps(nb)))
    for cell in copy.cells:
        if cell.cell_type == "markdown":
            cell.source = GLUED.sub(lambda m: m.group(0).replace(
                f">{m.group('value')}</span>", ">…</span>"), cell.source)
    return copy


ROUNDING_NOISE = 1e-4  # below this, a number printed as 1.2e-06 is rounding error (see below)

_NUMBER = re.compile(
    r"^(?P<sign>[-+\u2212]?)(?P<int>\d[\d,\u2009\u202f ]*)(?:\.(?P<frac>\d+))?"
    r"(?:[eE](?P<exp>[-+]?\d+))?(?P<pct>%?)$")


def glued_values_agree(shown: str, built: str) -> bool:
    """Whether a twin's glued value ``shown`` is the build's ``built`` up to the last digit.

    Equal strings agree; two numbers written alike (same decimals, both or neither a percentage)
    agree when they differ by at most one unit in the last digit shown (``0.526``/``0.527``,
    ``283``/``284``, ``4.50e-03``/``4.51e-03``), which is all that floating-point noise between two
    CPUs can do to a rounded value. Anything else (``0.526``/``0.53``, ``0.95``/``0.84``) disagrees.

    One exception: two values written in scientific notation that both lie below
    ``ROUNDING_NOISE`` in magnitude agree (``2.1e-06``/``2.6e-06``). The book prints such numbers
    only as rounding error (a float32 round trip, a step-by-step decode against a full pass), and
    their digits depend on the CPU's vector width and summation order, not on the book; the check
    cell beside each one asserts the bound the prose relies on.
    """
    if shown == built:
        return True
    a, b = _NUMBER.match(shown.strip()), _NUMBER.match(built.strip())
    if a is None or b is None or a["pct"] != b["pct"]:
        return False
    if len(a["frac"] or "") != len(b["frac"] or ""):
        return False

    def value_and_unit(m: re.Match[str]) -> tuple[float, float]:
        digits = re.sub(r"[^\d]", "", m["int"])
        sign = "-" if m["sign"] in "-\u2212" and m["sign"] else ""
        exponent = int(m["exp"] or 0)
        frac = m["frac"] or ""
        return float(f"{sign}{digits}.{frac or 0}e{exponent}"), 10.0 ** (exponent - len(frac))

    (x, unit_x), (y, unit_y) = value_and_unit(a), value_and_unit(b)
    if a["exp"] is not None and b["exp"] is not None and max(abs(x), abs(y)) < ROUNDING_NOISE:
        return True
    return abs(x - y) <= max(unit_x, unit_y) * (1 + 1e-9)


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
