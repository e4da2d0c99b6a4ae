"""Positions in more than one dimension: image grids, video and mixed text–image sequences.

Four families, each checked against the code of the models that use it:

* **2-D sin-cos tables** (MAE; the original ViT learns a 1-D table): a quarter of the features
  for ``sin`` and one for ``cos`` of each axis, :func:`sincos_2d_table`. MAE's reference code
  puts the *column* first (``[sin_w | cos_w | sin_h | cos_h]``), a naming slip its pretrained
  weights keep.
* **2-D RoPE** for vision towers, :func:`apply_rope_2d`: pair ``i`` of a patch at ``(r, c)``
  turns by ``r·f^row_i + c·f^col_i``. *Axial* RoPE gives each pair one axis (``f^row_i = 0`` or
  ``f^col_i = 0``), in the layouts of :data:`AXIAL_LAYOUTS`; *RoPE-Mixed* (Heo et al., ECCV 2024)
  learns both, :func:`rope_mixed_frequencies` is its initialisation.
* **M-RoPE** (Qwen2-VL, Qwen2.5-VL) and **MRoPE-I** (Qwen3-VL): three position ids (time, height,
  width) per token; each frequency pair of a 1-D RoPE reads one of them. :func:`mrope_axis_map`
  says which, :func:`mrope_angles`, :func:`mrope_cos_sin` and :func:`apply_mrope` rotate.
* **Multimodal position ids**, :func:`mrope_position_ids`: the ``(3, seq)`` ids of a sequence of
  text, image and video segments, equal to transformers' ``get_rope_index``.

Angles are float64 (positions of a long video times ``θ_0 = 1`` exceed float32's integers-exact
range quickly); tables are cast to the requested dtype at the end.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from ._validation import (
    check_base,
    check_choice,
    check_dim,
    check_dtype,
    check_int,
    check_inv_freq,
    check_length,
    check_positions,
    check_positive,
    check_positive_int,
    check_rope_input,
    check_seed,
    check_size,
    compute_dtype,
    resolve_base,
)
from .rope import rope_inv_freq

__all__ = [
    "AXIAL_LAYOUTS",
    "MROPE_AXES",
    "ROPE_2D_PAIRINGS",
    "apply_mrope",
    "apply_rope_2d",
    "axial_rope_frequencies",
    "hf_rope_index_ids",
    "mrope_angles",
    "mrope_axis_map",
    "mrope_axis_string",
    "mrope_cos_sin",
    "mrope_fastest_turn",
    "mrope_position_ids",
    "mrope_position_ids_batch",
    "multimodal_layout_ids",
    "patch_grid_positions",
    "rope_2d_angles",
    "rope_2d_similarity",
    "rope_mixed_frequencies",
    "sincos_2d_table",
]

AXIAL_LAYOUTS = ("blocks", "alternating", "split")
#: Feature pairings of :func:`apply_rope_2d`: ``"half"`` rotates ``(i, i + d/2)`` (Llama's
#: ``rotate_half``), ``"interleaved"`` rotates ``(2i, 2i + 1)`` (SAM 2 video's ``rotate_pairwise``).
ROPE_2D_PAIRINGS = ("half", "interleaved")
"""Axial 2-D RoPE layouts found in transformers 5.25's vision towers.

``"blocks"``: the Qwen2-VL / Qwen2.5-VL / Qwen3-VL vision encoders — half pairing over the whole
head, the first ``dim/4`` pairs read the row with ``θ_j = base^(-4j/dim)``, the next ``dim/4``
the column with the same ``θ_j``. ``"alternating"``: Pixtral — the same pairing, but the 1-D
spectrum ``base^(-2i/dim)`` is dealt out alternately, even ``i`` to rows and odd ``i`` to columns.
``"split"``: Gemma 4 — the head is cut in two halves, one per axis, each a half-pairing RoPE of
its own with ``θ_j = base^(-4j/dim)`` (Gemma 4's ids are (column, row), so its first half reads
the column).
"""

MROPE_AXES = ("t", "h", "w")
"""The three M-RoPE position ids, in transformers' order: time, height, width."""


def _check_dim4(dim: object, name: str = "dim") -> int:
    """A feature size split into four equal parts (two axes × cos/sin or × pair halves)."""
    dim = check_dim(dim, name, minimum=4)
    if dim % 4 != 0:
        raise ValueError(f"{name} must be a positive multiple of 4, got {dim}")
    return dim


# --- 2-D sin-cos ---------------------------------------------------------------------------------


def sincos_2d_table(
    grid_h: int,
    grid_w: int,
    dim: int,
    base: float = 10000.0,
    *,
    cls_token: bool = False,
    column_first: bool = True,
    frequency_rule: str = "mae",
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """The fixed 2-D sin-cos position table of MAE for a ``grid_h × grid_w`` patch grid.

    Each axis gets ``dim/2`` features, laid out ``[sin(p·ω) | cos(p·ω)]`` with the ``dim/4``
    frequencies ``ω_j = base^(-j/(dim/4))``. Patches are numbered row-major, ``n = r·grid_w + c``.
    MAE's ``get_2d_sincos_pos_embed`` puts the column's half first (``column_first=True``); the
    row first (MoCo v3's reference code, read literally) is ``column_first=False``.

    ``frequency_rule="big_vision"`` spaces the frequencies from 1 down to exactly ``1/base``,
    ``ω_j = base^(-j/(dim/4 − 1))``, as big_vision's ``posemb_sincos_2d`` (Simple ViT),
    whose layout ``[sin c | cos c | sin r | cos r]`` is ``column_first=True``; MoCo v3, which
    that code cites, uses MAE's ``ω_j``.

    Parameters
    ----------
    grid_h, grid_w : int
        Rows and columns of patches (>= 0).
    dim : int
        Feature size, a positive multiple of 4.
    base : float
        The base of the frequencies (> 0).
    cls_token : bool
        Prepend a row of zeros for a class token, as MAE does.
    column_first : bool
        Column features first (MAE's reference code) or row features first.
    frequency_rule : {"mae", "big_vision"}
        ``ω_j = base^(-j/(dim/4))`` (MAE, MoCo v3) or ``base^(-j/(dim/4 − 1))`` (big_vision;
        needs ``dim >= 8``).
    dtype : torch.dtype
        Output dtype (computed in float64).

    Returns
    -------
    torch.Tensor
        Shape ``(grid_h·grid_w [+1], dim)``.
    """
    grid_h = check_length(grid_h, "grid_h")
    grid_w = check_length(grid_w, "grid_w")
    dim = _check_dim4(dim)
    base = check_base(base)
    dtype = check_dtype(dtype)
    if not isinstance(cls_token, bool):
        raise TypeError(f"cls_token must be a bool, got {cls_token!r}")
    if not isinstance(column_first, bool):
        raise TypeError(f"column_first must be a bool, got {column_first!r}")
    frequency_rule = check_choice(frequency_rule, "frequency_rule", ("mae", "big_vision"))
    if frequency_rule == "big_vision" and dim < 8:
        raise ValueError(f"frequency_rule 'big_vision' needs dim >= 8 (dim/4 − 1 > 0), got {dim}")
    check_size(("grid_h", grid_h), ("grid_w", grid_w), ("dim", dim), what="the 2-D table")
    rows, cols = patch_grid_positions(grid_h, grid_w)
    denominator = dim // 4 - (frequency_rule == "big_vision")
    omega = torch.tensor(base, dtype=torch.float64) ** (
        -torch.arange(dim // 4, dtype=torch.float64) / denominator
    )
    a_r, a_c = torch.outer(rows, omega), torch.outer(cols, omega)
    row_half = torch.cat((a_r.sin(), a_r.cos()), dim=-1)
    col_half = torch.cat((a_c.sin(), a_c.cos()), dim=-1)
    table = torch.cat((col_half, row_half) if column_first else (row_half, col_half), dim=-1)
    if cls_token:
        table = torch.cat((torch.zeros(1, dim, dtype=torch.float64), table), dim=0)
    return table.to(dtype)


def patch_grid_positions(
    grid_h: int, grid_w: int, spatial_merge_size: int = 1
) -> tuple[torch.Tensor, torch.Tensor]:
    """Row and column of every patch of a grid, in the order a vision tower reads them.

    With ``spatial_merge_size = 1`` the order is row-major. With ``m > 1`` it is block-major, as in
    the Qwen-VL vision encoders (transformers' ``vision_utils.get_vision_position_ids``): the
    ``m × m`` patches that will be merged into one language-model token come one after another.

    Parameters
    ----------
    grid_h, grid_w : int
        Rows and columns of patches (>= 0, multiples of ``spatial_merge_size``).
    spatial_merge_size : int
        Side of the merged blocks (>= 1).

    Returns
    -------
    tuple of torch.Tensor
        ``rows`` and ``cols``, each of shape ``(grid_h·grid_w,)``, float64.
    """
    grid_h = check_length(grid_h, "grid_h")
    grid_w = check_length(grid_w, "grid_w")
    m = check_positive_int(spatial_merge_size, "spatial_merge_size")
    check_size(("grid_h", grid_h), ("grid_w", grid_w), what="the patch positions")
    if grid_h % m or grid_w % m:
        raise ValueError(
            f"grid_h and grid_w must be multiples of spatial_merge_size = {m}, "
            f"got grid_h = {grid_h}, grid_w = {grid_w}"
        )
    rows, cols = torch.meshgrid(
        torch.arange(grid_h, dtype=torch.float64),
        torch.arange(grid_w, dtype=torch.float64),
        indexing="ij",
    )
    shape = (grid_h // m, m, grid_w // m, m)
    return (
        rows.reshape(shape).transpose(1, 2).flatten(),
        cols.reshape(shape).transpose(1, 2).flatten(),
    )


def relative_position_index_2d(window_h: int, window_w: int) -> torch.Tensor:
    """Index of the offset between every pair of patches of a window into a 2-D bias table.

    Swin and BEiT learn one bias per head for each offset ``(Δy, Δx)`` between a query patch and
    a key patch of a ``window_h × window_w`` window (query minus key, row-major order), a table of
    ``(2·window_h − 1)(2·window_w − 1)`` rows; the row of a pair is
    ``(Δy + window_h − 1)·(2·window_w − 1) + (Δx + window_w − 1)``.

    Parameters
    ----------
    window_h, window_w : int
        Rows and columns of patches in the window (>= 1).

    Returns
    -------
    torch.Tensor
        Shape ``(window_h·window_w, window_h·window_w)``, int64, values in
        ``[0, (2·window_h − 1)(2·window_w − 1))``.
    """
    window_h = check_positive_int(window_h, "window_h")
    window_w = check_positive_int(window_w, "window_w")
    area = window_h * window_w
    check_size(("window_h·window_w", area), ("window_h·window_w", area),
               what="the relative position index")
    ys, xs = torch.meshgrid(torch.arange(window_h), torch.arange(window_w), indexing="ij")
    ys, xs = ys.flatten(), xs.flatten()
    dy = ys[:, None] - ys[None, :] + window_h - 1
    dx = xs[:, None] - xs[None, :] + window_w - 1
    return dy * (2 * window_w - 1) + dx


# --- 2-D RoPE ------------------------------------------------------------------------------------


def axial_rope_frequencies(
    dim: int, base: float = 10000.0, *, layout: str = "blocks"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-pair frequencies ``(f^row, f^col)`` of an axial 2-D RoPE; each pair reads one axis.

    Pair ``i`` of a patch at ``(r, c)`` turns by ``r·f^row_i + c·f^col_i``; in an axial RoPE one of
    the two is 0. Pairs ``0 … dim/4 − 1`` read the row, pairs ``dim/4 … dim/2 − 1`` the column
    (see :data:`AXIAL_LAYOUTS` for which features form a pair and which ``θ`` each gets).

    Parameters
    ----------
    dim : int
        Head dimension, a positive multiple of 4.
    base : float
        The RoPE base (> 0).
    layout : {"blocks", "alternating", "split"}
        Qwen-VL vision encoders, Pixtral, Gemma 4 (see :data:`AXIAL_LAYOUTS`).

    Returns
    -------
    tuple of torch.Tensor
        ``freq_rows`` and ``freq_cols``, each of shape ``(dim // 2,)``, float64.
    """
    dim = _check_dim4(dim)
    base = check_base(base)
    layout = check_choice(layout, "layout", AXIAL_LAYOUTS)
    quarter = dim // 4
    if layout == "alternating":
        full = rope_inv_freq(dim, base)  # base^(-2i/dim), i < dim/2
        row_theta, col_theta = full[0::2], full[1::2]
    else:
        row_theta = col_theta = rope_inv_freq(dim // 2, base)  # base^(-4j/dim), j < dim/4
    zeros = torch.zeros(quarter, dtype=torch.float64)
    return torch.cat((row_theta, zeros)), torch.cat((zeros, col_theta))


def rope_mixed_frequencies(
    dim: int, base: float = 10.0, *, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """RoPE-Mixed's initial frequencies (Heo et al., ECCV 2024): every pair reads both axes.

    Magnitudes ``μ_j = base^(-4j/dim)``, ``j < dim/4``, each used twice, along a random direction
    ``φ`` and along ``φ + π/2``: ``f^col = μ cos φ``, ``f^row = μ sin φ`` (the authors' ``freqs_x``
    and ``freqs_y``, with ``base`` 10). In the model these are then *learned*.

    Parameters
    ----------
    dim : int
        Head dimension, a positive multiple of 4.
    base : float
        The base of the magnitudes (> 0).
    seed : int
        Seed of the random direction ``φ ∈ [0, 2π)``.

    Returns
    -------
    tuple of torch.Tensor
        ``freq_rows`` and ``freq_cols``, each of shape ``(dim // 2,)``, float64.
    """
    dim = _check_dim4(dim)
    base = check_base(base)
    seed = check_seed(seed)
    mag = rope_inv_freq(dim // 2, base)
    gen = torch.Generator().manual_seed(seed)
    phi = float(torch.rand(1, generator=gen, dtype=torch.float64)) * 2 * math.pi
    directions = torch.cat((torch.full_like(mag, phi), torch.full_like(mag, phi + math.pi / 2)))
    mags = torch.cat((mag, mag))
    return mags * directions.sin(), mags * directions.cos()


def rope_2d_angles(
    rows: torch.Tensor, cols: torch.Tensor, freq_rows: torch.Tensor, freq_cols: torch.Tensor
) -> torch.Tensor:
    """Angles ``r·f^row_i + c·f^col_i`` of every patch and pair, in float64.

    Parameters
    ----------
    rows, cols : torch.Tensor
        Shape ``(seq,)``: each patch's row and column.
    freq_rows, freq_cols : torch.Tensor
        Shape ``(dim // 2,)``, e.g. from :func:`axial_rope_frequencies`.

    Returns
    -------
    torch.Tensor
        Shape ``(seq, dim // 2)``, float64.
    """
    rows = check_positions(rows, name="rows")
    cols = check_positions(cols, rows.shape[0], name="cols")
    freq_rows = check_inv_freq(freq_rows, name="freq_rows")
    freq_cols = check_inv_freq(freq_cols, 2 * freq_rows.shape[0], name="freq_cols")
    check_size(("len(rows)", rows.shape[0]), ("len(freq_rows)", freq_rows.shape[0]),
               what="the (seq, dim // 2) angles")
    return torch.outer(rows, freq_rows) + torch.outer(cols, freq_cols)


def rope_2d_similarity(
    d_rows: torch.Tensor, d_cols: torch.Tensor, freq_rows: torch.Tensor, freq_cols: torch.Tensor
) -> torch.Tensor:
    """Mean over pairs of ``cos(Δy·f^row_i + Δx·f^col_i)``: a random vector's score with itself.

    For ``q = k`` with i.i.d. features, a query at position ``a`` and a key at ``b`` score
    ``E⟨R(a) q, R(b) q⟩ / E‖q‖²``, which equals this mean at the offset ``a − b = (Δy, Δx)``,
    query minus key (the book's convention): the 2-D counterpart of the 1-D similarity curve.
    The mean is even in the offset (``cos`` is even), so key minus query gives the same values.
    For an axial RoPE it is a row term plus a column term, ``(g_row(Δy) + g_col(Δx)) / 2`` (one
    ``g`` when both axes share their frequencies, as in the ``"blocks"`` and ``"split"`` layouts).

    Parameters
    ----------
    d_rows, d_cols : torch.Tensor
        Shapes ``(R,)`` and ``(C,)``: row offsets ``Δy`` and column offsets ``Δx``, query minus
        key.
    freq_rows, freq_cols : torch.Tensor
        Shape ``(dim // 2,)``.

    Returns
    -------
    torch.Tensor
        Shape ``(R, C)``, float64, values in ``[-1, 1]`` (1 at offset ``(0, 0)``).
    """
    d_rows = check_positions(d_rows, name="d_rows")
    d_cols = check_positions(d_cols, name="d_cols")
    freq_rows = check_inv_freq(freq_rows, name="freq_rows")
    freq_cols = check_inv_freq(freq_cols, 2 * freq_rows.shape[0], name="freq_cols")
    check_size(("len(d_rows)", d_rows.shape[0]), ("len(d_cols)", d_cols.shape[0]),
               ("len(freq_rows)", freq_rows.shape[0]), what="the (R, C, dim // 2) angles")
    angles = (d_rows[:, None, None] * freq_rows + d_cols[None, :, None] * freq_cols)
    return angles.cos().mean(dim=-1)


def _rotate_half_pairs(x: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
    """Rotate pairs ``(i, i + d/2)`` of ``x`` (..., seq, d) by ``angles`` (seq, d/2)."""
    h = x.shape[-1] // 2
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., :h], x[..., h:]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


def _rotate_interleaved_pairs(x: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
    """Rotate pairs ``(2i, 2i + 1)`` of ``x`` (..., seq, d) by ``angles`` (seq, d/2)."""
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).flatten(-2)


def apply_rope_2d(
    x: torch.Tensor,
    rows: torch.Tensor,
    cols: torch.Tensor,
    *,
    base: float = 10000.0,
    layout: str = "blocks",
    frequencies: tuple[torch.Tensor, torch.Tensor] | None = None,
    pairing: str = "half",
) -> torch.Tensor:
    """2-D RoPE: rotate each pair of a patch at ``(r, c)`` by ``r·f^row_i + c·f^col_i``.

    ``"blocks"`` and ``"alternating"`` pair features ``(i, i + dim/2)`` over the whole head;
    ``"split"`` pairs ``(i, i + dim/4)`` inside the first half (``rows``) and inside the second
    (``cols``), as Gemma 4 does; Gemma 4's image processor gives (column, row) ids, so call
    ``apply_rope_2d(x, cols, rows, layout="split")`` to match it.
    ``frequencies`` replaces the layout's axial frequencies (e.g. RoPE-Mixed's), keeping its
    pairing. ``pairing="interleaved"`` rotates adjacent features ``(2i, 2i + 1)`` by the angle
    of pair ``i`` instead (inside each half for ``"split"``): with ``layout="blocks"`` this is
    SAM 2 video's and EdgeTAM video's ``Sam2VideoVisionRotaryEmbedding`` with
    ``rotate_pairwise`` in transformers 5.25, whose first ``dim/4`` pairs read the first id it
    is given (the model passes (column, row), so call ``apply_rope_2d(x, cols, rows, ...)``).

    Parameters
    ----------
    x : torch.Tensor
        Shape ``(..., seq, dim)``, floating point, ``dim`` a multiple of 4.
    rows, cols : torch.Tensor
        Shape ``(seq,)``, e.g. from :func:`patch_grid_positions`.
    base : float
        The RoPE base (> 0); unused when ``frequencies`` is given.
    layout : {"blocks", "alternating", "split"}
        See :data:`AXIAL_LAYOUTS`.
    frequencies : tuple of torch.Tensor, optional
        ``(freq_rows, freq_cols)``, each of shape ``(dim // 2,)``.
    pairing : {"half", "interleaved"}
        Which features form pair ``i``; see :data:`ROPE_2D_PAIRINGS`.

    Returns
    -------
    torch.Tensor
        Same shape and dtype as ``x``.
    """
    x, seq, dim = check_rope_input(x)
    dim = _check_dim4(dim, "x.shape[-1] (dim)")
    layout = check_choice(layout, "layout", AXIAL_LAYOUTS)
    pairing = check_choice(pairing, "pairing", ROPE_2D_PAIRINGS)
    rotate = _rotate_half_pairs if pairing == "half" else _rotate_interleaved_pairs
    if frequencies is None:
        freq_rows, freq_cols = axial_rope_frequencies(dim, base, layout=layout)
    else:
        if not isinstance(frequencies, tuple) or len(frequencies) != 2:
            raise TypeError(
                "frequencies must be a tuple (freq_rows, freq_cols), "
                f"got {type(frequencies).__name__}"
            )
        freq_rows = check_inv_freq(frequencies[0], dim, name="freq_rows")
        freq_cols = check_inv_freq(frequencies[1], dim, name="freq_cols")
    rows = check_positions(rows, seq, name="rows")
    cols = check_positions(cols, seq, name="cols")
    angles = rope_2d_angles(rows, cols, freq_rows, freq_cols).to(x.device)
    work = compute_dtype(x.dtype)
    xw = x.to(work)
    if layout == "split":
        q, h = dim // 4, dim // 2
        out = torch.cat(
            (rotate(xw[..., :h], angles[:, :q]), rotate(xw[..., h:], angles[:, q:])),
            dim=-1,
        )
    else:
        out = rotate(xw, angles)
    return out.to(x.dtype)


# --- M-RoPE --------------------------------------------------------------------------------------


def _check_section(mrope_section: object) -> tuple[int, int, int]:
    if isinstance(mrope_section, (str, bytes)) or not isinstance(mrope_section, Sequence):
        raise TypeError(
            f"mrope_section must be a sequence of three positive integers (t, h, w pair counts), "
            f"got {mrope_section!r}"
        )
    if len(mrope_section) != 3:
        raise ValueError(
            f"mrope_section must have three entries (t, h, w), got {len(mrope_section)}"
        )
    t, h, w = (check_int(s, f"mrope_section[{i}]", minimum=0, what="a non-negative integer")
               for i, s in enumerate(mrope_section))
    check_size(("sum(mrope_section)", t + h + w))
    if t + h + w == 0:
        raise ValueError("mrope_section must have a positive sum (the number of frequency pairs)")
    return t, h, w


def mrope_axis_map(mrope_section: Sequence[int], *, interleaved: bool = False) -> torch.Tensor:
    """Which position id (0 = t, 1 = h, 2 = w) each frequency pair of M-RoPE reads.

    Contiguous (Qwen2-VL, Qwen2.5-VL): the first ``s_t`` pairs read time, the next ``s_h`` height,
    the last ``s_w`` width, so each axis owns one *band* of frequencies. Interleaved (MRoPE-I,
    Qwen3-VL): pair ``i`` reads height if ``i ≡ 1 (mod 3)`` and ``i < 3·s_h``, width if
    ``i ≡ 2 (mod 3)`` and ``i < 3·s_w``, time otherwise, so each axis spans the whole spectrum.
    A section this pattern cannot realise (e.g. ``[20, 22, 22]``) raises ``ValueError``;
    transformers accepts it and silently gives other counts (``(22, 21, 21)`` there).

    Parameters
    ----------
    mrope_section : sequence of int
        ``(s_t, s_h, s_w)``, pairs per axis; their sum is ``dim / 2``.
    interleaved : bool
        MRoPE-I's assignment instead of contiguous blocks.

    Returns
    -------
    torch.Tensor
        Shape ``(sum(mrope_section),)``, int64 values in ``{0, 1, 2}``.
    """
    s_t, s_h, s_w = _check_section(mrope_section)
    if not isinstance(interleaved, bool):
        raise TypeError(f"interleaved must be a bool, got {interleaved!r}")
    n = s_t + s_h + s_w
    if not interleaved:
        return torch.repeat_interleave(torch.arange(3), torch.tensor([s_t, s_h, s_w]))
    i = torch.arange(n)
    axis = torch.zeros(n, dtype=torch.int64)
    axis[(i % 3 == 1) & (i < 3 * s_h)] = 1
    axis[(i % 3 == 2) & (i < 3 * s_w)] = 2
    counts = tuple(int((axis == a).sum()) for a in range(3))
    if counts != (s_t, s_h, s_w):
        raise ValueError(
            f"mrope_section = {list(mrope_section)} cannot be interleaved: the pattern thw… over "
            f"{n} pairs gives (t, h, w) counts {counts}; it needs 3·s_h − 1 <= sum and "
            "3·s_w <= sum"
        )
    return axis


def mrope_axis_string(mrope_section: Sequence[int], *, interleaved: bool = False) -> str:
    """:func:`mrope_axis_map` as letters, e.g. ``"tttthhhhhhwwwwww"`` for ``[4, 6, 6]``."""
    return "".join(MROPE_AXES[int(a)] for a in mrope_axis_map(mrope_section,
                                                                interleaved=interleaved))


def mrope_fastest_turn(
    mrope_section: Sequence[int], base: float, tokens: int = 46, *, interleaved: bool = False
) -> dict[str, torch.Tensor]:
    """Angle of the fastest height pair and the fastest width pair across an image, per offset.

    Inside one image every token has the same time id, so only the height and width ids vary: a
    token ``k`` rows (columns) from the first turns the fastest pair reading height (width) by
    ``k·θ_fast``, with ``θ_i = base^(−2i/d)``, ``d = 2·sum(mrope_section)``, and ``θ_fast`` the
    largest ``θ_i`` among the pairs :func:`mrope_axis_map` gives that axis.

    Parameters
    ----------
    mrope_section : sequence of int
        ``(s_t, s_h, s_w)``, e.g. Qwen2-VL's ``(16, 24, 24)``.
    base : float
        ``rope_theta`` (> 1).
    tokens : int
        Side of the image in merged tokens (2 … 4096); offsets run ``0 … tokens − 1``.
    interleaved : bool
        MRoPE-I's interleaved axis map (Qwen3-VL) instead of contiguous sections.

    Returns
    -------
    dict
        ``{"h": (tokens,) tensor, "w": (tokens,) tensor}`` of float64 angles in radians, not
        wrapped: entry ``k`` is the fastest pair's angle ``k`` rows (columns) from the first.
    """
    section = _check_section(mrope_section)
    base = check_base(base)
    if base <= 1.0:
        raise ValueError(f"base must be > 1 (rope_theta), got {base}")
    tokens = check_int(tokens, "tokens", minimum=2, what="an integer in 2 … 4096")
    if tokens > 4096:
        raise ValueError(f"tokens must be an integer in 2 … 4096, got {tokens}")
    if not isinstance(interleaved, bool):
        raise TypeError(f"interleaved must be a bool, got {interleaved!r}")
    axes = mrope_axis_map(section, interleaved=interleaved)
    theta = rope_inv_freq(2 * sum(section), base).to(torch.float64)
    offsets = torch.arange(tokens, dtype=torch.float64)
    out = {}
    for a, name in ((1, "h"), (2, "w")):
        if not bool((axes == a).any()):
            raise ValueError(f"mrope_section gives no pair to the {name} axis: {list(section)}")
        out[name] = offsets * float(theta[axes == a].max())
    return out


def _check_position_ids(position_ids: object, seq: int | None = None) -> torch.Tensor:
    if not isinstance(position_ids, torch.Tensor):
        raise TypeError(
            "position_ids must be a torch.Tensor of shape (3, seq), "
            f"got {type(position_ids).__name__}"
        )
    if position_ids.dtype.is_complex or position_ids.dtype == torch.bool:
        raise TypeError(f"position_ids must hold integers or real floats, got {position_ids.dtype}")
    if position_ids.ndim != 2 or position_ids.shape[0] != 3:
        raise ValueError(
            f"position_ids must have shape (3, seq) (t, h, w ids), got {tuple(position_ids.shape)}"
        )
    if seq is not None and position_ids.shape[1] != seq:
        raise ValueError(
            f"position_ids must have shape (3, seq = {seq}) (x.shape[-2]), "
            f"got {tuple(position_ids.shape)}"
        )
    out = position_ids.to(torch.float64)
    if not bool(torch.isfinite(out).all()):
        raise ValueError("position_ids must be finite, got a NaN or infinite entry")
    return out


def mrope_angles(
    position_ids: torch.Tensor,
    inv_freq: torch.Tensor,
    mrope_section: Sequence[int],
    *,
    interleaved: bool = False,
) -> torch.Tensor:
    """M-RoPE angles: pair ``i`` of token ``n`` turns by ``p[a_i, n]·θ_i``, ``a_i`` its axis.

    Parameters
    ----------
    position_ids : torch.Tensor
        Shape ``(3, seq)``: time, height and width ids (e.g. :func:`mrope_position_ids`).
    inv_freq : torch.Tensor
        Shape ``(dim // 2,)``, the ordinary 1-D RoPE frequencies.
    mrope_section : sequence of int
        Pairs per axis, summing to ``dim // 2``.
    interleaved : bool
        MRoPE-I (Qwen3-VL) instead of contiguous sections (Qwen2-VL).

    Returns
    -------
    torch.Tensor
        Shape ``(seq, dim // 2)``, float64.
    """
    pos = _check_position_ids(position_ids)
    inv_freq = check_inv_freq(inv_freq)
    axis = mrope_axis_map(mrope_section, interleaved=interleaved)
    if axis.shape[0] != inv_freq.shape[0]:
        raise ValueError(
            f"sum(mrope_section) must equal len(inv_freq) = dim // 2 = {inv_freq.shape[0]}, "
            f"got {axis.shape[0]}"
        )
    check_size(("seq", pos.shape[1]), ("len(inv_freq)", inv_freq.shape[0]),
               what="the (seq, dim // 2) angles")
    # pos[axis] is (dim/2, seq): row i holds the id pair i reads.
    return pos[axis].T * inv_freq


def mrope_cos_sin(
    position_ids: torch.Tensor,
    inv_freq: torch.Tensor,
    mrope_section: Sequence[int],
    *,
    interleaved: bool = False,
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The ``(cos, sin)`` tables of M-RoPE in the half layout, as the Qwen-VL rotary classes return.

    Parameters
    ----------
    position_ids : torch.Tensor
        Shape ``(3, seq)``.
    inv_freq : torch.Tensor
        Shape ``(dim // 2,)``.
    mrope_section : sequence of int
        Pairs per axis, summing to ``dim // 2``.
    interleaved : bool
        MRoPE-I instead of contiguous sections.
    dtype : torch.dtype
        Output dtype (the angles are float64 before the cast).

    Returns
    -------
    tuple of torch.Tensor
        ``cos`` and ``sin``, each of shape ``(seq, dim)`` = ``cat(c, c)``.
    """
    dtype = check_dtype(dtype)
    angles = mrope_angles(position_ids, inv_freq, mrope_section, interleaved=interleaved)
    cos, sin = angles.cos(), angles.sin()
    return torch.cat((cos, cos), dim=-1).to(dtype), torch.cat((sin, sin), dim=-1).to(dtype)


def apply_mrope(
    x: torch.Tensor,
    position_ids: torch.Tensor,
    mrope_section: Sequence[int],
    *,
    base: float | None = None,
    inv_freq: torch.Tensor | None = None,
    interleaved: bool = False,
) -> torch.Tensor:
    """Rotate ``x`` by M-RoPE (half pairing ``(i, i + dim/2)``, as the Qwen-VL language models).

    When the three rows of ``position_ids`` are equal (text), this is exactly 1-D RoPE
    (:func:`posenc_lib.rope.apply_rope_half`) whatever the section.

    Parameters
    ----------
    x : torch.Tensor
        Shape ``(..., seq, dim)``, floating point, ``dim`` even.
    position_ids : torch.Tensor
        Shape ``(3, seq)``: time, height and width ids.
    mrope_section : sequence of int
        Pairs per axis, summing to ``dim // 2`` (Qwen2-VL: ``[16, 24, 24]``; Qwen3-VL:
        ``[24, 20, 20]`` interleaved).
    base : float, optional
        ``rope_theta``, for ``θ_i = base^(-2i/dim)`` when ``inv_freq`` is not given. There is
        no default: no M-RoPE model uses 10 000 (Qwen2-VL 1e6, released Qwen3-VL 5e6), and a
        wrong base still passes every text-only check.
    inv_freq : torch.Tensor, optional
        Shape ``(dim // 2,)``, instead of ``base``. Exactly one of the two is required.
    interleaved : bool
        MRoPE-I instead of contiguous sections.

    Returns
    -------
    torch.Tensor
        Same shape and dtype as ``x``.

    Raises
    ------
    ValueError
        If neither ``base`` nor ``inv_freq`` is given, or both are.
    """
    x, seq, dim = check_rope_input(x)
    if base is None and inv_freq is None:
        raise ValueError(
            "apply_mrope needs base or inv_freq: give rope_theta, e.g. base=1e6 for "
            "Qwen2-VL, 5e6 for released Qwen3-VL"
        )
    if inv_freq is None:
        inv_freq = rope_inv_freq(dim, resolve_base(base, inv_freq))
    else:
        resolve_base(base, inv_freq)  # refuses a base passed with inv_freq
        inv_freq = check_inv_freq(inv_freq, dim)
    pos = _check_position_ids(position_ids, seq)
    angles = mrope_angles(pos, inv_freq, mrope_section, interleaved=interleaved).to(x.device)
    work = compute_dtype(x.dtype)
    return _rotate_half_pairs(x.to(work), angles).to(x.dtype)


# --- multimodal position ids ---------------------------------------------------------------------

_KINDS = ("text", "image", "video")
_RESUME_RULES = ("max", "grid")
_SECONDS_CASTS = ("float32", "int", "float32_seconds_first")
_PADDING_SIDES = ("left", "right")
#: Position-id layouts of :func:`multimodal_layout_ids`.
MULTIMODAL_LAYOUTS = ("mrope", "spatial_reset", "videorope")

# One segment, checked: kind, t (or the text length), h, w, and the time spacing — ``None`` (1 per
# temporal patch, exact integers), ``(interval,)`` or ``(tokens_per_second, seconds_per_grid)``.
_Segment = tuple[str, int, int, int, tuple[float, ...] | None]


def _check_segment(i: int, seg: object, merge: int) -> _Segment:
    name = f"segments[{i}]"
    if not isinstance(seg, tuple) or not seg or not isinstance(seg[0], str):
        raise TypeError(
            f"{name} must be a tuple ('text', n), ('image', t, h, w) or ('video', t, h, w"
            f"[, time_interval | , tokens_per_second, seconds_per_grid]), got {seg!r}"
        )
    kind = check_choice(seg[0], f"{name}[0]", _KINDS)
    if kind == "text":
        if len(seg) != 2:
            raise ValueError(f"{name} must be ('text', n), got {seg!r}")
        return kind, check_length(seg[1], f"{name} length"), 0, 0, None
    sizes = {"image": (4,), "video": (4, 5, 6)}[kind]
    if len(seg) not in sizes:
        form = ("('image', t, h, w)" if kind == "image" else
                "('video', t, h, w), ('video', t, h, w, time_interval) or "
                "('video', t, h, w, tokens_per_second, seconds_per_grid)")
        raise ValueError(f"{name} must be {form}, got {seg!r}")
    t, h, w = (check_positive_int(v, f"{name} grid {a}")
               for v, a in zip(seg[1:4], "thw", strict=True))
    if h % merge or w % merge:
        raise ValueError(
            f"{name} grid h and w must be multiples of spatial_merge_size = {merge}, "
            f"got h = {h}, w = {w}"
        )
    spacing: tuple[float, ...] | None = None
    if len(seg) == 5:
        spacing = (check_positive(_scalar(seg[4]), f"{name} time_interval"),)
    elif len(seg) == 6:
        spacing = (check_positive(_scalar(seg[4]), f"{name} tokens_per_second"),
                   check_positive(_scalar(seg[5]), f"{name} seconds_per_grid"))
    check_size((f"{name} grid t", t), (f"{name} grid h", h), (f"{name} grid w", w))
    return kind, t, h, w, spacing


def _scalar(value: object) -> object:
    """A one-element tensor (a processor's ``second_per_grid_ts[i]``) as a Python number."""
    if isinstance(value, torch.Tensor) and value.numel() == 1 and value.dtype.is_floating_point:
        return value.item()
    return value


def _time_offsets(t: int, spacing: tuple[float, ...] | None,
                  seconds_cast: str = "float32") -> torch.Tensor:
    """Time ids of a grid's ``t`` temporal patches, before the start offset.

    ``seconds_cast="float32"`` (transformers 5.18 and later, after PR #48669):
    ``(arange(t) * time_interval).long()`` with ``time_interval = tokens_per_second *
    second_per_grid_ts[i]`` a float32 tensor: the product, then each patch's multiple, are rounded
    to float32 and truncated — at 25 frames per second (``2/25`` s per patch in float32) and 2
    tokens per second, patch 25 gets ``⌊25 · 0.16⌋ = 4`` where a float64 product of the float32
    seconds gives 3. ``seconds_cast="int"`` (4.52 to 5.2's
    ``torch.as_tensor(second_per_grid_t, dtype=range_tensor.dtype)``, and 5.x's
    ``int(next(second_per_grid_ts))`` from 5.6.0 until 5.17; 5.3.0 to 5.5.4 had the cast too but
    gave every temporal patch the time id ``start · time_interval``, issue #45381, not reproduced):
    the seconds are truncated to an integer first, ``(arange(t) * int(seconds)) *
    tokens_per_second``, so below one second per patch every temporal patch gets time id 0.
    """
    frames = torch.arange(t)
    if spacing is None:
        return frames
    if len(spacing) == 1:
        interval = torch.tensor(spacing[0], dtype=torch.float32)
        return (frames.to(torch.float32) * interval).long()
    tokens_per_second, seconds = spacing
    if seconds_cast == "int":
        whole = torch.tensor(seconds, dtype=torch.float32).long()  # truncates toward zero
        return (frames * whole * tokens_per_second).long()
    if seconds_cast == "float32_seconds_first":  # 4.49-4.51: (range * seconds) * tokens_per_second
        return ((frames * torch.tensor(seconds, dtype=torch.float32)) * tokens_per_second).long()
    interval = torch.tensor(tokens_per_second, dtype=torch.float32) * torch.tensor(
        seconds, dtype=torch.float32)
    return (frames.to(torch.float32) * interval).long()


def _check_adjacent(parsed: list[_Segment]) -> None:
    for i in range(1, len(parsed)):
        if parsed[i][0] != "text" and parsed[i][0] == parsed[i - 1][0]:
            raise ValueError(
                f"segments[{i - 1}] and segments[{i}] are two {parsed[i][0]}s with no text "
                "between: "
                "real prompts separate them with <vision_start>/<vision_end> tokens, and "
                "get_rope_index would read two adjacent grids as one; put a ('text', n) between"
            )


def _row_ids(parsed: list[_Segment], merge: int, resume: str,
             seconds_cast: str = "float32") -> torch.Tensor:
    parts: list[torch.Tensor] = []
    p = 0
    for kind, a, h, w, spacing in parsed:
        if kind == "text":
            parts.append(torch.arange(p, p + a).expand(3, -1))
            p += a
            continue
        gh, gw = h // merge, w // merge
        times = _time_offsets(a, spacing, seconds_cast) + p
        tt, hh, ww = torch.meshgrid(times, torch.arange(gh) + p, torch.arange(gw) + p,
                                    indexing="ij")
        parts.append(torch.stack((tt, hh, ww)).reshape(3, -1))
        # 4.x and the release code restart after the largest id, for a video with long
        # time spacing far beyond the grid; 5.3+ skips the grid's longer side only
        p = int(parts[-1].max()) + 1 if resume == "max" else p + max(h, w) // merge
    return torch.cat(parts, dim=1)


def _parse(segments: object, merge: int, name: str = "segments") -> list[_Segment]:
    if isinstance(segments, (str, bytes)) or not isinstance(segments, Sequence):
        raise TypeError(f"{name} must be a sequence of tuples, got {type(segments).__name__}")
    parsed = [_check_segment(i, seg, merge) for i, seg in enumerate(segments)]
    _check_adjacent(parsed)
    total = sum(a if kind == "text" else a * (h // merge) * (w // merge)
                for kind, a, h, w, _ in parsed)
    check_size(("3", 3), ("the sequence length", total), what="the position ids")
    if total == 0:
        raise ValueError(f"{name} must hold at least one token")
    return parsed


def mrope_position_ids(
    segments: Sequence[tuple[object, ...]],
    *,
    spatial_merge_size: int = 2,
    resume: str = "max",
    seconds_cast: str = "float32",
) -> tuple[torch.Tensor, int]:
    """The ``(3, seq)`` M-RoPE ids of a text / image / video sequence, as ``get_rope_index``.

    Text of ``n`` tokens takes ids ``p, p+1, …`` on all three axes and moves ``p`` on by ``n``.
    An image or video grid ``(t, h, w)`` of patches becomes ``t·(h/m)·(w/m)`` tokens (``m`` the
    spatial merge size) with ids time ``p + ⌊k·δ_t⌋`` for temporal patch ``k`` (``δ_t`` the time
    interval: 1 for images and Qwen2-VL, ``tokens_per_second · seconds_per_grid`` for Qwen2.5-VL
    videos), height ``p + row``, width ``p + col``. Then,
    with ``resume="max"`` (the default: transformers 4.x up to 5.2, the rule of the Qwen2-VL
    paper, "the maximum position ID of the preceding modality" plus one, and of the reference
    code contributed at the models' release; that the checkpoints were trained with it is an
    inference) the next segment starts at the largest id so far plus one; with
    ``resume="grid"`` (transformers 5.3 and later, checked on 5.25; 5.3.0 to 5.5.4 also had wrong
    video time ids, see Notes) ``p`` moves on by
    ``max(h, w) / m`` — not by the number of tokens, and not by the number of frames. The two
    agree for images and single frames and differ for videos whose last time id
    ``⌊(t−1)·δ_t⌋`` reaches ``max(h, w) / m``.

    One time id spans ``1 / tokens_per_second`` seconds, so when ``δ_t < 1`` (more than
    ``2 · tokens_per_second`` frames per second at ``temporal_patch_size`` 2) several temporal
    patches share a time id under every ``seconds_cast`` (QwenLM/Qwen3-VL issue #1031).

    Real prompts wrap every image and video in ``<vision_start>`` / ``<vision_end>`` text tokens;
    two grids of the same kind with no text between are refused, because ``get_rope_index``
    groups adjacent tokens of one type and would read them as one grid.

    Parameters
    ----------
    segments : sequence of tuple
        In order: ``("text", n)``, ``("image", t, h, w)``, ``("video", t, h, w)``,
        ``("video", t, h, w, time_interval)`` or ``("video", t, h, w, tokens_per_second,
        seconds_per_grid)``, with the grid in patches, as ``image_grid_thw`` /
        ``video_grid_thw``; ``seconds_per_grid`` may be the processor's float32
        ``second_per_grid_ts[i]``. For Qwen3-VL give each temporal patch as its own
        ``("video", 1, h, w)`` between its timestamp text segments, as its ``get_rope_index``
        splits ``video_grid_thw``.
    spatial_merge_size : int
        ``m`` (2 in the Qwen-VL models).
    resume : {"max", "grid"}
        Where the segment after an image or video starts: the largest id so far plus one
        (transformers ≤ 5.2, the release code) or ``p + max(h, w) / m``
        (transformers ≥ 5.3). The default is the release rule, not the installed library's:
        to compare with ``get_rope_index`` of transformers 5.3 or later on a video, pass
        ``resume="grid"``; for images and single frames the two rules agree.
    seconds_cast : {"float32", "int", "float32_seconds_first"}
        How a temporal patch's time offset is computed (the six-element video form only):
        ``"float32"``, ``(arange(t) · (tokens_per_second · seconds)).long()`` in float32
        (transformers 5.18 and later, after PR #48669); ``"int"``, the seconds first truncated to
        an integer (transformers 4.52 to 5.17), which gives every temporal patch time id 0 below
        one second per patch (more than 2 frames per second at ``temporal_patch_size`` 2);
        ``"float32_seconds_first"``, ``((arange(t) · seconds) · tokens_per_second).long()`` in
        float32 (transformers 4.49 to 4.51, where Qwen2.5-VL was released), which differs from
        ``"float32"`` only by rounding. The processor's default 2 fps (1 s per patch) gives the
        same ids all three ways.

    Notes
    -----
    The defaults, ``resume="max"`` with ``seconds_cast="float32"``, are the combination of no
    single transformers version (5.18 and later pair the float32 product with ``"grid"``). They
    are the code the Qwen team contributed for Qwen2.5-VL's release (transformers 4.49 to 4.51,
    ``resume="max"`` with ``"float32_seconds_first"``) up to the float32 rounding of the
    product. For one version's ids exactly pass ``seconds_cast="float32_seconds_first"``
    (4.49–4.51), ``"int"`` (4.52–5.2, with ``"max"``; 5.6.0–5.17 with ``resume="grid"``) or
    ``resume="grid"`` (5.18 and later). No option reproduces 5.3.0 to 5.5.4, whose
    ``get_vision_position_ids`` computed ``torch.full((n,), start) * time_interval``: every token
    of a video got time id ``p · δ_t`` (issue #45381, fixed in 5.6.0 by PR #45400), and in 5.3.0 a
    still image got ``p · tokens_per_second`` (issue #45325, fixed by PR #45330).

    Returns
    -------
    tuple
        ``position_ids`` of shape ``(3, seq)``, int64, and ``rope_delta`` = ``max id + 1 − seq``,
        the shift transformers adds to ``arange`` positions of tokens generated after the prompt
        when it rebuilds ids from the cache length (a ``forward`` without ``position_ids``);
        ``generate`` instead continues from the prompt's last id plus one.
    """
    merge = check_positive_int(spatial_merge_size, "spatial_merge_size")
    resume = check_choice(resume, "resume", _RESUME_RULES)
    seconds_cast = check_choice(seconds_cast, "seconds_cast", _SECONDS_CASTS)
    ids = _row_ids(_parse(segments, merge), merge, resume, seconds_cast)
    return ids, int(ids.max()) + 1 - ids.shape[1]


def multimodal_layout_ids(
    segments: Sequence[tuple[object, ...]],
    *,
    layout: str = "mrope",
    spatial_merge_size: int = 2,
    temporal_stride: int = 1,
) -> torch.Tensor:
    """The ``(3, seq)`` (t, h, w) ids of a text / image / video sequence under three layouts.

    Text of ``n`` tokens takes ids ``p, p+1, …`` on all three axes. A grid ``(t, h, w)`` of
    patches becomes ``t·(h/m)·(w/m)`` tokens, temporal patch ``k``, row ``y``, column ``x``:

    ``"mrope"``
        Qwen2-VL's M-RoPE with the release rule: ``(p + s·k, p + y, p + x)``; the next segment
        starts one past the largest id (:func:`mrope_position_ids` with ``resume="max"`` for
        images and integer time spacing).
    ``"spatial_reset"``
        The spatial reset of Huang et al.'s MRoPE-I code (``JJJYmmm/Multimodal-RoPEs``,
        ``multimodal_ropes/pos_design/mrope_i.py``): ``(p + s·k, y, x)``, the spatial ids start
        from 0 in every grid; the next segment starts at ``p + max(s·k, y, x) + 1``, where
        M-RoPE's would.
    ``"videorope"``
        VideoRoPE's diagonal layout (Wei et al.; as in
        ``multimodal_ropes/pos_design/videorope.py`` of the same repository): ``t = p + s·k``,
        ``h = t + y − ⌊(h/m − 1)/2⌋``, ``w = t + x − ⌊(w/m − 1)/2⌋``, so the grid's centre
        token has equal ids on all three axes; the next segment starts one past the largest
        *time* id, ``p + s·(t − 1) + 1``.

    ``s`` is ``temporal_stride`` (VideoRoPE's adjustable temporal spacing; 1 in M-RoPE).
    Real prompts also wrap each grid in ``<vision_start>`` / ``<vision_end>`` tokens; here they
    belong to the text segments around it.

    Parameters
    ----------
    segments : sequence of tuple
        ``("text", n)``, ``("image", t, h, w)`` or ``("video", t, h, w)``, the grid in patches.
    layout : {"mrope", "spatial_reset", "videorope"}
        The id layout.
    spatial_merge_size : int
        ``m`` (2 in the Qwen-VL models).
    temporal_stride : int
        Time ids per temporal patch.

    Returns
    -------
    torch.Tensor
        The ids, shape ``(3, seq)``, int64.
    """
    merge = check_positive_int(spatial_merge_size, "spatial_merge_size")
    layout = check_choice(layout, "layout", MULTIMODAL_LAYOUTS)
    stride = check_positive_int(temporal_stride, "temporal_stride")
    check_size(("temporal_stride", stride), what="the time ids")
    parsed = _parse(segments, merge)
    if any(spacing is not None for *_, spacing in parsed):
        raise ValueError("multimodal_layout_ids takes ('video', t, h, w) grids only; the time "
                         "spacing is temporal_stride")
    parts: list[torch.Tensor] = []
    p = 0
    for kind, a, h, w, _ in parsed:
        if kind == "text":
            parts.append(torch.arange(p, p + a).expand(3, -1))
            p += a
            continue
        gh, gw = h // merge, w // merge
        tt, yy, xx = torch.meshgrid(torch.arange(a) * stride, torch.arange(gh), torch.arange(gw),
                                    indexing="ij")
        if layout == "mrope":
            ids = torch.stack((tt + p, yy + p, xx + p))
            nxt = int(ids.max()) + 1
        elif layout == "spatial_reset":
            ids = torch.stack((tt + p, yy, xx))
            nxt = p + int(torch.stack((tt, yy, xx)).max()) + 1
        else:
            t_ids = tt + p
            ids = torch.stack((t_ids, t_ids + yy - (gh - 1) // 2, t_ids + xx - (gw - 1) // 2))
            nxt = int(t_ids.max()) + 1
        parts.append(ids.reshape(3, -1))
        p = nxt
    return torch.cat(parts, dim=1)


def hf_rope_index_ids(
    model: object,
    segments: Sequence[tuple[object, ...]],
    *,
    spatial_merge_size: int = 2,
    **kwargs: object,
) -> tuple[torch.Tensor, int]:
    """Run a real Qwen-VL model's ``get_rope_index`` on a sequence given as segments.

    Builds the ``mm_token_type_ids`` (0 text, 1 image, 2 video) and the ``image_grid_thw`` /
    ``video_grid_thw`` that ``get_rope_index`` reads from the same segment list
    :func:`mrope_position_ids` takes, and calls it on a batch of one. The token ids themselves are
    zeros: ``get_rope_index`` in transformers 5.25 reads only the types and the grids. Use it to
    compare the library's ids with a model's, as the chapters and ``tests/test_multimodal.py`` do.

    Parameters
    ----------
    model : object
        A model with a transformers-5 ``get_rope_index(input_ids, mm_token_type_ids,
        image_grid_thw, video_grid_thw, **kwargs)`` method (``Qwen2VLModel``,
        ``Qwen2_5_VLModel``, …); it is not imported here.
    segments : sequence of tuple
        As for :func:`mrope_position_ids`: ``("text", n)``, ``("image", t, h, w)``,
        ``("video", t, h, w)``, with the grid in patches. A video's time-spacing elements are
        ignored here; pass ``second_per_grid_ts=`` through ``kwargs`` instead.
    spatial_merge_size : int
        ``m``: a grid ``(t, h, w)`` takes ``t·(h/m)·(w/m)`` tokens (2 in the Qwen-VL models).
    **kwargs
        Passed on to ``get_rope_index`` (e.g. ``second_per_grid_ts``).

    Returns
    -------
    tuple
        ``position_ids`` of shape ``(3, seq)`` and ``rope_deltas`` as an int.
    """
    merge = check_positive_int(spatial_merge_size, "spatial_merge_size")
    get_rope_index = getattr(model, "get_rope_index", None)
    if not callable(get_rope_index):
        raise TypeError(f"model must have a get_rope_index method, got {type(model).__name__}")
    parsed = _parse(segments, merge)
    types: list[int] = []
    for kind, a, h, w, _ in parsed:
        count = a if kind == "text" else a * (h // merge) * (w // merge)
        types += [{"text": 0, "image": 1, "video": 2}[kind]] * count
    grids = [torch.tensor([[a, h, w] for k, a, h, w, _ in parsed if k == kind])
             if any(k == kind for k, *_ in parsed) else None for kind in ("image", "video")]
    ids, delta = get_rope_index(torch.zeros(1, len(types), dtype=torch.long),
                                torch.tensor([types]), *grids, **kwargs)
    return ids[:, 0], int(delta.reshape(-1)[0])


def mrope_position_ids_batch(
    rows: Sequence[Sequence[tuple[object, ...]]],
    *,
    padding_side: str = "left",
    spatial_merge_size: int = 2,
    resume: str = "max",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """M-RoPE ids of a padded batch, as ``get_rope_index`` with an ``attention_mask``.

    Each row is numbered alone by :func:`mrope_position_ids` and placed after (``"left"``) or
    before (``"right"``) its padding; padding slots get id 0 on every axis, as transformers
    leaves them.

    Parameters
    ----------
    rows : sequence of sequences of tuple
        One segment list per row, as for :func:`mrope_position_ids`.
    padding_side : {"left", "right"}
        Where the padding goes.
    spatial_merge_size : int
        ``m`` (2 in the Qwen-VL models).
    resume : {"max", "grid"}
        As for :func:`mrope_position_ids`.

    Returns
    -------
    tuple of torch.Tensor
        ``position_ids`` of shape ``(3, batch, seq)``, ``attention_mask`` of shape
        ``(batch, seq)`` (1 on real tokens) and ``rope_deltas`` of shape ``(batch, 1)``, all int64;
        ``seq`` is the longest row's length.
    """
    merge = check_positive_int(spatial_merge_size, "spatial_merge_size")
    resume = check_choice(resume, "resume", _RESUME_RULES)
    padding_side = check_choice(padding_side, "padding_side", _PADDING_SIDES)
    if isinstance(rows, (str, bytes)) or not isinstance(rows, Sequence) or len(rows) == 0:
        raise TypeError(f"rows must be a non-empty sequence of segment lists, got {rows!r:.80}")
    each = [_row_ids(_parse(row, merge, f"rows[{b}]"), merge, resume)
            for b, row in enumerate(rows)]
    seq = max(ids.shape[1] for ids in each)
    check_size(("3", 3), ("batch", len(each)), ("seq", seq), what="the batch's position ids")
    position_ids = torch.zeros(3, len(each), seq, dtype=torch.long)
    mask = torch.zeros(len(each), seq, dtype=torch.long)
    deltas = torch.zeros(len(each), 1, dtype=torch.long)
    for b, ids in enumerate(each):
        n = ids.shape[1]
        span = slice(seq - n, seq) if padding_side == "left" else slice(0, n)
        position_ids[:, b, span] = ids
        mask[b, span] = 1
        deltas[b, 0] = int(ids.max()) + 1 - n
    return position_ids, mask, deltas
