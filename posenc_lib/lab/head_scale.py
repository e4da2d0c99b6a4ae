"""Per-head query scales trained by gradient on a frozen lab model (Wang et al.'s HeadScale).

Wang et al. ("Length Generalization of Causal Transformers without Position Encoding", 2024)
freeze a NoPE model and give each attention head one trainable factor on its query, trained on
longer sequences than the model saw. For a NoPE head the factor is exactly a temperature on that
head's logits. Their released script starts every factor at 1.6, keeps it at 1 or more, and takes
200 steps at learning rate 0.1. :func:`train_head_scales` does the same on a lab model (any
scheme; for RoPE the factor also scales the rotated query, so it is still a logit temperature),
and :func:`with_head_scales` bakes trained factors into a copy of the model.
"""

from __future__ import annotations

from copy import deepcopy
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch.func import functional_call

from .._validation import check_int, check_positive, check_seed
from .model import TinyDecoder
from .tasks import CopyTask, MarkovTask
from .train import prepend_first

__all__ = ["HeadScaleFit", "train_head_scales", "with_head_scales"]


@dataclass(frozen=True)
class HeadScaleFit:
    """The outcome of :func:`train_head_scales`.

    Attributes
    ----------
    scales : torch.Tensor
        ``(layers, heads)`` float32, the trained factor of each head's query.
    losses : list[float]
        The training loss (nats, mean over the batch's scored positions) at each step, before
        that step's update.
    """

    scales: torch.Tensor
    losses: list[float]


def _check_model(model: object) -> TinyDecoder:
    if not isinstance(model, TinyDecoder):
        raise TypeError(f"model must be a TinyDecoder, got {type(model).__name__}")
    return model


def _scaled_weights(model: TinyDecoder, scales: torch.Tensor) -> dict[str, torch.Tensor]:
    """Each block's ``qkv`` weight with head ``h``'s query rows multiplied by ``scales[l, h]``."""
    d_model, head_dim = model.config.d_model, model.config.head_dim
    weights = {}
    for layer in range(model.config.n_layers):
        name = f"blocks.{layer}.attn.qkv.weight"
        w = model.get_parameter(name)  # (3 d_model, d_model): query rows first, head by head
        row_scale = scales[layer].repeat_interleave(head_dim)  # (d_model,)
        weights[name] = torch.cat([w[:d_model] * row_scale[:, None], w[d_model:]])
    return weights


def with_head_scales(model: TinyDecoder, scales: torch.Tensor) -> TinyDecoder:
    """A copy of ``model`` (in eval mode) whose head ``h`` of block ``l`` has its query scaled.

    Parameters
    ----------
    model : TinyDecoder
        A lab model; it is not changed.
    scales : torch.Tensor
        ``(layers, heads)`` positive finite factors.
    """
    model = _check_model(model)
    shape = (model.config.n_layers, model.config.n_heads)
    scales = torch.as_tensor(scales, dtype=torch.float32)
    if tuple(scales.shape) != shape:
        raise ValueError(f"scales must have shape (layers, heads) = {shape}, "
                         f"got {tuple(scales.shape)}")
    if not (torch.isfinite(scales).all() and (scales > 0).all()):
        raise ValueError("scales must be positive and finite")
    scaled = deepcopy(model).eval()
    with torch.no_grad():
        for name, weight in _scaled_weights(model, scales).items():
            scaled.get_parameter(name).copy_(weight)
    return scaled


def train_head_scales(
    model: TinyDecoder,
    task: CopyTask | MarkovTask,
    length: int,
    *,
    bos: bool,
    steps: int = 200,
    lr: float = 0.1,
    init: float = 1.0,
    lower_bound: float | None = None,
    batch: int = 32,
    seed: int = 0,
) -> HeadScaleFit:
    """Train one query factor per head of the frozen ``model`` on fresh sequences of ``length``.

    Parameters
    ----------
    model : TinyDecoder
        A trained lab model; its weights are not changed (it is frozen for the fit).
    task : CopyTask or MarkovTask
        The task the model was trained on; each step draws a fresh batch from it.
    length : int
        Task tokens per training sequence (before the BOS token), e.g. ``2 L``.
    bos : bool
        Put the BOS token in front, as the model was trained.
    steps : int
        Adam steps (Wang et al.'s script: 200).
    lr : float
        Adam's learning rate (theirs: 0.1).
    init : float
        The factors' starting value, ``> 0`` (theirs: 1.6).
    lower_bound : float or None
        If given (``> 0``, at most ``init``), each factor is clipped to at least this value after
        every step (theirs: 1); ``None`` leaves the factors free.
    batch : int
        Sequences per step.
    seed : int
        Seeds the training batches (use one other than the evaluation batch's).

    Returns
    -------
    HeadScaleFit
        The trained ``(layers, heads)`` factors and the loss at each step.
    """
    model = _check_model(model)
    if not isinstance(task, (CopyTask, MarkovTask)):
        raise TypeError(f"task must be a CopyTask or MarkovTask, got {type(task).__name__}")
    length = check_int(length, "length", minimum=2)
    steps = check_int(steps, "steps", minimum=1)
    batch = check_int(batch, "batch", minimum=1)
    seed = check_seed(seed)
    lr = check_positive(lr, "lr")
    init = check_positive(init, "init")
    if lower_bound is not None:
        lower_bound = check_positive(lower_bound, "lower_bound")
        if lower_bound > init:
            raise ValueError(f"lower_bound must be at most init = {init}, got {lower_bound}")
    was_training = model.training
    model.eval()  # the lab models have no dropout; eval keeps any future one off
    frozen = {name: p.detach() for name, p in model.named_parameters()}
    scales = torch.full((model.config.n_layers, model.config.n_heads), float(init),
                        requires_grad=True)
    optimiser = torch.optim.Adam([scales], lr=lr)
    generator = torch.Generator().manual_seed(seed)
    losses = []
    for _ in range(steps):
        inputs, targets, scored = prepend_first(task.batch(generator, batch, length), task, bos)
        params = {**frozen, **_scaled_weights(model, scales)}
        logits = functional_call(model, params, (inputs,)).logits  # (batch, seq, vocab)
        per_token = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
        loss = per_token[:, scored].mean()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        if lower_bound is not None:
            with torch.no_grad():
                scales.clamp_(min=lower_bound)
        losses.append(float(loss.detach()))
    model.train(was_training)
    return HeadScaleFit(scales=scales.detach().clone(), losses=losses)
