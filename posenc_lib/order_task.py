"""A task only order can solve: tell a sentence from its reversal (chapter 1's training demo).

Each example is a sequence of distinct tokens whose first token is smaller than its last (label 1)
or the same sequence reversed (label 0). Both members of a pair hold the same tokens, so a model
that sees its input as a bag gives them the same logit ``z``, and the pair's mean cross-entropy
``-(log σ(z) + log(1 - σ(z)))/2`` is at least ``log 2``, reached at ``z = 0``. A model with
positions can learn the task; a causal mask alone lets a model learn part of it. So can a
readout attached to slots (the last output, or the first and last side by side) instead of the
mean: like a mask, it is something attached to positions rather than to tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ._validation import (
    MAX_PYTHON_ITEMS,
    check_choice,
    check_dim,
    check_int,
    check_positive,
    check_positive_int,
    check_seed,
    check_size,
)
from .attention import causal_mask
from .sinusoidal import sinusoidal_table

__all__ = ["ORDER_ENCODINGS", "ORDER_READOUTS", "OrderClassifier", "OrderRun", "reversal_pairs",
           "train_order_classifier"]

#: Encodings :class:`OrderClassifier` can add to its token embeddings.
ORDER_ENCODINGS = ("none", "sinusoidal")
#: How :class:`OrderClassifier` turns its ``(batch, length, dim)`` outputs into one vector: the
#: mean over slots (the same for every ordering of a bag), the last slot's output, or the first
#: and last slots' outputs concatenated.
ORDER_READOUTS = ("mean", "last", "ends")


def _check_task(length: object, vocab_size: object) -> tuple[int, int]:
    length = check_int(length, "length", minimum=2, what="an integer >= 2")
    vocab_size = check_int(vocab_size, "vocab_size", minimum=length,
                           what=f"an integer >= length ({length}): the tokens are distinct")
    check_size(("length", length), ("vocab_size", vocab_size))
    return length, vocab_size


def reversal_pairs(num_pairs: int, length: int, vocab_size: int, *,
                   generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Sequences and their reversals, labelled by which is which.

    Parameters
    ----------
    num_pairs : int
        Number of pairs (>= 1).
    length : int
        Tokens per sequence (>= 2).
    vocab_size : int
        Token ids are ``0 … vocab_size - 1`` (>= ``length``: a sequence holds distinct tokens).
    generator : torch.Generator, optional
        Source of randomness.

    Returns
    -------
    tokens : torch.Tensor
        ``(2·num_pairs, length)`` int64: rows ``0 … num_pairs - 1`` have first token < last token
        (label 1), row ``num_pairs + j`` is row ``j`` reversed (label 0).
    labels : torch.Tensor
        ``(2·num_pairs,)`` float32, ones then zeros.
    """
    num_pairs = check_positive_int(num_pairs, "num_pairs")
    length, vocab_size = _check_task(length, vocab_size)
    check_size(("2·num_pairs", 2 * num_pairs), ("vocab_size", vocab_size),
               what="the random draw (2·num_pairs × vocab_size)")
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError("generator must be a torch.Generator or None, "
                        f"got {type(generator).__name__}")
    draw = torch.rand(num_pairs, vocab_size, generator=generator)
    rows = draw.argsort(dim=1)[:, :length]                     # (num_pairs, length), distinct ids
    backwards = rows[:, 0] > rows[:, -1]
    rows[backwards] = rows[backwards].flip(1)                  # first < last in every row
    tokens = torch.cat([rows, rows.flip(1)])
    labels = torch.cat([torch.ones(num_pairs), torch.zeros(num_pairs)])
    return tokens, labels


class OrderClassifier(nn.Module):
    """Embedding (+ optional sinusoidal table) → attention and feed-forward → readout → one logit.

    Parameters
    ----------
    vocab_size, length : int
        As in :func:`reversal_pairs`.
    dim : int
        Model width (positive, even).
    encoding : {"none", "sinusoidal"}
        What is added to the token embeddings.
    causal : bool
        Give the attention layers a causal mask.
    seed : int
        Seed of the initial weights.
    readout : {"mean", "last", "ends"}
        What the logit reads (see :data:`ORDER_READOUTS`); only ``"mean"`` treats every slot alike.
    layers : int
        Blocks of attention and feed-forward (1 … 8). Layers after the first are created after
        the head, so a one-layer model's weights do not depend on this option.
    """

    def __init__(self, vocab_size: int, length: int, dim: int = 32, *, encoding: str = "none",
                 causal: bool = False, seed: int = 0, readout: str = "mean",
                 layers: int = 1) -> None:
        super().__init__()
        length, vocab_size = _check_task(length, vocab_size)
        dim = check_dim(dim)
        encoding = check_choice(encoding, "encoding", ORDER_ENCODINGS)
        readout = check_choice(readout, "readout", ORDER_READOUTS)
        layers = check_positive_int(layers, "layers", maximum=8)
        if not isinstance(causal, bool):
            raise TypeError(f"causal must be a bool, got {type(causal).__name__}")
        check_size(("vocab_size", vocab_size), ("dim", dim), what="the embedding")
        check_size(("8", 8), ("layers", layers), ("dim", dim), ("dim", dim),
                   what="the layer weights")
        generator = torch.Generator().manual_seed(check_seed(seed))
        self.length, self.causal, self.readout = length, causal, readout
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(torch.randint(2**62, (), generator=generator)))
            self.embed = nn.Embedding(vocab_size, dim)
            self.attn = nn.MultiheadAttention(dim, num_heads=1, batch_first=True)
            self.ffn = nn.Sequential(nn.Linear(dim, 2 * dim), nn.ReLU(), nn.Linear(2 * dim, dim))
            self.head = nn.Linear(2 * dim if readout == "ends" else dim, 1)
            self.more_attn = nn.ModuleList(
                nn.MultiheadAttention(dim, num_heads=1, batch_first=True)
                for _ in range(layers - 1))
            self.more_ffn = nn.ModuleList(
                nn.Sequential(nn.Linear(dim, 2 * dim), nn.ReLU(), nn.Linear(2 * dim, dim))
                for _ in range(layers - 1))
        table = (sinusoidal_table(length, dim) if encoding == "sinusoidal"
                 else torch.zeros(length, dim))
        self.register_buffer("table", table)                    # (length, dim), not trained
        # nn.MultiheadAttention's boolean mask marks the pairs NOT attended to.
        self.register_buffer("blocked", ~causal_mask(length) if causal else None)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits ``(batch,)`` of ``tokens`` ``(batch, length)``: > 0 reads "first < last"."""
        if not isinstance(tokens, torch.Tensor) or tokens.dtype != torch.int64:
            raise TypeError("tokens must be an int64 torch.Tensor of shape (batch, length)")
        if tokens.ndim != 2 or tokens.shape[1] != self.length:
            raise ValueError(f"tokens must have shape (batch, {self.length}), "
                             f"got {tuple(tokens.shape)}")
        h = self.embed(tokens) + self.table                     # (batch, length, dim)
        for attn, ffn in zip([self.attn, *self.more_attn], [self.ffn, *self.more_ffn],
                             strict=True):
            h = h + attn(h, h, h, attn_mask=self.blocked, need_weights=False)[0]
            h = h + ffn(h)
        if self.readout == "mean":
            pooled = h.mean(dim=1)                              # the same for every ordering
        elif self.readout == "last":
            pooled = h[:, -1]                                   # a slot: breaks the symmetry
        else:
            pooled = torch.cat([h[:, 0], h[:, -1]], dim=-1)     # (batch, 2·dim)
        return self.head(pooled).squeeze(-1)


@dataclass(frozen=True)
class OrderRun:
    """One training run of :func:`train_order_classifier`.

    Attributes
    ----------
    losses : np.ndarray
        ``(steps,)`` mean cross-entropy of each training batch, in nats.
    test_loss : float
        Mean cross-entropy on held-out pairs after training.
    test_accuracy : float
        Share of held-out sequences classified right (a logit of exactly 0 counts as wrong).
    test_pair_gap : float
        Largest ``|z(x) - z(reversed x)|`` over the held-out pairs: 0 for a model that sees a bag
        (up to float32 rounding in ``nn.MultiheadAttention``, about 1e-7).
    test_count : int
        Held-out pairs scored: those drawn after training, less any whose sequence also appeared
        in a training batch.
    """

    losses: np.ndarray
    test_loss: float
    test_accuracy: float
    test_pair_gap: float
    test_count: int


def train_order_classifier(*, encoding: str = "none", causal: bool = False, steps: int = 300,
                           length: int = 6, vocab_size: int = 16, dim: int = 32,
                           batch_pairs: int = 64, lr: float = 3e-3, seed: int = 0,
                           test_pairs: int = 512, readout: str = "mean",
                           layers: int = 1) -> OrderRun:
    """Train an :class:`OrderClassifier` with Adam on fresh :func:`reversal_pairs` every step.

    Parameters
    ----------
    encoding, causal, length, vocab_size, dim, seed, readout, layers
        As in :class:`OrderClassifier` (``seed`` also seeds the data).
    steps : int
        Optimiser steps (>= 1).
    batch_pairs : int
        Pairs per batch (each batch holds a sequence and its reversal, so a bag model's loss is
        at least ``log 2`` on every batch, not only on average).
    lr : float
        Adam's learning rate (> 0).
    test_pairs : int
        Pairs drawn after training; those whose sequence appeared in a training batch are
        dropped, so the rest are held out.

    Returns
    -------
    OrderRun
    """
    steps = check_positive_int(steps, "steps", maximum=MAX_PYTHON_ITEMS)
    batch_pairs = check_positive_int(batch_pairs, "batch_pairs")
    test_pairs = check_positive_int(test_pairs, "test_pairs")
    lr = check_positive(lr, "lr")
    model = OrderClassifier(vocab_size, length, dim, encoding=encoding, causal=causal, seed=seed,
                            readout=readout, layers=layers)
    data = torch.Generator().manual_seed(check_seed(seed) ^ 0x5EED)
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.BCEWithLogitsLoss()
    losses = np.empty(steps)
    seen: set[tuple[int, ...]] = set()
    for step in range(steps):
        tokens, labels = reversal_pairs(batch_pairs, length, vocab_size, generator=data)
        seen.update(map(tuple, tokens[:batch_pairs].tolist()))
        loss = loss_fn(model(tokens), labels)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses[step] = loss.item()
    tokens, _ = reversal_pairs(test_pairs, length, vocab_size, generator=data)
    forward = tokens[:test_pairs]
    fresh = torch.tensor([tuple(row) not in seen for row in forward.tolist()])
    forward = forward[fresh]
    if len(forward) == 0:
        raise ValueError("every held-out pair appeared in training: raise vocab_size or length")
    count = len(forward)
    tokens = torch.cat([forward, forward.flip(1)])
    labels = torch.cat([torch.ones(count), torch.zeros(count)])
    with torch.no_grad():
        logits = model(tokens)
        test_loss = loss_fn(logits, labels).item()
    right = torch.where(labels > 0.5, logits > 0, logits < 0)   # a logit of 0 is wrong
    gap = (logits[:count] - logits[count:]).abs().max().item()
    return OrderRun(losses, test_loss, right.float().mean().item(), gap, count)
