"""Differentiation rules of the elementwise primitives, with JAX's formulas and op order.

Each rule is the formula JAX 0.10.2 uses (same equations in the same order), so transformed
jaxprs print as JAX prints them and give the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters import (
    Zero,
    defbilinear,
    defjvp,
    defjvp2,
    defjvp_zero,
    deflinear,
    is_undefined,
    jvp_rules,
    linear_jvp,
    linearization_rules,
    not_differentiable,
    transpose_rules,
    zero_of,
)
from lamina_core.ir.dtypes import promote_types
from lamina_core.lax import _elementwise as e
from lamina_core.lax import _transcendental as tr
from lamina_core.lax._ad_common import (
    aval_of,
    const,
    full_like,
    maybe_broadcast,
    one,
    replace_zero,
    unbroadcast,
    zeros_like,
)
from lamina_core.lax._selection import select
from lamina_core.lax._structural import convert_element_type
from lamina_core.trace import typeof

# --- linear: neg, add, sub -------------------------------------------------------------


def _neg_transpose(ct: Any, x: Any) -> Sequence[Any]:
    return [e.neg(ct)]


jvp_rules.set(e.neg_p, linear_jvp(e.neg_p))
transpose_rules.set(e.neg_p, _neg_transpose)


def _add_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    x, y = primals
    xdot, ydot = tangents
    out = e.add(x, y)
    shape = aval_of(out).shape
    if type(xdot) is Zero and type(ydot) is Zero:
        return out, zero_of(out)
    if type(xdot) is Zero:
        return out, maybe_broadcast(shape, ydot)
    if type(ydot) is Zero:
        return out, maybe_broadcast(shape, xdot)
    return out, e.add(xdot, ydot)


def _ct_aval(x: Any) -> Any:
    return x.aval if is_undefined(x) else typeof(x).to_tangent_aval()


def _add_transpose(ct: Any, x: Any, y: Any) -> Sequence[Any]:
    return [unbroadcast(_ct_aval(x), ct), unbroadcast(_ct_aval(y), ct)]


def _sub_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    x, y = primals
    xdot, ydot = tangents
    out = e.sub(x, y)
    shape = aval_of(out).shape
    if type(xdot) is Zero and type(ydot) is Zero:
        return out, zero_of(out)
    if type(xdot) is Zero:
        return out, maybe_broadcast(shape, e.neg(ydot))
    if type(ydot) is Zero:
        return out, maybe_broadcast(shape, xdot)
    return out, e.sub(xdot, ydot)


def _sub_transpose(ct: Any, x: Any, y: Any) -> Sequence[Any]:
    return [unbroadcast(_ct_aval(x), ct), unbroadcast(_ct_aval(y), e.neg(ct))]


jvp_rules.set(e.add_p, _add_jvp)
transpose_rules.set(e.add_p, _add_transpose)
jvp_rules.set(e.sub_p, _sub_jvp)
transpose_rules.set(e.sub_p, _sub_transpose)

# --- mul: bilinear -----------------------------------------------------------------------


def _mul_transpose_left(ct: Any, x: Any, y: Any, *, out_dtype: Any) -> Any:
    g = e.mul(ct, y, out_dtype=None if out_dtype is None else x.aval.dtype)
    return unbroadcast(x.aval, g)


def _mul_transpose_right(ct: Any, x: Any, y: Any, *, out_dtype: Any) -> Any:
    g = e.mul(x, ct, out_dtype=None if out_dtype is None else y.aval.dtype)
    return unbroadcast(y.aval, g)


defbilinear(e.mul_p, _mul_transpose_left, _mul_transpose_right)

# --- transcendental ----------------------------------------------------------------------


def _sin_linearize(nonzeros: Sequence[bool], x: Any, *, accuracy: Any) -> Any:
    return (
        tr.sin_p.bind(x, accuracy=accuracy),
        nonzeros[0],
        [tr.cos(x)],
        lambda res, t: e.mul(t, res[0]),
    )


defjvp(tr.sin_p, lambda g, x, accuracy: e.mul(g, tr.cos(x, accuracy=accuracy)))
linearization_rules.set(tr.sin_p, _sin_linearize)
defjvp(tr.cos_p, lambda g, x, accuracy: e.neg(e.mul(g, tr.sin(x, accuracy=accuracy))))
defjvp2(tr.exp_p, lambda g, ans, x, **_: e.mul(g, ans))
defjvp(tr.log_p, lambda g, x, **_: e.div(g, x))
defjvp2(
    tr.tanh_p,
    lambda g, ans, x, accuracy: (
        e.mul(
            g,
            e.mul(
                const(x, 4),
                e.mul(
                    tr.logistic(e.mul(const(x, 2), x), accuracy=accuracy),
                    tr.logistic(e.mul(const(x, -2), x), accuracy=accuracy),
                ),
            ),
        )
        if accuracy is tr.AccuracyMode.HIGHEST
        else e.mul(e.add(g, e.mul(g, ans)), e.sub(one(x), ans))
    ),
)


def _integer_pow_jvp(g: Any, x: Any, *, y: int) -> Any:
    if y == 0:
        return zeros_like(g)
    if y == 1:
        return g
    if y == 2:
        return e.mul(g, e.mul(const(x, y), x))
    return e.mul(g, e.mul(const(x, y), e.integer_pow(x, y - 1)))


defjvp(e.integer_pow_p, _integer_pow_jvp)

for _p in (e.sign_p, e.floor_p, e.ceil_p, e.round_p, e.is_finite_p, e.eq_p, e.ne_p, e.lt_p,
           e.le_p, e.gt_p, e.ge_p, e.and_p, e.or_p, e.xor_p, e.not_p, e.shift_left_p,
           e.shift_right_logical_p, e.shift_right_arithmetic_p):  # fmt: skip
    defjvp_zero(_p)
for _p in (e.nextafter_p, e.population_count_p, e.clz_p):
    not_differentiable(_p)

# --- div, rem, pow, max/min, abs, square -----------------------------------------------


def _div_transpose(ct: Any, x: Any, y: Any) -> Sequence[Any]:
    if is_undefined(y):
        raise RuntimeError("nonlinear div can't be transposed")
    return [unbroadcast(x.aval, e.div(ct, y)), None]


defjvp(
    e.div_p,
    lambda g, x, y: e.div(g, y),
    lambda g, x, y: e.mul(e.mul(e.neg(g), x), e.integer_pow(y, -2)),
)
transpose_rules.set(e.div_p, _div_transpose)


def _broadcast_shape(x: Any, y: Any) -> tuple[int, ...]:
    xs, ys = aval_of(x).shape, aval_of(y).shape
    if not xs:
        return ys
    if not ys:
        return xs
    return tuple(max(a, b) for a, b in zip(xs, ys, strict=True))


defjvp(
    e.rem_p,
    lambda g, x, y: maybe_broadcast(_broadcast_shape(x, y), g),
    lambda g, x, y: e.mul(e.neg(g), e.mul(e.sign(e.div(x, y)), e.floor(e.abs(e.div(x, y))))),
)


def _pow_jvp_lhs(g: Any, ans: Any, x: Any, y: Any) -> Any:
    y_dtype = aval_of(y).dtype
    result_dtype = aval_of(x).dtype
    x = convert_element_type(x, result_dtype)
    y = convert_element_type(y, result_dtype)
    if y_dtype.kind in "iu":
        shape = _broadcast_shape(x, y)
        if aval_of(x).shape != aval_of(y).shape:
            x = maybe_broadcast(shape, x)
            y = maybe_broadcast(shape, y)
        jac = select(
            e.eq(y, const(y, 0)),
            full_like(y, 0),
            e.mul(replace_zero(y), e.pow(x, e.sub(y, full_like(y, 1)))),
        )
    else:
        jac = e.mul(y, e.pow(x, e.sub(y, full_like(y, 1))))
    return e.mul(g, jac)


def _pow_jvp_rhs(g: Any, ans: Any, x: Any, y: Any) -> Any:
    y_dtype = aval_of(y).dtype
    return convert_element_type(e.mul(g, e.mul(tr.log(replace_zero(x)), ans)), y_dtype)


defjvp2(e.pow_p, _pow_jvp_lhs, _pow_jvp_rhs)


def _eq_meet(a: Any, b: Any) -> Any:
    a_dtype, b_dtype = aval_of(a).dtype, aval_of(b).dtype
    if a_dtype != b_dtype:
        higher = promote_types(a_dtype, b_dtype)
        if higher == a_dtype:
            a = convert_element_type(a, b_dtype)
        else:
            b = convert_element_type(b, a_dtype)
    return e.eq(a, b)


def _balanced_eq(x: Any, z: Any, y: Any) -> Any:
    """1 where `x` is the extremum `z`, halved where `y` ties with it: ties share the tangent."""
    return e.div(
        select(_eq_meet(x, z), full_like(z, 1), full_like(z, 0)),
        select(_eq_meet(y, z), full_like(z, 2), full_like(z, 1)),
    )


for _p in (e.max_p, e.min_p):
    defjvp2(
        _p,
        lambda g, ans, x, y: e.mul(g, _balanced_eq(x, ans, y)),
        lambda g, ans, x, y: e.mul(g, _balanced_eq(y, ans, x)),
    )


def _abs_jvp(g: Any, ans: Any, x: Any) -> Any:
    if aval_of(x).dtype.kind == "c":
        ratio = e.div(e.conj(x), replace_zero(convert_element_type(ans, aval_of(x).dtype)))
        return e.real(e.mul(g, ratio))
    return select(e.ge(x, full_like(x, 0, ())), g, e.neg(g))


defjvp2(e.abs_p, _abs_jvp)
defjvp2(e.square_p, lambda g, ans, x: e.mul(g, e.mul(const(x, 2), x)))

# --- complex parts: linear -----------------------------------------------------------------


def _real_transpose(ct: Any, x: Any) -> Sequence[Any]:
    return [e.complex(ct, np.zeros((), aval_of(ct).dtype))]


def _imag_transpose(ct: Any, x: Any) -> Sequence[Any]:
    return [e.complex(np.zeros((), aval_of(ct).dtype), e.neg(ct))]


def _complex_transpose(ct: Any, x: Any, y: Any) -> Sequence[Any]:
    ct_x = unbroadcast(x.aval, e.real(ct)) if is_undefined(x) else None
    ct_y = unbroadcast(y.aval, e.imag(e.neg(ct))) if is_undefined(y) else None
    return [ct_x, ct_y]


def _conj_transpose(ct: Any, x: Any, *, input_dtype: Any) -> Sequence[Any]:
    if np.dtype(input_dtype).kind == "c":
        return [e.conj(ct)]
    return [e.real(ct)]


deflinear(e.real_p, _real_transpose)
deflinear(e.imag_p, _imag_transpose)
deflinear(e.complex_p, _complex_transpose)
deflinear(e.conj_p, _conj_transpose)
