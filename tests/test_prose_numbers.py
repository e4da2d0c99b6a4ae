"""A number the book computes reaches the prose through glue, never typed by hand.

scripts/prose_numbers.py finds the hand-typed numbers of a chapter's prose (three or more
significant figures, or a decimal or a percentage with two; outside math except a stated result,
code, roles and sentences that cite a paper). Each must be glued or listed, with a reason, in
tests/prose_numbers_allowlist.toml; an entry that no longer matches anything fails too.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import prose_numbers  # noqa: E402

import chapters  # noqa: E402  (scripts/ is not a package; it is put on the path above)

CHAPTERS = chapters.notebook_chapters()
IDS = [str(p.relative_to(ROOT)) for p in CHAPTERS]
ALLOWED = prose_numbers.read_allowlist()


@pytest.mark.parametrize("md", CHAPTERS, ids=IDS)
def test_prose_has_no_hand_typed_computed_numbers(md: Path) -> None:
    hits = prose_numbers.chapter_hits(md)
    typed = [hit for hit in hits if not any(entry.covers(hit) for entry in ALLOWED)]
    listing = "\n".join(f"  line {h.line}: {h.number!r} in: {h.sentence[:120]}" for h in typed)
    assert not typed, (
        f"{md.name}: numbers typed by hand in the prose. Glue each one where it is computed "
        "(from posenc_lib.glue import glue; {glue:text}`name:fmt`), or list it with a reason in "
        f"tests/prose_numbers_allowlist.toml:\n{listing}"
    )


def test_every_allowlist_entry_still_matches_a_number() -> None:
    hits = [hit for md in CHAPTERS for hit in prose_numbers.chapter_hits(md)]
    stale = [entry for entry in ALLOWED if not any(entry.covers(hit) for hit in hits)]
    assert not stale, (
        "stale entries in tests/prose_numbers_allowlist.toml (remove them): "
        + ", ".join(
            f"{e.chapter} {e.number!r}" + (f" near {e.near!r}" if e.near else "") for e in stale
        )
    )


HEADER = "---\njupytext:\n  text_representation:\n    format_name: myst\n---\n\n"


def numbers_in(tmp_path: Path, prose: str) -> list[str]:
    md = tmp_path / "chapter.md"
    md.write_text(HEADER + prose + "\n", encoding="utf-8")
    return [hit.number for hit in prose_numbers.chapter_hits(md, root=tmp_path)]


@pytest.mark.parametrize(
    "prose, found",
    [
        # Measured-looking numbers: three significant figures, or a decimal / percentage with two.
        ("The copy accuracy is 0.526 at 2L.", ["0.526"]),
        ("The slow pair turns every 47 117 positions.", ["47 117"]),
        ("The slow pair turns every 47\u2009117 positions.", ["47\u2009117"]),
        ("Its error is 4.5e-3, then 283.", ["4.5e-3", "283"]),
        ("It falls from 0.95 to 0.84.", ["0.95", "0.84"]),
        ("YaRN copies 43 %, PI 33%.", ["43 %", "33%"]),
        ("It is within 4.5 float32 epsilons.", ["4.5"]),
        # A result stated in math, and a rounded one in words.
        ("It is $1/2$ when $r = 512 \\ln 2 / \\ln(1/0.29) \\approx 287$ tokens.", ["287"]),
        ("For PI, $\\mathrm{Si}(1/4)/\\ln b = 0.0271$.", ["0.0271"]),
        ("It needs about 48 000 positions.", ["48 000"]),
        # Not measurements: years, versions, names, sizes, definitions, code, math, citations.
        ("In 2024 transformers 5.25 and torch 2.13.0 (Llama 3.1, GPT-3.5) were current.", []),
        ("See Section 3.2, chapter 12 and equation (14); PR #29111; arXiv 2104.09864.", []),
        ("A head of 4096 features, 131 072 tokens, base 10 000 or 500 000.", []),
        ("A gate of at least 0.95, and more than 99.9 % of the weight.", []),
        ("At position 2047 the bias is largest.", ["2047"]),
        ("Define $b = 10\\,000$ and $\\theta_i = b^{-2i/d}$ with $d = 128$; $x = 0.526 y$.", []),
        ("The call `rope(0.526)` and ``{glue:text}`acc:.3f` `` are code.", []),
        (
            "The paper reports 18.40 perplexity {cite:p}`press2022train`. We measure 0.731.",
            ["0.731"],
        ),
        ("We measure {glue:text}`acc:.3f`, not a typed number.", []),
        ("[the code](https://example.org/v0.526/1234.5678) runs.", []),
        ("```python\nx = 0.526\n```\n\n$$\ny = 0.731\\, b^{-2i/d}\n$$", []),
        ("$$\n\\lambda_{31} = 2\\pi b^{62/64} \\approx 47\\,117\n$$", ["47 117"]),
        (":::{note} Accuracy 0.526\nBody 0.731.\n:::", ["0.526", "0.731"]),
    ],
)
def test_what_counts_as_a_hand_typed_number(tmp_path: Path, prose: str, found: list[str]) -> None:
    assert numbers_in(tmp_path, prose) == found


def test_the_issue_examples_are_caught_in_context(tmp_path: Path) -> None:
    # The numbers of issue 34 as the chapters wrote them (two thirds, in words, is not caught).
    prose = (
        "Its copy accuracy falls from 0.95 at $2L$ to 0.84 at $4L$. The fastest pair is "
        "halved after $r \\approx 287$ tokens, and pair 31 needs about 48 000 positions "
        "per turn. BLOOM is within 4.5 float32 machine epsilons $\\varepsilon$. For PI, "
        "$\\mathrm{Si}(1/4)/\\ln b = 0.0271$. YaRN copies two thirds, against 43 % for "
        "plain RoPE and 33 % for PI."
    )
    assert numbers_in(tmp_path, prose) == [
        "0.95",
        "0.84",
        "287",
        "48 000",
        "4.5",
        "0.0271",
        "43 %",
        "33 %",
    ]


def test_allowlist_entries_need_a_reason_and_a_chapter(tmp_path: Path) -> None:
    bad = tmp_path / "allow.toml"
    bad.write_text('[[allowed]]\nchapter = "chapters/x.md"\nnumber = "0.526"\n')
    with pytest.raises(ValueError, match="has no reason"):
        prose_numbers.read_allowlist(bad)
    bad.write_text('[[pending]]\nnumber = "0.526"\n')
    with pytest.raises(ValueError, match="needs chapter and number"):
        prose_numbers.read_allowlist(bad)
    bad.write_text('[[allowed]]\nchapter = "c.md"\nnumber = "*"\nreason = "r"\n')
    with pytest.raises(ValueError, match="needs near"):
        prose_numbers.read_allowlist(bad)


def test_write_pending_keeps_the_reasoned_entries_and_lists_the_rest(tmp_path: Path) -> None:
    allow = tmp_path / "allow.toml"
    allow.write_text(
        '# head\n[[allowed]]\nchapter = "c.md"\nnumber = "0.526"\nreason = "r"\n\n'
        f'{prose_numbers.PENDING_HEADER}\n[[pending]]\nchapter = "c.md"\n'
        'number = "9.99"\n',
        encoding="utf-8",
    )
    hits = [
        prose_numbers.Hit("c.md", "0.526", 3, "It is 0.526."),
        prose_numbers.Hit("c.md", "0.731", 4, "Then 0.731, and 0.731 again."),
    ]
    assert prose_numbers.write_pending(hits, allow) == 1
    entries = prose_numbers.read_allowlist(allow)
    assert [(e.number, e.pending) for e in entries] == [("0.526", False), ("0.731", True)]
    assert allow.read_text(encoding="utf-8").startswith("# head\n[[allowed]]")
