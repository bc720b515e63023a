"""`bcoo_gather` (lax's gather of a BCOO array, in-bounds mode only: a vmapped dynamic slice
per start index) and BCOO's indexing (`__getitem__`, `__iter__`), through `sparsify`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import ShapedArray, abstract_eval_rules
from lamina_core.sparse._bcoo import BCOO, bcoo_transpose
from lamina_core.sparse._bcoo_layout import validate_bcoo
from lamina_core.sparse._bcoo_layout_update import bcoo_update_layout
from lamina_core.sparse._bcoo_shape import bcoo_dynamic_slice, bcoo_reshape, bcoo_squeeze
from lamina_core.sparse._transform import _standard_sparse_rule, sparse_rules_bcoo
from lamina_core.sparse._transform_tracer import sparsify
from lamina_core.transforms import vmap

Array = Any


def bcoo_gather(
    operand: BCOO,
    start_indices: Array,
    dimension_numbers: Any,
    slice_sizes: Sequence[int],
    *,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    mode: Any = None,
    fill_value: Any = None,
) -> BCOO:
    """BCOO version of `lax.gather` (mode PROMISE_IN_BOUNDS only, as JAX's)."""
    validate_bcoo(operand.data, operand.indices, operand.shape)
    if mode is None:
        mode = lax.GatherScatterMode.PROMISE_IN_BOUNDS
    if lax.GatherScatterMode.from_any(mode) != lax.GatherScatterMode.PROMISE_IN_BOUNDS:
        raise NotImplementedError(f"bcoo_gather: mode={mode} not yet supported.")
    start_indices = jnp.asarray(start_indices)
    out_aval: Any = abstract_eval_rules[lax.gather_p](
        ShapedArray(operand.shape, operand.dtype),
        ShapedArray(start_indices.shape, start_indices.dtype),
        dimension_numbers=dimension_numbers,
        slice_sizes=tuple(slice_sizes),
        unique_indices=unique_indices,
        indices_are_sorted=indices_are_sorted,
        mode=lax.GatherScatterMode.from_any(mode),
        fill_value=fill_value,
    )
    offset_dims = tuple(dimension_numbers.offset_dims)
    collapsed = tuple(dimension_numbers.collapsed_slice_dims)
    zero = np.array(0, dtype=start_indices.dtype)
    full_starts: list[Any] = [zero] * operand.ndim
    in_axes: list[int | None] = [None] * operand.ndim
    full_sizes = list(operand.shape)
    for i, j in enumerate(dimension_numbers.start_index_map):
        full_starts[j] = start_indices[..., i].ravel()
        full_sizes[j] = slice_sizes[j]
        in_axes[j] = 0

    def slice_func(indices: Sequence[Any]) -> BCOO:
        slc = bcoo_dynamic_slice(operand, indices, slice_sizes=full_sizes)
        return bcoo_squeeze(slc, dimensions=collapsed)

    result = vmap(slice_func, in_axes=(in_axes,))(full_starts)
    result = bcoo_reshape(
        result,
        new_sizes=(*start_indices.shape[:-1], *result.shape[1:]),
        dimensions=tuple(range(result.ndim)),
    )
    if result.shape:
        batch_dims = tuple(d for d in range(len(out_aval.shape)) if d not in offset_dims)
        permutation = np.zeros(result.ndim, dtype=int)
        permutation[np.array(batch_dims + offset_dims)] = np.arange(result.ndim)
        if set(permutation[: len(batch_dims)]) != set(range(len(batch_dims))):
            result = bcoo_update_layout(result, n_batch=0)
        result = bcoo_transpose(result, permutation=tuple(int(p) for p in permutation))
    return result.reshape(out_aval.shape).astype(out_aval.dtype)


def _gather_sparse_rule(spenv: Any, *args: Any, **params: Any) -> Any:
    return _standard_sparse_rule(lax.gather_p, bcoo_gather)(spenv, *args, **params)


sparse_rules_bcoo[lax.gather_p] = _gather_sparse_rule


def _bcoo_getitem(arr: BCOO, idx: Any) -> Any:
    result = sparsify(lambda x: x[idx])(arr)
    if not isinstance(result, BCOO) and np.size(result) == 0:
        result = BCOO.fromdense(result)
    return result


def _sparse_iter(arr: BCOO) -> Iterator[Any]:
    return iter(arr[i] for i in range(arr.shape[0]))


# Installed after the class, as JAX installs them (they need `sparsify`).
setattr(BCOO, "__getitem__", _bcoo_getitem)  # noqa: B010
setattr(BCOO, "__iter__", _sparse_iter)  # noqa: B010

__all__ = ["bcoo_gather"]
