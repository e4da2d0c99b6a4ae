"""Train one lab configuration and evaluate it at 1×, 1.5×, 2×, 4×, 8× the training length.

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

import numpy as np
import torch
import torch.nn.functional as F

from .._validation import check_choice, check_int, check_positive_int, check_seed, check_size
from ..scaling import (
    dynamic_ntk_inv_freq,
    ntk_inv_freq,
    pi_inv_freq,
    yarn_inv_freq,
    yarn_paper_inv_freq,
)
from ..serving import streaming_cache_mask
from .model import ALL_SCHEMES, ROTARY_SCHEMES, SCHEMES, ModelConfig, TinyDecoder
from .probe import position_probe
from .tasks import TASKS, CopyTask, MarkovTask, make_task, with_bos

__all__ = [
    "ALL_VARIANTS",
    "GRID_ROPE_METHODS",
    "ROPE_METHODS",
    "VARIANTS",
    "LabSettings",
    "build_model",
    "evaluate",
    "evaluate_full",
    "prepend_first",
    "rope_method_inv_freq",
    "train_model",
    "train_run",
    "validation_batch",
]

# Inference-time RoPE methods. "_temp": with YaRN's attention temperature (0.1·ln s + 1)² on the
# logits; "yarn_no_temp": YaRN's spectrum without it; "temp": the temperature alone. "yarn" is the
# reference code's YaRN (ramp linear in the pair index between the indices of beta = 32 and
# alpha = 1 turns, ends rounded outward to whole indices and the low end clamped at pair 0, as in
# transformers); "yarn_unrounded" is the same without the rounding (transformers' truncate=False;
# the clamp at 0 stays); "yarn_paper" is the paper's continuous ramp in each pair's turn count.
# All three apply the same temperature. "yarn_fixed" is the reference code's YaRN with one factor
# for every evaluation length, the one of the longest (s = (8L + 1)/(L + 1) with BOS at the grid's
# lengths), as a deployment fixes it. The main grid evaluates GRID_ROPE_METHODS; the last three
# run in the ablations.
ROPE_METHODS = ("plain", "pi", "ntk", "dynamic_ntk", "yarn", "yarn_no_temp", "pi_temp",
                "ntk_temp", "temp", "yarn_paper", "yarn_unrounded", "yarn_fixed")
GRID_ROPE_METHODS = ROPE_METHODS[:-3]

# The grid's variants: the main one (a BOS token on every sequence) and two ablations.
VARIANTS = ("bos", "no_bos", "learned_std1")
# Outside the grid (posenc_lib.lab.ablations): "random_first" puts a random token of the task's
# own vocabulary in front of every sequence instead of the one BOS id — an extra first position
# whose token is not recognisable.
ALL_VARIANTS = (*VARIANTS, "random_first")


@dataclass(frozen=True)
class LabSettings:
    """Every setting of the lab; the results file records them and their digest.

    The main grid (variant ``"bos"``) trains every scheme on every task for every seed in
    ``seeds``, with a BOS token in front of every sequence. Ablations: ``"no_bos"`` drops the
    BOS token (every scheme with the first of ``ablation_seeds``, the schemes of
    ``ablation_seed_schemes`` with all of them); ``"learned_std1"`` (the learned table only,
    first ablation seed) initialises the table at std 1 instead of ``learned_init_std``.
    ``max_runs`` keeps only the first runs of that grid, in the order of
    :func:`posenc_lib.lab.run.jobs` (most informative first): the budget of a busy machine.
    """

    train_length: int = 32
    eval_multiples: tuple[float, ...] = (1, 1.5, 2, 4, 8)
    steps: int = 1500
    batch: int = 32
    lr: float = 3e-3
    warmup: int = 50
    d_model: int = 64
    n_heads: int = 4
    copy_layers: int = 3
    markov_layers: int = 2
    d_ff: int = 128
    copy_vocab: int = 160
    markov_vocab: int = 16
    markov_concentration: float = 0.3
    markov_seed: int = 1234
    rope_base: float = 10000.0
    abf_base: float = 500000.0
    learned_init_std: float = 0.02
    eval_batch: int = 64
    eval_seed: int = 2024
    val_batch: int = 64
    curve_every: int = 250
    probe_batch: int = 256
    copy_fit_accuracy: float = 0.95
    markov_fit_margin: float = 0.1
    seeds: tuple[int, ...] = (0, 1, 2)
    ablation_seeds: tuple[int, ...] = (0, 1)
    ablation_seed_schemes: tuple[str, ...] = ("none", "alibi")
    schemes: tuple[str, ...] = SCHEMES
    tasks: tuple[str, ...] = TASKS
    variants: tuple[str, ...] = VARIANTS
    rope_methods: tuple[str, ...] = GRID_ROPE_METHODS
    max_runs: int | None = None

    def __post_init__(self) -> None:
        check_int(self.train_length, "train_length", minimum=4)
        if self.train_length % 2:
            raise ValueError(f"train_length must be even, got {self.train_length}")
        check_size(("train_length", self.train_length))
        check_int(self.steps, "steps", minimum=1)
        for name in ("batch", "d_model", "n_heads", "copy_layers", "markov_layers", "d_ff",
                     "eval_batch", "val_batch", "curve_every"):
            check_positive_int(getattr(self, name), name)
        check_int(self.probe_batch, "probe_batch", minimum=2)
        if self.max_runs is not None:
            check_positive_int(self.max_runs, "max_runs")
        for scheme in self.schemes:
            check_choice(scheme, "schemes", SCHEMES)
        for task in self.tasks:
            check_choice(task, "tasks", TASKS)
        for scheme in self.ablation_seed_schemes:
            check_choice(scheme, "ablation_seed_schemes", SCHEMES)
        for variant in self.variants:
            check_choice(variant, "variants", VARIANTS)
        for method in self.rope_methods:
            check_choice(method, "rope_methods", ROPE_METHODS)
        if not self.seeds:
            raise ValueError("seeds must hold at least one seed")
        if not self.eval_multiples or any(
            not isinstance(m, (int, float)) or m < 1 for m in self.eval_multiples
        ) or self.eval_multiples[0] != 1:
            raise ValueError(
                f"eval_multiples must be numbers >= 1 starting with 1, got {self.eval_multiples}"
            )
        for m in self.eval_multiples:
            if (self.train_length * m) % 2:
                raise ValueError(f"train_length × {m} must be an even integer")
        if 2 * (self.copy_vocab - 1) < self.max_eval_length:
            raise ValueError(
                f"copy_vocab must be >= max eval length / 2 + 1 = {self.max_eval_length // 2 + 1}"
            )

    @property
    def max_eval_length(self) -> int:
        return int(self.train_length * max(self.eval_multiples))

    @property
    def eval_lengths(self) -> list[int]:
        """Evaluation lengths in task tokens (a BOS token, when used, comes on top)."""
        return [int(self.train_length * m) for m in self.eval_multiples]

    def layers(self, task: str) -> int:
        """The depth of the models of ``task``."""
        task = check_choice(task, "task", TASKS)
        return self.copy_layers if task == "copy" else self.markov_layers

    def to_dict(self) -> dict:
        return asdict(self)

    def digest(self) -> str:
        """A short hash of the settings (the results file must carry the current one)."""
        text = json.dumps(self.to_dict(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def variant_options(variant: str) -> dict:
    """``{"bos": bool, "random_first": bool, "learned_init_std": float | None}`` of a variant
    (``bos``: a first token is prepended; ``random_first``: it is a random task token, not the BOS
    id; ``learned_init_std`` None: the default)."""
    variant = check_choice(variant, "variant", ALL_VARIANTS)
    return {"bos": variant != "no_bos", "random_first": variant == "random_first",
            "learned_init_std": 1.0 if variant == "learned_std1" else None}


def prepend_first(batch: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
                  task: CopyTask | MarkovTask, bos: bool, random_first: bool = False,
                  seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The batch as the variant sees it: as is, with the BOS id (``task.vocab``) in front, or with
    a random task token in front (drawn from a generator seeded with ``seed``).

    The random token is drawn uniformly from all ``task.vocab`` ids, the copy task's separator and
    content tokens included: with ``k`` tokens to copy it equals one of them with probability
    ``k/vocab`` (7.5 % of the lab's training sequences at ``L = 32``, vocab 160), and then the
    token after that token's previous occurrence is ambiguous for one scored prediction.
    """
    if not bos:
        return batch
    if not random_first:
        return with_bos(batch, task.vocab)
    generator = torch.Generator().manual_seed(seed)
    first = torch.randint(0, task.vocab, (batch[0].shape[0],), generator=generator,
                          dtype=batch[0].dtype)
    return with_bos(batch, first)


def task_for(settings: LabSettings, task: str) -> CopyTask | MarkovTask:
    """The task object of the lab for ``task`` (``"copy"`` or ``"markov"``)."""
    vocab = settings.copy_vocab if task == "copy" else settings.markov_vocab
    return make_task(
        task, vocab=vocab, train_length=settings.train_length, seed=settings.markov_seed,
        concentration=settings.markov_concentration,
    )


def build_model(settings: LabSettings, task: str, scheme: str, seed: int,
                variant: str = "bos") -> TinyDecoder:
    """A freshly initialised model (``torch.manual_seed(seed)`` first, so the init is fixed).

    With a BOS token (every variant but ``"no_bos"``) the vocabulary has one more id, the BOS
    token ``task.vocab``, and every sequence one more position.
    """
    check_choice(task, "task", TASKS)
    check_choice(scheme, "scheme", ALL_SCHEMES)
    options = variant_options(variant)
    torch.manual_seed(check_seed(seed))
    vocab = settings.copy_vocab if task == "copy" else settings.markov_vocab
    std = options["learned_init_std"]
    config = ModelConfig(
        vocab=vocab + int(options["bos"] and not options["random_first"]),
        scheme=scheme,
        d_model=settings.d_model,
        n_heads=settings.n_heads,
        n_layers=settings.layers(task),
        d_ff=settings.d_ff,
        max_len=settings.max_eval_length + 1,
        rope_base=settings.abf_base if scheme == "rope_abf" else settings.rope_base,
        learned_init_std=settings.learned_init_std if std is None else std,
    )
    return TinyDecoder(config)


def rope_method_inv_freq(
    model: TinyDecoder, method: str, length: int, train_length: int
) -> tuple[torch.Tensor | None, float]:
    """``(inv_freq, logit_scale)`` of a RoPE scaling method for evaluating at ``length``.

    ``length`` and ``train_length`` count model positions (a BOS token included). PI, NTK and
    YaRN use the factor ``s = length / train_length`` matched to the evaluation length (at
    ``s <= 1`` every method is plain RoPE); dynamic NTK is Hugging Face's rule with factor 1,
    ``s = length / train_length`` for the current length ``length`` (:func:`evaluate` applies it
    block by block). YaRN scales the logits by its attention factor squared,
    ``(0.1·ln s + 1)²`` (as do ``yarn_unrounded``, the ramp without rounding its ends, and
    ``yarn_paper``, the paper's ramp in the turn count); ``yarn_no_temp`` drops it, ``pi_temp``,
    ``ntk_temp`` and ``temp`` add it to PI, NTK and plain RoPE. ``yarn_fixed`` is ``yarn``; its
    caller passes the longest evaluation length as ``length`` (:func:`evaluate_full`).
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
    yarn_freq, attention_factor = yarn_inv_freq(dim, base, factor, train_length)
    temperature = attention_factor**2
    if method == "dynamic_ntk":
        return dynamic_ntk_inv_freq(dim, base, 1.0, length, train_length), 1.0
    spectrum = {"pi": pi_inv_freq, "ntk": ntk_inv_freq}
    stem = method.removesuffix("_no_temp").removesuffix("_temp")
    if stem in spectrum:
        inv_freq = spectrum[stem](dim, base, factor)
    elif stem in ("yarn", "yarn_fixed"):
        inv_freq = yarn_freq
    elif method == "yarn_paper":
        inv_freq, _ = yarn_paper_inv_freq(dim, base, factor, train_length)
    elif method == "yarn_unrounded":
        inv_freq, _ = yarn_inv_freq(dim, base, factor, train_length, truncate=False)
    scaled = method in ("yarn", "yarn_paper", "yarn_unrounded", "yarn_fixed", "pi_temp",
                        "ntk_temp", "temp")
    return inv_freq, temperature if scaled else 1.0


def _loss(model: TinyDecoder, inputs: torch.Tensor, targets: torch.Tensor,
          **kwargs) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token cross-entropy and correctness (greedy argmax), each ``(batch, seq)``."""
    logits = model(inputs, **kwargs).logits  # (batch, seq, vocab)
    losses = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")  # (batch, seq)
    return losses, logits.argmax(-1) == targets


def eval_batch(settings: LabSettings, task: CopyTask | MarkovTask, length: int,
               bos: bool = True, random_first: bool = False):
    """The fixed evaluation batch at ``length`` task tokens (same for every run), with a BOS
    token in front when ``bos`` (id ``task.vocab``; a random task token if ``random_first``)."""
    generator = torch.Generator().manual_seed(settings.eval_seed + length)
    batch = task.batch(generator, settings.eval_batch, length)
    return prepend_first(batch, task, bos, random_first, seed=settings.eval_seed + 7 + length)


def _metric(task: CopyTask | MarkovTask, losses: torch.Tensor, correct: torch.Tensor) -> float:
    if task.metric == "accuracy":
        return float(correct.float().mean())
    return float(losses.mean())


@torch.no_grad()
def evaluate_full(
    model: TinyDecoder,
    settings: LabSettings,
    task: CopyTask | MarkovTask,
    length: int,
    method: str = "plain",
    bos: bool = True,
    logit_scale: float = 1.0,
    random_first: bool = False,
    query_scale: torch.Tensor | None = None,
    window: int | None = None,
) -> dict:
    """Score ``model`` on the fixed evaluation batch of ``length`` task tokens.

    Returns
    -------
    dict
        ``metric``: copy token accuracy, or Markov loss (nats), over the scored positions
        (Markov beyond the training length: positions never seen in training only);
        ``exact``: the share of sequences whose every scored token is right (copy; under
        teacher forcing, all-correct is exactly greedy decoding's exact match);
        ``loss`` and ``accuracy``: per position, averaged over the batch, ``(positions,)``
        float32 numpy arrays (every position, scored or not).

    ``method`` (RoPE models only) applies a scaling method of :data:`ROPE_METHODS` at inference
    with the factor ``s = positions / training positions`` matched to the evaluation length, for
    the whole sequence at once; ``"yarn_fixed"`` uses the factor of the longest evaluation length
    (``settings.max_eval_length``) at every length, the short ones included. Dynamic NTK is NTK
    with ``s`` from the current prefix length, keys recomputed: the sequence is scored block by
    block (``L`` positions at a time), each block from its full prefix with the factor of that
    prefix's length (Hugging Face's rule with factor 1). Cached generation behaves differently:
    its cached keys keep the frequencies they were rotated with.

    ``logit_scale`` (any scheme, > 0) multiplies every attention logit on top of the method's
    own factor: an inference-time temperature (Wang et al.'s remedy for NoPE's dilution).
    ``query_scale`` (any scheme) is a per-query temperature instead: ``(positions,)`` factors
    (a first token included), the one at index ``m`` multiplying the logits of the query at
    ``m`` (:meth:`posenc_lib.lab.model.TinyDecoder.forward`).

    ``window`` (any scheme, ``>= 1``; ``"plain"`` method only) replaces the causal mask by
    StreamingLLM's cache (:func:`posenc_lib.serving.streaming_cache_mask` with one sink): each
    query sees the sequence's first token and its ``window`` most recent keys, its own included.
    With ``window = train_length`` no query sees more keys than the last one in training did
    (with a BOS token), and queries inside the training range are unchanged.
    """
    length = check_positive_int(length, "length")
    method = check_choice(method, "method", ROPE_METHODS)
    if isinstance(logit_scale, bool) or not isinstance(logit_scale, (int, float)) or not (
        math.isfinite(logit_scale) and logit_scale > 0
    ):
        raise ValueError(f"logit_scale must be a finite number > 0, got {logit_scale!r}")
    model.eval()
    inputs, targets, scored = eval_batch(settings, task, length, bos, random_first)
    rope = model.config.scheme in ROTARY_SCHEMES
    if not rope and method != "plain":
        raise ValueError(f"method {method!r} needs a RoPE model")
    positions = inputs.shape[1]
    if query_scale is not None and (not isinstance(query_scale, torch.Tensor)
                                    or query_scale.shape != (positions,)):
        raise ValueError(f"query_scale must be a tensor of shape ({positions},), one factor per "
                         f"position of the evaluation sequence")
    train_positions = settings.train_length + int(bos)
    if window is not None:
        window = check_positive_int(window, "window")
        if method != "plain":
            raise ValueError(f"window applies only with method 'plain', got {method!r}")
    if method != "dynamic_ntk":
        kwargs: dict = {"logit_scale": float(logit_scale)}
        if rope:
            rope_length = (settings.max_eval_length + int(bos) if method == "yarn_fixed"
                           else positions)
            inv_freq, method_scale = rope_method_inv_freq(model, method, rope_length,
                                                          train_positions)
            kwargs = {"inv_freq": inv_freq, "logit_scale": method_scale * float(logit_scale)}
        if window is not None:
            kwargs["mask"] = streaming_cache_mask(positions, window, n_sinks=1)
        losses, correct = _loss(model, inputs, targets, query_scale=query_scale, **kwargs)
    else:
        losses = torch.empty(inputs.shape)
        correct = torch.empty(inputs.shape, dtype=torch.bool)
        ends = [*range(train_positions, positions, settings.train_length), positions]
        begin = 0
        for end in ends:
            inv_freq, _ = rope_method_inv_freq(model, method, end, train_positions)
            block_losses, block_correct = _loss(
                model, inputs[:, :end], targets[:, :end], inv_freq=inv_freq,
                logit_scale=float(logit_scale),
                query_scale=None if query_scale is None else query_scale[:end])
            losses[:, begin:end] = block_losses[:, begin:]
            correct[:, begin:end] = block_correct[:, begin:]
            begin = end
    out = {
        "metric": _metric(task, losses[:, scored], correct[:, scored]),
        "loss": losses.mean(0).numpy().astype(np.float32),
        "accuracy": correct.float().mean(0).numpy().astype(np.float32),
    }
    if task.metric == "accuracy":
        out["exact"] = float(correct[:, scored].all(1).float().mean())
    return out


def evaluate(
    model: TinyDecoder,
    settings: LabSettings,
    task: CopyTask | MarkovTask,
    length: int,
    method: str = "plain",
    bos: bool = True,
) -> float:
    """The task's metric at ``length`` (``evaluate_full(...)["metric"]``)."""
    return evaluate_full(model, settings, task, length, method, bos)["metric"]


def validation_batch(
    settings: LabSettings, task: CopyTask | MarkovTask, bos: bool = True,
    random_first: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The fixed validation batch of the learning curves: ``val_batch`` sequences at the
    training length (never the evaluation batch), with a first token as in ``eval_batch``.

    Returns
    -------
    tuple of torch.Tensor
        ``(inputs, targets, scored)`` as :func:`prepend_first` returns them.
    """
    generator = torch.Generator().manual_seed(settings.eval_seed - 1)
    batch = task.batch(generator, settings.val_batch, settings.train_length)
    return prepend_first(batch, task, bos, random_first, seed=settings.eval_seed - 2)


@torch.no_grad()
def _validate(model: TinyDecoder, settings: LabSettings, task: CopyTask | MarkovTask,
              bos: bool, random_first: bool = False) -> float:
    """The in-range metric on a fixed validation batch (never the evaluation batch)."""
    model.eval()
    inputs, targets, scored = validation_batch(settings, task, bos, random_first)
    losses, correct = _loss(model, inputs, targets)
    model.train()
    return _metric(task, losses[:, scored], correct[:, scored])


def train_model(
    model: TinyDecoder,
    settings: LabSettings,
    task: CopyTask | MarkovTask,
    seed: int,
    steps: int | None = None,
    progress: Callable[[int], None] | None = None,
    bos: bool = True,
    random_first: bool = False,
) -> tuple[float, list[list[float]]]:
    """Train ``model`` in place with AdamW (no weight decay), warm-up then cosine.

    Returns the mean training loss of the last 10% of steps and the learning curve: rows
    ``[step, mean training loss since the last row, in-range validation metric]`` every
    ``settings.curve_every`` steps and at the end. ``progress(k)`` is called with step counts.
    """
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
    tail, window, curve = [], [], []
    for step in range(steps):
        batch = task.train_batch(generator, settings.batch, settings.train_length)
        inputs, targets, scored = prepend_first(batch, task, bos, random_first,
                                                seed=20_000 + seed + step)
        losses, _ = _loss(model, inputs, targets)
        loss = losses[:, scored].mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        value = float(loss.detach())
        window.append(value)
        if step >= steps - max(1, steps // 10):
            tail.append(value)
        if (step + 1) % settings.curve_every == 0 or step + 1 == steps:
            curve.append([step + 1, sum(window) / len(window),
                          _validate(model, settings, task, bos, random_first)])
            window = []
        if progress is not None and (step + 1) % 20 == 0:
            progress(20)
    if progress is not None and steps % 20:
        progress(steps % 20)
    return sum(tail) / len(tail), curve


def fitted(settings: LabSettings, task: str, in_range: float) -> bool:
    """The in-range fit gate: copy accuracy >= ``copy_fit_accuracy``; Markov loss within
    ``markov_fit_margin`` nats of the chain's entropy rate. Only models that pass it are ranked
    on extrapolation."""
    task = check_choice(task, "task", TASKS)
    if task == "copy":
        return in_range >= settings.copy_fit_accuracy
    chain = task_for(settings, "markov")
    assert isinstance(chain, MarkovTask)
    return in_range <= chain.references()["floor"] + settings.markov_fit_margin


def train_run(
    settings: LabSettings,
    task_name: str,
    scheme: str,
    seed: int,
    variant: str = "bos",
    progress: Callable[[int], None] | None = None,
) -> tuple[dict, TinyDecoder, dict[str, np.ndarray]]:
    """Train and evaluate one configuration; return ``(record, model, per_position)``.

    The record holds the configuration, seed, final training loss, learning curve, metrics per
    evaluation length (and per RoPE method for RoPE models), copy exact match, the fit gate, a
    position probe of the first layer, and wall time. ``per_position`` holds the per-position
    loss and accuracy of the plain model at every evaluation length (keys ``"{n}/loss"``,
    ``"{n}/accuracy"``; RoPE models also ``"yarn/{n}/..."`` with YaRN), float32.
    """
    from .. import __version__

    start = time.perf_counter()
    options = variant_options(variant)
    bos, random_first = options["bos"], options["random_first"]
    task = task_for(settings, task_name)
    model = build_model(settings, task_name, scheme, seed, variant)
    train_loss, curve = train_model(model, settings, task, seed, progress=progress, bos=bos,
                                    random_first=random_first)
    methods = settings.rope_methods if scheme in ROTARY_SCHEMES else ("plain",)
    metrics: dict[str, dict[str, float]] = {}
    exact: dict[str, dict[str, float]] = {}
    per_position: dict[str, np.ndarray] = {}
    for method in methods:
        metrics[method] = {}
        for n in settings.eval_lengths:
            out = evaluate_full(model, settings, task, n, method, bos,
                                random_first=random_first)
            metrics[method][str(n)] = out["metric"]
            if method in ("plain", "yarn"):
                prefix = "" if method == "plain" else "yarn/"
                per_position[f"{prefix}{n}/loss"] = out["loss"]
                per_position[f"{prefix}{n}/accuracy"] = out["accuracy"]
            if "exact" in out:
                exact.setdefault(method, {})[str(n)] = out["exact"]
    in_range = metrics["plain"][str(settings.train_length)]
    probe_length = max(settings.train_length + 2,
                       min(4 * settings.train_length, settings.max_eval_length))
    first: int | torch.Tensor | None = task.vocab if bos else None
    if random_first:
        first = torch.randint(0, task.vocab, (settings.probe_batch,),
                              generator=torch.Generator().manual_seed(settings.eval_seed + 3))
    probe = position_probe(model, task, settings.train_length, probe_length,
                           seed=settings.eval_seed, batch=settings.probe_batch, bos=first)
    record = {
        "variant": variant,
        "task": task_name,
        "scheme": scheme,
        "seed": seed,
        "bos": bos,
        "layers": settings.layers(task_name),
        "metric": task.metric,
        "train_loss": train_loss,
        "curve": curve,
        "fitted": fitted(settings, task_name, in_range),
        "metrics": metrics,
        "exact": exact,
        "probe_r2": probe,
        "parameters": sum(p.numel() for p in model.parameters()),
        "wall_time_s": time.perf_counter() - start,
        "library_version": __version__,
    }
    return record, model, per_position
