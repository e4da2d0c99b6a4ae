"""The decay figure: its three curves are the library's quantities, and it stays within budgets."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_lib import apply_rope_interleaved, rope_decay_bound, sinusoidal_similarity
from posenc_lib.analysis import rope_score_spread
from posenc_lib.display import StaticFigure
from posenc_lib.viz._style import BASE_GRID, _with
from posenc_lib.viz.decay import MAX_DISTANCE_WITH_SLIDERS, decay_curves
from posenc_lib.widgets.decay import decay_live

PAGE_BUDGET_BYTES = 1_500_000  # DESIGN.md: a chapter page's own HTML + figure data


def _html_bytes(fig) -> int:
    return len(StaticFigure(fig).to_html().encode())


def test_curves_are_the_library_quantities() -> None:
    fig = decay_curves(dim=32, base=1e4, max_distance=40, sliders=False)
    bound, sim, spread = (np.asarray(t.y) for t in fig.data)
    b = rope_decay_bound(32, 1e4, 40).numpy()
    np.testing.assert_allclose(bound, b / b[0])
    np.testing.assert_allclose(sim, sinusoidal_similarity(32, 1e4, 40).numpy()[40:] / 16)
    np.testing.assert_allclose(spread, rope_score_spread(32, 1e4, 40, n_samples=128).numpy())


def test_spread_is_not_the_similarity_again() -> None:
    # The old third curve (mean score of q with itself) had correlation 0.995 with the similarity.
    fig = decay_curves(dim=128, base=1e4, max_distance=256, sliders=False)
    _, sim, spread = (np.asarray(t.y) for t in fig.data)
    assert abs(np.corrcoef(sim, spread)[0, 1]) < 0.5
    # Flat near 1/sqrt(d): the noise floor, far below the aligned score at k = 0 (which is 1).
    assert np.abs(spread / (1 / math.sqrt(128)) - 1).max() < 0.3
    assert sim[0] == pytest.approx(1.0)


def test_spread_equals_a_direct_rope_computation() -> None:
    gen = torch.Generator().manual_seed(3)
    q, k = torch.randn(2, 64, 16, generator=gen, dtype=torch.float64)
    q, k = q / q.norm(dim=-1, keepdim=True), k / k.norm(dim=-1, keepdim=True)
    offsets = torch.arange(21)
    q_rot = apply_rope_interleaved(q[:, None, :].expand(64, 21, 16), torch.zeros(21))
    k_rot = apply_rope_interleaved(k[:, None, :].expand(64, 21, 16), offsets)
    direct = (q_rot * k_rot).sum(-1).std(dim=0)
    torch.testing.assert_close(rope_score_spread(16, 1e4, 20, n_samples=64, seed=3), direct)


def test_spread_averages_to_one_over_sqrt_d() -> None:
    for dim in (8, 64, 256):
        spread = rope_score_spread(dim, 1e4, 300, n_samples=1024)
        assert spread.mean().item() == pytest.approx(1 / math.sqrt(dim), rel=0.08)


def test_static_grid_covers_every_base_and_dim() -> None:
    fig = decay_curves(max_distance=64)
    dims = [int(b.label.split("= ")[1]) for b in fig.layout.updatemenus[0].buttons]
    assert dims == [16, 32, 64, 128, 256, 512]
    steps = list(fig.layout.sliders[0].steps)
    for step, base in zip(steps, _with(BASE_GRID, 1e4), strict=True):
        ys = step.args[0]["y"]
        assert len(ys) == 3 * len(dims)
        b = rope_decay_bound(512, base, 64).numpy()
        np.testing.assert_allclose(ys[-3], b / b[0], atol=6e-4)
        s = sinusoidal_similarity(512, base, 64).numpy()[64:] / 256
        np.testing.assert_allclose(ys[-2], s, atol=6e-4)


def test_chapter_3_form_draws_only_the_similarity() -> None:
    fig = decay_curves(curves=("similarity",))
    assert len(fig.data) == 6  # one per dimension of the dropdown
    assert all("PE(p)" in t.name for t in fig.data)
    assert "bound" not in fig.layout.title.text.lower()
    ui = decay_live(curves=["similarity"])
    ui.controls["base"].value = 500000.0
    (trace,) = ui.figure.data
    np.testing.assert_allclose(
        trace.y, sinusoidal_similarity(128, 5e5, 256).numpy()[256:] / 64
    )


def test_thousands_of_tokens_on_a_log_axis_with_the_bound_named_as_a_shape() -> None:
    fig = decay_curves(dim=128, base=1e4, max_distance=4096, curves=("bound", "similarity"))
    assert fig.layout.xaxis.type == "log" and "r = m − n" in fig.layout.xaxis.title.text
    bound, sim = (t for t in fig.data if t.visible)  # d = 128 of the dimension menu
    x = np.asarray(bound.x)
    assert x[0] == 1 and x[-1] == 4096 and len(x) < 320
    b = rope_decay_bound(128, 1e4, 4096).numpy()
    np.testing.assert_allclose(np.asarray(bound.y), (b / b[0])[x])
    np.testing.assert_allclose(np.asarray(sim.y),
                               sinusoidal_similarity(128, 1e4, 4096).numpy()[4096:][x] / 64)
    assert "own unit" in bound.name  # not read as a bound on the other curves
    with pytest.raises(ValueError, match="max_distance"):
        decay_curves(max_distance=4096)  # the spread at every distance for every slider state


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"curves": ("bound", "nope")}, ValueError, "curves"),
        ({"curves": ()}, ValueError, "curves"),
        ({"curves": "bound"}, TypeError, "curves"),
        ({"max_distance": MAX_DISTANCE_WITH_SLIDERS + 1}, ValueError, "max_distance"),
        ({"max_distance": 8193, "sliders": False}, ValueError, "max_distance"),
        ({"n_samples": 1}, ValueError, "n_samples"),
        ({"n_samples": 1024}, ValueError, "n_samples"),
    ],
)
def test_bad_arguments_fail_at_once_naming_them(kwargs: dict, error: type, name: str) -> None:
    with pytest.raises(error, match=name):
        decay_curves(**kwargs)


def test_issue_14_case_is_refused_before_any_allocation() -> None:
    # Once a 34 GB tensor: 1024 samples x 8193 distances x 1024 features.
    with pytest.raises(ValueError, match="max_distance"):
        decay_curves(1024, 1e4, 8192, n_samples=1024)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"dim": 1024, "max_distance": MAX_DISTANCE_WITH_SLIDERS},  # every slider state precomputed
        {"dim": 1024, "max_distance": 8192, "n_samples": 512, "sliders": False},
    ],
)
def test_largest_documented_figures_fit_the_page_budget(kwargs: dict) -> None:
    fig = decay_curves(**kwargs)
    assert _html_bytes(fig) < PAGE_BUDGET_BYTES / 2  # leave room for the page's other figures
    for trace in fig.data:
        assert np.isfinite(np.asarray(trace.y, dtype=float)).all()


def test_live_explorer_refuses_values_outside_its_sliders() -> None:
    with pytest.raises(ValueError, match="dim"):
        decay_live(dim=1024)
    with pytest.raises(ValueError, match="max_distance"):
        decay_live(max_distance=4097)
    ui = decay_live(dim=512, max_distance=4096, curves=("bound", "similarity"))  # largest build
    assert ui.controls["dim"].value == 512 and ui.controls["max_distance"].value == 4096
    assert ui.figure.layout.xaxis.type == "log"


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"dim": 5}, "dim"),
        ({"dim": 8192}, "dim"),
        ({"max_distance": 70000}, "max_distance"),
        ({"n_samples": 1}, "n_samples"),
        ({"n_samples": 5000}, "n_samples"),
        ({"seed": -1}, "seed"),
    ],
)
def test_spread_validates_its_arguments(kwargs: dict, name: str) -> None:
    args = {"dim": 16, "base": 1e4, "max_distance": 8} | kwargs
    with pytest.raises(ValueError, match=name):
        rope_score_spread(**args)


@pytest.mark.parametrize(
    ("curves", "named", "absent"),
    [
        (("bound", "similarity"), ["RoFormer's bound", "aligned score"], "unrelated"),
        (("similarity", "spread"), ["aligned score", "unrelated scores"], "bound"),
        (("bound", "similarity", "spread"), ["bound", "aligned", "unrelated"], None),
    ],
)
def test_the_title_names_exactly_the_curves_drawn(
    curves: tuple[str, ...], named: list[str], absent: str | None
) -> None:
    fig = decay_curves(dim=16, base=1e4, max_distance=40, curves=curves, sliders=False)
    title = fig.layout.title.text
    assert len(fig.data) == len(curves)
    assert all(part in title for part in named), title
    assert absent is None or absent not in title, title


# --- the envelope: the range of single queries around the mean aligned score -------------------


def test_envelope_is_the_range_of_direct_rope_self_scores() -> None:
    from posenc_lib.analysis import rope_self_score_envelope

    gen = torch.Generator().manual_seed(4)
    q = torch.randn(32, 16, generator=gen, dtype=torch.float64)
    q = q / q.norm(dim=-1, keepdim=True)
    offsets = torch.arange(31)
    rotated = apply_rope_interleaved(q[:, None, :].expand(32, 31, 16), offsets)  # q at m = r
    scores = (rotated * q[:, None, :]).sum(-1)  # ... against itself as a key at 0
    low, high = rope_self_score_envelope(16, 1e4, 30, n_samples=32, seed=4)
    torch.testing.assert_close(low, scores.min(dim=0).values)
    torch.testing.assert_close(high, scores.max(dim=0).values)
    assert low[0].item() == pytest.approx(1.0) and high[0].item() == pytest.approx(1.0)
    some = torch.tensor([0, 7, 30])
    sub_low, sub_high = rope_self_score_envelope(16, 1e4, 30, n_samples=32, seed=4, offsets=some)
    torch.testing.assert_close(sub_low, low[some])
    torch.testing.assert_close(sub_high, high[some])


@settings(max_examples=25, deadline=None)
@given(
    half=st.integers(1, 64),
    base=st.floats(2.0, 1e6),
    max_distance=st.integers(0, 300),
    seed=st.integers(0, 2**32),
)
def test_envelope_brackets_the_sample_mean_and_stays_in_minus_one_one(
    half: int, base: float, max_distance: int, seed: int
) -> None:
    from posenc_lib.analysis import rope_self_score_envelope

    low, high = rope_self_score_envelope(2 * half, base, max_distance, n_samples=16, seed=seed)
    assert (low <= high).all()
    # Σ_i e_i cos(rθ_i) with energies summing to 1: a weighted mean of cosines.
    assert (low >= -1 - 1e-12).all() and (high <= 1 + 1e-12).all()


def test_envelope_shows_single_queries_straying_from_the_mean() -> None:
    from posenc_lib.analysis import rope_self_score_envelope

    low, high = rope_self_score_envelope(128, 1e4, 4096, n_samples=128)
    mean = sinusoidal_similarity(128, 1e4, 4096)[4096:] / 64
    assert (low[1:] <= mean[1:]).all() and (mean[1:] <= high[1:]).all()
    # At r = 1024 the mean is 0.20, but single queries range from below 0 to almost twice that.
    assert low[1024] < 0 < mean[1024] < 0.25 < 0.35 < high[1024]
    assert (high[1024] - low[1024]) > 2 * mean[1024]


def test_envelope_trace_is_a_filled_band_and_the_page_stays_small() -> None:
    from posenc_lib.analysis import rope_self_score_envelope

    fig = decay_curves(dim=32, base=1e4, max_distance=40, curves=("similarity", "envelope"),
                       sliders=False)
    _, band = fig.data
    assert band.fill == "toself" and "draws" in band.name
    low, high = rope_self_score_envelope(32, 1e4, 40, n_samples=128)
    np.testing.assert_allclose(np.asarray(band.y), np.concatenate([high, low.flip(0)]))
    np.testing.assert_allclose(np.asarray(band.x), np.r_[np.arange(41), np.arange(41)[::-1]])
    big = decay_curves(dim=128, base=1e4, max_distance=4096,
                       curves=("bound", "similarity", "envelope"))
    assert _html_bytes(big) < 250_000  # chapter 5's figure: every base and dimension precomputed
    with pytest.raises(ValueError, match="offsets"):
        rope_self_score_envelope(16, 1e4, 10, offsets=torch.tensor([11]))
    with pytest.raises(TypeError, match="offsets"):
        rope_self_score_envelope(16, 1e4, 10, offsets=torch.tensor([1.0]))
