"""Differentiation rules of the elementwise primitives, with JAX's formulas and op order.

Each rule is the formula JAX 0.10.2 uses (same equations in the same order), so transformed
jaxprs print as JAX prints them and give the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters.helpers import defbilinear
from lamina_core.interpreters.jvp import defjvp, defjvp2, defjvp_zero, jvp_rules, linear_jvp
from lamina_core.interpreters.linearize import linearization_rules
from lamina_core.interpreters.transpose import is_undefined, transpose_rules
from lamina_core.interpreters.zeros import Zero, zero_of
from lamina_core.lax import _elementwise as e
from lamina_core.lax import _transcendental as tr
from lamina_core.lax._ad_common import aval_of, const, maybe_broadcast, one, unbroadcast, zeros_like
from lamina_core.values import typeof

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
           e.le_p, e.gt_p, e.ge_p, e.and_p, e.or_p, e.xor_p, e.not_p):  # fmt: skip
    defjvp_zero(_p)
