"""The book's notation, checked: symbols in a chapter's math that chapters/appendix/notation.md
forbids (tests/notation_rules.toml: a regular expression and the reason, per rule).

The math of a chapter is what its markdown cells typeset: ``$…$``, ``$$…$$``, ``{math}`` blocks
and roles (not code, not prose). Run it to list a chapter's hits
(``python scripts/notation.py chapters/07_alibi.md``) or, with ``--write-pending``, to rewrite the
pending section of tests/notation_allowlist.toml (every hit no ``[[allowed]]`` entry covers).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import jupytext
from prose_numbers import read_toml

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "tests" / "notation_rules.toml"
ALLOWLIST = ROOT / "tests" / "notation_allowlist.toml"
PENDING_HEADER = "# Pending: symbols not yet in the book's notation (remove as chapters are fixed)"

CODE_FENCE = re.compile(r"^(`{3,}|~{3,})(?!\{math\}).*?^\1[ \t]*$", re.M | re.S)
MATH_BLOCK = re.compile(r"^(:{3,}|`{3,})\{math\}[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
MATH_ROLE = re.compile(r"\{math\}`([^`]*)`")
CODE_SPAN = re.compile(r"(`+)(?:.+?)\1", re.S)
DISPLAY = re.compile(r"\$\$(.*?)\$\$", re.S)
INLINE = re.compile(r"(?<![\\$])\$(?!\$)((?:\\.|[^$\\])+?)\$")
OPTION = re.compile(r"^:[\w-]+:.*$", re.M)


@dataclass(frozen=True)
class Rule:
    id: str
    pattern: re.Pattern[str]
    reason: str


@dataclass(frozen=True)
class Hit:
    """A forbidden symbol: the chapter, the rule, the text it matched, its line, the math."""

    chapter: str
    rule: str
    match: str
    line: int
    math: str


@dataclass(frozen=True)
class Allowed:
    """An allowlist entry: ``rule`` in ``chapter`` (only where it matched ``match``, if set)."""

    chapter: str
    rule: str
    match: str = ""
    reason: str = ""
    pending: bool = False

    def covers(self, hit: Hit) -> bool:
        return (
            hit.chapter == self.chapter and hit.rule == self.rule and self.match in (hit.match, "")
        )


def read_rules(path: Path = RULES) -> list[Rule]:
    rules = []
    for item in read_toml(path.read_text(encoding="utf-8")).get("forbidden", []):
        if set(item) != {"id", "pattern", "reason"}:
            raise ValueError(f"{path.name}: a rule has id, pattern and reason; got {sorted(item)}")
        rules.append(Rule(item["id"], re.compile(item["pattern"], re.M), item["reason"]))
    return rules


def read_allowlist(path: Path = ALLOWLIST, rules: list[Rule] | None = None) -> list[Allowed]:
    known = {rule.id for rule in rules or read_rules()}
    data = read_toml(path.read_text(encoding="utf-8")) if path.exists() else {}
    entries = []
    for kind in ("allowed", "pending"):
        for item in data.get(kind, []):
            if not {"chapter", "rule"} <= set(item) or set(item) - {
                "chapter",
                "rule",
                "match",
                "reason",
            }:
                raise ValueError(
                    f"{path.name}: a [[{kind}]] entry has chapter, rule and "
                    f"optionally match, reason; got {sorted(item)}"
                )
            if item["rule"] not in known:
                raise ValueError(f"{path.name}: unknown rule {item['rule']!r}")
            if kind == "allowed" and not item.get("reason"):
                raise ValueError(
                    f"{path.name}: [[allowed]] {item['chapter']} {item['rule']} has no reason"
                )
            entries.append(
                Allowed(
                    item["chapter"],
                    item["rule"],
                    item.get("match", ""),
                    item.get("reason", ""),
                    kind == "pending",
                )
            )
    return entries


def math_spans(markdown: str) -> list[tuple[int, str]]:
    """``(line within the cell, math)`` for every piece of math a markdown cell typesets."""
    spans: list[tuple[int, str]] = []

    def keep(match: re.Match[str], group: int) -> str:
        spans.append((markdown.count("\n", 0, match.start()), match.group(group)))
        return re.sub(r"[^\n]", " ", match.group(0))

    def blank(match: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", match.group(0))

    text = MATH_BLOCK.sub(lambda m: keep(m, 2), markdown)
    text = CODE_FENCE.sub(blank, text)
    text = MATH_ROLE.sub(lambda m: keep(m, 1), text)
    text = CODE_SPAN.sub(blank, text)
    text = DISPLAY.sub(lambda m: keep(m, 1), text)
    INLINE.sub(lambda m: keep(m, 1), text)
    return [(line, OPTION.sub("", math)) for line, math in spans]


def chapter_hits(md: Path, rules: list[Rule] | None = None, root: Path = ROOT) -> list[Hit]:
    """Every forbidden symbol in the math of chapter ``md``."""
    rules = rules if rules is not None else read_rules()
    name = md.relative_to(root).as_posix()
    source = md.read_text(encoding="utf-8")
    lines = source.splitlines()
    hits = []
    cursor = 0
    for cell in jupytext.reads(source, fmt="md:myst").cells:
        if cell.cell_type != "markdown" or not cell.source.strip():
            continue
        first = cell.source.splitlines()[0]
        offset = next((i for i in range(cursor, len(lines)) if lines[i] == first), cursor)
        cursor = offset + 1
        for line, math in sorted(math_spans(cell.source)):
            for rule in rules:
                for match in rule.pattern.finditer(math.strip()):
                    text = match.group(0).strip() or math.strip()
                    hits.append(
                        Hit(
                            name,
                            rule.id,
                            text,
                            offset + line + 1,
                            re.sub(r"\s+", " ", math.strip())[:100],
                        )
                    )
    return hits


def pending_toml(hits: list[Hit]) -> str:
    out = [PENDING_HEADER + "\n# (regenerate: python scripts/notation.py --write-pending)\n"]
    seen: set[tuple[str, str, str]] = set()
    for hit in hits:
        if (hit.chapter, hit.rule, hit.match) in seen:
            continue
        seen.add((hit.chapter, hit.rule, hit.match))
        out.append(
            f'[[pending]]\nchapter = "{hit.chapter}"\nrule = "{hit.rule}"\n'
            f"match = {json.dumps(hit.match, ensure_ascii=False)}\n"
            f"# line {hit.line}: ${hit.math}$\n"
        )
    return "\n".join(out)


def write_pending(hits: list[Hit], path: Path = ALLOWLIST) -> int:
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    head = text.split(PENDING_HEADER)[0].rstrip() + "\n\n"
    allowed = [entry for entry in read_allowlist(path) if not entry.pending]
    left = [hit for hit in hits if not any(entry.covers(hit) for entry in allowed)]
    path.write_text(head + pending_toml(left), encoding="utf-8")
    for entry in allowed:
        if not any(entry.covers(hit) for hit in hits):
            print(
                f"stale [[allowed]] entry, remove it by hand: {entry.chapter} {entry.rule} "
                f"{entry.match!r}",
                file=sys.stderr,
            )
    return len({(hit.chapter, hit.rule, hit.match) for hit in left})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "chapters", nargs="*", type=Path, help="chapter .md files (default: every chapter)"
    )
    parser.add_argument(
        "--write-pending",
        action="store_true",
        help="rewrite the pending section of tests/notation_allowlist.toml",
    )
    args = parser.parse_args(argv)
    from chapters import notebook_chapters

    paths = [p.resolve() for p in args.chapters] or notebook_chapters()
    rules = read_rules()
    hits = [hit for path in paths for hit in chapter_hits(path, rules)]
    if args.write_pending:
        if args.chapters:
            parser.error("--write-pending scans every chapter; name none")
        print(f"wrote {write_pending(hits)} pending entries to {ALLOWLIST.relative_to(ROOT)}")
        return 0
    reasons = {rule.id: rule.reason for rule in rules}
    for hit in hits:
        print(f"{hit.chapter}:{hit.line}: [{hit.rule}] {hit.match!r} in ${hit.math}$")
    print(
        f"{len(hits)} symbols outside the notation; rules: "
        + "; ".join(f"{k}: {v}" for k, v in reasons.items() if any(h.rule == k for h in hits)),
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
