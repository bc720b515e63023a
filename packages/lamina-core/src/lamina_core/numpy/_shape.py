"""Shape functions: reshape, transpose, squeeze, concatenate, stack, split, tile, ...

Each stages what `jax.numpy` stages. Where JAX wraps a helper in a nested `jit` (`_flip`,
`atleast_1d/2d/3d`, which h/v/dstack call), so does Lamina, with the same
name and static arguments, so the `jit` equations print alike. JAX's `inline=True` jits
(ravel, swapaxes, moveaxis, squeeze, broadcast_arrays) leave no trace and are plain here.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as _np

from lamina_core import lax as _lax
from lamina_core.ir import (
    DimExpr,
    InconclusiveDimensionOperation,
    NamedSharding,
    PartitionSpec,
    canonicalize_sharding,
    is_symbolic_dim,
)
from lamina_core.lax import asarray as _lax_asarray
from lamina_core.lax import canonical_shape
from lamina_core.numpy._creation import _broadcast_shapes, _broadcast_to, array, asarray
from lamina_core.numpy._util import (
    Array,
    ArrayLike,
    DTypeLike,
    check_arraylike_or_traced_hi,
    promote_dtypes,
    shape_of,
)
from lamina_core.trace import Tracer
from lamina_core.transforms import Jitted


def _canonicalize_axis(axis: Any, ndim: int, name: str) -> int:
    index = operator.index(axis)
    if not -ndim <= index < ndim:
        raise ValueError(f"{name}: axis {index} is out of bounds for array of dimension {ndim}")
    return index + ndim if index < 0 else index


def _index_tuple(x: Any) -> tuple[int, ...]:
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(operator.index(i) for i in x)


def _ndim(x: Any) -> int:
    return len(shape_of(x))


# --- reshaping -------------------------------------------------------------------------------


def _new_shape(a: Any, newshape: Any) -> tuple[int, ...]:
    """`newshape` with its one `-1` resolved against the size of `a`."""
    original = newshape
    try:
        iter(newshape)
    except TypeError:
        newshape = [newshape]
    sizes = canonical_shape(newshape)
    shape = shape_of(a)
    size = math.prod(shape)
    unknown = [i for i, d in enumerate(sizes) if d == -1]
    if len(unknown) > 1:
        raise TypeError(f"can only specify one unknown axis size with a `-1` value, got {original}")
    if unknown and any(is_symbolic_dim(d) for d in (*shape, *sizes)):
        return _symbolic_new_shape(shape, sizes)
    if unknown:
        known = math.prod([d for d in sizes if d != -1])
        if known == 0 or size % known != 0:
            raise TypeError(
                f"cannot reshape array of shape {shape} (size {size}) into shape {original} "
                f"because the product of specified axis sizes ({known}) does not evenly "
                f"divide {size}"
            )
        return tuple(size // known if d == -1 else d for d in sizes)
    if size != math.prod(sizes):
        raise TypeError(
            f"cannot reshape array of shape {shape} (size {size}) into shape {original} (size "
            f"{math.prod(sizes)})"
        )
    return sizes


def _symbolic_new_shape(shape: tuple[Any, ...], sizes: tuple[Any, ...]) -> tuple[Any, ...]:
    """The `-1` of `sizes` resolved when a size is symbolic: it must divide exactly (JAX's
    `divide_shape_sizes` and its text, the `-1` counted in the divisor)."""
    size, signed = math.prod(shape), math.prod(sizes)
    if size == signed:
        quotient: Any = 1
    else:
        quotient, rest = size.divmod(signed) if type(size) is DimExpr else divmod(size, signed)
        if rest != 0:
            raise InconclusiveDimensionOperation(
                f"Cannot divide evenly the sizes of shapes {tuple(shape)} and {tuple(sizes)}. "
                f"The remainder {rest} should be 0.",
                explain=False,
            )
    return tuple(-quotient if d == -1 else d for d in sizes)


def _reshape(a: Array, *args: Any, order: str = "C", out_sharding: Any = None) -> Array:
    """The `.reshape` method of arrays: `x.reshape(2, 3)` or `x.reshape((2, 3))`."""
    newshape = _new_shape(a, args[0] if len(args) == 1 else args)
    if order == "C":
        sharding = canonicalize_sharding(out_sharding, "reshape")
        return _lax.reshape(a, newshape, None, out_sharding=sharding)
    if order == "F":
        reversed_axes = list(range(_ndim(a)))[::-1]
        sharding = canonicalize_sharding(out_sharding, "jnp.reshape")
        if sharding is not None:  # the reshape before the transpose splits reversed axes
            spec = PartitionSpec(
                *sharding.spec.partitions[::-1],
                unreduced=sharding.spec.unreduced,
                reduced=sharding.spec.reduced,
            )
            sharding = NamedSharding(sharding.mesh, spec)
        staged = _lax.reshape(a, newshape[::-1], reversed_axes, out_sharding=sharding)
        return transpose(staged)
    if order == "A":
        raise NotImplementedError("np.reshape order=A is not implemented.")
    raise ValueError(f"Unexpected value for 'order' argument: {order}.")


def reshape(
    a: ArrayLike,
    shape: Any,
    order: str = "C",
    *,
    copy: bool | None = None,
    out_sharding: Any = None,
) -> Array:
    """`a` with a new shape of the same size; one dimension may be `-1` (inferred); split as
    `out_sharding` if given.

    Raises:
        TypeError: the sizes do not match, or more than one dimension is `-1`.
    """
    check_arraylike_or_traced_hi("reshape", a)
    if isinstance(a, (_np.ndarray, _np.generic)):
        if out_sharding is None:
            # jnp.reshape forwards to the argument's own method, so NumPy arrays stay NumPy.
            return a.reshape(shape, order=order)  # type: ignore[call-overload]  # NumPy's overloads
        a = _lax_asarray(a)
    return _reshape(a, shape, order=order, out_sharding=out_sharding)


def ravel(a: ArrayLike, order: str = "C", *, out_sharding: Any = None) -> Array:
    """`a` flattened to one dimension (split as `out_sharding` if given)."""
    check_arraylike_or_traced_hi("ravel", a)
    if order == "K":
        raise NotImplementedError("Ravel not implemented for order='K'.")
    return _reshape(a, (math.prod(shape_of(a)),), order=order, out_sharding=out_sharding)


def squeeze(a: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    """`a` without the given size-1 axes (all of them when `axis` is None)."""
    check_arraylike_or_traced_hi("squeeze", a)
    shape = shape_of(a)
    axes = tuple(i for i, d in enumerate(shape) if d == 1) if axis is None else _index_tuple(axis)
    return _lax.squeeze(a, axes)


def expand_dims(a: ArrayLike, axis: int | Sequence[int]) -> Array:
    """`a` with size-1 axes inserted at `axis` (positions in the result)."""
    check_arraylike_or_traced_hi("expand_dims", a)
    return _lax.expand_dims(a, _index_tuple(axis))


# --- axis permutations -----------------------------------------------------------------------


def transpose(a: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """`a` with its axes permuted by `axes` (reversed when None)."""
    check_arraylike_or_traced_hi("transpose", a)
    ndim = _ndim(a)
    perm = list(range(ndim))[::-1] if axes is None else axes
    return _lax.transpose(a, [_canonicalize_axis(i, ndim, "jnp.transpose") for i in perm])


def _transpose_method(a: Array, *args: Any) -> Array:
    if not args:
        axes = None
    elif len(args) == 1:
        axes = None if args[0] is None else _index_tuple(args[0])
    else:
        axes = _index_tuple(args)
    return transpose(a, axes)


def _transpose_property(a: Array) -> Array:
    return transpose(a)


def swapaxes(a: ArrayLike, axis1: int, axis2: int) -> Array:
    """`a` with `axis1` and `axis2` exchanged."""
    check_arraylike_or_traced_hi("swapaxes", a)
    perm = _np.arange(_ndim(a))
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return _lax.transpose(a, list(perm))


def moveaxis(a: ArrayLike, source: int | Sequence[int], destination: int | Sequence[int]) -> Array:
    """`a` with the axes `source` moved to positions `destination`, others kept in order."""
    check_arraylike_or_traced_hi("moveaxis", a)
    ndim = _ndim(a)
    src = tuple(_canonicalize_axis(i, ndim, "jnp.moveaxis") for i in _index_tuple(source))
    dst = tuple(_canonicalize_axis(i, ndim, "jnp.moveaxis") for i in _index_tuple(destination))
    if len(src) != len(dst):
        raise ValueError(f"Inconsistent number of elements: {len(src)} vs {len(dst)}")
    perm = [i for i in range(ndim) if i not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        perm.insert(d, s)
    return _lax.transpose(a, perm)


@partial(Jitted, static_argnames="axis")
def _flip(m: Array, axis: tuple[int, ...] | None = None) -> Array:
    ndim = _ndim(m)
    if axis is None:
        return _lax.rev(m, list(range(ndim)))
    return _lax.rev(m, [_canonicalize_axis(i, ndim, "jnp.flip") for i in axis])


def flip(m: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    """`m` reversed along `axis` (every axis when None)."""
    check_arraylike_or_traced_hi("flip", m)
    return _flip(m, axis=None if axis is None else _index_tuple(axis))


def fliplr(m: ArrayLike) -> Array:
    """`m` reversed along axis 1."""
    check_arraylike_or_traced_hi("fliplr", m)
    return _flip(m, axis=(1,))


def flipud(m: ArrayLike) -> Array:
    """`m` reversed along axis 0."""
    check_arraylike_or_traced_hi("flipud", m)
    return _flip(m, axis=(0,))


# --- joining ---------------------------------------------------------------------------------


def _concatenate_array(arr: Any, axis: int | None, dtype: DTypeLike | None) -> Array:
    # One array of arrays: a single reshape that moves the leading axis into `axis`.
    arr = asarray(arr, dtype=dtype)
    shape = shape_of(arr)
    if not shape or shape[0] == 0:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        return _lax.reshape(arr, (math.prod(shape),))
    if len(shape) == 1:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = _canonicalize_axis(axis, len(shape) - 1, "jnp.concatenate")
    out_shape = (*shape[1 : axis + 1], shape[0] * shape[axis + 1], *shape[axis + 2 :])
    dims = [*range(1, axis + 1), 0, *range(axis + 1, len(shape))]
    return _lax.reshape(arr, out_shape, dims)


def concatenate(arrays: Any, axis: int | None = 0, dtype: DTypeLike | None = None) -> Array:
    """Join `arrays` along an existing `axis` (flattened first when None), promoting dtypes.

    Raises:
        ValueError: no arrays, zero-dimensional arrays, or `axis` out of bounds.
        TypeError: shapes differ in a dimension other than `axis`.
    """
    if isinstance(arrays, (_np.ndarray, Tracer)):
        return _concatenate_array(arrays, axis, dtype)
    check_arraylike_or_traced_hi("concatenate", *arrays)
    if not len(arrays):
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        return concatenate([ravel(a) for a in arrays], axis=0, dtype=dtype)
    if _ndim(arrays[0]) == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = _canonicalize_axis(axis, _ndim(arrays[0]), "jnp.concatenate")
    if dtype is None:
        operands = promote_dtypes(*arrays) if len(arrays) > 1 else [_lax_asarray(arrays[0])]
    else:
        operands = [asarray(a, dtype=dtype) for a in arrays]
    return _lax.concatenate(operands, axis)


def stack(arrays: Any, axis: int = 0, out: None = None, dtype: DTypeLike | None = None) -> Array:
    """Join equally shaped `arrays` along a new `axis`, promoting dtypes."""
    if not len(arrays):
        raise ValueError("Need at least one array to stack.")
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.stack is not supported.")
    if isinstance(arrays, (_np.ndarray, Tracer)):
        axis = _canonicalize_axis(axis, _ndim(arrays), "jnp.stack")
        return concatenate(expand_dims(arrays, axis + 1), axis=axis, dtype=dtype)
    check_arraylike_or_traced_hi("stack", *arrays)
    if dtype is not None:
        operands = [asarray(a, dtype=dtype) for a in arrays]
    else:
        operands = promote_dtypes(*arrays)
    return _lax.stack(operands, axis=axis)


def vstack(tup: Sequence[ArrayLike], dtype: DTypeLike | None = None) -> Array:
    """Stack arrays row-wise: at least 2-D each, joined along axis 0."""
    check_arraylike_or_traced_hi("vstack", *tup)
    return concatenate([atleast_2d(m) for m in tup], axis=0, dtype=dtype)


def hstack(tup: Sequence[ArrayLike], dtype: DTypeLike | None = None) -> Array:
    """Stack arrays column-wise: along axis 1, or axis 0 for 1-D (and 0-D) arrays."""
    check_arraylike_or_traced_hi("hstack", *tup)
    arrs = [atleast_1d(m) for m in tup]
    return concatenate(arrs, axis=0 if _ndim(arrs[0]) == 1 else 1, dtype=dtype)


def dstack(tup: Sequence[ArrayLike], dtype: DTypeLike | None = None) -> Array:
    """Stack arrays depth-wise: at least 3-D each, joined along axis 2."""
    check_arraylike_or_traced_hi("dstack", *tup)
    return concatenate([atleast_3d(m) for m in tup], axis=2, dtype=dtype)


@Jitted
def atleast_1d(*arys: ArrayLike) -> Any:
    """Each argument as an array of at least one dimension (a list for several)."""
    check_arraylike_or_traced_hi("atleast_1d", *arys)
    out = [array(a, copy=False, ndmin=1) for a in arys]
    return out[0] if len(out) == 1 else out


@Jitted
def atleast_2d(*arys: ArrayLike) -> Any:
    """Each argument with leading size-1 axes up to two dimensions (a list for several)."""
    check_arraylike_or_traced_hi("atleast_2d", *arys)
    out = [array(a, copy=False, ndmin=2) for a in arys]
    return out[0] if len(out) == 1 else out


@Jitted
def atleast_3d(*arys: ArrayLike) -> Any:
    """Each argument as at least 3-D: a vector `(N,)` becomes `(1, N, 1)`, a matrix gets a
    trailing axis (a list for several arguments)."""
    check_arraylike_or_traced_hi("atleast_3d", *arys)
    if len(arys) != 1:
        # Several arguments: JAX calls itself per argument, nesting one jit per argument.
        return [atleast_3d(a) for a in arys]
    arr = asarray(arys[0])
    padding = {0: (0, 1, 2), 1: (0, 2), 2: (2,)}.get(_ndim(arr))
    return arr if padding is None else _lax.expand_dims(arr, padding)


# --- splitting -------------------------------------------------------------------------------


def _split(op: str, ary: ArrayLike, indices_or_sections: Any, axis: int) -> list[Array]:
    check_arraylike_or_traced_hi(op, ary)
    axis = operator.index(axis)
    size = shape_of(ary)[axis]
    if isinstance(indices_or_sections, (tuple, list)) or (
        isinstance(indices_or_sections, (_np.ndarray, Tracer)) and _ndim(indices_or_sections) > 0
    ):
        bounds = _np.asarray([0, *(operator.index(i) for i in indices_or_sections), size])
        sizes = list(_np.diff(bounds))
    else:
        sections = operator.index(indices_or_sections)
        part, rest = divmod(size, sections)
        if rest == 0:
            sizes = [part] * sections
        elif op == "array_split":
            sizes = [part + 1] * rest + [part] * (sections - rest)
        else:
            raise ValueError(f"array split does not result in an equal division: rest is {rest}")
    # JAX passes NumPy int64 sizes, and the split equation prints them as such.
    return list(_lax.split(ary, [_np.int64(s) for s in sizes], axis=axis))


def split(ary: ArrayLike, indices_or_sections: Any, axis: int = 0) -> list[Array]:
    """Split into equal sections, or at the given indices, along `axis`.

    Raises:
        ValueError: the sections do not divide the axis evenly.
    """
    return _split("split", ary, indices_or_sections, axis)


def array_split(ary: ArrayLike, indices_or_sections: Any, axis: int = 0) -> list[Array]:
    """As `split`, but sections may differ in size by one (the first ones are larger)."""
    return _split("array_split", ary, indices_or_sections, axis)


# --- broadcasting and repetition --------------------------------------------------------------


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The NumPy broadcast of `shapes`.

    Raises:
        ValueError: two shapes have different sizes, neither 1, in the same position.
    """
    return _broadcast_shapes(*shapes)


def broadcast_to(array: ArrayLike, shape: Any, *, out_sharding: Any = None) -> Array:
    """`array` broadcast to `shape` as NumPy does (leading axes added, size-1 axes stretched),
    split as `out_sharding` if given.

    Raises:
        ValueError: `shape` has fewer dimensions or incompatible sizes.
    """
    check_arraylike_or_traced_hi("broadcast_to", array)
    return _broadcast_to(array, shape, canonicalize_sharding(out_sharding, "jnp.broadcast_to"))


def broadcast_arrays(*args: ArrayLike) -> list[Array]:
    """The arguments broadcast against each other to one common shape."""
    check_arraylike_or_traced_hi("broadcast_arrays", *args)
    shapes = [shape_of(a) for a in args]
    if not shapes or all(s == shapes[0] for s in shapes):
        return [_lax_asarray(a) for a in args]
    shape = broadcast_shapes(*shapes)
    return [_broadcast_to(a, shape) for a in args]


def tile(A: ArrayLike, reps: int | Sequence[int]) -> Array:
    """`A` repeated `reps` times along each axis, as `numpy.tile`."""
    check_arraylike_or_traced_hi("tile", A)
    try:
        reps_tuple = tuple(operator.index(r) for r in reps)  # type: ignore[union-attr]  # an int raises TypeError
    except TypeError:
        reps_tuple = (operator.index(reps),)  # type: ignore[arg-type]  # the int case
    ndim = _ndim(A)
    reps_tuple = (1,) * (ndim - len(reps_tuple)) + reps_tuple
    if len(reps_tuple) > ndim:
        A = _lax.expand_dims(A, tuple(range(len(reps_tuple) - ndim)))
    return _lax.tile(A, reps_tuple)


__all__ = [
    "array_split",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_arrays",
    "broadcast_shapes",
    "broadcast_to",
    "concatenate",
    "dstack",
    "expand_dims",
    "flip",
    "fliplr",
    "flipud",
    "hstack",
    "moveaxis",
    "ravel",
    "reshape",
    "split",
    "squeeze",
    "stack",
    "swapaxes",
    "tile",
    "transpose",
    "vstack",
]
