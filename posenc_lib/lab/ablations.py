"""Ablations of the lab that test its headlines: a longer budget, the paper's YaRN ramp.

Each ablation is one training run of :func:`posenc_lib.lab.train.train_run` with a few settings
changed (``overrides``), evaluated as the grid is, plus extra inference-time RoPE methods. The
results go into ``posenc_lib/lab/data/lab_ablations.json`` (package data, read by chapter 9);
``python -m posenc_lib.lab ablations`` reruns them one at a time (the stored records' wall times
sum to about an hour of one-thread runs on a shared machine, the three 4 500-step runs the
longest; each record holds its wall time and the load average).

* ``nope_*_3x``: NoPE with three times the steps: on the Markov chain without and with a BOS
  token, on the copy task without (seed 0, as the main grid's first seed), and on the chain
  without BOS on seed 1 (``nope_markov_no_bos_3x_seed1``). Does BOS decide *whether* NoPE
  learns, or how fast?
* ``rope_copy_bos``: the RoPE copy model of the main grid (seed 0, retrained; on another machine
  float rounding can make it differ from the committed run beyond ``L``), evaluated with the
  reference code's YaRN, with the same ramp unrounded (``yarn_unrounded``) and with the paper's
  continuous ramp in the turn count (``yarn_paper``), and with one YaRN factor, the longest
  length's, at every length (``yarn_fixed``, as a deployment fixes it);
* ``rope_copy_bos_seed{1,2}``: the grid's other two RoPE copy seeds, retrained, with
  ``yarn_fixed``.
* ``nope_*_random_first``: NoPE with a random task token in front of every sequence instead of
  the one BOS id (seed 0);
* ``hybrid_*``: RoPE in every layer but the last, which has none (as iRoPE and SmolLM3 mix
  them), on both tasks;
* ``*_no_bos_seed1``: RoPE and T5 without BOS on a second seed, so that the BOS comparison of
  these schemes rests on the same two seeds on both sides.
* ``budget_{scheme}_copy_{1x,3x}_seed{s}``: the budget sweep of the copy task with BOS for
  NoPE, RoPE, ALiBi and T5: seeds 3 and 4 at the grid's 1 500 steps (seeds 0-2 are the grid's
  own runs) and seeds 0-4 at 4 500 steps. Which orderings beyond ``L`` survive five seeds and
  three times the training?
* ``nope_*_no_bos_deeper_seed*``: NoPE without BOS and one more layer (copy: 4 instead of 3;
  Markov: 3 instead of 2), seeds 0 and 1. The first token is one way to mark the start; is a
  layer that finds the start itself another?
* ``nope_*_no_bos_wide_seed*``: NoPE without BOS at twice the width (``d_model`` 128,
  ``d_ff`` 256; same layers and steps), seeds 0 and 1. Does width, like depth, do the token's
  job?
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch

from .._validation import check_choice
from .train import LabSettings, train_run

__all__ = ["ABLATIONS", "ABLATIONS_NAME", "Ablation", "load_ablations", "run_ablations"]

ABLATIONS_NAME = "lab_ablations.json"
DATA_DIR = Path(__file__).parent / "data"


@dataclass(frozen=True)
class Ablation:
    """One ablation run: a configuration of the grid with some settings changed."""

    name: str
    task: str
    scheme: str
    seed: int
    variant: str
    overrides: dict = field(default_factory=dict)
    extra_methods: tuple[str, ...] = ()


# The schemes of the budget sweep: no positions, RoPE, ALiBi and T5's bucketed bias.
BUDGET_SCHEMES = ("none", "rope", "alibi", "t5")

ABLATIONS = (
    Ablation("nope_markov_no_bos_3x", "markov", "none", 0, "no_bos", {"steps": 4500}),
    Ablation("nope_markov_bos_3x", "markov", "none", 0, "bos", {"steps": 4500}),
    Ablation("rope_copy_bos", "copy", "rope", 0, "bos", {},
             ("yarn_paper", "yarn_unrounded", "yarn_fixed")),
    # YaRN with one factor for every length (the 8L one), on the grid's other two RoPE seeds.
    *(Ablation(f"rope_copy_bos_seed{seed}", "copy", "rope", seed, "bos", {}, ("yarn_fixed",))
      for seed in (1, 2)),
    # The copy task's counterpart of the first: without BOS, three times the steps.
    Ablation("nope_copy_no_bos_3x", "copy", "none", 0, "no_bos", {"steps": 4500}),
    # The first on a second seed: is its gate outcome a property of the seed?
    Ablation("nope_markov_no_bos_3x_seed1", "markov", "none", 1, "no_bos", {"steps": 4500}),
    # A second no-BOS seed for the schemes whose BOS effect the chapter states per seed.
    *(Ablation(f"{scheme}_{task}_no_bos_seed1", task, scheme, 1, "no_bos")
      for scheme in ("rope", "t5") for task in ("copy", "markov")),
    # Is BOS an anchor because it is one recognisable token, or because it adds a first position?
    *(Ablation(f"nope_{task}_random_first", task, "none", 0, "random_first")
      for task in ("copy", "markov")),
    # What practitioners deploy: RoPE layers with a NoPE layer after them (seed 0, with BOS).
    *(Ablation(f"hybrid_{task}_bos", task, "hybrid", 0, "bos")
      for task in ("copy", "markov")),
    # Depth instead of BOS: NoPE without BOS and one more layer, two seeds.
    *(Ablation(f"nope_{task}_no_bos_deeper_seed{seed}", task, "none", seed, "no_bos",
               {f"{task}_layers": layers})
      for task, layers in (("copy", 4), ("markov", 3)) for seed in (0, 1)),
    # The budget sweep of the copy task with BOS: the four contenders on two more seeds at the
    # grid's budget (its seeds 0-2 are the grid's own runs) and on all five seeds at three times
    # the steps. Which orderings beyond L survive more seeds and more steps?
    *(Ablation(f"budget_{scheme}_copy_1x_seed{seed}", "copy", scheme, seed, "bos")
      for seed in (3, 4) for scheme in BUDGET_SCHEMES),
    *(Ablation(f"budget_{scheme}_copy_3x_seed{seed}", "copy", scheme, seed, "bos",
               {"steps": 4500})
      for seed in range(5) for scheme in BUDGET_SCHEMES),
    # Width instead of BOS: NoPE without BOS at twice the width (d_model and d_ff doubled, the
    # same layers and steps), two seeds. Does the token stand in for capacity of any kind?
    *(Ablation(f"nope_{task}_no_bos_wide_seed{seed}", task, "none", seed, "no_bos",
               {"d_model": 128, "d_ff": 256})
      for task in ("copy", "markov") for seed in (0, 1)),
)


def _settings(ablation: Ablation) -> LabSettings:
    base = LabSettings()
    methods = (*base.rope_methods, *ablation.extra_methods)
    return replace(base, rope_methods=methods, **ablation.overrides)


def run_ablations(out_dir: str | Path | None = None, only: str | None = None) -> dict:
    """Run the ablations (or only the one named ``only``) and write ``lab_ablations.json``.

    Runs already in the file with the same settings are kept, so an interrupted call resumes.
    """
    names = [a.name for a in ABLATIONS]
    if only is not None:
        check_choice(only, "only", tuple(names))
    out_dir = DATA_DIR if out_dir is None else Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / ABLATIONS_NAME
    stored = json.loads(path.read_text()) if path.is_file() else {"runs": {}}
    for ablation in ABLATIONS:
        if only is not None and ablation.name != only:
            continue
        settings = _settings(ablation)
        old = stored["runs"].get(ablation.name)
        if old is not None and old["settings_digest"] == settings.digest():
            continue
        print(f"ablation {ablation.name}: training {settings.steps} steps ...", file=sys.stderr,
              flush=True)
        start = time.perf_counter()
        record, _, _ = train_run(settings, ablation.task, ablation.scheme, ablation.seed,
                                 ablation.variant)
        record.update(name=ablation.name, overrides=ablation.overrides,
                      settings_digest=settings.digest(), steps=settings.steps,
                      load_average=list(os.getloadavg()))
        stored["runs"][ablation.name] = record
        stored["torch_version"] = torch.__version__
        path.write_text(json.dumps(stored, indent=1) + "\n")
        print(f"ablation {ablation.name}: done in {time.perf_counter() - start:.0f} s",
              file=sys.stderr, flush=True)
    return stored


def load_ablations(path: str | Path | None = None) -> dict[str, dict]:
    """The stored ablation runs, ``{name: record}`` (records as in ``lab_results.json``)."""
    path = DATA_DIR / ABLATIONS_NAME if path is None else Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"no ablation results at {path}: run `python -m posenc_lib.lab ablations`"
        )
    return json.loads(path.read_text())["runs"]
