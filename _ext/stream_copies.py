"""Sphinx extension: merging a cell's print streams must not change the saved notebook.

``nb_merge_streams: true`` makes myst-nb join a cell's separate ``stdout`` outputs into one before
rendering (a glue between two prints otherwise splits the printed text in two boxes). myst-nb 1.4's
``coalesce_streams`` does the join *in place*: it appends the later text to the first output object,
which is also the object myst-nb writes to ``_build/jupyter_execute/*.ipynb``. The HTML showed each
line once, but the executed notebook a reader downloads showed the later lines twice (once merged
into the first output, once in their own). This wraps the function so that it works on copies.
"""

from __future__ import annotations

import copy
from typing import Any

from sphinx.application import Sphinx


def setup(app: Sphinx) -> dict[str, Any]:
    from myst_nb.core import render

    original = getattr(render.coalesce_streams, "__wrapped__", render.coalesce_streams)

    def coalesce_copies(outputs: list) -> list:
        return original([copy.deepcopy(output) for output in outputs])

    coalesce_copies.__wrapped__ = original  # type: ignore[attr-defined]
    render.coalesce_streams = coalesce_copies
    return {"parallel_read_safe": True, "parallel_write_safe": True}
