"""`eval_shape`, as JAX's: the shapes and dtypes of a function's results, by tracing alone.

It sits in `transforms` (not with the Jacobians, which are written with `numpy`) because
`numpy`'s functional tools call it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lamina_core.transforms._make_jaxpr import make_jaxpr


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes (weak types kept) of `fun(*args, **kwargs)`, as a pytree of
    `ShapeDtypeStruct`, found by tracing alone. Arguments may be `ShapeDtypeStruct`s."""
    _, shapes = make_jaxpr(fun, return_shape=True)(*args, **kwargs)
    return shapes


__all__ = ["eval_shape"]
