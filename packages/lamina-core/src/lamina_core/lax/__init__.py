"""`lamina_core.lax`: JAX's `lax` API over Lamina's primitives (`lamina.lax` re-exports it).

`lax` does no implicit type promotion: operands must already agree, except that Python
scalars take their default weak dtype. Each primitive family lives in its own module, which
defines the primitives, their core rules, and the `lax` functions over them.
"""

# Differentiation and batching rules, registered at import (each beside its primitives' family).
# Control flow lives in its own subpackage; `lax` is where users find it (as in JAX).
from lamina_core.lax import _bessel_ad as _bessel_ad
from lamina_core.lax import _bessel_batching as _bessel_batching
from lamina_core.lax import _conv_ad as _conv_ad
from lamina_core.lax import _conv_batching as _conv_batching
from lamina_core.lax import _cumulative_ad as _cumulative_ad
from lamina_core.lax import _cumulative_batching as _cumulative_batching
from lamina_core.lax import _elementwise_ad as _elementwise_ad
from lamina_core.lax import _elementwise_batching as _elementwise_batching
from lamina_core.lax import _empty as _empty
from lamina_core.lax import _explicit_rules as _explicit_rules
from lamina_core.lax import _fft_ad as _fft_ad
from lamina_core.lax import _fft_batching as _fft_batching
from lamina_core.lax import _gather_scatter_ad as _gather_scatter_ad
from lamina_core.lax import _gather_scatter_batching as _gather_scatter_batching
from lamina_core.lax import _igamma_ad as _igamma_ad
from lamina_core.lax import _igamma_batching as _igamma_batching
from lamina_core.lax import _joining_ad as _joining_ad
from lamina_core.lax import _joining_batching as _joining_batching
from lamina_core.lax import _linalg_ad as _linalg_ad
from lamina_core.lax import _linalg_batching as _linalg_batching
from lamina_core.lax import _ragged_ad as _ragged_ad
from lamina_core.lax import _reductions_ad as _reductions_ad
from lamina_core.lax import _reshard as _reshard
from lamina_core.lax import _selection_ad as _selection_ad
from lamina_core.lax import _selection_batching as _selection_batching
from lamina_core.lax import _shape_ad as _shape_ad
from lamina_core.lax import _shape_batching as _shape_batching
from lamina_core.lax import _slicing_ad as _slicing_ad
from lamina_core.lax import _slicing_batching as _slicing_batching
from lamina_core.lax import _sorting_ad as _sorting_ad
from lamina_core.lax import _sorting_batching as _sorting_batching
from lamina_core.lax import _structural_ad as _structural_ad
from lamina_core.lax import _transcendental_ad as _transcendental_ad
from lamina_core.lax import _windowed_ad as _windowed_ad
from lamina_core.lax import _windowed_batching as _windowed_batching
from lamina_core.lax import _zeta_ad as _zeta_ad
from lamina_core.lax import _zeta_batching as _zeta_batching
from lamina_core.lax._approx_top_k import *  # noqa: F403
from lamina_core.lax._associative_scan import *  # noqa: F403
from lamina_core.lax._barrier import *  # noqa: F403
from lamina_core.lax._bessel import *  # noqa: F403
from lamina_core.lax._collectives import *  # noqa: F403
from lamina_core.lax._collectives_layout import *  # noqa: F403
from lamina_core.lax._collectives_p2p import *  # noqa: F403
from lamina_core.lax._collectives_p2p import precv_p as precv_p
from lamina_core.lax._collectives_p2p import psend_p as psend_p
from lamina_core.lax._collectives_vma import psum_invariant_p as psum_invariant_p
from lamina_core.lax._composite import *  # noqa: F403
from lamina_core.lax._conv import *  # noqa: F403
from lamina_core.lax._conv_patches import *  # noqa: F403
from lamina_core.lax._conv_shapes import *  # noqa: F403
from lamina_core.lax._cumulative import *  # noqa: F403
from lamina_core.lax._device_put import *  # noqa: F403
from lamina_core.lax._dim_value import *  # noqa: F403
from lamina_core.lax._dot_types import *  # noqa: F403
from lamina_core.lax._elementwise import *  # noqa: F403
from lamina_core.lax._fft import *  # noqa: F403
from lamina_core.lax._gather_scatter import *  # noqa: F403
from lamina_core.lax._igamma import *  # noqa: F403
from lamina_core.lax._joining import *  # noqa: F403
from lamina_core.lax._linalg import *  # noqa: F403
from lamina_core.lax._linear_solve import *  # noqa: F403
from lamina_core.lax._misc_prims import *  # noqa: F403
from lamina_core.lax._platform import *  # noqa: F403
from lamina_core.lax._ragged_dot import *  # noqa: F403
from lamina_core.lax._reduce_generic import *  # noqa: F403
from lamina_core.lax._reductions import *  # noqa: F403
from lamina_core.lax._rng import *  # noqa: F403
from lamina_core.lax._scaled_dot import *  # noqa: F403
from lamina_core.lax._select_and_scatter import *  # noqa: F403
from lamina_core.lax._selection import *  # noqa: F403
from lamina_core.lax._shape import *  # noqa: F403
from lamina_core.lax._sharding_constraint import *  # noqa: F403
from lamina_core.lax._slicing import *  # noqa: F403
from lamina_core.lax._sorting import *  # noqa: F403
from lamina_core.lax._stop_gradient import *  # noqa: F403
from lamina_core.lax._structural import *  # noqa: F403
from lamina_core.lax._tokens import *  # noqa: F403
from lamina_core.lax._transcendental import *  # noqa: F403
from lamina_core.lax._windowed import *  # noqa: F403
from lamina_core.lax._zeta import *  # noqa: F403
from lamina_core.lax.control_flow import cond as cond
from lamina_core.lax.control_flow import cond_p as cond_p
from lamina_core.lax.control_flow import fori_loop as fori_loop
from lamina_core.lax.control_flow import map as map
from lamina_core.lax.control_flow import scan as scan
from lamina_core.lax.control_flow import scan_p as scan_p
from lamina_core.lax.control_flow import switch as switch
from lamina_core.lax.control_flow import while_loop as while_loop
from lamina_core.lax.control_flow import while_p as while_p

# The names of the families' `__all__` (and control flow's user functions), spelled out so
# that type checkers of `from lamina_core.lax import *` see them (a test keeps them equal).
# fmt: off
__all__ = [
    "AccuracyMode", "ConvDimensionNumbers", "ConvGeneralDilatedDimensionNumbers", "DotAlgorithm",
    "DotAlgorithmPreset", "DotDimensionNumbers", "FftType", "GatherDimensionNumbers",
    "GatherScatterMode", "Precision", "PrecisionLike", "RaggedDotDimensionNumbers",
    "RandomAlgorithm", "RoundingMethod", "ScatterDimensionNumbers", "Tolerance", "abs", "abs_p",
    "acos", "acos_p", "acosh", "acosh_p", "add", "add_p", "after_all", "after_all_p", "all_gather",
    "all_gather_p", "all_to_all", "all_to_all_p", "and_p", "approx_max_k", "approx_min_k",
    "approx_top_k_p", "argmax", "argmax_p", "argmin", "argmin_p", "asin", "asin_p", "asinh",
    "asinh_p", "associative_scan", "atan", "atan2", "atan2_p", "atan_p", "atanh", "atanh_p",
    "axis_index", "axis_index_p", "axis_size", "batch_matmul", "bessel_i0e", "bessel_i0e_p",
    "bessel_i1e", "bessel_i1e_p", "betainc", "bitcast_convert_type", "bitcast_convert_type_p",
    "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "broadcast", "broadcast_in_dim",
    "broadcast_in_dim_p", "broadcast_like", "broadcast_shapes", "broadcast_to_rank",
    "broadcasted_iota", "cbrt", "cbrt_p", "ceil", "ceil_p", "clamp", "clamp_p", "clz", "clz_p",
    "collapse", "complex", "complex_p", "composite", "concatenate", "concatenate_p", "cond",
    "cond_p", "conj", "conj_p", "conv", "conv_dimension_numbers", "conv_general_dilated",
    "conv_general_dilated_local", "conv_general_dilated_p", "conv_general_dilated_patches",
    "conv_general_permutations", "conv_general_shape_tuple", "conv_shape_tuple", "conv_transpose",
    "conv_transpose_shape_tuple", "conv_with_general_padding", "convert_element_type",
    "convert_element_type_p", "copy_p", "cos", "cos_p", "cosh", "cosh_p", "create_token",
    "create_token_p", "cumlogsumexp", "cumlogsumexp_p", "cummax", "cummax_p", "cummin", "cummin_p",
    "cumprod", "cumprod_p", "cumsum", "cumsum_p", "custom_linear_solve", "custom_root", "dce_sink",
    "dce_sink_p", "device_put_p", "digamma", "digamma_p", "dim_as_value_p", "dimension_as_value",
    "div", "div_p", "dot", "dot_general",
    "dot_general_p", "dtype", "dynamic_index_in_dim", "dynamic_slice", "dynamic_slice_in_dim",
    "dynamic_slice_p", "dynamic_update_index_in_dim", "dynamic_update_slice",
    "dynamic_update_slice_in_dim", "dynamic_update_slice_p", "empty", "empty_p", "eq", "eq_p",
    "eq_to_p", "erf", "erf_inv", "erf_inv_p", "erf_p", "erfc", "erfc_p", "exp", "exp2", "exp2_p",
    "exp_p", "expand_dims", "expm1", "expm1_p", "fft", "fft_p", "floor", "floor_p", "fori_loop",
    "full", "full_like", "gather", "gather_p", "ge", "ge_p", "gt", "gt_p", "igamma",
    "igamma_grad_a", "igamma_grad_a_p", "igamma_p", "igammac", "igammac_p", "imag", "imag_p",
    "index_in_dim", "index_take", "integer_pow", "integer_pow_p", "iota", "iota_p", "is_finite",
    "is_finite_p", "le", "le_p", "le_to_p", "lgamma", "lgamma_p", "linear_solve_p", "log", "log1p",
    "log1p_p", "log_p", "logistic", "logistic_p", "lt", "lt_p", "lt_to_p", "map", "max", "max_p",
    "min", "min_p", "mul", "mul_p", "mulhi", "mulhi_p", "ne", "ne_p", "neg", "neg_p", "nextafter",
    "nextafter_p", "not_p", "optimization_barrier", "optimization_barrier_p", "or_p", "pad",
    "pad_p", "padtype_to_pads", "pbroadcast", "pcast", "platform_dependent", "pmax", "pmax_p",
    "pmean", "pmin", "pmin_p", "polygamma", "polygamma_p", "population_count",
    "population_count_p", "pow", "pow_p", "ppermute", "ppermute_p", "precv", "psend",
    "pshuffle", "psum", "psum_p",
    "psum_scatter", "pswapaxes", "ragged_all_to_all", "ragged_all_to_all_p", "ragged_dot",
    "ragged_dot_general", "random_gamma_grad", "real",
    "real_p", "reciprocal", "reduce", "reduce_and", "reduce_and_p", "reduce_max", "reduce_max_p",
    "reduce_min", "reduce_min_p", "reduce_or", "reduce_or_p", "reduce_p", "reduce_precision",
    "reduce_precision_p", "reduce_prod", "reduce_prod_p", "reduce_sum", "reduce_sum_p",
    "reduce_window", "reduce_window_max_p", "reduce_window_min_p", "reduce_window_p",
    "reduce_window_shape_tuple", "reduce_window_sum_p", "reduce_xor", "reduce_xor_p",
    "regularized_incomplete_beta_p", "rem", "rem_p", "reshape", "reshape_p", "rev", "rev_p",
    "rng_bit_generator", "rng_bit_generator_p", "rng_uniform", "rng_uniform_p", "round", "round_p",
    "rsqrt", "rsqrt_p", "scaled_dot", "scan", "scan_p", "scatter", "scatter_add", "scatter_add_p",
    "scatter_apply", "scatter_max", "scatter_max_p", "scatter_min", "scatter_min_p", "scatter_mul",
    "scatter_mul_p", "scatter_p", "scatter_sub", "scatter_sub_p", "select",
    "select_and_gather_add_p", "select_and_scatter_add_p", "select_and_scatter_p", "select_n",
    "select_n_p", "shape_as_value", "sharding_constraint_p", "shift_left", "shift_left_p",
    "shift_right_arithmetic", "shift_right_arithmetic_p", "shift_right_logical",
    "shift_right_logical_p", "sign", "sign_p", "sin", "sin_p", "sinh", "sinh_p", "slice",
    "slice_in_dim", "slice_p", "sort", "sort_key_val", "sort_p", "split", "split_p", "sqrt",
    "sqrt_p", "square", "square_p", "squeeze", "squeeze_p", "stack", "stack_p", "stage", "stage_p",
    "stop_gradient", "stop_gradient_p", "sub", "sub_p", "switch", "tan", "tan_p", "tanh", "tanh_p",
    "tile", "tile_p", "top_k", "top_k_p", "transpose", "transpose_p", "unstack", "unstack_p",
    "while_loop", "while_p", "with_sharding_constraint", "xor_p", "zeta", "zeta_p",
]
# fmt: on

# `lax.linalg`, a submodule as in JAX (imported last: it builds on the families above).
# Not JAX's API: namespaces the layers above use.
from lamina_core.lax import _checks
from lamina_core.lax import linalg as linalg
from lamina_core.lax._ad_common import full_like as _ad_full_like
from lamina_core.lax._approx_top_k import (
    approx_top_k_p as approx_top_k_p,
)
from lamina_core.lax._array_helpers import (
    convert as convert,
)
from lamina_core.lax._array_helpers import (
    promote_dtypes_inexact as promote_dtypes_inexact,
)
from lamina_core.lax._array_helpers import (
    where_body as where_body,
)
from lamina_core.lax._auto_axes import (
    install_auto_axes as install_auto_axes,
)
from lamina_core.lax._auto_axes import (
    under_auto_axes as under_auto_axes,
)
from lamina_core.lax._barrier import (
    optimization_barrier_p as optimization_barrier_p,
)
from lamina_core.lax._batching_common import (
    bdim_at_front as bdim_at_front,
)
from lamina_core.lax._batching_common import (
    bdim_to as bdim_to,
)
from lamina_core.lax._batching_common import (
    broadcast_batched as broadcast_batched,
)
from lamina_core.lax._batching_common import (
    defbroadcasting as defbroadcasting,
)
from lamina_core.lax._batching_common import (
    defreducer as defreducer,
)
from lamina_core.lax._batching_common import (
    defvectorized as defvectorized,
)
from lamina_core.lax._batching_common import (
    moveaxis as moveaxis,
)
from lamina_core.lax._bessel import (
    bessel_i0e_p as bessel_i0e_p,
)
from lamina_core.lax._bessel import (
    bessel_i1e_p as bessel_i1e_p,
)
from lamina_core.lax._bessel import (
    i0e_expansion as i0e_expansion,
)
from lamina_core.lax._checks import (
    kind_of as kind_of,
)
from lamina_core.lax._collectives import (
    all_gather_p as all_gather_p,
)
from lamina_core.lax._collectives import (
    all_to_all_p as all_to_all_p,
)
from lamina_core.lax._collectives import (
    axis_index_p as axis_index_p,
)
from lamina_core.lax._collectives import (
    pbroadcast_p as pbroadcast_p,
)
from lamina_core.lax._collectives import (
    pmax_p as pmax_p,
)
from lamina_core.lax._collectives import (
    pmin_p as pmin_p,
)
from lamina_core.lax._collectives import (
    ppermute_p as ppermute_p,
)
from lamina_core.lax._collectives import (
    psum_p as psum_p,
)
from lamina_core.lax._collectives import (
    reduce_scatter_p as reduce_scatter_p,
)
from lamina_core.lax._composite import (
    AttributeTree as AttributeTree,
)
from lamina_core.lax._composite import (
    HashableArray as HashableArray,
)
from lamina_core.lax._composite import (
    composite_p as composite_p,
)
from lamina_core.lax._device_put import (
    copy_semantics_of as copy_semantics_of,
)
from lamina_core.lax._device_put import (
    device_put_p as device_put_p,
)
from lamina_core.lax._device_put import (
    stage_device_put as stage_device_put,
)
from lamina_core.lax._empty import (
    MemorySpace as MemorySpace,
)
from lamina_core.lax._empty import (
    empty2_p as empty2_p,
)
from lamina_core.lax._fft import (
    FftType as FftType,
)
from lamina_core.lax._fft import (
    _to_inexact as _to_inexact,
)
from lamina_core.lax._fft import (
    fft as fft,
)
from lamina_core.lax._fft import (
    fft_p as fft_p,
)
from lamina_core.lax._igamma import (
    igamma_grad_a_p as igamma_grad_a_p,
)
from lamina_core.lax._igamma import (
    igamma_p as igamma_p,
)
from lamina_core.lax._igamma import (
    igammac_p as igammac_p,
)
from lamina_core.lax._igamma import (
    regularized_incomplete_beta_p as regularized_incomplete_beta_p,
)
from lamina_core.lax._igamma_impl import (
    IMPLS as IMPLS,
)
from lamina_core.lax._igamma_impl import (
    lax_const as lax_const,
)
from lamina_core.lax._igamma_impl import (
    up_and_broadcast as up_and_broadcast,
)
from lamina_core.lax._linalg import (
    dot_general_p as dot_general_p,
)
from lamina_core.lax._linear_solve import (
    linear_solve_p as linear_solve_p,
)
from lamina_core.lax._logaddexp import (
    _logaddexp2_custom as _logaddexp2_custom,
)
from lamina_core.lax._logaddexp import (
    _logaddexp_custom as _logaddexp_custom,
)
from lamina_core.lax._misc_prims import (
    array_copy as array_copy,
)
from lamina_core.lax._misc_prims import (
    copy_p as copy_p,
)
from lamina_core.lax._misc_prims import (
    dce_sink_p as dce_sink_p,
)
from lamina_core.lax._misc_prims import (
    empty_p as empty_p,
)
from lamina_core.lax._misc_prims import (
    eq_to_p as eq_to_p,
)
from lamina_core.lax._misc_prims import (
    le_to_p as le_to_p,
)
from lamina_core.lax._misc_prims import (
    lt_to_p as lt_to_p,
)
from lamina_core.lax._misc_prims import (
    mulhi_p as mulhi_p,
)
from lamina_core.lax._misc_prims import (
    stage_p as stage_p,
)
from lamina_core.lax._nary import (
    binary_primitives as binary_primitives,
)
from lamina_core.lax._nary import (
    unary_primitives as unary_primitives,
)
from lamina_core.lax._ragged_dot import (
    dense_jaxpr as dense_jaxpr,
)
from lamina_core.lax._ragged_dot import (
    ragged_dot_general_p as ragged_dot_general_p,
)
from lamina_core.lax._reshard import (
    reshard_p as reshard_p,
)
from lamina_core.lax._reshard import (
    reshard_sharding as reshard_sharding,
)
from lamina_core.lax._reshard import (
    reshard_traced as reshard_traced,
)
from lamina_core.lax._rng import (
    RandomAlgorithm as RandomAlgorithm,
)
from lamina_core.lax._rng import (
    rng_bit_generator as rng_bit_generator,
)
from lamina_core.lax._rng import (
    rng_bit_generator_p as rng_bit_generator_p,
)
from lamina_core.lax._rng import (
    rng_uniform_p as rng_uniform_p,
)
from lamina_core.lax._scaled_dot import (
    decomposition as decomposition,
)
from lamina_core.lax._scaled_dot import (
    scaled_dot_p as scaled_dot_p,
)
from lamina_core.lax._select_and_scatter import (
    select_and_gather_add_p as select_and_gather_add_p,
)
from lamina_core.lax._select_and_scatter import (
    select_and_gather_add_variadic as select_and_gather_add_variadic,
)
from lamina_core.lax._select_and_scatter import (
    select_and_scatter_add_expanded as select_and_scatter_add_expanded,
)
from lamina_core.lax._select_and_scatter import (
    select_and_scatter_add_p as select_and_scatter_add_p,
)
from lamina_core.lax._selection import (
    reduce_precision_p as reduce_precision_p,
)
from lamina_core.lax._shape import (
    asarray as asarray,
)
from lamina_core.lax._shape import (
    canonical_shape as canonical_shape,
)
from lamina_core.lax._shape import (
    canonicalize_axis as canonicalize_axis,
)
from lamina_core.lax._sharding_constraint import (
    sharding_constraint_p as sharding_constraint_p,
)
from lamina_core.lax._slicing import (
    index_in_dim as index_in_dim,
)
from lamina_core.lax._structural import (
    _convert_element_type as _convert_element_type,
)
from lamina_core.lax._structural import (
    broadcast as broadcast,
)
from lamina_core.lax._structural import (
    broadcast_in_dim as broadcast_in_dim,
)
from lamina_core.lax._structural import (
    convert_element_type_p as convert_element_type_p,
)
from lamina_core.lax._tokens import (
    AbstractToken as AbstractToken,
)
from lamina_core.lax._tokens import (
    Token as Token,
)
from lamina_core.lax._tokens import (
    abstract_token as abstract_token,
)
from lamina_core.lax._tokens import (
    after_all_p as after_all_p,
)
from lamina_core.lax._tokens import (
    create_token_p as create_token_p,
)
from lamina_core.lax._zeta import (
    polygamma_p as polygamma_p,
)
from lamina_core.lax._zeta import (
    zeta_p as zeta_p,
)
from lamina_core.lax.linalg._eig import (
    complex_dtype as complex_dtype,
)
from lamina_core.lax.linalg._primitives import (
    _H as _H,
)
from lamina_core.lax.linalg._primitives import (
    _symmetrize as _symmetrize,
)
from lamina_core.lax.linalg._products import (
    jax_cholesky_update as jax_cholesky_update,
)
from lamina_core.lax.linalg._products import (
    jax_symmetric_product as jax_symmetric_product,
)
from lamina_core.lax.linalg._qr import (
    _eye_rect as _eye_rect,
)
from lamina_core.lax.linalg._qr import (
    qr_from_factors as qr_from_factors,
)
from lamina_core.lax.linalg._solve import (
    batched_matvec as batched_matvec,
)
from lamina_core.lax.linalg._solve import (
    check_solve_shapes as check_solve_shapes,
)
from lamina_core.lax.linalg._solve import (
    lu_solve as lu_solve,
)
from lamina_core.lax.linalg._solve import (
    solve as solve,
)
from lamina_core.lax.linalg._svd import (
    svd_shapes as svd_shapes,
)

checks = _checks
"""The argument checks with JAX's messages (`array_aval`, `broadcast_shapes` of avals...)."""

ad_full_like = _ad_full_like
"""Not `lax.full_like`: the fill JAX's derivative rules stage (a literal at rank 0)."""
