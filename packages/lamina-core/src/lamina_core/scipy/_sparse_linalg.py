"""`jax.scipy.sparse.linalg`'s `cg` and `bicgstab`, and the helpers `gmres` (in
`_sparse_gmres`) shares: Krylov solvers of a linear operator given as a function, a square
matrix or an object with `@`, on pytrees of arrays, as JAX 0.10.2 stages them. Each solve is a
`while_loop` inside a `custom_linear_solve`, so gradients flow through the solution (by one
more solve) rather than through the iterations."""

from __future__ import annotations

import operator
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import dtypes
from lamina_core.lax import _convert_element_type, stage_device_put
from lamina_core.numpy import dtype_of
from lamina_core.trace import Tracer, is_concrete_value
from lamina_core.tree import public
from lamina_core.tree.tree_util import (
    Partial,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)

Array = Any
Operator = Callable[[Any], Any]

__all__ = ["bicgstab", "cg"]

_dot = partial(jnp.dot, precision=lax.Precision.HIGHEST)
_vdot = partial(jnp.vdot, precision=lax.Precision.HIGHEST)
_einsum = partial(jnp.einsum, precision=lax.Precision.HIGHEST)


def _vdot_real_part(x: Array, y: Array) -> Array:
    """The real part of vdot(x, y), computed without complex arithmetic."""
    result = _vdot(x.real, y.real)
    if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
        result += _vdot(x.imag, y.imag)
    return result


def _vdot_real_tree(x: Any, y: Any) -> Array:
    return sum(tree_leaves(tree_map(_vdot_real_part, x, y)))


def _vdot_tree(x: Any, y: Any) -> Array:
    return sum(tree_leaves(tree_map(_vdot, x, y)))


def _norm(x: Any) -> Array:
    xs = tree_leaves(x)
    return jnp.sqrt(sum(map(_vdot_real_part, xs, xs)))


def _mul(scalar: Array, tree: Any) -> Any:
    return tree_map(partial(operator.mul, scalar), tree)


_add = partial(tree_map, operator.add)
_sub = partial(tree_map, operator.sub)


@Partial
def _identity(x: Any) -> Any:
    return x


def _is_array(f: Any) -> bool:
    return isinstance(f, (np.ndarray, Tracer)) or (
        is_concrete_value(f) and not isinstance(f, (bool, int, float, complex, np.generic))
    )


def _normalize_matvec(f: Any) -> Operator:
    """The operator `f` as a function: itself, a square matrix's product, or `f @ x`."""
    if callable(f):
        return f  # type: ignore[no-any-return]  # any callable is taken as the operator
    if _is_array(f):
        if f.ndim != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
        return partial(_dot, f)
    if hasattr(f, "__matmul__"):
        if (hasattr(f, "shape") and len(f.shape) != 2) or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
        return partial(operator.matmul, f)
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")


def _device_put(tree: Any) -> Any:
    leaves, treedef = tree_flatten(tree)
    return tree_unflatten(treedef, stage_device_put(leaves))


def _cg_solve(
    A: Operator, b: Any, x0: Any, *, maxiter: int, tol: float, atol: float, M: Operator
) -> Any:
    # The residual's squared norm must reach max(tol**2 |b|**2, atol**2).
    bs = _vdot_real_tree(b, b)
    atol2 = jnp.maximum(jnp.square(tol) * bs, jnp.square(atol))

    def cond(value: Any) -> Array:
        _, r, gamma, _, k = value
        rs = gamma.real if M is _identity else _vdot_real_tree(r, r)
        return (rs > atol2) & (k < maxiter)

    def body(value: Any) -> Any:
        x, r, gamma, p, k = value
        Ap = A(p)
        alpha = gamma / _vdot_real_tree(p, Ap).astype(dtype)
        x_ = _add(x, _mul(alpha, p))
        r_ = _sub(r, _mul(alpha, Ap))
        z_ = M(r_)
        gamma_ = _vdot_real_tree(r_, z_).astype(dtype)
        p_ = _add(z_, _mul(gamma_ / gamma, p))
        return x_, r_, gamma_, p_, k + 1

    r0 = _sub(b, A(x0))
    p0 = z0 = M(r0)
    dtype = dtypes.result_type(*tree_leaves(p0))
    gamma0 = _vdot_real_tree(r0, z0).astype(dtype)
    x_final, *_ = lax.while_loop(cond, body, (x0, r0, gamma0, p0, 0))
    return x_final


def _bicgstab_solve(
    A: Operator, b: Any, x0: Any, *, maxiter: int, tol: float, atol: float, M: Operator
) -> Any:
    bs = _vdot_real_tree(b, b)
    atol2 = jnp.maximum(jnp.square(tol) * bs, jnp.square(atol))

    def cond(value: Any) -> Array:
        _, r, *_, k = value
        # A negative k marks a breakdown (-10: rho vanished, -11: omega or alpha did).
        return (_vdot_real_tree(r, r) > atol2) & (k < maxiter) & (k >= 0)

    def body(value: Any) -> Any:
        x, r, rhat, alpha, omega, rho, p, q, k = value
        rho_ = _vdot_tree(rhat, r)
        beta = rho_ / rho * alpha / omega
        p_ = _add(r, _mul(beta, _sub(p, _mul(omega, q))))
        phat = M(p_)
        q_ = A(phat)
        alpha_ = rho_ / _vdot_tree(rhat, q_)
        s = _sub(r, _mul(alpha_, q_))
        exit_early = _vdot_real_tree(s, s) < atol2
        shat = M(s)
        t = A(shat)
        omega_ = _vdot_tree(t, s) / _vdot_tree(t, t)
        x_ = tree_map(
            partial(jnp.where, exit_early),
            _add(x, _mul(alpha_, phat)),
            _add(x, _add(_mul(alpha_, phat), _mul(omega_, shat))),
        )
        r_ = tree_map(partial(jnp.where, exit_early), s, _sub(s, _mul(omega_, t)))
        k_ = jnp.where((omega_ == 0) | (alpha_ == 0), -11, k + 1)
        k_ = jnp.where(rho_ == 0, -10, k_)
        return x_, r_, rhat, alpha_, omega_, rho_, p_, q_, k_

    r0 = _sub(b, A(x0))
    one = _convert_element_type(1, *dtypes.result_type(*tree_leaves(b), return_weak_type_flag=True))
    x_final, *_ = lax.while_loop(cond, body, (x0, r0, r0, one, one, one, r0, r0, 0))
    return x_final


def _shapes(tree: Any) -> list[tuple[int, ...]]:
    return [np.shape(leaf) for leaf in tree_leaves(tree)]


def _isolve(
    solve_with: Callable[..., Any],
    A: Any,
    b: Any,
    x0: Any = None,
    *,
    tol: float = 1e-5,
    atol: float = 0.0,
    maxiter: int | None = None,
    M: Any = None,
    check_symmetric: bool = False,
) -> tuple[Any, None]:
    if x0 is None:
        x0 = tree_map(jnp.zeros_like, b)
    b, x0 = _device_put((b, x0))
    if maxiter is None:
        maxiter = 10 * sum(int(np.size(leaf)) for leaf in tree_leaves(b))  # as SciPy
    if M is None:
        M = _identity
    A = _normalize_matvec(A)
    M = _normalize_matvec(M)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(
            "x0 and b must have matching tree structure: "
            f"{public.tree_structure(x0)} vs {public.tree_structure(b)}"
        )
    if _shapes(x0) != _shapes(b):
        raise ValueError(
            f"arrays in x0 and b must have matching shapes: {_shapes(x0)} vs {_shapes(b)}"
        )
    solve_it = partial(solve_with, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    symmetric = check_symmetric and all(
        not dtypes.issubdtype(dtype_of(leaf), np.complexfloating) for leaf in tree_leaves(b)
    )
    x = lax.custom_linear_solve(A, b, solve=solve_it, transpose_solve=solve_it,
                                symmetric=symmetric)  # fmt: skip
    return x, None


def cg(
    A: Any,
    b: Any,
    x0: Any = None,
    *,
    tol: float = 1e-5,
    atol: float = 0.0,
    maxiter: int | None = None,
    M: Any = None,
) -> tuple[Any, None]:
    """`(x, None)`: the solution of `A(x) = b` by conjugate gradients, `A` (and the
    preconditioner `M`) Hermitian positive definite; stops when the residual's norm is below
    max(tol |b|, atol) or after `maxiter` steps (10 per unknown by default)."""
    return _isolve(_cg_solve, A=A, b=b, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M,
                   check_symmetric=True)  # fmt: skip


def bicgstab(
    A: Any,
    b: Any,
    x0: Any = None,
    *,
    tol: float = 1e-5,
    atol: float = 0.0,
    maxiter: int | None = None,
    M: Any = None,
) -> tuple[Any, None]:
    """`(x, None)`: the solution of `A(x) = b` by the stabilized biconjugate gradient method,
    for any square `A`; stopping as `cg`."""
    return _isolve(_bicgstab_solve, A=A, b=b, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
