"""Jet rules of lax's primitives: JAX's set, formula for formula.

Each recurrence computes the output's Taylor coefficients v_k from the operands' (u_k, w_k)
in JAX's order of operations (Python's `sum`, starting from 0, included), so a staged jet
prints as JAX's. Primitives missing here have no jet rule in JAX either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.interpreters import add_any_p
from lamina_core.ir import Primitive
from lamina_core.ir.dtypes import promote_types
from lamina_core.jet._helpers import def_comp, def_deriv, deflinear, defzero
from lamina_core.jet._trace import host_constant, jet2, jet_rules

for _p in (
    lax.le_p, lax.lt_p, lax.gt_p, lax.ge_p, lax.eq_p, lax.ne_p, lax.not_p, lax.and_p,
    lax.or_p, lax.xor_p, lax.floor_p, lax.ceil_p, lax.round_p, lax.sign_p, lax.stop_gradient_p,
    lax.is_finite_p, lax.shift_left_p, lax.shift_right_arithmetic_p, lax.shift_right_logical_p,
    lax.bitcast_convert_type_p,
):  # fmt: skip
    defzero(_p)

for _p in (
    lax.neg_p, lax.real_p, lax.complex_p, lax.conj_p, lax.imag_p, lax.add_p, add_any_p,
    lax.sub_p, lax.convert_element_type_p, lax.broadcast_in_dim_p, lax.concatenate_p,
    lax.split_p, lax.stack_p, lax.unstack_p, lax.pad_p, lax.reshape_p, lax.squeeze_p,
    lax.rev_p, lax.transpose_p, lax.slice_p, lax.reduce_sum_p, lax.reduce_window_sum_p,
    lax.fft_p, lax.copy_p, lax.device_put_p, lax.reshard_p, lax.cumsum_p,
):  # fmt: skip
    deflinear(_p)


def _dynamic_slice_jet(primals_in: Sequence[Any], series_in: Sequence[Any], **params: Any) -> Any:
    operand, *starts = primals_in
    out = lax.dynamic_slice_p.bind(operand, *starts, **params)
    return out, [
        lax.dynamic_slice_p.bind(ts[0], *starts, **params) for ts in zip(*series_in, strict=True)
    ]


def _dynamic_update_slice_jet(
    primals_in: Sequence[Any], series_in: Sequence[Any], **params: Any
) -> Any:
    operand, update, *starts = primals_in
    out = lax.dynamic_update_slice_p.bind(operand, update, *starts, **params)
    series = [
        lax.dynamic_update_slice_p.bind(*ts[:2], *starts, **params)
        for ts in zip(*series_in, strict=True)
    ]
    return out, series


jet_rules[lax.dynamic_slice_p] = _dynamic_slice_jet
jet_rules[lax.dynamic_update_slice_p] = _dynamic_update_slice_jet


def _cumulative_jet(
    combine: Callable[[Any, Any], Any],
    primals_in: Sequence[Any],
    series_in: Sequence[Any],
    *,
    axis: int,
    reverse: bool,
) -> Any:
    # The parallel prefix scan, whatever the backend: reduce_window has no jet rule.
    scan = partial(lax.associative_scan, combine, axis=axis, reverse=reverse)
    return jet2(scan, primals_in, series_in)


jet_rules[lax.cumprod_p] = partial(_cumulative_jet, lax.mul)
jet_rules[lax.cummax_p] = partial(_cumulative_jet, lax.max)
jet_rules[lax.cummin_p] = partial(_cumulative_jet, lax.min)


def _erf_deriv(x: Any) -> Any:
    return lax.mul(lax.lax_const(x, 2.0 / np.sqrt(np.pi)), lax.exp(lax.neg(lax.square(x))))


def_deriv(lax.erf_p, _erf_deriv)
def_comp(lax.expm1_p, lambda x: lax.exp(x) - 1)
def_comp(lax.log1p_p, lambda x: lax.log(1 + x))
def_comp(lax.sqrt_p, lambda x: x**0.5)
def_comp(lax.square_p, lambda x: x * x)
def_comp(lax.rsqrt_p, lambda x: x**-0.5)
def_comp(lax.asinh_p, lambda x: lax.log(x + lax.sqrt(lax.square(x) + 1)))
def_comp(lax.acosh_p, lambda x: lax.log(x + lax.sqrt(lax.square(x) - 1)))
def_comp(lax.atanh_p, lambda x: 0.5 * lax.log(lax.div(1 + x, 1 - x)))
def_comp(lax.erfc_p, lambda x: 1 - lax.erf(x))
def_comp(lax.rem_p, lambda x, y: x - y * lax.floor(x / y))
def_comp(lax.clamp_p, lambda a, x, b: lax.min(lax.max(a, x), b))


def _conv(c: Sequence[Any], u: Sequence[Any], k: int) -> Any:
    """The k-th coefficient of `f(x)` from those of `f'(x)` (`c`) and `x` (`u`)."""
    return sum(j * c[k - j] * u[j] for j in range(1, k + 1)) / k


def _erf_inv_jet(primals_in: Sequence[Any], series_in: Sequence[Any], **_: Any) -> Any:
    (x,) = primals_in
    (series,) = series_in
    n = len(series)
    u: list[Any] = [x, *series]
    v: list[Any] = [lax.erf_inv(x)] + [None] * n
    # erf_inv' = sqrt(pi)/2 exp(erf_inv(x)^2): its series follows v's, one order behind.
    scale = np.sqrt(np.pi) / 2.0
    c: list[Any] = [lax.mul(scale, lax.exp(lax.square(v[0])))] + [None] * (n - 1)
    sq: list[Any] = [lax.square(v[0])] + [None] * (n - 1)
    ex: list[Any] = [lax.exp(sq[0])] + [None] * (n - 1)
    for k in range(1, n):
        v[k] = _conv(c, u, k)
        sq[k] = sum(v[k - j] * v[j] for j in range(k + 1))
        ex[k] = sum(j * ex[k - j] * sq[j] for j in range(1, k + 1)) / k
        c[k] = scale * ex[k]
    v[n] = _conv(c, u, n)
    return v[0], v[1:]


jet_rules[lax.erf_inv_p] = _erf_inv_jet


def _exp_jet(primals_in: Sequence[Any], series_in: Sequence[Any], **_: Any) -> Any:
    (x,) = primals_in
    (series,) = series_in
    u = [x, *series]
    v: list[Any] = [lax.exp(x)] + [None] * len(series)
    for k in range(1, len(v)):
        v[k] = _conv(v, u, k)
    return v[0], v[1:]


def _pow_jet(primals_in: Sequence[Any], series_in: Sequence[Any], **_: Any) -> Any:
    base, exponent = primals_in
    # x^r = exp(r log x): the exp recurrence over the series of r log x.
    z, z_series = jet2(lambda x, y: lax.mul(y, lax.log(x)), primals_in, series_in)
    u = [z, *z_series]
    v: list[Any] = [base**exponent] + [None] * len(z_series)
    for k in range(1, len(v)):
        v[k] = _conv(v, u, k)
    return v[0], v[1:]


def _pow_by_squaring(x: Any, n: float) -> Any:
    # `n` halves as a float, as JAX's does: the products (and so the jaxpr) are JAX's.
    if n < 0:
        return _pow_by_squaring(1 / x, -n)
    if n == 0:
        return 1
    if n % 2 == 0:
        return _pow_by_squaring(x * x, n / 2)
    return x * _pow_by_squaring(x * x, (n - 1) / 2)


def _integer_pow_jet(primals_in: Sequence[Any], series_in: Sequence[Any], *, y: int) -> Any:
    if y == 0:
        return jet2(jnp.ones_like, primals_in, series_in)
    return jet2(lambda x: _pow_by_squaring(x, y), primals_in, series_in)


jet_rules[lax.exp_p] = _exp_jet
jet_rules[lax.pow_p] = _pow_jet
jet_rules[lax.integer_pow_p] = _integer_pow_jet


def _logistic_jet(primals_in: Sequence[Any], series_in: Sequence[Any], **_: Any) -> Any:
    (x,) = primals_in
    (series,) = series_in
    u = [x, *series]
    v: list[Any] = [lax.logistic(x)] + [None] * len(series)
    # e: the series of logistic' = logistic (1 - logistic).
    e: list[Any] = [v[0] * (1 - v[0])] + [None] * len(series)
    for k in range(1, len(v)):
        v[k] = _conv(e, u, k)
        e[k] = (1 - v[0]) * v[k] - sum(v[j] * v[k - j] for j in range(1, k + 1))
    return v[0], v[1:]


def _tanh_jet(primals_in: Sequence[Any], series_in: Sequence[Any], **_: Any) -> Any:
    # tanh x = 2 logistic(2x) - 1.
    (x,) = primals_in
    (series,) = series_in
    out, out_series = _logistic_jet((2 * x,), ([2 * t for t in series],))
    doubled = [2 * t for t in out_series]
    return 2 * out - 1, doubled


def _log_jet(primals_in: Sequence[Any], series_in: Sequence[Any], **_: Any) -> Any:
    (x,) = primals_in
    (series,) = series_in
    u = [x, *series]
    v: list[Any] = [lax.log(x)] + [None] * len(series)
    for k in range(1, len(v)):
        conv = sum(j * v[j] * u[k - j] for j in range(1, k))
        v[k] = (u[k] - conv / k) / u[0]
    return v[0], v[1:]


jet_rules[lax.logistic_p] = _logistic_jet
jet_rules[lax.tanh_p] = _tanh_jet
jet_rules[lax.log_p] = _log_jet


def _atan2_jet(primals_in: Sequence[Any], series_in: Sequence[Any], **_: Any) -> Any:
    x, y = primals_in
    out = lax.atan2(x, y)
    # atan2(x, y) = atan(x / y), and atan' = 1 / (1 + z^2).
    z, z_series = jet2(lax.div, primals_in, series_in)
    one = host_constant(lax.lax_const(z, 1))
    c0, cs = jet2(lambda t: lax.div(one, 1 + lax.square(t)), (z,), (z_series,))
    c = [c0, *cs]
    u = [z, *z_series]
    v: list[Any] = [out] + [None] * len(z_series)
    for k in range(1, len(v)):
        v[k] = _conv(c, u, k)
    return v[0], v[1:]


def _div_jet(primals_in: Sequence[Any], series_in: Sequence[Any], **_: Any) -> Any:
    x, y = primals_in
    x_terms, y_terms = series_in
    u = [x, *x_terms]
    w = [y, *y_terms]
    v: list[Any] = [None] * len(u)
    for k in range(len(v)):
        conv = sum(v[j] * w[k - j] for j in range(k))
        v[k] = (u[k] - conv) / w[0]
    return v[0], v[1:]


jet_rules[lax.atan2_p] = _atan2_jet
jet_rules[lax.div_p] = _div_jet


def _sinusoidal_jet(
    sign: int,
    fs: tuple[Callable[[Any], Any], Callable[[Any], Any]],
    which: int,
    primals_in: Sequence[Any],
    series_in: Sequence[Any],
    **_: Any,
) -> Any:
    """sin and cos (sign -1), sinh and cosh (sign 1): each's series from the other's;
    `which` picks the first (0) or second (1) of the pair."""
    (x,) = primals_in
    (series,) = series_in
    u = [x, *series]
    s: list[Any] = [fs[0](x)] + [None] * len(series)
    c: list[Any] = [fs[1](x)] + [None] * len(series)
    for k in range(1, len(s)):
        s[k] = sum(j * u[j] * c[k - j] for j in range(1, k + 1)) / k
        c[k] = sum(j * u[j] * s[k - j] for j in range(1, k + 1)) / k * sign
    out = (s, c)[which]
    return out[0], out[1:]


jet_rules[lax.sin_p] = partial(_sinusoidal_jet, -1, (lax.sin, lax.cos), 0)
jet_rules[lax.cos_p] = partial(_sinusoidal_jet, -1, (lax.sin, lax.cos), 1)
jet_rules[lax.sinh_p] = partial(_sinusoidal_jet, 1, (lax.sinh, lax.cosh), 0)
jet_rules[lax.cosh_p] = partial(_sinusoidal_jet, 1, (lax.sinh, lax.cosh), 1)


def _bilinear_jet(
    prim: Primitive, primals_in: Sequence[Any], series_in: Sequence[Any], **params: Any
) -> Any:
    """A product's coefficients: v_k = sum_j op(u_j, w_{k-j}) (Leibniz)."""
    x, y = primals_in
    x_terms, y_terms = series_in
    u = [x, *x_terms]
    w = [y, *y_terms]
    v = [sum(prim.bind(u[j], w[k - j], **params) for j in range(k + 1)) for k in range(len(u))]
    return v[0], v[1:]


for _p in (lax.dot_general_p, lax.mul_p, lax.conv_general_dilated_p):
    jet_rules[_p] = partial(_bilinear_jet, _p)


def _gather_jet(primals_in: Sequence[Any], series_in: Sequence[Any], **params: Any) -> Any:
    operand, indices = primals_in
    gs, _ = series_in
    out = lax.gather_p.bind(operand, indices, **params)
    return out, [lax.gather_p.bind(g, indices, **params) for g in gs]


jet_rules[lax.gather_p] = _gather_jet


def _eq_meet(a: Any, b: Any) -> Any:
    a_dtype, b_dtype = jnp.result_type(a), jnp.result_type(b)
    if a_dtype != b_dtype:
        if promote_types(a_dtype, b_dtype) == a_dtype:
            a = lax.convert_element_type(a, b_dtype)
        else:
            b = lax.convert_element_type(b, a_dtype)
    return lax.eq(a, b)


def _chooser_jet(
    reduce: Callable[..., Any], primals_in: Sequence[Any], series_in: Sequence[Any], **params: Any
) -> Any:
    """reduce_max/min: each term averaged over the positions attaining the extremum."""
    (operand,) = primals_in
    (gs,) = series_in
    out = reduce(operand, **params)
    axes = params["axes"]
    shape = [1 if i in axes else d for i, d in enumerate(jnp.shape(operand))]
    where = lax.convert_element_type(_eq_meet(operand, lax.reshape(out, shape)), gs[0].dtype)
    counts = lax.reduce_sum(where, axes)
    return out, [lax.div(lax.reduce_sum(lax.mul(g, where), axes), counts) for g in gs]


jet_rules[lax.reduce_max_p] = partial(_chooser_jet, lax.reduce_max)
jet_rules[lax.reduce_min_p] = partial(_chooser_jet, lax.reduce_min)


def _abs_jet(primals_in: Sequence[Any], series_in: Sequence[Any], **params: Any) -> Any:
    (x,) = primals_in
    zero = lax.full_like(x, 0, shape=())
    out = lax.abs_p.bind(x, **params)
    signs = lax.select(lax.lt(x, zero), lax.full_like(x, -1), lax.full_like(x, 1.0))
    return out, [signs * t for (t,) in zip(*series_in, strict=True)]


def _select_n_jet(primals_in: Sequence[Any], series_in: Sequence[Any], **_: Any) -> Any:
    which, *cases = primals_in
    out = lax.select_n(which, *cases)
    return out, [lax.select_n(which, *ts[1:]) for ts in zip(*series_in, strict=True)]


jet_rules[lax.abs_p] = _abs_jet
jet_rules[lax.select_n_p] = _select_n_jet


def _extremum_jet(
    greater: bool, primals_in: Sequence[Any], series_in: Sequence[Any], **_: Any
) -> Any:
    """max (`greater`) and min: the chosen operand's terms, their mean where the two tie.
    As in JAX, max broadcasts its operands first and min does not."""
    x, y = jnp.broadcast_arrays(*primals_in) if greater else primals_in
    pick = x > y if greater else x < y
    tie = x == y

    def choose(x_k: Any, y_k: Any) -> Any:
        chosen = lax.select(pick, x_k, y_k)
        return lax.select(tie, (x_k + y_k) / 2, chosen)

    out = lax.select(pick, x, y)
    if greater:
        return out, [choose(*jnp.broadcast_arrays(*ts)) for ts in zip(*series_in, strict=True)]
    return out, [choose(*ts) for ts in zip(*series_in, strict=True)]


jet_rules[lax.max_p] = partial(_extremum_jet, True)
jet_rules[lax.min_p] = partial(_extremum_jet, False)


def _scatter_add_jet(primals_in: Sequence[Any], series_in: Sequence[Any], **params: Any) -> Any:
    operand, indices, updates = primals_in
    out = lax.scatter_add_p.bind(operand, indices, updates, **params)
    return out, [
        lax.scatter_add_p.bind(d, indices, u, **params) for d, _, u in zip(*series_in, strict=True)
    ]


jet_rules[lax.scatter_add_p] = _scatter_add_jet
