"""`BCSR`, the batched compressed-row sparse array, and `bcsr_dot_general`, its contraction
with a dense array (abstract evaluation, eager impl, jvp, transpose and batching rules); and
the operations JAX writes through BCOO (`bcsr_sum_duplicates`, `bcsr_eliminate_zeros`,
`bcsr_broadcast_in_dim`, `bcsr_concatenate`). The conversion primitives are in `_bcsr_convert`.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, Self

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.interpreters import (
    AxisData,
    BatchDim,
    batching_rules,
    defjvp,
    register_vmappable,
    transpose_rules,
)
from lamina_core.ir import ShapedArray, abstract_eval_rules
from lamina_core.sparse._base import JAXSparse
from lamina_core.sparse._bcoo import BCOO, bcoo_eliminate_zeros, bcoo_sum_duplicates
from lamina_core.sparse._bcoo_dot import (
    _bcoo_dot_general_transpose,
    bcoo_dot_general_impl,
    dot_general_batch_dim_nums,
)
from lamina_core.sparse._bcoo_ops import bcoo_broadcast_in_dim
from lamina_core.sparse._bcoo_shape import bcoo_concatenate
from lamina_core.sparse._bcsr_convert import (
    TRACED_NSE_ERROR,
    batch_dims_to_front,
    bcoo_to_bcsr,
    bcsr_fromdense_buffers,
    bcsr_to_bcoo,
    bcsr_todense_buffers,
    validate_bcsr,
    validate_bcsr_indices,
)
from lamina_core.sparse._util import Shape, SparseInfo, _count_stored_elements
from lamina_core.trace import Tracer, UserPrimitive, concrete_or_error
from lamina_core.tree.tree_util import register_pytree_node_class

Array = Any


def bcsr_fromdense(
    mat: Array, *, nse: Any = None, n_batch: int = 0, n_dense: int = 0,
    index_dtype: Any = jnp.int32,
) -> BCSR:  # fmt: skip
    """The BCSR form of a dense array with `n_batch` batch and `n_dense` dense dimensions."""
    mat_array = jnp.asarray(mat)
    if nse is None:
        nse = _count_stored_elements(mat_array, n_batch, n_dense)
    nse_int = operator.index(concrete_or_error(nse, TRACED_NSE_ERROR))
    bufs = bcsr_fromdense_buffers(
        mat_array, nse=nse_int, n_batch=n_batch, n_dense=n_dense, index_dtype=index_dtype
    )
    return BCSR(bufs, shape=mat_array.shape)


def bcsr_todense(mat: BCSR) -> Array:
    """The dense array a BCSR array stands for."""
    return bcsr_todense_buffers(mat.data, mat.indices, mat.indptr, spinfo=mat._info)


def bcsr_eliminate_zeros(mat: BCSR, nse: int | None = None) -> BCSR:
    """`mat` without its explicitly stored zeros (through BCOO)."""
    return BCSR.from_bcoo(bcoo_eliminate_zeros(mat.to_bcoo(), nse=nse))


def bcsr_sum_duplicates(mat: BCSR, nse: int | None = None) -> BCSR:
    """`mat` with duplicate indices summed and indices sorted (through BCOO); `nse` fixes the
    number of stored elements of the result, as `jit` needs."""
    return BCSR.from_bcoo(bcoo_sum_duplicates(mat.to_bcoo(), nse=nse))


def bcsr_broadcast_in_dim(
    mat: BCSR, *, shape: Shape, broadcast_dimensions: Sequence[int], sharding: Any = None
) -> BCSR:
    """`lax.broadcast_in_dim` of a BCSR array (through BCOO)."""
    result = bcoo_broadcast_in_dim(
        mat.to_bcoo(), shape=shape, broadcast_dimensions=broadcast_dimensions
    )
    return BCSR.from_bcoo(result)


def bcsr_concatenate(operands: Sequence[BCSR], *, dimension: int) -> BCSR:
    """`lax.concatenate` of BCSR arrays along a batch or sparse `dimension` (through BCOO):
    equal shapes but along `dimension`, and the same batch, sparse and dense layout."""
    bcoos = [mat.to_bcoo() for mat in operands]
    return BCSR.from_bcoo(bcoo_concatenate(bcoos, dimension=dimension))


# --- bcsr_dot_general ---------------------------------------------------------------------

bcsr_dot_general_p = UserPrimitive("bcsr_dot_general")


def _index_tuple(x: Any) -> tuple[int, ...]:
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(map(operator.index, x))


def bcsr_dot_general(
    lhs: Any, rhs: Any, *, dimension_numbers: Any, precision: None = None,
    preferred_element_type: None = None, out_sharding: Any = None,
) -> Array:  # fmt: skip
    """`lax.dot_general` of a BCSR `lhs` and a dense `rhs` (two dense operands: the dense
    contraction itself)."""
    del precision, out_sharding
    if not isinstance(rhs, JAXSparse):
        if not isinstance(lhs, JAXSparse):
            return lax.dot_general(
                lhs, rhs, dimension_numbers=dimension_numbers,
                preferred_element_type=preferred_element_type,
            )  # fmt: skip
        if isinstance(lhs, BCSR):
            data, indices, indptr = lhs._bufs
            return _bcsr_dot_general(
                data, indices, indptr, rhs, dimension_numbers=dimension_numbers,
                preferred_element_type=preferred_element_type, lhs_spinfo=lhs._info,
            )  # fmt: skip
    raise NotImplementedError(
        "bcsr_dot_general currently implemented for BCSR lhs and ndarray rhs."
    )


def _bcsr_dot_general(
    lhs_data: Array, lhs_indices: Array, lhs_indptr: Array, rhs: Array, *,
    dimension_numbers: Any, preferred_element_type: Any, lhs_spinfo: SparseInfo,
) -> Array:  # fmt: skip
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    cdims = (_index_tuple(lhs_contract), _index_tuple(rhs_contract))
    bdims = (_index_tuple(lhs_batch), _index_tuple(rhs_batch))
    args = map(jnp.asarray, (lhs_data, lhs_indices, lhs_indptr, rhs))
    return bcsr_dot_general_p.bind(
        *args, dimension_numbers=(cdims, bdims),
        preferred_element_type=preferred_element_type, lhs_spinfo=lhs_spinfo,
    )  # fmt: skip


@bcsr_dot_general_p.def_impl
def bcsr_dot_general_impl(
    lhs_data: Array, lhs_indices: Array, lhs_indptr: Array, rhs: Array, *,
    dimension_numbers: Any, preferred_element_type: Any, lhs_spinfo: SparseInfo,
) -> Array:  # fmt: skip
    lhs_data, lhs_indices, lhs_indptr, rhs = map(
        jnp.asarray, (lhs_data, lhs_indices, lhs_indptr, rhs)
    )
    bcoo_indices = bcsr_to_bcoo(lhs_indices, lhs_indptr, shape=lhs_spinfo.shape)
    return bcoo_dot_general_impl(
        lhs_data, bcoo_indices, rhs, dimension_numbers=dimension_numbers,
        preferred_element_type=preferred_element_type, lhs_spinfo=lhs_spinfo,
    )  # fmt: skip


@bcsr_dot_general_p.def_abstract_eval
def _bcsr_dot_general_abstract_eval(
    lhs_data: Any, lhs_indices: Any, lhs_indptr: Any, rhs: Any, *, dimension_numbers: Any,
    preferred_element_type: Any, lhs_spinfo: SparseInfo,
) -> ShapedArray:  # fmt: skip
    (lhs_contracting, _), (lhs_batch, _) = dimension_numbers
    props = validate_bcsr_indices(lhs_indices, lhs_indptr, lhs_spinfo.shape)
    out = abstract_eval_rules[lax.dot_general_p](
        ShapedArray(tuple(lhs_spinfo.shape), lhs_data.dtype),
        ShapedArray(tuple(rhs.shape), rhs.dtype),
        dimension_numbers=dimension_numbers, precision=None,
        preferred_element_type=preferred_element_type, out_sharding=None,
    )  # fmt: skip
    if lhs_batch and max(lhs_batch) >= props.n_batch:
        raise NotImplementedError(
            "bcsr_dot_general batch dimensions must be among the batch dimensions in the "
            f"sparse representtaion.\ngot lhs_batch={lhs_batch}, props.n_batch={props.n_batch}"
        )
    if any(d >= props.n_batch + 2 for d in lhs_contracting):
        raise NotImplementedError("bcsr_dot_general: contracting over dense dimensions.")
    assert isinstance(out, ShapedArray)
    return ShapedArray(out.shape, out.dtype)


def _bcsr_dot_general_jvp_lhs(
    lhs_data_dot: Array, lhs_data: Array, lhs_indices: Array, lhs_indptr: Array, rhs: Array,
    **params: Any,
) -> Any:  # fmt: skip
    return _bcsr_dot_general(lhs_data_dot, lhs_indices, lhs_indptr, rhs, **params)


def _bcsr_dot_general_jvp_rhs(
    rhs_dot: Array, lhs_data: Array, lhs_indices: Array, lhs_indptr: Array, rhs: Array,
    **params: Any,
) -> Any:  # fmt: skip
    return _bcsr_dot_general(lhs_data, lhs_indices, lhs_indptr, rhs_dot, **params)


def _bcsr_dot_general_transpose(
    ct: Array, lhs_data: Any, lhs_indices: Any, lhs_indptr: Any, rhs: Any, *,
    dimension_numbers: Any, preferred_element_type: Any, lhs_spinfo: SparseInfo,
) -> Any:  # fmt: skip
    bcoo_indices = bcsr_to_bcoo(lhs_indices, lhs_indptr, shape=lhs_spinfo.shape)
    data_out, _, rhs_out = _bcoo_dot_general_transpose(
        ct, lhs_data, bcoo_indices, rhs, dimension_numbers=dimension_numbers,
        preferred_element_type=preferred_element_type, lhs_spinfo=lhs_spinfo,
    )  # fmt: skip
    return data_out, lhs_indices, lhs_indptr, rhs_out


def _bcsr_dot_general_batch(
    axis_data: AxisData, args: Sequence[Any], dims: Sequence[BatchDim], *,
    dimension_numbers: Any, preferred_element_type: Any, lhs_spinfo: SparseInfo,
) -> tuple[Any, BatchDim]:  # fmt: skip
    *lhs_args, rhs = args
    *lhs_dims, rhs_bdim = dims
    batch_size = None if rhs_bdim is None else rhs.shape[rhs_bdim]
    data, indices, indptr, spinfo = batch_dims_to_front(lhs_args, lhs_dims, lhs_spinfo, batch_size)
    new_numbers, out_dim = dot_general_batch_dim_nums(
        (len(lhs_spinfo.shape), rhs.ndim), (0, rhs_bdim), dimension_numbers
    )
    out = _bcsr_dot_general(
        data, indices, indptr, rhs, lhs_spinfo=spinfo, dimension_numbers=new_numbers,
        preferred_element_type=preferred_element_type,
    )  # fmt: skip
    return out, out_dim


defjvp(bcsr_dot_general_p, _bcsr_dot_general_jvp_lhs, None, None, _bcsr_dot_general_jvp_rhs)
transpose_rules.set(bcsr_dot_general_p, _bcsr_dot_general_transpose)
batching_rules.set(bcsr_dot_general_p, _bcsr_dot_general_batch)


# --- the BCSR object ----------------------------------------------------------------------


@register_pytree_node_class
class BCSR(JAXSparse):
    """Experimental batched CSR array (`jax.experimental.sparse.BCSR`)."""

    data: Array
    indices: Array
    indptr: Array
    indices_sorted: bool
    unique_indices: bool

    def __init__(
        self, args: tuple[Array, Array, Array], *, shape: Sequence[int],
        indices_sorted: bool = False, unique_indices: bool = False,
    ) -> None:  # fmt: skip
        self.data, self.indices, self.indptr = map(jnp.asarray, args)
        self.indices_sorted = indices_sorted
        self.unique_indices = unique_indices
        super().__init__(args, shape=shape)
        validate_bcsr(self.data, self.indices, self.indptr, self.shape)

    @property
    def _bufs(self) -> tuple[Array, Array, Array]:
        return self.data, self.indices, self.indptr

    @property
    def _info(self) -> SparseInfo:
        return SparseInfo(self.shape, self.indices_sorted, self.unique_indices)

    @property
    def nse(self) -> int:
        return int(self.indices.shape[-1])

    @property
    def dtype(self) -> np.dtype[Any]:
        dtype: np.dtype[Any] = np.dtype(self.data.dtype)
        return dtype

    @property
    def n_batch(self) -> int:
        return int(self.indices.ndim) - 1

    @property
    def n_sparse(self) -> int:
        return 2

    @property
    def n_dense(self) -> int:
        return int(self.data.ndim - self.indices.ndim)

    @property
    def _sparse_shape(self) -> tuple[int, ...]:
        return tuple(self.shape[self.n_batch : self.n_batch + 2])

    def __repr__(self) -> str:
        name = type(self).__name__
        try:
            nse, n_batch, n_dense = self.nse, self.n_batch, self.n_dense
            dtype, shape = self.dtype, list(self.shape)
        except Exception:  # as JAX's: a malformed object still prints
            text = f"{name}(<invalid>)"
        else:
            extra = f", {nse=}"
            if n_batch:
                extra += f", {n_batch=}"
            if n_dense:
                extra += f", {n_dense=}"
            text = f"{name}({dtype}{shape}{extra})"
        if isinstance(self.data, Tracer):
            text = f"{self.data.jax_name}[{text}]"
        return text

    def transpose(self, *args: Any, **kwargs: Any) -> BCSR:
        raise NotImplementedError("Transpose is not implemented.")

    def tree_flatten(self) -> tuple[tuple[Array, Array, Array], dict[str, Any]]:
        return (self.data, self.indices, self.indptr), self._info._asdict()

    @classmethod
    def tree_unflatten(cls, aux_data: Any, children: Sequence[Any]) -> Self:
        obj = object.__new__(cls)
        obj.data, obj.indices, obj.indptr = children
        if aux_data.keys() != {"shape", "indices_sorted", "unique_indices"}:
            raise ValueError(f"BCSR.tree_unflatten: invalid {aux_data=}")
        obj.__dict__.update(**aux_data)
        return obj

    @classmethod
    def _empty(
        cls, shape: Sequence[int], *, dtype: Any = None, index_dtype: Any = "int32",
        n_dense: int = 0, n_batch: int = 0, nse: int = 0,
    ) -> BCSR:  # fmt: skip
        shape = tuple(shape)
        if n_dense < 0 or n_batch < 0 or nse < 0:
            raise ValueError(f"Invalid inputs: {shape=}, {n_dense=}, {n_batch=}, {nse=}")
        n_sparse = len(shape) - n_dense - n_batch
        if n_sparse != 2:
            raise ValueError("BCSR sparse.empty: must have 2 sparse dimensions.")
        batch, sparse, dense = shape[:n_batch], shape[n_batch : n_batch + 2], shape[n_batch + 2 :]
        data = jnp.zeros((*batch, nse, *dense), dtype)
        indices = jnp.full((*batch, nse), jnp.array(sparse[1]), index_dtype)
        indptr = jnp.zeros((*batch, sparse[0] + 1), index_dtype)
        return cls((data, indices, indptr), shape=shape)

    def sum_duplicates(self, nse: int | None = None, remove_zeros: bool = True) -> BCSR:
        """This array with duplicates summed, indices sorted and (with `remove_zeros`)
        explicit zeros removed."""
        if remove_zeros:
            return bcsr_eliminate_zeros(self, nse=nse)
        return bcsr_sum_duplicates(self, nse=nse)

    @classmethod
    def fromdense(
        cls, mat: Array, *, nse: Any = None, index_dtype: Any = np.int32, n_dense: int = 0,
        n_batch: int = 0,
    ) -> BCSR:  # fmt: skip
        return bcsr_fromdense(
            mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense, n_batch=n_batch
        )

    def todense(self) -> Array:
        return bcsr_todense(self)

    def to_bcoo(self) -> BCOO:
        coo_indices = bcsr_to_bcoo(self.indices, self.indptr, shape=self.shape)
        return BCOO((self.data, coo_indices), shape=self.shape)

    @classmethod
    def from_bcoo(cls, arr: BCOO) -> BCSR:
        if arr.n_sparse != 2:
            raise NotImplementedError(
                f"BSCR.from_bcoo requires n_sparse=2; got arr.n_sparse={arr.n_sparse}"
            )
        if not arr.indices_sorted:
            arr = arr.sort_indices()
        indices, indptr = bcoo_to_bcsr(arr.indices, shape=arr.shape, index_dtype=arr.indices.dtype)
        return cls((arr.data, indices, indptr), shape=arr.shape)

    @classmethod
    def from_scipy_sparse(
        cls, mat: Any, *, index_dtype: Any = None, n_dense: int = 0, n_batch: int = 0
    ) -> BCSR:
        if n_dense != 0 or n_batch != 0:
            raise NotImplementedError("BCSR from_scipy_sparse with nonzero n_dense/n_batch.")
        if mat.ndim != 2:
            raise ValueError(f"BCSR from_scipy_sparse requires 2D array; {mat.ndim}D is given.")
        mat = mat.tocsr()
        data = jnp.asarray(mat.data)
        indices = jnp.asarray(mat.indices).astype(index_dtype or jnp.int32)
        indptr = jnp.asarray(mat.indptr).astype(index_dtype or jnp.int32)
        return cls((data, indices, indptr), shape=mat.shape)


def _bcsr_to_elt(cont: Any, _: Any, val: BCSR, axis: int | None) -> Any:
    if axis is None:
        return val
    if axis >= val.n_batch:
        raise ValueError(
            f"Cannot map in_axis={axis} for BCSR array with n_batch={val.n_batch}. in_axes for "
            "batched BCSR operations must correspond to a batched dimension."
        )
    bufs = (cont(val.data, axis), cont(val.indices, axis), cont(val.indptr, axis))
    return BCSR(bufs, shape=val.shape[:axis] + val.shape[axis + 1 :])


def _bcsr_from_elt(cont: Any, axis_size: int, elt: BCSR, axis: int | None) -> Any:
    if axis is None:
        return elt
    if axis > elt.n_batch:
        raise ValueError(
            f"BCSR: cannot add out_axis={axis} for BCSR array with n_batch={elt.n_batch}. BCSR "
            "batch axes must be a contiguous block of leading dimensions."
        )
    bufs = tuple(cont(axis_size, b, axis) for b in (elt.data, elt.indices, elt.indptr))
    return BCSR(bufs, shape=(*elt.shape[:axis], axis_size, *elt.shape[axis:]))


register_vmappable(BCSR, int, int, _bcsr_to_elt, _bcsr_from_elt, None)
