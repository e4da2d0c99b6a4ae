"""Reader notebooks show the numbers the book glued: the executed build's values, never a role.

The fixture pages in tests/fixtures/glue/ are executed as the book build executes a chapter; the
twin generator (scripts/chapters.py, scripts/reader_markdown.py) must fill their glue roles with
the values myst-nb would show, fail loudly without them, and the twin comparison must ignore a
float's last digit (CI builds on another CPU) but not a stale sentence.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import reader_markdown  # noqa: E402

import chapters  # noqa: E402  (scripts/ is not a package; it is put on the path above)

FIXTURES = ROOT / "tests" / "fixtures" / "glue"
PAGE = FIXTURES / "01_glued.md"


def _doc(md: Path) -> str:
    return str(md.relative_to(ROOT).with_suffix(""))


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture pages executed in a kernel (jupytext, as `make book`'s myst-nb runs them): the
    glued values are display outputs with ``scrapbook`` metadata in ``<doc>.ipynb``."""
    out = tmp_path_factory.mktemp("executed")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    for md in sorted(FIXTURES.glob("*.md")):
        target = out / f"{_doc(md)}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "jupytext",
                "--to",
                "ipynb",
                "--execute",
                "-o",
                str(target),
                str(md),
            ],
            env=env,
            cwd=ROOT,
            check=True,
            capture_output=True,
            timeout=300,
        )
    return out


class _Logger:
    def warning(self, *args: object, **kwargs: object) -> None:
        raise AssertionError(args)


@pytest.fixture(scope="module")
def built(executed: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What the book build leaves in ``_build/jupyter_execute``: myst-nb takes the hidden glue
    outputs out of the executed notebook and writes them to ``<doc>.glue.json``."""
    from myst_nb.ext.glue import extract_glue_data

    out = tmp_path_factory.mktemp("jupyter_execute")
    for ipynb in executed.rglob("*.ipynb"):
        nb = nbformat.read(ipynb, as_version=4)
        data = extract_glue_data(nb, [0] * len(nb.cells), _Logger())
        target = out / ipynb.relative_to(executed)
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        target.with_suffix(".glue.json").write_text(json.dumps(data), encoding="utf-8")
    return out


def markdown(nb: nbformat.NotebookNode) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def test_the_build_keeps_glued_values_out_of_the_notebook_and_in_glue_json(built: Path) -> None:
    # The premise of reading <doc>.glue.json: the build's executed notebook no longer holds them.
    nb = json.loads((built / f"{_doc(PAGE)}.ipynb").read_text(encoding="utf-8"))
    assert not any(
        "scrapbook" in o.get("metadata", {}) for c in nb["cells"] for o in c.get("outputs", [])
    )
    stored = json.loads((built / f"{_doc(PAGE)}.glue.json").read_text(encoding="utf-8"))
    assert stored["acc"]["data"]["text/plain"] == "0.52631"


def test_every_glue_role_becomes_the_value_myst_nb_shows(built: Path) -> None:
    text = markdown(chapters.paired_notebook(PAGE, glue=reader_markdown.BuildGlue(built)))
    for role, value in [
        ("half_life:.0f", "283"),
        ("acc:.3f", "0.526"),
        ("acc:.1%", "52.6%"),
        ("period:,.0f", "47,117"),
        ("small:.1e", "4.5e-03"),
        ("name", "half"),
        ("steps:d", "12000"),
        ("02_other.md::slope:.4f", "0.7071"),
        ("acc:.2f", "0.53"),
        ("half_life:.1f", "283.5"),
    ]:
        assert f'<span title="computed: {role}">{value}</span>' in text, (role, value)
    # {glue} shows the text/plain representation as it is, quotes and all (as the HTML does).
    assert '<span title="computed: name">&#x27;half&#x27;</span>' not in text
    assert "<span title=\"computed: name\">'half'</span>" in text
    assert '<span title="computed: acc">0.52631</span>' in text
    assert '<span title="computed: steps">12000</span>' in text
    # Only the role written as code is left; it is code, not a role.
    assert re.findall(r"\{glue[\w:]*\}`", text) == ["{glue:text}`"]
    assert "`` {glue:text}`acc` ``" in text
    assert '> **Glued in a title: <span title="computed: acc:.2f">0.53</span>**' in text


def test_the_executed_notebook_alone_gives_the_same_twin(executed: Path, built: Path) -> None:
    # Without glue.json (a notebook executed by jupytext), the scrapbook outputs are read.
    from_notebook = chapters.paired_notebook(PAGE, glue=reader_markdown.BuildGlue(executed))
    from_build = chapters.paired_notebook(PAGE, glue=reader_markdown.BuildGlue(built))
    assert chapters.notebook_text(from_notebook) == chapters.notebook_text(from_build)


def test_a_missing_build_or_key_fails_loudly_naming_the_page_and_key(
    built: Path, tmp_path: Path
) -> None:
    with pytest.raises(
        ValueError,
        match=r"tests/fixtures/glue/01_glued: the executed notebook"
        r".* is missing.*make book",
    ):
        chapters.paired_notebook(PAGE, glue=reader_markdown.BuildGlue(tmp_path / "nothing"))
    partial = tmp_path / "partial"
    shutil.copytree(built, partial)
    stored = partial / f"{_doc(PAGE)}.glue.json"
    data = json.loads(stored.read_text(encoding="utf-8"))
    del data["period"]
    stored.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=r"01_glued: glue key 'period' is not in the executed"):
        chapters.paired_notebook(PAGE, glue=reader_markdown.BuildGlue(partial))
    page = reader_markdown.Page("chapters/x", reader_markdown.Labels(), {}, "https://b.example")
    with pytest.raises(ValueError, match=r"chapters/x: \{glue:text\}`acc:\.3f` needs the exec"):
        reader_markdown.convert("Accuracy {glue:text}`acc:.3f`.", page)


FORMATS = ["", "s", ".0f", ".3f", ".1%", ",.0f", ".2e", ".3g", "d", ",d", ">8.2f", "+.1f", ".0%"]


@given(
    value=st.one_of(
        st.floats(allow_nan=False, allow_infinity=False, width=64),
        st.integers(-(10**12), 10**12),
        st.text(max_size=8),
    ),
    fmt=st.sampled_from(FORMATS),
)
def test_values_are_formatted_exactly_as_myst_nb_formats_them(value: object, fmt: str) -> None:
    from myst_nb.core.variables import format_plain_text

    plain = repr(value)
    try:
        expected: str | type[Exception] = format_plain_text(plain, fmt)
    except Exception as exc:  # the build would warn (an error under -W); so must the sync
        expected = type(exc)
    if isinstance(expected, str):
        assert reader_markdown.format_plain_text(plain, fmt) == expected
    else:
        with pytest.raises(expected):
            reader_markdown.format_plain_text(plain, fmt)


@pytest.mark.parametrize(
    "shown, built, agree",
    [
        ("0.526", "0.526", True),
        ("0.526", "0.527", True),
        ("0.526", "0.525", True),
        ("283", "284", True),
        ("47,117", "47,118", True),
        ("4.50e-03", "4.51e-03", True),
        ("9.99e-04", "1.00e-03", True),
        ("52.6%", "52.7%", True),
        ("-0.10", "-0.11", True),
        ("half", "half", True),
        ("0.526", "0.528", False),
        ("0.95", "0.84", False),
        ("287", "283", False),
        ("0.526", "0.53", False),
        ("52.6%", "0.526", False),
        ("half", "full", False),
        ("0.10", "-0.10", False),
        ("48,000", "47,117", False),
        # rounding noise: both in scientific notation and below 1e-4 (ch12's vllm_drift on two CPUs)
        ("2.1e-06", "2.6e-06", True),
        ("0.0e+00", "3.1e-07", True),
        ("2.1e-06", "2.6e-03", False),
        ("5.0e-05", "2.0e-04", False),
        ("0.000021", "0.000026", False),
    ],
)
def test_glued_values_agree_up_to_one_unit_in_the_last_digit(
    shown: str, built: str, agree: bool
) -> None:
    assert chapters.glued_values_agree(shown, built) is agree


def _edit(nb: nbformat.NotebookNode, old: str, new: str) -> nbformat.NotebookNode:
    copy = nbformat.from_dict(json.loads(json.dumps(nb)))
    hits = 0
    for cell in copy.cells:
        if cell.cell_type == "markdown" and old in cell.source:
            cell.source = cell.source.replace(old, new)
            hits += 1
    assert hits == 1
    return copy


def test_a_twin_from_another_cpu_is_in_sync_and_a_stale_twin_is_not(built: Path) -> None:
    twin = chapters.paired_notebook(PAGE, glue=reader_markdown.BuildGlue(built))
    fresh = chapters.paired_notebook(PAGE, glue=reader_markdown.PlaceholderGlue())

    def same(a: nbformat.NotebookNode, b: nbformat.NotebookNode) -> bool:
        return chapters.notebook_text(chapters.without_glued_values(a)) == chapters.notebook_text(
            chapters.without_glued_values(b)
        )

    # The sync test needs no build: placeholders compare equal to the real values...
    assert same(twin, fresh)
    # ...a value one unit off in its last digit (another CPU) passes both checks...
    other_cpu = _edit(twin, ">0.526</span>", ">0.527</span>")
    assert same(other_cpu, fresh)
    assert all(
        chapters.glued_values_agree(a.group("value"), b.group("value"))
        for a, b in zip(
            reader_markdown.GLUED.finditer(markdown(other_cpu)),
            reader_markdown.GLUED.finditer(markdown(twin)),
            strict=True,
        )
    )
    # ...a stale sentence fails, a changed role fails, and so does a value from an old build.
    assert not same(_edit(twin, "The score halves", "The score drops"), fresh)
    assert not same(_edit(twin, 'title="computed: acc:.3f"', 'title="computed: acc:.2f"'), fresh)
    stale_value = _edit(twin, ">0.526</span>", ">0.95</span>")
    assert not chapters.glued_values_agree("0.95", "0.526")
    assert same(stale_value, fresh)  # (caught by the value test, not the sync test)


# --- the chapters: every glue role names a value its chapter glues (checked without a build) ---

GLUE_CALL = re.compile(r"\bglue\(\s*(?P<quote>[\"'])(?P<name>\w+)(?P=quote)")
DYNAMIC_CALL = re.compile(r"\bglue\(\s*(?![\"']\w+[\"'])")
PROSE_ROLE = re.compile(r"\{(?P<role>glue(?::\w*)?)\}`(?P<content>[^`]*)`")


def role_key(role: str, content: str) -> tuple[str | None, str]:
    """(other page or None, key) of a glue role, parsed as myst-nb parses it."""
    if role in ("glue:text", "glue:md"):  # name:format
        content = content.rsplit(":", 1)[0] if ":" in content.replace("::", "") else content
    doc, key = content.split("::", 1) if "::" in content else (None, content)
    return doc, key.strip()


def unglued(md: Path) -> tuple[list[str], list[str]]:
    """(names glued twice, names the prose quotes that no cell glues) of chapter ``md``;
    the second is empty when a cell glues a name computed at run time."""
    nb = chapters.read_chapter(md)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    glued = [m["name"] for m in GLUE_CALL.finditer(code)]
    duplicates = sorted({name for name in glued if glued.count(name) > 1})
    if DYNAMIC_CALL.search(code):
        return duplicates, []  # the build (and make sync) check those names
    used = {role_key(m["role"], m["content"]) for m in PROSE_ROLE.finditer(prose)}
    return duplicates, sorted(key for doc, key in used if doc is None and key not in glued)


@pytest.mark.parametrize(
    "md", chapters.notebook_chapters(), ids=[md.stem for md in chapters.notebook_chapters()]
)
def test_every_glued_name_in_the_prose_is_glued_once_by_the_chapter(md: Path) -> None:
    duplicates, missing = unglued(md)
    assert not duplicates, f"{md.name}: glued twice (a name is unique in its chapter): {duplicates}"
    assert not missing, f"{md.name}: the prose quotes values no cell glues: {missing}"


def test_the_static_glue_check_sees_a_missing_and_a_duplicate_name(tmp_path: Path) -> None:
    assert unglued(PAGE) == ([], [])  # its cross-page role is the build's to check
    text = PAGE.read_text(encoding="utf-8")
    broken = tmp_path / "page.md"
    broken.write_text(
        text.replace('glue("period", 47117.3)', 'glue("acc", 47117.3)'), encoding="utf-8"
    )
    assert unglued(broken) == (["acc"], ["period"])
    assert role_key("glue:text", "02_other.md::slope:.4f") == ("02_other.md", "slope")
    assert role_key("glue", "acc") == (None, "acc")
    assert role_key("glue:text", "acc") == (None, "acc")
