"""`bcoo_conv_general_dilated`: `lax.conv_general_dilated` of BCOO (or dense) operands, for
JAX's supported case only: 1-D, unit strides and dilations, no groups, leading dims (1, 1)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.sparse._bcoo import BCOO
from lamina_core.sparse._bcoo_layout_update import bcoo_update_layout
from lamina_core.trace import ShapeDtypeStruct
from lamina_core.transforms import make_jaxpr

Array = Any


def bcoo_conv_general_dilated(
    lhs: Any,
    rhs: Any,
    *,
    window_strides: Any,
    padding: Any,
    lhs_dilation: Any = None,
    rhs_dilation: Any = None,
    dimension_numbers: Any = None,
    feature_group_count: int = 1,
    batch_group_count: int = 1,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> BCOO:
    """A BCOO version of `lax.conv_general_dilated` (see the module for the cases it has)."""
    func = functools.partial(
        lax.conv_general_dilated,
        window_strides=window_strides,
        padding=padding,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        dimension_numbers=dimension_numbers,
        feature_group_count=feature_group_count,
        batch_group_count=batch_group_count,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
    jaxpr = make_jaxpr(func)(
        ShapeDtypeStruct(lhs.shape, lhs.dtype), ShapeDtypeStruct(rhs.shape, rhs.dtype)
    )
    assert len(jaxpr.eqns) == 1
    params = jaxpr.eqns[0].params
    if params["lhs_dilation"] != (1,) * (lhs.ndim - 2):
        raise NotImplementedError("bcoo convolution with lhs_dilation.")
    if params["rhs_dilation"] != (1,) * (rhs.ndim - 2):
        raise NotImplementedError("bcoo convolution with lhs_dilation.")
    if params["window_strides"] != (1,) * (lhs.ndim - 2):
        raise NotImplementedError("bcoo convolution with non-unit window_strides.")
    if params["batch_group_count"] != params["feature_group_count"] != 1:
        raise NotImplementedError("bcoo convolution with non-unit group counts.")
    if lhs.shape[:2] != rhs.shape[:2] != (1, 1):
        raise NotImplementedError("bcoo convolution with leading dimensions other than (1, 1)")
    index_dtype = (
        lhs.indices.dtype
        if hasattr(lhs, "indices")
        else rhs.indices.dtype
        if hasattr(rhs, "indices")
        else "int32"
    )
    (pad,) = params["padding"]
    return _bcoo_conv_1d(
        _convert_to_1d_for_conv(lhs, index_dtype),
        _convert_to_1d_for_conv(rhs, index_dtype),
        padding=pad,
    )


def _convert_to_1d_for_conv(mat: Any, index_dtype: Any) -> BCOO:
    if isinstance(mat, BCOO):
        mat = bcoo_update_layout(mat, n_batch=2, n_dense=0)
        data = lax.squeeze(mat.data, (0, 1))
        indices = lax.squeeze(mat.indices, (0, 1))
        data = jnp.where(lax.squeeze(indices, (1,)) < mat.shape[-1], data, 0)
    elif hasattr(mat, "shape") and hasattr(mat, "dtype"):
        data = lax.squeeze(mat, (0, 1))
        indices = lax.broadcasted_iota(index_dtype, (len(data), 1), 0)
    else:
        raise TypeError(f"bcoo_conv_general_dilated: input of type {type(mat)} not recognized.")
    return BCOO((data, indices), shape=mat.shape[2:])


def _bcoo_conv_1d(lhs: BCOO, rhs: BCOO, padding: Sequence[int]) -> BCOO:
    assert lhs.ndim == lhs.n_sparse == rhs.ndim == rhs.n_sparse == 1
    assert lhs.dtype == rhs.dtype
    pad = tuple(int(p) for p in padding)
    assert len(pad) == 2
    new_data = (lhs.data[:, None] * rhs.data[None, :]).ravel()
    offset = pad[0] - rhs.indices
    new_indices = (lhs.indices[:, None] + offset[None, :]).ravel()
    mask = new_indices < 0
    new_indices = jnp.where(mask, 0, new_indices)
    new_data = jnp.where(mask, 0, new_data)
    dimsize = max(0, lhs.shape[0] + pad[0] + pad[1] - rhs.shape[0] + 1)
    new_data = lax.expand_dims(new_data, (0, 1))
    new_indices = lax.expand_dims(new_indices, (0, 1, 3))
    return BCOO((new_data, new_indices), shape=(1, 1, dimsize))


__all__ = ["bcoo_conv_general_dilated"]
