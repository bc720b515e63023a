"""`lamina_core.numpy`: a NumPy-compatible frontend (`lamina.numpy`, imported as `jnp`).

Functions promote dtypes and broadcast ranks as `jax.numpy` does, then call `lax`; the jaxprs
they stage are JAX's. Importing this module also gives tracers their operators. Each family of
functions lives in its own module.
"""

from collections.abc import Callable
from typing import Any

import numpy as _np

from lamina_core.numpy import (
    _aliases,
    _array_methods,
    _bits_sorts,
    _cumulative,
    _index_helpers,
    _index_tricks,
    _index_update,
    _indexing,
    _linalg,
    _matrix_parts,
    _nan_reductions,
    _promote,
    _reductions,
    _repeat,
    _searchsorted,
    _setops,
    _shape,
    _sorting,
    _ufuncs,
    _ufuncs_composite,
)
from lamina_core.numpy._aliases import *  # noqa: F403
from lamina_core.numpy._array_compare import *  # noqa: F403
from lamina_core.numpy._bits_sorts import *  # noqa: F403
from lamina_core.numpy._creation import *  # noqa: F403

# Not JAX's API: names the layers above use.
from lamina_core.numpy._creation import (
    asarray as asarray,
)
from lamina_core.numpy._creation import (
    eye as eye,
)
from lamina_core.numpy._cumulative import *  # noqa: F403
from lamina_core.numpy._frompyfunc import *  # noqa: F403
from lamina_core.numpy._functional import *  # noqa: F403
from lamina_core.numpy._grids import *  # noqa: F403
from lamina_core.numpy._histograms import *  # noqa: F403
from lamina_core.numpy._host_io import *  # noqa: F403
from lamina_core.numpy._index_helpers import *  # noqa: F403
from lamina_core.numpy._index_parse import (
    NonConcreteBooleanIndexError as NonConcreteBooleanIndexError,
)
from lamina_core.numpy._index_tricks import *  # noqa: F403
from lamina_core.numpy._index_update import (
    at as at,
)
from lamina_core.numpy._indexing import *  # noqa: F403
from lamina_core.numpy._indexing import (
    getitem as getitem,
)
from lamina_core.numpy._linalg import *  # noqa: F403
from lamina_core.numpy._linalg import (
    einsum as einsum,
)
from lamina_core.numpy._loops import *  # noqa: F403
from lamina_core.numpy._matrix_parts import *  # noqa: F403
from lamina_core.numpy._nan_reductions import *  # noqa: F403
from lamina_core.numpy._pad import *  # noqa: F403
from lamina_core.numpy._polynomial_fit import *  # noqa: F403
from lamina_core.numpy._promote import (
    check_arraylike as check_arraylike,
)
from lamina_core.numpy._promote import (
    promote_args_inexact as promote_args_inexact,
)
from lamina_core.numpy._promote import (
    promote_dtypes as promote_dtypes,
)
from lamina_core.numpy._promote import (
    promote_dtypes_inexact as promote_dtypes_inexact,
)
from lamina_core.numpy._quantiles import *  # noqa: F403
from lamina_core.numpy._reductions import *  # noqa: F403
from lamina_core.numpy._reductions import (
    _count as _count,
)
from lamina_core.numpy._reductions import (
    _reduction_dims as _reduction_dims,
)
from lamina_core.numpy._reductions import (
    canonicalize_axis as canonicalize_axis,
)
from lamina_core.numpy._reductions import (
    ensure_arraylike as ensure_arraylike,
)
from lamina_core.numpy._repeat import *  # noqa: F403
from lamina_core.numpy._roll import *  # noqa: F403
from lamina_core.numpy._scalar_types import *  # noqa: F403
from lamina_core.numpy._searchsorted import *  # noqa: F403
from lamina_core.numpy._setops import *  # noqa: F403
from lamina_core.numpy._shape import *  # noqa: F403
from lamina_core.numpy._shape import (
    reshape as reshape,
)
from lamina_core.numpy._shape import (
    split as split,
)
from lamina_core.numpy._shape_more import *  # noqa: F403
from lamina_core.numpy._signal import *  # noqa: F403
from lamina_core.numpy._sorting import *  # noqa: F403
from lamina_core.numpy._statistics import *  # noqa: F403
from lamina_core.numpy._take_one_hot import (
    _one_hot as _one_hot,
)
from lamina_core.numpy._ufuncs import *  # noqa: F403
from lamina_core.numpy._ufuncs_composite import *  # noqa: F403
from lamina_core.numpy._ufuncs_outwhere import *  # noqa: F403
from lamina_core.numpy._util import Array, ArrayLike, DTypeLike
from lamina_core.numpy._util import (
    dtype_of as dtype_of,
)
from lamina_core.numpy._util import (
    lax_const as lax_const,
)
from lamina_core.numpy._util import (
    rank_promotion as rank_promotion,
)
from lamina_core.numpy._util import (
    shape_of as shape_of,
)
from lamina_core.trace import register_tracer_method

pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan

# The names of the families' `__all__`, spelled out so that type checkers of `from
# lamina_core.numpy import *` see them (a test keeps the two equal).
# fmt: off
__all__ = [
    "Array", "ArrayLike", "ComplexWarning", "DTypeLike", "abs", "absolute", "acos", "acosh", "add",
    "all", "allclose", "amax", "amin", "angle", "any", "append", "apply_along_axis",
    "apply_over_axes", "arange", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2",
    "arctanh", "argmax", "argmin", "argpartition", "argsort", "argwhere", "around", "array",
    "array_equal", "array_equiv", "array_repr", "array_split", "array_str", "asarray", "asin",
    "asinh", "astype", "atan", "atan2", "atanh", "atleast_1d", "atleast_2d", "atleast_3d",
    "average", "bartlett", "bfloat16", "bincount", "bitwise_and", "bitwise_count",
    "bitwise_invert", "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift",
    "bitwise_xor", "blackman", "block", "bool", "bool_", "broadcast_arrays", "broadcast_shapes",
    "broadcast_to", "c_", "can_cast", "cbrt", "cdouble", "ceil", "character", "choose", "clip",
    "column_stack", "complex64", "complex128", "complex_", "complexfloating", "compress", "concat",
    "concatenate", "conj", "conjugate", "convolve", "copy", "copysign", "corrcoef", "correlate",
    "cos", "cosh", "count_nonzero", "cov", "cross", "csingle", "cumprod", "cumsum",
    "cumulative_prod", "cumulative_sum", "deg2rad", "degrees", "delete", "diag", "diag_indices",
    "diag_indices_from", "diagflat", "diagonal", "diff", "digitize", "divide", "divmod", "dot",
    "double", "dsplit", "dstack", "dtype", "e", "ediff1d", "einsum", "einsum_path", "empty",
    "empty_like", "equal", "euler_gamma", "exp", "exp2", "expand_dims", "expm1", "extract", "eye",
    "fabs", "fill_diagonal", "finfo", "flatnonzero", "flexible", "flip", "fliplr", "flipud",
    "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3",
    "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
    "float8_e8m0fnu", "float16", "float32", "float64", "float_", "float_power", "floating",
    "floor", "floor_divide", "fmax", "fmin", "fmod", "frexp", "from_dlpack", "frombuffer",
    "fromfile", "fromfunction", "fromiter", "frompyfunc", "fromstring", "full", "full_like", "gcd",
    "generic", "geomspace", "get_printoptions", "gradient", "greater", "greater_equal", "hamming",
    "hanning", "heaviside", "histogram", "histogram2d", "histogram_bin_edges", "histogramdd",
    "hsplit", "hstack", "hypot", "i0", "identity", "iinfo", "imag", "index_exp", "indices",
    "inexact", "inf", "inner", "insert", "int1", "int2", "int4", "int8", "int16", "int32", "int64",
    "int_", "integer", "interp", "intersect1d", "invert", "isclose", "iscomplex", "iscomplexobj",
    "isdtype", "isfinite", "isin", "isinf", "isnan", "isneginf", "isposinf", "isreal", "isrealobj",
    "isscalar", "issubdtype", "iterable", "ix_", "kaiser", "kron", "lcm", "ldexp", "left_shift",
    "less", "less_equal", "lexsort", "linspace", "load", "log", "log1p", "log2", "log10",
    "logaddexp", "logaddexp2", "logical_and", "logical_not", "logical_or", "logical_xor",
    "logspace", "mask_indices", "matmul", "matrix_transpose", "matvec", "max", "maximum", "mean",
    "median", "meshgrid", "mgrid", "min", "minimum", "mod", "modf", "moveaxis", "multiply", "nan",
    "nan_to_num", "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean",
    "nanmedian", "nanmin", "nanpercentile", "nanprod", "nanquantile", "nanstd", "nansum", "nanvar",
    "ndim", "negative", "newaxis", "nextafter", "nonzero", "not_equal", "number", "object_",
    "ogrid", "ones", "ones_like", "outer", "packbits", "pad", "partition", "percentile",
    "permute_dims", "pi", "piecewise", "place", "poly", "polyadd", "polyder", "polydiv", "polyfit",
    "polyint", "polymul", "polysub", "polyval", "positive", "pow", "power", "printoptions", "prod",
    "promote_types", "ptp", "put", "put_along_axis", "quantile", "r_", "rad2deg", "radians",
    "ravel", "ravel_multi_index", "real", "reciprocal", "remainder", "repeat", "reshape", "resize",
    "result_type", "right_shift", "rint", "roll", "rollaxis", "roots", "rot90", "round", "s_",
    "save", "savez", "searchsorted", "select", "set_printoptions", "setdiff1d", "setxor1d",
    "shape", "sign", "signbit", "signedinteger", "sin", "sinc", "single", "sinh", "size", "sort",
    "sort_complex", "spacing", "split", "sqrt", "square", "squeeze", "stack", "std", "subtract",
    "sum", "swapaxes", "take", "take_along_axis", "tan", "tanh", "tensordot", "tile", "trace",
    "transpose", "trapezoid", "tri", "tril", "tril_indices", "tril_indices_from", "trim_zeros",
    "triu", "triu_indices", "triu_indices_from", "true_divide", "trunc", "ufunc", "uint", "uint1",
    "uint2", "uint4", "uint8", "uint16", "uint32", "uint64", "union1d", "unique", "unique_all",
    "unique_counts", "unique_inverse", "unique_values", "unpackbits", "unravel_index",
    "unsignedinteger", "unstack", "unwrap", "vander", "var", "vdot", "vecdot", "vecmat",
    "vectorize", "vsplit", "vstack", "where", "zeros", "zeros_like",
]
# fmt: on

_TRACER_METHODS: dict[str, Callable[..., Any]] = {
    "getitem": _indexing.getitem,
    "iter_item": _indexing.iter_item,
    "property:at": _index_update.at,
    "add": _ufuncs.add,
    "subtract": _ufuncs.subtract,
    "multiply": _ufuncs.multiply,
    "true_divide": _ufuncs.true_divide,
    "negative": _ufuncs.negative,
    "positive": _ufuncs.positive,
    "equal": _ufuncs.equal,
    "not_equal": _ufuncs.not_equal,
    "less": _ufuncs.less,
    "less_equal": _ufuncs.less_equal,
    "greater": _ufuncs.greater,
    "greater_equal": _ufuncs.greater_equal,
    "bitwise_and": _ufuncs.bitwise_and,
    "bitwise_or": _ufuncs.bitwise_or,
    "bitwise_xor": _ufuncs.bitwise_xor,
    "floor_divide": _ufuncs_composite.floor_divide,
    "remainder": _ufuncs_composite.remainder,
    "divmod": _ufuncs_composite.divmod,
    "power": _ufuncs_composite.power,
    "abs": _aliases.abs,
    "invert": _aliases.invert,
    "left_shift": _ufuncs.left_shift,
    "right_shift": _ufuncs.right_shift,
    "method:astype": _ufuncs.astype,
    "method:clip": _ufuncs_composite.clip_method,
    "method:round": _ufuncs_composite.round_method,
    "method:conj": _ufuncs.conjugate,
    "method:conjugate": _ufuncs.conjugate,
    "property:real": _ufuncs.real,
    "property:imag": _ufuncs.imag,
    "method:sum": _reductions.sum,
    "method:prod": _reductions.prod,
    "method:mean": _reductions.mean,
    "method:var": _reductions.var,
    "method:std": _reductions.std,
    "method:max": _reductions.max,
    "method:min": _reductions.min,
    "method:all": _reductions.all,
    "method:any": _reductions.any,
    "method:argmax": _sorting.argmax,
    "method:argmin": _sorting.argmin,
    "method:cumsum": _cumulative.cumsum,
    "method:cumprod": _cumulative.cumprod,
    "method:dot": _linalg.dot,
    "method:sort": _sorting.sort,
    "method:argsort": _sorting.argsort,
    "matmul": _linalg.matmul,
    "transpose": _shape._transpose_property,
    "method:reshape": _shape._reshape,
    "method:transpose": _shape._transpose_method,
    "method:squeeze": _shape.squeeze,
    "method:ravel": _shape.ravel,
    "method:flatten": _shape.ravel,
    "method:swapaxes": _shape.swapaxes,
    "method:repeat": _repeat.repeat,
    "method:argpartition": _bits_sorts.argpartition,
    "method:byteswap": _array_methods.byteswap,
    "method:choose": _index_tricks.choose,
    "method:compress": _array_methods.compress_method,
    "method:diagonal": _matrix_parts.diagonal,
    "method:nonzero": _setops.nonzero,
    "method:ptp": _nan_reductions.ptp,
    "method:searchsorted": _searchsorted.searchsorted,
    "method:take": _indexing.take,
    "method:trace": _matrix_parts.trace,
    "method:view": _array_methods.view,
    "method:copy": _index_helpers.copy,
    "property:flat": _array_methods.flat,
    "property:mT": _array_methods.matrix_transpose_property,
    "property:nbytes": _array_methods.nbytes,
    "property:itemsize": _array_methods.itemsize,
}
for _name, _fn in _TRACER_METHODS.items():
    register_tracer_method(_name, _fn)

# The submodules last: they build on the families above.
from lamina_core.numpy import fft as fft  # noqa: E402
from lamina_core.numpy import linalg as linalg  # noqa: E402

promotion = _promote
"""NumPy-style argument promotion as jnp's functions do it (`promote_args_inexact`, ...), for
the libraries above (nn, scipy); not JAX's API."""
