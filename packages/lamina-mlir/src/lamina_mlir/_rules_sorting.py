"""Lowering of `sort` and `top_k`.

`sort`'s comparator is JAX's total order: float keys are canonicalized first (-0.0 to 0.0, every
NaN to one NaN) and compared with TOTALORDER, complex keys by (real, imag), and several keys
lexicographically. `top_k` is `chlo.top_k` along the last axis, with transposes around it for
another axis.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from jaxlib.mlir import ir

from lamina_core import dtypes, lax
from lamina_mlir import _hlo
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._ir_types import tensor_type
from lamina_mlir._mlir_context import ContextCaches, IrValue
from lamina_mlir._rules_util import array_aval, out_type, register


def _keys(caches: ContextCaches, value: IrValue, dtype: np.dtype) -> list[tuple[IrValue, np.dtype]]:
    if _hlo.kind(dtype) == "c":
        part = dtypes.finfo(dtype).dtype
        re = _canonical_key(caches, _hlo.real_part(value), part)
        im = _canonical_key(caches, _hlo.imag_part(value), part)
        return [(re, part), (im, part)]
    if _hlo.kind(dtype) == "f":
        return [(_canonical_key(caches, value, dtype), dtype)]
    return [(value, dtype)]


def _canonical_key(caches: ContextCaches, x: IrValue, dtype: np.dtype) -> IrValue:
    zero = _hlo.scalar_constant(caches, 0, dtype)
    is_zero = _hlo.compare(caches, x, zero, "EQ", "FLOAT")
    without_negative_zero = _hlo.select(is_zero, _hlo.scalar_constant(caches, 0, dtype), x)
    is_nan = _hlo.compare(caches, x, x, "NE", "FLOAT")
    nan = _hlo.scalar_constant(caches, np.nan, dtype)
    return _hlo.select(is_nan, nan, without_negative_zero)


def _total_order(dtype: np.dtype) -> str:
    if _hlo.kind(dtype) in "fc":
        return "TOTALORDER"
    return _hlo.compare_type(dtype)


def _less_than(
    caches: ContextCaches, args: Sequence[IrValue], avals: Sequence[np.dtype], num_keys: int
) -> IrValue:
    x_keys: list[tuple[IrValue, np.dtype]] = []
    y_keys: list[tuple[IrValue, np.dtype]] = []
    for i in range(num_keys):
        x_keys += _keys(caches, args[2 * i], avals[i])
        y_keys += _keys(caches, args[2 * i + 1], avals[i])
    result: IrValue | None = None
    for (xk, dtype), (yk, _) in zip(reversed(x_keys), reversed(y_keys), strict=True):
        kind = _total_order(dtype)
        less = _hlo.compare(caches, xk, yk, "LT", kind)
        if result is None:
            result = less
        else:
            equal = _hlo.compare(caches, xk, yk, "EQ", kind)
            tie = _hlo.emit1("stablehlo.and", equal.type, equal, result)
            result = _hlo.emit1("stablehlo.or", less.type, less, tie)
    assert result is not None
    return result


@register(lax.sort_p)
def _sort_lowering(
    ctx: LoweringRuleContext, *operands: IrValue, dimension: int, is_stable: bool, num_keys: int
) -> list[IrValue]:
    caches = ctx.caches
    result_types = [ctx.module_context.ir_type(a) for a in ctx.avals_out]
    attrs = {
        "dimension": _hlo.i64_attr(caches, dimension),
        "is_stable": _hlo.bool_attr(caches, is_stable),
    }
    op = _hlo.emit("stablehlo.sort", result_types, operands, attrs, regions=1)
    dtypes_in = [array_aval(a).dtype for a in ctx.avals_in]
    scalar_types = [tensor_type(caches, (), d) for d in dtypes_in]
    block = op.regions[0].blocks.append(*[t for t in scalar_types for _ in range(2)])
    with ir.InsertionPoint(block):
        _hlo.return_([_less_than(caches, list(block.arguments), dtypes_in, num_keys)])
    return list(op.results)


@register(lax.top_k_p)
def _top_k_lowering(ctx: LoweringRuleContext, x: IrValue, *, k: int, axis: int) -> list[IrValue]:
    caches = ctx.caches
    aval = array_aval(ctx.avals_in[0])
    last = aval.ndim - 1
    permutation: list[int] | None = None
    result_types = [out_type(ctx, 0), out_type(ctx, 1)]
    if axis != last:
        permutation = list(range(aval.ndim))
        permutation[axis], permutation[-1] = permutation[-1], permutation[axis]
        x = _hlo.transpose(caches, x, permutation)
        result_types = [
            ir.RankedTensorType.get(
                [ir.RankedTensorType(t).shape[p] for p in permutation],
                ir.RankedTensorType(t).element_type,
            )
            for t in result_types
        ]
    op = _hlo.emit("chlo.top_k", result_types, [x], {"k": _hlo.i64_attr(caches, k)})
    results: list[IrValue] = list(op.results)
    if permutation is not None:
        results = [_hlo.transpose(caches, r, permutation) for r in results]
    return results
