"""The position inspector: what each attention layer of a real model does with position.

:func:`position_plan` reads a transformers config (object or ``config.json`` dict) and returns one
:class:`LayerPosition` per layer: RoPE (M-RoPE for the Qwen-VL language models, with the axis
each frequency pair reads), NoPE or ALiBi, the inverse frequencies and where they apply, the
cos/sin attention factor, a position-dependent query scale, the sliding window or attention chunk.
:func:`format_plan` prints it with layer ranges collapsed, as
``python -m posenc_lib plan CONFIG.json`` does. Every supported ``model_type`` is checked against a
tiny random model of its own transformers class in ``tests/test_architectures.py``.
"""

from ._families import SUPPORTED_MODEL_TYPES, Plan, position_plan
from ._plan import KINDS, LayerPosition, QueryScale, proportional_inv_freq
from ._resolve import check_config_dict, load_config
from ._table import collapse_ranges, format_plan
from ._temperature import TEMPERATURE_FORMS, logit_multiplier

__all__ = [
    "KINDS",
    "SUPPORTED_MODEL_TYPES",
    "TEMPERATURE_FORMS",
    "LayerPosition",
    "Plan",
    "QueryScale",
    "check_config_dict",
    "collapse_ranges",
    "format_plan",
    "load_config",
    "logit_multiplier",
    "position_plan",
    "proportional_inv_freq",
]
