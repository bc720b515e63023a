"""`todense` (and its primitive `todense_p`, over any sparse object's buffers), `empty` and
`eye` over every sparse format (`jax.experimental.sparse.api`)."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from functools import partial
from typing import Any

from lamina_core.interpreters import (
    AxisData,
    BatchDim,
    Zero,
    batching_rules,
    is_undefined,
    jvp_rules,
    transpose_rules,
)
from lamina_core.ir import ShapedArray
from lamina_core.sparse._base import JAXSparse
from lamina_core.sparse._bcoo import BCOO
from lamina_core.sparse._bcoo_convert import bcoo_extract_buffers
from lamina_core.sparse._util import _coo_extract
from lamina_core.trace import UserPrimitive, concrete_or_error
from lamina_core.transforms import vmap
from lamina_core.tree.public import tree_flatten
from lamina_core.tree.tree_util import tree_unflatten

Array = Any

todense_p = UserPrimitive("todense")


def todense(arr: JAXSparse | Array) -> Array:
    """`arr` as a dense array (a dense input passes through)."""
    bufs, tree = tree_flatten(arr)
    return todense_p.bind(*bufs, tree=tree)


@todense_p.def_impl
def todense_impl(*bufs: Any, tree: Any) -> Array:
    arr = tree_unflatten(tree, bufs)
    return arr.todense() if isinstance(arr, JAXSparse) else arr


@todense_p.def_abstract_eval
def _todense_abstract_eval(*bufs: Any, tree: Any) -> ShapedArray:
    arr = tree_unflatten(tree, bufs)
    if isinstance(arr, ShapedArray):
        return arr
    return ShapedArray(tuple(arr.shape), arr.dtype, weak_type=bool(arr.data.weak_type))


def _todense_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, tree: Any) -> Any:
    assert not isinstance(tangents[0], Zero)
    assert all(isinstance(t, Zero) for t in tangents[1:])
    out = todense_p.bind(*primals, tree=tree)
    return out, todense_p.bind(tangents[0], *primals[1:], tree=tree)


def _todense_transpose(ct: Array, *bufs: Any, tree: Any) -> Any:
    assert is_undefined(bufs[0])
    assert not any(is_undefined(b) for b in bufs[1:])
    standin = object()
    obj = tree_unflatten(tree, [standin] * len(bufs))
    if obj is standin:
        return (ct,)
    if isinstance(obj, BCOO):
        _, indices = bufs
        return bcoo_extract_buffers(indices, ct), indices
    name = type(obj).__name__
    if name == "BCSR":
        import lamina_core.sparse as sparse  # the BCSR format is defined above this module

        _, indices, indptr = bufs
        return sparse.bcsr_extract(indices, indptr, ct), indices, indptr
    if name == "COO":
        _, row, col = bufs
        return _coo_extract(row, col, ct), row, col
    raise NotImplementedError(f"todense_transpose for {type(obj)}")


def _todense_batch(
    axis_data: AxisData, args: Sequence[Any], dims: Sequence[BatchDim], *, tree: Any
) -> tuple[Any, int]:
    return vmap(partial(todense_impl, tree=tree), tuple(dims))(*args), 0


jvp_rules.set(todense_p, _todense_jvp)
transpose_rules.set(todense_p, _todense_transpose)
batching_rules.set(todense_p, _todense_batch)


def _formats(names: Sequence[str]) -> dict[str, Any]:
    import lamina_core.sparse as sparse  # the other formats are defined beside this module

    classes = {"bcoo": "BCOO", "bcsr": "BCSR", "coo": "COO", "csr": "CSR", "csc": "CSC"}
    return {n: getattr(sparse, classes[n]) for n in names if hasattr(sparse, classes[n])}


def empty(
    shape: Sequence[int],
    dtype: Any = None,
    index_dtype: Any = "int32",
    sparse_format: str = "bcoo",
    **kwds: Any,
) -> JAXSparse:
    """An empty sparse array of `shape` in `sparse_format` ('bcoo', 'bcsr', 'coo', 'csr',
    'csc'); `kwds` go to the format's constructor (`n_batch`, `n_dense`, `nse`)."""
    formats = _formats(["bcsr", "bcoo", "coo", "csr", "csc"])
    if sparse_format not in formats:
        raise ValueError(
            f"sparse_format={sparse_format!r} not recognized; must be one of {list(formats.keys())}"
        )
    cls = formats[sparse_format]
    return cls._empty(tuple(shape), dtype=dtype, index_dtype=index_dtype, **kwds)  # type: ignore[no-any-return]  # a format's constructor


def eye(
    N: int,
    M: int | None = None,
    k: int = 0,
    dtype: Any = None,
    index_dtype: Any = "int32",
    sparse_format: str = "bcoo",
    **kwds: Any,
) -> JAXSparse:
    """A 2D sparse matrix with ones on the `k`-th diagonal, in `sparse_format`."""
    formats = _formats(["bcoo", "coo", "csr", "csc"])
    if M is None:
        M = N
    context = "The error arose in sparse.eye()."
    N = operator.index(concrete_or_error(N, context))
    M = operator.index(concrete_or_error(M, context))
    k = operator.index(concrete_or_error(k, context))
    cls = formats[sparse_format]
    return cls._eye(M=M, N=N, k=k, dtype=dtype, index_dtype=index_dtype, **kwds)  # type: ignore[no-any-return]  # a format's constructor


__all__ = ["empty", "eye", "todense", "todense_impl", "todense_p"]
