"""Differentiation rules of the linalg primitives, as JAX's.

`cholesky`: the forward-mode rule of Murray (arXiv:1602.07527), two triangular solves and a
product. `triangular_solve`: linear in `b` (its transpose solves with the transposed `a`), and
its tangent in `a` is `-op(a)^{-1} op(da) x` (or the right-side analogue), with the product and
the solve ordered by which is cheaper, as JAX orders them. `lu`: De Hoog, Anderssen and Lukas's
rule, per matrix under `vmap`; the integer outputs have zero (float0) tangents.
`lu_pivots_to_permutation` maps integers to integers and is not differentiable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters import (
    Zero,
    defjvp2,
    instantiate_zeros,
    jvp_rules,
    not_differentiable,
    transpose_rules,
    zero_of,
)
from lamina_core.lax import _checks as c
from lamina_core.lax._ad_common import aval_of, const
from lamina_core.lax._dot_types import Precision
from lamina_core.lax._elementwise import add, conj, div, eq, neg
from lamina_core.lax._joining import pad
from lamina_core.lax._linalg import batch_matmul
from lamina_core.lax._linalg import dot as dot_
from lamina_core.lax._shape import broadcasted_iota, expand_dims
from lamina_core.lax._structural import _convert_element_type
from lamina_core.lax.linalg._primitives import (
    _T,
    _tril,
    _triu,
    cholesky_p,
    lu_p,
    lu_pivots_to_permutation_p,
    triangular_solve,
    triangular_solve_p,
)
from lamina_core.transforms import vmap

_INT32 = np.dtype(np.int32)


def _eye(dtype: np.dtype, n: int) -> Any:
    """The n-by-n identity in `dtype` (iotas compared, then converted, as JAX's `_eye`)."""
    rows = add(broadcasted_iota(_INT32, (n, n), 0), np.int32(0))
    same = eq(rows, broadcasted_iota(_INT32, (n, n), 1))
    return _convert_element_type(same, dtype, False)


def _highest() -> Any:
    return Precision.HIGHEST


# --- cholesky ---------------------------------------------------------------------------------


def _phi(x: Any) -> Any:
    """The lower triangle of `x` with its diagonal halved."""
    n = aval_of(x).shape[-1]
    lower = _tril(x)
    scale = add(const(x, 1), _eye(aval_of(x).dtype, n))
    return div(lower, expand_dims(scale, range(x.ndim - 2)))


def _cholesky_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    (x,), (sigma_dot,) = primals, tangents
    factor = _tril(cholesky_p.bind(x))
    sigma_dot = instantiate_zeros(sigma_dot)
    tmp = triangular_solve(
        factor, sigma_dot, left_side=False, transpose_a=True, conjugate_a=True, lower=True
    )
    inner = triangular_solve(factor, tmp, left_side=True, transpose_a=False, lower=True)
    factor_dot = batch_matmul(factor, _phi(inner), precision=_highest())
    return factor, factor_dot


jvp_rules.set(cholesky_p, _cholesky_jvp)


# --- triangular_solve -------------------------------------------------------------------------


def _triangular_solve_jvp_a(
    g_a: Any,
    ans: Any,
    a: Any,
    b: Any,
    *,
    left_side: bool,
    lower: bool,
    transpose_a: bool,
    conjugate_a: bool,
    unit_diagonal: bool,
) -> Any:
    m, n = aval_of(b).shape[-2:]
    k = 1 if unit_diagonal else 0
    g_a = _tril(g_a, k=-k) if lower else _triu(g_a, k=k)
    g_a = neg(g_a)
    g_a = _T(g_a) if transpose_a else g_a
    if conjugate_a and c.kind_of(aval_of(g_a).dtype) == "c":
        g_a = conj(g_a)

    def dot(x: Any, y: Any) -> Any:
        if aval_of(g_a).ndim == 2:
            return dot_(x, y, precision=_highest())
        return batch_matmul(x, y, precision=_highest())

    def a_inverse(rhs: Any) -> Any:
        return triangular_solve(
            a,
            rhs,
            left_side=left_side,
            lower=lower,
            transpose_a=transpose_a,
            conjugate_a=conjugate_a,
            unit_diagonal=unit_diagonal,
        )

    if left_side:
        return a_inverse(dot(g_a, ans)) if m > n else dot(a_inverse(g_a), ans)
    return a_inverse(dot(ans, g_a)) if m < n else dot(ans, a_inverse(g_a))


def _triangular_solve_jvp_b(g_b: Any, ans: Any, a: Any, b: Any, **params: Any) -> Any:
    return triangular_solve(a, g_b, **params)


defjvp2(triangular_solve_p, _triangular_solve_jvp_a, _triangular_solve_jvp_b)


def _triangular_solve_transpose(
    ct: Any,
    a: Any,
    b: Any,
    *,
    left_side: bool,
    lower: bool,
    transpose_a: bool,
    conjugate_a: bool,
    unit_diagonal: bool,
) -> list[Any]:
    # Linear in `b` only, as division is in its numerator.
    if type(ct) is Zero:
        return [None, Zero(b.aval)]
    ct_b = triangular_solve(
        a,
        ct,
        left_side=left_side,
        lower=lower,
        transpose_a=not transpose_a,
        conjugate_a=conjugate_a,
        unit_diagonal=unit_diagonal,
    )
    return [None, ct_b]


transpose_rules.set(triangular_solve_p, _triangular_solve_transpose)


# --- lu ---------------------------------------------------------------------------------------


def _lu_jvp_inner(lu: Any, a_dot: Any, permutation: Any) -> Any:
    """The tangent of one matrix's packed LU factors: `L' + U'` from `inv(L) A' inv(U)`."""
    m, n = aval_of(a_dot).shape
    dtype = aval_of(a_dot).dtype
    k = min(m, n)
    zero = const(lu, 0)
    l_part = pad(_tril(lu[:, :k], -1), zero, ((0, 0, 0), (0, m - k, 0)))
    l_full = add(l_part, _eye(dtype, m))
    u_eye = pad(_eye(dtype, n - k), zero, ((k, 0, 0), (k, 0, 0)))
    u_part = pad(_triu(lu[:k, :]), zero, ((0, n - k, 0), (0, 0, 0)))
    u_full = add(u_part, u_eye)
    la = triangular_solve(
        l_full, a_dot[permutation], left_side=True, transpose_a=False, lower=True,
        unit_diagonal=True,
    )  # fmt: skip
    lau = triangular_solve(u_full, la, left_side=False, transpose_a=False, lower=False)
    highest = (_highest(), _highest())
    l_dot = dot_(l_full, _tril(lau, -1), precision=highest, preferred_element_type=dtype)
    u_dot = dot_(_triu(lau), u_full, precision=highest, preferred_element_type=dtype)
    return add(l_dot, u_dot)


def _lu_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    (a,), (a_dot,) = primals, tangents
    lu, pivots, permutation = lu_p.bind(a)
    fn: Any = _lu_jvp_inner
    for _ in aval_of(a).shape[:-2]:
        fn = vmap(fn)
    lu_dot = fn(lu, instantiate_zeros(a_dot), permutation)
    return [lu, pivots, permutation], [lu_dot, zero_of(pivots), zero_of(permutation)]


jvp_rules.set(lu_p, _lu_jvp)


# Integer pivots in, an integer permutation out: nothing to differentiate.
not_differentiable(lu_pivots_to_permutation_p)
