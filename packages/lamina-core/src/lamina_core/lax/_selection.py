"""Selection and bit-level primitives: select_n, clamp, bitcast_convert_type, reduce_precision.

`select_n` picks, per element, one of several equally shaped cases by a boolean or integer
`which` (a boolean picks case 1 where true, so `lax.select(p, t, f)` binds `select_n(p, f,
t)`). The NumPy references follow XLA: an out-of-range `which` picks the nearest end case,
and `reduce_precision` rounds to nearest even and flushes values the narrow format cannot
hold, denormals included, to signed zero or infinity.
"""

from __future__ import annotations

import operator
from typing import Any, Final

import numpy as np

from lamina_core.ir import (
    AbstractValue,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    dtypes,
    impl_rules,
)
from lamina_core.lax import _checks as c
from lamina_core.lax import _nary as n
from lamina_core.lax._types import Array
from lamina_core.trace import insert_pvary

select_n_p: Final = Primitive("select_n")
clamp_p: Final = Primitive("clamp")
bitcast_convert_type_p: Final = Primitive("bitcast_convert_type")


@abstract_eval_rules.register(select_n_p)
def _select_n_abstract_eval(which: AbstractValue, *cases: AbstractValue) -> ShapedArray:
    which_aval = c.array_aval("select_n", which)
    avals = [c.array_aval("select_n", case) for case in cases]
    if not avals:
        raise TypeError("select must have at least one case")
    shape = avals[0].shape
    if any(a.shape != shape for a in avals[1:]):
        shapes = ", ".join(str(a.shape) for a in avals)
        raise TypeError(f"select cases must have the same shapes, got [{shapes}].")
    if which_aval.shape and which_aval.shape != shape:
        raise TypeError(
            "select `which` must be scalar or have the same shape as cases, got `which` shape "
            f"{which_aval.shape} but case shape {shape}."
        )
    dtype = n.check_same_dtypes("select", avals)
    if which_aval.dtype not in n.BOOL_OR_INT:
        raise TypeError(
            f"select `which` must be boolean or integer type, got {which_aval.dtype.name}."
        )
    if which_aval.dtype.kind == "b" and len(avals) > 2:
        raise TypeError("select with boolean `which` cannot have > 2 cases.")
    return ShapedArray(shape, dtype, all(a.weak_type for a in avals))


@impl_rules.register(select_n_p)
def _select_n_impl(which: np.ndarray, *cases: np.ndarray) -> np.ndarray:
    which = np.asarray(which)
    if which.dtype.kind == "b":
        return np.where(which, cases[-1], cases[0])
    picked = np.clip(which, 0, len(cases) - 1)
    out = np.asarray(cases[0])
    for i, case in enumerate(cases[1:], start=1):
        out = np.where(picked == i, case, out)
    return out


@abstract_eval_rules.register(clamp_p)
def _clamp_abstract_eval(lo: AbstractValue, x: AbstractValue, hi: AbstractValue) -> ShapedArray:
    avals = [c.array_aval("clamp", v) for v in (lo, x, hi)]
    lo_aval, x_aval, hi_aval = avals
    for name, bound in (("min", lo_aval), ("max", hi_aval)):
        if bound.shape and bound.shape != x_aval.shape:
            raise TypeError(
                f"clamp requires {name}.shape == operand.shape or {name}.shape == (), got "
                f"{name}.shape={bound.shape}, operand.shape={x_aval.shape}."
            )
    n.check_operand_dtypes("clamp", avals, (n.ANY, n.ANY, n.ANY))
    n.check_same_dtypes("clamp", avals)
    return ShapedArray(x_aval.shape, x_aval.dtype, all(a.weak_type for a in avals))


@impl_rules.register(clamp_p)
def _clamp_impl(lo: np.ndarray, x: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.minimum(np.maximum(x, lo), hi)  # type: ignore[no-any-return]  # NumPy


def _bits(dtype: np.dtype) -> int:
    kind = c.kind_of(dtype)
    if kind in "iu":
        return int(dtypes.iinfo(dtype).bits)
    if kind == "f":
        return int(dtypes.finfo(dtype).bits)
    return dtype.itemsize * 8


@abstract_eval_rules.register(bitcast_convert_type_p)
def _bitcast_convert_type_abstract_eval(x: AbstractValue, *, new_dtype: np.dtype) -> ShapedArray:
    aval = c.array_aval("bitcast_convert_type", x)
    old_bits, new_bits = _bits(aval.dtype), _bits(new_dtype)
    if old_bits == new_bits:
        shape = aval.shape
    elif old_bits > new_bits:
        shape = (*aval.shape, old_bits // new_bits)
    else:
        last = aval.shape[-1] if aval.shape else 1
        if last * old_bits != new_bits:
            raise ValueError(
                f"Attempting to convert array of shape {aval.shape} from {aval.dtype.name} of "
                f"size {old_bits} bits to {new_dtype.name} of size {new_bits}, bits but "
                f"{last} * {old_bits} != {new_bits}"
            )
        shape = aval.shape[:-1]
    if aval.dtype != new_dtype and any(d.kind in "bc" for d in (aval.dtype, new_dtype)):
        raise TypeError(
            "lax.bitcast_convert_type does not support bool or complex values unless the "
            f"operand and destination types match. Got operand dtype={aval.dtype.name}, "
            f"new_dtype={new_dtype!r}. Consider using the arr.view() method instead."
        )
    return ShapedArray(shape, new_dtype, False)


@impl_rules.register(bitcast_convert_type_p)
def _bitcast_convert_type_impl(x: np.ndarray, *, new_dtype: np.dtype) -> np.ndarray:
    # A C-ordered copy (np.ascontiguousarray would make 0-d arrays 1-d).
    x = np.asarray(x).copy()
    shape = x.shape
    if x.dtype.itemsize == new_dtype.itemsize:
        return x.view(new_dtype)
    if x.dtype.itemsize > new_dtype.itemsize:
        ratio = x.dtype.itemsize // new_dtype.itemsize
        return x.reshape(*shape, 1).view(new_dtype).reshape(*shape, ratio)
    return x.view(new_dtype).reshape(shape[:-1])


reduce_precision_p: Final = Primitive("reduce_precision")


@abstract_eval_rules.register(reduce_precision_p)
def _reduce_precision_abstract_eval(
    x: AbstractValue, *, exponent_bits: int, mantissa_bits: int
) -> ShapedArray:
    aval = c.array_aval("reduce_precision", x)
    if exponent_bits < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got {exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError(
            f"reduce_precision: mantissa_bits must be non-negative; got {mantissa_bits}"
        )
    n.check_unary_dtype("reduce_precision", aval, n.FLOAT)
    return aval


@impl_rules.register(reduce_precision_p)
def _reduce_precision(x: np.ndarray, *, exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    x = np.asarray(x)
    info = dtypes.finfo(x.dtype)
    src_mantissa, src_exponent = int(info.nmant), int(info.nexp)
    word = np.dtype(f"u{x.dtype.itemsize}")
    raw = x.copy().view(word).astype(np.uint64)
    sign_mask = 1 << (x.dtype.itemsize * 8 - 1)
    exponent_mask = ((1 << src_exponent) - 1) << src_mantissa
    sign = raw & np.uint64(sign_mask)
    magnitude = raw & np.uint64(~sign_mask & (2**64 - 1))
    is_nan = magnitude > np.uint64(exponent_mask)
    if mantissa_bits < src_mantissa:
        dropped = src_mantissa - mantissa_bits
        last_kept = 1 << dropped
        # Round half to even: add 0111...1, plus one more when the last kept bit is set.
        bias = ((magnitude & np.uint64(last_kept)) >> np.uint64(dropped)) + np.uint64(
            (last_kept >> 1) - 1
        )
        magnitude = (magnitude + bias) & np.uint64(~(last_kept - 1) & (2**64 - 1))
    if exponent_bits < src_exponent:
        bias_src = (1 << (src_exponent - 1)) - 1
        bias_dst = (1 << (exponent_bits - 1)) - 1
        exponent = magnitude & np.uint64(exponent_mask)
        overflow = exponent > np.uint64((bias_src + bias_dst) << src_mantissa)
        underflow = exponent <= np.uint64((bias_src - bias_dst) << src_mantissa)
        magnitude = np.where(
            overflow, np.uint64(exponent_mask), np.where(underflow, np.uint64(0), magnitude)
        )
    out = (magnitude | sign).astype(word).view(x.dtype)
    return np.where(is_nan, x, out)


def select_n(which: Array, *cases: Array) -> Array:
    """Elementwise `cases[which]`; a boolean `which` chooses between two cases."""
    if not cases:
        raise ValueError("select_n() must have at least one case")
    return select_n_p.bind(*insert_pvary(which, *cases))


def select(pred: Array, on_true: Array, on_false: Array) -> Array:
    """`on_true` where `pred`, else `on_false` (binds select_n with the cases swapped)."""
    return select_n_p.bind(*insert_pvary(pred, on_false, on_true))


def clamp(min: Array, x: Array, max: Array) -> Array:
    """`x` limited to [min, max]; the bounds are scalars or shaped like `x`."""
    return clamp_p.bind(*insert_pvary(min, x, max))


def bitcast_convert_type(operand: Array, new_dtype: Any) -> Array:
    """Reinterpret the bits of `operand` as `new_dtype`, splitting or joining the last dim."""
    dtype = dtypes.canonicalize_dtype(new_dtype)
    return bitcast_convert_type_p.bind(operand, new_dtype=dtype)


def reduce_precision(operand: Array, exponent_bits: int, mantissa_bits: int) -> Array:
    """Round `operand` to a float format of the given exponent and mantissa widths."""
    return reduce_precision_p.bind(
        operand,
        exponent_bits=operator.index(exponent_bits),
        mantissa_bits=operator.index(mantissa_bits),
    )


__all__ = [
    "bitcast_convert_type",
    "bitcast_convert_type_p",
    "clamp",
    "clamp_p",
    "reduce_precision",
    "reduce_precision_p",
    "select",
    "select_n",
    "select_n_p",
]
