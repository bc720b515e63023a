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
from lamina_core.lax._approx_top_k import __all__ as _approx_top_k_all
from lamina_core.lax._associative_scan import *  # noqa: F403
from lamina_core.lax._associative_scan import __all__ as _associative_scan_all
from lamina_core.lax._barrier import *  # noqa: F403
from lamina_core.lax._barrier import __all__ as _barrier_all
from lamina_core.lax._bessel import *  # noqa: F403
from lamina_core.lax._bessel import __all__ as _bessel_all
from lamina_core.lax._collectives import *  # noqa: F403
from lamina_core.lax._collectives import __all__ as _collectives_all
from lamina_core.lax._collectives_layout import *  # noqa: F403
from lamina_core.lax._collectives_layout import __all__ as _collectives_layout_all
from lamina_core.lax._collectives_vma import psum_invariant_p  # noqa: F401  (registers rules)
from lamina_core.lax._composite import *  # noqa: F403
from lamina_core.lax._composite import __all__ as _composite_all
from lamina_core.lax._conv import *  # noqa: F403
from lamina_core.lax._conv import __all__ as _conv_all
from lamina_core.lax._conv_patches import *  # noqa: F403
from lamina_core.lax._conv_patches import __all__ as _conv_patches_all
from lamina_core.lax._conv_shapes import *  # noqa: F403
from lamina_core.lax._conv_shapes import __all__ as _conv_shapes_all
from lamina_core.lax._cumulative import *  # noqa: F403
from lamina_core.lax._cumulative import __all__ as _cumulative_all
from lamina_core.lax._device_put import *  # noqa: F403
from lamina_core.lax._device_put import __all__ as _device_put_all
from lamina_core.lax._dot_types import *  # noqa: F403
from lamina_core.lax._dot_types import __all__ as _dot_types_all
from lamina_core.lax._elementwise import *  # noqa: F403
from lamina_core.lax._elementwise import __all__ as _elementwise_all
from lamina_core.lax._fft import *  # noqa: F403
from lamina_core.lax._fft import __all__ as _fft_all
from lamina_core.lax._gather_scatter import *  # noqa: F403
from lamina_core.lax._gather_scatter import __all__ as _gather_scatter_all
from lamina_core.lax._igamma import *  # noqa: F403
from lamina_core.lax._igamma import __all__ as _igamma_all
from lamina_core.lax._joining import *  # noqa: F403
from lamina_core.lax._joining import __all__ as _joining_all
from lamina_core.lax._linalg import *  # noqa: F403
from lamina_core.lax._linalg import __all__ as _linalg_all
from lamina_core.lax._linear_solve import *  # noqa: F403
from lamina_core.lax._linear_solve import __all__ as _linear_solve_all
from lamina_core.lax._misc_prims import *  # noqa: F403
from lamina_core.lax._misc_prims import __all__ as _misc_prims_all
from lamina_core.lax._platform import *  # noqa: F403
from lamina_core.lax._platform import __all__ as _platform_all
from lamina_core.lax._ragged_dot import *  # noqa: F403
from lamina_core.lax._ragged_dot import __all__ as _ragged_dot_all
from lamina_core.lax._reduce_generic import *  # noqa: F403
from lamina_core.lax._reduce_generic import __all__ as _reduce_generic_all
from lamina_core.lax._reductions import *  # noqa: F403
from lamina_core.lax._reductions import __all__ as _reductions_all
from lamina_core.lax._rng import *  # noqa: F403
from lamina_core.lax._rng import __all__ as _rng_all
from lamina_core.lax._scaled_dot import *  # noqa: F403
from lamina_core.lax._scaled_dot import __all__ as _scaled_dot_all
from lamina_core.lax._select_and_scatter import *  # noqa: F403
from lamina_core.lax._select_and_scatter import __all__ as _select_and_scatter_all
from lamina_core.lax._selection import *  # noqa: F403
from lamina_core.lax._selection import __all__ as _selection_all
from lamina_core.lax._shape import *  # noqa: F403
from lamina_core.lax._shape import __all__ as _shape_all
from lamina_core.lax._sharding_constraint import *  # noqa: F403
from lamina_core.lax._sharding_constraint import __all__ as _sharding_constraint_all
from lamina_core.lax._slicing import *  # noqa: F403
from lamina_core.lax._slicing import __all__ as _slicing_all
from lamina_core.lax._sorting import *  # noqa: F403
from lamina_core.lax._sorting import __all__ as _sorting_all
from lamina_core.lax._stop_gradient import *  # noqa: F403
from lamina_core.lax._stop_gradient import __all__ as _stop_gradient_all
from lamina_core.lax._structural import *  # noqa: F403
from lamina_core.lax._structural import __all__ as _structural_all
from lamina_core.lax._tokens import *  # noqa: F403
from lamina_core.lax._tokens import __all__ as _tokens_all
from lamina_core.lax._transcendental import *  # noqa: F403
from lamina_core.lax._transcendental import __all__ as _transcendental_all
from lamina_core.lax._windowed import *  # noqa: F403
from lamina_core.lax._windowed import __all__ as _windowed_all
from lamina_core.lax._zeta import *  # noqa: F403
from lamina_core.lax._zeta import __all__ as _zeta_all
from lamina_core.lax.control_flow import __all__ as _control_flow_all
from lamina_core.lax.control_flow import cond as cond
from lamina_core.lax.control_flow import cond_p as cond_p
from lamina_core.lax.control_flow import fori_loop as fori_loop
from lamina_core.lax.control_flow import map as map
from lamina_core.lax.control_flow import scan as scan
from lamina_core.lax.control_flow import scan_p as scan_p
from lamina_core.lax.control_flow import switch as switch
from lamina_core.lax.control_flow import while_loop as while_loop
from lamina_core.lax.control_flow import while_p as while_p

__all__ = [
    "cond_p",
    "scan_p",
    "while_p",
    *_approx_top_k_all,
    *_associative_scan_all,
    *_barrier_all,
    *_bessel_all,
    *_collectives_all,
    *_collectives_layout_all,
    *_composite_all,
    *(n for n in _control_flow_all if not n.endswith("_p") and not n.startswith("bind")),
    *_conv_all,
    *_conv_patches_all,
    *_conv_shapes_all,
    *_cumulative_all,
    *_device_put_all,
    *_dot_types_all,
    *_elementwise_all,
    *_fft_all,
    *_gather_scatter_all,
    *_igamma_all,
    *_joining_all,
    *_linalg_all,
    *_linear_solve_all,
    *_misc_prims_all,
    *_platform_all,
    *_ragged_dot_all,
    *_reduce_generic_all,
    *_reductions_all,
    *_scaled_dot_all,
    *_rng_all,
    *_selection_all,
    *_select_and_scatter_all,
    *_sharding_constraint_all,
    *_shape_all,
    *_slicing_all,
    *_sorting_all,
    *_stop_gradient_all,
    *_structural_all,
    *_tokens_all,
    *_transcendental_all,
    *_windowed_all,
    *_zeta_all,
]

# `lax.linalg`, a submodule as in JAX (imported last: it builds on the families above).
from lamina_core.lax import linalg as linalg
