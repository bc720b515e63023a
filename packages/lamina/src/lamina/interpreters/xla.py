"""`jax.interpreters.xla`: running one primitive as a compiled program."""

from __future__ import annotations

from typing import Any

from lamina_core.ir import Primitive
from lamina_runtime import jit

__all__ = ["apply_primitive"]


def apply_primitive(prim: Primitive, *args: Any, **params: Any) -> Any:
    """`prim` applied to `args` as its own compiled program (what a primitive defined with
    `def_impl(partial(apply_primitive, p))` runs eagerly)."""

    def one_equation(*xs: Any) -> Any:
        return prim.bind(*xs, **params)

    one_equation.__name__ = one_equation.__qualname__ = prim.name
    return jit(one_equation)(*args)
