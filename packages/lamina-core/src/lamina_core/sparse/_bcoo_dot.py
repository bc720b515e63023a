"""BCOO's structural and contraction primitives on raw buffers: `bcoo_transpose`,
`bcoo_dot_general` (sparse x dense) and `bcoo_dot_general_sampled` (dense x dense, computed
only at given sparse indices: the transpose of `bcoo_dot_general` in its sparse operand), each
with its rules. Lowering is registered by the umbrella package."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.interpreters import (
    AxisData,
    BatchDim,
    Zero,
    batching_rules,
    defjvp,
    is_undefined,
    jvp_rules,
    transpose_rules,
    zero_of,
)
from lamina_core.ir import ShapedArray, abstract_eval_rules
from lamina_core.sparse._bcoo_convert import (
    bcoo_extract_buffers,
)
from lamina_core.sparse._bcoo_layout import batch_dims_to_front, validate_bcoo
from lamina_core.sparse._bcoo_sampled import bcoo_dot_general_sampled
from lamina_core.sparse._util import (
    SparseInfo,
    compiled_impl,
    nfold_vmap,
)
from lamina_core.trace import UserPrimitive

Array = Any


def remaining(original: Iterable[int], *removed_lists: Iterable[int]) -> list[int]:
    removed = set(itertools.chain(*removed_lists))
    return [i for i in original if i not in removed]


def ranges_like(*xs: Sequence[Any]) -> Iterator[range]:
    start = 0
    for x in xs:
        yield range(start, start + len(x))
        start += len(x)


def unbroadcast(aval: Any, x: Array) -> Array:
    """`x` summed back to `aval`'s shape over the dimensions broadcasting widened."""
    if tuple(aval.shape) == tuple(x.shape):
        return x
    if not aval.shape:
        return lax.reduce_sum(x, list(range(x.ndim)))
    dims = [i for i, (a, b) in enumerate(zip(x.shape, aval.shape, strict=True)) if a != b]
    return lax.reshape(lax.reduce_sum(x, dims), aval.shape)


def dot_general_batch_dim_nums(
    ndims: tuple[int, int], batch_dims: tuple[BatchDim, BatchDim], dimension_numbers: Any
) -> tuple[Any, int]:
    """`dot_general`'s dimension numbers with a vmapped axis on either side (JAX's rule)."""
    lhs_ndim, rhs_ndim = ndims
    lbd, rbd = batch_dims
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers

    def bump(dims: Sequence[int], b: int) -> tuple[int, ...]:
        return tuple(int(d) + int(d >= b) for d in dims)

    if lbd is not None and rbd is not None:
        lhs_batch, rhs_batch = (lbd, *bump(lhs_batch, lbd)), (rbd, *bump(rhs_batch, rbd))
        lhs_contract, rhs_contract = bump(lhs_contract, lbd), bump(rhs_contract, rbd)
        out_dim = 0
    elif lbd is not None:
        lhs_tensor = [d for d in range(lhs_ndim) if d not in lhs_batch and d not in lhs_contract]
        out_dim = len(lhs_batch) + sum(1 for d in lhs_tensor if d < lbd)
        lhs_batch, lhs_contract = bump(lhs_batch, lbd), bump(lhs_contract, lbd)
    else:
        assert rbd is not None
        rhs_tensor = remaining(range(rhs_ndim), rhs_batch, rhs_contract)
        out_dim = lhs_ndim - len(lhs_contract) + sum(1 for d in rhs_tensor if d < rbd)
        rhs_batch, rhs_contract = bump(rhs_batch, rbd), bump(rhs_contract, rbd)
    return ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)), out_dim


def ensure_index_tuple(x: Any) -> tuple[int, ...]:
    try:
        return (int(x),)
    except TypeError:
        return tuple(int(i) for i in x)


# --- bcoo_transpose -----------------------------------------------------------------------

bcoo_transpose_p = UserPrimitive("bcoo_transpose")
bcoo_transpose_p.multiple_results = True


def bcoo_transpose_buffers(
    data: Array, indices: Array, *, permutation: Sequence[int], spinfo: SparseInfo
) -> tuple[Array, Array]:
    """The buffers of the transposed array (none bound for the identity permutation)."""
    permutation = tuple(permutation)
    if permutation == tuple(range(len(spinfo.shape))):
        return data, indices
    out = bcoo_transpose_p.bind(data, indices, permutation=permutation, spinfo=spinfo)
    return out[0], out[1]


def validate_permutation(
    data: Any, indices: Any, permutation: Any, shape: Sequence[int]
) -> tuple[Any, list[int], list[int]]:
    """The batch, sparse and dense parts of `permutation`; JAX's errors where it mixes them."""
    if not isinstance(permutation, tuple | list | np.ndarray):
        raise TypeError(
            f"transpose permutation must be a tuple/list/ndarray, got {type(permutation)}."
        )
    if tuple(sorted(permutation)) != tuple(range(len(shape))):
        raise TypeError(
            "transpose permutation isn't a permutation of operand dimensions, "
            f"got permutation {permutation} for shape {shape}."
        )
    n_batch, n_sparse, n_dense, _ = validate_bcoo(data, indices, shape)
    batch_perm = permutation[:n_batch]
    sparse_perm = [p - n_batch for p in permutation[n_batch : n_batch + n_sparse]]
    dense_perm = [p - n_sparse - n_batch for p in permutation[n_batch + n_sparse :]]
    if n_batch and tuple(sorted(batch_perm)) != tuple(range(n_batch)):
        raise NotImplementedError(
            "transpose permutation cannot permute batch axes with non-batch axes; "
            f"got permutation {permutation}, with n_batch={n_batch}."
        )
    if n_dense and tuple(sorted(dense_perm)) != tuple(range(n_dense)):
        raise NotImplementedError(
            "transpose permutation cannot permute dense axes with non-dense axes; "
            f"got permutation {permutation}, with n_dense={n_dense}."
        )
    return batch_perm, sparse_perm, dense_perm


@bcoo_transpose_p.def_impl
def bcoo_transpose_impl(
    data: Array, indices: Array, *, permutation: Sequence[int], spinfo: SparseInfo
) -> tuple[Array, Array]:
    batch_perm, sparse_perm, dense_perm = validate_permutation(
        data, indices, permutation, spinfo.shape
    )
    n_batch = len(batch_perm)
    indices = indices[..., sparse_perm].transpose(*batch_perm, n_batch, n_batch + 1)
    data = data.transpose(*batch_perm, n_batch, *(d + n_batch + 1 for d in dense_perm))
    return data, indices


@bcoo_transpose_p.def_abstract_eval
def _bcoo_transpose_abstract_eval(
    data: Any, indices: Any, *, permutation: Sequence[int], spinfo: SparseInfo
) -> tuple[ShapedArray, ShapedArray]:
    batch_perm, _, dense_perm = validate_permutation(data, indices, permutation, spinfo.shape)
    n_batch = len(batch_perm)
    indices_shape = tuple(int(indices.shape[i]) for i in (*batch_perm, n_batch, n_batch + 1))
    data_order = (*batch_perm, n_batch, *(d + n_batch + 1 for d in dense_perm))
    data_shape = tuple(int(data.shape[i]) for i in data_order)
    return ShapedArray(data_shape, data.dtype), ShapedArray(indices_shape, indices.dtype)


def _bcoo_transpose_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], **params: Any
) -> tuple[Any, Any]:
    data, indices = primals
    data_dot, _ = tangents
    out = bcoo_transpose_buffers(data, indices, **params)
    if type(data_dot) is Zero:
        return out, (zero_of(out[0]), zero_of(out[1]))
    data_dot_out, _ = bcoo_transpose_buffers(data_dot, indices, **params)
    return out, (data_dot_out, zero_of(indices))


def _bcoo_transpose_transpose(
    ct: Sequence[Any], data: Any, indices: Any, *, permutation: Sequence[int], spinfo: SparseInfo
) -> Any:
    data_ct, indices_ct = ct
    assert isinstance(indices_ct, Zero)
    if is_undefined(indices):
        raise ValueError("Cannot transpose with respect to sparse indices")
    assert data_ct.dtype == data.aval.dtype
    ct_spinfo = SparseInfo(tuple(spinfo.shape[p] for p in permutation))
    rev_permutation = [int(i) for i in np.argsort(permutation)]
    dummy_indices = jnp.zeros([1] * (indices.ndim - 2) + list(indices.shape[-2:]), dtype=int)
    data_trans, _ = bcoo_transpose_buffers(
        data_ct, dummy_indices, permutation=rev_permutation, spinfo=ct_spinfo
    )
    return data_trans, indices_ct


def _bcoo_transpose_batch(
    axis_data: AxisData,
    args: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    permutation: Sequence[int],
    spinfo: SparseInfo,
) -> tuple[Any, Any]:
    data, indices, spinfo = batch_dims_to_front(args, dims, spinfo)
    batched_permutation = (0, *(p + 1 for p in permutation))
    data, indices = bcoo_transpose_buffers(
        data, indices, permutation=batched_permutation, spinfo=spinfo
    )
    dims_out = [None if bdim is None else 0 for bdim in dims]
    outs = [
        lax.squeeze(arg, [0]) if bdim is None else arg
        for arg, bdim in zip((data, indices), dims_out, strict=True)
    ]
    return outs, dims_out


jvp_rules.set(bcoo_transpose_p, _bcoo_transpose_jvp)
transpose_rules.set(bcoo_transpose_p, _bcoo_transpose_transpose)
batching_rules.set(bcoo_transpose_p, _bcoo_transpose_batch)


# --- bcoo_dot_general ---------------------------------------------------------------------

bcoo_dot_general_p = UserPrimitive("bcoo_dot_general")


def bcoo_dot_general_buffers(
    lhs_data: Array,
    lhs_indices: Array,
    rhs: Array,
    *,
    dimension_numbers: Any,
    preferred_element_type: Any,
    lhs_spinfo: SparseInfo,
) -> Array:
    """`dot_general` of the BCOO lhs (its buffers) with the dense `rhs`."""
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    cdims = (ensure_index_tuple(lhs_contract), ensure_index_tuple(rhs_contract))
    bdims = (ensure_index_tuple(lhs_batch), ensure_index_tuple(rhs_batch))
    if preferred_element_type is not None:
        preferred_element_type = np.dtype(preferred_element_type)
    return bcoo_dot_general_p.bind(
        jnp.asarray(lhs_data),
        jnp.asarray(lhs_indices),
        jnp.asarray(rhs),
        dimension_numbers=(cdims, bdims),
        preferred_element_type=preferred_element_type,
        lhs_spinfo=lhs_spinfo,
    )


def bcoo_rdot_general_buffers(
    lhs: Array,
    rhs_data: Array,
    rhs_indices: Array,
    *,
    dimension_numbers: Any,
    preferred_element_type: Any,
    rhs_spinfo: SparseInfo,
) -> Array:
    """`dot_general` of the dense `lhs` with the BCOO rhs (its buffers)."""
    reversed_numbers = tuple(d[::-1] for d in dimension_numbers)
    result = bcoo_dot_general_buffers(
        rhs_data,
        rhs_indices,
        lhs,
        lhs_spinfo=rhs_spinfo,
        dimension_numbers=reversed_numbers,
        preferred_element_type=preferred_element_type,
    )
    n_contract, n_batch = (len(d[0]) for d in dimension_numbers)
    n_swap = len(rhs_spinfo.shape) - n_contract
    permutation = (*range(n_batch), *range(n_swap, result.ndim), *range(n_batch, n_swap))
    return lax.transpose(result, permutation)


def bcoo_dot_general_impl(
    lhs_data: Array,
    lhs_indices: Array,
    rhs: Array,
    *,
    dimension_numbers: Any,
    preferred_element_type: Any,
    lhs_spinfo: SparseInfo,
) -> Array:
    lhs_data, lhs_indices, rhs = map(jnp.asarray, (lhs_data, lhs_indices, rhs))
    out_aval = _bcoo_dot_general_abstract_eval(
        lhs_data.aval,
        lhs_indices.aval,
        rhs.aval,
        dimension_numbers=dimension_numbers,
        preferred_element_type=preferred_element_type,
        lhs_spinfo=lhs_spinfo,
    )
    n_sparse = lhs_indices.shape[-1]
    n_batch = lhs_indices.ndim - 2
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dimension_numbers
    pairs = list(zip(lhs_contracting, rhs_contracting, strict=True))
    lhs_contracting_b = tuple(lc for lc, _ in pairs if lc < n_batch)
    rhs_contracting_b = tuple(rc for lc, rc in pairs if lc < n_batch)
    lhs_contracting_s = tuple(lc for lc, _ in pairs if lc >= n_batch)
    rhs_contracting_s = tuple(rc for lc, rc in pairs if lc >= n_batch)

    if lhs_batch or lhs_contracting_b:
        batch_perm = [
            *lhs_batch,
            *remaining(range(n_batch), lhs_batch, lhs_contracting_b),
            *lhs_contracting_b,
        ]
        lhs_data = lhs_data.transpose([*batch_perm, *range(n_batch, lhs_data.ndim)])
        lhs_indices = lhs_indices.transpose([*batch_perm, *range(n_batch, lhs_indices.ndim)])
    if lhs_contracting_s:
        lhs_contracting_s = tuple(d - n_batch for d in lhs_contracting_s)
        sparse_perm = jnp.array(
            [*lhs_contracting_s, *remaining(range(n_sparse), lhs_contracting_s)]
        )
        lhs_indices = lhs_indices[..., sparse_perm]
    rhs_perm = [
        *rhs_batch,
        *rhs_contracting_b,
        *rhs_contracting_s,
        *remaining(range(rhs.ndim), rhs_batch, rhs_contracting),
    ]
    rhs = rhs.transpose(rhs_perm)

    def result(out_array: Array, lhs_data: Array, lhs_indices: Array, rhs: Array) -> Array:
        idx = tuple(lhs_indices[..., i] for i in range(n_sparse))
        idx_right = idx[: len(lhs_contracting_s)]
        idx_out = idx[len(lhs_contracting_s) :]
        if idx_right and lhs_indices.ndim > 2:
            idx_batch = jnp.meshgrid(
                *(jnp.arange(n) for n in lhs_indices.shape[:-1]), indexing="ij"
            )[: lhs_indices.ndim - 2]
            idx_right = (*idx_batch, *idx_right)
        batch_dims = list(range(len(lhs_contracting_b) + bool(lhs_contracting_s)))
        prod = lax.dot_general(
            lhs_data,
            jnp.at(rhs)[idx_right].get(mode="fill", fill_value=0),
            (([], []), (batch_dims, batch_dims)),
            preferred_element_type=preferred_element_type,
        )
        if idx_out:
            return jnp.at(out_array)[idx_out].add(prod)
        return prod.sum(tuple(range(prod.ndim - out_array.ndim)), dtype=out_array.dtype)

    mapped = nfold_vmap(result, n_batch - len(lhs_contracting_b))
    rhs = lax.expand_dims(rhs, range(len(rhs_batch), n_batch - len(lhs_contracting_b)))
    out_array = jnp.zeros(out_aval.shape, out_aval.dtype)
    return mapped(out_array, lhs_data, lhs_indices, rhs)


@bcoo_dot_general_p.def_abstract_eval
def _bcoo_dot_general_abstract_eval(
    lhs_data: Any,
    lhs_indices: Any,
    rhs: Any,
    *,
    dimension_numbers: Any,
    preferred_element_type: Any,
    lhs_spinfo: SparseInfo,
) -> ShapedArray:
    out_aval: Any = abstract_eval_rules[lax.dot_general_p](
        ShapedArray(tuple(lhs_spinfo.shape), lhs_data.dtype),
        ShapedArray(tuple(rhs.shape), rhs.dtype),
        dimension_numbers=dimension_numbers,
        precision=None,
        preferred_element_type=preferred_element_type,
        out_sharding=None,
    )
    (lhs_contracting, _), (lhs_batch, _) = dimension_numbers
    n_batch, n_sparse, _, _ = validate_bcoo(lhs_data, lhs_indices, lhs_spinfo.shape)
    if lhs_batch and max(lhs_batch) >= n_batch:
        raise NotImplementedError(
            "bcoo_dot_general batch dimensions must be among the batch dimensions in the "
            f"sparse representation.\ngot lhs_batch={lhs_batch}, n_batch={n_batch}"
        )
    if any(d >= n_batch + n_sparse for d in lhs_contracting):
        raise NotImplementedError("bcoo_dot_general: contracting over dense dimensions.")
    return ShapedArray(tuple(out_aval.shape), out_aval.dtype)


def _bcoo_dot_general_jvp_lhs(
    lhs_data_dot: Array, lhs_data: Array, lhs_indices: Array, rhs: Array, **params: Any
) -> Any:
    return bcoo_dot_general_buffers(lhs_data_dot, lhs_indices, rhs, **params)


def _bcoo_dot_general_jvp_rhs(
    rhs_dot: Array, lhs_data: Array, lhs_indices: Array, rhs: Array, **params: Any
) -> Any:
    return bcoo_dot_general_buffers(lhs_data, lhs_indices, rhs_dot, **params)


def _bcoo_dot_general_transpose(
    ct: Array,
    lhs_data: Any,
    lhs_indices: Any,
    rhs: Any,
    *,
    dimension_numbers: Any,
    preferred_element_type: Any,
    lhs_spinfo: SparseInfo,
) -> Any:
    assert not is_undefined(lhs_indices)
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    lhs_ndim = len(lhs_spinfo.shape)
    rhs_ndim = rhs.aval.ndim if is_undefined(rhs) else rhs.ndim
    lhs_kept = remaining(range(lhs_ndim), lhs_contract, lhs_batch)
    rhs_kept = remaining(range(rhs_ndim), rhs_contract, rhs_batch)
    ans_batch, ans_lhs, ans_rhs = (list(r) for r in ranges_like(lhs_batch, lhs_kept, rhs_kept))
    if is_undefined(lhs_data):
        dims = ((ans_rhs, rhs_kept), (ans_batch, rhs_batch))
        lhs_contract_sorted_by_rhs = [
            int(i) for i in np.take(lhs_contract, np.argsort(rhs_contract))
        ]
        permutation = list(lhs_batch) + lhs_kept + lhs_contract_sorted_by_rhs
        out_axes = [int(i) for i in np.argsort(permutation)]
        placeholder_data = jnp.zeros((lhs_indices.ndim - 2) * (1,) + (lhs_indices.shape[-2],))
        placeholder_shape = tuple(lhs_indices.shape[:-2]) + lhs_indices.shape[-1] * (1,)
        try:
            validate_permutation(placeholder_data, lhs_indices, permutation, placeholder_shape)
        except NotImplementedError:
            untransposable = False
        else:
            untransposable = True
        if untransposable:
            _, lhs_indices_t = bcoo_transpose_buffers(
                placeholder_data,
                lhs_indices,
                permutation=permutation,
                spinfo=SparseInfo(placeholder_shape),
            )
            result_t_shape = tuple(placeholder_shape[i] for i in permutation)
            result_t = bcoo_dot_general_sampled(ct, rhs, lhs_indices_t, dimension_numbers=dims)
            result, _ = bcoo_transpose_buffers(
                result_t, lhs_indices_t, permutation=out_axes, spinfo=SparseInfo(result_t_shape)
            )
        else:
            out_dense_t = lax.dot_general(ct, rhs, dimension_numbers=dims)
            out_dense = lax.transpose(out_dense_t, out_axes)
            result = bcoo_extract_buffers(lhs_indices, out_dense)
        return unbroadcast(lhs_data.aval, result), lhs_indices, rhs
    dims = ((lhs_kept, ans_lhs), (lhs_batch, ans_batch))
    rhs_contract_sorted_by_lhs = [int(i) for i in np.take(rhs_contract, np.argsort(lhs_contract))]
    out_axes = [int(i) for i in np.argsort(list(rhs_batch) + rhs_contract_sorted_by_lhs + rhs_kept)]
    result = bcoo_dot_general_buffers(
        lhs_data,
        lhs_indices,
        ct,
        lhs_spinfo=lhs_spinfo,
        preferred_element_type=preferred_element_type,
        dimension_numbers=dims,
    )
    return lhs_data, lhs_indices, lax.transpose(result, out_axes)


def _bcoo_dot_general_batch(
    axis_data: AxisData,
    args: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    dimension_numbers: Any,
    preferred_element_type: Any,
    lhs_spinfo: SparseInfo,
) -> tuple[Any, int]:
    rhs, rhs_bdim = args[2], dims[2]
    data, indices, new_spinfo = batch_dims_to_front(
        args[:2], dims[:2], lhs_spinfo, batch_size=None if rhs_bdim is None else rhs.shape[rhs_bdim]
    )
    numbers, out_dim = dot_general_batch_dim_nums(
        (len(lhs_spinfo.shape), rhs.ndim), (0, rhs_bdim), dimension_numbers
    )
    out = bcoo_dot_general_buffers(
        data,
        indices,
        rhs,
        lhs_spinfo=new_spinfo,
        preferred_element_type=preferred_element_type,
        dimension_numbers=numbers,
    )
    return out, out_dim


defjvp(bcoo_dot_general_p, _bcoo_dot_general_jvp_lhs, None, _bcoo_dot_general_jvp_rhs)
transpose_rules.set(bcoo_dot_general_p, _bcoo_dot_general_transpose)
batching_rules.set(bcoo_dot_general_p, _bcoo_dot_general_batch)

# Eagerly, each primitive runs as one compiled program of its impl.
bcoo_transpose_p.def_impl(compiled_impl(bcoo_transpose_impl, ("permutation", "spinfo")))
bcoo_dot_general_p.def_impl(
    compiled_impl(
        bcoo_dot_general_impl, ("dimension_numbers", "preferred_element_type", "lhs_spinfo")
    )
)
