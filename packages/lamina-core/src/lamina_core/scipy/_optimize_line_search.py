"""The inexact line search under `jax.scipy.optimize.minimize`'s BFGS and L-BFGS: Algorithm
3.5 of Wright and Nocedal, 'Numerical Optimization' (1999, pp. 59-61), for a step satisfying
the strong Wolfe conditions, with its `zoom` (Algorithm 3.6), as JAX 0.10.2 stages them.

Both are `while_loop`s over a NamedTuple state of JAX's fields, in JAX's order, so the carried
values (and the printed jaxpr) match. Every branch of the textbook algorithm is computed and
the state updated by `where` on its condition: the loops are traced once, not branched.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, NamedTuple

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import dtypes
from lamina_core.numpy import dtype_of, promote_dtypes_inexact
from lamina_core.transforms import value_and_grad

Array = Any

_dot = partial(jnp.dot, precision=lax.Precision.HIGHEST)


def _cubicmin(a: Array, fa: Array, fpa: Array, b: Array, fb: Array, c: Array, fc: Array) -> Array:
    """The minimizer of the cubic through (a, fa), (b, fb), (c, fc) with slope fpa at a."""
    dtype = dtypes.result_type(a, fa, fpa, b, fb, c, fc)
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    d1 = jnp.array([[dc**2, -(db**2)], [-(dc**3), db**3]], dtype=dtype)
    d2 = jnp.array([fb - fa - fpa * db, fc - fa - fpa * dc], dtype=dtype)
    cubic, quadratic = _dot(d1, d2) / denom
    radical = quadratic * quadratic - 3.0 * cubic * fpa
    return a + (-quadratic + jnp.sqrt(radical)) / (3.0 * cubic)


def _quadmin(a: Array, fa: Array, fpa: Array, b: Array, fb: Array) -> Array:
    """The minimizer of the quadratic through (a, fa), (b, fb) with slope fpa at a."""
    db = b - a
    curvature = (fb - fa - fpa * db) / (db**2)
    return a - fpa / (2.0 * curvature)


def _replace_where(
    bit: Array, old: Mapping[str, Any], new: Mapping[str, Any], keys: Sequence[str] | None = None
) -> dict[str, Array]:
    """`new[key]` where `bit` holds, else `old[key]`, for each key (of `new` by default)."""
    return {key: jnp.where(bit, new[key], old[key]) for key in (new if keys is None else keys)}


class _ZoomState(NamedTuple):
    done: Any
    failed: Any
    j: Any
    a_lo: Any
    phi_lo: Any
    dphi_lo: Any
    a_hi: Any
    phi_hi: Any
    dphi_hi: Any
    a_rec: Any
    phi_rec: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any
    nfev: Any
    ngev: Any


Restricted = Callable[[Any], tuple[Array, Array, Array]]
"""`t -> (f(x + t p), f'(x + t p) . p, grad f(x + t p))`: the objective along the search line."""


def _zoom(
    restricted: Restricted,
    wolfe_one: Callable[[Array, Array], Array],
    wolfe_two: Callable[[Array], Array],
    a_lo: Array,
    phi_lo: Array,
    dphi_lo: Array,
    a_hi: Array,
    phi_hi: Array,
    dphi_hi: Array,
    g_0: Array,
    pass_through: Array,
) -> _ZoomState:
    """Shrink the bracket [a_lo, a_hi] to a strong-Wolfe step by cubic, quadratic or
    bisection steps; skipped entirely (no iteration) where `pass_through` holds."""
    state = _ZoomState(
        done=False,
        failed=False,
        j=0,
        a_lo=a_lo,
        phi_lo=phi_lo,
        dphi_lo=dphi_lo,
        a_hi=a_hi,
        phi_hi=phi_hi,
        dphi_hi=dphi_hi,
        a_rec=(a_lo + a_hi) / 2.0,
        phi_rec=(phi_lo + phi_hi) / 2.0,
        a_star=1.0,
        phi_star=phi_lo,
        dphi_star=dphi_lo,
        g_star=g_0,
        nfev=0,
        ngev=0,
    )
    # Interpolated steps closer than these fractions of the bracket to its ends are rejected.
    delta1, delta2 = 0.2, 0.1

    def body(state: _ZoomState) -> _ZoomState:
        dalpha = state.a_hi - state.a_lo
        a = jnp.minimum(state.a_hi, state.a_lo)
        b = jnp.maximum(state.a_hi, state.a_lo)
        cchk, qchk = delta1 * dalpha, delta2 * dalpha
        # JAX picks the threshold with a traced `where` on a Python bool; so do we, to match.
        threshold = jnp.where(dtypes.finfo(dtype_of(dalpha)).bits < 64, 1e-5, 1e-10)
        state = state._replace(failed=state.failed | (dalpha <= threshold))

        a_cubic = _cubicmin(
            state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi, state.phi_hi, state.a_rec,
            state.phi_rec,
        )  # fmt: skip
        use_cubic = (state.j > 0) & (a_cubic > a + cchk) & (a_cubic < b - cchk)
        a_quad = _quadmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi, state.phi_hi)
        use_quad = (~use_cubic) & (a_quad > a + qchk) & (a_quad < b - qchk)
        a_bisect = (state.a_lo + state.a_hi) / 2.0
        use_bisect = (~use_cubic) & (~use_quad)

        a_j = jnp.where(use_cubic, a_cubic, state.a_rec)
        a_j = jnp.where(use_quad, a_quad, a_j)
        a_j = jnp.where(use_bisect, a_bisect, a_j)

        phi_j, dphi_j, g_j = restricted(a_j)
        phi_j = phi_j.astype(dtype_of(state.phi_lo))
        dphi_j = dphi_j.astype(dtype_of(state.dphi_lo))
        g_j = g_j.astype(dtype_of(state.g_star))
        state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)

        hi_to_j = wolfe_one(a_j, phi_j) | (phi_j >= state.phi_lo)
        star_to_j = wolfe_two(dphi_j) & (~hi_to_j)
        hi_to_lo = (dphi_j * (state.a_hi - state.a_lo) >= 0.0) & (~hi_to_j) & (~star_to_j)
        lo_to_j = (~hi_to_j) & (~star_to_j)

        new_hi = dict(a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=state.a_hi,
                      phi_rec=state.phi_hi)  # fmt: skip
        state = state._replace(**_replace_where(hi_to_j, state._asdict(), new_hi))
        new_star = dict(a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j)
        done = star_to_j | state.done
        state = state._replace(done=done, **_replace_where(star_to_j, state._asdict(), new_star))
        lo_as_hi = dict(a_hi=state.a_lo, phi_hi=state.phi_lo, dphi_hi=state.dphi_lo,
                        a_rec=state.a_hi, phi_rec=state.phi_hi)  # fmt: skip
        state = state._replace(**_replace_where(hi_to_lo, state._asdict(), lo_as_hi))
        lo_as_rec = dict(a_rec=state.a_lo, phi_rec=state.phi_lo)
        state = state._replace(**_replace_where(lo_to_j & ~hi_to_lo, state._asdict(), lo_as_rec))
        new_lo = dict(a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j)
        state = state._replace(**_replace_where(lo_to_j, state._asdict(), new_lo))
        state = state._replace(j=state.j + 1)
        return state._replace(failed=state.failed | (state.j >= 30))

    final: _ZoomState = lax.while_loop(
        lambda state: (~state.done) & (~pass_through) & (~state.failed), body, state
    )
    return final


class _LineSearchState(NamedTuple):
    done: Any
    failed: Any
    i: Any
    a_i1: Any
    phi_i1: Any
    dphi_i1: Any
    nfev: Any
    ngev: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any


class LineSearchResults(NamedTuple):
    """A line search's outcome: whether it failed, its iteration and evaluation counts, the
    step `a_k` with the objective's value `f_k` and gradient `g_k` there, and its status
    (0 passed, 1 zoom failed, 3 too many iterations)."""

    failed: Any
    nit: Any
    nfev: Any
    ngev: Any
    k: Any
    a_k: Any
    f_k: Any
    g_k: Any
    status: Any


_STAR_KEYS = ["a_star", "phi_star", "dphi_star", "g_star"]


def line_search(
    f: Callable[[Array], Array],
    xk: Array,
    pk: Array,
    old_fval: Array | None = None,
    old_old_fval: Array | None = None,
    gfk: Array | None = None,
    c1: float = 1e-4,
    c2: float = 0.9,
    maxiter: int = 20,
) -> LineSearchResults:
    """A step along the descent direction `pk` from `xk` meeting the strong Wolfe conditions
    with constants `c1`, `c2`; `old_fval` and `gfk` (f and its gradient at `xk`) save an
    evaluation, `old_old_fval` (the previous iterate's value) picks the first trial step."""
    xk, pk = promote_dtypes_inexact(xk, pk)

    def restricted(t: Any) -> tuple[Array, Array, Array]:
        t = jnp.array(t, dtype=dtype_of(pk))
        phi, g = value_and_grad(f)(xk + t * pk)
        return phi, jnp.real(_dot(g, pk)), g

    evaluated_here = old_fval is None or gfk is None
    if evaluated_here:
        phi_0, dphi_0, gfk = restricted(0)
    else:
        phi_0, dphi_0 = old_fval, jnp.real(_dot(gfk, pk))
    if old_old_fval is not None:
        candidate = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start_value: Any = jnp.where(candidate > 1, 1.0, candidate)
    else:
        start_value = 1

    def wolfe_one(a_i: Array, phi_i: Array) -> Array:  # sufficient decrease fails
        return phi_i > phi_0 + c1 * a_i * dphi_0

    def wolfe_two(dphi_i: Array) -> Array:  # the curvature condition holds
        return jnp.abs(dphi_i) <= -c2 * dphi_0

    state = _LineSearchState(
        done=jnp.array(False, dtype=bool),
        failed=jnp.array(False, dtype=bool),
        i=1,
        a_i1=0.0,
        phi_i1=phi_0,
        dphi_i1=dphi_0,
        nfev=1 if evaluated_here else 0,
        ngev=1 if evaluated_here else 0,
        a_star=0.0,
        phi_star=phi_0,
        dphi_star=dphi_0,
        g_star=gfk,
    )

    def body(state: _LineSearchState) -> _LineSearchState:
        a_i = jnp.where(state.i == 1, start_value, state.a_i1 * 2.0)
        phi_i, dphi_i, g_i = restricted(a_i)
        state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)

        star_to_zoom1 = wolfe_one(a_i, phi_i) | ((phi_i >= state.phi_i1) & (state.i > 1))
        star_to_i = wolfe_two(dphi_i) & (~star_to_zoom1)
        star_to_zoom2 = (dphi_i >= 0.0) & (~star_to_zoom1) & (~star_to_i)

        zoom1 = _zoom(restricted, wolfe_one, wolfe_two, state.a_i1, state.phi_i1,
                      state.dphi_i1, a_i, phi_i, dphi_i, gfk, ~star_to_zoom1)  # fmt: skip
        state = state._replace(nfev=state.nfev + zoom1.nfev, ngev=state.ngev + zoom1.ngev)
        zoom2 = _zoom(restricted, wolfe_one, wolfe_two, a_i, phi_i, dphi_i, state.a_i1,
                      state.phi_i1, state.dphi_i1, gfk, ~star_to_zoom2)  # fmt: skip
        state = state._replace(nfev=state.nfev + zoom2.nfev, ngev=state.ngev + zoom2.ngev)

        state = state._replace(
            done=star_to_zoom1 | state.done,
            failed=(star_to_zoom1 & zoom1.failed) | state.failed,
            **_replace_where(star_to_zoom1, state._asdict(), zoom1._asdict(), _STAR_KEYS),
        )
        at_i = dict(a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i)
        state = state._replace(
            done=star_to_i | state.done, **_replace_where(star_to_i, state._asdict(), at_i)
        )
        state = state._replace(
            done=star_to_zoom2 | state.done,
            failed=(star_to_zoom2 & zoom2.failed) | state.failed,
            **_replace_where(star_to_zoom2, state._asdict(), zoom2._asdict(), _STAR_KEYS),
        )
        return state._replace(i=state.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)

    state = lax.while_loop(
        lambda state: (~state.done) & (state.i <= maxiter) & (~state.failed), body, state
    )
    status = jnp.where(
        state.failed, jnp.array(1), jnp.where(state.i > maxiter, jnp.array(3), jnp.array(0))
    )
    alpha_k = jnp.asarray(state.a_star)
    # A step too small for single precision is held at 1e-8 (with its sign).
    tiny = (dtypes.finfo(dtype_of(alpha_k)).bits != 64) & (jnp.abs(alpha_k) < 1e-8)
    alpha_k = jnp.where(tiny, jnp.sign(alpha_k) * 1e-8, alpha_k)
    return LineSearchResults(
        failed=state.failed | (~state.done),
        nit=state.i - 1,  # iterations count from 1
        nfev=state.nfev,
        ngev=state.ngev,
        k=state.i,
        a_k=alpha_k,
        f_k=state.phi_star,
        g_k=state.g_star,
        status=status,
    )
