"""Gauss's hypergeometric function `hyp2f1(a, b, c, x)` of `jax.scipy.special`, computed as JAX
0.10.2 computes it (Pearson, Olver and Porter 2014, arXiv:1407.7786; Abramowitz and Stegun
15.3.10-12):

- the Taylor series (their eq. 4.1) in a `while_loop`, up to 250 terms, or its finite sum (a
  `fori_loop`) where a or b is a non-positive integer;
- for x > 0.9 with c - a - b an integer, the digamma expansion about x = 1 (A&S 15.3.10-12);
- Euler's transformation (1 - x)**(c - a - b) 2F1(c - a, c - b; c; x) for c - a - b <= -1;
- the closed forms 1, inf, (1 - x)**-a, (1 - x)**-b and Gauss's sum at x = 1.

Elementwise (`vectorize`) under `jit`; a `custom_jvp` with series rules in a, b and c and
(ab / c) 2F1(a + 1, b + 1; c + 1; x) in x.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.custom_derivatives import custom_jvp
from lamina_core.ir import dtypes
from lamina_core.numpy import dtype_of
from lamina_core.numpy import promotion as p
from lamina_core.scipy._special_gamma import digamma, gamma
from lamina_core.transforms import Jitted

Array = Any
State = tuple[Any, ...]

_MAX_TERMS: Final = 250


def _terminal(a: Array, b: Array, c: Array, x: Array) -> Array:
    """The finite series where a (or b, swapped in) is a non-positive integer."""
    eps = dtypes.finfo(dtype_of(x)).eps * 50
    ib = jnp.round(b)
    # Swap in b when it is the integer bounding the sum (unless c, a non-positive integer,
    # would hit zero first). Staged in JAX's order.
    land = jnp.logical_and
    swap = land(
        b < a,
        land(jnp.abs(b - ib) < eps, jnp.logical_not(land(c % 1 == 0, land(c <= 0, c > b)))),
    )
    orig_a = a
    a = jnp.where(swap, b, a)
    b = jnp.where(swap, orig_a, b)
    a = jnp.abs(a)

    def body(i: Array, state: State) -> State:
        serie, term = state
        term *= -(a - i + 1) / (c + i - 1) * (b + i - 1) / i * x
        serie += term
        return serie, term

    dtype = dtype_of(x)
    init = (jnp.array(1, dtype=dtype), jnp.array(1, dtype=dtype))
    return lax.fori_loop(jnp.array(1, dtype=dtype_of(a)), a + 1, body, init)[0]


def _taylor(a: Array, b: Array, c: Array, x: Array) -> Array:
    rtol = dtypes.finfo(dtype_of(x)).eps

    def body(state: State) -> State:
        serie, k, term = state
        serie += term
        term *= (a + k - 1) * (b + k - 1) / (c + k - 1) / k * x
        return serie, k + 1, term

    def cond(state: State) -> Any:
        serie, k, term = state
        return (k < _MAX_TERMS) & (lax.abs(term) > rtol * lax.abs(serie))

    dtype = dtype_of(x)
    init = (jnp.array(0, dtype=dtype), jnp.array(1, dtype=dtype), jnp.array(1, dtype=dtype))
    return lax.while_loop(cond, body, init)[0]


def _terminal_or_taylor(a: Array, b: Array, c: Array, x: Array) -> Array:
    eps = dtypes.finfo(dtype_of(x)).eps * 50
    d = c - a - b
    ia, ib, id_ = jnp.round(a), jnp.round(b), jnp.round(d)
    neg_int_a = jnp.logical_and(a <= 0, jnp.abs(a - ia) < eps)
    neg_int_b = jnp.logical_and(b <= 0, jnp.abs(b - ib) < eps)
    terminates = jnp.logical_or(neg_int_a, neg_int_b)
    infinite = jnp.logical_not(terminates)
    index = jnp.where(
        jnp.logical_and(x > 0.9, infinite),
        jnp.where(jnp.abs(d - id_) >= eps, 0, 1),
        jnp.where(terminates, 2, 0),
    )
    return lax.select_n(
        index, _taylor(a, b, c, x), _digamma_transform(a, b, c, x), _terminal(a, b, c, x)
    )


def _digamma_transform(a: Array, b: Array, c: Array, x: Array) -> Array:
    """A&S 15.3.10-12: the expansion about x = 1 when c - a - b is (near) an integer."""
    rtol = dtypes.finfo(dtype_of(x)).eps
    d = c - a - b
    s = 1 - x
    rd = jnp.round(d)
    e = jnp.where(rd >= 0, d, -d)
    d1 = jnp.where(rd >= 0, d, jnp.array(0, dtype=dtype_of(d)))
    d2 = jnp.where(rd >= 0, jnp.array(0, dtype=dtype_of(d)), d)
    ard = jnp.where(rd >= 0, rd, -rd).astype("int32")
    ax = jnp.log(s)
    y = digamma(1.0) + digamma(1.0 + e) - digamma(a + d1) - digamma(b + d1) - ax
    y /= gamma(e + 1.0)
    p0 = (a + d1) * (b + d1) * s / gamma(e + 2.0)

    def cond(state: State) -> Any:
        q, t, y = state[6], state[9], state[10]
        return jnp.logical_and(t < _MAX_TERMS, jnp.abs(q) >= rtol * jnp.abs(y))

    def body(state: State) -> State:
        a, ax, b, d1, e, p, q, r, s, t, y = state
        r = (
            digamma(1.0 + t) + digamma(1.0 + t + e) - digamma(a + t + d1)
            - digamma(b + t + d1) - ax
        )  # fmt: skip
        q = p * r
        y += q
        p *= s * (a + t + d1) / (t + 1.0)
        p *= (b + t + d1) / (t + 1.0 + e)
        t += 1.0
        return a, ax, b, d1, e, p, q, r, s, t, y

    dtype = dtype_of(x)
    init = (a, ax, b, d1, e, p0, y, jnp.array(0, dtype=dtype), s, jnp.array(1, dtype=dtype), y)
    y = lax.while_loop(cond, body, init)[10]

    def compute_sum(y: Array) -> Array:
        y1 = jnp.array(1, dtype=dtype)
        t = jnp.array(0, dtype=dtype)
        p = jnp.array(1, dtype=dtype)

        def for_body(i: Array, state: State) -> State:
            a, b, d2, e, p, s, t, y1 = state
            r = 1.0 - e + t
            p *= s * (a + t + d2) * (b + t + d2) / r
            t += 1.0
            p /= t
            y1 += p
            return a, b, d2, e, p, s, t, y1

        y1 = lax.fori_loop(1, ard, for_body, (a, b, d2, e, p, s, t, y1))[-1]
        p = gamma(c)
        y1 *= gamma(e) * p / (gamma(a + d1) * gamma(b + d1))
        y *= p / (gamma(a + d2) * gamma(b + d2))
        y = jnp.where((ard & 1) != 0, -y, y)
        q = s**rd
        return jnp.where(rd > 0, y * q + y1, y + y1 * q)

    return jnp.where(rd == 0, y * gamma(c) / (gamma(a) * gamma(b)), compute_sum(y))


def _hyp2f1_of(a: Any, b: Any, c: Any, x: Any) -> Array:
    a, b, c, x = p.promote_args_inexact("hyp2f1", a, b, c, x)
    eps = dtypes.finfo(dtype_of(x)).eps * 50
    d = c - a - b
    s = 1 - x
    ca = c - a
    cb = c - b
    id_ = jnp.round(d)
    lnot, land, lor, where = jnp.logical_not, jnp.logical_and, jnp.logical_or, jnp.where
    index = where(
        lor(x == 0, land(lor(a == 0, b == 0), c != 0)), 0,
        where(
            lor(c == 0, land(c < 0, c % 1 == 0)), 1,
            where(
                land(d <= -1, lnot(land(jnp.abs(d - id_) >= eps, s < 0))), 2,
                where(
                    land(d <= 0, x == 1), 1,
                    where(
                        land(x < 1, b == c), 3,
                        where(land(x < 1, a == c), 4, where(x > 1, 1, where(x == 1, 5, 6))),
                    ),
                ),
            ),
        ),
    )  # fmt: skip
    dtype = dtype_of(x)
    return lax.select_n(
        index,
        jnp.array(1, dtype=dtype),
        jnp.array(np.inf, dtype=dtype),
        s**d * _terminal_or_taylor(ca, cb, c, x),
        s ** (-a),
        s ** (-b),
        gamma(c) * gamma(d) / (gamma(ca) * gamma(cb)),
        _terminal_or_taylor(a, b, c, x),
    )


_hyp2f1_of.__name__ = _hyp2f1_of.__qualname__ = "hyp2f1"  # the name its jit prints, as in JAX
hyp2f1: Final = custom_jvp(Jitted(jnp.vectorize(_hyp2f1_of)))
"""Gauss's hypergeometric function 2F1(a, b; c; x) = sum_k (a)_k (b)_k / (c)_k x**k / k!."""


def _parameter_series(weight: Any) -> Any:
    """The derivative in a parameter: sum_k term_k weight(k), term_k the k-th series term."""

    def series(a: Array, b: Array, c: Array, x: Array) -> Array:
        precision = dtypes.finfo(dtype_of(x)).eps

        def body(state: State) -> State:
            serie, k, term = state
            serie += term * weight(a, b, c, k)
            term *= (a + k) * (b + k) / (c + k) / (k + 1) * x
            return serie, k + 1, term

        def cond(state: State) -> Any:
            serie, k, term = state
            return (k < _MAX_TERMS) & (lax.abs(term) / lax.abs(serie) > precision)

        return lax.while_loop(cond, body, (0, 1, a * b / c * x))[0]

    return series


_da = _parameter_series(lambda a, b, c, k: digamma(a + k) - digamma(a))
_db = _parameter_series(lambda a, b, c, k: digamma(b + k) - digamma(b))
_dc = _parameter_series(lambda a, b, c, k: digamma(c) - digamma(c + k))


def _dx(a: Array, b: Array, c: Array, x: Array) -> Array:
    return a * b / c * hyp2f1(a + 1, b + 1, c + 1, x)


for _f, _name in ((_da, "a"), (_db, "b"), (_dc, "c"), (_dx, "x")):
    _f.__name__ = _f.__qualname__ = f"_hyp2f1_{_name}_derivative"  # the names JAX's jits print
_hyp2f1_da: Final = Jitted(jnp.vectorize(_da))
_hyp2f1_db: Final = Jitted(jnp.vectorize(_db))
_hyp2f1_dc: Final = Jitted(jnp.vectorize(_dc))
_hyp2f1_dx: Final = Jitted(_dx)

hyp2f1.defjvps(
    lambda a_dot, ans, a, b, c, x: _hyp2f1_da(a, b, c, x) * a_dot,
    lambda b_dot, ans, a, b, c, x: _hyp2f1_db(a, b, c, x) * b_dot,
    lambda c_dot, ans, a, b, c, x: _hyp2f1_dc(a, b, c, x) * c_dot,
    lambda x_dot, ans, a, b, c, x: _hyp2f1_dx(a, b, c, x) * x_dot,
)
