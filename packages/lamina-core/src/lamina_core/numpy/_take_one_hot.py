"""One-hot encoding and `take_along_axis(..., mode='one_hot')`, staged as JAX 0.10.2 stages
them: `_one_hot` is the nested `jit` `jax.nn.one_hot` calls (it lives here, below `nn`, because
`take_along_axis` needs it too), and the one-hot gather is an `einsum` of the boolean one-hot
indices with the array, so it has a dense (matmul) derivative instead of a scatter.
"""

from __future__ import annotations

import operator
import string
from functools import partial
from typing import Any

from lamina_core import lax as _lax
from lamina_core.ir import ShapedArray
from lamina_core.numpy._linalg import einsum
from lamina_core.numpy._reductions import canonicalize_axis
from lamina_core.numpy._util import Array, dtype_of, shape_of
from lamina_core.trace import typeof
from lamina_core.transforms import Jitted


@partial(Jitted, static_argnames=("num_classes", "dtype", "axis"))
def _one_hot(x: Any, num_classes: int, *, dtype: Any, axis: int) -> Array:
    ndim = len(shape_of(x))
    output_pos_axis = canonicalize_axis(axis, ndim + 1)
    axis = operator.index(axis)
    lhs = _lax.expand_dims(x, (axis,))
    rhs_shape = [1] * ndim
    rhs_shape.insert(output_pos_axis, num_classes)
    # Laid out over `x`'s mesh, replicated, as JAX's (it prints the sharding when there is one).
    x_aval = typeof(x)
    assert isinstance(x_aval, ShapedArray)
    rhs_sharding = x_aval.update(shape=tuple(rhs_shape)).sharding
    rhs = _lax.broadcasted_iota(
        dtype_of(x), tuple(rhs_shape), output_pos_axis, out_sharding=rhs_sharding
    )
    return (lhs == rhs).astype(dtype)


def take_along_axis_one_hot(a: Array, indices: Array, axis: int) -> Array:
    """`a`'s elements at in-range `indices` along `axis` (0 where out of range), as a
    contraction of the one-hot `indices` with `a`. `axis` is non-negative; `indices` have
    been wrapped if they are to be."""
    hot = _one_hot(indices, shape_of(a)[axis], dtype=bool, axis=-1)
    if len(shape_of(a)) == 1:
        return einsum("...b,b->...", hot, a, preferred_element_type=dtype_of(a))
    if axis > len(string.ascii_letters) - 2:
        raise ValueError("One Hot indexing is only supported for up to 50 leading dimensions.")
    # The leading axes are batch axes; the trailing ones (`...`) broadcast between the two.
    lead = string.ascii_letters[:axis]
    return einsum(
        f"{lead}y...z,{lead}z...->{lead}y...",
        hot,
        a,
        precision=_lax.Precision.HIGHEST,
        preferred_element_type=dtype_of(a),
    )
