"""Merged print streams: the HTML shows each printed line once, and so does the saved notebook.

_ext/stream_copies.py makes myst-nb's stream merging work on copies. Without it a cell that prints,
glues, then prints again saved its later lines twice in ``_build/jupyter_execute`` (mutation caught:
removing the extension from ``_config.yml`` makes the built-notebook test fail on chapter 1).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "_ext"))
sys.path.insert(0, str(ROOT / "scripts"))

import stream_copies  # noqa: E402

import chapters  # noqa: E402

EXECUTED = ROOT / "_build" / "jupyter_execute" / "chapters"


def _stream(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_output("stream", name="stdout", text=text)


def test_merging_leaves_the_cells_outputs_unchanged() -> None:
    from myst_nb.core import render

    stream_copies.setup(None)  # type: ignore[arg-type]
    stream_copies.setup(None)  # type: ignore[arg-type]  (twice: it must not wrap its own wrapper)
    outputs = [
        _stream("first\n"),
        nbformat.v4.new_output("display_data", data={}),
        _stream("second\n"),
    ]
    merged = render.coalesce_streams(outputs)
    assert [o.get("text") for o in merged if o["output_type"] == "stream"] == ["first\nsecond\n"]
    assert [o.get("text") for o in outputs] == ["first\n", None, "second\n"]


BOOK_CHAPTERS = [md for md in chapters.notebook_chapters() if md.parent == chapters.CHAPTERS]


@pytest.mark.book
@pytest.mark.parametrize("md", BOOK_CHAPTERS, ids=[md.stem for md in BOOK_CHAPTERS])
def test_no_printed_line_is_saved_twice(md: Path) -> None:
    notebook = json.loads((EXECUTED / f"{md.stem}.ipynb").read_text(encoding="utf-8"))
    for index, cell in enumerate(notebook["cells"]):
        texts = [
            "".join(o["text"]) for o in cell.get("outputs", []) if o["output_type"] == "stream"
        ]
        # A stream holding only a line break (a bare print()) repeats nothing: skip it, since the
        # empty string is "in" every earlier text.
        texts = [text for text in texts if text.strip()]
        for i, earlier in enumerate(texts):
            for later in texts[i + 1 :]:
                assert later.strip() not in earlier, (md.stem, index, later[:80])
