"""Plotly figure builders: parameters in, ``plotly.graph_objects.Figure`` out.

Every number drawn comes from the core of :mod:`posenc_lib` (tables, rotations, biases, bounds,
spectra); these modules only lay them out, one module per figure family:

- :mod:`posenc_lib.viz.heatmap`: encoding tables as position × dimension heatmaps;
- :mod:`posenc_lib.viz.spiral`: RoPE pairs as helices and clock hands;
- :mod:`posenc_lib.viz.decay`: long-term decay against relative distance;
- :mod:`posenc_lib.viz.euler`: ``e^{iθ}`` on the unit circle, and rotation by it;
- :mod:`posenc_lib.viz.alibi`: ALiBi biases and the attention they give;
- :mod:`posenc_lib.viz.spectrum`: the RoPE calculator (wavelengths under context extension);
- :mod:`posenc_lib.viz.attention`: labelled attention-weight heatmaps;
- :mod:`posenc_lib.viz.offset`: RoPE scores under a shared shift;
- :mod:`posenc_lib.viz.conventions`: interleaved against half pairing;
- :mod:`posenc_lib.viz.permutation`: one attention head on every ordering of a sentence;
- :mod:`posenc_lib.viz.architectures`: layer maps of real models, frequency selection, temperature.

The private ``_style`` (template, colours, slider grids and layout helpers) and ``_checks``
(argument validation) modules are shared by all of them. Import a builder from its module,
e.g. ``from posenc_lib.viz.heatmap import encoding_heatmap``.

Each builder takes ``sliders=True`` to add plotly's own sliders and buttons with precomputed steps,
so the figure stays explorable in the static book (no kernel). The live widgets of
:mod:`posenc_lib.widgets` build the same figures with ``sliders=False`` and refresh them through
the private ``_*_state`` functions of these modules, so the static and the live figure always show
the same numbers.

Static steps restyle only the arrays that change, rounded (2-3 decimals) and, for large
heatmaps, sampled on a coarser grid, to keep each figure's HTML near 300 kB.
"""

from .._extras import require_widgets

# Every figure module imports plotly: without the extra, say how to install it.
require_widgets("posenc_lib.viz", "plotly")
