"""Moving q/k projection weights between Meta's interleaved and Hugging Face's half RoPE layouts.

Meta's LLaMA code rotates the feature pairs ``(2i, 2i+1)`` of every head; Hugging Face's
``rotate_half`` (and GPT-NeoX) rotates the pairs ``(i, i + head_dim/2)``. The two give the same
attention scores once the output rows of the query and key projections are permuted, head by head,
with :func:`posenc_lib.rope.interleaved_to_half_permutation`. Values and output projections are not
touched: RoPE never acts on them.

:func:`meta_llama_logits` runs a LLaMA model from weights in Meta's layout and under Meta's names,
with Meta's complex (interleaved) rotation; :func:`meta_to_hf_llama_state_dict` renames and permutes
those weights for Hugging Face's ``LlamaForCausalLM``, so the two forward passes can be compared.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping

import torch

from posenc_lib._validation import (
    check_base,
    check_choice,
    check_int,
    check_positive,
    check_positive_int,
    check_rope_input,
    check_size,
)
from posenc_lib.rope import (
    apply_rope_complex,
    apply_rope_half,
    apply_rope_interleaved,
    interleaved_to_half_permutation,
    rope_angles,
    rope_inv_freq,
)

__all__ = [
    "hf_to_meta_qk_norm_weight",
    "hf_to_meta_qk_weight",
    "meta_llama_logits",
    "meta_to_hf_llama_state_dict",
    "meta_to_hf_qk_norm_weight",
    "meta_to_hf_qk_weight",
    "rope_scores",
]

_CONVENTIONS = ("interleaved", "half", "complex")


def _per_head_row_permutation(
    w: object, n_heads: object, *, inverse: bool, rotary_dim: object = None,
    head_dim: object = None,
) -> torch.Tensor:
    if not isinstance(w, torch.Tensor):
        raise TypeError(f"w must be a torch.Tensor, got {type(w).__name__}")
    if w.ndim not in (1, 2):
        raise ValueError(
            "w must be a projection weight (n_heads*head_dim, in_features) or a bias "
            f"(n_heads*head_dim,), got shape {tuple(w.shape)}"
        )
    n_heads = check_positive_int(n_heads, "n_heads")
    rows = w.shape[0]
    if rows % n_heads != 0:
        raise ValueError(f"w.shape[0] = {rows} must be divisible by n_heads = {n_heads}")
    if head_dim is not None:  # the caller's head size: catches query heads passed for a GQA key
        head_dim = check_positive_int(head_dim, "head_dim")
        if rows != n_heads * head_dim:
            raise ValueError(
                f"w has {rows} rows, not n_heads * head_dim = {n_heads} * {head_dim}: for a "
                "grouped-query key projection pass the number of key/value heads as n_heads"
            )
    head_dim = rows // n_heads
    if head_dim == 0 or head_dim % 2 != 0:
        raise ValueError(
            f"head_dim = w.shape[0] // n_heads = {head_dim} must be a positive even integer"
        )
    if rotary_dim is None:
        rotary_dim = head_dim
    rotary_dim = check_positive_int(rotary_dim, "rotary_dim")
    if rotary_dim % 2 != 0 or rotary_dim > head_dim:
        raise ValueError(
            f"rotary_dim must be an even integer <= head_dim = {head_dim}, got {rotary_dim}"
        )
    # Partial rotary: only the first rotary_dim features of a head are paired; the rest stay.
    perm = torch.cat(
        (interleaved_to_half_permutation(rotary_dim), torch.arange(rotary_dim, head_dim))
    ).to(torch.long)
    if inverse:
        perm = torch.argsort(perm)
    # Row r of head h moves as a block: new row (h, j) is old row (h, perm[j]).
    index = (torch.arange(n_heads)[:, None] * head_dim + perm[None, :]).reshape(-1)
    return w.index_select(0, index)


def meta_to_hf_qk_weight(
    w: torch.Tensor, n_heads: int, rotary_dim: int | None = None, *, head_dim: int | None = None
) -> torch.Tensor:
    """Permute a query or key projection from Meta's interleaved layout to HF's half layout.

    With ``w_hf = meta_to_hf_qk_weight(w_meta, n_heads)``, the scores
    ``apply_rope_half(x @ w_hf.T)`` (per head) equal ``apply_rope_interleaved(x @ w_meta.T)``:
    head by head, output row ``j`` of ``w_hf`` is row ``perm[j]`` of ``w_meta``, with
    ``perm = interleaved_to_half_permutation(head_dim)``. For grouped-query attention pass the
    number of *key/value* heads when converting the key projection; pass ``head_dim`` too and a
    wrong head count (the query heads for a grouped-query key) raises instead of returning another
    valid-looking permutation.

    Parameters
    ----------
    w
        ``(n_heads * head_dim, in_features)`` weight, or a ``(n_heads * head_dim,)`` bias.
    n_heads
        Number of heads the rows are split into; ``head_dim`` must be even.
    rotary_dim
        Partial rotary: only the first ``rotary_dim`` rows of each head are rotated (and
        permuted); the others stay in place. Default: the whole head.
    head_dim
        Optional: the model's head size; then ``w.shape[0]`` must equal ``n_heads * head_dim``.

    Returns
    -------
    torch.Tensor
        Same shape and dtype as ``w``, rows permuted (a new tensor).

    Raises
    ------
    ValueError
        If the rows do not split into ``n_heads`` even heads (of ``head_dim`` rows when given).
    """
    return _per_head_row_permutation(w, n_heads, inverse=False, rotary_dim=rotary_dim,
                                     head_dim=head_dim)


def hf_to_meta_qk_weight(
    w: torch.Tensor, n_heads: int, rotary_dim: int | None = None, *, head_dim: int | None = None
) -> torch.Tensor:
    """The inverse of :func:`meta_to_hf_qk_weight`: HF's half layout back to Meta's interleaved one.

    Parameters and return value as in :func:`meta_to_hf_qk_weight`.
    """
    return _per_head_row_permutation(w, n_heads, inverse=True, rotary_dim=rotary_dim,
                                     head_dim=head_dim)


def _norm_permutation(
    w: object, n_heads: object, head_dim: object, *, inverse: bool
) -> torch.Tensor:
    if not isinstance(w, torch.Tensor):
        raise TypeError(f"w must be a torch.Tensor, got {type(w).__name__}")
    if n_heads is not None:
        n_heads = check_positive_int(n_heads, "n_heads")
    if head_dim is not None:
        head_dim = check_positive_int(head_dim, "head_dim")
    shapes = (
        "(head_dim,) (one weight shared by every head, as in Qwen3), (n_heads * head_dim,) "
        "(one flat weight over all heads, as in OLMo 2) or (n_heads, head_dim)"
    )
    if w.ndim == 2:
        if n_heads is not None and w.shape[0] != n_heads:
            raise ValueError(f"w has {w.shape[0]} heads (w.shape[0]) but n_heads = {n_heads}")
        if head_dim is not None and w.shape[1] != head_dim:
            raise ValueError(f"w.shape[1] = {w.shape[1]} but head_dim = {head_dim}")
        heads, size = w.shape[0], w.shape[1]
    elif w.ndim == 1:
        numel = w.shape[0]
        if head_dim is not None and numel == head_dim:
            heads, size = 1, head_dim  # one head's weight, shared by every head
        elif n_heads is not None:
            if numel % n_heads != 0:
                raise ValueError(
                    f"w has {numel} elements, not a multiple of n_heads = {n_heads}: w must be "
                    f"of shape {shapes}"
                )
            heads, size = n_heads, numel // n_heads
            if head_dim is not None and size != head_dim:
                raise ValueError(
                    f"w has {numel} elements: neither head_dim = {head_dim} (a per-head weight) "
                    f"nor n_heads * head_dim = {n_heads * head_dim} (a flat weight)"
                )
        elif head_dim is not None:
            raise ValueError(
                f"w has {numel} elements but head_dim = {head_dim}: a flat weight over all heads "
                f"(n_heads * head_dim,) needs n_heads="
            )
        else:
            raise ValueError(
                f"a 1-D norm weight of {numel} elements is ambiguous: pass head_dim= for a weight "
                "shared by every head (size head_dim, Qwen3's q_norm) or n_heads= for a flat "
                "weight over all heads (size n_heads * head_dim, OLMo 2's q_norm; for k_norm the "
                "number of key/value heads)"
            )
    else:
        raise ValueError(f"w must be of shape {shapes}, got shape {tuple(w.shape)}")
    if size == 0 or size % 2 != 0:
        raise ValueError(f"head_dim must be a positive even integer, got {size}")
    rows = _per_head_row_permutation(w.reshape(-1), heads, inverse=inverse)
    return rows.reshape(w.shape)


def meta_to_hf_qk_norm_weight(
    w: torch.Tensor, n_heads: int | None = None, head_dim: int | None = None
) -> torch.Tensor:
    """Permute a QK-norm weight or bias from Meta's interleaved layout to HF's half one.

    A norm that acts feature by feature on the query or key *before* the rotation (QK-norm:
    Chameleon's and Qwen3's ``q_norm``/``k_norm``, OLMo 2's) multiplies feature ``j`` of a head by
    a learned weight. Once the projection rows are permuted (:func:`meta_to_hf_qk_weight`),
    feature ``j`` of the converted head is old feature ``perm[j]``, so the norm weight must be
    permuted the same way, head by head; otherwise every feature is scaled by another feature's
    weight. Norm weights come in two layouts:

    * **per head**: ``(head_dim,)``, one weight every head shares (Qwen3), or
      ``(n_heads, head_dim)``, one per head (Chameleon); the norm runs over each head's features;
    * **flat** (OLMo 2): ``(n_heads * head_dim,)``, one weight over the whole projection output,
      applied before the output is split into heads. It is permuted head by head, like the
      projection rows, so ``n_heads`` is needed.

    A 1-D weight is therefore ambiguous on its own: pass ``head_dim`` (a weight of that size is
    per head) and/or ``n_heads`` (a weight of ``n_heads * head_dim`` elements is flat). Passing
    both, as a converter reading the model's config does, picks the layout from ``w``'s size.

    Parameters
    ----------
    w
        ``(head_dim,)``, ``(n_heads * head_dim,)`` or ``(n_heads, head_dim)``; ``head_dim`` even.
    n_heads
        Number of heads of the projection the norm follows (for ``k_norm`` under grouped-query
        attention, the number of key/value heads). Required for a flat weight.
    head_dim
        Features per head. With it, a 1-D weight of ``head_dim`` elements is read as per head.

    Returns
    -------
    torch.Tensor
        Same shape and dtype as ``w``, permuted within each head (a new tensor).

    Raises
    ------
    ValueError
        A 1-D weight with neither ``n_heads`` nor ``head_dim``; sizes that fit neither layout;
        an odd ``head_dim``.
    """
    return _norm_permutation(w, n_heads, head_dim, inverse=False)


def hf_to_meta_qk_norm_weight(
    w: torch.Tensor, n_heads: int | None = None, head_dim: int | None = None
) -> torch.Tensor:
    """The inverse of :func:`meta_to_hf_qk_norm_weight`.

    Parameters, return value and errors as in :func:`meta_to_hf_qk_norm_weight`.
    """
    return _norm_permutation(w, n_heads, head_dim, inverse=True)


def rope_scores(
    q: torch.Tensor,
    k: torch.Tensor,
    positions: torch.Tensor | None = None,
    *,
    convention: str = "half",
    base: float = 10000.0,
) -> torch.Tensor:
    """Raw attention scores ``RoPE(q) @ RoPE(k).T`` under one convention (no scaling, no softmax).

    Parameters
    ----------
    q, k
        ``(..., seq, dim)`` queries and keys at the same ``positions``.
    positions
        ``(seq,)``; default ``arange(seq)``.
    convention
        ``"interleaved"`` (pairs ``(2i, 2i+1)``), ``"half"`` (pairs ``(i, i+dim/2)``) or
        ``"complex"`` (Meta's ``view_as_complex`` form, same pairs as interleaved).

    Returns
    -------
    torch.Tensor
        ``(..., seq, seq)``: entry ``[m, n]`` is the rotated query at ``m`` dotted with the rotated
        key at ``n``.
    """
    q, seq_q, dim_q = check_rope_input(q, "q")
    k, seq_k, dim_k = check_rope_input(k, "k")
    if dim_q != dim_k or seq_q != seq_k:
        raise ValueError(
            f"q and k must have the same (seq, dim), got {tuple(q.shape)} and {tuple(k.shape)}"
        )
    convention = check_choice(convention, "convention", _CONVENTIONS)
    base = check_base(base)
    try:
        lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    except RuntimeError:
        raise ValueError(
            f"the leading dimensions of q and k must broadcast, got {tuple(q.shape)} and "
            f"{tuple(k.shape)}"
        ) from None
    check_size(
        ("prod(q.shape[:-2]) (batch × heads)", math.prod(lead)),
        ("q.shape[-2] (seq)", seq_q), ("k.shape[-2] (seq)", seq_k),
        what="the (..., seq, seq) scores",
    )
    apply = {
        "interleaved": apply_rope_interleaved,
        "half": apply_rope_half,
        "complex": apply_rope_complex,
    }[convention]
    return apply(q, positions, base=base) @ apply(k, positions, base=base).transpose(-2, -1)


# --- a whole LLaMA model in Meta's layout ---------------------------------------------------------

_META_LAYER_KEY = re.compile(r"layers\.(\d+)\.")
_META_TO_HF_NAMES = {
    "attention_norm.weight": "input_layernorm.weight",
    "attention.wq.weight": "self_attn.q_proj.weight",
    "attention.wk.weight": "self_attn.k_proj.weight",
    "attention.wv.weight": "self_attn.v_proj.weight",
    "attention.wo.weight": "self_attn.o_proj.weight",
    "ffn_norm.weight": "post_attention_layernorm.weight",
    "feed_forward.w1.weight": "mlp.gate_proj.weight",
    "feed_forward.w2.weight": "mlp.down_proj.weight",
    "feed_forward.w3.weight": "mlp.up_proj.weight",
}
_META_TOP_NAMES = {
    "tok_embeddings.weight": "model.embed_tokens.weight",
    "norm.weight": "model.norm.weight",
    "output.weight": "lm_head.weight",
}


def _check_meta_params(params: object) -> tuple[Mapping[str, torch.Tensor], int]:
    """Check a Meta-layout state dict; return it and the number of layers."""
    if not isinstance(params, Mapping):
        raise TypeError(
            f"params must be a mapping of names to tensors, got {type(params).__name__}"
        )
    layers = sorted({int(m.group(1)) for key in params if (m := _META_LAYER_KEY.match(str(key)))})
    if not layers or layers != list(range(len(layers))):
        raise ValueError(f"params must hold layers.0 … layers.N-1, got layer indices {layers}")
    expected = list(_META_TOP_NAMES) + [
        f"layers.{i}.{name}" for i in layers for name in _META_TO_HF_NAMES
    ]
    missing = [key for key in expected if key not in params]
    unexpected = [key for key in params if key not in set(expected)]
    if missing or unexpected:
        raise ValueError(
            f"params is not a Meta LLaMA state dict: missing {missing[:4]}, "
            f"unexpected {unexpected[:4]}"
        )
    for key in expected:
        if not isinstance(params[key], torch.Tensor) or not params[key].is_floating_point():
            raise TypeError(f"params[{key!r}] must be a floating-point torch.Tensor")
    return params, len(layers)


def _heads(params: Mapping[str, torch.Tensor], n_heads: object, n_kv_heads: object) -> tuple:
    n_heads = check_positive_int(n_heads, "n_heads")
    n_kv_heads = n_heads if n_kv_heads is None else check_positive_int(n_kv_heads, "n_kv_heads")
    d_model = params["tok_embeddings.weight"].shape[1]
    if d_model % n_heads != 0 or (d_model // n_heads) % 2 != 0:
        raise ValueError(
            f"the model dimension {d_model} must split into n_heads = {n_heads} heads of even size"
        )
    if n_heads % n_kv_heads != 0:
        raise ValueError(f"n_kv_heads = {n_kv_heads} must divide n_heads = {n_heads}")
    return n_heads, n_kv_heads, d_model // n_heads


def _rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def meta_llama_logits(
    params: Mapping[str, torch.Tensor],
    tokens: torch.Tensor,
    *,
    n_heads: int,
    n_kv_heads: int | None = None,
    norm_eps: float = 1e-5,
    rope_theta: float = 10000.0,
    start_pos: int = 0,
    rotary: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]
    | None = None,
) -> torch.Tensor:
    """Logits of a LLaMA model whose weights are in Meta's layout, rotated Meta's way.

    The forward pass of Meta's ``llama/model.py`` (RMSNorm, attention with RoPE on queries and
    keys, SwiGLU feed-forward, final norm, output projection), written with ``posenc_lib``: the
    rotation is :func:`posenc_lib.rope.apply_rope_complex` (pairs ``(2i, 2i+1)`` as complex
    numbers, Meta's convention) at positions ``start_pos … start_pos + seq - 1``. Unlike Meta's
    ``Transformer.forward``, which keeps only the last position, logits for every position are
    returned. Computation runs in the dtype of the weights.

    Parameters
    ----------
    params : Mapping[str, torch.Tensor]
        Meta's names: ``tok_embeddings.weight`` ``(vocab, d_model)``, ``norm.weight``,
        ``output.weight`` ``(vocab, d_model)`` and, per layer ``i``, ``layers.i.attention.wq/wk/
        wv/wo.weight``, ``layers.i.attention_norm.weight``, ``layers.i.ffn_norm.weight``,
        ``layers.i.feed_forward.w1/w2/w3.weight``.
    tokens : torch.Tensor
        ``(batch, seq)`` integer token ids.
    n_heads, n_kv_heads : int
        Query heads and key/value heads (grouped-query attention; default ``n_heads``).
    norm_eps : float
        RMSNorm epsilon.
    rope_theta : float
        RoPE base.
    start_pos : int
        Position of the first token (Meta's ``start_pos``; its table is sliced from there).
    rotary : callable, optional
        A function with the signature of Meta's ``apply_rotary_emb(xq, xk, freqs_cis)``: queries
        and keys laid out ``(batch, seq, heads, head_dim)``, ``freqs_cis`` the complex64 table
        ``(seq, head_dim // 2)`` of positions ``start_pos …``; it returns the rotated pair. Pass
        Meta's own function to run its verbatim code inside this forward pass (default:
        :func:`posenc_lib.rope.apply_rope_complex`). The table handed to it is ``posenc_lib``'s
        (float64 angles cast to complex64), not Meta's float32 ``precompute_freqs_cis``: "Meta's
        rotation" here means Meta's apply function with this library's table (the two tables
        differ by float32 rounding, up to about ``5e-8·m`` rad at position ``m``).

    Returns
    -------
    torch.Tensor
        ``(batch, seq, vocab)`` logits.
    """
    params, n_layers = _check_meta_params(params)
    n_heads, n_kv_heads, head_dim = _heads(params, n_heads, n_kv_heads)
    norm_eps = check_positive(norm_eps, "norm_eps")
    rope_theta = check_base(rope_theta, "rope_theta")
    start_pos = check_int(start_pos, "start_pos", minimum=0)
    vocab = params["tok_embeddings.weight"].shape[0]
    if not isinstance(tokens, torch.Tensor) or tokens.ndim != 2 or tokens.is_floating_point():
        raise TypeError("tokens must be a (batch, seq) integer torch.Tensor")
    if tokens.numel() and (tokens.min() < 0 or tokens.max() >= vocab):
        raise ValueError(f"tokens must lie in [0, {vocab}), got {tokens.min()} … {tokens.max()}")
    batch, seq = tokens.shape
    positions = torch.arange(start_pos, start_pos + seq)
    if rotary is not None and not callable(rotary):
        raise TypeError(f"rotary must be a callable like Meta's apply_rotary_emb, got {rotary!r}")
    angles = rope_angles(positions, rope_inv_freq(head_dim, rope_theta))
    freqs_cis = torch.polar(torch.ones_like(angles), angles).to(torch.complex64)
    mask = torch.ones(seq, seq, dtype=torch.bool).tril()
    h = params["tok_embeddings.weight"][tokens]
    for i in range(n_layers):
        p = {name: params[f"layers.{i}.{name}"] for name in _META_TO_HF_NAMES}
        x = _rms_norm(h, p["attention_norm.weight"], norm_eps)
        q = (x @ p["attention.wq.weight"].T).view(batch, seq, n_heads, head_dim).transpose(1, 2)
        k = (x @ p["attention.wk.weight"].T).view(batch, seq, n_kv_heads, head_dim).transpose(1, 2)
        v = (x @ p["attention.wv.weight"].T).view(batch, seq, n_kv_heads, head_dim).transpose(1, 2)
        if rotary is None:
            q = apply_rope_complex(q, positions, base=rope_theta)
            k = apply_rope_complex(k, positions, base=rope_theta)
        else:  # Meta's layout (batch, seq, heads, head_dim) and Meta's complex64 table
            q, k = rotary(q.transpose(1, 2), k.transpose(1, 2), freqs_cis)
            q, k = q.transpose(1, 2), k.transpose(1, 2)
        k = k.repeat_interleave(n_heads // n_kv_heads, dim=1)
        v = v.repeat_interleave(n_heads // n_kv_heads, dim=1)
        scores = (q @ k.transpose(-2, -1)) / head_dim**0.5
        weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(batch, seq, n_heads * head_dim)
        h = h + out @ p["attention.wo.weight"].T
        x = _rms_norm(h, p["ffn_norm.weight"], norm_eps)
        gate = torch.nn.functional.silu(x @ p["feed_forward.w1.weight"].T)
        h = h + (gate * (x @ p["feed_forward.w3.weight"].T)) @ p["feed_forward.w2.weight"].T
    return _rms_norm(h, params["norm.weight"], norm_eps) @ params["output.weight"].T


def meta_to_hf_llama_state_dict(
    params: Mapping[str, torch.Tensor], n_heads: int, n_kv_heads: int | None = None
) -> dict[str, torch.Tensor]:
    """Rename Meta LLaMA weights to ``LlamaForCausalLM``'s names and permute ``wq``, ``wk``.

    What Hugging Face's conversion script does: every name is mapped (``attention.wq`` to
    ``self_attn.q_proj``, ``feed_forward.w1`` to ``mlp.gate_proj`` …), and the query and key
    projections are permuted per head with :func:`meta_to_hf_qk_weight` (the key projection split
    into ``n_kv_heads`` heads). Everything else is copied unchanged.

    Parameters
    ----------
    params : Mapping[str, torch.Tensor]
        A Meta-layout state dict, as for :func:`meta_llama_logits`.
    n_heads, n_kv_heads : int
        Query heads and key/value heads (default ``n_heads``).

    Returns
    -------
    dict[str, torch.Tensor]
        A state dict for ``transformers.LlamaForCausalLM`` (new tensors for ``q_proj``/``k_proj``).
    """
    params, n_layers = _check_meta_params(params)
    n_heads, n_kv_heads, _ = _heads(params, n_heads, n_kv_heads)
    out = {hf: params[meta] for meta, hf in _META_TOP_NAMES.items()}
    for i in range(n_layers):
        for meta, hf in _META_TO_HF_NAMES.items():
            w = params[f"layers.{i}.{meta}"]
            if meta == "attention.wq.weight":
                w = meta_to_hf_qk_weight(w, n_heads)
            elif meta == "attention.wk.weight":
                w = meta_to_hf_qk_weight(w, n_kv_heads)
            out[f"model.layers.{i}.{hf}"] = w
    return out
