"""`optimization_barrier` and small shape utilities of `jax.lax` (`broadcast_shapes`,
`broadcast_to_rank`, `dtype`, `shape_as_value`, `index_take`), as JAX's.

`optimization_barrier` is the identity on a pytree of arrays that the compiler may not move
computation across (`stablehlo.optimization_barrier`); its tangents and cotangents pass through
a barrier of their own, as in JAX.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core.interpreters import (
    AxisData,
    batching_rules,
    instantiate_zeros,
    jvp_rules,
    transpose_rules,
)
from lamina_core.ir import (
    AbstractValue,
    Primitive,
    abstract_eval_rules,
    impl_rules,
    is_symbolic_dim,
)
from lamina_core.ir import dtypes as _dtypes
from lamina_core.lax._gather_scatter import GatherDimensionNumbers, gather
from lamina_core.lax._joining import concatenate
from lamina_core.lax._shape import asarray, expand_dims, shape_of
from lamina_core.lax._structural import broadcast
from lamina_core.trace import typeof
from lamina_core.tree import tree_util

optimization_barrier_p: Final = Primitive("optimization_barrier", multiple_results=True)


@abstract_eval_rules.register(optimization_barrier_p)
def _barrier_abstract_eval(*avals: AbstractValue) -> list[AbstractValue]:
    return list(avals)


@impl_rules.register(optimization_barrier_p)
def _barrier_impl(*xs: np.ndarray) -> list[np.ndarray]:
    return list(xs)


def optimization_barrier(operand: Any, /) -> Any:
    """`operand` (a pytree of arrays) unchanged; the compiler keeps every computation that
    uses an output after all of the inputs are computed."""
    leaves, tree = tree_util.tree_flatten(operand)
    return tree_util.tree_unflatten(tree, optimization_barrier_p.bind(*leaves))


def _barrier_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    outs = optimization_barrier_p.bind(*primals)
    return outs, optimization_barrier_p.bind(*[instantiate_zeros(t) for t in tangents])


def _barrier_transpose(cts: Sequence[Any], *args: Any) -> list[Any]:
    return list(optimization_barrier_p.bind(*[instantiate_zeros(c) for c in cts]))


def _barrier_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[Any]
) -> tuple[list[Any], list[Any]]:
    return list(optimization_barrier_p.bind(*vals)), list(dims)


jvp_rules.set(optimization_barrier_p, _barrier_jvp)
transpose_rules.set(optimization_barrier_p, _barrier_transpose)
batching_rules.set(optimization_barrier_p, _barrier_batch)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape NumPy broadcasting gives arrays of `shapes`."""
    if not shapes:
        raise TypeError("broadcast_shapes() requires at least one argument")
    canonical = [tuple(d if is_symbolic_dim(d) else int(d) for d in s) for s in shapes]
    rank = max(len(s) for s in canonical)
    padded = [(1,) * (rank - len(s)) + s for s in canonical]
    out = []
    for sizes in zip(*padded, strict=True):
        big = {d for d in sizes if d != 1}
        if len(big) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={canonical}")
        out.append(big.pop() if big else 1)
    return tuple(out)


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """`x` with leading axes of size 1 added, to rank `rank`."""
    ndim = len(np.shape(x)) if not hasattr(x, "ndim") else x.ndim
    if ndim == rank:
        return asarray(x)
    return broadcast(x, (1,) * (rank - ndim))


def dtype(x: Any) -> np.dtype[Any]:
    """The canonical dtype of `x` (an array, scalar or dtype-like), as JAX's `lax.dtype`:
    64-bit types are narrowed unless x64 is on."""
    dtype_like = isinstance(x, (type, np.dtype, str))
    found = np.dtype(x) if dtype_like else typeof(x).dtype  # type: ignore[attr-defined]  # arrays
    return _dtypes.canonicalize_dtype(found)


def shape_as_value(shape: Sequence[int]) -> np.ndarray:
    """A constant shape as an int32 array (an empty shape as an empty array)."""
    return np.asarray(tuple(shape), dtype=np.int32).reshape(len(shape))


def index_take(src: Any, idxs: Sequence[Any], axes: Sequence[int]) -> Any:
    """`src` indexed along `axes` (ascending) by the equally long integer vectors `idxs`, one
    per axis, in one gather, as JAX's: the result's first axis runs over the indices, then
    come `src`'s other axes in order; an index wraps around its axis (modulo its size)."""
    if len(idxs) != len(axes):
        raise ValueError(f"index_take: {len(idxs)} index arrays for {len(axes)} axes")
    indices = concatenate([expand_dims(i, (1,)) for i in idxs], 1)
    shape = shape_of(src)
    lead = tuple(range(len(shape_of(indices)) - 1))
    sizes = expand_dims(np.array([shape[ax] for ax in axes]), lead)
    indices = indices % sizes  # `jnp.remainder` on arrays, NumPy's on host values: the same
    slice_sizes = tuple(1 if d in axes else n for d, n in enumerate(shape))
    dnums = GatherDimensionNumbers(
        offset_dims=tuple(range(1, len(shape) - len(axes) + 1)),
        collapsed_slice_dims=tuple(axes),
        start_index_map=tuple(axes),
    )
    return gather(src, indices, dnums, slice_sizes)


__all__ = [
    "broadcast_shapes",
    "broadcast_to_rank",
    "dtype",
    "index_take",
    "optimization_barrier",
    "optimization_barrier_p",
    "shape_as_value",
]
