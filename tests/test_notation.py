"""One notation: the chapters' math uses chapters/appendix/notation.md's symbols.

tests/notation_rules.toml lists what the table forbids (a regular expression and the reason per
rule: PE(p), a lone position t or p, m_h for the ALiBi slope, p for the partial-rotary share…);
scripts/notation.py finds them in a chapter's math. A hit fails unless
tests/notation_allowlist.toml lists it with a reason; an entry that matches nothing fails too.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import notation  # noqa: E402

import chapters  # noqa: E402  (scripts/ is not a package; it is put on the path above)

CHAPTERS = chapters.notebook_chapters()
IDS = [str(p.relative_to(ROOT)) for p in CHAPTERS]
RULES = notation.read_rules()
ALLOWED = notation.read_allowlist(rules=RULES)
REASONS = {rule.id: rule.reason for rule in RULES}


@pytest.mark.parametrize("md", CHAPTERS, ids=IDS)
def test_chapter_math_uses_the_books_notation(md: Path) -> None:
    hits = [
        hit
        for hit in notation.chapter_hits(md, RULES)
        if not any(entry.covers(hit) for entry in ALLOWED)
    ]
    listing = "\n".join(
        f"  line {h.line}: {h.match!r} in ${h.math}$ — {REASONS[h.rule]}" for h in hits
    )
    assert not hits, (
        f"{md.name}: symbols chapters/appendix/notation.md forbids (fix them, or "
        f"list them with a reason in tests/notation_allowlist.toml):\n{listing}"
    )


def test_every_allowlist_entry_still_matches() -> None:
    hits = [hit for md in CHAPTERS for hit in notation.chapter_hits(md, RULES)]
    stale = [entry for entry in ALLOWED if not any(entry.covers(hit) for hit in hits)]
    assert not stale, "stale entries in tests/notation_allowlist.toml (remove them): " + ", ".join(
        f"{e.chapter} {e.rule} {e.match!r}" for e in stale
    )


def test_the_notation_page_states_every_decision() -> None:
    # The table says what the rules enforce: the symbols the chapters must use.
    page = (ROOT / "chapters" / "appendix" / "notation.md").read_text(encoding="utf-8")
    for symbol in [
        "$m$, $n$",
        "$r = m - n$",
        "$L$",
        "$L_{\\text{train}}$",
        "$i$",
        "$b$",
        "$d$",
        "$\\theta_i = b^{-2i/d}$",
        "$\\lambda_i = 2\\pi/\\theta_i$",
        "$H$, $h$",
        "$\\mu_h$",
        "$\\rho$",
        "$s$",
        "$\\mathrm{PE}(m)",
        "$\\Phi(r)",
        "$q_m$, $k_n$",
        "$R_m",
        "$\\alpha$, $\\beta$",
        "$\\tau_i",
        "$a$",
    ]:
        assert f"| {symbol}" in page, symbol
    assert "tests/test_notation.py" in page


def hits_in(tmp_path: Path, math: str) -> list[tuple[str, str]]:
    md = tmp_path / "chapter.md"
    md.write_text(
        "---\njupytext:\n  text_representation:\n    format_name: myst\n---\n\n" + math + "\n",
        encoding="utf-8",
    )
    return [(h.rule, h.match) for h in notation.chapter_hits(md, RULES, root=tmp_path)]


@pytest.mark.parametrize(
    "text, found",
    [
        (
            "The encoding $\\mathrm{PE}(p)$ of $p$.",
            [("pe-argument", "{PE}(p"), ("lone-position", "p")],
        ),
        (
            "$$\n\\mathrm{PE}(p+k) = M(k)\\,\\mathrm{PE}(p)\n$$",
            [
                ("pe-argument", "{PE}(p"),
                ("pe-argument", "{PE}(p"),
                ("position-arithmetic", "p+k"),
                ("shift-map", "M(k)"),
            ],
        ),
        (
            "ALiBi adds $-m_h\\,(m - n)$; the share $d_r = pD$.",
            [("alibi-slope-m", "m_h"), ("partial-share-p", "pD")],
        ),
        (
            "At step $t$ the query $q_t$ meets $k_s$, $k = n - m$.",
            [
                ("lone-position", "t"),
                ("position-subscript", "q_t"),
                ("position-subscript", "k_s"),
                ("relative-distance", "k = n - m"),
            ],
        ),
        (
            "YaRN: $r = L/\\lambda$, $\\gamma(r)$, factor $m(s,c)$, $L_{train}$, $d_k$, "
            "$\\mathrm{pos}$.",
            [
                ("yarn-turns-r", "r = L/\\lambda"),
                ("yarn-turns-r", "\\gamma(r)"),
                ("attention-factor-m", "m(s"),
                ("train-length", "L_{train}"),
                ("head-size", "d_k"),
                ("pos", "\\mathrm{pos}"),
            ],
        ),
        # The book's own symbols pass; code and prose are not math.
        (
            "$\\mathrm{PE}(m)$, $q_m^\\top R_{n-m} k_n$, $-\\mu_h r$, $\\rho d$, $s$, $q$, "
            "$L_{\\text{train}}$, $\\theta_i = b^{-2i/d}$, "
            "$\\tau_i = L_{\\text{train}}/\\lambda_i$, "
            "$\\gamma_i$, $a(s) = 0.1\\ln s + 1$, $\\Phi(r)\\,\\mathrm{PE}(n)$, "
            "`PE(p)` and the word p.",
            [],
        ),
        ("```{math}\n:label: eq-x\n\\mathrm{PE}(t)\n```", [("pe-argument", "{PE}(t")]),
    ],
)
def test_what_the_rules_catch(tmp_path: Path, text: str, found: list[tuple[str, str]]) -> None:
    assert sorted(hits_in(tmp_path, text)) == sorted(found)
