"""`make sync`: keep every chapter's setup cell and paired .ipynb in step with its .md."""

from __future__ import annotations

import sys

from chapters import (
    bibliography,
    book_labels,
    fix_setup_cell,
    notebook_chapters,
    notebook_text,
    paired_notebook,
    setup_cell_source,
)


def main() -> int:
    source = setup_cell_source()
    labels, bib = book_labels(), bibliography()
    for md in notebook_chapters():
        text = md.read_text(encoding="utf-8")
        fixed = fix_setup_cell(text, source)
        if fixed != text:
            md.write_text(fixed, encoding="utf-8")
            print(f"updated the setup cell of {md.name}")
        ipynb = md.with_suffix(".ipynb")
        new = notebook_text(paired_notebook(md, labels, bib))
        if not ipynb.exists() or ipynb.read_text(encoding="utf-8") != new:
            ipynb.write_text(new, encoding="utf-8")
            print(f"wrote {ipynb.relative_to(md.parents[1])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
