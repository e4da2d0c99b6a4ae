"""The lab's two tasks, generated on the fly from a ``torch.Generator`` (fixed seeds).

* **Copy**: ``x_1 … x_m SEP x_1 … x_m`` with the ``x`` drawn without replacement, so the token
  to copy is always unambiguous; the model reads the first ``2m`` tokens and is scored on its
  ``m`` predictions of the second half (token accuracy). An algorithmic task: every scored
  position must output the input token ``m`` positions back (after ``SEP``, the one just after
  the previous occurrence of its own input token, which is ``m + 1`` back). Training lengths
  vary in ``[L/2, L]``.
* **Markov**: a language model on an order-2 Markov chain, ``P(x_t | x_{t−2}, x_{t−1})``, whose
  transition table is itself drawn once from a Dirichlet with a fixed seed. Only local
  dependencies: a model that has learned the chain should predict every position equally well,
  however long the sequence. Scored by cross-entropy (nats) against the chain's own entropy.

Each batch is ``(inputs, targets, scored)``: ``inputs`` and ``targets`` ``(batch, n)`` long,
``scored`` ``(n,)`` bool, the positions whose prediction counts. :func:`with_bos` puts a
beginning-of-sequence token in front of every sequence (one more position, never scored).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .._validation import check_int, check_positive, check_seed, check_size

__all__ = ["TASKS", "CopyTask", "MarkovTask", "make_task", "with_bos"]

TASKS = ("copy", "markov")


def _check_generator(generator: object) -> torch.Generator:
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    return generator


class CopyTask:
    """Copy a sequence of distinct tokens after a separator.

    Parameters
    ----------
    vocab : int
        Token ids; id 0 is the separator, ``1 … vocab−1`` the content. Sequences of length ``n``
        need ``n/2 <= vocab − 1`` distinct content tokens.
    """

    name = "copy"
    metric = "accuracy"
    SEP = 0

    def __init__(self, vocab: int) -> None:
        self.vocab = check_int(vocab, "vocab", minimum=3)

    def batch(
        self, generator: torch.Generator, batch: int, length: int
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``batch`` sequences of ``length = 2m`` model inputs (``length`` even, ``>= 2``)."""
        generator = _check_generator(generator)
        batch = check_int(batch, "batch", minimum=1)
        length = check_int(length, "length", minimum=2)
        check_size(("batch", batch), ("vocab", self.vocab), what="the (batch, vocab) noise")
        if length % 2:
            raise ValueError(f"length must be even for the copy task, got {length}")
        m = length // 2
        if m > self.vocab - 1:
            raise ValueError(
                f"length must be <= 2·(vocab − 1) = {2 * (self.vocab - 1)} so that the "
                f"{m} tokens to copy are distinct, got {length}"
            )
        # Distinct content tokens: the first m of a random permutation of 1 … vocab−1.
        noise = torch.rand(batch, self.vocab - 1, generator=generator)  # (batch, vocab−1)
        content = noise.argsort(dim=-1)[:, :m] + 1  # (batch, m)
        sep = torch.full((batch, 1), self.SEP, dtype=torch.long)  # (batch, 1)
        seq = torch.cat([content, sep, content], dim=1)  # (batch, 2m + 1)
        scored = torch.arange(length) >= m  # (2m,): the second half's predictions
        return seq[:, :-1], seq[:, 1:], scored

    def train_batch(
        self, generator: torch.Generator, batch: int, train_length: int
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """A training batch whose length is drawn from the even lengths in ``[L/2, L]``.

        With one fixed length the copy offset ``m`` never changes, and a model can learn
        "copy the token ``m`` back" instead of finding the partner token: varying ``m`` rules
        that shortcut out.
        """
        train_length = check_int(train_length, "train_length", minimum=4)
        half = train_length // 2
        m = int(torch.randint(max(1, half // 2), half + 1, (1,), generator=generator))
        return self.batch(generator, batch, 2 * m)


class MarkovTask:
    """Language modelling on an order-2 Markov chain.

    Parameters
    ----------
    vocab : int
        Number of states (>= 2).
    concentration : float
        Dirichlet concentration of each row of the transition table (small = peaked rows).
    seed : int
        Seed of the transition table (the chain is the same for every run).
    train_length : int
        ``L``: sequences of length ``n > L`` are scored on positions ``>= L`` only (the positions
        never seen in training); length ``L`` itself on positions ``>= 2``.
    """

    name = "markov"
    metric = "loss"

    def __init__(
        self, vocab: int, concentration: float, seed: int, train_length: int
    ) -> None:
        self.vocab = check_int(vocab, "vocab", minimum=2)
        concentration = check_positive(concentration, "concentration")
        check_size(("vocab", self.vocab), ("vocab", self.vocab), ("vocab", self.vocab),
                   what="the (vocab, vocab, vocab) transition table")
        seed = check_seed(seed)
        self.train_length = check_int(train_length, "train_length", minimum=3)
        check_size(("train_length", self.train_length))
        rows = np.random.default_rng(seed).dirichlet([concentration] * vocab, size=(vocab, vocab))
        self.transitions = torch.from_numpy(rows)  # (vocab, vocab, vocab) float64: a, b → c

    def batch(
        self, generator: torch.Generator, batch: int, length: int
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``batch`` sequences of ``length`` inputs (and the next token as target)."""
        generator = _check_generator(generator)
        batch = check_int(batch, "batch", minimum=1)
        length = check_int(length, "length", minimum=3)
        check_size(("batch", batch), ("length + 1", length + 1),
                   what="the (batch, length + 1) tokens")
        seq = torch.empty(batch, length + 1, dtype=torch.long)  # (batch, length + 1)
        seq[:, :2] = torch.randint(self.vocab, (batch, 2), generator=generator)
        for t in range(2, length + 1):
            probs = self.transitions[seq[:, t - 2], seq[:, t - 1]]  # (batch, vocab)
            seq[:, t] = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
        start = 2 if length <= self.train_length else self.train_length
        scored = torch.arange(length) >= start  # (length,)
        return seq[:, :-1], seq[:, 1:], scored

    def train_batch(
        self, generator: torch.Generator, batch: int, train_length: int
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """A training batch of length ``train_length``, scored on every position ``>= 2``."""
        inputs, targets, _ = self.batch(generator, batch, train_length)
        return inputs, targets, torch.arange(train_length) >= 2

    def stationary_pairs(self) -> torch.Tensor:
        """The chain's stationary distribution over pairs ``(a, b)``, ``(vocab, vocab)`` float64.

        The pair chain ``(a, b) → (b, c)`` is iterated from the uniform distribution (every row
        of the transition table is strictly positive, so it converges geometrically).
        """
        pairs = torch.full((self.vocab, self.vocab), 1.0 / self.vocab**2, dtype=torch.float64)
        for _ in range(10_000):
            new = torch.einsum("ab,abc->bc", pairs, self.transitions)  # (vocab, vocab)
            if torch.allclose(new, pairs, rtol=0.0, atol=1e-15):
                break
            pairs = new
        return new

    def references(self) -> dict[str, float]:
        """Three reference losses (nats per token) under the stationary chain.

        ``floor``: the entropy rate ``H(x_t | x_{t−2}, x_{t−1})``, the best any model can do;
        ``current_token``: ``H(x_t | x_{t−1})``, the best a model that sees only the current
        token can do; ``uniform``: ``ln vocab``, guessing.
        """
        pairs = self.stationary_pairs()  # (a, b)
        t = self.transitions  # (a, b, c)
        floor = -(pairs[..., None] * torch.xlogy(t, t)).sum()  # 0 · log 0 = 0
        joint_bc = torch.einsum("ab,abc->bc", pairs, t)  # P(b, c)
        cond = joint_bc / joint_bc.sum(-1, keepdim=True)  # P(c | b)
        current = -torch.xlogy(joint_bc, cond).sum()
        return {"floor": float(floor), "current_token": float(current),
                "uniform": math.log(self.vocab)}

    def current_token_loss(self, inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """The loss of the best current-token-only predictor at each position,
        ``(batch, length)`` float64: ``−ln P(x_{t+1} | x_t)`` under the stationary chain (the
        predictor behind ``references()["current_token"]``). Inputs without a BOS token."""
        joint_bc = torch.einsum("ab,abc->bc", self.stationary_pairs(), self.transitions)
        cond = joint_bc / joint_bc.sum(-1, keepdim=True)  # P(c | b), (vocab, vocab)
        return -cond[inputs, targets].log()

    def true_loss(self, inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """The chain's own cross-entropy at each position, ``(batch, length)``; position 0
        (whose two predecessors are not both known) is NaN. Inputs without a BOS token."""
        out = torch.full(targets.shape, float("nan"), dtype=torch.float64)
        probs = self.transitions[inputs[:, :-1], inputs[:, 1:], targets[:, 1:]]  # (batch, n−1)
        out[:, 1:] = -probs.log()
        return out


def with_bos(
    batch: tuple[torch.Tensor, torch.Tensor, torch.Tensor], bos: int | torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Put the token ``bos`` in front of every sequence of a task batch.

    ``(inputs, targets, scored)`` of ``n`` positions become ``n + 1`` positions: the BOS input
    predicts the first token (never scored), every other prediction moves one position right.
    ``bos`` is one token id for every sequence, or a ``(batch,)`` tensor of ids, one per
    sequence (the random-first-token ablation).
    """
    inputs, targets, scored = batch
    if isinstance(bos, torch.Tensor):
        if bos.shape != (inputs.shape[0],) or bos.dtype != inputs.dtype:
            raise ValueError(f"bos must be one id or a ({inputs.shape[0]},) tensor of "
                             f"{inputs.dtype} ids, got shape {tuple(bos.shape)} {bos.dtype}")
        first = bos[:, None]  # (batch, 1)
    else:
        bos = check_int(bos, "bos", minimum=0)
        first = torch.full((inputs.shape[0], 1), bos, dtype=inputs.dtype)  # (batch, 1)
    return (
        torch.cat([first, inputs], 1),  # (batch, n + 1)
        torch.cat([inputs[:, :1], targets], 1),  # (batch, n + 1)
        torch.cat([torch.zeros(1, dtype=torch.bool), scored]),  # (n + 1,)
    )


def make_task(name: str, *, vocab: int, train_length: int, seed: int = 0,
              concentration: float = 0.3) -> CopyTask | MarkovTask:
    """Build a task by name (``"copy"`` or ``"markov"``)."""
    if name == "copy":
        return CopyTask(vocab)
    if name == "markov":
        return MarkovTask(vocab, concentration, seed, train_length)
    raise ValueError(f"task must be one of {TASKS}, got {name!r}")
