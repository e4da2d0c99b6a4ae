"""posenc_lib.serving: the rules of chapter 12, each against transformers' own code or a law."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers.masking_utils import sliding_window_causal_mask_function
from transformers.models.gpt_oss import modeling_gpt_oss

from posenc_lib import apply_rope_half, apply_rope_interleaved, rope_inv_freq
from posenc_lib.serving import (
    packed_causal_mask,
    packed_document_ids,
    packed_position_ids,
    position_ids_from_mask,
    rerotate_keys,
    sink_softmax,
    sliding_window_mask,
)

masks = st.lists(st.lists(st.integers(0, 1), min_size=1, max_size=12), min_size=1, max_size=4)


@given(masks)
def test_position_ids_count_real_tokens(rows: list[list[int]]) -> None:
    width = max(len(r) for r in rows)
    mask = torch.tensor([r + [0] * (width - len(r)) for r in rows])
    ids = position_ids_from_mask(mask)
    for b in range(mask.shape[0]):
        real = mask[b].bool()
        assert ids[b][real].tolist() == list(range(int(real.sum())))
        assert bool((ids[b][~real] == 0).all())


def test_position_ids_do_not_depend_on_the_padding_side() -> None:
    left = torch.tensor([[0, 0, 1, 1, 1]])
    right = torch.tensor([[1, 1, 1, 0, 0]])
    assert position_ids_from_mask(left)[0, 2:].tolist() == [0, 1, 2]
    assert position_ids_from_mask(right)[0, :3].tolist() == [0, 1, 2]


def test_position_ids_reject_bad_masks() -> None:
    with pytest.raises(TypeError, match="attention_mask"):
        position_ids_from_mask([[1, 1]])
    with pytest.raises(TypeError, match="dtype"):
        position_ids_from_mask(torch.ones(1, 3))
    with pytest.raises(ValueError, match="shape"):
        position_ids_from_mask(torch.ones(3, dtype=torch.long))
    with pytest.raises(ValueError, match="0 and 1"):
        position_ids_from_mask(torch.tensor([[1, 2]]))


@given(st.lists(st.integers(1, 9), min_size=1, max_size=6))
def test_packed_ids_and_mask_agree(lengths: list[int]) -> None:
    ids = packed_position_ids(lengths)
    docs = packed_document_ids(lengths)
    mask = packed_causal_mask(lengths)
    total = sum(lengths)
    assert ids.shape == docs.shape == (total,) and mask.shape == (total, total)
    for i in range(total):
        seen = mask[i].nonzero().flatten()
        # a query sees exactly its own document's keys up to itself: position id + 1 keys
        assert len(seen) == int(ids[i]) + 1
        assert bool((docs[seen] == docs[i]).all()) and int(seen.max()) == i


def test_packed_row_equals_separate_documents() -> None:
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=4, initializer_range=0.2)
    model = LlamaForCausalLM(config).eval()
    documents = [[5, 6, 7, 8], [9, 10, 11], [12, 13, 14, 15, 16]]
    lengths = [len(d) for d in documents]
    packed = torch.tensor([[t for d in documents for t in d]])
    with torch.no_grad():
        separate = torch.cat([model(torch.tensor([d])).logits[0] for d in documents])
        right = model(packed, position_ids=packed_position_ids(lengths)[None],
                      attention_mask=packed_causal_mask(lengths)[None, None]).logits[0]
        ids_only = model(packed, position_ids=packed_position_ids(lengths)[None]).logits[0]
    assert (right - separate).abs().max() < 1e-5
    # the trap: with the cache on (the default), reset ids alone let documents attend to each other
    assert (ids_only - separate).abs().max() > 0.1


def test_packing_rejects_bad_lengths() -> None:
    with pytest.raises(ValueError, match="lengths"):
        packed_position_ids([])
    with pytest.raises(ValueError, match="lengths"):
        packed_causal_mask([3, 0])
    with pytest.raises(TypeError, match="lengths"):
        packed_document_ids(None)
    with pytest.raises(TypeError, match="lengths"):
        packed_position_ids([1.5])


@given(st.integers(0, 40), st.integers(1, 50))
def test_sliding_window_matches_transformers(seq: int, window: int) -> None:
    index = torch.arange(seq)
    rule = sliding_window_causal_mask_function(window)
    expected = rule(torch.tensor(0), torch.tensor(0), index[:, None], index[None, :])
    ours = sliding_window_mask(seq, window)
    assert torch.equal(ours, expected.expand(seq, seq))
    if seq:
        assert int(ours[-1].sum()) == min(seq, window)


def test_sliding_window_rejects_bad_window() -> None:
    with pytest.raises(ValueError, match="window"):
        sliding_window_mask(4, 0)
    with pytest.raises(TypeError, match="window"):
        sliding_window_mask(4, 2.5)


@settings(deadline=None)
@given(st.integers(0, 200), st.integers(-100, 100), st.sampled_from(["half", "interleaved"]))
def test_kshift_equals_recomputation(start: int, shift: int, convention: str) -> None:
    generator = torch.Generator().manual_seed(start)
    keys = torch.randn(2, 6, 16, dtype=torch.float64, generator=generator)
    apply = apply_rope_half if convention == "half" else apply_rope_interleaved
    positions = torch.arange(start, start + 6, dtype=torch.float64)
    cached = apply(keys, positions, base=500.0)
    moved = rerotate_keys(cached, shift, base=500.0, convention=convention)
    assert torch.allclose(moved, apply(keys, positions + shift, base=500.0), atol=1e-10)


def test_kshift_fails_when_frequencies_change() -> None:
    keys = torch.randn(1, 8, 16, dtype=torch.float64)
    positions = torch.arange(100, 108, dtype=torch.float64)
    old, new = rope_inv_freq(16, 10000.0), rope_inv_freq(16, 20000.0)
    cached = rerotate_keys(keys, positions, inv_freq=old)
    fresh = rerotate_keys(keys, positions, inv_freq=new)
    assert (cached - fresh).abs().max() > 0.1
    corrected = rerotate_keys(cached, positions, inv_freq=new - old)
    assert torch.allclose(corrected, fresh, atol=1e-10)


def test_rerotate_keys_rejects_bad_arguments() -> None:
    keys = torch.randn(4, 8)
    with pytest.raises(ValueError, match="not both"):
        rerotate_keys(keys, 1, base=10.0, inv_freq=rope_inv_freq(8))
    with pytest.raises(TypeError, match="shift"):
        rerotate_keys(keys, "1")
    with pytest.raises(ValueError, match="shift"):
        rerotate_keys(keys, torch.zeros(2, 2))
    with pytest.raises(ValueError, match="positions"):
        rerotate_keys(keys, torch.zeros(3))
    with pytest.raises(ValueError, match="convention"):
        rerotate_keys(keys, 1, convention="neox")


class _SinkHeads(torch.nn.Module):
    def __init__(self, sinks: torch.Tensor) -> None:
        super().__init__()
        self.sinks = torch.nn.Parameter(sinks)
        self.num_key_value_groups = 1


@settings(deadline=None)
@given(st.integers(1, 4), st.integers(1, 7), st.integers(0, 1000))
def test_sink_softmax_is_softmax_with_an_extra_column(heads: int, q_len: int, seed: int) -> None:
    generator = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(1, heads, q_len, 8, generator=generator) for _ in range(3))
    sinks = torch.randn(heads, generator=generator) * 3
    causal = torch.zeros(q_len, q_len).masked_fill(
        ~torch.ones(q_len, q_len, dtype=torch.bool).tril(), float("-inf"))[None, None]
    _, expected = modeling_gpt_oss.eager_attention_forward(
        _SinkHeads(sinks), q, k, v, causal, scaling=8**-0.5)
    ours = sink_softmax(q @ k.transpose(-1, -2) * 8**-0.5 + causal, sinks)
    assert torch.allclose(ours, expected.detach(), atol=1e-6)
    total = ours.sum(-1)
    assert bool((total < 1).all()) and bool((total > 0).all())


def test_sink_softmax_rejects_bad_sinks() -> None:
    logits = torch.zeros(2, 3, 3)
    with pytest.raises(ValueError, match="sink_logits"):
        sink_softmax(logits, torch.zeros(3))
    with pytest.raises(ValueError, match="sink_logits"):
        sink_softmax(logits, torch.tensor([0.0, float("nan")]))
    with pytest.raises(TypeError, match="sink_logits"):
        sink_softmax(logits, [0.0, 0.0])


def test_mask_gallery_steps_are_the_library_masks() -> None:
    from posenc_lib.viz.serving import serving_masks_figure

    fig = serving_masks_figure((4, 3, 5), n_pad=3, windows=(2, 4))
    steps = fig.layout.sliders[0].steps
    assert [s.label for s in steps] == ["causal", "left pad 3", "packed", "window 2", "window 4"]
    packed = torch.tensor(steps[2].args[0]["z"][0]).bool()
    assert torch.equal(packed, packed_causal_mask([4, 3, 5]))
    window = torch.tensor(steps[4].args[0]["z"][0]).bool()
    assert torch.equal(window, sliding_window_mask(12, 4))
    padded = torch.tensor(steps[1].args[0]["z"][0]).bool()
    assert not padded[:, :3].any() and bool(padded[3:, 3:].equal(packed_causal_mask([9])))
    assert fig.layout.title.text.startswith("Who may attend")


def test_mask_gallery_rejects_bad_arguments() -> None:
    from posenc_lib.viz.serving import serving_masks_figure

    with pytest.raises(ValueError, match="lengths"):
        serving_masks_figure((40, 30))
    with pytest.raises(ValueError, match="n_pad"):
        serving_masks_figure((4, 3), n_pad=7)
    with pytest.raises(ValueError, match="windows"):
        serving_masks_figure(windows=(0,))
    with pytest.raises(TypeError, match="lengths"):
        serving_masks_figure(None)
