"""`jax.experimental.sparse.util`: sparse helpers and the sparse errors and warnings."""

from lamina_core.sparse import (
    CuSparseEfficiencyWarning,
    Shape,
    SparseEfficiencyError,
    SparseEfficiencyWarning,
    SparseInfo,
    broadcasting_vmap,
    nfold_vmap,
)

__all__ = [
    "CuSparseEfficiencyWarning",
    "Shape",
    "SparseEfficiencyError",
    "SparseEfficiencyWarning",
    "SparseInfo",
    "broadcasting_vmap",
    "nfold_vmap",
]
