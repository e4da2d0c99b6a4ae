"""Command line: ``python -m posenc_lib.lab {run,one,summary}``.

* ``run``: the whole grid (what ``make lab`` does), results into ``posenc_lib/lab/data``;
* ``one --task copy --scheme rope [--seed 0] [--steps N]``: train one configuration here and
  print its metrics next to the committed ones;
* ``summary``: print the committed results, mean ± spread over seeds.
"""

from __future__ import annotations

import argparse
import json

import torch

from .model import SCHEMES
from .results import DATA_DIR, load_results, summarise
from .run import run_lab, run_one
from .tasks import TASKS


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m posenc_lib.lab", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="train and evaluate the whole grid")
    run.add_argument("--workers", type=int, default=2)
    run.add_argument("--out", default=str(DATA_DIR))
    one = commands.add_parser("one", help="train and evaluate one configuration")
    one.add_argument("--task", choices=TASKS, required=True)
    one.add_argument("--scheme", choices=SCHEMES, required=True)
    one.add_argument("--seed", type=int, default=0)
    one.add_argument("--steps", type=int, default=None)
    commands.add_parser("summary", help="print the committed results")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.command == "run":
        run_lab(out_dir=args.out, workers=args.workers)
    elif args.command == "one":
        record = run_one(args.task, args.scheme, args.seed, steps=args.steps)
        print(json.dumps({k: record[k] for k in ("task", "scheme", "seed", "metrics",
                                                 "wall_time_s")}, indent=1))
        committed = summarise(load_results(), args.task).get(args.scheme, {})
        for length, stats in committed.items():
            print(f"committed, {length}: mean {stats['mean']:.4f} "
                  f"(min {stats['min']:.4f}, max {stats['max']:.4f})")
    else:
        results = load_results()
        for task in results["settings"]["tasks"]:
            for method in ("plain", *results["settings"]["rope_methods"][1:]):
                for scheme, by_length in summarise(results, task, method).items():
                    cells = "  ".join(f"{n}: {s['mean']:.3f}±{s['std']:.3f}"
                                      for n, s in by_length.items())
                    print(f"{task:6s} {scheme:10s} {method:11s} {cells}")


if __name__ == "__main__":
    main()
