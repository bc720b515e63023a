"""The binary and unary functions JAX makes `jnp.ufunc`s, called with its `out=`/`where=`.

JAX's `add`, `maximum`, `logical_and`, ... are `ufunc` objects whose call takes the arrays
positionally and `out`/`where` by keyword, refusing any value but None. These wrappers give
the public names that signature and that refusal (its text names the ufunc); the operators
(`x + y`) keep calling the family functions directly.
"""

from __future__ import annotations

from collections.abc import Callable

from lamina_core.numpy import _ufuncs as u
from lamina_core.numpy import _ufuncs_composite as uc
from lamina_core.numpy._promote import check_arraylike
from lamina_core.numpy._util import Array, ArrayLike

_Call = Callable[..., Array]


def _with_out_where(fn: _Call, name: str) -> _Call:
    def call(*args: ArrayLike, out: None = None, where: None = None) -> Array:
        check_arraylike(name, *args)
        if out is not None:
            raise NotImplementedError(f"out argument of <jnp.ufunc '{name}'>")
        if where is not None:
            raise NotImplementedError(f"where argument of <jnp.ufunc '{name}'>")
        return fn(*args)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = fn.__doc__
    call.__wrapped_ufunc__ = fn  # type: ignore[attr-defined]  # the plain function, for tools
    return call


add = _with_out_where(u.add, "add")
subtract = _with_out_where(u.subtract, "subtract")
multiply = _with_out_where(u.multiply, "multiply")
negative = _with_out_where(u.negative, "negative")
maximum = _with_out_where(u.maximum, "maximum")
minimum = _with_out_where(u.minimum, "minimum")
logaddexp = _with_out_where(uc.logaddexp, "logaddexp")
logaddexp2 = _with_out_where(uc.logaddexp2, "logaddexp2")
logical_and = _with_out_where(u.logical_and, "logical_and")
logical_or = _with_out_where(u.logical_or, "logical_or")
logical_xor = _with_out_where(u.logical_xor, "logical_xor")
bitwise_and = _with_out_where(u.bitwise_and, "bitwise_and")
bitwise_or = _with_out_where(u.bitwise_or, "bitwise_or")
bitwise_xor = _with_out_where(u.bitwise_xor, "bitwise_xor")

__all__ = [
    "add",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "logaddexp",
    "logaddexp2",
    "logical_and",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "multiply",
    "negative",
    "subtract",
]
