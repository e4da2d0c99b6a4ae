"""Permutation matrices and the tiny Transformer of chapter 1: equivariance, and what breaks it."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_lib.attention import attention, causal_mask
from posenc_lib.permutation import (
    TinyEncoder,
    TinyFeedForward,
    TinySelfAttention,
    ToyEmbedding,
    equivariance_gap,
    inverse_permutation,
    permutation_between,
    permutation_matrix,
    permute_tokens,
)
from posenc_lib.sinusoidal import sinusoidal_table

VOCAB = ["我", "爱", "你", "他", "欠", "万"]


@st.composite
def orders(draw, min_size=2, max_size=7):
    n = draw(st.integers(min_size, max_size))
    return draw(st.permutations(list(range(n))))


def test_permutation_matrix_moves_rows():
    p = permutation_matrix([2, 0, 1])
    x = torch.arange(6, dtype=torch.float64).reshape(3, 2)
    assert torch.equal(p @ x, x[[2, 0, 1]])
    assert torch.equal(p, torch.tensor([[0.0, 0, 1], [1, 0, 0], [0, 1, 0]], dtype=torch.float64))


@given(orders())
def test_permutation_matrix_is_orthogonal_and_matches_indexing(order):
    p = permutation_matrix(order)
    n = len(order)
    assert torch.equal(p @ p.T, torch.eye(n, dtype=torch.float64))
    x = torch.randn(n, 3, dtype=torch.float64)
    assert torch.equal(p @ x, permute_tokens(x, order))
    inv = inverse_permutation(order)
    assert torch.equal(permute_tokens(permute_tokens(x, order), inv), x)
    assert torch.equal(permutation_matrix(inv), p.T)


def test_permutation_between():
    assert permutation_between("我爱你", "你爱我") == [2, 1, 0]
    assert permutation_between(["a", "b", "c"], ["b", "c", "a"]) == [1, 2, 0]
    with pytest.raises(ValueError, match="source"):
        permutation_between("aab", "aba")
    with pytest.raises(ValueError, match="target"):
        permutation_between("abc", "abd")


@pytest.mark.parametrize(
    ("order", "error", "match"),
    [
        ([0, 0, 1], ValueError, "permutation"),
        ([0, 2], ValueError, "permutation"),
        ([], ValueError, "empty"),
        ([0.0, 1.0], TypeError, "ints"),
        (torch.tensor([0.0, 1.0]), TypeError, "integers"),
        (torch.tensor([[0, 1]]), ValueError, "1-D"),
        (3, TypeError, "sequence"),
    ],
)
def test_bad_orders(order, error, match):
    with pytest.raises(error, match=match):
        permutation_matrix(order)


def test_permute_tokens_validation():
    with pytest.raises(ValueError, match="seq = 3"):
        permute_tokens(torch.zeros(3, 2), [1, 0])
    with pytest.raises(ValueError, match="shape"):
        permute_tokens(torch.zeros(3), [0, 1, 2])
    with pytest.raises(TypeError, match="x"):
        permute_tokens([[1.0]], [0])


def test_embedding_depends_on_token_only():
    emb = ToyEmbedding(VOCAB, 8, seed=3)
    a, b = emb(list("我爱你")), emb(list("你爱我"))
    assert torch.equal(a, permute_tokens(b, [2, 1, 0]))
    assert torch.equal(ToyEmbedding(VOCAB, 8, seed=3).weight, emb.weight)  # seeded
    with pytest.raises(ValueError, match="vocabulary"):
        emb(["猫"])
    with pytest.raises(ValueError, match="distinct"):
        ToyEmbedding(["a", "a"], 4)
    with pytest.raises(ValueError, match="dim"):
        ToyEmbedding(VOCAB, 0)


def test_attention_uses_the_library_and_is_seeded():
    layer = TinySelfAttention(8, seed=1)
    x = torch.randn(5, 8, dtype=torch.float64)
    out, w = layer(x)
    q, k, v = layer.project(x)
    ref_out, ref_w = attention(q, k, v)
    assert torch.allclose(out, ref_out) and torch.allclose(w, ref_w)
    assert torch.allclose(torch.softmax(layer.scores(x), dim=-1), w, atol=1e-14)
    assert torch.allclose(w.sum(-1), torch.ones(5, dtype=torch.float64))
    assert torch.equal(TinySelfAttention(8, seed=1).w_q.weight, layer.w_q.weight)
    assert not torch.equal(TinySelfAttention(8, seed=2).w_q.weight, layer.w_q.weight)
    with pytest.raises(ValueError, match="shape"):
        layer(torch.zeros(5, 7, dtype=torch.float64))
    with pytest.raises(TypeError, match="floating"):
        layer(torch.zeros(5, 8, dtype=torch.int64))


@settings(max_examples=30, deadline=None)
@given(orders(), st.integers(0, 1000))
def test_attention_is_equivariant_and_weights_permute(order, seed):
    n = len(order)
    layer = TinySelfAttention(6, seed=seed)
    x = torch.randn(n, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    p = permutation_matrix(order)
    out, w = layer(x)
    out_p, w_p = layer(p @ x)
    assert torch.allclose(out_p, p @ out, atol=1e-12)
    assert torch.allclose(w_p, p @ w @ p.T, atol=1e-12)
    assert torch.allclose(layer.scores(p @ x), p @ layer.scores(x) @ p.T, atol=1e-12)
    assert equivariance_gap(lambda t: layer(t)[0], x, order) < 1e-12


@settings(max_examples=20, deadline=None)
@given(orders(min_size=2, max_size=6), st.integers(0, 100))
def test_stack_is_equivariant_and_pooling_invariant(order, seed):
    tokens = VOCAB[: len(order)]
    shuffled = [tokens[j] for j in order]
    model = TinyEncoder(VOCAB, 8, n_layers=2, seed=seed)
    h, h_p = model(tokens), model(shuffled)
    assert torch.allclose(h_p, permute_tokens(h, order), atol=1e-10)
    pooled, pooled_p = model.sentence_vector(tokens), model.sentence_vector(shuffled)
    assert torch.allclose(pooled, pooled_p, atol=1e-10)


def test_feed_forward_is_position_wise():
    ffn = TinyFeedForward(4, seed=0)
    x = torch.randn(5, 4, dtype=torch.float64)
    rows = torch.stack([ffn(x[i : i + 1])[0] for i in range(5)])
    assert torch.allclose(ffn(x), rows, atol=1e-14)
    assert equivariance_gap(ffn, x, [4, 3, 2, 1, 0]) < 1e-14


def test_positions_and_causal_mask_break_the_symmetry():
    model = TinyEncoder(VOCAB, 8, seed=0)
    tokens, order = list("我爱你"), [2, 1, 0]
    shuffled = [tokens[j] for j in order]
    pe = sinusoidal_table(3, 8, dtype=torch.float64)
    gap_pe = (model(shuffled, positional=pe) - permute_tokens(model(tokens, positional=pe), order))
    assert gap_pe.abs().max() > 1e-2
    mask = causal_mask(3)
    gap_mask = (model(shuffled, mask=mask) - permute_tokens(model(tokens, mask=mask), order))
    assert gap_mask.abs().max() > 1e-2
    pooled = model.sentence_vector(tokens, positional=pe)
    pooled_p = model.sentence_vector(shuffled, positional=pe)
    assert (pooled - pooled_p).abs().max() > 1e-3


def test_encoder_validation():
    model = TinyEncoder(VOCAB, 4, seed=0)
    with pytest.raises(ValueError, match="positional"):
        model(list("我爱"), positional=torch.zeros(3, 4))
    with pytest.raises(TypeError, match="positional"):
        model(list("我爱"), positional=[[0.0] * 4] * 2)
    with pytest.raises(ValueError, match="n_layers"):
        TinyEncoder(VOCAB, 4, n_layers=0)
    with pytest.raises(TypeError, match="seed"):
        TinyEncoder(VOCAB, 4, seed=1.5)


def test_equivariance_gap_detects_non_equivariant_maps():
    x = torch.randn(4, 3, dtype=torch.float64)
    assert equivariance_gap(lambda t: t.cumsum(-2), x, [1, 0, 2, 3]) > 1e-6
    with pytest.raises(TypeError, match="callable"):
        equivariance_gap(3, x, [0, 1, 2, 3])


def test_band_mask_is_the_symmetric_band() -> None:
    from posenc_lib.permutation import band_mask

    m = band_mask(6, 2)
    t = torch.arange(6)
    assert torch.equal(m, (t[:, None] - t[None, :]).abs() <= 2)
    assert torch.equal(m, m.T)
    assert m.sum().item() == 6 + 2 * 5 + 2 * 4  # diagonal and two off-diagonals on each side
    assert band_mask(4, 3).all() and torch.equal(band_mask(4, 0), torch.eye(4, dtype=torch.bool))
    with pytest.raises(ValueError, match="window"):
        band_mask(4, -1)


def test_mask_symmetries_match_the_row_count_argument() -> None:
    from posenc_lib import causal_mask
    from posenc_lib.permutation import band_mask, mask_symmetries

    for n in range(1, 7):
        assert mask_symmetries(causal_mask(n)) == [tuple(range(n))]
    # the band keeps the reversal; no mask (all True) keeps all n! orders
    assert mask_symmetries(band_mask(5, 1)) == [(0, 1, 2, 3, 4), (4, 3, 2, 1, 0)]
    assert len(mask_symmetries(torch.ones(4, 4, dtype=torch.bool))) == 24
    # a padding-style mask (column 2 blocked) keeps the orders that fix slot 2
    pad = torch.ones(4, 4, dtype=torch.bool)
    pad[:, 2] = False
    sym = mask_symmetries(pad)
    assert len(sym) == 6 and all(p[2] == 2 for p in sym)
    with pytest.raises(ValueError, match="mask"):
        mask_symmetries(torch.ones(9, 9, dtype=torch.bool))
    with pytest.raises(TypeError, match="mask"):
        mask_symmetries(torch.ones(3, 3))
