"""A linear probe: how well does a layer's state predict the absolute position?

Fit ``position ≈ h·w + c`` by ridge least squares on half of a batch of sequences and report the
coefficient of determination ``R² = 1 − SSE/SST`` on the other half, separately for positions
inside the training range ``[0, L)`` and beyond it ``[L, n)`` (``L`` the split index, counted
from the BOS token when there is one). With ``d_model = 64`` features the probe has 65
parameters: fit it on many sequences (the lab uses 128), or R² measures overfitting.
"""

from __future__ import annotations

import torch

from .._validation import check_int, check_seed, check_size
from .tasks import with_bos

__all__ = ["fit_probe", "position_probe", "probe_readout", "r_squared"]


def r_squared(prediction: torch.Tensor, target: torch.Tensor) -> float:
    """``1 − Σ(target − prediction)² / Σ(target − mean)²`` for two ``(n,)`` tensors."""
    if prediction.shape != target.shape or target.ndim != 1 or target.numel() < 2:
        raise ValueError("prediction and target must be 1-D tensors of the same length >= 2")
    target = target.double()
    sst = ((target - target.mean()) ** 2).sum()
    if sst == 0:
        raise ValueError("target is constant: R² is undefined")
    return float(1 - ((target - prediction.double()) ** 2).sum() / sst)


def fit_probe(features: torch.Tensor, target: torch.Tensor, ridge: float = 1e-3) -> torch.Tensor:
    """Ridge least squares with a bias; ``features`` ``(n, d)``, ``target`` ``(n,)``.

    Returns the weights ``(d + 1,)`` (last entry the bias), float64.
    """
    if features.ndim != 2 or target.shape != (features.shape[0],):
        raise ValueError("features must be (n, d) and target (n,)")
    x = torch.cat([features.double(), torch.ones(len(features), 1, dtype=torch.float64)], 1)
    gram = x.T @ x + ridge * torch.eye(x.shape[1], dtype=torch.float64)  # (d + 1, d + 1)
    return torch.linalg.solve(gram, x.T @ target.double())  # (d + 1,)


def _predict(weights: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
    return features.double() @ weights[:-1] + weights[-1]


@torch.no_grad()
def position_probe(model, task, train_length: int, length: int, *, layer: int = 1,
                   seed: int = 0, batch: int = 256, bos: int | torch.Tensor | None = None
                   ) -> dict[str, float]:
    """R² of linear probes of position from ``model``'s residual stream after block ``layer``.

    Runs ``batch`` sequences of ``length`` tokens (with the token ``bos`` in front if given;
    positions then count from the BOS token, 0); probes are fitted on the first half of the
    sequences and scored on the second half. ``train_length`` is the split index in these
    positions: a model trained on ``L`` tokens after a BOS token saw positions ``0 … L``, so
    ``train_length=L`` scores its last trained position with ``beyond`` and ``L + 1`` splits
    exactly at the trained boundary (the lab's stored probes use ``L``).

    Returns
    -------
    dict
        ``in_range``: fitted and scored on positions ``< train_length``;
        ``beyond``: fitted and scored on positions ``>= train_length``.
    """
    train_length = check_int(train_length, "train_length", minimum=2)
    check_size(("train_length", train_length))
    length = check_int(length, "length", minimum=train_length + 2)
    layer = check_int(layer, "layer", minimum=0)
    if layer > model.config.n_layers:
        raise ValueError(f"layer must be in [0, {model.config.n_layers}], got {layer}")
    seed = check_seed(seed)
    batch = check_int(batch, "batch", minimum=2)
    check_size(("batch", batch), ("length", length), ("d_model", model.config.d_model),
               what="the (batch, length, d_model) hidden states")
    model.eval()
    generator = torch.Generator().manual_seed(seed)
    inputs, targets, scored = task.batch(generator, batch, length)
    if bos is not None:
        inputs = with_bos((inputs, targets, scored), bos)[0]
    # 32 sequences at a time: the attention weights of a whole batch would not fit in memory.
    hidden = torch.cat([model(chunk).hidden[layer] for chunk in inputs.split(32)])
    half = batch // 2
    positions = torch.arange(inputs.shape[1], dtype=torch.float64)  # (positions,)
    inside = positions < train_length  # (length,)

    def split(rows: slice, cols: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = hidden[rows][:, cols]  # (half, cols, d_model)
        return h.reshape(-1, h.shape[-1]), positions[cols].repeat(h.shape[0])

    fit_in, fit_out = split(slice(0, half), inside), split(slice(0, half), ~inside)
    test_in, test_out = split(slice(half, batch), inside), split(slice(half, batch), ~inside)
    w_in, w_out = fit_probe(*fit_in), fit_probe(*fit_out)
    return {
        "in_range": r_squared(_predict(w_in, test_in[0]), test_in[1]),
        "beyond": r_squared(_predict(w_out, test_out[0]), test_out[1]),
    }


@torch.no_grad()
def probe_readout(model, task, train_length: int, length: int, *, layer: int = 1,
                  seed: int = 0, batch: int = 256, bos: int | None = None) -> torch.Tensor:
    """The position an in-range probe reads at every position, beyond the range included.

    Unlike :func:`position_probe`'s ``beyond`` score, which refits the probe on the new positions
    (can they be decoded at all?), the probe here is fitted on positions ``< train_length`` only
    (first half of the sequences) and then applied, unchanged, to every position of the other
    half: what the model's own in-range position code says about a position it never saw. With
    ``bos``, positions count from the BOS token, so pass ``L + 1`` to fit on all the positions
    ``0 … L`` of a model trained on ``L`` tokens after BOS.

    Returns
    -------
    torch.Tensor
        ``(positions,)`` float64, the mean reading over the held-out sequences at each position
        (position 0 is the BOS token when ``bos`` is given).
    """
    train_length = check_int(train_length, "train_length", minimum=2)
    length = check_int(length, "length", minimum=train_length + 2)
    layer = check_int(layer, "layer", minimum=0)
    if layer > model.config.n_layers:
        raise ValueError(f"layer must be in [0, {model.config.n_layers}], got {layer}")
    batch = check_int(batch, "batch", minimum=2)
    check_size(("batch", batch), ("length", length), ("d_model", model.config.d_model),
               what="the (batch, length, d_model) hidden states")
    model.eval()
    generator = torch.Generator().manual_seed(check_seed(seed))
    inputs, targets, scored = task.batch(generator, batch, length)
    if bos is not None:
        inputs = with_bos((inputs, targets, scored), bos)[0]
    hidden = torch.cat([model(chunk).hidden[layer] for chunk in inputs.split(32)])
    half = batch // 2
    positions = torch.arange(inputs.shape[1], dtype=torch.float64)  # (positions,)
    inside = positions < train_length
    fit = hidden[:half][:, inside]  # (half, inside, d_model)
    weights = fit_probe(fit.reshape(-1, fit.shape[-1]), positions[inside].repeat(half))
    held_out = hidden[half:].double()  # (batch - half, positions, d_model)
    return (held_out @ weights[:-1] + weights[-1]).mean(0)  # (positions,)
