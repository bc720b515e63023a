"""The NumPy-style operators and methods of array-like classes (tracers, device arrays).

Each operator looks up the implementation the array frontend registered under its name
(`register_tracer_method`, written at import by `lamina_core.numpy`), so an operator means the
same thing on a tracer and on a concrete array. This module knows no trace and no array type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_methods: dict[str, Callable[..., Any]] = {}


def register_tracer_method(name: str, method: Callable[..., Any]) -> None:
    """The array frontend registers operator implementations here at import."""
    _methods[name] = method


def _method(name: str) -> Callable[..., Any]:
    try:
        return _methods[name]
    except KeyError:
        raise NotImplementedError(
            f"tracers have no `{name}` yet: import lamina_core.numpy to install the operators"
        ) from None


def _immutable_error() -> TypeError:
    return TypeError(
        "JAX arrays are immutable and do not support in-place item assignment. Instead of "
        "x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
        "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html"
    )


def _unary(name: str) -> Callable[[Any], Any]:
    """The operator that applies the frontend's `name` to the array."""

    def op(self: Any) -> Any:
        return _method(name)(self)

    return op


def _binary(name: str) -> Callable[[Any, Any], Any]:
    """The operator that applies the frontend's `name` to the array and the other operand."""

    def op(self: Any, other: Any) -> Any:
        return _method(name)(self, other)

    return op


def _binary_pair(name: str) -> tuple[Callable[[Any, Any], Any], Callable[[Any, Any], Any]]:
    """`_binary(name)` and its reflection (`other <op> array`, which Python tries second)."""

    def reflected(self: Any, other: Any) -> Any:
        return _method(name)(other, self)

    return _binary(name), reflected


class ArrayMethods:
    """NumPy-style operators and methods for array-like classes (tracers, device arrays).

    Each operator calls the implementation the array frontend registered under its name, so
    an operator means the same thing on a tracer and on a concrete array.
    """

    __slots__ = ()
    __array_priority__ = 1000
    __array_ufunc__ = None  # NumPy defers to our reflected operators instead of coercing

    @property
    def T(self) -> Any:
        return _method("transpose")(self)

    def __getitem__(self, index: Any) -> Any:
        return _method("getitem")(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        raise _immutable_error()

    __neg__ = _unary("negative")
    __pos__ = _unary("positive")
    __abs__ = _unary("abs")
    __invert__ = _unary("invert")
    __add__, __radd__ = _binary_pair("add")
    __sub__, __rsub__ = _binary_pair("subtract")
    __mul__, __rmul__ = _binary_pair("multiply")
    __truediv__, __rtruediv__ = _binary_pair("true_divide")
    __floordiv__, __rfloordiv__ = _binary_pair("floor_divide")
    __mod__, __rmod__ = _binary_pair("remainder")
    __divmod__, __rdivmod__ = _binary_pair("divmod")
    __pow__, __rpow__ = _binary_pair("power")
    __matmul__, __rmatmul__ = _binary_pair("matmul")
    __and__, __rand__ = _binary_pair("bitwise_and")
    __or__, __ror__ = _binary_pair("bitwise_or")
    __xor__, __rxor__ = _binary_pair("bitwise_xor")
    __lshift__, __rlshift__ = _binary_pair("left_shift")
    __rshift__, __rrshift__ = _binary_pair("right_shift")
    # Comparisons are elementwise, as NumPy's (so `__eq__` does not answer a bool).
    __eq__ = _binary("equal")
    __ne__ = _binary("not_equal")
    __lt__ = _binary("less")
    __le__ = _binary("less_equal")
    __gt__ = _binary("greater")
    __ge__ = _binary("greater_equal")

    def __getattr__(self, name: str) -> Any:
        # Array properties (`x.real`) and methods (`x.sum()`) come from the frontend's registry.
        prop = _methods.get(f"property:{name}")
        if prop is not None:
            return prop(self)
        method = _methods.get(f"method:{name}")
        if method is None:
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        return lambda *args, **kwargs: method(self, *args, **kwargs)
