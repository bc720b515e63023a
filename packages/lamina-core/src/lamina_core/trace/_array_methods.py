"""The NumPy-style operators and methods of array-like classes (tracers, device arrays).

Each operator looks up the implementation the array frontend registered under its name
(`register_tracer_method`, written at import by `lamina_core.numpy`), so an operator means the
same thing on a tracer and on a concrete array. This module knows no trace and no array type.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, Final, NamedTuple

import numpy as np

from lamina_core.ir import ShapedArray

_methods: dict[str, Callable[..., Any]] = {}


class aval_property(NamedTuple):  # JAX's name
    """On a type (a hi type's class), a property its values' tracers have: `x.name` on a
    tracer of the type is `fget(x)`."""

    fget: Callable[[Any], Any]


class aval_method(NamedTuple):  # JAX's name
    """On a type, a method its values' tracers have: `x.name(*args)` is `fun(x, *args)`."""

    fun: Callable[..., Any]


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


def check_scalar_conversion(shape: tuple[int, ...]) -> None:
    """JAX's error for `float(x)`, `int(x)`, `complex(x)` of an array that is not a scalar."""
    if shape:
        raise TypeError(
            f"Only scalar arrays can be converted to Python scalars; got arr.ndim={len(shape)}"
        )


def check_integer_conversion(shape: tuple[int, ...], dtype: Any) -> None:
    """JAX's error for `operator.index(x)` of an array that is not an integer scalar."""
    if shape or getattr(dtype, "kind", None) not in ("i", "u"):
        raise TypeError("Only integer scalar arrays can be converted to a scalar index.")


def check_bool_conversion(size: int) -> None:
    """NumPy's rule, as JAX's: only an array of one element has a truth value."""
    if size == 0:
        raise ValueError(
            "The truth value of an empty array is ambiguous. Use `array.size > 0` to check "
            "that an array is not empty."
        )
    if size > 1:
        raise ValueError(
            "The truth value of an array with more than one element is ambiguous. Use "
            "a.any() or a.all()"
        )


_OPERAND_TYPES: Final = (int, float, complex, np.generic, np.ndarray)
"""Besides arrays, what the binary operators take as the other operand (JAX's
`_accepted_binop_types`); any other type makes them return `NotImplemented`, so Python asks
the other operand's reflected operator (a sparse matrix's `__rmatmul__`)."""

_REFUSED: Final[dict[str, tuple[str, tuple[type, ...]]]] = {
    # JAX's explicit refusals, where Python's fallback would mean something else: `==` on a
    # container would answer False, `+` and `*` concatenate or repeat a sequence.
    "equal": ("==", (dict, list, set, tuple)),
    "not_equal": ("==", (dict, list, set, tuple)),  # JAX's text says `==` for `!=` too
    "add": ("+", (tuple, list)),
    "multiply": ("*", (tuple, list)),
}


_operand_types: set[type] = set()


def register_operand_type(cls: type) -> None:
    """Let the binary operators take instances of `cls`, an upper layer's array type that is
    no `ArrayMethods` (the runtime's device buffers), as their other operand."""
    _operand_types.add(cls)


def _operand(other: Any) -> Any:
    """`other` as an operand of the binary operators (through `__jax_array__`), or
    `NotImplemented` when they do not take it: an array (a value with an array aval: a device
    array, a tracer of an array), a NumPy value or a Python number, as JAX decides."""
    if isinstance(other, _OPERAND_TYPES):
        return other
    if isinstance(other, ArrayMethods):
        if isinstance(getattr(other, "aval", None), ShapedArray):
            return other
        return NotImplemented
    if type(other) in _operand_types:
        return other
    convert = getattr(other, "__jax_array__", None)
    if convert is not None:
        other = convert()
        if isinstance(other, _OPERAND_TYPES) or isinstance(
            getattr(other, "aval", None), ShapedArray
        ):
            return other
    return NotImplemented


def _type_name(x: Any) -> str:
    return getattr(x, "jax_name", None) or type(x).__name__


def _refuse(name: str, left: Any, right: Any) -> None:
    """JAX's `TypeError` for the operator `name` between `left` and the non-array `right`
    types it refuses rather than deferring."""
    refused = _REFUSED.get(name)
    if refused is not None and (type(left) in refused[1] or type(right) in refused[1]):
        raise TypeError(
            f"unsupported operand type(s) for {refused[0]}: {_type_name(left)!r} and "
            f"{_type_name(right)!r}"
        )


def _unary(name: str) -> Callable[[Any], Any]:
    """The operator that applies the frontend's `name` to the array."""

    def op(self: Any) -> Any:
        return _method(name)(self)

    return op


def _binary(name: str) -> Callable[[Any, Any], Any]:
    """The operator that applies the frontend's `name` to the array and the other operand,
    or defers (`NotImplemented`) for an operand it does not take."""

    def op(self: Any, other: Any) -> Any:
        operand = _operand(other)
        if operand is NotImplemented:
            _refuse(name, self, other)
            return NotImplemented
        return _method(name)(self, operand)

    return op


def _binary_pair(name: str) -> tuple[Callable[[Any, Any], Any], Callable[[Any, Any], Any]]:
    """`_binary(name)` and its reflection (`other <op> array`, which Python tries second)."""

    def reflected(self: Any, other: Any) -> Any:
        operand = _operand(other)
        if operand is NotImplemented:
            _refuse(name, other, self)
            return NotImplemented
        return _method(name)(operand, self)

    return _binary(name), reflected


class ArrayMethods:
    """NumPy-style operators and methods for array-like classes (tracers, device arrays).

    Each operator calls the implementation the array frontend registered under its name, so
    an operator means the same thing on a tracer and on a concrete array.
    """

    __slots__ = ()
    # No `__array_ufunc__`, as JAX's arrays have none: NumPy's functions (`np.isfinite(x)`)
    # convert the array through `__array__` (a tracer refuses, with JAX's error), and NumPy's
    # operators (`np_array + x`) defer to our reflected ones, since this priority is higher.
    __array_priority__ = 1000

    @property
    def T(self) -> Any:
        own = getattr(getattr(self, "aval", None), "T", None)  # a traced Ref's (a view)
        if type(own) is aval_property:
            return own.fget(self)
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

    def __round__(self, ndigits: int | None = None) -> Any:
        # As JAX's: `jnp.round`, and an integer array when no digits are given (as `round`
        # gives an int for a float).
        out = _method("method:round")(self, ndigits or 0)
        return out if ndigits is not None else _method("method:astype")(out, int)

    def __getattr__(self, name: str) -> Any:
        # What the value's type gives its tracers first (JAX's `aval_property`/`aval_method`:
        # a traced Ref's `reshape` is its own), then array properties (`x.real`) and methods
        # (`x.sum()`) from the frontend's registry.
        attr = getattr(getattr(self, "aval", None), name, None)
        if type(attr) is aval_property:
            return attr.fget(self)
        if type(attr) is aval_method:
            return types.MethodType(attr.fun, self)
        prop = _methods.get(f"property:{name}")
        if prop is not None:
            return prop(self)
        method = _methods.get(f"method:{name}")
        if method is None:
            raise self._no_attribute(name)
        return lambda *args, **kwargs: method(self, *args, **kwargs)

    def _no_attribute(self, name: str) -> AttributeError:
        """The error for a missing attribute `name` (tracers give JAX's tracers' texts)."""
        return AttributeError(f"{type(self).__name__} has no attribute {name!r}")
