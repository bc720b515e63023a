"""Reductions: sum, prod, max, min, amax, amin, all, any, mean, var, std, and the argument
helpers the other `jnp` families share (axes, `keepdims`, flattening).

Each stages the equations `jax.numpy` stages: the operand is converted once to the computation
dtype (narrow floats sum in float32, small integers in the default integer), reduced by one
reduce_* primitive, combined with `initial`, given back its kept dimensions, and converted to
the result dtype. `where=` selects the identity where the mask is false. var, std and the
`where` selection are nested `jit`s with JAX's names (`_var`, `_std`, `_where`) and static
arguments; the other reductions are inlined, as JAX's are.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np

from lamina_core import lax as _lax
from lamina_core.ir import dtypes as _dtypes
from lamina_core.lax import _convert_element_type
from lamina_core.numpy._creation import asarray
from lamina_core.numpy._ufuncs_composite import _where
from lamina_core.numpy._util import (
    Array,
    ArrayLike,
    DTypeLike,
    dtype_of,
    shape_of,
)
from lamina_core.trace import Tracer, dispatched_at_top_level, is_concrete_value
from lamina_core.transforms import jit

Axis: TypeAlias = "int | Sequence[int] | None"


def ensure_arraylike(name: str, *args: Any) -> list[Any]:
    """Arrays for `args` (Python scalars become weak constants); lists and tuples are errors."""
    out = []
    for pos, arg in enumerate(args):
        if isinstance(arg, (list, tuple)) or not (
            isinstance(arg, Tracer) or is_concrete_value(arg)
        ):
            raise TypeError(
                f"{name} requires ndarray or scalar arguments, got {type(arg)} at position {pos}."
            )
        out.append(asarray(arg))
    return out


def canonicalize_axis(axis: Any, ndim: int) -> int:
    """`axis` in `[-ndim, ndim)` as a non-negative index, with JAX's error text."""
    index: int = operator.index(axis)
    if not -ndim <= index < ndim:
        raise ValueError(f"axis {index} is out of bounds for array of dimension {ndim}")
    return index + ndim if index < 0 else index


def _reduction_dims(ndim: int, axis: Axis) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if not isinstance(axis, (tuple, list, np.ndarray)) else tuple(axis)
    dims = tuple(canonicalize_axis(a, ndim) for a in axes)
    if len(set(dims)) != len(dims):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return dims


def expand_dims(x: Array, dims: Sequence[int]) -> Array:
    """Insert size-1 dimensions at `dims` (positions in the result), by broadcast_in_dim."""
    if not dims:
        return x
    shape = shape_of(x)
    ndim = len(shape) + len(dims)
    where = sorted(canonicalize_axis(d, ndim) for d in dims)
    out_shape = list(shape)
    for d in where:
        out_shape.insert(d, 1)
    kept = tuple(i for i in range(ndim) if i not in where)
    return _lax.broadcast_in_dim(x, tuple(out_shape), kept)


def ravel(a: Array) -> Array:
    """`a` as a vector; a vector is returned as it is, as `jax.numpy.ravel` does."""
    shape = shape_of(a)
    if len(shape) == 1:
        return a
    size = 1
    for d in shape:
        size *= d
    return _lax.reshape(a, (size,))


def _default_int() -> np.dtype:
    return _dtypes.canonicalize_dtype(_dtypes.int64)


def _default_float() -> np.dtype:
    return _dtypes.canonicalize_dtype(_dtypes.float64)


def _promote_integer_dtype(dtype: np.dtype) -> np.dtype:
    """Bools and integers narrower than the default integer widen to it, as JAX does."""
    if dtype == np.dtype(bool):
        return _default_int()
    if dtype.kind == "u":
        wide = _dtypes.canonicalize_dtype(_dtypes.uint64)
        return wide if dtype.itemsize < wide.itemsize else dtype
    if dtype.kind == "i":
        wide = _default_int()
        return wide if dtype.itemsize < wide.itemsize else dtype
    return dtype


def _upcast_f16(dtype: np.dtype) -> np.dtype:
    if dtype in (_dtypes.float16, _dtypes.bfloat16):
        return np.dtype(np.float32)
    return dtype


def _to_inexact(dtype: np.dtype) -> np.dtype:
    if _dtypes.issubdtype(dtype, np.inexact):
        return dtype
    return _dtypes.promote_types(dtype, _default_float())


def _user_dtype(dtype: DTypeLike) -> np.dtype:
    return _dtypes.canonicalize_dtype(dtype)


def check_where(name: str, where: ArrayLike | None) -> Array | None:
    if where is None:
        return None
    (where,) = ensure_arraylike(name, where)
    if dtype_of(where) != np.dtype(bool):
        raise ValueError(
            f"jnp.{name}: where must be None or a boolean array; got "
            f"where.dtype={dtype_of(where)!r}."
        )
    return where


def _broadcast_to(x: Array, shape: tuple[int, ...]) -> Array:
    own = shape_of(x)
    if own == shape:
        return x
    lead = len(shape) - len(own)
    return _lax.broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


@dataclass(frozen=True, slots=True)
class _Monoid:
    """A reduction: its reduce primitive's function, the matching binary op and identity."""

    reduce: Callable[[Array, Sequence[int]], Array]
    combine: Callable[[Array, Array], Array]
    identity: Any


_ADD = _Monoid(_lax.reduce_sum, _lax.add, 0)
_MUL = _Monoid(_lax.reduce_prod, _lax.mul, 1)
_MAX = _Monoid(_lax.reduce_max, _lax.max, -np.inf)
_MIN = _Monoid(_lax.reduce_min, _lax.min, np.inf)
_AND = _Monoid(_lax.reduce_and, _lax.bitwise_and, True)
_OR = _Monoid(_lax.reduce_or, _lax.bitwise_or, False)


def _identity_value(dtype: np.dtype, value: Any) -> np.ndarray:
    """The monoid's identity as a scalar of `dtype`, clipped to the finite range if needed."""
    if dtype == np.dtype(bool):
        return np.asarray(value > 0)
    if isinstance(value, float) and np.isinf(value):
        if dtype.kind in "iu":
            ints = _dtypes.iinfo(dtype)
            return np.asarray(ints.min if value < 0 else ints.max, dtype)
        as_dtype = np.asarray(value).astype(dtype)
        if not np.isinf(as_dtype):
            floats = _dtypes.finfo(dtype)
            return np.asarray(floats.min if value < 0 else floats.max, dtype)
        return as_dtype
    return np.asarray(value).astype(dtype)


def _reduction(
    a: ArrayLike,
    name: str,
    monoid: _Monoid,
    *,
    has_identity: bool = True,
    preproc: Callable[[Array], Array] | None = None,
    bool_monoid: _Monoid | None = None,
    upcast_f16: bool = False,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
    promote_integers: bool = False,
) -> Array:
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
    (a,) = ensure_arraylike(name, a)
    where = check_where(name, where)
    if initial is None and not has_identity and where is not None:
        raise ValueError(
            f"reduction operation {name} does not have an identity, so to use a where mask one "
            f"has to specify 'initial'"
        )
    if preproc is not None:
        a = preproc(a)
    shape = shape_of(a)
    dims = _reduction_dims(len(shape), axis)
    if initial is None and not has_identity and not builtins.all(shape[d] >= 1 for d in dims):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    if dtype is None:
        result_dtype = dtype_of(a)
        if promote_integers:
            result_dtype = _promote_integer_dtype(result_dtype)
    else:
        result_dtype = _user_dtype(dtype)
    computation_dtype = result_dtype
    if upcast_f16 and _dtypes.issubdtype(result_dtype, np.inexact):
        computation_dtype = _upcast_f16(result_dtype)
    a = _convert_element_type(a, computation_dtype, False)
    if computation_dtype == np.dtype(bool) and bool_monoid is not None:
        monoid = bool_monoid
    if where is not None:
        a = _where(where, a, _identity_value(computation_dtype, monoid.identity))
    result = monoid.reduce(a, dims)
    if initial is not None:
        initial_arr = _convert_element_type(initial, computation_dtype, False)
        if shape_of(initial_arr) != ():
            raise ValueError(
                f"initial value must be a scalar. Got array of shape {shape_of(initial_arr)}"
            )
        result = monoid.combine(initial_arr, result)
    if keepdims:
        result = expand_dims(result, dims)
    return _convert_element_type(result, dtype or result_dtype, False)


def _cast_to_numeric(a: Array) -> Array:
    dtype, weak = _dtypes.result_type(a, return_weak_type_flag=True)
    if dtype == np.dtype(bool):
        dtype = _default_int()
    return _convert_element_type(a, dtype, weak)


def _cast_to_bool(a: Array) -> Array:
    if dtype_of(a).kind == "c":
        a = _lax.real(a)
    return _convert_element_type(a, np.dtype(bool), False)


def _optional_axes(axis: Any) -> Axis:
    if axis is None:
        return None
    try:
        return operator.index(axis)
    except TypeError:
        return tuple(operator.index(i) for i in axis)


@dispatched_at_top_level(
    static_argnames=("axis", "dtype", "out", "keepdims", "promote_integers"), checks_first=True
)
def sum(
    a: ArrayLike,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
    promote_integers: bool = True,
) -> Array:
    """Sum of elements over `axis`, as `jax.numpy.sum`."""
    return _reduction(
        a, "sum", _ADD, preproc=_cast_to_numeric, bool_monoid=_OR, upcast_f16=dtype is None,
        axis=_optional_axes(axis), dtype=dtype, out=out, keepdims=keepdims, initial=initial,
        where=where, promote_integers=promote_integers,
    )  # fmt: skip


@dispatched_at_top_level(
    static_argnames=("axis", "dtype", "out", "keepdims", "promote_integers"), checks_first=True
)
def prod(
    a: ArrayLike,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
    promote_integers: bool = True,
) -> Array:
    """Product of elements over `axis`, as `jax.numpy.prod`."""
    return _reduction(
        a, "prod", _MUL, preproc=_cast_to_numeric, bool_monoid=_AND, upcast_f16=dtype is None,
        axis=_optional_axes(axis), dtype=dtype, out=out, keepdims=keepdims, initial=initial,
        where=where, promote_integers=promote_integers,
    )  # fmt: skip


@dispatched_at_top_level(static_argnames=("axis", "out", "keepdims"), checks_first=True)
def max(
    a: ArrayLike,
    axis: Axis = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
) -> Array:
    """Maximum over `axis`, as `jax.numpy.max`."""
    return _reduction(
        a, "max", _MAX, has_identity=False, axis=_optional_axes(axis), out=out,
        keepdims=keepdims, initial=initial, where=where,
    )  # fmt: skip


@dispatched_at_top_level(static_argnames=("axis", "out", "keepdims"), checks_first=True)
def min(
    a: ArrayLike,
    axis: Axis = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
) -> Array:
    """Minimum over `axis`, as `jax.numpy.min`."""
    return _reduction(
        a, "min", _MIN, has_identity=False, axis=_optional_axes(axis), out=out,
        keepdims=keepdims, initial=initial, where=where,
    )  # fmt: skip


@dispatched_at_top_level(static_argnames=("axis", "out", "keepdims"), checks_first=True)
def all(
    a: ArrayLike,
    axis: Axis = None,
    out: None = None,
    keepdims: bool = False,
    *,
    where: ArrayLike | None = None,
) -> Array:
    """Whether every element over `axis` is nonzero, as `jax.numpy.all`."""
    return _reduction(
        a, "all", _AND, preproc=_cast_to_bool, axis=_optional_axes(axis), out=out,
        keepdims=keepdims, where=where,
    )  # fmt: skip


@dispatched_at_top_level(static_argnames=("axis", "out", "keepdims"), checks_first=True)
def any(
    a: ArrayLike,
    axis: Axis = None,
    out: None = None,
    keepdims: bool = False,
    *,
    where: ArrayLike | None = None,
) -> Array:
    """Whether some element over `axis` is nonzero, as `jax.numpy.any`."""
    return _reduction(
        a, "any", _OR, preproc=_cast_to_bool, axis=_optional_axes(axis), out=out,
        keepdims=keepdims, where=where,
    )  # fmt: skip


def _count(
    a: Array, dims: tuple[int, ...], keepdims: bool, where: Array | None, dtype: np.dtype
) -> Array:
    """How many elements each result averages: a constant, or a sum of the mask."""
    if where is None:
        shape = shape_of(a)
        size = 1
        for d in dims:
            size *= shape[d]
        return _convert_element_type(_lax.dimension_as_value(size), dtype, False)
    return sum(_broadcast_to(where, shape_of(a)), dims, dtype=dtype, keepdims=keepdims)


@dispatched_at_top_level(static_argnames=("axis", "dtype", "out", "keepdims"), checks_first=True)
def mean(
    a: ArrayLike,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    out: None = None,
    keepdims: bool = False,
    *,
    where: ArrayLike | None = None,
) -> Array:
    """Arithmetic mean over `axis`: the sum divided by a constant count, as `jax.numpy.mean`."""
    (a,) = ensure_arraylike("mean", a)
    where = check_where("mean", where)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.mean is not supported.")
    axis = _optional_axes(axis)
    result_dtype = _to_inexact(dtype_of(a)) if dtype is None else _user_dtype(dtype)
    computation_dtype = result_dtype
    if dtype is None and _dtypes.issubdtype(result_dtype, np.inexact):
        computation_dtype = _upcast_f16(result_dtype)
    dims = _reduction_dims(len(shape_of(a)), axis)
    normalizer = _count(a, dims, keepdims, where, computation_dtype)
    total = sum(a, axis, dtype=computation_dtype, keepdims=keepdims, where=where)
    return _convert_element_type(_lax.div(total, normalizer), result_dtype, False)


def _var_dtypes(a_dtype: np.dtype, dtype: np.dtype | None) -> tuple[np.dtype, np.dtype]:
    """(computation dtype, result dtype) of var and std."""
    if dtype is not None:
        if dtype.kind != "c" and a_dtype.kind == "c":
            raise ValueError(
                "jax.numpy.var does not yet support real dtype parameters when computing the "
                "variance of an array of complex values."
            )
        return _upcast_f16(dtype), dtype
    if not _dtypes.issubdtype(a_dtype, np.inexact):
        result = _to_inexact(a_dtype)
        return _upcast_f16(result), result
    real = np.dtype(np.float32 if a_dtype == np.complex64 else np.float64)
    return _upcast_f16(a_dtype), real if a_dtype.kind == "c" else a_dtype


def _correction(ddof: int, correction: int | float | None) -> int | float:
    """`var`'s and `std`'s degrees-of-freedom correction: `correction`, or its alias `ddof`."""
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def var(
    a: ArrayLike,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    out: None = None,
    ddof: int = 0,
    keepdims: bool = False,
    *,
    where: ArrayLike | None = None,
    mean: ArrayLike | None = None,
    correction: int | float | None = None,
) -> Array:
    """Variance over `axis` with `correction` (alias `ddof`), as `jax.numpy.var`.

    NaN where the count minus the correction is not positive.
    """
    correction = _correction(ddof, correction)
    (a,) = ensure_arraylike("var", a)
    return _var_jit(
        a, axis=_optional_axes(axis), dtype=dtype, out=out, correction=correction,
        keepdims=keepdims, where=where, a_mean=mean,
    )  # fmt: skip


def _var(
    a: Array,
    *,
    axis: Axis,
    dtype: DTypeLike | None,
    out: None,
    correction: Array,
    keepdims: bool,
    where: ArrayLike | None,
    a_mean: ArrayLike | None,
) -> Array:
    where = check_where("var", where)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.var is not supported.")
    computation_dtype, result_dtype = _var_dtypes(
        dtype_of(a), None if dtype is None else _user_dtype(dtype)
    )
    a = _convert_element_type(a, computation_dtype, False)
    if a_mean is None:
        a_mean = _mean_fn(a, axis, dtype=computation_dtype, keepdims=True, where=where)
    else:
        (a_mean,) = ensure_arraylike("var", a_mean)
        a_mean = _convert_element_type(a_mean, computation_dtype, False)
    centered = _lax.sub(a, a_mean)
    if computation_dtype.kind == "c":
        centered = _lax.real(_lax.mul(centered, _lax.conj(centered)))
        computation_dtype = dtype_of(centered)
    else:
        centered = _lax.square(centered)
    dims = _reduction_dims(len(shape_of(a)), axis)
    normalizer = _count(a, dims, keepdims, where, computation_dtype)
    normalizer = _lax.sub(normalizer, _convert_element_type(correction, computation_dtype, False))
    result = sum(centered, axis, dtype=computation_dtype, keepdims=keepdims, where=where)
    result = _convert_element_type(_lax.div(result, normalizer), result_dtype, False)
    positive = _lax.gt(normalizer, _convert_element_type(0, dtype_of(normalizer), False))
    return _where(positive, result, np.nan)


_var_jit = jit(_var, static_argnames=("axis", "dtype", "keepdims"))
_mean_fn = mean


def std(
    a: ArrayLike,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    out: None = None,
    ddof: int = 0,
    keepdims: bool = False,
    *,
    where: ArrayLike | None = None,
    mean: ArrayLike | None = None,
    correction: int | float | None = None,
) -> Array:
    """Standard deviation: the square root of `var`, as `jax.numpy.std`."""
    correction = _correction(ddof, correction)
    (a,) = ensure_arraylike("std", a)
    return _std_jit(
        a, axis=_optional_axes(axis), dtype=dtype, out=out, correction=correction,
        keepdims=keepdims, where=where, mean=mean,
    )  # fmt: skip


def _std(
    a: Array,
    *,
    axis: Axis,
    dtype: DTypeLike | None,
    out: None,
    correction: Array,
    keepdims: bool,
    where: ArrayLike | None,
    mean: ArrayLike | None,
) -> Array:
    where = check_where("std", where)
    if dtype is not None and not _dtypes.issubdtype(_user_dtype(dtype), np.inexact):
        raise ValueError(f"dtype argument to jnp.std must be inexact; got {_user_dtype(dtype)}")
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.std is not supported.")
    return _lax.sqrt(
        var(a, axis, dtype, correction=correction, keepdims=keepdims, where=where, mean=mean)
    )


_std_jit = jit(_std, static_argnames=("axis", "dtype", "keepdims"))


__all__ = [
    "all",
    "any",
    "max",
    "mean",
    "min",
    "prod",
    "std",
    "sum",
    "var",
]
