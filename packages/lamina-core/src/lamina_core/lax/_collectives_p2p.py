"""Point-to-point and ragged collectives over a named axis: psend, precv and
ragged_all_to_all, as JAX 0.10.2's: params, printing, checks, effects and batching.

`psend` hands a value to the devices `perm` names and returns a token; `precv` takes a token
and receives a value of a declared type. JAX lowers the pair only for GPUs. Both carry the
`SingleSideCollectiveEffect`, which keeps a send or a receive whose result looks unused.
`ragged_all_to_all` exchanges slices of the leading axis of ragged data (data, offsets and
sizes) between the indices of the named axis, writing them into `output`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, NoReturn

import numpy as np

from lamina_core.interpreters import (
    AxisData,
    BatchDim,
    Zero,
    batching_rules,
    instantiate_zeros,
    jvp_rules,
    needs_axis_rule,
    not_differentiable,
    zero_of,
)
from lamina_core.ir import (
    AbstractValue,
    Effects,
    KindEffect,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    effects_rules,
    impl_rules,
    python_impl_primitives,
    value_impl_rules,
)
from lamina_core.lax import _checks as c
from lamina_core.lax._batching_common import bdim_at_front, broadcast_batched, shape_of
from lamina_core.lax._collectives import (
    _as_tuple,
    _canonical_groups,
    _check_axis_names,
    _named_only_impl,
    _ppermute_batch,
)
from lamina_core.lax._elementwise import add, mul
from lamina_core.lax._shape import iota, reshape, transpose
from lamina_core.lax._structural import broadcast_in_dim
from lamina_core.lax._tokens import abstract_token
from lamina_core.trace import insert_collective_pvary, typeof
from lamina_core.tree import tree_util

psend_p: Final = Primitive("psend")
precv_p: Final = Primitive("precv")
ragged_all_to_all_p: Final = Primitive("ragged_all_to_all")


class SingleSideCollectiveEffect(KindEffect):
    """The effect of a one-sided collective (psend, precv): its equation is never dropped."""

    __slots__ = ()

    def __str__(self) -> str:
        return "SingleSideCollectiveEffect()"

    def __repr__(self) -> str:
        return "SingleSideCollectiveEffect()"


single_side_collective_effect: Final = SingleSideCollectiveEffect()


def _pairs(perm: Sequence[Sequence[int]]) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(p) for p in perm)


# --- psend, precv ------------------------------------------------------------------------


def psend(x: Any, axis_name: Any, perm: Sequence[tuple[int, int]]) -> Any:
    """Send `x` (a pytree) along the named axis: index `src` to index `dst` for each pair of
    `perm`. Returns a token (per leaf) for `precv` or `optimization_barrier` to order on."""
    names = _as_tuple(axis_name)
    pairs = _pairs(perm)
    return tree_util.tree_map(
        lambda leaf: psend_p.bind(
            insert_collective_pvary(names, leaf), axis_name=names, perm=pairs
        ),
        x,
    )


def precv(token: Any, out_shape: Any, axis_name: Any, perm: Sequence[tuple[int, int]]) -> Any:
    """Receive an array of the shape and dtype of `out_shape` along the named axis (the other
    side of `psend` with the same `perm`), after `token`."""
    return precv_p.bind(
        token,
        out_shape=ShapedArray(tuple(out_shape.shape), np.dtype(out_shape.dtype)),
        axis_name=_as_tuple(axis_name),
        perm=_pairs(perm),
    )


@abstract_eval_rules.register(psend_p)
def _psend_abstract_eval(x: AbstractValue, *, axis_name: Any, perm: Any) -> AbstractValue:
    _check_axis_names(axis_name, "psend")
    return abstract_token


@abstract_eval_rules.register(precv_p)
def _precv_abstract_eval(
    token: AbstractValue, *, out_shape: ShapedArray, axis_name: Any, perm: Any
) -> ShapedArray:
    # JAX checks no axis name here: an unbound one fails only when lowered.
    return out_shape


def _single_side_effects(*args: AbstractValue, **params: Any) -> Effects:
    return frozenset({single_side_collective_effect})


effects_rules.set(psend_p, _single_side_effects)
effects_rules.set(precv_p, _single_side_effects)
impl_rules.set(psend_p, _named_only_impl("psend"))


def _precv_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any
) -> NoReturn:
    # JAX batches precv with ppermute's rule, which takes no `out_shape`.
    raise TypeError("_ppermute_batcher() got an unexpected keyword argument 'out_shape'")


# JAX batches psend with ppermute's rule: under vmap a send turns into a ppermute.
batching_rules.set(psend_p, _ppermute_batch)
batching_rules.set(precv_p, _precv_batch)
# JAX has no derivative rules for either.
not_differentiable(psend_p)
not_differentiable(precv_p)


# --- ragged_all_to_all -------------------------------------------------------------------


def ragged_all_to_all(
    operand: Any,
    output: Any,
    input_offsets: Any,
    send_sizes: Any,
    output_offsets: Any,
    recv_sizes: Any,
    *,
    axis_name: Any,
    axis_index_groups: Any = None,
) -> Any:
    """`output` with, for each peer k of the named axis, the rows
    `operand[input_offsets[k]:][:send_sizes[k]]` this index sends written at that peer's
    `output_offsets[k]`; what it receives from peer k fills `recv_sizes[k]` rows."""
    return ragged_all_to_all_p.bind(
        operand, output, input_offsets, send_sizes, output_offsets, recv_sizes,
        axis_name=_as_tuple(axis_name), axis_index_groups=_canonical_groups(axis_index_groups),
    )  # fmt: skip


_OFFSETS_AND_SIZES: Final = ("input_offsets", "send_sizes", "output_offsets", "recv_sizes")


@abstract_eval_rules.register(ragged_all_to_all_p)
def _ragged_all_to_all_abstract_eval(
    operand: AbstractValue, output: AbstractValue, *offsets_and_sizes: AbstractValue,
    axis_name: Any, axis_index_groups: Any,
) -> ShapedArray:  # fmt: skip
    avals = [c.array_aval("ragged_all_to_all", a) for a in offsets_and_sizes]
    for name, aval in zip(_OFFSETS_AND_SIZES, avals, strict=True):
        if not np.issubdtype(aval.dtype, np.integer):
            raise ValueError(f"ragged_all_to_all {name} must be integer type.")
    for name, aval in zip(_OFFSETS_AND_SIZES, avals, strict=True):
        if len(aval.shape) != 1 or aval.shape[0] < 1:
            raise ValueError(
                f"ragged_all_to_all {name} must be rank 1 with positive dimension size, but "
                f"got shape {aval.shape}"
            )
    _check_axis_names(axis_name, "ragged_all_to_all")
    return c.array_aval("ragged_all_to_all", output).update(weak_type=False)


def _ragged_all_to_all_impl(*args: Any, **params: Any) -> NoReturn:
    raise RuntimeError(
        "ragged_all_to_all must be used within a mapped context like vmap or shard_map."
    )


# As JAX's `impl`, eager evaluation refuses before any check of the operands.
impl_rules.set(ragged_all_to_all_p, _ragged_all_to_all_impl)
value_impl_rules.set(ragged_all_to_all_p, _ragged_all_to_all_impl)
python_impl_primitives.add(ragged_all_to_all_p)


def _ragged_all_to_all_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], **params: Any
) -> tuple[Any, Any]:
    operand, output, *offsets_and_sizes = primals
    operand_dot, output_dot, *_ = tangents
    out = ragged_all_to_all_p.bind(operand, output, *offsets_and_sizes, **params)
    if type(operand_dot) is Zero and type(output_dot) is Zero:
        return out, zero_of(out)
    out_dot = ragged_all_to_all_p.bind(
        instantiate_zeros(operand_dot), instantiate_zeros(output_dot), *offsets_and_sizes,
        **params,
    )  # fmt: skip
    return out, out_dot


jvp_rules.set(ragged_all_to_all_p, _ragged_all_to_all_jvp)


def _ragged_all_to_all_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, axis_name: Any,
    axis_index_groups: Any,
) -> tuple[Any, BatchDim]:  # fmt: skip
    params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups)
    mine = axis_data.name in axis_name
    if all(d is None for d in dims) and not mine:
        return ragged_all_to_all_p.bind(*vals, **params), None
    if mine or axis_index_groups:
        raise NotImplementedError("Please open a feature request!")
    # The batch of ragged arrays is one ragged array over the batch's concatenated rows: the
    # offsets of batch member b move by b times the rows of one member.
    size = axis_data.size
    operand, output = (bdim_at_front(v, d, size) for v, d in zip(vals[:2], dims[:2], strict=True))
    n, m = shape_of(operand)[1], shape_of(output)[1]
    in_offsets, send_sizes, out_offsets, recv_sizes = (
        _batch_at_second(v, d, size) for v, d in zip(vals[2:], dims[2:], strict=True)
    )
    in_offsets = add(in_offsets, _row_starts(in_offsets, size, n))
    out_offsets = add(out_offsets, _row_starts(out_offsets, size, m))
    merged = [_merge(v) for v in (operand, output, in_offsets, send_sizes, out_offsets, recv_sizes)]
    out = ragged_all_to_all(*merged, axis_name=axis_name)
    rows, *rest = shape_of(out)
    return reshape(out, (size, rows // size, *rest)), 0


def _batch_at_second(x: Any, d: BatchDim, size: int) -> Any:
    assert len(shape_of(x)) == 2
    if d is None:
        return broadcast_batched(x, size, 1)
    return x if d == 1 else transpose(x, (1, 0))


def _row_starts(x: Any, size: int, rows: int) -> Any:
    """`iota(size)[None, :] * rows` in the dtype of `x`."""
    starts = iota(c.array_aval("ragged_all_to_all", typeof(x)).dtype, size)
    return mul(broadcast_in_dim(starts, (1, size), (1,)), rows)


def _merge(x: Any) -> Any:
    first, second, *rest = shape_of(x)
    return reshape(x, (first * second, *rest))


batching_rules.set(ragged_all_to_all_p, _ragged_all_to_all_batch)
needs_axis_rule.update((psend_p, precv_p, ragged_all_to_all_p))


__all__ = [
    "precv",
    "psend",
    "ragged_all_to_all",
    "ragged_all_to_all_p",
]
