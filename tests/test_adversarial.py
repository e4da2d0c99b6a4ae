"""An adversarial sweep: every public callable × every size-like parameter × bad values.

Each call must either succeed or raise a ``ValueError``/``TypeError`` whose message names the
parameter. The sizes are ones the size policy (``posenc_lib._validation.MAX_ELEMENTS``) must refuse
*before* allocating (2**70, products of 10**12 elements and more), so a regression fails at once
(``OverflowError``, an allocator error) instead of hanging: no call here can build anything large.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch

from posenc_lib._validation import MAX_ELEMENTS, MAX_PYTHON_ITEMS


def _np_table() -> Any:
    import numpy as np

    return np.zeros((16, 8))

MODULES = [
    "posenc_lib",
    "posenc_lib.analysis",
    "posenc_lib.conversion",
    "posenc_lib.permutation",
    "posenc_lib.order_task",
    "posenc_lib.pitfalls",
    "posenc_lib.properties",
    "posenc_lib.tables",
    "posenc_lib.alibi",
    "posenc_lib.hf",
    "posenc_lib.architectures",
    "posenc_lib.extension",
    "posenc_lib.long_context",
    "posenc_lib.serving",
    "posenc_lib.multimodal",
    "posenc_lib.viz.multimodal",
    "posenc_lib.viz.alibi",
    "posenc_lib.viz.long_context",
    "posenc_lib.viz.attention",
    "posenc_lib.viz.conventions",
    "posenc_lib.viz.decay",
    "posenc_lib.viz.euler",
    "posenc_lib.viz.heatmap",
    "posenc_lib.viz.offset",
    "posenc_lib.viz.permutation",
    "posenc_lib.viz.design",
    "posenc_lib.viz.sinusoid",
    "posenc_lib.decay_law",
    "posenc_lib.viz.spectrum",
    "posenc_lib.viz.spiral",
    "posenc_lib.viz.lab",
    "posenc_lib.euler",
    "posenc_lib.sinusoidal",
    "posenc_lib.presets",
    "posenc_lib.lab.nope",
    "posenc_lib.lab.tasks",
    "posenc_lib.lab.model",
    "posenc_lib.lab.probe",
    "posenc_lib.lab.train",
]

# Callables the sweep leaves out, with the reason. The lab's training loops train when called
# with valid small values; their sizes are checked up front (tests/test_lab.py).
ELSEWHERE: set[str] = {"train_model", "train_run"}

# Parameters that are sizes, counts, indices or seeds: integers only.
INT_PARAMS = {
    "count", "dim", "first", "head_dim", "hidden", "k_len", "last", "m", "max_distance",
    "max_len", "max_offset", "max_position", "n", "n_heads", "n_kv_heads", "n_layers",
    "n_samples", "n_terms", "order_index", "original_max_position", "q_len", "rotary_dim",
    "seed", "seq_len", "train_len", "window",
    # the lab
    "batch", "context", "d_ff", "d_model", "layer", "length", "shown", "train_length",
    # multimodal grids
    "grid_h", "grid_w", "spatial_merge_size",
    # chapter 1's order task
    "num_pairs", "vocab_size", "steps", "batch_pairs", "test_pairs", "layers",
}
# Integers only in the lab (``posenc_lib.permutation``'s ``vocab`` is a list of words).
LAB_INT_PARAMS = {"vocab"}

# Valid values for required parameters, so that only the parameter under test is bad.
REQUIRED: dict[str, Any] = {
    "dim": 8, "seq_len": 4, "n_heads": 2, "q_len": 4, "method": "pi", "factor": 2.0,
    "train_len": 64, "base": 1e4, "theta": 1.0, "n_terms": 4, "offset": 1, "position": 1.0,
    "original_max_position": 64, "max_position": 16, "vocab": ["a", "b"], "sentence": "abc",
    "positions": torch.arange(4), "x": torch.zeros(2, 4, 8), "q": torch.zeros(2, 4, 8),
    "k": torch.zeros(2, 4, 8), "v": torch.zeros(2, 4, 8), "table": torch.zeros(4, 8),
    "inv_freq": torch.ones(4), "weights": torch.ones(4, 4) / 4, "tokens": list("abcd"),
    "w": torch.zeros(8, 8), "reference": torch.zeros(4, 8), "query": torch.zeros(2, 8),
    "matrix": torch.eye(8), "z": 1 + 0j, "order": [1, 0], "lengths": [4, 8], "window": 2,
    "encoding": lambda n, d: torch.zeros(n, d),
    "head_dim": 8, "partial_rotary_factor": 0.5, "rotary_dim": 4,
    "grid_h": 2, "grid_w": 2, "rows": torch.arange(4), "cols": torch.arange(4),
    "freq_rows": torch.ones(4), "freq_cols": torch.zeros(4), "mrope_section": [2, 1, 1],
    "position_ids": torch.zeros(3, 4), "segments": [("text", 2), ("image", 1, 2, 2)],
}

def _lab_objects() -> dict[str, Any]:
    from posenc_lib.lab import model, tasks, train

    config = model.ModelConfig(vocab=8, scheme="rope", d_model=8, n_heads=2, n_layers=1, d_ff=8,
                               max_len=16)
    return {"config": config, "model": model.TinyDecoder(config), "task": tasks.CopyTask(8),
            "settings": train.LabSettings()}


_LAB = _lab_objects()

# Valid values for one callable's parameters where the name means something else elsewhere
# (the lab's ``vocab`` is a size, the permutation module's a list of words).
REQUIRED_BY: dict[str, dict[str, Any]] = {
    "CopyTask": {"vocab": 8},
    "MarkovTask": {"vocab": 4, "concentration": 0.3, "seed": 0, "train_length": 8},
    "make_task": {"name": "markov", "vocab": 4, "train_length": 8},
    "ModelConfig": {"vocab": 8, "d_model": 8, "n_heads": 2},
    "TinyDecoder": {"config": _LAB["config"]},
    "position_probe": {"model": _LAB["model"], "task": _LAB["task"], "train_length": 8,
                       "length": 12, "batch": 2},
    "build_model": {"settings": _LAB["settings"], "task": "copy", "scheme": "rope", "seed": 0},
    "evaluate": {"model": _LAB["model"], "settings": _LAB["settings"], "task": _LAB["task"],
                 "length": 8},
    "rope_method_inv_freq": {"model": _LAB["model"], "method": "pi", "length": 64,
                             "train_length": 32},
    "learned_table_figure": {"table": _np_table(), "initial": _np_table(), "train_length": 8},
    "logn_attention_scale": {"position": 100},
    "reversal_pairs": {"num_pairs": 2, "length": 3, "vocab_size": 4},
    "OrderClassifier": {"vocab_size": 4, "length": 3},
    "RopePreset": {"model": "m", "head_dim": 8, "rotary_dim": 8, "base": 1e4, "method": "pi",
                   "factor": 2.0, "train_len": 64, "context": 128, "source": "s"},
}

HUGE = [2**70, 10**12]
NOT_INTS = [2.5, True, "5"]


def _callables() -> Iterator[tuple[str, Callable[..., Any]]]:
    seen = set()
    for name in MODULES:
        module = importlib.import_module(name)
        for attr in module.__all__:
            obj = getattr(module, attr)
            if not callable(obj) or attr in ELSEWHERE or id(obj) in seen:
                continue
            seen.add(id(obj))
            yield f"{name}.{attr}", obj


def _cases() -> Iterator[Any]:
    for qualname, fn in _callables():
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):  # pragma: no cover - builtins
            continue
        given = {**REQUIRED, **REQUIRED_BY.get(qualname.rsplit(".", 1)[1], {})}
        required = {p: given[p] for p, spec in params.items()
                    if spec.default is inspect.Parameter.empty and p in given}
        if len(required) < sum(spec.default is inspect.Parameter.empty
                               for spec in params.values()):
            continue
        for param, spec in params.items():
            lab = qualname.startswith("posenc_lib.lab.")
            if param not in INT_PARAMS and not (lab and param in LAB_INT_PARAMS):
                continue
            bad_values = [*HUGE, *NOT_INTS]
            if spec.default is not None:
                bad_values.append(None)
            for bad in bad_values:
                yield pytest.param(fn, required, param, bad, id=f"{qualname}({param}={bad!r})")


@pytest.mark.parametrize(("fn", "required", "param", "bad"), list(_cases()))
def test_bad_size_fails_fast_naming_the_parameter(
    fn: Callable[..., Any], required: dict[str, Any], param: str, bad: object
) -> None:
    kwargs = {**required, param: bad}
    must_fail = bad is None or isinstance(bad, (bool, float, str))
    try:
        fn(**kwargs)
    except (ValueError, TypeError) as err:
        assert param in str(err), f"the message does not name {param!r}: {err}"
        return
    assert not must_fail, f"{param}={bad!r} was accepted"


def test_the_sweep_covers_the_library() -> None:
    names = {case.id.split("(")[0].rsplit(".", 1)[1] for case in _cases()}
    for expected in ("sinusoidal_table", "causal_mask", "binary_encoding", "rope_rotation_matrix",
                     "SinusoidalPositionalEncoding", "RotaryEmbedding", "rope_decay_bound",
                     "TinyEncoder", "heatmap_static_rows", "sinusoidal_table_div_term_multiplied",
                     "scaled_inv_freq", "rope_offset_figure", "default_pairs"):
        assert expected in names, expected
    assert len(list(_cases())) > 300


def test_the_limits_are_documented_constants() -> None:
    assert MAX_ELEMENTS == 2**27
    assert MAX_PYTHON_ITEMS == 4096
