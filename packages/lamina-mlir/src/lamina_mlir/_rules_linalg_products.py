"""Lowering of `lax.linalg`'s product primitives as JAX 0.10.2 lowers them on CPU:
`symmetric_product` and `cholesky_update` as their lax programs (`alpha A A^T + beta C` at
HIGHEST precision; Givens rotations row by row), traced and lowered in place, and `ormqr` to
jaxlib's LAPACK FFI kernel `lapack_?ormqr_ffi` (`?unmqr` for complex), whose result reuses
`c`'s buffer.
"""

from __future__ import annotations

from jaxlib.mlir import ir

from lamina_core.lax import jax_cholesky_update, jax_symmetric_product
from lamina_core.lax.linalg import cholesky_update_p, ormqr_p, symmetric_product_p
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_gather_scatter import _lower_traced
from lamina_mlir._rules_linalg_lapack import _ffi_call, _target
from lamina_mlir._rules_util import array_aval, register


@register(symmetric_product_p)
def _symmetric_product_lowering(
    ctx: LoweringRuleContext, a: IrValue, c: IrValue, *, alpha: float, beta: float
) -> list[IrValue]:
    def fun(x: object, y: object) -> object:
        return jax_symmetric_product(x, y, alpha=alpha, beta=beta)

    return _lower_traced(ctx, fun, [a, c])


@register(cholesky_update_p)
def _cholesky_update_lowering(ctx: LoweringRuleContext, r: IrValue, w: IrValue) -> list[IrValue]:
    return _lower_traced(ctx, jax_cholesky_update, [r, w])


@register(ormqr_p)
def _ormqr_lowering(
    ctx: LoweringRuleContext,
    a: IrValue,
    taus: IrValue,
    c: IrValue,
    *,
    left: bool,
    transpose: bool,
) -> list[IrValue]:
    avals_in = [array_aval(x) for x in ctx.avals_in]
    dtype = avals_in[0].dtype
    base = "unmqr_ffi" if dtype.kind == "c" else "ormqr_ffi"
    return _ffi_call(
        ctx,
        _target(base, dtype),
        [a, taus, c],
        avals_in,
        [array_aval(ctx.avals_out[0])],
        aliases={2: 0},
        attrs={"left": ir.BoolAttr.get(left), "transpose": ir.BoolAttr.get(transpose)},
    )
