"""Figures of the extrapolation lab (chapter 9), drawn from the committed results.

* :func:`lab_curves`: metric against evaluation length, one line per encoding (mean over seeds)
  with a band from the worst to the best seed, models that failed the in-range fit gate dashed;
  a dropdown picks the view (copy accuracy, copy exact match, Markov loss with its references);
* :func:`rope_methods_curves`: RoPE and RoPE-ABF with each scaling method applied at inference;
* :func:`learning_curves`: the in-range validation metric during training, per encoding;
* :func:`position_curves`: a metric against position (log axis), e.g. NoPE with and without BOS;
* :func:`lab_attention_maps`: head-averaged attention of each layer of the seed-0 models, with
  a slider over encoding × length (1× and 4× the training length);
* :func:`learned_table_figure`: the learned absolute table — cosine similarity of its rows, and
  how far training moved each row from its initialisation, which shows where training stopped;
* :func:`nope_counter_figure`: the hand-built NoPE layer's ``1/m`` and the positions it
  recovers, with and without the causal mask;
* :func:`readout_figure`: the trained NoPE model's position readout beside the hand-built map
  and the true position;
* :func:`bos_lead_figure`: the BOS lead ``c`` of each first-layer head against the keys seen,
  inside and beyond the training range, beside each head's in-range median.

The builders take the dictionaries of :mod:`posenc_lib.lab.results`; they compute nothing that
the lab does not own.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..lab.nope import bos_inputs, counting_head, recover_positions
from ..lab.results import summarise
from ._checks import _int
from ._style import COLORWAY, MUTED, SEQUENTIAL, _buttons, _slider, _style

__all__ = [
    "SCHEME_LABELS",
    "bos_lead_figure",
    "budget_curves",
    "lab_attention_maps",
    "lab_curves",
    "learned_table_figure",
    "learning_curves",
    "nope_counter_figure",
    "position_curves",
    "readout_figure",
    "rope_methods_curves",
    "yarn_ramp_figure",
]

SCHEME_LABELS = {
    "none": "NoPE",
    "sinusoidal": "sinusoidal",
    "learned": "learned absolute",
    "rope": "RoPE",
    "rope_abf": "RoPE-ABF (base 500 000)",
    "alibi": "ALiBi",
    "t5": "T5 bucketed bias",
    "hybrid": "RoPE + NoPE last layer",
}
METHOD_LABELS = {
    "plain": "no scaling",
    "pi": "PI",
    "ntk": "NTK-aware",
    "dynamic_ntk": "dynamic NTK",
    "yarn": "YaRN",
    "yarn_no_temp": "YaRN without its temperature",
    "pi_temp": "PI + YaRN's temperature",
    "ntk_temp": "NTK + YaRN's temperature",
    "temp": "YaRN's temperature alone",
    "yarn_paper": "YaRN, the paper's ramp in turns",
    "yarn_unrounded": "YaRN, index ramp unrounded",
}
REFERENCE_LABELS = {
    "floor": "the chain's entropy (floor)",
    "current_token": "current token only",
    "uniform": "uniform guessing, ln 16",
}
VIEWS = {
    "copy": ("copy: token accuracy", "token accuracy (second half)"),
    "copy_exact": ("copy: exact match", "sequences copied without an error"),
    "markov": ("Markov: loss", "loss on new positions (nats; at 1×: all)"),
}


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


def _view_menu(fig: go.Figure, groups: list[list[bool]], views: list[str]) -> None:
    buttons = []
    for view, visible in zip(views, groups, strict=True):
        buttons.append({"label": VIEWS[view][0], "method": "update",
                        "args": [{"visible": visible}, {"yaxis": _yaxis(view)}]})
    # Under the legend, right of the plot: the title keeps the space above the axes.
    menu = {**_buttons(buttons, 0), "x": 1.02, "xanchor": "left", "y": 0.0, "yanchor": "bottom"}
    fig.update_layout(updatemenus=[menu])


def _yaxis(view: str) -> dict:
    if view == "markov":
        return {"title": {"text": VIEWS[view][1]}, "autorange": True}
    return {"title": {"text": VIEWS[view][1]}, "range": [-0.02, 1.02]}


Series = list[tuple[str, str, dict, bool]]  # (name, legend group, stats by length, dashed)


def _curves(view_series: dict[str, Series], train_length: int, title: str,
            references: dict[str, float] | None) -> go.Figure:
    fig = go.Figure()
    views = list(view_series)
    owner: list[str] = []
    for v_index, view in enumerate(views):
        for k, (name, group, stats, dashed) in enumerate(view_series[view]):
            traces = _band_traces(stats, name, COLORWAY[k % len(COLORWAY)], group,
                                  v_index == 0, "dash" if dashed else "solid")
            for trace in traces:
                fig.add_trace(trace)
                owner.append(view)
        if view == "markov" and references:
            lengths = sorted({n for _, _, stats, _ in view_series[view] for n in stats})
            for r_index, (key, value) in enumerate(references.items()):
                fig.add_trace(go.Scatter(
                    x=[lengths[0], lengths[-1]], y=[value, value], mode="lines",
                    name=REFERENCE_LABELS.get(key, key), visible=v_index == 0,
                    line={"color": MUTED, "dash": ("dot", "dash", "longdash")[r_index % 3],
                          "width": 1.5},
                    hovertemplate=f"{REFERENCE_LABELS.get(key, key)}: {value:.3f}<extra></extra>"))
                owner.append(view)
    groups = [[o == view for o in owner] for view in views]
    if len(views) > 1:
        _view_menu(fig, groups, views)
    fig.add_vline(x=train_length, line={"color": MUTED, "width": 1, "dash": "dot"})
    lengths = sorted({n for series in view_series.values() for _, _, stats, _ in series
                      for n in stats})
    fig.update_xaxes(type="log", tickvals=lengths,
                     title={"text": f"evaluation length (tokens; trained at L = {train_length})"})
    fig.update_yaxes(**_yaxis(views[0]))
    return _style(fig, title, height=500)


def lab_curves(results: dict, *, variant: str = "bos",
               references: dict[str, float] | None = None) -> go.Figure:
    """Each encoding's metric against evaluation length: mean over seeds, band min…max.

    Parameters
    ----------
    results : dict
        :func:`posenc_lib.lab.results.load_results`.
    variant : str
        The grid variant (``"bos"``, ``"no_bos"``).
    references : dict, optional
        ``{name: loss}`` drawn as horizontal lines on the Markov view
        (:func:`posenc_lib.lab.results.markov_references`).

    Returns
    -------
    plotly.graph_objects.Figure
        A dropdown switches between copy accuracy, copy exact match and Markov loss. A dashed
        line marks a scheme with a seed that failed the in-range fit gate.
    """
    results = _check_results(results)
    schemes = results["settings"]["schemes"]
    series: dict[str, Series] = {}
    for view in VIEWS:
        task = "copy" if view.startswith("copy") else "markov"
        if task not in results["settings"]["tasks"]:
            continue
        summary = summarise(results, task, variant=variant,
                            key="exact" if view == "copy_exact" else "metrics")
        rows: Series = []
        for s in schemes:
            if s not in summary:
                continue
            first = summary[s][min(summary[s])]
            unfit = first["fitted"] < first["n"]
            label = SCHEME_LABELS[s] + (" (did not fit)" if unfit else "")
            rows.append((label, s, summary[s], unfit))
        series[view] = rows
    bos = "with a BOS token" if variant != "no_bos" else "without a BOS token"
    return _curves(series, results["settings"]["train_length"],
                   f"Beyond the training length, {bos}: mean and seed range", references)


def rope_methods_curves(results: dict, task: str, *, methods: tuple[str, ...] = (
        "plain", "pi", "ntk", "dynamic_ntk", "yarn"), variant: str = "bos") -> go.Figure:
    """RoPE (solid) and RoPE-ABF (dashed), each with scaling methods applied at inference (no
    fine-tuning); mean over seeds, band min…max; one task."""
    results = _check_results(results)
    if task not in results["settings"]["tasks"]:
        raise ValueError(f"task must be one of {results['settings']['tasks']}, got {task!r}")
    rows: Series = []
    for scheme in ("rope", "rope_abf"):
        for method in methods:
            stats = summarise(results, task, method, variant=variant).get(scheme)
            if stats:
                short = "RoPE-ABF" if scheme == "rope_abf" else "RoPE"
                rows.append((f"{short}, {METHOD_LABELS[method]}", f"{scheme}/{method}", stats,
                             scheme == "rope_abf"))
    view = "copy" if task == "copy" else "markov"
    return _curves({view: rows}, results["settings"]["train_length"],
                   f"RoPE and RoPE-ABF stretched at inference ({task})", None)


def learning_curves(results: dict, task: str, *, variant: str = "bos") -> go.Figure:
    """The in-range validation metric during training, one line per encoding and seed."""
    results = _check_results(results)
    if task not in results["settings"]["tasks"]:
        raise ValueError(f"task must be one of {results['settings']['tasks']}, got {task!r}")
    fig = go.Figure()
    seen: set[str] = set()
    for k, scheme in enumerate(results["settings"]["schemes"]):
        for run in results["runs"]:
            if (run["variant"], run["task"], run["scheme"]) != (variant, task, scheme):
                continue
            steps = [row[0] for row in run["curve"]]
            values = [round(row[2], 4) for row in run["curve"]]
            fig.add_trace(go.Scatter(
                x=steps, y=values, mode="lines", name=SCHEME_LABELS[scheme],
                legendgroup=scheme, showlegend=scheme not in seen,
                line={"color": COLORWAY[k % len(COLORWAY)], "width": 1.5},
                hovertemplate=(f"{SCHEME_LABELS[scheme]}, seed {run['seed']}<br>"
                               "step %{x}: %{y:.3f}<extra></extra>")))
            seen.add(scheme)
    ylabel = "in-range token accuracy" if task == "copy" else "in-range loss (nats)"
    fig.update_xaxes(title={"text": "training step"})
    fig.update_yaxes(title={"text": ylabel})
    return _style(fig, f"Learning curves ({task}, validation batch at L)", height=420)


def budget_curves(curves: dict[str, list[list[float]]], *, gate: float,
                  references: dict[str, float] | None = None, offset: float = 0.0,
                  final: dict[str, float] | None = None,
                  ylabel: str = "in-range loss (nats)") -> go.Figure:
    """In-range validation loss against training step, one line per run, with the fit gate.

    Parameters
    ----------
    curves : dict
        ``{label: curve}``, each curve the rows ``[step, training loss, validation metric]`` of a
        run record (``record["curve"]``); a label containing "3×" is drawn dashed.
    gate : float
        The fit gate, in the plotted units (after ``offset``), drawn as a horizontal line.
    references : dict, optional
        Extra horizontal lines ``{name: value}`` in the plotted units (e.g. the chain's floor).
    offset : float
        Subtracted from every validation value before plotting (e.g. the chain's own loss on the
        validation batch, so that the curves show the excess over it); default 0.
    final : dict, optional
        ``{label: value}`` in the plotted units, drawn as one open marker at the curve's last step
        (e.g. the excess on the evaluation batch, where the gate is applied).
    ylabel : str
        Title of the y-axis.
    """
    if not isinstance(curves, dict) or not curves:
        raise ValueError("curves must be a non-empty dict {label: curve rows}")
    for name, value in (("gate", gate), ("offset", offset)):
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or not math.isfinite(value)):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    if final is not None and not set(final) <= set(curves):
        raise ValueError(f"final must be keyed by labels of curves, got {sorted(final)}")
    fig = go.Figure()
    last = max(row[0] for curve in curves.values() for row in curve)
    for k, (label, curve) in enumerate(curves.items()):
        color = COLORWAY[k % len(COLORWAY)]
        fig.add_trace(go.Scatter(
            x=[row[0] for row in curve], y=[round(row[2] - offset, 4) for row in curve],
            mode="lines+markers", name=label,
            line={"color": color, "width": 2, "dash": "dash" if "3×" in label else "solid"},
            hovertemplate=f"{label}<br>step %{{x}}: %{{y:.3f}}<extra></extra>"))
        if final is not None and label in final:
            fig.add_trace(go.Scatter(
                x=[curve[-1][0]], y=[round(final[label], 4)], mode="markers",
                name=f"{label}: evaluation batch", showlegend=False,
                marker={"color": color, "size": 11, "symbol": "diamond-open",
                        "line": {"width": 2}},
                hovertemplate=f"{label}, evaluation batch: %{{y:.3f}}<extra></extra>"))
    lines = {"fit gate": gate, **(references or {})}
    for r_index, (name, value) in enumerate(lines.items()):
        fig.add_trace(go.Scatter(
            x=[0, last], y=[value, value], mode="lines", name=REFERENCE_LABELS.get(name, name),
            line={"color": MUTED, "dash": ("solid", "dot", "dash")[r_index % 3], "width": 1.5},
            hovertemplate=f"{REFERENCE_LABELS.get(name, name)}: {value:.3f}<extra></extra>"))
    fig.update_xaxes(title={"text": "training step"})
    fig.update_yaxes(title={"text": ylabel})
    return _style(fig, "NoPE on the Markov chain: in-range loss while training", height=440)


def yarn_ramp_figure(dims: tuple[int, ...], base: float, factor: float,
                     train_length: int) -> go.Figure:
    """θ'_i/θ_i per pair under YaRN's two ramps, one view per head size (buttons).

    The reference code's ramp (:func:`posenc_lib.scaling.yarn_inv_freq`, as in transformers) is
    linear in the pair index with its ends rounded to whole indices and its low end clamped at
    pair 0; the same ramp unrounded (``truncate=False``) is drawn dotted; the paper's
    (:func:`posenc_lib.scaling.yarn_paper_inv_freq`) is linear in each pair's turn count within
    ``train_length``. PI (every pair at ``1/s``) is drawn for reference.
    """
    from ..rope import rope_inv_freq
    from ..scaling import yarn_inv_freq, yarn_paper_inv_freq

    if not dims:
        raise ValueError("dims must name at least one head size")
    fig = go.Figure()
    owner: list[int] = []
    for d_index, dim in enumerate(dims):
        theta = rope_inv_freq(dim, base)
        ratios = {
            "reference code / transformers (rounded index ramp)":
                yarn_inv_freq(dim, base, factor, train_length)[0] / theta,
            "the same index ramp, unrounded":
                yarn_inv_freq(dim, base, factor, train_length, truncate=False)[0] / theta,
            "paper (continuous ramp in turns)":
                yarn_paper_inv_freq(dim, base, factor, train_length)[0] / theta,
        }
        turns = (train_length * theta / (2 * np.pi)).numpy()
        for k, (name, ratio) in enumerate(ratios.items()):
            fig.add_trace(go.Scatter(
                x=list(range(dim // 2)), y=ratio.numpy().round(4).tolist(), customdata=turns,
                mode="lines+markers", name=name, visible=d_index == 0,
                line={"color": COLORWAY[k], "width": 2, "dash": ("solid", "dot", "dash")[k]},
                hovertemplate=("pair %{x}: θ'/θ = %{y:.3f}<br>%{customdata:.2f} turns in "
                               f"L = {train_length}<extra>{name}</extra>")))
            owner.append(d_index)
        fig.add_trace(go.Scatter(
            x=[0, dim // 2 - 1], y=[1 / factor, 1 / factor], mode="lines", name="PI: 1/s",
            visible=d_index == 0, line={"color": MUTED, "dash": "dot", "width": 1.5},
            hoverinfo="skip"))
        owner.append(d_index)
    if len(dims) > 1:
        buttons = [{"label": f"head size {dim}", "method": "update",
                    "args": [{"visible": [o == i for o in owner]}]}
                   for i, dim in enumerate(dims)]
        fig.update_layout(updatemenus=[{**_buttons(buttons, 0), "x": 0.0, "xanchor": "left",
                                        "y": 1.0, "yanchor": "bottom"}])
    fig.update_xaxes(title={"text": "pair i (fast → slow)"})
    fig.update_yaxes(title={"text": "θ'ᵢ / θᵢ"}, range=[0, 1.05])
    return _style(fig, f"YaRN's two ramps at s = {factor:.2f}, L = {train_length}", height=440)


def position_curves(curves: dict[str, tuple[np.ndarray, np.ndarray]], *, train_length: int,
                    ylabel: str, title: str, references: dict[str, float] | None = None,
                    xlabel: str = "position m (log scale)") -> go.Figure:
    """Metric against position on a log axis, one line per entry of ``curves``.

    Parameters
    ----------
    curves
        ``{name: (positions, values)}`` (e.g. from :func:`posenc_lib.lab.results.log_binned`).
    train_length
        Where the dotted vertical line is drawn, in the units of the positions.
    ylabel, title
        The y-axis title and the figure title.
    references
        ``{name: value}``: horizontal reference lines.
    xlabel
        The x-axis title (name what the positions count: keys seen, chain tokens, …).
    """
    if not isinstance(curves, dict) or not curves:
        raise TypeError("curves must be a non-empty dict {name: (positions, values)}")
    if not isinstance(xlabel, str) or not xlabel:
        raise TypeError(f"xlabel must be a non-empty string, got {xlabel!r}")
    train_length = _int(train_length, "train_length", 1)
    fig = go.Figure()
    for k, (name, (x, y)) in enumerate(curves.items()):
        fig.add_trace(go.Scatter(
            x=np.asarray(x, dtype=float).round(1).tolist(),
            y=np.asarray(y, dtype=float).round(4).tolist(), mode="lines+markers", name=name,
            line={"color": COLORWAY[k % len(COLORWAY)], "width": 2},
            hovertemplate=f"{name}<br>%{{x}}: %{{y:.3f}}<extra></extra>"))
    for r_index, (key, value) in enumerate((references or {}).items()):
        fig.add_hline(y=value, line={"color": MUTED, "width": 1.2,
                                     "dash": ("dot", "dash", "longdash")[r_index % 3]},
                      annotation_text=REFERENCE_LABELS.get(key, key),
                      annotation_position="bottom right", annotation_font_color=MUTED)
    fig.add_vline(x=train_length, line={"color": MUTED, "width": 1, "dash": "dot"})
    fig.update_xaxes(type="log", title={"text": xlabel})
    fig.update_yaxes(title={"text": ylabel})
    return _style(fig, title, height=460)


def lab_attention_maps(artifacts: dict[str, np.ndarray], task: str = "copy",
                       schemes: tuple[str, ...] = tuple(SCHEME_LABELS),
                       train_length: int = 32, *, layers: tuple[int, ...] | None = None,
                       multiples: tuple[int, ...] = (1, 4)) -> go.Figure:
    """Head-averaged attention of the saved layers, one seed-0 model at a time.

    A slider steps through encoding × length (``multiples`` of the training length, saved for
    1 and 4); position 0 is the BOS token. ``layers`` picks the layers shown by index (0: the
    first block; default all saved): one layer at one length keeps the figure small.
    """
    if task not in ("copy", "markov"):
        raise ValueError(f"task must be 'copy' or 'markov', got {task!r}")
    train_length = _int(train_length, "train_length", 2)
    if not multiples or any(m not in (1, 4) for m in multiples):
        raise ValueError(
            f"multiples must be taken from (1, 4), the saved lengths, got {multiples!r}")
    combos = []
    for scheme in schemes:
        for multiple in multiples:
            keys: list[str] = []
            while f"attn/{task}/{scheme}/{multiple}x/layer{len(keys)}" in artifacts:
                keys.append(f"attn/{task}/{scheme}/{multiple}x/layer{len(keys)}")
            if layers is not None:
                if not layers or any(not 0 <= k < len(keys) for k in layers):
                    raise ValueError(
                        f"layers must be indices in [0, {len(keys) - 1}], got {layers!r}")
                keys = [keys[k] for k in layers]
            if keys:
                combos.append((scheme, multiple, [artifacts[k] for k in keys]))
    if not combos:
        raise ValueError(f"no attention maps for task {task!r} in the artifacts")
    n_layers = len(combos[0][2])
    shown = list(range(n_layers)) if layers is None else list(layers)
    fig = make_subplots(rows=1, cols=n_layers, horizontal_spacing=0.08,
                        subplot_titles=[f"layer {i + 1}" for i in shown])
    for c_index, (_, _, maps) in enumerate(combos):
        for layer, grid in enumerate(maps):
            n = grid.shape[0]
            ticks = np.arange(n)
            blank = np.array(None, dtype=object)  # JSON null: the masked upper triangle
            lower = np.where(np.tril(np.ones((n, n), dtype=bool)), np.round(grid, 2), blank)
            fig.add_trace(go.Heatmap(
                z=lower.tolist(), x=ticks, y=ticks, colorscale=SEQUENTIAL, zmin=0, zmax=0.5,
                showscale=layer == n_layers - 1, visible=c_index == 0,
                # the scale stops at 0.5 (weights above it share its colour): the bar says so
                colorbar={"title": {"text": "weight"}, "len": 0.9,
                          "tickvals": [0, 0.1, 0.2, 0.3, 0.4, 0.5],
                          "ticktext": ["0", "0.1", "0.2", "0.3", "0.4", "≥ 0.5"]},
                hovertemplate="query %{y}, key %{x}: %{z:.3f}<extra></extra>",
            ), row=1, col=layer + 1)
    steps = []
    for c_index, (scheme, multiple, _) in enumerate(combos):
        visible = [False] * (n_layers * len(combos))
        visible[n_layers * c_index: n_layers * (c_index + 1)] = [True] * n_layers
        steps.append({"label": f"{SCHEME_LABELS[scheme]}, {multiple}×L", "method": "update",
                      "args": [{"visible": visible}]})
    fig.update_layout(sliders=[_slider(steps, 0, "model and length: ", y=-0.12)])
    for col in range(1, n_layers + 1):
        fig.update_xaxes(title={"text": "key"}, row=1, col=col)
        fig.update_yaxes(title={"text": "query" if col == 1 else ""}, autorange="reversed",
                         row=1, col=col)
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
        Rows ``>= train_length`` were never used in training (``L + 1`` with a BOS token).
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
    return _style(fig, f"The learned table: rows {train_length} and beyond never moved",
                  height=460)


def nope_counter_figure(seq_len: int = 48, max_position: int = 32) -> go.Figure:
    """The hand-built NoPE layer: the head's output ``1/m`` and the recovered position, with and
    without the causal mask (the inverse map is exact up to ``max_position``)."""
    seq_len = _int(seq_len, "seq_len", 2, 4096)
    max_position = _int(max_position, "max_position", 2, 4096)
    m = list(range(1, seq_len + 1))
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                        subplot_titles=("attention output at position m",
                                        "position read back by the feed-forward map"))
    for causal, colour, label in ((True, COLORWAY[0], "causal mask"),
                                  (False, COLORWAY[5], "no mask")):
        u = counting_head(bos_inputs(seq_len), causal=causal)
        rec = recover_positions(seq_len, max_position, causal=causal)
        fig.add_trace(go.Scatter(x=m, y=u.tolist(), mode="lines+markers", name=label,
                                 line={"color": colour}, legendgroup=label,
                                 hovertemplate="m = %{x}: %{y:.4f}<extra>" + label + "</extra>"),
                      row=1, col=1)
        fig.add_trace(go.Scatter(x=m, y=rec.tolist(), mode="lines+markers", name=label,
                                 line={"color": colour}, legendgroup=label, showlegend=False,
                                 hovertemplate="m = %{x}: read %{y:.3f}<extra>" + label
                                 + "</extra>"), row=1, col=2)
    fig.add_trace(go.Scatter(x=m, y=m, mode="lines", name="the true position",
                             line={"color": MUTED, "dash": "dot"}), row=1, col=2)
    fig.add_vline(x=max_position, line={"color": MUTED, "dash": "dot"}, row=1, col=2)
    fig.update_xaxes(title={"text": "position m (1-based)"})
    fig.update_yaxes(title={"text": "head output"}, row=1, col=1)
    fig.update_yaxes(title={"text": "recovered position"}, row=1, col=2)
    return _style(fig, "A NoPE layer reads absolute position off the causal mask", height=420)



def readout_figure(positions: np.ndarray, trained: np.ndarray, hand_built: np.ndarray, *,
                   train_length: int) -> go.Figure:
    """The trained NoPE model's position readout beside the hand-built map and the identity.

    Parameters
    ----------
    positions : np.ndarray, shape (n,)
        The positions read (1-based, increasing), e.g. ``1 … 4L``.
    trained : np.ndarray, shape (n,)
        What a linear probe fitted inside the training range reads at each of ``positions``
        (:func:`posenc_lib.lab.probe.probe_readout`, indexed by position).
    hand_built : np.ndarray, shape (n,)
        What the hand-built inverse map of :mod:`posenc_lib.lab.nope` reads at the same positions
        (:func:`posenc_lib.lab.nope.recover_positions`, built for ``train_length`` knots).
    train_length : int
        The training length ``L``, drawn as a dotted vertical line.

    Returns
    -------
    go.Figure
        Three line traces, in order: trained readout, hand-built map, the true position.
    """
    x = np.asarray(positions, dtype=float)
    if x.ndim != 1 or x.size < 2:
        raise ValueError(f"positions must be a 1-D array of at least 2 values, got shape {x.shape}")
    series = {}
    for name, values in (("trained", trained), ("hand_built", hand_built)):
        y = np.asarray(values, dtype=float)
        if y.shape != x.shape:
            raise ValueError(f"{name} must have the shape of positions {x.shape}, got {y.shape}")
        if not np.isfinite(y).all():
            raise ValueError(f"{name} must be finite")
        series[name] = y
    train_length = _int(train_length, "train_length", 1)
    fig = go.Figure()
    for (name, y), colour in zip(
            (("trained NoPE model, linear probe (fit on 0 … L)", series["trained"]),
             (f"hand-built map, {train_length} knots", series["hand_built"])),
            (COLORWAY[0], COLORWAY[1]), strict=True):
        fig.add_trace(go.Scatter(
            x=x.tolist(), y=y.round(3).tolist(), mode="lines", name=name,
            line={"color": colour, "width": 2},
            hovertemplate=f"{name}<br>position %{{x:.0f}} reads %{{y:.2f}}<extra></extra>"))
    fig.add_trace(go.Scatter(x=x.tolist(), y=x.tolist(), mode="lines", name="the true position",
                             line={"color": MUTED, "dash": "dot"}, hoverinfo="skip"))
    fig.add_vline(x=train_length, line={"color": MUTED, "width": 1, "dash": "dot"})
    fig.update_xaxes(title={"text": "position m"})
    fig.update_yaxes(title={"text": "position read back"})
    return _style(fig, "The trained position code saturates beyond L, as the hand-built map does",
                  height=420)


def bos_lead_figure(keys: np.ndarray, lead: np.ndarray, in_range: np.ndarray, *,
                    train_keys: int) -> go.Figure:
    """Each first-layer head's BOS lead ``c`` against the keys seen, on a log axis.

    Parameters
    ----------
    keys : np.ndarray, shape (n,)
        Key counts ``m`` (increasing, at least 2), e.g. ``2 … 8L + 1``.
    lead : np.ndarray, shape (heads, n)
        The lead ``c = w (m - 1)/(1 - w)`` of each head at each of ``keys``
        (:func:`posenc_lib.lab.results.bos_lead`).
    in_range : np.ndarray, shape (heads,)
        Each head's median lead over the trained key counts, drawn as a dashed level.
    train_keys : int
        The largest key count seen in training (``L + 1`` with BOS), a dotted vertical line.

    Returns
    -------
    go.Figure
        Per head, in head order: the lead (solid) and its in-range median (dashed).
    """
    x = np.asarray(keys, dtype=float)
    if x.ndim != 1 or x.size < 2 or x.min() < 2 or np.any(np.diff(x) <= 0):
        raise ValueError("keys must be a 1-D increasing array of key counts >= 2, "
                         f"got shape {x.shape}")
    c = np.asarray(lead, dtype=float)
    if c.ndim != 2 or c.shape[1] != x.size:
        raise ValueError(f"lead must have shape (heads, {x.size}), got {c.shape}")
    level = np.asarray(in_range, dtype=float)
    if level.shape != (c.shape[0],):
        raise ValueError(f"in_range must have shape ({c.shape[0]},), got {level.shape}")
    if not (np.isfinite(c).all() and np.isfinite(level).all()):
        raise ValueError("lead and in_range must be finite")
    train_keys = _int(train_keys, "train_keys", 2)
    fig = go.Figure()
    for head, (row, median) in enumerate(zip(c, level, strict=True)):
        colour = COLORWAY[head % len(COLORWAY)]
        fig.add_trace(go.Scatter(
            x=x.tolist(), y=row.round(4).tolist(), mode="lines", name=f"head {head}",
            legendgroup=str(head), line={"color": colour, "width": 2},
            hovertemplate=f"head {head}<br>m = %{{x:.0f}} keys: c = %{{y:.3f}}<extra></extra>"))
        fig.add_trace(go.Scatter(
            x=[x[0], x[-1]], y=[round(float(median), 4)] * 2, mode="lines",
            name=f"head {head}, in-range median", legendgroup=str(head), showlegend=False,
            line={"color": colour, "width": 1, "dash": "dash"}, hoverinfo="skip"))
    fig.add_vline(x=train_keys, line={"color": MUTED, "width": 1, "dash": "dot"})
    fig.update_xaxes(title={"text": "keys seen, m (log scale)"}, type="log")
    fig.update_yaxes(title={"text": "BOS lead c"}, rangemode="tozero")
    return _style(fig, "The first layer's code holds its constant beyond the trained lengths",
                  height=420)
