"""The numbers chapters 2 and 3 measure: how an encoding table fares against the wish list.

Every function takes a table ``(seq, dim)`` (one row per position, from any scheme in
:mod:`posenc_lib.schemes` or :mod:`posenc_lib.sinusoidal`) or the sinusoid's parameters, and returns
a number or a tensor of numbers. The chapters quote these numbers instead of adjectives:
"unbounded" becomes "the largest value is 999 at ``L = 1000``", "jumpy" becomes "neighbour steps
range from 1 to 3.16". Showing them as tables is the job of :mod:`posenc_lib.tables`.

Distances are Euclidean and computed in float64.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from decimal import Decimal, localcontext

import torch

from ._validation import (
    check_base,
    check_dim,
    check_dtype,
    check_float_tensor,
    check_int,
    check_inv_freq,
    check_length,
    check_positions,
    check_positive,
    check_positive_int,
    check_real,
    check_seed,
    check_sequence,
    check_size,
)
from .schemes import NoRowError
from .sinusoidal import sinusoidal_frequencies, sinusoidal_table

__all__ = [
    "SCORECARD_CRITERIA",
    "closest_pair_relative",
    "commuting_part",
    "diagonal_spread",
    "div_term_errors",
    "div_term_exp_log",
    "div_term_max_abs_difference",
    "div_term_power",
    "div_term_reference",
    "dot_product_spread",
    "dot_products_at_offset",
    "float32_angle_errors",
    "frequency_octave_rise",
    "frequency_similarity",
    "learn_offset_head",
    "length_dependence",
    "logit_terms",
    "max_abs_value",
    "measure_scheme",
    "min_pairwise_distance",
    "nearest_row_distances",
    "neighbour_distances",
    "octave_means",
    "octave_rise",
    "offset_distances",
    "offset_head_accuracy",
    "offset_head_logits",
    "offset_readout_accuracy",
    "position_term_along_offset",
    "same_offset_gaps",
    "score_spread",
    "scorecard",
]


def _table(
    table: object, name: str = "table", *, min_rows: int = 0, min_cols: int = 0
) -> torch.Tensor:
    """A 2-D floating table ``(seq, dim)`` as float64."""
    table = check_float_tensor(table, name, min_ndim=2)
    if table.ndim != 2:
        raise ValueError(f"{name} must have shape (seq, dim), got shape {tuple(table.shape)}")
    if table.shape[0] < min_rows:
        raise ValueError(
            f"{name} must have at least {min_rows} rows (positions), got {table.shape[0]} "
            f"(shape {tuple(table.shape)})"
        )
    if table.shape[1] < min_cols:
        raise ValueError(
            f"{name} must have at least {min_cols} column(s) (dim >= {min_cols}), got "
            f"{table.shape[1]} (shape {tuple(table.shape)})"
        )
    return table.to(torch.float64)


# ------------------------------------------------------------------ the wish list, measured


def max_abs_value(table: torch.Tensor) -> float:
    """Largest ``|entry|`` of a table ``(seq, dim)``: boundedness in one number."""
    t = _table(table, min_rows=1, min_cols=1)
    return float(t.abs().max())


def neighbour_distances(table: torch.Tensor) -> torch.Tensor:
    """``‖PE(m+1) − PE(m)‖`` for ``m = 0 … seq−2``: the step between consecutive positions.

    Parameters
    ----------
    table
        ``(seq, dim)`` with ``seq >= 2`` (one row has no neighbour).

    Returns
    -------
    torch.Tensor
        ``(seq − 1,)`` float64.
    """
    return offset_distances(_table(table, min_rows=2), 1)


def offset_distances(table: torch.Tensor, offset: int) -> torch.Tensor:
    """``‖PE(m+k) − PE(m)‖`` for every ``m`` with ``m + k`` in the table (``k = offset ≥ 0``).

    A translation-invariant encoding gives the same number for every ``m``.

    Returns
    -------
    torch.Tensor
        ``(seq − k,)`` float64.
    """
    t = _table(table)
    k = check_int(offset, "offset", minimum=0, what="an integer >= 0")
    if k >= t.shape[0]:
        raise ValueError(f"offset must be < seq = {t.shape[0]}, got {k}")
    return (t[k:] - t[: t.shape[0] - k]).norm(dim=-1)


def dot_products_at_offset(table: torch.Tensor, offset: int) -> torch.Tensor:
    """``PE(m) · PE(m+k)`` for every ``m`` with both positions in the table (``k`` may be < 0).

    Returns
    -------
    torch.Tensor
        ``(seq − |k|,)`` float64, indexed by the smaller of the two positions.
    """
    t = _table(table)
    k = check_int(offset, "offset")
    if abs(k) >= t.shape[0]:
        raise ValueError(f"|offset| must be < seq = {t.shape[0]}, got {k}")
    a, b = (t[: t.shape[0] - k], t[k:]) if k >= 0 else (t[-k:], t[: t.shape[0] + k])
    return (a * b).sum(dim=-1)


def min_pairwise_distance(table: torch.Tensor) -> float:
    """Smallest ``‖PE(m) − PE(n)‖`` over ``m ≠ n``: zero means two positions share a code.

    ``inf`` for a table with fewer than two rows. Pass a float64 table when rows may be nearly
    equal: above 25 rows ``torch.cdist`` computes ``‖a‖² + ‖b‖² − 2a·b``, which in float32 loses
    distances far below the rows' norm to cancellation.
    """
    t = _table(table)
    if t.shape[0] < 2:
        return math.inf
    check_size(("table.shape[0]", t.shape[0]), ("table.shape[0]", t.shape[0]),
               what="the (seq, seq) distance matrix")
    dist = torch.cdist(t, t)
    dist.fill_diagonal_(math.inf)
    return float(dist.min())


def nearest_row_distances(reference: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
    """For each row of ``query``, the distance to the closest row of ``reference``.

    Used for extrapolation: how far is a position never seen in training from every seen one?

    Parameters
    ----------
    reference
        ``(n_ref, dim)``, e.g. the table over the training positions.
    query
        ``(n_query, dim)``, e.g. the rows of positions beyond training.

    Returns
    -------
    torch.Tensor
        ``(n_query,)`` float64.
    """
    ref = _table(reference, "reference", min_rows=1)
    qry = _table(query, "query")
    if ref.shape[1] != qry.shape[1]:
        raise ValueError(
            f"reference and query must have the same dim, got {ref.shape[1]} and {qry.shape[1]}"
        )
    if qry.shape[0] == 0:
        return torch.zeros(0, dtype=torch.float64)
    check_size(("query.shape[0]", qry.shape[0]), ("reference.shape[0]", ref.shape[0]),
               what="the (n_query, n_ref) distance matrix")
    return torch.cdist(qry, ref).min(dim=-1).values


def same_offset_gaps(
    encoding: Callable[..., torch.Tensor],
    offset: int,
    lengths: Sequence[int],
    dim: int = 1,
    *,
    position: int = 0,
    dtype: torch.dtype | None = torch.float64,
) -> torch.Tensor:
    """``‖PE(position+k) − PE(position)‖`` in tables of different lengths ``L``.

    For an encoding that is consistent across lengths every entry is the same; the normalised
    encoding ``m/(L−1)`` gives a gap that shrinks like ``1/(L−1)``.

    Parameters
    ----------
    encoding
        ``encoding(seq_len, dim, dtype=dtype) -> (seq_len, dim)``, e.g. ``normalized_encoding``
        (called as ``encoding(seq_len, dim)`` when ``dtype`` is None).
    offset
        The offset ``k`` (>= 0).
    lengths
        Sequence lengths ``L`` to compare; each must exceed ``position + offset``.
    dim
        Feature dimension passed to ``encoding``.
    position
        The first position ``m`` (>= 0).
    dtype
        The dtype the tables are built in (default float64, so that the gaps carry no float32
        rounding); None leaves it to ``encoding``'s default.

    Returns
    -------
    torch.Tensor
        ``(len(lengths),)`` float64.
    """
    if not callable(encoding):
        raise TypeError("encoding must be callable as encoding(seq_len, dim)")
    kwargs = {} if dtype is None else {"dtype": check_dtype(dtype)}
    k = check_int(offset, "offset", minimum=0, what="an integer >= 0")
    p = check_int(position, "position", minimum=0, what="an integer >= 0")
    lengths = [check_length(n, "lengths[i]")
               for n in check_sequence(lengths, "lengths", of="int lengths", allow_str=False)]
    if not lengths:
        raise ValueError("lengths must not be empty")
    dim = check_positive_int(dim, "dim")
    for n in lengths:
        check_size(("lengths[i]", n), ("dim", dim), what="each (L, dim) table")
    gaps = []
    for n in lengths:
        if p + k >= n:
            raise ValueError(f"each length must exceed position + offset = {p + k}, got {n}")
        t = _table(encoding(n, dim, **kwargs))
        gaps.append(float((t[p + k] - t[p]).norm()))
    return torch.tensor(gaps, dtype=torch.float64)


def measure_scheme(table: torch.Tensor, *, offset: int = 1) -> dict[str, float]:
    """The wish-list numbers of one table ``(seq, dim)``, for a comparison table.

    Returns
    -------
    dict
        ``max_abs`` (boundedness), ``min_pair_distance`` (uniqueness), ``step_min`` /
        ``step_max`` (smallest and largest neighbour step: smoothness), and ``offset_spread``,
        the max minus min of ``‖PE(m+k) − PE(m)‖`` over ``m`` (0 for translation invariance).
    """
    t = _table(table, min_rows=2, min_cols=1)
    steps = neighbour_distances(t)
    at_k = offset_distances(t, offset)
    return {
        "max_abs": max_abs_value(t),
        "min_pair_distance": min_pairwise_distance(t),
        "step_min": float(steps.min()),
        "step_max": float(steps.max()),
        "offset_spread": float(at_k.max() - at_k.min()),
    }


# ------------------------------------------------------------------ the scorecard of chapter 2

#: Pass marks of :func:`scorecard`, one per measured column. Every column is unchanged by a
#: change of scale and by an orthogonal change of basis ``PE(m) → c·Q·PE(m)`` (it reads only row
#: norms, distances and dot products), so the scorecard judges the sinusoid and its rotations
#: alike, as the shift theorem of chapter 2 does.
#:
#: - ``length_dependence``: a position's code may not change with the sequence length: the
#:   largest change of a row, ``max_m ‖PE_L(m) − PE_L'(m)‖``, relative to the largest row norm
#:   (float64 rounding allowed);
#: - ``dot_product_spread``: ``PE(m)·PE(m+k)`` may not depend on ``m``, at the worst offset ``k``
#:   (float64 rounding allowed);
#: - ``norm_growth``: the largest row norm may at most double from ``L = seq_len`` to
#:   ``L = long_len`` (a heuristic: over the three decades ``10³ → 10⁶`` a norm growing like
#:   ``m^a`` grows about ``1000^a``-fold, more than 2-fold once ``a > log 2 / log 1000 ≈ 0.1``,
#:   while sines only, bounded by ``√d`` with norms that vary, grow about 1.2-fold; a table with
#:   no row at ``long_len − 1`` fails);
#: - ``closest_pair_relative``: the closest two codes differ by at least one bfloat16 rounding step
#:   (``2⁻⁷``) of the largest code's norm, or they may become equal when stored in bfloat16.
#:
#: Decay (wish 4) has no pass mark: :func:`octave_rise` measures it, but its verdict at ``d = 16``
#: depends on the base and hides pointwise rebounds (see its docstring).
SCORECARD_CRITERIA: dict[str, float] = {
    "length_dependence": 1e-12,
    "dot_product_spread": 1e-9,
    "norm_growth": 2.0,
    "closest_pair_relative": float(torch.finfo(torch.bfloat16).eps),
}


def _largest_row_norm(table: torch.Tensor, chunk: int = 1 << 16) -> float:
    """``max_m ‖table[m]‖`` in float64, ``chunk`` rows at a time (a float32 table stays float32)."""
    return max(
        float(table[i : i + chunk].to(torch.float64).norm(dim=-1).max())
        for i in range(0, table.shape[0], chunk)
    )


def length_dependence(
    encoding: Callable[..., torch.Tensor],
    seq_len: int,
    dim: int,
    *,
    short_len: int | None = None,
    relative: bool = False,
) -> float:
    """``max |PE_L(m)_j − PE_L'(m)_j|`` over ``m < L'`` and ``j``: the largest change of any entry.

    The maximum runs over the positions ``m < L'`` that both tables hold and every feature ``j``
    (an L∞ norm, not a row's vector norm). Zero when the code of a position does not depend on the
    length of the sequence it sits in (wish 1 of chapter 2); the normalised encoding
    ``m/(L − 1)`` gives a large number. With ``relative=True`` the number is divided by the
    largest row (L2) norm ``max_m ‖PE_L(m)‖`` of the longer table — largest entry change / largest
    row norm — so that it does not change when the table is scaled. :func:`scorecard`'s column
    of the same name is not this number: it takes the L2 norm of each row's change over the same
    largest row norm, which lies between this relative value and ``sqrt(dim)`` times it.

    Parameters
    ----------
    encoding
        ``encoding(seq_len, dim) -> (seq_len, dim)``.
    seq_len
        The longer length ``L`` (>= 2).
    dim
        Feature dimension passed to ``encoding``.
    short_len
        The shorter length ``L'`` (1 … ``L − 1``); default ``max(L // 10, 1)``.
    relative
        Divide by the largest row norm of the ``(L, dim)`` table (which must not be all zero).

    Returns
    -------
    float
        ``>= 0``; ``0.0`` exactly when the shared rows agree.

    Raises
    ------
    TypeError
        If ``encoding`` is not callable or ``relative`` is not a bool.
    ValueError
        If the lengths are out of range, or ``relative`` and the longer table is all zero.
    """
    if not callable(encoding):
        raise TypeError("encoding must be callable as encoding(seq_len, dim)")
    seq_len = check_int(seq_len, "seq_len", minimum=2, what="an integer >= 2")
    dim = check_positive_int(dim, "dim")
    check_size(("seq_len", seq_len), ("dim", dim), what="the (seq_len, dim) table")
    if short_len is None:
        short_len = max(seq_len // 10, 1)
    short_len = check_int(short_len, "short_len", minimum=1, what="an integer >= 1")
    if short_len >= seq_len:
        raise ValueError(f"short_len must be < seq_len = {seq_len}, got {short_len}")
    if not isinstance(relative, bool):
        raise TypeError(f"relative must be a bool, got {type(relative).__name__}")
    long_table = _table(encoding(seq_len, dim), "encoding(seq_len, dim)")
    short_table = _table(encoding(short_len, dim), "encoding(short_len, dim)")
    change = float((long_table[:short_len] - short_table).abs().max())
    if not relative:
        return change
    largest = float(long_table.norm(dim=-1).max())
    if largest == 0.0:
        raise ValueError("encoding(seq_len, dim) must not be all zeros when relative=True")
    return change / largest


def dot_product_spread(table: torch.Tensor, offset: int) -> float:
    """Spread of ``PE(m)·PE(m+r)`` over ``m``, relative to the mean ``‖PE(m)‖²``.

    ``(max_m − min_m) PE(m)·PE(m+r) / mean_m ‖PE(m)‖²``: zero when the dot product at offset
    ``r`` depends on ``r`` only — translation invariance of the *raw* encodings under the dot
    product. Attention compares projected vectors ``W_q(x + PE)`` and ``W_k(y + PE)``, and
    projections generally break it (measured in chapter 2's design map, analysed in chapter 3),
    which is what RoPE repairs. Dividing by the
    squared norm makes the number independent of the table's scale (``0.001·m`` scores as ``m``).

    Parameters
    ----------
    table
        ``(seq, dim)``, with at least ``|offset| + 1`` rows and not all zero.
    offset
        The offset ``r`` (the book's letter for ``m − n``).
    """
    t = _table(table)
    dots = dot_products_at_offset(t, offset)
    mean_sq = float((t * t).sum(dim=-1).mean())
    if mean_sq == 0.0:
        raise ValueError("table must not be all zeros (its mean squared norm divides the spread)")
    return float(dots.max() - dots.min()) / mean_sq


def diagonal_spread(table: torch.Tensor) -> float:
    """The worst :func:`dot_product_spread` over every offset ``r = 0 … seq − 1``.

    ``max_r (max_m − min_m) PE(m)·PE(m+r) / mean_m ‖PE(m)‖²``: the largest spread along a
    diagonal of the Gram matrix ``PE·PEᵀ``, relative to the mean squared norm. Zero exactly when
    every dot product depends on the offset only (translation invariance at every offset,
    including ``r = 0``: equal norms). A table can pass one offset and fail another: the sinusoid
    with its features permuted by a permutation chosen by ``m mod 5`` has no spread at ``r = 5``
    and a large one at ``r = 1``.

    Parameters
    ----------
    table : torch.Tensor
        ``(seq, dim)`` floating, ``seq <= 10 000`` (one ``(seq, seq)`` Gram matrix in float64),
        not all zero.

    Returns
    -------
    float
        The relative spread, ``>= 0``.

    Raises
    ------
    TypeError
        If ``table`` is not a floating tensor.
    ValueError
        If ``table`` is not 2-D, has no row or column, has more than 10 000 rows, or is all zero.
    """
    t = _table(table, min_rows=1, min_cols=1)
    if t.shape[0] > 10_000:
        raise ValueError(f"table must have at most 10000 rows (Gram matrix), got {t.shape[0]}")
    mean_sq = float((t * t).sum(dim=-1).mean())
    if mean_sq == 0.0:
        raise ValueError("table must not be all zeros (its mean squared norm divides the spread)")
    gram = t @ t.T
    worst = max(float(gram.diagonal(k).max() - gram.diagonal(k).min()) for k in range(len(gram)))
    return worst / mean_sq


def closest_pair_relative(table: torch.Tensor) -> float:
    """``min_{m≠n} ‖PE(m) − PE(n)‖ / max_m ‖PE(m)‖``: how distinct the closest codes are.

    A scale-free version of :func:`min_pairwise_distance`: the integer codes 998 and 999 are
    ``√d`` apart, but that is only 0.1 % of their length, and in bfloat16 they round to the same
    vector. ``inf`` for fewer than two rows.

    Parameters
    ----------
    table
        ``(seq, dim)``, not all zero.
    """
    t = _table(table)
    if t.shape[0] < 2:
        return math.inf
    largest = float(t.norm(dim=-1).max())
    if largest == 0.0:
        raise ValueError("table must not be all zeros")
    return min_pairwise_distance(t) / largest


def octave_rise(table: torch.Tensor) -> float:
    """The largest rise of the similarity's octave means: does far look more alike than near?

    The similarity at offset ``r`` is averaged over the first half of the table,
    ``g(r) = Σ_{m<M} PE(m)·PE(m+r) / Σ_{m<M} ‖PE(m)‖²`` with ``M = seq // 2`` and
    ``r = 0 … seq − M − 1`` (the same positions ``m`` at every ``r``, so ``g(0) = 1``); for a
    translation-invariant table it is ``PE(0)·PE(r) / ‖PE(0)‖²``. Its means over the octaves
    ``2^k ≤ r < 2^(k+1)`` that fit, ``k = 0 … K − 1`` with ``K = ⌊log₂(seq − M)⌋``, should fall
    (wish 4, decay); the result is the largest ``mean_(k+1) − mean_k``, relative to ``g(0)`` and
    so scale-free. Negative when every octave falls. It tests that the similarity does not climb
    back, not how fast it falls: a table whose similarity drops to about 0 at ``r = 1`` and stays
    there scores near 0.

    Two limits. Octave means hide pointwise rebounds: the 16-bit binary code scores below 0 at
    ``seq = 1000`` although its ``g(256)`` (0.89) exceeds its ``g(1)`` (0.78). And for a table
    that is not translation invariant, ``g`` averages ``PE(m)·PE(m+r)`` over positions, so its
    "decay" mixes positions with offsets.

    Parameters
    ----------
    table : torch.Tensor
        ``(seq, dim)`` floating, ``8 <= seq <= 20 000`` (at least two octaves), with rows
        ``0 … M − 1`` not all zero.

    Returns
    -------
    float
        The largest octave-to-octave rise of ``g``.

    Raises
    ------
    TypeError
        If ``table`` is not a floating tensor.
    ValueError
        If ``table`` is not 2-D, has fewer than 8 or more than 20 000 rows, no column, or its
        first ``M`` rows are all zero.
    """
    t = _table(table, min_rows=8, min_cols=1)
    seq = t.shape[0]
    if seq > 20_000:
        raise ValueError(f"table must have at most 20000 rows, got {seq}")
    half = seq // 2
    n_offsets = seq - half
    norm_sq = float((t[:half] * t[:half]).sum())
    if norm_sq == 0.0:
        raise ValueError(f"the first {half} rows of table must not all be zero (they divide g)")
    # g[r] = Σ_{m<M} PE(m)·PE(m + r) / Σ_{m<M} ‖PE(m)‖², one offset at a time: (seq − M,)
    g = torch.stack([(t[:half] * t[r : r + half]).sum() for r in range(n_offsets)]) / norm_sq
    octaves = n_offsets.bit_length() - 1  # K = ⌊log₂(seq − M)⌋ >= 2
    means = torch.stack([g[2**k : 2 ** (k + 1)].mean() for k in range(octaves)])
    return float((means[1:] - means[:-1]).max())


def frequency_similarity(inv_freq: torch.Tensor, num_offsets: int) -> torch.Tensor:
    """``g(r) = mean_i cos(r·θ_i)``: the similarity of equal-weight sine–cosine pairs at offset r.

    For a table of pairs ``(sin mθ_i, cos mθ_i)``, ``PE(m)·PE(m+r) / ‖PE(m)‖²`` equals ``g(r)`` at
    every position ``m``; this is its closed form, with no table built.

    Parameters
    ----------
    inv_freq : torch.Tensor
        ``(n_pairs,)`` the frequencies ``θ_i`` (radians per position), finite, at least one.
    num_offsets : int
        How many offsets, ``r = 0 … num_offsets − 1``; ``>= 1``.

    Returns
    -------
    torch.Tensor
        ``(num_offsets,)`` float64, ``g(0) = 1``.

    Raises
    ------
    TypeError
        If ``inv_freq`` is not a real tensor or ``num_offsets`` not an integer.
    ValueError
        If ``inv_freq`` is not 1-D, empty or not finite, or ``num_offsets < 1`` or
        ``num_offsets · n_pairs`` exceeds the size limit.
    """
    theta = check_inv_freq(inv_freq, name="inv_freq")
    if theta.numel() == 0:
        raise ValueError("inv_freq must hold at least one frequency, got shape (0,)")
    num_offsets = check_positive_int(num_offsets, "num_offsets")
    check_size(("num_offsets", num_offsets), ("inv_freq", theta.numel()))
    offsets = torch.arange(num_offsets, dtype=torch.float64)
    return torch.cos(offsets[:, None] * theta).mean(-1)  # (num_offsets,)


def octave_means(g: torch.Tensor, octaves: int) -> torch.Tensor:
    """The mean of ``g`` over each octave of offsets ``2^k ≤ r < 2^(k+1)``, ``k < octaves``.

    Parameters
    ----------
    g : torch.Tensor
        ``(n,)`` a similarity indexed by offset ``r = 0 … n − 1``, ``n >= 2^octaves``.
    octaves : int
        The number of octaves, ``>= 1``.

    Returns
    -------
    torch.Tensor
        ``(octaves,)`` float64.

    Raises
    ------
    TypeError
        If ``g`` is not a floating tensor or ``octaves`` not an integer.
    ValueError
        If ``g`` is not 1-D, ``octaves < 1``, or ``g`` is shorter than ``2^octaves``.
    """
    g = check_float_tensor(g, "g")
    if g.ndim != 1:
        raise ValueError(f"g must be 1-D with shape (n,), got shape {tuple(g.shape)}")
    octaves = check_int(octaves, "octaves", minimum=1)
    if g.shape[0] < 2**octaves:
        raise ValueError(
            f"g must have at least 2^octaves = {2**octaves} offsets for octaves = {octaves}, "
            f"got {g.shape[0]}"
        )
    g = g.to(torch.float64)
    return torch.stack([g[2**k : 2 ** (k + 1)].mean() for k in range(octaves)])


def frequency_octave_rise(inv_freq: torch.Tensor, max_offset: int = 2048) -> float:
    """The largest climb of ``g``'s octave means over offsets ``r < max_offset``, from frequencies.

    :func:`octave_rise` for equal-weight sine–cosine pairs, in closed form: ``g`` is
    :func:`frequency_similarity`, its means over the octaves ``2^k ≤ r < 2^(k+1)``,
    ``k < log₂ max_offset``, should fall (wish 4); the result is the largest
    ``mean_(k+1) − mean_k``, negative when every octave falls. It depends on the window: a base
    that falls at every octave up to ``max_offset = 2 048`` can climb back before 32 768.

    Parameters
    ----------
    inv_freq : torch.Tensor
        ``(n_pairs,)`` the frequencies ``θ_i``, finite, at least one.
    max_offset : int
        The offset window, a power of two ``>= 4`` (at least two octaves); default 2 048.

    Returns
    -------
    float
        The largest octave-to-octave rise of ``g`` in the window.

    Raises
    ------
    TypeError
        If ``inv_freq`` is not a real tensor or ``max_offset`` not an integer.
    ValueError
        If ``inv_freq`` is not 1-D, empty or not finite, or ``max_offset`` is not a power of two
        in ``[4, MAX_ELEMENTS]``.
    """
    theta = check_inv_freq(inv_freq)
    max_offset = check_int(max_offset, "max_offset", minimum=4)
    check_size(("max_offset", max_offset), ("inv_freq", theta.numel()))
    if max_offset & (max_offset - 1):
        raise ValueError(f"max_offset must be a power of two, got max_offset = {max_offset}")
    means = octave_means(frequency_similarity(inv_freq, max_offset), max_offset.bit_length() - 1)
    return float((means[1:] - means[:-1]).max())


def score_spread(queries: torch.Tensor, keys: torch.Tensor) -> float:
    """The worst spread of the scores ``q_m·k_n`` along a diagonal ``n − m = r``, relative.

    ``max_r (max_m − min_m) q_m·k_(m+r) / mean_m ‖q_m‖·‖k_m‖`` over every offset
    ``r = −(seq − 1) … seq − 1``: zero exactly when every score depends on the offset only. The
    query–key version of :func:`diagonal_spread`, which it equals for ``keys = queries``.

    Parameters
    ----------
    queries : torch.Tensor
        ``(seq, dim)`` floating, one query per position, ``seq <= 10 000``.
    keys : torch.Tensor
        ``(seq, dim)`` floating, one key per position, the shape of ``queries``.

    Returns
    -------
    float
        The relative spread, ``>= 0``.

    Raises
    ------
    TypeError
        If either argument is not a floating tensor.
    ValueError
        If they are not 2-D, their shapes differ, they have no row or column or more than
        10 000 rows, or ``mean_m ‖q_m‖·‖k_m‖`` is zero.
    """
    q = _table(queries, "queries", min_rows=1, min_cols=1)
    k = _table(keys, "keys", min_rows=1, min_cols=1)
    if q.shape != k.shape:
        raise ValueError(
            f"queries and keys must have the same shape, got {tuple(q.shape)} and "
            f"{tuple(k.shape)}"
        )
    if q.shape[0] > 10_000:
        raise ValueError(f"queries must have at most 10000 rows (score matrix), got {q.shape[0]}")
    scale = float((q.norm(dim=-1) * k.norm(dim=-1)).mean())
    if scale == 0.0:
        raise ValueError("mean ‖q_m‖·‖k_m‖ must not be zero (it divides the spread)")
    scores = q @ k.T  # (seq, seq): q_m · k_n
    seq = len(scores)
    worst = max(float(scores.diagonal(r).max() - scores.diagonal(r).min())
                for r in range(1 - seq, seq))
    return worst / scale


def scorecard(
    encoding: Callable[..., torch.Tensor],
    *,
    seq_len: int = 1000,
    dim: int = 16,
    offset: int | str = "all",
    long_len: int = 10**6,
) -> dict[str, object]:
    """The four measured columns of chapter 2's scorecard for one encoding, with pass marks.

    Every column reads only row norms, distances and dot products, each relative to a norm, so
    it does not change when the table is scaled or turned by an orthogonal matrix
    (``PE(m) → c·Q·PE(m)``): the sinusoid, ``2·sinusoid`` and ``Q·sinusoid`` score alike.

    Parameters
    ----------
    encoding
        ``encoding(seq_len, dim, dtype=...) -> (seq_len, dim)``, e.g. ``sinusoidal_table``.
    seq_len
        Length ``L`` of the measured table (8 … 10 000).
    dim
        Feature dimension (>= 1).
    offset
        ``"all"`` (default): the dot-product spread is the worst over every offset,
        :func:`diagonal_spread`; an integer ``k`` (1 … ``seq_len − 1``): the spread at that one
        offset, :func:`dot_product_spread`, a necessary test but not a sufficient one (a table can
        pass at ``k`` and fail at another offset).
    long_len
        Length at which the largest row norm is measured again (>= ``seq_len``, at most
        ``2·10⁶``); this one table is built in float32 to save memory (its norms are summed in
        float64), which is exact for integer positions below ``2**24``. If ``encoding`` raises
        :class:`~posenc_lib.schemes.NoRowError` at this length (a learned table ends at its
        ``max_len``, a binary code at ``2**dim``) the value is ``None`` and the column fails; any
        other exception propagates.

    Returns
    -------
    dict
        ``length_dependence`` (``max_m ‖PE_L(m) − PE_L'(m)‖`` for ``L' = L // 10``, over the
        largest row norm), ``dot_product_spread`` (at ``offset``, or the worst over all offsets),
        ``norm_growth`` (largest row norm at ``long_len`` over that at ``seq_len``; float or
        ``None``), ``closest_pair_relative``, and ``passes``: a dict of the same keys to bools,
        judged by :data:`SCORECARD_CRITERIA`. Decay is not a column: measure it with
        :func:`octave_rise`.
    """
    if not callable(encoding):
        raise TypeError("encoding must be callable as encoding(seq_len, dim, dtype=...)")
    seq_len = check_int(seq_len, "seq_len", minimum=8, what="an integer >= 8")
    if seq_len > 10_000:
        raise ValueError(f"seq_len must be <= 10000 (pairwise distances), got {seq_len}")
    dim = check_int(dim, "dim", minimum=1, what="an integer >= 1")
    if isinstance(offset, str):
        if offset != "all":
            raise ValueError(f'offset must be "all" or an integer >= 1, got {offset!r}')
    else:
        offset = check_int(offset, "offset", minimum=1, what='"all" or an integer >= 1')
        if offset >= seq_len:
            raise ValueError(f"offset must be < seq_len = {seq_len}, got {offset}")
    long_len = check_int(long_len, "long_len", minimum=seq_len, what=f"an integer >= {seq_len}")
    if long_len * dim > 2 * 10**6 * 32:
        raise ValueError(f"long_len * dim must be <= 6.4e7 entries, got {long_len} * {dim}")
    table = _table(encoding(seq_len, dim, dtype=torch.float64))
    short = _table(encoding(seq_len // 10, dim, dtype=torch.float64), "encoding(seq_len // 10)")
    largest = _largest_row_norm(table)
    if largest == 0.0:
        raise ValueError("encoding(seq_len, dim) must not be all zeros")
    try:
        long_table = _table(encoding(long_len, dim, dtype=torch.float32), "encoding(long_len)")
    except NoRowError:
        norm_growth: float | None = None
    else:
        norm_growth = _largest_row_norm(long_table) / largest
        del long_table
    row_change = float((table[: short.shape[0]] - short).norm(dim=-1).max())
    scores: dict[str, object] = {
        "length_dependence": row_change / largest,
        "dot_product_spread": (
            diagonal_spread(table) if isinstance(offset, str) else dot_product_spread(table, offset)
        ),
        "norm_growth": norm_growth,
        "closest_pair_relative": closest_pair_relative(table),
    }
    c = SCORECARD_CRITERIA
    measured = {k: v for k, v in scores.items() if isinstance(v, float)}
    scores["passes"] = {
        "length_dependence": measured["length_dependence"] <= c["length_dependence"],
        "dot_product_spread": measured["dot_product_spread"] <= c["dot_product_spread"],
        "norm_growth": norm_growth is not None and norm_growth <= c["norm_growth"],
        "closest_pair_relative": measured["closest_pair_relative"] >= c["closest_pair_relative"],
    }
    return scores


def offset_readout_accuracy(
    fit_table: torch.Tensor, test_table: torch.Tensor | None = None, *, max_offset: int = 20
) -> float:
    """Share of pairs ``(PE(m), PE(m + r))`` whose offset ``r`` a linear readout recovers.

    For each offset ``r = 1 … max_offset`` the least-squares map ``Φ(r)`` with
    ``Φ(r)·PE(m) ≈ PE(m + r)`` is fitted on every pair of ``fit_table`` (wish 7 of chapter 2).
    A pair of ``test_table`` is then read as the offset ``r'`` whose map carries ``PE(m)``
    closest to ``PE(m + r)``, ``argmin_r' ‖PE(m + r) − Φ(r')·PE(m)‖``. Every position ``m`` of
    ``test_table`` with ``m + max_offset`` inside it is read at every offset. A table with an exact
    linear shift (sine–cosine pairs) reads every offset, at positions it was fitted on and beyond
    (wishes 3 and 9); a table without one (sines only) misreads many. Guessing one offset for
    every pair scores ``1 / max_offset``. Fit on rows over which every feature turns well (chapter
    2 uses base 100 and 2000 rows): a feature that barely turns leaves the fit ill-conditioned,
    and a share that depends on it can move with rounding or be an artefact (sines only at
    ``dim = 16``, fitted on 200 rows, read one offset for every pair 4000 positions on).

    Parameters
    ----------
    fit_table : torch.Tensor
        ``(seq, dim)`` floating, the rows the maps are fitted on; ``seq > max_offset``.
    test_table : torch.Tensor, optional
        ``(seq', dim)`` floating, the pairs that are read, with ``seq' > max_offset``; default
        ``fit_table`` (in-sample). Pass rows at later positions to test extrapolation.
    max_offset : int
        Largest offset ``R`` (>= 1); the readout chooses among ``1 … R``.

    Returns
    -------
    float
        A share in ``[0, 1]``, computed in float64.

    Raises
    ------
    TypeError
        If a table is not a floating tensor or ``max_offset`` is not an integer.
    ValueError
        If a table is not 2-D, the tables' widths differ, or a table has ``max_offset`` rows or
        fewer.
    """
    max_offset = check_int(max_offset, "max_offset", minimum=1, what="an integer >= 1")
    fit = _table(fit_table, "fit_table", min_rows=max_offset + 1, min_cols=1)
    test = (
        fit
        if test_table is None
        else _table(test_table, "test_table", min_rows=max_offset + 1, min_cols=1)
    )
    if test.shape[1] != fit.shape[1]:
        raise ValueError(
            f"test_table must have the width of fit_table, dim = {fit.shape[1]}, "
            f"got {test.shape[1]}"
        )
    n_fit, n_test = fit.shape[0], test.shape[0] - max_offset
    # maps[r − 1] is Φ(r)ᵀ: fit[:n − r] @ maps[r − 1] ≈ fit[r:]
    maps = torch.stack(
        [torch.linalg.lstsq(fit[: n_fit - r], fit[r:]).solution for r in range(1, max_offset + 1)]
    )  # (R, dim, dim)
    start = test[:n_test]  # (M, dim): PE(m)
    carried = torch.einsum("md,rde->mre", start, maps)  # (M, R, dim): Φ(r')·PE(m)
    correct = 0
    for r in range(1, max_offset + 1):
        target = test[r : r + n_test]  # (M, dim): PE(m + r)
        read = (carried - target[:, None, :]).norm(dim=-1).argmin(dim=-1) + 1  # (M,)
        correct += int((read == r).sum())
    return correct / (n_test * max_offset)


# ------------------------------------------------------------------ div_term, two ways


def div_term_exp_log(dim: int, base: float = 10000.0, dtype: torch.dtype = torch.float32
                     ) -> torch.Tensor:
    """``exp(2i · (−ln base / dim))`` in ``dtype``: the ``div_term`` of the Annotated Transformer.

    Returns
    -------
    torch.Tensor
        ``(dim // 2,)`` in ``dtype``; mathematically equal to :func:`div_term_power`.
    """
    return sinusoidal_frequencies(dim, base, method="exp_log", dtype=dtype)


def div_term_power(dim: int, base: float = 10000.0, dtype: torch.dtype = torch.float32
                   ) -> torch.Tensor:
    """``base ** (−2i / dim)`` in ``dtype``: the formula of the paper, evaluated directly.

    Returns
    -------
    torch.Tensor
        ``(dim // 2,)`` in ``dtype``.
    """
    return sinusoidal_frequencies(dim, base, method="power", dtype=dtype)


_REFERENCE_DIGITS = 40


def div_term_reference(dim: int, base: float = 10000.0) -> tuple[Decimal, ...]:
    """``base ** (−2i / dim)`` to 40 significant digits, with the standard library's ``decimal``.

    ``exp(−(2i/dim)·ln base)`` evaluated in decimal arithmetic at 40 digits (``base`` is taken
    exactly as the float it is): far beyond float64's 16 digits on every platform, unlike NumPy's
    ``longdouble``, which is plain float64 on Windows and macOS on Apple silicon.

    Returns
    -------
    tuple of decimal.Decimal
        ``dim // 2`` values, ``i = 0 … dim/2 − 1``.
    """
    dim = check_dim(dim)
    base = check_base(base)
    if dim > 1_000_000:
        raise ValueError(f"dim must be <= 1000000 for the decimal reference, got {dim}")
    with localcontext() as ctx:
        ctx.prec = _REFERENCE_DIGITS + 5
        log_base = Decimal(base).ln()
        values = [(-(Decimal(2 * i) / Decimal(dim)) * log_base).exp() for i in range(dim // 2)]
        ctx.prec = _REFERENCE_DIGITS
        return tuple(+v for v in values)


def div_term_max_abs_difference(dim: int, base: float = 10000.0,
                                dtype: torch.dtype = torch.float32) -> float:
    """``max_i |exp_log_i − power_i|`` when both are computed in ``dtype``."""
    dtype = check_dtype(dtype)
    a = div_term_exp_log(dim, base, dtype).to(torch.float64)
    b = div_term_power(dim, base, dtype).to(torch.float64)
    return float((a - b).abs().max())


def div_term_errors(dim: int, base: float = 10000.0, dtype: torch.dtype = torch.float32
                    ) -> dict[str, float]:
    """Largest relative error of each ``div_term`` formula in ``dtype`` against the reference.

    Returns
    -------
    dict
        ``{"exp_log": …, "power": …, "eps": …}``, where ``eps`` is the machine epsilon of
        ``dtype`` (an error of about ``eps/2`` is a correctly rounded result).
    """
    dtype = check_dtype(dtype)
    ref = div_term_reference(dim, base)
    out = {}
    with localcontext() as ctx:
        ctx.prec = _REFERENCE_DIGITS
        for name, fn in (("exp_log", div_term_exp_log), ("power", div_term_power)):
            got = fn(dim, base, dtype).to(torch.float64).tolist()  # float32 → float64 is exact
            out[name] = float(max(abs(Decimal(g) - r) / r for g, r in zip(got, ref, strict=True)))
    out["eps"] = float(torch.finfo(dtype).eps)
    return out


def float32_angle_errors(
    max_position: int, dim: int, base: float = 10000.0
) -> dict[str, float]:
    """Where a float32 sinusoidal table loses its angles ``p·θ_i``, for ``p = 0 … max_position``.

    Public code computes ``position * div_term`` in float32. The integer positions themselves are
    exact in float32 (up to ``2**24``); the error comes from the frequencies' rounding and, above
    all, from rounding the product.

    Parameters
    ----------
    max_position
        Largest integer position (0 … ``2**24``).
    dim
        Even dimension (2 … 4096).
    base
        The base ``b``.

    Returns
    -------
    dict
        Largest absolute angle errors (radians) against the float64 angles ``p·θ_i``:
        ``positions`` (``float32(p) − p``, 0 for integers), ``exp_log`` and ``power`` (the whole
        float32 ``position * div_term``, with ``div_term`` from either formula in float32), and
        ``product`` (the rounding of the float32 product alone, ``θ`` taken as its float32 value).
    """
    max_position = check_int(max_position, "max_position", minimum=0, what="an integer >= 0")
    if max_position > 2**24:
        raise ValueError(f"max_position must be <= 2**24 = {2**24}, got {max_position}")
    dim = check_dim(dim)
    if dim > 4096:
        raise ValueError(f"dim must be <= 4096, got {dim}")
    if (max_position + 1) * dim > 2**26:
        raise ValueError(
            f"(max_position + 1) * dim must be <= 2**26 entries, got {max_position + 1} * {dim}"
        )
    base = check_base(base)
    p64 = torch.arange(max_position + 1, dtype=torch.float64)
    p32 = p64.to(torch.float32)
    exact = torch.outer(p64, div_term_power(dim, base, torch.float64))
    out = {"positions": float((p32.to(torch.float64) - p64).abs().max())}
    for name, fn in (("exp_log", div_term_exp_log), ("power", div_term_power)):
        theta32 = fn(dim, base, torch.float32)
        out[name] = float((torch.outer(p32, theta32).to(torch.float64) - exact).abs().max())
    theta32 = div_term_power(dim, base, torch.float32).to(torch.float64)
    product = torch.outer(p64, theta32)  # exact in float64: 24-bit × 24-bit mantissas
    out["product"] = float((product.to(torch.float32).to(torch.float64) - product).abs().max())
    return out


# ------------------------------------------------------------------ logits after projection


def logit_terms(
    x_q: torch.Tensor,
    x_k: torch.Tensor,
    pe_q: torch.Tensor,
    pe_k: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
) -> dict[str, torch.Tensor]:
    """The four terms of ``(W_q(x+p))ᵀ (W_k(y+q))`` when positions are added to embeddings.

    With ``A = W_qᵀ W_k`` (each ``W`` of shape ``(d_head, dim)``, acting as ``W @ x``):

    ``(x+p)ᵀ A (y+q) = xᵀAy + xᵀAq + pᵀAy + pᵀAq``.

    All vectors may carry leading batch dimensions ``(..., dim)``; they broadcast.

    Returns
    -------
    dict
        ``content`` (xᵀAy), ``content_position`` (xᵀAq), ``position_content`` (pᵀAy),
        ``position_position`` (pᵀAq), and their sum ``total``, each of the broadcast shape.
    """
    vecs = {}
    for name, v in (("x_q", x_q), ("x_k", x_k), ("pe_q", pe_q), ("pe_k", pe_k)):
        vecs[name] = check_float_tensor(v, name, min_ndim=1).to(torch.float64)
    mats = {}
    for name, w in (("w_q", w_q), ("w_k", w_k)):
        w = check_float_tensor(w, name, min_ndim=2)
        if w.ndim != 2:
            raise ValueError(f"{name} must have shape (d_head, dim), got {tuple(w.shape)}")
        mats[name] = w.to(torch.float64)
    if mats["w_q"].shape != mats["w_k"].shape:
        raise ValueError(
            f"w_q and w_k must have the same shape, got {tuple(mats['w_q'].shape)} "
            f"and {tuple(mats['w_k'].shape)}"
        )
    dim = mats["w_q"].shape[1]
    for name, v in vecs.items():
        if v.shape[-1] != dim:
            raise ValueError(f"{name} must have last dimension {dim}, got {tuple(v.shape)}")
    try:
        shape = torch.broadcast_shapes(*(v.shape[:-1] for v in vecs.values()))
    except RuntimeError:
        shapes = ", ".join(f"{name} {tuple(v.shape)}" for name, v in vecs.items())
        raise ValueError(f"x_q, x_k, pe_q, pe_k must broadcast, got {shapes}") from None
    check_size(("prod(x_q/x_k/pe_q/pe_k broadcast shape)", math.prod(shape)), ("dim", dim),
               what="each broadcast (..., dim) product")
    a = mats["w_q"].T @ mats["w_k"]  # (dim, dim)

    def bilinear(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return ((u @ a) * v).sum(-1)

    terms = {
        "content": bilinear(vecs["x_q"], vecs["x_k"]),
        "content_position": bilinear(vecs["x_q"], vecs["pe_k"]),
        "position_content": bilinear(vecs["pe_q"], vecs["x_k"]),
        "position_position": bilinear(vecs["pe_q"], vecs["pe_k"]),
    }
    terms["total"] = bilinear(vecs["x_q"] + vecs["pe_q"], vecs["x_k"] + vecs["pe_k"])
    return {name: t.expand(shape) for name, t in terms.items()}


def position_term_along_offset(
    matrix: torch.Tensor, offset: int, positions: torch.Tensor | Sequence[int],
    base: float = 10000.0,
) -> torch.Tensor:
    """``PE(m)ᵀ A PE(m+k)`` for each ``m`` in ``positions``: the position–position logit term.

    With ``A = I`` this is the plain dot product, which depends on ``k`` only. With a generic
    projection ``A = W_qᵀW_k`` it changes with ``m`` at fixed ``k``.

    Parameters
    ----------
    matrix
        ``A``, shape ``(dim, dim)``.
    offset
        The offset ``k`` (may be negative).
    positions
        Query positions ``m``, 1-D.
    base
        The sinusoid's base.

    Returns
    -------
    torch.Tensor
        ``(len(positions),)`` float64.
    """
    a = check_float_tensor(matrix, "matrix", min_ndim=2).to(torch.float64)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"matrix must be square (dim, dim), got {tuple(a.shape)}")
    dim = check_dim(a.shape[0], "matrix.shape[0]")
    k = check_int(offset, "offset")
    m = check_positions(positions)
    check_size(("len(positions)", m.shape[0]), ("dim", dim), what="the (seq, dim) tables")
    pe_m = sinusoidal_table(m.numel(), dim, base, dtype=torch.float64, positions=m)
    pe_n = sinusoidal_table(m.numel(), dim, base, dtype=torch.float64, positions=m + k)
    return ((pe_m @ a) * pe_n).sum(-1)


def commuting_part(matrix: torch.Tensor) -> torch.Tensor:
    """The part of ``A`` that commutes with every sinusoidal shift ``Φ(r)``.

    Each diagonal ``2 × 2`` block is projected onto the scaled rotations ``u·I + v·J``
    (``u = (a₁₁ + a₂₂)/2``, ``v = (a₂₁ − a₁₂)/2``) and every off-diagonal block is dropped: the
    orthogonal (Frobenius) projection onto the ``d``-dimensional family of chapter 4.

    That family is the whole commutant of ``{Φ(r)}`` because the sinusoid's frequencies
    ``θ_i = b^(−2i/d)`` are distinct and lie in ``(0, π)`` for every base ``b > 1`` (``θ_0 = 1``):
    a matrix commuting with ``Φ(1)`` must then map each pair's plane to itself, and commute with
    its rotation there. With a repeated frequency, or one equal to ``0`` or ``π``, the commutant
    is larger and this is only part of it; ``tests/test_properties.py`` computes the commutant
    of ``Φ(1)`` as a null space and checks that it has dimension ``d``.

    Parameters
    ----------
    matrix : torch.Tensor
        ``A``, shape ``(dim, dim)`` with ``dim`` even.

    Returns
    -------
    torch.Tensor
        ``(dim, dim)`` float64, block-diagonal with blocks ``[[u, −v], [v, u]]``.
    """
    a = check_float_tensor(matrix, "matrix", min_ndim=2).to(torch.float64)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"matrix must be square (dim, dim), got {tuple(a.shape)}")
    dim = check_dim(a.shape[0], "matrix.shape[0]")
    idx = torch.arange(0, dim, 2)
    u = (a[idx, idx] + a[idx + 1, idx + 1]) / 2
    v = (a[idx + 1, idx] - a[idx, idx + 1]) / 2
    out = torch.zeros_like(a)
    out[idx, idx] = out[idx + 1, idx + 1] = u
    out[idx + 1, idx], out[idx, idx + 1] = v, -v
    return out


def offset_head_logits(matrix: torch.Tensor, n_pos: int, base: float = 10000.0) -> torch.Tensor:
    """Causal position-only logits ``PE(m)ᵀ A PE(n)`` for ``0 ≤ n ≤ m < n_pos``.

    Parameters
    ----------
    matrix : torch.Tensor
        ``A``, shape ``(dim, dim)``; gradients flow through it.
    n_pos : int
        Number of positions (>= 1).
    base : float
        The sinusoid's base.

    Returns
    -------
    torch.Tensor
        ``(n_pos, n_pos)`` float64, query ``m`` by key ``n``; ``−inf`` where ``n > m``.
    """
    a = check_float_tensor(matrix, "matrix", min_ndim=2)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"matrix must be square (dim, dim), got {tuple(a.shape)}")
    dim = check_dim(a.shape[0], "matrix.shape[0]")
    n_pos = check_int(n_pos, "n_pos", minimum=1, what="a positive integer (>= 1)")
    check_size(("n_pos", n_pos), ("n_pos", n_pos), what="the (n_pos, n_pos) logits")
    pe = sinusoidal_table(n_pos, dim, base, dtype=torch.float64)
    scores = pe @ a.to(torch.float64) @ pe.T
    future = torch.ones(n_pos, n_pos, dtype=torch.bool).triu(1)
    return scores.masked_fill(future, -math.inf)


def learn_offset_head(
    dim: int = 32, train_len: int = 64, back: int = 3, *, steps: int = 400, lr: float = 0.05,
    weight_decay: float = 0.0, seed: int = 0, base: float = 10000.0, optimizer: str = "adam",
    init_scale: float = 0.1,
) -> torch.Tensor:
    """Train ``A`` so that the position-only head of chapter 3 attends ``back`` tokens back.

    ``A`` starts at ``init_scale·N(0, 1)`` (seeded; ``init_scale = 0`` starts at zero, so that
    everything in ``A`` was learned) and is trained on the cross-entropy of
    :func:`offset_head_logits` over the queries ``back … train_len − 1``, target key
    ``m − back``, with AdamW (``optimizer="adam"``; with ``weight_decay = 0`` AdamW is Adam) or
    plain gradient descent (``optimizer="sgd"``: full batch, no momentum). The two differ in
    where they take ``A``: gradient descent steps along the gradient itself, Adam rescales each
    coordinate's step. Neither is confined to the commuting family: from a zero start gradient
    descent still learns a small part outside it.

    Parameters
    ----------
    dim : int
        Even width ``d``.
    train_len : int
        Training positions ``0 … train_len − 1`` (> ``back``).
    back : int
        The offset to attend to (>= 0).
    steps : int
        Optimiser steps (>= 1).
    lr : float
        Learning rate (> 0).
    weight_decay : float
        Decoupled weight decay (>= 0), AdamW's or SGD's (``A ← A − lr·(∇ + weight_decay·A)``).
    seed : int
        Seed of the initial ``A``.
    base : float
        The sinusoid's base.
    optimizer : {"adam", "sgd"}
        The optimiser.
    init_scale : float
        Standard deviation of the initial ``A`` (>= 0, finite); 0 starts at the zero matrix.

    Returns
    -------
    torch.Tensor
        The learned ``A``, ``(dim, dim)`` float64, detached.
    """
    dim = check_dim(dim)
    back = check_int(back, "back", minimum=0)
    train_len = check_int(train_len, "train_len", minimum=back + 1,
                          what=f"an integer > back = {back}")
    steps = check_positive_int(steps, "steps")
    lr = check_positive(lr, "lr")
    weight_decay = check_real(weight_decay, "weight_decay")
    if weight_decay < 0:
        raise ValueError(f"weight_decay must be >= 0, got {weight_decay}")
    seed = check_seed(seed)
    base = check_base(base)
    if not isinstance(optimizer, str) or optimizer not in ("adam", "sgd"):
        raise ValueError(f"optimizer must be 'adam' or 'sgd', got {optimizer!r}")
    init_scale = check_real(init_scale, "init_scale")
    if init_scale < 0:
        raise ValueError(f"init_scale must be >= 0, got {init_scale}")
    # Refuse sizes that cannot be allocated before any tensor is built.
    check_size(("dim", dim), ("dim", dim), what="the (dim, dim) matrix A")
    check_size(("train_len", train_len), ("train_len", train_len),
               what="the (train_len, train_len) logits")
    gen = torch.Generator().manual_seed(seed)
    a = torch.nn.Parameter(init_scale * torch.randn(dim, dim, generator=gen, dtype=torch.float64))
    step: torch.optim.Optimizer
    if optimizer == "adam":
        step = torch.optim.AdamW([a], lr=lr, weight_decay=weight_decay)
    else:
        step = torch.optim.SGD([a], lr=lr, weight_decay=weight_decay)
    queries = torch.arange(back, train_len)
    for _ in range(steps):
        logits = offset_head_logits(a, train_len, base)[queries]
        loss = torch.nn.functional.cross_entropy(logits, queries - back)
        step.zero_grad()
        loss.backward()
        step.step()
    return a.detach()


def offset_head_accuracy(
    matrix: torch.Tensor, lo: int, hi: int, back: int = 3, base: float = 10000.0
) -> float:
    """Share of the queries ``m`` in ``[lo, hi)`` whose top causal logit is the key ``m − back``.

    Parameters
    ----------
    matrix : torch.Tensor
        ``A``, shape ``(dim, dim)``.
    lo, hi : int
        Query range, ``back ≤ lo < hi``.
    back : int
        The target offset (>= 0).
    base : float
        The sinusoid's base.

    Returns
    -------
    float
        A share in ``[0, 1]``.
    """
    back = check_int(back, "back", minimum=0)
    lo = check_int(lo, "lo", minimum=back, what=f"an integer >= back = {back}")
    hi = check_int(hi, "hi", minimum=lo + 1, what=f"an integer > lo = {lo}")
    with torch.no_grad():
        top = offset_head_logits(matrix, hi, base)[lo:hi].argmax(-1)
    return (top == torch.arange(lo, hi) - back).double().mean().item()
