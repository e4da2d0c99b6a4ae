"""Chapters: every .md has an output-free, in-sync .ipynb, and the setup cell the book promises."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import reader_markdown  # noqa: E402

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
    # Compared modulo the glued values (a float's last digit may differ on CI's CPU), so this
    # needs no build; test_reader_notebook_glued_values_are_the_builds checks the values.
    ipynb = md.with_suffix(".ipynb")
    assert ipynb.exists(), f"{ipynb.name} is missing: run `make sync`"
    committed = nbformat.reads(ipynb.read_text(encoding="utf-8"), as_version=4)
    expected = chapters.paired_notebook(md, glue=reader_markdown.PlaceholderGlue())
    assert chapters.notebook_text(chapters.without_glued_values(committed)) == \
        chapters.notebook_text(chapters.without_glued_values(expected)), \
        f"{ipynb.name} is stale: run `make sync`"


# Glued timings (chapter 6's decode benchmark) are named bench_*: the twin shows the maintainer's
# build, the book the reader's build; every other glued value must agree to its last digit.
TIMING_PREFIX = "bench_"


@pytest.mark.book
@pytest.mark.parametrize("md", NOTEBOOK_CHAPTERS, ids=IDS)
def test_reader_notebook_glued_values_are_the_builds(md: Path) -> None:
    # Every glued value in the twin is the built book's, up to one unit in its last digit.
    if "{glue" not in md.read_text(encoding="utf-8"):
        return
    committed = nbformat.reads(md.with_suffix(".ipynb").read_text(encoding="utf-8"),
                               as_version=4)
    built = chapters.paired_notebook(md)  # from _build/jupyter_execute; fails loudly if missing
    shown = [m for text in markdown_cells(committed) for m in reader_markdown.GLUED.finditer(text)]
    fresh = [m for text in markdown_cells(built) for m in reader_markdown.GLUED.finditer(text)]
    assert [m["role"] for m in shown] == [m["role"] for m in fresh], "run `make sync`"
    for old, new in zip(shown, fresh, strict=True):
        if old["role"].split(":")[0].startswith(TIMING_PREFIX):
            continue  # a timing is measured on whichever machine builds: it never repeats exactly
        assert chapters.glued_values_agree(old["value"], new["value"]), (
            f"{md.name}: {old['role']} shows {old['value']}, the build computes {new['value']}: "
            "run `make sync`")


@pytest.mark.parametrize("md", NOTEBOOK_CHAPTERS, ids=IDS)
def test_committed_notebook_has_no_outputs(md: Path) -> None:
    nb = json.loads(md.with_suffix(".ipynb").read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None


@pytest.mark.parametrize("md", NOTEBOOK_CHAPTERS, ids=IDS)
@pytest.mark.parametrize("version", ["1.16.0", "1.99.9"])
def test_saving_a_chapter_with_any_jupytext_rewrites_nothing(
    md: Path, version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader's save (`make live`, any jupytext) leaves the committed chapter byte for byte.

    jupytext writes its own version into the header unless the header's metadata filter drops it;
    CI once failed when jupytext 1.19.7 replaced the committed 1.19.6. Catches: a header without
    `notebook_metadata_filter: -jupytext.text_representation.jupytext_version`.
    """
    import jupytext
    import jupytext.header

    monkeypatch.setattr(jupytext.header, "__version__", version)
    source = md.read_text(encoding="utf-8")
    assert jupytext.writes(jupytext.reads(source, fmt="md:myst"), fmt="md:myst") == source


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
        ('importlib.metadata.version(DISTRIBUTION.get(name, name.replace("_", "-")))',
         "versions[name]"),
    ]:
        assert original in source, original
        source = source.replace(original, stub)
    printed: list[str] = []
    namespace: dict[str, object] = {"calls": [], "versions": versions,
                                    "print": lambda *a: printed.append(" ".join(map(str, a)))}
    exec(compile(source, "setup-cell", "exec"), namespace)
    return namespace["calls"], "\n".join(printed)  # type: ignore[return-value]


def test_contributing_shows_the_current_setup_cell() -> None:
    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert chapters.setup_cell_source() in contributing, "refresh CONTRIBUTING.md's setup cell"


READY = {"posenc_lib": "0.1.0", "torch": "2.13.0", "plotly": "7.1.0", "anywidget": "0.11.0",
         "transformers": "5.25.0", "PIL": "12.0.0"}


def test_setup_cell_installs_nothing_when_the_book_set_is_importable() -> None:
    # The book build, `make live`, a pip install, the reader-env test: no network, no pip.
    calls, printed = run_setup_cell(READY)
    assert calls == []
    assert "posenc_lib 0.1.0" in printed and "transformers 5.25.0" in printed
    assert f"for posenc_lib {chapters.library_version()}" in printed


@pytest.mark.parametrize("module, version", [("posenc_lib", None), ("anywidget", None),
                                             ("transformers", None), ("transformers", "4.57.1"),
                                             ("PIL", None), ("PIL", "9.5.0")])
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
    stdlib = set(sys.stdlib_module_names)
    imported: set[str] = set()
    for md in NOTEBOOK_CHAPTERS:
        for cell in chapters.read_chapter(md).cells:
            if cell.cell_type == "code":
                imported |= set(re.findall(r"^\s*(?:from|import) (\w+)", cell.source, re.M))
    third_party = imported - stdlib - {"google"}  # google.colab: only on Colab, guarded
    # numpy comes with posenc_lib itself (a core dependency), so importing it needs no check.
    core = {"numpy"}
    assert core <= set(_core_dependencies())
    checked = set(chapters.BOOK_MODULES) | core
    assert third_party <= checked, third_party - checked


def _core_dependencies() -> list[str]:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = re.search(r"^dependencies = \[(.*?)\]", pyproject, re.M | re.S)
    assert block is not None
    return [re.match(r"[A-Za-z0-9_]+", d.strip().strip('"')).group(0)
            for d in block.group(1).split(",") if d.strip()]


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


# --- the notebooks a Colab or Binder reader opens: plain Jupyter markdown, generated from the .md

# What a Jupyter front-end would show as raw MyST: targets, roles, directives, directive options.
RAW_MYST = re.compile(
    r"^\([^()\s]+\)=\s*$"  # (label)=
    r"|\{[a-zA-Z][\w:.+-]*\}`"  # {ref}`…`, {cite:p}`…`, {eq}`…`, {math}`…`, {numref}, {doc}…
    r"|^\s*(?::{3,}|`{3,})\{[\w:-]+\}"  # :::{admonition}, ```{admonition}, ```{math}…
    r"|^:(?:class|label|tags|name|open|dropdown):",  # directive options
    re.M,
)


def reader_notebook(md: Path) -> dict:
    return json.loads(md.with_suffix(".ipynb").read_text(encoding="utf-8"))


def markdown_cells(nb: dict) -> list[str]:
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]


@pytest.mark.parametrize("md", NOTEBOOK_CHAPTERS, ids=IDS)
def test_reader_notebook_has_no_raw_myst(md: Path) -> None:
    raw = [m.group(0) for text in markdown_cells(reader_notebook(md))
           for m in RAW_MYST.finditer(text)]
    assert not raw, f"{md.name}: raw MyST left in the notebook: {raw[:5]}"


@pytest.mark.parametrize("md", NOTEBOOK_CHAPTERS, ids=IDS)
def test_reader_notebook_folds_every_solution(md: Path) -> None:
    # Every dropdown (an exercise's solution) of the .md is a closed <details> in the notebook,
    # and its text appears nowhere outside one.
    source = md.read_text(encoding="utf-8")
    dropdowns = re.findall(
        r"^(:{3,}|`{3,})\{admonition\}[^\n]*\n:class: dropdown[^\n]*\n(.*?)^\1\s*$",
        source, re.M | re.S)
    cells = markdown_cells(reader_notebook(md))
    folded = [block for text in cells
              for block in re.findall(r"<details>\n(.*?)</details>", text, re.S)]
    # Dropdowns may nest (an optional box whose questions have their own solutions): count them
    # all, top level or not, against every <details> of the notebook.
    # A {dropdown} directive (a folded aside, not a solution) becomes a <details> too.
    every_dropdown = re.findall(
        r"^(?::{3,}|`{3,})(?:\{admonition\}[^\n]*\n:class: dropdown[^\n]*\n|\{dropdown\})",
        source, re.M)
    assert sum(text.count("<details>") for text in cells) == len(every_dropdown)
    assert all("<details open" not in text for text in cells)
    outside = "\n".join(re.sub(r"<details>.*?</details>", "", text, flags=re.S) for text in cells)
    for _, body in dropdowns:
        first_words = re.sub(r"[{`$\\].*", "", body.strip().splitlines()[0])[:30].strip()
        if len(first_words) >= 12:
            assert first_words not in outside, f"{md.name}: solution in plain view: {first_words}"
            assert any(first_words in block for block in folded)


@pytest.mark.parametrize("md", NOTEBOOK_CHAPTERS, ids=IDS)
def test_reader_notebook_opens_with_a_visible_note_of_what_it_installs(md: Path) -> None:
    nb = reader_notebook(md)
    first_code = next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code")
    note = nb["cells"][first_code - 1]
    assert note["cell_type"] == "markdown"
    assert not note["metadata"].get("jupyter", {}).get("source_hidden")
    text = "".join(note["source"])
    assert f'pip install "{chapters.library_requirement()}"' in text
    assert "transformers 5" in text
    setup = nb["cells"][first_code]
    assert "".join(setup["source"]) == chapters.setup_cell_source()
    assert setup["metadata"]["cellView"] == "form"


@pytest.mark.parametrize("md", NOTEBOOK_CHAPTERS, ids=IDS)
def test_reader_notebook_links_and_citations_resolve(md: Path) -> None:
    nb = reader_notebook(md)
    text = "\n".join(markdown_cells(nb))
    base = chapters.book_url()
    for page in re.findall(rf"\]\({re.escape(base)}/([^)#]+)\.html", text):
        assert (ROOT / f"{page}.md").exists(), f"{md.name} links to a missing page {page}"
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', text))
    for anchor in re.findall(r"\]\(#([^)]+)\)", text):
        assert anchor in anchors, f"{md.name}: link to #{anchor}, which is not in the notebook"
    cited = set(re.findall(r"\{cite(?::\w+)?\}`([^`]+)`", md.read_text(encoding="utf-8")))
    keys = {k.strip() for group in cited for k in group.split(",")}
    for key in keys:
        assert f'<a id="ref-{key}"></a>' in text, f"{md.name}: {key} not in its reference list"


@pytest.mark.parametrize("md", NOTEBOOK_CHAPTERS, ids=IDS)
def test_cells_the_book_hides_are_folded_not_dropped(md: Path) -> None:
    # The code still runs in order (later cells need it); the book's hidden code is folded.
    book = chapters.read_chapter(md)
    nb = reader_notebook(md)
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert ["".join(c["source"]) for c in code] == [
        c.source for c in book.cells if c.cell_type == "code"]
    for cell in code:
        tags = set(cell["metadata"].get("tags", []))
        hidden = cell["metadata"].get("jupyter", {}).get("source_hidden", False)
        folded = bool(tags & {"remove-cell", "remove-input", "hide-input", "hide-cell"})
        assert hidden == folded
        # Colab folds a cell only in its form view; JupyterLab reads source_hidden.
        assert (cell["metadata"].get("cellView") == "form") == folded


def _page(doc: str = "chapters/02_b") -> reader_markdown.Page:
    labels = reader_markdown.Labels({
        "ch-a": reader_markdown.Target("chapters/01_a", "1. A", ""),
        "sec-x": reader_markdown.Target("chapters/02_b", "Section X", "sec-x"),
        "eq-one": reader_markdown.Target("chapters/01_a", "(1)", "equation-eq-one"),
        "eq-two": reader_markdown.Target("chapters/02_b", "(2)", "equation-eq-two"),
    })
    bib = reader_markdown.parse_bib(
        "@article{smith2020,\n  author = {Smith, Ann and Jones, Bob and Lee, Cy},\n"
        "  title = {On {RoPE}},\n  journal = {J},\n  year = {2020}\n}\n"
        "@misc{solo2021, author = {Solo, Han}, title = {T}, year = 2021}\n"
    )
    return reader_markdown.Page(doc, labels, bib, "https://book.example", {"R": "\\mathbb{R}"})


def test_every_myst_construct_becomes_jupyter_markdown() -> None:
    page = _page()
    source = "\n".join([
        "(sec-x)=",
        "## Section X",
        "See {ref}`ch-a`, {ref}`this <sec-x>`, {numref}`sec-x`, {doc}`../chapters/01_a`,",
        "{eq}`eq-one` and {eq}`eq-two`, {cite:p}`smith2020,solo2021`, {cite:t}`solo2021`,",
        "{math}`x \\in \\R`, {mod}`posenc_lib.hf` and `{ref}` in code stays.",
        "",
        "$$",
        "y = x",
        "$$ (eq-two)",
        "",
        ":::{admonition} Solution",
        ":class: dropdown",
        "It is $1$.",
        ":::",
        "Next paragraph.",
        "",
        "```{admonition} Careful",
        "Body **text**.",
        "```",
        "",
        ":::{warning}",
        "Mind {ref}`sec-x`.",
        ":::",
        "",
        "```{math}",
        ":label: eq-two",
        "z = 1",
        "```",
    ])
    out = reader_markdown.convert(source, page)
    assert not RAW_MYST.search(out.replace("`{ref}` in code", "")), RAW_MYST.search(out)
    assert '<a id="sec-x"></a>' in out and "## Section X" in out
    assert "[1. A](https://book.example/chapters/01_a.html)" in out
    assert "[this](#sec-x)" in out and "[Section X](#sec-x)" in out
    assert "(https://book.example/chapters/01_a.html)" in out
    assert "[(1)](https://book.example/chapters/01_a.html#equation-eq-one)" in out
    assert "[(2)](#equation-eq-two)" in out and "\\tag{2}" in out
    assert "([Smith et al., 2020](#ref-smith2020); [Solo, 2021](#ref-solo2021))" in out
    assert "[Solo (2021)](#ref-solo2021)" in out
    assert "$x \\in \\mathbb{R}$" in out and "`posenc_lib.hf`" in out
    assert "`{ref}` in code stays" in out
    assert "<details>\n<summary><b>Solution</b> (click to show)</summary>\n\nIt is $1$." in out
    assert "</details>\n\nNext paragraph." in out
    assert "> **Careful**\n>\n> Body **text**." in out
    assert "> **Warning**\n>\n> Mind [Section X](#sec-x)." in out
    assert page.cited == ["smith2020", "solo2021"]
    refs = page.references()
    assert '<a id="ref-smith2020"></a>Ann Smith, Bob Jones, Cy Lee (2020). *On RoPE*. J.' in refs


def test_unknown_labels_and_citations_fail_loudly() -> None:
    with pytest.raises(ValueError, match="unknown label 'nope'"):
        reader_markdown.convert("{ref}`nope`", _page())
    with pytest.raises(ValueError, match=r"not in references\.bib"):
        reader_markdown.convert("{cite:p}`nobody2000`", _page())


def test_equations_are_numbered_through_the_book_in_toc_order(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("(ch-a)=\n# A\n$$\nx\n$$ (eq-a1)\n$$ y $$ (eq-a2)\n")
    (tmp_path / "b.md").write_text(
        "```{code-cell} ipython3\n$$ (not-this)\n```\n$$\nz\n$$ (eq-b)\n")
    labels = reader_markdown.collect_labels(tmp_path, ["a", "b"]).targets
    assert [labels[k].title for k in ("eq-a1", "eq-a2", "eq-b")] == ["(1)", "(2)", "(3)"]
    assert "not-this" not in labels and labels["ch-a"] == reader_markdown.Target("a", "A", "")


@pytest.mark.book
def test_reader_notebooks_number_equations_and_link_pages_as_the_built_book_does() -> None:
    # The notebooks' equation numbers are the book's (numbered through the book in toc order),
    # and every page and anchor they link to exists in the built HTML.
    html_root = ROOT / "_build" / "html"
    labels = chapters.book_labels().targets
    numbered = 0
    for page in html_root.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        for number, label in re.findall(
            r'<span class="eqno">\((\d+)\)<a class="headerlink" href="#equation-([^"]+)"', text
        ):
            assert labels[label].title == f"({number})", (page.name, label)
            numbered += 1
    assert numbered == sum(t.anchor.startswith("equation-") for t in labels.values()) > 0
    base = chapters.book_url()
    for md in NOTEBOOK_CHAPTERS:
        text = "\n".join(markdown_cells(reader_notebook(md)))
        for page, anchor in re.findall(rf"\]\({re.escape(base)}/([^)#]+\.html)#?([^)]*)\)", text):
            built = html_root / page
            assert built.exists(), f"{md.name} links to {page}, not in the built book"
            if anchor:
                assert f'id="{anchor}"' in built.read_text(encoding="utf-8"), (md.name, anchor)
