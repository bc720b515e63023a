"""Elementwise arithmetic, rounding, complex-part, bitwise and comparison primitives.

Each primitive comes from a `_nary` factory with JAX's name, accepted dtype families and
params, plus a NumPy reference that reproduces XLA's semantics where NumPy's differ
(integer division by zero, out-of-range shifts, rounding halves away from zero). The `lax`
functions bind them without promotion: only Python scalars take their weak default dtype.
"""

from __future__ import annotations

import builtins
import enum
from typing import Any, Final

import numpy as np

from lamina_core.ir import ShapedArray, dtypes, hide_default_params
from lamina_core.lax import _nary as n
from lamina_core.lax._types import Array
from lamina_core.trace import CHECKED_SCOPES, insert_pvary, typeof


class RoundingMethod(enum.IntEnum):
    """How `round` breaks ties; prints as its number, as in JAX's jaxprs."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def _round(x: np.ndarray, *, rounding_method: RoundingMethod) -> np.ndarray:
    if rounding_method == RoundingMethod.TO_NEAREST_EVEN:
        return np.rint(x)  # type: ignore[no-any-return]  # NumPy ufunc
    whole = np.trunc(x)
    # x - trunc(x) is exact, so this tests the tie without the rounding error of x + 0.5.
    return whole + np.where(np.abs(x - whole) >= 0.5, np.sign(x), 0).astype(x.dtype)  # type: ignore[no-any-return]  # NumPy arithmetic


def _integer_pow(x: np.ndarray, *, y: int) -> np.ndarray:
    if y == 0:
        return np.ones_like(x)
    # The same multiplication order as XLA's lowering, so float results round alike.
    acc: np.ndarray | None = None
    power = builtins.abs(y)
    while power:
        if power & 1:
            acc = x if acc is None else acc * x
        power >>= 1
        if power:
            x = x * x
    assert acc is not None
    return np.ones_like(acc) / acc if y < 0 else acc


def _int_info(x: np.ndarray) -> tuple[np.dtype, int]:
    dtype = np.result_type(x)
    return dtype, dtype.itemsize * 8


def _div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    dtype = np.result_type(x)
    if dtype.kind not in "iu":
        return np.true_divide(x, y)  # type: ignore[no-any-return]  # NumPy ufunc
    x, y = np.broadcast_arrays(x, y)
    zero = y == 0
    # XLA: x / 0 has every bit set; INT_MIN / -1 wraps to INT_MIN. NumPy floors instead.
    overflow = (x == np.iinfo(dtype).min) & (y == -1) if dtype.kind == "i" else zero & False
    safe = np.where(zero | overflow, 1, y).astype(dtype)
    # x - fmod(x, y) is an exact multiple of y and lies toward zero, so it cannot overflow.
    out = (x - np.fmod(x, safe)) // safe
    out = np.where(overflow, x, out)
    return np.where(zero, np.array(-1).astype(dtype), out)


def _rem(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    dtype = np.result_type(x)
    if dtype.kind not in "iu":
        return np.fmod(x, y)  # type: ignore[no-any-return]  # C remainder: sign of the dividend
    x, y = np.broadcast_arrays(x, y)
    # XLA: x % 0 is x, and INT_MIN % -1 is 0.
    safe = np.where((y == 0) | (y == -1), 1, y).astype(dtype)
    out = np.fmod(x, safe)
    return np.where(y == 0, x, out)


def _pow(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.power(x, np.asarray(y).astype(np.result_type(x)))  # type: ignore[no-any-return]  # NumPy


def _mul(x: np.ndarray, y: np.ndarray, *, out_dtype: Any) -> np.ndarray:
    if out_dtype is not None:
        dtype = dtypes.canonicalize_dtype(out_dtype)
        x, y = np.asarray(x).astype(dtype), np.asarray(y).astype(dtype)
    return np.multiply(x, y)  # type: ignore[no-any-return]  # NumPy


def _shift(kind: str) -> n.Reference:
    def shift(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x, y = np.broadcast_arrays(x, y)
        dtype, bits = _int_info(x)
        unsigned = np.dtype(f"u{dtype.itemsize}")
        # Amounts are read as unsigned; at or past the width, XLA shifts every bit out.
        amount = y.view(unsigned)
        in_range = amount < bits
        safe = np.where(in_range, amount, 0).astype(unsigned)
        if kind == "left":
            out = np.left_shift(x.view(unsigned), safe).view(dtype)
            return np.where(in_range, out, 0).astype(dtype)
        if kind == "logical":
            out = np.right_shift(x.view(unsigned), safe).view(dtype)
            return np.where(in_range, out, 0).astype(dtype)
        # Arithmetic shifts copy the top bit even for unsigned dtypes.
        signed = x.view(np.dtype(f"i{dtype.itemsize}"))
        out = np.right_shift(signed, safe.astype(signed.dtype))
        fill = np.where(signed < 0, -1, 0).astype(signed.dtype)
        return np.where(in_range, out, fill).view(dtype)

    return shift


def _population_count(x: np.ndarray) -> np.ndarray:
    dtype = np.result_type(x)
    as_bytes = np.asarray(x).reshape(*np.shape(x), 1).copy().view(np.uint8)
    counts = np.unpackbits(as_bytes, axis=-1).sum(axis=-1)
    return counts.astype(dtype)  # type: ignore[no-any-return]  # NumPy


def _clz(x: np.ndarray) -> np.ndarray:
    dtype, bits = _int_info(x)
    word = np.asarray(x).copy().view(np.dtype(f"u{dtype.itemsize}")).astype(np.uint64)
    count = np.full(np.shape(x), bits, np.int64)
    for bit in range(bits):  # the highest set bit wins, so scan upwards
        count = np.where((word >> np.uint64(bit)) & np.uint64(1), bits - 1 - bit, count)
    return count.astype(dtype)


def _complex(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x, y = np.broadcast_arrays(x, y)
    out = np.empty(x.shape, np.result_type(x, np.complex64))
    # Assigning parts (not x + 1j * y) keeps inf and nan parts as they are.
    out.real, out.imag = x, y
    return out


def _conj(x: np.ndarray) -> np.ndarray:
    return np.conj(np.asarray(x).astype(np.result_type(x, np.complex64)))  # type: ignore[no-any-return]  # NumPy ufunc


def _integer_pow_dtype(x: ShapedArray, *, y: int) -> np.dtype:
    if y < 0 and x.dtype.kind in "iu":
        raise TypeError(f"Integers cannot be raised to negative powers, got integer_pow({x}, {y})")
    return x.dtype


def _pow_dtype(x: ShapedArray, y: ShapedArray) -> np.dtype:
    if x.dtype == y.dtype or (x.dtype in n.INEXACT and y.dtype in n.INT):
        return x.dtype
    raise TypeError(
        "the first argument to pow must have an inexact dtype (float or complex), and the "
        "second argument must have an inexact or integer dtype, and two inexact dtypes must "
        f"match, but got {x.dtype.name} and {y.dtype.name} respectively."
    )


def _mul_dtype(x: ShapedArray, y: ShapedArray, *, out_dtype: Any) -> np.dtype:
    # JAX keeps the param as the caller spelled it (np.float32 prints as a class).
    return x.dtype if out_dtype is None else dtypes.canonicalize_dtype(out_dtype)


_COMPLEX_PARTS: Final = n.DTypes(("float32", "float64"))
_CONJ_INPUTS: Final = n.DTypes(("float32", "complexfloating", "float64"))
_SIGNED_OR_INEXACT: Final = n.DTypes(("floating", "complexfloating", "signedinteger"))

neg_p: Final = n.unary("neg", n.NUM, np.negative)
sign_p: Final = n.unary("sign", n.NUM, np.sign)
floor_p: Final = n.unary("floor", n.FLOAT, n.in_float32(np.floor))
ceil_p: Final = n.unary("ceil", n.FLOAT, n.in_float32(np.ceil))
round_p: Final = n.unary("round", n.FLOAT, n.in_float32(_round), param_names=("rounding_method",))
is_finite_p: Final = n.unary(
    "is_finite", n.FLOAT, n.in_float32(np.isfinite), dtype_rule=n.bool_result
)
abs_p: Final = n.unary("abs", _SIGNED_OR_INEXACT, np.abs, dtype_rule=n.real_part_dtype)
not_p: Final = n.unary("not", n.BOOL_OR_INT, np.invert)
square_p: Final = n.unary("square", n.NUM, lambda x: x * x)
integer_pow_p: Final = n.unary(
    "integer_pow",
    n.NUM,
    n.in_float32(_integer_pow),
    dtype_rule=_integer_pow_dtype,
    param_names=("y",),
)
real_p: Final = n.unary("real", n.COMPLEX, np.real, dtype_rule=n.real_part_dtype)
imag_p: Final = n.unary("imag", n.COMPLEX, np.imag, dtype_rule=n.real_part_dtype)
conj_p: Final = n.unary("conj", _CONJ_INPUTS, _conj, dtype_rule=n.complex_dtype)
population_count_p: Final = n.unary("population_count", n.INT, _population_count)
clz_p: Final = n.unary("clz", n.INT, _clz)

add_p: Final = n.binary("add", n.NUM, np.add)
sub_p: Final = n.binary("sub", n.NUM, np.subtract)
mul_p: Final = n.binary("mul", n.NUM, _mul, dtype_rule=_mul_dtype, param_names=("out_dtype",))
div_p: Final = n.binary("div", n.NUM, _div)
rem_p: Final = n.binary("rem", n.INT_OR_FLOAT, n.in_float32(_rem))
pow_p: Final = n.binary(
    "pow", (n.INEXACT, n.NUM), n.in_float32(_pow), dtype_rule=_pow_dtype, same_dtypes=False
)
max_p: Final = n.binary("max", n.ANY, np.maximum)
min_p: Final = n.binary("min", n.ANY, np.minimum)
nextafter_p: Final = n.binary("nextafter", n.FLOAT, np.nextafter)
and_p: Final = n.binary("and", n.BOOL_OR_INT, np.bitwise_and)
or_p: Final = n.binary("or", n.BOOL_OR_INT, np.bitwise_or)
xor_p: Final = n.binary("xor", n.BOOL_OR_INT, np.bitwise_xor)
shift_left_p: Final = n.binary("shift_left", n.INT, _shift("left"))
shift_right_logical_p: Final = n.binary("shift_right_logical", n.INT, _shift("logical"))
shift_right_arithmetic_p: Final = n.binary("shift_right_arithmetic", n.INT, _shift("arith"))
complex_p: Final = n.binary("complex", _COMPLEX_PARTS, _complex, dtype_rule=n.complex_dtype)

eq_p: Final = n.binary(
    "eq", n.ANY, n.on_key_data(np.equal, np.all), dtype_rule=n.bool_result, extended_dtypes=True
)
ne_p: Final = n.binary(
    "ne", n.ANY, n.on_key_data(np.not_equal, np.any), dtype_rule=n.bool_result, extended_dtypes=True
)
lt_p: Final = n.binary("lt", n.ORDERED, np.less, dtype_rule=n.bool_result)
le_p: Final = n.binary("le", n.ORDERED, np.less_equal, dtype_rule=n.bool_result)
gt_p: Final = n.binary("gt", n.ORDERED, np.greater, dtype_rule=n.bool_result)
ge_p: Final = n.binary("ge", n.ORDERED, np.greater_equal, dtype_rule=n.bool_result)

hide_default_params(mul_p, out_dtype=None)


def neg(x: Array) -> Array:
    """Elementwise negation, -x."""
    return neg_p.bind(x)


def sign(x: Array) -> Array:
    """Elementwise sign: -1, 0 or 1 (x / |x| for complex)."""
    return sign_p.bind(x)


def floor(x: Array) -> Array:
    return floor_p.bind(x)


def ceil(x: Array) -> Array:
    return ceil_p.bind(x)


def round(x: Array, rounding_method: RoundingMethod | int = RoundingMethod.AWAY_FROM_ZERO) -> Array:
    """Round to the nearest integer; ties go away from zero unless `TO_NEAREST_EVEN`."""
    return round_p.bind(x, rounding_method=RoundingMethod(rounding_method))


def is_finite(x: Array) -> Array:
    return is_finite_p.bind(x)


def abs(x: Array) -> Array:
    """Elementwise |x|; complex magnitudes are real."""
    return abs_p.bind(x)


def bitwise_not(x: Array) -> Array:
    return not_p.bind(x)


def square(x: Array) -> Array:
    return square_p.bind(x)


def integer_pow(x: Array, y: int) -> Array:
    """x ** y for a static integer y, by repeated multiplication."""
    return integer_pow_p.bind(x, y=y)


def reciprocal(x: Array) -> Array:
    return integer_pow(x, -1)


def real(x: Array) -> Array:
    return real_p.bind(x)


def imag(x: Array) -> Array:
    return imag_p.bind(x)


def conj(x: Array) -> Array:
    """Complex conjugate; a real operand gives a complex result."""
    return conj_p.bind(x, input_dtype=typeof(x).dtype)  # type: ignore[attr-defined]  # arrays


def complex(x: Array, y: Array) -> Array:
    """x + i*y from float32 or float64 parts."""
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return complex_p.bind(x, y)


def population_count(x: Array) -> Array:
    return population_count_p.bind(x)


def clz(x: Array) -> Array:
    """Count leading zero bits."""
    return clz_p.bind(x)


def add(x: Array, y: Array) -> Array:
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return add_p.bind(x, y)


def sub(x: Array, y: Array) -> Array:
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return sub_p.bind(x, y)


def mul(x: Array, y: Array, *, out_dtype: Any = None) -> Array:
    """x * y; with `out_dtype`, both operands are converted to it first."""
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return mul_p.bind(x, y, out_dtype=out_dtype)


def div(x: Array, y: Array) -> Array:
    """x / y; integer division rounds toward zero."""
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return div_p.bind(x, y)


def rem(x: Array, y: Array) -> Array:
    """Remainder with the sign of the dividend (C's fmod)."""
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return rem_p.bind(x, y)


def pow(x: Array, y: Array) -> Array:
    """x ** y for inexact x; an integer y is converted to x's dtype."""
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return pow_p.bind(x, y)


def max(x: Array, y: Array) -> Array:
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return max_p.bind(x, y)


def min(x: Array, y: Array) -> Array:
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return min_p.bind(x, y)


def nextafter(x1: Array, x2: Array) -> Array:
    if CHECKED_SCOPES[0]:
        x1, x2 = insert_pvary(x1, x2)
    return nextafter_p.bind(x1, x2)


def bitwise_and(x: Array, y: Array) -> Array:
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return and_p.bind(x, y)


def bitwise_or(x: Array, y: Array) -> Array:
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return or_p.bind(x, y)


def bitwise_xor(x: Array, y: Array) -> Array:
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return xor_p.bind(x, y)


def shift_left(x: Array, y: Array) -> Array:
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return shift_left_p.bind(x, y)


def shift_right_logical(x: Array, y: Array) -> Array:
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return shift_right_logical_p.bind(x, y)


def shift_right_arithmetic(x: Array, y: Array) -> Array:
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return shift_right_arithmetic_p.bind(x, y)


def eq(x: Array, y: Array) -> Array:
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return eq_p.bind(x, y)


def ne(x: Array, y: Array) -> Array:
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return ne_p.bind(x, y)


def lt(x: Array, y: Array) -> Array:
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return lt_p.bind(x, y)


def le(x: Array, y: Array) -> Array:
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return le_p.bind(x, y)


def gt(x: Array, y: Array) -> Array:
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return gt_p.bind(x, y)


def ge(x: Array, y: Array) -> Array:
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return ge_p.bind(x, y)


__all__ = [
    "RoundingMethod",
    "abs",
    "abs_p",
    "add",
    "add_p",
    "and_p",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "ceil",
    "ceil_p",
    "clz",
    "clz_p",
    "complex",
    "complex_p",
    "conj",
    "conj_p",
    "div",
    "div_p",
    "eq",
    "eq_p",
    "floor",
    "floor_p",
    "ge",
    "ge_p",
    "gt",
    "gt_p",
    "imag",
    "imag_p",
    "integer_pow",
    "integer_pow_p",
    "is_finite",
    "is_finite_p",
    "le",
    "le_p",
    "lt",
    "lt_p",
    "max",
    "max_p",
    "min",
    "min_p",
    "mul",
    "mul_p",
    "ne",
    "ne_p",
    "neg",
    "neg_p",
    "nextafter",
    "nextafter_p",
    "not_p",
    "or_p",
    "population_count",
    "population_count_p",
    "pow",
    "pow_p",
    "real",
    "real_p",
    "reciprocal",
    "rem",
    "rem_p",
    "round",
    "round_p",
    "shift_left",
    "shift_left_p",
    "shift_right_arithmetic",
    "shift_right_arithmetic_p",
    "shift_right_logical",
    "shift_right_logical_p",
    "sign",
    "sign_p",
    "square",
    "square_p",
    "sub",
    "sub_p",
    "xor_p",
]
