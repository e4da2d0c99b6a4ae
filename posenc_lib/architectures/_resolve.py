"""Read a config the way the model does: the file, the model's own config object, its defaults.

A ``config.json`` states only what differs from the model class's defaults (Gemma 3 27B's
``text_config`` has no ``rope_theta``: the class fills 1 000 000 for the global layers). So when
transformers is installed, :func:`resolve` builds the model's own config object
(``AutoConfig.for_model(model_type, **json)``), unwraps a multimodal wrapper to its text model
(``get_text_config``) and reads every value from that object; a position value the file leaves
out and the class fills is named in :attr:`Resolved.notes` (:func:`provenance_notes`). Without
transformers it reads the dict as written; ``position_plan`` then refuses a config whose missing
key would change the spectrum unseen (``rope_theta``; ``head_dim`` where the class fixes one;
a LongRoPE block's original length; a llama3 block's factors) and names every other key it
had to default.

:func:`load_config` turns a path, a model folder or a Hub model id into a dict or config object,
with one-line errors that name the file and the problem.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._validation import _describe

__all__ = ["Resolved", "check_config_dict", "load_config", "provenance_notes", "resolve",
           "transformers_or_none"]


def _error_line(err: BaseException) -> str:
    """The line of an error that says what is wrong.

    transformers' validation errors open with a header (``Class validation error for validator
    'validate_rope':``) and give the problem on a later line
    (``ValueError: ... short_factor field must have length 48, got 64``): keep that one.
    """
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    if not lines:
        return type(err).__name__
    last = lines[-1]
    for prefix in ("ValueError: ", "TypeError: ", "KeyError: "):
        if last.startswith(prefix):
            last = last[len(prefix):]
    return last if len(lines) == 1 else f"{lines[0].rstrip(':')}: {last}"


def transformers_or_none() -> Any:
    """The ``transformers`` module, or None when it is not installed."""
    try:
        import transformers
    except ImportError:  # pragma: no cover - the test environment has it
        return None
    return transformers


@dataclass
class Resolved:
    """A config read for planning.

    Attributes
    ----------
    cfg : dict
        Every key the plan reads (the config object's ``to_dict()`` when transformers built it).
    hf_config : object or None
        transformers' config object of the text model, when transformers is installed.
    model_type : str
        The text model's type (``gemma3_text`` for a ``gemma3`` wrapper).
    notes : list of str
        What the reader should know: a wrapper unwrapped, a type read as another, keys defaulted.
    """

    cfg: dict[str, Any]
    hf_config: Any
    model_type: str
    notes: list[str] = field(default_factory=list)


def _hub_offline() -> bool:
    """Whether ``HF_HUB_OFFLINE`` is set to a true value (huggingface_hub then reads only its
    local cache, so a Hub id that is not cached fails at once instead of retrying)."""
    import os

    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def load_config(source: str | Path) -> Any:
    """A ``config.json`` path, a model folder or a Hub model id → a dict (or a config object).

    Parameters
    ----------
    source : str or Path
        A JSON file, a folder holding ``config.json``, or (transformers installed, network
        available) a Hub model id such as ``google/gemma-3-27b-it``. With ``HF_HUB_OFFLINE=1``
        a Hub id is read from the local Hub cache only, and fails at once when not cached.

    Returns
    -------
    dict or transformers config
        The parsed JSON object, checked by :func:`check_config_dict`; a Hub id gives the config
        object ``AutoConfig.from_pretrained`` returns.

    Raises
    ------
    ValueError
        One line naming the file and the problem: missing, empty, not UTF-8, not JSON, not a
        JSON object, or a value the plan cannot use (see :func:`check_config_dict`).
    """
    if not isinstance(source, (str, Path)):
        raise TypeError(f"source must be a path or a model id string, got {_describe(source)}")
    path = Path(source)
    if path.is_dir():
        path = path / "config.json"
        if not path.is_file():
            raise ValueError(f"{source}: folder has no config.json")
    elif not path.exists():
        text = str(source)
        hub_like = text.count("/") == 1 and not text.endswith(".json") and not text.startswith(".")
        if not hub_like:
            raise ValueError(f"{source}: no such file or folder")
        transformers = transformers_or_none()
        if transformers is None:
            raise ValueError(f"{source}: no such file, and transformers (needed for a Hub id) "
                             "is not installed")
        try:
            return transformers.AutoConfig.from_pretrained(text)
        except Exception as err:
            first = _error_line(err)
            hint = "" if _hub_offline() else (
                "; without a network, HF_HUB_OFFLINE=1 makes this fail at once")
            raise ValueError(f"{source}: not a local file and not loadable from the Hub "
                             f"({first}){hint}") from None
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise ValueError(f"{path}: cannot be read ({err.strerror or err})") from None
    if not raw.strip():
        raise ValueError(f"{path}: the file is empty (expected a config.json object)")
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff") or (len(raw) > 1 and (raw[0] == 0 or raw[1] == 0)):
        raise ValueError(f"{path}: the file is UTF-16 encoded; save it as UTF-8")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text (byte {err.start}); save it as UTF-8") from None
    try:
        config = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({err.msg} at line {err.lineno} column "
                         f"{err.colno})") from None
    if not isinstance(config, dict):
        raise ValueError(f"{path}: the JSON must be an object (a config), got "
                         f"{type(config).__name__}")
    check_config_dict(config, where=str(path))
    return config


def _rope_blocks(cfg: Mapping[str, Any], prefix: str) -> list[tuple[str, Mapping[str, Any]]]:
    blocks: list[tuple[str, Mapping[str, Any]]] = []
    for key in ("rope_parameters", "rope_scaling"):
        block = cfg.get(key)
        if isinstance(block, Mapping):
            nested = [(f"{prefix}{key}.{k}", v) for k, v in block.items() if isinstance(v, Mapping)]
            blocks += nested or [(f"{prefix}{key}", block)]
    return blocks


def check_config_dict(cfg: Mapping[str, Any], *, where: str = "config") -> None:
    """Refuse the values that would make a plan silently wrong.

    ``rope_theta`` (top level or in a rope block) must be a finite number > 0; a ``yarn``,
    ``linear``, ``dynamic`` or ``llama3`` block must give ``factor``. A nested ``text_config``
    is checked too.

    Raises
    ------
    ValueError
        Naming ``where`` and the key.
    """
    for prefix, sub in (("", cfg), ("text_config.", cfg.get("text_config"))):
        if not isinstance(sub, Mapping):
            continue
        places = [(f"{prefix}rope_theta", sub)] if "rope_theta" in sub else []
        for name, block in _rope_blocks(sub, prefix):
            if "rope_theta" in block:
                places.append((f"{name}.rope_theta", block))
            kind = block.get("rope_type", block.get("type"))
            if kind in ("yarn", "linear", "dynamic", "llama3") and block.get("factor") is None:
                raise ValueError(f"{where}: {name} is rope_type {kind!r} but has no 'factor'")
        for name, holder in places:
            value = holder["rope_theta"]
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not ok or not math.isfinite(value) or value <= 0:
                raise ValueError(f"{where}: {name} must be a number > 0, got {value!r}")


_WRAPPER_KEYS = ("text_config", "language_config", "llm_config")


def _text_type_from_architectures(transformers: Any, cfg: Mapping[str, Any]) -> str | None:
    """A type transformers does not know, read through its ``architectures`` class name."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_MAPPING_NAMES,
    )

    for arch in cfg.get("architectures") or ():
        for mapping in (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, MODEL_MAPPING_NAMES):
            for model_type, name in mapping.items():
                names = name if isinstance(name, (tuple, list)) else (name,)
                if arch in names:
                    return model_type
    return None


def resolve(config: object) -> Resolved:
    """The text model's complete config, as the model itself would read it.

    Parameters
    ----------
    config : dict or transformers config
        A ``config.json`` dict (flat, or a multimodal wrapper with a nested text config) or a
        config object.

    Returns
    -------
    Resolved

    Raises
    ------
    TypeError
        Neither a mapping nor a config object.
    ValueError
        No ``model_type``; a value :func:`check_config_dict` refuses; transformers cannot build
        the config (its message, one line).
    """
    transformers = transformers_or_none()
    notes: list[str] = []
    if isinstance(config, Mapping):
        raw = dict(config)
        check_config_dict(raw)
        model_type = raw.get("model_type")
        if not isinstance(model_type, str):
            raise ValueError(f"config has no model_type string, got {model_type!r}")
        if transformers is None:
            return _resolve_without_transformers(raw, notes)
        from transformers import CONFIG_MAPPING

        if model_type not in CONFIG_MAPPING:
            known = _text_type_from_architectures(transformers, raw)
            if known is None:
                raise ValueError(
                    f"model_type {model_type!r} is not known to transformers "
                    f"{transformers.__version__}, and its architectures "
                    f"{raw.get('architectures')!r} name no class it knows"
                )
            notes.append(f"model_type {model_type!r} is not in transformers "
                         f"{transformers.__version__}; read as {known!r} "
                         f"(architectures {raw.get('architectures')})")
            model_type = known
        # a deep copy: the config class fills nested blocks in place, and the file as written
        # must stay as written (for the caller, and for provenance_notes)
        kwargs = copy.deepcopy(
            {k: v for k, v in raw.items() if k not in ("model_type", "auto_map")}
        )
        verbosity = transformers.logging.get_verbosity()
        transformers.logging.set_verbosity_error()
        try:
            hf = transformers.AutoConfig.for_model(model_type, **kwargs)
        except Exception as err:
            pattern = kwargs.get("sliding_window_pattern")
            if isinstance(err, TypeError) and isinstance(pattern, str):
                raise ValueError(
                    f"transformers {transformers.__version__} cannot build a {model_type!r} "
                    f"config with the string sliding_window_pattern {pattern!r} (its class "
                    "computes layer_types with `%`, which needs an int); write layer_types, "
                    "or the pattern's period as an int") from None
            first = _error_line(err)
            raise ValueError(f"transformers cannot build a {model_type!r} config from this "
                             f"dict: {first}") from None
        finally:
            transformers.logging.set_verbosity(verbosity)
    elif hasattr(config, "to_dict") and callable(config.to_dict):
        hf = config
    else:
        raise TypeError(
            "config must be a transformers config object or a config.json dict, "
            f"got {_describe(config)}"
        )
    outer = getattr(hf, "model_type", None)
    text = hf.get_text_config(decoder=True) if hasattr(hf, "get_text_config") else hf
    if text is not hf:
        notes.append(f"{outer!r} wraps a text model: planning its {text.model_type!r} config")
    cfg = dict(text.to_dict())
    # to_dict() may write a value as given, before the class rewrote it (EmbeddingGemma's
    # bidirectional window is halved in __post_init__): the object's attributes win.
    for key, value in list(cfg.items()):
        try:
            current = getattr(text, key, value)
        except Exception:
            continue
        if isinstance(current, (int, float, str, bool, list, dict, type(None))):
            cfg[key] = current
    for key, kind in (("num_hidden_layers", int), ("layers_block_type", list)):
        # properties that to_dict() drops (Nemotron-H derives both from its layer pattern;
        # Bamba its block types from attn_layer_indices, all Mamba when there are none)
        if cfg.get(key) is None:
            try:
                value = getattr(text, key, None)
            except Exception:
                value = None
            if isinstance(value, kind) and not isinstance(value, bool):
                cfg[key] = value
    cfg["model_type"] = text.model_type
    if isinstance(config, Mapping):
        raw_text: Mapping[str, Any] = config
        if text is not hf:
            raw_text = next((config[k] for k in _WRAPPER_KEYS
                             if isinstance(config.get(k), Mapping)), config)
        notes += provenance_notes(raw_text, cfg, type(text).__name__)
    return Resolved(cfg=cfg, hf_config=text, model_type=text.model_type, notes=notes)


# Position keys a class may fill when the file leaves them out (transformers 5.25).
_PROVENANCE_KEYS = ("head_dim", "sliding_window", "attention_chunk_size", "partial_rotary_factor",
                    "rope_interleave", "no_rope_layers", "qk_rope_head_dim")
# The file's names for the width and the head count (GPT-2 / Falcon spellings too).
_HIDDEN_NAMES = ("hidden_size", "n_embd", "d_model", "dim")
_HEADS_NAMES = ("num_attention_heads", "n_head", "num_heads", "n_heads")
# The file's names for the rotary fraction (GPT-NeoX / Pythia write rotary_pct; GPT-J rotary_dim).
_PARTIAL_NAMES = ("partial_rotary_factor", "rotary_pct", "rotary_dim")


def _written_anywhere(raw: Mapping[str, Any], names: tuple[str, ...]) -> bool:
    """Whether the file gives one of ``names`` at its top level or in a rope block."""
    blocks: list[Any] = [raw, raw.get("rope_parameters"), raw.get("rope_scaling")]
    for block in list(blocks[1:]):
        if isinstance(block, Mapping):
            blocks += [v for v in block.values() if isinstance(v, Mapping)]
    return any(isinstance(b, Mapping) and b.get(name) is not None
               for b in blocks for name in names)


def _fmt(value: Any) -> str:
    """A value as the printed plan writes it: ``150 000``, ``0.4``; a list by its length."""
    from ._plan import _number

    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _number(value)
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return repr(value)


def _bases_in(node: Any) -> set[float]:
    """Every base the file writes, under any name that holds one: ``rope_theta`` and its
    per-layer-type spellings (ModernBERT's ``global_rope_theta``/``local_rope_theta``),
    ``rope_local_base_freq`` (Gemma 3), ``rotary_emb_base`` (GPT-NeoX), ``rope_base``."""
    found: set[float] = set()
    if isinstance(node, Mapping):
        for key, value in node.items():
            is_base = "rope_theta" in str(key) or key in (
                "rope_local_base_freq", "rotary_emb_base", "rope_base")
            if is_base and isinstance(value, (int, float)) and not isinstance(value, bool):
                found.add(float(value))
            elif isinstance(value, Mapping):
                found |= _bases_in(value)
    return found


def _derived_head_dim(cfg: Mapping[str, Any]) -> int | None:
    hidden, heads = cfg.get("hidden_size"), cfg.get("num_attention_heads")
    if isinstance(hidden, int) and isinstance(heads, int) and heads > 0:
        return hidden // heads
    return None


def provenance_notes(raw: Mapping[str, Any], cfg: Mapping[str, Any], owner: str) -> list[str]:
    """Name the position values the resolved config has but the file does not give.

    With transformers, a key the file leaves out is filled by the model's config class
    (Gemma 3's global ``rope_theta`` 1e6 from ``Gemma3TextConfig``); this says so, e.g.
    ``rope_theta = 1e6 from Gemma3TextConfig (not in the file)``.

    Parameters
    ----------
    raw : mapping
        The text model's part of the file as written.
    cfg : mapping
        The resolved config (``to_dict()`` of the class, attributes winning).
    owner : str
        The config class's name, for the note.

    Returns
    -------
    list of str
        One note per filled value (bases by value: a base the file gives nowhere; the head size
        when ``hidden_size / num_attention_heads`` uses a class default).
    """
    notes: list[str] = []
    written = _bases_in(raw)
    params = cfg.get("rope_parameters")
    blocks: list[tuple[str, Mapping[str, Any]]] = []
    if isinstance(params, Mapping):
        nested = [(f"rope_parameters.{k}.", v) for k, v in params.items()
                  if isinstance(v, Mapping)]
        blocks = nested or [("", params)]
    theta = cfg.get("rope_theta")
    seen: set[float] = set()
    for prefix, block in blocks or [("", {"rope_theta": theta})]:
        value = block.get("rope_theta")
        if isinstance(value, (int, float)) and float(value) not in written | seen:
            seen.add(float(value))
            notes.append(f"{prefix}rope_theta = {_fmt(float(value))} from {owner} "
                         "(not in the file)")
    raw_blocks = [b for k in ("rope_parameters", "rope_scaling")
                  if isinstance(b := raw.get(k), Mapping)]
    raw_original = raw.get("original_max_position_embeddings") is not None or any(
        isinstance(b, Mapping) and (b.get("original_max_position_embeddings") is not None or any(
            isinstance(v, Mapping) and v.get("original_max_position_embeddings") is not None
            for v in b.values()))
        for b in raw_blocks
    )
    for prefix, block in blocks:
        kind = block.get("rope_type")
        original = block.get("original_max_position_embeddings")
        if kind in ("yarn", "llama3", "longrope") and original is not None and not raw_original:
            notes.append(f"{prefix or 'rope_parameters.'}original_max_position_embeddings = "
                         f"{_fmt(original)} from {owner} (not in the file)")
    from ._families import _YARN_DEFAULTS

    for prefix, block in blocks:
        partial = block.get("partial_rotary_factor")
        if (isinstance(partial, (int, float)) and float(partial) != 1.0
                and not _written_anywhere(raw, _PARTIAL_NAMES)):
            notes.append(f"{prefix or 'rope_parameters.'}partial_rotary_factor = {_fmt(partial)} "
                         f"from {owner} (not in the file)")
        if block.get("rope_type") == "yarn":
            missing = [f"{key} = {_fmt(value)}" for key, value in _YARN_DEFAULTS.items()
                       if block.get(key) is None and not _written_anywhere(raw, (key,))]
            if missing:
                which = "default" if len(missing) == 1 else "defaults"
                notes.append(f"{prefix or 'rope_parameters.'}" + ", ".join(missing)
                             + f" (transformers' YaRN {which}; not in the file)")
    for key in _PROVENANCE_KEYS:
        value = cfg.get(key)
        if value in (None, [], False) or raw.get(key) not in (None, []):
            continue
        if key == "head_dim" and (cfg.get("qk_rope_head_dim") or _derived_head_dim(cfg) == value):
            continue  # hidden_size / num_attention_heads, as without the class; MLA: unused
        notes.append(f"{key} = {_fmt(value)} from {owner} (not in the file)")
    derived = _derived_head_dim(cfg)
    if (derived is not None and cfg.get("head_dim") in (None, derived)
            and raw.get("head_dim") is None and not cfg.get("qk_rope_head_dim")):
        unwritten = [names[0] for names in (_HIDDEN_NAMES, _HEADS_NAMES)
                     if not any(raw.get(name) == cfg[names[0]] for name in names)]
        if unwritten:
            notes.append(f"head size {derived} = hidden_size {cfg['hidden_size']} / "
                         f"num_attention_heads {cfg['num_attention_heads']}, with "
                         f"{' and '.join(unwritten)} from {owner} (not in the file)")
    file_window = raw.get("sliding_window")
    if (isinstance(file_window, int) and not isinstance(file_window, bool)
            and cfg.get("sliding_window") is None):
        why = " (use_sliding_window is false)" if raw.get("use_sliding_window") is False else ""
        notes.append(f"sliding_window = {_fmt(file_window)} in the file is not applied: {owner} "
                     f"sets the window to None{why}")
    types = cfg.get("layer_types")
    if (isinstance(types, list) and len(set(types)) > 1 and not raw.get("layer_types")
            and raw.get("sliding_window_pattern") is None):
        notes.append(f"layer_types ({types.count('full_attention')} of {len(types)} layers "
                     f"full_attention) from {owner} (not in the file)")
    return notes


def _resolve_without_transformers(raw: dict[str, Any], notes: list[str]) -> Resolved:
    from ._families import TEXT_TYPES

    cfg = raw
    model_type = raw["model_type"]
    if model_type in TEXT_TYPES:
        inner = next((raw[k] for k in _WRAPPER_KEYS if isinstance(raw.get(k), Mapping)), None)
        cfg = dict(inner) if inner is not None else dict(raw)
        cfg.setdefault("model_type", TEXT_TYPES[model_type])
        notes.append(f"{model_type!r} wraps a text model: planning its "
                     f"{cfg['model_type']!r} config")
    notes.append("transformers is not installed: the config is read as written, and every "
                 "key the plan had to default is named below")
    return Resolved(cfg=cfg, hf_config=None, model_type=cfg["model_type"], notes=notes)
