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
