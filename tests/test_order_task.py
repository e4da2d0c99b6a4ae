"""Chapter 1's order task: a bag model is stuck at log 2, positions or a causal mask learn it."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_lib.order_task import OrderClassifier, reversal_pairs, train_order_classifier


@settings(max_examples=40, deadline=None)
@given(num_pairs=st.integers(1, 20), length=st.integers(2, 8), extra=st.integers(0, 8),
       seed=st.integers(0, 2**31))
def test_pairs_are_distinct_tokens_and_their_reversals(num_pairs, length, extra, seed):
    vocab_size = length + extra
    tokens, labels = reversal_pairs(num_pairs, length, vocab_size,
                                    generator=torch.Generator().manual_seed(seed))
    assert tokens.shape == (2 * num_pairs, length) and tokens.dtype == torch.int64
    assert labels.tolist() == [1.0] * num_pairs + [0.0] * num_pairs
    assert int(tokens.min()) >= 0 and int(tokens.max()) < vocab_size
    assert all(len(set(row.tolist())) == length for row in tokens)          # distinct tokens
    forward, backward = tokens[:num_pairs], tokens[num_pairs:]
    assert torch.equal(backward, forward.flip(1))                           # the reversals
    assert bool((forward[:, 0] < forward[:, -1]).all())                     # label 1: first < last
    assert bool((backward[:, 0] > backward[:, -1]).all())


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31))
def test_without_positions_or_mask_a_sequence_and_its_reversal_get_one_logit(seed):
    tokens, _ = reversal_pairs(16, 6, 16, generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        bag = OrderClassifier(16, 6, encoding="none", seed=seed)(tokens)
        table = OrderClassifier(16, 6, encoding="sinusoidal", seed=seed)(tokens)
        masked = OrderClassifier(16, 6, causal=True, seed=seed)(tokens)
    assert (bag[:16] - bag[16:]).abs().max() < 1e-5
    # the mutations: a position table, or a causal mask, tells the pair apart
    assert (table[:16] - table[16:]).abs().max() > 1e-3
    assert (masked[:16] - masked[16:]).abs().max() > 1e-3


def test_training_a_bag_model_never_beats_log_2_but_positions_and_a_mask_learn():
    bag = train_order_classifier(encoding="none", steps=300, seed=1)
    assert bag.losses.min() >= math.log(2) - 1e-5
    assert bag.test_pair_gap < 1e-5 and bag.test_accuracy == 0.5
    assert 400 < bag.test_count <= 512  # a few pairs seen in training are dropped
    table = train_order_classifier(encoding="sinusoidal", steps=300, seed=1)
    assert table.test_loss < 0.15 and table.test_accuracy > 0.95
    masked = train_order_classifier(causal=True, steps=300, seed=1)
    assert masked.test_loss < 0.5 and masked.test_accuracy > 0.75
    again = train_order_classifier(encoding="none", steps=300, seed=1)
    assert (again.losses == bag.losses).all()                               # seeded, repeatable


@pytest.mark.parametrize(("kwargs", "error", "name"), [
    ({"length": 1}, ValueError, "length"),
    ({"length": 6, "vocab_size": 5}, ValueError, "vocab_size"),
    ({"encoding": "rope"}, ValueError, "encoding"),
    ({"causal": 1}, TypeError, "causal"),
    ({"dim": 7}, ValueError, "dim"),
    ({"lr": 0.0}, ValueError, "lr"),
    ({"steps": 0}, ValueError, "steps"),
])
def test_bad_arguments_are_named(kwargs, error, name):
    with pytest.raises(error, match=name):
        train_order_classifier(**kwargs)


def test_bad_tokens_are_refused():
    model = OrderClassifier(8, 4)
    with pytest.raises(TypeError, match="tokens"):
        model(torch.zeros(2, 4))
    with pytest.raises(ValueError, match="tokens"):
        model(torch.zeros(2, 5, dtype=torch.int64))
    with pytest.raises(TypeError, match="generator"):
        reversal_pairs(2, 3, 4, generator=0)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31))
def test_a_slot_readout_tells_a_pair_apart_and_the_mean_does_not(seed):
    tokens, _ = reversal_pairs(16, 6, 16, generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        mean = OrderClassifier(16, 6, seed=seed, readout="mean")(tokens)
        last = OrderClassifier(16, 6, seed=seed, readout="last")(tokens)
        ends = OrderClassifier(16, 6, seed=seed, readout="ends")(tokens)
        deep = OrderClassifier(16, 6, seed=seed, layers=3)(tokens)
    assert (mean[:16] - mean[16:]).abs().max() < 1e-5
    assert (deep[:16] - deep[16:]).abs().max() < 1e-5       # depth alone does not see order
    assert (last[:16] - last[16:]).abs().max() > 1e-3       # a slot breaks the symmetry
    assert (ends[:16] - ends[16:]).abs().max() > 1e-3
    # The last output is a function of the last token and the bag: reorder the first five
    # tokens and the last-slot logit stays (a mutation reading slot 0 would move).
    shuffled = torch.cat([tokens[:, [2, 0, 4, 1, 3]], tokens[:, 5:]], dim=1)
    with torch.no_grad():
        last_again = OrderClassifier(16, 6, seed=seed, readout="last")(shuffled)
    assert torch.allclose(last_again, last, atol=1e-5)


def test_readout_and_layers_keep_the_one_layer_mean_model_and_learn():
    default = OrderClassifier(16, 6, seed=3)
    explicit = OrderClassifier(16, 6, seed=3, readout="mean", layers=1)
    assert all(torch.equal(a, b) for a, b in zip(default.state_dict().values(),
                                                   explicit.state_dict().values(), strict=True))
    deep = OrderClassifier(16, 6, seed=3, layers=2)
    assert torch.equal(deep.attn.in_proj_weight, default.attn.in_proj_weight)  # layer 0 unchanged
    ends = train_order_classifier(readout="ends", steps=300, seed=1)
    assert ends.test_accuracy > 0.99                          # first and last tokens suffice
    with pytest.raises(ValueError, match="readout"):
        OrderClassifier(16, 6, readout="first")
    with pytest.raises(ValueError, match="layers"):
        OrderClassifier(16, 6, layers=0)
    with pytest.raises(TypeError, match="layers"):
        OrderClassifier(16, 6, layers=1.5)
