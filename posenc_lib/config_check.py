"""Read a pasted ``config.json`` the way the RoPE calculator explains it: keys, method, problems.

:func:`check_rope_config` takes a model's ``config.json`` (a JSON string or a dict), finds the
RoPE keys in either transformers form (``rope_parameters``, or ``rope_theta`` + ``rope_scaling``,
or GPT-NeoX's ``rotary_emb_base``/``rotary_pct``), lists what is missing or inconsistent, and —
when transformers is installed — asks transformers' own ``ROPE_INIT_FUNCTIONS`` for the inverse
frequencies and attention factor it would use, with the warnings it prints.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass, field
from typing import Any

import torch

__all__ = ["ROPE_TYPES", "RopeConfigReport", "check_rope_config", "model_rope"]

#: The ``rope_type`` values transformers reads for a language model's RoPE.
ROPE_TYPES: tuple[str, ...] = ("default", "linear", "dynamic", "yarn", "longrope", "llama3")
_NEEDS_FACTOR = ("linear", "dynamic", "yarn", "llama3")
_NEEDS_ORIGINAL = ("yarn", "llama3", "longrope")


@dataclass
class RopeConfigReport:
    """What :func:`check_rope_config` found.

    Attributes
    ----------
    found : dict
        The RoPE-related keys of the config and their values (dotted paths for nested keys).
    rope_type : str
        The method transformers would use (``"default"`` without scaling).
    head_dim, rotary_dim : int
        Head size and rotated features per head.
    base : float
        ``rope_theta``.
    factor : float or None
        The scaling factor, when given.
    original, context : int or None
        ``original_max_position_embeddings`` and ``max_position_embeddings``.
    problems : list of str
        Missing or inconsistent keys, each with what transformers would do instead.
    inv_freq : torch.Tensor or None
        Shape ``(rotary_dim/2,)``: transformers' inverse frequencies (None without transformers
        or when transformers rejects the config).
    attention_factor : float or None
        transformers' factor on cos and sin.
    transformers_messages : list of str
        Warnings or the error transformers produced for this block.
    notes : list of str
        Remarks that flag nothing the config gets wrong: style (the legacy key ``"type"``,
        which transformers 5 reads as ``rope_type``) and conditional reminders (``dynamic``
        reads ``max_position_embeddings`` as the training length, which the config cannot say).
    """

    found: dict[str, Any]
    rope_type: str
    head_dim: int
    rotary_dim: int
    base: float
    factor: float | None
    original: int | None
    context: int | None
    problems: list[str] = field(default_factory=list)
    inv_freq: torch.Tensor | None = None
    attention_factor: float | None = None
    transformers_messages: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """A few lines for a reader: the method, the numbers, every problem, then the notes."""
        lines = [
            f"RoPE keys found: {', '.join(self.found) or 'none'}",
            f"method: {self.rope_type}; head size {self.head_dim}, rotated {self.rotary_dim}; "
            f"base {self.base:g}; factor {self.factor}; original {self.original}; "
            f"max_position_embeddings {self.context}",
        ]
        if self.inv_freq is not None:
            lines.append(
                f"transformers: inv_freq {self.inv_freq[0].item():.4g} … "
                f"{self.inv_freq[-1].item():.4g}, attention factor {self.attention_factor:.4f}"
            )
        lines += [f"transformers says: {m}" for m in self.transformers_messages]
        lines += [f"problem: {p}" for p in self.problems] or ["no problems found"]
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def _load(config: dict | str) -> dict:
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except json.JSONDecodeError as err:
            raise ValueError(f"config must be valid JSON: {err}") from None
    if not isinstance(config, dict):
        raise TypeError(
            f"config must be a dict or a JSON object string, got {type(config).__name__}"
        )
    if isinstance(config.get("text_config"), dict):
        return config["text_config"]  # multimodal configs (Gemma 3) keep the language model here
    return config


def _build(cfg: dict) -> tuple[Any, list[str], str | None]:
    """``AutoConfig.for_model(model_type, **cfg)`` with its log records, or the error it raised."""
    try:
        from transformers import AutoConfig
    except ImportError:  # pragma: no cover - transformers is a book dependency
        return None, [], None
    root = logging.getLogger("transformers")
    collect, saved = _Collect(), root.handlers[:]
    root.handlers = [collect]
    try:
        fields = {k: v for k, v in cfg.items() if k != "model_type"}
        built = AutoConfig.for_model(str(cfg["model_type"]), **fields)
        return built, collect.messages, None
    except Exception as err:
        return None, collect.messages, f"{type(err).__name__}: {err}"
    finally:
        root.handlers = saved


def check_rope_config(config: dict | str) -> RopeConfigReport:
    """Check a ``config.json`` for RoPE: what it says, what is wrong, what transformers does.

    Parameters
    ----------
    config : dict or str
        The parsed ``config.json``, or its text. A multimodal config's ``text_config`` is used when
        the top level has no RoPE keys.

    Returns
    -------
    RopeConfigReport

    Raises
    ------
    TypeError
        If ``config`` is neither a dict nor a JSON object string.
    ValueError
        If the JSON is invalid, or the head size cannot be determined (``head_dim``, or
        ``hidden_size`` with ``num_attention_heads``), or a RoPE value is not a number.
    """
    cfg = _load(config)
    found: dict[str, Any] = {}
    problems: list[str] = []
    notes: list[str] = []
    for key in (
        "head_dim",
        "hidden_size",
        "num_attention_heads",
        "max_position_embeddings",
        "rope_theta",
        "rotary_emb_base",
        "partial_rotary_factor",
        "rotary_pct",
    ):
        if key in cfg:
            found[key] = cfg[key]
    if "head_dim" in cfg and cfg["head_dim"] is not None:
        head_dim = int(_number(cfg["head_dim"], "head_dim"))
    elif "hidden_size" in cfg and "num_attention_heads" in cfg:
        heads = int(_number(cfg["num_attention_heads"], "num_attention_heads"))
        if heads < 1:
            raise ValueError(f"num_attention_heads must be >= 1, got {heads}")
        head_dim = int(_number(cfg["hidden_size"], "hidden_size")) // heads
    else:
        raise ValueError(
            "cannot determine the head size: the config needs head_dim, or "
            "hidden_size and num_attention_heads"
        )
    if head_dim < 2:
        raise ValueError(f"the head size must be >= 2, got {head_dim}")

    params: dict[str, Any] = {}
    if isinstance(cfg.get("rope_parameters"), dict):
        params = dict(cfg["rope_parameters"])
        if isinstance(params.get("full_attention"), dict):  # per layer type (Gemma 3, OLMo 3)
            params = dict(params["full_attention"])
        found.update({f"rope_parameters.{k}": v for k, v in params.items()})
    elif isinstance(cfg.get("rope_scaling"), dict):
        params = dict(cfg["rope_scaling"])
        found.update({f"rope_scaling.{k}": v for k, v in params.items()})
    elif cfg.get("rope_scaling") is not None:
        raise ValueError(f"rope_scaling must be an object or null, got {cfg['rope_scaling']!r}")
    if "rope_type" not in params and "type" in params:
        params["rope_type"] = params["type"]
        notes.append(
            "rope_scaling uses the old key 'type'; transformers 5 reads it as rope_type, "
            "but write 'rope_type'"
        )
    rope_type = str(params.get("rope_type", "default"))
    if rope_type not in ROPE_TYPES:
        problems.append(
            f"rope_type {rope_type!r} is not one of {ROPE_TYPES}: transformers refuses it"
        )

    base_value = params.get("rope_theta", cfg.get("rope_theta", cfg.get("rotary_emb_base")))
    if base_value is None:
        problems.append("no rope_theta: transformers uses its class default (10 000 for Llama)")
        base_value = 10000.0
    base = _number(base_value, "rope_theta")
    share = params.get(
        "partial_rotary_factor", cfg.get("partial_rotary_factor", cfg.get("rotary_pct", 1.0))
    )
    share = _number(share if share is not None else 1.0, "partial_rotary_factor")
    if not 0 < share <= 1:
        raise ValueError(f"partial_rotary_factor must be in (0, 1], got {share}")
    rotary_dim = int(head_dim * share)

    factor = params.get("factor")
    factor = None if factor is None else _number(factor, "factor")
    original = params.get(
        "original_max_position_embeddings", cfg.get("original_max_position_embeddings")
    )
    original = (
        None if original is None else int(_number(original, "original_max_position_embeddings"))
    )
    context = cfg.get("max_position_embeddings")
    context = None if context is None else int(_number(context, "max_position_embeddings"))

    if rope_type in _NEEDS_FACTOR and factor is None:
        problems.append(f"{rope_type} needs a 'factor'")
    if factor is not None and factor < 1:
        problems.append(f"factor {factor:g} < 1 compresses nothing: it stretches the spectrum")
    if rope_type in _NEEDS_ORIGINAL and original is None:
        what = (
            "measures the ramp against max_position_embeddings (the long context), another spectrum"
            if rope_type == "yarn"
            else "cannot place the switch or the bands"
        )
        problems.append(
            f"{rope_type} without original_max_position_embeddings: transformers {what}"
        )
    if (
        factor is not None
        and original
        and context
        and rope_type in ("yarn", "longrope")
        and not math.isclose(factor, context / original, rel_tol=1e-6)
    ):
        problems.append(
            f"factor {factor:g} differs from max_position_embeddings/original = "
            f"{context / original:g}: transformers 5 uses the factor; some 4.x releases "
            "used the ratio (transformers #38224)"
        )
    dynamic_too_long = bool(rope_type == "dynamic" and original and context and context > original)
    if dynamic_too_long:
        problems.append(
            "dynamic: max_position_embeddings must be the training length; set to the "
            "target length it switches the scaling off until that length"
        )
    if rope_type == "longrope":
        for key in ("short_factor", "long_factor"):
            values = params.get(key)
            if not isinstance(values, list) or len(values) != rotary_dim // 2:
                problems.append(
                    f"longrope needs {key} as a list of rotary_dim/2 = {rotary_dim // 2} numbers"
                )
    if rope_type == "llama3":
        low, high = params.get("low_freq_factor"), params.get("high_freq_factor")
        if low is None or high is None:
            problems.append("llama3 needs low_freq_factor and high_freq_factor")
        elif not _number(low, "low_freq_factor") < _number(high, "high_freq_factor"):
            problems.append("llama3 needs low_freq_factor < high_freq_factor")
    if rope_type == "yarn" and "beta_fast" in params and "beta_slow" in params:
        if not _number(params["beta_fast"], "beta_fast") > _number(
            params["beta_slow"], "beta_slow"
        ):
            problems.append("yarn needs beta_fast > beta_slow")

    if rope_type == "dynamic" and context and not dynamic_too_long:
        # A reminder, not a problem: the config cannot say whether this is the training length.
        notes.append(
            f"dynamic reads max_position_embeddings ({context}) as the training length and "
            "scales only beyond it: if that is the target length, scaling never starts"
        )

    report = RopeConfigReport(
        found, rope_type, head_dim, rotary_dim, base, factor, original, context, problems
    )
    report.notes = notes
    if "model_type" in cfg:
        _ask_model(report, cfg)
    elif rope_type in ROPE_TYPES:
        _ask_transformers(report, params)
    return report


def _ask_model(report: RopeConfigReport, cfg: dict) -> None:
    """Read the RoPE off the model's own config class and rotary module (what it will run)."""
    built, messages, error = _build(cfg)
    report.transformers_messages = list(messages)
    if built is None:
        if error is not None:
            report.transformers_messages.append(error)
            report.problems.append(f"transformers rejects this config ({error})")
        return
    rope = dict(getattr(built, "rope_parameters", None) or {})
    if isinstance(rope.get("full_attention"), dict):  # per layer type (Gemma 3, OLMo 3)
        for layer, values in rope.items():
            report.found.update({f"rope_parameters.{layer}.{k}": v for k, v in values.items()})
        rope = dict(rope["full_attention"])
    kind = str(rope.get("rope_type", "default"))
    wrong_type = [p for p in report.problems if p.startswith("rope_type ")]
    if kind in ROPE_TYPES and kind != report.rope_type:
        report.problems = [p for p in report.problems if p not in wrong_type]
        report.problems.append(
            f"transformers runs {kind!r} here (the raw keys say {report.rope_type!r})"
        )
    report.rope_type = kind
    if rope.get("rope_theta") is not None:
        report.base = float(rope["rope_theta"])
        report.problems = [p for p in report.problems if not p.startswith("no rope_theta")]
    report.factor = None if rope.get("factor") is None else float(rope["factor"])
    if rope.get("original_max_position_embeddings") is not None:
        report.original = int(rope["original_max_position_embeddings"])
    rope_head = getattr(built, "qk_rope_head_dim", None)
    if rope_head:
        report.head_dim = int(rope_head)
    elif getattr(built, "head_dim", None):
        report.head_dim = int(built.head_dim)
    try:
        inv, att = model_rope(built)
    except Exception as err:
        report.transformers_messages.append(f"{type(err).__name__}: {err}")
        report.problems.append(f"transformers cannot build this model's RoPE ({err})")
        return
    report.inv_freq, report.attention_factor = inv, att
    report.rotary_dim = 2 * inv.numel()


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage().strip())


def _ask_transformers(report: RopeConfigReport, params: dict[str, Any]) -> None:
    try:
        from transformers import LlamaConfig
        from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    except ImportError:  # pragma: no cover - transformers is a book dependency
        return
    rope = {k: v for k, v in params.items() if k != "type"}
    rope["rope_type"] = report.rope_type
    rope["rope_theta"] = report.base
    if report.original is not None and report.rope_type in _NEEDS_ORIGINAL:
        rope.setdefault("original_max_position_embeddings", report.original)
    root = logging.getLogger("transformers")
    collect, saved = _Collect(), root.handlers[:]
    root.handlers = [collect]
    try:
        cfg = LlamaConfig(  # type: ignore[call-arg]
            hidden_size=2 * report.head_dim,
            num_attention_heads=2,
            head_dim=report.head_dim,
            max_position_embeddings=report.context or 2048,
            partial_rotary_factor=report.rotary_dim / report.head_dim,
            rope_parameters=rope,
        )
        if report.rope_type == "default":
            inv = report.base ** (
                -torch.arange(0, report.rotary_dim, 2, dtype=torch.float64) / report.rotary_dim
            )
            att = 1.0
        else:
            inv, att = ROPE_INIT_FUNCTIONS[report.rope_type](cfg, "cpu")
        report.inv_freq, report.attention_factor = inv.double(), float(att)
    except Exception as err:
        report.transformers_messages.append(f"{type(err).__name__}: {err}")
        report.problems.append(f"transformers rejects this config ({type(err).__name__}: {err})")
    finally:
        root.handlers = saved
    report.transformers_messages = collect.messages + report.transformers_messages


def model_rope(config: Any, layer_type: str = "full_attention") -> tuple[torch.Tensor, float]:
    """The RoPE a transformers config gives, read off the model's *own* rotary module.

    Parameters
    ----------
    config : transformers.PretrainedConfig
        A config of any model type with RoPE (``AutoConfig.for_model(model_type, ...)``).
    layer_type : str
        For models whose ``rope_parameters`` are per layer type (Gemma 3, OLMo 3): which layers'
        RoPE to return. Ignored by the others.

    Returns
    -------
    inv_freq : torch.Tensor
        Shape ``(rotary_dim/2,)``, float64: the module's inverse frequencies.
    attention_scaling : float
        The module's factor on cos and sin.
    """
    import sys

    import transformers
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    name = MODEL_MAPPING_NAMES.get(config.model_type)
    if name is None:
        raise ValueError(f"config.model_type {config.model_type!r} has no transformers model")
    module = sys.modules[getattr(transformers, str(name)).__module__]
    classes = [
        v
        for k, v in vars(module).items()
        if k.endswith("RotaryEmbedding") and isinstance(v, type) and v.__module__ == module.__name__
    ]
    if not classes:
        raise ValueError(f"{config.model_type!r} has no rotary embedding module")
    rotary = classes[0](config)
    if hasattr(rotary, f"{layer_type}_inv_freq"):
        inv = getattr(rotary, f"{layer_type}_inv_freq")
        att = getattr(rotary, f"{layer_type}_attention_scaling")
    else:
        inv, att = rotary.inv_freq, rotary.attention_scaling
    return inv.double(), float(att)
