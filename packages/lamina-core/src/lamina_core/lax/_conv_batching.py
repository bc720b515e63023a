"""Batching rule of `conv_general_dilated`, as JAX's: the mapped axis is folded into one of
the convolution's own dimensions and split out of the result again.

A mapped lhs alone joins the lhs batch (with batch groups, inside each group, so that the
groups stay outermost). A mapped rhs alone joins the kernel's output features (with groups,
again inside each group). Both mapped: the kernels are stacked along the output features and
the inputs along the features as that many feature groups (or along the batch, as batch
groups, when the convolution already has batch groups), so each example meets its own kernel.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from typing_extensions import Unpack

from lamina_core.interpreters import AxisData, BatchDim, batching_rules
from lamina_core.ir import ShapedArray
from lamina_core.lax._conv import (
    ConvParams,
    _check_shapes,
    conv_general_dilated,
    conv_general_dilated_p,
    reshape_axis_into,
    reshape_axis_out_of,
)
from lamina_core.lax._shape import shape_of
from lamina_core.lax._structural import full
from lamina_core.trace import typeof


@batching_rules.register(conv_general_dilated_p)
def _conv_general_dilated_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], **params: Unpack[ConvParams]
) -> tuple[Any, BatchDim]:
    (lhs, rhs), (lbd, rbd) = vals, dims
    if lbd is None and rbd is None:
        return conv_general_dilated_p.bind(lhs, rhs, **params), None
    feature_group_count = params["feature_group_count"]
    batch_group_count = params["batch_group_count"]
    preferred_element_type = params["preferred_element_type"]
    assert batch_group_count == 1 or feature_group_count == 1
    lhs_shape, rhs_shape = shape_of(lhs), shape_of(rhs)
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    if (lbd is not None and lhs_shape[lbd] == 0) or (rbd is not None and rhs_shape[rbd] == 0):
        # Folding an empty axis into another dimension would empty that one too.
        lhs_dtype = typeof(lhs).dtype  # type: ignore[attr-defined]  # array values
        per_lhs = [d for i, d in enumerate(lhs_shape) if i != lbd]
        per_rhs = [d for i, d in enumerate(rhs_shape) if i != rbd]
        shape = _check_shapes(
            ShapedArray(tuple(per_lhs), lhs_dtype),
            ShapedArray(tuple(per_rhs), typeof(rhs).dtype),  # type: ignore[attr-defined]
            params,
        )
        dtype = lhs_dtype if preferred_element_type is None else preferred_element_type
        return full((0, *shape), 0, dtype=dtype), 0

    def conv(x: Any, y: Any, fgc: int, bgc: int) -> Any:
        return conv_general_dilated(
            x,
            y,
            params["window_strides"],
            params["padding"],
            params["lhs_dilation"],
            params["rhs_dilation"],
            params["dimension_numbers"],
            feature_group_count=fgc,
            batch_group_count=bgc,
            precision=params["precision"],
            preferred_element_type=preferred_element_type,
        )

    if lbd is not None and rbd is not None:
        size = lhs_shape[lbd]
        assert size == rhs_shape[rbd]
        if batch_group_count > 1:
            new_lhs = reshape_axis_into(lbd, lhs_spec[0], lhs)
            fgc, bgc = feature_group_count, batch_group_count * size
        else:
            new_lhs = reshape_axis_into(lbd, lhs_spec[1], lhs)
            fgc, bgc = feature_group_count * size, batch_group_count
        new_rhs = reshape_axis_into(rbd, rhs_spec[0], rhs)
        out = conv(new_lhs, new_rhs, fgc, bgc)
        return reshape_axis_out_of(out_spec[1], size, out), out_spec[1]

    if lbd is not None:
        size = lhs_shape[lbd]
        if batch_group_count == 1:
            new_lhs = reshape_axis_into(lbd, lhs_spec[0], lhs)
        else:
            # Split the batch into (groups, members), put the mapped axis inside the groups,
            # and merge back.
            new_lhs = reshape_axis_out_of(
                lhs_spec[0] + int(lbd <= lhs_spec[0]), batch_group_count, lhs
            )
            new_lhs = reshape_axis_into(lbd + int(lhs_spec[0] < lbd), lhs_spec[0] + 1, new_lhs)
            new_lhs = reshape_axis_into(lhs_spec[0], lhs_spec[0], new_lhs)
        out = conv(new_lhs, rhs, feature_group_count, batch_group_count)
        return reshape_axis_out_of(out_spec[0], size, out), out_spec[0]

    assert rbd is not None
    size = rhs_shape[rbd]
    if feature_group_count == 1 and batch_group_count == 1:
        new_rhs = reshape_axis_into(rbd, rhs_spec[0], rhs)
        out = conv(lhs, new_rhs, feature_group_count, batch_group_count)
        return reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    # The groups must stay outermost in the kernel's output features: the mapped axis goes
    # inside them, and comes out of the result the same way.
    groups = max(feature_group_count, batch_group_count)
    new_rhs = reshape_axis_out_of(rhs_spec[0] + int(rbd <= rhs_spec[0]), groups, rhs)
    new_rhs = reshape_axis_into(rbd + int(rhs_spec[0] < rbd), rhs_spec[0] + 1, new_rhs)
    new_rhs = reshape_axis_into(rhs_spec[0], rhs_spec[0], new_rhs)
    out = conv(lhs, new_rhs, feature_group_count, batch_group_count)
    out = reshape_axis_out_of(out_spec[1], groups, out)
    out = reshape_axis_out_of(out_spec[1] + 1, size, out)
    out = reshape_axis_into(out_spec[1], out_spec[1] + 1, out)
    return out, out_spec[1]


__all__: list[str] = []
