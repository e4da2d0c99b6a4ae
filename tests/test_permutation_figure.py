"""The shuffle figure: reordering relabels attention without PE, and changes it with PE."""

from __future__ import annotations

import numpy as np
import pytest

from posenc_lib.viz.permutation import (
    _permutation_weights,
    permutation_figure,
    sentence_orderings,
)
from posenc_lib.widgets import permutation_live


def _weights_by_token(tokens: list[str], w: np.ndarray) -> dict[tuple[str, str], float]:
    return {(a, b): float(w[i, j]) for i, a in enumerate(tokens) for j, b in enumerate(tokens)}


@pytest.mark.parametrize("sentence", ["我爱你", "他欠我钱"])
def test_without_positions_every_ordering_only_relabels(sentence: str) -> None:
    orders = sentence_orderings(sentence)
    reference = None
    changed_with_pe = 0
    for order in orders:
        tokens, plain, with_pe = _permutation_weights(sentence, order, 16, 0, 10000.0)
        by_token = _weights_by_token(tokens, plain)
        with_pe_by_token = _weights_by_token(tokens, with_pe)
        if reference is None:
            reference, reference_pe = by_token, with_pe_by_token
            continue
        for pair, weight in by_token.items():
            assert weight == pytest.approx(reference[pair], abs=1e-12)
        if max(abs(with_pe_by_token[p] - reference_pe[p]) for p in by_token) > 1e-3:
            changed_with_pe += 1
    # With the encoding added, every other ordering changes some token-to-token weight.
    assert changed_with_pe == len(orders) - 1


def test_static_figure_has_one_step_per_ordering_and_opens_on_the_first() -> None:
    fig = permutation_figure("我爱你")
    (slider,) = fig.layout.sliders
    labels = [step.label for step in slider.steps]
    assert labels == ["我爱你", "我你爱", "爱我你", "爱你我", "你我爱", "你爱我"]
    first = slider.steps[0].args[0]
    np.testing.assert_allclose(first["z"][0], fig.data[0].z)
    np.testing.assert_allclose(first["z"][1], fig.data[1].z)
    last_layout = slider.steps[-1].args[1]
    assert list(last_layout["xaxis"]["ticktext"]) == ["你", "爱", "我"]
    for step in slider.steps:  # rows of attention weights sum to one in both panels
        for z in step.args[0]["z"]:
            np.testing.assert_allclose(np.sum(z, axis=1), 1.0, atol=1e-3)


def test_live_explorer_follows_ordering_and_base() -> None:
    ui = permutation_live("我爱你")
    before_plain = np.array(ui.figure.data[0].z)
    ui.controls["order"].value = 5  # 你爱我
    assert tuple(ui.figure.layout.xaxis.ticktext) == ("你", "爱", "我")
    after_plain = np.array(ui.figure.data[0].z)
    # P A Pᵀ with P reversing the order: the same numbers, rows and columns reversed.
    np.testing.assert_allclose(after_plain, before_plain[::-1, ::-1], atol=1e-4)
    pe_before = np.array(ui.figure.data[1].z)
    ui.controls["base"].value = 37.0  # off the default: only the encoded panel changes
    np.testing.assert_allclose(np.array(ui.figure.data[0].z), after_plain)
    assert np.abs(np.array(ui.figure.data[1].z) - pe_before).max() > 1e-3


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"sentence": "我"}, ValueError, "sentence"),
        ({"sentence": "我爱你们啊"}, ValueError, "sentence"),
        ({"sentence": 3}, TypeError, "sentence"),
        ({"dim": 7}, ValueError, "dim"),
        ({"order_index": 6}, ValueError, "order_index"),
        ({"base": 0.5}, ValueError, "base"),
    ],
)
def test_bad_arguments_name_the_parameter(kwargs: dict, error: type, name: str) -> None:
    with pytest.raises(error, match=name):
        permutation_figure(**kwargs)


def test_order_training_figure_draws_each_run_and_the_log_2_floor() -> None:
    import math

    import numpy as np

    from posenc_lib.viz.permutation import order_training_figure

    runs = {"bag": np.full(5, 0.7), "table": np.linspace(0.7, 0.1, 5)}
    fig = order_training_figure(runs)
    assert [t.name for t in fig.data][:2] == ["bag", "table"]
    assert list(fig.data[1].y) == pytest.approx(np.linspace(0.7, 0.1, 5).tolist())
    assert list(fig.data[1].x) == [1, 2, 3, 4, 5]
    assert fig.data[2].y == pytest.approx((math.log(2), math.log(2)))
    assert fig.data[-1].name.startswith("log 2")            # drawn last, over a bag's curve
    assert [a.y for a in fig.layout.annotations if a.text.startswith("log 2")] == \
        pytest.approx([math.log(2)])                        # and labelled on the plot
    with pytest.raises(ValueError, match="same number of steps"):
        order_training_figure({"a": np.ones(3), "b": np.ones(4)})
    with pytest.raises(ValueError, match="finite"):
        order_training_figure({"a": np.array([1.0, np.nan])})
    with pytest.raises(TypeError, match="losses"):
        order_training_figure({})
