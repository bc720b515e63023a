"""`jax.experimental.sparse.transform`: the `sparsify` transformation, its rule tables and
its trace."""

from lamina_core.sparse import (
    SparseTrace,
    SparseTracer,
    SparsifyEnv,
    SparsifyValue,
    sparse_rules_bcoo,
    sparse_rules_bcsr,
    sparsify,
)

__all__ = [
    "SparseTrace",
    "SparseTracer",
    "SparsifyEnv",
    "SparsifyValue",
    "sparse_rules_bcoo",
    "sparse_rules_bcsr",
    "sparsify",
]
