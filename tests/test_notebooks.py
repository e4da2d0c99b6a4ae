"""Chapters: every .md has an output-free, in-sync .ipynb, and the setup cell the book promises."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import chapters  # noqa: E402  (scripts/ is not a package; it is put on the path above)

NOTEBOOK_CHAPTERS = chapters.notebook_chapters()
IDS = [str(p.relative_to(ROOT)) for p in NOTEBOOK_CHAPTERS]


def toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [entry["file"] for entry in part.get("chapters", [])]
    return files


def test_there_are_chapters() -> None:
    assert len(NOTEBOOK_CHAPTERS) >= 1


@pytest.mark.parametrize("md", NOTEBOOK_CHAPTERS, ids=IDS)
def test_paired_notebook_is_in_sync(md: Path) -> None:
    ipynb = md.with_suffix(".ipynb")
    assert ipynb.exists(), f"{ipynb.name} is missing: run `make sync`"
    expected = chapters.notebook_text(chapters.paired_notebook(md))
    assert ipynb.read_text(encoding="utf-8") == expected, f"{ipynb.name} is stale: run `make sync`"


@pytest.mark.parametrize("md", NOTEBOOK_CHAPTERS, ids=IDS)
def test_committed_notebook_has_no_outputs(md: Path) -> None:
    nb = json.loads(md.with_suffix(".ipynb").read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None


@pytest.mark.parametrize("md", NOTEBOOK_CHAPTERS, ids=IDS)
def test_first_code_cell_is_the_hidden_setup_cell(md: Path) -> None:
    nb = chapters.read_chapter(md)
    first = next(c for c in nb.cells if c.cell_type == "code")
    assert first.source == chapters.setup_cell_source(), "run `make sync` to refresh the setup cell"
    assert "remove-cell" in first.metadata.get("tags", [])


@pytest.mark.parametrize("md", NOTEBOOK_CHAPTERS, ids=IDS)
def test_chapter_has_a_label_before_its_title(md: Path) -> None:
    nb = chapters.read_chapter(md)
    first = nb.cells[0]
    assert first.cell_type == "markdown"
    lines = first.source.splitlines()
    assert lines[0].startswith("(ch-") and lines[0].endswith(")="), lines[0]
    assert lines[1].startswith("# ")


def test_setup_cell_follows_the_configured_repository_and_branch() -> None:
    url, ref = "https://example.org/someone/fork", "v0.2"
    old = "```{code-cell} ipython3\n" + chapters.setup_cell_source() + "\n```\ntext\n"
    new = chapters.fix_setup_cell(old, chapters.setup_cell_source(url, ref))
    assert f"posenc_lib[book] @ git+{url}@{ref}" in new and new.endswith("\n```\ntext\n")
    assert chapters.library_version() in chapters.setup_cell_source()


def run_setup_cell(versions: dict[str, str | None]) -> tuple[list[list[str]], str]:
    """Run the setup cell with pip stubbed and the installed versions faked: (pip calls, output)."""
    source = chapters.setup_cell_source()
    for original, stub in [
        ("subprocess.run(", "calls.append("), (", check=True)", ")"),
        ("importlib.util.find_spec(name) is None", "versions[name] is None"),
        ('importlib.metadata.version(name.replace("_", "-"))', "versions[name]"),
    ]:
        assert original in source, original
        source = source.replace(original, stub)
    printed: list[str] = []
    namespace: dict[str, object] = {"calls": [], "versions": versions,
                                    "print": lambda *a: printed.append(" ".join(map(str, a)))}
    exec(compile(source, "setup-cell", "exec"), namespace)
    return namespace["calls"], "\n".join(printed)  # type: ignore[return-value]


READY = {"posenc_lib": "0.1.0", "torch": "2.13.0", "plotly": "7.1.0", "anywidget": "0.11.0",
         "transformers": "5.25.0"}


def test_setup_cell_installs_nothing_when_the_book_set_is_importable() -> None:
    # The book build, `make live`, a pip install, the reader-env test: no network, no pip.
    calls, printed = run_setup_cell(READY)
    assert calls == []
    assert "posenc_lib 0.1.0" in printed and "transformers 5.25.0" in printed
    assert f"for posenc_lib {chapters.library_version()}" in printed


@pytest.mark.parametrize("module, version", [("posenc_lib", None), ("anywidget", None),
                                             ("transformers", None), ("transformers", "4.57.1")])
def test_setup_cell_installs_the_book_extra_when_a_module_is_missing_or_old(
    module: str, version: str | None
) -> None:
    # A bare runtime, or Colab with its own transformers 4: one pip install of posenc_lib[book].
    calls, printed = run_setup_cell({**READY, module: version})
    (command,) = calls
    assert command[-1] == chapters.library_requirement()
    assert command[-1].startswith("posenc_lib[book] @ git+")
    assert "Installing posenc_lib[book]" in printed


def test_the_setup_cell_checks_every_package_the_chapters_import() -> None:
    # Every third-party top-level import of any chapter is in the cell's list (and so in the
    # `book` extra, which tests/test_reader_env.py checks against pyproject.toml).
    import re

    stdlib = set(sys.stdlib_module_names)
    imported: set[str] = set()
    for md in NOTEBOOK_CHAPTERS:
        for cell in chapters.read_chapter(md).cells:
            if cell.cell_type == "code":
                imported |= set(re.findall(r"^\s*(?:from|import) (\w+)", cell.source, re.M))
    third_party = imported - stdlib - {"google"}  # google.colab: only on Colab, guarded
    assert third_party <= set(chapters.BOOK_MODULES), third_party - set(chapters.BOOK_MODULES)


def test_every_toc_entry_exists_and_every_chapter_is_listed() -> None:
    listed = toc_files()
    for entry in listed:
        assert (ROOT / f"{entry}.md").exists(), f"_toc.yml lists {entry}, which does not exist"
    for md in ROOT.joinpath("chapters").rglob("*.md"):
        if ".ipynb_checkpoints" in md.parts:
            continue  # JupyterLab's copies during `make live`
        entry = str(md.relative_to(ROOT).with_suffix(""))
        assert entry in listed, f"{md.name} is not in _toc.yml"


def test_checkpoint_copies_are_not_chapters(tmp_path: Path) -> None:
    # `make live` leaves chapters/.ipynb_checkpoints/NAME-checkpoint.md behind: never a chapter.
    header = "---\njupytext:\n  text_representation: {}\n---\n"
    (tmp_path / "01_a.md").write_text(header, encoding="utf-8")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / ".ipynb_checkpoints" / "01_a-checkpoint.md").write_text(header, encoding="utf-8")
    assert chapters.notebook_chapters(tmp_path) == [tmp_path / "01_a.md"]
