"""The incomplete gamma and beta functions written with `lax` ops, as JAX computes them on XLA.

These are the algorithms of XLA's `math.cc` that JAX lowers its `igamma`, `igammac`,
`igamma_grad_a` and `regularized_incomplete_beta` primitives with, and that `random_gamma_grad`
runs directly: the power series of the lower function (`_series`), Cephes' continued fraction
of the upper one (`_continued_fraction`), each with the derivative in `a` carried along, and
the Lentz-Thompson-Barnett evaluation of the incomplete beta continued fraction (DLMF 8.17.22).

The lowerings trace these into jaxprs; `random_gamma_grad` is staged as it is written here, so
the order of operations, and which step uses an operator (with NumPy-style promotion) and
which a `lax` function, follow JAX's equation sequence.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from functools import reduce
from typing import Any, Final

import numpy as np

from lamina_core.ir import dtypes
from lamina_core.lax._ad_common import aval_of
from lamina_core.lax._elementwise import abs as abs_
from lamina_core.lax._elementwise import (
    add,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    div,
    eq,
    ge,
    gt,
    le,
    lt,
    mul,
    ne,
    neg,
    reciprocal,
    sub,
)
from lamina_core.lax._reductions import reduce_or
from lamina_core.lax._selection import select
from lamina_core.lax._structural import broadcast_in_dim, convert_element_type, full_like
from lamina_core.lax._transcendental import digamma, exp, lgamma, log, log1p
from lamina_core.lax.control_flow import while_loop

Array = Any


class Mode(enum.Enum):
    """What the series and the continued fraction return."""

    VALUE = 1  # P(a, x) (the series) or Q(a, x) (the fraction)
    DERIVATIVE = 2  # d/da of it
    SAMPLE_DERIVATIVE = 3  # dx/da along P(a, x) = const: the reparameterized gamma sample's


_PYTHON_SCALARS: Final = {"f": float, "i": int, "u": int, "b": bool, "c": complex}


def lax_const(x: Any, value: Any) -> Any:
    """`value` in `x`'s dtype: a Python scalar (weak, so no promotion) when `x` is a weakly
    typed scalar whose dtype is that Python type's default, else a NumPy scalar (JAX's rule)."""
    aval = aval_of(x)
    dtype = np.dtype(aval.dtype)
    if aval.weak_type and not aval.shape:
        scalar = _PYTHON_SCALARS[dtype.kind](value)
        if dtypes.canonicalize_dtype(np.dtype(type(scalar))) == dtype:
            return scalar
    return np.array(value, dtype)


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(aval_of(x).shape)


def _is_nan(x: Array) -> Array:
    return ne(x, x)


def _any(predicates: Array) -> Array:
    return reduce_or(predicates, tuple(range(len(_shape(predicates)))))


def _any_of(predicates: Sequence[Array]) -> Array:
    return reduce(bitwise_or, predicates)


def up_and_broadcast(
    impl: Callable[..., Array],
) -> Callable[..., Array]:
    """`impl(*args, dtype=...)` on operands broadcast to one shape, 16-bit floats in float32."""

    def wrapped(*args: Any) -> Array:
        shapes = [_shape(a) for a in args]
        shape = np.broadcast_shapes(*shapes)
        args = tuple(
            broadcast_in_dim(a, shape, tuple(range(len(s))))
            for a, s in zip(args, shapes, strict=True)
        )
        dtype = np.dtype(aval_of(args[0]).dtype)
        narrow = dtype == dtypes.bfloat16 or dtype == np.float16
        if narrow:
            args = tuple(convert_element_type(a, np.float32) for a in args)
        out = impl(*args, dtype=np.dtype(np.float32) if narrow else dtype)
        return convert_element_type(out, dtype) if narrow else out

    return wrapped


def _series(ax: Array, x: Array, a: Array, enabled: Array, dtype: np.dtype, mode: Mode) -> Array:
    """sum over n >= 0 of x**n / ((a+1)...(a+n)), scaled to P(a, x) (or its derivatives)."""
    eps = dtypes.finfo(dtype).eps

    def body(carry: tuple[Array, ...]) -> tuple[Array, ...]:
        on, r, c, total, z, dc, dtotal = carry
        r = r + lax_const(r, 1.0)
        dc = dc * (z / r) - (c * z) / (r * r)
        dtotal = dtotal + dc
        c = c * (z / r)
        total = total + c
        if mode == Mode.VALUE:
            going = bitwise_and(on, c / total > eps)
        else:
            going = bitwise_and(on, abs(dc / dtotal) > eps)
        new = (r, c, total, z, dc, dtotal)
        return (going, *(select(on, n_, o) for n_, o in zip(new, carry[1:], strict=True)))

    init = (enabled, a, full_like(a, 1), full_like(a, 1), x, full_like(a, 0), full_like(a, 0))
    out = while_loop(lambda carry: _any(carry[0]), body, init)
    total, dtotal = out[3], out[6]
    if mode == Mode.VALUE:
        return (total * ax) / a
    dlogax_da = log(x) - digamma(a + lax_const(a, 1))
    if mode == Mode.DERIVATIVE:
        return ax * (total * dlogax_da + dtotal) / a
    return -(dtotal + total * dlogax_da) * x / a


def _continued_fraction(
    ax: Array, x: Array, a: Array, enabled: Array, dtype: np.dtype, mode: Mode
) -> Array:
    """Cephes' continued fraction for Q(a, x) (x > 1, x > a), or its derivatives in a."""
    eps = dtypes.finfo(dtype).eps

    def cond(carry: tuple[Array, ...]) -> Array:
        return bitwise_and(carry[5] < lax_const(carry[5], 2000), _any(carry[0]))

    def body(carry: tuple[Array, ...]) -> tuple[Array, ...]:
        (on, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, dans) = carry
        c = c + lax_const(c, 1)
        y = y + lax_const(y, 1)
        z = z + lax_const(z, 2)
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        usable = ne(qk, lax_const(qk, 0))
        r = pk / qk
        t = select(usable, abs_(div(sub(ans, r), r)), full_like(r, 1))
        ans = select(usable, r, ans)
        dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c
        dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c
        dans_new = select(usable, div(dpk - ans * dqk, qk), dans)
        dchange = select(usable, abs_(dans_new - dans), full_like(dans, 1))
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        dpkm2, dqkm2, dpkm1, dqkm1 = dpkm1, dqkm1, dpk, dqk
        # Rescale the recurrences before they overflow (their ratio is what matters).
        rescale = gt(abs_(pk), reciprocal(lax_const(pk, eps)))
        pkm2, pkm1, qkm2, qkm1, dpkm2, dqkm2, dpkm1, dqkm1 = (
            select(rescale, mul(v, lax_const(v, eps)), v)
            for v in (pkm2, pkm1, qkm2, qkm1, dpkm2, dqkm2, dpkm1, dqkm1)
        )
        if mode == Mode.VALUE:
            going = bitwise_and(on, t > eps)
        else:
            going = bitwise_and(on, dchange > lax_const(dchange, eps))
        new = (ans, t, y, z)
        kept = (*(select(on, n_, o) for n_, o in zip(new, carry[1:5], strict=True)), c)
        tail = (pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, dans_new)
        return (
            going,
            *kept,
            *(select(on, n_, o) for n_, o in zip(tail, carry[6:], strict=True)),
        )

    y = lax_const(a, 1) - a
    z = x + y + lax_const(x, 1)
    c = lax_const(x, 0)
    pkm2 = full_like(x, 1)
    qkm2 = x
    pkm1 = x + lax_const(x, 1)
    qkm1 = z * x
    ans = pkm1 / qkm1
    t = full_like(x, 1)
    dpkm2 = full_like(x, 0)
    dqkm2 = full_like(x, 0)
    dpkm1 = full_like(x, 0)
    dqkm1 = -x
    dans = (dpkm1 - ans * dqkm1) / qkm1
    init = (enabled, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, dans)
    out = while_loop(cond, body, init)
    ans = out[1]
    if mode == Mode.VALUE:
        return ans * ax
    dans = out[14]
    dlogax_da = log(x) - digamma(a)
    if mode == Mode.DERIVATIVE:
        return mul(ax, add(mul(ans, dlogax_da), dans))
    return neg(add(dans, mul(ans, dlogax_da)) * x)


def _log_prefactor(a: Array, x: Array) -> Array:
    """log(x**a e**-x / Gamma(a)), the common factor of the series and the fraction."""
    return a * log(x) - x - lgamma(a)


def _underflows(log_ax: Array, dtype: np.dtype) -> Array:
    return lt(log_ax, -log(dtypes.finfo(dtype).max))


def igamma_impl(a: Array, x: Array, *, dtype: np.dtype) -> Array:
    """P(a, x): the series below x = max(1, a), one minus the fraction above."""
    nan_in = bitwise_or(_is_nan(a), _is_nan(x))
    x_inf = eq(x, lax_const(x, float("inf")))
    a_zero = eq(a, lax_const(a, 0))
    x_zero = eq(x, lax_const(x, 0))
    domain_error = _any_of(
        [lt(x, lax_const(x, 0)), lt(a, lax_const(a, 0)), bitwise_and(a_zero, x_zero), nan_in]
    )
    upper = bitwise_and(ge(x, lax_const(x, 1)), gt(x, a))
    log_ax = _log_prefactor(a, x)
    underflow = _underflows(log_ax, dtype)
    ax = exp(log_ax)
    enabled = bitwise_not(_any_of([x_zero, domain_error, underflow, x_inf]))
    out = select(
        upper,
        lax_const(a, 1)
        - _continued_fraction(ax, x, a, bitwise_and(enabled, upper), dtype, Mode.VALUE),
        _series(ax, x, a, bitwise_and(enabled, bitwise_not(upper)), dtype, Mode.VALUE),
    )
    out = select(x_zero, full_like(a, 0), out)
    out = select(x_inf, full_like(a, 1), out)
    return select(domain_error, full_like(a, float("nan")), out)


def igammac_impl(a: Array, x: Array, *, dtype: np.dtype) -> Array:
    """Q(a, x): one minus the series below x = max(1, a), the fraction above."""
    nan_in = bitwise_or(_is_nan(a), _is_nan(x))
    a_zero = eq(a, lax_const(a, 0))
    x_zero = eq(x, lax_const(x, 0))
    x_inf = eq(x, lax_const(x, float("inf")))
    domain_error = _any_of(
        [lt(x, lax_const(x, 0)), lt(a, lax_const(a, 0)), bitwise_and(a_zero, x_zero), nan_in]
    )
    lower = bitwise_or(lt(x, lax_const(x, 1)), lt(x, a))
    log_ax = _log_prefactor(a, x)
    underflow = _underflows(log_ax, dtype)
    enabled = bitwise_not(_any_of([domain_error, underflow, x_inf, a_zero]))
    ax = exp(log_ax)
    series = _series(ax, x, a, bitwise_and(enabled, lower), dtype, Mode.VALUE)
    fraction = _continued_fraction(
        ax, x, a, bitwise_and(enabled, bitwise_not(lower)), dtype, Mode.VALUE
    )
    out = select(lower, lax_const(a, 1) - series, fraction)
    out = select(bitwise_or(x_inf, a_zero), full_like(out, 0), out)
    return select(domain_error, full_like(a, float("nan")), out)


def _grad_impl(a: Array, x: Array, dtype: np.dtype, underflow_dtype: Any, mode: Mode) -> Array:
    nan_in = bitwise_or(_is_nan(a), _is_nan(x))
    x_zero = eq(x, full_like(x, 0))
    domain_error = bitwise_or(lt(x, full_like(x, 0)), le(a, full_like(a, 0)))
    upper = bitwise_and(gt(x, full_like(x, 1)), gt(x, a))
    log_ax = _log_prefactor(a, x)
    underflow = _underflows(log_ax, underflow_dtype)
    ax = exp(log_ax)
    enabled = bitwise_not(
        bitwise_or(bitwise_or(bitwise_or(x_zero, domain_error), underflow), nan_in)
    )
    out = select(
        upper,
        -_continued_fraction(ax, x, a, bitwise_and(enabled, upper), dtype, mode),
        _series(ax, x, a, bitwise_and(enabled, bitwise_not(upper)), dtype, mode),
    )
    out = select(x_zero, full_like(out, 0), out)
    return select(bitwise_or(domain_error, nan_in), full_like(a, float("nan")), out)


def igamma_grad_a_impl(a: Array, x: Array, *, dtype: np.dtype) -> Array:
    """dP(a, x)/da."""
    return _grad_impl(a, x, dtype, dtype, Mode.DERIVATIVE)


def random_gamma_grad_impl(a: Array, x: Array, *, dtype: np.dtype) -> Array:
    """The derivative of a Gamma(a, 1) sample x in a, at fixed P(a, x)."""
    return _grad_impl(a, x, dtype, aval_of(a).dtype, Mode.SAMPLE_DERIVATIVE)


_NumeratorFn = Callable[..., Array]


def _lentz(
    *,
    iterations: int,
    small: np.ndarray,
    threshold: np.ndarray,
    numerator: _NumeratorFn,
    denominator: _NumeratorFn,
    inputs: Sequence[Array],
) -> Array:
    """The continued fraction b0 + a1/(b1 + a2/(b2 + ...)) by the modified Lentz method."""

    def cond(carry: list[Array]) -> Array:
        return bitwise_and(lt(carry[0], iterations), carry[1])

    def body(carry: list[Array]) -> list[Array]:
        n_, _, c_prev, d_prev, h_prev = carry
        num = numerator(n_, *inputs)
        den = denominator(n_, *inputs)
        c = add(den, div(num, c_prev))
        tiny = full_like(c, small)
        c = select(lt(abs(c), tiny), tiny, c)
        d = add(den, mul(num, d_prev))
        d = select(lt(abs(d), tiny), tiny, d)
        d = reciprocal(d)
        delta = mul(c, d)
        h = mul(h_prev, delta)
        unconverged = _any(ge(abs(sub(delta, lax_const(delta, 1.0))), threshold))
        return [n_ + 1, unconverged, c, d, h]

    first = denominator(0, *inputs)
    h = select(lt(abs(first), small), broadcast_in_dim(small, _shape(first), ()), first)
    out = while_loop(cond, body, [1, True, h, full_like(h, 0), h])
    return out[4]


def betainc_impl(a: Array, b: Array, x: Array, *, dtype: np.dtype) -> Array:
    """I_x(a, b) by its continued fraction, on the side of x where that converges fast."""
    shape = _shape(a)

    def numerator(n_: Array, a: Array, b: Array, x: Array) -> Array:
        n_all = broadcast_in_dim(n_, shape, ())
        even = eq(n_all % full_like(n_all, 2), full_like(n_all, 0))
        is_one = eq(n_all, full_like(n_all, 1))
        m_int = (n_all - full_like(n_all, 1)) // full_like(n_all, 2)
        m_zero = eq(m_int, full_like(m_int, 0))
        m = convert_element_type(m_int, dtype)
        one = full_like(a, 1)
        two = full_like(a, 2.0)
        # For m == 0 this form avoids the loss that flushing denormals to zero brings at tiny a.
        first_even = -(a + b) * x / (a + one)
        even_term = select(
            m_zero,
            first_even,
            -(a + m) * (a + b + m) * x / ((a + two * m) * (a + two * m + one)),
        )
        odd_term = m * (b - m) * x / ((a + two * m - one) * (a + two * m))
        term = select(even, even_term, odd_term)
        return select(is_one, full_like(x, 1.0), term)

    def denominator(n_: Array, a: Array, b: Array, x: Array) -> Array:
        n_all = broadcast_in_dim(n_, shape, ())
        return select(eq(n_all, full_like(n_all, 0)), full_like(x, 0), full_like(x, 1))

    a_zero = bitwise_or(eq(a, full_like(a, 0)), eq(b, full_like(b, float("inf"))))
    b_zero = bitwise_or(eq(b, full_like(b, 0)), eq(a, full_like(a, float("inf"))))
    x_zero = eq(x, full_like(x, 0))
    x_one = eq(x, full_like(x, 1))
    x_not_zero = bitwise_not(x_zero)
    x_not_one = bitwise_not(x_one)
    nan_in = bitwise_or(bitwise_or(_is_nan(a), _is_nan(b)), _is_nan(x))
    is_zero = bitwise_or(bitwise_and(b_zero, x_not_one), bitwise_and(a_zero, x_zero))
    is_one = bitwise_or(bitwise_and(a_zero, x_not_zero), bitwise_and(b_zero, x_one))
    out_of_domain = bitwise_or(
        bitwise_or(
            bitwise_or(lt(a, full_like(a, 0)), lt(b, full_like(b, 0))), lt(x, full_like(x, 0))
        ),
        gt(x, full_like(x, 1)),
    )
    is_nan = bitwise_or(out_of_domain, bitwise_or(bitwise_and(a_zero, b_zero), nan_in))
    # The fraction converges fast for x < (a+1)/(a+b+2); elsewhere use I_x(a,b) = 1 - I_1-x(b,a).
    direct = lt(x, (a + full_like(a, 1)) / (a + b + full_like(b, 2.0)))
    a, b = select(direct, a, b), select(direct, b, a)
    x = select(direct, x, sub(full_like(x, 1), x))
    eps_half = (dtypes.finfo(dtype).eps / 2).astype(dtype)
    fraction = _lentz(
        iterations=200 if dtype == np.float32 else 600,
        small=eps_half,
        threshold=eps_half,
        numerator=numerator,
        denominator=denominator,
        inputs=[a, b, x],
    )
    # a Gamma(a) -> 1 as a -> 0: below `very_small` drop the 1/(a Beta) factor's Gamma(a) / a.
    very_small = (dtypes.finfo(dtype).tiny * 2).astype(dtype)
    lbeta_rest = lgamma(b) - lgamma(a + b)
    lbeta = lgamma(a) + lbeta_rest
    factor = select(
        lt(a, full_like(a, very_small)),
        exp(log1p(-x) * b - lbeta_rest),
        exp(log(x) * a + log1p(-x) * b - lbeta) / a,
    )
    out = fraction * factor
    out = select(direct, out, sub(full_like(out, 1), out))
    out = select(is_zero, full_like(a, 0), out)
    out = select(is_one, full_like(a, 1), out)
    return select(is_nan, full_like(a, float("nan")), out)


IMPLS: Final[dict[str, Callable[..., Array]]] = {
    "igamma": igamma_impl,
    "igammac": igammac_impl,
    "igamma_grad_a": igamma_grad_a_impl,
    "regularized_incomplete_beta": betainc_impl,
}
"""The implementation each primitive lowers with (by primitive name)."""
