"""`approx_max_k` and `approx_min_k` (the `approx_top_k` primitive), as `jax.lax`'s.

Off TPU, XLA computes them exactly (JAX lowers them as the `ApproxTopK` custom call marked as a
fallback, which XLA rewrites to a sort), so the reference is an exact top k: the k largest (or
smallest) values along the reduction dimension, ordered, ties by lower index first, and their
indices. Only `aggregate_to_topk=True` is supported: the partial reduction's output size is
TPU-specific.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core.interpreters import AxisData, Zero, batching_rules, jvp_rules, zero_of
from lamina_core.ir import AbstractValue, Primitive, ShapedArray, abstract_eval_rules, impl_rules
from lamina_core.lax._array_helpers import wrap_negative
from lamina_core.lax._checks import array_aval, kind_of
from lamina_core.lax._gather_scatter import GatherDimensionNumbers, gather
from lamina_core.lax._shape import reshape, shape_of
from lamina_core.transforms import Jitted

approx_top_k_p: Final = Primitive("approx_top_k", multiple_results=True)


@abstract_eval_rules.register(approx_top_k_p)
def _approx_top_k_abstract_eval(
    operand: AbstractValue, *, k: int, reduction_dimension: int, aggregate_to_topk: bool, **_: Any
) -> list[ShapedArray]:
    aval = array_aval("approx_top_k", operand)
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if aval.ndim == 0:
        raise TypeError(f"approx_top_k operand must have >= 1 dimension, got {aval.shape}")
    dims = list(aval.shape)
    if dims[reduction_dimension] < k:
        raise ValueError(
            f"k must be smaller than the size of reduction_dim {dims[reduction_dimension]}, got {k}"
        )
    if kind_of(aval.dtype) != "f":
        raise ValueError("operand must be a floating type")
    if not aggregate_to_topk:
        raise NotImplementedError(
            "approx_top_k with aggregate_to_topk=False: its output size is TPU-specific"
        )
    dims[reduction_dimension] = k
    return [ShapedArray(tuple(dims), aval.dtype, aval.weak_type),
            ShapedArray(tuple(dims), np.dtype(np.int32), False)]  # fmt: skip


@impl_rules.register(approx_top_k_p)
def _approx_top_k_reference(
    operand: np.ndarray, *, k: int, reduction_dimension: int, is_max_k: bool, **_: Any
) -> list[np.ndarray]:
    x = np.moveaxis(np.asarray(operand), reduction_dimension, -1)
    # A stable sort of the negated values keeps ties in index order, as XLA's sort does.
    keys = -x.astype(np.float64) if is_max_k else x.astype(np.float64)
    order = np.argsort(keys, axis=-1, kind="stable")[..., :k]
    values = np.take_along_axis(x, order, axis=-1)
    back = (np.moveaxis(values, -1, reduction_dimension),
            np.moveaxis(order.astype(np.int32), -1, reduction_dimension))  # fmt: skip
    return list(back)


def _take_along_axis_body(arr: Any, indices: Any, axis: int) -> Any:
    # What `jnp.take_along_axis(arr, indices, axis)` stages for the rule's operands (equal
    # shapes but at `axis`, int32 indices, the default fill mode), as JAX's rule calls it.
    shape, idx_shape = shape_of(arr), shape_of(indices)
    wrapped = wrap_negative(indices, shape[axis])
    kept = [i for i, d in enumerate(idx_shape) if i == axis or d != 1]
    gather_indices = reshape(wrapped, (*(idx_shape[i] for i in kept), 1))
    # `arr` and `indices` pair up along every other axis: a batching axis of the gather, but
    # for one of size 1, which is taken whole.
    batched = [i for i in kept if i != axis]
    dnums = GatherDimensionNumbers(
        offset_dims=tuple(i for i in range(len(shape)) if i not in kept),
        collapsed_slice_dims=(axis,),
        start_index_map=(axis,),
        operand_batching_dims=tuple(batched),
        start_indices_batching_dims=tuple(kept.index(i) for i in batched),
    )
    slice_sizes = tuple(
        1 if i == axis or i not in kept else min(shape[i], 1) for i in range(len(shape))
    )
    return gather(arr, gather_indices, dnums, slice_sizes, mode="fill")


_take_along_axis_body.__name__ = _take_along_axis_body.__qualname__ = "take_along_axis"
_take_along_axis: Final = Jitted(_take_along_axis_body, static_argnames=("axis",))


def _approx_top_k_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], **params: Any
) -> tuple[list[Any], list[Any]]:
    (operand,), (tangent,) = primals, tangents
    values, indices = approx_top_k_p.bind(operand, **params)
    if type(tangent) is Zero:
        return [values, indices], [zero_of(values), zero_of(indices)]
    axis = params["reduction_dimension"]
    axis = axis + len(indices.shape) if axis < 0 else axis
    return [values, indices], [_take_along_axis(tangent, indices, axis=axis), zero_of(indices)]


def _approx_top_k_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[Any], *, reduction_dimension: int,
    **params: Any,
) -> tuple[list[Any], list[Any]]:  # fmt: skip
    (operand,), (bd,) = vals, dims
    unbatched = [d for d in range(len(operand.shape)) if d != bd]
    outs = approx_top_k_p.bind(
        operand, reduction_dimension=unbatched[reduction_dimension], **params
    )
    return list(outs), [bd, bd]


jvp_rules.set(approx_top_k_p, _approx_top_k_jvp)
batching_rules.set(approx_top_k_p, _approx_top_k_batch)


def _approx_top_k(
    operand: Any, k: int, reduction_dimension: int, recall_target: float, is_max_k: bool,
    reduction_input_size_override: int, aggregate_to_topk: bool,
) -> tuple[Any, Any]:  # fmt: skip
    values, indices = approx_top_k_p.bind(
        operand,
        k=k,
        reduction_dimension=reduction_dimension,
        recall_target=recall_target,
        is_max_k=is_max_k,
        reduction_input_size_override=reduction_input_size_override,
        aggregate_to_topk=aggregate_to_topk,
    )
    return [values, indices]  # type: ignore[return-value]  # a list, as JAX returns


def approx_max_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
) -> tuple[Any, Any]:
    """The `k` largest values along `reduction_dimension`, descending, and their indices."""
    return _approx_top_k(operand, k, reduction_dimension, recall_target, True,
                         reduction_input_size_override, aggregate_to_topk)  # fmt: skip


def approx_min_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
) -> tuple[Any, Any]:
    """The `k` smallest values along `reduction_dimension`, ascending, and their indices."""
    return _approx_top_k(operand, k, reduction_dimension, recall_target, False,
                         reduction_input_size_override, aggregate_to_topk)  # fmt: skip


__all__ = ["approx_max_k", "approx_min_k", "approx_top_k_p"]
