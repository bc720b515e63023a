"""`jax.experimental.sparse.api`: `todense` (its primitive lowered as its impl, as JAX's),
`empty` and `eye`."""

from lamina.interpreters import mlir
from lamina_core.sparse import empty, eye, todense, todense_impl, todense_p

mlir.register_lowering(todense_p, mlir.lower_fun(todense_impl, multiple_results=False))

__all__ = ["empty", "eye", "todense", "todense_p"]
