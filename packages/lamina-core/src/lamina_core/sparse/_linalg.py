"""`spsolve` (`jax.experimental.sparse.linalg`): a direct solve of a CSR system, as the
primitive `spsolve_p` with its abstract evaluation, jvp and transpose. JAX lowers it on the
CPU to a host callback of `scipy.sparse.linalg.spsolve` (the umbrella package registers that
lowering); eagerly it runs as that one compiled program."""

from __future__ import annotations

from typing import Any

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.interpreters import defjvp, is_undefined, transpose_rules
from lamina_core.sparse._csr import csr_matvec_p
from lamina_core.sparse._util import compiled_impl
from lamina_core.trace import UserPrimitive

Array = Any

spsolve_p = UserPrimitive("spsolve")


def spsolve(
    data: Array, indices: Array, indptr: Array, b: Array, tol: float = 1e-6, reorder: int = 1
) -> Array:
    """Solve `A x = b` for the CSR matrix `A` (`data`, `indices`, `indptr`).

    Args:
        data: the nonzero entries of the CSR matrix.
        indices: their column indices.
        indptr: the row pointers.
        b: the right-hand side.
        tol: the tolerance deciding singularity (GPU only).
        reorder: the fill-in reducing reordering, 0 to 3 (GPU only).

    Returns:
        The solution, of `b`'s dtype and size.
    """
    return spsolve_p.bind(data, indices, indptr, b, tol=tol, reorder=reorder)


@spsolve_p.def_abstract_eval
def _spsolve_abstract_eval(
    data: Any, indices: Any, indptr: Any, b: Any, *, tol: float, reorder: int
) -> Any:
    if data.dtype != b.dtype:
        raise ValueError(f"data types do not match: data.dtype={data.dtype} b.dtype={b.dtype}")
    if not (
        jnp.issubdtype(indices.dtype, jnp.integer) and jnp.issubdtype(indptr.dtype, jnp.integer)
    ):
        raise ValueError(
            "index arrays must be integer typed; got "
            f"indices.dtype={indices.dtype} indptr.dtype={indptr.dtype}"
        )
    if not data.ndim == indices.ndim == indptr.ndim == b.ndim == 1:
        raise ValueError(
            "Arrays must be one-dimensional. Got "
            f"data.shape={data.shape} indices.shape={indices.shape} "
            f"indptr.shape={indptr.shape} b.shape={b.shape}"
        )
    if indptr.size != b.size + 1 or data.shape != indices.shape:
        raise ValueError(
            "Invalid CSR buffer sizes: "
            f"data.shape={data.shape} indices.shape={indices.shape} indptr.shape={indptr.shape}"
        )
    if reorder not in [0, 1, 2, 3]:
        raise ValueError(f"reorder={reorder} not valid, must be one of [1, 2, 3, 4]")
    float(tol)
    return b


def _spsolve_jvp_lhs(
    data_dot: Array, data: Array, indices: Array, indptr: Array, b: Array, **params: Any
) -> Array:
    p = spsolve(data, indices, indptr, b, **params)
    q = csr_matvec_p.bind(
        data_dot, indices, indptr, p, shape=(indptr.size - 1, len(b)), transpose=False
    )
    return -spsolve(data, indices, indptr, q, **params)


def _spsolve_jvp_rhs(
    b_dot: Array, data: Array, indices: Array, indptr: Array, b: Array, **params: Any
) -> Array:
    return spsolve(data, indices, indptr, b_dot, **params)


def _csr_transpose(data: Array, indices: Array, indptr: Array) -> tuple[Array, Array, Array]:
    m = indptr.size - 1
    row = jnp.cumsum(jnp.at(jnp.zeros_like(indices))[indptr].add(1)) - 1
    row_t, indices_t, data_t = lax.sort((indices, row, data), num_keys=2)
    counts = jnp.cumsum(jnp.bincount(row_t, length=m)).astype(indptr.dtype)
    indptr_t = jnp.at(jnp.zeros_like(indptr))[1:].set(counts)
    return data_t, indices_t, indptr_t


def _spsolve_transpose(
    ct: Array, data: Any, indices: Any, indptr: Any, b: Any, **params: Any
) -> Any:
    assert not is_undefined(indices)
    assert not is_undefined(indptr)
    if is_undefined(b):
        data_t, indices_t, indptr_t = _csr_transpose(data, indices, indptr)
        ct_out = spsolve(data_t, indices_t, indptr_t, ct, **params)
        return data, indices, indptr, ct_out
    raise NotImplementedError("spsolve transpose with respect to data")


def _bound(*args: Any, **params: Any) -> Any:
    return spsolve_p.bind(*args, **params)


spsolve_p.def_impl(compiled_impl(_bound, ("tol", "reorder")))
defjvp(spsolve_p, _spsolve_jvp_lhs, None, None, _spsolve_jvp_rhs)
transpose_rules.set(spsolve_p, _spsolve_transpose)

__all__ = ["spsolve", "spsolve_p"]
