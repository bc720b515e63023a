"""`BCOO`, the batched-coordinate sparse array, and the BCOO-level functions over its
primitives (`bcoo_todense`, `bcoo_fromdense`, `bcoo_extract`, `bcoo_transpose`,
`bcoo_dot_general`, `bcoo_sort_indices`, `bcoo_sum_duplicates`, ...).

A `BCOO` is a pytree of its two buffers with its `SparseInfo` as static data, and `vmap` maps
it over its batch dimensions. Operators (`@`, `*`, `-`) are installed by the sparsify module.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, Self

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.interpreters import register_vmappable
from lamina_core.sparse._base import JAXSparse
from lamina_core.sparse._bcoo_convert import (
    bcoo_extract_buffers,
    bcoo_fromdense_buffers,
    bcoo_todense_buffers,
)
from lamina_core.sparse._bcoo_dot import (
    bcoo_dot_general_buffers,
    bcoo_rdot_general_buffers,
    bcoo_transpose_buffers,
)
from lamina_core.sparse._bcoo_dups import bcoo_sort_indices_buffers, bcoo_sum_duplicates_buffers
from lamina_core.sparse._bcoo_layout import validate_bcoo
from lamina_core.sparse._bcoo_spdot import bcoo_spdot_general_buffers
from lamina_core.sparse._util import (
    Shape,
    SparseInfo,
    _count_stored_elements,
    _dot_general_validated_shape,
    nfold_vmap,
)
from lamina_core.trace import Tracer
from lamina_core.tree.tree_util import register_pytree_node_class

Array = Any


@register_pytree_node_class
class BCOO(JAXSparse):
    """Experimental batched COO matrix implemented in JAX.

    Args:
        args: `(data, indices)` in batched COO format.
        shape: the shape of the sparse array.

    Attributes:
        data: `[*batch_dims, nse, *dense_dims]` stored values.
        indices: `[*batch_dims, nse, n_sparse]` indices of the stored values; duplicate
            entries are summed.
    """

    data: Array
    indices: Array
    indices_sorted: bool
    unique_indices: bool

    def __init__(
        self,
        args: tuple[Array, Array],
        *,
        shape: Sequence[int],
        indices_sorted: bool = False,
        unique_indices: bool = False,
    ) -> None:
        self.data, self.indices = (jnp.asarray(a) for a in args)
        self.indices_sorted = indices_sorted
        self.unique_indices = unique_indices
        super().__init__(args, shape=tuple(shape))
        validate_bcoo(self.data, self.indices, self.shape)

    @property
    def _info(self) -> SparseInfo:
        return SparseInfo(self.shape, self.indices_sorted, self.unique_indices)

    @property
    def _bufs(self) -> tuple[Array, Array]:
        return (self.data, self.indices)

    @property
    def nse(self) -> int:
        return int(self.indices.shape[-2])

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.data.dtype  # type: ignore[no-any-return]  # an array's dtype

    @property
    def n_batch(self) -> int:
        return int(self.indices.ndim - 2)

    @property
    def n_sparse(self) -> int:
        return int(self.indices.shape[-1])

    @property
    def n_dense(self) -> int:
        return int(self.data.ndim - 1 - self.n_batch)

    def __repr__(self) -> str:
        name = type(self).__name__
        try:
            nse, n_batch, n_dense = self.nse, self.n_batch, self.n_dense
            dtype, shape = self.dtype, list(self.shape)
        except Exception:  # as JAX's: a malformed object still prints
            text = f"{name}(<invalid>)"
        else:
            extra = f", nse={nse}"
            if n_batch:
                extra += f", n_batch={n_batch}"
            if n_dense:
                extra += f", n_dense={n_dense}"
            text = f"{name}({dtype}{shape}{extra})"
        if isinstance(self.data, Tracer):
            text = f"{type(self.data).__name__}[{text}]"
        return text

    def reshape(self, *args: Any, **kwargs: Any) -> BCOO:
        raise NotImplementedError("BCOO.reshape")

    def astype(self, *args: Any, **kwargs: Any) -> BCOO:
        raise NotImplementedError("BCOO.astype")

    def sum(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("BCOO.sum")

    @classmethod
    def fromdense(
        cls,
        mat: Array,
        *,
        nse: int | None = None,
        index_dtype: Any = np.int32,
        n_dense: int = 0,
        n_batch: int = 0,
    ) -> BCOO:
        """Create a BCOO array from a (dense) array."""
        return bcoo_fromdense(
            mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense, n_batch=n_batch
        )

    @classmethod
    def from_scipy_sparse(
        cls, mat: Any, *, index_dtype: Any = None, n_dense: int = 0, n_batch: int = 0
    ) -> BCOO:
        """Create a BCOO array from a `scipy.sparse` array."""
        if n_dense != 0 or n_batch != 0:
            raise NotImplementedError("BCOO.fromscipy with nonzero n_dense/n_batch")
        mat = mat.tocoo()
        data = jnp.asarray(mat.data)
        indices = jnp.column_stack((mat.row, mat.col)).astype(index_dtype or jnp.int32)
        return cls((data, indices), shape=mat.shape, indices_sorted=False, unique_indices=False)

    @classmethod
    def _empty(
        cls,
        shape: Shape,
        *,
        dtype: Any = None,
        index_dtype: Any = "int32",
        n_dense: int = 0,
        n_batch: int = 0,
        nse: int = 0,
    ) -> BCOO:
        shape = tuple(shape)
        n_sparse = len(shape) - n_dense - n_batch
        if n_sparse < 0 or n_dense < 0 or n_batch < 0 or nse < 0:
            raise ValueError(
                f"Invalid inputs: shape={shape}, n_dense={n_dense}, n_batch={n_batch}, nse={nse}"
            )
        batch_shape = shape[:n_batch]
        sparse_shape = shape[n_batch : n_batch + n_sparse]
        dense_shape = shape[n_batch + n_sparse :]
        data = jnp.zeros((*batch_shape, nse, *dense_shape), dtype)
        indices = jnp.full((*batch_shape, nse, n_sparse), jnp.array(sparse_shape), index_dtype)
        return cls((data, indices), shape=shape, indices_sorted=True, unique_indices=True)

    @classmethod
    def _eye(
        cls,
        N: int,
        M: int,
        k: int,
        *,
        dtype: Any = None,
        index_dtype: Any = "int32",
        n_batch: int = 0,
        n_dense: int = 0,
    ) -> BCOO:
        n_sparse = 2 - n_batch - n_dense
        if n_sparse < 0 or n_dense < 0 or n_batch < 0:
            raise ValueError(
                f"Invalid inputs: shape={(N, M)}, n_dense={n_dense}, n_batch={n_batch}"
            )
        diag_size = min(N, M - k) if k > 0 else min(N + k, M)
        if diag_size <= 0:
            return cls._empty(
                (N, M), dtype=dtype, index_dtype=index_dtype, n_batch=n_batch, n_dense=n_dense
            )
        if n_dense > 0 or n_batch > 1:
            return cls.fromdense(
                jnp.eye(N, M, k, dtype=dtype),
                n_batch=n_batch,
                n_dense=n_dense,
                index_dtype=index_dtype,
            )
        if n_batch == 0:
            data = jnp.ones(diag_size, dtype=dtype)
            idx = jnp.arange(diag_size, dtype=index_dtype)
            zero = np.array(0, dtype=idx.dtype)
            kk = np.array(k, dtype=idx.dtype)
            indices = jnp.column_stack(
                [
                    lax.sub(idx, lax.cond(kk >= 0, lambda: zero, lambda: kk)),
                    lax.add(idx, lax.cond(kk <= 0, lambda: zero, lambda: kk)),
                ]
            )
        else:
            data = jnp.ones(N, dtype=dtype)
            indices = jnp.arange(N, dtype=index_dtype)
            indices = indices + np.array(k, dtype=indices.dtype)
            if k < 0:
                data = jnp.at(data)[: abs(k)].set(0)
                indices = jnp.at(indices)[: abs(k)].set(M)
            elif k > 0:
                data = jnp.at(data)[M - abs(k) :].set(0)
                indices = jnp.at(indices)[M - abs(k)].set(M)
            data = data[:, None]
            indices = indices[:, None, None]
        return cls((data, indices), shape=(N, M), indices_sorted=True, unique_indices=True)

    def sum_duplicates(self, nse: int | None = None, remove_zeros: bool = True) -> BCOO:
        """A copy with duplicate indices summed (and explicit zeros removed, by default), its
        indices sorted; pass `nse` to use it under `jit` and other transformations."""
        if remove_zeros:
            return bcoo_eliminate_zeros(self, nse=nse)
        return bcoo_sum_duplicates(self, nse=nse)

    def sort_indices(self) -> BCOO:
        """A copy of the matrix with indices sorted."""
        return bcoo_sort_indices(self)

    def todense(self) -> Array:
        """The dense version of the array."""
        return bcoo_todense(self)

    def transpose(self, axes: Sequence[int] | None = None) -> BCOO:
        """The transposed array."""
        perm = list(range(self.ndim)[::-1] if axes is None else axes)
        mat_t = bcoo_transpose(self, permutation=perm)
        shape_t = tuple(self.shape[i] for i in perm)
        sparse_perm = [p - self.n_batch for p in perm[self.n_batch : self.n_batch + self.n_sparse]]
        is_sorted = (
            self.indices_sorted if tuple(sparse_perm) == tuple(range(self.n_sparse)) else False
        )
        return BCOO(
            (mat_t.data, mat_t.indices),
            shape=shape_t,
            indices_sorted=is_sorted,
            unique_indices=self.unique_indices,
        )

    def tree_flatten(self) -> tuple[tuple[Any, ...], Any]:
        return (self.data, self.indices), self._info._asdict()

    @classmethod
    def tree_unflatten(cls, aux_data: Any, children: Sequence[Any]) -> Self:
        obj = object.__new__(cls)
        obj.data, obj.indices = children
        if aux_data.keys() != {"shape", "indices_sorted", "unique_indices"}:
            raise ValueError(f"BCOO.tree_unflatten: invalid aux_data={aux_data}")
        obj.__dict__.update(**aux_data)
        return obj


def _bcoo_to_elt(cont: Any, _: Any, val: BCOO, axis: int | None) -> Any:
    if axis is None:
        return val
    if axis >= val.n_batch:
        raise ValueError(
            f"Cannot map in_axis={axis} for BCOO array with n_batch={val.n_batch}. "
            "in_axes for batched BCOO operations must correspond to a batch dimension."
        )
    return BCOO(
        (cont(val.data, axis), cont(val.indices, axis)),
        shape=val.shape[:axis] + val.shape[axis + 1 :],
        indices_sorted=val.indices_sorted,
        unique_indices=val.unique_indices,
    )


def _bcoo_from_elt(cont: Any, axis_size: int, elt: BCOO, axis: int | None) -> Any:
    if axis is None:
        return elt
    if axis > elt.n_batch:
        raise ValueError(
            f"BCOO: cannot add out_axis={axis} for BCOO array with n_batch={elt.n_batch}. "
            "BCOO batch axes must be a contiguous block of leading dimensions."
        )
    return BCOO(
        (cont(axis_size, elt.data, axis), cont(axis_size, elt.indices, axis)),
        shape=(*elt.shape[:axis], axis_size, *elt.shape[axis:]),
        indices_sorted=elt.indices_sorted,
        unique_indices=elt.unique_indices,
    )


register_vmappable(BCOO, int, int, _bcoo_to_elt, _bcoo_from_elt, None)


# --- functions of BCOO arrays -------------------------------------------------------------


def bcoo_todense(mat: BCOO) -> Array:
    """The dense version of the BCOO matrix `mat`."""
    return bcoo_todense_buffers(mat.data, mat.indices, spinfo=mat._info)


def bcoo_fromdense(
    mat: Array,
    *,
    nse: int | None = None,
    n_batch: int = 0,
    n_dense: int = 0,
    index_dtype: Any = jnp.int32,
) -> BCOO:
    """The BCOO form of the dense `mat` (`nse` stored elements per batch, default: as many as
    the largest batch element has nonzeros; must be concrete under transformations)."""
    mat = jnp.asarray(mat)
    nse_arr: Any = nse
    if nse_arr is None:
        nse_arr = _count_stored_elements(mat, n_batch, n_dense)
    buffers = bcoo_fromdense_buffers(
        mat, nse=nse_arr, n_batch=n_batch, n_dense=n_dense, index_dtype=index_dtype
    )
    return BCOO(buffers, shape=mat.shape, indices_sorted=True, unique_indices=True)


def bcoo_extract(sparr: BCOO, arr: Array, *, assume_unique: bool | None = None) -> BCOO:
    """The values of the dense `arr` at the indices of `sparr`, as a BCOO array with the same
    sparsity pattern (duplicates summed into their first index unless `assume_unique`)."""
    if not isinstance(sparr, BCOO):
        raise TypeError(
            f"First argument to bcoo_extract should be a BCOO array. Got type(sparr)={type(sparr)}"
        )
    a = jnp.asarray(arr)
    if a.shape != sparr.shape:
        raise ValueError(f"shape mismatch: sparr.shape={sparr.shape} a.shape={a.shape}")
    if assume_unique is None:
        assume_unique = sparr.unique_indices
    data = bcoo_extract_buffers(sparr.indices, a, assume_unique=assume_unique)
    return BCOO((data, sparr.indices), **sparr._info._asdict())


def bcoo_transpose(mat: BCOO, *, permutation: Sequence[int]) -> BCOO:
    """`mat` with its axes permuted (batch, sparse and dense axes each among themselves)."""
    buffers = bcoo_transpose_buffers(
        mat.data, mat.indices, permutation=permutation, spinfo=mat._info
    )
    out_shape = tuple(mat.shape[p] for p in permutation)
    return BCOO(buffers, shape=out_shape, unique_indices=mat.unique_indices)


def bcoo_dot_general(
    lhs: BCOO | Array,
    rhs: BCOO | Array,
    *,
    dimension_numbers: Any,
    precision: None = None,
    preferred_element_type: None = None,
    out_sharding: Any = None,
) -> BCOO | Array:
    """A general contraction of a BCOO array with a dense or BCOO one: dense unless both are
    sparse."""
    del precision, out_sharding
    if isinstance(lhs, BCOO) and isinstance(rhs, BCOO):
        shape = _dot_general_validated_shape(lhs.shape, rhs.shape, dimension_numbers)
        bufs = bcoo_spdot_general_buffers(
            lhs.data,
            lhs.indices,
            rhs.data,
            rhs.indices,
            lhs_spinfo=lhs._info,
            rhs_spinfo=rhs._info,
            dimension_numbers=dimension_numbers,
            preferred_element_type=preferred_element_type,
        )
        return BCOO(bufs, shape=shape)
    if isinstance(lhs, BCOO):
        return bcoo_dot_general_buffers(
            lhs.data,
            lhs.indices,
            rhs,
            dimension_numbers=dimension_numbers,
            preferred_element_type=preferred_element_type,
            lhs_spinfo=lhs._info,
        )
    if isinstance(rhs, BCOO):
        return bcoo_rdot_general_buffers(
            lhs,
            rhs.data,
            rhs.indices,
            dimension_numbers=dimension_numbers,
            preferred_element_type=preferred_element_type,
            rhs_spinfo=rhs._info,
        )
    return lax.dot_general(
        lhs, rhs, dimension_numbers=dimension_numbers, preferred_element_type=preferred_element_type
    )


def bcoo_sort_indices(mat: BCOO) -> BCOO:
    """`mat` with the indices of each batch element sorted."""
    data, indices = bcoo_sort_indices_buffers(mat.data, mat.indices, spinfo=mat._info)
    return BCOO(
        (data, indices), shape=mat.shape, indices_sorted=True, unique_indices=mat.unique_indices
    )


def bcoo_sum_duplicates(mat: BCOO, nse: int | None = None) -> BCOO:
    """`mat` with duplicate indices summed and sorted indices (`nse` given: padded or cut to
    it; needed under `jit` and other transformations)."""
    data, indices = bcoo_sum_duplicates_buffers(mat.data, mat.indices, spinfo=mat._info, nse=nse)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True)


def bcoo_eliminate_zeros(mat: BCOO, nse: int | None = None) -> BCOO:
    """`mat` with explicitly stored zeros dropped (and duplicates summed)."""
    data, indices, shape = mat.data, mat.indices, mat.shape
    props = validate_bcoo(data, indices, shape)
    mask = (data == 0).all(tuple(range(props.n_batch + 1, data.ndim)))
    dims_to_contract = tuple(i for i, s in enumerate(indices.shape[: props.n_batch]) if s == 1)
    mask = mask.all(dims_to_contract, keepdims=True)
    fill_value = jnp.array(
        shape[props.n_batch : props.n_batch + props.n_sparse], dtype=indices.dtype
    )

    def fill(i: Array, m: Array) -> Array:
        return jnp.where(m[:, None], fill_value[None, :], i)

    indices = nfold_vmap(fill, props.n_batch)(indices, mask)
    return bcoo_sum_duplicates(BCOO((data, indices), shape=shape), nse=nse)


def bcoo_set_nse(mat: BCOO, nse: int) -> BCOO:
    """A copy of `mat` with `nse` stored elements (fewer: data may be discarded)."""
    nse = operator.index(nse)
    assert nse >= 0
    if mat.nse == nse:
        return mat
    batch = tuple(slice(None) for _ in range(mat.n_batch))
    if nse <= mat.nse:
        data = mat.data[(*batch, slice(nse))]
        indices = mat.indices[..., :nse, :]
    else:
        data = jnp.zeros_like(
            mat.data,
            shape=(*mat.data.shape[: mat.n_batch], nse, *mat.data.shape[mat.n_batch + 1 :]),
        )
        data = jnp.at(data)[(*batch, slice(mat.nse))].set(mat.data)
        indices = jnp.zeros_like(
            mat.indices, shape=(*mat.indices.shape[:-2], nse, mat.indices.shape[-1])
        )
        indices = jnp.at(indices)[..., : mat.nse, :].set(mat.indices)
        indices = jnp.at(indices)[..., mat.nse :, :].set(
            jnp.array(mat.shape[mat.n_batch : mat.n_batch + mat.n_sparse], dtype=indices.dtype)
        )
    return BCOO(
        (data, indices),
        shape=mat.shape,
        indices_sorted=mat.indices_sorted,
        unique_indices=mat.unique_indices,
    )
