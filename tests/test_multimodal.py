"""posenc_lib.multimodal against the real code: MAE, the Qwen-VL models, Pixtral and Gemma 4.

Every reference is transformers 5.25's own class or function, built from a tiny config on the CPU
(no hub download). transformers computes angles in float32, so comparisons use float32-level
tolerances; ours are float64.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import posenc_lib as P
from posenc_lib.multimodal import (
    apply_mrope,
    apply_rope_2d,
    axial_rope_frequencies,
    hf_rope_index_ids,
    mrope_axis_map,
    mrope_axis_string,
    mrope_cos_sin,
    mrope_position_ids,
    mrope_position_ids_batch,
    patch_grid_positions,
    rope_mixed_frequencies,
    sincos_2d_table,
)

TEXT = dict(hidden_size=32, num_attention_heads=2, num_key_value_heads=1, num_hidden_layers=1,
            intermediate_size=16, vocab_size=64, head_dim=16, bos_token_id=None,
            eos_token_id=None)


# --- 2-D sin-cos ---------------------------------------------------------------------------------


def _mae_reference(embed_dim: int, grid_size: int, cls_token: bool) -> np.ndarray:
    """MAE's util/pos_embed.py ``get_2d_sincos_pos_embed`` (facebookresearch/mae), in NumPy."""

    def one_d(d: int, pos: np.ndarray) -> np.ndarray:
        omega = np.arange(d // 2, dtype=np.float64) / (d / 2.0)
        omega = 1.0 / 10000**omega
        out = np.einsum("m,d->md", pos.reshape(-1), omega)
        return np.concatenate([np.sin(out), np.cos(out)], axis=1)

    grid_h = np.arange(grid_size, dtype=np.float32)
    grid_w = np.arange(grid_size, dtype=np.float32)
    grid = np.stack(np.meshgrid(grid_w, grid_h), axis=0).reshape([2, 1, grid_size, grid_size])
    emb = np.concatenate([one_d(embed_dim // 2, grid[0]), one_d(embed_dim // 2, grid[1])], axis=1)
    if cls_token:
        emb = np.concatenate([np.zeros([1, embed_dim]), emb], axis=0)
    return emb


@pytest.mark.parametrize(("dim", "grid"), [(16, 4), (64, 7), (8, 1)])
def test_sincos_2d_equals_the_mae_reference_formula(dim: int, grid: int) -> None:
    ours = sincos_2d_table(grid, grid, dim, cls_token=True, dtype=torch.float64)
    np.testing.assert_allclose(ours.numpy(), _mae_reference(dim, grid, True), rtol=0, atol=1e-12)


def test_sincos_2d_equals_vit_mae_initialisation_and_its_column_first_quirk() -> None:
    from transformers import ViTMAEConfig
    from transformers.models.vit_mae.modeling_vit_mae import (
        ViTMAEEmbeddings,
        build_2d_sinusoidal_position_embedding,
    )

    config = ViTMAEConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                          intermediate_size=16, image_size=24, patch_size=6)
    embeddings = ViTMAEEmbeddings(config)
    embeddings.initialize_weights()  # what ViTMAE's _init_weights runs: the fixed sin-cos table
    table = embeddings.position_embeddings[0].detach()
    ours = sincos_2d_table(4, 4, 32, cls_token=True)
    torch.testing.assert_close(table, ours, atol=1e-6, rtol=0)
    # transformers' canonical builder puts the row first: our column_first=False, on a rectangle.
    hf = build_2d_sinusoidal_position_embedding(3, 5, 16, dtype=torch.float64)
    torch.testing.assert_close(hf, sincos_2d_table(3, 5, 16, column_first=False,
                                                   dtype=torch.float64), atol=1e-12, rtol=0)
    assert not torch.allclose(hf, sincos_2d_table(3, 5, 16, dtype=torch.float64))


def test_sincos_2d_dot_product_depends_only_on_the_grid_offset() -> None:
    table = sincos_2d_table(9, 9, 32, dtype=torch.float64).reshape(9, 9, 32)
    a = (table[1, 2] * table[4, 7]).sum()
    b = (table[3, 0] * table[6, 5]).sum()
    torch.testing.assert_close(a, b, atol=1e-12, rtol=0)


# --- 2-D RoPE against the vision towers ----------------------------------------------------------


@pytest.mark.parametrize("merge", [1, 2])
def test_patch_grid_positions_equal_the_vision_towers_order(merge: int) -> None:
    from transformers.vision_utils import get_vision_position_ids

    grid = torch.tensor([[2, 4, 6]])
    hf = get_vision_position_ids(grid, merge)
    rows, cols = patch_grid_positions(4, 6, merge)
    assert torch.equal(hf[: 24, 0].double(), rows) and torch.equal(hf[: 24, 1].double(), cols)
    assert torch.equal(hf[24:], hf[:24])  # the second frame repeats the first frame's grid


def _rows_cols(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return (torch.randint(0, 40, (n,), generator=gen), torch.randint(0, 40, (n,), generator=gen))


def test_blocks_layout_equals_qwen2_vl_and_qwen3_vl_vision_rope() -> None:
    from transformers import Qwen2VLConfig, Qwen3VLConfig
    from transformers.models.qwen2_vl.modeling_qwen2_vl import (
        Qwen2VLVisionRotaryEmbedding,
        apply_rotary_pos_emb_vision,
    )
    from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLVisionRotaryEmbedding

    configs = [
        (Qwen2VLVisionRotaryEmbedding,
         Qwen2VLConfig(vision_config=dict(embed_dim=64, num_heads=2, depth=1)).vision_config, 32),
        (Qwen3VLVisionRotaryEmbedding,
         Qwen3VLConfig(vision_config=dict(hidden_size=96, num_heads=2, depth=1)).vision_config,
         48),
    ]
    for cls, config, head_dim in configs:
        layer = cls(config)
        rows, cols = _rows_cols(30, head_dim)
        pos = torch.stack((rows, cols), dim=-1)
        q, k = torch.randn(2, 30, 2, head_dim, generator=torch.Generator().manual_seed(1))
        cos, sin = layer(q, pos)
        hf_q, hf_k = apply_rotary_pos_emb_vision(q, k, cos, sin)
        # ours: (..., seq, dim); theirs: (seq, heads, dim)
        base = config.rope_parameters["rope_theta"]
        ours = apply_rope_2d(q.transpose(0, 1), rows, cols, base=base).transpose(0, 1)
        torch.testing.assert_close(ours, hf_q, atol=2e-5, rtol=0)
        # the other layouts are different rotations
        other = apply_rope_2d(q.transpose(0, 1), rows, cols, base=base, layout="alternating")
        assert (other.transpose(0, 1) - hf_q).abs().max() > 0.1
        assert hf_k.shape == k.shape


def test_alternating_layout_equals_pixtral() -> None:
    from transformers import PixtralVisionConfig
    from transformers.models.pixtral.modeling_pixtral import (
        PixtralVisionRotaryEmbedding,
        apply_rotary_pos_emb,
    )

    config = PixtralVisionConfig(hidden_size=64, num_attention_heads=2, head_dim=32,
                                 num_hidden_layers=1, intermediate_size=16)
    layer = PixtralVisionRotaryEmbedding(config)
    rows, cols = _rows_cols(25, 3)
    q, k = torch.randn(2, 1, 2, 25, 32, generator=torch.Generator().manual_seed(2))
    cos, sin = layer(q, torch.stack((rows, cols), dim=-1))
    hf_q, _ = apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=0)
    base = config.rope_parameters["rope_theta"]
    ours = apply_rope_2d(q, rows, cols, base=base, layout="alternating")
    torch.testing.assert_close(ours, hf_q, atol=2e-5, rtol=0)
    assert (apply_rope_2d(q, rows, cols, base=base) - hf_q).abs().max() > 0.1


def test_split_layout_equals_gemma4_vision() -> None:
    from transformers import Gemma4VisionConfig
    from transformers.models.gemma4.modeling_gemma4 import (
        Gemma4VisionRotaryEmbedding,
        apply_multidimensional_rope,
    )

    config = Gemma4VisionConfig(hidden_size=64, num_attention_heads=2, head_dim=32,
                                num_hidden_layers=1, intermediate_size=16)
    from transformers.models.gemma4.image_processing_pil_gemma4 import Gemma4ImageProcessorPil

    layer = Gemma4VisionRotaryEmbedding(config)
    # The ids Gemma 4's own image processor gives a tall image (resized to its patch budget):
    # (x, y), the column first.
    processed = Gemma4ImageProcessorPil()(images=[np.zeros((96, 64, 3), dtype=np.uint8)],
                                          return_tensors="np")
    ids = torch.as_tensor(processed["image_position_ids"][0])
    ids = ids[(ids >= 0).all(-1)]                        # drop the padding patches (-1, -1)
    assert ids[:4].tolist() == [[0, 0], [1, 0], [2, 0], [3, 0]]       # x moves first
    assert int(ids[:, 1].max()) > int(ids[:, 0].max()) > 0              # taller than wide
    cols, rows = ids[:, 0].double(), ids[:, 1].double()
    pos = ids[None]                                      # (batch, seq, 2)
    x = torch.randn(1, len(ids), 2, 32, generator=torch.Generator().manual_seed(5))
    cos, sin = layer(x, pos)
    hf = apply_multidimensional_rope(x, cos, sin, pos)
    base = config.rope_parameters["rope_theta"]  # 100 for Gemma 4's vision tower
    ours = apply_rope_2d(x.transpose(1, 2), cols, rows, base=base, layout="split").transpose(1, 2)
    torch.testing.assert_close(ours, hf, atol=2e-5, rtol=0)
    # mutations caught: the row first, or the blocks layout
    row_first = apply_rope_2d(x.transpose(1, 2), rows, cols, base=base, layout="split")
    assert (row_first.transpose(1, 2) - hf).abs().max() > 0.1
    blocks = apply_rope_2d(x.transpose(1, 2), cols, rows, base=base).transpose(1, 2)
    assert (blocks - hf).abs().max() > 0.1


def test_interleaved_pairing_equals_sam2_video() -> None:
    """pairing="interleaved" with "blocks" is Sam2VideoVisionRotaryEmbedding (released config:
    head 256, base 1e4); its forward takes position ids as (seq, 2) despite its "(2, N)" comment."""
    from transformers import Sam2VideoConfig
    from transformers.models.sam2_video.modeling_sam2_video import (
        Sam2VideoVisionRotaryEmbedding,
        apply_rotary_pos_emb_2d,
    )

    config = Sam2VideoConfig()
    dim = config.memory_attention_hidden_size // (
        config.memory_attention_downsample_rate * config.memory_attention_num_attention_heads)
    assert dim == 256
    rows, cols = patch_grid_positions(4, 6)
    x = torch.randn(1, 1, 24, dim, generator=torch.Generator().manual_seed(3))
    cos, sin = Sam2VideoVisionRotaryEmbedding(config)(x, torch.stack((rows, cols), dim=-1))
    hf, _ = apply_rotary_pos_emb_2d(x, x, cos, sin)
    base = config.rope_parameters["rope_theta"]
    ours = apply_rope_2d(x, rows, cols, base=base, pairing="interleaved")
    torch.testing.assert_close(ours, hf, atol=2e-5, rtol=0)
    for layout in ("blocks", "alternating", "split"):
        assert (apply_rope_2d(x, rows, cols, base=base, layout=layout) - hf).abs().max() > 1.0
    with pytest.raises(ValueError, match="pairing"):
        apply_rope_2d(x, rows, cols, pairing="pairs")


@given(
    layout=st.sampled_from(["blocks", "alternating", "split", "mixed"]),
    r=st.integers(0, 50), c=st.integers(0, 50), dr=st.integers(-20, 20), dc=st.integers(-20, 20),
    shift_r=st.integers(-30, 30), shift_c=st.integers(-30, 30), seed=st.integers(0, 2**16),
    pairing=st.sampled_from(["half", "interleaved"]),
)
def test_2d_rope_score_depends_only_on_the_offset(
    layout: str, r: int, c: int, dr: int, dc: int, shift_r: int, shift_c: int, seed: int,
    pairing: str,
) -> None:
    gen = torch.Generator().manual_seed(seed)
    q, k = torch.randn(2, 1, 16, dtype=torch.float64, generator=gen)
    kwargs: dict = {"layout": "blocks" if layout == "mixed" else layout, "pairing": pairing}
    if layout == "mixed":
        kwargs["frequencies"] = rope_mixed_frequencies(16, seed=seed)

    def score(rq: int, cq: int, rk: int, ck: int) -> torch.Tensor:
        qr = apply_rope_2d(q, torch.tensor([rq]), torch.tensor([cq]), **kwargs)
        kr = apply_rope_2d(k, torch.tensor([rk]), torch.tensor([ck]), **kwargs)
        return (qr * kr).sum()

    torch.testing.assert_close(
        score(r, c, r + dr, c + dc),
        score(r + shift_r, c + shift_c, r + dr + shift_r, c + dc + shift_c),
        atol=1e-9, rtol=0,
    )


def test_axial_pairs_see_one_axis_and_mixed_pairs_see_both() -> None:
    for layout in ("blocks", "alternating", "split"):
        fr, fc = axial_rope_frequencies(32, layout=layout)
        assert torch.all((fr == 0) != (fc == 0))
    fr, fc = rope_mixed_frequencies(32, seed=3)
    assert torch.all(fr != 0) and torch.all(fc != 0)
    mag = torch.hypot(fr, fc)
    torch.testing.assert_close(mag[:8], P.rope_inv_freq(16, 10.0), atol=1e-15, rtol=0)
    torch.testing.assert_close(mag[8:], mag[:8], atol=1e-15, rtol=0)


# --- M-RoPE against Qwen2-VL and Qwen3-VL ---------------------------------------------------------


def test_axis_maps_recovered_from_the_real_rotary_classes() -> None:
    """Feed each axis a distinct position: the angle of pair i tells which id it read."""
    from transformers import Qwen2VLConfig, Qwen3VLConfig
    from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLRotaryEmbedding
    from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLTextRotaryEmbedding

    def recover(layer: torch.nn.Module, dim: int) -> str:
        # t = 1, h = 2, w = 3: every angle p·θ_i is below π, so atan2 gives it back exactly
        cos, sin = layer(torch.zeros(1), torch.tensor([1, 2, 3]).view(3, 1, 1))
        angle = torch.atan2(sin[0, 0, : dim // 2].double(), cos[0, 0, : dim // 2].double())
        read = torch.round(angle / layer.inv_freq.double()).long()
        return "".join("thw"[int(p) - 1] for p in read)

    q2 = Qwen2VLConfig(text_config={**TEXT, "rope_parameters": {
        "rope_type": "default", "rope_theta": 1e6, "mrope_section": [2, 3, 3]}}).text_config
    q3 = Qwen3VLConfig(text_config={**TEXT, "rope_parameters": {
        "rope_type": "default", "rope_theta": 5e6, "mrope_section": [4, 2, 2]}}).text_config
    assert recover(Qwen2VLRotaryEmbedding(q2), 16) == mrope_axis_string([2, 3, 3]) == "tthhhwww"
    assert recover(Qwen3VLTextRotaryEmbedding(q3), 16) == mrope_axis_string(
        [4, 2, 2], interleaved=True) == "thwthwtt"


@pytest.mark.parametrize("model", ["qwen2_vl", "qwen3_vl"])
def test_mrope_equals_the_qwen_rotary_class_and_attention_rotation(model: str) -> None:
    from transformers import Qwen2VLConfig, Qwen3VLConfig
    from transformers.models.qwen2_vl.modeling_qwen2_vl import (
        Qwen2VLRotaryEmbedding,
        apply_rotary_pos_emb,
    )
    from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLTextRotaryEmbedding

    head_dim, section, theta = (16, [2, 3, 3], 1e6) if model == "qwen2_vl" else (32, [6, 5, 5], 5e6)
    text = {**TEXT, "head_dim": head_dim, "rope_parameters": {
        "rope_type": "default", "rope_theta": theta, "mrope_section": section}}
    if model == "qwen2_vl":
        layer = Qwen2VLRotaryEmbedding(Qwen2VLConfig(text_config=text).text_config)
    else:
        layer = Qwen3VLTextRotaryEmbedding(Qwen3VLConfig(text_config=text).text_config)
    interleaved = model == "qwen3_vl"
    gen = torch.Generator().manual_seed(7)
    pos = torch.randint(0, 300, (3, 1, 40), generator=gen)
    q, k = torch.randn(2, 1, 2, 40, head_dim, generator=gen)
    cos, sin = layer(q, pos)
    inv = P.rope_inv_freq(head_dim, theta)
    our_cos, our_sin = mrope_cos_sin(pos[:, 0], inv, section, interleaved=interleaved)
    torch.testing.assert_close(our_cos, cos[0], atol=1e-4, rtol=0)
    torch.testing.assert_close(our_sin, sin[0], atol=1e-4, rtol=0)
    hf_q, hf_k = apply_rotary_pos_emb(q, k, cos, sin)
    torch.testing.assert_close(apply_mrope(q, pos[:, 0], section, base=theta,
                                           interleaved=interleaved), hf_q, atol=1e-4, rtol=0)
    torch.testing.assert_close(apply_mrope(k, pos[:, 0], section, base=theta,
                                           interleaved=interleaved), hf_k, atol=1e-4, rtol=0)
    # 1-D RoPE on the time ids, and (for Qwen3-VL) contiguous sections, differ on these positions
    wrong = [P.apply_rope_half(q, pos[0, 0], base=theta)]
    if interleaved:
        wrong.append(apply_mrope(q, pos[:, 0], section, base=theta))
    assert all((w - hf_q).abs().max() > 0.1 for w in wrong)


def test_partial_interleaved_mrope_equals_qwen3_5() -> None:
    """Qwen3.5: MRoPE-I [11, 11, 10] on the first quarter of a 256-feature head, rest unrotated."""
    from transformers import Qwen3_5TextConfig
    from transformers.models.qwen3_5.modeling_qwen3_5 import (
        Qwen3_5TextRotaryEmbedding,
        apply_rotary_pos_emb,
    )

    config = Qwen3_5TextConfig()  # head_dim 256, partial_rotary_factor 0.25, θ 1e4
    layer = Qwen3_5TextRotaryEmbedding(config)
    rotary_dim = P.partial_rotary_dim(config.head_dim,
                                      config.rope_parameters["partial_rotary_factor"])
    assert rotary_dim == 64 and list(layer.mrope_section) == [11, 11, 10]
    gen = torch.Generator().manual_seed(9)
    pos = torch.randint(0, 500, (3, 1, 20), generator=gen)
    q, k = torch.randn(2, 1, 2, 20, config.head_dim, generator=gen)
    cos, sin = layer(q, pos)
    hf_q, _ = apply_rotary_pos_emb(q, k, cos, sin)
    ours = torch.cat((apply_mrope(q[..., :rotary_dim], pos[:, 0], [11, 11, 10], base=1e4,
                                  interleaved=True), q[..., rotary_dim:]), dim=-1)
    torch.testing.assert_close(ours, hf_q, atol=1e-4, rtol=0)


@given(
    section=st.tuples(st.integers(1, 8), st.integers(0, 8), st.integers(0, 8)).filter(
        lambda s: 3 * s[1] - 1 <= sum(s) and 3 * s[2] <= sum(s)),
    interleaved=st.booleans(), start=st.integers(0, 10_000), seed=st.integers(0, 2**16),
)
def test_text_only_mrope_is_1d_rope(
    section: tuple[int, int, int], interleaved: bool, start: int, seed: int
) -> None:
    dim = 2 * sum(section)
    x = torch.randn(3, 5, dim, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    positions = torch.arange(start, start + 5)
    ids = positions.expand(3, -1)
    torch.testing.assert_close(
        apply_mrope(x, ids, list(section), base=1e6, interleaved=interleaved),
        P.apply_rope_half(x, positions, base=1e6), atol=1e-12, rtol=0)


@given(section=st.tuples(st.integers(0, 12), st.integers(0, 12), st.integers(0, 12)).filter(
    lambda s: sum(s) > 0))
def test_axis_map_counts_equal_the_section(section: tuple[int, int, int]) -> None:
    axis = mrope_axis_map(list(section))
    assert [int((axis == a).sum()) for a in range(3)] == list(section)
    assert torch.all(axis.diff() >= 0)  # contiguous blocks t, h, w
    if 3 * section[1] - 1 <= sum(section) and 3 * section[2] <= sum(section):
        inter = mrope_axis_map(list(section), interleaved=True)
        assert [int((inter == a).sum()) for a in range(3)] == list(section)
    else:
        with pytest.raises(ValueError, match="cannot be interleaved"):
            mrope_axis_map(list(section), interleaved=True)


# --- position ids against get_rope_index ---------------------------------------------------------


def _model(name: str) -> torch.nn.Module:
    from transformers import Qwen2_5_VLConfig, Qwen2VLConfig, Qwen3VLConfig
    from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import Qwen2_5_VLModel
    from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLModel
    from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLModel

    text = {**TEXT, "rope_parameters": {"rope_type": "default", "rope_theta": 1e6,
                                        "mrope_section": [2, 3, 3]}}
    vision = dict(depth=1, hidden_size=32, num_heads=2, intermediate_size=16,
                  out_hidden_size=32, spatial_merge_size=2, embed_dim=16)
    torch.manual_seed(0)
    if name == "qwen2_vl":
        return Qwen2VLModel(Qwen2VLConfig(text_config=text, vision_config=vision))
    if name == "qwen2_5_vl":
        return Qwen2_5_VLModel(Qwen2_5_VLConfig(
            text_config=text, vision_config={**vision, "tokens_per_second": 2}))
    return Qwen3VLModel(Qwen3VLConfig(text_config=text, vision_config=vision))


def _tokens(segments: list[tuple]) -> tuple[torch.Tensor, torch.Tensor]:
    types = []
    for seg in segments:
        if seg[0] == "text":
            types += [0] * seg[1]
        else:
            types += [1 if seg[0] == "image" else 2] * (seg[1] * (seg[2] // 2) * (seg[3] // 2))
    types_t = torch.tensor([types])
    return torch.randint(0, 64, types_t.shape), types_t


SEQUENCES = [
    [("text", 3), ("image", 1, 4, 6), ("text", 2)],
    [("image", 1, 8, 2), ("text", 1), ("image", 1, 2, 2), ("text", 4)],
    [("text", 2), ("video", 3, 4, 4), ("text", 3)],
    [("text", 5), ("video", 2, 6, 2), ("text", 1), ("image", 1, 2, 10)],
]


def _get_rope_index(model, segments: list[tuple]) -> tuple[torch.Tensor, torch.Tensor]:
    """transformers' own get_rope_index on the segments' tokens, types and grids."""
    input_ids, types = _tokens(segments)
    images = [s[1:4] for s in segments if s[0] == "image"] or None
    videos = [s[1:4] for s in segments if s[0] == "video"] or None
    return model.get_rope_index(
        input_ids, types, torch.tensor(images) if images else None,
        torch.tensor(videos) if videos else None)


@pytest.mark.parametrize("segments", SEQUENCES, ids=range(len(SEQUENCES)))
def test_position_ids_equal_qwen2_vl_get_rope_index(segments: list[tuple]) -> None:
    hf, delta = _get_rope_index(_model("qwen2_vl"), segments)
    ours, our_delta = mrope_position_ids(segments, resume="grid")
    assert torch.equal(ours, hf[:, 0]) and our_delta == int(delta)


@pytest.mark.parametrize("segments", SEQUENCES, ids=range(len(SEQUENCES)))
def test_hf_rope_index_ids_is_get_rope_index_on_the_segments(segments: list[tuple]) -> None:
    # The helper builds the token types and grids itself; here they are built by _tokens and
    # the grid lists above, and the real get_rope_index is called directly.
    model = _model("qwen2_vl")
    hf, delta = _get_rope_index(model, segments)
    ids, ours_delta = hf_rope_index_ids(model, segments)
    assert ids.shape == (3, hf.shape[-1]) and torch.equal(ids, hf[:, 0])
    assert ours_delta == int(delta)


def test_hf_rope_index_ids_passes_the_video_seconds_on() -> None:
    model = _model("qwen2_5_vl")  # tokens_per_second 2
    segments = [("text", 2), ("video", 3, 4, 4), ("text", 2)]
    slow, _ = hf_rope_index_ids(model, segments, second_per_grid_ts=torch.tensor([2.0]))
    fast, _ = hf_rope_index_ids(model, segments, second_per_grid_ts=torch.tensor([0.5]))
    assert slow[0, 2:14:4].tolist() == [2, 6, 10]  # δ_t = 2 · 2 s = 4
    assert fast[0, 2:14:4].tolist() == [2, 3, 4]  # δ_t = 2 · 0.5 s = 1
    ours, _ = mrope_position_ids([("text", 2), ("video", 3, 4, 4, 4.0), ("text", 2)],
                                 resume="grid")
    assert torch.equal(slow, ours)


def test_hf_rope_index_ids_refuses_bad_inputs() -> None:
    with pytest.raises(TypeError, match="get_rope_index"):
        hf_rope_index_ids(object(), [("text", 2)])
    model = _model("qwen2_vl")
    with pytest.raises(ValueError):
        hf_rope_index_ids(model, [("audio", 2)])
    with pytest.raises((TypeError, ValueError), match="spatial_merge_size"):
        hf_rope_index_ids(model, [("text", 2)], spatial_merge_size=0)


def test_position_ids_equal_qwen2_5_vl_with_video_time_spacing() -> None:
    model = _model("qwen2_5_vl")
    seconds = [0.5, 2.0]  # seconds per temporal grid step; tokens_per_second = 2
    segments = [("text", 2), ("video", 3, 4, 4), ("text", 1), ("video", 4, 2, 2), ("text", 2)]
    input_ids, types = _tokens(segments)
    hf, delta = model.get_rope_index(input_ids, types, None, torch.tensor([[3, 4, 4], [4, 2, 2]]),
                                     second_per_grid_ts=torch.tensor(seconds))
    ours, our_delta = mrope_position_ids([
        ("text", 2), ("video", 3, 4, 4, 2 * seconds[0]), ("text", 1),
        ("video", 4, 2, 2, 2 * seconds[1]), ("text", 2)], resume="grid")
    assert torch.equal(ours, hf[:, 0]) and our_delta == int(delta)
    assert ours[0, 2:6].tolist() == [2, 2, 2, 2] and ours[0, 10:14].tolist() == [4] * 4


def test_position_ids_equal_qwen3_vl_with_timestamped_frames() -> None:
    model = _model("qwen3_vl")
    # Qwen3-VL splits a video into frames separated by timestamp text: <t0> frame <t1> frame …
    segments = [("text", 2), ("video", 1, 4, 4), ("text", 3), ("video", 1, 4, 4), ("text", 3),
                ("video", 1, 4, 4), ("text", 1), ("image", 1, 2, 6), ("text", 2)]
    input_ids, types = _tokens(segments)
    hf, delta = model.get_rope_index(input_ids, types, torch.tensor([[1, 2, 6]]),
                                     torch.tensor([[3, 4, 4]]))
    ours, our_delta = mrope_position_ids(segments, resume="grid")
    # single frames: the two resume rules agree, so the released rule gives the same ids
    assert torch.equal(ours, mrope_position_ids(segments)[0])
    assert torch.equal(ours, hf[:, 0]) and our_delta == int(delta)


def test_text_after_an_image_resumes_at_max_h_w_over_merge() -> None:
    ids, delta = mrope_position_ids([("text", 3), ("image", 1, 4, 12), ("text", 2)])
    assert ids.shape == (3, 3 + 12 + 2)
    assert ids[:, 15].tolist() == [3 + 6] * 3  # max(4, 12) / 2 = 6 after the image's start 3
    assert delta == 3 + 6 + 2 - 17


def _get_rope_index_4x(segments: list[tuple]) -> tuple[torch.Tensor, int]:
    """transformers 4.x's Qwen2.5-VL get_rope_index loop (merge 2), transcribed, with its
    "normalize type" cast of the seconds to the int64 dtype of ``arange``."""
    llm_pos_ids_list: list[torch.Tensor] = []
    for seg in segments:
        st_idx = llm_pos_ids_list[-1].max() + 1 if llm_pos_ids_list else 0
        if seg[0] == "text":
            llm_pos_ids_list.append(torch.arange(seg[1]).view(1, -1).expand(3, -1) + st_idx)
            continue
        t, gh, gw = seg[1], seg[2] // 2, seg[3] // 2
        expanded_range = torch.arange(t).view(-1, 1).expand(-1, gh * gw)
        if len(seg) == 6:  # ("video", t, h, w, tokens_per_second, seconds_per_grid)
            second_per_grid_t = torch.as_tensor(torch.tensor(seg[5], dtype=torch.float32),
                                                dtype=expanded_range.dtype)
            t_index = (expanded_range * second_per_grid_t * seg[4]).long().flatten()
        else:
            interval = seg[4] if len(seg) == 5 else 1
            t_index = (expanded_range * interval).long().flatten()
        h_index = torch.arange(gh).view(1, -1, 1).expand(t, -1, gw).flatten()
        w_index = torch.arange(gw).view(1, 1, -1).expand(t, gh, -1).flatten()
        llm_pos_ids_list.append(torch.stack([t_index, h_index, w_index]) + st_idx)
    ids = torch.cat(llm_pos_ids_list, dim=1)
    return ids, int(ids.max()) + 1 - ids.shape[1]


@pytest.mark.parametrize("segments", [
    *SEQUENCES,
    [("text", 2), ("video", 3, 4, 4, 4.0), ("text", 1), ("video", 4, 2, 2, 1.0), ("text", 2)],
    [("video", 5, 2, 6, 0.5), ("text", 3)],
], ids=range(len(SEQUENCES) + 2))
def test_resume_max_equals_the_transformers_4x_loop(segments: list[tuple]) -> None:
    ours, delta = mrope_position_ids(segments, resume="max")
    old, old_delta = _get_rope_index_4x(segments)
    assert torch.equal(ours, old) and delta == old_delta


@given(t=st.integers(1, 6), fps=st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 25.0]),
       tokens_per_second=st.sampled_from([1, 2, 25]), n=st.integers(1, 3))
def test_seconds_cast_int_equals_the_4x_loop_at_fractional_seconds(
        t: int, fps: float, tokens_per_second: int, n: int) -> None:
    seconds = 2 / fps  # temporal_patch_size 2
    segments = [("text", n), ("video", t, 4, 4, tokens_per_second, seconds), ("text", 2)]
    ours, delta = mrope_position_ids(segments, seconds_cast="int")
    old, old_delta = _get_rope_index_4x(segments)
    assert torch.equal(ours, old) and delta == old_delta
    # below one second per patch every temporal patch shares one time id
    assert (ours[0, n:n + 4 * t].unique().numel() == 1) == (seconds < 1 or t == 1)


def test_seconds_cast_at_4_fps_collapses_the_time_ids() -> None:
    """PR #48669's example: 0.5 s per patch, 2 tokens per second, four temporal patches."""
    segments = [("text", 1), ("video", 4, 2, 2, 2, 0.5), ("text", 1)]
    assert mrope_position_ids(segments)[0][0].tolist() == [0, 1, 2, 3, 4, 5]
    assert mrope_position_ids(segments, seconds_cast="int")[0][0].tolist() == [0, 1, 1, 1, 1, 2]


@given(t=st.integers(1, 30), fps=st.sampled_from([0.5, 1.0, 2.0, 4.0, 25.0, 29.97, 50.0]),
       tokens_per_second=st.sampled_from([1, 2, 5, 25]))
def test_seconds_cast_seconds_first_equals_the_4_49_product(
        t: int, fps: float, tokens_per_second: int) -> None:
    """transformers 4.49-4.51: ``expanded_range * second_per_grid_t * tokens_per_second`` with a
    float32 ``second_per_grid_t`` (the processor's tensor), then ``.long()``."""
    seconds = torch.tensor([2 / fps], dtype=torch.float32)[0]
    segments = [("text", 1), ("video", t, 2, 2, tokens_per_second, seconds), ("text", 1)]
    ours = mrope_position_ids(segments, seconds_cast="float32_seconds_first")[0][0, 1:1 + t]
    expanded_range = torch.arange(t).view(-1, 1).expand(-1, 1)
    time_tensor = expanded_range * seconds * tokens_per_second
    assert torch.equal(ours - 1, time_tensor.long().flatten())


def test_seconds_first_and_float32_part_by_rounding() -> None:
    """At 25 fps and 25 tokens per second patch 5 lasts 5 · 0.08 s = 0.4 s: exactly time 10.
    4.49's order rounds 5 · 0.08 in float32 first and truncates 9.99… to 9; 5.18+ gives 10."""
    seconds = torch.tensor([2 / 25], dtype=torch.float32)[0]
    segments = [("text", 1), ("video", 6, 2, 2, 25, seconds), ("text", 1)]
    first = mrope_position_ids(segments, seconds_cast="float32_seconds_first")[0][0, 1:7] - 1
    later = mrope_position_ids(segments)[0][0, 1:7] - 1
    assert first.tolist() == [0, 2, 4, 6, 8, 9] and later.tolist() == [0, 2, 4, 6, 8, 10]


def test_resume_rules_agree_on_images_and_part_on_long_videos() -> None:
    images = [("text", 3), ("image", 1, 4, 12), ("text", 1), ("image", 1, 6, 2), ("text", 2)]
    assert torch.equal(mrope_position_ids(images, resume="grid")[0], mrope_position_ids(images)[0])
    # last time id ⌊(t−1)·τ⌋ = 8 >= max(h, w)/m = 2: 5.25 resumes at 2 + 2, 4.x at 2 + 8 + 1
    video = [("text", 2), ("video", 3, 4, 4, 4.0), ("text", 2)]
    assert mrope_position_ids(video, resume="grid")[0][:, -2].tolist() == [4] * 3
    assert mrope_position_ids(video)[0][:, -2].tolist() == [11] * 3  # the default: 4.x, trained
    # ⌊(t−1)·τ⌋ = 1 < max(h, w)/m = 2: the rules agree
    short = [("text", 2), ("video", 2, 4, 4), ("text", 2)]
    assert torch.equal(mrope_position_ids(short, resume="grid")[0], mrope_position_ids(short)[0])


@given(t=st.integers(1, 6), tau=st.sampled_from([0.5, 1.0, 2.0, 4.0, 25.0]),
       h=st.integers(1, 5), w=st.integers(1, 5), n=st.integers(0, 3))
def test_resume_rules_part_exactly_when_the_last_time_id_reaches_the_grid(
        t: int, tau: float, h: int, w: int, n: int) -> None:
    segments = [("text", n), ("video", t, 2 * h, 2 * w, tau), ("text", 1)]
    new, _ = mrope_position_ids(segments, resume="grid")
    old, _ = mrope_position_ids(segments, resume="max")
    assert new[0, -1] == n + max(h, w)
    assert old[0, -1] == n + max(int((t - 1) * tau), h - 1, w - 1) + 1
    assert (new[0, -1] != old[0, -1]) == (int((t - 1) * tau) >= max(h, w))


def test_interleaved_section_transformers_would_silently_change_is_refused() -> None:
    from transformers import Qwen3VLConfig
    from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLTextRotaryEmbedding

    config = Qwen3VLConfig().text_config
    config.rope_parameters["mrope_section"] = [20, 22, 22]
    layer = Qwen3VLTextRotaryEmbedding(config)
    cos, sin = layer(torch.zeros(1), torch.tensor([1, 2, 3]).view(3, 1, 1))
    angle = torch.atan2(sin[0, 0, :64].double(), cos[0, 0, :64].double())
    read = torch.round(angle / layer.inv_freq.double()).long() - 1  # the id each pair read
    assert [int((read == a).sum()) for a in range(3)] == [22, 21, 21]  # not the declared counts
    with pytest.raises(ValueError, match=r"counts \(22, 21, 21\)"):
        mrope_axis_map([20, 22, 22], interleaved=True)


# --- validation ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("call", "exc", "match"), [
    (lambda: sincos_2d_table(2, 2, 6), ValueError, r"dim must be a positive multiple of 4"),
    (lambda: sincos_2d_table(-1, 2, 8), ValueError, r"grid_h must be a non-negative"),
    (lambda: patch_grid_positions(3, 4, 2), ValueError, r"multiples of spatial_merge_size"),
    (lambda: mrope_axis_map([1, 2]), ValueError, r"mrope_section must have three"),
    (lambda: mrope_axis_map("abc"), TypeError, r"mrope_section must be a sequence"),
    (lambda: mrope_axis_map([1, 4, 1], interleaved=True), ValueError, r"cannot be interleaved"),
    (lambda: apply_mrope(torch.zeros(2, 8), torch.zeros(3, 2), [1, 1, 1], base=1e6), ValueError,
     r"sum\(mrope_section\) must equal len\(inv_freq\) = dim // 2 = 4, got 3"),
    (lambda: apply_mrope(torch.zeros(2, 8), torch.zeros(2, 2), [2, 1, 1], base=1e6), ValueError,
     r"position_ids must have shape \(3, seq\)"),
    (lambda: apply_mrope(torch.zeros(2, 8), torch.zeros(3, 2), [2, 1, 1]), ValueError,
     r"apply_mrope needs base or inv_freq: give rope_theta"),
    (lambda: apply_mrope(torch.zeros(2, 8), torch.zeros(3, 2), [2, 1, 1], base=-1.0), ValueError,
     r"base"),
    (lambda: apply_mrope(torch.zeros(2, 8), torch.zeros(3, 2), [2, 1, 1], base=1e6,
                         inv_freq=torch.ones(4)), ValueError, r"either base= or inv_freq="),
    (lambda: apply_rope_2d(torch.zeros(3, 6), torch.arange(3), torch.arange(3)), ValueError,
     r"dim\) must be a positive multiple of 4"),
    (lambda: apply_rope_2d(torch.zeros(3, 8), torch.arange(3), torch.arange(2)), ValueError,
     r"cols must have length seq = 3"),
    (lambda: apply_rope_2d(torch.zeros(3, 8), torch.arange(3), torch.arange(3), layout="x"),
     ValueError, r"layout must be one of"),
    (lambda: mrope_position_ids([("image", 1, 3, 4)]), ValueError, r"segments\[0\] grid h and w"),
    (lambda: mrope_position_ids([("audio", 3)]), ValueError, r"segments\[0\]\[0\] must be one of"),
    (lambda: mrope_position_ids([("text", 2.5)]), TypeError, r"segments\[0\] length"),
    (lambda: mrope_position_ids([("video", 2, 2, 2, -1.0)]), ValueError, r"time_interval"),
    (lambda: mrope_position_ids([]), ValueError, r"at least one token"),
    (lambda: mrope_position_ids([("text", 2)], resume="last"), ValueError, r"resume must be"),
    (lambda: mrope_position_ids([("text", 2)], seconds_cast="round"), ValueError,
     r"seconds_cast must be"),
    (lambda: mrope_position_ids([("video", 2, 2, 2, 2, 0.0)]), ValueError, r"seconds_per_grid"),
    (lambda: mrope_position_ids([("video", 2, 2, 2, 2, 1, 3)]), ValueError, r"tokens_per_second"),
    (lambda: mrope_position_ids([("image", 1, 2, 2), ("image", 1, 2, 2)]), ValueError,
     r"segments\[0\] and segments\[1\] are two images with no text"),
    (lambda: mrope_position_ids_batch([]), TypeError, r"rows must be a non-empty"),
    (lambda: mrope_position_ids_batch([[("text", 1)]], padding_side="up"), ValueError,
     r"padding_side must be"),
    (lambda: mrope_position_ids_batch([[("text", 1)], [("image", 1, 3, 2)]]), ValueError,
     r"rows\[1\]\[0\]|segments\[0\] grid h and w"),
])
def test_bad_arguments_name_the_parameter(call, exc, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(exc, match=match):
        call()


# --- figures -------------------------------------------------------------------------------------


def test_axes_figure_draws_the_library_axis_maps() -> None:
    from posenc_lib.viz.multimodal import MROPE_MODELS, mrope_axes_figure

    fig = mrope_axes_figure()
    (trace,) = fig.data
    for row, (_, section, inter, _) in zip(trace.z, MROPE_MODELS, strict=True):
        assert list(row) == mrope_axis_map(section, interleaved=inter).tolist()
    assert "".join(trace.text[0]) == "t" * 16 + "h" * 24 + "w" * 24
    # each row's hover wavelengths use its own rope_theta: Qwen2-VL 1e6, released Qwen3-VL 5e6
    for row, theta in zip(trace.customdata, (1e6, 5e6), strict=True):
        np.testing.assert_allclose(np.array(row, dtype=float),
                                   (2 * np.pi / P.rope_inv_freq(128, theta)).numpy(), rtol=1e-12)
    with pytest.raises(TypeError, match=r"models\[0\] must be a tuple"):
        mrope_axes_figure([("a", [1, 1, 1])])
    with pytest.raises(ValueError, match="share one head size"):
        mrope_axes_figure([("a", [1, 1, 1], False), ("b", [2, 1, 1], False)])


def test_similarity_figure_steps_are_the_library_similarity() -> None:
    from posenc_lib.multimodal import rope_2d_similarity
    from posenc_lib.viz.multimodal import rope_2d_similarity_figure

    fig = rope_2d_similarity_figure(dim=32, base=100.0, max_offset=5, seed=2)
    off = torch.arange(-5, 6, dtype=torch.float64)
    axial = rope_2d_similarity(off, off, *axial_rope_frequencies(32, 100.0))
    np.testing.assert_allclose(np.array(fig.data[0].z, dtype=float), axial.numpy(), atol=5e-4)
    steps = fig.layout.sliders[0].steps
    # one step per seed 0 … 7, labelled by RoPE-Mixed's direction φ mod 90°, in increasing order
    phis = {}
    for seed in range(8):
        f_row, f_col = rope_mixed_frequencies(32, 100.0, seed=seed)
        phis[seed] = math.degrees(math.atan2(f_row[0].item(), f_col[0].item()))
    order = sorted(range(8), key=lambda seed: phis[seed] % 90)
    assert [s.label for s in steps] == [f"{phis[seed] % 90:.1f}°" for seed in order]
    assert [float(s.label[:-1]) for s in steps] == sorted(float(s.label[:-1]) for s in steps)
    assert steps[fig.layout.sliders[0].active] == steps[order.index(2)]
    mixed = rope_2d_similarity(off, off, *rope_mixed_frequencies(32, 100.0, seed=5))
    np.testing.assert_allclose(np.array(steps[order.index(5)].args[0]["z"][0], dtype=float),
                               mixed.numpy(), atol=5e-4)
    assert steps[order.index(2)].args[0]["z"][0] == list(map(list, fig.data[1].z))
    # the colour range is the data's: from the smallest value of any panel or step up to 1
    lowest = min(np.min(np.array(s.args[0]["z"][0], dtype=float)) for s in steps)
    lowest = min(lowest, float(np.min(np.array(fig.data[0].z, dtype=float))))
    for trace in fig.data:
        assert trace.zmin == lowest and trace.zmax == 1 and lowest > -0.5
    # axes are (Δy, Δx), query minus key; without sliders the title names φ
    assert fig.layout.xaxis.title.text == "Δx (query − key)"
    assert fig.layout.yaxis.title.text == "Δy (query − key)"
    still = rope_2d_similarity_figure(dim=32, base=100.0, max_offset=5, seed=5, sliders=False)
    assert f"φ = {phis[5]:.1f}° ({phis[5] % 90:.1f}° mod 90°)" in still.layout.title.text


def test_position_ids_figure_draws_get_rope_index_ids_at_every_slider_step() -> None:
    from posenc_lib.display import StaticFigure
    from posenc_lib.viz.multimodal import IMAGE_SIZES, position_ids_figure

    segments = [("text", 4), ("image", 1, 8, 4), ("text", 4)]
    fig = position_ids_figure(segments)
    ids, _ = mrope_position_ids(segments)
    for a in range(3):
        assert list(fig.data[a].y) == ids[a].tolist()
    steps = fig.layout.sliders[0].steps
    assert [s.label for s in steps] == [f"{h}×{w}" for h, w in IMAGE_SIZES]
    h, w = IMAGE_SIZES[-1]
    big, _ = mrope_position_ids([("text", 4), ("image", 1, h, w), ("text", 4)])
    assert steps[-1].args[0]["y"][1] == big[1].tolist()
    assert fig.layout.sliders[0].active == IMAGE_SIZES.index((8, 4))
    assert len(StaticFigure(fig).to_html().encode()) < 300_000
    # without an image there is nothing to slide
    assert not position_ids_figure([("text", 3), ("video", 2, 4, 4)]).layout.sliders


@pytest.mark.parametrize("tokens_per_second", [2, 25])
def test_video_time_ids_round_in_float32_as_qwen2_5_vl(tokens_per_second: int) -> None:
    """25 fps: the processor's seconds per temporal patch 2/25 is float32, and get_rope_index
    multiplies in float32; a float64 product of the same float32 number truncates one id lower."""
    model = _model("qwen2_5_vl")
    model.config.vision_config.tokens_per_second = tokens_per_second
    seconds = torch.tensor([2 / 25], dtype=torch.float32)
    segments = [("text", 1), ("video", 60, 2, 2), ("text", 1)]
    input_ids, types = _tokens(segments)
    hf, delta = model.get_rope_index(input_ids, types, None, torch.tensor([[60, 2, 2]]),
                                     second_per_grid_ts=seconds)
    ours, our_delta = mrope_position_ids(
        [("text", 1), ("video", 60, 2, 2, tokens_per_second, seconds[0]), ("text", 1)],
        resume="grid")
    assert torch.equal(ours, hf[:, 0]) and our_delta == int(delta)
    # exact arithmetic: patch k at 1 + floor(k * tokens_per_second * 2 / 25)
    first = 1 if tokens_per_second == 25 else 25
    assert int(ours[0, 1 + first]) == 1 + first * tokens_per_second * 2 // 25
    float64 = (first * (tokens_per_second * float(seconds[0])))
    assert 1 + int(float64) == int(ours[0, 1 + first]) - 1  # what a float64 product gives


@pytest.mark.parametrize("padding_side", ["left", "right"])
@pytest.mark.parametrize("name", ["qwen2_vl", "qwen2_5_vl"])
def test_padded_batch_equals_get_rope_index_with_a_mask(name: str, padding_side: str) -> None:
    model = _model(name)
    video = ("video", 3, 4, 4) if name == "qwen2_vl" else ("video", 3, 4, 4, 2, 2.0)
    rows = [[("text", 2), ("image", 1, 4, 6), ("text", 3)], [("text", 1), video, ("text", 2)],
            [("text", 4)]]
    ids, mask, deltas = mrope_position_ids_batch(rows, padding_side=padding_side, resume="grid")
    types = torch.zeros_like(mask)
    for b, row in enumerate(rows):
        types[b, mask[b].bool()] = _tokens(row)[1][0]
    kwargs = {"second_per_grid_ts": torch.tensor([2.0])} if name == "qwen2_5_vl" else {}
    hf, hf_deltas = model.get_rope_index(
        torch.zeros_like(mask), types, torch.tensor([[1, 4, 6]]), torch.tensor([[3, 4, 4]]),
        attention_mask=mask, **kwargs)
    assert torch.equal(ids, hf) and torch.equal(deltas, hf_deltas)
    assert int(mask.sum()) == 11 + 15 + 4 and bool((ids[:, ~mask.bool()] == 0).all())
    first_real = mask.argmax(-1)
    assert first_real.tolist() == ([0, 0, 0] if padding_side == "right" else [4, 0, 11])
    if name == "qwen2_5_vl":  # 2 tokens per second x 2 s: time ids 1, 5, 9 in row 1
        assert sorted(set(ids[0, 1, 1:13].tolist())) == [1, 5, 9]


@pytest.mark.parametrize(("h", "w", "dim"), [(3, 5, 16), (7, 4, 64), (4, 2, 8)])
def test_big_vision_rule_equals_posemb_sincos_2d(h: int, w: int, dim: int) -> None:
    """big_vision's models/vit.py posemb_sincos_2d, transcribed in NumPy."""
    y, x = np.mgrid[:h, :w]
    omega = 1.0 / (10_000.0 ** (np.arange(dim // 4) / (dim // 4 - 1)))
    y = np.einsum("m,d->md", y.flatten(), omega)
    x = np.einsum("m,d->md", x.flatten(), omega)
    pe = np.concatenate([np.sin(x), np.cos(x), np.sin(y), np.cos(y)], axis=1)
    ours = sincos_2d_table(h, w, dim, frequency_rule="big_vision", dtype=torch.float64)
    np.testing.assert_allclose(ours.numpy(), pe, atol=1e-12, rtol=0)
    mae = sincos_2d_table(h, w, dim, dtype=torch.float64)
    assert np.abs(mae.numpy() - pe).max() > 1e-2  # the two rules are different tables
    with pytest.raises(ValueError, match="frequency_rule"):
        sincos_2d_table(h, w, dim, frequency_rule="moco")
    with pytest.raises(ValueError, match="dim >= 8"):
        sincos_2d_table(h, w, 4, frequency_rule="big_vision")


@pytest.mark.parametrize(("window_h", "window_w"), [(1, 1), (2, 3), (7, 7), (4, 6)])
def test_relative_position_index_2d_is_swins(window_h: int, window_w: int) -> None:
    from transformers.models.swin.modeling_swin import SwinRelativePositionBias

    from posenc_lib.multimodal import relative_position_index_2d

    swin = SwinRelativePositionBias(num_heads=2, window_size=(window_h, window_w))
    ours = relative_position_index_2d(window_h, window_w)
    assert torch.equal(ours.flatten(), swin.relative_position_index)
    # one row per offset: pairs with the same (Δy, Δx) share it, different offsets do not
    rows, cols = patch_grid_positions(window_h, window_w)
    offsets = torch.stack([rows[:, None] - rows[None, :], cols[:, None] - cols[None, :]], -1)
    distinct = {tuple(o) for o in offsets.view(-1, 2).tolist()}
    assert len(set(ours.flatten().tolist())) == len(distinct)
    assert ours.max() < (2 * window_h - 1) * (2 * window_w - 1)
    with pytest.raises(ValueError, match="window_h"):
        relative_position_index_2d(0, 2)


# --- multimodal_layout_ids: M-RoPE, MRoPE-I's spatial reset, VideoRoPE's diagonal layout --------

def _reference_layout_ids(segments, layout, merge=2, stride=1):
    """The loop of get_rope_index as Huang et al.'s Multimodal-RoPEs repository writes it for
    M-RoPE (release rule), its spatial reset (pos_design/mrope_i.py) and VideoRoPE
    (pos_design/videorope.py), transcribed token by token; the <vision_end> token of the
    reference code is the first token of the next text segment here."""
    rows, st_idx = [], 0
    for seg in segments:
        if seg[0] == "text":
            rows += [(st_idx + j,) * 3 for j in range(seg[1])]
            st_idx += seg[1]
            continue
        t, gh, gw = seg[1], seg[2] // merge, seg[3] // merge
        grid = [(k * stride, y, x) for k in range(t) for y in range(gh) for x in range(gw)]
        if layout == "mrope":
            ids = [(st_idx + a, st_idx + b, st_idx + c) for a, b, c in grid]
            st_idx = max(max(r) for r in ids) + 1
        elif layout == "spatial_reset":
            vision_end = max(max(r) for r in grid) + 1 + st_idx
            ids = [(st_idx + a, b, c) for a, b, c in grid]
            st_idx = vision_end
        else:
            ids = [(st_idx + a, st_idx + a + b - (gh - 1) // 2, st_idx + a + c - (gw - 1) // 2)
                   for a, b, c in grid]
            st_idx = max(r[0] for r in ids) + 1
        rows += ids
    return torch.tensor(rows).T


LAYOUT_CASES = [
    [("text", 3), ("image", 1, 4, 6), ("text", 2)],
    [("text", 2), ("image", 1, 10, 4), ("text", 3), ("video", 3, 4, 8), ("text", 1)],
    [("image", 1, 6, 6), ("text", 4)],
]


@pytest.mark.parametrize("segments", LAYOUT_CASES)
@pytest.mark.parametrize("layout", ["mrope", "spatial_reset", "videorope"])
@pytest.mark.parametrize("stride", [1, 2])
def test_multimodal_layout_ids_match_the_reference_loops(segments, layout, stride) -> None:
    ours = P.multimodal_layout_ids(segments, layout=layout, temporal_stride=stride)
    assert torch.equal(ours, _reference_layout_ids(segments, layout, stride=stride))


def test_multimodal_layout_ids_facts() -> None:
    example = [("text", 3), ("image", 1, 4, 6), ("text", 2)]
    # "mrope" is mrope_position_ids' release rule on images
    assert torch.equal(P.multimodal_layout_ids(example), mrope_position_ids(example)[0])
    reset = P.multimodal_layout_ids(example, layout="spatial_reset")
    assert reset[1:, 3:9].min() == 0
    assert torch.equal(reset[:, 9:], mrope_position_ids(example)[0][:, 9:])
    diag = P.multimodal_layout_ids(example, layout="videorope")
    assert diag[:, 9].tolist() == [4, 4, 4]  # one past the image's single time id 3
    centre = diag[:, 3:9].T.tolist().index([3, 3, 3])  # the centre token: equal ids on all axes
    assert centre == 1  # row 0 = (2 - 1) // 2, column 1 = (3 - 1) // 2
    # mutation: a layout name outside the three, a bad stride or a time-spaced video are refused
    with pytest.raises(ValueError, match="layout"):
        P.multimodal_layout_ids(example, layout="diagonal")
    with pytest.raises(ValueError, match="temporal_stride"):
        P.multimodal_layout_ids(example, temporal_stride=0)
    with pytest.raises(ValueError, match="temporal_stride"):
        P.multimodal_layout_ids([("text", 1), ("video", 2, 2, 2, 2.0)])
