"""NumPy-style indexers of Refs, as the `get`/`swap`/`addupdate` primitives carry them.

An index (`ref[1]`, `ref[:, 1]`, `ref[i, :3]`, `ref[idx_a, idx_b]`) becomes an `NDIndexer`:
per dimension either a static `Slice` or an integer indexer, whose value is an operand of the
equation (so traced indices stay traced). The indexer itself is a static parameter (`tree`),
hashable, printed inside the equation as JAX prints it (`a[0,:3]`, `e[a,b]`).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from types import EllipsisType
from typing import Any, assert_never

import numpy as np

from lamina_core import lax
from lamina_core.ir import AbstractValue, ShapedArray
from lamina_core.trace import typeof


@dataclass(frozen=True, slots=True)
class Slice:
    """A static slice of one dimension: `size` elements from `start`, `stride` apart."""

    start: int
    size: int
    stride: int = 1

    def as_python(self) -> slice:
        return slice(self.start, self.start + self.size * self.stride, self.stride)


@dataclass(frozen=True, slots=True)
class IntIndex:
    """An integer (scalar or array) indexer of one dimension: operand `position`."""

    position: int


@dataclass(frozen=True, slots=True)
class NDIndexer:
    """An index of every dimension of a Ref of shape `shape`."""

    indices: tuple[Slice | IntIndex, ...]
    shape: tuple[int, ...]
    int_indexer_shape: tuple[int, ...]

    @property
    def num_operands(self) -> int:
        return sum(isinstance(i, IntIndex) for i in self.indices)

    def result_shape(self) -> tuple[int, ...]:
        """The shape of `ref[index]` (NumPy's rule: integer indexers that are adjacent keep
        their place, separated ones go first)."""
        is_int = [isinstance(i, IntIndex) for i in self.indices]
        sliced = tuple(i.size for i in self.indices if isinstance(i, Slice))
        if not any(is_int):
            return sliced
        positions = [k for k, b in enumerate(is_int) if b]
        if positions[-1] - positions[0] + 1 != len(positions):
            return self.int_indexer_shape + sliced
        first = positions[0]
        return sliced[:first] + self.int_indexer_shape + sliced[first:]

    def numpy_index(self, operands: Sequence[Any]) -> tuple[Any, ...]:
        """The index as NumPy-style indexing takes it, with `operands` for the integer ones."""
        return tuple(
            i.as_python() if isinstance(i, Slice) else operands[i.position] for i in self.indices
        )


@dataclass(frozen=True, slots=True)
class ReshapeTransform:
    """A view of a Ref's value reshaped to `shape` (`view.reshape(...)`), as JAX's."""

    shape: tuple[int, ...]

    def pp(self) -> str:
        return f"{{reshape({list(self.shape)})}}"


@dataclass(frozen=True, slots=True)
class TransposeTransform:
    """A view of a Ref's value with its axes permuted (`view.transpose(...)`, `view.T`)."""

    permutation: tuple[int, ...]

    def pp(self) -> str:
        return f"{{transpose({list(self.permutation)})}}"


@dataclass(frozen=True, slots=True)
class BitcastTransform:
    """A view of a Ref's value reinterpreted as `dtype` (`view.bitcast(dtype)`)."""

    dtype: np.dtype

    def pp(self) -> str:
        return f"{{bitcast({self.dtype})}}"


Transform = NDIndexer | ReshapeTransform | TransposeTransform | BitcastTransform
Transforms = tuple[Transform, ...]
"""The `tree` param of the Ref primitives: the views of the Ref's value read or written, in
order (none: the whole value). Integer indexers of all of them number the operands in turn."""


def _normalize(idx: Any, shape: tuple[int, ...]) -> tuple[Any, ...]:
    if not isinstance(idx, tuple):
        idx = (idx,)
    ellipses = sum(i is Ellipsis for i in idx)
    if ellipses > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if ellipses:
        at = next(k for k, i in enumerate(idx) if i is Ellipsis)
        idx = (*idx[:at], *[slice(None)] * (len(shape) - len(idx) + 1), *idx[at + 1 :])
    if len(idx) > len(shape):
        raise IndexError(f"too many indices for a Ref of shape {shape}: {len(idx)} were indexed")
    return (*idx, *[slice(None)] * (len(shape) - len(idx)))


def _static_slice(s: slice, dim: int, axis: int) -> Slice:
    for bound in (s.start, s.stop, s.step):
        if bound is not None:
            try:
                operator.index(bound)
            except TypeError:
                raise TypeError(
                    f"Ref slices must have static bounds, got {s} for axis {axis}; read the "
                    "value and use lax.dynamic_slice for a traced start"
                ) from None
    start, stop, step = s.indices(dim)
    if step < 1:
        raise IndexError(f"Ref slices must have a positive step, got {s} for axis {axis}")
    return Slice(start, len(range(start, stop, step)), step)


def _int_operand(i: Any, axis: int) -> Any:
    if isinstance(i, (bool, np.bool_)):
        raise TypeError(f"a Ref cannot be indexed by a boolean, got {i!r} for axis {axis}")
    if isinstance(i, (int, np.integer)):
        return np.int32(i) if -(2**31) <= int(i) < 2**31 else np.int64(i)
    if isinstance(i, (list, tuple)):
        i = np.asarray(i)
    aval = typeof(i)
    if not isinstance(aval, ShapedArray) or aval.dtype.kind not in "iu":
        raise TypeError(
            f"Ref indices must be integers, slices or `...`, got a value of type "
            f"{aval.str_short(short_dtypes=False)} for axis {axis}"
        )
    return i


def make_indexer(idx: Any, shape: tuple[int, ...], first: int = 0) -> tuple[Transforms, list[Any]]:
    """The `tree` param and index operands for `ref[idx]` on a Ref of shape `shape` (the
    integer indexers numbered from operand `first`)."""
    if idx is None or idx is Ellipsis or (isinstance(idx, tuple) and not idx):
        return (), []
    return make_nd_indexer(idx, shape, first)


def make_nd_indexer(
    idx: Any, shape: tuple[int, ...], first: int = 0
) -> tuple[tuple[NDIndexer], list[Any]]:
    """As `make_indexer`, an indexer even of the whole value (`ref.at[...]` prints `a[:,:]`)."""
    full = _normalize(idx, shape)
    indices: list[Slice | IntIndex] = []
    operands: list[Any] = []
    for axis, (i, dim) in enumerate(zip(full, shape, strict=True)):
        if i is None:
            raise IndexError("Ref indexing does not support `None` (new axes)")
        if isinstance(i, slice):
            indices.append(_static_slice(i, dim, axis))
        elif isinstance(i, EllipsisType):  # pragma: no cover  (expanded by _normalize)
            raise IndexError("an index can only have a single ellipsis ('...')")
        else:
            indices.append(IntIndex(first + len(operands)))
            operands.append(_int_operand(i, axis))
    shapes = [tuple(typeof(o).shape) for o in operands]  # type: ignore[attr-defined]  # arrays
    try:
        common = tuple(np.broadcast_shapes(*shapes)) if shapes else ()
    except ValueError:
        raise IndexError(f"Cannot broadcast shapes for indexing: {shapes}") from None
    operands = [
        o
        if tuple(s) == common
        else lax.broadcast_in_dim(o, common, tuple(range(len(common) - len(s), len(common))))
        for o, s in zip(operands, shapes, strict=True)
    ]
    return (NDIndexer(tuple(indices), tuple(shape), common),), operands


def transformed_aval(tree: Transforms, inner: AbstractValue) -> AbstractValue:
    """The type of the indexed part of a Ref holding `inner`."""
    for transform in tree:
        inner = _transform_aval(transform, inner)
    return inner


def _transform_aval(transform: Transform, inner: AbstractValue) -> AbstractValue:
    if not isinstance(transform, NDIndexer):
        return _view_aval(transform, inner)
    indexer = transform
    if not isinstance(inner, ShapedArray):
        raise TypeError(f"Cannot index non-shaped array {inner.str_short(True)} with indices")
    if indexer.shape != inner.shape:
        raise ValueError(
            f"an indexer for shape {indexer.shape} was applied to a Ref of shape {inner.shape}"
        )
    if inner.spec is None or all(e is None for e in inner.spec):
        return inner.update(shape=indexer.result_shape())
    _check_sharded_index(indexer, inner)
    return inner.update(shape=indexer.result_shape(), spec=inner.spec)


def _check_sharded_index(indexer: NDIndexer, inner: ShapedArray) -> None:
    """A Ref split over Explicit mesh axes is indexed by slices only, whole along its split
    axes (its parts keep their layout), as JAX's."""
    if indexer.int_indexer_shape or not all(isinstance(i, Slice) for i in indexer.indices):
        raise TypeError("sharded ref (array reference) can only be indexed by slices, not integers")
    spec = inner.sharding.spec
    for axis, (dim, i) in enumerate(zip(indexer.shape, indexer.indices, strict=True)):
        entry = spec[axis] if axis < len(spec) else None
        if entry is None or (isinstance(i, Slice) and (i.start, i.size, i.stride) == (0, dim, 1)):
            continue
        raise ValueError(
            "sharded ref (array reference) can only be sliced along unsharded axes, but ref "
            f"of shape {indexer.shape} was sliced on axis {axis}, which is sharded like {entry}"
        )


def _view_aval(
    transform: ReshapeTransform | TransposeTransform | BitcastTransform, inner: AbstractValue
) -> AbstractValue:
    if not isinstance(inner, ShapedArray):
        raise TypeError(f"Cannot transform {inner.str_short(True)} with {transform}")
    if inner.spec is not None and any(e is not None for e in inner.spec):
        raise NotImplementedError
    match transform:
        case ReshapeTransform(shape):
            if math.prod(shape) != math.prod(inner.shape):
                raise ValueError(f"cannot reshape ref of shape {inner.shape} into shape {shape}")
            return inner.update(shape=shape)
        case TransposeTransform(perm):
            if len(perm) != len(inner.shape):
                raise ValueError(
                    f"Permutation {perm} does not match the rank of the type ({len(inner.shape)})"
                )
            return inner.update(shape=tuple(inner.shape[p] for p in perm))
        case BitcastTransform(dtype):
            return inner.update(shape=bitcast_shape(inner.shape, inner.dtype, dtype), dtype=dtype)
        case _:  # pragma: no cover
            assert_never(transform)


def bitcast_shape(shape: tuple[int, ...], old: np.dtype, new: np.dtype) -> tuple[int, ...]:
    """The shape of a value of `shape` and `old` bitcast to `new`: the second-minor dimension
    scales with the ratio of the widths, as JAX's (which needs one, even for equal widths)."""
    out = list(shape)
    if old.itemsize != new.itemsize:
        if len(out) < 2:
            raise NotImplementedError("Bitcast 1D ref with bitwidth change is not supported.")
        if out[-2] * old.itemsize % new.itemsize:
            raise ValueError(
                "Expected input and output shapes are the same after multiplying the "
                "second-minor dimension by the bitwidths."
            )
    if len(out) < 2:
        raise IndexError("list index out of range")
    out[-2] = out[-2] * old.itemsize // new.itemsize
    return tuple(out)
