"""Command line: ``python -m posenc_lib.lab {run,one,summary}``.

* ``run``: the whole grid (what ``make lab`` does), results into ``posenc_lib/lab/data``;
* ``one --task copy --scheme rope [--seed 0] [--variant bos] [--steps N]``: train one
  configuration here, print its metrics and whether they equal the committed run's bit for bit;
* ``summary``: print the committed results, mean ± spread over seeds.
"""

from __future__ import annotations

import argparse
import json

import torch

from .model import SCHEMES
from .results import DATA_DIR, load_results, runs, summarise
from .run import run_lab, run_one
from .tasks import TASKS
from .train import VARIANTS


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
    one.add_argument("--scheme", choices=SCHEMES, required=True)
    one.add_argument("--seed", type=int, default=0)
    one.add_argument("--variant", choices=VARIANTS, default="bos")
    one.add_argument("--steps", type=int, default=None)
    commands.add_parser("summary", help="print the committed results")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.command == "run":
        run_lab(out_dir=args.out, workers=args.workers, resume=args.resume)
    elif args.command == "one":
        record = run_one(args.task, args.scheme, args.seed, steps=args.steps,
                         variant=args.variant)
        print(json.dumps({k: record[k] for k in ("variant", "task", "scheme", "seed", "metrics",
                                                 "exact", "wall_time_s")}, indent=1))
        same = [r for r in runs(load_results(), variant=args.variant, task=args.task,
                                scheme=args.scheme) if r["seed"] == args.seed]
        if same and args.steps is None:
            keys = ("metrics", "exact", "train_loss", "curve", "probe_r2")
            equal = all(record[k] == same[0][k] for k in keys)
            print(f"identical to the committed run ({', '.join(keys)}): {equal}")
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
