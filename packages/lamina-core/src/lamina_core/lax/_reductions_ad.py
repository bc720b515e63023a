"""Differentiation rules of the reductions, as JAX's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters import (
    defjvp2,
    defjvp_zero,
    deflinear,
    instantiate_zeros,
    jvp_flat,
    jvp_rules,
    not_differentiable,
)
from lamina_core.lax import _reductions as r
from lamina_core.lax._ad_common import aval_of, const
from lamina_core.lax._elementwise import div, mul
from lamina_core.lax._elementwise_ad import _eq_meet
from lamina_core.lax._joining import pad
from lamina_core.lax._reductions import reduce_sum, reduce_sum_p
from lamina_core.lax._shape import reshape, squeeze
from lamina_core.lax._slicing import slice_in_dim
from lamina_core.lax._structural import broadcast_in_dim_p, convert_element_type, full


def _reduce_sum_transpose(
    ct: Any, x: Any, *, axes: Sequence[int], out_sharding: Any
) -> Sequence[Any]:
    if not axes:
        return [ct]  # an identity broadcast, which JAX forwards rather than records
    shape = x.aval.shape
    # NumPy ints, as JAX's `np.delete(np.arange(...), axes)` gives (printed `np.int64(1)`),
    # without the cost of `np.delete`.
    dims = tuple(map(np.int_, [i for i in range(len(shape)) if i not in axes]))
    # JAX's cotangent is typed as the operand; that shows only over Explicit axes.
    mesh = x.aval.mesh
    sharding = x.aval.sharding if mesh is not None and mesh.has_explicit else None
    return [broadcast_in_dim_p.bind(ct, shape=shape, broadcast_dimensions=dims, sharding=sharding)]


deflinear(reduce_sum_p, _reduce_sum_transpose)


# --- max/min: an equality mask, ties sharing the tangent ---------------------------------


def _reduce_chooser_jvp(g: Any, ans: Any, x: Any, *, axes: Sequence[int], **_: Any) -> Any:
    shape = [1 if i in axes else d for i, d in enumerate(aval_of(x).shape)]
    where = convert_element_type(_eq_meet(x, reshape(ans, shape)), aval_of(g).dtype)
    counts = reduce_sum(where, axes)
    return div(reduce_sum(mul(g, where), axes), counts)


defjvp2(r.reduce_max_p, _reduce_chooser_jvp)
defjvp2(r.reduce_min_p, _reduce_chooser_jvp)
defjvp_zero(r.argmax_p)
defjvp_zero(r.argmin_p)
for _p in (r.reduce_and_p, r.reduce_or_p, r.reduce_xor_p):
    not_differentiable(_p)  # boolean and integer operands only: their tangents are float0


# --- prod: the jvp of a pairwise product tree, as JAX's ------------------------------------


def _reduce_prod_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, axes: Sequence[int]
) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    one = const(x, 1)
    input_shape = np.array(aval_of(x).shape, dtype=int)
    n = np.prod(input_shape[list(axes)])
    non_axes = np.delete(np.arange(len(input_shape)), axes)
    permutation = tuple(axes) + tuple(non_axes)
    new_shape = (n, *input_shape[non_axes])
    xs = [reshape(x, new_shape, permutation)]
    ts = [reshape(instantiate_zeros(t), new_shape, permutation)]

    def tree(*vals: Any) -> list[Any]:
        while aval_of(vals[0]).shape[0] > 1:
            size = aval_of(vals[0]).shape[0]
            n1 = (size + 1) // 2
            first = [slice_in_dim(v, 0, n1) for v in vals]
            second = [slice_in_dim(v, n1, None) for v in vals]
            if size - n1 != n1:
                paddings = [(0, 0, 0)] * len(aval_of(vals[0]).shape)
                paddings[0] = (0, 1, 0)
                second = [pad(v, one, paddings) for v in second]
            vals = tuple(mul(a, b) for a, b in zip(first, second, strict=True))
        if aval_of(vals[0]).shape[0] == 0:
            return [full(tuple(input_shape[non_axes]), one) for _ in vals]
        return [squeeze(v, (0,)) for v in vals]

    outs, out_tangents = jvp_flat(tree, xs, ts)
    return outs[0], out_tangents[0]


jvp_rules.set(r.reduce_prod_p, _reduce_prod_jvp)
