"""Golden StableHLO for every primitive family, as FileCheck `CHECK` lines beside each case.

These run without JAX. The lines were taken from modules that `test_lowering_oracle.py` shows
print exactly as JAX 0.10.2's; they pin the ops, attributes, comparison types and op order of
each rule. Update one by lowering the case and reviewing the diff like code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_core import lax
from lamina_mlir import lower_jaxpr_to_module

f34 = np.ones((3, 4), np.float32)
i4 = np.ones((4,), np.int32)
u4 = np.ones((4,), np.uint32)
b4 = np.ones((4,), bool)
c3 = np.ones((3,), np.complex64)

Case = tuple[Callable[..., Any], tuple[Any, ...], str]

CASES: dict[str, Case] = {
    "unary": (
        lambda x, n, k, p: (
            lax.neg(x),
            lax.sign(k),
            lax.floor(x),
            lax.ceil(x),
            lax.round(x),
            lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
            lax.is_finite(x),
            lax.abs(n),
            lax.bitwise_not(p),
            lax.square(x),
            lax.square(n),
            lax.population_count(n),
            lax.clz(n),
        ),
        (f34, i4, u4, b4),
        """
        // CHECK: %0 = stablehlo.negate %arg0 : tensor<3x4xf32>
        // CHECK: %2 = stablehlo.compare EQ, %arg2, %1, UNSIGNED
        // CHECK: %5 = stablehlo.select %2, %3, %4 : tensor<4xi1>, tensor<4xui32>
        // CHECK-NEXT: stablehlo.floor %arg0
        // CHECK-NEXT: stablehlo.ceil %arg0
        // CHECK-NEXT: stablehlo.round_nearest_afz %arg0
        // CHECK-NEXT: stablehlo.round_nearest_even %arg0
        // CHECK-NEXT: stablehlo.is_finite %arg0 : (tensor<3x4xf32>) -> tensor<3x4xi1>
        // CHECK-NEXT: stablehlo.abs %arg1 : tensor<4xi32>
        // CHECK-NEXT: stablehlo.not %arg3 : tensor<4xi1>
        // CHECK-NEXT: chlo.square %arg0 : tensor<3x4xf32> -> tensor<3x4xf32>
        // CHECK-NEXT: stablehlo.multiply %arg1, %arg1 : tensor<4xi32>
        // CHECK-NEXT: stablehlo.popcnt %arg1
        // CHECK-NEXT: stablehlo.count_leading_zeros %arg1
        """,
    ),
    "integer_pow": (
        lambda x: (lax.integer_pow(x, 3), lax.integer_pow(x, -2)),
        (f34,),
        """
        // CHECK: %0 = stablehlo.multiply %arg0, %arg0
        // CHECK-NEXT: %1 = stablehlo.multiply %0, %arg0
        // CHECK-NEXT: %2 = stablehlo.multiply %arg0, %arg0
        // CHECK-NEXT: %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
        // CHECK-NEXT: %3 = stablehlo.broadcast_in_dim %cst, dims = []
        // CHECK-NEXT: %4 = stablehlo.divide %3, %2
        """,
    ),
    "complex_parts": (
        lambda z, x: (lax.real(z), lax.imag(z), lax.conj(z), lax.complex(x, x)),
        (c3, f34),
        """
        // CHECK: stablehlo.real %arg0 : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
        // CHECK-NEXT: stablehlo.imag %arg0 : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
        // CHECK-NEXT: %2 = stablehlo.real %arg0
        // CHECK-NEXT: %3 = stablehlo.imag %arg0
        // CHECK-NEXT: %4 = stablehlo.negate %3
        // CHECK-NEXT: %5 = stablehlo.complex %2, %4 : tensor<3xcomplex<f32>>
        // CHECK-NEXT: stablehlo.complex %arg1, %arg1 : tensor<3x4xcomplex<f32>>
        """,
    ),
    "binary": (
        lambda x, y, n: (
            lax.add(x, y),
            lax.sub(x, y),
            lax.mul(x, y),
            lax.div(x, y),
            lax.rem(x, y),
            lax.pow(x, y),
            lax.max(x, y),
            lax.min(x, y),
            lax.nextafter(x, y),
            lax.atan2(x, y),
            lax.pow(x, n),
        ),
        (f34, f34, np.ones((3, 4), np.int32)),
        """
        // CHECK: stablehlo.add %arg0, %arg1
        // CHECK-NEXT: stablehlo.subtract %arg0, %arg1
        // CHECK-NEXT: stablehlo.multiply %arg0, %arg1
        // CHECK-NEXT: stablehlo.divide %arg0, %arg1
        // CHECK-NEXT: stablehlo.remainder %arg0, %arg1
        // CHECK-NEXT: stablehlo.power %arg0, %arg1
        // CHECK-NEXT: stablehlo.maximum %arg0, %arg1
        // CHECK-NEXT: stablehlo.minimum %arg0, %arg1
        // CHECK-NEXT: chlo.next_after %arg0, %arg1
        // CHECK-NEXT: stablehlo.atan2 %arg0, %arg1
        // CHECK-NEXT: %10 = stablehlo.convert %arg2 : (tensor<3x4xi32>) -> tensor<3x4xf32>
        // CHECK-NEXT: stablehlo.power %arg0, %10
        """,
    ),
    "bitwise": (
        lambda n, m, p: (
            lax.bitwise_and(n, m),
            lax.bitwise_or(p, p),
            lax.bitwise_xor(n, m),
            lax.shift_left(n, m),
            lax.shift_right_logical(n, m),
            lax.shift_right_arithmetic(n, m),
        ),
        (i4, i4, b4),
        """
        // CHECK: stablehlo.and %arg0, %arg1 : tensor<4xi32>
        // CHECK-NEXT: stablehlo.or %arg2, %arg2 : tensor<4xi1>
        // CHECK-NEXT: stablehlo.xor %arg0, %arg1
        // CHECK-NEXT: stablehlo.shift_left %arg0, %arg1
        // CHECK-NEXT: stablehlo.shift_right_logical %arg0, %arg1
        // CHECK-NEXT: stablehlo.shift_right_arithmetic %arg0, %arg1
        """,
    ),
    "compare": (
        lambda x, n, k, p: (
            lax.eq(x, x),
            lax.ne(n, n),
            lax.lt(k, k),
            lax.le(p, p),
            lax.gt(x, 0.0),
            lax.ge(n, n),
        ),
        (f34, i4, u4, b4),
        """
        // CHECK: stablehlo.compare EQ, %arg0, %arg0, FLOAT
        // CHECK-NEXT: stablehlo.compare NE, %arg1, %arg1, SIGNED
        // CHECK-NEXT: stablehlo.compare LT, %arg2, %arg2, UNSIGNED
        // CHECK-NEXT: stablehlo.compare LE, %arg3, %arg3, UNSIGNED
        // CHECK-NEXT: %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
        // CHECK-NEXT: %4 = stablehlo.broadcast_in_dim %cst, dims = [] : {{.*}} -> tensor<3x4xf32>
        // CHECK-NEXT: stablehlo.compare GT, %arg0, %4, FLOAT
        // CHECK-NEXT: stablehlo.compare GE, %arg1, %arg1, SIGNED
        """,
    ),
    "transcendental": (
        lambda x: tuple(
            fn(x)
            for fn in (
                lax.exp,
                lax.exp2,
                lax.log,
                lax.log1p,
                lax.expm1,
                lax.tanh,
                lax.logistic,
                lax.sin,
                lax.cos,
                lax.tan,
                lax.sqrt,
                lax.rsqrt,
                lax.cbrt,
                lax.asin,
                lax.acos,
                lax.atan,
                lax.sinh,
                lax.cosh,
                lax.asinh,
                lax.acosh,
                lax.atanh,
                lax.erf,
                lax.erfc,
                lax.erf_inv,
                lax.lgamma,
                lax.digamma,
            )
        ),
        (f34,),
        """
        // CHECK: stablehlo.exponential %arg0
        // CHECK-NEXT: %cst = stablehlo.constant dense<0.693147182> : tensor<f32>
        // CHECK-NEXT: %1 = stablehlo.broadcast_in_dim %cst
        // CHECK-NEXT: %2 = stablehlo.multiply %1, %arg0
        // CHECK-NEXT: stablehlo.exponential %2
        // CHECK-NEXT: stablehlo.log %arg0
        // CHECK-NEXT: stablehlo.log_plus_one %arg0
        // CHECK-NEXT: stablehlo.exponential_minus_one %arg0
        // CHECK-NEXT: stablehlo.tanh %arg0
        // CHECK-NEXT: %8 = stablehlo.negate %arg0
        // CHECK-NEXT: %9 = stablehlo.exponential %8
        // CHECK-NEXT: stablehlo.constant dense<1.000000e+00>
        // CHECK-NEXT: %10 = stablehlo.broadcast_in_dim
        // CHECK-NEXT: %11 = stablehlo.add %10, %9
        // CHECK-NEXT: stablehlo.constant dense<1.000000e+00>
        // CHECK-NEXT: %12 = stablehlo.broadcast_in_dim
        // CHECK-NEXT: %13 = stablehlo.divide %12, %11
        // CHECK-NEXT: stablehlo.sine %arg0
        // CHECK-NEXT: stablehlo.cosine %arg0
        // CHECK-NEXT: stablehlo.tan %arg0
        // CHECK-NEXT: stablehlo.sqrt %arg0
        // CHECK-NEXT: stablehlo.rsqrt %arg0
        // CHECK-NEXT: stablehlo.cbrt %arg0
        // CHECK-NEXT: chlo.asin %arg0
        // CHECK-NEXT: chlo.acos %arg0
        // CHECK-NEXT: chlo.atan %arg0
        // CHECK-NEXT: chlo.sinh %arg0
        // CHECK-NEXT: chlo.cosh %arg0
        // CHECK-NEXT: chlo.asinh %arg0
        // CHECK-NEXT: chlo.acosh %arg0
        // CHECK-NEXT: chlo.atanh %arg0
        // CHECK-NEXT: chlo.erf %arg0
        // CHECK-NEXT: chlo.erfc %arg0
        // CHECK-NEXT: chlo.erf_inv %arg0
        // CHECK-NEXT: chlo.lgamma %arg0
        // CHECK-NEXT: chlo.digamma %arg0
        """,
    ),
    "accuracy": (
        lambda x: lax.exp(x, accuracy=lax.AccuracyMode.HIGHEST),
        (f34,),
        """
        // CHECK: stablehlo.exponential %arg0 {result_accuracy = #stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<HIGHEST>>}
        """,  # noqa: E501
    ),
    "convert": (
        lambda x, n, z: (
            lax.convert_element_type(x, np.int32),
            lax.convert_element_type(n, np.bool_),
            lax.convert_element_type(z, np.float32),
        ),
        (f34, i4, c3),
        """
        // CHECK: stablehlo.convert %arg0 : (tensor<3x4xf32>) -> tensor<3x4xi32>
        // CHECK-NEXT: %c = stablehlo.constant dense<0> : tensor<i32>
        // CHECK-NEXT: %1 = stablehlo.broadcast_in_dim %c, dims = []
        // CHECK-NEXT: %2 = stablehlo.compare NE, %arg1, %1, SIGNED
        // CHECK-NEXT: stablehlo.convert %2 : tensor<4xi1>
        // CHECK-NEXT: %4 = stablehlo.real %arg2
        // CHECK-NEXT: stablehlo.convert %4 : tensor<3xf32>
        """,
    ),
    "shape": (
        lambda x: (
            lax.broadcast_in_dim(x, (2, 3, 4), (1, 2)),
            lax.reshape(x, (4, 3), (1, 0)),
            lax.squeeze(lax.expand_dims(x, (0,)), (0,)),
            lax.transpose(x, (1, 0)),
            lax.rev(x, (0,)),
            lax.tile(x, (2, 1)),
            lax.broadcasted_iota(np.int32, (3, 4), 1),
        ),
        (f34,),
        """
        // CHECK: stablehlo.broadcast_in_dim %arg0, dims = [1, 2] : (tensor<3x4xf32>) -> tensor<2x3x4xf32>
        // CHECK-NEXT: %1 = stablehlo.transpose %arg0, dims = [1, 0]
        // CHECK-NEXT: stablehlo.reshape %1 : (tensor<4x3xf32>) -> tensor<4x3xf32>
        // CHECK-NEXT: %3 = stablehlo.broadcast_in_dim %arg0, dims = [1, 2] : (tensor<3x4xf32>) -> tensor<1x3x4xf32>
        // CHECK-NEXT: stablehlo.reshape %3 : (tensor<1x3x4xf32>) -> tensor<3x4xf32>
        // CHECK-NEXT: stablehlo.transpose %arg0, dims = [1, 0] : (tensor<3x4xf32>) -> tensor<4x3xf32>
        // CHECK-NEXT: stablehlo.reverse %arg0, dims = [0]
        // CHECK-NEXT: %7 = stablehlo.reshape %arg0 : (tensor<3x4xf32>) -> tensor<1x3x1x4xf32>
        // CHECK-NEXT: %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1, 2, 3] : (tensor<1x3x1x4xf32>) -> tensor<2x3x1x4xf32>
        // CHECK-NEXT: stablehlo.reshape %8 : (tensor<2x3x1x4xf32>) -> tensor<6x4xf32>
        // CHECK-NEXT: stablehlo.iota dim = 1 : tensor<3x4xi32>
        """,  # noqa: E501
    ),
    "selection": (
        lambda p, x, w: (
            lax.select(p, x, x),
            lax.select_n(w, x, x, x),
            lax.clamp(0.0, x, 1.0),
            lax.bitcast_convert_type(x, np.int32),
            lax.reduce_precision(x, 5, 10),
        ),
        (np.ones((3, 4), bool), f34, np.ones((3, 4), np.int32)),
        """
        // CHECK: stablehlo.select %arg0, %arg1, %arg1 : tensor<3x4xi1>, tensor<3x4xf32>
        // CHECK: %2 = stablehlo.compare LT, %arg2, %1, SIGNED
        // CHECK: %4 = stablehlo.compare LT, %arg2, %3, SIGNED
        // CHECK-NEXT: %5 = stablehlo.select %4, %arg1, %arg1
        // CHECK-NEXT: %6 = stablehlo.select %2, %arg1, %5
        // CHECK: stablehlo.clamp %7, %arg1, %8 : tensor<3x4xf32>
        // CHECK-NEXT: stablehlo.bitcast_convert %arg1 : (tensor<3x4xf32>) -> tensor<3x4xi32>
        // CHECK-NEXT: stablehlo.reduce_precision %arg1, format = e5m10
        """,
    ),
    "slicing": (
        lambda x, k: (
            lax.slice(x, (0, 1), (3, 4), (2, 1)),
            lax.dynamic_slice(x, (k, k), (2, 2)),
            lax.dynamic_update_slice(x, lax.slice(x, (0, 0), (1, 1)), (k, k)),
        ),
        (f34, np.int32(1)),
        """
        // CHECK: stablehlo.slice %arg0 [0:3:2, 1:4] : (tensor<3x4xf32>) -> tensor<2x3xf32>
        // CHECK: stablehlo.dynamic_slice %arg0, %3, %6, sizes = [2, 2]
        // CHECK: stablehlo.dynamic_update_slice %arg0, %8, %11, %14
        """,
    ),
    "joining": (
        lambda x: (
            lax.concatenate([x, x], 1),
            lax.stack([x, x], 0),
            *lax.unstack(lax.slice(x, (0, 0), (2, 4)), 0),
            *lax.split(x, (1, 2), 0),
            lax.pad(x, 0.0, ((1, 0, 0), (0, 2, 1))),
        ),
        (f34,),
        """
        // CHECK: stablehlo.concatenate %arg0, %arg0, dim = 1 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x8xf32>
        // CHECK-NEXT: %1 = stablehlo.broadcast_in_dim %arg0, dims = [1, 2] : (tensor<3x4xf32>) -> tensor<1x3x4xf32>
        // CHECK-NEXT: %2 = stablehlo.broadcast_in_dim %arg0
        // CHECK-NEXT: stablehlo.concatenate %1, %2, dim = 0
        // CHECK: %5 = stablehlo.slice %4 [0:1, 0:4]
        // CHECK-NEXT: stablehlo.reshape %5 : (tensor<1x4xf32>) -> tensor<4xf32>
        // CHECK: stablehlo.slice %arg0 [0:1, 0:4]
        // CHECK-NEXT: stablehlo.slice %arg0 [1:3, 0:4]
        // CHECK: stablehlo.pad %arg0, %cst, low = [1, 0], high = [0, 2], interior = [0, 1]
        """,  # noqa: E501
    ),
    "reductions": (
        lambda x, n, p: (
            lax.reduce_sum(x, (0,)),
            lax.reduce_prod(x, (1,)),
            lax.reduce_max(x, (0, 1)),
            lax.reduce_min(n, (0,)),
            lax.reduce_and(p, (0,)),
            lax.reduce_or(p, (0,)),
            lax.reduce_xor(n, (0,)),
        ),
        (f34, i4, b4),
        """
        // CHECK: stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0]
        // CHECK: %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
        // CHECK-NEXT: stablehlo.reduce(%arg0 init: %cst_0) applies stablehlo.multiply across dimensions = [1]
        // CHECK: %cst_1 = stablehlo.constant dense<0xFF800000> : tensor<f32>
        // CHECK-NEXT: applies stablehlo.maximum across dimensions = [0, 1]
        // CHECK: stablehlo.constant dense<2147483647> : tensor<i32>
        // CHECK-NEXT: applies stablehlo.minimum across dimensions = [0]
        // CHECK: stablehlo.constant dense<true> : tensor<i1>
        // CHECK-NEXT: applies stablehlo.and
        // CHECK: stablehlo.constant dense<false> : tensor<i1>
        // CHECK-NEXT: applies stablehlo.or
        // CHECK: applies stablehlo.xor
        """,  # noqa: E501
    ),
    "argminmax": (
        lambda x: (lax.argmax(x, 1, np.int32), lax.argmin(x, 0, np.int32)),
        (f34,),
        """
        // CHECK: %0 = call @argmax(%arg0) : (tensor<3x4xf32>) -> tensor<3xi32>
        // CHECK-NEXT: %1 = call @argmin(%arg0) : (tensor<3x4xf32>) -> tensor<4xi32>
        // CHECK: func.func private @argmax(%arg0: tensor<3x4xf32>) -> tensor<3xi32> {
        // CHECK-NEXT: %0 = stablehlo.iota dim = 1 : tensor<3x4xi32>
        // CHECK-NEXT: %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
        // CHECK-NEXT: %c = stablehlo.constant dense<0> : tensor<i32>
        // CHECK-NEXT: %1:2 = stablehlo.reduce(%arg0 init: %cst), (%0 init: %c) across dimensions = [1]
        // CHECK-NEXT: reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)
        // CHECK-NEXT: stablehlo.compare GT, %arg1, %arg3, FLOAT
        // CHECK-NEXT: stablehlo.compare NE, %arg1, %arg1, FLOAT
        // CHECK-NEXT: %4 = stablehlo.or %2, %3
        // CHECK-NEXT: stablehlo.compare EQ, %arg1, %arg3, FLOAT
        // CHECK-NEXT: stablehlo.compare LT, %arg2, %arg4, SIGNED
        // CHECK-NEXT: %7 = stablehlo.and %5, %6
        // CHECK-NEXT: %8 = stablehlo.or %4, %7
        // CHECK-NEXT: stablehlo.select %4, %arg1, %arg3
        // CHECK-NEXT: stablehlo.select %8, %arg2, %arg4
        // CHECK: return %1#1 : tensor<3xi32>
        // CHECK: func.func private @argmin(
        // CHECK: stablehlo.constant dense<0x7F800000> : tensor<f32>
        // CHECK: stablehlo.compare LT, %arg1, %arg3, FLOAT
        """,  # noqa: E501
    ),
    "cumulative": (
        lambda x: (
            lax.cumsum(x, 0),
            lax.cumprod(x, 1, reverse=True),
            lax.cummax(x, 0),
            lax.cummin(x, 0),
            lax.cumlogsumexp(x, 1),
        ),
        (f34,),
        """
        // CHECK: call @cumsum(%arg0)
        // CHECK-NEXT: call @cumprod(%arg0)
        // CHECK-NEXT: call @cummax(%arg0)
        // CHECK-NEXT: call @cummin(%arg0)
        // CHECK-NEXT: call @cumlogsumexp(%arg0)
        // CHECK: func.func private @cumsum(
        // CHECK: "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1>, padding = dense<{{\\[\\[}}2, 0], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 1, 1>}>
        // CHECK: stablehlo.add %arg1, %arg2
        // CHECK: func.func private @cumprod(
        // CHECK: padding = dense<{{\\[\\[}}0, 0], [0, 3]]>
        // CHECK: stablehlo.multiply %arg1, %arg2
        // CHECK: func.func private @cummax(
        // CHECK: stablehlo.maximum %arg1, %arg2
        // CHECK: func.func private @cummin(
        // CHECK: stablehlo.minimum %arg1, %arg2
        // CHECK: func.func private @cumlogsumexp(
        // CHECK: stablehlo.log_plus_one
        """,  # noqa: E501
    ),
    "dot_general": (
        lambda x, y: (
            lax.dot_general(x, y, (((1,), (0,)), ((), ()))),
            lax.dot_general(x, x, (((1,), (1,)), ((0,), (0,))), precision=lax.Precision.HIGHEST),
        ),
        (f34, np.ones((4, 2), np.float32)),
        """
        // CHECK: stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
        // CHECK-NEXT: stablehlo.dot_general %arg0, %arg0, batching_dims = [0] x [0], contracting_dims = [1] x [1], precision = [HIGHEST, HIGHEST]
        """,  # noqa: E501
    ),
    "sorting": (
        lambda x, n: (
            lax.sort(x, dimension=0),
            *lax.sort((n, n), num_keys=1),
            *lax.top_k(x, 2),
            *lax.top_k(x, 1, axis=0),
        ),
        (f34, i4),
        """
        // CHECK: "stablehlo.sort"(%arg0) <{dimension = 0 : i64, is_stable = true}>
        // CHECK: stablehlo.compare EQ, %arg2, %cst, FLOAT
        // CHECK: stablehlo.compare NE, %arg2, %arg2, FLOAT
        // CHECK: stablehlo.constant dense<0x7FC00000> : tensor<f32>
        // CHECK: stablehlo.compare LT, %8, %12, TOTALORDER
        // CHECK: "stablehlo.sort"(%arg1, %arg1) <{dimension = 0 : i64, is_stable = true}>
        // CHECK-NEXT: ^bb0(%arg2: tensor<i32>, %arg3: tensor<i32>, %arg4: tensor<i32>, %arg5: tensor<i32>):
        // CHECK-NEXT: stablehlo.compare LT, %arg2, %arg3, SIGNED
        // CHECK: %values, %indices = chlo.top_k(%arg0, k = 2) : tensor<3x4xf32> -> (tensor<3x2xf32>, tensor<3x2xi32>)
        // CHECK-NEXT: %2 = stablehlo.transpose %arg0, dims = [1, 0]
        // CHECK-NEXT: chlo.top_k(%2, k = 1) : tensor<4x3xf32> -> (tensor<4x1xf32>, tensor<4x1xi32>)
        // CHECK-NEXT: stablehlo.transpose %values_0, dims = [1, 0] : (tensor<4x1xf32>) -> tensor<1x4xf32>
        """,  # noqa: E501
    ),
    "jit": (
        lambda x: lamina_core.jit(lambda y: lax.sin(y))(x),
        (f34,),
        """
        // CHECK: %0 = call @"<lambda>"(%arg0) : (tensor<3x4xf32>) -> tensor<3x4xf32>
        // CHECK: func.func private @"<lambda>"(%arg0: tensor<3x4xf32>) -> tensor<3x4xf32> {
        // CHECK-NEXT: stablehlo.sine %arg0
        """,
    ),
}


@pytest.mark.golden
@pytest.mark.parametrize("case", sorted(CASES))
def test_rule_family_lowers_to_golden_stablehlo(case: str, filecheck: Any) -> None:
    fun, args, checks = CASES[case]
    jaxpr = lamina_core.make_jaxpr(fun)(*args)
    filecheck(lower_jaxpr_to_module(jaxpr, module_name="jit(f)").as_text(), checks)
