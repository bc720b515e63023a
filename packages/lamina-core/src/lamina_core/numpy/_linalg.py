"""Products: dot, matmul, vdot, inner, outer, tensordot and einsum, each one `dot_general`
(or a short sequence of them) staged as `jax.numpy` stages it.

Operands keep their own dtypes into `dot_general`, which is told the promoted dtype as its
`preferred_element_type`; the result is then given the promoted weak type. `einsum` takes its
contraction order from `opt_einsum` (the library JAX uses), so the pairs it contracts, and
the order of each pair's operands, are JAX's.
"""

from __future__ import annotations

import collections
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import opt_einsum  # type: ignore[import-untyped]  # ships no type information

from lamina_core import lax as _lax
from lamina_core.ir import ShapedArray, is_symbolic_dim
from lamina_core.ir import dtypes as _dtypes
from lamina_core.lax import _convert_element_type
from lamina_core.numpy import _ufuncs
from lamina_core.numpy._reductions import (
    canonicalize_axis,
    ensure_arraylike,
    expand_dims,
    ravel,
)
from lamina_core.numpy._util import Array, ArrayLike, DTypeLike, dtype_of, promote_dtypes, shape_of
from lamina_core.trace import dispatched_at_top_level, typeof


def _result_dtype(
    operands: Sequence[Any], preferred_element_type: DTypeLike | None
) -> tuple[np.dtype, bool]:
    if preferred_element_type is None:
        avals = [
            a for a in (getattr(x, "aval", None) for x in operands) if isinstance(a, ShapedArray)
        ]
        if len(avals) == len(operands):
            first = avals[0]
            # Operands of one type need no lattice walk (the usual case; a tracing hot path),
            # but weak bools, which the lattice makes a strong bool.
            weak_bool = first.weak_type and first.dtype.kind == "b"
            if not weak_bool and all(
                a.dtype == first.dtype and a.weak_type == first.weak_type for a in avals
            ):
                return first.dtype, first.weak_type
        return _dtypes.result_type(*operands, return_weak_type_flag=True)
    return _dtypes.canonicalize_dtype(preferred_element_type), False


@dispatched_at_top_level(
    static_argnames=("precision", "preferred_element_type", "out_sharding"), checks_first=True
)
def dot(
    a: ArrayLike,
    b: ArrayLike,
    *,
    precision: Any = None,
    preferred_element_type: DTypeLike | None = None,
    out_sharding: Any = None,
) -> Array:
    """`jax.numpy.dot`: a scalar product, a matrix/vector product, or a sum over the last axis
    of `a` and the second-to-last of `b`."""
    a, b = ensure_arraylike("dot", a, b)
    dtype, weak = _result_dtype((a, b), preferred_element_type)
    a_ndim, b_ndim = len(shape_of(a)), len(shape_of(b))
    if a_ndim == 0 or b_ndim == 0:
        contract: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    elif b_ndim == 1:
        contract = ((a_ndim - 1,), (0,))
    else:
        contract = ((a_ndim - 1,), (b_ndim - 2,))
    result = _lax.dot_general(
        a, b, (contract, ((), ())), precision, dtype, out_sharding=out_sharding
    )
    return _convert_element_type(result, dtype, weak)


def _matmul_plan(
    a: Array, b: Array
) -> tuple[list[int], list[int], list[int], list[int], list[int], list[int]]:
    """Which batch dims to squeeze from each side and which to batch over, and the output
    permutation: JAX's matmul broadcasting rules."""
    a_shape, b_shape = shape_of(a), shape_of(b)
    a_is_mat, b_is_mat = len(a_shape) > 1, len(b_shape) > 1
    a_known = a_shape[:-2] if a_is_mat else ()
    b_known = b_shape[:-2] if b_is_mat else ()
    n = max(len(a_known), len(b_known))
    # None marks a batch dimension the operand does not have.
    a_dims: list[int | None] = [None] * (n - len(a_known)) + list(a_known)
    b_dims: list[int | None] = [None] * (n - len(b_known)) + list(b_known)
    a_squeeze: list[int] = []
    b_squeeze: list[int] = []
    both_squeeze: list[int] = []
    a_batch: list[int] = []
    b_batch: list[int] = []
    idx_batch: list[int] = []
    idx_a_other: list[int] = []
    idx_b_other: list[int] = []
    for i, (ba, bb) in enumerate(zip(a_dims, b_dims, strict=True)):
        if ba is None:
            idx_b_other.append(i)
        elif bb is None:
            idx_a_other.append(i)
        elif ba == 1 and bb == 1:
            # Squeezing both gives a cleaner dot_general than batching over size 1.
            a_squeeze.append(len(idx_batch) + len(idx_a_other) + len(a_squeeze))
            b_squeeze.append(len(idx_batch) + len(idx_b_other) + len(b_squeeze))
            both_squeeze.append(i)
        elif ba == 1:
            idx_b_other.append(i)
            a_squeeze.append(len(idx_batch) + len(idx_a_other) + len(a_squeeze))
        elif bb == 1:
            idx_a_other.append(i)
            b_squeeze.append(len(idx_batch) + len(idx_b_other) + len(b_squeeze))
        elif ba == bb:
            a_batch.append(len(idx_batch) + len(idx_a_other))
            b_batch.append(len(idx_batch) + len(idx_b_other))
            idx_batch.append(i)
        else:
            raise ValueError(
                f"Incompatible types for matmul arguments: {typeof(a)} and {typeof(b)}"
            )
    if a_is_mat:
        idx_a_other.append(n)
    if b_is_mat:
        idx_b_other.append(n + a_is_mat)
    order = [*idx_batch, *idx_a_other, *idx_b_other]
    perm = sorted(range(len(order)), key=order.__getitem__)
    return a_squeeze, b_squeeze, both_squeeze, a_batch, b_batch, perm


def _squeeze(x: Array, dims: Sequence[int]) -> Array:
    return _lax.squeeze(x, tuple(dims)) if dims else x


def _transpose(x: Array, perm: Sequence[int]) -> Array:
    perm = tuple(perm)
    return x if perm == tuple(range(len(perm))) else _lax.transpose(x, perm)


@dispatched_at_top_level(
    static_argnames=("precision", "preferred_element_type", "out_sharding"), checks_first=True
)
def matmul(
    a: ArrayLike,
    b: ArrayLike,
    *,
    precision: Any = None,
    preferred_element_type: DTypeLike | None = None,
    out_sharding: Any = None,
) -> Array:
    """`jax.numpy.matmul` (`@`): matrix products broadcast over leading batch dimensions."""
    a, b = ensure_arraylike("matmul", a, b)
    for i, x in enumerate((a, b)):
        if len(shape_of(x)) < 1:
            raise ValueError(
                f"matmul input operand {i} must have ndim at least 1, but it has ndim "
                f"{len(shape_of(x))}"
            )
    dtype, weak = _result_dtype((a, b), preferred_element_type)
    a_squeeze, b_squeeze, both_squeeze, a_batch, b_batch, perm = _matmul_plan(a, b)
    b_is_mat = len(shape_of(b)) > 1
    a, b = _squeeze(a, a_squeeze), _squeeze(b, b_squeeze)
    contract = ((len(shape_of(a)) - 1,), (len(shape_of(b)) - 1 - b_is_mat,))
    out = _lax.dot_general(
        a, b, (contract, (tuple(a_batch), tuple(b_batch))), precision, dtype,
        out_sharding=out_sharding,
    )  # fmt: skip
    result = expand_dims(_transpose(out, perm), both_squeeze)
    return _convert_element_type(result, dtype, weak)


def vdot(
    a: ArrayLike,
    b: ArrayLike,
    *,
    precision: Any = None,
    preferred_element_type: DTypeLike | None = None,
) -> Array:
    """`jax.numpy.vdot`: the dot product of the flattened operands, `a` conjugated."""
    a, b = ensure_arraylike("vdot", a, b)
    if dtype_of(a).kind == "c":
        a = _lax.conj(a)
    return dot(
        ravel(a), ravel(b), precision=precision, preferred_element_type=preferred_element_type
    )


def tensordot(
    a: ArrayLike,
    b: ArrayLike,
    axes: int | Sequence[int] | Sequence[Sequence[int]] = 2,
    *,
    precision: Any = None,
    preferred_element_type: DTypeLike | None = None,
    out_sharding: Any = None,
) -> Array:
    """`jax.numpy.tensordot`: contract the last `axes` dims of `a` with the first of `b`, or
    the listed pairs of axes."""
    a, b = ensure_arraylike("tensordot", a, b)
    a_shape, b_shape = shape_of(a), shape_of(b)
    a_ndim, b_ndim = len(a_shape), len(b_shape)
    dtype, weak = _result_dtype((a, b), preferred_element_type)
    if type(axes) is int:
        if axes > min(a_ndim, b_ndim):
            raise TypeError(
                f"Number of tensordot axes (axes {axes}) exceeds input ranks ({a_shape} and "
                f"{b_shape})"
            )
        contract = tuple(range(a_ndim - axes, a_ndim)), tuple(range(axes))
    elif isinstance(axes, (tuple, list)) and len(axes) == 2:
        ax1, ax2 = axes
        if isinstance(ax1, int) and isinstance(ax2, int):
            contract = (canonicalize_axis(ax1, a_ndim),), (canonicalize_axis(ax2, b_ndim),)
        elif isinstance(ax1, (tuple, list)) and isinstance(ax2, (tuple, list)):
            if len(ax1) != len(ax2):
                raise TypeError(
                    f"tensordot requires axes lists to have equal length, got {ax1} and {ax2}."
                )
            contract = (
                tuple(canonicalize_axis(i, a_ndim) for i in ax1),
                tuple(canonicalize_axis(i, b_ndim) for i in ax2),
            )
        else:
            raise TypeError(
                f"tensordot requires both axes lists to be either ints, tuples or lists, got "
                f"{ax1} and {ax2}"
            )
    else:
        raise TypeError(
            "tensordot axes argument must be an int, a pair of ints, or a pair of lists/tuples "
            "of ints."
        )
    result = _lax.dot_general(
        a, b, (contract, ((), ())), precision, dtype, out_sharding=out_sharding
    )
    return _convert_element_type(result, dtype, weak)


def inner(
    a: ArrayLike,
    b: ArrayLike,
    *,
    precision: Any = None,
    preferred_element_type: DTypeLike | None = None,
) -> Array:
    """`jax.numpy.inner`: sum over the last axes of both; a product when either is a scalar."""
    a, b = ensure_arraylike("inner", a, b)
    if not shape_of(a) or not shape_of(b):
        if preferred_element_type is not None:
            a = _convert_element_type(a, preferred_element_type, False)
            b = _convert_element_type(b, preferred_element_type, False)
        return _ufuncs.multiply(a, b)
    return tensordot(
        a, b, (-1, -1), precision=precision, preferred_element_type=preferred_element_type
    )


def outer(a: ArrayLike, b: ArrayLike, out: None = None) -> Array:
    """`jax.numpy.outer`: every product of an element of `a` with one of `b` (flattened)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.outer is not supported.")
    a, b = ensure_arraylike("outer", a, b)
    a, b = promote_dtypes(a, b)
    a = ravel(a)
    column = _lax.broadcast_in_dim(a, (*shape_of(a), 1), (0,))
    b = ravel(b)
    row = _lax.broadcast_in_dim(b, (1, *shape_of(b)), (1,))
    return _ufuncs.multiply(column, row)


class _Unoptimized(opt_einsum.paths.PathOptimizer):  # type: ignore[misc]  # untyped base
    """Contract left to right, as `einsum(..., optimize=False)` asks."""

    def __call__(self, inputs: Sequence[Any], *args: Any, **kwargs: Any) -> list[tuple[int, int]]:
        return [(0, 1)] * (len(inputs) - 1)


def einsum(
    subscripts: Any,
    /,
    *operands: Any,
    out: None = None,
    optimize: str | bool | list[tuple[int, ...]] = "auto",
    precision: Any = None,
    preferred_element_type: DTypeLike | None = None,
    out_sharding: Any = None,
) -> Array:
    """`jax.numpy.einsum`: Einstein summation, contracted pairwise in opt_einsum's order.

    Raises:
        NotImplementedError: `out` or `out_sharding` is given.
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    if out_sharding is not None:
        raise NotImplementedError("einsum: out_sharding is not supported by Lamina yet")
    path_type = "optimal" if optimize is True else _Unoptimized() if optimize is False else optimize
    args = (subscripts, *operands)
    arrays, contractions = _contract_path(args, einsum_call=True, use_blas=True, optimize=path_type)
    steps = [(tuple(c[0]), frozenset(c[1]), str(c[2])) for c in contractions]
    return _contract(ensure_arraylike("einsum", *arrays), steps, precision, preferred_element_type)


class _StandIn:
    """An operand with its symbolic dimensions replaced by a constant, for opt_einsum."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape


def _contract_path(args: tuple[Any, ...], **options: Any) -> tuple[list[Any], Any]:
    """`opt_einsum.contract_path`, also over operands of symbolic shapes: as JAX does, every
    symbolic dimension stands as 8 (opt_einsum only parses and orders; the contractions
    themselves check the true shapes)."""
    if not any(is_symbolic_dim(d) for a in args[1:] for d in getattr(a, "shape", ())):
        return opt_einsum.contract_path(*args, **options)  # type: ignore[no-any-return]
    stand_ins = [
        _StandIn(tuple(8 if is_symbolic_dim(d) else d for d in a.shape))
        if hasattr(a, "shape")
        else a
        for a in args[1:]
    ]
    ordered, contractions = opt_einsum.contract_path(args[0], *stand_ins, **options)
    by_id = {id(stand): arg for stand, arg in zip(stand_ins, args[1:], strict=True)}
    return [by_id[id(o)] for o in ordered], contractions


def _removechars(s: str, chars: str) -> str:
    return s.translate(str.maketrans(dict.fromkeys(chars)))


def _einsum_sum(x: Array, axes: Sequence[int], dtype: np.dtype) -> Array:
    """Sum over `axes` in (at least) `dtype`, as einsum's reductions do."""
    if _dtypes.result_type(x, dtype) != dtype_of(x):
        x = _convert_element_type(x, dtype, False)
    weak = bool(getattr(typeof(x), "weak_type", False))
    if dtype_of(x) == np.dtype(bool):
        out = _lax.reduce_or(x, tuple(axes))
    else:
        out = _lax.reduce_sum(x, tuple(axes))
    # A reduction of a weak operand is weak; JAX's generic reduce makes it strong.
    return _convert_element_type(out, dtype_of(out), False) if weak else out


def _sum_uniques(x: Array, names: str, uniques: Sequence[str], dtype: np.dtype) -> tuple[Any, str]:
    if uniques:
        x = _einsum_sum(x, [names.index(name) for name in uniques], dtype)
        names = _removechars(names, "".join(uniques))
    return x, names


def _delta(shape: tuple[int, ...], axes: Sequence[int]) -> Array:
    """A bool mask, true where the `axes` indices are all equal (a generalized identity)."""
    base = tuple(shape[a] for a in axes)
    iotas = [_lax.broadcasted_iota(np.uint32, base, i) for i in range(len(base))]
    eyes = [_lax.eq(i1, i2) for i1, i2 in itertools.pairwise(iotas)]
    mask = eyes[0]
    for eye in eyes[1:]:
        mask = _lax.bitwise_and(mask, eye)
    if base == shape and tuple(axes) == tuple(range(len(shape))):
        return mask
    return _lax.broadcast_in_dim(mask, shape, tuple(axes))


def _sum_repeats(
    x: Array, names: str, counts: collections.Counter[str], keep: str, dtype: np.dtype
) -> tuple[Any, str]:
    for name, count in counts.items():
        if count > 1:
            axes = [i for i, n in enumerate(names) if n == name]
            eye = _delta(shape_of(x), axes)
            x = _lax.select_n(eye, _lax.full(shape_of(x), 0, dtype_of(x)), x)
            if name not in keep:
                x = _einsum_sum(x, axes, dtype)
                names = names.replace(name, "")
            else:
                x = _einsum_sum(x, axes[:-1], dtype)
                names = names.replace(name, "", count - 1)
    return x, names


def _filter_singleton_dims(
    x: Array, names: str, other_shape: tuple[int, ...], other_names: str
) -> tuple[Any, str]:
    """Squeeze size-1 dims whose partner in the other operand is not size 1."""
    shape = shape_of(x)
    keep = [
        shape[i] != 1 or j == -1 or other_shape[j] == 1
        for i, j in enumerate(map(other_names.find, names))
    ]
    squeezed = [i for i, k in enumerate(keep) if not k]
    return _squeeze(x, squeezed), "".join(n for n, k in zip(names, keep, strict=True) if k)


def _contract(
    operands: list[Any],
    steps: Sequence[tuple[tuple[int, ...], frozenset[str], str]],
    precision: Any,
    preferred_element_type: DTypeLike | None,
) -> Array:
    dtype, weak = _result_dtype(operands, preferred_element_type)
    for indices, contracted_set, spec in steps:
        contracted = sorted(contracted_set)
        input_str, result_names = spec.split("->")
        input_names = input_str.split(",")
        if len(indices) == 1:
            x = operands.pop(indices[0])
            (names,) = input_names
            counts = collections.Counter(names)
            uniques = [n for n in contracted if counts[n] == 1]
            x, names = _sum_uniques(x, names, uniques, dtype)
            x, names = _sum_repeats(x, names, counts, result_names, dtype)
        elif len(indices) == 2:
            lhs, rhs = (operands.pop(i) for i in indices)
            lhs_names, rhs_names = input_names
            lhs, lhs_names = _filter_singleton_dims(lhs, lhs_names, shape_of(rhs), rhs_names)
            rhs, rhs_names = _filter_singleton_dims(rhs, rhs_names, shape_of(lhs), lhs_names)
            lhs_counts = collections.Counter(lhs_names)
            rhs_counts = collections.Counter(rhs_names)
            lhs_uniques = [n for n in contracted if lhs_counts[n] == 1 and rhs_counts[n] == 0]
            lhs, lhs_names = _sum_uniques(lhs, lhs_names, lhs_uniques, dtype)
            rhs_uniques = [n for n in contracted if rhs_counts[n] == 1 and lhs_counts[n] == 0]
            rhs, rhs_names = _sum_uniques(rhs, rhs_names, rhs_uniques, dtype)
            lhs, lhs_names = _sum_repeats(
                lhs, lhs_names, lhs_counts, result_names + rhs_names, dtype
            )
            rhs, rhs_names = _sum_repeats(
                rhs, rhs_names, rhs_counts, result_names + lhs_names, dtype
            )
            both = set(lhs_names) | set(rhs_names)
            contracted = [n for n in contracted if n in both]
            shared = set(lhs_names) & set(rhs_names)
            batch = "".join(n for n in result_names if n in shared)
            lhs_batch = tuple(lhs_names.find(n) for n in batch)
            rhs_batch = tuple(rhs_names.find(n) for n in batch)
            lhs_cont = tuple(lhs_names.index(n) for n in contracted)
            rhs_cont = tuple(rhs_names.index(n) for n in contracted)
            deleted = batch + "".join(contracted)
            lhs_rest, rhs_rest = _removechars(lhs_names, deleted), _removechars(rhs_names, deleted)
            # opt_einsum tends to contract right to left, so (rhs, lhs) is tried first: it is
            # the order that most often needs no transpose afterwards.
            names = batch + rhs_rest + lhs_rest
            if names == result_names:
                x = _lax.dot_general(
                    rhs, lhs, ((rhs_cont, lhs_cont), (rhs_batch, lhs_batch)), precision, dtype
                )
            else:
                names = batch + lhs_rest + rhs_rest
                x = _lax.dot_general(
                    lhs, rhs, ((lhs_cont, rhs_cont), (lhs_batch, rhs_batch)), precision, dtype
                )
        else:
            raise NotImplementedError(
                "jax.numpy.einsum does not support simultaneous contraction of 3 or more "
                "operands. Typically this means you've passed an unsupported path to the einsum "
                "optimize parameter."
            )
        if names != result_names:
            x = _lax.transpose(x, tuple(names.index(n) for n in result_names))
        operands.append(x)
    return _convert_element_type(operands[0], dtype, weak)


__all__ = [
    "dot",
    "einsum",
    "inner",
    "matmul",
    "outer",
    "tensordot",
    "vdot",
]
