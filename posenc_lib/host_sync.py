"""Count the operations that make the host wait for the device (host synchronisations).

On a GPU, any operation that turns a device value into a Python number (``int(t)``,
``t.item()``, ``bool(t)``, ``if (t < 0).any():``, ``torch.equal``) or copies a tensor to the CPU
makes the host wait until every kernel queued before it has finished: the launch queue drains,
and a CUDA graph cannot be captured around it. On a CPU the same operations cost nothing special,
but they go through the same ATen operators, so counting those operators on a CPU shows how many
synchronisations the code *would* make on an accelerator.

:class:`HostReadCounter` is a ``TorchDispatchMode`` that counts them:

* ``aten::_local_scalar_dense`` — what ``item()``, ``int()``, ``float()``, ``bool()`` and
  ``is_nonzero`` all end in;
* ``aten::equal`` — a tensor comparison that returns a Python ``bool``;
* copies whose source is not on the CPU and whose result is (``.cpu()``, ``.tolist()`` of a
  device tensor, ``.to("cpu")``);
* copies from the CPU to another device (``positions.to(q.device)`` with CPU ``positions``,
  ``torch.tensor(40, device="cuda")``): PyTorch's CUDA copy kernel waits for a blocking copy in
  either direction. A copy made with ``non_blocking=True`` from pinned memory does not wait and
  is not counted.

The device rule that follows: tensors a step needs (position ids, a position counter, the
module's buffers) must already be on the device of the inputs, or be copied there with
``non_blocking=True`` from pinned memory.

On a CPU-only machine the last two kinds are seen by running the code on PyTorch's ``meta``
device (shapes, no values): a copy from the CPU to ``meta`` is counted like one to a GPU.

Reading a CPU tensor through NumPy (``t.numpy()``) dispatches no operator and is not counted:
it is a plain memory read, and only CPU tensors can do it (a CUDA tensor must be copied first,
which is counted).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode

__all__ = ["HostReadCounter", "count_host_reads"]

_READS = frozenset({"aten::_local_scalar_dense", "aten::equal"})
_COPIES = frozenset({"aten::_to_copy", "aten::copy_", "aten::to"})


def _device_of(value: object) -> torch.device | None:
    return value.device if isinstance(value, torch.Tensor) else None


def _pinned(value: object) -> bool:
    """Whether a CPU tensor is in pinned (page-locked) memory; False when that cannot be told."""
    try:
        return isinstance(value, torch.Tensor) and value.is_pinned()
    except RuntimeError:  # no accelerator to pin for
        return False


def _copy_kind(name: str, args: tuple, kwargs: dict, out: object) -> str | None:
    """``"device to host"``, ``"host to device"`` or None (no synchronising copy)."""
    copy_in_place = name == "aten::copy_"
    source = _device_of(args[1] if copy_in_place else args[0])
    result = _device_of(args[0] if copy_in_place else out)
    if source is None or result is None:
        return None
    if source.type != "cpu" and result.type == "cpu":
        return "device to host"
    if source.type == "cpu" and result.type != "cpu":
        if copy_in_place:
            non_blocking = bool(args[2]) if len(args) > 2 else bool(kwargs.get("non_blocking"))
        else:
            non_blocking = bool(kwargs.get("non_blocking"))
        if non_blocking and _pinned(args[1] if copy_in_place else args[0]):
            return None
        return "host to device"
    return None


class HostReadCounter(TorchDispatchMode):
    """A dispatch mode counting the operators that read device values on the host, and the
    blocking copies between the host and a device.

    Use as a context manager; ``counts`` maps an operator name to its number of calls and
    ``total`` is their sum.

    Examples
    --------
    >>> import torch
    >>> with HostReadCounter() as reads:
    ...     _ = int(torch.arange(3).max())
    >>> reads.total
    1
    """

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()

    @property
    def total(self) -> int:
        """Number of host reads counted so far."""
        return sum(self.counts.values())

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        kwargs = kwargs or {}
        name = func._schema.name
        if name in _READS:
            self.counts[name] += 1
        out = func(*args, **kwargs)
        if name in _COPIES:
            kind = _copy_kind(name, args, kwargs, out)
            if kind is not None:
                self.counts[f"{name} ({kind})"] += 1
        return out


def count_host_reads(fn: Callable[[], object]) -> Counter[str]:
    """Call ``fn()`` once and return the host reads it made, by operator name.

    Parameters
    ----------
    fn : callable
        Called with no arguments.

    Returns
    -------
    collections.Counter
        Operator name -> number of calls (empty when ``fn`` read no device value).
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    with HostReadCounter() as reads:
        fn()
    return reads.counts
