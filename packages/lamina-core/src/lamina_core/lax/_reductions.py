"""Reductions over a set of axes: reduce_sum, reduce_max, reduce_min, reduce_prod, reduce_and,
reduce_or, reduce_xor, and the index reductions argmax and argmin.

The params are JAX 0.10.2's: every reduction takes `axes` (canonical, non-negative); only
`reduce_sum` also takes `out_sharding`, and argmax/argmin take one axis and an `index_dtype`.
Arithmetic reductions keep the operand's weak type; logical and index reductions never are weak.
The NumPy references reduce empty axes to the operation's identity, as XLA does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from lamina_core.config import affects_tracing, config
from lamina_core.ir import (
    AbstractValue,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    dtypes,
    impl_rules,
)
from lamina_core.lax import _checks as c
from lamina_core.lax._structural import canonical_sharding
from lamina_core.lax._types import Array


def check_number(name: str, aval: ShapedArray) -> None:
    """JAX's check for ops that take numbers only (not bool)."""
    if c.kind_of(aval.dtype) not in c.NUM:
        raise TypeError(
            f"{name} does not accept dtype {aval.dtype.name}. Accepted dtypes are subtypes "
            f"of number."
        )


def _reduced_shape(aval: ShapedArray, axes: Sequence[int]) -> tuple[int, ...]:
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axes' of reduction: {tuple(axes)}")
    if not all(0 <= a < aval.ndim for a in axes):
        raise ValueError(f"reduction axes {tuple(axes)} contains out-of-bounds indices for {aval}.")
    return tuple(d for i, d in enumerate(aval.shape) if i not in axes)


def _is_narrow_float(dtype: np.dtype) -> bool:
    return c.kind_of(dtype) == "f" and dtype.itemsize < 4


def _max_identity(dtype: np.dtype) -> Any:
    kind = c.kind_of(dtype)
    if kind == "b":
        return False
    if kind in "iu":
        return dtypes.iinfo(dtype).min
    info = dtypes.finfo(dtype)
    return -np.inf if np.isinf(np.asarray(np.inf).astype(dtype)) else info.min


def _min_identity(dtype: np.dtype) -> Any:
    kind = c.kind_of(dtype)
    if kind == "b":
        return True
    if kind in "iu":
        return dtypes.iinfo(dtype).max
    info = dtypes.finfo(dtype)
    return np.inf if np.isinf(np.asarray(np.inf).astype(dtype)) else info.max


def _sum(x: np.ndarray, axes: tuple[int, ...]) -> Any:
    if _is_narrow_float(x.dtype):
        # Accumulate narrow floats in float32, as XLA's CPU reductions do.
        return np.sum(x.astype(np.float32), axis=axes).astype(x.dtype)
    return np.sum(x, axis=axes, dtype=x.dtype)


def _prod(x: np.ndarray, axes: tuple[int, ...]) -> Any:
    if _is_narrow_float(x.dtype):
        return np.prod(x.astype(np.float32), axis=axes).astype(x.dtype)
    return np.prod(x, axis=axes, dtype=x.dtype)


def _max(x: np.ndarray, axes: tuple[int, ...]) -> Any:
    wide = x.astype(np.float32) if _is_narrow_float(x.dtype) else x
    return np.max(wide, axis=axes, initial=_max_identity(x.dtype)).astype(x.dtype)


def _min(x: np.ndarray, axes: tuple[int, ...]) -> Any:
    wide = x.astype(np.float32) if _is_narrow_float(x.dtype) else x
    return np.min(wide, axis=axes, initial=_min_identity(x.dtype)).astype(x.dtype)


def _bitwise(ufunc: np.ufunc, identity: int) -> Callable[[np.ndarray, tuple[int, ...]], Any]:
    def reference(x: np.ndarray, axes: tuple[int, ...]) -> Any:
        init = np.asarray(identity).astype(x.dtype)
        return ufunc.reduce(x, axis=axes, initial=init).astype(x.dtype)

    return reference


# Decides whether staging a sum raises: part of the tracing key, as in JAX.
allow_f16_reductions: Final = affects_tracing(
    config.define_bool(
        "jax_allow_f16_reductions",
        True,
        "If False, `reduce_sum` on `f16` or `bf16` inputs will raise an error.",
    )
)


def _check_f16_reduction(aval: ShapedArray, axes: Sequence[int]) -> None:
    if "jax_allow_f16_reductions" not in config.touched or allow_f16_reductions.value:
        return
    if not all(aval.shape[d] == 1 for d in axes):
        raise ValueError(
            f"reduce_sum on operand {aval.str_short(True)} is not allowed when "
            "jax_allow_f16_reductions=False."
        )


_HALF_FLOATS: Final = frozenset({np.dtype(np.float16), dtypes.bfloat16})
"""The floats whose sums JAX checks (`dtype.name` is a slow property: this runs per sum)."""


def reduction(
    name: str,
    reference: Callable[[np.ndarray, tuple[int, ...]], Any],
    *,
    numbers_only: bool = False,
    logical: bool = False,
) -> Primitive:
    """A reduction primitive over `axes`, with JAX's dtype checks and weak-type rule."""
    prim = Primitive(name)

    def abstract_eval(x: AbstractValue, *, axes: Sequence[int], **params: Any) -> ShapedArray:
        aval = c.array_aval(name, x)
        if numbers_only:
            check_number(name, aval)
        if logical and c.kind_of(aval.dtype) not in c.BOOL | c.INT:
            raise TypeError(
                f"logical reduction requires operand dtype bool or int, got {aval.dtype}."
            )
        if name == "reduce_sum" and aval.dtype in _HALF_FLOATS:
            _check_f16_reduction(aval, axes)
        shape = _reduced_shape(aval, axes)
        return ShapedArray(shape, aval.dtype, aval.weak_type and not logical)

    def impl(x: np.ndarray, *, axes: Sequence[int], **params: Any) -> Any:
        return reference(np.asarray(x), tuple(axes))

    abstract_eval_rules.set(prim, abstract_eval)
    impl_rules.set(prim, impl)
    return prim


reduce_sum_p: Final = reduction("reduce_sum", _sum, numbers_only=True)
reduce_prod_p: Final = reduction("reduce_prod", _prod, numbers_only=True)
reduce_max_p: Final = reduction("reduce_max", _max)
reduce_min_p: Final = reduction("reduce_min", _min)
reduce_and_p: Final = reduction("reduce_and", _bitwise(np.bitwise_and, -1), logical=True)
reduce_or_p: Final = reduction("reduce_or", _bitwise(np.bitwise_or, 0), logical=True)
reduce_xor_p: Final = reduction("reduce_xor", _bitwise(np.bitwise_xor, 0), logical=True)


def _index_reduction(name: str, reference: Callable[..., Any]) -> Primitive:
    prim = Primitive(name)

    def abstract_eval(
        x: AbstractValue, *, axes: Sequence[int], index_dtype: np.dtype
    ) -> ShapedArray:
        aval = c.array_aval(name, x)
        (axis,) = axes
        if not 0 <= axis < aval.ndim:
            raise ValueError(f"Invalid axis {axis} for operand shape {aval.shape}")
        if aval.shape[axis] < 1:
            raise ValueError(
                f"argmin and argmax require non-empty reduced dimension. "
                f"operand.shape={aval.shape} axis={axis}"
            )
        if c.kind_of(np.dtype(index_dtype)) not in c.INT:
            raise TypeError(
                f"index_dtype must be an integer type, but got {np.dtype(index_dtype).name}"
            )
        shape = aval.shape[:axis] + aval.shape[axis + 1 :]
        return ShapedArray(shape, np.dtype(index_dtype), False)

    def impl(x: np.ndarray, *, axes: Sequence[int], index_dtype: np.dtype) -> Any:
        x = np.asarray(x)
        if _is_narrow_float(x.dtype):
            x = x.astype(np.float32)
        # NumPy, like XLA here, picks the first NaN, else the first extremum.
        return reference(x, axis=axes[0]).astype(index_dtype)

    abstract_eval_rules.set(prim, abstract_eval)
    impl_rules.set(prim, impl)
    return prim


argmax_p: Final = _index_reduction("argmax", np.argmax)
argmin_p: Final = _index_reduction("argmin", np.argmin)


def reduce_sum(operand: Array, axes: Sequence[int], *, out_sharding: Any = None) -> Array:
    """Sum over `axes` (each `0 <= axis < ndim`), without upcasting narrow types."""
    return reduce_sum_p.bind(
        operand, axes=tuple(axes), out_sharding=canonical_sharding(out_sharding)
    )


def reduce_prod(operand: Array, axes: Sequence[int]) -> Array:
    """Product over `axes`."""
    return reduce_prod_p.bind(operand, axes=tuple(axes))


def reduce_max(operand: Array, axes: Sequence[int]) -> Array:
    """Maximum over `axes`."""
    return reduce_max_p.bind(operand, axes=tuple(axes))


def reduce_min(operand: Array, axes: Sequence[int]) -> Array:
    """Minimum over `axes`."""
    return reduce_min_p.bind(operand, axes=tuple(axes))


def reduce_and(operand: Array, axes: Sequence[int]) -> Array:
    """Bitwise AND over `axes` (bool or integer operands)."""
    return reduce_and_p.bind(operand, axes=tuple(axes))


def reduce_or(operand: Array, axes: Sequence[int]) -> Array:
    """Bitwise OR over `axes` (bool or integer operands)."""
    return reduce_or_p.bind(operand, axes=tuple(axes))


def reduce_xor(operand: Array, axes: Sequence[int]) -> Array:
    """Bitwise XOR over `axes` (bool or integer operands)."""
    return reduce_xor_p.bind(operand, axes=tuple(axes))


def argmax(operand: Array, axis: int, index_dtype: Any) -> Array:
    """Index of the maximum along `axis` (the first one on ties; NaN counts as maximal)."""
    dtype = dtypes.canonicalize_dtype(index_dtype)
    return argmax_p.bind(operand, axes=(axis,), index_dtype=dtype)


def argmin(operand: Array, axis: int, index_dtype: Any) -> Array:
    """Index of the minimum along `axis` (the first one on ties; NaN counts as minimal)."""
    dtype = dtypes.canonicalize_dtype(index_dtype)
    return argmin_p.bind(operand, axes=(axis,), index_dtype=dtype)


__all__ = [
    "argmax",
    "argmax_p",
    "argmin",
    "argmin_p",
    "reduce_and",
    "reduce_and_p",
    "reduce_max",
    "reduce_max_p",
    "reduce_min",
    "reduce_min_p",
    "reduce_or",
    "reduce_or_p",
    "reduce_prod",
    "reduce_prod_p",
    "reduce_sum",
    "reduce_sum_p",
    "reduce_xor",
    "reduce_xor_p",
]
