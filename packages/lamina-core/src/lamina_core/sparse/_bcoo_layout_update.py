"""`bcoo_update_layout`: a BCOO array re-laid out with other numbers of batch and dense
dimensions (moving dimensions between batch, sparse and dense), refusing or warning where
the new layout stores many explicit zeros."""

from __future__ import annotations

import math
import operator
import warnings
from functools import partial
from typing import Any

from lamina_core import numpy as jnp
from lamina_core.sparse._base import SparseEfficiencyError, SparseEfficiencyWarning
from lamina_core.sparse._bcoo import BCOO
from lamina_core.sparse._util import nfold_vmap

Array = Any


def bcoo_update_layout(
    mat: BCOO,
    *,
    n_batch: int | None = None,
    n_dense: int | None = None,
    on_inefficient: str | None = "error",
) -> BCOO:
    """`mat` with `n_batch` batch and `n_dense` dense dimensions (default: unchanged).

    Increasing either over dimensions of size above 1 stores many zeros: `on_inefficient`
    says whether that raises `SparseEfficiencyError` ('error'), warns ('warn') or not (None).
    """
    n_batch = mat.n_batch if n_batch is None else operator.index(n_batch)
    n_dense = mat.n_dense if n_dense is None else operator.index(n_dense)
    if (n_batch, n_dense) == (mat.n_batch, mat.n_dense):
        return mat
    n_sparse = mat.ndim - n_batch - n_dense
    if on_inefficient not in ["error", "warn", None]:
        raise ValueError(
            "on_inefficent={on_inefficient!r}; expected one of ['error', 'warn', None]."
        )
    if n_batch < 0:
        raise ValueError(f"n_batch must be non-negative; got {n_batch}")
    if n_dense < 0:
        raise ValueError(f"n_dense must be non-negative; got {n_dense}")
    if n_sparse < 0:
        raise ValueError(
            f"sum of n_batch={n_batch} and n_dense={n_dense} "
            f"cannot be larger than mat.ndim={mat.ndim}."
        )

    def maybe_err_or_warn(msg: str) -> None:
        if on_inefficient == "error":
            msg += (
                " To disable this error, set the on_inefficient argument "
                "of bcoo_update_layout to 'warn' or None."
            )
            raise SparseEfficiencyError(msg)
        if on_inefficient == "warn":
            msg += (
                " To disable this warning, set the on_inefficient argument "
                "of bcoo_update_layout to None."
            )
            warnings.warn(msg, category=SparseEfficiencyWarning, stacklevel=3)

    if n_dense > mat.n_dense and any(d > 1 for d in mat.shape[-n_dense : mat.ndim - mat.n_dense]):
        maybe_err_or_warn(
            f"For matrix of shape {mat.shape}, increasing n_dense from "
            f"{mat.n_dense} to {n_dense} results in inefficient storage."
        )
    if n_batch > mat.n_batch and any(d > 1 for d in mat.shape[mat.n_batch : n_batch]):
        maybe_err_or_warn(
            f"For matrix of shape {mat.shape}, increasing n_batch from "
            f"{mat.n_batch} to {n_batch} results in inefficient storage."
        )
    data, indices, shape = mat.data, mat.indices, mat.shape
    cur_batch, cur_dense = mat.n_batch, mat.n_dense

    if n_dense < cur_dense:
        n = cur_dense - n_dense

        @partial(nfold_vmap, N=cur_batch + 1)
        def dense_to_sparse(d: Array, i: Array) -> tuple[Array, Array]:
            new_d = d.reshape(math.prod(d.shape[:n]), *d.shape[n:])
            meshes = jnp.meshgrid(
                *(jnp.arange(s, dtype=i.dtype) for s in d.shape[:n]), indexing="ij"
            )
            new_i = jnp.column_stack(
                [jnp.broadcast_to(i, (new_d.shape[0], i.size)), *(jnp.ravel(m) for m in meshes)]
            )
            return new_d, new_i

        data, indices = dense_to_sparse(data, indices)
        data = data.reshape(
            *data.shape[:cur_batch],
            math.prod(data.shape[cur_batch : cur_batch + 2]),
            *data.shape[cur_batch + 2 :],
        )
        indices = indices.reshape(
            *indices.shape[:cur_batch],
            math.prod(indices.shape[cur_batch : cur_batch + 2]),
            *indices.shape[cur_batch + 2 :],
        )
        cur_dense = n_dense

    if n_batch < cur_batch:
        n = cur_batch - n_batch

        @partial(nfold_vmap, N=n_batch)
        def batch_to_sparse(d: Array, i: Array) -> tuple[Array, Array]:
            nse = i.shape[-2]
            new_d = d.reshape(math.prod(d.shape[: n + 1]), *d.shape[n + 1 :])
            meshes = jnp.meshgrid(
                *(jnp.arange(s, dtype=i.dtype) for s in (*i.shape[:n], nse)), indexing="ij"
            )
            new_i = i.reshape(math.prod(i.shape[: n + 1]), *i.shape[n + 1 :])
            new_i = jnp.column_stack((*(m.ravel() for m in meshes[:-1]), new_i))
            return new_d, new_i

        data, indices = batch_to_sparse(data, indices)
        cur_batch = n_batch

    if n_dense > cur_dense:
        n = n_dense - cur_dense

        @partial(nfold_vmap, N=cur_batch + 1)
        def sparse_to_dense(d: Array, i: Array) -> tuple[Array, Array]:
            new_d = jnp.at(jnp.zeros_like(d, shape=shape[-n_dense:]))[tuple(i[-n:])].set(d)
            return new_d, i[:-n]

        data, indices = sparse_to_dense(data, indices)
        cur_dense = n_dense

    if n_batch > cur_batch:
        n = n_batch - cur_batch
        first = cur_batch

        @partial(nfold_vmap, N=cur_batch)
        def sparse_to_batch(d: Array, i: Array) -> tuple[Array, Array]:
            nse = i.shape[-2]
            idx = (*(i[:, j] for j in range(n)), jnp.arange(nse))
            new_i = jnp.broadcast_to(i[:, n:], (*shape[first:n_batch], nse, i.shape[-1] - n))
            new_d_shape = (*shape[first:n_batch], nse, *d.shape[d.ndim - n_dense :])
            new_d = jnp.at(jnp.zeros_like(d, shape=new_d_shape))[idx].set(d)
            return new_d, new_i

        data, indices = sparse_to_batch(data, indices)
    return BCOO((data, indices), shape=shape)


__all__ = ["bcoo_update_layout"]
