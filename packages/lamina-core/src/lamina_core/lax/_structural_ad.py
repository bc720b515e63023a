"""Differentiation rules of `convert_element_type` and `broadcast_in_dim`, as JAX's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters import (
    Zero,
    defjvp2,
    is_undefined,
    jvp_rules,
    linear_jvp,
    transpose_rules,
    zero_of,
)
from lamina_core.ir import ShapedArray, aval_mesh, dtypes
from lamina_core.lax._reductions import reduce_sum
from lamina_core.lax._shape import expand_dims
from lamina_core.lax._structural import (
    broadcast_in_dim_p,
    convert_element_type_p,
)
from lamina_core.trace import typeof


def _convert_element_type_jvp(
    g: Any, ans: Any, x: Any, *, new_dtype: Any, weak_type: bool, sharding: Any
) -> Any:
    tangent_dtype = dtypes.float0 if np.dtype(new_dtype).kind in "biu" else new_dtype
    if tangent_dtype == dtypes.float0:
        return zero_of(ans)
    return convert_element_type_p.bind(
        g, new_dtype=tangent_dtype, weak_type=weak_type, sharding=sharding
    )


def _convert_element_type_transpose(
    ct: Any, x: Any, *, new_dtype: Any, weak_type: bool, sharding: Any
) -> Sequence[Any]:
    aval = x.aval
    if aval.dtype.kind in "biu":
        return [Zero(aval.update(dtype=dtypes.float0, weak_type=False))]
    ct_aval = typeof(ct)
    if (
        isinstance(ct_aval, ShapedArray)
        and ct_aval.dtype == aval.dtype
        and ct_aval.weak_type == aval.weak_type
    ):
        # JAX converts to the operand's own sharding, which its staging forwards unrecorded.
        return [ct]
    return [_convert_element_type_staged(ct, aval.dtype, aval.weak_type)]


def _convert_element_type_staged(ct: Any, dtype: Any, weak_type: bool) -> Any:
    # JAX binds the primitive (no same-type shortcut), folding only scalar constants.
    return convert_element_type_p.bind(ct, new_dtype=dtype, weak_type=weak_type, sharding=None)


defjvp2(convert_element_type_p, _convert_element_type_jvp)
transpose_rules.set(convert_element_type_p, _convert_element_type_transpose)


def _broadcast_in_dim_transpose(
    ct: Any, x: Any, *, shape: tuple[int, ...], broadcast_dimensions: Sequence[int], sharding: Any
) -> Sequence[Any]:
    if not is_undefined(x):
        return [None]
    unit_dims = [i for i, d in enumerate(x.aval.shape) if d == 1]
    bdims = tuple(d for i, d in enumerate(broadcast_dimensions) if i not in unit_dims)
    axes = tuple(i for i in range(len(shape)) if i not in bdims)
    aval = x.aval
    if aval.mesh is None and aval_mesh() is None:
        # No mesh in the type nor in context (a new type would take a `shard_map` body's):
        # the sum's type has none, so neither has its sharding. No type built to find out.
        sharding = None
    else:
        sharding = aval.update(shape=tuple(d for d in aval.shape if d != 1)).sharding
    return [expand_dims(reduce_sum(ct, axes, out_sharding=sharding), unit_dims)]


jvp_rules.set(broadcast_in_dim_p, linear_jvp(broadcast_in_dim_p))
transpose_rules.set(broadcast_in_dim_p, _broadcast_in_dim_transpose)
