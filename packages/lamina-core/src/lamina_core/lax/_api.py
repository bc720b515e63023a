"""The `lax` functions: JAX's names and signatures over core's primitives.

`lax` does no implicit type promotion: operands must already agree, except that Python
scalars take their default weak dtype. Constant operands are converted on the host when no
tracer is involved, so `lax.convert_element_type(2.0, int32)` embeds a literal, as in JAX.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core import dtypes
from lamina_core.lax import _elementwise as ew
from lamina_core.lax import _reductions as red
from lamina_core.lax._structural import broadcast_in_dim_p, convert_element_type_p
from lamina_core.literals import typed_scalar
from lamina_core.tracing import Tracer
from lamina_core.values import canonical_value, typeof

Array = Any
"""What lax functions take and return: tracers, NumPy values, or an upper layer's arrays."""


def _is_host_constant(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex, np.ndarray, np.generic))


def _convert_element_type(
    x: Any, new_dtype: Any, weak_type: bool = False, sharding: Any = None
) -> Array:
    """Convert `x` to `new_dtype` (canonicalized) with the given weak type; no-op if equal."""
    dtype = dtypes.canonicalize_dtype(new_dtype)
    if _is_host_constant(x):
        if weak_type and dtypes.is_python_scalar(x):
            return typed_scalar(x, dtype)
        value, _ = canonical_value(x)
        with np.errstate(invalid="ignore", over="ignore"):
            converted = np.asarray(value).astype(dtype)
        return converted
    aval = typeof(x)
    if getattr(aval, "dtype", None) == dtype and getattr(aval, "weak_type", False) == weak_type:
        return x
    return convert_element_type_p.bind(x, new_dtype=dtype, weak_type=weak_type, sharding=sharding)


def convert_element_type(operand: Array, new_dtype: Any) -> Array:
    """Elementwise cast to `new_dtype`; the result is strongly typed."""
    return _convert_element_type(operand, new_dtype, False)


def broadcast_in_dim(operand: Array, shape: Sequence[int], broadcast_dimensions: Sequence[int],
                     *, out_sharding: Any = None) -> Array:  # fmt: skip
    """Broadcast `operand` to `shape`, its dimension i going to `broadcast_dimensions[i]`."""
    shape = tuple(int(d) for d in shape)
    dims = tuple(int(d) for d in broadcast_dimensions)
    aval = typeof(operand)
    if (
        getattr(aval, "shape", None) == shape
        and dims == tuple(range(len(shape)))
        and not isinstance(operand, Tracer)
    ):
        return operand
    return broadcast_in_dim_p.bind(
        operand, shape=shape, broadcast_dimensions=dims, sharding=out_sharding
    )


def broadcast(operand: Array, sizes: Sequence[int], *, out_sharding: Any = None) -> Array:
    """Add leading dimensions of `sizes` to `operand`."""
    shape = tuple(getattr(typeof(operand), "shape", ()))
    dims = tuple(range(len(sizes), len(sizes) + len(shape)))
    return broadcast_in_dim(operand, (*sizes, *shape), dims, out_sharding=out_sharding)


def full(
    shape: Sequence[int], fill_value: Any, dtype: Any = None, *, sharding: Any = None
) -> Array:
    """An array of `shape` filled with `fill_value`."""
    shape = tuple(int(d) for d in shape)
    weak = dtype is None and dtypes.is_weakly_typed(fill_value)
    dtype = dtypes.canonicalize_dtype(dtype if dtype is not None else dtypes.dtype(fill_value))
    fill = _convert_element_type(fill_value, dtype, weak)
    return broadcast(fill, shape, out_sharding=sharding)


def reduce_sum(operand: Array, axes: Sequence[int]) -> Array:
    return red.reduce_sum_p.bind(operand, axes=tuple(axes), out_sharding=None)


def reduce_max(operand: Array, axes: Sequence[int]) -> Array:
    return red.reduce_max_p.bind(operand, axes=tuple(axes), out_sharding=None)


def reduce_min(operand: Array, axes: Sequence[int]) -> Array:
    return red.reduce_min_p.bind(operand, axes=tuple(axes), out_sharding=None)


def reduce_prod(operand: Array, axes: Sequence[int]) -> Array:
    return red.reduce_prod_p.bind(operand, axes=tuple(axes), out_sharding=None)


def neg(x: Array) -> Array:
    return ew.neg_p.bind(x)


def sign(x: Array) -> Array:
    return ew.sign_p.bind(x)


def floor(x: Array) -> Array:
    return ew.floor_p.bind(x)


def ceil(x: Array) -> Array:
    return ew.ceil_p.bind(x)


def is_finite(x: Array) -> Array:
    return ew.is_finite_p.bind(x)


def abs(x: Array) -> Array:
    return ew.abs_p.bind(x)


def bitwise_not(x: Array) -> Array:
    return ew.not_p.bind(x)


def exp(x: Array, accuracy: Any = None) -> Array:
    return ew.exp_p.bind(x, accuracy=accuracy)


def exp2(x: Array, accuracy: Any = None) -> Array:
    return ew.exp2_p.bind(x, accuracy=accuracy)


def log(x: Array, accuracy: Any = None) -> Array:
    return ew.log_p.bind(x, accuracy=accuracy)


def log1p(x: Array, accuracy: Any = None) -> Array:
    return ew.log1p_p.bind(x, accuracy=accuracy)


def expm1(x: Array, accuracy: Any = None) -> Array:
    return ew.expm1_p.bind(x, accuracy=accuracy)


def tanh(x: Array, accuracy: Any = None) -> Array:
    return ew.tanh_p.bind(x, accuracy=accuracy)


def logistic(x: Array, accuracy: Any = None) -> Array:
    return ew.logistic_p.bind(x, accuracy=accuracy)


def sin(x: Array, accuracy: Any = None) -> Array:
    return ew.sin_p.bind(x, accuracy=accuracy)


def cos(x: Array, accuracy: Any = None) -> Array:
    return ew.cos_p.bind(x, accuracy=accuracy)


def tan(x: Array, accuracy: Any = None) -> Array:
    return ew.tan_p.bind(x, accuracy=accuracy)


def sqrt(x: Array, accuracy: Any = None) -> Array:
    return ew.sqrt_p.bind(x, accuracy=accuracy)


def rsqrt(x: Array, accuracy: Any = None) -> Array:
    return ew.rsqrt_p.bind(x, accuracy=accuracy)


def cbrt(x: Array, accuracy: Any = None) -> Array:
    return ew.cbrt_p.bind(x, accuracy=accuracy)


def add(x: Array, y: Array) -> Array:
    return ew.add_p.bind(x, y)


def sub(x: Array, y: Array) -> Array:
    return ew.sub_p.bind(x, y)


def mul(x: Array, y: Array) -> Array:
    return ew.mul_p.bind(x, y, out_dtype=None)


def div(x: Array, y: Array) -> Array:
    return ew.div_p.bind(x, y)


def rem(x: Array, y: Array) -> Array:
    return ew.rem_p.bind(x, y)


def pow(x: Array, y: Array) -> Array:
    return ew.pow_p.bind(x, y)


def max(x: Array, y: Array) -> Array:
    return ew.max_p.bind(x, y)


def min(x: Array, y: Array) -> Array:
    return ew.min_p.bind(x, y)


def atan2(x: Array, y: Array) -> Array:
    return ew.atan2_p.bind(x, y)


def bitwise_and(x: Array, y: Array) -> Array:
    return ew.and_p.bind(x, y)


def bitwise_or(x: Array, y: Array) -> Array:
    return ew.or_p.bind(x, y)


def bitwise_xor(x: Array, y: Array) -> Array:
    return ew.xor_p.bind(x, y)


def eq(x: Array, y: Array) -> Array:
    return ew.eq_p.bind(x, y)


def ne(x: Array, y: Array) -> Array:
    return ew.ne_p.bind(x, y)


def lt(x: Array, y: Array) -> Array:
    return ew.lt_p.bind(x, y)


def le(x: Array, y: Array) -> Array:
    return ew.le_p.bind(x, y)


def gt(x: Array, y: Array) -> Array:
    return ew.gt_p.bind(x, y)


def ge(x: Array, y: Array) -> Array:
    return ew.ge_p.bind(x, y)
