"""Parsing NumPy indices against a shape, and the two slicing fast paths of `x[idx]`.

`NDIndexer` classifies each index (None, slice, `...`, integer, boolean, integer array) and
the axes it consumes, as JAX's does, and converts to a static slice (ints and slices with
static bounds) or a dynamic one (scalar, possibly traced, integers and unit-step slices) when
it can. Anything else becomes a gather (`_index_gather`).

One distinction matters for the printed jaxpr: JAX compares a NumPy index array with NumPy
on the host, but stages the comparisons of its own arrays, including the ones it makes from
lists. Lamina keeps both kinds on the host as NumPy, so `ParsedIndex.staged` marks the second.
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from lamina_core import lax as _lax
from lamina_core.config import affects_tracing, config
from lamina_core.ir import ShapedArray, dtypes, is_symbolic_dim
from lamina_core.lax import _convert_element_type
from lamina_core.numpy import _ufuncs
from lamina_core.trace import JAXIndexError, Tracer, is_registered_value, typeof
from lamina_core.tree.tree_util import tree_leaves

# What indexing stages depends on it: part of every tracing cache key, as in JAX.
check_static_indices = affects_tracing(
    config.define_bool(
        "jax_check_static_indices",
        False,
        "Raise an IndexError for static integer indices out of bounds in `x[idx]` and "
        "`x.at[idx].get()` (in the default mode); otherwise they are clamped, as XLA does.",
    )
)

_MODE = _lax.GatherScatterMode


class NonConcreteBooleanIndexError(JAXIndexError):
    """A boolean mask index is traced: the size of the result would depend on its values."""

    def __init__(self, aval: Any) -> None:
        # JAX's text puts a blank line before the pointer to the error page.
        IndexError.__init__(
            self,
            f"Array boolean indices must be concrete; got {aval}\n\nSee "
            f"https://docs.jax.dev/en/latest/errors.html#jax.errors.NonConcreteBooleanIndexError",
        )


class IndexType(enum.Enum):
    """The kind of one index in a tuple of indices."""

    NONE = "none"
    SLICE = "slice"
    ELLIPSIS = "ellipsis"
    INTEGER = "integer"
    BOOLEAN = "boolean"
    ARRAY = "array"


def is_array(x: Any) -> bool:
    """A JAX `Array`: a tracer or an upper layer's device array (not a host value)."""
    return isinstance(x, Tracer) or is_registered_value(x)


def _is_integer_index(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_scalar(x: Any) -> bool:
    return bool(np.isscalar(x)) or ((is_array(x) or isinstance(x, np.ndarray)) and np.ndim(x) == 0)


def _is_boolean_index(x: Any) -> bool:
    if isinstance(x, list):
        return bool(x) and all(_is_scalar(e) and dtypes.dtype(e) == np.bool_ for e in x)
    try:
        aval = typeof(x)
    except (TypeError, OverflowError):
        return False
    return isinstance(aval, ShapedArray) and aval.dtype == np.bool_


def _sequence_dtype(seq: Sequence[Any]) -> np.dtype:
    leaves = tree_leaves(seq, is_leaf=lambda x: not isinstance(x, (list, tuple)))
    return dtypes.result_type(*leaves)


def _index_type(idx: Any) -> IndexType:
    if idx is None:
        return IndexType.NONE
    if idx is Ellipsis:
        return IndexType.ELLIPSIS
    if isinstance(idx, slice):
        return IndexType.SLICE
    if _is_integer_index(idx):
        return IndexType.INTEGER
    if _is_boolean_index(idx):
        return IndexType.BOOLEAN
    if is_array(idx) or isinstance(idx, np.ndarray):
        # The dtype as given: JAX names float64 even when it would canonicalize it.
        dtype = idx.dtype
        if not dtypes.issubdtype(dtype, np.integer):
            raise TypeError(
                f"Indexer must have integer or boolean type, got indexer with type {dtype}"
            )
        return IndexType.ARRAY
    if isinstance(idx, str):
        raise TypeError(f"JAX does not support string indexing; got {idx=}")
    if isinstance(idx, Sequence):
        if not idx:  # an empty list would default to a float type
            return IndexType.ARRAY
        dtype = _sequence_dtype(idx)
        if dtype == np.bool_:
            return IndexType.BOOLEAN
        if dtypes.issubdtype(dtype, np.integer):
            return IndexType.ARRAY
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {dtype}")
    if isinstance(idx, (float, complex, np.generic)):
        raise TypeError(
            f"Indexer must have integer or boolean type, got indexer with type "
            f"{np.dtype(type(idx))}"
        )
    raise IndexError(
        f"only integers, slices (`:`), ellipsis (`...`), newaxis (`None`) and integer or "
        f"boolean arrays are valid indices. Got {idx}"
    )


@dataclass(frozen=True, slots=True)
class ParsedIndex:
    """One index, its kind, and the axes of the indexed array it consumes."""

    index: Any
    typ: IndexType
    consumed_axes: tuple[int, ...]
    staged: bool = False
    """A host array standing for one of JAX's own arrays: operations on it are staged."""


def _unpack_list_index(x: Any) -> bool:
    return (
        ((isinstance(x, np.ndarray) or is_array(x)) and np.ndim(x) != 0)
        or isinstance(x, (Sequence, slice))
        or x is Ellipsis
        or x is None
    )


def _as_tuple(idx: Any) -> tuple[Any, ...]:
    """`idx` as a tuple of indices; other sequences are refused, as JAX refuses them."""
    if isinstance(idx, tuple):
        return idx
    if isinstance(idx, Sequence) and not isinstance(idx, (np.ndarray, str)):
        use = "arr[tuple(seq)]" if any(_unpack_list_index(i) for i in idx) else "arr[array(seq)]"
        raise TypeError(
            f"Using a non-tuple sequence for multidimensional indexing is not allowed; use "
            f"`{use}` instead of `arr[seq]`. See https://github.com/jax-ml/jax/issues/4564 "
            f"for more information."
        )
    return (idx,)


def _parse(indices: tuple[Any, ...], shape: tuple[int, ...]) -> list[ParsedIndex]:
    types = [_index_type(i) for i in indices]
    consumed = []
    for idx, typ in zip(indices, types, strict=True):
        if typ in (IndexType.NONE, IndexType.ELLIPSIS):
            consumed.append(0)
        elif typ == IndexType.BOOLEAN:
            consumed.append(int(np.ndim(idx)))
        else:
            consumed.append(1)
    ellipses = [i for i, t in enumerate(types) if t == IndexType.ELLIPSIS]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    total = sum(consumed)
    if total > len(shape):
        raise IndexError(
            f"Too many indices: array is {len(shape)}-dimensional, but {total} were indexed"
        )
    if ellipses:
        consumed[ellipses[0]] = len(shape) - total
    parsed, axis = [], 0
    for idx, typ, n in zip(indices, types, consumed, strict=True):
        parsed.append(ParsedIndex(idx, typ, tuple(range(axis, axis + n))))
        axis += n
    return parsed


def is_static(x: Any) -> bool:
    """None or a concrete value: what a slice's start, stop and step may be."""
    return x is None or not isinstance(x, Tracer)


@dataclass(frozen=True, slots=True)
class StaticSlice:
    """`x[idx]` as slice, rev, squeeze and expand_dims with static parameters."""

    start_indices: list[int]
    limit_indices: list[int]
    strides: list[int] | None
    rev_axes: list[int]
    squeeze_axes: list[int]
    newaxis_dims: list[int]

    def is_trivial(self, shape: tuple[int, ...]) -> bool:
        if self.strides is not None or len(shape) != len(self.start_indices):
            return False
        return all(
            (s, lim) == (0, d)
            for s, lim, d in zip(self.start_indices, self.limit_indices, shape, strict=True)
        )


@dataclass(frozen=True, slots=True)
class DynamicSlice:
    """`x[idx]` as dynamic_slice (starts possibly traced), rev, squeeze and expand_dims."""

    start_indices: list[Any]
    slice_sizes: list[int]
    rev_axes: list[int]
    squeeze_axes: list[int]
    newaxis_dims: list[int]
    trivial: bool


def as_index_array(x: Any) -> Any:
    """`jnp.asarray` for an index: arrays as they are, host values in their canonical dtype."""
    if is_array(x):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        return np.asarray(x, dtypes.canonicalize_dtype(x.dtype))
    return _convert_element_type(x, dtypes.dtype(x, canonicalize=True), dtypes.is_weakly_typed(x))


def wrap_negative(index: Any, size: int) -> Any:
    """`index < 0 ? index + size : index`, staged (JAX's `_dynamic_slice_indices`)."""
    dtype = dtypes.dtype(index, canonicalize=True)
    if dtype.kind == "u":
        return index
    size_arr = _convert_element_type(_lax.dimension_as_value(size), dtype)
    return _lax.select(_ufuncs.less(index, 0), _ufuncs.add(index, size_arr), index)


@dataclass(frozen=True, slots=True)
class NDIndexer:
    """Indices parsed against the shape of the indexed array."""

    shape: tuple[int, ...]
    indices: list[ParsedIndex]

    @classmethod
    def from_raw_indices(cls, idx: Any, shape: tuple[int, ...]) -> NDIndexer:
        return cls(shape, _parse(_as_tuple(idx), shape))

    def validate_static_indices(self, normalize_indices: bool = True) -> None:
        for idx in self.indices:
            if idx.typ == IndexType.INTEGER:
                i = operator.index(idx.index)
                (axis,) = idx.consumed_axes
                size = self.shape[axis]
                normed = i + size if normalize_indices and i < 0 else i
                if not 0 <= normed < size:
                    raise IndexError(
                        f"index {i} out of bounds for axis {axis} with size {size} "
                        f"({normalize_indices=})"
                    )

    def validate_slices(self) -> None:
        for position, idx in enumerate(self.indices):
            if idx.typ == IndexType.SLICE:
                s = idx.index
                if not all(is_static(v) for v in (s.start, s.stop, s.step)):
                    raise IndexError(
                        f"Slice entries must be static integers. Got {s} at position {position}"
                    )

    def expand_bool_indices(self) -> NDIndexer:
        """Boolean masks as the integer arrays of their True positions (scalars stay)."""
        out: list[ParsedIndex] = []
        for position, idx in enumerate(self.indices):
            if idx.typ != IndexType.BOOLEAN:
                out.append(idx)
                continue
            if isinstance(idx.index, Tracer):
                raise NonConcreteBooleanIndexError(typeof(idx.index).str_short(True))
            if np.ndim(idx.index) == 0:
                out.append(ParsedIndex(bool(idx.index), idx.typ, ()))
                continue
            mask = np.asarray(idx.index)
            expected = [self.shape[i] for i in idx.consumed_axes]
            if not all(s in (0, e) for s, e in zip(mask.shape, expected, strict=False)):
                raise IndexError(
                    f"boolean index did not match shape of indexed array in index {position}: "
                    f"got {mask.shape}, expected {expected}"
                )
            out.extend(
                ParsedIndex(where, IndexType.ARRAY, (axis,))
                for where, axis in zip(np.where(mask), idx.consumed_axes, strict=True)
            )
        return NDIndexer(self.shape, out)

    def expand_ellipses(self) -> NDIndexer:
        """The ellipsis and the implicit trailing axes as explicit full slices."""
        out: list[ParsedIndex] = []
        consumed = 0
        for idx in self.indices:
            consumed += len(idx.consumed_axes)
            if idx.typ == IndexType.ELLIPSIS:
                out.extend(
                    ParsedIndex(slice(None), IndexType.SLICE, (a,)) for a in idx.consumed_axes
                )
            else:
                out.append(idx)
        out.extend(
            ParsedIndex(slice(None), IndexType.SLICE, (a,))
            for a in range(consumed, len(self.shape))
        )
        return NDIndexer(self.shape, out)

    def is_advanced_int_indexer(self) -> bool:
        return any(
            i.typ in (IndexType.ARRAY, IndexType.BOOLEAN) and np.ndim(i.index) > 0
            for i in self.indices
        )

    def with_indices(self, indices: list[ParsedIndex]) -> NDIndexer:
        return replace(self, indices=indices)

    def to_static_slice(self, *, normalize_indices: bool, mode: Any) -> StaticSlice:
        """Static slicing parameters, or an error saying why the indices have none."""
        parsed = _MODE.PROMISE_IN_BOUNDS if mode is None else _MODE.from_any(mode)
        if any(is_symbolic_dim(d) for d in self.shape):
            raise ValueError("mode='slice' is not valid for polymorphic shapes.")
        if parsed not in (_MODE.PROMISE_IN_BOUNDS, _MODE.CLIP):
            raise ValueError("static_slice requires mode='promise_in_bounds' or mode='clip'")
        if parsed == _MODE.PROMISE_IN_BOUNDS:
            self.validate_static_indices(normalize_indices=normalize_indices)
        self.validate_slices()
        for position, idx in enumerate(self.indices):
            if idx.typ in (IndexType.ARRAY, IndexType.BOOLEAN):
                raise TypeError(
                    f"static_slice: indices must be static scalars or slices. Got index of "
                    f"type {type(idx.index)} at position {position}"
                )
        starts: list[int] = []
        limits: list[int] = []
        strides: list[int] = []
        rev_axes: list[int] = []
        squeeze_axes: list[int] = []
        newaxis_dims: list[int] = []
        for idx in self.expand_ellipses().indices:
            if idx.typ == IndexType.NONE:
                newaxis_dims.append(len(starts) - len(squeeze_axes) + len(newaxis_dims))
                continue
            (axis,) = idx.consumed_axes
            size = self.shape[axis]
            if idx.typ == IndexType.INTEGER:
                if size == 0:
                    raise IndexError(f"index is out of bounds for axis {axis} with size 0")
                start = int(idx.index)
                if normalize_indices and start < 0:
                    start += size
                start = min(max(start, 0), size - 1)
                starts.append(start)
                limits.append(start + 1)
                strides.append(1)
                squeeze_axes.append(axis)
                continue
            start, stop, step = idx.index.indices(size)
            if step < 0:
                new_start = min(size, stop + 1 + abs(start - stop - 1) % abs(step))
                starts.append(new_start)
                limits.append(max(new_start, start + 1))
                strides.append(abs(step))
                rev_axes.append(axis)
            else:
                starts.append(start)
                limits.append(max(start, stop))
                strides.append(step)
        return StaticSlice(
            starts,
            limits,
            None if all(s == 1 for s in strides) else strides,
            rev_axes,
            squeeze_axes,
            newaxis_dims,
        )

    def to_dynamic_slice(self, *, mode: Any) -> DynamicSlice:
        """Dynamic slicing parameters, or an error saying why the indices have none."""
        if mode is not None and _MODE.from_any(mode) not in (_MODE.PROMISE_IN_BOUNDS, _MODE.CLIP):
            raise ValueError("dynamic_slice requires mode='promise_in_bounds' or mode='clip'")
        for position, idx in enumerate(self.indices):
            if idx.typ == IndexType.SLICE and idx.index.step not in (None, -1, 1):
                raise TypeError(
                    f"dynamic_slice: only unit steps supported in slice. Got {idx.index} at "
                    f"position {position}"
                )
            if idx.typ == IndexType.ARRAY and (
                isinstance(idx.index, Sequence) or np.shape(idx.index) != ()
            ):
                raise TypeError(
                    f"dynamic_slice: only scalar indices allowed. Got index of type "
                    f"{type(idx.index)} at position {position}"
                )
            if idx.typ == IndexType.BOOLEAN:
                raise TypeError(
                    f"dynamic_slice: indices must be scalars or slices. Got index of type "
                    f"{type(idx.index)} at position {position}"
                )
        starts: list[Any] = []
        sizes: list[int] = []
        rev_axes: list[int] = []
        squeeze_axes: list[int] = []
        newaxis_dims: list[int] = []
        trivial = True
        for idx in self.expand_ellipses().indices:
            if idx.typ == IndexType.NONE:
                newaxis_dims.append(len(starts) - len(squeeze_axes) + len(newaxis_dims))
                continue
            (axis,) = idx.consumed_axes
            size = self.shape[axis]
            if idx.typ in (IndexType.INTEGER, IndexType.ARRAY):
                trivial = False
                index = as_index_array(idx.index)
                if size == 0:
                    raise IndexError(f"index is out of bounds for axis {axis} with size 0")
                starts.append(index)
                sizes.append(1)
                squeeze_axes.append(axis)
                continue
            if idx.index != slice(None):
                trivial = False
            start, stop, step = idx.index.indices(size)
            if step < 0:
                new_start = stop + 1 + abs(start - stop - 1) % abs(step)
                starts.append(new_start)
                sizes.append(max(0, start + 1 - new_start))
                rev_axes.append(axis)
            else:
                starts.append(start)
                sizes.append(max(0, stop - start))
        if len(starts) > 1:
            # dynamic_slice takes start indices of one dtype.
            dtype = index_dtype(self.shape)
            starts = [_lax.convert_element_type(i, dtype) for i in starts]
        return DynamicSlice(starts, sizes, rev_axes, squeeze_axes, newaxis_dims, trivial)


def index_dtype(shape: Sequence[int]) -> np.dtype:
    """A signed integer dtype that holds every index into `shape` (int32 unless too big)."""
    for d in shape:
        if is_symbolic_dim(d):  # as JAX's: a symbolic dimension may be any size
            return dtypes.canonicalize_dtype(np.int64)
        if d > np.iinfo(np.int32).max:
            return np.dtype(np.int64)
    return np.dtype(np.int32)
