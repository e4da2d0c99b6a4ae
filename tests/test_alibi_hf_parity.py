"""ALiBi parity with Hugging Face transformers: BLOOM's and MPT's bias builders, run verbatim.

Both build the bias in float32 with ``torch.pow``; ours is float64 rounded once, so slopes agree
to a few float32 ulps. Both return the ``+m·j`` form (one row for every query), which gives our
``−μ·(m − n)`` attention after the causal mask and the softmax.
"""

from __future__ import annotations

import pytest
import torch
from transformers.models.bloom.modeling_bloom import build_alibi_tensor
from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

from posenc_lib import alibi_bias, alibi_slopes

HEADS = [1, 3, 6, 8, 12, 40, 64, 112]
RTOL = 8 * torch.finfo(torch.float32).eps  # BLOOM: float32 pow, up to ~4.2 eps off


@pytest.mark.parametrize("n_heads", HEADS)
def test_bloom_slopes_and_bias(n_heads: int) -> None:
    seq = 9
    hf = build_alibi_tensor(torch.ones(1, seq, dtype=torch.long), n_heads, torch.float32)
    assert hf.shape == (n_heads, 1, seq)
    slopes = alibi_slopes(n_heads, dtype=torch.float64)
    j = torch.arange(seq, dtype=torch.float64)
    torch.testing.assert_close(hf[:, 0].double(), slopes[:, None] * j, rtol=RTOL, atol=0)
    # same attention as ours once the causal mask is added
    ours = alibi_bias(n_heads, seq, dtype=torch.float64)
    theirs = hf.double().expand(n_heads, seq, seq).masked_fill(torch.isneginf(ours), float("-inf"))
    torch.testing.assert_close(theirs.softmax(-1), ours.softmax(-1), atol=1e-6, rtol=0)


def test_bloom_left_padding_starts_the_positions_at_the_first_real_token() -> None:
    mask = torch.tensor([[0, 0, 1, 1, 1, 1]])
    hf = build_alibi_tensor(mask, 8, torch.float32)[:, 0]
    slopes = alibi_slopes(8, dtype=torch.float64)
    torch.testing.assert_close(hf[:, 2:].double(), slopes[:, None] * torch.arange(4.0).double(),
                               rtol=RTOL, atol=0)
    assert bool((hf[:, :2] == 0).all())


@pytest.mark.parametrize("n_heads", HEADS)
def test_mpt_slopes_and_bias(n_heads: int) -> None:
    seq = 9
    hf = build_mpt_alibi_tensor(n_heads, seq)  # alibi_bias_max = 8
    assert hf.shape == (n_heads, 1, seq)
    slopes = alibi_slopes(n_heads, dtype=torch.float64)
    # MPT's row is m·(j − (seq − 1)): the bias of the last query, given to every query
    last_row = alibi_bias(n_heads, seq, dtype=torch.float64)[:, -1]
    torch.testing.assert_close(hf[:, 0].double(), last_row, rtol=RTOL, atol=0)
    torch.testing.assert_close(-hf[:, 0, -2].double(), slopes, rtol=RTOL, atol=0)


@pytest.mark.parametrize("alibi_bias_max", [2, 4, 16])
@pytest.mark.parametrize("n_heads", [6, 8, 12, 40])
def test_mpt_alibi_bias_max_is_our_max_bias(n_heads: int, alibi_bias_max: int) -> None:
    hf = build_mpt_alibi_tensor(n_heads, 3, alibi_bias_max=alibi_bias_max)
    ours = alibi_slopes(n_heads, max_bias=float(alibi_bias_max), dtype=torch.float64)
    torch.testing.assert_close(-hf[:, 0, -2].double(), ours, rtol=RTOL, atol=0)
