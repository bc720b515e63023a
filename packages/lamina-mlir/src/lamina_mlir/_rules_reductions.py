"""Lowering of reductions, index reductions and cumulative reductions.

A reduction is `stablehlo.reduce` from the operation's identity with a one-op body (complex
max/min compare (real, imag) pairs). argmax/argmin reduce values and an iota of indices
together, picking NaNs first and the lower index among equals; the cumulative reductions are
a `reduce_window` over a window as long as the axis, padded on one side. Those two kinds are
emitted as private functions called from each equation, as in JAX.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir

from lamina_core import dtypes, lax
from lamina_core.ir import Primitive, ShapedArray
from lamina_mlir import _dynamic, _hlo
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._explicit import constrain, explicit_module
from lamina_mlir._functions import call_as_function
from lamina_mlir._ir_types import tensor_type
from lamina_mlir._mlir_context import ContextCaches, IrValue
from lamina_mlir._rules_util import array_aval, out_aval, out_type, register

Combine = Callable[[ContextCaches, IrValue, IrValue], IrValue]


def _has_inf(dtype: np.dtype) -> bool:
    with np.errstate(over="ignore"):
        return bool(np.isinf(np.array(np.inf).astype(dtype)))


def max_identity(dtype: np.dtype) -> np.ndarray:
    if dtypes.issubdtype(dtype, np.inexact):
        value = -np.inf if _has_inf(dtype) else dtypes.finfo(dtype).min
        return np.array(value).astype(dtype)
    if dtypes.issubdtype(dtype, np.integer):
        return np.array(dtypes.iinfo(dtype).min).astype(dtype)
    return np.array(False)


def min_identity(dtype: np.dtype) -> np.ndarray:
    if dtypes.issubdtype(dtype, np.inexact):
        value = np.inf if _has_inf(dtype) else dtypes.finfo(dtype).max
        return np.array(value).astype(dtype)
    if dtypes.issubdtype(dtype, np.integer):
        return np.array(dtypes.iinfo(dtype).max).astype(dtype)
    return np.array(True)


def _op(name: str) -> Combine:
    def combine(caches: ContextCaches, x: IrValue, y: IrValue) -> IrValue:
        return _hlo.emit1(name, x.type, x, y)

    return combine


def _min_max(name: str) -> Combine:
    def combine(caches: ContextCaches, x: IrValue, y: IrValue) -> IrValue:
        return _hlo.min_or_max(caches, name, x, y)

    return combine


REDUCTIONS: dict[Primitive, tuple[Combine, Callable[[np.dtype], np.ndarray]]] = {
    lax.reduce_sum_p: (_op("stablehlo.add"), lambda d: np.array(0).astype(d)),
    lax.reduce_prod_p: (_op("stablehlo.multiply"), lambda d: np.array(1).astype(d)),
    lax.reduce_max_p: (_min_max("stablehlo.maximum"), max_identity),
    lax.reduce_min_p: (_min_max("stablehlo.minimum"), min_identity),
    lax.reduce_and_p: (_op("stablehlo.and"), lambda d: np.array(-1).astype(d)),
    lax.reduce_or_p: (_op("stablehlo.or"), lambda d: np.array(0).astype(d)),
    lax.reduce_xor_p: (_op("stablehlo.xor"), lambda d: np.array(0).astype(d)),
}


def _reduction_rule(combine: Combine, identity: Callable[[np.dtype], np.ndarray]) -> Any:
    def rule(
        ctx: LoweringRuleContext, x: IrValue, *, axes: Sequence[int], **params: Any
    ) -> list[IrValue]:
        caches = ctx.caches
        dtype = out_aval(ctx).dtype
        init = _hlo.scalar_constant(caches, identity(dtype), dtype)
        op = _hlo.emit(
            "stablehlo.reduce",
            [out_type(ctx)],
            [x, init],
            {"dimensions": _hlo.dense_i64_array(caches, axes)},
            regions=1,
        )
        scalar = init.type
        body = op.regions[0].blocks.append(scalar, scalar)
        with ir.InsertionPoint(body):
            _hlo.return_([combine(caches, *body.arguments)])
        return [op.result]

    return rule


for _prim, (_combine, _identity) in REDUCTIONS.items():
    register(_prim)(_reduction_rule(_combine, _identity))


def _argminmax(direction: str, identity: Callable[[np.dtype], np.ndarray]) -> Any:
    def body(ctx: LoweringRuleContext, args: Sequence[IrValue], axis: int) -> list[IrValue]:
        caches = ctx.caches
        (x,) = args
        aval = array_aval(ctx.avals_in[0])
        index_dtype = out_aval(ctx).dtype
        indices = _dynamic.iota(caches, aval.shape, index_dtype, axis)
        if explicit_module(ctx):  # JAX's iota is typed as the operand, over Explicit axes
            index_aval = ShapedArray(aval.shape, index_dtype, False, aval.mesh, spec=aval.spec)
            indices = constrain(ctx, indices, index_aval)
        init_value = _hlo.scalar_constant(caches, identity(aval.dtype), aval.dtype)
        init_index = _hlo.scalar_constant(caches, 0, index_dtype)
        value_type = tensor_type(caches, out_aval(ctx).shape, aval.dtype)
        op = _hlo.emit(
            "stablehlo.reduce",
            [value_type, out_type(ctx)],
            [x, indices, init_value, init_index],
            {"dimensions": _hlo.dense_i64_array(caches, (axis,))},
            regions=1,
        )
        block = op.regions[0].blocks.append(
            init_value.type, init_index.type, init_value.type, init_index.type
        )
        with ir.InsertionPoint(block):
            x_val, x_idx, acc_val, acc_idx = block.arguments
            kind = _hlo.compare_type(aval.dtype)
            index_kind = _hlo.compare_type(index_dtype)
            better = _hlo.compare(caches, x_val, acc_val, direction, kind)
            is_nan = _hlo.compare(caches, x_val, x_val, "NE", kind)
            pick_value = _hlo.emit1("stablehlo.or", better.type, better, is_nan)
            equal = _hlo.compare(caches, x_val, acc_val, "EQ", kind)
            earlier = _hlo.compare(caches, x_idx, acc_idx, "LT", index_kind)
            tie = _hlo.emit1("stablehlo.and", equal.type, equal, earlier)
            pick_index = _hlo.emit1("stablehlo.or", tie.type, pick_value, tie)
            _hlo.return_(
                [
                    _hlo.select(pick_value, x_val, acc_val),
                    _hlo.select(pick_index, x_idx, acc_idx),
                ]
            )
        if explicit_module(ctx):
            value_aval = ShapedArray(
                out_aval(ctx).shape, aval.dtype, False, out_aval(ctx).mesh, spec=out_aval(ctx).spec
            )
            constrain(ctx, op.results[0], value_aval)
            return [constrain(ctx, op.results[1], out_aval(ctx))]
        return [op.results[1]]

    def rule(
        ctx: LoweringRuleContext, x: IrValue, *, axes: Sequence[int], index_dtype: np.dtype
    ) -> list[IrValue]:
        params = {"axes": tuple(axes), "index_dtype": index_dtype}
        return call_as_function(ctx, [x], params, lambda c, a: body(c, a, axes[0]))

    return rule


register(lax.argmax_p)(_argminmax("GT", max_identity))
register(lax.argmin_p)(_argminmax("LT", min_identity))


def _logaddexp_complex(caches: ContextCaches, x: IrValue, y: IrValue) -> IrValue:
    """log(exp(x) + exp(y)) for complex scalars, its imaginary part wrapped into [-pi, pi)."""
    t = x.type
    amax = _hlo.min_or_max(caches, "stablehlo.maximum", x, y)
    total = _hlo.emit1("stablehlo.add", t, x, y)
    complex_dtype = np.dtype(np.complex64 if _is_single(x) else np.complex128)
    two = _hlo.scalar_constant(caches, 2, complex_dtype)
    shifted = _hlo.emit1(
        "stablehlo.subtract", t, total, _hlo.emit1("stablehlo.multiply", t, amax, two)
    )
    softplus = _hlo.emit1(
        "stablehlo.log_plus_one", t, _hlo.emit1("stablehlo.exponential", t, shifted)
    )
    out = _hlo.emit1("stablehlo.add", t, amax, softplus)
    re, im = _hlo.real_part(out), _hlo.imag_part(out)
    part = dtypes.finfo(complex_dtype).dtype
    rt = re.type

    def const(v: float) -> IrValue:
        return _hlo.scalar_constant(caches, v, part)

    im = _hlo.emit1("stablehlo.add", rt, im, const(np.pi))
    im = _hlo.emit1("stablehlo.remainder", rt, im, const(2 * np.pi))
    negative = _hlo.compare(caches, im, const(0), "LT", "FLOAT")
    im = _hlo.select(negative, _hlo.emit1("stablehlo.add", rt, im, const(2 * np.pi)), im)
    im = _hlo.emit1("stablehlo.subtract", rt, im, const(np.pi))
    return _hlo.emit1("stablehlo.complex", t, re, im)


def _is_single(x: IrValue) -> bool:
    element = ir.ComplexType(ir.RankedTensorType(x.type).element_type).element_type
    return isinstance(element, ir.F32Type)


def _logaddexp(caches: ContextCaches, x: IrValue, y: IrValue) -> IrValue:
    if _hlo.is_complex(x):
        return _logaddexp_complex(caches, x, y)
    t = x.type

    def op(name: str, *args: IrValue) -> IrValue:
        return _hlo.emit1(name, t, *args)

    amax = _hlo.min_or_max(caches, "stablehlo.maximum", x, y)
    delta = op("stablehlo.subtract", x, y)
    is_nan = _hlo.compare(caches, delta, delta, "NE", "FLOAT")
    total = op("stablehlo.add", x, y)
    softplus = op(
        "stablehlo.log_plus_one",
        op("stablehlo.exponential", op("stablehlo.negate", op("stablehlo.abs", delta))),
    )
    return _hlo.select(is_nan, total, op("stablehlo.add", amax, softplus))


CUMULATIVE: dict[Primitive, tuple[Combine, Callable[[np.dtype], np.ndarray], bool]] = {
    # (combine, identity, whether JAX broadcasts the scalar init to rank 0 first)
    lax.cumsum_p: (_op("stablehlo.add"), lambda d: np.array(0).astype(d), True),
    lax.cumprod_p: (_op("stablehlo.multiply"), lambda d: np.array(1).astype(d), False),
    lax.cummax_p: (_min_max("stablehlo.maximum"), max_identity, True),
    lax.cummin_p: (_min_max("stablehlo.minimum"), min_identity, True),
    lax.cumlogsumexp_p: (_logaddexp, lambda d: np.array(-np.inf).astype(d), False),
}


def _cumulative_rule(
    combine: Combine, identity: Callable[[np.dtype], np.ndarray], broadcast_init: bool
) -> Any:
    def body(
        ctx: LoweringRuleContext, args: Sequence[IrValue], axis: int, reverse: bool
    ) -> list[IrValue]:
        caches = ctx.caches
        (x,) = args
        aval = array_aval(ctx.avals_in[0])
        n = aval.shape[axis]
        if n == 0:
            return [x]
        init = _hlo.scalar_constant(caches, identity(aval.dtype), aval.dtype)
        if broadcast_init:
            init = _hlo.broadcast_in_dim(caches, init, (), aval.dtype, ())
        padding = np.zeros((aval.ndim, 2), np.int64)
        padding[axis] = (0, n - 1) if reverse else (n - 1, 0)
        window = [1] * aval.ndim
        window[axis] = n
        ones = [1] * aval.ndim
        attrs = {
            "window_dimensions": _hlo.dense_i64_array(caches, window),
            "window_strides": _hlo.dense_i64_array(caches, ones),
            "base_dilations": _hlo.dense_i64_array(caches, ones),
            "window_dilations": _hlo.dense_i64_array(caches, ones),
            "padding": _hlo.dense_elements(caches, padding),
        }
        op = _hlo.emit("stablehlo.reduce_window", [out_type(ctx)], [x, init], attrs, regions=1)
        block = op.regions[0].blocks.append(init.type, init.type)
        with ir.InsertionPoint(block):
            _hlo.return_([combine(caches, *block.arguments)])
        return [constrain(ctx, op.result, out_aval(ctx))]  # over Explicit axes, as JAX's

    def rule(ctx: LoweringRuleContext, x: IrValue, *, axis: int, reverse: bool) -> list[IrValue]:
        params = {"axis": axis, "reverse": reverse}
        return call_as_function(ctx, [x], params, lambda c, a: body(c, a, axis, reverse))

    return rule


for _prim, (_combine, _identity, _broadcast) in CUMULATIVE.items():
    register(_prim)(_cumulative_rule(_combine, _identity, _broadcast))
