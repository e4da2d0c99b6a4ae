"""The lab's NoPE figures: the position readout beside the hand-built map, the BOS lead."""

from __future__ import annotations

import numpy as np
import pytest

from posenc_lib.lab.nope import recover_positions
from posenc_lib.viz.lab import bos_lead_figure, readout_figure


def test_readout_figure_draws_the_three_lines_as_given() -> None:
    n, knots = 128, 32
    positions = np.arange(1, n + 1)
    hand = recover_positions(n, knots).numpy()
    trained = np.minimum(positions, 40.0) + 0.25
    fig = readout_figure(positions, trained, hand, train_length=knots)
    assert [t.mode for t in fig.data] == ["lines"] * 3
    np.testing.assert_allclose(fig.data[0].y, trained, atol=1e-3)
    np.testing.assert_allclose(fig.data[1].y, hand, atol=1e-3)
    np.testing.assert_array_equal(fig.data[2].y, positions)  # the identity
    # the hand-built map is the identity up to its knots and saturates below 2N - 1 beyond them
    ys = np.array(fig.data[1].y)
    np.testing.assert_allclose(ys[:knots], positions[:knots], atol=1e-3)
    assert ys[-1] < 2 * knots - 1 < positions[-1]
    assert fig.layout.shapes[0].x0 == knots  # the training length line
    assert "NaN" not in fig.to_json()


def test_readout_figure_rejects_bad_input() -> None:
    x = np.arange(1, 9)
    with pytest.raises(ValueError, match="trained"):
        readout_figure(x, x[:-1], x, train_length=4)
    with pytest.raises(ValueError, match="hand_built"):
        readout_figure(x, x, np.full(8, np.nan), train_length=4)
    with pytest.raises(ValueError, match="positions"):
        readout_figure(np.ones((2, 2)), x, x, train_length=4)
    with pytest.raises(ValueError, match="train_length"):
        readout_figure(x, x, x, train_length=0)


def test_bos_lead_figure_draws_each_head_and_its_level() -> None:
    keys = np.arange(2, 258)
    lead = np.stack([np.full(keys.size, 2.4), 1.2 + 0.01 * np.log(keys)])  # (2 heads, 256)
    fig = bos_lead_figure(keys, lead, np.array([2.4, 1.23]), train_keys=33)
    assert len(fig.data) == 4  # head 0, its level, head 1, its level
    np.testing.assert_allclose(fig.data[2].y, lead[1], atol=1e-4)
    assert list(fig.data[3].y) == [1.23, 1.23] and list(fig.data[3].x) == [2, 257]
    assert fig.layout.xaxis.type == "log" and fig.layout.shapes[0].x0 == 33
    assert "NaN" not in fig.to_json()


def test_bos_lead_figure_rejects_bad_input() -> None:
    keys = np.arange(2, 10)
    lead = np.ones((2, 8))
    with pytest.raises(ValueError, match="keys"):
        bos_lead_figure(np.arange(1, 9), lead, np.ones(2), train_keys=4)
    with pytest.raises(ValueError, match="keys"):
        bos_lead_figure(keys[::-1], lead, np.ones(2), train_keys=4)
    with pytest.raises(ValueError, match="lead"):
        bos_lead_figure(keys, lead[:, :-1], np.ones(2), train_keys=4)
    with pytest.raises(ValueError, match="in_range"):
        bos_lead_figure(keys, lead, np.ones(3), train_keys=4)
    with pytest.raises(ValueError, match="finite"):
        bos_lead_figure(keys, np.full((2, 8), np.nan), np.ones(2), train_keys=4)
    with pytest.raises(ValueError, match="train_keys"):
        bos_lead_figure(keys, lead, np.ones(2), train_keys=1)
