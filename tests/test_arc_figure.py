"""Chapter 8's trained-arc figure: what each panel draws is the arc the pair sees under a method."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc_lib.viz.long_context import ARC_METHODS, arc_ends, arc_figure


def _panel(tr) -> int:
    """0, 1, … for the trace's subplot (its x axis ``x``, ``x2``, …)."""
    return int(tr.xaxis[1:] or 1) - 1


def _angle(tr) -> float:
    """The largest angle the trace draws (radians, at most 2π), read from its points."""
    x, y = np.asarray(tr.x, float), np.asarray(tr.y, float)
    on_arc = np.hypot(x, y) > 1e-9  # the trained sector also visits the origin
    return float(np.unwrap(np.arctan2(y[on_arc], x[on_arc])).max())


def _drawn_ends(fig) -> dict[tuple[int, str], float]:
    """``(panel, trace name) -> largest angle drawn``."""
    return {(_panel(tr), tr.name): _angle(tr) for tr in fig.data}


def test_pi_keeps_every_new_arc_inside_the_trained_arc() -> None:
    fig = arc_figure()  # d = 128, b = 10^4, s = 4, L = 4 096; pairs 0, 32, 48, 63
    drawn = _drawn_ends(fig)
    subplots = sorted({_panel(tr) for tr in fig.data})
    assert subplots == [0, 1, 2, 3]
    assert {tr.type for tr in fig.data} == {"scatter"}  # drawn by the book's partial bundles
    for sp in subplots:
        assert drawn[sp, "PI"] <= drawn[sp, "trained arc [0, Lθ_i)"] + 1e-6


def test_unchanged_rope_and_ntk_leave_the_trained_arc_of_a_slow_pair() -> None:
    ends = arc_ends()
    assert ends["pairs"].tolist() == [0, 32, 48, 63]
    slow = 2  # pair 48, past the critical pair 46: under one turn in L
    assert ends["trained"][slow] < 2 * math.pi
    # plain RoPE at 4L runs 4× the trained arc; NTK interpolates pair 48 by 4^(96/126) < 4 only
    assert math.isclose(ends["RoPE, unchanged"][slow] / ends["trained"][slow], 4.0)
    assert math.isclose(ends["NTK-aware"][slow] / ends["trained"][slow], 4.0 ** (1 - 96 / 126))
    # YaRN and Llama 3.1 divide it by s: back on the trained arc; NTK's last pair too (by s).
    for name in ("YaRN", "Llama 3.1", "PI"):
        assert math.isclose(ends[name][slow], ends["trained"][slow], rel_tol=1e-12)
    assert math.isclose(ends["NTK-aware"][-1], ends["trained"][-1], rel_tol=1e-12)
    # ... and the figure draws NTK's ring past the grey sector in that panel.
    fig = arc_figure()
    drawn = _drawn_ends(fig)
    panel = slow
    assert drawn[panel, "NTK-aware"] > 1.3 * drawn[panel, "trained arc [0, Lθ_i)"]


def test_fast_pairs_have_seen_the_whole_circle() -> None:
    ends = arc_ends()
    assert ends["trained"][0] > 2 * math.pi and ends["trained"][1] > 2 * math.pi
    fig = arc_figure()
    for tr in fig.data:
        if _panel(tr) in (0, 1):
            assert math.isclose(_angle(tr), 2 * math.pi, rel_tol=1e-5)


def test_every_method_is_drawn_once_per_panel_and_the_arc_ends_are_exact() -> None:
    fig = arc_figure(pairs=[5, 60])
    names = [tr.name for tr in fig.data if _panel(tr) == 1]
    assert names == ["trained arc [0, Lθ_i)", *ARC_METHODS]
    ends = arc_ends(pairs=[5, 60])
    theta60 = 10000.0 ** (-120 / 128)
    assert np.isclose(ends["trained"][1], 4096 * theta60, rtol=1e-12)
    assert np.isclose(ends["RoPE, unchanged"][1], 4 * 4096 * theta60, rtol=1e-12)


@pytest.mark.parametrize(("kwargs", "error"), [
    ({"pairs": [64]}, ValueError), ({"pairs": []}, ValueError), ({"pairs": "0"}, TypeError),
    ({"pairs": [1.5]}, TypeError), ({"factor": 1.0}, ValueError), ({"dim": 127}, ValueError),
])
def test_bad_input_names_the_parameter(kwargs: dict, error: type[Exception]) -> None:
    name = next(iter(kwargs))
    with pytest.raises(error, match=name):
        arc_ends(**kwargs)
