"""Sorting and searching: sort and argsort over lax.sort, argmax and argmin.

sort and argsort are each staged as a nested `jit` named after them, as in JAX, and are stable
by default; `descending` reverses the result, and argsort keeps equal elements in their original
order by sorting the reversed array. argmax and argmin flatten when `axis` is None and return
the default integer type.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from lamina_core import lax as _lax
from lamina_core.ir import dtypes as _dtypes
from lamina_core.numpy._reductions import canonicalize_axis, ensure_arraylike, expand_dims, ravel
from lamina_core.numpy._util import Array, ArrayLike, DTypeLike, shape_of
from lamina_core.transforms import jit


def _check_unsupported(name: str, kind: Any, order: Any) -> None:
    if kind is not None:
        raise TypeError(
            f"'kind' argument to {name} is not supported. Use stable=True or stable=False to "
            f"specify sort stability."
        )
    if order is not None:
        raise TypeError(f"'order' argument to {name} is not supported.")


def sort(
    a: ArrayLike,
    axis: int | None = -1,
    *,
    kind: None = None,
    order: None = None,
    stable: bool = True,
    descending: bool = False,
) -> Array:
    """`a` sorted along `axis` (the flattened array when None), as `jax.numpy.sort`."""
    return _sort_jit(a, axis=axis, kind=kind, order=order, stable=stable, descending=descending)


def _sort(
    a: ArrayLike, *, axis: int | None, kind: Any, order: Any, stable: bool, descending: bool
) -> Array:
    (arr,) = ensure_arraylike("sort", a)
    _check_unsupported("sort", kind, order)
    if axis is None:
        arr, axis = ravel(arr), 0
    dimension = canonicalize_axis(axis, len(shape_of(arr)))
    result = _lax.sort(arr, dimension=dimension, is_stable=stable)
    return _lax.rev(result, (dimension,)) if descending else result


def argsort(
    a: ArrayLike,
    axis: int | None = -1,
    *,
    kind: None = None,
    order: None = None,
    stable: bool = True,
    descending: bool = False,
    dtype: DTypeLike | None = None,
) -> Array:
    """Indices that sort `a` along `axis`, as `jax.numpy.argsort`."""
    return _argsort_jit(
        a, axis=axis, kind=kind, order=order, stable=stable, descending=descending, dtype=dtype
    )


def _argsort(
    a: ArrayLike,
    *,
    axis: int | None,
    kind: Any,
    order: Any,
    stable: bool,
    descending: bool,
    dtype: DTypeLike | None,
) -> Array:
    (arr,) = ensure_arraylike("argsort", a)
    _check_unsupported("argsort", kind, order)
    if axis is None:
        arr, axis = ravel(arr), 0
    shape = shape_of(arr)
    dimension = canonicalize_axis(axis, len(shape))
    # The default integer (int32 unless x64 is on), as NumPy's index type semantics ask.
    index_dtype = _default_int() if dtype is None else _dtypes.canonicalize_dtype(dtype)
    iota = _lax.broadcasted_iota(index_dtype, shape, dimension)
    if descending and stable:
        # Reverse first so that equal elements keep their order once the result is reversed.
        arr = _lax.rev(arr, (dimension,))
        iota = _lax.rev(iota, (dimension,))
    _, indices = _lax.sort_key_val(arr, iota, dimension=dimension, is_stable=stable)
    return _lax.rev(indices, (dimension,)) if descending else indices


_SORT_STATICS = ("axis", "kind", "order", "stable", "descending")
# JAX prints a jit by its function's name: these are `sort` and `argsort`.
_sort.__name__ = _sort.__qualname__ = "sort"
_argsort.__name__ = _argsort.__qualname__ = "argsort"
_sort_jit = jit(_sort, static_argnames=_SORT_STATICS)
_argsort_jit = jit(_argsort, static_argnames=(*_SORT_STATICS, "dtype"))


def _default_int() -> Any:
    return _dtypes.canonicalize_dtype(_dtypes.int64)


def _arg_reduction(
    name: str, reduce: Callable[..., Array], a: ArrayLike, axis: Any, out: None, keepdims: Any
) -> Array:
    (a,) = ensure_arraylike(name, a)
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
    if axis is None:
        dims = list(range(len(shape_of(a))))
        a = ravel(a)
        axis = 0
    else:
        axis = operator.index(axis)
        dims = [axis]
    shape = shape_of(a)
    if shape[axis] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    result = reduce(a, canonicalize_axis(axis, len(shape)), _default_int())
    return expand_dims(result, dims) if keepdims else result


def argmax(
    a: ArrayLike, axis: int | None = None, out: None = None, keepdims: bool | None = None
) -> Array:
    """Index of the maximum (flattened when `axis` is None), as `jax.numpy.argmax`."""
    return _arg_reduction("argmax", _lax.argmax, a, axis, out, keepdims)


def argmin(
    a: ArrayLike, axis: int | None = None, out: None = None, keepdims: bool | None = None
) -> Array:
    """Index of the minimum (flattened when `axis` is None), as `jax.numpy.argmin`."""
    return _arg_reduction("argmin", _lax.argmin, a, axis, out, keepdims)


__all__ = [
    "argmax",
    "argmin",
    "argsort",
    "sort",
]
