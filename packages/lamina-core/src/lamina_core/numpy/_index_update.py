"""Indexed updates: `x.at[idx].set/add/subtract/multiply/divide/power/min/max/apply/get`.

An update is the gather of `x[idx]` transposed into a scatter: the same indexer gives the
scatter indices and dimension numbers, the values are promoted with `x`, broadcast to the
shape of `x[idx]`, stripped of `None` axes and reversed where the index slices backwards,
and the result is converted back to `x`'s dtype and weak type, as in JAX. Updates of an
empty selection return `x` unchanged.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, Protocol, overload

import numpy as np

from lamina_core import lax as _lax
from lamina_core.ir import dtypes
from lamina_core.lax import _convert_element_type
from lamina_core.numpy import _creation, _ufuncs, _ufuncs_composite
from lamina_core.numpy._index_gather import to_gather
from lamina_core.numpy._index_parse import NDIndexer
from lamina_core.numpy._indexing import rewriting_take
from lamina_core.numpy._promote import promote_dtypes
from lamina_core.numpy._shape import broadcast_to, squeeze
from lamina_core.numpy._util import Array, ArrayLike, dtype_of, shape_of

Mode = str | _lax.GatherScatterMode | None
ScatterOp = Callable[..., Array]


def _safe_to_cast(value: Any, dtype: np.dtype) -> bool:
    """Whether promoting `value` with the (strongly typed) `dtype` gives `dtype`."""
    if dtypes.dtype(value, canonicalize=True) == dtype:
        return True
    return dtypes.result_type(value, dtype) == dtype


def scatter_update(
    x: ArrayLike,
    idx: Any,
    y: ArrayLike,
    scatter_op: ScatterOp,
    *,
    indices_are_sorted: bool,
    unique_indices: bool,
    mode: Mode = None,
    normalize_indices: bool = True,
) -> Array:
    """`x` with `x[idx] op= y`, computed functionally with `scatter_op`."""
    x = _creation.asarray(x)
    x_dtype = dtype_of(x)
    if (
        isinstance(y, int)
        and dtypes.issubdtype(x_dtype, np.integer)
        and dtypes.iinfo(x_dtype).min <= y <= dtypes.iinfo(x_dtype).max
    ):
        y = _creation.asarray(y, dtype=x_dtype)
    else:
        y = _creation.asarray(y)
    indexer = NDIndexer.from_raw_indices(idx, shape_of(x)).expand_bool_indices()
    weak_type = dtypes.is_weakly_typed(x)
    if not _safe_to_cast(y, x_dtype):
        warnings.warn(
            f"scatter inputs have incompatible types: cannot safely cast value from "
            f"dtype={dtype_of(y)} to dtype={x_dtype} with jax_numpy_dtype_promotion=standard. "
            f"In future JAX releases this will result in an error.",
            FutureWarning,
            stacklevel=3,
        )
    g = to_gather(indexer, normalize_indices=normalize_indices)
    if 0 in g.slice_shape:
        return x
    x, y = promote_dtypes(x, y)
    y = broadcast_to(y, tuple(g.slice_shape))
    if g.newaxis_dims:
        y = squeeze(y, g.newaxis_dims)
    if g.reversed_y_dims:
        y = _lax.rev(y, g.reversed_y_dims)
    if g.scalar_bool_dims:
        x = _lax.expand_dims(x, g.scalar_bool_dims)
    dnums = _lax.ScatterDimensionNumbers(
        update_window_dims=g.dnums.offset_dims,
        inserted_window_dims=g.dnums.collapsed_slice_dims,
        scatter_dims_to_operand_dims=g.dnums.start_index_map,
        operand_batching_dims=g.dnums.operand_batching_dims,
        scatter_indices_batching_dims=g.dnums.start_indices_batching_dims,
    )
    out = scatter_op(
        x,
        g.gather_indices,
        y,
        dnums,
        indices_are_sorted=g.indices_are_sorted or indices_are_sorted,
        unique_indices=g.unique_indices or unique_indices,
        mode=mode,
    )
    if g.scalar_bool_dims:
        out = _lax.squeeze(out, g.scalar_bool_dims)
    return _convert_element_type(out, x_dtype, weak_type)


def _no_sharding(out_sharding: Any) -> None:
    if out_sharding is not None:
        raise NotImplementedError(
            "out_sharding in indexed updates is not supported: Lamina arrays are not sharded"
        )


class UpdateMethod(Protocol):
    """An update method of `x.at[idx]`, as bound to it."""

    def __call__(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: Mode = None,
        out_sharding: Any = None,
        wrap_negative_indices: bool = True,
    ) -> Array: ...


class UpdateMethodDescriptor(Protocol):
    """An update method in `IndexUpdateRef`'s class body: a function, bound when looked up."""

    @overload
    def __get__(self, ref: None, owner: type[IndexUpdateRef]) -> Callable[..., Array]: ...
    @overload
    def __get__(self, ref: IndexUpdateRef, owner: type[IndexUpdateRef] | None) -> UpdateMethod: ...


def _update_method(
    name: str,
    scatter: ScatterOp,
    doc: str,
    combine: Callable[[Array, Array], Array] | None = None,
) -> UpdateMethodDescriptor:
    """The method `name` of `x.at[idx]`: scatter `values` into `x` with `scatter`, or, given
    `combine`, into ones, the result then combined with `x` (as JAX divides and powers)."""

    def method(
        self: IndexUpdateRef,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: Mode = None,
        out_sharding: Any = None,
        wrap_negative_indices: bool = True,
    ) -> Array:
        _no_sharding(out_sharding)
        target = self.array if combine is None else _creation.ones_like(self.array)
        out = self._update(
            values,
            scatter,
            target,
            indices_are_sorted,
            unique_indices,
            mode,
            wrap_negative_indices,
        )
        return out if combine is None else combine(self.array, out)

    method.__name__ = name
    method.__qualname__ = f"IndexUpdateRef.{name}"
    method.__doc__ = doc
    return method


class IndexUpdateRef:
    """`x.at[idx]`: the pure equivalents of `x[idx] = y`, `x[idx] += y`, ... and `x[idx]`.

    Each method returns an updated copy of `x`. `mode` says what out-of-bounds indices do
    (`GatherScatterMode`; updates drop them by default), `wrap_negative_indices=False` takes
    negative indices as out of bounds, and `indices_are_sorted`/`unique_indices` are promises
    passed to the primitive.
    """

    __slots__ = ("array", "index")

    def __init__(self, array: Array, index: Any) -> None:
        self.array = array
        self.index = index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def _update(
        self,
        values: ArrayLike,
        op: ScatterOp,
        array: Array,
        indices_are_sorted: bool,
        unique_indices: bool,
        mode: Mode,
        wrap_negative_indices: bool,
    ) -> Array:
        return scatter_update(
            array,
            self.index,
            values,
            op,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
            mode=mode,
            normalize_indices=wrap_negative_indices,
        )

    def get(
        self,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: Mode = None,
        fill_value: ArrayLike | None = None,
        out_sharding: Any = None,
        wrap_negative_indices: bool = True,
    ) -> Array:
        """`x[idx]`, with the gather's options."""
        _no_sharding(out_sharding)
        return rewriting_take(
            self.array,
            self.index,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
            mode=mode,
            fill_value=fill_value,
            normalize_indices=wrap_negative_indices,
        )

    def apply(
        self,
        func: Callable[[Any], Array],
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: Mode = None,
        wrap_negative_indices: bool = True,
    ) -> Array:
        """`func` applied at `idx` (once more for each repeat of an index)."""

        def op(x: Array, indices: Array, y: Array, dnums: Any, **kwargs: Any) -> Array:
            return _lax.scatter_apply(x, indices, func, dnums, update_shape=shape_of(y), **kwargs)

        zero = _convert_element_type(0, dtype_of(self.array), dtypes.is_weakly_typed(self.array))
        return self._update(
            zero, op, self.array, indices_are_sorted, unique_indices, mode, wrap_negative_indices
        )

    set = _update_method("set", _lax.scatter, "`x[idx] = values`.")
    add = _update_method("add", _lax.scatter_add, "`x[idx] += values`.")
    subtract = _update_method("subtract", _lax.scatter_sub, "`x[idx] -= values`.")
    multiply = _update_method("multiply", _lax.scatter_mul, "`x[idx] *= values`.")
    mul = multiply
    divide = _update_method(
        "divide", _lax.scatter_mul, "`x[idx] /= values`.", combine=_ufuncs.true_divide
    )
    power = _update_method(
        "power", _lax.scatter_mul, "`x[idx] **= values`.", combine=_ufuncs_composite.power
    )
    min = _update_method("min", _lax.scatter_min, "`x[idx] = minimum(x[idx], values)`.")
    max = _update_method("max", _lax.scatter_max, "`x[idx] = maximum(x[idx], values)`.")


class IndexUpdateHelper:
    """`x.at`: index it (`x.at[idx]`) to update `x` functionally."""

    __slots__ = ("array",)

    def __init__(self, array: Array) -> None:
        self.array = array

    def __getitem__(self, index: Any) -> IndexUpdateRef:
        return IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


def at(array: Array) -> IndexUpdateHelper:
    """The `.at` property of tracers and device arrays."""
    return IndexUpdateHelper(array)
