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
    packed_alibi_bias,
)
from .analysis import rope_decay_bound, sinusoidal_similarity, wavelengths
from .architectures import LayerPosition, format_plan, position_plan, proportional_inv_freq
from .attention import attention, causal_mask
from .decay_law import cosine_integral, similarity_limit, similarity_log_law
from .euler import euler_partial_sums, rotate_complex
from .extension import EXTENSION_METHODS, extended_rope
from .hf import (
    hf_config_fields,
    hf_legacy_rope_config,
    hf_nested_rope_parameters,
    hf_proportional_rope_parameters,
    hf_rope_parameters,
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
from .serving import (
    packed_causal_mask,
    packed_document_ids,
    packed_position_ids,
    position_ids_from_mask,
    rerotate_keys,
    sink_softmax,
    sliding_window_mask,
)
from .sinusoidal import (
    SinusoidalPositionalEncoding,
    sinusoidal_frequencies,
    sinusoidal_shift_matrix,
    sinusoidal_table,
)

__version__ = "0.1.0"

__all__ = [
    "CONVENTIONS",
    "EXTENSION_METHODS",
    "LayerPosition",
    "RotaryEmbedding",
    "SinusoidalPositionalEncoding",
    "__version__",
    "abf_inv_freq",
    "alibi_bias",
    "alibi_bias_authors",
    "alibi_reach",
    "alibi_slopes",
    "alibi_window_mass",
    "apply_rope_complex",
    "apply_rope_half",
    "apply_rope_interleaved",
    "apply_rope_partial",
    "attention",
    "binary_encoding",
    "causal_mask",
    "cosine_integral",
    "dynamic_ntk_inv_freq",
    "euler_partial_sums",
    "extended_rope",
    "flash_attn_alibi_bias",
    "format_plan",
    "hf_config_fields",
    "hf_legacy_rope_config",
    "hf_nested_rope_parameters",
    "hf_proportional_rope_parameters",
    "hf_rope_parameters",
    "integer_encoding",
    "interleaved_to_half_permutation",
    "learned_encoding",
    "linear_bias",
    "llama3_inv_freq",
    "normalized_encoding",
    "ntk_inv_freq",
    "packed_alibi_bias",
    "packed_causal_mask",
    "packed_document_ids",
    "packed_position_ids",
    "partial_rotary_dim",
    "pi_inv_freq",
    "position_ids_from_mask",
    "position_plan",
    "proportional_inv_freq",
    "rerotate_keys",
    "rope_angles",
    "rope_cos_sin",
    "rope_decay_bound",
    "rope_inv_freq",
    "rope_rotation_matrix",
    "rotate_complex",
    "rotate_half",
    "similarity_limit",
    "similarity_log_law",
    "sines_only_encoding",
    "sink_softmax",
    "sinusoidal_frequencies",
    "sinusoidal_shift_matrix",
    "sinusoidal_similarity",
    "sinusoidal_table",
    "sliding_window_mask",
    "wavelengths",
    "yarn_correction_range",
    "yarn_inv_freq",
]
