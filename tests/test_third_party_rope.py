"""Chapter 6's conventions table, run on third-party code that pip installs here.

Chapter 6 lists how other code bases spell RoPE. ``rotary-embedding-torch`` (lucidrains; the
version pinned in requirements.txt) is pure PyTorch, so its row is checked here on its real code:
interleaved pairs ``(2i, 2i+1)``, turned by ``+mθ_i``, with a quarter turn it calls
``rotate_half`` although it is the interleaved one. The two scaling knobs it offers are the
book's position interpolation and NTK-aware base (chapter 8), checked on the same code.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from rotary_embedding_torch import RotaryEmbedding
from rotary_embedding_torch.rotary_embedding_torch import rotate_half as lucidrains_rotate_half

from posenc_lib import apply_rope_half, apply_rope_interleaved, ntk_inv_freq, rope_inv_freq

pytestmark = pytest.mark.timeout(120)


def _queries(head_dim: int, seq_len: int, seed: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(2, 3, seq_len, head_dim, generator=generator)  # (batch, heads, L, d)


@settings(max_examples=25, deadline=None)
@given(
    half_dim=st.integers(2, 32),
    seq_len=st.integers(1, 40),
    base=st.sampled_from([10_000.0, 500_000.0, 100.0]),
    seed=st.integers(0, 2**16),
)
def test_rotate_queries_or_keys_is_interleaved_rope(
    half_dim: int, seq_len: int, base: float, seed: int
) -> None:
    # Mutation caught: the row saying "half" pairs (second assert) or a wrong base or sign.
    head_dim = 2 * half_dim
    x = _queries(head_dim, seq_len, seed)
    theirs = RotaryEmbedding(dim=head_dim, theta=base).rotate_queries_or_keys(x)
    ours = apply_rope_interleaved(x.double(), base=base).float()
    torch.testing.assert_close(theirs, ours, atol=2e-5 * seq_len, rtol=1e-5)
    if seq_len > 1:
        assert (apply_rope_half(x, base=base) - theirs).abs().max() > 1e-2


def test_its_rotate_half_is_the_interleaved_quarter_turn() -> None:
    # (x0, x1, x2, x3) -> (-x1, x0, -x3, x2): pairs (2i, 2i+1), not Hugging Face's halves.
    x = torch.arange(1.0, 9.0)
    assert lucidrains_rotate_half(x).tolist() == [-2.0, 1.0, -4.0, 3.0, -6.0, 5.0, -8.0, 7.0]
    hf_rotate_half = torch.cat([-x[4:], x[:4]])
    assert not torch.equal(lucidrains_rotate_half(x), hf_rotate_half)


def test_offset_is_the_absolute_position_of_the_first_row() -> None:
    # A decode step at position 37 turns by 37·θ_i, the same as the row 37 of a full pass.
    x = _queries(16, 5, seed=3)
    offset = 37
    theirs = RotaryEmbedding(dim=16).rotate_queries_or_keys(x, offset=offset)
    ours = apply_rope_interleaved(x, torch.arange(offset, offset + 5))
    torch.testing.assert_close(theirs, ours, atol=1e-5, rtol=1e-5)


def test_interpolate_factor_is_position_interpolation() -> None:
    # interpolate_factor = s divides the positions: θ_i / s, every pair (chapter 8's PI).
    x = _queries(32, 24, seed=4)
    theirs = RotaryEmbedding(dim=32, interpolate_factor=4.0).rotate_queries_or_keys(x)
    ours = apply_rope_interleaved(x, inv_freq=rope_inv_freq(32) / 4.0)
    torch.testing.assert_close(theirs, ours, atol=1e-5, rtol=1e-5)
    assert (apply_rope_interleaved(x) - theirs).abs().max() > 1e-2


def test_theta_rescale_factor_is_the_ntk_aware_base() -> None:
    # theta_rescale_factor = s raises the base to b·s^(d/(d−2)): chapter 8's NTK-aware scaling.
    x = _queries(32, 24, seed=5)
    theirs = RotaryEmbedding(dim=32, theta_rescale_factor=8.0).rotate_queries_or_keys(x)
    ours = apply_rope_interleaved(x, inv_freq=ntk_inv_freq(32, 10_000.0, 8.0).float())
    torch.testing.assert_close(theirs, ours, atol=1e-5, rtol=1e-5)
    pi = apply_rope_interleaved(x, inv_freq=rope_inv_freq(32) / 8.0)
    assert (pi - theirs).abs().max() > 1e-2
