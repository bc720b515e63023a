"""JAX's `Primitive` class and `CallPrimitive` over Lamina's primitives.

`Primitive("name")` makes a primitive defined through JAX's API (`def_impl`,
`def_abstract_eval`, ...: lamina_core's `UserPrimitive`), and the class is also the type of
every Lamina primitive: `isinstance(lax.add_p, Primitive)` holds, as in JAX, where one class
serves both. A call primitive applies a Python function (`lu.WrappedFun`) to its operands.
"""

from __future__ import annotations

from typing import Any

from lamina.extend.linear_util import WrappedFun
from lamina_core.ir import Primitive as CorePrimitive
from lamina_core.trace import UserPrimitive


class _PrimitiveType(type):
    """`Primitive` is the type of every Lamina primitive; its subclasses are ordinary."""

    def __instancecheck__(cls, obj: object) -> bool:
        if cls is Primitive:
            return isinstance(obj, CorePrimitive)
        return super().__instancecheck__(obj)

    def __subclasscheck__(cls, sub: type) -> bool:
        if cls is Primitive:
            return issubclass(sub, CorePrimitive)
        return super().__subclasscheck__(sub)


class Primitive(UserPrimitive, metaclass=_PrimitiveType):
    """A primitive: `Primitive("name")`, then its rules (`def_impl`, `def_abstract_eval`,
    `ad.primitive_jvps[p] = ...`, `mlir.register_lowering(p, ...)`)."""


def call_impl(f: WrappedFun, *args: Any, **params: Any) -> Any:
    """A call primitive applied eagerly: `f` on the operands (params describe the call)."""
    del params
    return f.call_wrapped(*args)


class CallPrimitive(Primitive):
    """A primitive applying a function to its operands: `call_p.bind(fun, *args)`.

    Lamina applies the function where the call is bound (eagerly: `call_impl`; under a
    transformation or while staging, the function is traced into the enclosing trace), so
    the call's equations appear inline rather than as one call equation.
    """

    multiple_results = True
    call_primitive = True

    def bind(self, *args: Any, **params: Any) -> Any:
        if not args:
            raise TypeError(f"{self.name}.bind needs the function to call as its first argument")
        fun, *operands = args
        if not isinstance(fun, WrappedFun):
            raise TypeError(
                f"{self.name}.bind: the function to call must be a linear_util.WrappedFun "
                f"(lu.wrap_init(f)), got {type(fun).__name__}"
            )
        # Under any trace the function runs in it: its equations are staged inline.
        return call_impl(fun, *operands, **params)

    def get_bind_params(self, params: dict[str, Any]) -> Any:
        return [], params


call_p = CallPrimitive("call")
