"""ALiBi explorers: live update times and static-figure sizes, at default and largest values.

Same protocol as ``benchmarks/widgets.py``: an update is timed from setting a control's ``.value``
to the FigureWidget holding the new data (compute + plotly validation + the widget's sync
message; no browser), median of several moves after a warm-up. Budgets (DESIGN.md §5): <= 16 ms
at default sizes, <= 100 ms at the largest slider values; a chapter page <= 1.5 MB in all.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/alibi.py``
"""

from __future__ import annotations

import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

from posenc_lib import widgets as Wd
from posenc_lib.display import StaticFigure
from posenc_lib.viz import alibi as V

Move = tuple[str, Any, Any]
# name, live builder, (control, a, b) at default sizes, largest values, (control, a, b) there,
# static builders at default and at the largest documented values.
CASES: list[tuple[str, Callable[[], Any], Move, dict[str, Any], Move, Callable[[], Any],
                  Callable[[], Any]]] = [
    ("alibi_explorer", Wd.alibi_live, ("head", 0, 1), {"n_heads": 128, "seq_len": 256},
     ("head", 126, 127), V.alibi_heatmaps, lambda: V.alibi_heatmaps(128, 512, head=127)),
    ("alibi_reach_explorer", Wd.alibi_reach_live, ("n_heads", 12, 13), {"context": 32768},
     ("n_heads", 127, 128), V.alibi_reach_figure, lambda: V.alibi_reach_figure(128)),
    ("alibi_rope_explorer", Wd.alibi_rope_live, ("base", 1e4, 5e5),
     {"n_heads": 128, "max_distance": 2048}, ("base", 1e4, 5e5), V.alibi_rope_figure,
     lambda: V.alibi_rope_figure(128, 1e6, 1024, 2048)),
    ("alibi_window_explorer", Wd.alibi_window_live, ("n_heads", 8, 9),
     {"window": 8192, "max_factor": 64}, ("n_heads", 127, 128), V.alibi_window_figure,
     lambda: V.alibi_window_figure(128, 10**6, 1024)),
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


def _kb(fig: Any) -> float:
    return len(StaticFigure(fig).to_html().encode()) / 1e3


def main() -> None:
    warnings.simplefilter("error")
    print(f"{'explorer':22s} {'default':>9s} {'largest':>9s} {'static':>9s} {'largest':>9s}"
          f" {'build':>8s}")
    for name, live, move, largest, move_largest, static, static_largest in CASES:
        ui = live()
        t_default = time_moves(ui, move)
        for key, value in largest.items():
            ui.controls[key].value = value
        t_large = time_moves(ui, move_largest)
        start = time.perf_counter()
        big = static_largest()
        build = time.perf_counter() - start
        flags = ("" if t_default <= 16 else " OVER 16 ms") + (
            "" if t_large <= 100 else " OVER 100 ms"
        )
        print(f"{name:22s} {t_default:7.1f}ms {t_large:7.1f}ms {_kb(static()):7.1f}kB"
              f" {_kb(big):7.1f}kB {build:6.2f} s{flags}")


if __name__ == "__main__":
    main()
