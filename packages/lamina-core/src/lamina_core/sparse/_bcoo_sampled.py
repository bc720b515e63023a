"""`bcoo_dot_general_sampled`: `dot_general` of two dense arrays computed only at the given
BCOO indices (the result is BCOO data), with its rules; the transpose of `bcoo_dot_general`
in its sparse operand. Lowering is registered by the umbrella package."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.interpreters import (
    AxisData,
    BatchDim,
    batching_rules,
    defjvp,
    transpose_rules,
)
from lamina_core.ir import abstract_eval_rules
from lamina_core.sparse._bcoo_convert import (
    bcoo_extract_buffers,
    bcoo_extract_p,
    bcoo_todense_buffers,
)
from lamina_core.sparse._bcoo_layout import tuple_replace
from lamina_core.sparse._util import SparseInfo, _dot_general_validated_shape, compiled_impl
from lamina_core.trace import UserPrimitive
from lamina_core.transforms import vmap

Array = Any

bcoo_dot_general_sampled_p = UserPrimitive("bcoo_dot_general_sampled")


def _index_tuple(x: Any) -> tuple[int, ...]:
    try:
        return (int(x),)
    except TypeError:
        return tuple(int(i) for i in x)


def bcoo_dot_general_sampled(
    A: Array, B: Array, indices: Array, *, dimension_numbers: Any
) -> Array:
    """A contraction computed only at given sparse indices.

    Args:
        A: an ndarray.
        B: an ndarray.
        indices: BCOO indices.
        dimension_numbers: `((lhs_contracting_dims, rhs_contracting_dims),
            (lhs_batch_dims, rhs_batch_dims))`.

    Returns:
        BCOO data, an ndarray containing the result.
    """
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    cdims = (_index_tuple(lhs_contract), _index_tuple(rhs_contract))
    bdims = (_index_tuple(lhs_batch), _index_tuple(rhs_batch))
    return bcoo_dot_general_sampled_p.bind(A, B, indices, dimension_numbers=(cdims, bdims))


def _fill_get(x: Array, index: Any) -> Array:
    return jnp.at(x)[index].get(mode="fill", fill_value=0)


def _sampled_simple(A: Array, B: Array, indices: Array) -> Array:
    # The transpose of a sparse matrix-vector product: an outer product at the indices.
    n_batch = indices.ndim - 2
    nse = indices.shape[-2]
    if n_batch == 0:
        return _fill_get(A, indices[:, 0]) * _fill_get(B, indices[:, 1])
    if n_batch == 1:
        return A[:, None] * _fill_get(B, indices[..., 0])
    if n_batch == 2:
        out = A[:, None, None] * B[None, :, None]
        return lax.broadcast_in_dim(out, (len(A), len(B), nse), (0, 1, 2))
    raise ValueError("too many batch dimensions.")


def _sampled_simple2(
    A: Array, B: Array, indices: Array, *, dimension_numbers: Any, precision: Any
) -> Array:
    # The transpose of a sparse matrix-matrix product.
    (lhs_contract, rhs_contract), _ = dimension_numbers
    n_batch = indices.ndim - 2
    nse = indices.shape[-2]
    both = (slice(None), slice(None))
    lhs_batch = [1] if lhs_contract[0] == 0 else [0]
    rhs_batch = [1] if rhs_contract[0] == 0 else [0]
    if n_batch == 0:
        A = _fill_get(A, tuple_replace(both, lhs_batch[0], indices[:, 0]))
        B = _fill_get(B, tuple_replace(both, rhs_batch[0], indices[:, 1]))
        return lax.dot_general(
            A, B, ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)), precision=precision
        )
    if n_batch == 1:
        B = _fill_get(B, tuple_replace(both, rhs_batch[0], indices[..., 0]))
        if rhs_contract[0] == 1:
            rhs_contract = (2,)
        return lax.dot_general(
            A, B, ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)), precision=precision
        )
    if n_batch == 2:
        out = lax.dot_general(A, B, dimension_numbers, precision=precision)
        return lax.broadcast_in_dim(lax.expand_dims(out, (2,)), (*out.shape, nse), (0, 1, 2))
    raise ValueError("too many batch dimensions.")


@bcoo_dot_general_sampled_p.def_impl
def bcoo_dot_general_sampled_impl(
    A: Array, B: Array, indices: Array, *, dimension_numbers: Any
) -> Array:
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    n_batch = indices.ndim - 2
    n_sparse = indices.shape[-1]
    precision = lax.Precision.HIGHEST
    if (
        not (lhs_contract or rhs_contract or lhs_batch or rhs_batch)
        and A.ndim == B.ndim == 1
        and n_sparse + n_batch == 2
    ):
        return _sampled_simple(A, B, indices)
    if (
        len(lhs_contract) == 1
        and not lhs_batch
        and A.ndim == B.ndim == 2
        and n_sparse + n_batch == 2
    ):
        return _sampled_simple2(
            A, B, indices, dimension_numbers=dimension_numbers, precision=precision
        )
    dense = lax.dot_general(A, B, dimension_numbers=dimension_numbers, precision=precision)
    return bcoo_extract_buffers(indices, dense)


@bcoo_dot_general_sampled_p.def_abstract_eval
def _bcoo_dot_general_sampled_abstract_eval(
    A: Any, B: Any, indices: Any, *, dimension_numbers: Any
) -> Any:
    dense = abstract_eval_rules[lax.dot_general_p](
        A,
        B,
        dimension_numbers=dimension_numbers,
        precision=None,
        preferred_element_type=None,
        out_sharding=None,
    )
    return abstract_eval_rules[bcoo_extract_p](indices, dense, assume_unique=True)


def _bcoo_dot_general_sampled_transpose(
    ct: Array, A: Any, B: Any, indices: Any, *, dimension_numbers: Any
) -> Any:
    a_shape = A.aval.shape if hasattr(A, "aval") else A.shape
    b_shape = B.aval.shape if hasattr(B, "aval") else B.shape
    mat_shape = _dot_general_validated_shape(a_shape, b_shape, dimension_numbers)
    dense_ct = bcoo_todense_buffers(ct, indices, spinfo=SparseInfo(mat_shape))
    params = {
        "dimension_numbers": dimension_numbers,
        "precision": None,
        "preferred_element_type": None,
        "out_sharding": None,
    }
    A, B = transpose_rules[lax.dot_general_p](dense_ct, A, B, **params)
    return A, B, indices


def _bcoo_dot_general_sampled_jvp_A(
    A_dot: Array, A: Array, B: Array, indices: Array, *, dimension_numbers: Any
) -> Array:
    return bcoo_dot_general_sampled(A_dot, B, indices, dimension_numbers=dimension_numbers)


def _bcoo_dot_general_sampled_jvp_B(
    B_dot: Array, A: Array, B: Array, indices: Array, *, dimension_numbers: Any
) -> Array:
    return bcoo_dot_general_sampled(A, B_dot, indices, dimension_numbers=dimension_numbers)


def _bcoo_dot_general_sampled_batch(
    axis_data: AxisData, args: Sequence[Any], dims: Sequence[BatchDim], *, dimension_numbers: Any
) -> tuple[Any, int]:
    def impl(A: Array, B: Array, indices: Array) -> Array:
        return bcoo_dot_general_sampled_impl(A, B, indices, dimension_numbers=dimension_numbers)

    return vmap(impl, in_axes=tuple(dims), out_axes=0)(*args), 0


defjvp(
    bcoo_dot_general_sampled_p,
    _bcoo_dot_general_sampled_jvp_A,
    _bcoo_dot_general_sampled_jvp_B,
    None,
)
transpose_rules.set(bcoo_dot_general_sampled_p, _bcoo_dot_general_sampled_transpose)
batching_rules.set(bcoo_dot_general_sampled_p, _bcoo_dot_general_sampled_batch)

# Eagerly, each primitive runs as one compiled program of its impl.
bcoo_dot_general_sampled_p.def_impl(
    compiled_impl(bcoo_dot_general_sampled_impl, ("dimension_numbers",))
)
