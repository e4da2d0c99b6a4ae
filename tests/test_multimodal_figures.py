"""The M-RoPE fastest-turn figure: the angles drawn are the axis maps' fastest frequencies."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc_lib import mrope_axis_map, rope_inv_freq
from posenc_lib import mrope_fastest_turn as _turn
from posenc_lib.viz._style import PAPER, TEMPLATE
from posenc_lib.viz.multimodal import MROPE_MODELS, mrope_fastest_turn_figure


def mrope_fastest_turn(*args, **kwargs) -> dict[str, np.ndarray]:
    out = _turn(*args, **kwargs)
    assert all(v.dtype.is_floating_point and v.dtype.itemsize == 8 for v in out.values())
    return {k: v.numpy() for k, v in out.items()}


def test_fastest_turn_is_the_axis_fastest_frequency_times_the_offset() -> None:
    turn = mrope_fastest_turn((16, 24, 24), 1e6, 46)
    theta = rope_inv_freq(128, 1e6).double().numpy()
    axes = mrope_axis_map((16, 24, 24)).numpy()
    assert np.array_equal(axes[16:40], np.ones(24)) and np.array_equal(axes[40:], np.full(24, 2))
    assert np.allclose(turn["h"], np.arange(46) * theta[16], rtol=1e-6, atol=0)
    assert np.allclose(turn["w"], np.arange(46) * theta[40], rtol=1e-6, atol=0)
    # Qwen2-VL's numbers: 2π·45/198.7 down the rows, 2π·45/35 332.9 along the columns.
    assert turn["h"][-1] == pytest.approx(2 * math.pi * 45 / (2 * math.pi / theta[16]), rel=1e-6)
    assert 1.40 < turn["h"][-1] < 1.44 and 0.0079 < turn["w"][-1] < 0.0081


def test_contiguous_sections_give_height_a_faster_pair_than_width_interleaved_do_not() -> None:
    # Contiguous (Qwen2-VL): height's fastest pair turns ~178 times as far as width's across
    # 46 tokens; interleaved (Qwen3-VL, MRoPE-I): within 1.3x, both more than a full turn.
    (_, s2, i2, b2), (_, s3, i3, b3) = MROPE_MODELS
    q2 = mrope_fastest_turn(s2, b2, 46, interleaved=i2)
    q3 = mrope_fastest_turn(s3, b3, 46, interleaved=i3)
    assert q2["h"][-1] > 100 * q2["w"][-1]
    assert q3["h"][-1] / q3["w"][-1] < 2 and min(q3["h"][-1], q3["w"][-1]) > 2 * math.pi
    # Contiguous with the same section as MRoPE-I still favours height (order t, h, w).
    q3_blocks = mrope_fastest_turn(s3, b3, 46)
    assert q3_blocks["h"][-1] > 100 * q3_blocks["w"][-1]


def test_figure_draws_the_turns_on_a_log_scale_in_the_book_template() -> None:
    fig = mrope_fastest_turn_figure(MROPE_MODELS, tokens=46)
    assert [t.type for t in fig.data] == ["scatter"] * 4
    for k, (_, section, inter, theta) in enumerate(MROPE_MODELS):
        turn = mrope_fastest_turn(section, theta, 46, interleaved=inter)
        h_trace, w_trace = fig.data[2 * k], fig.data[2 * k + 1]
        assert list(h_trace.x) == list(range(1, 46))
        assert np.allclose(h_trace.y, turn["h"][1:]) and np.allclose(w_trace.y, turn["w"][1:])
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis2.type == "log"
    assert fig.layout.template == TEMPLATE and fig.layout.template.layout.paper_bgcolor == PAPER


@pytest.mark.parametrize(
    ("call", "error", "name"),
    [
        (lambda: mrope_fastest_turn((16, 24, 24), 1e6, 1), ValueError, "tokens"),
        (lambda: mrope_fastest_turn((16, 24, 24), 1e6, 4097), ValueError, "tokens"),
        (lambda: mrope_fastest_turn((16, 0, 24), 1e6), ValueError, "h axis"),
        (lambda: mrope_fastest_turn((16, 24, 24), 1e6, interleaved=1), TypeError, "interleaved"),
        (lambda: mrope_fastest_turn((16, 24, 24), 0.5), ValueError, "base"),
        (lambda: mrope_fastest_turn((16, 24, 24), 1e6, 46.0), TypeError, "tokens"),
        (lambda: mrope_fastest_turn("abc", 1e6), TypeError, "mrope_section"),
        (lambda: mrope_fastest_turn_figure([]), TypeError, "models"),
        (lambda: mrope_fastest_turn_figure([("a", (16, 24, 24), False)]), TypeError, "models"),
        (lambda: mrope_fastest_turn_figure(MROPE_MODELS * 3), ValueError, "models"),
        (lambda: mrope_fastest_turn_figure([("a", (16, 24, 24), False, 1.0)]), ValueError,
         "rope_theta"),
    ],
)
def test_fastest_turn_rejects_bad_input_naming_it(call, error: type, name: str) -> None:
    with pytest.raises(error, match=name):
        call()
