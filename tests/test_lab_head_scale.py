"""Per-head query scales (Wang et al.'s HeadScale) on lab models: baking and training."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_lib.lab.head_scale import train_head_scales, with_head_scales
from posenc_lib.lab.train import LabSettings, build_model, task_for

TINY = LabSettings(train_length=8, d_model=16, n_heads=2, markov_layers=2, d_ff=16,
                   markov_vocab=6)


def _model(scheme: str = "none"):
    return build_model(TINY, "markov", scheme, seed=0).eval()


def _tokens() -> torch.Tensor:
    return torch.randint(0, 6, (3, 12), generator=torch.Generator().manual_seed(1))


@settings(max_examples=15, deadline=None)
@given(c=st.floats(0.3, 3.0), scheme=st.sampled_from(["none", "rope", "alibi", "t5"]))
def test_uniform_scales_equal_the_models_logit_scale(c: float, scheme: str) -> None:
    # One factor c on every head's query multiplies every dot product q·k by c, which is what the
    # model's own logit_scale does (a bias, ALiBi's or T5's, is added unscaled in both).
    model, tokens = _model(scheme), _tokens()
    got = with_head_scales(model, torch.full((2, 2), c))(tokens).logits
    torch.testing.assert_close(got, model(tokens, logit_scale=c).logits, atol=2e-5, rtol=1e-4)
    if abs(c - 1) > 0.1:  # and it is not the unscaled model
        assert not torch.allclose(got, model(tokens).logits, atol=1e-4)


def test_one_head_scaled_changes_that_head_only() -> None:
    model, tokens = _model(), _tokens()
    scales = torch.ones(2, 2)
    scales[1, 0] = 2.5  # layer 2, head 0
    before, after = model(tokens).attention, with_head_scales(model, scales)(tokens).attention
    torch.testing.assert_close(after[0], before[0])  # layer 1 untouched
    torch.testing.assert_close(after[1][:, 1], before[1][:, 1])  # layer 2, head 1 untouched
    assert (after[1][:, 0] - before[1][:, 0]).abs().max() > 1e-3
    # the original model is not changed
    torch.testing.assert_close(model(tokens).attention[1], before[1])


def test_training_lowers_the_loss_and_leaves_the_model_alone() -> None:
    model = _model()
    weights = {k: v.clone() for k, v in model.state_dict().items()}
    fit = train_head_scales(model, task_for(TINY, "markov"), 16, bos=True, steps=30, lr=0.1,
                            init=1.0, batch=8, seed=3)
    assert fit.scales.shape == (2, 2) and len(fit.losses) == 30
    assert sum(fit.losses[-10:]) / 10 < sum(fit.losses[:10]) / 10
    assert not torch.equal(fit.scales, torch.ones(2, 2))
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in weights.items())


def test_lower_bound_is_kept() -> None:
    fit = train_head_scales(_model(), task_for(TINY, "markov"), 16, bos=True, steps=20, lr=0.5,
                            init=1.6, lower_bound=1.0, batch=4, seed=0)
    assert fit.scales.min() >= 1.0


def test_bad_input_is_named() -> None:
    model, task = _model(), task_for(TINY, "markov")
    with pytest.raises(TypeError, match="model"):
        train_head_scales("model", task, 16, bos=True)
    with pytest.raises(TypeError, match="task"):
        train_head_scales(model, "markov", 16, bos=True)
    with pytest.raises(ValueError, match="lower_bound"):
        train_head_scales(model, task, 16, bos=True, init=1.0, lower_bound=1.5)
    with pytest.raises(ValueError, match="lr"):
        train_head_scales(model, task, 16, bos=True, lr=0.0)
    with pytest.raises(ValueError, match="steps"):
        train_head_scales(model, task, 16, bos=True, steps=0)
    with pytest.raises(ValueError, match="scales"):
        with_head_scales(model, torch.ones(2, 3))
    with pytest.raises(ValueError, match="positive"):
        with_head_scales(model, -torch.ones(2, 2))
