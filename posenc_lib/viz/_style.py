"""The shared look of every figure: template, colours, fonts, slider grids, layout helpers.

Colours are Okabe-Ito (readable with the common colour-vision deficiencies) on an opaque white
paper; :data:`TEMPLATE` carries them with the fonts (CJK included). The helpers here style a
figure, build plotly slider and dropdown dicts, and copy ``_*_state`` properties onto traces.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

# --- the shared look ------------------------------------------------------------------------------

# CJK fonts are listed so that tokens such as 我 爱 你 render wherever one is installed.
FONT_FAMILY = (
    '"Noto Sans", "Noto Sans CJK SC", "Source Han Sans SC", "PingFang SC", "Microsoft YaHei", '
    '"Helvetica Neue", Arial, sans-serif'
)
INK = "#1f2328"  # text; 15.8:1 against PAPER (WCAG AAA)
PAPER = "#ffffff"  # opaque, for the light theme; the book's figures.js recolours for the dark
GRID = "#d8dee4"
MUTED = "#57606a"  # secondary lines and labels; 6.4:1 against PAPER
# Okabe-Ito: distinguishable with the common colour-vision deficiencies, and in grey print.
COLORWAY = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]
DIVERGING = "RdBu"  # for values in [-1, 1], always with zmid=0
SEQUENTIAL = "Viridis"
SEQUENTIAL_ALT = "Cividis"

_AXIS = {
    "gridcolor": GRID,
    "zerolinecolor": "#8c959f",
    "linecolor": "#8c959f",
    "ticks": "outside",
    "tickcolor": "#8c959f",
    "title": {"standoff": 6},
    "automargin": True,
}

TEMPLATE = go.layout.Template(
    layout={
        "font": {"family": FONT_FAMILY, "size": 13, "color": INK},
        "title": {"font": {"size": 16}, "x": 0.01, "xanchor": "left"},
        "paper_bgcolor": PAPER,
        "plot_bgcolor": PAPER,
        "colorway": COLORWAY,
        "xaxis": _AXIS,
        "yaxis": _AXIS,
        "scene": {
            "xaxis": {"gridcolor": GRID, "backgroundcolor": PAPER},
            "yaxis": {"gridcolor": GRID, "backgroundcolor": PAPER},
            "zaxis": {"gridcolor": GRID, "backgroundcolor": PAPER},
        },
        "hoverlabel": {"font": {"family": FONT_FAMILY, "size": 12}},
        "legend": {"bgcolor": "rgba(255,255,255,0.85)", "font": {"size": 12}},
        "margin": {"l": 60, "r": 20, "t": 60, "b": 50},
        "coloraxis": {"colorbar": {"outlinewidth": 0, "ticks": "outside"}},
    }
)


# --- static slider grids --------------------------------------------------------------------------

BASE_GRID: tuple[float, ...] = (10.0, 100.0, 1e3, 1e4, 1e5, 5e5, 1e6)
DIM_GRID: tuple[int, ...] = (16, 32, 64, 128, 256, 512)


def _with(grid: Sequence[float], value: float) -> list[float]:
    """The grid with ``value`` added, sorted, so the figure opens on the caller's value."""
    out = sorted({float(g) for g in grid} | {float(value)})
    return out


def _style(fig: go.Figure, title: str, *, height: int = 460) -> go.Figure:
    fig.update_layout(template=TEMPLATE, title={"text": title}, height=height)
    return fig


def _slider(
    steps: list[dict[str, Any]], active: int, prefix: str, *, y: float = -0.08, pad_t: int = 40
) -> dict[str, Any]:
    return {
        "active": active,
        "steps": steps,
        "currentvalue": {"prefix": prefix, "font": {"size": 13}},
        "x": 0.0,
        "len": 1.0,
        "y": y,
        "yanchor": "top",
        "pad": {"t": pad_t, "b": 0},
        "bgcolor": "#eaeef2",
        "activebgcolor": COLORWAY[0],
        "bordercolor": "#8c959f",
        "font": {"color": INK},
    }


def _buttons(buttons: list[dict[str, Any]], active: int, *, x: float = 1.0) -> dict[str, Any]:
    return {
        "type": "dropdown",
        "active": active,
        "buttons": buttons,
        "x": x,
        "xanchor": "right",
        "y": 1.0,
        "yanchor": "bottom",
        "pad": {"b": 8},
        "bgcolor": "#f6f8fa",
        "bordercolor": "#8c959f",
        "font": {"color": INK},
        "showactive": True,
    }


def _apply_state(fig: go.Figure, state: list[dict[str, Any]]) -> None:
    for trace, props in zip(fig.data, state, strict=True):
        trace.update(props)
