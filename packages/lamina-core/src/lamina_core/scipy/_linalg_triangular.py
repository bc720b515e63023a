"""Triangular solves of `jax.scipy.linalg` (`solve_triangular`) and the gufunc signature
the solve functions share; a module of its own so the matrix functions (`expm`) can use it
without importing the public module that re-exports them."""

from __future__ import annotations

import warnings
from functools import partial
from typing import Any

from lamina_core import numpy as jnp
from lamina_core.lax import linalg as lax_linalg
from lamina_core.numpy import promote_dtypes_inexact, shape_of
from lamina_core.transforms import Jitted

Array = Any


def solve_signature(name: str, a: Any, b: Any, extra: str = "") -> str:
    """The gufunc signature of one solve: a vector right-hand side, or a matrix of them."""
    a_ndim, b_ndim = len(shape_of(a)), len(shape_of(b))
    if b_ndim == 1:
        return f"(n,n),{extra}(n)->(n)"
    if a_ndim == b_ndim + 1 and shape_of(a)[-1] == shape_of(b)[-1]:
        warnings.warn(
            f"jax.scipy.linalg.{name}: batched 1D solves with b.ndim > 1 are deprecated, and "
            "in the future will be treated as a batched 2D solve. Use "
            f"{_SQUEEZE_HINT[name]} to avoid this warning.",
            category=FutureWarning,
            stacklevel=4,
        )
        return f"(n,n),{extra}(n)->(n)"
    return f"(n,n),{extra}(n,k)->(n,k)"


_SQUEEZE_HINT = {
    "cho_solve": "cho_solve(c_and_lower, b[..., None]).squeeze(-1)",
    "solve_triangular": "solve_triangular(a, b[..., None]).squeeze(-1)",
    "lu_solve": "lu_solve(lu_and_piv, b[..., None]).squeeze(-1)",
}


_TRANS = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False)}
_TRANS |= {2: (True, True), "C": (True, True)}


@partial(Jitted, static_argnames=("trans", "lower", "unit_diagonal"))
def _solve_triangular(a: Any, b: Any, trans: int | str, lower: bool, unit_diagonal: bool) -> Array:
    if trans not in _TRANS:
        raise ValueError(f"Invalid 'trans' value {trans}")
    transpose_a, conjugate_a = _TRANS[trans]
    a, b = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))
    signature = solve_signature("solve_triangular", a, b)
    solve = partial(
        lax_linalg.triangular_solve,
        left_side=True,
        lower=lower,
        transpose_a=transpose_a,
        conjugate_a=conjugate_a,
        unit_diagonal=unit_diagonal,
    )
    return jnp.vectorize(solve, signature=signature)(a, b)


def solve_triangular(
    a: Any,
    b: Any,
    trans: int | str = 0,
    lower: bool = False,
    unit_diagonal: bool = False,
    overwrite_b: bool = False,
    debug: Any = None,
    check_finite: bool = True,
) -> Array:
    """x with op(a) x = b for triangular `a` (op per `trans`: 0/'N', 1/'T' or 2/'C')."""
    del overwrite_b, debug, check_finite
    return _solve_triangular(a, b, trans, lower, unit_diagonal)
