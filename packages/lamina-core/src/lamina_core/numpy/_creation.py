"""Array creation: array, asarray, zeros, ones, full, empty and their *_like forms, arange,
linspace, eye and identity.

Each stages what `jax.numpy` stages: constant fills are a `broadcast_in_dim` of a scalar
literal, `arange` is an `iota` (scaled and shifted when needed) and `eye` compares two iotas.
`linspace` stages its body as JAX does, in a nested `jit` named `_linspace` whose static
arguments are the count, endpoint, retstep, dtype and axis.
"""

from __future__ import annotations

import operator
import types
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as _np

from lamina_core import lax as _lax
from lamina_core.ir import (
    DimExpr,
    ShapedArray,
    canonicalize_sharding,
    max_dim,
)
from lamina_core.ir import dtypes as _dtypes
from lamina_core.lax import _convert_element_type, array_copy, canonical_shape, kind_of
from lamina_core.lax import asarray as _lax_asarray
from lamina_core.numpy._util import (
    Array,
    ArrayLike,
    DTypeLike,
    check_arraylike_or_traced_hi,
    dtype_of,
    promote_args,
    promote_args_inexact,
    shape_of,
    step_is_ascending,
)
from lamina_core.trace import (
    Tracer,
    is_registered_value,
    pvary_like,
    typeof,
)
from lamina_core.transforms import Jitted
from lamina_core.tree import tree_util as _tree_util


def _shape_arg(name: str, shape: Any, dtype: Any) -> tuple[int, ...]:
    if isinstance(shape, types.GeneratorType):
        raise TypeError("expected sequence object with len >= 0 or a single integer")
    if isinstance(dtype, int) and isinstance(shape, int):
        raise TypeError(
            f"Cannot interpret '{dtype}' as a data type.\n\nDid you accidentally write "
            f"`jax.numpy.{name}({shape}, {dtype})` when you meant "
            f"`jax.numpy.{name}(({shape}, {dtype}))`, i.e. with a single tuple argument for "
            f"the shape?"
        )
    return canonical_shape((shape,) if _np.ndim(shape) == 0 else shape)


def _user_dtype(dtype: DTypeLike | None, default: Any = float) -> _np.dtype:
    return _dtypes.canonicalize_dtype(default if dtype is None else dtype)


def _broadcast_to(arr: Any, shape: Any, sharding: Any = None) -> Array:
    """`jnp.broadcast_to` without the argument check (shared with the shape functions), split
    as `sharding` (a canonical `out_sharding`) if given."""
    if not isinstance(shape, tuple) and _np.ndim(shape) == 0:
        shape = (shape,)
    shape = canonical_shape(shape)
    arr_shape = shape_of(arr)
    if arr_shape == shape and (
        sharding is None or getattr(typeof(arr), "sharding", None) == sharding
    ):
        return _lax_asarray(arr)
    if len(shape) < len(arr_shape):
        raise ValueError(f"Cannot broadcast to shape with fewer dimensions: {arr_shape=} {shape=}")
    nlead = len(shape) - len(arr_shape)
    if not all(d in (1, s) for d, s in zip(arr_shape, shape[nlead:], strict=True)):
        aval = typeof(arr)
        requested = ShapedArray(shape, dtype_of(arr))
        raise ValueError(
            f"Incompatible types for broadcasting: input type={aval} and requested type={requested}"
        )
    dims = tuple(range(nlead, len(shape)))
    return _lax.broadcast_in_dim(arr, shape, dims, out_sharding=sharding)


# --- array and asarray -----------------------------------------------------------------------


def _coerce_scalar(x: bool | int | float | complex, dtype: _np.dtype | None) -> None:
    """Refuse a Python scalar that `dtype` (or its default dtype) cannot hold, as JAX does:
    an int out of range raises OverflowError instead of wrapping around."""
    if dtype is None:
        if type(x) is int:
            _dtypes.python_scalar_dtype(x)  # OverflowError: Python int ... too large to convert
    else:
        _np.asarray(x, dtype=dtype)  # NumPy's OverflowError: Python integer ... out of bounds


def _as_numpy_if_no_dtype(leaf: Any) -> Any:
    try:
        _dtypes.dtype(leaf)
    except TypeError:
        return _np.asarray(leaf)
    return leaf


def _check_leaf_dtype(leaf: Any) -> None:
    """JAX's error for a value without a numeric dtype (a dict, a string, an object)."""
    if (
        isinstance(leaf, (Tracer, bool, int, float, complex))
        or hasattr(leaf, "dtype")
        or hasattr(leaf, "__jax_array__")
        or hasattr(leaf, "__array__")
    ):
        return
    try:
        dt = _np.asarray(leaf).dtype
    except (TypeError, ValueError):
        return  # left to the dtype lookup, whose error names the value
    if kind_of(dt) not in "biufc":
        raise TypeError(
            f"Value '{leaf}' with dtype {dt} is not a valid JAX array type. Only arrays of "
            "numeric types are supported by JAX."
        )


def array(
    object: Any,
    dtype: DTypeLike | None = None,
    *,
    copy: bool = True,
    order: str | None = "K",
    ndmin: int = 0,
    out_sharding: Any = None,
) -> Array:
    """`object` (an array, scalar, or nested lists of them) as an array of `dtype`.

    Lists holding tracers are stacked with `expand_dims` and `concatenate`, as in JAX;
    `ndmin` adds leading size-1 axes; `out_sharding` splits the result (its conversion).
    """
    if order is not None and order != "K":
        raise NotImplementedError("Only implemented for order='K'")
    if dtype is None and ndmin == 0 and out_sharding is None:
        if isinstance(object, Tracer):
            return array_copy(object) if copy else object
        if isinstance(object, (_np.ndarray, _np.number)):
            return _lax.stage(object)  # under a trace, a tracer standing for the constant
        if not copy and is_registered_value(object):
            return object  # a device array is its own `asarray`: no host round trip
    if dtype is not None:
        dtype = _user_dtype(dtype)
    weak = dtype is None and _dtypes.is_weakly_typed(object)
    sharding = canonicalize_sharding(out_sharding, "jnp.array")
    no_copy = not copy and isinstance(object, _np.ndarray) and dtype in (None, object.dtype)
    if sharding is not None and no_copy and ndmin <= _np.ndim(object):
        return _lax.stage(object)  # JAX's no-copy `device_put`: `out_sharding` unused
    if isinstance(object, (bool, int, float, complex)):
        _coerce_scalar(object, dtype)
    leaves = _tree_util.tree_leaves(object, is_leaf=lambda x: not isinstance(x, (list, tuple)))
    if any(leaf is None for leaf in leaves):
        raise ValueError("None is not a valid value for jnp.array")
    if dtype is None:
        for leaf in leaves:
            _check_leaf_dtype(leaf)
        try:
            dtype = _dtypes.result_type(*leaves) if leaves else _user_dtype(None)
        except TypeError:
            # Leaves with no dtype of their own (a range, a memoryview) read as NumPy reads
            # them, as JAX falls back to.
            leaves = [_as_numpy_if_no_dtype(leaf) for leaf in leaves]
            dtype = _dtypes.result_type(*leaves)
    out: Any
    if isinstance(object, Tracer) or is_registered_value(object):
        out = array_copy(object) if copy else object
    elif isinstance(object, (bool, int, float, complex)):
        out = object
    elif not any(isinstance(leaf, Tracer) or is_registered_value(leaf) for leaf in leaves):
        out = _np.asarray(object, dtype=dtype)
    elif isinstance(object, (list, tuple)):
        rows = [_lax.expand_dims(array(x, dtype, copy=False), [0]) for x in object]
        # Wide concatenations are built as a tree of at most 16 operands, as JAX does.
        while len(rows) > 16:
            rows = [_lax.concatenate(rows[i : i + 16], 0) for i in range(0, len(rows), 16)]
        out = _lax.concatenate(rows, 0)
    else:
        raise TypeError(f"Unexpected input type for array: {type(object)}")
    result = _convert_element_type(out, dtype, weak, sharding=sharding)
    rank = len(shape_of(result))
    if ndmin > rank:
        result = _lax.expand_dims(result, range(ndmin - rank))
    if isinstance(result, _np.ndarray) and result.ndim:
        # An array built from host data, under a trace a tracer standing for it (JAX's
        # constant-folded conversion is one): indexing it with tracers stages the indexing.
        return _lax.stage(result)
    return result


def asarray(
    a: Any,
    dtype: DTypeLike | None = None,
    order: str | None = None,
    *,
    copy: bool | None = None,
    out_sharding: Any = None,
) -> Array:
    """`a` as an array; arrays of the right dtype come back as they are."""
    if out_sharding is not None:
        return array(a, dtype, copy=bool(copy), order=order, out_sharding=out_sharding)
    if dtype is None and isinstance(a, (bool, int, float, complex)):
        # A Python scalar stays weakly typed and becomes a host scalar of its default dtype.
        _coerce_scalar(a, None)
        return _convert_element_type(
            a, _dtypes.dtype(a, canonicalize=True), _dtypes.is_weakly_typed(a)
        )
    return array(a, dtype, copy=bool(copy), order=order)


# --- filled arrays ----------------------------------------------------------------------------


def full(
    shape: Any,
    fill_value: ArrayLike,
    dtype: DTypeLike | None = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """An array of `shape` filled with `fill_value` (broadcast if it is an array), split as
    `out_sharding` (a `NamedSharding`, or a spec over the mesh in context) if given."""
    if dtype is not None:
        dtype = _user_dtype(dtype)
    check_arraylike_or_traced_hi("full", fill_value)
    sharding = canonicalize_sharding(out_sharding, "full")
    if not _np.shape(fill_value):
        return _lax.full(_shape_arg("full", shape, None), fill_value, dtype, sharding=sharding)
    return _broadcast_to(asarray(fill_value, dtype), shape, sharding)


def zeros(shape: Any, dtype: DTypeLike | None = None, *, out_sharding: Any = None) -> Array:
    """An array of `shape` filled with zeros (float32 unless `dtype` is given)."""
    shape = _shape_arg("zeros", shape, dtype)
    dtype = _user_dtype(dtype)
    return _lax.full(shape, 0, dtype, sharding=canonicalize_sharding(out_sharding, "jnp.zeros"))


def ones(shape: Any, dtype: DTypeLike | None = None, *, out_sharding: Any = None) -> Array:
    """An array of `shape` filled with ones (float32 unless `dtype` is given)."""
    shape = _shape_arg("ones", shape, dtype)
    dtype = _user_dtype(dtype)
    return _lax.full(shape, 1, dtype, sharding=canonicalize_sharding(out_sharding, "jnp.ones"))


def empty(shape: Any, dtype: DTypeLike | None = None, *, out_sharding: Any = None) -> Array:
    """As `zeros`: XLA arrays are never uninitialized, so JAX fills them with zeros."""
    shape = _shape_arg("empty", shape, dtype)
    return zeros(shape, dtype, out_sharding=out_sharding)


def _full_like(x: Any, fill_value: Any, dtype: Any, shape: Any, sharding: Any = None) -> Array:
    # lax.full_like: the fill keeps `x`'s weak type when no dtype is asked for.
    if type(x) is int:
        x = 0  # only its type counts: an int past the default integer's range is still one
    fill_shape = shape_of(x) if shape is None else canonical_shape(shape)
    weak = dtype is None and _dtypes.is_weakly_typed(x)
    dtype = dtype_of(x) if dtype is None else _user_dtype(dtype)
    if shape_of(fill_value):
        raise TypeError(
            f"full must be called with scalar fill_value, got fill_value.shape "
            f"{shape_of(fill_value)}."
        )
    fill = _convert_element_type(fill_value, dtype, weak)
    if sharding is not None:
        return pvary_like(_lax.broadcast(fill, fill_shape, out_sharding=sharding), x)
    aval = typeof(x)
    mesh = getattr(aval, "mesh", None)
    if shape is None and isinstance(x, Tracer) and mesh is not None and mesh.has_explicit:
        # JAX's full_like: a traced value's fill is split as the value (Explicit axes).
        sharding = getattr(aval, "sharding", None)
        return pvary_like(_lax.broadcast(fill, fill_shape, out_sharding=sharding), x)
    return pvary_like(_lax.broadcast(fill, fill_shape), x)


def _like_arg(name: str, a: Any) -> None:
    if not (hasattr(a, "dtype") and hasattr(a, "shape")):
        check_arraylike_or_traced_hi(name, a)


def zeros_like(
    a: ArrayLike, dtype: DTypeLike | None = None, shape: Any = None, *, out_sharding: Any = None
) -> Array:
    """Zeros with the shape and dtype (and weak type) of `a`, unless given."""
    _like_arg("zeros_like", a)
    sharding = canonicalize_sharding(out_sharding, "jnp.zeros_like")
    return _full_like(a, 0, dtype, shape, sharding)


def ones_like(
    a: ArrayLike, dtype: DTypeLike | None = None, shape: Any = None, *, out_sharding: Any = None
) -> Array:
    """Ones with the shape and dtype (and weak type) of `a`, unless given."""
    _like_arg("ones_like", a)
    sharding = canonicalize_sharding(out_sharding, "jnp.ones_like")
    return _full_like(a, 1, dtype, shape, sharding)


def empty_like(prototype: ArrayLike, dtype: DTypeLike | None = None, shape: Any = None) -> Array:
    """As `zeros_like`."""
    _like_arg("empty_like", prototype)
    return _full_like(prototype, 0, dtype, shape)


def full_like(
    a: ArrayLike,
    fill_value: ArrayLike,
    dtype: DTypeLike | None = None,
    shape: Any = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """`fill_value` broadcast to the shape of `a`, in the dtype of `a`, unless given."""
    if hasattr(a, "dtype") and hasattr(a, "shape"):
        check_arraylike_or_traced_hi("full_like", 0, fill_value)
    else:
        check_arraylike_or_traced_hi("full_like", a, fill_value)
    if shape is not None:
        shape = canonical_shape(shape)
    sharding = canonicalize_sharding(out_sharding, "full_like")
    if not shape_of(fill_value):
        return _full_like(a, fill_value, dtype, shape, sharding)
    out_shape = shape_of(a) if shape is None else shape
    out_dtype = _dtypes.result_type(a) if dtype is None else dtype
    return _broadcast_to(asarray(fill_value, dtype=out_dtype), out_shape, sharding)


# --- ranges ----------------------------------------------------------------------------------


def _concrete(value: Any, what: str) -> Any:
    if isinstance(value, Tracer):
        raise value._not_concrete(f"It arose in the {what}")  # JAX's text, with the origin
    return value


def arange(
    start: ArrayLike,
    stop: ArrayLike | None = None,
    step: ArrayLike | None = None,
    dtype: DTypeLike | None = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """Evenly spaced values in `[start, stop)`, as `numpy.arange`; the bounds must be static.

    Raises:
        ConcretizationTypeError: a bound is traced (the length would not be static).
        ValueError: a bound is not a scalar, or is complex.
    """
    sharding = canonicalize_sharding(out_sharding, "jnp.arange")
    if dtype is not None:
        dtype = _user_dtype(dtype)
    for arg in (start, stop, step):
        if arg is not None:
            check_arraylike_or_traced_hi("arange", arg)
    start_name = "stop" if stop is None and step is None else "start"
    start = _concrete(start, f"jnp.arange argument '{start_name}'")
    stop = _concrete(stop, "jnp.arange argument 'stop'")
    step = _concrete(step, "jnp.arange argument 'step'")
    for name, val in ((start_name, start), ("stop", stop), ("step", step)):
        if val is not None and _np.ndim(val) != 0:
            raise ValueError(f"jax.numpy.arange: arguments must be scalars; got {name}={val}")
    if any(type(v) is DimExpr for v in (start, stop, step)):
        if stop is None:
            start, stop = 0, start
        return _arange_symbolic(
            start, stop, 1 if step is None else step, dtype or _dtypes.canonicalize_dtype(int)
        )
    if dtype is None:
        dtype = _dtypes.result_type(start, *(x for x in (stop, step) if x is not None))
    if any(_np.iscomplexobj(x) for x in (start, stop, step) if x is not None):
        raise ValueError(
            "Passing complex start/stop/step to jnp.arange is no longer supported starting in "
            "JAX v0.10.0."
        )
    if stop is None:
        start, stop = 0, start
    if step is not None:
        # Narrow floats count in float32 and are rounded once at the end.
        narrow = kind_of(dtype) == "f" and dtype.itemsize < 4
        working = _dtypes.float32 if narrow else dtype
        size = max(0, int(_np.ceil((stop - start) / step)))
        counted = _lax.mul(
            _lax.convert_element_type(step, working),
            _lax.broadcasted_iota(working, (size,), 0, out_sharding=sharding),
        )
        return _lax.convert_element_type(
            _lax.add(_lax.convert_element_type(start, working), counted), dtype
        )
    if start == 0:
        return _lax.broadcasted_iota(
            dtype, (max(0, int(_np.ceil(stop))),), 0, out_sharding=sharding
        )
    size = max(0, int(_np.ceil(stop - start)))
    return _lax.add(
        _lax.convert_element_type(start, dtype),
        _lax.broadcasted_iota(dtype, (size,), 0, out_sharding=sharding),
    )


def _arange_symbolic(start: Any, stop: Any, step: Any, dtype: Any) -> Array:
    """`arange` with a symbolic bound or step: its length is a dimension expression."""
    if any(
        type(v) is not DimExpr and not isinstance(v, (int, _np.integer))
        for v in (start, stop, step)
    ):
        raise ValueError(
            "In arange with non-constant arguments all of start, stop, and step must be either "
            f"dimension expressions or integers: start={start}, stop={stop}, step={step}"
        )
    ascending = step_is_ascending(
        step, "arange has step == 0", "arange with non-constant arguments"
    )
    gap = step if ascending else -step
    distance = (stop - start) if ascending else (start - stop)
    size = max_dim(0, distance + gap - 1) // gap
    return _lax.add(
        asarray(start, dtype=dtype),
        _lax.mul(asarray(step, dtype=dtype), _lax.iota(dtype, size)),
    )


def _inexact(dtype: _np.dtype) -> _np.dtype:
    return dtype if kind_of(dtype) in "fc" else _dtypes.canonicalize_dtype(_dtypes.float64)


def linspace(
    start: ArrayLike,
    stop: ArrayLike,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: DTypeLike | None = None,
    axis: int = 0,
) -> Array | tuple[Array, Array]:
    """`num` evenly spaced values from `start` to `stop` (inclusive if `endpoint`).

    Array bounds give one run per element, along the new `axis` of the result.
    """
    num = operator.index(_concrete(num, "'num' argument of jnp.linspace"))
    axis = operator.index(axis)
    result: Array | tuple[Array, Array] = _linspace(
        start, stop, num=num, endpoint=endpoint, retstep=retstep, dtype=dtype, axis=axis
    )
    return result


@partial(Jitted, static_argnames=("num", "endpoint", "retstep", "dtype", "axis"))
def _linspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: Any = None,
    axis: int = 0,
) -> Array | tuple[Array, Array]:
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    check_arraylike_or_traced_hi("linspace", start, stop)
    dtype = _inexact(_dtypes.result_type(start, stop)) if dtype is None else _user_dtype(dtype)
    computation = _inexact(dtype)
    start = _convert_element_type(start, computation, False)
    stop = _convert_element_type(stop, computation, False)
    bounds = list(_broadcast_shapes(shape_of(start), shape_of(stop)))
    start_b, stop_b = _broadcast_to(start, bounds), _broadcast_to(stop, bounds)
    axis = len(bounds) + axis + 1 if axis < 0 else axis
    bounds.insert(axis, 1)
    div = num - 1 if endpoint else num
    delta: Any
    if num > 1:
        delta = _lax.div(
            *promote_args_inexact("true_divide", _sub(stop, start), _const(div, computation))
        )
        iota_shape = [1] * len(bounds)
        iota_shape[axis] = div
        real = _dtypes.finfo(computation).dtype
        step = _lax.reshape(_lax.iota(real, div), iota_shape)
        step = _lax.div(*promote_args_inexact("true_divide", step, _const(div, real)))
        step = _convert_element_type(step, computation, False)
        low = _mul(_lax.reshape(start_b, bounds), _sub(1, step))
        out = _add(low, _mul(_lax.reshape(stop_b, bounds), step))
        if endpoint:
            tail = _lax.expand_dims(stop_b, (axis,))
            out = _lax.concatenate([out, tail], axis)
    elif num == 1:
        delta = _const(_np.nan, computation) if endpoint else _sub(stop, start)
        out = _lax.reshape(start_b, bounds)
    else:
        empty_shape = list(_broadcast_shapes(shape_of(start), shape_of(stop)))
        empty_shape.insert(axis, 0)
        delta = _lax.full((), _np.nan, computation)
        out = empty(empty_shape, dtype)
    if kind_of(dtype) in "iu" and kind_of(dtype_of(out)) not in "iu":
        out = _lax.floor(out)
    result = _convert_element_type(out, dtype, False)
    return (result, delta) if retstep else result


def _const(value: Any, dtype: _np.dtype) -> Any:
    return _convert_element_type(value, dtype, False)


def _sub(x: Any, y: Any) -> Any:
    return _lax.sub(*promote_args("subtract", x, y))


def _mul(x: Any, y: Any) -> Any:
    return _lax.mul(*promote_args("multiply", x, y))


def _add(x: Any, y: Any) -> Any:
    return _lax.add(*promote_args("add", x, y))


def _broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The NumPy broadcast of `shapes`.

    Raises:
        ValueError: two shapes have different sizes, neither 1, in the same position.
    """
    tuples = [tuple(s) for s in shapes]
    if not tuples:
        return ()
    ndim = max(len(s) for s in tuples)
    padded = [(1,) * (ndim - len(s)) + s for s in tuples]
    out = []
    for dims in zip(*padded, strict=True):
        big = {d for d in dims if d != 1}
        if len(big) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={tuples}")
        out.append(big.pop() if big else 1)
    return tuple(out)


# --- eye and identity ------------------------------------------------------------------------


def eye(
    N: int, M: int | None = None, k: int | ArrayLike = 0, dtype: DTypeLike | None = None
) -> Array:
    """An `N` x `M` matrix with ones on diagonal `k` (above the main one if positive).

    Raises:
        ValueError: a negative size, or `k` is not a scalar integer.
    """
    dtype = _user_dtype(dtype)
    if isinstance(k, int) and not isinstance(k, bool):
        info = _np.iinfo(_np.int32)
        k = min(max(k, int(info.min)), int(info.max))
    check_arraylike_or_traced_hi("eye", k)
    offset_dtype = _dtypes.dtype(k, canonicalize=True)
    if shape_of(k) != () or kind_of(offset_dtype) not in "iu":
        raise ValueError(f"k must be a scalar integer; got {k}")
    n = _dim_or_index(N)
    m = n if M is None else _dim_or_index(M)
    if n < 0 or m < 0:
        raise ValueError(f"negative dimensions are not allowed, got {N} and {M}")
    rows = _lax.broadcasted_iota(offset_dtype, (n, m), 0)
    cols = _lax.broadcasted_iota(offset_dtype, (n, m), 1)
    on_diagonal = _lax.eq(*promote_args("equal", _add(rows, k), cols))
    return _convert_element_type(on_diagonal, dtype, False)


def _dim_or_index(d: Any) -> Any:
    return d if type(d) is DimExpr else operator.index(d)


def identity(n: int, dtype: DTypeLike | None = None) -> Array:
    """The `n` x `n` identity matrix."""
    return eye(n, dtype=dtype)


__all__ = [
    "arange",
    "array",
    "asarray",
    "empty",
    "empty_like",
    "eye",
    "full",
    "full_like",
    "identity",
    "linspace",
    "ones",
    "ones_like",
    "zeros",
    "zeros_like",
]
