"""`make sync`: keep every chapter's setup cell and paired .ipynb in step with its .md.

Glued numbers are filled in from the executed build (``_build/jupyter_execute``), so the book must
be built first (``make sync`` runs ``make book``); a chapter whose build or key is missing stops the
sync with an error naming the chapter and the key.
"""

from __future__ import annotations

import sys

from chapters import (
    EXECUTED,
    BuildGlue,
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
    labels, bib, glue = book_labels(), bibliography(), BuildGlue(EXECUTED)
    for md in notebook_chapters():
        text = md.read_text(encoding="utf-8")
        fixed = fix_setup_cell(text, source)
        if fixed != text:
            md.write_text(fixed, encoding="utf-8")
            print(f"updated the setup cell of {md.name}")
        ipynb = md.with_suffix(".ipynb")
        new = notebook_text(paired_notebook(md, labels, bib, glue))
        if not ipynb.exists() or ipynb.read_text(encoding="utf-8") != new:
            ipynb.write_text(new, encoding="utf-8")
            print(f"wrote {ipynb.relative_to(md.parents[1])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
