"""Shape primitives: reshape, squeeze, transpose, rev, tile and iota, with the lax functions
built on them (expand_dims, collapse, broadcasted_iota) and the argument checks the shape,
slicing and joining families share.

Params are stored exactly as JAX 0.10.2 stores them, so that jaxprs print alike: where JAX
keeps the caller's integers as given (`rev`, `tile`), so do we, and a NumPy integer prints as
`np.int64(0)` in both. Like JAX, the lax functions return their operand unchanged only when
it is an array (a tracer or an upper layer's array), never for NumPy or Python constants.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core.ir import (
    AbstractValue,
    DimExpr,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    dtypes,
    impl_rules,
)
from lamina_core.lax import _checks as c
from lamina_core.lax._structural import _convert_element_type, broadcast_in_dim, canonical_sharding
from lamina_core.lax._types import Array
from lamina_core.trace import Tracer, typeof

reshape_p: Final = Primitive("reshape")
squeeze_p: Final = Primitive("squeeze")
transpose_p: Final = Primitive("transpose")
rev_p: Final = Primitive("rev")
tile_p: Final = Primitive("tile")
iota_p: Final = Primitive("iota")

_HOST_VALUES: Final = (bool, int, float, complex, np.ndarray, np.generic, list, tuple)


# --- helpers shared with _slicing and _joining --------------------------------------------


def is_array(x: Any) -> bool:
    """JAX's `isinstance(x, jax.Array)`: tracers and upper layers' arrays, not host constants."""
    return isinstance(x, Tracer) or not isinstance(x, _HOST_VALUES)


def shape_of(x: Any) -> tuple[int, ...]:
    return tuple(getattr(typeof(x), "shape", ()))


def asarray(x: Any) -> Array:
    """`lax.asarray`: arrays as they are; constants in their canonical dtype and weak type."""
    if is_array(x):
        return x
    return _convert_element_type(x, dtypes.dtype(x, canonicalize=True), dtypes.is_weakly_typed(x))


def canonicalize_axis(axis: Any, ndim: int, op: str) -> int:
    """`axis` in `[0, ndim)`; the error names `op` and then says what NumPy and JAX say."""
    index = operator.index(axis)
    if not -ndim <= index < ndim:
        raise ValueError(f"{op}: axis {index} is out of bounds for array of dimension {ndim}")
    return index + ndim if index < 0 else index


def canonical_shape(shape: Any) -> tuple[int, ...]:
    """A shape argument as a tuple of Python ints (negative sizes are left to the rules)."""
    try:
        return tuple(operator.index(d) for d in shape)
    except TypeError:
        pass
    try:  # symbolic dimensions (shape polymorphism) are kept as they are
        dims: tuple[Any, ...] = tuple(d if type(d) is DimExpr else operator.index(d) for d in shape)
        return dims
    except TypeError:
        pass
    message = f"Shapes must be 1D sequences of concrete values of integer type, got {shape!r}."
    traced = [d for d in shape if isinstance(d, Tracer)] if isinstance(shape, Sequence) else []
    if traced:  # as JAX's: where the abstract sizes came from
        message += (
            "\nIf using `jit`, try using `static_argnums` or applying `jit` to smaller "
            "subfunctions."
        )
        message += "".join(d._origin_msg() for d in traced)
    raise TypeError(message)


def check_shapelike(fun: str, arg: str, obj: Any, non_zero_shape: bool = False) -> None:
    """`obj` must be a tuple, list or 1-D array of non-negative (or, with `non_zero_shape`,
    positive) integers; JAX's TypeError otherwise."""
    lower, bound = (1, "strictly positive") if non_zero_shape else (0, "nonnegative")
    if type(obj) in (tuple, list) and all(type(d) is int and d >= lower for d in obj):
        return  # the usual case, without NumPy's `ndim` (which builds an array)
    if not isinstance(obj, (tuple, list, np.ndarray)):
        raise TypeError(f"{fun} {arg} must be of type tuple/list/ndarray, got {type(obj)}.")
    if not len(obj):
        return
    if np.ndim(obj) != 1:
        raise TypeError(f"{fun} {arg} must be 1-dimensional, got {np.ndim(obj)}.")
    if not all(
        (isinstance(d, (int, np.integer)) and not isinstance(d, bool)) or type(d) is DimExpr
        for d in obj
    ):
        raise TypeError(
            f"{fun} {arg} must have every element be an integer type, got {tuple(map(type, obj))}."
        )
    if not all(d >= lower for d in obj):
        raise TypeError(f"{fun} {arg} must have every element be {bound}, got {obj}.")


# --- reshape -------------------------------------------------------------------------------


@abstract_eval_rules.register(reshape_p)
def _reshape_abstract_eval(
    x: AbstractValue, *, new_sizes: Sequence[int], dimensions: Sequence[int] | None, sharding: Any
) -> ShapedArray:
    aval = c.array_aval("reshape", x)
    if not all(d >= 0 for d in new_sizes):
        raise TypeError(f"reshape new_sizes must all be positive, got {new_sizes}.")
    if dimensions is not None and set(dimensions) != set(range(aval.ndim)):
        raise TypeError(
            f"reshape dimensions must be a permutation of operand dimensions, got dimensions "
            f"{dimensions} for shape {aval.shape}."
        )
    # JAX 0.10.2 has this check switched off and fails only when lowering; a jaxpr that
    # changes the number of elements is ill-typed, so Lamina rejects it here.
    if math.prod(new_sizes) != aval.size:
        raise TypeError(
            f"reshape total size must be unchanged, got new_sizes {tuple(new_sizes)} (size "
            f"{math.prod(new_sizes)}) for operand shape {aval.shape} (size {aval.size})."
        )
    return ShapedArray(tuple(new_sizes), aval.dtype, aval.weak_type)


@impl_rules.register(reshape_p)
def _reshape_impl(
    x: np.ndarray, *, new_sizes: Sequence[int], dimensions: Sequence[int] | None, sharding: Any
) -> np.ndarray:
    if dimensions is not None:
        x = np.transpose(x, dimensions)
    return np.reshape(x, tuple(new_sizes))


def reshape(
    operand: Array,
    new_sizes: Sequence[int],
    dimensions: Sequence[int] | None = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """Reshape `operand` to `new_sizes`, after permuting its axes by `dimensions` if given.

    Raises:
        TypeError: a size is negative, the element count changes, or `dimensions` is not a
            permutation of the operand's axes.
    """
    sizes = canonical_shape(new_sizes)
    shape = shape_of(operand)
    dims = None if dimensions is None else tuple(operator.index(d) for d in dimensions)
    identity = dims is None or dims == tuple(range(len(shape)))
    out_sharding = canonical_sharding(out_sharding)
    if shape and shape == sizes and identity and out_sharding is None and is_array(operand):
        return operand
    return reshape_p.bind(
        operand, new_sizes=sizes, dimensions=None if identity else dims, sharding=out_sharding
    )


def collapse(operand: Array, start_dimension: int, stop_dimension: int | None = None) -> Array:
    """Merge dimensions `[start_dimension, stop_dimension)` into one, major to minor."""
    shape = shape_of(operand)
    lo, hi, _ = slice(start_dimension, stop_dimension).indices(len(shape))
    if hi < lo:
        raise ValueError(
            f"Invalid dimension range passed to collapse: {shape}[{start_dimension}:"
            f"{stop_dimension}]"
        )
    return reshape(operand, (*shape[:lo], math.prod(shape[lo:hi]), *shape[hi:]))


# --- squeeze and expand_dims ------------------------------------------------------------------


@abstract_eval_rules.register(squeeze_p)
def _squeeze_abstract_eval(x: AbstractValue, *, dimensions: Sequence[int]) -> ShapedArray:
    aval = c.array_aval("squeeze", x)
    dims = set(dimensions)
    if len(dims) != len(dimensions):
        raise ValueError(f"dimensions are not unique: {dimensions}")
    if not all(0 <= d < aval.ndim for d in dims):
        raise ValueError(f"dimensions outside range [0, ndim): {dimensions}")
    if any(aval.shape[d] != 1 for d in dims):
        raise ValueError(
            f"cannot select an axis to squeeze out which has size not equal to one, got "
            f"shape={aval.shape} and dimensions={dimensions}"
        )
    shape = tuple(d for i, d in enumerate(aval.shape) if i not in dims)
    return ShapedArray(shape, aval.dtype, aval.weak_type)


@impl_rules.register(squeeze_p)
def _squeeze_impl(x: np.ndarray, *, dimensions: Sequence[int]) -> np.ndarray:
    return np.reshape(x, tuple(d for i, d in enumerate(np.shape(x)) if i not in dimensions))


def squeeze(array: Array, dimensions: Sequence[int]) -> Array:
    """Remove the size-1 `dimensions` (negative axes count from the end)."""
    ndim = len(shape_of(array))
    dims = tuple(sorted(canonicalize_axis(d, ndim, "lax.squeeze") for d in dimensions))
    if not dims and is_array(array):
        return array
    return squeeze_p.bind(array, dimensions=dims)


def expand_dims(array: Array, dimensions: Sequence[int]) -> Array:
    """Insert size-1 axes at `dimensions` of the result (a `broadcast_in_dim`, as in JAX)."""
    dimensions = tuple(dimensions)
    if len(set(dimensions)) != len(dimensions):
        raise ValueError(f"repeated axis in lax.expand_dims: {dimensions}")
    shape = shape_of(array)
    ndim_out = len(shape) + len(dimensions)
    dims = [canonicalize_axis(d, ndim_out, "lax.expand_dims") for d in dimensions]
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in lax.expand_dims: {dims}")
    out_shape = list(shape)
    for d in sorted(dims):
        out_shape.insert(d, 1)
    kept = tuple(i for i in range(ndim_out) if i not in dims)
    return broadcast_in_dim(array, out_shape, kept)


# --- transpose and rev ----------------------------------------------------------------------


@abstract_eval_rules.register(transpose_p)
def _transpose_abstract_eval(x: AbstractValue, *, permutation: Sequence[int]) -> ShapedArray:
    aval = c.array_aval("transpose", x)
    if not isinstance(permutation, (tuple, list, np.ndarray)):
        raise TypeError(
            f"transpose permutation must be a tuple/list/ndarray, got {type(permutation)}."
        )
    if tuple(sorted(permutation)) != tuple(range(aval.ndim)):
        raise TypeError(
            f"transpose permutation isn't a permutation of operand dimensions, got "
            f"permutation {permutation} for operand shape {aval.shape}."
        )
    shape = tuple(aval.shape[i] for i in permutation)
    return ShapedArray(shape, aval.dtype, aval.weak_type)


@impl_rules.register(transpose_p)
def _transpose_impl(x: np.ndarray, *, permutation: Sequence[int]) -> np.ndarray:
    return np.transpose(x, tuple(permutation))


def transpose(operand: Array, permutation: Sequence[int]) -> Array:
    """Permute the axes of `operand`: result axis i is operand axis `permutation[i]`."""
    perm = tuple(operator.index(d) for d in permutation)
    if perm == tuple(range(len(shape_of(operand)))) and is_array(operand):
        return operand
    return transpose_p.bind(operand, permutation=perm)


@abstract_eval_rules.register(rev_p)
def _rev_abstract_eval(x: AbstractValue, *, dimensions: Sequence[int]) -> ShapedArray:
    aval = c.array_aval("rev", x)
    check_shapelike("rev", "dimensions", dimensions)
    if len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev dimensions must be unique, got {dimensions}.")
    if dimensions and not max(dimensions) < aval.ndim:
        raise TypeError(
            f"rev dimensions must all be less than operand ndim, got dimensions {dimensions} "
            f"for operand ndim {aval.ndim}."
        )
    return aval


@impl_rules.register(rev_p)
def _rev_impl(x: np.ndarray, *, dimensions: Sequence[int]) -> np.ndarray:
    return np.flip(x, tuple(int(d) for d in dimensions)) if len(dimensions) else x


def rev(operand: Array, dimensions: Sequence[int]) -> Array:
    """Reverse `operand` along each of `dimensions` (non-negative axes)."""
    return rev_p.bind(operand, dimensions=tuple(dimensions))


# --- tile ------------------------------------------------------------------------------------


@abstract_eval_rules.register(tile_p)
def _tile_abstract_eval(x: AbstractValue, *, reps: Sequence[int]) -> ShapedArray:
    aval = c.array_aval("tile", x)
    if aval.ndim != len(reps):
        raise TypeError(
            f"reps length must be equal to the ndim of x, got len(reps)={len(reps)} and "
            f"x.ndim={aval.ndim}."
        )
    shape = tuple(d * r for d, r in zip(aval.shape, reps, strict=True))
    return ShapedArray(shape, aval.dtype, aval.weak_type)


@impl_rules.register(tile_p)
def _tile_impl(x: np.ndarray, *, reps: Sequence[int]) -> np.ndarray:
    return np.tile(x, tuple(int(r) for r in reps))


def tile(operand: Array, reps: Sequence[int]) -> Array:
    """Repeat `operand` `reps[i]` times along axis i (one rep per axis)."""
    return tile_p.bind(operand, reps=tuple(reps))


# --- iota ------------------------------------------------------------------------------------


@abstract_eval_rules.register(iota_p)
def _iota_abstract_eval(
    *, dtype: np.dtype, shape: Sequence[int], dimension: int, sharding: Any
) -> ShapedArray:
    check_shapelike("iota", "shape", shape)
    if c.kind_of(dtype) not in c.NUM:
        raise TypeError(
            f"iota does not accept dtype {dtype.name}. Accepted dtypes are subtypes of "
            f"integer, floating, complexfloating."
        )
    if not 0 <= dimension < len(shape):
        raise ValueError(
            f"iota dimension must be between 0 and len(shape), got dimension={dimension} for "
            f"shape={tuple(shape)}"
        )
    return ShapedArray(tuple(shape), dtype, False)


@impl_rules.register(iota_p)
def _iota_impl(
    *, dtype: np.dtype, shape: Sequence[int], dimension: int, sharding: Any
) -> np.ndarray:
    along = np.arange(shape[dimension]).astype(dtype)
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.broadcast_to(along.reshape(expanded), tuple(shape)).copy()


def broadcasted_iota(
    dtype: Any, shape: Sequence[int], dimension: int, *, out_sharding: Any = None
) -> Array:
    """An array of `shape` whose values count 0, 1, ... along `dimension`."""
    return iota_p.bind(
        dtype=dtypes.canonicalize_dtype(dtype),
        shape=canonical_shape(shape),
        dimension=operator.index(dimension),
        sharding=canonical_sharding(out_sharding),
    )


def iota(dtype: Any, size: int) -> Array:
    """`[0, 1, ..., size - 1]` in `dtype`."""
    return broadcasted_iota(dtype, (size,), 0)


__all__ = [
    "broadcasted_iota",
    "collapse",
    "expand_dims",
    "iota",
    "iota_p",
    "reshape",
    "reshape_p",
    "rev",
    "rev_p",
    "squeeze",
    "squeeze_p",
    "tile",
    "tile_p",
    "transpose",
    "transpose_p",
]
