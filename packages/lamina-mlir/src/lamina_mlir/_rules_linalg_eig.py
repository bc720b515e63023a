"""Lowering of `lax.linalg.eig` to jaxlib's LAPACK FFI kernel `lapack_?geev_ffi`, as JAX 0.10.2
lowers it on CPU: the kernel computes eigenvalues (for a real operand as separate real and
imaginary parts, joined with `stablehlo.complex`) and, per the `compute_left` and
`compute_right` modes (`V` or `N`), the left and right eigenvectors; each result is NaN for a
batch element whose `info` is not zero. Only the LAPACK implementation exists on CPU.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from lamina_core.ir import ShapedArray
from lamina_core.lax import complex_dtype
from lamina_core.lax.linalg import EigImplementation, eig_p
from lamina_mlir import _hlo
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._ir_types import tensor_type
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


def _mode(compute: bool) -> str:
    return "V" if compute else "N"


@register(eig_p)
def _eig_lowering(
    ctx: LoweringRuleContext,
    operand: IrValue,
    *,
    compute_left_eigenvectors: bool,
    compute_right_eigenvectors: bool,
    enable_eigvec_derivs: bool,
    implementation: EigImplementation | None,
) -> list[IrValue]:
    if implementation and implementation != EigImplementation.LAPACK:
        raise ValueError("Only the lapack implementation is supported on CPU.")
    aval = array_aval(ctx.avals_in[0])
    batch = aval.shape[:-2]
    real = aval.dtype.kind == "f"
    cdt = complex_dtype(aval.dtype)
    w_aval = ShapedArray(aval.shape[:-1], aval.dtype)
    v_aval = ShapedArray(aval.shape, cdt)
    info_aval = ShapedArray(batch, _INT32)
    avals_out = [w_aval, v_aval, v_aval, info_aval]
    if real:
        avals_out = [w_aval, *avals_out]
    *w_parts, vl, vr, info = _ffi_call(
        ctx,
        _target("geev_ffi", aval.dtype),
        [operand],
        [aval],
        avals_out,
        aliases={},
        attrs={
            "compute_left": _char_attr(_mode(compute_left_eigenvectors)),
            "compute_right": _char_attr(_mode(compute_right_eigenvectors)),
        },
    )
    if real:
        w_type = tensor_type(ctx.caches, w_aval.shape, cdt)
        w = _hlo.emit1("stablehlo.complex", w_type, *w_parts)
    else:
        (w,) = w_parts
    ok = _info_ok(ctx, info, info_aval, "EQ")
    out_avals = [array_aval(a) for a in ctx.avals_out]
    result = [_nan_where_not_ok(ctx, batch, ok, w, out_avals[0])]
    if compute_left_eigenvectors:
        result.append(_nan_where_not_ok(ctx, batch, ok, vl, out_avals[len(result)]))
    if compute_right_eigenvectors:
        result.append(_nan_where_not_ok(ctx, batch, ok, vr, out_avals[len(result)]))
    return result
