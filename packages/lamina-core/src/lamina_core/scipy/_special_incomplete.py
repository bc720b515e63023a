"""The regularized incomplete gamma and beta functions of `jax.scipy.special`: `gammainc`,
`gammaincc` and `betainc`, promoting their operands to a float dtype for `lax.igamma`,
`lax.igammac` and `lax.betainc`, as JAX 0.10.2 does."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core.ir import dtypes
from lamina_core.numpy import dtype_of
from lamina_core.numpy import promotion as p

Array = Any


def gammainc(a: Any, x: Any) -> Array:
    """The regularized lower incomplete gamma function P(a, x)."""
    a, x = p.promote_args_inexact("gammainc", a, x)
    return lax.igamma(a, x)


def gammaincc(a: Any, x: Any) -> Array:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    a, x = p.promote_args_inexact("gammaincc", a, x)
    return lax.igammac(a, x)


def betainc(a: Any, b: Any, x: Any) -> Array:
    """The regularized incomplete beta function I_x(a, b) (real operands only)."""
    a, b, x = p.promote_args_inexact("betainc", a, b, x)
    if dtypes.issubdtype(dtype_of(x), np.complexfloating):
        raise ValueError("betainc does not support complex-valued inputs.")
    return lax.betainc(a, b, x)
