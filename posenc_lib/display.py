"""How figures reach the reader: live widgets in a kernel, static-slider HTML in the book.

The switch is decided once, here, from the environment variable ``POSENC_STATIC``. The Makefile's
book build sets ``POSENC_STATIC=1``; Jupyter, Colab and Binder leave it unset and get live widgets.

In static mode a plotly figure is emitted as ``text/html`` that draws with the ``plotly.min.js`` the
book serves from its own ``_static`` folder (no CDN). Plotly >= 6 otherwise emits only a mime bundle
that myst-nb cannot render, and the figure would silently vanish from the page.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import plotly.graph_objects as go

STATIC_ENV_VAR = "POSENC_STATIC"

# One configuration for every static figure: no plotly logo, no link to an online editor.
PLOTLY_CONFIG: dict[str, Any] = {"displaylogo": False, "responsive": True}


def static_mode() -> bool:
    """Return True when figures should be emitted as static HTML (the book build).

    Read at every call, so a test can flip it with ``monkeypatch.setenv``.
    """
    return os.environ.get(STATIC_ENV_VAR, "").strip().lower() in {"1", "true", "yes", "on"}


class StaticFigure:
    """A plotly figure that displays as self-contained HTML using a page-level ``Plotly``.

    Parameters
    ----------
    figure
        The figure to display. Its sliders and buttons keep working without a kernel.
    """

    def __init__(self, figure: go.Figure) -> None:
        if not isinstance(figure, go.Figure):
            raise TypeError(
                f"figure must be a plotly.graph_objects.Figure, got {type(figure).__name__}"
            )
        self.figure = figure

    def to_html(self) -> str:
        """The ``<div>`` and ``<script>`` that draw the figure; plotly.js is not embedded."""
        return self.figure.to_html(
            include_plotlyjs=False,
            full_html=False,
            config=PLOTLY_CONFIG,
            default_width="100%",
        )

    def _repr_html_(self) -> str:
        return self.to_html()

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> dict[str, str]:
        # Only text/html: myst-nb renders it, and no plotly mime type is left for it to drop.
        return {"text/html": self.to_html(), "text/plain": "<StaticFigure>"}


def show(figure: go.Figure) -> Any:
    """Return an object that displays ``figure`` well where the code runs.

    In the book build (static mode) this is a :class:`StaticFigure`; in a kernel it is the
    figure itself, which Jupyter, Colab and VS Code render with plotly's own renderer.
    """
    if static_mode():
        return StaticFigure(figure)
    return figure


def explorer(build_static: Callable[[], go.Figure], build_live: Callable[[], Any]) -> Any:
    """Pick between a static-slider figure and a live ipywidgets UI, once, by mode.

    Parameters
    ----------
    build_static
        Builds the figure with precomputed slider steps (used in the book build).
    build_live
        Builds the ipywidgets UI that recomputes on every control change.
    """
    if static_mode():
        return StaticFigure(build_static())
    return build_live()
