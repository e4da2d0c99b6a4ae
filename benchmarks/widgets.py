"""Live-widget update times and static-figure sizes, one line per widget.

Budgets (DESIGN.md §5): one live update <= 16 ms at default sizes and <= 100 ms at the largest
slider values; each static figure's HTML around 300 kB (a chapter page <= 1.5 MB).

An update is timed from setting a control's ``.value`` to the new figure JSON sent to the browser
(compute + plotly validation + the widget's sync message; no browser). The median of several
moves is reported, after one warm-up move.

Run: ``.venv/bin/python benchmarks/widgets.py``
"""

from __future__ import annotations

import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

from posenc_lib import widgets as Wd
from posenc_lib.display import StaticFigure
from posenc_lib.viz import long_context as LC
from posenc_lib.viz import spectrum as SP
from posenc_lib.viz.alibi import alibi_heatmaps
from posenc_lib.viz.attention import attention_heatmap
from posenc_lib.viz.conventions import convention_pairs_figure
from posenc_lib.viz.decay import decay_curves
from posenc_lib.viz.euler import rotation_figure, unit_circle
from posenc_lib.viz.heatmap import encoding_heatmap
from posenc_lib.viz.offset import rope_offset_figure
from posenc_lib.viz.permutation import permutation_figure
from posenc_lib.viz.spectrum import wavelength_spectrum
from posenc_lib.viz.spiral import rope_spiral

# name, live builder, static builder, (control, value a, value b) moved at the default sizes,
# then the largest slider values to set, and the move timed there.
Move = tuple[str, Any, Any]
CASES: list[tuple[str, Callable[[], Any], Callable[[], Any], Move, dict[str, Any], Move]] = [
    (
        "heatmap_explorer",
        Wd.heatmap_live,
        encoding_heatmap,
        ("base", 1e4, 5e5),
        {"seq_len": 512, "dim": 512},
        ("base", 1e4, 5e5),
    ),
    (
        "spiral_explorer",
        Wd.spiral_live,
        rope_spiral,
        ("base", 1e4, 5e5),
        {"seq_len": 1024, "dim": 512},
        ("base", 1e4, 5e5),
    ),
    (
        "decay_explorer",
        Wd.decay_live,
        decay_curves,
        ("base", 1e4, 5e5),
        {"max_distance": 1024, "dim": 512},
        ("base", 1e4, 5e5),
    ),
    (
        "euler_explorer",
        Wd.euler_live,
        unit_circle,
        ("theta", 1.0, 2.0),
        {"n_terms": 30},
        ("theta", 5.0, 6.0),
    ),
    (
        "alibi_explorer",
        Wd.alibi_live,
        alibi_heatmaps,
        ("head", 0, 1),
        {"n_heads": 64, "seq_len": 256},
        ("head", 62, 63),
    ),
    (
        "rope_calculator",
        Wd.calculator_live,
        wavelength_spectrum,
        ("factor", 4.0, 8.0),
        {"dim": 512, "method": "yarn"},
        ("factor", 32.0, 64.0),
    ),
    (
        "spectrum_explorer",
        Wd.spectrum_live,
        SP.wavelength_spectrum,
        ("factor", 4.0, 8.0),
        {"dim": 512, "method": "yarn"},
        ("factor", 32.0, 64.0),
    ),
    (
        "score_curve_explorer",
        Wd.score_curve_live,
        LC.all_ones_figure,
        ("abf_base", 5e5, 1e6),
        {"dim": 256},
        ("abf_base", 1e6, 1e7),
    ),
    (
        "granularity_explorer",
        Wd.granularity_live,
        LC.granularity_figure,
        ("base", 1e4, 2e4),
        {"dim": 4096},
        ("base", 1e4, 2e4),
    ),
    (
        "pair_spiral_explorer",
        Wd.pair_spiral_live,
        LC.pair_spiral_figure,
        ("pair", 40, 41),
        {},
        ("factor", 2.0, 64.0),
    ),
    (
        "rotation_explorer",
        Wd.rotation_live,
        rotation_figure,
        ("theta", 0.5, 1.5),
        {},
        ("theta", -6.0, 6.0),
    ),
    (
        "offset_explorer",
        Wd.offset_live,
        rope_offset_figure,
        ("offset", 0, 10),
        {"dim": 512},
        ("offset", 60, 64),
    ),
    (
        "convention_explorer",
        Wd.convention_live,
        convention_pairs_figure,
        ("dim", 16, 18),
        {},
        ("dim", 62, 64),
    ),
    (
        "permutation_explorer",
        Wd.permutation_live,
        permutation_figure,
        ("order", 0, 5),
        {},
        ("base", 10.0, 1e6),
    ),
]


def time_moves(ui: Wd.LiveExplorer, move: Move, repeats: int = 9) -> float:
    """Median milliseconds of one control move (alternating two values so each move is real)."""
    control, a, b = move
    ui.controls[control].value = b  # warm-up
    times = []
    for r in range(repeats):
        start = time.perf_counter()
        ui.controls[control].value = (a, b)[r % 2]
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def main() -> None:
    warnings.simplefilter("error")
    print(f"{'widget':22s} {'default':>10s} {'largest':>10s} {'static HTML':>12s}   largest values")
    for name, live, static, move, largest, move_largest in CASES:
        ui = live()
        t_default = time_moves(ui, move)
        for key, value in largest.items():
            ui.controls[key].value = value
        t_large = time_moves(ui, move_largest)
        size = len(StaticFigure(static()).to_html().encode()) / 1e3
        flags = ("" if t_default <= 16 else " OVER 16 ms") + (
            "" if t_large <= 100 else " OVER 100 ms"
        )
        print(
            f"{name:22s} {t_default:8.1f}ms {t_large:8.1f}ms {size:9.1f} kB   "
            f"{largest or move_largest}{flags}"
        )
    size = (
        len(
            StaticFigure(
                attention_heatmap(__import__("torch").full((3, 3), 1 / 3), ["我", "爱", "你"])
            )
            .to_html()
            .encode()
        )
        / 1e3
    )
    print(f"{'attention_heatmap':22s} {'-':>10s} {'-':>10s} {size:9.1f} kB   (no widget)")


if __name__ == "__main__":
    main()
