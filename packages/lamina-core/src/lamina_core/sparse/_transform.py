"""`sparsify` (`jax.experimental.sparse.transform`): run a function written for dense arrays
on BCOO and BCSR arguments, by tracing it to a jaxpr and evaluating that jaxpr with a sparse
rule per primitive (`sparse_rules_bcsr` where an operand is BCSR, else `sparse_rules_bcoo`
where one is BCOO). `_transform_tracer` holds the other way, a `SparseTrace`, and `sparsify`.

Values live in a `SparsifyEnv` (a list of buffers); a `SparsifyValue` points at a dense
array's buffer, or at a sparse array's data and indices buffers, so results of zero-preserving
operations share their operand's indices.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.ir import DropVar, Jaxpr, Literal, Primitive, ShapedArray, Var
from lamina_core.sparse._api import todense_p
from lamina_core.sparse._bcoo import BCOO, bcoo_dot_general, bcoo_transpose
from lamina_core.sparse._bcoo_conv import bcoo_conv_general_dilated
from lamina_core.sparse._bcoo_ops import (
    bcoo_broadcast_in_dim,
    bcoo_multiply_dense,
    bcoo_multiply_sparse,
    bcoo_reduce_sum,
)
from lamina_core.sparse._bcoo_shape import (
    bcoo_concatenate,
    bcoo_dynamic_slice,
    bcoo_reshape,
    bcoo_rev,
    bcoo_slice,
    bcoo_squeeze,
)
from lamina_core.sparse._bcsr import BCSR
from lamina_core.trace import typeof
from lamina_core.tree.tree_util import tree_flatten, tree_map, tree_unflatten

Array = Any
SparseRule = Callable[..., Sequence["SparsifyValue"]]

sparse_rules_bcoo: dict[Primitive, SparseRule] = {}
"""The sparse rule of each primitive: `rule(spenv, *spvalues, **params) -> spvalues`."""
sparse_rules_bcsr: dict[Primitive, SparseRule] = {}
"""The rules used where an operand is BCSR (JAX has far fewer of them than BCOO rules)."""

_zero_preserving_linear_unary = [
    lax.conj_p, lax.copy_p, lax.imag_p, lax.neg_p, lax.real_p, lax.stage_p,
]  # fmt: skip
_zero_preserving_unary = [
    lax.abs_p, lax.asin_p, lax.asinh_p, lax.atan_p, lax.atanh_p, lax.bessel_i1e_p, lax.expm1_p,
    lax.log1p_p, lax.sign_p, lax.sin_p, lax.sinh_p, lax.sqrt_p, lax.square_p, lax.tan_p,
    lax.tanh_p, lax.convert_element_type_p,
]  # fmt: skip
_densifying = [
    lax.acos_p, lax.acosh_p, lax.bessel_i0e_p, lax.cos_p, lax.cosh_p, lax.eq_p, lax.exp_p,
    lax.ge_p, lax.gt_p, lax.le_p, lax.lt_p, lax.log_p, lax.ne_p, lax.xor_p,
]  # fmt: skip


def _raise_unimplemented_primitive(primitive: Primitive) -> None:
    if primitive in _densifying:
        raise NotImplementedError(
            f"sparse rule for {primitive} is not implemented because it "
            "would result in dense output. If this is your intent, use "
            "sparse.todense() to convert your arguments to dense matrices."
        )
    raise NotImplementedError(f"sparse rule for {primitive} is not implemented.")


class SparsifyValue(NamedTuple):
    """A dense or sparse array of a `SparsifyEnv`: its shape and its buffers' positions."""

    shape: tuple[int, ...]
    data_ref: int | None
    indices_ref: int | None = None
    indptr_ref: int | None = None
    indices_sorted: bool | None = False
    unique_indices: bool | None = False

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def is_sparse(self) -> bool:
        return self.indices_ref is not None

    def is_dense(self) -> bool:
        return self.indices_ref is None

    def is_bcoo(self) -> bool:
        return self.is_sparse() and self.indptr_ref is None

    def is_bcsr(self) -> bool:
        return self.is_sparse() and self.indptr_ref is not None


class SparsifyEnv:
    """The buffers (arrays or tracers) that `SparsifyValue`s point into. Identity intended."""

    def __init__(self, bufs: Sequence[Array] = ()) -> None:
        self._buffers: list[Array] = list(bufs)

    def _push(self, arr: Array) -> int:
        self._buffers.append(jnp.asarray(arr))
        return len(self._buffers) - 1

    def data(self, spvalue: SparsifyValue) -> Array:
        if spvalue.data_ref is None:
            raise RuntimeError("Internal: requested data from spvalue with data_ref=None")
        return self._buffers[spvalue.data_ref]

    def indices(self, spvalue: SparsifyValue) -> Array:
        if spvalue.indices_ref is None:
            raise RuntimeError("Internal: requested indices from spvalue with indices_ref=None")
        return self._buffers[spvalue.indices_ref]

    def indptr(self, spvalue: SparsifyValue) -> Array:
        if spvalue.indptr_ref is None:
            raise RuntimeError("Internal: requested indices from spvalue with indptr_ref=None")
        return self._buffers[spvalue.indptr_ref]

    def dense(self, data: Array) -> SparsifyValue:
        """A new dense value."""
        return SparsifyValue(tuple(np.shape(data)), self._push(data))

    def sparse(
        self,
        shape: Sequence[int],
        data: Array | None = None,
        indices: Array | None = None,
        indptr: Array | None = None,
        *,
        data_ref: int | None = None,
        indices_ref: int | None = None,
        indptr_ref: int | None = None,
        indices_sorted: bool = False,
        unique_indices: bool = False,
    ) -> SparsifyValue:
        """A new sparse value, from new buffers or from existing ones (`*_ref`)."""
        if data is not None:
            assert data_ref is None
            data_ref = self._push(data)
        else:
            assert data_ref is not None and data_ref < len(self._buffers)
        if indices is not None:
            assert indices_ref is None
            indices_ref = self._push(indices)
        else:
            assert indices_ref is not None and indices_ref < len(self._buffers)
        if indptr is not None:
            assert indptr_ref is None
            indptr_ref = self._push(indptr)
        elif indptr_ref is not None:
            assert indptr_ref < len(self._buffers)
        return SparsifyValue(
            tuple(shape),
            data_ref,
            indices_ref,
            indptr_ref,
            indices_sorted=indices_sorted,
            unique_indices=unique_indices,
        )


def _is_sparse_obj(arg: Any) -> bool:
    return isinstance(arg, (BCOO, BCSR))


def _is_spvalue(arg: Any) -> bool:
    return isinstance(arg, SparsifyValue)


def arrays_to_spvalues(spenv: SparsifyEnv, args: Any) -> Any:
    """A pytree of (sparse) arrays as `SparsifyValue`s of `spenv`."""

    def to_spvalue(arg: Any) -> SparsifyValue:
        if isinstance(arg, BCOO):
            return spenv.sparse(
                arg.shape,
                arg.data,
                arg.indices,
                indices_sorted=arg.indices_sorted,
                unique_indices=arg.unique_indices,
            )
        if isinstance(arg, BCSR):
            return spenv.sparse(
                arg.shape,
                arg.data,
                arg.indices,
                arg.indptr,
                indices_sorted=arg.indices_sorted,
                unique_indices=arg.unique_indices,
            )
        return spenv.dense(arg)

    return tree_map(to_spvalue, args, is_leaf=_is_sparse_obj)


def spvalues_to_arrays(spenv: SparsifyEnv, spvalues: Any) -> Any:
    """A pytree of `SparsifyValue`s as (sparse) arrays."""

    def to_array(spvalue: SparsifyValue) -> Any:
        if spvalue.is_bcoo():
            return BCOO(
                (spenv.data(spvalue), spenv.indices(spvalue)),
                shape=spvalue.shape,
                indices_sorted=bool(spvalue.indices_sorted),
                unique_indices=bool(spvalue.unique_indices),
            )
        if spvalue.is_bcsr():
            return BCSR(
                (spenv.data(spvalue), spenv.indices(spvalue), spenv.indptr(spvalue)),
                shape=spvalue.shape,
                indices_sorted=bool(spvalue.indices_sorted),
                unique_indices=bool(spvalue.unique_indices),
            )
        return spenv.data(spvalue)

    return tree_map(to_array, spvalues, is_leaf=_is_spvalue)


def spvalues_to_avals(spenv: SparsifyEnv, spvalues: Any) -> Any:
    """A pytree of `SparsifyValue`s as the avals of the dense arrays they stand for."""

    def to_aval(spvalue: SparsifyValue) -> ShapedArray:
        data = spenv.data(spvalue)
        return ShapedArray(spvalue.shape, data.dtype, weak_type=typeof(data).weak_type)  # type: ignore[attr-defined]  # an array's aval

    return tree_map(to_aval, spvalues, is_leaf=_is_spvalue)


def eval_sparse(
    jaxpr: Jaxpr, consts: Sequence[Array], spvalues: Sequence[SparsifyValue], spenv: SparsifyEnv
) -> list[SparsifyValue]:
    """Evaluate `jaxpr` on sparse and dense values: sparse rules where an operand is sparse,
    the primitive itself otherwise."""
    env: dict[Var, SparsifyValue] = {}

    def read(var: Any) -> SparsifyValue:
        if isinstance(var, Literal):
            return spenv.dense(var.val)
        return env[var]

    def write(var: Any, value: SparsifyValue | None) -> None:
        if isinstance(var, DropVar):
            return
        assert value is not None
        env[var] = value

    for v, c in zip(jaxpr.constvars, consts, strict=True):
        write(v, spenv.dense(c))
    for v, s in zip(jaxpr.invars, spvalues, strict=True):
        write(v, s)
    for eqn in jaxpr.eqns:
        prim = eqn.primitive
        invals = [read(v) for v in eqn.invars]
        out: Sequence[SparsifyValue | None]
        if any(val.is_bcsr() for val in invals):
            if prim not in sparse_rules_bcsr:
                _raise_unimplemented_primitive(prim)
            out = sparse_rules_bcsr[prim](spenv, *invals, **eqn.params)
        elif any(val.is_bcoo() for val in invals):
            if prim not in sparse_rules_bcoo:
                _raise_unimplemented_primitive(prim)
            out = sparse_rules_bcoo[prim](spenv, *invals, **eqn.params)
        else:
            bufs = prim.bind(*(spenv.data(val) for val in invals), **eqn.params)
            bufs = bufs if prim.multiple_results else [bufs]
            out = [
                None if isinstance(var, DropVar) else spenv.dense(buf)
                for buf, var in zip(bufs, eqn.outvars, strict=True)
            ]
        for var, value in zip(eqn.outvars, out, strict=True):
            write(var, value)
    return [read(v) for v in jaxpr.outvars]


def sparsify_raw(f: Callable[..., Any]) -> Callable[..., tuple[list[SparsifyValue], Any]]:
    """`f` as a function of a `SparsifyEnv` and `SparsifyValue`s (and keyword params)."""

    def wrapped(
        spenv: SparsifyEnv, *spvalues: SparsifyValue, **params: Any
    ) -> tuple[list[SparsifyValue], Any]:
        spvalues_flat, in_tree = tree_flatten(spvalues, is_leaf=_is_spvalue)
        in_avals_flat = spvalues_to_avals(spenv, spvalues_flat)
        out_tree: Any = None

        def flat_fun(*args_flat: Any) -> list[Any]:
            nonlocal out_tree
            out = f(*tree_unflatten(in_tree, args_flat), **params)
            out_flat, out_tree = tree_flatten(out)
            return out_flat

        closed = trace_to_jaxpr(flat_fun, in_avals_flat)
        result = eval_sparse(closed.jaxpr, closed.consts, spvalues_flat, spenv)
        if len(closed.out_avals) != len(result):
            raise Exception(
                "Internal: eval_sparse does not return expected number of arguments. "
                f"Got {result} for avals {closed.out_avals}"
            )
        return result, out_tree

    return wrapped


def sparsify_with_interpreter(f: Callable[..., Any]) -> Callable[..., Any]:
    """`sparsify(f)`: `f` traced to a jaxpr, which `eval_sparse` evaluates."""
    f_raw = sparsify_raw(f)

    @functools.wraps(f)
    def wrapped(*args: Any, **params: Any) -> Any:
        spenv = SparsifyEnv()
        spvalues = arrays_to_spvalues(spenv, args)
        spvalues_out, out_tree = f_raw(spenv, *spvalues, **params)
        return tree_unflatten(out_tree, spvalues_to_arrays(spenv, spvalues_out))

    return wrapped


# --- sparse rules ------------------------------------------------------------------------


def _ensure_unique_indices(spenv: SparsifyEnv, spvalue: SparsifyValue) -> SparsifyValue:
    if spvalue.is_dense() or spvalue.unique_indices:
        return spvalue
    arr = spvalues_to_arrays(spenv, spvalue)
    arr = arr.sum_duplicates(nse=arr.nse, remove_zeros=False)
    return arrays_to_spvalues(spenv, arr)  # type: ignore[no-any-return]  # one spvalue


def _zero_preserving_unary_op(prim: Primitive, linear: bool) -> SparseRule:
    def rule(spenv: SparsifyEnv, *spvalues: SparsifyValue, **params: Any) -> list[SparsifyValue]:
        (spvalue,) = spvalues
        if not linear:
            spvalue = _ensure_unique_indices(spenv, spvalue)
        buf_out = prim.bind(spenv.data(spvalue), **params)
        return [
            spenv.sparse(
                spvalue.shape,
                buf_out,
                indices_ref=spvalue.indices_ref,
                indptr_ref=spvalue.indptr_ref,
                indices_sorted=bool(spvalue.indices_sorted),
                unique_indices=bool(spvalue.unique_indices),
            )
        ]

    return rule


for _p in _zero_preserving_unary:
    sparse_rules_bcoo[_p] = sparse_rules_bcsr[_p] = _zero_preserving_unary_op(_p, linear=False)
for _p in _zero_preserving_linear_unary:
    sparse_rules_bcoo[_p] = sparse_rules_bcsr[_p] = _zero_preserving_unary_op(_p, linear=True)


def _standard_sparse_rule(prim: Primitive, sparse_op: Callable[..., Any]) -> SparseRule:
    def rule(spenv: SparsifyEnv, *spvalues: SparsifyValue, **params: Any) -> Any:
        result = sparse_op(*spvalues_to_arrays(spenv, spvalues), **params)
        return arrays_to_spvalues(spenv, result if prim.multiple_results else [result])

    return rule


sparse_rules_bcoo[lax.broadcast_in_dim_p] = _standard_sparse_rule(
    lax.broadcast_in_dim_p, bcoo_broadcast_in_dim
)
sparse_rules_bcoo[lax.dot_general_p] = _standard_sparse_rule(lax.dot_general_p, bcoo_dot_general)
sparse_rules_bcoo[lax.reshape_p] = _standard_sparse_rule(lax.reshape_p, bcoo_reshape)
sparse_rules_bcoo[lax.concatenate_p] = _standard_sparse_rule(
    lax.concatenate_p, lambda *a, **k: bcoo_concatenate(a, **k)
)
sparse_rules_bcoo[lax.dynamic_slice_p] = _standard_sparse_rule(
    lax.dynamic_slice_p, lambda *a, **k: bcoo_dynamic_slice(a[0], a[1:], **k)
)
sparse_rules_bcoo[lax.conv_general_dilated_p] = _standard_sparse_rule(
    lax.conv_general_dilated_p, bcoo_conv_general_dilated
)
sparse_rules_bcoo[lax.rev_p] = _standard_sparse_rule(lax.rev_p, bcoo_rev)
sparse_rules_bcoo[lax.slice_p] = _standard_sparse_rule(lax.slice_p, bcoo_slice)
sparse_rules_bcoo[lax.squeeze_p] = _standard_sparse_rule(lax.squeeze_p, bcoo_squeeze)


def _integer_pow_sparse(spenv: SparsifyEnv, *spvalues: SparsifyValue, y: int) -> Any:
    if y <= 0:
        raise NotImplementedError(
            f"sparse rule for {lax.integer_pow_p} with non-positive exponent {y} is "
            "not implemented because it would result in dense output. If this is your "
            "intent, use sparse.todense() to convert your argument to a dense array."
        )
    return _zero_preserving_unary_op(lax.integer_pow_p, False)(spenv, *spvalues, y=y)


sparse_rules_bcoo[lax.integer_pow_p] = sparse_rules_bcsr[lax.integer_pow_p] = _integer_pow_sparse


def _transpose_sparse(
    spenv: SparsifyEnv, *spvalues: SparsifyValue, permutation: Sequence[int]
) -> list[SparsifyValue]:
    permutation = tuple(permutation)
    arg = spvalues_to_arrays(spenv, spvalues)[0]
    shape = arg.shape
    mat_t = bcoo_transpose(arg, permutation=permutation)
    out_shape = tuple(shape[i] for i in permutation)
    n_batch, n_sparse = arg.indices.ndim - 2, arg.indices.shape[-1]
    batch_same = permutation[:n_batch] == tuple(range(n_batch))
    dense_same = permutation[n_batch + n_sparse :] == tuple(range(n_batch + n_sparse, len(shape)))
    sparse_same = permutation[n_batch : n_batch + n_sparse] == tuple(
        range(n_batch, n_batch + n_sparse)
    )
    kwds: dict[str, Any] = {}
    if batch_same and dense_same:
        kwds["data_ref"] = spvalues[0].data_ref
    else:
        kwds["data"] = mat_t.data
    if batch_same and sparse_same:
        kwds["indices_ref"] = spvalues[0].indices_ref
    else:
        kwds["indices"] = mat_t.indices
    kwds["indices_sorted"] = mat_t.indices_sorted
    kwds["unique_indices"] = mat_t.unique_indices
    return [spenv.sparse(out_shape, **kwds)]


sparse_rules_bcoo[lax.transpose_p] = _transpose_sparse


def _add_sparse(spenv: SparsifyEnv, *spvalues: SparsifyValue) -> list[SparsifyValue]:
    X, Y = spvalues
    out_shape = lax.broadcast_shapes(X.shape, Y.shape)
    if X.is_sparse() and Y.is_sparse():
        if X.shape != Y.shape:
            raise NotImplementedError("Addition between sparse matrices of different shapes.")
        if X.indices_ref == Y.indices_ref:
            out_data = lax.add(spenv.data(X), spenv.data(Y))
            return [
                spenv.sparse(
                    X.shape,
                    out_data,
                    indices_ref=X.indices_ref,
                    indices_sorted=bool(X.indices_sorted),
                    unique_indices=bool(X.unique_indices),
                )
            ]
        if (
            spenv.indices(X).ndim != spenv.indices(Y).ndim
            or spenv.data(X).ndim != spenv.data(Y).ndim
        ):
            raise NotImplementedError(
                "Addition between sparse matrices with different batch/dense dimensions."
            )
        axis = spenv.indices(X).ndim - 2
        out_indices = lax.concatenate([spenv.indices(X), spenv.indices(Y)], dimension=axis)
        out_data = lax.concatenate([spenv.data(X), spenv.data(Y)], dimension=axis)
        return [spenv.sparse(X.shape, out_data, out_indices)]
    if Y.is_sparse():
        X, Y = Y, X
    if Y.shape != out_shape:
        raise NotImplementedError(
            "Addition between a sparse array X and a dense array Y is not implemented when "
            "the output shape is larger than Y.shape. This is to prevent silent densification "
            "of a large sparse array. If this is your intent, you can explicitly cast the sparse "
            "array to a dense matrix."
        )
    x_arr, y_arr = spvalues_to_arrays(spenv, (X, Y))
    return [spenv.dense(x_arr.todense() + y_arr)]


sparse_rules_bcoo[lax.add_p] = _add_sparse


def _sub_sparse(spenv: SparsifyEnv, *spvalues: SparsifyValue) -> list[SparsifyValue]:
    X, Y = spvalues
    if X.is_sparse() and Y.is_sparse():
        return _add_sparse(spenv, X, *sparse_rules_bcoo[lax.neg_p](spenv, Y))
    raise NotImplementedError("Subtraction between sparse and dense array.")


sparse_rules_bcoo[lax.sub_p] = _sub_sparse


def _mul_sparse(
    spenv: SparsifyEnv, *spvalues: SparsifyValue, out_dtype: Any = None
) -> list[SparsifyValue]:
    X, Y = spvalues
    if X.is_sparse() and Y.is_sparse():
        if X.indices_ref == Y.indices_ref and X.unique_indices:
            out_data = lax.mul(spenv.data(X), spenv.data(Y))
            if out_dtype is not None:
                out_data = lax.convert_element_type(out_data, out_dtype)
            return [
                spenv.sparse(
                    X.shape,
                    out_data,
                    indices_ref=X.indices_ref,
                    indices_sorted=bool(X.indices_sorted),
                    unique_indices=True,
                )
            ]
        x_arr, y_arr = spvalues_to_arrays(spenv, spvalues)
        mat = bcoo_multiply_sparse(x_arr, y_arr)
        return [spenv.sparse(mat.shape, mat.data, mat.indices)]
    if Y.is_sparse():
        X, Y = Y, X
    x_arr = spvalues_to_arrays(spenv, X)
    out_data = bcoo_multiply_dense(x_arr, spenv.data(Y))
    return [
        spenv.sparse(
            X.shape,
            out_data,
            indices_ref=X.indices_ref,
            indices_sorted=bool(X.indices_sorted),
            unique_indices=bool(X.unique_indices),
        )
    ]


sparse_rules_bcoo[lax.mul_p] = _mul_sparse


def _div_sparse(spenv: SparsifyEnv, *spvalues: SparsifyValue) -> list[SparsifyValue]:
    X, Y = spvalues
    if Y.is_sparse():
        raise NotImplementedError(
            "Division by a sparse array is not implemented because it "
            "would result in dense output. If this is your intent, use "
            "sparse.todense() to convert your arguments to a dense array."
        )
    x_arr = spvalues_to_arrays(spenv, X)
    out_data = bcoo_multiply_dense(x_arr, 1.0 / spenv.data(Y))
    return [
        spenv.sparse(
            X.shape,
            out_data,
            indices_ref=X.indices_ref,
            indices_sorted=bool(X.indices_sorted),
            unique_indices=bool(X.unique_indices),
        )
    ]


sparse_rules_bcoo[lax.div_p] = _div_sparse


def _reduce_sum_sparse(
    spenv: SparsifyEnv, *spvalues: SparsifyValue, axes: Sequence[int], out_sharding: Any = None
) -> list[SparsifyValue]:
    (X,) = spvalues
    mat = bcoo_reduce_sum(spvalues_to_arrays(spenv, X), axes=axes)
    if mat.shape == ():
        return [spenv.dense(mat.data.sum())]
    return [spenv.sparse(mat.shape, mat.data, mat.indices)]


sparse_rules_bcoo[lax.reduce_sum_p] = _reduce_sum_sparse


def _todense_sparse_rule(spenv: SparsifyEnv, spvalue: SparsifyValue, *, tree: Any) -> Any:
    del tree
    return [spenv.dense(spvalues_to_arrays(spenv, spvalue).todense())]


sparse_rules_bcoo[todense_p] = sparse_rules_bcsr[todense_p] = _todense_sparse_rule


__all__ = [
    "SparsifyEnv",
    "SparsifyValue",
    "arrays_to_spvalues",
    "eval_sparse",
    "sparse_rules_bcoo",
    "sparse_rules_bcsr",
    "sparsify_raw",
    "sparsify_with_interpreter",
    "spvalues_to_arrays",
    "spvalues_to_avals",
]
