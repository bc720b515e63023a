"""`lamina_core.numpy`: a NumPy-compatible frontend (`lamina.numpy`, imported as `jnp`).

Functions promote dtypes and broadcast ranks as `jax.numpy` does, then call `lax`; the jaxprs
they stage are JAX's. Importing this module also gives tracers their operators. Each family of
functions lives in its own module.
"""

from collections.abc import Callable
from typing import Any

import numpy as _np

from lamina_core.numpy import (
    _array_compare,
    _array_methods,
    _bits_sorts,
    _creation,
    _cumulative,
    _functional,
    _grids,
    _histograms,
    _host_io,
    _index_helpers,
    _index_tricks,
    _index_update,
    _indexing,
    _linalg,
    _loops,
    _matrix_parts,
    _nan_reductions,
    _pad,
    _polynomial_fit,
    _promote,
    _quantiles,
    _reductions,
    _scalar_types,
    _searchsorted,
    _setops,
    _shape,
    _shape_more,
    _signal,
    _sorting,
    _statistics,
    _ufuncs,
    _ufuncs_composite,
)
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
from lamina_core.numpy._ufuncs import *  # noqa: F403
from lamina_core.numpy._ufuncs_composite import *  # noqa: F403
from lamina_core.numpy._util import Array, ArrayLike, DTypeLike
from lamina_core.numpy._util import (
    dtype_of as dtype_of,
)
from lamina_core.numpy._util import (
    lax_const as lax_const,
)
from lamina_core.numpy._util import (
    shape_of as shape_of,
)
from lamina_core.trace import register_tracer_method

pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan

__all__ = [
    "Array",
    "ArrayLike",
    "DTypeLike",
    "e",
    "inf",
    "nan",
    "pi",
]
__all__ += _scalar_types.__all__
__all__ += _creation.__all__
__all__ += _cumulative.__all__
__all__ += _indexing.__all__
__all__ += _linalg.__all__
__all__ += _loops.__all__
__all__ += _reductions.__all__
__all__ += _shape.__all__
__all__ += _sorting.__all__
__all__ += _array_compare.__all__
__all__ += _matrix_parts.__all__
__all__ += _nan_reductions.__all__
__all__ += _grids.__all__
__all__ += _index_tricks.__all__
__all__ += _bits_sorts.__all__
__all__ += _functional.__all__
__all__ += _pad.__all__
__all__ += _polynomial_fit.__all__
__all__ += _histograms.__all__
__all__ += _signal.__all__
__all__ += _host_io.__all__
__all__ += _shape_more.__all__
__all__ += _quantiles.__all__
__all__ += _statistics.__all__
__all__ += _index_helpers.__all__
__all__ += _setops.__all__
__all__ += _searchsorted.__all__
__all__ += _ufuncs.__all__
__all__ += _ufuncs_composite.__all__

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
    "abs": _ufuncs.absolute,
    "invert": _ufuncs.invert,
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
    "method:repeat": _shape.repeat,
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
