"""Hand-typed numbers in a chapter's prose: what tests/test_prose_numbers.py refuses.

A number the book computes reaches the prose through glue (``{glue:text}`name:fmt```), so that it
changes when the code does. This module finds the numbers typed by hand instead: in the markdown
cells of ``chapters/**/*.md``, outside math (``$…$``, ``$$…$$``, ``{math}``), code (spans, fences,
code cells), roles (glue, references), links' addresses and HTML tags, and outside every sentence
that cites a paper (``{cite}``, ``{cite:p}``, ``{cite:t}``: a paper's number stays typed beside its
citation). What it reports (a *hit*) is a number that looks measured:

- three or more significant figures (``0.526``, ``283``, ``47 117``, ``4.51e-3``);
- a decimal fraction with two (``0.95``, ``4.5``, ``0.027``), or a percentage with two (``43 %``);
- a result stated in math (``$r \\approx 287$``, a decimal after ``=`` that ends the relation:
  ``$\\mathrm{Si}(1/4)/\\ln b = 0.0271$``; ``$b = 10\\,000$`` defines, it is not a hit), and a
  rounded one in words (``about 48 000``: its zeros hide the figures it was rounded from).

Not hits: years (1990–2035); thresholds (``at least 0.95``, ``more than 99.9 %``); version
numbers (``2.13.0``; ``transformers 5.25``, ``Llama 3.1``, after a package or model name);
section, equation, figure and chapter numbers (``Section 3.2``, ``eq. (12)``); arXiv identifiers;
powers of two (sizes: ``4096``, ``131 072``); whole numbers ending in zeros (``10 000``,
``500 000``: one or two significant figures). Digits grouped by a space or thin space
(``47 117``) are one number.

Run it to list a chapter's hits (``python scripts/prose_numbers.py chapters/05_rope_derivation.md``)
or, with ``--toml``, to print the allowlist's pending section for every chapter
(tests/prose_numbers_allowlist.toml).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import jupytext

ROOT = Path(__file__).resolve().parent.parent

# --- what is not prose ---------------------------------------------------------------------------

FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
DIRECTIVE = re.compile(r"^(?P<fence>:{3,}|`{3,})\{(?P<name>[\w:-]+)\}(?P<arg>.*)$")
NOT_PROSE_DIRECTIVES = {
    "math",
    "code-block",
    "code",
    "sourcecode",
    "code-cell",
    "raw",
    "csv-table",
    "literalinclude",
    "image",
    "figure",
}
OPTION = re.compile(r"^:[\w-]+:.*$")
LABEL = re.compile(r"^\([^()\s]+\)=\s*$")
DISPLAY_MATH = re.compile(r"\$\$.*?\$\$(?:\s*\([^()\s]+\))?", re.S)
INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)(?:\\.|[^$\\])+?\$")
# A role or a code span, scanned left to right so that a role's backticks are not a code span.
ROLE_OR_CODE = re.compile(r"\{(?P<role>[a-zA-Z][\w:.+-]*)\}`[^`]*`|(`+)(?:.+?)\2", re.S)
# What a code span leaves: a word, so that `torch` 2.13 reads as a version.
CODE = "\u27e8code\u27e9"
CITED = "\u2020cited\u2020"  # what a {cite} role leaves in a sentence (a marker, not a number)
LINK_TARGET = re.compile(r"\]\([^)]*\)")
HTML_TAG = re.compile(r"<[^>\n]+>")
URL = re.compile(r"https?://\S+")

# --- numbers ----------------------------------------------------------------------------------

SPACE = "[ \u2009\u202f\u00a0]"
NUMBER = re.compile(
    r"(?<![\w./#])"  # not part of a word, an identifier, a version, a path or an issue #
    rf"(?P<number>\d{{1,3}}(?:{SPACE}\d{{3}})+(?![\d])(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?P<exponent>[eE][-+−]?\d+)?"
    r"(?P<after>(?:\.\d+)*)"  # 2.13.0: a version
    rf"(?P<percent>{SPACE}?%)?"
)
# A number right after one of these words is a name's or a place's number, not a measurement.
NAMED = re.compile(
    r"(?:\b(?:[Ss]ection|[Cc]hapter|[Ee]quation|[Ee]qs?\.|[Tt]able|[Ff]ig(?:ure|\.)|[Aa]ppendix"
    r"|[Ee]xercise|[Ss]tep|[Ll]ine|[Vv]ersion|v|arXiv|[Pp]ython|[Tt]ransformers|[Tt]orch"
    r"|PyTorch|NumPy|numpy|vLLM|myst-nb|[Jj]upyter[- ][Bb]ook|jupytext|plotly|CUDA|Unicode"
    r"|Llama|LLaMA|Qwen|Gemma|Mistral|Mixtral|Phi|GPT|DeepSeek|Falcon|OLMo|SmolLM|Claude|Gemini"
    r"|ModernBERT|BERT|T5|GLM|ERNIE|ISO|IEEE|RFC|PEP|GPL|LGPL|Apache|MIT|BSD|CC-BY)|\u27e8code\u27e9)\s*[-‑:]?\s*\(?$|§\s*$"
)


# "at least 0.95", "more than 99.9 %": a threshold the text chose (a check asserts it).
THRESHOLD = re.compile(r"\b(?:at least|at most|more than|less than|fewer than)\s*$")
# "about 48 000", "≈ 287": a rounded computation.
ROUNDED = re.compile(
    r"(?:\b(?:about|approximately|roughly|nearly|almost|around)|~|≈|\\approx|"
    r"\\simeq)\s*$"
)
# In math, only a result is a hit: the number after \approx (or a decimal after =) that ends the
# relation, as in $r \approx 287$ or $\mathrm{Si}(1/4)/\ln b = 0.0271$; $b = 10\,000$ defines.
MATH_RESULT = re.compile(
    r"(?P<relation>\\approx|\\simeq|≈|=)\s*(?P<number>\d{1,3}(?:\\,\d{3})+|\d+(?:\.\d+)?)"
    r"(?P<percent>\s*\\?%)?"  # then the relation ends (a unit in \text may follow):
    r"(?=(?:\\[,;!])?\s*(?:\$|,|;|\.|\\q?quad|\\text|\\mathrm|\)|\\\\|$))"
)


@dataclass(frozen=True)
class Hit:
    """A hand-typed number: the chapter, the number as written, its line, the sentence."""

    chapter: str
    number: str
    line: int
    sentence: str


def significant_figures(digits: str) -> int:
    """Significant figures of a number written ``digits`` (``0.0271`` → 3, ``47117`` → 5,
    ``10000`` → 1: trailing zeros of a whole number are not counted)."""
    if "." in digits:
        whole, frac = digits.split(".", 1)
        body = (whole + frac).lstrip("0")
        return len(body)
    return len(digits.lstrip("0").rstrip("0"))


def is_hit(number: str, exponent: str, after: str, percent: str, before: str) -> bool:
    """Whether a number, written as found, is one the book should glue (see the module doc)."""
    if after or re.fullmatch(r"\d{4}\.\d{4,5}", number):  # 2.13.0; an arXiv identifier
        return False
    if NAMED.search(before[-40:]) or THRESHOLD.search(before[-20:]):
        return False
    digits = re.sub(SPACE, "", number)
    figures = significant_figures(digits)
    decimal = "." in digits
    if not decimal and not exponent and not percent:
        value = int(digits)
        if 1990 <= value <= 2035 and len(digits) == 4:
            return False  # a year (the book's sources are from 1990 on)
        if value >= 64 and value & (value - 1) == 0:
            return False  # a power of two: a size
    if figures >= 3:
        return True
    if ROUNDED.search(before[-20:]) and not decimal:
        # "about 48 000": a rounded result; its zeros hide the figures it was rounded from.
        return len(digits.lstrip("0").rstrip("0")) >= 2
    return figures >= 2 and bool(decimal or percent)


def _strip_blocks(text: str) -> list[tuple[int, str]]:
    """The prose lines of a markdown cell (``(line number, text)``): code fences, math directives
    and their options dropped; admonitions and dropdowns keep their text."""
    out: list[tuple[int, str]] = []
    skip_until: str | None = None
    for number, line in enumerate(text.splitlines()):
        stripped = line.strip()
        if skip_until is not None:
            if stripped == skip_until:
                skip_until = None
            continue
        directive = DIRECTIVE.match(stripped)
        if directive:
            if directive["name"] in NOT_PROSE_DIRECTIVES:
                skip_until = directive["fence"]
                continue
            out.append((number, directive["arg"]))  # an admonition's title is prose
            continue
        fence = FENCE.match(stripped)
        if fence:
            skip_until = fence["fence"]
            continue
        if OPTION.match(stripped) or LABEL.match(stripped) or re.fullmatch(r"[:`~]{3,}", stripped):
            continue
        out.append((number, line))
    return out


def _sentences(text: str) -> list[tuple[int, str]]:
    """Sentences (and table rows, headings, list items) of a block of prose lines joined with
    ``\\n``, with the offset where each starts."""
    pieces: list[tuple[int, str]] = []
    start = 0
    boundary = re.compile(
        r"(?<=[.!?:;])\s+(?=[\"“(*_]*[A-Z0-9$`{\[])"  # a sentence ends
        r"|\n\s*\n"  # a paragraph ends
        r"|\n(?=\s*(?:[|#>]|[-*+] |\d+\. ))"
    )  # a table row, heading, item
    for match in boundary.finditer(text):
        pieces.append((start, text[start : match.start()]))
        start = match.end()
    pieces.append((start, text[start:]))
    return pieces


def _blank(match: re.Match[str]) -> str:
    """A removed span keeps its newlines (line numbers) and becomes a neutral word."""
    return re.sub(r"[^\n]", " ", match.group(0)).replace(" ", "x", 1) if match.group(0) else ""


def _math_results(match: re.Match[str]) -> str:
    """Math goes, but the results it states stay as prose: ``$r \\approx 287$`` → ``≈ 287``."""
    results = []
    for result in MATH_RESULT.finditer(match.group(0)):
        number = result["number"].replace("\\,", " ")
        relation = "≈" if result["relation"] != "=" else "="
        if relation == "=" and "." not in number:
            continue  # $d = 128$, $b = 10\,000$: a definition
        results.append(f"{relation} {number}{'%' if result['percent'] else ''}")
    newlines = "\n" * match.group(0).count("\n")
    return ("x " + " ".join(results) + " x" if results else "x") + newlines


def _role_or_code(match: re.Match[str]) -> str:
    """A citation becomes the marker that drops its sentence; a code span a word (a number
    right after one, ``transformers`` 5.25, is a version); other roles go."""
    newlines = "\n" * match.group(0).count("\n")
    if (match["role"] or "").startswith("cite"):
        return CITED + newlines
    if match["role"] is None:
        return CODE + newlines
    return _blank(match)


def chapter_hits(md: Path, root: Path = ROOT) -> list[Hit]:
    """Every hand-typed number in the prose of chapter ``md`` (see the module doc)."""
    name = md.relative_to(root).as_posix() if md.is_absolute() else md.as_posix()
    source = md.read_text(encoding="utf-8")
    notebook = jupytext.reads(source, fmt="md:myst")
    lines = source.splitlines()
    hits: list[Hit] = []
    cursor = 0
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        # The cell's first line in the file (for a line number in the report).
        first = cell.source.splitlines()[0] if cell.source.strip() else ""
        offset = next((i for i in range(cursor, len(lines)) if lines[i] == first), cursor)
        cursor = offset + 1
        kept = _strip_blocks(cell.source)
        prose = "\n".join(line for _, line in kept)
        line_of = [n for n, _ in kept]
        prose = DISPLAY_MATH.sub(_math_results, prose)
        prose = ROLE_OR_CODE.sub(_role_or_code, prose)
        prose = INLINE_MATH.sub(_math_results, prose)
        for regex in (LINK_TARGET, URL, HTML_TAG):
            prose = regex.sub(_blank, prose)
        for start, sentence in _sentences(prose):
            if CITED in sentence:
                continue
            visible = sentence
            for match in NUMBER.finditer(visible):
                if is_hit(
                    match["number"],
                    match["exponent"] or "",
                    match["after"],
                    match["percent"] or "",
                    visible[: match.start()],
                ):
                    row = prose.count("\n", 0, start + match.start())
                    text = re.sub(r"\s+", " ", visible).strip()
                    hits.append(
                        Hit(name, match.group(0).strip(), offset + line_of[row] + 1, text[:160])
                    )
    return hits


ALLOWLIST = ROOT / "tests" / "prose_numbers_allowlist.toml"
PENDING_HEADER = "# Pending: hand-typed numbers not yet glued (remove as chapters are fixed)"


@dataclass(frozen=True)
class Allowed:
    """An allowlist entry: ``number`` in ``chapter`` (in a sentence containing ``near``, if set)."""

    chapter: str
    number: str
    near: str = ""
    reason: str = ""
    pending: bool = False

    def covers(self, hit: Hit) -> bool:
        """Whether the entry lets ``hit`` stand (``number = "*"``: every number of a sentence
        containing ``near``, e.g. a paper's table of results cited just before)."""
        return (
            hit.chapter == self.chapter
            and self.number in (hit.number, "*")
            and self.near in hit.sentence
        )


def read_toml(text: str) -> dict[str, list[dict[str, str]]]:
    """The allowlists' TOML: arrays of tables (``[[allowed]]``) of ``key = "string"`` (or
    ``key = 'literal'``) lines, and comments. (``tomllib`` is Python 3.11+; the book supports
    3.10.)"""
    data: dict[str, list[dict[str, str]]] = {}
    current: dict[str, str] | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        table = re.fullmatch(r"\[\[(\w+)\]\]", line)
        pair = re.fullmatch(r'(\w+)\s*=\s*("(?:[^"\\]|\\.)*"|\'[^\']*\')\s*(?:#.*)?', line)
        if table:
            current = {}
            data.setdefault(table.group(1), []).append(current)
        elif pair and current is not None:
            value = pair.group(2)
            current[pair.group(1)] = value[1:-1] if value[0] == "'" else json.loads(value)
        else:
            raise ValueError(f'allowlist line {number}: expected [[table]] or key = "string"')
    return data


def read_allowlist(path: Path = ALLOWLIST) -> list[Allowed]:
    """The entries of the allowlist: ``[[allowed]]`` (with a reason) and ``[[pending]]``."""
    data = read_toml(path.read_text(encoding="utf-8")) if path.exists() else {}
    entries = []
    for kind in ("allowed", "pending"):
        for item in data.get(kind, []):
            unknown = set(item) - {"chapter", "number", "near", "reason"}
            if unknown or not {"chapter", "number"} <= set(item):
                raise ValueError(
                    f"{path.name}: a [[{kind}]] entry needs chapter and number "
                    f"(and may have near, reason); got {sorted(item)}"
                )
            if item["number"] == "*" and not item.get("near"):
                raise ValueError(f'{path.name}: number = "*" needs near (a sentence to match)')
            if kind == "allowed" and not item.get("reason"):
                raise ValueError(
                    f"{path.name}: [[allowed]] {item['chapter']} {item['number']} has no reason"
                )
            entries.append(
                Allowed(
                    item["chapter"],
                    item["number"],
                    item.get("near", ""),
                    item.get("reason", ""),
                    kind == "pending",
                )
            )
    return entries


def pending_toml(hits: list[Hit]) -> str:
    """The allowlist's pending section for ``hits``: one ``[[pending]]`` entry per number (per
    chapter), with the first sentence it appears in as a comment."""
    out = [PENDING_HEADER + "\n# (regenerate: python scripts/prose_numbers.py --write-pending)\n"]
    seen: set[tuple[str, str]] = set()
    for hit in hits:
        if (hit.chapter, hit.number) in seen:
            continue
        seen.add((hit.chapter, hit.number))
        at = max(hit.sentence.find(hit.number), 0)
        context = hit.sentence[max(at - 50, 0) : at + len(hit.number) + 30]
        out.append(
            f'[[pending]]\nchapter = "{hit.chapter}"\nnumber = "{hit.number}"\n'
            f"# line {hit.line}: …{context}…\n"
        )
    return "\n".join(out)


def write_pending(hits: list[Hit], path: Path = ALLOWLIST) -> int:
    """Rewrite the allowlist's pending section with the ``hits`` no ``[[allowed]]`` entry covers;
    the part above the pending header is kept as it is. Returns how many entries it wrote."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    head = text.split(PENDING_HEADER)[0].rstrip() + "\n\n"
    allowed = [entry for entry in read_allowlist(path) if not entry.pending]
    left = [hit for hit in hits if not any(entry.covers(hit) for entry in allowed)]
    path.write_text(head + pending_toml(left), encoding="utf-8")
    for entry in allowed:
        if not any(entry.covers(hit) for hit in hits):
            print(
                f"stale [[allowed]] entry, remove it by hand: {entry.chapter} {entry.number!r}"
                + (f" near {entry.near!r}" if entry.near else ""),
                file=sys.stderr,
            )
    return len({(hit.chapter, hit.number) for hit in left})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "chapters", nargs="*", type=Path, help="chapter .md files (default: every chapter)"
    )
    parser.add_argument(
        "--toml",
        action="store_true",
        help="print the allowlist's [[pending]] entries instead of a listing",
    )
    parser.add_argument(
        "--write-pending",
        action="store_true",
        help="rewrite the pending section of tests/prose_numbers_allowlist.toml "
        "(every chapter's hits that no [[allowed]] entry covers)",
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "scripts"))
    from chapters import notebook_chapters

    paths = [p.resolve() for p in args.chapters] or notebook_chapters()
    hits = [hit for path in paths for hit in chapter_hits(path)]
    if args.write_pending:
        if args.chapters:
            parser.error("--write-pending scans every chapter; name none")
        count = write_pending(hits)
        print(f"wrote {count} pending entries to {ALLOWLIST.relative_to(ROOT)}")
        return 0
    if args.toml:
        print(pending_toml(hits))
        return 0
    for hit in hits:
        print(f"{hit.chapter}:{hit.line}: {hit.number}    {hit.sentence}")
    print(f"{len(hits)} hand-typed numbers", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
