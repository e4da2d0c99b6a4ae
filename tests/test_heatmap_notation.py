"""The encoding heatmaps name a position m, as the book's notation does (never p)."""

import json

import pytest

from posenc_lib.viz.heatmap import encoding_heatmap


@pytest.mark.parametrize("scheme", ["sinusoidal", "integer", "normalized", "binary"])
@pytest.mark.parametrize("sliders", [True, False])
def test_heatmap_labels_use_m_for_the_position(scheme: str, sliders: bool) -> None:
    fig = encoding_heatmap(16, 8, scheme=scheme, sliders=sliders)
    text = json.dumps(fig.to_plotly_json(), ensure_ascii=False)
    assert "position m" in fig.layout.yaxis.title.text
    assert "position p" not in text and "PE(p" not in text and "of p " not in text
    if scheme == "sinusoidal":
        assert "PE(m)₂ᵢ = sin(m·b^(−2i/d))" in fig.layout.title.text
