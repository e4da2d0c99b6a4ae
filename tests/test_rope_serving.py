"""RotaryEmbedding as a serving layer: no host reads, (batch, seq) positions, one shared table."""

from __future__ import annotations

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

import posenc_lib.rope as rope_module
from posenc_lib import (
    CONVENTIONS,
    RotaryEmbedding,
    apply_rope_complex,
    apply_rope_half,
    apply_rope_interleaved,
    apply_rope_partial,
)
from posenc_lib.host_sync import HostReadCounter, count_host_reads

APPLY = {
    "half": apply_rope_half,
    "interleaved": apply_rope_interleaved,
    "complex": apply_rope_complex,
}
Q = torch.randn(2, 4, 3, 16, generator=torch.Generator().manual_seed(0))


def _paths(layer: RotaryEmbedding, device: str) -> dict[str, object]:
    q = Q.to(device)
    return {
        "offset=100": lambda: layer(q, q, offset=100),
        "offset=tensor(100)": lambda: layer(q, q, offset=torch.tensor(100, device=device)),
        "positions (seq,) int": lambda: layer(q, q, torch.tensor([7, 8, 9], device=device)),
        "positions (batch, seq) int": lambda: layer(
            q, q, torch.tensor([[0, 0, 1], [5, 6, 7]], device=device)
        ),
        "positions (seq,) float": lambda: layer(q, q, torch.tensor([0.5, 1.5, 2.5], device=device)),
    }


@pytest.mark.parametrize("reserved", [0, 256])
@pytest.mark.parametrize("convention", CONVENTIONS)
def test_every_forward_path_reads_no_device_value(convention: str, reserved: int) -> None:
    layer = RotaryEmbedding(16, convention=convention, max_positions=reserved)
    for name, call in _paths(layer, "cpu").items():
        call()  # first call may build the table; the build reads nothing either
        assert count_host_reads(call) == {}, name


def test_the_counter_counts_what_the_old_validation_did() -> None:
    # The check that would catch a regression: the reads the old code made are counted.
    x = torch.tensor([1.0, 2.0])
    assert count_host_reads(lambda: bool(torch.isfinite(x).all())) == {
        "aten::_local_scalar_dense": 1
    }
    assert count_host_reads(lambda: int(torch.aminmax(x)[0])) == {"aten::_local_scalar_dense": 1}
    assert count_host_reads(lambda: torch.equal(x, x)) == {"aten::equal": 1}
    with HostReadCounter() as reads:
        x.max().item()
        torch.aminmax(x)
    assert reads.total == 1
    # A meta tensor has shapes but no values: reading one raises, so a path that runs on the
    # meta device reads nothing.
    meta = torch.zeros(2, device="meta")
    with pytest.raises((RuntimeError, NotImplementedError)):
        int(meta.max())


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_every_forward_path_runs_on_a_device_without_values(convention: str) -> None:
    # The meta device holds shapes only: item(), tolist(), numpy() and copies to the CPU raise.
    for reserved in (0, 256):
        layer = RotaryEmbedding(16, convention=convention, max_positions=reserved).to("meta")
        for name, call in _paths(layer, "meta").items():
            q_rot, _ = call()
            assert q_rot.shape == Q.shape and q_rot.device.type == "meta", name


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_the_functions_read_no_device_value(convention: str) -> None:
    pos = torch.tensor([3, 4, 5])
    theta = rope_module.rope_inv_freq(16, 500000.0)
    assert count_host_reads(lambda: APPLY[convention](Q, pos)) == {}
    assert count_host_reads(lambda: APPLY[convention](Q, pos.double(), inv_freq=theta)) == {}
    assert count_host_reads(lambda: apply_rope_partial(Q, 8, pos, convention=convention)) == {}


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_the_functions_copy_nothing_to_a_device(convention: str) -> None:
    """On ``meta`` (a stand-in for an accelerator) a copy from the host is counted: with every
    input on the device, default positions and the default or a given spectrum copy nothing.
    Catches the spectrum or ``arange(seq)`` built on the CPU and moved at every call."""
    q, pos = Q.to("meta"), torch.tensor([3, 4, 5]).to("meta")
    theta = rope_module.rope_inv_freq(16, 500000.0).to("meta")
    partial_theta = rope_module.rope_inv_freq(8).to("meta")
    calls = {
        "default positions": lambda: APPLY[convention](q),
        "positions": lambda: APPLY[convention](q, pos),
        "base": lambda: APPLY[convention](q, pos, base=500000.0),
        "inv_freq": lambda: APPLY[convention](q, pos.double(), inv_freq=theta),
        "partial": lambda: apply_rope_partial(q, 8, convention=convention),
        "partial inv_freq": lambda: apply_rope_partial(
            q, 8, pos, convention=convention, inv_freq=partial_theta
        ),
    }
    for name, call in calls.items():
        assert call().shape == Q.shape, name
        assert count_host_reads(call) == {}, name
    # What is still counted: positions the caller left on the host (the test can fail).
    copied = count_host_reads(lambda: APPLY[convention](q, torch.tensor([3, 4, 5])))
    assert copied == {"aten::_to_copy (host to device)": 1}


def test_the_spectrum_built_on_a_device_is_the_host_one() -> None:
    for dim in (2, 16, 128):
        for base in (2.5, 10000.0, 500000.0):
            on_device = rope_module._inv_freq_on(dim, base, torch.device("cpu"))
            reference = torch.tensor(base, dtype=torch.float64) ** (
                -torch.arange(0, dim, 2, dtype=torch.float64) / dim
            )
            assert torch.equal(on_device, reference)
            assert torch.equal(rope_module.rope_inv_freq(dim, base), reference)


def test_cpu_values_are_still_checked_with_clear_errors() -> None:
    layer = RotaryEmbedding(16, max_positions=64)
    with pytest.raises(ValueError, match=r"integer positions must lie in \[0, 64\)"):
        layer(Q, Q, torch.tensor([0, 1, 64]))
    with pytest.raises(ValueError, match=r"integer positions must lie in \[0, 64\)"):
        layer(Q, Q, torch.tensor([[0, 1, 2], [-1, 0, 1]]))
    with pytest.raises(ValueError, match="positions must be finite"):
        layer(Q, Q, torch.tensor([0.0, float("nan"), 1.0]))
    with pytest.raises(ValueError, match="positions must be finite"):
        apply_rope_half(Q, torch.tensor([0.0, float("inf"), 1.0]))
    with pytest.raises(ValueError, match=r"positions of shape \(batch, seq\) = \(3, 3\) need q"):
        layer(Q, Q, torch.zeros(3, 3, dtype=torch.long))
    with pytest.raises(TypeError, match="offset must be a non-negative Python int or a 0-d"):
        layer(Q, Q, offset=torch.tensor([1, 2]))


# --- (batch, seq) position ids: left padding and packing, as Hugging Face takes them ------------


def _hf(head_dim: int, theta: float, q: torch.Tensor, k: torch.Tensor, ids: torch.Tensor):
    config = LlamaConfig(
        hidden_size=head_dim * 4,
        num_attention_heads=4,
        head_dim=head_dim,
        rope_parameters={"rope_type": "default", "rope_theta": theta},
    )
    cos, sin = LlamaRotaryEmbedding(config)(q, ids)
    return apply_rotary_pos_emb(q, k, cos, sin)


@pytest.mark.parametrize("reserved", [0, 4096])
def test_batched_position_ids_match_hugging_face(reserved: int) -> None:
    # Row 0 left-padded (two pads at position 0, as HF's generate sets them), row 1 two packed
    # documents (positions restart at 0), row 2 a plain sequence from 4000.
    ids = torch.tensor(
        [[0, 0, 0, 1, 2, 3], [0, 1, 2, 0, 1, 2], [4000, 4001, 4002, 4003, 4004, 4005]]
    )
    q = torch.randn(3, 4, 6, 64, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    k = torch.randn(3, 2, 6, 64, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    hf_q, hf_k = _hf(64, 500000.0, q, k, ids)
    layer = RotaryEmbedding(64, 500000.0, max_positions=reserved)
    ours_q, ours_k = layer(q, k, ids)
    # HF computes the angles in float32 (off by ~|m|·2^-24 at m ≈ 4000), ours in float64.
    torch.testing.assert_close(ours_q, hf_q, atol=2e-3, rtol=0)
    torch.testing.assert_close(ours_k, hf_k, atol=2e-3, rtol=0)
    # Row by row it is the 1-D rotation of that row's positions (exact, both in float64).
    for row in range(3):
        torch.testing.assert_close(
            ours_q[row], apply_rope_half(q[row], ids[row], base=500000.0), atol=1e-12, rtol=0
        )
    # Rows differ only through their positions: swapping rows of ids swaps the outputs.
    swapped, _ = layer(q[[1, 0, 2]], k[[1, 0, 2]], ids[[1, 0, 2]])
    assert torch.equal(swapped, ours_q[[1, 0, 2]])


def test_batched_positions_with_one_query_row_broadcast() -> None:
    layer = RotaryEmbedding(16, max_positions=32)
    ids = torch.tensor([[3, 4, 5], [9, 10, 11]])
    q = Q[:1]  # batch 1 broadcast against two rows of positions
    out, _ = layer(q, q, ids)
    assert out.shape == (2, 4, 3, 16)
    torch.testing.assert_close(out[1], apply_rope_half(Q[0], ids[1]), atol=1e-6, rtol=0)


@pytest.mark.parametrize("reserved", [0, 32])
@pytest.mark.parametrize("convention", CONVENTIONS)
def test_batched_positions_with_q_and_k_of_different_ranks(reserved: int, convention: str) -> None:
    # Mutation caught (the old code): rows shaped for q's rank, (2, 1, 3, ·), broadcast against a
    # k of shape (2, 3, 16) as (1, 2, 3, 16): k_rot came out (2, 2, 3, 16), k[j] turned at row
    # i's positions, with no error.
    layer = RotaryEmbedding(16, convention=convention, max_positions=reserved)
    ids = torch.tensor([[3, 4, 5], [9, 10, 11]])
    q = Q.double()  # (2, 4, 3, 16): heads
    k = Q[:, 0].double() * 2  # (2, 3, 16): no head dimension
    q_rot, k_rot = layer(q, k, ids)
    assert q_rot.shape == q.shape and k_rot.shape == k.shape
    for row in range(2):
        exact_k = APPLY[convention](k[row], ids[row])
        torch.testing.assert_close(k_rot[row], exact_k, atol=1e-12, rtol=0)
        exact_q = APPLY[convention](q[row], ids[row])
        torch.testing.assert_close(q_rot[row], exact_q, atol=1e-12, rtol=0)


def test_cpu_positions_beyond_the_table_are_refused_before_a_device_gather() -> None:
    # A gather past the table's end on CUDA raises a device-side assert that poisons the context;
    # CPU positions are checked on the host first (meta stands for the device, where index_select
    # checks nothing: the old code returned rows there).
    layer = RotaryEmbedding(16, max_positions=64).to("meta")
    q = Q.to("meta")
    layer(q, q, torch.tensor([61, 62, 63]))  # inside the table: fine
    with pytest.raises(ValueError, match=r"must lie in \[0, 64\)"):
        layer(q, q, torch.tensor([62, 63, 64]))
    with pytest.raises(ValueError, match=r"must lie in \[0, 64\)"):
        layer(q, q, torch.tensor([[0, 1, 2], [98, 99, 100]]))
    assert count_host_reads(lambda: layer(q, q, torch.tensor([1, 2, 3]))) == {
        "aten::_to_copy (host to device)": 1
    }  # the check itself reads host memory only


def test_cos_sin_with_an_offset_slices_one_table_on_a_device() -> None:
    # Mutation caught: rows fetched for explicit positions on the device (cos_sin_at), which are
    # computed afresh at every call when nothing is reserved: 10 builds, capacity 0.
    layer = RotaryEmbedding(16).to("meta")
    for step in range(10):
        cos, sin = layer.cos_sin(1, "meta", offset=step)
        assert cos.shape == sin.shape == (1, 16) and cos.device.type == "meta"
    assert layer.table_builds == 1 and layer.capacity("meta") == 16
    cpu = RotaryEmbedding(16)
    cos, sin = cpu.cos_sin(3, dtype=torch.float64, offset=40)
    exact_cos, exact_sin = rope_module.rope_cos_sin(
        torch.arange(40, 43), rope_module.rope_inv_freq(16), torch.float64
    )
    torch.testing.assert_close(cos, exact_cos, atol=1e-15, rtol=0)
    torch.testing.assert_close(sin, exact_sin, atol=1e-15, rtol=0)
    assert cpu.capacity(dtype=torch.float64) == 64  # 43 rows rounded up to a power of two
    with pytest.raises(ValueError, match="offset"):
        cpu.cos_sin(3, offset=-1)


# --- one table for every layer, growth capped by the size limit --------------------------------


def test_layers_sharing_one_module_share_one_table() -> None:
    rope = RotaryEmbedding(16, max_positions=512)
    layers = torch.nn.ModuleList(torch.nn.Module() for _ in range(8))
    for layer in layers:
        layer.rope = rope  # the same object in every layer
    x = torch.randn(1, 2, 1, 16)
    for step in range(64):
        for layer in layers:
            layer.rope(x, x, offset=step)
            layer.rope(x, x, torch.tensor([[step]]))
    assert rope.table_builds == 1  # one table, built at the first call, for 8 layers × 64 steps
    assert (
        len({id(layer.rope._tables[(torch.device("cpu"), torch.float32)][0]) for layer in layers})
        == 1
    )


def test_growth_is_capped_at_the_size_limit_and_beyond_it_rows_are_computed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rope_module, "MAX_ELEMENTS", 2**12)  # 256 rows at d = 16
    layer = RotaryEmbedding(16)
    assert layer.max_rows == 256
    x = torch.randn(1, 1, 16, dtype=torch.float64)
    layer(x, x, offset=100)  # 101 rows needed: rounded up to a table of 128 rows
    assert layer.capacity("cpu", torch.float64) == 128
    layer(x, x, offset=150)  # doubling asks 256 rows, which the limit allows
    assert layer.capacity("cpu", torch.float64) == 256
    capped = RotaryEmbedding(16)
    capped(x, x, offset=200)  # 201 rows rounded up to 256: the limit, exactly
    assert capped.capacity("cpu", torch.float64) == 256
    builds = layer.table_builds
    for m in (255, 256, 10_000):  # beyond the table: computed directly, never refused
        out, _ = layer(x, x, offset=m)
        torch.testing.assert_close(out, apply_rope_half(x, torch.tensor([m])), atol=1e-12, rtol=0)
    assert layer.capacity("cpu", torch.float64) == 256
    assert layer.table_builds == builds + 2  # 256 and 10 000 computed directly
    with pytest.raises(ValueError, match=r"length must be at most MAX_ELEMENTS // dim = 256"):
        layer.reserve(257, "cpu", torch.float64)


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("shape", [(1,), (1, 1)])
def test_explicit_positions_without_reserve_grow_the_table_like_the_offset_path(
    convention: str, shape: tuple[int, ...]
) -> None:
    # Mutation caught: computing the rows afresh at every call (the old behaviour) gives 4 096
    # builds; growing to exactly the rows needed (no doubling) gives 4 081.
    layer = RotaryEmbedding(16, convention=convention)
    x = torch.randn(1, 2, 1, 16, dtype=torch.float64)
    for step in range(4096):  # one token per step, positions on the CPU, nothing reserved
        out, _ = layer(x, x, torch.tensor([step]).reshape(shape))
    assert layer.table_builds == 1 + 8  # 16, 32, …, 4 096: as many as with offset=step
    assert layer.capacity("cpu", torch.float64) == 4096
    exact = APPLY[convention](x[0], torch.tensor([4095]))
    torch.testing.assert_close(out[0], exact, atol=1e-12, rtol=0)
    # The growth reads the largest position through NumPy: no synchronisation is counted.
    assert count_host_reads(lambda: layer(x, x, torch.tensor([5000]).reshape(shape))) == {}
    assert layer.capacity("cpu", torch.float64) == 8192


def test_explicit_positions_without_reserve_beyond_the_limit_or_on_a_device_are_computed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rope_module, "MAX_ELEMENTS", 2**12)  # 256 rows at d = 16
    layer = RotaryEmbedding(16)
    x = torch.randn(1, 1, 16, dtype=torch.float64)
    out, _ = layer(x, x, torch.tensor([300]))  # past max_rows: computed directly, not refused
    torch.testing.assert_close(out, apply_rope_half(x, torch.tensor([300])), atol=1e-12, rtol=0)
    assert layer.table_builds == 1 and layer.capacity("cpu", torch.float64) == 0
    # On a device whose values cannot be read without a synchronisation (meta stands for one),
    # unreserved positions are computed at every call: one build per call.
    on_device = RotaryEmbedding(16).to("meta")
    q = Q.to("meta")
    for step in range(5):
        on_device(q, q, torch.tensor([step, step + 1, step + 2], device="meta"))
    assert on_device.table_builds == 5 and on_device.capacity("meta", torch.float32) == 0


def test_host_to_device_copies_are_counted() -> None:
    # PyTorch's CUDA copy kernel waits for every blocking copy, host to device included; on a
    # CPU-only machine a copy to the meta device stands for it.
    q = Q.to("meta")
    layer = RotaryEmbedding(16, max_positions=64).to("meta")
    cpu_ids = torch.tensor([[0, 0, 1], [5, 6, 7]])
    meta_ids = cpu_ids.to("meta")
    layer(q, q, meta_ids)
    assert count_host_reads(lambda: layer(q, q, meta_ids)) == {}
    assert count_host_reads(lambda: layer(q, q, cpu_ids)) == {"aten::_to_copy (host to device)": 1}
    assert count_host_reads(lambda: layer(q, q, offset=torch.tensor(40))) == {
        "aten::_to_copy (host to device)": 1
    }
    assert count_host_reads(lambda: layer(q, q, offset=40)) == {}
    # A module left on the CPU copies its spectrum to q's device at each table build.
    cpu_layer = RotaryEmbedding(16)
    assert count_host_reads(lambda: cpu_layer(q, q, offset=40)) == {
        "aten::_to_copy (host to device)": 1
    }
    target = torch.empty(3, device="meta")
    assert count_host_reads(lambda: target.copy_(torch.zeros(3))) == {
        "aten::copy_ (host to device)": 1
    }
    # non_blocking=True does not help from pageable (unpinned) memory: still counted.
    assert count_host_reads(lambda: torch.zeros(3).to("meta", non_blocking=True)) == {
        "aten::_to_copy (host to device)": 1
    }


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_built_on_meta_then_materialised(convention: str) -> None:
    with torch.device("meta"):
        layer = RotaryEmbedding(16, 500000.0, convention=convention)
    assert layer.inv_freq.device.type == "meta"
    layer.to_empty(device="cpu")
    assert torch.equal(layer.inv_freq, rope_module.rope_inv_freq(16, 500000.0))
    fresh = RotaryEmbedding(16, 500000.0, convention=convention)
    assert torch.equal(layer(Q, Q, offset=5)[0], fresh(Q, Q, offset=5)[0])
    custom = rope_module.rope_inv_freq(16) / 4
    moved = RotaryEmbedding(16, inv_freq=custom, convention=convention).to("meta")
    assert torch.equal(moved.to_empty(device="cpu").inv_freq, custom)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_positions_are_refused(dtype: torch.dtype) -> None:
    # float16 stores 3001 as 3000: the rotation would be off by a whole position.
    positions = torch.arange(3000, 3003).to(dtype)
    with pytest.raises(TypeError, match="half-precision positions"):
        RotaryEmbedding(16)(Q, Q, positions)
    with pytest.raises(TypeError, match="half-precision positions"):
        apply_rope_half(Q, positions)
    with pytest.raises(TypeError, match="half-precision positions"):
        apply_rope_partial(Q, 8, positions)


class _Float64On(TorchDispatchMode):
    """Records every operator that returns a float64 tensor on a device of the given type."""

    def __init__(self, device_type: str) -> None:
        super().__init__()
        self.device_type = device_type
        self.seen: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        out = func(*args, **(kwargs or {}))
        for t in torch.utils._pytree.tree_leaves(out):
            if (isinstance(t, torch.Tensor) and t.dtype == torch.float64
                    and t.device.type == self.device_type):
                self.seen.append(str(func))
        return out


def _device_paths(layer: RotaryEmbedding) -> None:
    """Build, cast, reserve and run the module on the meta device (paths with no copy back)."""
    layer.to("meta").half().float()
    layer.reserve(32, "meta")
    layer.cos_sin(8, "meta")
    paths = _paths(layer, "meta")
    names = ["offset=100", "offset=tensor(100)"]
    if layer.reserved:  # integer positions index the reserved table; unreserved ones (and float
        names += ["positions (seq,) int", "positions (batch, seq) int"]  # ones) go to the CPU
    for name in names:
        q_rot, _ = paths[name]()
        assert q_rot.device.type == "meta" and q_rot.dtype == Q.dtype, name


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_no_float64_tensor_is_made_on_a_device_without_float64(
    convention: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # There is no MPS device here. The meta device stands in for it: declared a device without
    # float64, every float64 value must stay on the CPU and only rounded tables may move to it.
    # Unpatched, the same calls do make float64 tensors on the meta device: the recorder works.
    unpatched = _Float64On("meta")
    with unpatched:
        _device_paths(RotaryEmbedding(16, convention=convention))
    assert unpatched.seen
    monkeypatch.setattr(rope_module, "_NO_FLOAT64", frozenset({"mps", "meta"}))
    for reserved in (0, 256):
        layer = RotaryEmbedding(16, convention=convention, max_positions=reserved)
        recorder = _Float64On("meta")
        with recorder:
            _device_paths(layer)
        assert recorder.seen == [], (reserved, recorder.seen)
        assert layer.inv_freq.dtype == torch.float64 and layer.inv_freq.device.type == "cpu"
        assert layer.capacity("meta") >= 32  # the tables live on the "device"
        layer.to("cpu")  # back on a device with float64: inv_freq follows, still exact
        assert torch.equal(layer.inv_freq, rope_module.rope_inv_freq(16))
        fresh = RotaryEmbedding(16, convention=convention)
        assert torch.equal(layer(Q, Q, offset=5)[0], fresh(Q, Q, offset=5)[0])


@pytest.mark.parametrize("convention", ["half", "interleaved"])
def test_compute_dtype_float32_rounds_bf16_inputs_once(convention: str) -> None:
    # Default (float32): the exact rotation rounded once to bf16, like apply_rope_*;
    # compute_dtype=None: bf16 tables and bf16 products (as transformers' Llama). Ignoring
    # compute_dtype fails one of the two share asserts.
    torch.manual_seed(0)
    x = torch.randn(2, 4, 64, 32).bfloat16()
    exact = RotaryEmbedding(32, convention=convention)(x.double(), x.double(), offset=900)[0]
    once = exact.to(torch.bfloat16)
    upcast = RotaryEmbedding(32, convention=convention)
    hf_like = RotaryEmbedding(32, convention=convention, compute_dtype=None)
    up_out, hf_out = upcast(x, x, offset=900)[0], hf_like(x, x, offset=900)[0]
    assert up_out.dtype == hf_out.dtype == torch.bfloat16
    assert (up_out == once).float().mean() > 0.999
    assert (hf_out == once).float().mean() < 0.9
    # The same on the explicit-positions path, and the table it keeps is float32.
    ids = torch.arange(900, 964).expand(2, 64)
    assert (upcast(x, x, ids)[0] == once).float().mean() > 0.999
    assert upcast.capacity(dtype=torch.bfloat16) >= 964
    assert upcast.cos_sin(4, dtype=torch.bfloat16)[0].dtype == torch.float32


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_compute_dtype_never_lowers_precision(convention: str) -> None:
    x32 = torch.randn(1, 2, 8, 16)
    for x in (x32, x32.double()):
        plain = RotaryEmbedding(16, convention=convention, compute_dtype=None)(x, x, offset=5)[0]
        up = RotaryEmbedding(16, convention=convention)(x, x, offset=5)[0]
        assert up.dtype == x.dtype and torch.equal(up, plain)


def test_compute_dtype_rejects_what_it_cannot_use() -> None:
    with pytest.raises(ValueError, match="compute_dtype"):
        RotaryEmbedding(16, compute_dtype=torch.bfloat16)
    with pytest.raises(TypeError, match="compute_dtype"):
        RotaryEmbedding(16, compute_dtype="float32")  # type: ignore[arg-type]
    layer = RotaryEmbedding(16)
    with pytest.raises(ValueError, match="compute_dtype"):
        layer.compute_dtype = torch.int64
    assert "compute_dtype=None" in repr(RotaryEmbedding(16, compute_dtype=None))
    assert "compute_dtype" not in repr(RotaryEmbedding(16))  # the default is not repeated


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_the_upcast_paths_read_no_device_value(convention: str) -> None:
    layer = RotaryEmbedding(16, convention=convention)  # float32 compute: the upcast path
    q = Q.bfloat16()
    for name, call in {"offset": lambda: layer(q, q, offset=100),
                       "ids": lambda: layer(q, q, torch.tensor([[0, 0, 1], [5, 6, 7]]))}.items():
        call()
        assert count_host_reads(call) == {}, name


@pytest.mark.parametrize("reserved", [0, 256])
@pytest.mark.parametrize("convention", CONVENTIONS)
def test_cos_sin_at_gathers_the_table_rows_without_a_host_read(
    convention: str, reserved: int
) -> None:
    """`cos_sin_at(ids)` is `cos_sin(n)[ids]` (the adapter's slow form) for (seq,) and (batch, seq)
    ids, reads nothing on the host, and runs on a device without values."""
    layer = RotaryEmbedding(16, convention=convention, max_positions=reserved)
    full = layer.cos_sin(50)
    for ids in (torch.tensor([3, 7, 49]), torch.tensor([[0, 1, 2], [40, 41, 42]])):
        rows = layer.cos_sin_at(ids)
        assert len(rows) == len(full)
        for whole, gathered in zip(full, rows, strict=True):
            assert gathered.shape == (*ids.shape, whole.shape[-1])
            assert torch.equal(gathered, whole[ids])
        assert count_host_reads(lambda ids=ids: layer.cos_sin_at(ids)) == {}
    on_meta = RotaryEmbedding(16, convention=convention, max_positions=reserved).to("meta")
    rows = on_meta.cos_sin_at(torch.tensor([[0, 1, 2]], device="meta"))
    assert rows[0].device.type == "meta" and rows[0].shape[:2] == (1, 3)
    with pytest.raises(ValueError, match="positions must have shape"):
        layer.cos_sin_at(torch.zeros(1, 1, 3, dtype=torch.long))
    with pytest.raises(TypeError, match="positions"):
        layer.cos_sin_at([1, 2])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"\[0, "):
        layer.cos_sin_at(torch.tensor([-1, 2]))


def test_reserve_and_cos_sin_default_to_the_module_device() -> None:
    """A module moved to a device reserves and builds its tables there (mutation: the old default
    device="cpu" builds a CPU table for a meta module, or raises reading it)."""
    layer = RotaryEmbedding(16).to("meta")
    layer.reserve(64)
    assert layer.cos_sin(4)[0].device.type == "meta"
    assert all(key[0].type == "meta" for key in layer._tables)
