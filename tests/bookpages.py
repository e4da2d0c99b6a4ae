"""The built book, as the book and browser tests see it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"


def toc_entries() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    entries = [toc["root"]]
    for part in toc.get("parts", []):
        entries += [chapter["file"] for chapter in part.get("chapters", [])]
    return entries


def built_pages() -> list[Path]:
    """One HTML page per _toc.yml entry (the entries' pages, whether or not they were built)."""
    return [HTML / f"{entry}.html" for entry in toc_entries()]


def require_build() -> None:
    # A missing build is a failure, not a skip: `make test` builds the book first.
    if not (HTML / "index.html").exists():
        pytest.fail("the book is not built: run `make book` (or `make test`, which builds it)")
