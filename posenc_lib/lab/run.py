"""Run the whole lab grid in worker processes, with a progress bar, and write the results.

Writes two files into ``out_dir``:

* ``lab_results.json``: the settings and their digest, then one record per run
  (:func:`posenc_lib.lab.train.train_run`), the library version and the total wall time;
* ``lab_artifacts.npz`` (float16): per-position loss and accuracy of every run at every
  evaluation length (``pos/{variant}/{task}/{scheme}/{seed}/{length}/{loss|accuracy}``), and
  from the seed-0 models: head-averaged attention maps of the copy models at 1× and 4× the
  training length (main variant), the learned position tables, and the weights of the NoPE
  Markov models (with and without BOS).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import replace
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import torch

from .._validation import check_int
from .train import LabSettings, eval_batch, task_for, train_run, variant_options

__all__ = ["ARTIFACTS_NAME", "RESULTS_NAME", "jobs", "run_lab", "run_one"]

RESULTS_NAME = "lab_results.json"
ARTIFACTS_NAME = "lab_artifacts.npz"


def jobs(settings: LabSettings) -> list[tuple[str, str, str, int]]:
    """Every ``(variant, task, scheme, seed)`` of the grid, most informative first.

    The order: the main variant with the first seed (every scheme, both tasks); the no-BOS
    ablation of the schemes in ``ablation_seed_schemes`` (first ablation seed); the main
    variant's other seeds, one at a time, the rest of the no-BOS ablation right after the
    second seed; then the other ablation seeds, and the learned table at init std 1.
    ``settings.max_runs`` keeps a prefix of this list (see :class:`LabSettings`).
    """
    ablation = settings.ablation_seeds
    key = tuple(s for s in settings.schemes if s in settings.ablation_seed_schemes)
    rest = tuple(s for s in settings.schemes if s not in key)

    def block(variant: str, seed: int, schemes: tuple[str, ...]) -> list:
        if variant not in settings.variants:
            return []
        return [(variant, t, s, seed) for s in schemes for t in settings.tasks]

    grid = block("bos", settings.seeds[0], settings.schemes)
    if ablation:
        grid += block("no_bos", ablation[0], key)
    for k, seed in enumerate(settings.seeds[1:]):
        grid += block("bos", seed, settings.schemes)
        if k == 0 and ablation:
            grid += block("no_bos", ablation[0], rest)
    if len(settings.seeds) == 1 and ablation:
        grid += block("no_bos", ablation[0], rest)
    for seed in ablation[1:]:
        grid += block("no_bos", seed, key)
    if ablation and "learned" in settings.schemes:
        grid += block("learned_std1", ablation[0], ("learned",))
    return grid if settings.max_runs is None else grid[: settings.max_runs]


@torch.no_grad()
def attention_maps(model, settings: LabSettings, task_name: str,
                   bos: bool = True) -> dict[str, np.ndarray]:
    """Head-averaged attention of each layer on the first evaluation sequence, at 1× and 4× L
    (or the largest evaluation multiple if smaller)."""
    task = task_for(settings, task_name)
    maps = {}
    for multiple in sorted({1, min(4, int(max(settings.eval_multiples)))}):
        inputs, _, _ = eval_batch(settings, task, settings.train_length * multiple, bos)
        for layer, weights in enumerate(model(inputs[:1]).attention):  # each (1, heads, n, n)
            avg = weights[0].mean(0)  # (n, n)
            key = f"attn/{task_name}/{model.config.scheme}/{multiple}x/layer{layer}"
            maps[key] = avg.numpy().astype(np.float16)
    return maps


def _worker_init() -> None:
    torch.set_num_threads(1)


def _work(settings: LabSettings, job: tuple[str, str, str, int], queue) -> tuple[dict, dict]:
    variant, task_name, scheme, seed = job
    record, model, per_position = train_run(settings, task_name, scheme, seed, variant,
                                            progress=queue.put)
    artifacts: dict[str, np.ndarray] = {
        f"pos/{variant}/{task_name}/{scheme}/{seed}/{key}": value.astype(np.float16)
        for key, value in per_position.items()
    }
    if seed == settings.seeds[0]:
        if variant == "bos" and task_name == "copy":
            artifacts.update(attention_maps(model, settings, task_name))
        if scheme == "learned":
            table = model.pos_table.detach().numpy().astype(np.float16)
            artifacts[f"table/{variant}/{task_name}"] = table
        if scheme == "none" and task_name == "markov":
            for name, value in model.state_dict().items():
                artifacts[f"nope_markov/{variant}/{name}"] = value.numpy().astype(np.float16)
    queue.put(("done", job))
    return record, artifacts


class _Progress:
    """tqdm when installed, else one plain stderr line every few seconds."""

    def __init__(self, total_steps: int, total_runs: int) -> None:
        self.total, self.runs, self.done_runs, self.n = total_steps, total_runs, 0, 0
        self.start = time.perf_counter()
        self.last = 0.0
        try:
            from tqdm import tqdm
        except ImportError:  # pragma: no cover - tqdm ships with the book's environment
            self.bar = None
        else:
            self.bar = tqdm(total=total_steps, unit="step", file=sys.stderr, smoothing=0.05)
        self._describe()

    def _describe(self) -> None:
        text = f"runs {self.done_runs}/{self.runs}"
        if self.bar is not None:
            self.bar.set_description(text)

    def steps(self, k: int) -> None:
        self.n += k
        if self.bar is not None:
            self.bar.update(k)
            return
        now = time.perf_counter()
        if now - self.last > 5:
            self.last = now
            elapsed = now - self.start
            eta = elapsed / max(self.n, 1) * (self.total - self.n)
            print(f"runs {self.done_runs}/{self.runs}  steps {self.n}/{self.total}  "
                  f"elapsed {elapsed:.0f}s  ETA {eta:.0f}s", file=sys.stderr, flush=True)

    def run_done(self) -> None:
        self.done_runs += 1
        self._describe()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# Settings that only shape the grid (which runs exist), not what one run computes.
GRID_FIELDS = ("seeds", "ablation_seeds", "ablation_seed_schemes", "schemes", "tasks",
               "variants", "max_runs")


def _resumable(out_dir: Path, settings: LabSettings) -> tuple[list[dict], dict[str, np.ndarray]]:
    """The runs of an interrupted grid in ``out_dir`` (its ``*.partial.*`` files), if their
    settings equal ``settings`` on every field that changes what a run computes."""
    path = out_dir / _named(RESULTS_NAME, ".partial")
    if not path.is_file():
        return [], {}
    old = json.loads(path.read_text())
    new = settings.to_dict()
    differ = [k for k in new if k not in GRID_FIELDS and old["settings"].get(k) != new[k]
              and not (isinstance(new[k], tuple) and tuple(old["settings"].get(k)) == new[k])]
    if differ:
        raise ValueError(f"cannot resume: the partial results differ in {differ}")
    grid = set(jobs(settings))
    records = [r for r in old["runs"]
               if (r["variant"], r["task"], r["scheme"], r["seed"]) in grid]
    with np.load(out_dir / _named(ARTIFACTS_NAME, ".partial")) as data:
        artifacts = {k: data[k] for k in data.files}
    return records, artifacts


def run_lab(settings: LabSettings | None = None, out_dir: str | Path | None = None,
            workers: int = 2, resume: bool = False) -> dict:
    """Train and evaluate every configuration of ``settings``; write the results; return them.

    Parameters
    ----------
    settings : LabSettings, optional
        Default :class:`LabSettings()` (the committed results' settings).
    out_dir : str or Path, optional
        Directory for ``lab_results.json`` and ``lab_artifacts.npz`` (default the package's
        ``posenc_lib/lab/data``).
    workers : int
        Worker processes (each uses one torch thread).
    resume : bool
        Keep the runs of an interrupted grid found in ``out_dir`` and train only the others
        (every run is seeded and single-threaded, so on one machine the result is the same as
        one uninterrupted grid).
    """
    settings = LabSettings() if settings is None else settings
    if not isinstance(settings, LabSettings):
        raise TypeError(f"settings must be a LabSettings, got {type(settings).__name__}")
    workers = check_int(workers, "workers", minimum=1)
    out_dir = Path(__file__).parent / "data" if out_dir is None else Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    records, artifacts = _resumable(out_dir, settings) if resume else ([], {})
    done_jobs = {(r["variant"], r["task"], r["scheme"], r["seed"]) for r in records}
    grid = [job for job in jobs(settings) if job not in done_jobs]
    start = time.perf_counter()
    load_start = list(os.getloadavg())  # the machine's load, for the wall time's context
    context = get_context("spawn")
    progress = _Progress(len(grid) * settings.steps, len(grid))
    with context.Manager() as manager, ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_worker_init
    ) as pool:
        queue = manager.Queue()
        pending = {pool.submit(_work, settings, job, queue) for job in grid}
        while pending:
            done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            while not queue.empty():
                message = queue.get()
                if isinstance(message, int):
                    progress.steps(message)
                else:
                    progress.run_done()
            for future in done:
                record, arrays = future.result()
                records.append(record)
                artifacts.update(arrays)
                _write(out_dir, ".partial", settings, records, artifacts, workers, start,
                       load_start)
    progress.close()
    results = _write(out_dir, "", settings, records, artifacts, workers, start, load_start)
    for name in (RESULTS_NAME, ARTIFACTS_NAME):
        (out_dir / _named(name, ".partial")).unlink(missing_ok=True)
    minutes = (time.perf_counter() - start) / 60
    print(f"wrote {out_dir / RESULTS_NAME} and {out_dir / ARTIFACTS_NAME} "
          f"({len(records)} runs, {minutes:.1f} min)", file=sys.stderr)
    return results


def _write(out_dir: Path, suffix: str, settings: LabSettings, records: list[dict],
           artifacts: dict[str, np.ndarray], workers: int, start: float,
           load_start: list[float]) -> dict:
    """Write the results and artifacts (records in grid order) and return the results."""
    from .. import __version__

    order = {job: i for i, job in enumerate(jobs(settings))}
    records = sorted(records, key=lambda r: order[(r["variant"], r["task"], r["scheme"],
                                                   r["seed"])])
    results = {
        "settings": settings.to_dict(),
        "settings_digest": settings.digest(),
        "library_version": __version__,
        "torch_version": torch.__version__,
        "workers": workers,
        "total_wall_time_s": time.perf_counter() - start,
        "load_average_at_start": load_start,
        "load_average_at_end": list(os.getloadavg()),
        "runs": records,
    }
    (out_dir / _named(RESULTS_NAME, suffix)).write_text(json.dumps(results, indent=1) + "\n")
    arrays: dict = artifacts  # numpy's stub types **kwds like its allow_pickle keyword
    np.savez_compressed(out_dir / _named(ARTIFACTS_NAME, suffix), **arrays)
    return results


def _named(name: str, suffix: str) -> str:
    """``lab_results.json`` → ``lab_results.partial.json`` for ``suffix = ".partial"``."""
    stem, ext = name.rsplit(".", 1)
    return f"{stem}{suffix}.{ext}"


def run_one(task: str, scheme: str, seed: int = 0, settings: LabSettings | None = None,
            steps: int | None = None, variant: str = "bos",
            progress: Callable[[int], None] | None = None) -> dict:
    """Train and evaluate a single configuration in this process (the reader's rerun).

    ``steps`` overrides ``settings.steps`` (fewer steps: a quicker, weaker model);
    ``progress(k)`` is called as training advances by ``k`` steps.
    """
    settings = LabSettings() if settings is None else settings
    if steps is not None:
        steps = check_int(steps, "steps", minimum=1)
        settings = replace(settings, steps=steps)
    variant_options(variant)  # validates the name
    record, _, _ = train_run(settings, task, scheme, seed, variant, progress=progress)
    return record
