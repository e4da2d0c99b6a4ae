"""Issue 18's battery of bad inputs: each gets an error naming the parameter, or a tested result.

Before: ``None`` or unhashable items where a sequence was expected gave "'NoneType' object is not
iterable"; a zero-width table gave torch's own reduction error; ``div_term_multiplied`` accepted
int64, bool, complex64 and None as a dtype and a string gave "Invalid device string"; ``base=``
with ``inv_freq=`` was silently ignored; ``format_hf_config({})`` was accepted; overflows to
inf/NaN passed silently.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import posenc_lib as P
from posenc_lib import hf as HF
from posenc_lib import permutation as PM
from posenc_lib import pitfalls as PF
from posenc_lib import properties as PR
from posenc_lib import tables as TB
from posenc_lib.viz.attention import attention_heatmap

W = torch.full((2, 2), 0.5)
X = torch.zeros(1, 3, 8)
THETA = P.rope_inv_freq(8)
HUGE = torch.tensor([0.0, 1e308], dtype=torch.float64)

CASES: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    # None, a number or unhashable items where a sequence is expected
    ("perm None", lambda: PM.permutation_between(None, [1]), TypeError,
     r"source must be a sequence of tokens .*got None"),
    ("perm target None", lambda: PM.permutation_between([1], None), TypeError,
     r"target must be a sequence"),
    ("perm unhashable", lambda: PM.permutation_between([[1], [2]], [[2], [1]]), TypeError,
     r"source must hold hashable tokens .*unhashable list at index 0"),
    ("perm set", lambda: PM.permutation_between({1, 2}, [2, 1]), TypeError,
     r"source must be a sequence"),
    ("toy vocab None", lambda: PM.ToyEmbedding(None, 4), TypeError,
     r"vocab must be a sequence of str tokens .*got None"),
    ("toy vocab str", lambda: PM.ToyEmbedding("abc", 4), TypeError, r"vocab must be a sequence"),
    ("toy tokens None", lambda: PM.ToyEmbedding(["a"], 4)(None), TypeError,
     r"tokens must be a sequence of str tokens .*got None"),
    ("toy tokens unhashable", lambda: PM.ToyEmbedding(["a"], 4)([["a"]]), TypeError,
     r"tokens must hold hashable .*index 0"),
    ("gaps None", lambda: PR.same_offset_gaps(P.sinusoidal_table, 1, None, 4), TypeError,
     r"lengths must be a sequence of int lengths .*got None"),
    ("gaps int", lambda: PR.same_offset_gaps(P.sinusoidal_table, 1, 8, 4), TypeError,
     r"lengths must be a sequence .*got 8 \(int\)"),
    ("markdown rows None", lambda: TB.markdown_table(None, ["a"]), TypeError,
     r"rows must be a sequence of rows .*got None"),
    ("markdown headers None", lambda: TB.markdown_table([[1]], None), TypeError,
     r"headers must be a sequence of column names .*got None"),
    ("markdown headers str", lambda: TB.markdown_table([[1]], "a"), TypeError,
     r"headers must be a sequence"),
    ("markdown row None", lambda: TB.markdown_table([None], ["a"]), TypeError,
     r"rows\[0\] must be a sequence of cells .*got None"),
    ("number_table rows None", lambda: TB.number_table(None, ["a"]), TypeError,
     r"rows must be a sequence"),
    ("number_table headers None", lambda: TB.number_table([[1]], None), TypeError,
     r"headers must be a sequence"),
    ("heatmap tokens None", lambda: attention_heatmap(W, None), TypeError,
     r"tokens must be a sequence of str .*got None"),
    ("heatmap key_tokens int", lambda: attention_heatmap(W, ["a", "b"], key_tokens=5), TypeError,
     r"key_tokens must be a sequence of str .*got 5 \(int\)"),
    # zero-width tables
    ("max_abs zero width", lambda: PR.max_abs_value(torch.zeros(4, 0)), ValueError,
     r"table must have at least 1 column\(s\) \(dim >= 1\), got 0 \(shape \(4, 0\)\)"),
    ("measure zero width", lambda: PR.measure_scheme(torch.zeros(4, 0)), ValueError,
     r"table must have at least 1 column"),
    # div_term_multiplied's dtype: floating point only
    *[(f"div_term dtype {dtype}",
       lambda dtype=dtype: PF.sinusoidal_table_div_term_multiplied(8, 4, dtype=dtype), TypeError,
       r"dtype must be a floating-point torch\.dtype")
      for dtype in (torch.int64, torch.bool, torch.complex64, None, "float32")],
    # base= together with inv_freq=
    *[(f"base and inv_freq {name}", call, ValueError,
       r"pass either base= or inv_freq=, not both")
      for name, call in [
          ("half", lambda: P.apply_rope_half(X, base=500000.0, inv_freq=THETA)),
          ("interleaved", lambda: P.apply_rope_interleaved(X, base=10.0, inv_freq=THETA)),
          ("complex", lambda: P.apply_rope_complex(X, base=10.0, inv_freq=THETA)),
          ("matrix", lambda: P.rope_rotation_matrix(1.0, 8, 10.0, inv_freq=THETA)),
          ("module", lambda: P.RotaryEmbedding(8, 10.0, inv_freq=THETA)),
          ("bound", lambda: P.rope_decay_bound(8, 10.0, inv_freq=THETA)),
          # even the default value, written out, is refused: it would be ignored all the same
          ("default base", lambda: P.apply_rope_half(X, base=10000.0, inv_freq=THETA)),
      ]],
    ("format_hf_config empty", lambda: HF.format_hf_config({}), ValueError,
     r"fields must not be empty"),
    # overflows: a clear error instead of inf or NaN
    ("integer_encoding float16", lambda: P.integer_encoding(70_000, 4, dtype=torch.float16),
     ValueError, r"\(seq_len − 1\)·scale = 69999 overflows torch\.float16"),
    ("angles overflow", lambda: P.rope_angles(HUGE, torch.tensor([10.0])), ValueError,
     r"the angles positions × inv_freq overflow float64"),
    ("cos_sin overflow", lambda: P.rope_cos_sin(HUGE, torch.tensor([10.0])), ValueError,
     r"overflow float64"),
    ("apply overflow", lambda: P.apply_rope_half(torch.ones(1, 2, 2), HUGE,
                                                 inv_freq=torch.tensor([10.0])), ValueError,
     r"overflow float64"),
    ("module overflow", lambda: P.RotaryEmbedding(2, inv_freq=torch.tensor([10.0]))(
        torch.ones(1, 2, 2), torch.ones(1, 2, 2), positions=HUGE), ValueError,
     r"overflow float64"),
    ("matrix overflow", lambda: P.rope_rotation_matrix(1e308, 2, inv_freq=torch.tensor([10.0])),
     ValueError, r"the angles position × inv_freq overflow float64"),
    ("sinusoidal overflow", lambda: P.sinusoidal_table(2, 4, 0.01, positions=HUGE), ValueError,
     r"the angles positions × frequencies overflow float64"),
]


@pytest.mark.parametrize(("call", "error", "match"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_bad_argument_raises_naming_the_parameter(
    call: Callable[[], Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        call()


def test_good_sequences_still_work() -> None:
    assert PM.permutation_between("我爱你", "你爱我") == [2, 1, 0]
    assert PM.permutation_between((1, 2, 3), range(3, 0, -1)) == [2, 1, 0]
    emb = PM.ToyEmbedding(("我", "爱", "你"), 4)
    assert emb(iter(["你", "我"])).shape == (2, 4)
    assert TB.markdown_table(((1, 2.5),), ("a", "b")).splitlines()[-1] == "| 1 | 2.5 |"
    gaps = PR.same_offset_gaps(P.sinusoidal_table, 1, range(4, 7), 4)
    assert gaps.shape == (3,) and float(gaps.max() - gaps.min()) < 1e-12
    assert PF.sinusoidal_table_div_term_multiplied(8, 4, dtype=torch.float16).dtype == torch.float16


def test_inv_freq_alone_and_base_alone_keep_their_meaning() -> None:
    x = torch.randn(1, 5, 8, dtype=torch.float64)
    theta = P.rope_inv_freq(8, 500000.0)
    torch.testing.assert_close(P.apply_rope_half(x, inv_freq=theta),
                               P.apply_rope_half(x, base=500000.0), rtol=0, atol=0)
    torch.testing.assert_close(P.apply_rope_half(x), P.apply_rope_half(x, base=10000.0),
                               rtol=0, atol=0)
    assert P.RotaryEmbedding(8).base == 10000.0


def test_integer_encoding_is_exact_up_to_the_last_finite_float16() -> None:
    # 65 520 is the first value float16 rounds to inf; 65 519 still rounds to 65 504.
    table = P.integer_encoding(65_520, 1, dtype=torch.float16)
    assert bool(torch.isfinite(table).all()) and float(table.max()) == 65504.0
    with pytest.raises(ValueError, match=r"overflows torch\.float16"):
        P.integer_encoding(65_521, 1, dtype=torch.float16)
    with pytest.raises(ValueError, match=r"scale = 6\.5536e\+06 overflows"):
        P.integer_encoding(2, 1, scale=65536 * 100.0, dtype=torch.float16)


def test_alibi_bias_in_float16_past_its_range_gives_the_attention_of_float64() -> None:
    # Documented result: biases below −65 504 become −inf in float16; exp of either is 0, so the
    # attention is that of the float64 bias (and the key at distance 0 keeps bias 0).
    n_heads, k_len = 8, 140_000
    half = P.alibi_bias(n_heads, 1, k_len, dtype=torch.float16)[:, 0]
    exact = P.alibi_bias(n_heads, 1, k_len, dtype=torch.float64)[:, 0]
    overflowed = torch.isinf(half)
    assert bool(overflowed.any()) and not bool(torch.isinf(exact).any())
    assert bool((exact[overflowed] < -65504).all())  # only the biases past float16's range
    assert bool((half[:, -1] == 0).all())  # the query's own key
    weights_half = torch.softmax(half.double(), dim=-1)
    weights_exact = torch.softmax(exact, dim=-1)
    assert float(weights_exact[overflowed].max()) == 0.0
    torch.testing.assert_close(weights_half, weights_exact, rtol=2e-3, atol=1e-6)


@given(st.floats(min_value=1.0, max_value=1e300), st.floats(min_value=1e-3, max_value=1e3))
def test_rope_angles_are_finite_or_refused(position: float, frequency: float) -> None:
    positions = torch.tensor([0.0, position], dtype=torch.float64)
    freq = torch.tensor([frequency], dtype=torch.float64)
    if math.isinf(position * frequency):
        with pytest.raises(ValueError, match="overflow float64"):
            P.rope_angles(positions, freq)
    else:
        assert bool(torch.isfinite(P.rope_angles(positions, freq)).all())
