"""Command line: ``python -m posenc_lib plan CONFIG``.

Prints what every attention layer of the model does with position, as the installed transformers
runs this config (a checkpoint's reference code can differ): kind (RoPE, NoPE, ALiBi, or
a hybrid's layer without attention), base, rotary dims and pairing, scaling with its factors,
cos/sin attention factor, window or chunk, causal or bidirectional, qk-norm; layer ranges
collapsed. CONFIG is a ``config.json``, a model folder, or a Hub model id (transformers reads it
with ``AutoConfig.from_pretrained``; needs a network, or ``HF_HUB_OFFLINE=1`` to read only the
local Hub cache and fail at once otherwise). With transformers installed the config is
read through the model's own config class, so every default is the model's; notes say what was
unwrapped or defaulted. ``--json`` prints the plan for machines. Broken input: one line on
stderr naming the file and the problem, exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from .architectures import format_plan, load_config, position_plan


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m posenc_lib", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    plan = commands.add_parser("plan", help="print a model's per-layer position plan")
    plan.add_argument("config", help="a config.json, a model folder, or a Hub model id")
    plan.add_argument("--seq-len", type=int, default=None,
                      help="current length as transformers counts it, the largest position id"
                      " + 1 (dynamic NTK base, LongRoPE's long/short switch)")
    plan.add_argument("--json", action="store_true", help="print the plan as JSON")
    args = parser.parse_args(argv)
    try:
        config = load_config(args.config)
        layers = position_plan(config, seq_len=args.seq_len)
    except (OSError, ValueError, TypeError) as err:
        message = " ".join(str(err).split())
        if not message.startswith(str(args.config)):
            message = f"{args.config}: {message}"
        print(f"error: {message}", file=sys.stderr)
        return 2
    if args.json:
        text = json.dumps({
            "source": str(args.config), "model_type": layers.model_type,
            "seq_len": args.seq_len, "notes": layers.notes,
            "layers": [entry.to_dict() for entry in layers],
        }, indent=1)
    else:
        title = f"{layers.model_type}: {len(layers)} layers"
        lines = [format_plan(layers, title=title)]
        lines += [f"note: {note}" for note in layers.notes]
        text = "\n".join(lines)
    try:
        print(text, flush=True)
    except BrokenPipeError:  # `plan ... | head` closed the pipe: stop quietly, no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
