"""What one attention layer does with position: :class:`LayerPosition` and its pieces.

A layer either rotates part of each query and key head (``"rope"``), adds a distance bias to the
logits (``"alibi"``) or leaves position out (``"nope"``). Around that sit the settings a
2024–2026 config spreads over several keys: the rotary block's place and pairing, the factor that
multiplies cos and sin, a query scale that grows with position, a softmax-scale factor, a sliding
window or an attention chunk, and learned sink logits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import torch

from .._validation import (
    check_choice,
    check_float_tensor,
    check_length,
    check_positions,
    check_size,
)
from ..multimodal import MROPE_AXES, apply_mrope, mrope_axis_map
from ..rope import CONVENTIONS, apply_rope_complex, apply_rope_half, apply_rope_interleaved

__all__ = ["KINDS", "QK_NORM_KINDS", "LayerPosition", "QueryScale", "proportional_inv_freq"]

#: The kinds of layer a plan names: ``"no_attention"`` is a hybrid's recurrent, linear-attention
#: or state-space layer (position reaches it through the order it reads tokens in), a short
#: convolution (LFM2: a weight per offset over the last few inputs, a relative position of very
#: short reach), or a layer that mixes no tokens at all (Nemotron-H's standalone MLP and MoE
#: layers).
KINDS: tuple[str, ...] = ("rope", "nope", "alibi", "no_attention")

#: How a layer normalises q and k (``LayerPosition.qk_norm_kind``): over each head's features
#: with a learned weight per feature, over each head without a weight, over each head with a
#: weight per head and feature (Cohere), or over the whole projection (all heads together, OLMo 2
#: and 3).
QK_NORM_KINDS: tuple[str, ...] = ("per-head", "per-head, no weight", "per-head, weight per head",
                                  "flat")

#: Layer types that mix no tokens at all (a feed-forward block standing alone as a layer, as in
#: Nemotron-H): unlike recurrent and linear-attention layers they carry no state either.
_MIXING_FREE_TYPES = frozenset({"mlp", "moe"})

#: Layer types that are short causal convolutions (LFM2's ``"conv"``): they keep the last k − 1
#: inputs and weight each offset 0 … k − 1 separately, rather than carrying a state forward.
_SHORT_CONV_TYPES = frozenset({"conv"})


_APPLY = {
    "half": apply_rope_half,
    "interleaved": apply_rope_interleaved,
    "complex": apply_rope_complex,
}


def proportional_inv_freq(head_dim: int, base: float, proportion: float) -> torch.Tensor:
    """Gemma 4's ``proportional`` RoPE: frequencies over the *whole* head, the low ones zeroed.

    ``θ_i = base^(−2i/head_dim)`` for the first ``k = int(proportion·head_dim // 2)`` pairs and
    ``θ_i = 0`` (no rotation) for the other ``head_dim/2 − k``. Partial rotary (GPT-NeoX) instead
    spreads *all* exponents over the smaller block, ``base^(−2i/rotary_dim)``: same count of
    rotated pairs, different frequencies.

    Parameters
    ----------
    head_dim : int
        Features per head (positive, even).
    base : float
        ``rope_theta`` (finite, > 0).
    proportion : float
        ``partial_rotary_factor``, the share of pairs that rotate, in ``(0, 1]``.

    Returns
    -------
    torch.Tensor
        Shape ``(head_dim // 2,)``, float64; zeros after the first ``k`` entries.
    """
    from .._validation import check_base, check_dim, check_positive

    head_dim = check_dim(head_dim, "head_dim")
    base = check_base(base)
    proportion = check_positive(proportion, "proportion")
    if proportion > 1:
        raise ValueError(f"proportion must be in (0, 1], got {proportion}")
    rotated = int(proportion * head_dim // 2)  # transformers' int(p·head_dim // 2)
    inv_freq = torch.zeros(head_dim // 2, dtype=torch.float64)
    exponents = torch.arange(0, 2 * rotated, 2, dtype=torch.float64) / head_dim
    inv_freq[:rotated] = base**-exponents
    return inv_freq


@dataclass(frozen=True)
class QueryScale:
    """A query multiplier that grows with the position ``m``: two forms in use.

    * ``"llama4"`` (Llama 4 NoPE layers): ``1 + scale·ln(1 + ⌊(m + 1)/floor⌋)``;
    * ``"llama_4_scaling_beta"`` (Ministral 3, Mistral 4 and Large 3, every layer):
      ``1 + scale·ln(1 + ⌊m/floor⌋)`` with ``floor`` the original context.

    Attributes
    ----------
    form : str
        ``"llama4"`` or ``"llama_4_scaling_beta"``.
    scale : float
        ``attn_scale`` (0.1 in Llama 4) or ``llama_4_scaling_beta``.
    floor : int
        ``floor_scale`` (8192 in Llama 4) or ``original_max_position_embeddings``.
    """

    form: str
    scale: float
    floor: int

    def __post_init__(self) -> None:
        check_choice(self.form, "form", ("llama4", "llama_4_scaling_beta"))

    def __call__(self, positions: torch.Tensor) -> torch.Tensor:
        """The multiplier at each position, float64 of shape ``(seq,)``."""
        p = check_positions(positions)
        shift = 1.0 if self.form == "llama4" else 0.0
        return 1.0 + self.scale * torch.log1p(torch.floor((p + shift) / self.floor))

    def describe(self) -> str:
        """One line, e.g. ``query × (1 + 0.1·ln(1 + ⌊(m+1)/8192⌋))`` (``m`` the position)."""
        m = "(m+1)" if self.form == "llama4" else "m"
        return f"query × (1 + {self.scale:g}·ln(1 + ⌊{m}/{self.floor}⌋))"


@dataclass(frozen=True, eq=False)
class LayerPosition:
    """What one attention layer does with position (one entry of a position plan).

    Attributes
    ----------
    layer : int
        Layer index.
    kind : str
        ``"rope"``, ``"nope"`` or ``"alibi"``.
    layer_type : str
        The config's name for the layer (``"sliding_attention"``, ``"full_attention"``,
        ``"chunked_attention"``).
    head_dim : int
        Query/key features per head (MLA: ``qk_nope_head_dim + qk_rope_head_dim``).
    rotary_dim : int
        Features that rotate (0 unless ``kind == "rope"``); for ``proportional`` RoPE the whole
        head, with zero frequencies on the pairs that do not turn.
    rotary_offset : int
        Index of the first rotated feature (0; MLA puts its rotary block last).
    inv_freq : torch.Tensor or None
        Shape ``(rotary_dim // 2,)``, dtype float64, holding the values transformers computes:
        read from its rotary module, they carry its float32 rounding (``0.1`` is stored as
        ``0.10000000149011612``); posenc_lib's float64 formulas
        (:func:`posenc_lib.extension.extended_rope`) give the unrounded values.
    convention : str or None
        Which features pair up inside the rotary block, as laid out in the projection weights:
        ``"half"``, ``"interleaved"`` or ``"complex"``.
    rope_type : str or None
        transformers' ``rope_type`` (``"default"``, ``"yarn"``, ``"proportional"`` …).
    base : float or None
        ``rope_theta``.
    attention_factor : float
        Multiplies cos and sin (YaRN, LongRoPE), so the RoPE part of a logit by its square.
    softmax_scale_factor : float
        Multiplies the softmax scale ``1/√d`` (DeepSeek's ``mscale_all_dim``: ``m_s²``).
    query_scale : QueryScale or None
        Position-dependent query multiplier.
    window : int or None
        Sliding window: a query sees the ``window`` most recent keys, itself included.
    chunk : int or None
        Chunked attention: a query sees only keys of its own chunk of ``chunk`` positions.
    sinks : bool
        Learned per-head sink logits join the softmax (gpt-oss).
    alibi_slopes : torch.Tensor or None
        Per-head ALiBi slopes, float64.
    mrope_section : tuple of int or None
        M-RoPE (Qwen2-VL, Qwen2.5-VL, Qwen3-VL): frequency pairs per axis ``(s_t, s_h, s_w)``,
        summing to ``rotary_dim // 2``; None for 1-D RoPE. :attr:`mrope_axes` says which
        position id (t, h, w) each pair reads.
    mrope_interleaved : bool
        MRoPE-I (Qwen3-VL): the axes take turns pair by pair instead of contiguous blocks.
    scaling : str or None
        The RoPE scaling with its factors, in words (``"linear ×8"``, ``"yarn ×32, β 32/1,
        original 4 096"``, ``"longrope short factors (L ≤ 4 096)"``); None for plain RoPE.
    bidirectional : bool
        Queries also see later keys (encoders, EmbeddingGemma); a window then keeps keys with
        ``|m − n| < window``.
    qk_norm : bool or None
        q and k are normalised before attention; None when not known.
    conv_taps : int or None
        A ``no_attention`` layer's short depthwise causal convolution, when the config names its
        kernel size (Gated DeltaNet's ``linear_conv_kernel_dim``, Mamba's ``mamba_d_conv``): a
        weight per offset 0 … ``conv_taps`` − 1 inside the layer; None otherwise.
    qk_norm_kind : str or None
        How, when ``qk_norm``: ``"per-head"`` (over each head's features, a learned weight per
        feature: Qwen3, Gemma 3), ``"per-head, no weight"`` (Llama 4), ``"per-head, weight per
        head"`` (Cohere) or ``"flat"`` (one norm over all heads together: OLMo 2 and 3); None
        when not known. A norm without a weight commutes with the rotation; one with a weight
        per feature does not.
    """

    layer: int
    kind: str
    layer_type: str
    head_dim: int
    rotary_dim: int = 0
    rotary_offset: int = 0
    inv_freq: torch.Tensor | None = None
    convention: str | None = None
    rope_type: str | None = None
    base: float | None = None
    attention_factor: float = 1.0
    softmax_scale_factor: float = 1.0
    query_scale: QueryScale | None = None
    window: int | None = None
    chunk: int | None = None
    sinks: bool = False
    alibi_slopes: torch.Tensor | None = None
    mrope_section: tuple[int, int, int] | None = None
    mrope_interleaved: bool = False
    scaling: str | None = None
    bidirectional: bool = False
    qk_norm: bool | None = None
    qk_norm_kind: str | None = None
    conv_taps: int | None = None

    def __post_init__(self) -> None:
        check_choice(self.kind, "kind", KINDS)
        if self.conv_taps is not None and (
                self.kind != "no_attention" or isinstance(self.conv_taps, bool)
                or not isinstance(self.conv_taps, int) or self.conv_taps < 1):
            raise ValueError(f"conv_taps must be a positive int on a no_attention layer, got "
                             f"{self.conv_taps!r} on kind = {self.kind!r}")
        if self.qk_norm_kind is not None:
            check_choice(self.qk_norm_kind, "qk_norm_kind", QK_NORM_KINDS)
        if self.kind == "rope":
            check_choice(self.convention, "convention", CONVENTIONS)
            if self.inv_freq is None or self.inv_freq.shape != (self.rotary_dim // 2,):
                raise ValueError(
                    f"a rope layer needs inv_freq of shape ({self.rotary_dim // 2},), "
                    f"got {None if self.inv_freq is None else tuple(self.inv_freq.shape)}"
                )
        if self.mrope_section is not None:
            if self.kind != "rope" or self.convention != "half":
                raise ValueError(
                    "mrope_section needs kind = 'rope' and convention = 'half' (the Qwen-VL "
                    f"layout), got kind = {self.kind!r}, convention = {self.convention!r}"
                )
            axes = mrope_axis_map(self.mrope_section, interleaved=self.mrope_interleaved)
            if axes.shape[0] != self.rotary_dim // 2:
                raise ValueError(
                    f"sum(mrope_section) must equal rotary_dim // 2 = {self.rotary_dim // 2}, "
                    f"got {list(self.mrope_section)}"
                )

    @property
    def mrope_axes(self) -> torch.Tensor | None:
        """Which position id each frequency pair reads (0 = t, 1 = h, 2 = w); None if 1-D.

        Shape ``(rotary_dim // 2,)``, int64 (:func:`posenc_lib.multimodal.mrope_axis_map`).
        """
        if self.mrope_section is None:
            return None
        return mrope_axis_map(self.mrope_section, interleaved=self.mrope_interleaved)

    @property
    def mrope_axis_string(self) -> str | None:
        """:attr:`mrope_axes` as letters, e.g. ``"tttthhhhhhwwwwww"``; None if 1-D."""
        axes = self.mrope_axes
        return None if axes is None else "".join(MROPE_AXES[int(a)] for a in axes)

    @property
    def rotated_pairs(self) -> int:
        """Pairs that actually turn (non-zero frequency)."""
        return 0 if self.inv_freq is None else int((self.inv_freq != 0).sum())

    def rotate(self, x: torch.Tensor, positions: torch.Tensor | None = None) -> torch.Tensor:
        """What the layer does to a query or key head before the dot product (no query scale).

        Rotates the block ``[rotary_offset, rotary_offset + rotary_dim)`` by ``positions·inv_freq``
        in the layer's convention and multiplies it by ``attention_factor``; the other features
        pass through. NoPE and ALiBi layers return ``x`` unchanged.

        Parameters
        ----------
        x : torch.Tensor
            Shape ``(..., seq, head_dim)``, floating point.
        positions : torch.Tensor, optional
            Shape ``(seq,)``; default ``arange(seq)``. An M-RoPE layer also takes ``(3, seq)``
            (t, h, w ids; one row is text, where M-RoPE is 1-D RoPE).

        Returns
        -------
        torch.Tensor
            Same shape and dtype as ``x``.
        """
        x = check_float_tensor(x, "x", min_ndim=2)
        if x.shape[-1] != self.head_dim:
            raise ValueError(
                f"x.shape[-1] must equal the layer's head_dim = {self.head_dim}, "
                f"got {x.shape[-1]}"
            )
        if self.kind != "rope":
            return x
        assert self.inv_freq is not None and self.convention is not None
        lo, hi = self.rotary_offset, self.rotary_offset + self.rotary_dim
        if self.mrope_section is not None and isinstance(positions, torch.Tensor) and (
            positions.ndim == 2
        ):
            block = apply_mrope(x[..., lo:hi], positions, self.mrope_section,
                                inv_freq=self.inv_freq, interleaved=self.mrope_interleaved)
        else:
            block = _APPLY[self.convention](x[..., lo:hi], positions, inv_freq=self.inv_freq)
        block = block * self.attention_factor
        return torch.cat((x[..., :lo], block, x[..., hi:]), dim=-1)

    def visible_keys(self, seq_len: int) -> torch.Tensor:
        """Which keys each query of a causal layer may attend to, ``(seq_len, seq_len)`` bool.

        Query ``q`` sees key ``k`` when ``k <= q``; with a window ``W`` also when
        ``q − k < W`` (``W`` keys, the query's own included, as transformers' masks); with a
        chunk ``C`` also when ``⌊k/C⌋ = ⌊q/C⌋``. A bidirectional layer drops ``k <= q`` and
        its window keeps ``|q − k| < W``.

        Parameters
        ----------
        seq_len : int
            Number of positions (>= 1).

        Returns
        -------
        torch.Tensor
            Shape ``(seq_len, seq_len)``, bool; rows are queries.
        """
        seq_len = check_length(seq_len, "seq_len")
        check_size(("seq_len", seq_len), ("seq_len", seq_len))
        q = torch.arange(seq_len)[:, None]
        k = torch.arange(seq_len)[None, :]
        allowed = torch.ones(seq_len, seq_len, dtype=torch.bool) if self.bidirectional else k <= q
        if self.window is not None:
            allowed &= (q - k).abs() < self.window
        if self.chunk is not None:
            allowed &= torch.div(k, self.chunk, rounding_mode="floor") == torch.div(
                q, self.chunk, rounding_mode="floor"
            )
        return allowed

    def describe(self) -> str:
        """One line: kind, base, rotary dims, pairing, scaling, factors, window, mask, qk-norm."""
        parts: list[str] = []
        if self.kind == "rope":
            assert self.base is not None
            parts.append(f"RoPE base {_number(self.base)}")
            if self.rope_type == "proportional":
                parts.append(f"{self.rotated_pairs} of {self.rotary_dim // 2} pairs turn "
                             f"(head {self.head_dim})")
            else:
                parts.append(f"rotary {self.rotary_dim} of {self.head_dim}")
            if self.mrope_section is not None:
                layout = "interleaved" if self.mrope_interleaved else "contiguous"
                sections = "/".join(str(s) for s in self.mrope_section)
                parts.append(f"M-RoPE (t,h,w sections {sections}, {layout})")
            parts.append(f"{self.convention}")
            if self.scaling is not None:
                parts.append(self.scaling)
            elif self.rope_type not in (None, "default"):
                parts.append(str(self.rope_type))
            if not math.isclose(self.attention_factor, 1.0):
                parts.append(f"cos/sin × {self.attention_factor:.4g}")
        elif self.kind == "alibi":
            parts.append("ALiBi")
        elif self.kind == "no_attention":
            if self.layer_type in _MIXING_FREE_TYPES:
                return f"{self.layer_type} layer (no token mixing): no position"
            if self.layer_type in _SHORT_CONV_TYPES:
                return (f"{self.layer_type} layer (last k−1 inputs kept; offset-specific "
                        "kernel): no positional encoding")
            if self.conv_taps is not None:
                return (f"{self.layer_type} layer (state + {self.conv_taps}-tap causal conv, "
                        "offset-specific kernel): no positional encoding")
            return (f"{self.layer_type} layer (state carried token by token): "
                    "no positional encoding")
        else:
            parts.append("NoPE")
        if not math.isclose(self.softmax_scale_factor, 1.0):
            parts.append(f"softmax scale × {self.softmax_scale_factor:.4g}")
        if self.query_scale is not None:
            parts.append(self.query_scale.describe())
        if self.window is not None:
            if self.bidirectional:
                parts.append(f"window |m−n| < {_number(self.window)}")
            else:
                parts.append(f"window {_number(self.window)}")
        if self.chunk is not None:
            parts.append(f"chunk {_number(self.chunk)}")
        if self.sinks:
            parts.append("learned sinks")
        parts.append("bidirectional" if self.bidirectional else "causal")
        if self.qk_norm:
            parts.append(f"qk-norm ({self.qk_norm_kind})" if self.qk_norm_kind else "qk-norm")
        return ", ".join(parts)

    def to_dict(self) -> dict[str, object]:
        """The entry as plain JSON-ready values (tensors as lists, ``None`` kept)."""
        out: dict[str, object] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, torch.Tensor):
                value = [float(v) for v in value.tolist()]
            elif isinstance(value, QueryScale):
                value = {"form": value.form, "scale": value.scale, "floor": value.floor}
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out


def _number(value: float) -> str:
    """``10 000``, ``1 000 000``, ``150 000``; non-integers as ``%g``."""
    if float(value).is_integer():
        return f"{int(value):,}".replace(",", " ")
    return f"{value:g}"
