"""The position inspector: what each attention layer of a real model does with position.

:func:`position_plan` reads a transformers config (object or ``config.json`` dict) the way the
model does — with transformers installed, through the model's own config class (every default
filled, a multimodal wrapper unwrapped) and its rotary module — and returns a :class:`Plan`, one
:class:`LayerPosition` per layer: RoPE (M-RoPE for the Qwen-VL language models), NoPE, ALiBi or a
hybrid's layer without attention; the inverse frequencies and where they apply, the scaling and
its factors, the cos/sin attention factor, a position-dependent query scale, the window or chunk,
causal or bidirectional, qk-norm. :func:`format_plan` prints it with layer ranges collapsed, as
``python -m posenc_lib plan CONFIG`` does (a file, a model folder or a Hub id; ``--json``).
:func:`load_config` reads a file with one-line errors. ``tests/test_architectures.py`` holds the
plan of each text model type with a rotary module in the installed transformers against a tiny
random model of it, except the types it refuses and those in ``hf_check.UNVERIFIED_TYPES``
(:func:`~posenc_lib.architectures.hf_check.census_summary` counts them).
"""

from ._families import SUPPORTED_MODEL_TYPES, Plan, position_plan
from ._plan import KINDS, LayerPosition, QueryScale, proportional_inv_freq
from ._resolve import check_config_dict, load_config
from ._table import (
    collapse_ranges,
    format_plan,
    layer_letter,
    layer_pattern,
    logit_gain,
    per_kind_cells,
    scaling_cell,
    temperature_cell,
    window_binds,
    window_cell,
)
from ._temperature import (
    TEMPERATURE_FORMS,
    entropy_invariant_scale,
    logit_multiplier,
    softmax_entropy,
)

__all__ = [
    "KINDS",
    "SUPPORTED_MODEL_TYPES",
    "TEMPERATURE_FORMS",
    "LayerPosition",
    "Plan",
    "QueryScale",
    "check_config_dict",
    "collapse_ranges",
    "entropy_invariant_scale",
    "format_plan",
    "layer_letter",
    "layer_pattern",
    "load_config",
    "logit_gain",
    "logit_multiplier",
    "per_kind_cells",
    "position_plan",
    "proportional_inv_freq",
    "scaling_cell",
    "softmax_entropy",
    "temperature_cell",
    "window_binds",
    "window_cell",
]
