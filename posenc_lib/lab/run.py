"""Run the whole lab grid in worker processes, with a progress bar, and write the results.

Writes two files into ``out_dir``:

* ``lab_results.json``: the settings and their digest, then one record per run
  (:func:`posenc_lib.lab.train.train_run`), the library version and the total wall time;
* ``lab_artifacts.npz`` (float16): what the chapter's figures need from the seed-0 models —
  head-averaged attention maps at 1× and 4× the training length (the 4× maps average-pooled
  2×2), the learned position tables, and the weights of the NoPE Markov model for the probe.
"""

from __future__ import annotations

import json
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from .._validation import check_int
from .train import LabSettings, eval_batch, task_for, train_run

__all__ = ["ARTIFACTS_NAME", "RESULTS_NAME", "jobs", "run_lab", "run_one"]

RESULTS_NAME = "lab_results.json"
ARTIFACTS_NAME = "lab_artifacts.npz"


def jobs(settings: LabSettings) -> list[tuple[str, str, int]]:
    """Every ``(task, scheme, seed)`` of the grid, seed-major so early results cover all schemes."""
    return [
        (t, s, seed) for seed in settings.seeds for t in settings.tasks for s in settings.schemes
    ]


@torch.no_grad()
def attention_maps(model, settings: LabSettings, task_name: str) -> dict[str, np.ndarray]:
    """Head-averaged attention of each layer on the first evaluation sequence, at 1× and 4× L
    (or the largest evaluation multiple if smaller); maps at 4× and beyond are pooled 2×2."""
    task = task_for(settings, task_name)
    maps = {}
    for multiple in sorted({1, min(4, max(settings.eval_multiples))}):
        inputs, _, _ = eval_batch(settings, task, settings.train_length * multiple)
        for layer, weights in enumerate(model(inputs[:1]).attention):  # each (1, heads, n, n)
            avg = weights[0].mean(0)  # (n, n)
            if multiple >= 4:
                avg = F.avg_pool2d(avg[None, None], 2)[0, 0]  # (n/2, n/2)
            key = f"attn/{task_name}/{model.config.scheme}/{multiple}x/layer{layer}"
            maps[key] = avg.numpy().astype(np.float16)
    return maps


def _worker_init() -> None:
    torch.set_num_threads(1)


def _work(settings: LabSettings, job: tuple[str, str, int], queue) -> tuple[dict, dict]:
    task_name, scheme, seed = job
    record, model = train_run(settings, task_name, scheme, seed, progress=queue.put)
    artifacts: dict[str, np.ndarray] = {}
    if seed == settings.seeds[0]:
        artifacts.update(attention_maps(model, settings, task_name))
        if scheme == "learned":
            artifacts[f"table/{task_name}"] = model.pos_table.detach().numpy().astype(np.float16)
        if scheme == "none" and task_name == "markov":
            for name, value in model.state_dict().items():
                artifacts[f"nope_markov/{name}"] = value.numpy().astype(np.float16)
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


def run_lab(settings: LabSettings | None = None, out_dir: str | Path | None = None,
            workers: int = 2) -> dict:
    """Train and evaluate every configuration of ``settings``; write the results; return them.

    Parameters
    ----------
    settings : LabSettings, optional
        Default :class:`LabSettings()` (the committed results' settings).
    out_dir : str or Path, optional
        Directory for ``lab_results.json`` and ``lab_artifacts.npz``; default the package's own
        ``posenc_lib/lab/data`` (what chapter 9 reads).
    workers : int
        Worker processes (each uses one torch thread).
    """
    settings = LabSettings() if settings is None else settings
    if not isinstance(settings, LabSettings):
        raise TypeError(f"settings must be a LabSettings, got {type(settings).__name__}")
    workers = check_int(workers, "workers", minimum=1)
    out_dir = Path(__file__).parent / "data" if out_dir is None else Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    grid = jobs(settings)
    start = time.perf_counter()
    context = get_context("spawn")
    progress = _Progress(len(grid) * settings.steps, len(grid))
    records, artifacts = [], {}
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
    progress.close()
    order = {job: i for i, job in enumerate(grid)}
    records.sort(key=lambda r: order[(r["task"], r["scheme"], r["seed"])])
    from .. import __version__

    results = {
        "settings": settings.to_dict(),
        "settings_digest": settings.digest(),
        "library_version": __version__,
        "torch_version": torch.__version__,
        "workers": workers,
        "total_wall_time_s": time.perf_counter() - start,
        "runs": records,
    }
    minutes = (time.perf_counter() - start) / 60
    (out_dir / RESULTS_NAME).write_text(json.dumps(results, indent=1) + "\n")
    np.savez_compressed(out_dir / ARTIFACTS_NAME, **artifacts)
    print(f"wrote {out_dir / RESULTS_NAME} and {out_dir / ARTIFACTS_NAME} "
          f"({len(records)} runs, {minutes:.1f} min)", file=sys.stderr)
    return results


def run_one(task: str, scheme: str, seed: int = 0, settings: LabSettings | None = None,
            steps: int | None = None) -> dict:
    """Train and evaluate a single configuration in this process (the reader's rerun).

    ``steps`` overrides ``settings.steps`` (fewer steps: a quicker, weaker model).
    """
    settings = LabSettings() if settings is None else settings
    if steps is not None:
        steps = check_int(steps, "steps", minimum=1)
        settings = LabSettings(**{**settings.to_dict(), "steps": steps})
    record, _ = train_run(settings, task, scheme, seed)
    return record
