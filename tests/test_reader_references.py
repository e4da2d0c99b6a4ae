"""The reader notebooks' reference lists print names and titles as the book does, not as TeX.

``scripts/reader_markdown.py`` writes each notebook's references from ``references.bib``; TeX's
accents (``Veli{\\v{c}}kovi{\\'c}``) and dash ligatures (``---``) must come out as the letters and
dashes they typeset, not as "Velickovi'c" and a literal ``---``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import reader_markdown as rm  # noqa: E402  (a script, not a package)

BIB = rm.parse_bib((ROOT / "references.bib").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("tex", "printed"),
    [
        ("Veli{\\v{c}}kovi{\\'c}, Petar", "Veličković, Petar"),
        ("Timoth{\\'e}e", "Timothée"),
        ("Rozi{\\`e}re", "Rozière"),
        ('M{\\"u}ller', "Müller"),
        ("Doll{\\'a}r", "Dollár"),
        ("Ca{\\c{c}}a", "Caça"),
        ('na{\\"\\i}ve', "naïve"),
        ("探秘{Transformer}之（8）--- 位置编码", "探秘Transformer之（8）— 位置编码"),
        ("pages 12--17", "pages 12–17"),
    ],
)
def test_tex_accents_and_dashes_become_unicode(tex: str, printed: str) -> None:
    assert rm._strip_tex(tex) == printed


def test_commands_that_are_not_accents_are_left_alone() -> None:
    text = "\\kappa, \\url{x}, \\verb, \\ref, \\upsilon"
    assert rm.tex_to_unicode(text) == text


def test_reference_lists_print_the_names_and_titles_as_typeset() -> None:
    barbero = rm.reference_entry(BIB["barbero2025round"])
    assert "Veličković" in barbero and "'" not in barbero.split("*")[0], barbero
    seed = rm.reference_entry(BIB["seed_posenc_nope"])
    assert "探秘Transformer之（8）— 位置编码" in seed and "---" not in seed, seed
    for key, entry in BIB.items():
        entry_text = rm.reference_entry(entry)
        assert "\\" not in entry_text and "---" not in entry_text, (key, entry_text)
