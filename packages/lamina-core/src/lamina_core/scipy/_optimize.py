"""`jax.scipy.optimize.minimize` and `OptimizeResults`: SciPy's interface over the BFGS and
(experimental) L-BFGS minimizers of `_optimize_bfgs`, as JAX 0.10.2 offers them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from lamina_core import numpy as jnp
from lamina_core.scipy._optimize_bfgs import minimize_bfgs, minimize_lbfgs

Array = Any

__all__ = ["OptimizeResults", "minimize"]


class OptimizeResults(NamedTuple):
    """The result of `minimize`: the solution `x`, whether it succeeded, the solver's status
    (0 converged, 1 out of BFGS iterations, 3 zoom failed, 4 saddle point, 5 out of line search
    iterations, -1 undefined), the value `fun`, gradient `jac` and inverse Hessian estimate
    `hess_inv` (None for L-BFGS) there, and the evaluation and iteration counts."""

    x: Array
    success: bool | Array
    status: int | Array
    fun: Array
    jac: Array
    hess_inv: Array | None
    nfev: int | Array
    njev: int | Array
    nit: int | Array


def minimize(
    fun: Callable[..., Any],
    x0: Array,
    args: tuple[Any, ...] = (),
    *,
    method: str,
    tol: float | None = None,
    options: Mapping[str, Any] | None = None,
) -> OptimizeResults:
    """Minimize `fun(x, *args)` over the 1-D `x` from `x0` by `method` ("BFGS", or
    "l-bfgs-experimental-do-not-rely-on-this"); `options` are the solver's keyword arguments
    (`maxiter`, `gtol`, ...). `tol` is accepted and unused, as in JAX."""
    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}")

    def fun_with_args(x: Array) -> Array:
        return fun(x, *args)

    if method.lower() == "bfgs":
        bfgs = minimize_bfgs(fun_with_args, x0, **options)
        return OptimizeResults(
            x=bfgs.x_k,
            success=bfgs.converged & jnp.logical_not(bfgs.failed),
            status=bfgs.status,
            fun=bfgs.f_k,
            jac=bfgs.g_k,
            hess_inv=bfgs.H_k,
            nfev=bfgs.nfev,
            njev=bfgs.ngev,
            nit=bfgs.k,
        )
    if method.lower() == "l-bfgs-experimental-do-not-rely-on-this":
        lbfgs = minimize_lbfgs(fun_with_args, x0, **options)
        return OptimizeResults(
            x=lbfgs.x_k,
            success=lbfgs.converged & jnp.logical_not(lbfgs.failed),
            status=lbfgs.status,
            fun=lbfgs.f_k,
            jac=lbfgs.g_k,
            hess_inv=None,
            nfev=lbfgs.nfev,
            njev=lbfgs.ngev,
            nit=lbfgs.k,
        )
    raise ValueError(f"Method {method} not recognized")
