"""Differentiation rules of `sort` and `top_k`, as JAX's: the primal sort carries an iota
along, and every tangent is gathered by that permutation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters import Zero, jvp_rules, zero_of
from lamina_core.lax import _gather_scatter as gs
from lamina_core.lax import _sorting as so
from lamina_core.lax._ad_common import aval_of
from lamina_core.lax._shape import broadcasted_iota, expand_dims, reshape

_UINT32_MAX = np.iinfo(np.uint32).max


def _index_dtype(shape: tuple[int, ...]) -> np.dtype:
    # The smallest unsigned type holding every index, as JAX picks it.
    return np.dtype(np.uint64 if any(d > _UINT32_MAX for d in shape) else np.uint32)


def _sort_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, dimension: int, is_stable: bool,
    num_keys: int,
) -> tuple[Any, Any]:  # fmt: skip
    shape = aval_of(primals[0]).shape
    iota = broadcasted_iota(_index_dtype(shape), shape, dimension)
    outs = so.sort_p.bind(
        *primals, iota, dimension=dimension, is_stable=is_stable, num_keys=num_keys
    )
    # NumPy ints, as JAX passes them: they print as such in the gather's params.
    batch_dims: Any = tuple(np.delete(np.arange(len(shape), dtype=np.int64), dimension))
    dnums = gs.GatherDimensionNumbers(
        offset_dims=(),
        collapsed_slice_dims=(dimension,),
        start_index_map=(dimension,),
        operand_batching_dims=batch_dims,
        start_indices_batching_dims=batch_dims,
    )
    idx = expand_dims(outs[-1], (len(shape),))
    tangents_out = [
        t
        if type(t) is Zero
        else gs.gather(
            t, idx, dnums, (1,) * len(shape), mode=gs.GatherScatterMode.PROMISE_IN_BOUNDS
        )
        for t in tangents
    ]
    return list(outs[:-1]), tangents_out


def _top_k_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, k: int, axis: int) -> Any:
    (x,), (t,) = primals, tangents
    values, indices = so.top_k(x, k, axis=axis)
    if type(t) is Zero:
        return [values, indices], [zero_of(values), zero_of(indices)]
    idx_shape = aval_of(indices).shape
    rank = len(idx_shape)
    others = tuple(i for i in range(rank) if i != axis)
    dnums = gs.GatherDimensionNumbers(
        offset_dims=(),
        collapsed_slice_dims=(axis,),
        operand_batching_dims=others,
        start_indices_batching_dims=others,
        start_index_map=(axis,),
    )
    gathered = gs.gather(t, reshape(indices, (*idx_shape, 1)), dnums, (1,) * rank)
    return [values, indices], [gathered, zero_of(indices)]


jvp_rules.set(so.sort_p, _sort_jvp)
jvp_rules.set(so.top_k_p, _top_k_jvp)
