"""Lowering of the decomposition primitives of `lax.linalg` to jaxlib's LAPACK FFI kernels,
as JAX 0.10.2 lowers them on CPU: `eigh` becomes `lapack_?syevd_ffi` (real) or
`lapack_?heevd_ffi` (complex) computing eigenvectors, each result NaN for a batch element
whose `info` is not zero; `geqrf` `lapack_?geqrf_ffi`; `geqp3` `lapack_?geqp3_ffi`;
`householder_product` `lapack_?orgqr_ffi` (`?ungqr` for complex); `qr` those composed
(`geqp3` in place of `geqrf` with `pivoting`, as JAX's `lower_fun`), traced
as a Lamina function and lowered in place. The custom call itself is built by
`_rules_linalg_lapack`'s helper. `svd` becomes `lapack_?gesdd_ffi` (mode `A`, `S` or `N`
for full, reduced or no singular vectors), NaN where `info` is not zero; a matrix with no rows
or columns gets JAX's constant results instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from lamina_core import lax
from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.ir import ShapedArray
from lamina_core.lax import _eye_rect, qr_from_factors, svd_shapes
from lamina_core.lax.linalg import (
    eigh_p,
    geqp3_p,
    geqrf_p,
    householder_product_p,
    qr_p,
    svd_p,
)
from lamina_mlir._context import NO_TOKENS, LoweringRuleContext
from lamina_mlir._lower import jaxpr_subcomp
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


@register(eigh_p)
def _eigh_lowering(
    ctx: LoweringRuleContext,
    operand: IrValue,
    *,
    lower: bool,
    sort_eigenvalues: bool,
    subset_by_index: tuple[int, int] | None,
    algorithm: Any,
) -> list[IrValue]:
    aval = array_aval(ctx.avals_in[0])
    v_aval, w_aval = (array_aval(a) for a in ctx.avals_out)
    n = aval.shape[-1]
    if subset_by_index not in (None, (0, n)):
        raise NotImplementedError("subset_by_index not supported on CPU and GPU")
    batch = aval.shape[:-2]
    info_aval = ShapedArray(batch, _INT32)
    base = "heevd_ffi" if aval.dtype.kind == "c" else "syevd_ffi"
    v, w, info = _ffi_call(
        ctx,
        _target(base, aval.dtype),
        [operand],
        [aval],
        [v_aval, w_aval, info_aval],
        aliases={0: 0},
        attrs={"mode": _char_attr("V"), "uplo": _char_attr("L" if lower else "U")},
    )
    ok = _info_ok(ctx, info, info_aval, "EQ")
    return [
        _nan_where_not_ok(ctx, batch, ok, v, v_aval),
        _nan_where_not_ok(ctx, batch, ok, w, w_aval),
    ]


@register(geqrf_p)
def _geqrf_lowering(ctx: LoweringRuleContext, operand: IrValue) -> list[IrValue]:
    aval = array_aval(ctx.avals_in[0])
    avals_out = [array_aval(a) for a in ctx.avals_out]
    target = _target("geqrf_ffi", aval.dtype)
    return _ffi_call(ctx, target, [operand], [aval], avals_out, aliases={0: 0}, attrs={})


@register(geqp3_p)
def _geqp3_lowering(
    ctx: LoweringRuleContext, a: IrValue, jpvt: IrValue, *, use_magma: Any
) -> list[IrValue]:
    avals_in = [array_aval(x) for x in ctx.avals_in]
    avals_out = [array_aval(x) for x in ctx.avals_out]
    target = _target("geqp3_ffi", avals_in[0].dtype)
    return _ffi_call(ctx, target, [a, jpvt], avals_in, avals_out, aliases={0: 0, 1: 1}, attrs={})


@register(householder_product_p)
def _householder_product_lowering(
    ctx: LoweringRuleContext, a: IrValue, taus: IrValue
) -> list[IrValue]:
    avals_in = [array_aval(x) for x in ctx.avals_in]
    avals_out = [array_aval(x) for x in ctx.avals_out]
    base = "ungqr_ffi" if avals_in[0].dtype.kind == "c" else "orgqr_ffi"
    target = _target(base, avals_in[0].dtype)
    return _ffi_call(ctx, target, [a, taus], avals_in, avals_out, aliases={0: 0}, attrs={})


@register(qr_p)
def _qr_lowering(
    ctx: LoweringRuleContext,
    operand: IrValue,
    *,
    pivoting: bool,
    full_matrices: bool,
    use_magma: Any,
) -> list[IrValue]:
    def factors(a: Any) -> list[Any]:
        return list(
            qr_from_factors(a, full_matrices=full_matrices, pivoting=pivoting, use_magma=use_magma)
        )

    return _lower_traced_many(ctx, factors, [operand])


def _lower_traced_many(
    ctx: LoweringRuleContext, fun: Callable[..., list[Any]], args: Sequence[IrValue]
) -> list[IrValue]:
    """Trace `fun` (a list of results) over the equation's input types and lower it here."""
    closed = trace_to_jaxpr(fun, ctx.avals_in[: len(args)])
    outs, _ = jaxpr_subcomp(
        ctx.module_context,
        closed.jaxpr,
        ctx.name_stack,
        NO_TOKENS,
        [],
        *args,
        const_lowering=ctx.const_lowering,
    )
    return list(outs)


def _empty_svd(a: Any, *, full_matrices: bool, compute_uv: bool) -> list[Any]:
    """JAX's results for matrices with a zero dimension: no singular values, identities."""
    *batch, m, n = a.shape
    dtype = np.dtype(a.dtype)
    real = np.zeros((), dtype).real.dtype
    s = lax.full((*batch, 0), 0, dtype=real)
    if not compute_uv:
        return [s]
    if full_matrices:
        size = max(m, n)
        nb = len(batch)
        u = lax.broadcast_in_dim(_eye_rect(dtype, size, size), (*batch, size, size), (nb, nb + 1))
    else:
        u = lax.full((*batch, m, n), 0, dtype=dtype)
    v = lax.full((*batch, 0, 0), 0, dtype=dtype)
    if m < n:
        u, v = v, u
    return [s, u, v]


@register(svd_p)
def _svd_lowering(
    ctx: LoweringRuleContext,
    operand: IrValue,
    *,
    full_matrices: bool,
    compute_uv: bool,
    subset_by_index: tuple[int, int] | None,
    algorithm: Any,
) -> list[IrValue]:
    aval = array_aval(ctx.avals_in[0])
    *batch_list, m, n = aval.shape
    batch = tuple(batch_list)
    if subset_by_index not in (None, (0, min(m, n))):
        raise NotImplementedError("subset_by_index not implemented for CPU and GPU")
    if m == 0 or n == 0:
        return _lower_traced_many(
            ctx,
            lambda a: _empty_svd(a, full_matrices=full_matrices, compute_uv=compute_uv),
            [operand],
        )
    if algorithm is not None:
        raise NotImplementedError("Lamina's svd lowers only the default algorithm (gesdd).")
    base = "gesdd_ffi"
    mode = "S" if compute_uv and not full_matrices else ("A" if compute_uv else "N")
    _, u_core, vt_core = svd_shapes(m, n, full_matrices, True, None)
    avals_out = [
        aval,
        array_aval(ctx.avals_out[0]),
        ShapedArray((*batch, *u_core), aval.dtype),
        ShapedArray((*batch, *vt_core), aval.dtype),
        ShapedArray(batch, _INT32),
    ]
    _, s, u, vt, info = _ffi_call(
        ctx,
        _target(base, aval.dtype),
        [operand],
        [aval],
        avals_out,
        aliases={0: 0},
        attrs={"mode": _char_attr(mode)},
    )
    ok = _info_ok(ctx, info, avals_out[4], "EQ")
    result = [_nan_where_not_ok(ctx, batch, ok, s, avals_out[1])]
    if compute_uv:
        result.append(_nan_where_not_ok(ctx, batch, ok, u, avals_out[2]))
        result.append(_nan_where_not_ok(ctx, batch, ok, vt, avals_out[3]))
    return result
