"""BCOO's array methods and operators (`@`, `*`, `+`, `-`, `sum`, `reshape`, `astype`,
comparisons), each `sparsify` of the jnp function (as JAX installs them), and
`update_layout`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lamina_core import numpy as jnp
from lamina_core.sparse._bcoo import BCOO
from lamina_core.sparse._bcoo_layout_update import bcoo_update_layout
from lamina_core.sparse._transform_tracer import sparsify


def _swap_args(f: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    return lambda a, b: f(b, a)


def _sum(self: BCOO, *args: Any, **kwargs: Any) -> Any:
    """Sum array along axis."""
    return sparsify(lambda x: x.sum(*args, **kwargs))(self)


def _reshape(self: BCOO, *args: Any, **kwargs: Any) -> Any:
    """An array with the same data and a new shape."""
    return sparsify(lambda x: x.reshape(*args, **kwargs))(self)


def _astype(self: BCOO, *args: Any, **kwargs: Any) -> Any:
    """The array cast to a dtype."""
    return sparsify(lambda x: x.astype(*args, **kwargs))(self)


def _update_layout(
    self: BCOO,
    *,
    n_batch: int | None = None,
    n_dense: int | None = None,
    on_inefficient: str | None = "error",
) -> BCOO:
    """The array with `n_batch` batch and `n_dense` dense dimensions (`bcoo_update_layout`)."""
    return bcoo_update_layout(self, n_batch=n_batch, n_dense=n_dense, on_inefficient=on_inefficient)


_bcoo_methods: dict[str, Any] = {
    "update_layout": _update_layout,
    "astype": _astype,
    "reshape": _reshape,
    "sum": _sum,
    "__abs__": sparsify(jnp.abs),
    "__neg__": sparsify(jnp.negative),
    "__pos__": sparsify(jnp.positive),
    "__matmul__": sparsify(jnp.matmul),
    "__rmatmul__": sparsify(_swap_args(jnp.matmul)),
    "__mul__": sparsify(jnp.multiply),
    "__rmul__": sparsify(_swap_args(jnp.multiply)),
    "__truediv__": sparsify(jnp.divide),
    "__rtruediv__": sparsify(_swap_args(jnp.divide)),
    "__add__": sparsify(jnp.add),
    "__radd__": sparsify(_swap_args(jnp.add)),
    "__sub__": sparsify(jnp.subtract),
    "__rsub__": sparsify(_swap_args(jnp.subtract)),
    "__pow__": lambda x, y: sparsify(lambda x: jnp.power(x, y))(x),
    "__rpow__": sparsify(_swap_args(jnp.power)),
    "__gt__": sparsify(jnp.greater),
    "__ge__": sparsify(jnp.greater_equal),
    "__lt__": sparsify(jnp.less),
    "__le__": sparsify(jnp.less_equal),
    "__eq__": sparsify(jnp.equal),
    "__ne__": sparsify(jnp.not_equal),
}
for _method, _impl in _bcoo_methods.items():
    setattr(BCOO, _method, _impl)

__all__: list[str] = []
