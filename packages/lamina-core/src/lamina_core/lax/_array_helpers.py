"""The few `jax.numpy` behaviours lax's rules and drivers use, on lax's operations.

JAX's lax calls `jnp` in some rules and drivers (`take` in the `ppermute` batching rule,
`where` in `qdwh`, `multiply` when a collective scales a constant, `x.at[idx].set(y)` in the
`svd` jvp rule); `numpy` sits above `lax` here, so these stage what `lamina_core.numpy` stages
for the operands those callers pass: NumPy's promotion and broadcasting, the same primitives
in the same order, and the nested `jit`s named `_where` and `_take` with the same bodies, so
the jaxprs print alike. `where_body` is the body of `lamina_core.numpy`'s `_where` too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lamina_core.ir import MESHES_SEEN, broadcast_sharding, dtypes
from lamina_core.lax._barrier import broadcast_shapes
from lamina_core.lax._elementwise import add, bitwise_and, div, lt, mul, ne
from lamina_core.lax._gather_scatter import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
    gather,
)
from lamina_core.lax._selection import select
from lamina_core.lax._shape import asarray, expand_dims, shape_of
from lamina_core.lax._structural import (
    _convert_element_type,
    broadcast_in_dim,
    convert_element_type_p,
)
from lamina_core.trace import typeof
from lamina_core.transforms import Jitted


def dtype_of(x: Any) -> np.dtype:
    dtype: np.dtype = typeof(x).dtype  # type: ignore[attr-defined]  # array avals
    return dtype


def convert(x: Any, dtype: np.dtype, weak_type: bool) -> Any:
    """`x` in `dtype` and weak type, as `jnp`'s promotion converts it: a non-scalar NumPy
    constant gets a staged conversion unless it is already strongly typed `dtype`."""
    if isinstance(x, np.ndarray) and x.ndim > 0:
        if dtype_of(x) == dtype and not weak_type:
            return x
        return convert_element_type_p.bind(x, new_dtype=dtype, weak_type=weak_type, sharding=None)
    return _convert_element_type(x, dtype, weak_type)


def promote_dtypes(*args: Any) -> list[Any]:
    """The arguments converted to their common dtype (weak only if all of them are)."""
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    return [convert(x, dtype, weak) for x in args]


def promote_dtypes_inexact(*args: Any) -> list[Any]:
    """As `promote_dtypes`, integers and bools going to the default float dtype."""
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    if not dtypes.issubdtype(dtype, np.inexact):
        dtype = dtypes.canonicalize_dtype(dtypes.float64)
    return [convert(x, dtype, weak) for x in args]


def multiply(x: Any, y: Any) -> Any:
    """`jnp.multiply(x, y)` for operands of one shape or a scalar one: promoted, then
    multiplied (bools and-ed)."""
    x, y = promote_dtypes(x, y)
    return bitwise_and(x, y) if dtype_of(x) == np.bool_ else mul(x, y)


def true_divide(x: Any, y: Any) -> Any:
    """`jnp.true_divide(x, y)` for operands of one shape or a scalar one."""
    return div(*promote_dtypes_inexact(x, y))


def broadcast_arrays(*args: Any) -> list[Any]:
    """The arguments broadcast NumPy-style to their common shape (and, over Explicit mesh
    axes, to their common sharding)."""
    shapes = [shape_of(x) for x in args]
    if all(s == shapes[0] for s in shapes):
        return list(args)
    shape = broadcast_shapes(*shapes)
    sharding = broadcast_sharding([typeof(x) for x in args]) if MESHES_SEEN[0] else None
    out = []
    for x, current in zip(args, shapes, strict=True):
        same_sharding = sharding is None or getattr(typeof(x), "sharding", None) == sharding
        if current == shape and same_sharding:
            out.append(x)
            continue
        lead = len(shape) - len(current)
        out.append(broadcast_in_dim(x, shape, range(lead, len(shape)), out_sharding=sharding))
    return out


def broadcast_to(x: Any, shape: tuple[int, ...]) -> Any:
    """`jnp.broadcast_to(x, shape)` for a `shape` that `x` broadcasts to."""
    current = shape_of(x)
    if current == shape:
        return asarray(x)
    lead = len(shape) - len(current)
    return broadcast_in_dim(x, shape, range(lead, len(shape)))


def static_index(i: int, shape: Sequence[int]) -> Any:
    """The scatter (or gather) index `jnp` makes of one static non-negative integer (or slice
    start) into an array of `shape`: a one-element vector."""
    dtype = np.dtype(np.int64 if any(d > np.iinfo(np.int32).max for d in shape) else np.int32)
    return expand_dims(_convert_element_type(i, dtype), (0,))


def wrap_negative(i: Any, size: int) -> Any:
    """`i < 0 ? i + size : i` for a signed integer array `i`, as `jnp` indexing stages it."""
    dtype = dtype_of(i)
    return select(lt(i, np.array(0, dtype)), add(i, np.array(size, dtype)), i)


def indexed_update(
    x: Any,
    indices: Any,
    y: Any,
    dnums: ScatterDimensionNumbers,
    slice_shape: tuple[int, ...],
    scatter_op: Callable[..., Any],
    *,
    static: bool,
) -> Any:
    """`x.at[idx].set(y)` (or `.add(y)`, per `scatter_op`) once `idx` is resolved into the
    scatter `indices` and `dnums` of the selection `x[idx]` of `slice_shape` (by `static`
    integers and slices, or not), as `jnp` stages it: `y` promoted with `x` and broadcast to
    the selection, the result in `x`'s dtype and weak type; an empty selection changes
    nothing."""
    dtype, weak = dtype_of(x), dtypes.is_weakly_typed(x)
    if 0 in slice_shape:
        return x
    x, y = promote_dtypes(x, y)
    y = broadcast_to(y, slice_shape)
    out = scatter_op(x, indices, y, dnums, indices_are_sorted=static, unique_indices=static)
    return _convert_element_type(out, dtype, weak)


def where_body(condition: Any, x: Any, y: Any) -> Any:
    """`jnp.where(condition, x, y)` on traced operands: a non-boolean `condition` tested for
    nonzero, `x` and `y` promoted, all three broadcast (but a scalar `condition`), selected."""
    if dtype_of(condition) != np.bool_:
        zero = _convert_element_type(0, dtype_of(condition), dtypes.is_weakly_typed(condition))
        condition = ne(condition, zero)
    x, y = promote_dtypes(x, y)
    if not shape_of(condition):
        x, y = broadcast_arrays(x, y)
    else:
        condition, x, y = broadcast_arrays(condition, x, y)
    if 0 in shape_of(x):
        return x
    return select(condition, x, y)


where_body.__name__ = where_body.__qualname__ = "_where"
# A `jit` of its own, not numpy's: JAX traces the `jnp` calls of `qdwh` under
# `default_matmul_precision` and those of the `ppermute` batching rule inside the vmap, so
# their sub-jaxprs are never the ones a user's `jnp.where` stages and never print shared.
where = Jitted(where_body)
"""`jnp.where(condition, x, y)` for lax's drivers: the `jit` named `_where`."""


def _take_body(a: Any, indices: Any, axis: int) -> Any:
    size = np.array(shape_of(a)[axis], dtype_of(indices))
    # Negative indices wrap, as gathers take none.
    indices = where(lt(indices, np.array(0, dtype_of(indices))), add(indices, size), indices)
    rank = len(shape_of(a))
    index_rank = len(shape_of(indices))
    dnums = GatherDimensionNumbers(
        offset_dims=(*range(axis), *range(axis + index_rank, rank + index_rank - 1)),
        collapsed_slice_dims=(axis,),
        start_index_map=(axis,),
    )
    slice_sizes = tuple(1 if d == axis else n for d, n in enumerate(shape_of(a)))
    starts = expand_dims(indices, (index_rank,))
    return gather(a, starts, dnums, slice_sizes, mode=GatherScatterMode.FILL_OR_DROP)


_take_body.__name__ = _take_body.__qualname__ = "_take"
take = Jitted(_take_body, static_argnames=("axis",))
"""`jnp.take(a, indices, axis=axis)` for a non-empty signed integer array `indices` and a
non-empty axis: the `jit` named `_take`."""


__all__ = [
    "broadcast_arrays",
    "broadcast_to",
    "convert",
    "indexed_update",
    "multiply",
    "promote_dtypes",
    "promote_dtypes_inexact",
    "static_index",
    "take",
    "true_divide",
    "where",
    "where_body",
    "wrap_negative",
]
