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
    assert f"posenc_lib[widgets] @ git+{url}@{ref}" in new and new.endswith("\n```\ntext\n")
    assert chapters.library_version() in chapters.setup_cell_source()


def test_setup_cell_installs_and_reports_the_library(tmp_path: Path) -> None:
    # Run the cell with pip replaced by a stub: it installs the widgets extra and says what it got.
    source = chapters.setup_cell_source().replace(
        "subprocess.run(", "calls.append("
    ).replace(", check=True)", ")")
    source = source.replace("importlib.util.find_spec(m) is None", "True")
    namespace: dict[str, object] = {"calls": []}
    exec(compile(source, "setup-cell", "exec"), namespace)
    (command,) = namespace["calls"]  # type: ignore[misc]
    assert command[-1] == chapters.library_requirement()
    assert command[-1].startswith("posenc_lib[widgets] @ git+")


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
