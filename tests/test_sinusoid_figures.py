"""Chapter 3's figures: clock hands, training arcs, the decay law and the four logit terms."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from posenc_lib import sinusoidal_frequencies
from posenc_lib.properties import logit_terms
from posenc_lib.sinusoidal import sinusoidal_table
from posenc_lib.viz.sinusoid import (
    clock_hands,
    decay_law_figure,
    logit_terms_figure,
    training_arcs,
)


def test_clock_hands_point_at_the_pairs_angles() -> None:
    fig = clock_hands(dim=8, position=3)
    hands = fig.data[-1]
    theta = sinusoidal_frequencies(8).tolist()
    for i, th in enumerate(theta):  # tip minus centre is (sin 3θ_i, cos 3θ_i)
        dx = hands.x[3 * i + 1] - hands.x[3 * i]
        dy = hands.y[3 * i + 1] - hands.y[3 * i]
        assert dx == pytest.approx(math.sin(3 * th), abs=1e-3)
        assert dy == pytest.approx(math.cos(3 * th), abs=1e-3)
    labels = [s.label for s in fig.layout.sliders[0].steps]
    assert "3" in labels and "10000" in labels


def test_training_arcs_count_the_pairs_under_one_turn() -> None:
    fig = training_arcs(dim=512, train_len=512)
    assert fig.layout.title.text.startswith("L_train = 512: 133 of 256")
    turns = np.asarray(fig.data[0].y)
    assert int((turns < 1).sum()) == 133
    steps = {s.label: s for s in fig.layout.sliders[0].steps}
    assert "64 of 256" not in steps["32,768"].args[1]["title.text"]


def test_decay_law_figure_traces_match_the_library() -> None:
    fig = decay_law_figure(dim=512, max_distance=1000)
    k = np.asarray(fig.data[1].x)
    theta = sinusoidal_frequencies(512).double()
    expected = torch.cos(torch.as_tensor(k, dtype=torch.float64)[:, None] * theta).mean(-1)
    np.testing.assert_allclose(fig.data[1].y, expected.numpy(), atol=1e-4)
    np.testing.assert_allclose(fig.data[0].y, fig.data[1].y)  # opens on b = 10 000
    assert list(fig.layout.yaxis.range) == [-0.35, 1.05]


def test_logit_terms_figure_plots_the_terms() -> None:
    gen = torch.Generator().manual_seed(0)
    w_q, w_k = (torch.randn(8, 8, generator=gen, dtype=torch.float64) for _ in range(2))
    x, y = (torch.randn(8, generator=gen, dtype=torch.float64) for _ in range(2))
    m = torch.arange(20, dtype=torch.float64)
    pe_m = sinusoidal_table(20, 8, dtype=torch.float64, positions=m)
    pe_n = sinusoidal_table(20, 8, dtype=torch.float64, positions=m + 3)
    terms = logit_terms(x, y, pe_m, pe_n, w_q, w_k)
    fig = logit_terms_figure(terms, m, offset=3)
    assert len(fig.data) == 5
    np.testing.assert_allclose(fig.data[4].y, terms["total"].numpy(), atol=1e-4)
    with pytest.raises(ValueError, match="terms"):
        logit_terms_figure({"total": m}, m, offset=3)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: clock_hands(dim=34), "dim"),
        (lambda: clock_hands(position=-1), "position"),
        (lambda: training_arcs(train_len=1), "train_len"),
        (lambda: decay_law_figure(max_distance=5), "max_distance"),
        (lambda: decay_law_figure(base=1.0), "base"),
    ],
)
def test_bad_arguments_name_the_parameter(call, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        call()


def test_position_term_figure_flat_for_commuting_projections_and_drifting_for_a_generic_one():
    from posenc_lib.viz.sinusoid import position_term_figure

    fig = position_term_figure(dim=32, offset=4, shift=5)
    identity, shift, commuting, generic = (np.array(trace.y) for trace in fig.data)
    theta = sinusoidal_frequencies(32).double()
    assert np.allclose(identity, torch.cos(4 * theta).sum().item(), atol=1e-3)
    assert np.allclose(shift, torch.cos(9 * theta).sum().item(), atol=1e-3)  # Σ cos((k + j)θ)
    assert np.ptp(commuting) < 1e-3 and np.ptp(generic) > 1
    with pytest.raises(ValueError, match="dim"):
        position_term_figure(dim=7)


def test_patch_similarity_is_the_sum_of_the_two_axes():
    from posenc_lib import sinusoidal_similarity
    from posenc_lib.viz.sinusoid import patch_similarity_figure

    fig = patch_similarity_figure(grid=6, dim=16, patch=2, sliders=False)
    z = np.array(fig.data[0].z)
    s = sinusoidal_similarity(8, 10000.0, max_distance=6).numpy()  # entry 6 + k: offset k
    expected = s[6 + np.arange(6) - 2][:, None] + s[6 + np.arange(6) - 2][None, :]
    assert np.allclose(z, expected, atol=1e-3) and z[2, 2] == pytest.approx(8.0)  # d/2
    with pytest.raises(ValueError, match="multiple of 4"):
        patch_similarity_figure(dim=6)


def test_figures_use_the_book_notation_r_and_phi() -> None:
    from posenc_lib.viz.sinusoid import decay_law_figure, position_term_figure

    law = decay_law_figure(dim=64, max_distance=100, sliders=False)
    assert law.layout.xaxis.title.text == "offset r"
    assert [tr.name for tr in law.data[1:]] == [
        "sum (2/d) Σ cos(rθ_i)", "limit [Ci(r) − Ci(r/b)]/ln b", "decay law 1 − (ln r + γ)/ln b"]
    fig = position_term_figure(dim=32, offset=4, shift=5)
    assert fig.data[1].name == "A = Φ(5) (a shift)"
    assert fig.layout.yaxis.title.text == "PE(m)ᵀ A PE(n)"
    assert fig.layout.sliders[0].currentvalue.prefix == "r = m − n = "
    steps = fig.layout.sliders[0].steps
    labels = [int(step.label) for step in steps]
    assert labels == sorted(labels) and labels[fig.layout.sliders[0].active] == -4
    # the step labelled r shows the key at n = m − r:
    # A = I gives Σ cos(rθ_i), A = Φ(5) gives Σ cos((r − 5)θ_i)
    theta = sinusoidal_frequencies(32).double()
    by_r = {int(step.label): step.args[0]["y"] for step in steps}
    assert np.allclose(by_r[7][0], torch.cos(7 * theta).sum().item(), atol=1e-3)
    assert np.allclose(by_r[7][1], torch.cos(2 * theta).sum().item(), atol=1e-3)
    assert np.allclose(by_r[-7][1], torch.cos(12 * theta).sum().item(), atol=1e-3)
