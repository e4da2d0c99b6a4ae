"""A tiny decoder-only Transformer whose positional scheme is a parameter.

nanoGPT-style and small enough to read in one sitting: token embedding, ``n_layers`` pre-norm
blocks (causal multi-head attention, then a two-layer MLP), a final norm and a linear head.
Every positional scheme calls the library's own function:

* ``"none"`` (NoPE): nothing; only the causal mask (:func:`posenc_lib.attention.causal_mask`);
* ``"sinusoidal"``: :func:`posenc_lib.sinusoidal.sinusoidal_table` added to the embeddings;
* ``"learned"``: a trained table of ``max_len`` rows added to the embeddings;
* ``"rope"`` / ``"rope_abf"``: :func:`posenc_lib.rope.apply_rope_half` on queries and keys, with
  the inverse frequencies of :func:`posenc_lib.rope.rope_inv_freq` (base ``rope_base``); the
  scaling methods of :mod:`posenc_lib.scaling` plug in at inference through ``inv_freq=``;
* ``"alibi"``: :func:`posenc_lib.alibi.alibi_bias` added to the logits;
* ``"t5"``: T5's bucketed relative bias (:func:`t5_buckets`, one trained scalar per head and
  bucket, shared by the layers) added to the logits.

Attention itself is :func:`posenc_lib.attention.attention`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from .._validation import (
    MAX_PYTHON_ITEMS,
    check_choice,
    check_int,
    check_positive,
    check_positive_int,
    check_size,
)
from ..alibi import alibi_bias
from ..attention import attention, causal_mask
from ..rope import apply_rope_half, rope_inv_freq
from ..sinusoidal import sinusoidal_table

__all__ = [
    "ALL_SCHEMES",
    "ROTARY_SCHEMES",
    "SCHEMES",
    "DecoderOutput",
    "ModelConfig",
    "TinyDecoder",
    "nope_layers",
    "t5_buckets",
]

SCHEMES = ("none", "sinusoidal", "learned", "rope", "rope_abf", "alibi", "t5")
# Outside the main grid (an ablation): "hybrid" is RoPE (base rope_base) in every layer but the
# last, which has no positional encoding — the iRoPE / SmolLM3 pattern of a NoPE layer after
# RoPE layers, at the lab's depth of 2 or 3.
ALL_SCHEMES = (*SCHEMES, "hybrid")
ROTARY_SCHEMES = ("rope", "rope_abf", "hybrid")


def nope_layers(scheme: str, n_layers: int) -> tuple[int, ...]:
    """The layers without RoPE in a model with a rotary scheme: the last one for "hybrid"."""
    return (n_layers - 1,) if scheme == "hybrid" else ()


def t5_buckets(seq: int, num_buckets: int = 32, max_distance: int = 128) -> torch.Tensor:
    """T5's causal relative-position buckets, ``(seq, seq)`` long (query, key).

    Distance ``d = query − key >= 0``: buckets ``0 … B/2 − 1`` hold ``d`` exactly, the other
    half grows logarithmically up to ``max_distance``; every ``d >= max_distance`` shares the
    last bucket (Raffel et al.; Hugging Face's ``_relative_position_bucket`` with
    ``bidirectional=False``). Keys after the query (masked anyway) get bucket 0.
    """
    seq = check_positive_int(seq, "seq")
    num_buckets = check_int(num_buckets, "num_buckets", minimum=4)
    max_distance = check_int(max_distance, "max_distance", minimum=num_buckets // 2 + 1)
    check_size(("seq", seq), ("seq", seq), what="the (seq, seq) buckets")
    pos = torch.arange(seq)
    distance = (pos[:, None] - pos[None, :]).clamp(min=0)  # (seq, seq)
    exact = num_buckets // 2
    # Distances below `exact` are replaced by `exact` before the log (they use the exact branch).
    far = exact + (
        torch.log(distance.clamp(min=exact).float() / exact)
        / math.log(max_distance / exact) * (num_buckets - exact)
    ).long()  # (seq, seq)
    return torch.where(distance < exact, distance, far.clamp(max=num_buckets - 1))


@dataclass(frozen=True)
class ModelConfig:
    """Shape of a :class:`TinyDecoder`.

    Parameters
    ----------
    vocab : int
        Number of token ids (>= 2). Each weight matrix (``vocab × d_model``,
        ``d_model × d_ff``, ``d_model × d_model``, and the learned ``max_len × d_model`` table)
        must stay within ``MAX_ELEMENTS``; ``n_layers`` at most ``MAX_PYTHON_ITEMS``.
    scheme : str
        One of :data:`ALL_SCHEMES` (the main grid uses :data:`SCHEMES`).
    d_model, n_heads, n_layers, d_ff : int
        Width, heads (``d_model`` divisible by ``n_heads``, head size even), depth, MLP width.
    max_len : int
        Rows of the learned table (``"learned"`` only; positions ``>= max_len`` are an error).
    rope_base : float
        RoPE base for ``"rope"`` and ``"rope_abf"``.
    learned_init_std : float
        Standard deviation of the learned table's initialisation (GPT-2 and nanoGPT: 0.02).
    t5_num_buckets, t5_max_distance : int
        T5's bucketing (``"t5"`` only; T5's defaults 32 and 128).
    """

    vocab: int
    scheme: str = "none"
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int = 128
    max_len: int = 256
    rope_base: float = 10000.0
    learned_init_std: float = 0.02
    t5_num_buckets: int = 32
    t5_max_distance: int = 128

    def __post_init__(self) -> None:
        check_int(self.vocab, "vocab", minimum=2)
        check_choice(self.scheme, "scheme", ALL_SCHEMES)
        for name in ("d_model", "n_heads", "d_ff", "max_len"):
            check_positive_int(getattr(self, name), name)
        check_positive_int(self.n_layers, "n_layers", maximum=MAX_PYTHON_ITEMS)  # built in a loop
        # Each weight matrix within the library's size limit, refused before any allocation.
        check_size(("vocab", self.vocab), ("d_model", self.d_model),
                   what="the (vocab, d_model) embedding")
        check_size(("d_model", self.d_model), ("d_ff", self.d_ff), what="each (d_model, d_ff) MLP")
        check_size(("d_model", self.d_model), ("d_model", self.d_model),
                   what="each (d_model, d_model) projection")
        if self.scheme == "learned":
            check_size(("max_len", self.max_len), ("d_model", self.d_model),
                       what="the learned (max_len, d_model) table")
        if self.d_model % self.n_heads or (self.d_model // self.n_heads) % 2:
            raise ValueError(
                f"d_model must be a multiple of n_heads with an even head size, got "
                f"d_model = {self.d_model}, n_heads = {self.n_heads}"
            )
        check_positive(self.rope_base, "rope_base")
        check_positive(self.learned_init_std, "learned_init_std")
        check_int(self.t5_num_buckets, "t5_num_buckets", minimum=4)
        check_size(("t5_num_buckets", self.t5_num_buckets), ("n_heads", self.n_heads),
                   what="the (t5_num_buckets, n_heads) bias table")
        check_int(self.t5_max_distance, "t5_max_distance", minimum=self.t5_num_buckets // 2 + 1)

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention with the scheme's positional step inside."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model, bias=False)
        self.out = nn.Linear(config.d_model, config.d_model, bias=False)

    def forward(
        self,
        x: torch.Tensor,
        inv_freq: torch.Tensor | None,
        bias: torch.Tensor | None,
        logit_scale: float,
        query_scale: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        batch, seq, d_model = x.shape  # x: (batch, seq, d_model)
        heads, head_dim = self.config.n_heads, self.config.head_dim
        q, k, v = self.qkv(x).split(d_model, dim=-1)  # each (batch, seq, d_model)
        q = q.view(batch, seq, heads, head_dim).transpose(1, 2)  # (batch, heads, seq, head_dim)
        k = k.view(batch, seq, heads, head_dim).transpose(1, 2)  # (batch, heads, seq, head_dim)
        v = v.view(batch, seq, heads, head_dim).transpose(1, 2)  # (batch, heads, seq, head_dim)
        if inv_freq is not None:
            q = apply_rope_half(q, inv_freq=inv_freq)  # (batch, heads, seq, head_dim)
            k = apply_rope_half(k, inv_freq=inv_freq)  # (batch, heads, seq, head_dim)
        if query_scale is not None:  # one temperature per query position: scales row m's logits
            q = q * query_scale.to(q.dtype)[:, None]  # (batch, heads, seq, head_dim)
        y, weights = attention(
            q, k, v,
            mask=causal_mask(seq) if mask is None else mask,  # (seq, seq)
            bias=bias,  # (heads, seq, seq) for ALiBi and T5, else None
            scale=logit_scale / math.sqrt(head_dim),
        )  # y: (batch, heads, seq, head_dim); weights: (batch, heads, seq, seq)
        y = y.transpose(1, 2).reshape(batch, seq, d_model)  # (batch, seq, d_model)
        return self.out(y), weights  # (batch, seq, d_model), (batch, heads, seq, seq)


class Block(nn.Module):
    """Pre-norm Transformer block: ``x + attn(norm(x))``, then ``x + mlp(norm(x))``."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(config.d_model)
        self.attn = CausalSelfAttention(config)
        self.norm2 = nn.LayerNorm(config.d_model)
        self.mlp = nn.Sequential(
            nn.Linear(config.d_model, config.d_ff),
            nn.GELU(),
            nn.Linear(config.d_ff, config.d_model),
        )

    def forward(
        self,
        x: torch.Tensor,
        inv_freq: torch.Tensor | None,
        bias: torch.Tensor | None,
        logit_scale: float,
        query_scale: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        a, weights = self.attn(self.norm1(x), inv_freq, bias, logit_scale,
                               query_scale, mask)  # (batch, seq, d_model)
        x = x + a  # (batch, seq, d_model)
        x = x + self.mlp(self.norm2(x))  # (batch, seq, d_model)
        return x, weights


@dataclass
class DecoderOutput:
    """What :meth:`TinyDecoder.forward` returns.

    ``logits`` ``(batch, seq, vocab)``; ``hidden`` the residual stream after the embedding and
    after each block, ``n_layers + 1`` tensors ``(batch, seq, d_model)``; ``attention`` one
    ``(batch, heads, seq, seq)`` tensor per block.
    """

    logits: torch.Tensor
    hidden: list[torch.Tensor]
    attention: list[torch.Tensor]


class TinyDecoder(nn.Module):
    """Decoder-only Transformer; the positional scheme is ``config.scheme``.

    Parameters
    ----------
    config : ModelConfig
        Sizes and positional scheme.
    """

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        if not isinstance(config, ModelConfig):
            raise TypeError(f"config must be a ModelConfig, got {type(config).__name__}")
        self.config = config
        self.embed = nn.Embedding(config.vocab, config.d_model)
        if config.scheme == "learned":
            std = config.learned_init_std
            self.pos_table = nn.Parameter(torch.randn(config.max_len, config.d_model) * std)
        if config.scheme == "t5":
            self.t5_bias = nn.Embedding(config.t5_num_buckets, config.n_heads)
            nn.init.normal_(self.t5_bias.weight, std=0.02)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layers))
        self.norm = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab, bias=False)

    def default_inv_freq(self) -> torch.Tensor | None:
        """The RoPE spectrum used in training, ``(head_dim // 2,)`` float64; None if not RoPE."""
        if self.config.scheme not in ROTARY_SCHEMES:
            return None
        return rope_inv_freq(self.config.head_dim, self.config.rope_base)

    def forward(
        self,
        tokens: torch.Tensor,
        *,
        inv_freq: torch.Tensor | None = None,
        logit_scale: float = 1.0,
        query_scale: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
    ) -> DecoderOutput:
        """Run the model on ``tokens`` of shape ``(batch, seq)``.

        Parameters
        ----------
        tokens : torch.Tensor
            Integer ids in ``[0, vocab)``, shape ``(batch, seq)``.
        inv_freq : torch.Tensor, optional
            RoPE models only: a ``(head_dim // 2,)`` spectrum replacing the trained one, e.g. from
            :func:`posenc_lib.scaling.pi_inv_freq` (inference-time context extension).
        logit_scale : float
            Multiplies every attention logit (YaRN's attention factor squared), default 1.
        query_scale : torch.Tensor, optional
            ``(seq,)`` positive factors, one per query position, multiplying that query (so
            every logit of its row) in every layer and head, on top of ``logit_scale``: a
            per-query temperature, as Llama 4 applies to its NoPE layers.
        mask : torch.Tensor, optional
            ``(seq, seq)`` bool, ``True`` where query ``m`` (row) may see key ``n``, replacing the
            causal mask in every layer; it may only hide keys the causal mask shows (no future
            key), and every query must keep its own key, e.g.
            :func:`posenc_lib.serving.streaming_cache_mask` (a sink plus a recent window).

        Returns
        -------
        DecoderOutput
        """
        if not isinstance(tokens, torch.Tensor) or tokens.dtype != torch.long or tokens.ndim != 2:
            raise TypeError("tokens must be a torch.long tensor of shape (batch, seq)")
        seq = tokens.shape[1]
        if seq < 1:
            raise ValueError("tokens must hold at least one position (seq >= 1)")
        if tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) >= self.config.vocab):
            raise ValueError(f"tokens must lie in [0, vocab) = [0, {self.config.vocab})")
        scheme = self.config.scheme
        if query_scale is not None and not (
            isinstance(query_scale, torch.Tensor) and query_scale.shape == (seq,)
            and query_scale.is_floating_point() and bool(torch.isfinite(query_scale).all())
            and bool((query_scale > 0).all())
        ):
            raise ValueError(f"query_scale must be a finite float tensor > 0 of shape (seq,) = "
                             f"({seq},), one factor per query position")
        if mask is not None and not (
            isinstance(mask, torch.Tensor) and mask.dtype == torch.bool and mask.shape == (seq, seq)
            and not bool((mask & ~causal_mask(seq)).any()) and bool(mask.diagonal().all())
        ):
            raise ValueError(f"mask must be a bool tensor of shape (seq, seq) = ({seq}, {seq}) "
                             f"within the causal mask, with every query seeing its own key")
        if inv_freq is not None and scheme not in ROTARY_SCHEMES:
            raise ValueError(f"inv_freq only applies to RoPE models, this one is {scheme!r}")
        if scheme == "learned" and seq > self.config.max_len:
            raise ValueError(
                f"a learned table has max_len = {self.config.max_len} rows; "
                f"cannot encode seq = {seq} positions"
            )
        x = self.embed(tokens)  # (batch, seq, d_model)
        if scheme == "sinusoidal":
            x = x + sinusoidal_table(seq, self.config.d_model, dtype=x.dtype)  # (seq, d_model)
        elif scheme == "learned":
            x = x + self.pos_table[:seq]  # (seq, d_model), broadcast over batch
        if scheme in ROTARY_SCHEMES and inv_freq is None:
            inv_freq = self.default_inv_freq()  # (head_dim // 2,)
        bias = None
        if scheme == "alibi":
            bias = alibi_bias(self.config.n_heads, seq, dtype=x.dtype)  # (heads, seq, seq)
        elif scheme == "t5":
            buckets = t5_buckets(seq, self.config.t5_num_buckets, self.config.t5_max_distance)
            bias = self.t5_bias(buckets).permute(2, 0, 1)  # (heads, seq, seq)
        hidden, weights = [x], []
        unrotated = nope_layers(scheme, len(self.blocks))
        for index, block in enumerate(self.blocks):
            layer_freq = None if index in unrotated else inv_freq
            x, w = block(x, layer_freq, bias, logit_scale,
                         query_scale, mask)  # (batch, seq, d_model), (b, h, s, s)
            hidden.append(x)
            weights.append(w)
        logits = self.head(self.norm(x))  # (batch, seq, vocab)
        return DecoderOutput(logits=logits, hidden=hidden, attention=weights)
