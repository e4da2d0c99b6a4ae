"""Cross-references land where the thing is, and reader text has no drafting history.

- Every ``{ref}``/``{numref}`` label a chapter uses exists (the build checks this too, but only
  after a full build; this runs in a second).
- A short explicit map of things the chapters refer to and the section that holds each: a sentence
  about the thing that links to the wrong section fails (the RoPE decay bound is chapter 5's
  ``rope-decay``, not the chapter ``ch-rope-code`` or ``ch-rope-derivation``).
- No chapter tells the reader about "an earlier version of this chapter".
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import chapters  # noqa: E402  (scripts/ is not a package; it is put on the path above)

CHAPTERS = chapters.notebook_chapters()
IDS = [str(p.relative_to(ROOT)) for p in CHAPTERS]
REF = re.compile(r"\{(?:ref|numref)\}`([^`]*)`")
# A role (kept) or an inline code span (blanked), scanned left to right.
ROLE_OR_CODE = re.compile(r"\{[a-zA-Z][\w:.+-]*\}`[^`]*`|(`+)(?:.+?)\1", re.S)

# (what a sentence talks about, labels that do not hold it, the label that does)
WHERE_THINGS_ARE = [
    (re.compile(r"\bdecay", re.I), {"ch-rope-code", "ch-rope-derivation"}, "rope-decay"),
]

# Pending: wrong links not yet fixed (chapter -> how many); remove as chapters are fixed.
WHERE_THINGS_ARE_PENDING: dict[str, int] = {}

# Sentences that tell the reader about the book's drafts.
DRAFT_HISTORY = re.compile(
    r"\b(?:earlier|previous|older|first|former) (?:versions?|drafts?|editions?) of "
    r"(?:this|the) (?:chapter|book|page|lab|section|probe|experiment|figure|table|analysis)",
    re.I,
)
# Pending: such sentences not yet removed (chapter -> how many); remove as chapters are fixed.
DRAFT_HISTORY_PENDING: dict[str, int] = {}


def prose(md: Path) -> str:
    """The chapter's markdown cells, inline code spans blanked (roles kept)."""
    cells = [c.source for c in chapters.read_chapter(md).cells if c.cell_type == "markdown"]
    return "\n\n".join(
        ROLE_OR_CODE.sub(lambda m: " " * len(m.group(0)) if m.group(1) else m.group(0), c)
        for c in cells
    )


def target(content: str) -> str:
    explicit = re.match(r"^.*?<([^<>]+)>\s*$", content, re.S)
    return (explicit.group(1) if explicit else content).strip()


@pytest.mark.parametrize("md", CHAPTERS, ids=IDS)
def test_every_reference_target_exists(md: Path) -> None:
    labels = chapters.book_labels().targets
    missing = sorted({target(c) for c in REF.findall(prose(md))} - set(labels))
    assert not missing, f"{md.name} refers to labels that do not exist: {missing}"


def sentences(text: str) -> list[str]:
    return re.split(r"(?<=[.!?])\s+(?=[A-Z{(*])|\n\s*\n", text)


@pytest.mark.parametrize("md", CHAPTERS, ids=IDS)
def test_references_land_on_the_section_that_holds_the_thing(md: Path) -> None:
    wrong = []
    for sentence in sentences(prose(md)):
        refs = {target(c) for c in REF.findall(sentence)}
        for topic, not_there, there in WHERE_THINGS_ARE:
            if topic.search(sentence) and refs & not_there and there not in refs:
                wrong.append(
                    f"{sorted(refs & not_there)} for {topic.pattern!r}: use {there!r} "
                    f"in: {' '.join(sentence.split())[:140]}"
                )
    pending = WHERE_THINGS_ARE_PENDING.get(str(md.relative_to(ROOT)), 0)
    assert len(wrong) == pending, (
        f"{md.name}: {len(wrong)} links to the wrong section (pending: {pending}; update "
        "WHERE_THINGS_ARE_PENDING when you fix one):\n" + "\n".join(wrong)
    )


@pytest.mark.parametrize("md", CHAPTERS, ids=IDS)
def test_no_drafting_history_in_reader_text(md: Path) -> None:
    text = " ".join(prose(md).split())  # a phrase may break across lines
    found = DRAFT_HISTORY.findall(text)
    pending = DRAFT_HISTORY_PENDING.get(str(md.relative_to(ROOT)), 0)
    assert len(found) == pending, (
        f"{md.name}: {len(found)} remarks about earlier versions (pending: {pending}); say what "
        "is true now, and update DRAFT_HISTORY_PENDING when you remove one"
    )


def test_the_map_and_the_pattern_catch_what_they_should() -> None:
    text = "The paper blames the decay of {ref}`ch-rope-code`: the score falls."
    refs = {target(c) for c in REF.findall(text)}
    topic, not_there, there = WHERE_THINGS_ARE[0]
    assert topic.search(text) and refs & not_there and there not in refs
    assert there in chapters.book_labels().targets
    assert DRAFT_HISTORY.findall("An earlier version of this chapter, whose sequences") != []
    assert DRAFT_HISTORY.findall("Older versions read the same JSON differently") == []


TEST_NAME = re.compile(r"`(test_\w+)`")
DEFINED_TESTS = {m.group(1) for path in (ROOT / "tests").glob("test_*.py")
                 for m in re.finditer(r"^def (test_\w+)", path.read_text(encoding="utf-8"), re.M)}


@pytest.mark.parametrize("md", CHAPTERS, ids=IDS)
def test_every_test_a_chapter_names_exists(md: Path) -> None:
    # A chapter that sends the reader to a test by name must name one the suite defines
    # (chapter 12 once named a DeepSeek test after it had been renamed).
    named = set(TEST_NAME.findall(md.read_text(encoding="utf-8")))
    assert named - DEFINED_TESTS == set()


def test_the_test_name_check_sees_a_renamed_test() -> None:
    assert "test_deepseek_cache_shifts_in_its_own_layout" in DEFINED_TESTS
    assert "test_deepseek_v3_cache_shifts_in_the_half_layout" not in DEFINED_TESTS
