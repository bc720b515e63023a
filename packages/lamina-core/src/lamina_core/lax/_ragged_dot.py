"""`ragged_dot` and `ragged_dot_general` (the `ragged_dot_general` primitive), as `jax.lax`'s.

A ragged dot splits one lhs dimension into consecutive groups of `group_sizes` rows; each group
meets its own slice of the rhs (non-contracting mode: the rhs has a group dimension), or the
groups split a contracted dimension (one output per group), or a batch dimension. Off TPU, JAX
computes it densely, and so does Lamina: the ragged operand is broadcast along a new group axis
and masked to each group's rows, then one `dot_general` contracts the groups away. That dense
program is the primitive's reference, its abstract evaluation and (inline) its lowering.

Supported: one-dimensional `group_sizes` whose ragged dimension has no batch or earlier
dimension before it in its class (so `group_sizes` needs no broadcasting), and no
`group_offset`. Batching is not implemented.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core.interpreters import Zero, is_undefined, jvp_rules, trace_to_jaxpr, transpose_rules
from lamina_core.ir import AbstractValue, ClosedJaxpr, Primitive, abstract_eval_rules, impl_rules
from lamina_core.lax._cumulative import cumsum
from lamina_core.lax._dot_types import RaggedDotDimensionNumbers
from lamina_core.lax._elementwise import add, bitwise_and, le, lt
from lamina_core.lax._joining import concatenate
from lamina_core.lax._linalg import dot_general
from lamina_core.lax._selection import select
from lamina_core.lax._shape import broadcasted_iota, transpose
from lamina_core.lax._structural import broadcast_in_dim, convert_element_type, full_like
from lamina_core.trace import eval_jaxpr, typeof

ragged_dot_general_p: Final = Primitive("ragged_dot_general")

_BASIC: Final = RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])


def _remaining(n: int, *taken: Sequence[int]) -> list[int]:
    used = {d for group in taken for d in group}
    return [d for d in range(n) if d not in used]


def _mode(ndim: int, dims: RaggedDotDimensionNumbers) -> tuple[str, int]:
    if len(dims.lhs_ragged_dimensions) != 1:
        raise TypeError("ragged_dot_general expects exactly one lhs ragged dimension.")
    ragged = dims.lhs_ragged_dimensions[0]
    (contract, _), (batch, _) = dims.dot_dimension_numbers
    free = _remaining(ndim, contract, batch)
    for mode, group in (("noncontracting", free), ("contracting", contract), ("batch", batch)):
        if ragged in group:
            return mode, ragged
    raise TypeError(
        f"lhs_ragged_dim {ragged} not found in lhs_noncontracting {free}, lhs_contracting "
        f"{list(contract)}, or lhs_batch {list(batch)}."
    )


def _dense(x: Any, group_sizes: Any, dim: int) -> Any:
    """`x` broadcast along a new leading group axis, zero outside each group's rows of `dim`."""
    shape = (*group_sizes.shape, *x.shape)
    x = broadcast_in_dim(x, shape, tuple(range(1, len(shape))))
    iota = broadcasted_iota(group_sizes.dtype, shape, dim + 1)
    ends = cumsum(group_sizes)
    starts = concatenate([full_like(group_sizes, 0)[:1], ends[:-1]], 0)
    ends = broadcast_in_dim(ends, shape, (0,))
    starts = broadcast_in_dim(starts, shape, (0,))
    mask = bitwise_and(le(starts, iota), lt(iota, ends))
    return select(mask, x, full_like(x, 0))


def _dense_program(
    lhs: Any, rhs: Any, group_sizes: Any, *, ragged_dot_dimension_numbers: Any, precision: Any,
    preferred_element_type: Any, group_offset: Any, out_sharding: Any,
) -> Any:  # fmt: skip
    dims = ragged_dot_dimension_numbers
    if group_offset is not None:
        raise NotImplementedError("Unimplemented group_offset support.")
    mode, ragged = _mode(len(lhs.shape), dims)
    (l_contract, r_contract), (l_batch, r_batch) = dims.dot_dimension_numbers
    shift = [d + 1 for d in l_contract], [d + 1 for d in l_batch]
    if mode == "batch":
        new_dims: Any = dims.dot_dimension_numbers
        return dot_general(lhs, rhs, new_dims, precision, preferred_element_type)
    if len(group_sizes.shape) != 1 or l_batch or _before(mode, ragged, lhs, dims):
        raise NotImplementedError("ragged_dot_general: group sizes needing broadcasting")
    dense_lhs = _dense(lhs, group_sizes, ragged)
    if mode == "noncontracting":
        group = dims.rhs_group_dimensions[0]
        new_dims = ((shift[0] + [0], [*r_contract, group]), (shift[1], list(r_batch)))
        return dot_general(dense_lhs, rhs, new_dims, precision, preferred_element_type)
    rhs_ragged = r_contract[list(l_contract).index(ragged)]
    dense_rhs = _dense(rhs, group_sizes, rhs_ragged)
    new_dims = (
        (shift[0], [d + 1 for d in r_contract]),
        ([0, *shift[1]], [0] + [d + 1 for d in r_batch]),
    )
    return dot_general(dense_lhs, dense_rhs, new_dims, precision, preferred_element_type)


def _before(mode: str, ragged: int, lhs: Any, dims: RaggedDotDimensionNumbers) -> bool:
    (contract, _), (batch, _) = dims.dot_dimension_numbers
    group = _remaining(len(lhs.shape), contract, batch) if mode == "noncontracting" else contract
    return list(group).index(ragged) > 0


def dense_jaxpr(avals: Sequence[AbstractValue], params: dict[str, Any]) -> ClosedJaxpr:
    """The dense program of a `ragged_dot_general` on operands of types `avals`."""
    return trace_to_jaxpr(lambda *xs: [_dense_program(*xs, **params)], list(avals))


@abstract_eval_rules.register(ragged_dot_general_p)
def _ragged_abstract_eval(*avals: AbstractValue, **params: Any) -> AbstractValue:
    group_sizes = avals[2]
    if len(group_sizes.shape) == 0:  # type: ignore[attr-defined]
        raise TypeError("expected rank of group_sizes to be >=1.")
    if group_sizes.dtype.kind not in "iu":  # type: ignore[attr-defined]
        raise TypeError(
            "ragged_dot_general requires that group_sizes.dtype is subtype of np.integer."
        )
    return dense_jaxpr(avals, params).out_avals[0]


@impl_rules.register(ragged_dot_general_p)
def _ragged_impl(lhs: Any, rhs: Any, group_sizes: Any, **params: Any) -> Any:
    jaxpr = dense_jaxpr([typeof(lhs), typeof(rhs), typeof(group_sizes)], params)
    return np.asarray(eval_jaxpr(jaxpr, (), lhs, rhs, group_sizes)[0])


def _ragged_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
    x, y, gs = primals
    dx, dy, _ = tangents
    out = ragged_dot_general_p.bind(x, y, gs, **params)
    dx_out = (
        full_like(out, 0) if type(dx) is Zero else ragged_dot_general_p.bind(dx, y, gs, **params)
    )
    dy_out = (
        full_like(out, 0) if type(dy) is Zero else ragged_dot_general_p.bind(x, dy, gs, **params)
    )
    return out, add(dx_out, dy_out)


def _ragged_transpose(ct: Any, x: Any, y: Any, group_sizes: Any, **params: Any) -> list[Any]:
    dims = params["ragged_dot_dimension_numbers"]
    (x_contract, y_contract), (x_batch, y_batch) = dims.dot_dimension_numbers
    x_ndim = len(x.aval.shape if is_undefined(x) else np.shape(x))
    y_ndim = len(y.aval.shape if is_undefined(y) else np.shape(y))
    mode, ragged = _mode(x_ndim, dims)
    if mode != "noncontracting":
        raise NotImplementedError(
            f"Unimplemented grad_x_dims for ragged dot general in mode RAGGED_{mode.upper()}."
        )
    x_kept = _remaining(x_ndim, x_contract, x_batch)
    y_group = list(dims.rhs_group_dimensions)
    y_kept = _remaining(y_ndim, y_contract, y_batch, y_group)
    nb, nx = len(x_batch), len(x_kept)
    ans_batch, ans_x = list(range(nb)), list(range(nb, nb + nx))
    ans_y = list(range(nb + nx, nb + nx + len(y_kept)))

    def grad(lhs: Any, rhs: Any, new: RaggedDotDimensionNumbers, axes: list[int], aval: Any) -> Any:
        out = ragged_dot_general_p.bind(
            lhs, rhs, group_sizes, **{**params, "ragged_dot_dimension_numbers": new}
        )
        result = transpose(out, tuple(int(i) for i in np.argsort(axes)))
        if result.dtype != aval.dtype:
            result = convert_element_type(result, aval.dtype)
        return result

    x_bar = y_bar = None
    if is_undefined(x):
        new = RaggedDotDimensionNumbers(
            ((ans_y, y_kept), (ans_batch, y_batch)), [nb + x_kept.index(ragged)], y_group
        )
        by_y = [int(x_contract[i]) for i in np.argsort(y_contract)]
        x_bar = grad(ct, y, new, [*x_batch, *x_kept, *by_y], x.aval)
    if is_undefined(y):
        new = RaggedDotDimensionNumbers(((x_kept, ans_x), (x_batch, ans_batch)), [ragged], [])
        by_x = [int(y_contract[i]) for i in np.argsort(x_contract)]
        y_bar = grad(x, ct, new, [*y_group, *y_batch, *by_x, *y_kept], y.aval)
    return [x_bar, y_bar, None]


jvp_rules.set(ragged_dot_general_p, _ragged_jvp)
transpose_rules.set(ragged_dot_general_p, _ragged_transpose)


def ragged_dot_general(
    lhs: Any,
    rhs: Any,
    group_sizes: Any,
    ragged_dot_dimension_numbers: RaggedDotDimensionNumbers,
    precision: Any = None,
    preferred_element_type: Any = None,
    group_offset: Any = None,
    out_sharding: Any = None,
) -> Any:
    """A dot product in which the lhs ragged dimension is split into groups of
    `group_sizes` (see the module docstring for the three modes)."""
    return ragged_dot_general_p.bind(
        lhs, rhs, group_sizes, ragged_dot_dimension_numbers=ragged_dot_dimension_numbers,
        precision=precision, preferred_element_type=preferred_element_type,
        group_offset=group_offset, out_sharding=out_sharding,
    )  # fmt: skip


def ragged_dot(
    lhs: Any,
    rhs: Any,
    group_sizes: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
    group_offset: Any = None,
    out_sharding: Any = None,
) -> Any:
    """Rows of the (m, k) `lhs` in consecutive groups of `group_sizes`, each multiplied by its
    (k, n) slice of the (g, k, n) `rhs`."""
    return ragged_dot_general(lhs, rhs, group_sizes, _BASIC, precision, preferred_element_type,
                              group_offset, out_sharding)  # fmt: skip


__all__ = ["ragged_dot", "ragged_dot_general"]
