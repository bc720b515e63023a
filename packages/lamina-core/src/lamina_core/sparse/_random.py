"""`random_bcoo` (`jax.experimental.sparse.random`): a BCOO array with random values at
random (by default distinct) indices."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

from lamina_core import numpy as jnp
from lamina_core import random
from lamina_core.ir import dtypes
from lamina_core.sparse._bcoo import BCOO
from lamina_core.transforms import vmap

Array = Any


def random_bcoo(
    key: Array,
    shape: Sequence[int],
    *,
    dtype: Any = jnp.float_,
    indices_dtype: Any = None,
    nse: float = 0.2,
    n_batch: int = 0,
    n_dense: int = 0,
    unique_indices: bool = True,
    sorted_indices: bool = False,
    generator: Callable[..., Array] = random.uniform,
    **kwds: Any,
) -> BCOO:
    """A random BCOO array.

    Args:
        key: the PRNG key passed to `generator`.
        shape: the shape of the array.
        dtype: its dtype.
        indices_dtype: the dtype of its indices (default: the default integer type).
        nse: the number of stored elements, or for `0 < nse < 1` the fraction of the sparse
            dimensions' size to store (default 0.2).
        n_batch: the number of batch dimensions.
        n_dense: the number of dense dimensions.
        unique_indices: whether the indices are distinct (default True).
        sorted_indices: whether the indices are sorted (default False).
        generator: `generator(key, shape=, dtype=, **kwds)` draws the values
            (default `random.uniform`).
        **kwds: more arguments for `generator`.

    Returns:
        The BCOO array.
    """
    shape = tuple(operator.index(s) for s in shape)
    n_batch = operator.index(n_batch)
    n_dense = operator.index(n_dense)
    if n_batch < 0 or n_dense < 0 or n_batch + n_dense > len(shape):
        raise ValueError(f"Invalid n_batch={n_batch}, n_dense={n_dense} for shape={shape}")
    n_sparse = len(shape) - n_batch - n_dense
    batch_shape = shape[:n_batch]
    sparse_shape = shape[n_batch : n_batch + n_sparse]
    dense_shape = shape[n_batch + n_sparse :]
    batch_size = math.prod(batch_shape)
    sparse_size = math.prod(sparse_shape)
    if not 0 <= nse < sparse_size:
        raise ValueError(f"got nse={nse}, expected to be between 0 and {sparse_size}")
    # A fraction of the sparse size, or the count itself (JAX's TypeError for a float count).
    count: Any = math.ceil(nse * sparse_size) if 0 < nse < 1 else nse
    nse_int = operator.index(count)
    data_shape = (*batch_shape, nse_int, *dense_shape)
    indices_shape = (*batch_shape, nse_int, n_sparse)
    if indices_dtype is None:
        indices_dtype = dtypes.canonicalize_dtype(int)
    if sparse_size > jnp.iinfo(indices_dtype).max:
        raise ValueError(
            f"indices_dtype={indices_dtype} does not have enough range to generate "
            f"sparse indices of size {sparse_size}."
        )

    @vmap
    def _indices(key: Array) -> Array:
        if not sparse_shape:
            return jnp.zeros((nse_int, n_sparse), dtype=indices_dtype)
        flat_ind = random.choice(
            key, sparse_size, shape=(nse_int,), replace=not unique_indices
        ).astype(indices_dtype)
        return jnp.column_stack(jnp.unravel_index(flat_ind, sparse_shape))

    keys = random.split(key, batch_size + 1)
    data_key, index_keys = keys[0], keys[1:]
    data = generator(data_key, shape=data_shape, dtype=dtype, **kwds)
    indices = _indices(index_keys).reshape(indices_shape)
    mat = BCOO((data, indices), shape=shape)
    return mat.sort_indices() if sorted_indices else mat


__all__ = ["random_bcoo"]
