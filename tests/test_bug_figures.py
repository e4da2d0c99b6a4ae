"""Chapter 6's bug-gallery figures use the book's template (no plotly default template)."""

from __future__ import annotations

import pytest
import torch

from posenc_lib.display import figure_json
from posenc_lib.viz.bugs import per_pair_figure


def test_per_pair_figure_draws_each_series_with_the_books_template() -> None:
    right = torch.logspace(0, -4, 64)
    fig = per_pair_figure({"right": right, "bug": torch.zeros(64)}, ylabel="step",
                          title="t", threshold=0.1, threshold_label="0.1")
    assert [t.name for t in fig.data] == ["right", "bug"]
    assert fig.layout.yaxis.type == "log" and min(fig.data[1].y) == 1e-9  # zeros on the floor
    assert '"scatter3d"' not in figure_json(fig)  # no plotly default template in the page


@pytest.mark.parametrize(("kwargs", "match"), [({"series": {}}, "at least one"),
                                               ({"floor": 0.0}, "floor")])
def test_per_pair_figure_bad_input(kwargs: dict, match: str) -> None:
    args = {"series": {"a": [1.0]}, "ylabel": "y", "title": "t", **kwargs}
    with pytest.raises(ValueError, match=match):
        per_pair_figure(**args)


def test_offset_profile_figure_draws_one_line_per_bug_over_the_offsets() -> None:
    from posenc_lib.viz.bugs import offset_profile_figure

    fig = offset_profile_figure({"a": [0.0, 1.0, 2.0], "b": torch.tensor([0.0, 0.5, 0.25])},
                                [0, 1, 4], title="t")
    assert [t.name for t in fig.data] == ["a", "b"]
    assert list(fig.data[0].x) == [0, 1, 4] and list(fig.data[1].y) == [0.0, 0.5, 0.25]
    with pytest.raises(ValueError, match="increasing"):
        offset_profile_figure({"a": [1.0, 2.0]}, [1, 1], title="t")
    with pytest.raises(ValueError, match="finite"):
        offset_profile_figure({"a": [1.0, float("nan")]}, [0, 1], title="t")
    with pytest.raises(ValueError, match="profiles"):
        offset_profile_figure({}, [0, 1], title="t")
