"""Context-extension methods by name: the spectrum and attention factor each one gives.

:mod:`posenc_lib.scaling` has one function per method; this module picks among them by name, as a
model's config does, and adds the two pieces a config can ask for that ``scaling`` leaves out:
LongRoPE's searched per-pair factors and YaRN's attention factor with DeepSeek's
``mscale``/``mscale_all_dim``. :func:`extended_rope` is what :mod:`posenc_lib.hf`'s configs are
checked against: for the same arguments, ``transformers``' RoPE init function returns the same
``(inv_freq, attention_factor)``.

Methods: ``"none"`` (plain RoPE), ``"pi"`` (position interpolation), ``"ntk"`` (NTK-aware base),
``"dynamic"`` (dynamic NTK), ``"yarn"``, ``"llama3"`` (Llama 3.1), ``"abf"`` (adjusted base
frequency: ``base`` is the raised base) and ``"longrope"``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from . import scaling
from ._validation import (
    _describe,
    check_base,
    check_choice,
    check_dim,
    check_factor,
    check_int,
    check_positive,
    check_positive_int,
)
from .rope import rope_inv_freq

__all__ = [
    "EXTENSION_METHODS",
    "METHOD_OPTIONS",
    "extended_rope",
    "logn_attention_scale",
    "longrope_attention_factor",
    "longrope_inv_freq",
    "yarn_attention_factor",
]

#: The method names :func:`extended_rope` and :mod:`posenc_lib.hf` accept.
EXTENSION_METHODS: tuple[str, ...] = (
    "none", "pi", "ntk", "dynamic", "yarn", "llama3", "abf", "longrope",
)

#: The optional keywords each method takes (they are also the transformers config keys).
METHOD_OPTIONS: dict[str, tuple[str, ...]] = {
    "none": (),
    "pi": (),
    "ntk": (),
    "dynamic": (),
    "yarn": ("beta_fast", "beta_slow", "truncate", "mscale", "mscale_all_dim", "attention_factor"),
    "llama3": ("low_freq_factor", "high_freq_factor"),
    "abf": (),
    "longrope": ("short_factor", "long_factor", "attention_factor"),
}

# Methods whose formula reads the training context L_train.
NEEDS_ORIGINAL: frozenset[str] = frozenset({"dynamic", "yarn", "llama3", "longrope"})


def check_options(method: str, options: Mapping[str, Any]) -> None:
    """Reject keywords the method does not take, naming them and the allowed ones."""
    unknown = sorted(set(options) - set(METHOD_OPTIONS[method]))
    if unknown:
        allowed = ", ".join(METHOD_OPTIONS[method]) or "none"
        raise TypeError(
            f"method {method!r} takes no option(s) {', '.join(unknown)}; allowed options: {allowed}"
        )


def _mscale(factor: float, mscale: float = 1.0) -> float:
    return 1.0 if factor <= 1 else 0.1 * mscale * math.log(factor) + 1.0


def logn_attention_scale(position: int, train_len: int) -> float:
    """Log-n attention scaling (the first Qwen models' ``use_logn_attn``): ``log_L(m)`` past ``L``.

    The query of the ``m``-th token (``m`` counted from 1) is multiplied by ``log_L(m)`` when
    ``m > L`` and by 1 otherwise, so its logits grow like ``ln m`` — sharpening the softmax as the
    number of keys grows, as YaRN's constant temperature does for a whole extended context.

    Parameters
    ----------
    position : int
        The token's 1-based position ``m`` (>= 1).
    train_len : int
        The training length ``L`` (>= 2).

    Returns
    -------
    float
        ``log(m)/log(L)`` if ``m > L``, else ``1.0``.
    """
    position = check_int(position, "position", minimum=1, what="a positive integer (>= 1)")
    train_len = check_int(train_len, "train_len", minimum=2, what="an integer >= 2")
    return math.log(position) / math.log(train_len) if position > train_len else 1.0


def yarn_attention_factor(
    factor: float, mscale: float | None = None, mscale_all_dim: float | None = None
) -> float:
    """YaRN's attention factor: ``0.1·ln s + 1``, or DeepSeek's ratio when both mscales are set.

    The factor multiplies cos and sin, so the logits are multiplied by its square: the paper's
    temperature ``√(1/t) = 0.1·ln s + 1``. With ``mscale`` and ``mscale_all_dim`` (DeepSeek-V2/V3),
    transformers uses ``m(s, mscale)/m(s, mscale_all_dim)`` with ``m(s, c) = 0.1·c·ln s + 1``
    (1 when the two are equal: DeepSeek then scales the softmax itself). With only one of them
    transformers falls back to ``0.1·ln s + 1``, and so does this function.

    Parameters
    ----------
    factor : float
        Scale factor ``s`` (>= 1).
    mscale, mscale_all_dim : float, optional
        DeepSeek's coefficients (> 0); their ratio is used only when both are given.

    Returns
    -------
    float
        The attention factor (1 when ``s = 1``).
    """
    factor = check_factor(factor)
    given = [
        check_positive(v, name)
        for v, name in ((mscale, "mscale"), (mscale_all_dim, "mscale_all_dim")) if v is not None
    ]
    if len(given) < 2:  # transformers: `if mscale and mscale_all_dim: … else: default`
        return _mscale(factor)
    return _mscale(factor, given[0]) / _mscale(factor, given[1])


def _check_factor_list(values: object, name: str, length: int) -> torch.Tensor:
    if isinstance(values, torch.Tensor):
        values = values.tolist()
    if not isinstance(values, Sequence) or isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a list of {length} numbers, got {_describe(values)}")
    if len(values) != length:
        raise ValueError(f"{name} must have length dim // 2 = {length}, got length {len(values)}")
    return torch.tensor(
        [check_positive(v, f"{name}[{i}]") for i, v in enumerate(values)], dtype=torch.float64
    )


def longrope_inv_freq(dim: int, base: float, ext_factors: Sequence[float]) -> torch.Tensor:
    """LongRoPE: every pair gets its own searched rescale factor, ``θ'_i = θ_i / ext_i``.

    Parameters
    ----------
    dim : int
        Rotary dimension ``d`` (positive, even).
    base : float
        The base ``b``.
    ext_factors : sequence of float
        ``d/2`` positive factors (a model's ``short_factor`` or ``long_factor`` list).

    Returns
    -------
    torch.Tensor
        Shape ``(dim // 2,)``, float64.
    """
    dim = check_dim(dim)
    ext = _check_factor_list(ext_factors, "ext_factors", dim // 2)
    return rope_inv_freq(dim, base) / ext


def longrope_attention_factor(factor: float, original_max_position: int) -> float:
    """LongRoPE's default attention factor ``√(1 + ln s / ln L_train)`` (1 when ``s = 1``).

    Parameters
    ----------
    factor : float
        Scale factor ``s`` (>= 1).
    original_max_position : int
        Training context ``L_train`` (>= 2, so that ``ln L_train > 0``).

    Returns
    -------
    float
    """
    factor = check_factor(factor)
    original_max_position = check_int(
        original_max_position, "original_max_position", minimum=2, what="an integer >= 2"
    )
    if factor <= 1:
        return 1.0
    return math.sqrt(1 + math.log(factor) / math.log(original_max_position))


def _require_original(method: str, original_max_position: object) -> int:
    if original_max_position is None:
        raise ValueError(
            f"original_max_position (the training context L_train) is required for method "
            f"{method!r}, got None"
        )
    return check_positive_int(original_max_position, "original_max_position")


def extended_rope(
    method: str,
    *,
    dim: int,
    base: float = 10000.0,
    factor: float = 1.0,
    original_max_position: int | None = None,
    seq_len: int | None = None,
    **options: Any,
) -> tuple[torch.Tensor, float]:
    """The inverse frequencies and attention factor of a context-extension method.

    Parameters
    ----------
    method : str
        One of :data:`EXTENSION_METHODS`.
    dim : int
        Rotary dimension ``d`` (the rotated part of a head; positive, even; >= 4 for NTK).
    base : float
        The base ``b``; for ``"abf"`` the adjusted base (e.g. 500 000).
    factor : float
        Scale factor ``s = L_target / L_train`` (>= 1). Unused by ``"none"`` and ``"abf"``.
    original_max_position : int, optional
        Training context ``L_train``; required by ``"dynamic"``, ``"yarn"``, ``"llama3"``,
        ``"longrope"``.
    seq_len : int, optional
        Current length, read by ``"dynamic"`` (default ``L_train``: no rescaling yet) and
        ``"longrope"`` (long factors when ``seq_len > L_train``, short ones otherwise).
    **options
        Per-method keywords (:data:`METHOD_OPTIONS`): ``beta_fast``, ``beta_slow``, ``truncate``,
        ``mscale``, ``mscale_all_dim``, ``attention_factor`` (YaRN); ``low_freq_factor``,
        ``high_freq_factor`` (Llama 3.1); ``short_factor``, ``long_factor`` (required) and
        ``attention_factor`` (LongRoPE).

    Returns
    -------
    tuple
        ``(inv_freq, attention_factor)``: shape ``(dim // 2,)`` float64, and a float that
        multiplies cos and sin (1 for every method but YaRN and LongRoPE).
    """
    method = check_choice(method, "method", EXTENSION_METHODS)
    check_options(method, options)
    dim = check_dim(dim, minimum=4 if method in ("ntk", "dynamic") else 2)
    base = check_base(base)
    factor = check_factor(factor)
    original = (
        _require_original(method, original_max_position) if method in NEEDS_ORIGINAL else None
    )
    if seq_len is not None:  # a number in a formula, not the size of anything built
        seq_len = check_int(seq_len, "seq_len", minimum=0, what="a non-negative integer")
    if method in ("none", "abf"):
        return rope_inv_freq(dim, base), 1.0
    if method == "pi":
        return scaling.pi_inv_freq(dim, base, factor), 1.0
    if method == "ntk":
        return scaling.ntk_inv_freq(dim, base, factor), 1.0
    # Every method below reads the original context; its presence was checked above.
    assert original is not None
    if method == "dynamic":
        length = original if seq_len is None else seq_len
        return scaling.dynamic_ntk_inv_freq(dim, base, factor, length, original), 1.0
    if method == "llama3":
        return scaling.llama3_inv_freq(
            dim, base, factor, original,
            options.get("low_freq_factor", 1.0), options.get("high_freq_factor", 4.0),
        ), 1.0
    if method == "yarn":
        inv_freq, _ = scaling.yarn_inv_freq(
            dim, base, factor, original,
            options.get("beta_fast", 32.0), options.get("beta_slow", 1.0),
            truncate=options.get("truncate", True),
        )
        given = options.get("attention_factor")
        attention = (
            check_positive(given, "attention_factor") if given is not None
            else yarn_attention_factor(
                factor, options.get("mscale"), options.get("mscale_all_dim")
            )
        )
        return inv_freq, attention
    # longrope
    for key in ("short_factor", "long_factor"):
        if key not in options:
            raise ValueError(f"method 'longrope' needs {key} (a list of dim // 2 = {dim // 2})")
    short = _check_factor_list(options["short_factor"], "short_factor", dim // 2)
    long_ = _check_factor_list(options["long_factor"], "long_factor", dim // 2)
    use_long = seq_len is not None and seq_len > original
    inv_freq = rope_inv_freq(dim, base) / (long_ if use_long else short)
    given = options.get("attention_factor")
    attention = (
        check_positive(given, "attention_factor") if given is not None
        else longrope_attention_factor(factor, original)
    )
    return inv_freq, attention
