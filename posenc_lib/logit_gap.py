"""How far apart two sets of next-token logits are, in units a reader can weigh.

A largest absolute logit difference (``max |Δ logit|``) says that two computations disagree, but
not whether the disagreement matters: a shift of 0.9 in one logit of a flat distribution barely
moves the prediction, while the same shift at the top of a peaked one can change the chosen token.
:func:`logit_gap` reports three numbers side by side:

* ``max_abs`` — the largest ``|reference − other|`` over every position and vocabulary entry;
* ``kl`` — the mean over positions of ``KL(softmax(reference) ‖ softmax(other))`` in nats: the
  extra loss, per token, of predicting with ``other`` when ``reference`` is right;
* ``top1_agreement`` — the share of positions whose most likely token is the same.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ._validation import check_float_tensor

__all__ = ["LogitGap", "logit_gap"]


@dataclass(frozen=True)
class LogitGap:
    """Three measures of the distance between two logit tensors (see :func:`logit_gap`)."""

    max_abs: float
    kl: float
    top1_agreement: float
    positions: int

    def __str__(self) -> str:
        return (f"max |Δ logit| {self.max_abs:.2e}, KL {self.kl:.2e} nats, "
                f"same top-1 at {self.top1_agreement:.0%} of {self.positions} position(s)")


def logit_gap(reference: torch.Tensor, other: torch.Tensor) -> LogitGap:
    """Compare two logit tensors of shape ``(..., vocab)``.

    Parameters
    ----------
    reference : torch.Tensor
        Logits of the computation taken as right, shape ``(..., vocab)``; every leading index is
        one position (a single position may be passed as shape ``(vocab,)``).
    other : torch.Tensor
        Logits to compare, the same shape.

    Returns
    -------
    LogitGap
        ``max_abs`` (largest absolute difference), ``kl`` (mean over positions of
        ``KL(softmax(reference) ‖ softmax(other))``, nats, computed in float64),
        ``top1_agreement`` (share of positions with the same arg-max) and ``positions``.

    Raises
    ------
    TypeError
        If either input is not a floating-point tensor.
    ValueError
        If the shapes differ, the vocabulary has fewer than 2 entries, or a logit is not finite.
    """
    reference = check_float_tensor(reference, "reference")
    other = check_float_tensor(other, "other")
    if reference.shape != other.shape:
        raise ValueError(
            f"reference and other must have the same shape (..., vocab), got "
            f"{tuple(reference.shape)} and {tuple(other.shape)}")
    if reference.shape[-1] < 2:
        raise ValueError(
            f"the last dimension (vocab) must be at least 2, got {reference.shape[-1]}")
    ref = reference.detach().to(torch.float64).reshape(-1, reference.shape[-1])
    oth = other.detach().to(torch.float64).reshape(-1, other.shape[-1])
    for name, x in (("reference", ref), ("other", oth)):
        if not bool(torch.isfinite(x).all()):
            raise ValueError(f"{name} must hold only finite logits (a NaN or an inf was found)")
    log_p, log_q = ref.log_softmax(-1), oth.log_softmax(-1)
    kl = (log_p.exp() * (log_p - log_q)).sum(-1).clamp_min(0.0)  # rounding can dip below 0
    same = (ref.argmax(-1) == oth.argmax(-1)).to(torch.float64)
    return LogitGap(max_abs=float((ref - oth).abs().max()), kl=float(kl.mean()),
                    top1_agreement=float(same.mean()), positions=ref.shape[0])
