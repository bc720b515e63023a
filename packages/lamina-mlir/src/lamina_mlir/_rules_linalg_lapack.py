"""Lowering of the linalg primitives to jaxlib's LAPACK FFI kernels, as JAX lowers them on CPU.

`cholesky` becomes `lapack_?potrf_ffi`, `triangular_solve` `lapack_?trsm_ffi` (XLA's own
`stablehlo.triangular_solve` for the narrow floats LAPACK lacks), and `lu` `lapack_?getrf_ffi`
followed by 1-based-to-0-based pivots and the permutation. Each kernel call is a
`stablehlo.custom_call` carrying what JAX's FFI lowering attaches: its attributes as a
dictionary in `mhlo.backend_config`, column-major layouts for the matrices, the output that
reuses the operand's buffer, the batch dimension count, and a Shardy sharding rule in which the
batch dimensions are shared factors. A factorization that fails (the kernel's `info` says so)
gives NaN for that batch element. `lu_pivots_to_permutation` is JAX's loop of swaps, traced
as a small Lamina function and lowered in place.

The kernels must be registered with the CPU client before a module using them is compiled:
lamina-runtime's bridge does that.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import chlo, sdy
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina_core import lax
from lamina_core.ir import ShapedArray
from lamina_core.lax.linalg import (
    cholesky_p,
    lu_p,
    lu_pivots_to_permutation_p,
    triangular_solve_p,
)
from lamina_core.transforms import vmap
from lamina_mlir import _hlo
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._ir_types import tensor_type
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_gather_scatter import _lower_traced
from lamina_mlir._rules_util import array_aval, register

_LAPACK_PREFIX: Final = {
    np.dtype(np.float32): "s",
    np.dtype(np.float64): "d",
    np.dtype(np.complex64): "c",
    np.dtype(np.complex128): "z",
}
_INT32: Final = np.dtype(np.int32)
_BOOL: Final = np.dtype(np.bool_)


def _target(base: str, dtype: np.dtype) -> str:
    prefix = _LAPACK_PREFIX.get(np.dtype(dtype))
    if prefix is None:
        # JAX's error, word for word.
        raise NotImplementedError(KeyError(np.dtype(dtype).type), f"Unsupported dtype {dtype}.")
    return f"lapack_{prefix}{base}"


def _char_attr(ch: str) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_unsigned(8), ord(ch))


# --- the FFI custom call ----------------------------------------------------------------------


def _column_major(rank: int) -> tuple[int, ...]:
    """Minor-to-major order of a batch of Fortran-order matrices."""
    return (rank - 2, rank - 1, *range(rank - 3, -1, -1))


def _layouts(avals: Sequence[ShapedArray], full_rank: int, column_major: bool) -> ir.ArrayAttr:
    attrs = []
    for aval in avals:
        if column_major and aval.ndim == full_rank:
            order: Sequence[int] = _column_major(aval.ndim)
        else:
            order = tuple(reversed(range(aval.ndim)))
        values = np.atleast_1d(np.asarray(order, dtype=np.int64))
        # ndarrays have the buffer protocol, which NumPy's stubs do not declare for 3.11.
        attrs.append(ir.DenseIntElementsAttr.get(values, type=ir.IndexType.get()))  # type: ignore[call-overload]
    return ir.ArrayAttr.get(attrs)


def _sharding_rule(
    avals_in: Sequence[ShapedArray], avals_out: Sequence[ShapedArray], num_batch: int
) -> ir.Attribute:
    """Every operand and result shares the leading `num_batch` factors; each other dimension is
    a factor of its own (JAX's `... i j, ... k l -> ...` rule)."""
    sizes: list[int] = list(avals_in[0].shape[:num_batch])
    mappings = []
    for aval in (*avals_in, *avals_out):
        lead = num_batch if num_batch and aval.ndim >= num_batch else 0
        dims = [sdy.DimMappingAttr.get(factor_indices=[j]) for j in range(lead)]
        for size in aval.shape[lead:]:
            dims.append(sdy.DimMappingAttr.get(factor_indices=[len(sizes)]))
            sizes.append(size)
        mappings.append(sdy.TensorMappingAttr.get(dim_mappings=dims))
    return sdy.OpShardingRuleAttr.get(
        factor_sizes=sizes,
        operand_mappings=mappings[: len(avals_in)],
        result_mappings=mappings[len(avals_in) :],
        is_custom=True,
    )


def _ffi_call(
    ctx: LoweringRuleContext,
    target: str,
    operands: Sequence[IrValue],
    avals_in: Sequence[ShapedArray],
    avals_out: Sequence[ShapedArray],
    *,
    aliases: Mapping[int, int],
    attrs: Mapping[str, ir.Attribute],
) -> list[IrValue]:
    """A LAPACK FFI `custom_call` of `target`, with the attributes JAX's lowering attaches."""
    full_rank = max(a.ndim for a in avals_in)
    num_batch = full_rank - 2
    result_types = [tensor_type(ctx.caches, a.shape, a.dtype) for a in avals_out]
    many = len(avals_out) > 1
    attributes: dict[str, ir.Attribute] = {
        "call_target_name": ir.StringAttr.get(target),
        "has_side_effect": ir.BoolAttr.get(False),
        "backend_config": ir.StringAttr.get(""),
        "api_version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1),
        "called_computations": ir.ArrayAttr.get([]),
        "output_operand_aliases": ir.ArrayAttr.get(
            [
                hlo.OutputOperandAlias.get(
                    output_tuple_indices=[out] if many else [],
                    operand_index=arg,
                    operand_tuple_indices=[],
                )
                for arg, out in aliases.items()
            ]
        ),
        "mhlo.frontend_attributes": ir.DictAttr.get(
            {"num_batch_dims": ir.StringAttr.get(str(num_batch))}
        ),
        "sdy.sharding_rule": _sharding_rule(avals_in, avals_out, num_batch),
        "operand_layouts": _layouts(avals_in, full_rank, True),
        "result_layouts": _layouts(avals_out, full_rank, True),
    }
    if not aliases:
        # JAX leaves the attribute out when no output reuses an operand's buffer.
        del attributes["output_operand_aliases"]
    op = hlo.CustomCallOp.build_generic(
        results=result_types, operands=list(operands), attributes=attributes
    )
    op.operation.attributes["mhlo.backend_config"] = ir.DictAttr.get(dict(attrs))
    return list(op.results)


# --- shared pieces ----------------------------------------------------------------------------


def _full(ctx: LoweringRuleContext, value: Any, aval: ShapedArray) -> IrValue:
    """`value` broadcast to `aval` (always through `broadcast_in_dim`, as JAX's `full_like`)."""
    scalar = _hlo.scalar_constant(ctx.caches, value, aval.dtype)
    return _hlo.broadcast_in_dim(ctx.caches, scalar, aval.shape, aval.dtype, ())


def _nan_where_not_ok(
    ctx: LoweringRuleContext, batch: tuple[int, ...], ok: IrValue, x: IrValue, aval: ShapedArray
) -> IrValue:
    """`x`, with the batch elements where `ok` is false replaced by NaN."""
    mask_shape = batch + (1,) * (aval.ndim - len(batch))
    mask = _hlo.broadcast_in_dim(ctx.caches, ok, mask_shape, _BOOL, range(len(batch)))
    nan = np.nan + np.nan * 1j if aval.dtype.kind == "c" else np.nan
    nans = _full(ctx, nan, aval)
    if mask_shape != aval.shape:
        dims = range(aval.ndim)
        mask = _hlo.broadcast_in_dim(ctx.caches, mask, aval.shape, _BOOL, dims)
    return _hlo.select(mask, x, nans)


def _info_ok(
    ctx: LoweringRuleContext, info: IrValue, info_aval: ShapedArray, direction: str
) -> IrValue:
    return _hlo.compare(ctx.caches, info, _full(ctx, 0, info_aval), direction, "SIGNED")


# --- cholesky ---------------------------------------------------------------------------------


@register(cholesky_p)
def _cholesky_lowering(ctx: LoweringRuleContext, operand: IrValue) -> list[IrValue]:
    aval = array_aval(ctx.avals_in[0])
    batch = aval.shape[:-2]
    info_aval = ShapedArray(batch, _INT32)
    result, info = _ffi_call(
        ctx,
        _target("potrf_ffi", aval.dtype),
        [operand],
        [aval],
        [aval, info_aval],
        aliases={0: 0},
        attrs={"uplo": _char_attr("L")},
    )
    ok = _info_ok(ctx, info, info_aval, "EQ")
    return [_nan_where_not_ok(ctx, batch, ok, result, aval)]


# --- triangular_solve -------------------------------------------------------------------------


@register(triangular_solve_p)
def _triangular_solve_lowering(
    ctx: LoweringRuleContext,
    a: IrValue,
    b: IrValue,
    *,
    left_side: bool,
    lower: bool,
    transpose_a: bool,
    conjugate_a: bool,
    unit_diagonal: bool,
) -> list[IrValue]:
    a_aval, b_aval = array_aval(ctx.avals_in[0]), array_aval(ctx.avals_in[1])
    if conjugate_a and not transpose_a:
        # Neither kernel conjugates without transposing: conjugate `a` first.
        a = chlo.ConjOp(a).result
        conjugate_a = False
    trans = ("C" if conjugate_a else "T") if transpose_a else "N"
    if a_aval.dtype not in _LAPACK_PREFIX:
        transpose = {"N": "NO_TRANSPOSE", "T": "TRANSPOSE", "C": "ADJOINT"}[trans]
        out = hlo.triangular_solve(
            a,
            b,
            ir.BoolAttr.get(left_side),
            ir.BoolAttr.get(lower),
            ir.BoolAttr.get(unit_diagonal),
            hlo.TransposeAttr.get(transpose),
        )
        return [out]
    return _ffi_call(
        ctx,
        _target("trsm_ffi", a_aval.dtype),
        [a, b],
        [a_aval, b_aval],
        [b_aval],
        aliases={1: 0},
        attrs={
            "side": _char_attr("L" if left_side else "R"),
            "uplo": _char_attr("L" if lower else "U"),
            "trans_x": _char_attr(trans),
            "diag": _char_attr("U" if unit_diagonal else "N"),
        },
    )


# --- lu ---------------------------------------------------------------------------------------


@register(lu_p)
def _lu_lowering(ctx: LoweringRuleContext, operand: IrValue) -> list[IrValue]:
    aval = array_aval(ctx.avals_in[0])
    out_aval, pivot_aval, perm_aval = (array_aval(a) for a in ctx.avals_out)
    batch = aval.shape[:-2]
    info_aval = ShapedArray(batch, _INT32)
    lu, pivots, info = _ffi_call(
        ctx,
        _target("getrf_ffi", aval.dtype),
        [operand],
        [aval],
        [out_aval, pivot_aval, info_aval],
        aliases={0: 0},
        attrs={},
    )
    pivots = _hlo.emit1(
        "stablehlo.subtract",
        tensor_type(ctx.caches, pivot_aval.shape, _INT32),
        pivots,
        _full(ctx, 1, pivot_aval),
    )
    ok = _info_ok(ctx, info, info_aval, "GE")
    lu = _nan_where_not_ok(ctx, batch, ok, lu, out_aval)
    sub = ctx.replace(primitive=None, avals_in=[pivot_aval], avals_out=[perm_aval])
    (perm,) = _lower_traced(sub, lambda p: _pivots_as_permutation(p, aval.shape[-2]), [pivots])
    return [lu, pivots, perm]


# --- lu_pivots_to_permutation -----------------------------------------------------------------


def _swap(i: Any, permutation: Any, swaps: Any) -> Any:
    j = swaps[i]
    x, y = permutation[i], permutation[j]
    return permutation.at[i].set(y).at[j].set(x)


def _swap_step(i: Any, carry: tuple[Any, Any]) -> tuple[Any, Any]:
    permutation, swaps = carry
    fn: Any = _swap
    for _ in swaps.shape[:-1]:
        fn = vmap(fn, in_axes=(None, 0, 0), out_axes=0)
    return fn(i, permutation, swaps), swaps


def _pivots_as_permutation(swaps: Any, size: int) -> Any:
    """The row swaps applied in order to an iota (JAX's loop, with its equations)."""
    batch = tuple(swaps.shape[:-1])
    k = swaps.shape[-1]
    permutation = lax.broadcasted_iota(_INT32, (*batch, size), len(batch))
    if size == 0 or k == 0:
        return permutation
    start, stop = np.array(0, np.int32), np.array(k, np.int32)
    result, _ = lax.fori_loop(start, stop, _swap_step, (permutation, swaps))
    return result


@register(lu_pivots_to_permutation_p)
def _lu_pivots_lowering(
    ctx: LoweringRuleContext, pivots: IrValue, *, permutation_size: int
) -> list[IrValue]:
    return _lower_traced(ctx, lambda p: _pivots_as_permutation(p, permutation_size), [pivots])
