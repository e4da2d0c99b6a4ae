"""posenc_lib: positional encodings for Transformers, exact and tested.

The library behind *The Positional Encoding Book*. Torch tensors in and out, features last:
``x`` is ``(..., seq, dim)``. Angles and tables are computed in float64 and cast to the input's
dtype. Figures live in :mod:`posenc_lib.viz` (one module per figure family), widgets
in :mod:`posenc_lib.widgets`; they are not imported here so that the core stays light.
"""

from .alibi import (
    alibi_bias,
    alibi_bias_authors,
    alibi_reach,
    alibi_slopes,
    alibi_window_mass,
    flash_attn_alibi_bias,
    linear_bias,
)
from .analysis import rope_decay_bound, sinusoidal_similarity, wavelengths
from .attention import attention, causal_mask
from .euler import euler_partial_sums, rotate_complex
from .extension import EXTENSION_METHODS, extended_rope
from .hf import hf_config_fields, hf_legacy_rope_config, hf_rope_parameters
from .multimodal import (
    AXIAL_LAYOUTS,
    MROPE_AXES,
    apply_mrope,
    apply_rope_2d,
    axial_rope_frequencies,
    mrope_angles,
    mrope_axis_map,
    mrope_axis_string,
    mrope_cos_sin,
    mrope_position_ids,
    patch_grid_positions,
    rope_2d_angles,
    rope_2d_similarity,
    rope_mixed_frequencies,
    sincos_2d_table,
)
from .rope import (
    CONVENTIONS,
    RotaryEmbedding,
    apply_rope_complex,
    apply_rope_half,
    apply_rope_interleaved,
    apply_rope_partial,
    interleaved_to_half_permutation,
    partial_rotary_dim,
    rope_angles,
    rope_cos_sin,
    rope_inv_freq,
    rope_rotation_matrix,
    rotate_half,
)
from .scaling import (
    abf_inv_freq,
    dynamic_ntk_inv_freq,
    llama3_inv_freq,
    ntk_inv_freq,
    pi_inv_freq,
    yarn_correction_range,
    yarn_inv_freq,
)
from .schemes import (
    binary_encoding,
    integer_encoding,
    learned_encoding,
    normalized_encoding,
    sines_only_encoding,
)
from .sinusoidal import (
    SinusoidalPositionalEncoding,
    sinusoidal_frequencies,
    sinusoidal_shift_matrix,
    sinusoidal_table,
)

__version__ = "0.1.0"

__all__ = [
    "AXIAL_LAYOUTS",
    "CONVENTIONS",
    "EXTENSION_METHODS",
    "MROPE_AXES",
    "RotaryEmbedding",
    "SinusoidalPositionalEncoding",
    "__version__",
    "abf_inv_freq",
    "alibi_bias",
    "alibi_bias_authors",
    "alibi_reach",
    "alibi_slopes",
    "alibi_window_mass",
    "apply_mrope",
    "apply_rope_2d",
    "apply_rope_complex",
    "apply_rope_half",
    "apply_rope_interleaved",
    "apply_rope_partial",
    "attention",
    "axial_rope_frequencies",
    "binary_encoding",
    "causal_mask",
    "dynamic_ntk_inv_freq",
    "euler_partial_sums",
    "extended_rope",
    "flash_attn_alibi_bias",
    "hf_config_fields",
    "hf_legacy_rope_config",
    "hf_rope_parameters",
    "integer_encoding",
    "interleaved_to_half_permutation",
    "learned_encoding",
    "linear_bias",
    "llama3_inv_freq",
    "mrope_angles",
    "mrope_axis_map",
    "mrope_axis_string",
    "mrope_cos_sin",
    "mrope_position_ids",
    "normalized_encoding",
    "ntk_inv_freq",
    "partial_rotary_dim",
    "patch_grid_positions",
    "pi_inv_freq",
    "rope_2d_angles",
    "rope_2d_similarity",
    "rope_angles",
    "rope_cos_sin",
    "rope_decay_bound",
    "rope_inv_freq",
    "rope_mixed_frequencies",
    "rope_rotation_matrix",
    "rotate_complex",
    "rotate_half",
    "sincos_2d_table",
    "sines_only_encoding",
    "sinusoidal_frequencies",
    "sinusoidal_shift_matrix",
    "sinusoidal_similarity",
    "sinusoidal_table",
    "wavelengths",
    "yarn_correction_range",
    "yarn_inv_freq",
]
