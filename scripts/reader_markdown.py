"""MyST markdown made readable in Colab, Binder and a plain Jupyter: the notebooks' markdown.

The chapters are MyST: ``(label)=`` targets, roles (``{ref}``, ``{eq}``, ``{cite:p}``, …) and
directives (admonitions, dropdown solutions). Jupyter front-ends show those as raw text, so the
``.ipynb`` twins get plain Jupyter markdown generated from the ``.md`` (the one source):

- a cross-reference becomes a link to the published book's page (or, in the same notebook, to the
  anchor left where the label was); an equation reference becomes its number, as in the book,
  and each labelled display equation gets that number as a ``\\tag``;
- a citation becomes (Author, year) / Author (year), and the notebook ends with the references
  it cites, read from ``references.bib``;
- an admonition becomes a blockquote with a bold title; a ``dropdown`` one (an exercise's
  solution) becomes an HTML ``<details>`` block, closed until the reader opens it;
- a glued number (`` {glue:text}`name:fmt` ``, `` {glue}`name` ``, `` {glue:md}`name` ``, and
  ``doc.md::name`` from another page) becomes the value the executed build stored, formatted as
  myst-nb formats it, in ``<span title="computed: name:fmt">…</span>`` so that a test can compare
  a twin with its source modulo the glued values (a float's last digit differs between machines);
  a missing build or key fails loudly, naming the page and the key;
- other roles keep their text (as code for Python objects); ``$``/``$$`` math stays as it is.
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from ast import literal_eval
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

ROLE = re.compile(r"\{([a-zA-Z][\w:.+-]*)\}`([^`]*)`")
LABEL_LINE = re.compile(r"^\(([^()\s]+)\)=\s*$")
EQUATION_LABEL = re.compile(r"^(?P<body>.*?)\$\$\s*\((?P<label>[^()\s]+)\)\s*$")
DIRECTIVE_OPEN = re.compile(r"^(?P<fence>:{3,}|`{3,})\{(?P<name>[\w:-]+)\}\s*(?P<arg>.*)$")
OPTION = re.compile(r"^:(?P<key>[\w-]+):\s*(?P<value>.*)$")
HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
CODE_CELL = re.compile(r"^```\{code-cell\}.*?^```[ \t]*$", re.M | re.S)
# A role, or an inline code span (left as it is): scanned left to right, so neither is split.
ROLE_OR_CODE = re.compile(r"\{([a-zA-Z][\w:.+-]*)\}`([^`]*)`|(`+)(.+?)\3")
ADMONITIONS = {"admonition", "note", "warning", "tip", "important", "caution", "attention",
               "danger", "error", "hint", "seealso", "dropdown"}
CODE_ROLES = {"mod", "func", "class", "meth", "attr", "obj", "data", "exc", "py:mod", "py:func",
              "py:class", "py:meth", "py:attr", "py:obj", "py:data", "py:exc", "code",
              "literal", "file", "command", "envvar", "kbd", "samp", "program", "option"}


# --- the book's labels: sections, pages and equations ---------------------------------------

@dataclass
class Target:
    doc: str  # the page, e.g. "chapters/03_sinusoidal" (no suffix)
    title: str  # the heading's text, or "(12)" for an equation
    anchor: str  # the HTML anchor in the book's page ("" for a page's own label)


@dataclass
class Labels:
    targets: dict[str, Target] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)  # page -> its first "# " heading


def _heading_text(text: str) -> str:
    return ROLE.sub(lambda m: _role_text(m.group(2)), text).strip()


def _role_text(content: str) -> str:
    match = re.match(r"^(.*?)\s*<([^<>]+)>$", content, re.S)
    return (match.group(1) if match else content).strip()


def collect_labels(root: Path, docs: list[str]) -> Labels:
    """Every ``(label)=`` and labelled ``$$`` equation of ``docs`` (in the book's order).

    Equations are numbered through the whole book in the table of contents' order, as the
    book numbers them.
    """
    labels = Labels()
    number = 0
    for doc in docs:
        path = root / f"{doc}.md"
        if not path.exists():
            continue
        text = CODE_CELL.sub("", path.read_text(encoding="utf-8"))
        title = re.search(r"^# (.+)$", text, re.M)
        if title:
            labels.titles[doc] = _heading_text(title.group(1))
        lines = text.splitlines()
        for index, line in enumerate(lines):
            label = LABEL_LINE.match(line)
            if label:
                following = next((x for x in lines[index + 1:] if x.strip()), "")
                heading = HEADING.match(following)
                title = _heading_text(heading.group(2)) if heading else label.group(1)
                first_heading = heading is not None and heading.group(1) == "#"
                anchor = "" if first_heading else label.group(1)
                labels.targets[label.group(1)] = Target(doc, title, anchor)
                continue
            equation = EQUATION_LABEL.match(line)
            if equation:
                number += 1
                name = equation.group("label")
                labels.targets[name] = Target(doc, f"({number})", f"equation-{name}")
    return labels


# --- references.bib --------------------------------------------------------------------------

# TeX accents (\'e, \v{c}, {\"u}, ...) as Unicode combining marks, and TeX's dash ligatures.
TEX_ACCENTS = {"'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303",
               "=": "\u0304", ".": "\u0307", "v": "\u030c", "u": "\u0306", "H": "\u030b",
               "c": "\u0327", "k": "\u0328", "r": "\u030a"}
TEX_ACCENT = re.compile(
    r"\\(['`^\"~=.]|[vuHckr](?![a-zA-Z]))\s*(?:\{\s*(\\?[a-zA-Z])\s*\}|(\\?[a-zA-Z]))"
)


def tex_to_unicode(text: str) -> str:
    """TeX's accents and dashes in a references.bib field as the letters and dashes they print.

    ``Veli{\\v{c}}kovi{\\'c}`` -> ``Veličković``, ``Timoth{\\'e}e`` -> ``Timothée``, ``---`` -> an
    em dash, ``--`` -> an en dash (``\\i`` is a dotless i, the base of an accented i).
    """
    def accent(match: re.Match[str]) -> str:
        base = (match.group(2) or match.group(3)).replace("\\i", "i").replace("\\j", "j")
        return unicodedata.normalize("NFC", base + TEX_ACCENTS[match.group(1)])

    text = TEX_ACCENT.sub(accent, text)
    return text.replace("---", "\u2014").replace("--", "\u2013")


def _strip_tex(text: str) -> str:
    text = tex_to_unicode(text)
    text = re.sub(r"\\[a-zA-Z]+\s*", lambda m: {"\\L": "Ł", "\\l": "ł", "\\o": "ø",
                                                "\\O": "Ø", "\\ss": "ß"}.get(m.group().strip(), ""),
                  text)
    text = re.sub(r"\\(.)", r"\1", text).replace("``", "“").replace("''", "”")
    return re.sub(r"\s+", " ", text.replace("{", "").replace("}", "")).strip()


def _read_value(text: str, start: int) -> tuple[str, int]:
    """A BibTeX field value starting at ``start``: ``{…}`` (nested), ``"…"`` or a bare word."""
    if text[start] == "{":
        depth, index = 0, start
        while True:
            if text[index] == "{":
                depth += 1
            elif text[index] == "}":
                depth -= 1
                if depth == 0:
                    return text[start + 1:index], index + 1
            index += 1
    if text[start] == '"':
        end = text.index('"', start + 1)
        return text[start + 1:end], end + 1
    match = re.match(r"[\w.-]+", text[start:])
    word = match.group() if match else ""
    return word, start + len(word)


def parse_bib(text: str) -> dict[str, dict[str, str]]:
    """``{key: {field: value}}`` of a BibTeX file (values with TeX markup stripped)."""
    entries: dict[str, dict[str, str]] = {}
    for match in re.finditer(r"@(\w+)\s*\{\s*([^,\s]+)\s*,", text):
        fields: dict[str, str] = {"ENTRYTYPE": match.group(1).lower()}
        index = match.end()
        while True:
            item = re.compile(r"\s*(\w+)\s*=\s*").match(text, index)
            if not item:
                break
            value, index = _read_value(text, item.end())
            fields[item.group(1).lower()] = value
            comma = re.compile(r"\s*,").match(text, index)
            if not comma:
                break
            index = comma.end()
        entries[match.group(2)] = fields
    return entries


def _surnames(entry: dict[str, str]) -> list[str]:
    people = [p.strip() for p in re.split(r"\s+and\s+", entry.get("author", "")) if p.strip()]
    names = []
    for person in people:
        if person.startswith("{") and person.endswith("}"):
            names.append(_strip_tex(person))  # an organisation: {OpenAI}
        elif "," in person:
            names.append(_strip_tex(person.split(",")[0]))
        else:
            names.append(_strip_tex(person.split()[-1]))
    return names or [_strip_tex(entry.get("title", "?"))]


def author_short(entry: dict[str, str]) -> str:
    """"Su", "Press and Smith", "Vaswani et al." (the book's author-year style)."""
    names = _surnames(entry)
    if len(names) == 1:
        return names[0]
    if len(names) == 2:
        return f"{names[0]} and {names[1]}"
    return f"{names[0]} et al."


def reference_entry(entry: dict[str, str]) -> str:
    """One line of the notebook's reference list: authors (year). *Title*. Venue. Note."""
    people = [p.strip() for p in re.split(r"\s+and\s+", entry.get("author", "")) if p.strip()]
    # "Last, First" is written "First Last"; {Organisations} stay whole.
    names = [_strip_tex(" ".join(reversed(p.split(",", 1))) if "," in p and not
                        p.startswith("{") else p) for p in people]
    authors = ", ".join(names)
    title = f"*{_strip_tex(entry.get('title', ''))}*"
    year = entry.get("year", "n.d.")
    parts = [f"{authors} ({year}). {title}." if authors else f"{title} ({year})."]
    venue = entry.get("journal") or entry.get("booktitle") or entry.get("howpublished") \
        or entry.get("publisher") or entry.get("school") or entry.get("institution")
    if venue:
        volume = f", {entry['volume']}" if entry.get("volume") else ""
        parts.append(f"{_strip_tex(venue)}{volume}.")
    if entry.get("note"):
        parts.append(f"{_strip_tex(entry['note'])}.")
    link = entry.get("url") or (f"https://doi.org/{entry['doi']}" if entry.get("doi") else "")
    if link:
        parts.append(f"<{link}>")
    return " ".join(parts)


# --- glued values: what the executed build stored -------------------------------------------

GLUE_ROLES = {"glue", "glue:", "glue:any", "glue:text", "glue:md"}
# myst-nb's prefix for a value glued with display=False (posenc_lib.glue always does that).
GLUE_PREFIX = "application/papermill.record/"
# What a glued value becomes in a reader notebook: the value, marked with the role's content.
GLUED = re.compile(r'<span title="computed: (?P<role>[^"]*)">(?P<value>.*?)</span>', re.S)


class GlueSource(Protocol):
    """Where a page's glued values come from: ``bundle(doc, key)`` is the stored mime bundle."""

    def bundle(self, doc: str, key: str) -> dict[str, Any]: ...


def format_plain_text(text: str, fmt_spec: str) -> str:
    """``text/plain`` formatted with ``fmt_spec``, exactly as myst-nb 1.x's ``{glue:text}`` does
    (``myst_nb.core.variables.format_plain_text``; tests/test_notebooks.py compares the two)."""
    try:
        value: Any = literal_eval(text)
    except (SyntaxError, ValueError):
        value = text
    if fmt_spec == "":
        return str(value)
    type_char = fmt_spec[-1]
    if type_char == "s":
        value = str(value)
    elif type_char in ("b", "c", "d", "o", "x", "X"):
        value = int(value)
    elif type_char in ("e", "E", "f", "F", "g", "G", "n", "%"):
        value = float(value)
    return format(value, fmt_spec)


class BuildGlue:
    """The values the built book glued, read from myst-nb's output folder
    (``_build/jupyter_execute``): ``<doc>.glue.json``, which myst-nb writes next to the executed
    notebook, and the executed notebook's own ``scrapbook`` outputs (values glued with display)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._pages: dict[str, dict[str, dict[str, Any]]] = {}

    def page(self, doc: str) -> dict[str, dict[str, Any]]:
        if doc in self._pages:
            return self._pages[doc]
        notebook = self.folder / f"{doc}.ipynb"
        stored = self.folder / f"{doc}.glue.json"
        if not notebook.exists() and not stored.exists():
            raise ValueError(
                f"{doc}: the executed notebook {notebook} is missing, so its glued values are "
                "unknown: build the book first (make book), then make sync")
        data: dict[str, dict[str, Any]] = {}
        if notebook.exists():
            cells = json.loads(notebook.read_text(encoding="utf-8")).get("cells", [])
            for cell in cells:
                for output in cell.get("outputs", []):
                    meta = output.get("metadata", {}).get("scrapbook")
                    if meta:
                        prefix = len(meta.get("mime_prefix", ""))
                        data[meta["name"]] = {
                            "data": {k[prefix:]: v for k, v in output.get("data", {}).items()},
                            "metadata": output.get("metadata", {})}
        if stored.exists():
            data.update(json.loads(stored.read_text(encoding="utf-8")))
        self._pages[doc] = data
        return data

    def bundle(self, doc: str, key: str) -> dict[str, Any]:
        data = self.page(doc)
        if key not in data:
            raise ValueError(
                f"{doc}: glue key {key!r} is not in the executed build "
                f"({self.folder / doc}.glue.json): is it glued in {doc}.md, and is the build "
                "current (make book)?")
        return dict(data[key])


class PlaceholderGlue:
    """Every key holds ``0``: the twin's text without the build (tests/test_notebooks.py compares
    twins modulo their glued values)."""

    def bundle(self, doc: str, key: str) -> dict[str, Any]:
        return {"data": {"text/plain": "0"}, "metadata": {}}


def _text(value: str | list[str]) -> str:
    return "".join(value) if isinstance(value, list) else value


# --- one page ---------------------------------------------------------------------------------

@dataclass
class Page:
    """What a page's conversion needs: where it is, the book's labels and bibliography."""

    doc: str
    labels: Labels
    bib: dict[str, dict[str, str]]
    book_url: str
    macros: dict[str, str] = field(default_factory=dict)
    cited: list[str] = field(default_factory=list)
    glue: GlueSource | None = None

    def page_url(self, doc: str) -> str:
        return f"{self.book_url}/{doc}.html"

    def link(self, label: str, text: str | None = None) -> str:
        target = self.labels.targets.get(label)
        if target is None:
            raise ValueError(f"{self.doc}: unknown label {label!r}")
        text = text or target.title
        if target.doc == self.doc and target.anchor:
            return f"[{text}](#{target.anchor})"
        anchor = f"#{target.anchor}" if target.anchor else ""
        return f"[{text}]({self.page_url(target.doc)}{anchor})"

    def cite(self, keys: str, textual: bool) -> str:
        parts = []
        for key in [k.strip() for k in keys.split(",") if k.strip()]:
            entry = self.bib.get(key)
            if entry is None:
                raise ValueError(f"{self.doc}: citation {key!r} is not in references.bib")
            if key not in self.cited:
                self.cited.append(key)
            year = entry.get("year", "n.d.")
            who = author_short(entry)
            parts.append(f"[{who} ({year})](#ref-{key})" if textual
                         else f"[{who}, {year}](#ref-{key})")
        return "; ".join(parts) if textual else f"({'; '.join(parts)})"

    def role(self, match: re.Match[str]) -> str:
        name, content = match.group(1), match.group(2)
        if name in {"ref", "numref", "doc", "any", "std:ref"}:
            explicit = re.match(r"^(.*?)\s*<([^<>]+)>$", content, re.S)
            text, target = (explicit.group(1), explicit.group(2)) if explicit else (None, content)
            if name == "doc":
                if target.startswith("/"):  # relative to the book's root
                    doc = target.lstrip("/")
                else:
                    doc = (Path(self.doc).parent / target).as_posix()
                    while re.search(r"[^/.]+/\.\./", doc):
                        doc = re.sub(r"[^/.]+/\.\./", "", doc, count=1)
                title = text or self.labels.titles.get(doc) or Path(target).name
                return f"[{title}]({self.page_url(doc)})"
            return self.link(target.strip(), text)
        if name == "eq":
            target = self.labels.targets.get(content.strip())
            if target is None:
                raise ValueError(f"{self.doc}: unknown equation {content!r}")
            if target.doc == self.doc:
                return f"[{target.title}](#{target.anchor})"
            return f"[{target.title}]({self.page_url(target.doc)}#{target.anchor})"
        if name in {"cite", "cite:p", "cite:ps", "cite:alp", "cite:alps"}:
            return self.cite(content, textual=False)
        if name in {"cite:t", "cite:ts", "cite:author", "cite:year"}:
            return self.cite(content, textual=True)
        if name == "math":
            return f"${content}$"
        if name in GLUE_ROLES:
            return self.glued(name, content)
        if name in CODE_ROLES or name.startswith("py:"):
            return f"`{_role_text(content)}`"
        return _role_text(content)  # {term}, {abbr}, {sub-ref}…: the text the book shows

    def _glue_doc(self, doc: str) -> str:
        """A page named in ``doc::key`` (relative to this page, or to the root with a ``/``)."""
        doc = re.sub(r"\.(md|ipynb)$", "", doc.strip())
        if doc.startswith("/"):
            return doc.lstrip("/")
        path = (Path(self.doc).parent / doc).as_posix()
        while re.search(r"[^/.]+/\.\./", path):
            path = re.sub(r"[^/.]+/\.\./", "", path, count=1)
        return re.sub(r"(^|/)\./", r"\1", path)

    def glued(self, name: str, content: str) -> str:
        """A glue role's value from the build (parsed as myst-nb parses it), marked."""
        if name == "glue:text":
            key_format = content.rsplit(":", 1)
            key, fmt = (key_format[0], key_format[1]) if len(key_format) == 2 \
                else (key_format[0], "s")
        elif name == "glue:md":  # name or name:format (commonmark, gfm, myst); this page only
            key, fmt = content.rsplit(":", 1)[0], ""
        else:
            key, fmt = content, ""
        doc, key = key.split("::", 1) if "::" in key else (self.doc, key)
        if doc != self.doc:
            doc = self._glue_doc(doc)
        if self.glue is None:
            raise ValueError(f"{self.doc}: {{{name}}}`{content}` needs the executed build's "
                             "glued values (make book, then make sync)")
        bundle = self.glue.bundle(doc, key.strip())
        data = bundle.get("data", {})
        where = f"{self.doc}: {{{name}}}`{content}`"
        if name == "glue:text":
            if "text/plain" not in data:
                raise ValueError(f"{where}: the glued value has no text/plain")
            value = format_plain_text(_text(data["text/plain"]), fmt)
        elif name == "glue:md":
            if "text/markdown" not in data:
                raise ValueError(f"{where}: the glued value has no text/markdown")
            value = _text(data["text/markdown"]).strip()
        elif "text/html" in data:
            value = _text(data["text/html"]).strip()
        elif "text/markdown" in data:
            value = _text(data["text/markdown"]).strip()
        elif "text/latex" in data:
            value = f"${_text(data['text/latex']).strip().strip('$')}$"
        elif "text/plain" in data:
            value = _text(data["text/plain"])
            if bundle.get("metadata", {}).get("strip_text_quotes") and \
                    re.match(r"^(['\"]).*\1$", value):
                value = value[1:-1]
        else:
            raise ValueError(f"{where}: a reader notebook can show text, markdown, LaTeX or "
                             f"HTML, not {sorted(data)}")
        return f'<span title="computed: {html.escape(content)}">{value}</span>'

    def inline(self, text: str) -> str:
        """Roles replaced, outside inline code spans."""
        return _inline_outside_code(text, self)

    def references(self) -> str:
        """The notebook's closing reference list (what it cited, in order of first citation)."""
        lines = ["## References", "", "Cited in this notebook; the book's full list is at "
                 f"[Bibliography]({self.page_url('chapters/appendix/bibliography')}).", ""]
        for key in self.cited:
            lines.append(f'- <a id="ref-{key}"></a>{reference_entry(self.bib[key])}')
        return "\n".join(lines)


def _admonition(name: str, arg: str, options: dict[str, str], body: str) -> str:
    title = arg.strip() or name.capitalize()
    if "dropdown" in options.get("class", "").split() or name == "dropdown":
        # Closed until the reader asks: blank lines around the body let it render as markdown.
        return f"<details>\n<summary><b>{title}</b> (click to show)</summary>\n\n{body.strip()}" \
               "\n\n</details>"
    quoted = "\n".join(f"> {line}" if line.strip() else ">" for line in body.strip().splitlines())
    return f"> **{title}**\n>\n{quoted}" if body.strip() else f"> **{title}**"


def expand_macros(text: str, macros: dict[str, str]) -> str:
    """The book's MathJax macros (``_config.yml``, e.g. ``\\R``) written out: Colab's KaTeX
    and Jupyter's MathJax do not know them."""
    for name, value in macros.items():
        text = re.sub(rf"\\{name}(?![a-zA-Z])", lambda _, v=value: v, text)
    return text


def convert(source: str, page: Page) -> str:
    """A markdown cell's MyST ``source`` as plain Jupyter markdown (see the module docstring)."""
    source = expand_macros(source, page.macros)
    lines = source.splitlines()
    out: list[str] = []
    index = 0
    code_fence: str | None = None
    while index < len(lines):
        line = lines[index]
        if code_fence is not None:  # inside a plain ``` code block: copied as it is
            out.append(line)
            if line.strip() == code_fence:
                code_fence = None
            index += 1
            continue
        directive = DIRECTIVE_OPEN.match(line)
        if directive:
            fence, name, arg = directive.group("fence"), directive.group("name"), \
                directive.group("arg")
            index += 1
            options: dict[str, str] = {}
            while index < len(lines) and OPTION.match(lines[index]):
                option = OPTION.match(lines[index])
                assert option is not None
                options[option.group("key")] = option.group("value")
                index += 1
            body_lines = []
            depth = 1
            while index < len(lines):
                current = lines[index]
                nested = DIRECTIVE_OPEN.match(current)
                if nested and nested.group("fence") == fence:
                    depth += 1
                elif current.strip() == fence:
                    depth -= 1
                    if depth == 0:
                        index += 1
                        break
                body_lines.append(current)
                index += 1
            body = "\n".join(body_lines)
            out.append(_directive(name, arg, options, body, page))
            if index < len(lines) and lines[index].strip():
                out.append("")  # a quote or <details> must not run into the next paragraph
            continue
        if line.lstrip().startswith("```") or line.lstrip().startswith("~~~"):
            fence_match = re.match(r"(`{3,}|~{3,})", line.strip())
            code_fence = fence_match.group(1) if fence_match else "```"
            out.append(line)
            index += 1
            continue
        label = LABEL_LINE.match(line)
        if label:
            target = page.labels.targets.get(label.group(1))
            if target is not None and target.anchor:
                out.append(f'<a id="{target.anchor}"></a>')
            index += 1
            continue
        equation = EQUATION_LABEL.match(line)
        if equation:
            target = page.labels.targets.get(equation.group("label"))
            number = target.title.strip("()") if target else ""
            body = equation.group("body").rstrip()
            tag = f"\\tag{{{number}}}" if number else ""
            anchor = f'<a id="{target.anchor}"></a>\n' if target else ""
            if body.startswith("$$"):  # one line: $$ x $$ (label)
                out.append(f"{anchor}{body} {tag} $$")
            else:  # the closing line of a multi-line $$ block: the anchor goes before the block
                opening = max(i for i, x in enumerate(out) if x.strip().startswith("$$"))
                if anchor:
                    out.insert(opening, anchor.rstrip("\n"))
                out.append(f"{body}{tag}$$" if body else f"{tag}\n$$".lstrip("\n"))
            index += 1
            continue
        out.append(_inline_outside_code(line, page))
        index += 1
    return "\n".join(out)


def _inline_outside_code(line: str, page: Page) -> str:
    """Roles replaced; inline code spans (``{ref}`x``` written inside backticks) left as code."""
    return ROLE_OR_CODE.sub(lambda m: page.role(m) if m.group(1) else m.group(0), line)


def _directive(name: str, arg: str, options: dict[str, str], body: str, page: Page) -> str:
    inner = convert(body, page)
    if name in ADMONITIONS:
        return _admonition(name, page.inline(arg), options, inner)
    if name == "math":
        label = options.get("label")
        target = page.labels.targets.get(label) if label else None
        tag = f" \\tag{{{target.title.strip('()')}}}" if target else ""
        anchor = f'<a id="{target.anchor}"></a>\n' if target else ""
        return f"{anchor}$$\n{body.strip()}{tag}\n$$"
    if name in {"code-block", "code", "sourcecode"}:
        return f"```{arg.strip()}\n{body}\n```"
    if name in {"figure", "image"}:
        alt = options.get("alt", "")
        caption = f"\n\n*{inner.strip()}*" if inner.strip() else ""
        return f"![{alt}]({arg.strip()}){caption}"
    if name in {"bibliography", "toctree", "tableofcontents", "contents"}:
        return ""
    return inner  # any other directive: its content, as markdown
