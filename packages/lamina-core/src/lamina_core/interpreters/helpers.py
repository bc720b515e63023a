"""Rule helpers spanning interpreters: linear and bilinear primitives.

A linear primitive needs one definition for both forward mode (apply it to the tangents) and
reverse mode (its transpose); a bilinear one (`mul`, `dot_general`) is differentiated by the
product rule and transposed in whichever operand is linear.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lamina_core.interpreters.jvp import defjvp, jvp_rules, linear_jvp
from lamina_core.interpreters.transpose import TransposeRule, is_undefined, transpose_rules
from lamina_core.interpreters.zeros import Zero, add_any_p
from lamina_core.ir import Primitive


def deflinear(prim: Primitive, transpose: TransposeRule) -> None:
    """`prim` is linear in all operands: jvp applies it to tangents; `transpose` reverses it."""
    jvp_rules.set(prim, linear_jvp(prim))
    transpose_rules.set(prim, transpose)


BilinearTranspose = Callable[..., Any]
"""`rule(ct, x, y, **params)`: the cotangent of the undefined operand."""


def defbilinear(
    prim: Primitive, lhs_transpose: BilinearTranspose, rhs_transpose: BilinearTranspose
) -> None:
    """`prim(x, y)` is linear in each operand: product-rule jvp, transpose in the linear one."""
    defjvp(
        prim,
        lambda g, x, y, **params: prim.bind(g, y, **params),
        lambda g, x, y, **params: prim.bind(x, g, **params),
    )

    def transpose(ct: Any, x: Any, y: Any, **params: Any) -> Sequence[Any]:
        if is_undefined(x):
            return [Zero(x.aval) if type(ct) is Zero else lhs_transpose(ct, x, y, **params), None]
        return [None, Zero(y.aval) if type(ct) is Zero else rhs_transpose(ct, x, y, **params)]

    transpose_rules.set(prim, transpose)


def _add_any_transpose(ct: Any, x: Any, y: Any) -> Sequence[Any]:
    return [ct, ct]


deflinear(add_any_p, _add_any_transpose)
__all__ = ["defbilinear", "deflinear"]
