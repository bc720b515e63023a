"""`jax.experimental.sparse.transform`: the `sparsify` transformation and its rule table."""

from lamina_core.sparse import (
    SparsifyEnv,
    SparsifyValue,
    sparse_rules_bcoo,
    sparsify,
)

__all__ = ["SparsifyEnv", "SparsifyValue", "sparse_rules_bcoo", "sparsify"]
