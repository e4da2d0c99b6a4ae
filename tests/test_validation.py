"""Every public function rejects bad arguments with an error naming the parameter."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import posenc_lib as P
from posenc_lib import conversion as CV
from posenc_lib import permutation as PM
from posenc_lib import pitfalls as PF
from posenc_lib import properties as PR
from posenc_lib import tables as TB
from posenc_lib._validation import MAX_ELEMENTS, check_size
from posenc_lib.viz.attention import attention_heatmap
from posenc_lib.viz.heatmap import heatmap_static_rows
from posenc_lib.viz.offset import rope_offset_figure
from posenc_lib.viz.spectrum import scaled_inv_freq
from posenc_lib.viz.spiral import default_pairs

X = torch.zeros(2, 3, 8)
Q = torch.zeros(1, 4, 8)
NaN = float("nan")

# (call, exception, regex the message must match)
CASES: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    # dim
    ("odd dim", lambda: P.rope_inv_freq(7), ValueError,
     r"dim must be a positive even integer, got 7"),
    ("zero dim", lambda: P.sinusoidal_table(3, 0), ValueError, r"dim must be a positive even"),
    ("negative dim", lambda: P.rope_decay_bound(-4), ValueError, r"dim must be a positive even"),
    ("float dim", lambda: P.rope_inv_freq(8.0), TypeError, r"dim must be .*got 8\.0 \(float\)"),
    ("bool dim", lambda: P.sinusoidal_table(3, True), TypeError, r"dim must be .*\(bool\)"),
    ("odd dim matrix", lambda: P.rope_rotation_matrix(1.0, 5), ValueError, r"dim must be"),
    ("odd dim perm", lambda: P.interleaved_to_half_permutation(3), ValueError, r"dim must be"),
    ("odd dim module", lambda: P.RotaryEmbedding(9), ValueError, r"dim must be"),
    ("odd dim pe module", lambda: P.SinusoidalPositionalEncoding(5), ValueError, r"dim must be"),
    ("ntk dim 2", lambda: P.ntk_inv_freq(2, 1e4, 2.0), ValueError, r"dim must be an even .*>= 4"),
    ("dynamic dim 2", lambda: P.dynamic_ntk_inv_freq(2, 1e4, 2.0, 10, 5), ValueError,
     r"dim must be an even integer >= 4"),
    ("scheme dim 0", lambda: P.integer_encoding(3, 0), ValueError,
     r"dim must be a positive integer"),
    ("binary dim 0", lambda: P.binary_encoding(1, 0), ValueError, r"dim must be a positive"),
    ("similarity odd dim", lambda: P.sinusoidal_similarity(3), ValueError, r"dim must be"),
    # base
    ("negative base", lambda: P.rope_inv_freq(8, -1.0), ValueError,
     r"base must be a finite number > 0, got -1\.0"),
    ("zero base", lambda: P.sinusoidal_table(3, 4, 0.0), ValueError, r"base must be .*> 0"),
    ("inf base", lambda: P.rope_inv_freq(8, math.inf), ValueError, r"base must be a finite"),
    ("nan base", lambda: P.rope_decay_bound(8, NaN), ValueError, r"base must be a finite"),
    ("string base", lambda: P.rope_inv_freq(8, "1e4"), TypeError, r"base must be a finite"),
    ("base in apply", lambda: P.apply_rope_half(X, base=-2.0), ValueError, r"base must be"),
    ("base 1 yarn", lambda: P.yarn_inv_freq(8, 1.0, 2.0, 64), ValueError, r"base must be .*!= 1"),
    # lengths
    ("negative seq_len", lambda: P.sinusoidal_table(-1, 4), ValueError,
     r"seq_len must be a non-negative integer, got -1"),
    ("negative seq_len scheme", lambda: P.normalized_encoding(-2, 4), ValueError, r"seq_len"),
    ("negative q_len", lambda: P.alibi_bias(2, -1), ValueError, r"q_len must be a non-negative"),
    ("k_len < q_len", lambda: P.alibi_bias(2, 5, 3), ValueError,
     r"k_len must be >= q_len = 5, got k_len = 3"),
    ("mask k_len < seq_len", lambda: P.causal_mask(4, 2), ValueError, r"k_len must be >= seq_len"),
    ("negative mask len", lambda: P.causal_mask(-3), ValueError, r"seq_len must be"),
    ("negative max_distance", lambda: P.rope_decay_bound(8, max_distance=-1), ValueError,
     r"max_distance must be a non-negative integer"),
    ("float max_len", lambda: P.SinusoidalPositionalEncoding(8, max_len=10.5), TypeError,
     r"max_len must be a positive integer"),
    ("dynamic seq_len", lambda: P.dynamic_ntk_inv_freq(8, 1e4, 2.0, -1, 16), ValueError,
     r"seq_len must be a non-negative"),
    ("dynamic max_position", lambda: P.dynamic_ntk_inv_freq(8, 1e4, 2.0, 10, 0), ValueError,
     r"max_position must be a positive integer"),
    ("yarn original", lambda: P.yarn_inv_freq(8, 1e4, 2.0, 0), ValueError,
     r"original_max_position must be a positive integer"),
    ("llama3 original", lambda: P.llama3_inv_freq(8, 1e4, 2.0, -5), ValueError,
     r"original_max_position must be a positive"),
    # positions
    ("2-D positions", lambda: P.apply_rope_half(X, torch.zeros(3, 1)), ValueError,
     r"positions must be 1-D with shape \(seq,\), got shape \(3, 1\)"),
    ("short positions", lambda: P.apply_rope_interleaved(X, torch.arange(2)), ValueError,
     r"positions must have length seq = 3 .*got length 2"),
    ("long positions", lambda: P.apply_rope_complex(X, torch.arange(4)), ValueError,
     r"positions must have length seq = 3"),
    ("nan position", lambda: P.rope_angles(torch.tensor([0.0, NaN]), P.rope_inv_freq(4)),
     ValueError, r"positions must be finite"),
    ("complex positions", lambda: P.apply_rope_half(X, torch.zeros(3, dtype=torch.complex64)),
     TypeError, r"positions must hold integers or real floats"),
    ("string positions", lambda: P.rope_angles("012", P.rope_inv_freq(4)), TypeError,
     r"positions must be a 1-D torch.Tensor"),
    ("table positions", lambda: P.sinusoidal_table(3, 4, positions=torch.arange(2)), ValueError,
     r"positions must have length seq = 3"),
    # inv_freq
    ("inv_freq length", lambda: P.apply_rope_half(X, inv_freq=torch.ones(3)), ValueError,
     r"inv_freq must have length dim // 2 = 4, got length 3"),
    ("inv_freq 2-D", lambda: P.rope_angles(torch.arange(3), torch.ones(2, 2)), ValueError,
     r"inv_freq must be 1-D"),
    ("inv_freq list", lambda: P.wavelengths([1.0, 2.0]), TypeError, r"inv_freq must be a 1-D"),
    ("inv_freq inf", lambda: P.rope_decay_bound(4, inv_freq=torch.tensor([1.0, math.inf])),
     ValueError, r"inv_freq must be finite"),
    # heads
    ("zero heads", lambda: P.alibi_slopes(0), ValueError,
     r"n_heads must be a positive integer \(>= 1\), got 0"),
    ("negative heads", lambda: P.alibi_bias(-2, 3), ValueError, r"n_heads must be a positive"),
    ("float heads", lambda: P.alibi_slopes(4.0), TypeError, r"n_heads must be"),
    # scaling factors
    ("factor < 1 pi", lambda: P.pi_inv_freq(8, 1e4, 0.5), ValueError,
     r"factor must be a finite number >= 1, got 0\.5"),
    ("factor < 1 ntk", lambda: P.ntk_inv_freq(8, 1e4, 0.9), ValueError, r"factor must be"),
    ("factor < 1 dynamic", lambda: P.dynamic_ntk_inv_freq(8, 1e4, 0.0, 10, 5), ValueError,
     r"factor must be"),
    ("factor < 1 yarn", lambda: P.yarn_inv_freq(8, 1e4, 0.5, 64), ValueError, r"factor must be"),
    ("factor < 1 llama3", lambda: P.llama3_inv_freq(8, 1e4, 0.25, 64), ValueError,
     r"factor must be"),
    ("factor nan", lambda: P.pi_inv_freq(8, 1e4, NaN), ValueError, r"factor must be a finite"),
    ("factor bool", lambda: P.pi_inv_freq(8, 1e4, True), TypeError, r"factor must be"),
    ("low > high", lambda: P.llama3_inv_freq(8, 1e4, 8.0, 64, 4.1, 4.0), ValueError,
     r"low_freq_factor must be <= high_freq_factor"),
    ("low >> high", lambda: P.llama3_inv_freq(8, 1e4, 8.0, 64, 5.0, 2.0), ValueError,
     r"low_freq_factor must be <= high_freq_factor"),
    ("low <= 0", lambda: P.llama3_inv_freq(8, 1e4, 8.0, 64, 0.0, 2.0), ValueError,
     r"low_freq_factor must be a finite number > 0"),
    ("beta order", lambda: P.yarn_inv_freq(8, 1e4, 2.0, 64, 1.0, 32.0), ValueError,
     r"beta_fast must be >= beta_slow"),
    ("beta sign", lambda: P.yarn_inv_freq(8, 1e4, 2.0, 64, 32.0, -1.0), ValueError,
     r"beta_slow must be a finite number > 0"),
    # x
    ("list x", lambda: P.apply_rope_half([[1.0, 2.0]]), TypeError,
     r"x must be a torch.Tensor, got .*\(list\)"),
    ("int x", lambda: P.apply_rope_interleaved(torch.zeros(3, 4, dtype=torch.int64)), TypeError,
     r"x must have a floating-point dtype"),
    ("complex x", lambda: P.apply_rope_complex(torch.zeros(3, 4, dtype=torch.complex64)),
     TypeError, r"x must have a floating-point dtype"),
    ("1-D x", lambda: P.apply_rope_half(torch.zeros(4)), ValueError,
     r"x must have shape \(\.\.\., seq, dim\)"),
    ("odd last dim", lambda: P.apply_rope_half(torch.zeros(3, 5)), ValueError,
     r"x.shape\[-1\] \(dim\) must be a positive even integer, got 5"),
    ("rotate_half odd", lambda: P.rotate_half(torch.zeros(3)), ValueError, r"x.shape\[-1\]"),
    ("module int q", lambda: P.RotaryEmbedding(8)(Q.long(), Q.long()), TypeError,
     r"q must have a floating-point dtype"),
    # attention
    ("q/k feature mismatch", lambda: P.attention(Q, torch.zeros(1, 4, 6), Q), ValueError,
     r"q and k must have the same feature size d"),
    ("k/v length mismatch", lambda: P.attention(Q, Q, torch.zeros(1, 5, 8)), ValueError,
     r"k and v must have the same length k_len"),
    ("batch mismatch", lambda: P.attention(torch.zeros(2, 4, 8), torch.zeros(3, 4, 8), Q),
     ValueError, r"leading \(batch/head\) dimensions of q, k and v must broadcast"),
    ("dtype mismatch", lambda: P.attention(Q, Q.double(), Q), TypeError,
     r"q, k and v must share a dtype"),
    ("int v", lambda: P.attention(Q, Q, Q.long()), TypeError, r"v must have a floating-point"),
    ("mask not tensor", lambda: P.attention(Q, Q, Q, mask=[[True]]), TypeError,
     r"mask must be a bool torch.Tensor"),
    ("bias int", lambda: P.attention(Q, Q, Q, bias=torch.zeros(4, 4, dtype=torch.int64)),
     TypeError, r"bias must have a floating-point dtype"),
    # misc
    ("dtype int", lambda: P.sinusoidal_table(3, 4, dtype=torch.int64), TypeError,
     r"dtype must be a floating-point torch.dtype"),
    ("convention", lambda: P.rope_cos_sin(torch.arange(2), P.rope_inv_freq(4), convention="x"),
     ValueError, r"convention must be one of 'half', 'interleaved'"),
    ("frequency method", lambda: P.sinusoidal_frequencies(4, method="log"), ValueError,
     r"method must be one of 'power', 'exp_log'"),
    ("dropout", lambda: P.SinusoidalPositionalEncoding(8, dropout=1.5), ValueError,
     r"dropout must be a probability in \[0, 1\]"),
    ("scale", lambda: P.integer_encoding(3, 2, scale=0.0), ValueError,
     r"scale must be a finite number > 0"),
    ("position nan", lambda: P.rope_rotation_matrix(NaN, 4), ValueError,
     r"position must be a finite real number"),
    ("offset string", lambda: P.sinusoidal_shift_matrix("1", 4), TypeError,
     r"offset must be a finite real number"),
    ("causal flag", lambda: P.alibi_bias(2, 3, causal=1), TypeError, r"causal must be a bool"),
    ("attention scaling", lambda: P.RotaryEmbedding(8, attention_scaling=0.0), ValueError,
     r"attention_scaling must be a finite number > 0"),
]


@pytest.mark.parametrize(("call", "error", "match"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_bad_argument_raises_naming_the_parameter(
    call: Callable[[], Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        call()


def test_integer_tensors_and_numpy_style_ints_are_accepted_as_dims() -> None:
    assert P.rope_inv_freq(torch.tensor(8)).shape == (4,)
    assert P.alibi_slopes(torch.tensor(4, dtype=torch.int32)).shape == (4,)


def test_positions_may_be_python_sequences() -> None:
    x = torch.randn(3, 4, dtype=torch.float64)
    torch.testing.assert_close(P.apply_rope_half(x, [0, 1, 2]), P.apply_rope_half(x))
    torch.testing.assert_close(P.apply_rope_half(x, range(3)), P.apply_rope_half(x))


# --- issue 14: absurd sizes fail at once, errors name what the caller passed ---------------------

T8 = P.sinusoidal_table(8, 8)

FAST_FAILURES: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    # one size policy: refused before allocating, naming the parameter
    ("dim 2**70", lambda: P.rope_inv_freq(2**70), ValueError,
     r"dim must be at most 134217728 .*MAX_ELEMENTS"),
    ("seq_len 2**70", lambda: P.sinusoidal_table(2**70, 8), ValueError, r"seq_len must be at most"),
    ("max_len 2**70", lambda: P.SinusoidalPositionalEncoding(8, max_len=2**70), ValueError,
     r"max_len must be at most"),
    ("max_distance 2**70", lambda: P.rope_decay_bound(8, max_distance=2**70), ValueError,
     r"max_distance must be at most"),
    ("module dim 2**70", lambda: P.RotaryEmbedding(2**70), ValueError, r"dim must be at most"),
    ("binary dim 2**70", lambda: P.binary_encoding(4, 2**70), ValueError, r"dim must be at most"),
    ("scheme seq_len 2**70", lambda: P.integer_encoding(2**70, 4), ValueError, r"seq_len must be"),
    ("table 10**12", lambda: P.sinusoidal_table(10**6, 10**6), ValueError,
     r"seq_len = 1000000 × dim = 1000000 = 1000000000000 elements.*reduce seq_len, dim"),
    ("mask 10**14", lambda: P.causal_mask(10**7), ValueError, r"seq_len = 10000000 × k_len"),
    ("pe module 10**9", lambda: P.SinusoidalPositionalEncoding(512, max_len=10**9), ValueError,
     r"max_len must be at most"),
    ("pe module product", lambda: P.SinusoidalPositionalEncoding(4096, max_len=10**6), ValueError,
     r"max_len = 1000000 × dim = 4096"),
    ("rotation matrix", lambda: P.rope_rotation_matrix(1.0, 100_000), ValueError,
     r"dim = 100000 × dim = 100000"),
    ("shift matrix", lambda: P.sinusoidal_shift_matrix(1.0, 100_000), ValueError,
     r"dim = 100000 × dim = 100000"),
    ("decay bound work", lambda: P.rope_decay_bound(128, max_distance=10**7), ValueError,
     r"max_distance \+ 1 = 10000001 × dim // 2 = 64.*reduce max_distance, dim"),
    ("similarity", lambda: P.sinusoidal_similarity(10**7, max_distance=10**3), ValueError,
     r"reduce max_distance, dim"),
    ("angles", lambda: P.rope_angles(torch.arange(10**6), torch.ones(10**3)), ValueError,
     r"len\(positions\) = 1000000 × len\(inv_freq\) = 1000"),
    ("cos_sin tables", lambda: P.rope_cos_sin(torch.arange(10**6), torch.ones(10**3)), ValueError,
     r"reduce positions, inv_freq"),
    ("attention scores", lambda: P.attention(torch.zeros(10**5, 2), torch.zeros(10**5, 2),
                                             torch.zeros(10**5, 2)), ValueError,
     r"q.shape\[-2\] \(q_len\) = 100000 × k.shape\[-2\] \(k_len\) = 100000"),
    # scaling: blame the argument that overflows
    ("ntk factor 1e154", lambda: P.ntk_inv_freq(4, 1e4, 1e154), ValueError,
     r"factor = 1e\+154 is too large"),
    ("ntk factor 1e200", lambda: P.ntk_inv_freq(4, 1e4, 1e200), ValueError,
     r"factor = 1e\+200 is too large"),
    ("dynamic factor", lambda: P.dynamic_ntk_inv_freq(4, 1e4, 1e200, 10**6, 16), ValueError,
     r"effective factor \(from factor and seq_len / max_position\)"),
    ("yarn huge beta", lambda: P.yarn_inv_freq(8, 1e4, 2.0, 64, 1e308), None, ""),
    ("llama3 huge context", lambda: P.llama3_inv_freq(8, 1e4, 2.0, 2**70), None, ""),
    # rope_cos_sin
    ("cos_sin scale 0", lambda: P.rope_cos_sin(torch.arange(3), P.rope_inv_freq(4), scale=0),
     ValueError, r"scale must be a finite number > 0, got 0"),
    ("cos_sin scale -1", lambda: P.rope_cos_sin(torch.arange(3), P.rope_inv_freq(4), scale=-1),
     ValueError, r"scale must be a finite number > 0, got -1"),
    ("cos_sin device", lambda: P.rope_cos_sin(torch.arange(3), P.rope_inv_freq(4),
                                              device="bogus"),
     ValueError, r"device must be a torch.device or a device string .*'bogus'"),
    ("cos_sin device type", lambda: P.rope_cos_sin(torch.arange(3), P.rope_inv_freq(4),
                                                   device=1.5),
     TypeError, r"device must be a torch.device"),
    # properties: name what the caller passed
    ("one-row neighbours", lambda: PR.neighbour_distances(T8[:1]), ValueError,
     r"table must have at least 2 rows \(positions\), got 1"),
    ("excerpt of a narrow table", lambda: TB.table_excerpt(T8[:, :4]), ValueError,
     r"table must have at least first \+ last = 4 \+ 2 = 6 columns"),
    ("pairwise distances", lambda: PR.min_pairwise_distance(torch.zeros(10**5, 1)), ValueError,
     r"table.shape\[0\] = 100000 × table.shape\[0\] = 100000"),
    ("gaps dim", lambda: PR.same_offset_gaps(P.normalized_encoding, 1, [4], 2**70), ValueError,
     r"dim must be at most"),
    # figure helpers
    ("static rows float", lambda: heatmap_static_rows(2.5), TypeError,
     r"seq_len must be an integer, got 2\.5"),
    ("static rows negative", lambda: heatmap_static_rows(-3), ValueError,
     r"seq_len must be an integer in \[1, 4096\], got -3"),
    ("complex weights",
     lambda: attention_heatmap(torch.ones(2, 2, dtype=torch.complex64), ["a", "b"]),
     TypeError, r"weights must hold real numbers"),
    ("scaled_inv_freq train_len", lambda: scaled_inv_freq("yarn", 8, 1e4, 2.0, 0), ValueError,
     r"train_len must be a positive integer \(>= 1\), got 0"),
    ("offset figure m", lambda: rope_offset_figure(m=2**70), ValueError,
     r"m must be an integer in"),
    ("offset figure seed", lambda: rope_offset_figure(seed=2**70), ValueError,
     r"seed must be an integer in \[0, 9223372036854775807\]"),
    ("default pairs", lambda: default_pairs(2**70), ValueError, r"dim must be an integer in"),
    # toy modules
    ("attention dtypes", lambda: PM.TinySelfAttention(4)(torch.zeros(3, 4)), TypeError,
     r"x must have the weights' dtype torch.float64, got x of dtype torch.float32"),
    ("feed-forward dtypes", lambda: PM.TinyFeedForward(4)(torch.zeros(3, 4)), TypeError,
     r"x must have the weights' dtype"),
    ("integer toy attention", lambda: PM.TinySelfAttention(4, dtype=torch.int64), TypeError,
     r"dtype must be a floating-point torch.dtype"),
    ("integer toy embedding", lambda: PM.ToyEmbedding(["a"], 4, dtype=torch.int32), TypeError,
     r"dtype must be a floating-point torch.dtype"),
    ("integer toy encoder", lambda: PM.TinyEncoder(["a"], 4, dtype=torch.int64), TypeError,
     r"dtype must be a floating-point torch.dtype"),
    ("toy seed", lambda: PM.TinySelfAttention(4, seed=2**70), ValueError,
     r"seed must be an integer in \[-2\*\*63, 2\*\*64\)"),
    ("toy layers", lambda: PM.TinyEncoder(["a"], 4, n_layers=10**6), ValueError,
     r"n_layers must be at most 4096 .*MAX_PYTHON_ITEMS"),
    ("toy weights", lambda: PM.TinyFeedForward(4, hidden=10**8), ValueError,
     r"dim = 4 × hidden = 100000000"),
    ("permutation matrix", lambda: PM.permutation_matrix(list(range(10**5))), ValueError,
     r"len\(order\) = 100000 × len\(order\) = 100000"),
    # pitfalls and conversion build score matrices too
    ("buggy attention scores", lambda: PF.seed_attention_buggy(*[torch.zeros(10**5, 2)] * 3),
     ValueError, r"q.shape\[-2\] \(seq_q\) = 100000"),
    ("rope scores", lambda: CV.rope_scores(torch.zeros(10**5, 2), torch.zeros(10**5, 2)),
     ValueError, r"q.shape\[-2\] \(seq\) = 100000"),
    ("meta angles", lambda: PF.meta_rope_angles_float32(torch.arange(10**6), 10**3), ValueError,
     r"len\(positions\) = 1000000 × dim // 2 = 500"),
]


@pytest.mark.parametrize(("call", "error", "match"), [c[1:] for c in FAST_FAILURES],
                         ids=[c[0] for c in FAST_FAILURES])
def test_issue_14_inputs_fail_fast_and_clearly(
    call: Callable[[], Any], error: type[Exception] | None, match: str
) -> None:
    if error is None:  # used to raise a bare OverflowError / math domain error: now computed
        result = call()
        result = result[0] if isinstance(result, tuple) else result
        assert bool(torch.isfinite(result).all())
        return
    with pytest.raises(error, match=match):
        call()


def test_binary_encoding_with_a_huge_dim_is_refused_at_once_not_after_computing_2_to_the_dim(
) -> None:
    # 2**dim for dim = 10**8 is a 12 MB integer that takes seconds; the size check comes first.
    with pytest.raises(ValueError, match=r"seq_len = 4 × dim = 100000000|dim must be at most"):
        P.binary_encoding(4, 10**8 * 2)
    assert P.binary_encoding(4, 100).shape == (4, 100)  # a wide code is fine


@given(
    st.one_of(st.integers(0, 300), st.integers(1, 2**40)),
    st.one_of(st.integers(1, 150), st.integers(1, 2**20)).map(lambda n: 2 * n),
)
def test_the_size_policy_refuses_exactly_the_tables_above_the_limit(seq_len: int, dim: int) -> None:
    # Refused before allocating: only products <= MAX_ELEMENTS may be built (and nothing large is
    # built here: accepted sizes above 10**5 elements are only checked, not built).
    if seq_len * dim > MAX_ELEMENTS or seq_len > MAX_ELEMENTS or dim > MAX_ELEMENTS:
        with pytest.raises(ValueError, match=r"seq_len|dim"):
            P.sinusoidal_table(seq_len, dim)
    elif seq_len * dim <= 10**5:
        assert P.sinusoidal_table(seq_len, dim).shape == (seq_len, dim)
    else:
        assert check_size(("seq_len", seq_len), ("dim", dim)) == seq_len * dim
