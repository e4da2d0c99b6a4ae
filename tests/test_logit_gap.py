"""logit_gap: max |Δ logit|, KL in nats and top-1 agreement, with their laws."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_lib import logit_gap

finite = st.floats(-30.0, 30.0, allow_nan=False, width=32)


def _logits(draw_rows: list[list[float]]) -> torch.Tensor:
    return torch.tensor(draw_rows, dtype=torch.float32)


def test_two_token_kl_by_hand() -> None:
    # p = softmax(0, 0) = (1/2, 1/2); q = softmax(0, ln 3) = (1/4, 3/4):
    # KL(p‖q) = ½ ln(½ / ¼) + ½ ln(½ / ¾) = ½ ln(4/3)
    gap = logit_gap(torch.tensor([0.0, 0.0]), torch.tensor([0.0, math.log(3.0)]))
    assert gap.kl == pytest.approx(0.5 * math.log(4 / 3), rel=1e-6)
    assert gap.max_abs == pytest.approx(math.log(3.0), rel=1e-6)
    assert gap.positions == 1
    # the arg-max of (0, 0) is entry 0, of (0, ln 3) entry 1
    assert gap.top1_agreement == 0.0


def test_kl_is_a_mean_over_positions_and_top1_a_share() -> None:
    ref = torch.tensor([[0.0, 0.0], [2.0, 0.0], [0.0, 5.0], [1.0, 0.0]])
    other = torch.tensor([[0.0, math.log(3.0)], [2.0, 0.0], [0.0, 5.0], [1.0, 0.0]])
    gap = logit_gap(ref, other)
    assert gap.kl == pytest.approx(0.5 * math.log(4 / 3) / 4, rel=1e-6)
    assert gap.top1_agreement == 0.75 and gap.positions == 4


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 4), vocab=st.integers(2, 9), data=st.data())
def test_laws(rows: int, vocab: int, data: st.DataObject) -> None:
    a = _logits(data.draw(st.lists(st.lists(finite, min_size=vocab, max_size=vocab),
                                   min_size=rows, max_size=rows)))
    b = _logits(data.draw(st.lists(st.lists(finite, min_size=vocab, max_size=vocab),
                                   min_size=rows, max_size=rows)))
    shift = data.draw(finite)
    gap = logit_gap(a, b)
    assert gap.kl >= 0 and 0 <= gap.top1_agreement <= 1
    assert gap.max_abs == pytest.approx(float((a.double() - b.double()).abs().max()))
    same = logit_gap(a, a)
    assert same.kl == 0 and same.max_abs == 0 and same.top1_agreement == 1
    # a constant added to every logit of a row moves max |Δ| by about |shift| but not the
    # distribution (nor the arg-max, where the top two logits are not within rounding)
    moved = logit_gap(a, a + shift)
    assert moved.kl < 1e-9
    assert moved.max_abs == pytest.approx(abs(shift), abs=1e-4 + 1e-6 * abs(shift))
    top2 = a.double().topk(2, dim=-1).values
    if bool(((top2[:, 0] - top2[:, 1]) > 1e-3).all()):
        assert moved.top1_agreement == 1


def test_leading_dimensions_are_positions() -> None:
    torch.manual_seed(0)
    a, b = torch.randn(2, 3, 7), torch.randn(2, 3, 7)
    flat = logit_gap(a.reshape(6, 7), b.reshape(6, 7))
    assert logit_gap(a, b) == flat and flat.positions == 6


@pytest.mark.parametrize(("reference", "other", "error", "match"), [
    (torch.zeros(3, 4), torch.zeros(3, 5), ValueError, "same shape"),
    (torch.zeros(3, 1), torch.zeros(3, 1), ValueError, "vocab"),
    (torch.zeros(4, dtype=torch.long), torch.zeros(4), TypeError, "reference"),
    ([0.0, 1.0], torch.zeros(2), TypeError, "reference"),
    (torch.zeros(4), torch.tensor([0.0, math.nan, 0.0, 0.0]), ValueError, "other.*finite"),
    (torch.tensor([0.0, math.inf]), torch.zeros(2), ValueError, "reference.*finite"),
])
def test_bad_input(reference: object, other: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        logit_gap(reference, other)  # type: ignore[arg-type]


def test_str_names_the_three_measures() -> None:
    text = str(logit_gap(torch.tensor([0.0, 0.0]), torch.tensor([0.0, math.log(3.0)])))
    assert "max |Δ logit| 1.10e+00" in text and "KL 1.44e-01 nats" in text
    assert "same top-1 at 0% of 1 position(s)" in text
