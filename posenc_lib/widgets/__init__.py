"""Live explorers: ipywidgets controls that recompute a live plotly figure on every move.

Each ``*_explorer`` is one call in a chapter. Through :func:`posenc_lib.display.explorer` it shows
the live UI in a kernel and, in the book build (``POSENC_STATIC=1``), the static figure of
:mod:`posenc_lib.viz` with plotly's own sliders. The live figure is the same builder with
``sliders=False``, refreshed in place by the same ``_*_state`` functions, so both show the same
numbers; only the live one takes any value in range instead of a grid.

One module per explorer family, mirroring :mod:`posenc_lib.viz`; the frame they share is
:class:`LiveExplorer` in ``_live``.
"""

from .._extras import require_widgets

# Before anything else: without the extra, say how to install it (not "No module named ...").
require_widgets("posenc_lib.widgets", "plotly", "ipywidgets", "anywidget")

from ._live import LiveExplorer
from .alibi import (
    alibi_explorer,
    alibi_live,
    alibi_reach_explorer,
    alibi_reach_live,
    alibi_rope_explorer,
    alibi_rope_live,
    alibi_window_explorer,
    alibi_window_live,
)
from .calculator import (
    calculator_live,
    config_checker,
    rope_calculator,
    spectrum_explorer,
    spectrum_live,
)
from .conventions import convention_explorer, convention_live
from .decay import decay_explorer, decay_live
from .euler import euler_explorer, euler_live, rotation_explorer, rotation_live
from .heatmap import heatmap_explorer, heatmap_live
from .long_context import (
    granularity_explorer,
    granularity_live,
    pair_spiral_explorer,
    pair_spiral_live,
    score_curve_explorer,
    score_curve_live,
)
from .offset import offset_explorer, offset_live
from .permutation import permutation_explorer, permutation_live
from .spiral import spiral_explorer, spiral_live

__all__ = [
    "LiveExplorer",
    "alibi_explorer",
    "alibi_live",
    "alibi_reach_explorer",
    "alibi_reach_live",
    "alibi_rope_explorer",
    "alibi_rope_live",
    "alibi_window_explorer",
    "alibi_window_live",
    "calculator_live",
    "config_checker",
    "convention_explorer",
    "convention_live",
    "decay_explorer",
    "decay_live",
    "euler_explorer",
    "euler_live",
    "granularity_explorer",
    "granularity_live",
    "heatmap_explorer",
    "heatmap_live",
    "offset_explorer",
    "offset_live",
    "pair_spiral_explorer",
    "pair_spiral_live",
    "permutation_explorer",
    "permutation_live",
    "rope_calculator",
    "rotation_explorer",
    "rotation_live",
    "score_curve_explorer",
    "score_curve_live",
    "spectrum_explorer",
    "spectrum_live",
    "spiral_explorer",
    "spiral_live",
]
