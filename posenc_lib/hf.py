"""Hugging Face ``transformers`` config blocks for RoPE and its context-extension methods.

Two forms are written, for the same method and numbers:

* transformers 5: ``rope_parameters = {"rope_type": …, "rope_theta": …, "factor": …, …}``
  (:func:`hf_rope_parameters`);
* transformers 4: ``rope_theta`` beside ``rope_scaling = {"rope_type": …, "factor": …}`` or
  ``None`` (:func:`hf_legacy_rope_config`); transformers 5 still reads it.

:func:`hf_config_fields` adds the ``max_position_embeddings`` that must go with them (for
``"dynamic"`` transformers reads it as the *training* length, for the others it is the target
length). Loaded into a transformers config and run through ``ROPE_INIT_FUNCTIONS``, these blocks
give the inverse frequencies and attention factor of :func:`posenc_lib.extension.extended_rope`
(tested in ``tests/test_hf.py``).

Two methods have no rope type of their own: NTK-aware scaling is plain RoPE with the base
``b·s^(d/(d−2))``, and ABF is plain RoPE with the adjusted base.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ._validation import (
    _describe,
    check_base,
    check_choice,
    check_dim,
    check_factor,
    check_int,
    check_positive,
)
from .extension import (
    EXTENSION_METHODS,
    NEEDS_ORIGINAL,
    check_options,
    extended_rope,
)

__all__ = [
    "HF_ROPE_TYPES",
    "format_hf_config",
    "hf_config_fields",
    "hf_legacy_rope_config",
    "hf_rope_parameters",
]

# The transformers rope_type each method is written as.
HF_ROPE_TYPES: dict[str, str] = {
    "none": "default",
    "abf": "default",
    "ntk": "default",
    "pi": "linear",
    "dynamic": "dynamic",
    "yarn": "yarn",
    "llama3": "llama3",
    "longrope": "longrope",
}


_YARN_KEYS = ("beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor", "truncate")


def _check_partial(value: object) -> float:
    value = check_positive(value, "partial_rotary_factor")
    if value > 1:
        raise ValueError(f"partial_rotary_factor must be in (0, 1], got {value}")
    return value


def hf_rope_parameters(
    method: str,
    *,
    dim: int,
    base: float = 10000.0,
    factor: float = 1.0,
    original_max_position: int | None = None,
    partial_rotary_factor: float | None = None,
    **options: Any,
) -> dict[str, Any]:
    """The transformers 5 ``rope_parameters`` dict for a context-extension method.

    Parameters
    ----------
    method : str
        ``"none"``, ``"pi"``, ``"ntk"``, ``"dynamic"``, ``"yarn"``, ``"llama3"``, ``"abf"`` or
        ``"longrope"`` (:data:`posenc_lib.extension.EXTENSION_METHODS`).
    dim : int
        Rotary dimension ``d`` (the number of rotated features per head; even). It enters the
        NTK base ``b·s^(d/(d−2))`` and the length of LongRoPE's lists.
    base : float
        The base ``b`` (finite, > 0); for ``"abf"`` the adjusted base, e.g. 500 000.
    factor : float
        Scale factor ``s`` (>= 1); ignored by ``"none"`` and ``"abf"``.
    original_max_position : int, optional
        Training context ``L_train``: required by ``"yarn"``, ``"llama3"``, ``"longrope"``
        (written as ``original_max_position_embeddings``). ``"dynamic"`` reads the config's
        ``max_position_embeddings`` instead (see :func:`hf_config_fields`).
    partial_rotary_factor : float, optional
        Fraction of the head that is rotated, in (0, 1] (GPT-NeoX: 0.25); copied into the dict.
    **options
        Per-method keys (:data:`posenc_lib.extension.METHOD_OPTIONS`), copied as given:
        ``beta_fast``, ``beta_slow``, ``truncate``, ``mscale``, ``mscale_all_dim``,
        ``attention_factor`` (YaRN); ``low_freq_factor``, ``high_freq_factor`` (Llama 3.1;
        defaults 1 and 4 are written out, since transformers requires them);
        ``short_factor``, ``long_factor``, ``attention_factor`` (LongRoPE).

    Returns
    -------
    dict
        JSON-ready: ``rope_type``, ``rope_theta`` and the method's keys.

    Raises
    ------
    ValueError, TypeError
        Unknown method or option, ``factor`` < 1, a base that is not a finite positive number,
        a missing ``original_max_position``, bad option values.
    """
    method = check_choice(method, "method", EXTENSION_METHODS)
    check_options(method, options)
    dim = check_dim(dim, minimum=4 if method in ("ntk", "dynamic") else 2)
    base = check_base(base)
    factor = check_factor(factor)
    if method in NEEDS_ORIGINAL and method != "dynamic" and original_max_position is None:
        raise ValueError(
            f"original_max_position (the training context L_train) is required for method "
            f"{method!r}, got None"
        )
    if original_max_position is not None:
        original_max_position = check_int(
            original_max_position, "original_max_position", minimum=1, what="a positive integer"
        )
    # The library computes the same spectrum: this validates every option's value at once.
    extended_rope(
        method, dim=dim, base=base, factor=factor,
        original_max_position=original_max_position or 1, **options,
    )
    theta = base
    if method == "ntk":
        theta = base * factor ** (dim / (dim - 2))
    out: dict[str, Any] = {"rope_type": HF_ROPE_TYPES[method], "rope_theta": float(theta)}
    if method in ("pi", "dynamic", "yarn", "llama3", "longrope"):
        out["factor"] = float(factor)
    if method in ("yarn", "llama3", "longrope"):
        out["original_max_position_embeddings"] = original_max_position
    if method == "llama3":
        out["low_freq_factor"] = float(options.get("low_freq_factor", 1.0))
        out["high_freq_factor"] = float(options.get("high_freq_factor", 4.0))
    elif method == "longrope":
        out["short_factor"] = [float(v) for v in options["short_factor"]]
        out["long_factor"] = [float(v) for v in options["long_factor"]]
        if "attention_factor" in options:
            out["attention_factor"] = float(options["attention_factor"])
    elif method == "yarn":
        for key in _YARN_KEYS:
            if key in options:
                value = options[key]
                out[key] = value if isinstance(value, bool) else float(value)
    if partial_rotary_factor is not None:
        out["partial_rotary_factor"] = _check_partial(partial_rotary_factor)
    return out


def hf_legacy_rope_config(
    method: str,
    *,
    dim: int,
    base: float = 10000.0,
    factor: float = 1.0,
    original_max_position: int | None = None,
    partial_rotary_factor: float | None = None,
    **options: Any,
) -> dict[str, Any]:
    """The transformers 4 form: ``{"rope_theta": …, "rope_scaling": {…} | None}``.

    Same arguments as :func:`hf_rope_parameters`. ``rope_scaling`` is ``None`` for the default
    rope type (``"none"``, ``"ntk"``, ``"abf"``); ``partial_rotary_factor``, when given, is a
    top-level key, as in transformers 4 configs such as Phi and StableLM.

    Returns
    -------
    dict
        ``rope_theta`` (float), ``rope_scaling`` (dict or None) and maybe
        ``partial_rotary_factor``.
    """
    params = hf_rope_parameters(
        method, dim=dim, base=base, factor=factor, original_max_position=original_max_position,
        partial_rotary_factor=partial_rotary_factor, **options,
    )
    theta = params.pop("rope_theta")
    partial = params.pop("partial_rotary_factor", None)
    out: dict[str, Any] = {
        "rope_theta": theta,
        "rope_scaling": None if params["rope_type"] == "default" else params,
    }
    if partial is not None:
        out["partial_rotary_factor"] = partial
    return out


def hf_config_fields(
    method: str,
    *,
    dim: int,
    base: float = 10000.0,
    factor: float = 1.0,
    original_max_position: int,
    max_position_embeddings: int | None = None,
    legacy: bool = False,
    partial_rotary_factor: float | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Everything RoPE needs in a ``config.json``: the rope block and ``max_position_embeddings``.

    ``max_position_embeddings`` defaults to ``round(s·L_train)`` (the context the model is
    configured for); real configs sometimes differ (Llama 3.1: 131 072 with ``s·L = 65 536``).
    For ``"dynamic"`` transformers reads it as the *training* length the dynamic factor is
    measured against, so there it must be ``L_train``.

    Parameters
    ----------
    method, dim, base, factor, partial_rotary_factor, **options
        As in :func:`hf_rope_parameters`.
    original_max_position : int
        Training context ``L_train`` (required here, for every method).
    max_position_embeddings : int, optional
        The configured context (>= 1); default ``round(s·L_train)``, or ``L_train`` for
        ``"dynamic"``.
    legacy : bool
        Write the transformers 4 form (:func:`hf_legacy_rope_config`) instead of
        ``rope_parameters``.

    Returns
    -------
    dict
        ``{"max_position_embeddings": int, "rope_parameters": {...}}`` or, with ``legacy``,
        ``{"max_position_embeddings": int, "rope_theta": float, "rope_scaling": ...}``.
    """
    if original_max_position is None:
        raise ValueError(
            "original_max_position (the training context L_train) is required, got None"
        )
    original_max_position = check_int(
        original_max_position, "original_max_position", minimum=1, what="a positive integer"
    )
    if not isinstance(legacy, bool):
        raise TypeError(f"legacy must be True or False, got {_describe(legacy)}")
    kwargs = dict(
        dim=dim, base=base, factor=factor, original_max_position=original_max_position,
        partial_rotary_factor=partial_rotary_factor, **options,
    )
    factor = check_factor(factor)
    length = (
        original_max_position if method == "dynamic"
        else round(factor * original_max_position)
    )
    if max_position_embeddings is not None:
        max_position_embeddings = check_int(
            max_position_embeddings, "max_position_embeddings", minimum=1,
            what="a positive integer",
        )
        if method == "dynamic" and max_position_embeddings != original_max_position:
            raise ValueError(
                "max_position_embeddings must equal original_max_position for method 'dynamic' "
                "(transformers reads it as the training length), got "
                f"{max_position_embeddings} != {original_max_position}"
            )
        length = max_position_embeddings
    out: dict[str, Any] = {"max_position_embeddings": length}
    if legacy:
        out.update(hf_legacy_rope_config(method, **kwargs))
    else:
        out["rope_parameters"] = hf_rope_parameters(method, **kwargs)
    return out


def format_hf_config(fields: dict[str, Any], *, max_list: int | None = None) -> str:
    """The fields as the lines of a ``config.json`` (JSON, two-space indent).

    Parameters
    ----------
    fields : dict
        From :func:`hf_config_fields` (or either rope function).
    max_list : int, optional
        Show longer lists (LongRoPE's factors) as their first ``max_list − 1`` values, the
        count, and the last value, rounded to 3 decimals (for display; not valid JSON).

    Returns
    -------
    str
    """
    if not isinstance(fields, dict):
        raise TypeError(f"fields must be a dict, got {_describe(fields)}")
    if not fields:
        raise ValueError(
            "fields must not be empty: pass the config fields of hf_config_fields() (or of "
            "hf_rope_parameters / hf_legacy_rope_config), e.g. {'rope_theta': 10000.0}"
        )
    if max_list is not None:
        max_list = check_int(max_list, "max_list", minimum=2)
    text = json.dumps(fields, indent=2, allow_nan=False)
    if max_list is None:
        return _compact_lists(text)
    short = _abbreviate(fields, max_list)
    text = json.dumps(short, indent=2, allow_nan=False, ensure_ascii=False)
    return re.sub(r'"(… \d+ values …)"', r"\1", _compact_lists(text))


def _abbreviate(value: Any, max_list: int) -> Any:
    if isinstance(value, dict):
        return {k: _abbreviate(v, max_list) for k, v in value.items()}
    if isinstance(value, list) and len(value) > max_list:
        head = [round(v, 3) for v in value[: max_list - 1]]
        return [*head, f"… {len(value)} values …", round(value[-1], 3)]
    return value


def _compact_lists(text: str) -> str:
    """Put each JSON list of numbers on one line."""
    lines = text.split("\n")
    out: list[str] = []
    buffer: list[str] | None = None
    for line in lines:
        stripped = line.strip()
        if buffer is None and stripped.endswith("[") and not stripped.endswith("[]"):
            buffer = [line.rstrip()]
            continue
        if buffer is not None:
            if stripped.startswith("]"):
                items = ", ".join(s.rstrip(",") for s in buffer[1:])
                out.append(f"{buffer[0]}{items}{stripped}")
                buffer = None
            else:
                buffer.append(stripped)
            continue
        out.append(line)
    return "\n".join(out)


# --- Per-layer rope_parameters and proportional RoPE (transformers 5; chapter 10) ---------------

__all__ += ["hf_nested_rope_parameters", "hf_proportional_rope_parameters"]

#: rope_type values transformers 5 reads, including Gemma 4's "proportional".
HF_LAYER_ROPE_TYPES: tuple[str, ...] = (
    "default", "linear", "dynamic", "yarn", "llama3", "longrope", "proportional",
)


def hf_proportional_rope_parameters(
    *, base: float = 1000000.0, partial_rotary_factor: float = 0.25, factor: float = 1.0
) -> dict[str, Any]:
    """The ``rope_parameters`` of Gemma 4's ``proportional`` RoPE (global layers).

    transformers computes ``θ_i = base^(−2i/head_dim)/factor`` for the first
    ``int(partial_rotary_factor·head_dim // 2)`` pairs and 0 for the rest
    (:func:`posenc_lib.architectures.proportional_inv_freq`): the same exponents as full-head
    RoPE, the low frequencies switched off. Not the same as ``partial_rotary_factor`` with the
    ``default`` type (GPT-NeoX), which spreads all exponents over the smaller rotated block.

    Parameters
    ----------
    base : float
        ``rope_theta`` (finite, > 0); Gemma 4's global layers: 1 000 000.
    partial_rotary_factor : float
        Share of the pairs that turn, in (0, 1]; Gemma 4: 0.25.
    factor : float
        Divides every frequency (>= 1; 1 writes no ``factor`` key).

    Returns
    -------
    dict
        ``{"rope_type": "proportional", "rope_theta": …, "partial_rotary_factor": …}``.
    """
    out: dict[str, Any] = {
        "rope_type": "proportional",
        "rope_theta": check_base(base),
        "partial_rotary_factor": _check_partial(partial_rotary_factor),
    }
    factor = check_factor(factor)
    if factor != 1.0:
        out["factor"] = factor
    return out


def hf_nested_rope_parameters(per_layer_type: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``rope_parameters`` nested by layer type, as Gemma 3/4 and OLMo 3 configs hold them.

    Each value is a flat block (from :func:`hf_rope_parameters` or
    :func:`hf_proportional_rope_parameters`); the keys must be the config's ``layer_types`` names
    (``"sliding_attention"``, ``"full_attention"``, ``"chunked_attention"``), since transformers
    treats ``rope_parameters`` as nested only when its keys are among them.

    Parameters
    ----------
    per_layer_type : dict
        ``{layer_type: rope block}``; at least one entry.

    Returns
    -------
    dict
        A copy, each block checked (a known ``rope_type``, a finite positive ``rope_theta``).

    Raises
    ------
    TypeError, ValueError
        Not a dict of dicts, an empty dict, a layer-type name that is not a non-empty string,
        a block without a known ``rope_type`` or a valid ``rope_theta``.
    """
    if not isinstance(per_layer_type, dict) or not per_layer_type:
        raise TypeError(
            "per_layer_type must be a non-empty dict {layer_type: rope block}, got "
            f"{_describe(per_layer_type)}"
        )
    out: dict[str, Any] = {}
    for layer_type, block in per_layer_type.items():
        if not isinstance(layer_type, str) or not layer_type:
            raise TypeError(
                f"per_layer_type keys must be layer-type names, got {_describe(layer_type)}"
            )
        if not isinstance(block, dict):
            raise TypeError(
                f"per_layer_type[{layer_type!r}] must be a rope block dict, got "
                f"{_describe(block)}"
            )
        check_choice(block.get("rope_type"), f"per_layer_type[{layer_type!r}]['rope_type']",
                     HF_LAYER_ROPE_TYPES)
        check_base(block.get("rope_theta"), f"per_layer_type[{layer_type!r}]['rope_theta']")
        out[layer_type] = dict(block)
    return out
