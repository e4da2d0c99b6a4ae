"""Command line: ``python -m posenc_lib.lab {run,one,summary}``.

* ``run``: the whole grid (what ``make lab`` does), results into ``posenc_lib/lab/data``;
* ``one --task copy --scheme rope [--seed 0] [--variant bos] [--steps N] [--set key=value ...]``:
  train one configuration here, with progress on stderr, print its metrics and, with the
  committed settings, the largest difference from the committed run and whether it is within
  1e-5 (float rounding differs across machines and training can amplify it: a retrained RoPE
  copy model differed by up to about 0.03 in accuracy beyond L). ``--set`` changes any
  :class:`LabSettings` field, e.g. ``--set lr=0.01 --set markov_layers=3``: a quick ablation;
* ``ablations``: rerun the stored ablations (:mod:`posenc_lib.lab.ablations`);
* ``summary``: print the committed results, mean ± spread over seeds.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time

import torch

from .ablations import ABLATIONS, run_ablations
from .model import ALL_SCHEMES
from .results import DATA_DIR, load_results, runs, summarise
from .run import run_one
from .tasks import TASKS
from .train import ALL_VARIANTS, VARIANTS, LabSettings

# Runs start equal to float rounding across CPUs (3.6e-7 seen on another machine), not bit for
# bit, and training can amplify the difference: the tolerance is a report, not a guarantee.
REPRODUCE_TOLERANCE = 1e-5


def parse_overrides(pairs: list[str]) -> dict:
    """``["lr=0.01", "markov_layers=3"]`` → ``{"lr": 0.01, "markov_layers": 3}``, typed as the
    :class:`LabSettings` field (a tuple field takes comma-separated values)."""
    fields = {f.name: f for f in dataclasses.fields(LabSettings)}
    defaults = LabSettings()
    out: dict = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not text.strip():
            raise ValueError(f"--set takes key=value, got {pair!r}")
        if key not in fields:
            raise ValueError(f"--set: unknown setting {key!r}; settings: {', '.join(fields)}")
        default = getattr(defaults, key)
        try:
            if isinstance(default, tuple):
                kind = type(default[0]) if default else str
                out[key] = tuple(kind(v.strip()) for v in text.split(","))
            elif isinstance(default, bool):
                out[key] = text.strip().lower() in ("1", "true", "yes")
            elif default is None:
                out[key] = int(text)
            else:
                out[key] = type(default)(text.strip())
        except ValueError as error:
            raise ValueError(f"--set {key}: cannot read {text!r} as {type(default).__name__}"
                             ) from error
    return out


def largest_difference(a: object, b: object) -> float:
    """The largest absolute difference between two JSON-like records of numbers (inf when their
    structure differs)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return math.inf
        return max((largest_difference(a[k], b[k]) for k in a), default=0.0)
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return math.inf
        return max((largest_difference(x, y) for x, y in zip(a, b, strict=True)), default=0.0)
    if isinstance(a, bool) or isinstance(b, bool):
        return 0.0 if a == b else math.inf
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(float(a) - float(b))
    return 0.0 if a == b else math.inf


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m posenc_lib.lab", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="train and evaluate the whole grid")
    run.add_argument("--workers", type=int, default=2)
    run.add_argument("--out", default=str(DATA_DIR))
    run.add_argument("--resume", action="store_true",
                     help="keep the runs of an interrupted grid in --out, train the others")
    one = commands.add_parser("one", help="train and evaluate one configuration")
    one.add_argument("--task", choices=TASKS, required=True)
    one.add_argument("--scheme", choices=ALL_SCHEMES, required=True)
    one.add_argument("--seed", type=int, default=0)
    one.add_argument("--variant", choices=ALL_VARIANTS, default="bos")
    one.add_argument("--steps", type=int, default=None)
    one.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                     help="change a LabSettings field for this run (repeatable)")
    abl = commands.add_parser("ablations", help="rerun the stored ablations")
    abl.add_argument("--only", choices=[a.name for a in ABLATIONS], default=None)
    commands.add_parser("summary", help="print the committed results")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.command == "run":
        from .run import run_lab

        run_lab(out_dir=args.out, workers=args.workers, resume=args.resume)
    elif args.command == "ablations":
        run_ablations(only=args.only)
    elif args.command == "one":
        try:
            overrides = parse_overrides(args.set)
            settings = dataclasses.replace(LabSettings(), **overrides)
        except (ValueError, TypeError) as error:
            parser.error(str(error))
        steps = settings.steps if args.steps is None else args.steps
        start, done = time.perf_counter(), [0]

        def progress(k: int) -> None:
            done[0] += k
            if done[0] % 250 == 0 or done[0] == steps:
                print(f"step {done[0]}/{steps}  {time.perf_counter() - start:.0f} s",
                      file=sys.stderr, flush=True)

        record = run_one(args.task, args.scheme, args.seed, settings=settings, steps=args.steps,
                         variant=args.variant, progress=progress)
        print(json.dumps({k: record[k] for k in ("variant", "task", "scheme", "seed", "metrics",
                                                 "exact", "fitted", "probe_r2", "wall_time_s")}
                         | {"overrides": overrides}, indent=1))
        # Only the grid's variants have committed runs; random_first lives in the ablations.
        same = [r for r in runs(load_results(), variant=args.variant, task=args.task,
                                scheme=args.scheme) if r["seed"] == args.seed
                ] if args.variant in VARIANTS else []
        if same and args.steps is None and not overrides:
            keys = ("metrics", "exact", "train_loss", "curve", "probe_r2")
            gap = max(largest_difference(record[k], same[0][k]) for k in keys)
            verdict = "agrees" if gap <= REPRODUCE_TOLERANCE else "DIFFERS"
            print(f"{verdict} with the committed run ({', '.join(keys)}): largest difference "
                  f"{gap:.2e} (tolerance {REPRODUCE_TOLERANCE:g})")
    else:
        results = load_results()
        for task in results["settings"]["tasks"]:
            for method in ("plain", *results["settings"]["rope_methods"][1:]):
                for variant in results["settings"]["variants"]:
                    summary = summarise(results, task, method, variant=variant)
                    for scheme, by_length in summary.items():
                        cells = "  ".join(f"{n}: {s['mean']:.3f}±{s['std']:.3f}"
                                          for n, s in by_length.items())
                        print(f"{variant:12s} {task:6s} {scheme:10s} {method:12s} {cells}")


if __name__ == "__main__":
    main()
