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
    AUDIT_CODES,
    audit_positions,
    layer_rope_frequencies,
    packed_causal_mask,
    packed_document_ids,
    packed_position_ids,
    position_ids_from_mask,
    quantize_keys_absmax,
    rerotate_keys,
    shift_cache,
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
    mask = packed_causal_mask(lengths, dtype=torch.bool)
    total = sum(lengths)
    assert ids.shape == docs.shape == (total,) and mask.shape == (total, total)
    for i in range(total):
        seen = mask[i].nonzero().flatten()
        # a query sees exactly its own document's keys up to itself: position id + 1 keys
        assert len(seen) == int(ids[i]) + 1
        assert bool((docs[seen] == docs[i]).all()) and int(seen.max()) == i


@pytest.mark.parametrize("attn_implementation", ["eager", "sdpa"])
def test_packed_row_equals_separate_documents(attn_implementation: str) -> None:
    """The additive mask is exact on both mask backends; the bool one only on SDPA: eager adds
    the mask to the scores, so True/False become +1/+0 and nothing is masked (transformers 5.25)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=4, initializer_range=0.2,
                         attn_implementation=attn_implementation)
    model = LlamaForCausalLM(config).eval()
    assert model.config._attn_implementation == attn_implementation
    documents = [[5, 6, 7, 8], [9, 10, 11], [12, 13, 14, 15, 16]]
    lengths = [len(d) for d in documents]
    packed = torch.tensor([[t for d in documents for t in d]])
    ids = packed_position_ids(lengths)[None]
    with torch.no_grad():
        separate = torch.cat([model(torch.tensor([d])).logits[0] for d in documents])
        float_mask = packed_causal_mask(lengths, dtype=torch.float32)[None, None]
        additive = model(packed, position_ids=ids, attention_mask=float_mask)
        boolean = model(packed, position_ids=ids,
                        attention_mask=packed_causal_mask(lengths, dtype=torch.bool)[None, None])
        ids_only = model(packed, position_ids=ids).logits[0]
    assert (additive.logits[0] - separate).abs().max() < 1e-5
    bool_error = (boolean.logits[0] - separate).abs().max()
    if attn_implementation == "eager":
        assert bool_error > 0.1  # a regression to the bool mask on eager is caught here
    else:
        assert bool_error < 1e-5
    # the trap: with the cache on (the default), reset ids alone let documents attend to each other
    assert (ids_only - separate).abs().max() > 0.1


def test_packed_causal_mask_additive_form() -> None:
    allowed = packed_causal_mask([2, 3], dtype=torch.bool)
    for dtype in (torch.float32, torch.bfloat16):
        additive = packed_causal_mask([2, 3], dtype=dtype)
        assert additive.dtype == dtype
        assert bool((additive[allowed] == 0).all())
        assert bool((additive[~allowed] == torch.finfo(dtype).min).all())
    assert allowed.dtype == torch.bool and bool(allowed[4, 2]) and not bool(allowed[2, 1])
    for bad in (torch.long, None, "float32"):
        with pytest.raises(TypeError, match="dtype"):
            packed_causal_mask([2, 3], dtype=bad)
    with pytest.raises(TypeError, match="dtype"):  # no default: the bool form breaks eager
        packed_causal_mask([2, 3])  # type: ignore[call-arg]


def test_audit_defaults_to_transformers_default_backend() -> None:
    """A bool block mask audited without a backend is judged as SDPA reads it (transformers'
    default), and flagged only when the caller says eager."""
    ids = torch.ones(1, 5, dtype=torch.long)
    packed = packed_position_ids([2, 3])[None]
    bool_block = packed_causal_mask([2, 3], dtype=torch.bool)[None, None]
    assert audit_positions(ids, bool_block, packed) == []
    assert _codes(audit_positions(ids, bool_block, packed, attn_implementation="eager")) == {
        "4d-mask-misread"}


def test_packing_rejects_bad_lengths() -> None:
    with pytest.raises(ValueError, match="lengths"):
        packed_position_ids([])
    with pytest.raises(ValueError, match="lengths"):
        packed_causal_mask([3, 0], dtype=torch.bool)
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
        rerotate_keys(keys, torch.zeros(3), base=1e4)
    with pytest.raises(ValueError, match="convention"):
        rerotate_keys(keys, 1, convention="neox")
    # no default base: a K-shift with another model's base would be silently wrong
    with pytest.raises(ValueError, match=r"pass base= .*or inv_freq="):
        rerotate_keys(keys, 1)


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
    assert torch.equal(packed, packed_causal_mask([4, 3, 5], dtype=torch.bool))
    window = torch.tensor(steps[4].args[0]["z"][0]).bool()
    assert torch.equal(window, sliding_window_mask(12, 4))
    padded = torch.tensor(steps[1].args[0]["z"][0]).bool()
    nine = packed_causal_mask([9], dtype=torch.bool)
    assert not padded[:, :3].any() and bool(padded[3:, 3:].equal(nine))
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


@given(st.integers(1, 12), st.integers(0, 20), st.integers(1, 30))
def test_sliding_window_with_an_offset_matches_transformers(seq: int, offset: int,
                                                           window: int) -> None:
    """Decoding / a prefill chunk: queries at offset … offset + seq − 1 over every cached key."""
    rule = sliding_window_causal_mask_function(window)
    q_idx = torch.arange(seq)[:, None] + offset
    kv_idx = torch.arange(offset + seq)[None, :]
    expected = rule(torch.tensor(0), torch.tensor(0), q_idx, kv_idx)
    ours = sliding_window_mask(seq, window, offset=offset)
    assert ours.shape == (seq, offset + seq) and torch.equal(ours, expected)
    # the last rows of the square mask are the offset mask
    assert torch.equal(sliding_window_mask(offset + seq, window)[offset:], ours)


@given(st.lists(st.integers(1, 7), min_size=1, max_size=4), st.integers(1, 9))
def test_sliding_window_composes_with_the_document_mask(lengths: list[int], window: int) -> None:
    from transformers.masking_utils import and_masks, packed_sequence_mask_function

    total = sum(lengths)
    docs = packed_document_ids(lengths)[None]
    rule = and_masks(sliding_window_causal_mask_function(window),
                     packed_sequence_mask_function(docs))
    index = torch.arange(total)
    expected = rule(torch.tensor(0), torch.tensor(0), index[:, None], index[None, :])
    ours = sliding_window_mask(total, window, lengths=lengths)
    assert torch.equal(ours, expected)
    packed_mask = packed_causal_mask(lengths, dtype=torch.bool)
    assert torch.equal(ours, sliding_window_mask(total, window) & packed_mask)
    # the decoding rows of a packed row: the last document's last token
    last = sliding_window_mask(1, window, offset=total - 1, lengths=lengths)
    assert torch.equal(last, ours[-1:])


def test_sliding_window_rejects_bad_offset_and_lengths() -> None:
    with pytest.raises(ValueError, match="offset"):
        sliding_window_mask(4, 2, offset=-1)
    with pytest.raises(ValueError, match=r"lengths must sum to offset \+ seq_len = 6"):
        sliding_window_mask(4, 2, offset=2, lengths=[3, 2])


@settings(deadline=None)
@given(st.integers(0, 100), st.integers(-50, 50), st.sampled_from([2, 4, 6]))
def test_kshift_with_rotary_dim_leaves_the_unrotated_features(start: int, shift: int,
                                                             rotary_dim: int) -> None:
    generator = torch.Generator().manual_seed(start)
    keys = torch.randn(3, 5, 10, dtype=torch.float64, generator=generator)
    positions = torch.arange(start, start + 5, dtype=torch.float64)
    inv_freq = rope_inv_freq(rotary_dim, 100.0).double()

    def partial(x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        rot = apply_rope_half(x[..., :rotary_dim], pos, inv_freq=inv_freq)
        return torch.cat((rot, x[..., rotary_dim:]), dim=-1)

    moved = rerotate_keys(partial(keys, positions), shift, inv_freq=inv_freq, rotary_dim=rotary_dim)
    assert torch.allclose(moved, partial(keys, positions + shift), atol=1e-10)
    if shift:
        whole = rerotate_keys(partial(keys, positions), shift, base=100.0)  # rotates all 10 dims
        assert not torch.allclose(whole, partial(keys, positions + shift), atol=1e-3)


def test_rerotate_keys_rejects_a_bad_rotary_dim() -> None:
    with pytest.raises(ValueError, match="rotary_dim must be even and at most the key size 8"):
        rerotate_keys(torch.randn(4, 8), 1, base=1e4, rotary_dim=10)
    with pytest.raises(ValueError, match="rotary_dim must be even"):
        rerotate_keys(torch.randn(4, 8), 1, base=1e4, rotary_dim=3)
    with pytest.raises(TypeError, match="rotary_dim"):
        rerotate_keys(torch.randn(4, 8), 1, base=1e4, rotary_dim=4.0)


@pytest.mark.parametrize(("version", "right", "wrong"), [
    ("V3", "half", "interleaved"), ("V2", "interleaved", "half")])
def test_deepseek_cache_shifts_in_its_own_layout(version: str, right: str, wrong: str) -> None:
    """transformers' MLA caches: the latent in keys, the rotary key in values; V3 stores that key
    de-interleaved (half layout), V2 keeps its complex pairs in place (interleaved layout)."""
    import transformers

    torch.manual_seed(0)
    settings_ = dict(
        vocab_size=64, hidden_size=32, intermediate_size=64, moe_intermediate_size=16,
        num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=4, n_routed_experts=4,
        n_shared_experts=1, num_experts_per_tok=2, n_group=1, topk_group=1,
        first_k_dense_replace=1, kv_lora_rank=16, q_lora_rank=None, qk_rope_head_dim=8,
        qk_nope_head_dim=8, v_head_dim=8, initializer_range=0.2,
        pad_token_id=0, bos_token_id=1, eos_token_id=2)
    if version == "V3":
        config = transformers.DeepseekV3Config(rope_interleave=True, **settings_)
        model = transformers.DeepseekV3ForCausalLM(config).eval()
    else:
        config = transformers.DeepseekV2Config(**settings_)
        model = transformers.DeepseekV2ForCausalLM(config).eval()
    row, keep = torch.arange(20, 32)[None], torch.tensor([0, 1, *range(6, 12)])
    shift = torch.tensor([0.0, 0.0] + [-4.0] * 6)
    inv_freq = model.model.rotary_emb.inv_freq.double()
    errors = {}
    with torch.no_grad():
        fresh = model(torch.cat([row[:, keep], torch.tensor([[40]])], 1)).logits[0, -1]
        for convention in (right, wrong):
            cache = model(row).cache
            layer = cache.layers[0]
            assert layer.keys.shape[-1] == 16 and layer.values.shape[-1] == 8  # latent, k_rot
            layer.keys = layer.keys[:, :, keep]
            layer.values = rerotate_keys(layer.values[:, :, keep], shift, inv_freq=inv_freq,
                                         convention=convention)
            step = model(torch.tensor([[40]]), cache=cache, position_ids=torch.tensor([[8]]))
            errors[convention] = (step.logits[0, -1] - fresh).abs().max().item()
    # mutation: swapping the two layouts (the docstring's old "half" for V2) fails both bounds
    assert errors[right] < 1e-5 and errors[wrong] > 0.1


def _codes(issues: list) -> set[str]:
    assert all(i.code in AUDIT_CODES for i in issues)
    return {i.code for i in issues}


def test_audit_is_quiet_on_a_clean_batch() -> None:
    ids = torch.ones(2, 5, dtype=torch.long)
    mask = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])
    assert audit_positions(ids) == []
    assert audit_positions(ids, mask, position_ids_from_mask(mask)) == []
    assert audit_positions(ids, mask, generate=True) == []  # left padding: generate counts
    packed = packed_position_ids([2, 3])[None]
    assert audit_positions(ids[:1], None, packed, use_cache=False) == []
    block = packed_causal_mask([2, 3], dtype=torch.float32)[None, None]
    assert audit_positions(ids[:1], block, packed) == []
    bool_block = packed_causal_mask([2, 3], dtype=torch.bool)[None, None]
    assert audit_positions(ids[:1], bool_block, packed, attn_implementation="sdpa") == []
    # decoding one token after 5 cached ones, the mask covering the cache
    step_mask = torch.tensor([[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]])
    assert audit_positions(ids[:, :1], step_mask, torch.tensor([[3], [5]]), cache_length=5) == []


def test_audit_flags_every_trap_of_chapter_12() -> None:
    ids = torch.ones(2, 5, dtype=torch.long)
    right = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    assert _codes(audit_positions(ids, right)) == {"padding-without-ids"}
    issues = audit_positions(ids, right, generate=True)
    assert _codes(issues) == {"right-padding-generate"} and issues[0].rows == (0,)
    columns = torch.arange(5).expand(2, 5)
    left = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])
    issues = audit_positions(ids, left, columns)
    assert _codes(issues) == {"ids-disagree-with-mask"} and issues[0].rows == (0,)
    packed = packed_position_ids([2, 3])[None]
    assert _codes(audit_positions(ids[:1], None, packed)) == {"packed-with-cache"}
    assert _codes(audit_positions(ids[:1], torch.ones(1, 5, dtype=torch.long), packed,
                                  use_cache=False)) == {"packed-with-2d-mask"}
    # a prefill chunk after 8 cached tokens that restarts at 0
    chunk = audit_positions(ids[:1], None, torch.arange(5)[None], cache_length=8)
    assert _codes(chunk) == {"ids-disagree-with-mask"}
    assert audit_positions(ids[:1], None, torch.arange(8, 13)[None], cache_length=8) == []
    assert _codes(audit_positions(ids[:1], cache_length=6, rope_type="dynamic",
                                  original_max_position=8)) == {"dynamic-ntk-with-cache"}
    assert audit_positions(ids[:1], cache_length=2, rope_type="dynamic",
                           original_max_position=8) == []
    assert _codes(audit_positions(ids[:1], cache_length=6, rope_type="longrope",
                                  original_max_position=8)) == {"longrope-switch-with-cache"}
    # a bool (or integer) 4-D mask on eager is added as 0/1; FlashAttention takes no 4-D mask
    for mask in (packed_causal_mask([2, 3], dtype=torch.bool)[None, None],
                 packed_causal_mask([2, 3], dtype=torch.bool)[None, None].long()):
        assert _codes(audit_positions(ids[:1], mask, packed, attn_implementation="eager")) == {
            "4d-mask-misread"}
    additive = packed_causal_mask([2, 3], dtype=torch.float32)[None, None]
    issues = audit_positions(ids[:1], additive, packed, attn_implementation="flash_attention_2")
    assert _codes(issues) == {"4d-mask-misread"} and "cu_seq_lens" in issues[0].message


def test_audit_under_flash_attention_drops_the_false_packing_alarms() -> None:
    """FlashAttention reads the documents off restarting ids (cache or not) unless the 2-D mask
    it receives holds padding; an all-ones mask is dropped (transformers' flash_attention_mask)."""
    ids = torch.ones(1, 5, dtype=torch.long)
    packed = packed_position_ids([2, 3])[None]
    ones = torch.ones(1, 5, dtype=torch.long)
    for impl in ("eager", "sdpa"):
        assert _codes(audit_positions(ids, None, packed, attn_implementation=impl)) == {
            "packed-with-cache"}
    for impl in ("flash_attention_2", "flash_attention_3"):
        assert audit_positions(ids, None, packed, attn_implementation=impl) == []
        assert audit_positions(ids, ones, packed, attn_implementation=impl) == []
    # a padded batch keeps its 2-D mask under FlashAttention: the documents are not inferred
    two = torch.ones(2, 5, dtype=torch.long)
    padded = torch.tensor([[1, 1, 1, 1, 1], [0, 1, 1, 1, 1]])
    ids2 = torch.stack([packed[0], torch.tensor([0, 0, 1, 2, 3])])
    issues = audit_positions(two, padded, ids2, attn_implementation="flash_attention_2")
    assert _codes(issues) == {"packed-with-2d-mask"} and issues[0].rows == (0,)


def test_audit_flags_a_packed_batch_of_several_rows_under_flash_attention() -> None:
    """transformers 5.25's _is_packed_sequence reads packed ids only for a batch of one row: a
    batch of two packed rows is not split under FlashAttention (mutation: dropping the batch > 1
    condition flags the batch of one; dropping the flag leaves the batch of two unflagged)."""
    from transformers.modeling_flash_attention_utils import _is_packed_sequence

    packed = packed_position_ids([2, 3])[None]
    assert bool(_is_packed_sequence(packed, 1)) and not bool(_is_packed_sequence(
        packed.expand(2, -1), 2))
    one, two = torch.ones(1, 5, dtype=torch.long), torch.ones(2, 5, dtype=torch.long)
    mixed = torch.stack([packed[0], torch.arange(5)])  # one packed row, one plain row
    for impl in ("flash_attention_2", "flash_attention_3"):
        for mask in (None, two):  # no mask, or an all-ones one (dropped)
            for use_cache in (True, False):
                issues = audit_positions(two, mask, packed.expand(2, -1), use_cache=use_cache,
                                         attn_implementation=impl)
                assert _codes(issues) == {"packed-batch-flash"} and issues[0].rows == (0, 1)
                assert audit_positions(one, None if mask is None else one, packed,
                                       use_cache=use_cache, attn_implementation=impl) == []
        issues = audit_positions(two, None, mixed, attn_implementation=impl)
        assert _codes(issues) == {"packed-batch-flash"} and issues[0].rows == (0,)
    # eager and SDPA split a packed batch of two with no mask and no cache
    for impl in ("eager", "sdpa"):
        assert audit_positions(two, None, packed.expand(2, -1), use_cache=False,
                               attn_implementation=impl) == []


def test_audit_flags_a_dynamic_ntk_batch_of_mixed_lengths() -> None:
    """transformers 5.25's dynamic_rope_update scales one set of frequencies per call, for the
    batch's largest position id + 1: chapter 12's 10-token row left-padded beside a 16-token row
    (training length 8, counted ids) is not its own pass. Flagged exactly where a tiny dynamic
    Llama's logits move (mutation: per-row lengths, or dropping the training-length condition)."""
    import transformers

    config = transformers.LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=8,
        rope_parameters={"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0},
        initializer_range=0.2, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).eval()
    tokens = torch.arange(3, 19)[None]

    def batch_error(short: int, long: int) -> tuple[list, float]:
        mask = torch.ones(2, long, dtype=torch.long)
        mask[0, :long - short] = 0
        ids = torch.stack([torch.cat([torch.zeros(long - short, dtype=torch.long),
                                      tokens[0, :short]]), tokens[0, :long]])
        positions = position_ids_from_mask(mask)
        issues = audit_positions(ids, mask, positions, use_cache=False, rope_type="dynamic",
                                 original_max_position=8, encoding="rope")
        with torch.no_grad():
            model(tokens[:, :4])  # reset the grown frequencies (they are kept between calls)
            batched = model(ids, attention_mask=mask, position_ids=positions).logits[0, -1]
            model(tokens[:, :4])
            alone = model(tokens[:, :short]).logits[0, -1]
        return issues, (batched - alone).abs().max().item()

    issues, error = batch_error(10, 16)  # chapter 12's batch
    assert _codes(issues) == {"dynamic-ntk-mixed-batch"} and issues[0].rows == (0,)
    assert "(16)" in issues[0].message and error > 0.05
    issues, error = batch_error(5, 8)  # both rows within the training length
    assert issues == [] and error < 1e-5
    issues, error = batch_error(12, 12)  # equal lengths past it: one length, one set
    assert issues == [] and error < 1e-5
    # generate counts the ids itself: the same batch is flagged; a decode step with counted ids
    mask = torch.tensor([[0] * 6 + [1] * 10, [1] * 16])
    ids = torch.ones(2, 16, dtype=torch.long)
    issues = audit_positions(ids, mask, generate=True, use_cache=False, rope_type="dynamic",
                             original_max_position=8)
    assert _codes(issues) == {"dynamic-ntk-mixed-batch"} and issues[0].rows == (0,)
    step_mask = torch.cat([mask, torch.ones(2, 1, dtype=torch.long)], 1)
    issues = audit_positions(ids[:, :1], step_mask, torch.tensor([[10], [16]]), cache_length=16,
                             rope_type="dynamic", original_max_position=8)
    assert _codes(issues) == {"dynamic-ntk-with-cache", "dynamic-ntk-mixed-batch"}
    assert next(i for i in issues if i.code == "dynamic-ntk-mixed-batch").rows == (0,)


def test_audit_messages_name_the_case() -> None:
    """A forward jump in the ids is not a chunk restart, and a prefill with an empty cache is
    itself exact under dynamic NTK (only the next cached step is stale)."""
    ids = torch.ones(1, 6, dtype=torch.long)
    jump = audit_positions(ids, None, torch.tensor([[0, 1, 2, 5, 6, 7]]))
    assert _codes(jump) == {"ids-disagree-with-mask"} and "jumps_intended" in jump[0].message
    chunk = audit_positions(ids, None, torch.arange(6)[None], cache_length=4)
    assert _codes(chunk) == {"ids-disagree-with-mask"} and "cached prefix" in chunk[0].message
    prefill = audit_positions(torch.ones(1, 16, dtype=torch.long), rope_type="dynamic",
                              original_max_position=8)
    assert _codes(prefill) == {"dynamic-ntk-with-cache"}
    assert "this pass is exact" in prefill[0].message and "next cached step" in prefill[0].message
    step = audit_positions(ids[:, :1], cache_length=16, rope_type="dynamic",
                           original_max_position=8)
    assert "this pass is exact" not in step[0].message


def test_audit_reads_the_documents_off_a_4d_block_mask() -> None:
    """Column ids under a block mask: a tiny GPT-2 (learned table) is off the documents run
    separately and is flagged packed-ids-not-restarted; restarted ids are exact and pass; RoPE
    with fixed frequencies is not flagged (only offsets inside a document count), dynamic NTK is
    (mutations caught: the audit's old all-ones reading of a 4-D mask returned nothing here)."""
    import transformers

    lengths = [4, 3, 5]
    tokens = torch.arange(3, 15)[None]
    restarted = packed_position_ids(lengths)[None]
    columns = torch.arange(12)[None]
    block = packed_causal_mask(lengths, dtype=torch.float32)[None, None]
    config = transformers.GPT2Config(vocab_size=32, n_positions=32, n_embd=32, n_layer=2,
                                     n_head=4, attn_implementation="eager")
    torch.manual_seed(0)
    gpt2 = transformers.GPT2LMHeadModel(config).eval()
    with torch.no_grad():
        separate = torch.cat([gpt2(doc[None]).logits[0]
                              for doc in tokens[0].split(lengths)])
        errors = {name: (gpt2(tokens, attention_mask=block, position_ids=ids).logits[0]
                         - separate).abs().max().item()
                  for name, ids in (("columns", columns), ("restarted", restarted))}
    assert errors["restarted"] < 1e-5 < 0.05 < errors["columns"]
    for ids in (None, columns):
        for encoding in ("absolute", None):
            issues = audit_positions(tokens, block, ids, encoding=encoding)
            assert _codes(issues) == {"packed-ids-not-restarted"} and issues[0].rows == (0,)
        assert audit_positions(tokens, block, ids, encoding="rope") == []
        assert _codes(audit_positions(tokens, block, ids, encoding="rope", rope_type="dynamic",
                                      original_max_position=6, use_cache=False)) == {
            "packed-ids-not-restarted"}
    bool_block = packed_causal_mask(lengths, dtype=torch.bool)[None, None]  # read on SDPA
    assert _codes(audit_positions(tokens, bool_block, columns, encoding="absolute",
                                  attn_implementation="sdpa")) == {"packed-ids-not-restarted"}
    window = sliding_window_mask(12, 4)[None, None]  # a window is one document, not several
    for encoding in ("absolute", "rope", None):
        assert audit_positions(tokens, block, restarted, encoding=encoding) == []
        assert audit_positions(tokens, bool_block, restarted, encoding=encoding,
                               attn_implementation="sdpa") == []
        assert audit_positions(tokens, window, columns, encoding=encoding,
                               attn_implementation="sdpa") == []
    # only the second row of a batch of two restarts wrongly
    two = audit_positions(tokens.expand(2, -1), block, torch.cat([restarted, columns]),
                          encoding="absolute")
    assert _codes(two) == {"packed-ids-not-restarted"} and two[0].rows == (1,)


def test_audit_accepts_a_constant_shift_under_fixed_rope() -> None:
    """Column ids on a left-padded row differ from the counted ones by one constant, which RoPE
    with fixed frequencies does not see (chapter 12: 1.4e-6 on its tiny Llama); a cache, a
    length-dependent RoPE or an absolute table keeps the flag (mutation: accepting any offset)."""
    ids = torch.ones(2, 6, dtype=torch.long)
    left = torch.tensor([[1] * 6, [0, 0, 0, 1, 1, 1]])
    columns = torch.arange(6).expand(2, 6)
    assert audit_positions(ids, left, columns, encoding="rope") == []
    assert audit_positions(ids, left, columns + 7, encoding="rope") == []
    for kwargs in (dict(encoding="absolute"), dict(),
                   dict(encoding="rope", rope_type="dynamic", original_max_position=4,
                        use_cache=False)):
        issues = audit_positions(ids, left, columns, **kwargs)
        assert _codes(issues) == {"ids-disagree-with-mask"} and issues[0].rows == (1,)
    # not one constant (a gap inside the real tokens), or a chunk after a cache: still flagged
    gapped = torch.tensor([[0, 1, 2, 3, 4, 5], [0, 0, 0, 0, 1, 3]])
    assert _codes(audit_positions(ids, left, gapped, encoding="rope")) == {
        "ids-disagree-with-mask"}
    assert _codes(audit_positions(ids[:1, :4], None, torch.arange(4)[None], cache_length=5,
                                  encoding="rope")) == {"ids-disagree-with-mask"}


@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    (dict(input_ids=[[1, 2]]), TypeError, "input_ids must be a"),
    (dict(input_ids=torch.ones(3, dtype=torch.long)), ValueError, r"input_ids must have shape"),
    (dict(input_ids=torch.ones(1, 0, dtype=torch.long)), ValueError, "at least one token"),
    (dict(input_ids=torch.ones(1, 3), ), TypeError, "input_ids must hold integers"),
    (dict(attention_mask=torch.tensor([[1, 2, 1]])), ValueError, "only 0 and 1"),
    (dict(attention_mask=torch.ones(1, 4, dtype=torch.long)), ValueError,
     "must cover seq = 3 or cache_length"),
    (dict(attention_mask=torch.zeros(1, 3, dtype=torch.long)), ValueError, "no real token"),
    (dict(attention_mask=torch.ones(2, 3, dtype=torch.long)), ValueError, "batch size 1"),
    (dict(position_ids=torch.ones(1, 4, dtype=torch.long)), ValueError, r"shape \(1, 3\)"),
    (dict(position_ids=-torch.ones(1, 3, dtype=torch.long)), ValueError, ">= 0"),
    (dict(cache_length=-1), ValueError, "cache_length"),
    (dict(use_cache=1), TypeError, "use_cache must be a bool"),
    (dict(rope_type="ntk"), ValueError, "rope_type must be one of"),
    (dict(rope_type="dynamic"), ValueError, "needs original_max_position"),
    (dict(attn_implementation="flash"), ValueError, "attn_implementation must be one of"),
    (dict(attention_mask=torch.ones(1, 1, 2, 3, dtype=torch.bool)), ValueError, "4-D"),
    (dict(attention_mask=torch.ones(1, 1, 3, 2, dtype=torch.bool)), ValueError, "k_len >= seq"),
    (dict(encoding="learned"), ValueError, "encoding must be one of"),
    (dict(encoding="alibi", rope_type="yarn"), ValueError, "needs encoding 'rope'"),
])
def test_audit_rejects_malformed_input(kwargs: dict, exc: type, match: str) -> None:
    args = dict(input_ids=torch.ones(1, 3, dtype=torch.long))
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        audit_positions(**args)


def test_audit_broadcasts_1d_position_ids_like_transformers() -> None:
    """A (seq,) position_ids is read as (1, seq) and broadcast to every row: column ids on a
    left-padded batch are flagged as the (1, seq) form is, counted ids on one row pass, and a
    1-D tensor of the wrong length is still refused."""
    ids = torch.tensor([[5, 6, 7, 8], [0, 0, 11, 12]])
    mask = torch.tensor([[1, 1, 1, 1], [0, 0, 1, 1]])
    columns = torch.arange(4)
    one_d = audit_positions(ids, mask, columns, encoding="absolute")
    two_d = audit_positions(ids, mask, columns[None], encoding="absolute")
    assert _codes(one_d) == _codes(two_d) == {"ids-disagree-with-mask"}
    assert [issue.rows for issue in one_d] == [issue.rows for issue in two_d] == [(1,)]
    assert audit_positions(ids[:1], mask[:1], columns, encoding="absolute") == []
    with pytest.raises(ValueError, match=r"position_ids must have shape \(2, 4\)"):
        audit_positions(ids, mask, torch.arange(3))


def test_audit_longrope_flags_only_the_step_that_crosses_the_switch() -> None:
    """The docstring's note: a cache at or below the original length, stepped past it, is
    flagged; a cache already past it is assumed re-prefilled and passes."""
    step = torch.tensor([[3]])
    kwargs = dict(rope_type="longrope", original_max_position=8)
    assert _codes(audit_positions(step, cache_length=8, **kwargs)) == {
        "longrope-switch-with-cache"}
    assert _codes(audit_positions(step, cache_length=7, **kwargs)) == set()
    assert audit_positions(step, cache_length=9, **kwargs) == []


def test_audit_encoding_flags_what_each_encoding_notices() -> None:
    """Chapter 12's measurements: GPT-2 (absolute) breaks on a left-padded forward without ids,
    Llama (RoPE) does not; the next step after right padding breaks RoPE; BLOOM (ALiBi) numbers
    its keys by the mask and NoPE reads no ids."""
    ids = torch.ones(2, 6, dtype=torch.long)
    left = torch.tensor([[1] * 6, [0, 0, 0, 1, 1, 1]])
    assert _codes(audit_positions(ids, left, encoding="absolute")) == {"padding-without-ids"}
    assert audit_positions(ids, left, encoding="rope") == []
    # ... unless the frequencies follow the largest id (dynamic NTK, training length 4): the pads'
    # column ids change them, so the left-padded row is flagged (0.027 measured in chapter 12's
    # review; mutation caught: the fixed-frequency rule applied to dynamic NTK)
    issues = audit_positions(ids, left, encoding="rope", rope_type="dynamic",
                             original_max_position=4, use_cache=False)
    assert _codes(issues) == {"padding-without-ids"} and issues[0].rows == (1,)
    assert audit_positions(ids, left, encoding="rope", rope_type="dynamic",
                           original_max_position=8, use_cache=False) == []
    step = torch.tensor([[1, 1, 1, 0, 0, 0, 1]])  # one token after a right-padded prompt
    issues = audit_positions(ids[:1, :1], step, cache_length=6, encoding="rope")
    assert _codes(issues) == {"padding-without-ids"} and issues[0].rows == (0,)
    right = torch.tensor([[1] * 6, [1, 1, 1, 0, 0, 0]])
    for encoding in ("alibi", "nope", "rope", "absolute", None):  # a pad slot predicts, always
        issues = audit_positions(ids, right, generate=True, encoding=encoding)
        assert _codes(issues) == {"right-padding-generate"} and issues[0].rows == (1,)
    for encoding in ("alibi", "nope"):
        assert audit_positions(ids[:1, :1], step, cache_length=6, encoding=encoding) == []
        assert audit_positions(ids, left, torch.arange(6).expand(2, 6), encoding=encoding) == []
    # ids that restart at 0 after a cache are wrong for RoPE and absolute tables alike
    for encoding in ("rope", "absolute", None):
        assert _codes(audit_positions(ids[:1, :4], None, torch.arange(4)[None], cache_length=5,
                                      encoding=encoding)) == {"ids-disagree-with-mask"}
    # packing is a mask trap: every encoding
    packed = packed_position_ids([2, 3])[None]
    assert _codes(audit_positions(ids[:1, :5], None, packed, encoding="nope")) == {
        "packed-with-cache"}


def test_audit_padded_step_after_a_cache_depends_on_the_prefill_numbering() -> None:
    """A left-padded batch prefilled with counted ids and stepped without ids is off on a tiny
    Llama (0.595 in chapter 12's review), a prefill without ids makes the step a common shift:
    the audit flags the step unless told the cache was numbered by column (mutation: the old
    silent pass under "rope")."""
    model = _tiny_model("llama")
    prompt = torch.tensor([[0, 0, 0, 11, 12, 13]])
    prompt_mask = torch.tensor([[0, 0, 0, 1, 1, 1]])
    step = torch.tensor([[14]])
    step_mask = torch.cat([prompt_mask, torch.ones(1, 1, dtype=torch.long)], -1)
    with torch.no_grad():
        reference = model(torch.tensor([[11, 12, 13, 14]])).logits[0, -1]
        errors = {}
        for label, prefill_ids in (("counted", position_ids_from_mask(prompt_mask)),
                                   ("column", None)):
            cache = model(prompt, attention_mask=prompt_mask, position_ids=prefill_ids).cache
            logits = model(step, attention_mask=step_mask, cache=cache).logits[0, -1]
            errors[label] = (logits - reference).abs().max().item()
    assert errors["counted"] > 0.1 and errors["column"] < 1e-5
    for cache_ids in (None, "counted"):
        issues = audit_positions(step, step_mask, cache_length=6, encoding="rope",
                                 cache_ids=cache_ids)
        assert _codes(issues) == {"padding-without-ids"} and issues[0].rows == (0,)
    assert "prefill" in audit_positions(step, step_mask, cache_length=6,
                                        encoding="rope")[0].message
    assert audit_positions(step, step_mask, cache_length=6, encoding="rope",
                           cache_ids="column") == []
    # counted ids for the step pass; a whole left-padded forward (no cache) ignores cache_ids
    counted = position_ids_from_mask(step_mask)[:, -1:]
    assert audit_positions(step, step_mask, counted, cache_length=6, encoding="rope") == []
    # ... unless the cache was numbered by column: then the counted id is the wrong one
    assert _codes(audit_positions(step, step_mask, counted, cache_length=6, encoding="rope",
                                  cache_ids="column")) == {"ids-disagree-with-mask"}
    assert audit_positions(step, step_mask, torch.tensor([[6]]), cache_length=6,
                           encoding="rope", cache_ids="column") == []
    assert audit_positions(prompt, prompt_mask, encoding="rope", cache_ids="counted") == []
    with pytest.raises(ValueError, match="cache_ids"):
        audit_positions(step, step_mask, cache_length=6, cache_ids="counting")


def _tiny_model(name: str) -> torch.nn.Module:
    import transformers

    settings_ = dict(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=128,
                     initializer_range=0.2, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    if name == "gemma3":
        config = transformers.Gemma3TextConfig(head_dim=8, sliding_window=64, layer_types=[
            "sliding_attention", "full_attention"], **settings_)
        model_class = transformers.Gemma3ForCausalLM
    elif name == "smollm3":
        config = transformers.SmolLM3Config(no_rope_layers=[1, 0], **settings_)
        model_class = transformers.SmolLM3ForCausalLM
    else:
        config = transformers.LlamaConfig(**settings_)
        model_class = transformers.LlamaForCausalLM
    torch.manual_seed(0)
    return model_class(config).eval()


def test_layer_rope_frequencies_read_each_layer() -> None:
    gemma = _tiny_model("gemma3")
    local, global_ = layer_rope_frequencies(gemma.config)
    assert torch.allclose(local, rope_inv_freq(8, 10_000.0), rtol=1e-6, atol=0)
    assert torch.allclose(global_, rope_inv_freq(8, 1_000_000.0), rtol=1e-6, atol=0)
    rotary = gemma.model.rotary_emb
    assert torch.allclose(local.float(), rotary.sliding_attention_inv_freq)
    assert torch.allclose(global_.float(), rotary.full_attention_inv_freq)
    smol = _tiny_model("smollm3")
    rope_layer, nope_layer = layer_rope_frequencies(smol.config)
    assert nope_layer is None
    assert torch.allclose(rope_layer.float(), smol.model.rotary_emb.inv_freq)


@pytest.mark.parametrize("name", ["gemma3", "smollm3", "llama"])
def test_shift_cache_per_layer_equals_the_shifted_prefill(name: str) -> None:
    """Every layer of a cache shifted by +4 equals the cache of the same text prefilled at
    positions 4 … (RoPE is relative, so the hidden states do not move); one set of frequencies
    for every layer is wrong wherever the layers differ."""
    model = _tiny_model(name)
    row = torch.arange(20, 32)[None]
    frequencies = layer_rope_frequencies(model.config)
    with torch.no_grad():
        target = model(row, position_ids=torch.arange(4, 16)[None]).cache
        errors = {}
        for label, freqs in [("per layer", frequencies), ("one", next(
                f for f in frequencies[::-1] if f is not None))]:
            cache = shift_cache(model(row).cache, 4.0, freqs)
            errors[label] = max((a.keys - b.keys).abs().max().item()
                                for a, b in zip(cache.layers, target.layers, strict=True))
    assert errors["per layer"] < 1e-5
    if name == "llama":
        assert errors["one"] < 1e-5  # every layer has the same frequencies
    else:
        assert errors["one"] > 0.1


def test_shift_cache_evicts_and_matches_rerotate_keys() -> None:
    model = _tiny_model("llama")
    keep = torch.tensor([0, 1, 6, 7, 8])
    shift = torch.tensor([0.0, 0.0, -4.0, -4.0, -4.0])
    inv = layer_rope_frequencies(model.config)
    with torch.no_grad():
        cache = model(torch.arange(20, 29)[None]).cache
        expected = [rerotate_keys(layer.keys[:, :, keep].double(), shift, inv_freq=inv[i])
                    for i, layer in enumerate(cache.layers)]
        values = [layer.values[:, :, keep] for layer in cache.layers]
        shift_cache(cache, shift, inv, keep=keep)
    for layer, k, v in zip(cache.layers, expected, values, strict=True):
        assert torch.allclose(layer.keys.double(), k, atol=1e-6)
        assert torch.equal(layer.values, v) and cache.get_seq_length() == 5


def test_shift_cache_rejects_bad_arguments() -> None:
    model = _tiny_model("llama")
    with torch.no_grad():
        cache = model(torch.arange(20, 25)[None]).cache
    inv = layer_rope_frequencies(model.config)
    with pytest.raises(TypeError, match="cache must be"):
        shift_cache([1, 2], 1.0, inv)
    with pytest.raises(ValueError, match="one entry per cache layer"):
        shift_cache(cache, 1.0, inv[:1])
    with pytest.raises(TypeError, match=r"frequencies\[0\]"):
        shift_cache(cache, 1.0, [[1.0], None])
    with pytest.raises(TypeError, match="frequencies must be"):
        shift_cache(cache, 1.0, "half")
    with pytest.raises(ValueError, match="keep must index"):
        shift_cache(cache, 1.0, inv, keep=torch.tensor([0, 7]))
    with pytest.raises(TypeError, match="keep must be"):
        shift_cache(cache, 1.0, inv, keep=torch.tensor([0.0]))


# --- repeated K-shifts, draft trees, zig-zag shards (chapter 12) ---------------------------

from posenc_lib.serving import (  # noqa: E402
    repeated_kshift,
    tree_attention_mask,
    tree_position_ids,
    zigzag_shard_indices,
)


def _rotated_keys(seq: int = 16, dim: int = 128, start: float = 8000.0) -> tuple:
    raw = torch.randn(seq, dim, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    positions = torch.arange(start, start + seq, dtype=torch.float64)
    return raw, positions, rerotate_keys(raw, positions, base=1e4)


def _relative_error(x: torch.Tensor, reference: torch.Tensor) -> float:
    return ((x.double() - reference).norm(dim=-1) / reference.norm(dim=-1)).max().item()


def test_repeated_kshift_in_float64_is_one_shift_by_the_total() -> None:
    _, _, keys = _rotated_keys()
    out = repeated_kshift(keys, -3.0, 20, base=1e4, dtype=torch.float64)
    assert out.shape == (21, *keys.shape) and out.dtype == torch.float64
    assert torch.equal(out[0], keys)
    for n in (1, 7, 20):
        assert _relative_error(out[n], rerotate_keys(keys, -3.0 * n, base=1e4)) < 1e-12


def test_repeated_bf16_kshift_drifts_where_one_rotation_does_not() -> None:
    raw, positions, keys = _rotated_keys()
    for arithmetic in ("float32", "storage"):
        out = repeated_kshift(keys, -1.0, 256, base=1e4, arithmetic=arithmetic)
        assert out.dtype == torch.bfloat16
        one = _relative_error(out[1], rerotate_keys(keys, -1.0, base=1e4))
        many = _relative_error(out[256], rerotate_keys(keys, -256.0, base=1e4))
        assert one < 0.01 and many > 10 * one, (arithmetic, one, many)
    # a pre-RoPE bf16 cache rotated once to the final position rounds once
    once = rerotate_keys(raw.to(torch.bfloat16), positions - 256, base=1e4)
    assert _relative_error(once, rerotate_keys(keys, -256.0, base=1e4)) < 0.01
    # a float32 cache shifted 256 times stays close
    out32 = repeated_kshift(keys, -1.0, 256, base=1e4, dtype=torch.float32)
    assert _relative_error(out32[256], rerotate_keys(keys, -256.0, base=1e4)) < 1e-4


def test_repeated_f16_kshift_drifts_less_than_bf16_and_one_shift_rounds_once() -> None:
    _, _, keys = _rotated_keys()
    target = rerotate_keys(keys, -256.0, base=1e4)
    f16 = repeated_kshift(keys, -1.0, 256, base=1e4, dtype=torch.float16)
    bf16 = repeated_kshift(keys, -1.0, 256, base=1e4)
    assert f16.dtype == torch.float16
    f16_one = _relative_error(f16[1], rerotate_keys(keys, -1.0, base=1e4))
    f16_many = _relative_error(f16[256], target)
    assert f16_one < 1e-3 and f16_many > 10 * f16_one
    assert f16_many < _relative_error(bf16[256], target) / 3
    # one bf16 shift by the whole 256 rounds once: no drift
    once = repeated_kshift(keys, -256.0, 1, base=1e4)
    assert _relative_error(once[1], target) < 0.01


def test_repeated_kshift_rejects_bad_arguments() -> None:
    keys = torch.randn(4, 8)
    with pytest.raises(ValueError, match="n_shifts"):
        repeated_kshift(keys, -1.0, 0, base=1e4)
    with pytest.raises(ValueError, match="exactly one"):
        repeated_kshift(keys, -1.0, 2)
    with pytest.raises(ValueError, match="arithmetic"):
        repeated_kshift(keys, -1.0, 2, base=1e4, arithmetic="float16")
    with pytest.raises(TypeError, match="shift"):
        repeated_kshift(keys, "1", 2, base=1e4)
    with pytest.raises(TypeError, match="dtype"):
        repeated_kshift(keys, -1.0, 2, base=1e4, dtype=torch.int8)
    # No silent NaN: a non-finite shift, a base <= 0 and a wrong-length inv_freq are refused.
    with pytest.raises(ValueError, match="shift"):
        repeated_kshift(keys, float("nan"), 2, base=1e4)
    with pytest.raises(ValueError, match="base"):
        repeated_kshift(keys, -1.0, 2, base=-5.0)
    with pytest.raises(ValueError, match="inv_freq"):
        repeated_kshift(keys, -1.0, 2, inv_freq=torch.ones(3))


@given(st.integers(1, 10), st.integers(0, 10))
def test_a_linear_draft_tree_is_ordinary_positions(n: int, prefix: int) -> None:
    chain = list(range(-1, n - 1))
    assert tree_position_ids(chain, prefix).tolist() == list(range(prefix, prefix + n))
    causal = torch.ones(prefix + n, prefix + n, dtype=torch.bool).tril()[prefix:]
    assert torch.equal(tree_attention_mask(chain, prefix, dtype=torch.bool), causal)


trees = st.integers(1, 8).flatmap(
    lambda n: st.tuples(*[st.integers(-1, i - 1) for i in range(n)]).map(list))


def _rope_attention(q, k, v, positions, allowed):  # q (n, d); k, v (m, d); allowed (n, m)
    q = apply_rope_half(q, positions[-q.shape[0]:].double())
    k = apply_rope_half(k, positions.double())
    scores = (q @ k.T / q.shape[-1] ** 0.5).masked_fill(~allowed, float("-inf"))
    return torch.softmax(scores, -1) @ v


@given(trees, st.integers(0, 5), st.integers(0, 2**16))
@settings(max_examples=40, deadline=None)
def test_each_root_to_leaf_path_scores_as_a_linear_draft(parents: list[int], prefix: int,
                                                         seed: int) -> None:
    n, d = len(parents), 8
    gen = torch.Generator().manual_seed(seed)
    q, k, v = torch.randn(3, prefix + n, d, dtype=torch.float64, generator=gen).unbind(0)
    tree_ids = tree_position_ids(parents, prefix)
    positions = torch.cat((torch.arange(prefix), tree_ids))
    tree_out = _rope_attention(q[prefix:], k, v, positions,
                              tree_attention_mask(parents, prefix, dtype=torch.bool))
    for leaf in set(range(n)) - set(parents):
        path = [leaf]
        while parents[path[-1]] >= 0:
            path.append(parents[path[-1]])
        rows = torch.tensor([*range(prefix), *(prefix + i for i in reversed(path))])
        m = len(rows)
        linear = _rope_attention(q[rows[prefix:]], k[rows], v[rows], torch.arange(m),
                                 torch.ones(m, m, dtype=torch.bool).tril()[prefix:])
        assert torch.allclose(tree_out[rows[prefix:] - prefix], linear, atol=1e-12)


def test_tree_mask_forms_and_rejections() -> None:
    parents = [-1, -1, 0, 1, 2]
    assert tree_position_ids(parents, 6).tolist() == [6, 6, 7, 7, 8]
    allowed = tree_attention_mask(parents, 2, dtype=torch.bool)
    assert allowed.shape == (5, 7)
    assert allowed[4].tolist() == [True, True, True, False, True, False, True]
    additive = tree_attention_mask(parents, 2, dtype=torch.float32)
    assert torch.equal(additive == 0, allowed) and additive.min() == torch.finfo(torch.float32).min
    with pytest.raises(ValueError, match=r"parents\[1\]"):
        tree_position_ids([-1, 1], 0)
    with pytest.raises(ValueError, match="at least one"):
        tree_attention_mask([], 3, dtype=torch.bool)
    with pytest.raises(ValueError, match="prefix_length"):
        tree_position_ids([-1], -1)
    with pytest.raises(TypeError, match="dtype"):
        tree_attention_mask([-1], 0, dtype=torch.int64)
    with pytest.raises(TypeError, match="dtype"):
        tree_attention_mask([-1], 0, dtype=None)
    with pytest.raises(TypeError, match="dtype"):       # no default: the caller names the form
        tree_attention_mask([-1], 0)  # type: ignore[call-arg]


@given(st.integers(1, 4), st.integers(1, 3))
def test_zigzag_shards_with_global_ids_equal_the_full_pass(n_ranks: int, chunk: int) -> None:
    seq = 2 * n_ranks * chunk
    shards = zigzag_shard_indices(seq, n_ranks)
    assert sorted(torch.cat(shards).tolist()) == list(range(seq))
    assert all(s.shape == (seq // n_ranks,) for s in shards)
    assert len({int((s + 1).sum()) for s in shards}) == 1  # equal causal query-key pairs
    q, k, v = torch.randn(3, seq, 8, dtype=torch.float64,
                          generator=torch.Generator().manual_seed(seq)).unbind(0)
    causal = torch.ones(seq, seq, dtype=torch.bool).tril()
    full = _rope_attention(q, k, v, torch.arange(seq), causal)
    for s in shards:  # each rank: its own queries, every key (as ring attention passes them)
        q_s = apply_rope_half(q[s], s.double())
        k_all = apply_rope_half(k, torch.arange(seq, dtype=torch.float64))
        scores = (q_s @ k_all.T / 8**0.5).masked_fill(s[:, None] < torch.arange(seq), float("-inf"))
        assert torch.allclose(torch.softmax(scores, -1) @ v, full[s], atol=1e-12)


def test_zigzag_shards_reject_bad_sizes() -> None:
    assert [s.tolist() for s in zigzag_shard_indices(8, 2)] == [[0, 1, 6, 7], [2, 3, 4, 5]]
    with pytest.raises(ValueError, match="seq_len"):
        zigzag_shard_indices(10, 2)
    with pytest.raises(ValueError, match="pad the row to 12 tokens"):
        zigzag_shard_indices(10, 2)
    with pytest.raises(ValueError, match="pad the row to 12 tokens"):
        zigzag_shard_indices(7, 3)
    with pytest.raises(ValueError, match="n_ranks"):
        zigzag_shard_indices(8, 0)


def test_quantize_keys_absmax_rounds_to_the_grid_of_each_group() -> None:
    """Each value moves by at most half its group's step (absmax / 127 for int8), lands on the
    grid, the group's largest value is exact, and a zero group stays zero."""
    g = torch.Generator().manual_seed(3)
    keys = torch.randn(2, 50, 16, dtype=torch.float64, generator=g)
    keys[0, :, 5] = 0.0
    for group, axis in (("channel", -2), ("token", -1)):
        out = quantize_keys_absmax(keys, group=group)
        step = keys.abs().amax(dim=axis, keepdim=True) / 127
        assert out.shape == keys.shape and out.dtype == keys.dtype
        assert bool(((out - keys).abs() <= step / 2 + 1e-12).all())
        on_grid = out / torch.where(step > 0, step, torch.ones_like(step))
        assert torch.allclose(on_grid, on_grid.round(), atol=1e-9)
        assert torch.allclose(out.abs().amax(dim=axis), keys.abs().amax(dim=axis))
    assert bool((quantize_keys_absmax(keys)[0, :, 5] == 0).all())
    # per-channel scales differ from per-token ones, and fewer bits give a coarser grid
    assert not torch.equal(quantize_keys_absmax(keys, group="channel"),
                           quantize_keys_absmax(keys, group="token"))
    err8 = (quantize_keys_absmax(keys) - keys).abs().max()
    err4 = (quantize_keys_absmax(keys, bits=4) - keys).abs().max()
    assert err4 > 5 * err8
    assert quantize_keys_absmax(keys.to(torch.bfloat16)).dtype == torch.bfloat16


def test_quantize_keys_absmax_per_channel_suits_outlier_channels() -> None:
    """KIVI's and KVQuant's reason for per-channel keys: with a few large channels, one scale per
    token wastes its grid on them; one scale per channel does not (error several times smaller)."""
    g = torch.Generator().manual_seed(4)
    keys = torch.randn(256, 64, dtype=torch.float64, generator=g)
    keys[:, :4] *= 20.0
    err = {group: (quantize_keys_absmax(keys, group=group) - keys)[:, 4:].norm()
           for group in ("channel", "token")}
    assert err["token"] > 5 * err["channel"]


@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    (dict(keys=torch.ones(4, 8, dtype=torch.long)), TypeError, "keys must have a floating"),
    (dict(keys=torch.ones(8)), ValueError, "keys must have shape"),
    (dict(group="head"), ValueError, "group must be one of"),
    (dict(bits=1), ValueError, "bits"),
    (dict(bits=17), ValueError, "bits must be an integer from 2 to 16"),
    (dict(bits=8.0), TypeError, "bits"),
])
def test_quantize_keys_absmax_rejects_bad_input(kwargs: dict, exc: type, match: str) -> None:
    args = dict(keys=torch.ones(4, 8))
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        quantize_keys_absmax(**args)


def test_audit_tells_a_jump_read_as_boundary_from_a_masked_pose_row() -> None:
    """PoSE's ids jump on purpose. With no mask and no cache, eager and SDPA split the row at the
    jump (the tiny Llama's logits after it move); with an all-ones mask the row stays one causal
    document (equal to the 4-D causal mask). The audit gives the first a code of its own that asks
    for a mask, and passes the second once the jump is declared (mutations: the old single
    verdict for both, or a split reported under a mask)."""
    model = _tiny_model("llama")
    row, pose = torch.arange(20, 28)[None], torch.tensor([[0, 1, 2, 3, 9, 10, 11, 12]])
    ones, causal = torch.ones_like(row), packed_causal_mask([8], dtype=torch.float32)[None, None]
    with torch.no_grad():
        one_document = model(row, position_ids=pose, attention_mask=causal).logits[0]
        split = model(row, position_ids=pose, use_cache=False).logits[0]
        masked = model(row, position_ids=pose, attention_mask=ones, use_cache=False).logits[0]
    assert (split - one_document).abs().max() > 0.1
    assert (masked - one_document).abs().max() < 1e-5
    for encoding in ("rope", None, "absolute"):
        trap = audit_positions(row, None, pose, use_cache=False, encoding=encoding)
        assert [(i.code, i.rows) for i in trap] == [("jump-read-as-boundary", (0,))], encoding
        assert "pass an attention mask" in trap[0].message
        assert audit_positions(row, None, pose, use_cache=False, encoding=encoding,
                               jumps_intended=True)[0].code == "jump-read-as-boundary"
    for mask in (ones, causal):
        for encoding in ("rope", None):
            assert audit_positions(row, mask, pose, use_cache=False, encoding=encoding,
                                   jumps_intended=True) == []
            # undeclared, the jump stretches the text's distances: a disagreement, no split
            issues = audit_positions(row, mask, pose, use_cache=False, encoding=encoding)
            assert _codes(issues) == {"ids-disagree-with-mask"}
            assert "jumps_intended=True" in issues[0].message and "split" not in issues[0].message
    # FlashAttention splits only where the ids restart, not on a jump
    assert audit_positions(row, None, pose, use_cache=False, encoding="rope", jumps_intended=True,
                           attn_implementation="flash_attention_2") == []


def test_audit_training_forward_accepts_right_padding() -> None:
    """The standard collator pads on the right; a training forward over it without ids is exact
    (the tiny Llama and GPT-2 give the unpadded row's logits on its real tokens), so
    training=True does not flag it. Left padding under an absolute table stays flagged, and
    training=True refuses a cache or generate (mutation: training=True silencing every row)."""
    import transformers

    ids = torch.tensor([[5, 6, 7, 8, 9], [5, 6, 7, 0, 0]])
    right = torch.tensor([[1] * 5, [1, 1, 1, 0, 0]])
    left_ids = torch.tensor([[5, 6, 7, 8, 9], [0, 0, 5, 6, 7]])
    left = torch.tensor([[1] * 5, [0, 0, 1, 1, 1]])
    gpt2 = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=64, n_embd=32, n_layer=2, n_head=4, n_positions=64,
        initializer_range=0.2)).eval()
    with torch.no_grad():
        for model in (_tiny_model("llama"), gpt2):
            padded = model(ids, attention_mask=right, use_cache=False).logits[1, :3]
            alone = model(ids[1:, :3], use_cache=False).logits[0]
            assert (padded - alone).abs().max() < 1e-5
    for encoding in ("rope", "absolute", None):
        assert _codes(audit_positions(ids, right, use_cache=False, encoding=encoding)) == {
            "padding-without-ids"}
        assert audit_positions(ids, right, use_cache=False, encoding=encoding,
                               training=True) == []
    flagged = audit_positions(left_ids, left, use_cache=False, encoding="absolute", training=True)
    assert [(i.code, i.rows) for i in flagged] == [("padding-without-ids", (1,))]
    for bad in (dict(generate=True), dict(cache_length=3)):
        with pytest.raises(ValueError, match="training=True"):
            audit_positions(ids[:, :1], None, training=True, **bad)
    with pytest.raises(TypeError, match="jumps_intended must be a bool"):
        audit_positions(ids, right, jumps_intended=1)
