"""Command line: ``python -m posenc_lib plan CONFIG.json``.

Prints what every attention layer of the model does with position (RoPE base and type, rotary
share, NoPE, ALiBi, windows, chunks, query scales), with layer ranges collapsed.
"""

from __future__ import annotations

import argparse
import json
import sys

from .architectures import format_plan, position_plan


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m posenc_lib", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    plan = commands.add_parser("plan", help="print a model's per-layer position plan")
    plan.add_argument("config", help="path to a config.json")
    plan.add_argument("--seq-len", type=int, default=None,
                      help="current length (dynamic NTK, LongRoPE's long/short switch)")
    args = parser.parse_args(argv)
    try:
        with open(args.config, encoding="utf-8") as f:
            config = json.load(f)
        layers = position_plan(config, seq_len=args.seq_len)
    except (OSError, ValueError, TypeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    title = f"{config.get('model_type')}: {len(layers)} layers"
    print(format_plan(layers, title=title))
    return 0


if __name__ == "__main__":
    sys.exit(main())
