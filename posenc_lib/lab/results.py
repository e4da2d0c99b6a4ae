"""Read the committed lab results: summaries over seeds, and the saved seed-0 artifacts.

The book never trains: chapter 9 reads ``posenc_lib/lab/data/lab_results.json`` and
``posenc_lib/lab/data/lab_artifacts.npz`` (package data), written by ``make lab``
(:func:`posenc_lib.lab.run.run_lab`).
"""

from __future__ import annotations

import itertools
import json
import math
import statistics
from pathlib import Path

import numpy as np
import torch

from .._validation import check_choice, check_int, check_positive_int, check_real, check_seed
from . import tasks
from .model import TinyDecoder
from .run import ARTIFACTS_NAME, RESULTS_NAME, jobs
from .train import VARIANTS, LabSettings, build_model

__all__ = [
    "DATA_DIR",
    "accuracy_standard_error_bound",
    "attention_entropy",
    "attention_entropy_by_query",
    "bos_attention",
    "bos_lead",
    "check_current",
    "copy_partner_weight",
    "current_token_batch_loss",
    "distance_profile",
    "jensen_shannon_distance",
    "learned_table",
    "load_artifacts",
    "load_nope_model",
    "load_results",
    "log_binned",
    "markov_references",
    "per_position",
    "per_position_reference",
    "reference_loss",
    "reference_loss_spread",
    "runs",
    "summarise",
    "validation_reference_loss",
]

DATA_DIR = Path(__file__).parent / "data"


def load_results(path: str | Path | None = None) -> dict:
    """The results JSON (default ``posenc_lib/lab/data/lab_results.json``)."""
    path = DATA_DIR / RESULTS_NAME if path is None else Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no lab results at {path}: run `make lab` to produce them")
    return json.loads(path.read_text())


def check_current(results: dict, settings: LabSettings | None = None) -> None:
    """Raise ``ValueError`` unless ``results`` were produced by ``settings`` (default: current)
    and hold exactly one run per job of the grid (:func:`posenc_lib.lab.run.jobs`)."""
    settings = LabSettings() if settings is None else settings
    if results.get("settings_digest") != settings.digest():
        raise ValueError(
            f"results were produced with settings {results.get('settings_digest')}, the current "
            f"settings are {settings.digest()}: run `make lab` again"
        )
    have = sorted((r["variant"], r["task"], r["scheme"], r["seed"]) for r in results["runs"])
    if have != sorted(jobs(settings)):
        raise ValueError("results do not hold exactly one run per (variant, task, scheme, seed)")


def runs(results: dict, *, variant: str = "bos", task: str | None = None,
         scheme: str | None = None) -> list[dict]:
    """The run records of one variant (optionally one task and scheme), in grid order."""
    variant = check_choice(variant, "variant", VARIANTS)
    return [r for r in results["runs"] if r["variant"] == variant
            and (task is None or r["task"] == task) and (scheme is None or r["scheme"] == scheme)]


def summarise(results: dict, task: str, method: str = "plain", *, variant: str = "bos",
              key: str = "metrics") -> dict[str, dict[int, dict]]:
    """Mean and spread over seeds: ``{scheme: {length: {mean, std, min, max, n, fitted}}}``.

    ``method`` picks a RoPE scaling method (other schemes only have ``"plain"`` and are left out
    for any other method); ``key`` is ``"metrics"`` or ``"exact"`` (copy's exact match).
    ``fitted`` counts the seeds that passed the in-range fit gate.
    """
    task = check_choice(task, "task", tuple(results["settings"]["tasks"]))
    method = check_choice(method, "method", tuple(results["settings"]["rope_methods"]))
    key = check_choice(key, "key", ("metrics", "exact"))
    values: dict[str, dict[int, list[float]]] = {}
    fits: dict[str, int] = {}
    for run in runs(results, variant=variant, task=task):
        if method not in run[key]:
            continue
        fits[run["scheme"]] = fits.get(run["scheme"], 0) + int(run["fitted"])
        for length, value in run[key][method].items():
            values.setdefault(run["scheme"], {}).setdefault(int(length), []).append(value)
    return {
        scheme: {
            length: {
                "mean": statistics.fmean(v),
                "std": statistics.stdev(v) if len(v) > 1 else 0.0,
                "min": min(v),
                "max": max(v),
                "n": len(v),
                "fitted": fits[scheme],
            }
            for length, v in sorted(by_length.items())
        }
        for scheme, by_length in values.items()
    }


def load_artifacts(path: str | Path | None = None) -> dict[str, np.ndarray]:
    """The saved arrays (attention maps, learned tables, NoPE weights), as float32."""
    path = DATA_DIR / ARTIFACTS_NAME if path is None else Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no lab artifacts at {path}: run `make lab` to produce them")
    with np.load(path) as data:
        return {key: data[key].astype(np.float32) for key in data.files}


def per_position(artifacts: dict[str, np.ndarray], task: str, scheme: str, length: int, *,
                 variant: str = "bos", kind: str = "loss") -> np.ndarray:
    """Per-position loss or accuracy of every saved seed at ``length`` tokens,
    ``(seeds, positions)`` (positions include the BOS token of BOS variants)."""
    kind = check_choice(kind, "kind", ("loss", "accuracy"))
    prefix = f"pos/{variant}/{task}/{scheme}/"
    rows = [value for key, value in sorted(artifacts.items())
            if key.startswith(prefix) and key.endswith(f"/{length}/{kind}")]
    if not rows:
        raise KeyError(f"no per-position {kind} for {prefix}*/{length} in the artifacts")
    return np.stack(rows)


def log_binned(values: np.ndarray, start: int = 1, per_octave: int = 2
               ) -> tuple[np.ndarray, np.ndarray]:
    """Average a per-position curve over bins of equal width on a log axis.

    Parameters
    ----------
    values : numpy.ndarray
        ``(positions,)``, or ``(seeds, positions)`` (averaged over seeds first).
    start : int
        First position used (e.g. 1 to skip a BOS token's prediction).
    per_octave : int
        Bins per doubling of the position.

    Returns
    -------
    tuple
        ``(centres, means)``: the mean position and the mean value of each bin, float64.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 2:
        values = values.mean(0)
    if values.ndim != 1:
        raise ValueError("values must be (positions,) or (seeds, positions)")
    n = values.shape[0]
    if not isinstance(start, int) or not 1 <= start < n:
        raise ValueError(f"start must be an integer in [1, {n - 1}], got {start!r}")
    if not isinstance(per_octave, int) or per_octave < 1:
        raise ValueError(f"per_octave must be a positive integer, got {per_octave!r}")
    k_max = math.ceil(math.log2(n / start) * per_octave)
    edges = np.unique(np.round(start * 2.0 ** (np.arange(k_max + 2) / per_octave)).astype(int))
    edges = edges[edges <= n]
    if edges[-1] < n:
        edges = np.append(edges, n)
    positions = np.arange(n, dtype=np.float64)
    bins = list(itertools.pairwise(edges))
    centres = np.array([positions[a:b].mean() for a, b in bins])
    means = np.array([values[a:b].mean() for a, b in bins])
    return centres, means


def learned_table(artifacts: dict[str, np.ndarray], task: str, variant: str = "bos"
                  ) -> np.ndarray:
    """The trained learned-absolute table of the seed-0 model, ``(max_len, d_model)``."""
    key = f"table/{variant}/{task}"
    if key not in artifacts:
        raise KeyError(f"no learned table for task {task!r} in the artifacts")
    return artifacts[key]


def load_nope_model(artifacts: dict[str, np.ndarray], settings: LabSettings | None = None,
                    variant: str = "bos") -> TinyDecoder:
    """The trained seed-0 NoPE model of the Markov task (weights stored in float16)."""
    settings = LabSettings() if settings is None else settings
    model = build_model(settings, "markov", "none", settings.seeds[0], variant)
    prefix = f"nope_markov/{variant}/"
    state = {k[len(prefix):]: torch.from_numpy(v) for k, v in artifacts.items()
             if k.startswith(prefix)}
    model.load_state_dict(state)
    model.eval()
    return model


def markov_references(settings: LabSettings | None = None) -> dict[str, float]:
    """The chain's three reference losses (nats): ``floor`` (its entropy rate),
    ``current_token`` (the best loss from the current token alone) and ``uniform`` (``ln V``);
    :meth:`posenc_lib.lab.tasks.MarkovTask.references`."""
    from .train import task_for

    settings = LabSettings() if settings is None else settings
    task = task_for(settings, "markov")
    assert isinstance(task, tasks.MarkovTask)
    return task.references()


def reference_loss(settings: LabSettings | None = None) -> dict[int, float]:
    """The Markov chain's own cross-entropy (nats) on the scored positions of each evaluation
    batch: the floor no model can beat on average, ``{length: loss}``."""
    from .train import eval_batch, task_for

    settings = LabSettings() if settings is None else settings
    task = task_for(settings, "markov")
    assert isinstance(task, tasks.MarkovTask)
    out = {}
    for length in settings.eval_lengths:
        inputs, targets, scored = eval_batch(settings, task, length, bos=False)
        out[length] = float(task.true_loss(inputs, targets)[:, scored].mean())
    return out


def validation_reference_loss(settings: LabSettings | None = None) -> float:
    """The Markov chain's own cross-entropy (nats) on the scored positions of the fixed
    validation batch (:func:`posenc_lib.lab.train.validation_batch`), the batch the learning
    curves are measured on; :func:`reference_loss` gives the same for the evaluation batches."""
    from .train import task_for, validation_batch

    settings = LabSettings() if settings is None else settings
    task = task_for(settings, "markov")
    assert isinstance(task, tasks.MarkovTask)
    inputs, targets, scored = validation_batch(settings, task, bos=False)
    return float(task.true_loss(inputs, targets)[:, scored].mean())


def _markov_eval_batch(
    settings: LabSettings | None, length: int | None
) -> tuple[tasks.MarkovTask, tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """The Markov task and its evaluation batch without BOS at ``length`` (default the last of
    ``settings.eval_lengths``; any other value raises a ``ValueError`` naming the allowed ones)."""
    from .train import eval_batch, task_for

    settings = LabSettings() if settings is None else settings
    if length is None:
        length = settings.eval_lengths[-1]
    elif isinstance(length, bool) or length not in settings.eval_lengths:
        raise ValueError(f"length must be one of the evaluation lengths {settings.eval_lengths}, "
                         f"got {length!r}")
    task = task_for(settings, "markov")
    assert isinstance(task, tasks.MarkovTask)
    return task, eval_batch(settings, task, length, bos=False)


def current_token_batch_loss(settings: LabSettings | None = None,
                             length: int | None = None) -> tuple[float, float]:
    """The current-token predictor's loss on the scored positions of one evaluation batch.

    Parameters
    ----------
    settings : LabSettings, optional
        The lab's settings (default ``LabSettings()``).
    length : int, optional
        One of ``settings.eval_lengths`` (default the last).

    Returns
    -------
    tuple of float
        The mean loss (nats) and its standard error over the batch's sequences (the standard
        deviation of the per-sequence means over the square root of their number), for
        :meth:`posenc_lib.lab.tasks.MarkovTask.current_token_loss`.
    """
    task, (inputs, targets, scored) = _markov_eval_batch(settings, length)
    per_sequence = task.current_token_loss(inputs, targets)[:, scored].mean(1)  # (batch,)
    return (float(per_sequence.mean()),
            float(per_sequence.std() / math.sqrt(per_sequence.numel())))


def per_position_reference(settings: LabSettings | None = None,
                           length: int | None = None) -> dict[str, np.ndarray]:
    """The chain's own loss and the current-token predictor's loss at every position of one
    evaluation batch, averaged over its sequences.

    The per-position losses of the lab's Markov models (:func:`per_position`) are measured on
    these same sequences, so these are their references position by position; the constant
    references of :func:`markov_references` are stationary averages the batch need not match.

    Parameters
    ----------
    settings : LabSettings, optional
        The lab's settings (default ``LabSettings()``).
    length : int, optional
        One of ``settings.eval_lengths`` (default the last).

    Returns
    -------
    dict of numpy.ndarray
        ``{"chain": ..., "current_token": ...}``, each ``(length,)`` float64: entry ``j`` is the
        mean loss on target ``j`` of the batch without BOS (the prediction of token ``j + 2``,
        tokens counted from 1), aligned with ``per_position(..., variant="no_bos")`` and with a
        BOS variant's ``per_position(...)[:, 1:]``. ``chain[0]`` is NaN
        (:meth:`posenc_lib.lab.tasks.MarkovTask.true_loss`).
    """
    task, (inputs, targets, _) = _markov_eval_batch(settings, length)  # (batch, length) each
    return {"chain": task.true_loss(inputs, targets).mean(0).numpy(),
            "current_token": task.current_token_loss(inputs, targets).mean(0).numpy()}


def reference_loss_spread(settings: LabSettings | None = None, batches: int = 200,
                          seed: int = 0) -> np.ndarray:
    """The chain's own in-range cross-entropy on ``batches`` fresh batches (nats, one per batch).

    Each batch holds ``settings.eval_batch`` sequences of the training length, scored as the
    fit gate scores the evaluation batch; the spread of these values is how much the choice of
    one such batch moves the gate's metric. Batches are drawn from a generator seeded ``seed``.

    Parameters
    ----------
    settings : LabSettings, optional
        The lab's settings (default ``LabSettings()``).
    batches : int
        Number of fresh batches, 2 … 10 000.
    seed : int
        Seed of the generator (>= 0).

    Returns
    -------
    numpy.ndarray
        ``(batches,)`` float64.
    """
    from .train import task_for

    settings = LabSettings() if settings is None else settings
    batches = check_int(batches, "batches", minimum=2)
    if batches > 10_000:
        raise ValueError(f"batches must be an integer in 2 … 10 000, got {batches}")
    seed = check_seed(seed)
    task = task_for(settings, "markov")
    assert isinstance(task, tasks.MarkovTask)
    generator = torch.Generator().manual_seed(seed)
    out = np.empty(batches)
    for k in range(batches):
        inputs, targets, scored = task.batch(generator, settings.eval_batch,
                                             settings.train_length)
        out[k] = float(task.true_loss(inputs, targets)[:, scored].mean())
    return out


def copy_partner_weight(artifacts: dict[str, np.ndarray], scheme: str, multiple: int,
                        layer: int = 1) -> float:
    """Mean attention weight (over heads and second-half queries) on the token to copy.

    In the saved copy-task maps of ``n`` positions (BOS included), the ``m = n // 2`` scored
    queries ``p = n − m … n − 1`` must read the key at ``p − m`` (the token after the previous
    occurrence of the current token), with or without a BOS token.
    """
    key = f"attn/copy/{scheme}/{multiple}x/layer{layer}"
    if key not in artifacts:
        raise KeyError(f"no attention map {key!r} in the artifacts")
    grid = artifacts[key]
    n = grid.shape[0]
    m = n // 2
    rows = np.arange(n - m, n)
    return float(grid[rows, rows - m].mean())


@torch.no_grad()
def bos_attention(model: TinyDecoder, tokens: torch.Tensor, layer: int = 0) -> torch.Tensor:
    """Attention weight each head of block ``layer`` puts on the first token, per query.

    Parameters
    ----------
    model : TinyDecoder
        A lab model (any scheme).
    tokens : torch.Tensor
        Inputs ``(batch, seq)`` whose first token is the anchor (e.g. BOS).
    layer : int
        Block index, ``0 <= layer < n_layers`` (0: the first block).

    Returns
    -------
    torch.Tensor
        ``(heads, seq)`` float64, the mean over the batch: entry ``[h, q]`` is head ``h``'s weight
        on position 0 for the query at index ``q``, which sees ``q + 1`` keys. A head that
        attends uniformly, as the hand-built counting head of :mod:`posenc_lib.lab.nope`, gives
        ``1/(q + 1)``.
    """
    if not isinstance(model, TinyDecoder):
        raise TypeError(f"model must be a TinyDecoder, got {type(model).__name__}")
    layer = check_int(layer, "layer", minimum=0)
    if layer >= model.config.n_layers:
        raise ValueError(f"layer must be in [0, {model.config.n_layers - 1}], got {layer}")
    weights = model(tokens).attention[layer]  # (batch, heads, seq, seq)
    return weights[..., 0].mean(0).double()  # (heads, seq)


def bos_lead(weights: np.ndarray | torch.Tensor) -> np.ndarray:
    """The BOS lead ``c`` that gives each query's weight on the first key, if the others tie.

    A query that sees ``m`` keys, gives the first one the logit ``a`` and the other ``m - 1`` a
    common logit ``b``, puts the weight ``w_m = c/(c + m - 1)`` on the first key, with
    ``c = exp(a - b)``; so ``c = w_m (m - 1)/(1 - w_m)``. The hand-built counting head of
    :mod:`posenc_lib.lab.nope` (every logit equal) has ``c = 1`` at every ``m``; a head with a
    constant BOS lead has one ``c`` for all ``m``; a lead that grows with ``m`` gives a growing
    ``c``.

    Parameters
    ----------
    weights : numpy.ndarray or torch.Tensor
        ``(..., seq)`` floating-point weights on the first key, entry ``q`` for the query that sees
        ``m = q + 1`` keys (as :func:`bos_attention` returns them), ``seq >= 2``; entries
        ``q >= 1`` must lie strictly between 0 and 1 (entry 0, where ``m = 1``, is not used).

    Returns
    -------
    numpy.ndarray
        ``(..., seq - 1)`` float64, ``c`` for ``m = 2 … seq``.
    """
    w = _as_float64(weights, "weights")
    if w.ndim < 1 or w.shape[-1] < 2:
        raise ValueError(f"weights must be (..., seq) with seq >= 2, got shape {w.shape}")
    w = w[..., 1:]
    if not np.isfinite(w).all() or (w <= 0).any() or (w >= 1).any():
        raise ValueError("weights for m >= 2 keys must lie strictly between 0 and 1")
    others = np.arange(1, w.shape[-1] + 1, dtype=np.float64)  # m - 1 = 1 … seq - 1
    return w * others / (1.0 - w)


def accuracy_standard_error_bound(accuracy: float, sequences: int) -> float:
    """Upper bound on the standard error of a token accuracy from one evaluation batch.

    The lab's token accuracy is the mean, over ``sequences`` independently drawn sequences of
    equal length, of each sequence's own accuracy ``a_j`` in ``[0, 1]``. With mean ``p``,
    ``Var(a_j) <= E[a_j] − p² = p(1 − p)``, so the standard error is at most
    ``sqrt(p(1 − p)/sequences)`` (equality when every sequence is all right or all wrong).

    Parameters
    ----------
    accuracy : float
        The measured accuracy ``p``, in ``[0, 1]``.
    sequences : int
        Sequences in the batch (>= 1).

    Returns
    -------
    float
        ``sqrt(p(1 − p)/sequences)``.
    """
    accuracy = check_real(accuracy, "accuracy")
    if not 0.0 <= accuracy <= 1.0:
        raise ValueError(f"accuracy must be in [0, 1], got {accuracy}")
    sequences = check_positive_int(sequences, "sequences")
    return math.sqrt(accuracy * (1.0 - accuracy) / sequences)


def _as_float64(values: np.ndarray | torch.Tensor, name: str) -> np.ndarray:
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    if not isinstance(values, np.ndarray):
        raise TypeError(f"{name} must be a numpy array or a torch tensor, "
                        f"got {type(values).__name__}")
    if not np.issubdtype(values.dtype, np.floating):
        raise TypeError(f"{name} must hold floating-point values, got dtype {values.dtype}")
    return values.astype(np.float64)


def _check_rows(weights: np.ndarray, name: str, tolerance: float = 0.01) -> np.ndarray:
    """Renormalised rows of attention weights ``(..., n)``: non-negative, each summing to 1
    within ``tolerance`` (float16 storage rounds the sums)."""
    if not np.isfinite(weights).all() or (weights < 0).any():
        raise ValueError(f"{name} must be finite and non-negative")
    sums = weights.sum(-1, keepdims=True)
    if np.abs(sums - 1.0).max() > tolerance:
        raise ValueError(f"every row of {name} must sum to 1 (within {tolerance}), "
                         f"got sums from {sums.min():.4f} to {sums.max():.4f}")
    return weights / sums


def attention_entropy(weights: np.ndarray | torch.Tensor) -> np.ndarray:
    """Entropy (nats) of each query's attention distribution.

    Parameters
    ----------
    weights : numpy.ndarray or torch.Tensor
        Attention weights ``(..., queries, keys)``, e.g. a saved head-averaged map ``(n, n)``
        or a model's ``(batch, heads, n, n)``; every row non-negative and summing to 1 within
        0.01 (rows are renormalised first, so float16 maps can be read).

    Returns
    -------
    numpy.ndarray
        ``(..., queries)`` float64, ``-sum_k w_k ln w_k`` per row (``0 ln 0 = 0``). A query that
        spreads its weight evenly over ``m`` keys gives ``ln m``; one that puts it all on one key
        gives 0.
    """
    w = _as_float64(weights, "weights")
    if w.ndim < 2:
        raise ValueError(f"weights must be (..., queries, keys), got shape {w.shape}")
    w = _check_rows(w, "weights")
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(w > 0, w * np.log(w), 0.0)
    return -terms.sum(-1)


@torch.no_grad()
def attention_entropy_by_query(model: TinyDecoder, tokens: torch.Tensor) -> np.ndarray:
    """Each head's attention entropy per query, for every block, mean over a batch.

    Parameters
    ----------
    model : TinyDecoder
        A lab model (any scheme), evaluated as it is (no scaling).
    tokens : torch.Tensor
        Inputs ``(batch, seq)``.

    Returns
    -------
    numpy.ndarray
        ``(layers, heads, seq)`` float64: entry ``[l, h, q]`` is the entropy (nats,
        :func:`attention_entropy`) of head ``h`` of block ``l`` for the query at index ``q``,
        which sees ``q + 1`` keys, averaged over the batch. Uniform attention gives
        ``ln(q + 1)``.
    """
    if not isinstance(model, TinyDecoder):
        raise TypeError(f"model must be a TinyDecoder, got {type(model).__name__}")
    if not isinstance(tokens, torch.Tensor) or tokens.ndim != 2:
        raise ValueError("tokens must be a (batch, seq) tensor")
    maps = model(tokens).attention  # n_layers tensors (batch, heads, seq, seq)
    return np.stack([attention_entropy(w.double()).mean(0) for w in maps])


def distance_profile(grid: np.ndarray | torch.Tensor,
                     queries: np.ndarray | None = None) -> np.ndarray:
    """Mean attention mass on each query–key distance of a causal attention map.

    Parameters
    ----------
    grid : numpy.ndarray or torch.Tensor
        One map ``(n, n)`` (row: query, column: key), causal (no weight above the diagonal),
        each row summing to 1 within 0.01, e.g. a saved head-averaged lab map.
    queries : numpy.ndarray, optional
        Integer indices of the query rows to average, ``(q,)`` (default: the copy task's
        second-half queries ``n − n // 2 … n − 1``, as :func:`copy_partner_weight` reads them).

    Returns
    -------
    numpy.ndarray
        ``(n,)`` float64: entry ``d`` is the weight the chosen queries put on the key ``d``
        positions back (``d = 0``: the query itself), averaged over the queries; the entries
        sum to 1.
    """
    g = _as_float64(grid, "grid")
    if g.ndim != 2 or g.shape[0] != g.shape[1] or g.shape[0] < 2:
        raise ValueError(f"grid must be a square (n, n) map with n >= 2, got shape {g.shape}")
    n = g.shape[0]
    if np.triu(g, 1).max() > 1e-3:
        raise ValueError("grid must be causal: it puts weight on future keys")
    g = _check_rows(np.tril(g), "grid")
    if queries is None:
        queries = np.arange(n - n // 2, n)
    queries = np.asarray(queries)
    if queries.ndim != 1 or queries.size == 0 or not np.issubdtype(queries.dtype, np.integer):
        raise ValueError("queries must be a non-empty 1-D array of integer row indices")
    if queries.min() < 0 or queries.max() >= n:
        raise ValueError(f"queries must lie in [0, {n - 1}], got {queries.min()} … {queries.max()}")
    profile = np.zeros(n)
    for q in queries.tolist():
        profile[: q + 1] += g[q, q::-1]  # distance d = q − k for keys k = q … 0
    return profile / queries.size


def jensen_shannon_distance(p: np.ndarray, q: np.ndarray) -> float:
    """Jensen–Shannon distance between two discrete distributions, in ``[0, 1]``.

    Parameters
    ----------
    p, q : numpy.ndarray
        Distributions of the same shape ``(k,)``, non-negative, each summing to 1 within 0.01
        (renormalised first).

    Returns
    -------
    float
        ``sqrt(JS(p, q))`` with the divergence in bits: 0 for equal distributions, 1 for
        distributions with disjoint supports.
    """
    a, b = _as_float64(p, "p"), _as_float64(q, "q")
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"p and q must be 1-D of the same shape, got {a.shape} and {b.shape}")
    a, b = _check_rows(a, "p"), _check_rows(b, "q")
    mid = (a + b) / 2

    def kl(x: np.ndarray) -> float:
        mask = x > 0
        return float((x[mask] * np.log2(x[mask] / mid[mask])).sum())

    return math.sqrt(max(0.0, (kl(a) + kl(b)) / 2))
