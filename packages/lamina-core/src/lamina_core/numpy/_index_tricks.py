"""Index tricks of `jax.numpy`: the `r_`, `c_`, `mgrid`, `ogrid`, `s_` and `index_exp` helpers,
`ix_`, `mask_indices`, `block` and `resize`; and, from `_index_edits`, the index-driven edits
(`delete`, `insert`, `extract`, `compress`, `choose`, `place`, `put`, `put_along_axis`), so
this module's `__all__` is all of them."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import lax as _lax
from lamina_core.ir import dtypes as _dtypes
from lamina_core.numpy._index_edits import (
    _arraylike,
    _size,
    choose,
    compress,
    delete,
    extract,
    insert,
    place,
    put,
    put_along_axis,
)
from lamina_core.numpy._promote import promote_dtypes
from lamina_core.numpy._util import Array, ArrayLike, dtype_of, shape_of
from lamina_core.trace import concrete_or_error
from lamina_core.transforms import jit

s_ = np.s_
index_exp = np.index_exp


# --- r_, c_, mgrid, ogrid ---------------------------------------------------------------------


def _grid_from_slice(s: slice, op_name: str) -> Array:
    """The 1-D range a slice names: `arange`, or `linspace` when the step is imaginary (its
    magnitude is then the number of points, both ends included)."""
    start = concrete_or_error(s.start, f"slice start of jnp.{op_name}") or 0
    stop = concrete_or_error(s.stop, f"slice stop of jnp.{op_name}")
    step = concrete_or_error(s.step, f"slice step of jnp.{op_name}") or 1
    if np.iscomplex(step):
        return jnp.linspace(start, stop, int(abs(step)))
    return jnp.arange(start, stop, step)


def _grids(key: Any, op_name: str) -> list[Array]:
    return promote_dtypes(*(_grid_from_slice(k, op_name) for k in key))


class _Mgrid:
    """`mgrid[slices]`: a dense grid, the coordinate arrays of the slices stacked on axis 0."""

    def __getitem__(self, key: slice | tuple[slice, ...]) -> Array:
        if isinstance(key, slice):
            return _grid_from_slice(key, "mgrid")
        out = jnp.meshgrid(*_grids(key, "mgrid"), indexing="ij", sparse=False)
        if not out:
            return jnp.arange(0)
        return jnp.stack(out, 0)


class _Ogrid:
    """`ogrid[slices]`: an open grid, one broadcastable coordinate array per slice."""

    def __getitem__(self, key: slice | tuple[slice, ...]) -> Array | list[Array]:
        if isinstance(key, slice):
            return _grid_from_slice(key, "ogrid")
        out: list[Array] = jnp.meshgrid(*_grids(key, "ogrid"), indexing="ij", sparse=True)
        return out


mgrid = _Mgrid()
ogrid = _Ogrid()


class _AxisConcat:
    """Concatenation by indexing: items (arrays, scalars, or slices read as ranges) are joined
    along `axis` after being given at least `ndmin` dimensions. A leading string directive
    `"axis,ndmin,trans1d"` changes the settings; `"r"` or `"c"` makes a row or column matrix
    of a 1-D result."""

    axis: int
    ndmin: int
    trans1d: int
    op_name: str

    def __getitem__(self, key: Any) -> Array:
        items: tuple[Any, ...] = key if isinstance(key, tuple) else (key,)
        params = [self.axis, self.ndmin, self.trans1d, -1]
        directive = items[0]
        if isinstance(directive, str):
            items = items[1:]
            if directive == "r":
                params[-1] = 0
            elif directive == "c":
                params[-1] = 1
            else:
                fields: list[Any] = directive.split(",")
                # As NumPy: missing fields keep the defaults, fields after the third are ignored.
                if len(fields) < 4:
                    fields += params[len(fields) :]
                else:
                    fields = [*fields[:3], params[-1]]
                try:
                    params = [int(f) for f in fields]
                except ValueError as err:
                    raise ValueError(f"could not understand directive {directive!r}") from err
        axis, ndmin, trans1d, matrix = params
        output = []
        for item in items:
            if isinstance(item, slice):
                obj = _grid_from_slice(item, self.op_name)
                item_ndim = 0
            elif isinstance(item, str):
                raise ValueError("string directive must be placed at the beginning")
            else:
                obj = jnp.array(item, copy=False)
                item_ndim = len(shape_of(obj))
            obj = jnp.array(obj, copy=False, ndmin=ndmin)
            if trans1d != -1 and ndmin - item_ndim > 0:
                # The item's own axes go where trans1d says among the ndmin axes: a rotation.
                order = tuple(range(ndmin))
                shift = ndmin - abs(ndmin + trans1d + 1) % ndmin
                obj = jnp.transpose(obj, order[shift:] + order[:shift])
            output.append(obj)
        res = jnp.concatenate(tuple(output), axis=axis)
        if matrix != -1 and len(shape_of(res)) == 1:
            res = jnp.expand_dims(res, matrix)
        return res

    def __len__(self) -> int:
        return 0


class RClass(_AxisConcat):
    """`r_[...]`: concatenation along the first axis (items at least 1-D)."""

    axis = 0
    ndmin = 1
    trans1d = -1
    op_name = "r_"


class CClass(_AxisConcat):
    """`c_[...]`: concatenation along the last axis, 1-D items becoming columns."""

    axis = -1
    ndmin = 2
    trans1d = 0
    op_name = "c_"


r_ = RClass()
c_ = CClass()


# --- index arrays -----------------------------------------------------------------------------


def ix_(*args: ArrayLike) -> tuple[Array, ...]:
    """An open mesh from 1-D integer sequences: `x[ix_(rows, cols)]` is the cross product."""
    arrays = _arraylike("ix", *args)
    n = len(arrays)
    out = []
    for i, a in enumerate(arrays):
        shape = shape_of(a)
        if len(shape) != 1:
            raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape {shape}")
        if dtype_of(a) == np.bool_:
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
        target = [1] * n
        target[i] = shape[0]
        if shape[0] == 0:
            # As NumPy, an empty sequence gives an (empty) index array of the index type.
            out.append(_lax.full(tuple(target), np.zeros((), _dtypes.canonicalize_dtype(np.intp))))
        else:
            out.append(_lax.broadcast_in_dim(a, tuple(target), (i,)))
    return tuple(out)


def mask_indices(
    n: int, mask_func: Callable[[ArrayLike, int], Array], k: int = 0, *, size: int | None = None
) -> tuple[Array, Array]:
    """The indices of the nonzero entries of `mask_func(ones((n, n)), k)` (e.g. `triu`)."""
    i, j = jnp.nonzero(mask_func(jnp.ones((n, n)), k), size=size)
    return i, j


# --- block, resize ----------------------------------------------------------------------------


def _atleast_nd(x: Any, n: int) -> Array:
    m = len(shape_of(x))
    return _lax.broadcast(x, (1,) * (n - m)) if m < n else jnp.asarray(x)


def _block(xs: Any) -> tuple[Array, int]:
    """The assembled nested lists and their depth."""
    if isinstance(xs, tuple):
        raise ValueError(f"jax.numpy.block does not allow tuples, got {xs}")
    if isinstance(xs, list):
        if not xs:
            raise ValueError("jax.numpy.block does not allow empty list arguments")
        parts, depths = zip(*(_block(x) for x in xs), strict=True)
        if any(d != depths[0] for d in depths[1:]):
            raise ValueError("Mismatched list depths in jax.numpy.block")
        rank = max(depths[0], *(len(shape_of(x)) for x in parts))
        joined = jnp.concatenate([_atleast_nd(x, rank) for x in parts], axis=-depths[0])
        return joined, depths[0] + 1
    return jnp.asarray(xs), 1


def _block_body(arrays: Any) -> Array:
    out, _ = _block(arrays)
    return out


_block_body.__name__ = _block_body.__qualname__ = "block"
_block_jit = jit(_block_body)


def block(arrays: ArrayLike | list[Any]) -> Array:
    """An array assembled from nested lists of blocks: the innermost lists are joined along
    the last axis, the next ones along the one before, and so on."""
    result: Array = _block_jit(arrays)
    return result


def _index_tuple(x: Any) -> tuple[int, ...]:
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(operator.index(d) for d in x)


def _resize_body(a: ArrayLike, new_shape: Any) -> Array:
    (arr,) = _arraylike("resize", a)
    shape = _index_tuple(new_shape)
    if any(d < 0 for d in shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    flat = jnp.ravel(arr)
    size = math.prod(shape)
    if not _size(flat) or not size:
        return jnp.zeros_like(flat, shape=shape)
    repeats = -(-size // _size(flat))
    return jnp.reshape(jnp.tile(flat, repeats)[:size], shape)


_resize_body.__name__ = _resize_body.__qualname__ = "resize"
_resize_jit = jit(_resize_body, static_argnames=("new_shape",))


def resize(a: ArrayLike, new_shape: int | Sequence[int]) -> Array:
    """`a` flattened, repeated as often as needed and cut to fill an array of `new_shape`."""
    result: Array = _resize_jit(a, new_shape)
    return result


__all__ = [
    "block",
    "c_",
    "choose",
    "compress",
    "delete",
    "extract",
    "index_exp",
    "insert",
    "ix_",
    "mask_indices",
    "mgrid",
    "ogrid",
    "place",
    "put",
    "put_along_axis",
    "r_",
    "resize",
    "s_",
]
