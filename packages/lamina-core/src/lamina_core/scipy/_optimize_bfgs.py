"""BFGS and L-BFGS minimization for `jax.scipy.optimize.minimize`, as JAX 0.10.2 stages them:
each a `while_loop` over a NamedTuple state of JAX's fields (in JAX's order), stepping by the
strong-Wolfe line search of `_optimize_line_search`.

BFGS is Algorithm 6.1 of Wright and Nocedal, 'Numerical Optimization' (1999, pp. 136-143),
carrying the dense inverse Hessian estimate. L-BFGS (Algorithm 7.5, pp. 176-185, generalized
to complex variables after Sorber, Van Barel and De Lathauwer, 2012) carries the last `maxcor`
steps and gradient changes instead, applying the inverse Hessian by the two-loop recursion.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple, cast

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import dtypes
from lamina_core.numpy import at, dtype_of, shape_of
from lamina_core.scipy._optimize_line_search import line_search
from lamina_core.transforms import value_and_grad

Array = Any

_dot = partial(jnp.dot, precision=lax.Precision.HIGHEST)
_einsum = partial(jnp.einsum, precision=lax.Precision.HIGHEST)


class BFGSResults(NamedTuple):
    """BFGS's state and result: convergence and failure flags, the iteration and evaluation
    counts, the iterate `x_k` with its value `f_k`, gradient `g_k` and inverse Hessian estimate
    `H_k`, the previous value, and the end status (and the last line search's)."""

    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    nhev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    H_k: Any
    old_old_fval: Any
    status: Any
    line_search_status: Any


def minimize_bfgs(
    fun: Callable[[Array], Array],
    x0: Array,
    maxiter: int | None = None,
    norm: Any = np.inf,
    gtol: float = 1e-5,
    line_search_maxiter: int = 10,
) -> BFGSResults:
    """Minimize `fun` from `x0` by BFGS until the gradient's `norm` is below `gtol` (or
    `maxiter` iterations, 200 per variable by default)."""
    if maxiter is None:
        maxiter = int(np.size(x0)) * 200
    d = shape_of(x0)[0]
    initial_H = jnp.eye(d, dtype=dtype_of(x0))
    f_0, g_0 = value_and_grad(fun)(x0)
    state = BFGSResults(
        converged=jnp.linalg.norm(g_0, ord=norm) < gtol,
        failed=False,
        k=0,
        nfev=1,
        ngev=1,
        nhev=0,
        x_k=x0,
        f_k=f_0,
        g_k=g_0,
        H_k=initial_H,
        old_old_fval=f_0 + jnp.linalg.norm(g_0) / 2,
        status=0,
        line_search_status=0,
    )

    def cond(state: BFGSResults) -> Array:
        return (
            jnp.logical_not(state.converged) & jnp.logical_not(state.failed) & (state.k < maxiter)
        )

    def body(state: BFGSResults) -> BFGSResults:
        p_k = -_dot(state.H_k, state.g_k)
        ls = line_search(fun, state.x_k, p_k, old_fval=state.f_k,
                         old_old_fval=state.old_old_fval, gfk=state.g_k,
                         maxiter=line_search_maxiter)  # fmt: skip
        state = state._replace(
            nfev=state.nfev + ls.nfev,
            ngev=state.ngev + ls.ngev,
            failed=ls.failed,
            line_search_status=ls.status,
        )
        s_k = ls.a_k * p_k
        x_kp1 = state.x_k + s_k
        y_k = ls.g_k - state.g_k
        rho_k = jnp.reciprocal(_dot(y_k, s_k))
        # The inverse-Hessian update (I - rho s y^T) H (I - rho y s^T) + rho s s^T, kept out
        # when the curvature y.s is zero.
        sy_k = s_k[:, np.newaxis] * y_k[np.newaxis, :]
        w = jnp.eye(d, dtype=dtype_of(rho_k)) - rho_k * sy_k
        H_kp1 = (_einsum("ij,jk,lk", w, state.H_k, w)
                 + rho_k * s_k[:, np.newaxis] * s_k[np.newaxis, :])  # fmt: skip
        H_kp1 = jnp.where(jnp.isfinite(rho_k), H_kp1, state.H_k)
        converged = jnp.linalg.norm(ls.g_k, ord=norm) < gtol
        return state._replace(
            converged=converged,
            k=state.k + 1,
            x_k=x_kp1,
            f_k=ls.f_k,
            g_k=ls.g_k,
            H_k=H_kp1,
            old_old_fval=state.f_k,
        )

    state = cast(BFGSResults, lax.while_loop(cond, body, state))
    # 0 converged, 1 out of iterations, 2 + the line search's status if it failed, else -1.
    status = jnp.where(
        state.converged,
        0,
        jnp.where(state.k == maxiter, 1, jnp.where(state.failed, 2 + state.line_search_status, -1)),
    )
    return state._replace(status=status)


class LBFGSResults(NamedTuple):
    """L-BFGS's state and result: as `BFGSResults`, with the step, gradient-change and
    1/(y.s) histories and the initial Hessian scale `gamma` in place of a dense Hessian;
    status 0 nominal, 1 out of iterations, 2 out of function evaluations, 3 out of gradient
    evaluations, 4 insufficient progress, 5 line search failed."""

    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    s_history: Any
    y_history: Any
    rho_history: Any
    gamma: Any
    status: Any
    ls_status: Any


def minimize_lbfgs(
    fun: Callable[[Array], Array],
    x0: Array,
    maxiter: float | None = None,
    norm: Any = np.inf,
    maxcor: int = 10,
    ftol: float = 2.220446049250313e-09,
    gtol: float = 1e-05,
    maxfun: float | None = None,
    maxgrad: float | None = None,
    maxls: int = 20,
) -> LBFGSResults:
    """Minimize `fun` from `x0` by L-BFGS with `maxcor` corrections, until the gradient's
    `norm` is below `gtol`, a step gains less than `ftol`, or a budget runs out."""
    d = len(x0)
    dtype = dtypes.dtype(x0)
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = d * 200
    max_iterations = np.inf if maxiter is None else maxiter
    max_evaluations = np.inf if maxfun is None else maxfun
    max_gradients = np.inf if maxgrad is None else maxgrad

    f_0, g_0 = value_and_grad(fun)(x0)
    initial = LBFGSResults(
        converged=jnp.array(False, dtype=bool),
        failed=jnp.array(False, dtype=bool),
        k=0,
        nfev=1,
        ngev=1,
        x_k=x0,
        f_k=f_0,
        g_k=g_0,
        s_history=jnp.zeros((maxcor, d), dtype=dtype),
        y_history=jnp.zeros((maxcor, d), dtype=dtype),
        rho_history=jnp.zeros((maxcor,), dtype=dtype),
        gamma=1.0,
        status=0,
        ls_status=0,
    )

    def body(state: LBFGSResults) -> LBFGSResults:
        p_k = _two_loop_recursion(state)
        ls = line_search(f=fun, xk=state.x_k, pk=p_k, old_fval=state.f_k, gfk=state.g_k,
                         maxiter=maxls)  # fmt: skip
        s_k = jnp.asarray(ls.a_k).astype(dtype_of(p_k)) * p_k
        x_kp1 = state.x_k + s_k
        y_k = ls.g_k - state.g_k
        rho_k_inv = jnp.real(_dot(y_k, s_k))
        rho_k = jnp.reciprocal(rho_k_inv).astype(dtype_of(y_k))
        gamma = rho_k_inv / jnp.real(_dot(jnp.conj(y_k), y_k))
        # The last matching reason wins: line search failure, then the budgets, then progress.
        status = jnp.array(0)
        status = jnp.where(state.f_k - ls.f_k < ftol, 4, status)
        status = jnp.where(state.ngev >= max_gradients, 3, status)
        status = jnp.where(state.nfev >= max_evaluations, 2, status)
        status = jnp.where(state.k >= max_iterations, 1, status)
        status = jnp.where(ls.failed, 5, status)
        converged = jnp.linalg.norm(ls.g_k, ord=norm) < gtol
        return state._replace(
            converged=converged,
            failed=(status > 0) & (~converged),
            k=state.k + 1,
            nfev=state.nfev + ls.nfev,
            ngev=state.ngev + ls.ngev,
            x_k=x_kp1.astype(dtype_of(state.x_k)),
            f_k=ls.f_k.astype(dtype_of(state.f_k)),
            g_k=ls.g_k.astype(dtype_of(state.g_k)),
            s_history=_push(state.s_history, s_k),
            y_history=_push(state.y_history, y_k),
            rho_history=_push(state.rho_history, rho_k),
            gamma=gamma.astype(dtype_of(state.g_k)),
            status=jnp.where(converged, 0, status),
            ls_status=ls.status,
        )

    final: LBFGSResults = lax.while_loop(lambda s: (~s.converged) & (~s.failed), body, initial)
    return final


def _two_loop_recursion(state: LBFGSResults) -> Array:
    """The search direction -H g, H the L-BFGS inverse Hessian of the stored history."""
    dtype = dtype_of(state.rho_history)
    his_size = shape_of(state.rho_history)[0]
    curr_size = jnp.where(state.k < his_size, state.k, his_size)
    q = -jnp.conj(state.g_k)
    a_his = jnp.zeros_like(state.rho_history)

    def newest_first(j: Any, carry: tuple[Array, Array]) -> tuple[Array, Array]:
        i = his_size - 1 - j
        q, a_his = carry
        a_i = state.rho_history[i] * _dot(jnp.conj(state.s_history[i]), q).real.astype(dtype)
        a_his = at(a_his)[i].set(a_i)
        return q - a_i * jnp.conj(state.y_history[i]), a_his

    q, a_his = lax.fori_loop(0, curr_size, newest_first, (q, a_his))
    q = state.gamma * q

    def oldest_first(j: Any, q: Array) -> Array:
        i = his_size - curr_size + j
        b_i = state.rho_history[i] * _dot(state.y_history[i], q).real.astype(dtype)
        return q + (a_his[i] - b_i) * state.s_history[i]

    return lax.fori_loop(0, curr_size, oldest_first, q)


def _push(history: Array, new: Array) -> Array:
    """`history` with its oldest entry dropped and `new` appended last."""
    rolled = jnp.roll(history, -1, axis=0)
    return at(rolled)[-1, :].set(new) if len(shape_of(history)) == 2 else at(rolled)[-1].set(new)
