"""Every figure builder under one roof: a facade over :mod:`posenc_lib.viz` (backward compatible).

The builders live in :mod:`posenc_lib.viz`, one module per figure family
(:mod:`~posenc_lib.viz.heatmap`, :mod:`~posenc_lib.viz.spiral`, :mod:`~posenc_lib.viz.decay`,
:mod:`~posenc_lib.viz.euler`, :mod:`~posenc_lib.viz.alibi`, :mod:`~posenc_lib.viz.spectrum`,
:mod:`~posenc_lib.viz.attention`, :mod:`~posenc_lib.viz.offset`,
:mod:`~posenc_lib.viz.conventions`, :mod:`~posenc_lib.viz.permutation`). This module only
re-exports them, so that
``from posenc_lib.figures import encoding_heatmap`` and ``posenc_lib.figures.encoding_heatmap``
keep working. It re-exports every name it defined before the split: the builders and constants of
``__all__`` (unchanged, for ``import *``), the other public helpers (``heatmap_static_rows``,
``default_pairs``), the colours of the shared look, and the private helpers
and ``_*_state`` functions that :mod:`posenc_lib.widgets`, the tests and the benchmarks use.
"""

from __future__ import annotations

from .viz._checks import (  # noqa: F401 (re-exported)
    _base,
    _bool,
    _choice,
    _even,
    _fmt,
    _int,
    _lists,
    _np,
    _real,
)
from .viz._style import (  # noqa: F401 (re-exported)
    _AXIS,
    BASE_GRID,
    COLORWAY,
    DIM_GRID,
    DIVERGING,
    FONT_FAMILY,
    GRID,
    INK,
    MUTED,
    PAPER,
    SEQUENTIAL,
    SEQUENTIAL_ALT,
    TEMPLATE,
    _apply_state,
    _buttons,
    _slider,
    _style,
    _with,
)
from .viz.alibi import (  # noqa: F401 (re-exported)
    _alibi_state,
    alibi_heatmaps,
)
from .viz.attention import (
    attention_heatmap,
)
from .viz.conventions import (  # noqa: F401 (re-exported)
    _convention_state,
    _convention_traces,
    _pair_colors,
    convention_pairs_figure,
)
from .viz.decay import (  # noqa: F401 (re-exported)
    _decay_state,
    decay_curves,
)
from .viz.euler import (  # noqa: F401 (re-exported)
    _TERMS_GRID,
    _THETA_GRID,
    _euler_path,
    _euler_point,
    _euler_state,
    _rotation_state,
    rotation_figure,
    unit_circle,
)
from .viz.heatmap import (  # noqa: F401 (re-exported)
    _MAX_PAIRS,
    _MAX_ROWS,
    SCHEMES,
    _encoding_table,
    _heatmap_colors,
    _heatmap_hover,
    _heatmap_state,
    _heatmap_xtitle,
    _pair_columns,
    _sample_pairs,
    encoding_heatmap,
    heatmap_static_rows,
)
from .viz.offset import (  # noqa: F401 (re-exported)
    _offset_scores,
    _offset_state,
    _offset_vectors,
    rope_offset_figure,
)
from .viz.permutation import permutation_figure, sentence_orderings
from .viz.spectrum import (  # noqa: F401 (re-exported)
    _METHOD_LABEL,
    FACTOR_GRID,
    METHODS,
    _spectrum_state,
    scaled_inv_freq,
    wavelength_spectrum,
)
from .viz.spiral import (  # noqa: F401 (re-exported)
    _check_pairs,
    _rope_unit_turns,
    _spiral_state,
    default_pairs,
    rope_spiral,
)

__all__ = [
    "BASE_GRID",
    "DIM_GRID",
    "FACTOR_GRID",
    "METHODS",
    "SCHEMES",
    "TEMPLATE",
    "alibi_heatmaps",
    "attention_heatmap",
    "convention_pairs_figure",
    "decay_curves",
    "encoding_heatmap",
    "permutation_figure",
    "rope_offset_figure",
    "rope_spiral",
    "rotation_figure",
    "scaled_inv_freq",
    "sentence_orderings",
    "unit_circle",
    "wavelength_spectrum",
]
