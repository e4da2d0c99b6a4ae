"""Figures of the extrapolation lab (chapter 9), drawn from the committed results.

* :func:`lab_curves`: metric against evaluation length, one line per encoding (mean over seeds)
  with a band from the worst to the best seed; a dropdown picks the task;
* :func:`rope_methods_curves`: the RoPE model with each scaling method applied at inference,
  and the RoPE-ABF model, per task;
* :func:`lab_attention_maps`: head-averaged attention of each layer of the seed-0 models, with
  a slider over encoding × length (1× and 4× the training length);
* :func:`learned_table_figure`: the learned absolute table — cosine similarity of its rows, and
  how far training moved each row from its initialisation, which shows where training stopped;
* :func:`nope_counter_figure`: the hand-built NoPE layer's ``1/t`` and the positions it
  recovers, with and without the causal mask.

The builders take the dictionaries of :mod:`posenc_lib.lab.results`; they compute nothing that
the lab does not own.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..lab.nope import bos_inputs, counting_head, recover_positions
from ..lab.results import summarise
from ._checks import _int
from ._style import COLORWAY, MUTED, SEQUENTIAL, _buttons, _slider, _style

__all__ = [
    "SCHEME_LABELS",
    "lab_attention_maps",
    "lab_curves",
    "learned_table_figure",
    "nope_counter_figure",
    "rope_methods_curves",
]

SCHEME_LABELS = {
    "none": "NoPE",
    "sinusoidal": "sinusoidal",
    "learned": "learned absolute",
    "rope": "RoPE",
    "rope_abf": "RoPE-ABF (base 500 000)",
    "alibi": "ALiBi",
}
METHOD_LABELS = {
    "plain": "RoPE, no scaling",
    "pi": "RoPE + PI",
    "ntk": "RoPE + NTK-aware",
    "dynamic_ntk": "RoPE + dynamic NTK",
    "yarn": "RoPE + YaRN",
}
TASK_LABELS = {"copy": "copy task: token accuracy", "markov": "Markov LM: loss beyond L (nats)"}


def _check_results(results: object) -> dict:
    if not isinstance(results, dict) or "runs" not in results or "settings" not in results:
        raise TypeError("results must be the dict of posenc_lib.lab.results.load_results()")
    return results


def _rgba(hex_colour: str, alpha: float) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _band_traces(stats: dict[int, dict], name: str, colour: str, group: str, visible: bool,
                 dash: str = "solid") -> list[go.Scatter]:
    lengths = list(stats)
    lo = [stats[n]["min"] for n in lengths]
    hi = [stats[n]["max"] for n in lengths]
    band = go.Scatter(
        x=lengths + lengths[::-1], y=hi + lo[::-1], fill="toself", mode="lines",
        line={"width": 0}, fillcolor=_rgba(colour, 0.18), hoverinfo="skip", showlegend=False,
        legendgroup=group, visible=visible,
    )
    mean = go.Scatter(
        x=lengths, y=[stats[n]["mean"] for n in lengths], mode="lines+markers", name=name,
        line={"color": colour, "width": 2.5, "dash": dash}, legendgroup=group, visible=visible,
        customdata=[[stats[n]["min"], stats[n]["max"], stats[n]["n"]] for n in lengths],
        hovertemplate=(f"{name}<br>length %{{x}}: mean %{{y:.3f}}"
                       "<br>seeds: min %{customdata[0]:.3f}, max %{customdata[1]:.3f}"
                       " (n = %{customdata[2]})<extra></extra>"),
    )
    return [band, mean]


def _task_menu(fig: go.Figure, groups: list[list[bool]], tasks: list[str]) -> None:
    buttons = []
    for task, visible in zip(tasks, groups, strict=True):
        yaxis = ({"title": {"text": "token accuracy (second half)"}, "range": [-0.02, 1.02]}
                 if task == "copy" else
                 {"title": {"text": "cross-entropy beyond L (nats)"}, "autorange": True})
        buttons.append({"label": TASK_LABELS[task], "method": "update",
                        "args": [{"visible": visible}, {"yaxis": yaxis}]})
    # Under the legend, right of the plot: the long title keeps the space above the axes.
    menu = {**_buttons(buttons, 0), "x": 1.02, "xanchor": "left", "y": 0.0, "yanchor": "bottom"}
    fig.update_layout(updatemenus=[menu])


def _curves(task_series: dict[str, list[tuple[str, str, dict]]],
            train_length: int, title: str, floors: dict[int, float] | None) -> go.Figure:
    fig = go.Figure()
    tasks = list(task_series)
    owner: list[str] = []
    for t_index, task in enumerate(tasks):
        for k, (name, group, stats) in enumerate(task_series[task]):
            dash = "dot" if "ABF" in name else "solid"
            traces = _band_traces(stats, name, COLORWAY[k % len(COLORWAY)], group,
                                  t_index == 0, dash)
            for trace in traces:
                fig.add_trace(trace)
                owner.append(task)
        if task == "markov" and floors:
            lengths = sorted(floors)
            fig.add_trace(go.Scatter(
                x=lengths, y=[floors[n] for n in lengths], mode="lines", name="the chain's entropy",
                line={"color": MUTED, "dash": "dash", "width": 1.5}, visible=t_index == 0,
                hovertemplate="chain's own loss at %{x}: %{y:.3f}<extra></extra>"))
            owner.append(task)
    groups = [[o == task for o in owner] for task in tasks]
    _task_menu(fig, groups, tasks)
    first = tasks[0]
    fig.add_vline(x=train_length, line={"color": MUTED, "width": 1, "dash": "dot"})
    lengths = sorted({n for series in task_series.values() for _, _, stats in series
                      for n in stats})
    fig.update_xaxes(type="log", tickvals=lengths,
        title={"text": f"evaluation length (tokens; trained at L = {train_length})"})
    if first == "copy":
        fig.update_yaxes(title={"text": "token accuracy (second half)"}, range=[-0.02, 1.02])
    else:
        fig.update_yaxes(title={"text": "cross-entropy beyond L (nats)"})
    return _style(fig, title, height=480)


def lab_curves(results: dict, *, markov_floor: dict[int, float] | None = None) -> go.Figure:
    """Each encoding's metric against evaluation length: mean over seeds, band min…max.

    Parameters
    ----------
    results : dict
        :func:`posenc_lib.lab.results.load_results`.
    markov_floor : dict, optional
        ``{length: loss}``, the chain's own loss (:func:`posenc_lib.lab.results.reference_loss`),
        drawn as a dashed line on the Markov view.

    Returns
    -------
    plotly.graph_objects.Figure
        A dropdown switches between the copy task and the Markov LM.
    """
    results = _check_results(results)
    schemes = results["settings"]["schemes"]
    series = {}
    for task in results["settings"]["tasks"]:
        summary = summarise(results, task)
        series[task] = [(SCHEME_LABELS[s], s, summary[s]) for s in schemes if s in summary]
    return _curves(series, results["settings"]["train_length"],
                   "Beyond the training length: each encoding, mean and seed range",
                   markov_floor)


def rope_methods_curves(results: dict, *, markov_floor: dict[int, float] | None = None
                        ) -> go.Figure:
    """The RoPE model with PI, NTK-aware, dynamic NTK and YaRN at inference (no fine-tuning),
    next to the plain RoPE and RoPE-ABF models; mean over seeds, band min…max."""
    results = _check_results(results)
    methods = results["settings"]["rope_methods"]
    series = {}
    for task in results["settings"]["tasks"]:
        rows = []
        for method in methods:
            stats = summarise(results, task, method).get("rope")
            if stats:
                rows.append((METHOD_LABELS[method], method, stats))
        abf = summarise(results, task).get("rope_abf")
        if abf:
            rows.append((SCHEME_LABELS["rope_abf"], "rope_abf", abf))
        series[task] = rows
    return _curves(series, results["settings"]["train_length"],
                   "RoPE stretched at inference, and RoPE trained with a larger base",
                   markov_floor)


def lab_attention_maps(artifacts: dict[str, np.ndarray], task: str = "copy",
                       schemes: tuple[str, ...] = tuple(SCHEME_LABELS),
                       train_length: int = 32) -> go.Figure:
    """Head-averaged attention of both layers, one seed-0 model at a time.

    A slider steps through encoding × length (1× and 4× the training length; the 4× maps were
    average-pooled 2×2 when saved, so one cell covers two queries and two keys).
    """
    if task not in ("copy", "markov"):
        raise ValueError(f"task must be 'copy' or 'markov', got {task!r}")
    train_length = _int(train_length, "train_length", 2)
    combos = []
    for scheme in schemes:
        for multiple in (1, 4):
            keys = [f"attn/{task}/{scheme}/{multiple}x/layer{layer}" for layer in (0, 1)]
            if all(k in artifacts for k in keys):
                combos.append((scheme, multiple, [artifacts[k] for k in keys]))
    if not combos:
        raise ValueError(f"no attention maps for task {task!r} in the artifacts")
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                        subplot_titles=("layer 1", "layer 2"))
    for c_index, (_, multiple, maps) in enumerate(combos):
        cell = 2 if multiple >= 4 else 1
        for layer, grid in enumerate(maps):
            n = grid.shape[0]
            ticks = np.arange(n) * cell
            blank = np.array(None, dtype=object)  # JSON null: the masked upper triangle
            lower = np.where(np.tril(np.ones((n, n), dtype=bool)), np.round(grid, 2), blank)
            fig.add_trace(go.Heatmap(
                z=lower.tolist(), x=ticks, y=ticks, colorscale=SEQUENTIAL, zmin=0, zmax=0.5,
                showscale=layer == 1, visible=c_index == 0,
                # the scale stops at 0.5 (weights above it share its colour): the bar says so
                colorbar={"title": {"text": "weight"}, "len": 0.9,
                          "tickvals": [0, 0.1, 0.2, 0.3, 0.4, 0.5],
                          "ticktext": ["0", "0.1", "0.2", "0.3", "0.4", "≥ 0.5"]},
                hovertemplate="query %{y}, key %{x}: %{z:.3f}<extra></extra>",
            ), row=1, col=layer + 1)
    steps = []
    for c_index, (scheme, multiple, _) in enumerate(combos):
        visible = [False] * (2 * len(combos))
        visible[2 * c_index] = visible[2 * c_index + 1] = True
        steps.append({"label": f"{SCHEME_LABELS[scheme]}, {multiple}×L", "method": "update",
                      "args": [{"visible": visible}]})
    fig.update_layout(sliders=[_slider(steps, 0, "model and length: ", y=-0.12)])
    for col in (1, 2):
        fig.update_xaxes(title={"text": "key position"}, row=1, col=col)
        fig.update_yaxes(title={"text": "query position"}, autorange="reversed", row=1, col=col)
    return _style(fig, f"Attention of the trained models ({task} task, seed 0, mean over heads)",
                  height=560)


def _cosine(table: np.ndarray) -> np.ndarray:
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    return unit @ unit.T


def learned_table_figure(table: np.ndarray, initial: np.ndarray, train_length: int, *,
                         shown: int | None = None) -> go.Figure:
    """The learned absolute table after training: row similarities, and how far each row moved.

    Parameters
    ----------
    table : numpy.ndarray
        ``(max_len, d_model)`` trained table.
    initial : numpy.ndarray
        The same table at initialisation (same shape).
    train_length : int
        ``L``: rows ``>= L`` were never used in training.
    shown : int, optional
        Rows in the similarity matrix (default ``min(max_len, 4L)``).

    Returns
    -------
    plotly.graph_objects.Figure
        Left: ``‖row_p − initial_p‖`` against ``p``, zero for every row training never reached.
        Right: cosine similarity of rows ``0 … shown−1``.
    """
    for name, value in (("table", table), ("initial", initial)):
        if not isinstance(value, np.ndarray) or value.ndim != 2:
            raise TypeError(f"{name} must be a 2-D numpy array (max_len, d_model)")
    if initial.shape != table.shape:
        raise ValueError(f"initial must have the table's shape {table.shape}, got {initial.shape}")
    max_len = table.shape[0]
    train_length = _int(train_length, "train_length", 1, max_len - 1)
    shown = min(max_len, 4 * train_length) if shown is None else _int(shown, "shown", 2, max_len)
    sim = _cosine(table.astype(np.float64))
    moved = np.linalg.norm(table.astype(np.float64) - initial.astype(np.float64), axis=1)
    # The heatmap on the right, its colour bar at the figure's right edge: a colour bar between
    # two subplots runs into the second one's axis on a narrow screen.
    fig = make_subplots(rows=1, cols=2, column_widths=[0.5, 0.5], horizontal_spacing=0.14,
                        subplot_titles=("how far training moved each row",
                                        f"cosine similarity of rows 0…{shown - 1}"))
    fig.add_trace(go.Scatter(x=list(range(max_len)), y=np.round(moved, 4).tolist(),
                             mode="lines+markers", marker={"size": 3},
                             line={"color": COLORWAY[0]}, showlegend=False,
                             hovertemplate="row %{x}: moved %{y:.3f}<extra></extra>"),
                  row=1, col=1)
    fig.add_trace(go.Heatmap(z=np.round(sim[:shown, :shown], 2).tolist(), colorscale="RdBu",
                             zmid=0, zmin=-1, zmax=1,
                             colorbar={"title": {"text": "cos"}, "thickness": 16},
                             hovertemplate="rows %{y} and %{x}: %{z:.2f}<extra></extra>"),
                  row=1, col=2)
    for col in (1, 2):
        fig.add_vline(x=train_length - 0.5, line={"color": MUTED, "dash": "dot"}, row=1, col=col)
    fig.add_hline(y=train_length - 0.5, line={"color": MUTED, "dash": "dot"}, row=1, col=2)
    fig.update_xaxes(title={"text": "position p (row)"}, row=1, col=1)
    fig.update_yaxes(title={"text": "‖row after training − row at init‖"}, row=1, col=1)
    fig.update_xaxes(title={"text": "position (row)"}, row=1, col=2)
    fig.update_yaxes(title={"text": "position (row)"}, autorange="reversed", row=1, col=2)
    return _style(fig, f"The learned table: rows beyond L = {train_length} never moved",
                  height=460)


def nope_counter_figure(seq_len: int = 48, max_position: int = 32) -> go.Figure:
    """The hand-built NoPE layer: the head's output ``1/t`` and the recovered position, with and
    without the causal mask (the inverse map is exact up to ``max_position``)."""
    seq_len = _int(seq_len, "seq_len", 2, 4096)
    max_position = _int(max_position, "max_position", 2, 4096)
    t = list(range(1, seq_len + 1))
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                        subplot_titles=("attention output at position t",
                                        "position read back by the feed-forward map"))
    for causal, colour, label in ((True, COLORWAY[0], "causal mask"),
                                  (False, COLORWAY[5], "no mask")):
        u = counting_head(bos_inputs(seq_len), causal=causal)
        rec = recover_positions(seq_len, max_position, causal=causal)
        fig.add_trace(go.Scatter(x=t, y=u.tolist(), mode="lines+markers", name=label,
                                 line={"color": colour}, legendgroup=label,
                                 hovertemplate="t = %{x}: %{y:.4f}<extra>" + label + "</extra>"),
                      row=1, col=1)
        fig.add_trace(go.Scatter(x=t, y=rec.tolist(), mode="lines+markers", name=label,
                                 line={"color": colour}, legendgroup=label, showlegend=False,
                                 hovertemplate="t = %{x}: read %{y:.3f}<extra>" + label
                                 + "</extra>"), row=1, col=2)
    fig.add_trace(go.Scatter(x=t, y=t, mode="lines", name="the true position",
                             line={"color": MUTED, "dash": "dot"}), row=1, col=2)
    fig.add_vline(x=max_position, line={"color": MUTED, "dash": "dot"}, row=1, col=2)
    fig.update_xaxes(title={"text": "position t (1-based)"})
    fig.update_yaxes(title={"text": "head output"}, row=1, col=1)
    fig.update_yaxes(title={"text": "recovered position"}, row=1, col=2)
    return _style(fig, "A NoPE layer reads absolute position off the causal mask", height=420)

