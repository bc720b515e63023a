"""`jax.experimental.ode`: `odeint`, adaptive Dormand-Prince integration (JAX 0.10.2's).

The integrator is JAX's algorithm step for step, so that values, gradients and the printed
jaxpr agree with JAX's: a fifth-order Runge-Kutta step with a fourth-order error estimate,
JAX's step-size controller (safety 0.9, growth at most 10x, shrink at most 5x), a quartic
interpolant for output times between steps, and a custom VJP that integrates the adjoint system
backwards between output times (Chen et al. 2018, appendix C) instead of differentiating
through the solver's loops. Written on Lamina's public frontends only (`numpy`, `lax`, `jit`,
`vmap`, `vjp`, `custom_vjp`, `closure_convert`, `ravel_pytree`). Loaded on first import, never
by `import lamina`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from functools import partial
from typing import Any

import lamina_core.numpy as jnp
from lamina._options import default_matmul_precision
from lamina.extend import linear_util as lu
from lamina.extend.core import valid_jaxtype
from lamina_core import custom_vjp, lax, vjp, vmap
from lamina_core.custom_derivatives import closure_convert
from lamina_core.flatten_util import ravel_pytree
from lamina_core.numpy import getitem, promote_dtypes_inexact
from lamina_core.tree import tree_util
from lamina_runtime import jit

# Dormand and Prince's tableau (JAX's): nodes, stage weights, the fifth-order solution's
# weights, and the difference from the embedded fourth-order one (the error estimate).
_ALPHA = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0, 0)
_BETA = (
    (1 / 5, 0, 0, 0, 0, 0, 0),
    (3 / 40, 9 / 40, 0, 0, 0, 0, 0),
    (44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0),
    (35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0),
)
_C_SOL = (35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0)
_C_ERROR = (
    35 / 384 - 1951 / 21600,
    0,
    500 / 1113 - 22642 / 50085,
    125 / 192 - 451 / 720,
    -2187 / 6784 - -12231 / 42400,
    11 / 84 - 649 / 6300,
    -1.0 / 60.0,
)
# The solution at the step's midpoint, for the interpolant (Shampine 1986), halved as JAX's.
_C_MID = (
    6025192743 / 30085553152 / 2,
    0,
    51252292925 / 65400821598 / 2,
    -2691868925 / 45128329728 / 2,
    187940372067 / 1594534317056 / 2,
    -1776094331 / 19743644256 / 2,
    11237099 / 235043384 / 2,
)


def ravel_first_arg(
    f: Callable[..., Any], unravel: Callable[[Any], Any], debug_info: Any = None
) -> Callable[..., Any]:
    """`f` taking its first argument, and returning its result, as flat vectors."""
    wrapped: lu.WrappedFun = ravel_first_arg_(lu.wrap_init(f, debug_info=debug_info), unravel)
    return wrapped.call_wrapped


def _ravel_first(
    f: Callable[..., Any], unravel: Callable[[Any], Any], y_flat: Any, *args: Any
) -> Any:
    ans_flat, _ = ravel_pytree(f(unravel(y_flat), *args))
    return ans_flat


ravel_first_arg_: Callable[..., Any] = lu.transformation2(_ravel_first)
"""The `linear_util` transformation behind `ravel_first_arg` (JAX's name)."""


def interp_fit_dopri(y0: Any, y1: Any, k: Any, dt: Any) -> Any:
    """The quartic through a step's ends and midpoint, with its end slopes (coefficients)."""
    c_mid = jnp.array(_C_MID, dtype=y0.dtype)
    y_mid = y0 + dt.astype(y0.dtype) * jnp.dot(c_mid, k)
    return jnp.asarray(fit_4th_order_polynomial(y0, y1, y_mid, k[0], k[-1], dt))


def fit_4th_order_polynomial(
    y0: Any, y1: Any, y_mid: Any, dy0: Any, dy1: Any, dt: Any
) -> tuple[Any, Any, Any, Any, Any]:
    """Coefficients (highest power first) of the quartic on [0, 1] with these values and slopes."""
    dt = dt.astype(y0.dtype)
    a = -2.0 * dt * dy0 + 2.0 * dt * dy1 - 8.0 * y0 - 8.0 * y1 + 16.0 * y_mid
    b = 5.0 * dt * dy0 - 3.0 * dt * dy1 + 18.0 * y0 + 14.0 * y1 - 32.0 * y_mid
    c = -4.0 * dt * dy0 + dt * dy1 - 11.0 * y0 - 5.0 * y1 + 16.0 * y_mid
    d = dt * dy0
    e = y0
    return a, b, c, d, e


def initial_step_size(
    fun: Callable[[Any, Any], Any], t0: Any, y0: Any, order: int, rtol: Any, atol: Any, f0: Any
) -> Any:
    """A first step size (Hairer, Norsett and Wanner, Solving ODEs I, section II.4)."""
    y0, f0 = promote_dtypes_inexact(y0, f0)
    dtype = y0.dtype
    scale = atol + jnp.abs(y0) * rtol
    d0 = jnp.linalg.norm(y0 / scale.astype(dtype))
    d1 = jnp.linalg.norm(f0 / scale.astype(dtype))
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    y1 = y0 + h0.astype(dtype) * f0
    f1 = fun(y1, t0 + h0)
    d2 = jnp.linalg.norm((f1 - f0) / scale.astype(dtype)) / h0
    h1 = jnp.where(
        (d1 <= 1e-15) & (d2 <= 1e-15),
        jnp.maximum(1e-6, h0 * 1e-3),
        (0.01 / jnp.maximum(d1, d2)) ** (1.0 / (order + 1.0)),
    )
    return jnp.minimum(100.0 * h0, h1)


def runge_kutta_step(
    func: Callable[[Any, Any], Any], y0: Any, f0: Any, t0: Any, dt: Any
) -> tuple[Any, Any, Any, Any]:
    """One Dormand-Prince step: the new state, its slope, the error estimate, the stages."""
    alpha = jnp.array(_ALPHA, dtype=dt.dtype)
    beta = jnp.array(_BETA, dtype=f0.dtype)
    c_sol = jnp.array(_C_SOL, dtype=f0.dtype)
    c_error = jnp.array(_C_ERROR, dtype=f0.dtype)

    def body_fun(i: Any, k: Any) -> Any:
        # Under a trace the tableau arrays are NumPy constants, which cannot be indexed by the
        # traced `i`: index them as `jnp` indexes arrays (the same equations as JAX's).
        ti = t0 + dt * getitem(alpha, i - 1)
        yi = y0 + dt.astype(f0.dtype) * jnp.dot(getitem(beta, (i - 1, slice(None))), k)
        return k.at[i, :].set(func(yi, ti))

    k = jnp.zeros((7, f0.shape[0]), f0.dtype).at[0, :].set(f0)
    k = lax.fori_loop(1, 7, body_fun, k)
    y1 = dt.astype(f0.dtype) * jnp.dot(c_sol, k) + y0
    y1_error = dt.astype(f0.dtype) * jnp.dot(c_error, k)
    return y1, k[-1], y1_error, k


def abs2(x: Any) -> Any:
    """|x|^2, without a square root for complex `x`."""
    if jnp.iscomplexobj(x):
        return x.real**2 + x.imag**2
    return x**2


def mean_error_ratio(error_estimate: Any, rtol: Any, atol: Any, y0: Any, y1: Any) -> Any:
    """The RMS of the error estimate over the tolerance; a step is accepted when it is <= 1."""
    err_tol = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    err_ratio = error_estimate / err_tol.astype(error_estimate.dtype)
    return jnp.sqrt(jnp.mean(abs2(err_ratio)))


def optimal_step_size(
    last_step: Any,
    mean_error_ratio: Any,
    safety: float = 0.9,
    ifactor: float = 10.0,
    dfactor: float = 0.2,
    order: float = 5.0,
) -> Any:
    """The next step size: grown by at most `ifactor`, shrunk only after a rejected step."""
    dfactor = jnp.where(mean_error_ratio < 1, 1.0, dfactor)
    factor = jnp.minimum(ifactor, jnp.maximum(mean_error_ratio ** (-1.0 / order) * safety, dfactor))
    return jnp.where(mean_error_ratio == 0, last_step * ifactor, last_step * factor)


def odeint(
    func: Callable[..., Any],
    y0: Any,
    t: Any,
    *args: Any,
    rtol: float = 1.4e-8,
    atol: float = 1.4e-8,
    mxstep: float = jnp.inf,
    hmax: float = jnp.inf,
) -> Any:
    """Integrate `dy/dt = func(y, t, *args)` from `y0` at `t[0]`, reporting `y` at each `t`.

    Args:
        func: the derivative, `func(y, t, *args)`, of the structure of `y0`.
        y0: the initial state, an array or a pytree of arrays.
        t: strictly increasing float times to report the solution at; `t[0]` is the start.
        *args: extra arrays (or pytrees of them) passed to `func`; differentiable.
        rtol: the relative local error tolerance.
        atol: the absolute local error tolerance.
        mxstep: the most steps taken between two output times.
        hmax: the largest step size.

    Returns:
        The solution at each time in `t`: `y0`'s structure, each leaf with a leading axis of
        length `len(t)`.

    Raises:
        TypeError: an element of `args` is not an array or scalar, or `t` is not floating.
    """
    for arg in tree_util.tree_leaves(args):
        if not valid_jaxtype(arg):
            raise TypeError(
                f"The contents of odeint *args must be arrays or scalars, but got {arg}."
            )
    if not jnp.issubdtype(t.dtype, jnp.floating):
        raise TypeError(f"t must be an array of floats, but got {t}.")
    converted, consts = closure_convert(func, y0, t[0], *args)
    return _odeint_jitted(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


@default_matmul_precision("highest")
def _odeint_wrapper(
    func: Callable[..., Any], rtol: Any, atol: Any, mxstep: Any, hmax: Any, y0: Any, ts: Any,
    *args: Any,
) -> Any:  # fmt: skip
    y0, unravel = ravel_pytree(y0)
    out = _odeint(ravel_first_arg(func, unravel), rtol, atol, mxstep, hmax, y0, ts, *args)
    return vmap(unravel)(out)


# Named as JAX's (the staged `jit` equation prints the function's name).
_odeint_jitted: Callable[..., Any] = jit(_odeint_wrapper, static_argnums=(0, 1, 2, 3, 4))


@partial(custom_vjp, nondiff_argnums=(0, 1, 2, 3, 4))
@default_matmul_precision("highest")
def _odeint(
    func: Callable[..., Any], rtol: Any, atol: Any, mxstep: Any, hmax: Any, y0: Any, ts: Any,
    *args: Any,
) -> Any:  # fmt: skip
    def func_(y: Any, t: Any) -> Any:
        return func(y, t, *args)

    def scan_fun(carry: list[Any], target_t: Any) -> tuple[list[Any], Any]:
        def cond_fun(state: list[Any]) -> Any:
            i, _, _, t, dt, _, _ = state
            return (t < target_t) & (i < mxstep) & (dt > 0)

        def body_fun(state: list[Any]) -> list[Any]:
            i, y, f, t, dt, last_t, interp_coeff = state
            next_y, next_f, next_y_error, k = runge_kutta_step(func_, y, f, t, dt)
            next_t = t + dt
            error_ratio = mean_error_ratio(next_y_error, rtol, atol, y, next_y)
            new_interp_coeff = interp_fit_dopri(y, next_y, k, dt)
            dt = jnp.clip(optimal_step_size(dt, error_ratio), min=0.0, max=hmax)
            new = [i + 1, next_y, next_f, next_t, dt, t, new_interp_coeff]
            old = [i + 1, y, f, t, dt, last_t, interp_coeff]
            # A rejected step keeps the state and retries with the smaller `dt`.
            accept = partial(jnp.where, error_ratio <= 1.0)
            return [accept(n, o) for n, o in zip(new, old, strict=True)]

        _, *carry = lax.while_loop(cond_fun, body_fun, [0, *carry])
        _, _, t, _, last_t, interp_coeff = carry
        relative_output_time = (target_t - last_t) / (t - last_t)
        y_target = jnp.polyval(interp_coeff, relative_output_time.astype(interp_coeff.dtype))
        return carry, y_target

    f0 = func_(y0, ts[0])
    dt = jnp.clip(initial_step_size(func_, ts[0], y0, 4, rtol, atol, f0), min=0.0, max=hmax)
    interp_coeff = jnp.array([y0] * 5)
    init_carry = [y0, f0, ts[0], dt, ts[0], interp_coeff]
    _, ys = lax.scan(scan_fun, init_carry, ts[1:])
    return jnp.concatenate((y0[None], ys))


def _odeint_fwd(
    func: Callable[..., Any], rtol: Any, atol: Any, mxstep: Any, hmax: Any, y0: Any, ts: Any,
    *args: Any,
) -> tuple[Any, tuple[Any, Any, tuple[Any, ...]]]:  # fmt: skip
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


@default_matmul_precision("highest")
def _odeint_rev(
    func: Callable[..., Any], rtol: Any, atol: Any, mxstep: Any, hmax: Any,
    res: tuple[Any, Any, tuple[Any, ...]], g: Any,
) -> tuple[Any, ...]:  # fmt: skip
    ys, ts, args = res

    def aug_dynamics(augmented_state: Any, t: Any, *args: Any) -> tuple[Any, ...]:
        # The adjoint runs in negated time (see the odeint call below), so `-t` is real time.
        y, y_bar, *_ = augmented_state
        y_dot, vjpfun = vjp(func, y, -t, *args)
        return (-y_dot, *vjpfun(y_bar))

    def scan_fun(carry: Any, i: Any) -> tuple[Any, Any]:
        y_bar, t0_bar, args_bar = carry
        # The output time's own cotangent (real even for complex states: time is real).
        t_bar = jnp.dot(func(ys[i], ts[i], *args), g[i]).real
        t0_bar = t0_bar - t_bar
        # Integrate the augmented system back to the previous output time.
        _, y_bar, t0_bar, args_bar = odeint(
            aug_dynamics,
            (ys[i], y_bar, t0_bar, args_bar),
            jnp.array([-ts[i], -ts[i - 1]]),
            *args,
            rtol=rtol,
            atol=atol,
            mxstep=mxstep,
            hmax=hmax,
        )
        y_bar, t0_bar, args_bar = tree_util.tree_map(
            operator.itemgetter(1), (y_bar, t0_bar, args_bar)
        )
        y_bar = y_bar + g[i - 1]
        return (y_bar, t0_bar, args_bar), t_bar

    init_carry = (g[-1], 0.0, tree_util.tree_map(jnp.zeros_like, args))
    (y_bar, t0_bar, args_bar), rev_ts_bar = lax.scan(
        scan_fun, init_carry, jnp.arange(len(ts) - 1, 0, -1)
    )
    ts_bar = jnp.concatenate([jnp.array([t0_bar]), rev_ts_bar[::-1]])
    return (y_bar, ts_bar, *args_bar)


_odeint.defvjp(_odeint_fwd, _odeint_rev)

__all__ = [
    "abs2",
    "fit_4th_order_polynomial",
    "initial_step_size",
    "interp_fit_dopri",
    "mean_error_ratio",
    "odeint",
    "optimal_step_size",
    "ravel_first_arg",
    "ravel_first_arg_",
    "runge_kutta_step",
]
