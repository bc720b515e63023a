"""Lowering of `lax.linalg`'s reductions to condensed forms and of `tridiagonal_solve` to
jaxlib's LAPACK FFI kernels, as JAX 0.10.2 lowers them on CPU: `hessenberg` becomes
`lapack_?gehrd_ffi` (rows and columns `low = 1` to `high = n`), `tridiagonal`
`lapack_?sytrd_ffi` (`?hetrd` for complex), `schur` `lapack_?gees_ffi` (no eigenvalue sorting),
each result NaN for a batch element whose `info` is not zero, and `tridiagonal_solve`
`lapack_?gtsv_ffi` (NaN where the system is singular) or, with `perturb_singular`, the
`tridiagonal_solve_perturbed_ffi` kernel.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
from jaxlib.mlir import ir

from lamina_core.ir import ShapedArray
from lamina_core.lax.linalg import hessenberg_p, schur_p, tridiagonal_p, tridiagonal_solve_p
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_linalg_lapack import (
    _char_attr,
    _ffi_call,
    _info_ok,
    _nan_where_not_ok,
    _target,
)
from lamina_mlir._rules_util import array_aval, register

_INT32: Final = np.dtype(np.int32)


def _i32_attr(value: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), value)


@register(hessenberg_p)
def _hessenberg_lowering(ctx: LoweringRuleContext, a: IrValue) -> list[IrValue]:
    aval = array_aval(ctx.avals_in[0])
    out_avals = [array_aval(x) for x in ctx.avals_out]
    batch = aval.shape[:-2]
    info_aval = ShapedArray(batch, _INT32)
    h, taus, info = _ffi_call(
        ctx,
        _target("gehrd_ffi", aval.dtype),
        [a],
        [aval],
        [*out_avals, info_aval],
        aliases={0: 0},
        attrs={"low": _i32_attr(1), "high": _i32_attr(aval.shape[-1])},
    )
    ok = _info_ok(ctx, info, info_aval, "EQ")
    return [
        _nan_where_not_ok(ctx, batch, ok, h, out_avals[0]),
        _nan_where_not_ok(ctx, batch, ok, taus, out_avals[1]),
    ]


@register(tridiagonal_p)
def _tridiagonal_lowering(ctx: LoweringRuleContext, a: IrValue, *, lower: bool) -> list[IrValue]:
    aval = array_aval(ctx.avals_in[0])
    out_avals = [array_aval(x) for x in ctx.avals_out]
    batch = aval.shape[:-2]
    info_aval = ShapedArray(batch, _INT32)
    base = "hetrd_ffi" if aval.dtype.kind == "c" else "sytrd_ffi"
    *outs, info = _ffi_call(
        ctx,
        _target(base, aval.dtype),
        [a],
        [aval],
        [*out_avals, info_aval],
        aliases={0: 0},
        attrs={"uplo": _char_attr("L" if lower else "U")},
    )
    ok = _info_ok(ctx, info, info_aval, "EQ")
    return [_nan_where_not_ok(ctx, batch, ok, x, v) for x, v in zip(outs, out_avals, strict=True)]


@register(schur_p)
def _schur_lowering(
    ctx: LoweringRuleContext,
    operand: IrValue,
    *,
    compute_schur_vectors: bool,
    sort_eig_vals: bool,
    select_callable: Any,
) -> list[IrValue]:
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not implemented.")
    aval = array_aval(ctx.avals_in[0])
    out_avals = [array_aval(x) for x in ctx.avals_out]
    batch = aval.shape[:-2]
    info_aval = ShapedArray(batch, _INT32)
    eigvals_aval = ShapedArray(aval.shape[:-1], aval.dtype)
    eigvals = [eigvals_aval, eigvals_aval] if aval.dtype.kind == "f" else [eigvals_aval]
    form, vectors, *_, info = _ffi_call(
        ctx,
        _target("gees_ffi", aval.dtype),
        [operand],
        [aval],
        [aval, aval, *eigvals, info_aval, info_aval],
        aliases={0: 0},
        attrs={
            "mode": _char_attr("V" if compute_schur_vectors else "N"),
            "sort": _char_attr("N"),
        },
    )
    ok = _info_ok(ctx, info, info_aval, "EQ")
    result = [_nan_where_not_ok(ctx, batch, ok, form, out_avals[0])]
    if compute_schur_vectors:
        result.append(_nan_where_not_ok(ctx, batch, ok, vectors, out_avals[1]))
    return result


@register(tridiagonal_solve_p)
def _tridiagonal_solve_lowering(
    ctx: LoweringRuleContext,
    dl: IrValue,
    d: IrValue,
    du: IrValue,
    b: IrValue,
    *,
    perturb_singular: bool,
) -> list[IrValue]:
    avals_in = [array_aval(x) for x in ctx.avals_in]
    b_aval = avals_in[3]
    operands = [dl, d, du, b]
    if perturb_singular:
        target = "tridiagonal_solve_perturbed_ffi"
        return _ffi_call(ctx, target, operands, avals_in, [b_aval], aliases={}, attrs={})
    batch = b_aval.shape[:-2]
    info_aval = ShapedArray(batch, _INT32)
    *_, x, info = _ffi_call(
        ctx,
        _target("gtsv_ffi", b_aval.dtype),
        operands,
        avals_in,
        [*avals_in, info_aval],
        aliases={0: 0, 1: 1, 2: 2, 3: 3},
        attrs={},
    )
    ok = _info_ok(ctx, info, info_aval, "EQ")
    return [_nan_where_not_ok(ctx, batch, ok, x, b_aval)]
