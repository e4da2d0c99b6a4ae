"""Train one lab configuration and evaluate it at 1×, 2×, 4×, 8× the training length.

:class:`LabSettings` holds every knob of the lab; its :meth:`~LabSettings.digest` identifies the
settings that produced a results file. :func:`train_run` trains one ``(task, scheme, seed)`` and
returns a JSON-ready record; :func:`evaluate` scores a trained model at one length, optionally
with a RoPE scaling method applied at inference (no fine-tuning).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F

from .._validation import check_choice, check_int, check_positive_int, check_seed, check_size
from ..scaling import dynamic_ntk_inv_freq, ntk_inv_freq, pi_inv_freq, yarn_inv_freq
from .model import SCHEMES, ModelConfig, TinyDecoder
from .probe import position_probe
from .tasks import TASKS, CopyTask, MarkovTask, make_task

__all__ = [
    "ROPE_METHODS",
    "LabSettings",
    "build_model",
    "evaluate",
    "rope_method_inv_freq",
    "train_model",
    "train_run",
]

ROPE_METHODS = ("plain", "pi", "ntk", "dynamic_ntk", "yarn")


@dataclass(frozen=True)
class LabSettings:
    """Every setting of the lab; the results file records them and their digest."""

    train_length: int = 32
    eval_multiples: tuple[int, ...] = (1, 2, 4, 8)
    steps: int = 1500
    batch: int = 32
    lr: float = 3e-3
    warmup: int = 50
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int = 128
    copy_vocab: int = 160
    markov_vocab: int = 16
    markov_concentration: float = 0.3
    markov_seed: int = 1234
    rope_base: float = 10000.0
    abf_base: float = 500000.0
    eval_batch: int = 64
    eval_seed: int = 2024
    seeds: tuple[int, ...] = (0, 1, 2)
    schemes: tuple[str, ...] = SCHEMES
    tasks: tuple[str, ...] = TASKS
    rope_methods: tuple[str, ...] = ROPE_METHODS

    def __post_init__(self) -> None:
        check_int(self.train_length, "train_length", minimum=4)
        if self.train_length % 2:
            raise ValueError(f"train_length must be even, got {self.train_length}")
        check_size(("train_length", self.train_length))
        check_int(self.steps, "steps", minimum=1)
        for name in ("batch", "d_model", "n_heads", "n_layers", "d_ff", "eval_batch"):
            check_positive_int(getattr(self, name), name)
        for scheme in self.schemes:
            check_choice(scheme, "schemes", SCHEMES)
        for task in self.tasks:
            check_choice(task, "tasks", TASKS)
        if not self.eval_multiples or any(
            not isinstance(m, int) or m < 1 for m in self.eval_multiples
        ):
            raise ValueError(f"eval_multiples must be positive integers, got {self.eval_multiples}")
        if 2 * (self.copy_vocab - 1) < self.max_eval_length:
            raise ValueError(
                f"copy_vocab must be >= max eval length / 2 + 1 = {self.max_eval_length // 2 + 1}"
            )

    @property
    def max_eval_length(self) -> int:
        return self.train_length * max(self.eval_multiples)

    @property
    def eval_lengths(self) -> list[int]:
        return [self.train_length * m for m in self.eval_multiples]

    def to_dict(self) -> dict:
        return asdict(self)

    def digest(self) -> str:
        """A short hash of the settings (the results file must carry the current one)."""
        text = json.dumps(self.to_dict(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def task_for(settings: LabSettings, task: str) -> CopyTask | MarkovTask:
    """The task object of the lab for ``task`` (``"copy"`` or ``"markov"``)."""
    vocab = settings.copy_vocab if task == "copy" else settings.markov_vocab
    return make_task(
        task, vocab=vocab, train_length=settings.train_length, seed=settings.markov_seed,
        concentration=settings.markov_concentration,
    )


def build_model(settings: LabSettings, task: str, scheme: str, seed: int) -> TinyDecoder:
    """A freshly initialised model (``torch.manual_seed(seed)`` first, so the init is fixed)."""
    check_choice(task, "task", TASKS)
    check_choice(scheme, "scheme", SCHEMES)
    torch.manual_seed(check_seed(seed))
    config = ModelConfig(
        vocab=settings.copy_vocab if task == "copy" else settings.markov_vocab,
        scheme=scheme,
        d_model=settings.d_model,
        n_heads=settings.n_heads,
        n_layers=settings.n_layers,
        d_ff=settings.d_ff,
        max_len=settings.max_eval_length,
        rope_base=settings.abf_base if scheme == "rope_abf" else settings.rope_base,
    )
    return TinyDecoder(config)


def rope_method_inv_freq(
    model: TinyDecoder, method: str, length: int, train_length: int
) -> tuple[torch.Tensor | None, float]:
    """``(inv_freq, logit_scale)`` of a RoPE scaling method for evaluating at ``length``.

    PI, NTK and YaRN use the factor ``s = length / train_length`` matched to the evaluation
    length (at ``s <= 1`` they are plain RoPE); dynamic NTK is Hugging Face's rule with factor 1,
    ``s = length / train_length`` for the current length ``length`` (:func:`evaluate` applies it
    block by block). YaRN also scales the logits by its attention factor squared.
    """
    method = check_choice(method, "method", ROPE_METHODS)
    length = check_positive_int(length, "length")
    train_length = check_positive_int(train_length, "train_length")
    inv_freq = model.default_inv_freq()
    if inv_freq is None:
        raise ValueError(f"rope methods need a RoPE model, got scheme {model.config.scheme!r}")
    dim, base = model.config.head_dim, model.config.rope_base
    factor = max(1.0, length / train_length)
    if method == "plain" or factor == 1.0:
        return inv_freq, 1.0
    if method == "pi":
        return pi_inv_freq(dim, base, factor), 1.0
    if method == "ntk":
        return ntk_inv_freq(dim, base, factor), 1.0
    if method == "dynamic_ntk":
        return dynamic_ntk_inv_freq(dim, base, 1.0, length, train_length), 1.0
    inv_freq, attention_factor = yarn_inv_freq(dim, base, factor, train_length)
    return inv_freq, attention_factor**2


def _loss(model: TinyDecoder, inputs: torch.Tensor, targets: torch.Tensor, scored: torch.Tensor,
          **kwargs) -> tuple[torch.Tensor, torch.Tensor]:
    logits = model(inputs, **kwargs).logits  # (batch, seq, vocab)
    losses = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")  # (batch, seq)
    correct = logits.argmax(-1) == targets  # (batch, seq)
    return losses[:, scored], correct[:, scored]


def eval_batch(settings: LabSettings, task: CopyTask | MarkovTask, length: int):
    """The fixed evaluation batch at ``length`` (same for every run)."""
    generator = torch.Generator().manual_seed(settings.eval_seed + length)
    return task.batch(generator, settings.eval_batch, length)


def _metric(task: CopyTask | MarkovTask, losses: torch.Tensor, correct: torch.Tensor) -> float:
    if task.metric == "accuracy":
        return float(correct.float().mean())
    return float(losses.mean())


@torch.no_grad()
def evaluate(
    model: TinyDecoder,
    settings: LabSettings,
    task: CopyTask | MarkovTask,
    length: int,
    method: str = "plain",
) -> float:
    """The task's metric at ``length``: copy accuracy, or Markov loss (nats) on scored positions.

    ``method`` (RoPE models only) applies a scaling method of :data:`ROPE_METHODS` at inference:
    PI, NTK and YaRN with the factor ``s = length / L`` matched to the evaluation length, for
    the whole sequence at once. Dynamic NTK lets the factor follow the *current* length, as when
    generating: the sequence is scored block by block (``L`` positions at a time), each block
    from its full prefix with the factor of that prefix's length (Hugging Face's rule with
    factor 1: ``s = prefix / L``), like decoding that recomputes the cache every ``L`` tokens.
    """
    length = check_positive_int(length, "length")
    model.eval()
    inputs, targets, scored = eval_batch(settings, task, length)
    if model.config.scheme not in ("rope", "rope_abf"):
        if method != "plain":
            raise ValueError(f"method {method!r} needs a RoPE model")
        return _metric(task, *_loss(model, inputs, targets, scored))
    train_length = settings.train_length
    if method != "dynamic_ntk":
        inv_freq, logit_scale = rope_method_inv_freq(model, method, length, train_length)
        return _metric(task, *_loss(model, inputs, targets, scored, inv_freq=inv_freq,
                                    logit_scale=logit_scale))
    losses, correct = [], []
    for end in range(train_length, length + 1, train_length):
        block = torch.zeros(end, dtype=torch.bool)
        block[end - train_length:] = True
        inv_freq, _ = rope_method_inv_freq(model, method, end, train_length)
        block_losses, block_correct = _loss(model, inputs[:, :end], targets[:, :end],
                                            scored[:end] & block, inv_freq=inv_freq)
        losses.append(block_losses)
        correct.append(block_correct)
    return _metric(task, torch.cat(losses, 1), torch.cat(correct, 1))


def train_model(
    model: TinyDecoder,
    settings: LabSettings,
    task: CopyTask | MarkovTask,
    seed: int,
    steps: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> float:
    """Train ``model`` in place with AdamW (no weight decay), warm-up then cosine; return the
    mean training loss of the last 10% of steps. ``progress(k)`` is called with step counts."""
    steps = settings.steps if steps is None else check_positive_int(steps, "steps")
    seed = check_seed(seed)
    if seed > 2**63 - 1 - 10_000:  # the generator is seeded with 10_000 + seed
        raise ValueError(f"seed must be an integer in [0, 2**63 - 10001], got {seed}")
    generator = torch.Generator().manual_seed(10_000 + seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.lr, betas=(0.9, 0.98),
                                  weight_decay=0.0)
    warmup = min(settings.warmup, steps)

    def lr_at(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return 0.1 + 0.45 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))

    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_at)
    model.train()
    tail = []
    for step in range(steps):
        inputs, targets, scored = task.train_batch(generator, settings.batch, settings.train_length)
        losses, _ = _loss(model, inputs, targets, scored)
        loss = losses.mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        if step >= steps - max(1, steps // 10):
            tail.append(float(loss.detach()))
        if progress is not None and (step + 1) % 20 == 0:
            progress(20)
    if progress is not None and steps % 20:
        progress(steps % 20)
    return sum(tail) / len(tail)


def train_run(
    settings: LabSettings,
    task_name: str,
    scheme: str,
    seed: int,
    progress: Callable[[int], None] | None = None,
) -> tuple[dict, TinyDecoder]:
    """Train and evaluate one configuration; return ``(record, model)``.

    The record holds the configuration, seed, final training loss, metrics per evaluation length
    (and per RoPE method for RoPE models), a position probe of the first layer, and wall time.
    """
    from .. import __version__

    start = time.perf_counter()
    task = task_for(settings, task_name)
    model = build_model(settings, task_name, scheme, seed)
    train_loss = train_model(model, settings, task, seed, progress=progress)
    methods = settings.rope_methods if scheme in ("rope", "rope_abf") else ("plain",)
    metrics = {
        method: {str(n): evaluate(model, settings, task, n, method) for n in settings.eval_lengths}
        for method in methods
    }
    probe = position_probe(model, task, settings.train_length, settings.max_eval_length,
                           seed=settings.eval_seed)
    record = {
        "task": task_name,
        "scheme": scheme,
        "seed": seed,
        "metric": task.metric,
        "train_loss": train_loss,
        "metrics": metrics,
        "probe_r2": probe,
        "parameters": sum(p.numel() for p in model.parameters()),
        "wall_time_s": time.perf_counter() - start,
        "library_version": __version__,
    }
    return record, model
