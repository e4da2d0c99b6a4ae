"""Figure notes stay off the data: what a phone showed covering a figure's traces, fixed in its
builder (the layout is the same at every width; figures.js only wraps and resizes text)."""

from __future__ import annotations

from posenc_lib.viz.multimodal import position_ids_figure


def test_mrope_position_ids_keep_the_merge_rule_out_of_the_plot() -> None:
    # Chapter 11: the note "merge 2×2: …" sat inside the plot (paper y = 0.02); wrapped on a
    # phone it covered the ids of the larger grids. It is now under the x-axis title.
    fig = position_ids_figure([("text", 4), ("image", 1, 8, 4), ("text", 4)], 2)
    inside = [
        note.text
        for note in fig.layout.annotations
        if note.xref == "paper" and note.yref == "paper" and 0 <= note.y <= 1 and 0 <= note.x <= 1
    ]
    assert inside == []
    assert "merge 2×2: an h×w grid becomes (h/2)·(w/2) tokens" in fig.layout.xaxis.title.text
    assert fig.layout.sliders, "the note belongs to the figure with the grid-size slider"
