"""`lamina_core.numpy`: a NumPy-compatible frontend (`lamina.numpy`, imported as `jnp`).

Functions promote dtypes and broadcast ranks as `jax.numpy` does, then call `lax`; the jaxprs
they stage are JAX's. Importing this module also gives tracers their operators.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as _np

from lamina_core import dtypes as _dtypes
from lamina_core import lax as _lax
from lamina_core.dtypes import (
    bfloat16,
    bool_,
    complex64,
    complex128,
    finfo,
    float16,
    float32,
    float64,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    issubdtype,
    promote_types,
    result_type,
    uint8,
    uint16,
    uint32,
    uint64,
)
from lamina_core.lax._structural import _convert_element_type
from lamina_core.numpy._util import (
    canonical_axes,
    promote_args,
    promote_args_inexact,
    promote_dtypes,
    promote_dtypes_inexact,
)
from lamina_core.tracing import register_tracer_method
from lamina_core.values import typeof

ArrayLike = Any
Array = Any
DTypeLike = Any

pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(getattr(typeof(x), "shape", ()))


def _dtype(x: Any) -> _np.dtype:
    return typeof(x).dtype  # type: ignore[attr-defined, no-any-return]  # array avals


# ---- creation -------------------------------------------------------------------------------


def _shape_arg(shape: Any, name: str) -> tuple[int, ...]:
    if isinstance(shape, (int, _np.integer)):
        return (int(shape),)
    try:
        return tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(
            f"{name}: shape must be an int or a sequence of ints, got {shape!r}"
        ) from None


def full(shape: Any, fill_value: ArrayLike, dtype: DTypeLike | None = None) -> Array:
    shape = _shape_arg(shape, "full")
    if _shape(fill_value):
        value = asarray(fill_value, dtype)
        return _lax.broadcast_in_dim(
            value, shape, tuple(range(len(shape) - len(_shape(value)), len(shape)))
        )
    return _lax.full(shape, fill_value, dtype)


def zeros(shape: Any, dtype: DTypeLike | None = None) -> Array:
    return _lax.full(_shape_arg(shape, "zeros"), 0, _dtypes.canonicalize_dtype(dtype or float32))


def ones(shape: Any, dtype: DTypeLike | None = None) -> Array:
    return _lax.full(_shape_arg(shape, "ones"), 1, _dtypes.canonicalize_dtype(dtype or float32))


def zeros_like(a: ArrayLike, dtype: DTypeLike | None = None) -> Array:
    return zeros(_shape(a), dtype or _dtype(a))


def ones_like(a: ArrayLike, dtype: DTypeLike | None = None) -> Array:
    return ones(_shape(a), dtype or _dtype(a))


def full_like(a: ArrayLike, fill_value: ArrayLike, dtype: DTypeLike | None = None) -> Array:
    return full(_shape(a), fill_value, dtype or _dtype(a))


def asarray(a: ArrayLike, dtype: DTypeLike | None = None) -> Array:
    """`a` as an array of `dtype`; constants stay host values, tracers are converted."""
    if dtype is not None:
        return _convert_element_type(a, dtype, False)
    if isinstance(a, (list, tuple)):
        return _np.asarray(a, dtype=_dtypes.dtype(_np.asarray(a), canonicalize=True))
    return (
        a
        if not isinstance(a, (bool, int, float, complex))
        else _convert_element_type(
            a, _dtypes.dtype(a, canonicalize=True), _dtypes.is_weakly_typed(a)
        )
    )


def array(a: ArrayLike, dtype: DTypeLike | None = None, copy: bool = True) -> Array:
    out = asarray(a, dtype)
    return out.copy() if copy and isinstance(out, _np.ndarray) else out


# ---- elementwise ----------------------------------------------------------------------------


def _unary_inexact(lax_fn: Any, name: str) -> Any:
    def fn(x: ArrayLike, /) -> Array:
        (x,) = promote_dtypes_inexact(x)
        return lax_fn(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise `{name}`, as `jax.numpy.{name}`."
    return fn


sin = _unary_inexact(_lax.sin, "sin")
cos = _unary_inexact(_lax.cos, "cos")
tan = _unary_inexact(_lax.tan, "tan")
exp = _unary_inexact(_lax.exp, "exp")
exp2 = _unary_inexact(_lax.exp2, "exp2")
log = _unary_inexact(_lax.log, "log")
log1p = _unary_inexact(_lax.log1p, "log1p")
expm1 = _unary_inexact(_lax.expm1, "expm1")
tanh = _unary_inexact(_lax.tanh, "tanh")
sqrt = _unary_inexact(_lax.sqrt, "sqrt")


def negative(x: ArrayLike, /) -> Array:
    (x,) = promote_dtypes(x)
    return _lax.neg(x)


def positive(x: ArrayLike, /) -> Array:
    return asarray(x)


def _binary(lax_fn: Any, name: str) -> Any:
    def fn(x: ArrayLike, y: ArrayLike, /) -> Array:
        x, y = promote_args(name, x, y)
        return lax_fn(x, y)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise `{name}` with NumPy promotion and broadcasting."
    return fn


add = _binary(_lax.add, "add")
subtract = _binary(_lax.sub, "subtract")
multiply = _binary(_lax.mul, "multiply")
maximum = _binary(_lax.max, "maximum")
minimum = _binary(_lax.min, "minimum")
equal = _binary(_lax.eq, "equal")
not_equal = _binary(_lax.ne, "not_equal")
less = _binary(_lax.lt, "less")
less_equal = _binary(_lax.le, "less_equal")
greater = _binary(_lax.gt, "greater")
greater_equal = _binary(_lax.ge, "greater_equal")
bitwise_and = _binary(_lax.bitwise_and, "bitwise_and")
bitwise_or = _binary(_lax.bitwise_or, "bitwise_or")
bitwise_xor = _binary(_lax.bitwise_xor, "bitwise_xor")


def true_divide(x: ArrayLike, y: ArrayLike, /) -> Array:
    x, y = promote_args_inexact("true_divide", x, y)
    return _lax.div(x, y)


divide = true_divide


# ---- reductions -----------------------------------------------------------------------------


def sum(
    a: ArrayLike,
    axis: int | Sequence[int] | None = None,
    dtype: DTypeLike | None = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
    promote_integers: bool = True,
) -> Array:
    """Sum of elements over `axis`, as `jax.numpy.sum`."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.sum is not supported.")
    if where is not None:
        raise NotImplementedError("sum(where=...) is not supported yet")
    shape = _shape(a)
    axes = canonical_axes(axis, len(shape), "sum")
    if dtype is None:
        in_dtype = _dtypes.dtype(a, canonicalize=True)
        if promote_integers and in_dtype.kind in "bi":
            dtype = _dtypes.canonicalize_dtype(int64)
        elif promote_integers and in_dtype.kind == "u":
            dtype = _dtypes.canonicalize_dtype(uint64)
        elif in_dtype.kind == "b":
            dtype = _dtypes.canonicalize_dtype(int64)
    if dtype is not None:
        a = _convert_element_type(a, dtype, _dtypes.is_weakly_typed(a))
    result = _lax.reduce_sum(a, axes)
    if initial is not None:
        result = add(result, initial)
    if keepdims:
        kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
        result = _lax.broadcast_in_dim(
            result, kept, tuple(i for i in range(len(shape)) if i not in axes)
        )
    return result


__all__ = [
    "Array",
    "ArrayLike",
    "DTypeLike",
    "add",
    "array",
    "asarray",
    "bfloat16",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bool_",
    "complex64",
    "complex128",
    "cos",
    "divide",
    "e",
    "equal",
    "exp",
    "exp2",
    "expm1",
    "finfo",
    "float16",
    "float32",
    "float64",
    "full",
    "full_like",
    "greater",
    "greater_equal",
    "iinfo",
    "inf",
    "int8",
    "int16",
    "int32",
    "int64",
    "issubdtype",
    "less",
    "less_equal",
    "log",
    "log1p",
    "maximum",
    "minimum",
    "multiply",
    "nan",
    "negative",
    "not_equal",
    "ones",
    "ones_like",
    "pi",
    "positive",
    "promote_types",
    "result_type",
    "sin",
    "sqrt",
    "subtract",
    "sum",
    "tan",
    "tanh",
    "true_divide",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "zeros",
    "zeros_like",
]

# ---- tracer operators -----------------------------------------------------------------------

for _name, _fn in [
    ("add", add),
    ("subtract", subtract),
    ("multiply", multiply),
    ("true_divide", true_divide),
    ("negative", negative),
    ("positive", positive),
    ("equal", equal),
    ("not_equal", not_equal),
    ("less", less),
    ("less_equal", less_equal),
    ("greater", greater),
    ("greater_equal", greater_equal),
    ("bitwise_and", bitwise_and),
    ("bitwise_or", bitwise_or),
    ("bitwise_xor", bitwise_xor),
    ("method:sum", sum),
]:
    register_tracer_method(_name, _fn)
