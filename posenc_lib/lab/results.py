"""Read the committed lab results: summaries over seeds, and the saved seed-0 artifacts.

The book never trains: chapter 9 reads ``lab_results.json`` and ``lab_artifacts.npz``, written by
``make lab`` (:func:`posenc_lib.lab.run.run_lab`). Both ship inside the package
(``posenc_lib/lab/data``, package data), so a plain ``pip install`` (Colab, Binder) finds them.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import numpy as np
import torch

from .._validation import check_choice
from . import tasks
from .model import TinyDecoder
from .run import ARTIFACTS_NAME, RESULTS_NAME
from .train import LabSettings, build_model

__all__ = [
    "DATA_DIR",
    "check_current",
    "copy_partner_weight",
    "learned_table",
    "load_artifacts",
    "load_nope_model",
    "load_results",
    "reference_loss",
    "summarise",
]

DATA_DIR = Path(__file__).parent / "data"


def load_results(path: str | Path | None = None) -> dict:
    """The results JSON (default: the committed ``lab_results.json`` in :data:`DATA_DIR`)."""
    path = DATA_DIR / RESULTS_NAME if path is None else Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no lab results at {path}: run `make lab` to produce them")
    return json.loads(path.read_text())


def check_current(results: dict, settings: LabSettings | None = None) -> None:
    """Raise ``ValueError`` unless ``results`` were produced by ``settings`` (default: current)
    and hold exactly one run per configuration of the grid."""
    settings = LabSettings() if settings is None else settings
    if results.get("settings_digest") != settings.digest():
        raise ValueError(
            f"results were produced with settings {results.get('settings_digest')}, the current "
            f"settings are {settings.digest()}: run `make lab` again"
        )
    have = sorted((r["task"], r["scheme"], r["seed"]) for r in results["runs"])
    want = sorted((t, s, seed) for t in settings.tasks for s in settings.schemes
                  for seed in settings.seeds)
    if have != want:
        raise ValueError("results do not hold exactly one run per (task, scheme, seed)")


def summarise(results: dict, task: str, method: str = "plain") -> dict[str, dict[int, dict]]:
    """Mean and spread over seeds: ``{scheme: {length: {mean, std, min, max, n}}}``.

    ``method`` picks a RoPE scaling method (other schemes only have ``"plain"`` and are left out
    for any other method).
    """
    task = check_choice(task, "task", tuple(results["settings"]["tasks"]))
    method = check_choice(method, "method", tuple(results["settings"]["rope_methods"]))
    values: dict[str, dict[int, list[float]]] = {}
    for run in results["runs"]:
        if run["task"] != task or method not in run["metrics"]:
            continue
        for length, value in run["metrics"][method].items():
            values.setdefault(run["scheme"], {}).setdefault(int(length), []).append(value)
    return {
        scheme: {
            length: {
                "mean": statistics.fmean(v),
                "std": statistics.stdev(v) if len(v) > 1 else 0.0,
                "min": min(v),
                "max": max(v),
                "n": len(v),
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


def learned_table(artifacts: dict[str, np.ndarray], task: str) -> np.ndarray:
    """The trained learned-absolute table of the seed-0 model, ``(max_len, d_model)``."""
    key = f"table/{task}"
    if key not in artifacts:
        raise KeyError(f"no learned table for task {task!r} in the artifacts")
    return artifacts[key]


def load_nope_model(artifacts: dict[str, np.ndarray], settings: LabSettings | None = None
                    ) -> TinyDecoder:
    """The trained seed-0 NoPE model of the Markov task (weights stored in float16)."""
    settings = LabSettings() if settings is None else settings
    model = build_model(settings, "markov", "none", settings.seeds[0])
    prefix = "nope_markov/"
    state = {k[len(prefix):]: torch.from_numpy(v) for k, v in artifacts.items()
             if k.startswith(prefix)}
    model.load_state_dict(state)
    model.eval()
    return model


def reference_loss(settings: LabSettings | None = None) -> dict[int, float]:
    """The Markov chain's own cross-entropy (nats) on the scored positions of each evaluation
    batch: the floor no model can beat on average, ``{length: loss}``."""
    from .train import eval_batch, task_for

    settings = LabSettings() if settings is None else settings
    task = task_for(settings, "markov")
    assert isinstance(task, tasks.MarkovTask)
    out = {}
    for length in settings.eval_lengths:
        inputs, targets, scored = eval_batch(settings, task, length)
        out[length] = float(task.true_loss(inputs, targets)[:, scored].mean())
    return out


def copy_partner_weight(artifacts: dict[str, np.ndarray], scheme: str, multiple: int,
                        layer: int = 1) -> float:
    """Mean attention weight (over heads and second-half queries) on the token to copy.

    In the saved copy-task maps, the query at position ``p >= m`` must read the key at
    ``p − m``. For the 2×2-pooled maps (4× and beyond) the cell holding that key also holds one
    neighbouring key, so the value is then an upper bound (the partner plus one neighbour).
    """
    key = f"attn/copy/{scheme}/{multiple}x/layer{layer}"
    if key not in artifacts:
        raise KeyError(f"no attention map {key!r} in the artifacts")
    grid = artifacts[key]
    n = grid.shape[0]
    rows = np.arange(n // 2, n)
    pooled = 2.0 if multiple >= 4 else 1.0
    return float(pooled * grid[rows, rows - n // 2].mean())
