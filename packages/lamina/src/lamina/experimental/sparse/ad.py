"""`jax.experimental.sparse.ad`: sparse-aware `grad`, `value_and_grad`, `jacfwd`, `jacrev`,
`jacobian`."""

from lamina_core.sparse import grad, jacfwd, jacobian, jacrev, value_and_grad

__all__ = ["grad", "jacfwd", "jacobian", "jacrev", "value_and_grad"]
