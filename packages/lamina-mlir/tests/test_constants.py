"""Seed 000, "Lowering": closed-over constants become leading `jax.const` arguments.

The seed example lowers to `@main(%arg0 {jax.const}, %arg1 {jax.const}, %arg2)` with no
non-scalar `stablehlo.constant`; scalars, small arrays and constants the lowering makes stay
inline; `hoist_constants_as_args=False` inlines everything; an array used twice is one const
arg (JAX 0.10.2 makes two); an inner function gets its own, smaller set of const args, which
its callers pass; `jaxpr_subcomp` (an inlined call) reuses the enclosing function's.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_consts import hoist, jaxpr_const_args
from lamina_core import numpy as lnp
from lamina_mlir import LoweredModule, LoweringParameters, lower_jaxpr_to_module

MAIN_SIGNATURE = (
    "func.func public @main(%arg0: tensor<16xf32> {jax.const = true}, "
    "%arg1: tensor<16xf32> {jax.const = true}, %arg2: tensor<16xf32>) -> "
    '(tensor<16xf32> {jax.result_info = "result"}) {'
)
NO_HOISTING = LoweringParameters(hoist_constants_as_args=False)

a_array = np.ones((16,), dtype=np.float32)
x16 = np.arange(16, dtype=np.float32)


@lamina_core.jit
def f(x: Any) -> Any:
    return x + a_array + np.full((16,), 42.0) + lnp.full((16,), 142.0)


def lower_seed(parameters: LoweringParameters = LoweringParameters()) -> LoweredModule:  # noqa: B008
    staged, _, _ = f.stage(x16)
    return lower_jaxpr_to_module(staged.jaxpr, module_name="jit(f)", lowering_parameters=parameters)


def main_line(text: str) -> str:
    (line,) = [line.strip() for line in text.splitlines() if "@main(" in line]
    return line


def large_constants(text: str) -> list[str]:
    return re.findall(r"stablehlo\.constant dense<.*?> : tensor<\d[^>]*>", text)


def test_seed_example_main_takes_const_args_first() -> None:
    text = lower_seed().as_text()
    assert text.startswith(
        "module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {"
    )
    assert main_line(text) == MAIN_SIGNATURE


def test_seed_example_body_uses_const_args_in_order(filecheck: Any) -> None:
    filecheck(
        lower_seed().as_text(),
        """
        // CHECK: %0 = stablehlo.add %arg2, %arg0 : tensor<16xf32>
        // CHECK-NEXT: %1 = stablehlo.add %0, %arg1 : tensor<16xf32>
        // CHECK-NEXT: %cst = stablehlo.constant dense<1.420000e+02> : tensor<f32>
        // CHECK-NEXT: stablehlo.broadcast_in_dim %cst, dims = []
        """,
    )


def test_seed_example_has_no_non_scalar_constant() -> None:
    assert large_constants(lower_seed().as_text()) == []


def test_seed_example_const_args_are_the_closed_over_values() -> None:
    lowered = lower_seed()
    assert lowered.const_args.values[0] is a_array
    np.testing.assert_array_equal(lowered.const_args.values[1], np.full(16, 42.0))
    assert [a.str_short(True) for a in lowered.const_args.avals] == ["f32[16]", "f32[16]"]
    assert [a.str_short(True) for a in lowered.in_avals] == ["f32[16]"]


def test_without_hoisting_constants_are_inlined(filecheck: Any) -> None:
    text = lower_seed(NO_HOISTING).as_text()
    assert "jax.const" not in text
    filecheck(
        text,
        """
        // CHECK: func.func public @main(%arg0: tensor<16xf32>) -> (tensor<16xf32>
        // CHECK-NEXT: %cst = stablehlo.constant dense<1.000000e+00> : tensor<16xf32>
        // CHECK-NEXT: %cst_0 = stablehlo.constant dense<4.200000e+01> : tensor<16xf32>
        // CHECK-NEXT: stablehlo.add %arg0, %cst
        // CHECK-NEXT: stablehlo.add %0, %cst_0
        """,
    )


def test_array_used_twice_is_one_const_arg(filecheck: Any) -> None:
    c = np.arange(16, dtype=np.float32)
    jaxpr = lamina_core.make_jaxpr(lambda x: x * c + c)(x16)
    lowered = lower_jaxpr_to_module(jaxpr, module_name="jit(g)")
    assert len(lowered.const_args) == 1
    filecheck(
        lowered.as_text(),
        """
        // CHECK: @main(%arg0: tensor<16xf32> {jax.const = true}, %arg1: tensor<16xf32>)
        // CHECK-NEXT: %0 = stablehlo.multiply %arg1, %arg0
        // CHECK-NEXT: %1 = stablehlo.add %0, %arg0
        """,
    )


def test_array_used_twice_without_hoisting_is_one_constant() -> None:
    c = np.arange(16, dtype=np.float32)
    jaxpr = lamina_core.make_jaxpr(lambda x: x * c + c)(x16)
    text = lower_jaxpr_to_module(jaxpr, module_name="jit(g)", lowering_parameters=NO_HOISTING)
    assert len(large_constants(text.as_text())) == 1


def test_small_constants_are_embedded(filecheck: Any) -> None:
    small = np.arange(4, dtype=np.float32)  # 16 bytes, at most jax_embedded_constants_max_bytes
    jaxpr = lamina_core.make_jaxpr(lambda x: x + small)(np.ones(4, np.float32))
    text = lower_jaxpr_to_module(jaxpr, module_name="jit(g)").as_text()
    assert "jax.const" not in text
    filecheck(
        text,
        """
        // CHECK: stablehlo.constant dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<4xf32>
        """,  # noqa: E501
    )


def test_returned_constant_is_the_const_arg(filecheck: Any) -> None:
    c = np.arange(16, dtype=np.float32)
    jaxpr = lamina_core.make_jaxpr(lambda: c)()
    filecheck(
        lower_jaxpr_to_module(jaxpr, module_name="jit(g)").as_text(),
        """
        // CHECK: @main(%arg0: tensor<16xf32> {jax.const = true})
        // CHECK-NEXT: return %arg0 : tensor<16xf32>
        """,
    )


def test_constvars_of_the_previous_mode_are_constants(filecheck: Any) -> None:
    closed = hoist(lamina_core.make_jaxpr(lambda x: x + a_array)(x16))
    assert len(closed.consts) == 1
    lowered = lower_jaxpr_to_module(closed, module_name="jit(g)")
    assert len(lowered.const_args) == 0
    filecheck(
        lowered.as_text(),
        """
        // CHECK: @main(%arg0: tensor<16xf32>)
        // CHECK-NEXT: %cst = stablehlo.constant dense<1.000000e+00> : tensor<16xf32>
        // CHECK-NEXT: stablehlo.add %arg0, %cst
        """,
    )


c_inner = np.arange(16, dtype=np.float32)


def inner(y: Any) -> Any:
    return y * c_inner


def test_inner_function_gets_its_own_const_args(filecheck: Any) -> None:
    jaxpr = lamina_core.make_jaxpr(lambda x: lamina_core.jit(inner)(x) + c_inner)(x16)
    text = lower_jaxpr_to_module(jaxpr, module_name="jit(f)").as_text()
    assert large_constants(text) == []
    filecheck(
        text,
        """
        // CHECK: @main(%arg0: tensor<16xf32> {jax.const = true}, %arg1: tensor<16xf32>)
        // CHECK-NEXT: %0 = call @inner(%arg0, %arg1) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
        // CHECK-NEXT: stablehlo.add %0, %arg0
        // CHECK: func.func private @inner(%arg0: tensor<16xf32> {jax.const = true}, %arg1: tensor<16xf32>) -> tensor<16xf32> {
        // CHECK-NEXT: stablehlo.multiply %arg1, %arg0
        """,  # noqa: E501
    )


def test_inner_function_is_lowered_once_per_callee(filecheck: Any) -> None:
    jitted = lamina_core.jit(inner)
    jaxpr = lamina_core.make_jaxpr(lambda x: jitted(x) + jitted(x + 1.0))(x16)
    text = lower_jaxpr_to_module(jaxpr, module_name="jit(f)").as_text()
    assert text.count("func.func private @inner(") == 1
    assert len(re.findall(r"call @inner\(%arg0, ", text)) == 2


def test_inner_function_const_args_without_hoisting(filecheck: Any) -> None:
    jaxpr = lamina_core.make_jaxpr(lambda x: lamina_core.jit(inner)(x))(x16)
    lowered = lower_jaxpr_to_module(jaxpr, module_name="jit(f)", lowering_parameters=NO_HOISTING)
    filecheck(
        lowered.as_text(),
        """
        // CHECK: @main(%arg0: tensor<16xf32>)
        // CHECK-NEXT: %cst = stablehlo.constant dense<{{.*}}> : tensor<16xf32>
        // CHECK-NEXT: call @inner(%cst, %arg0)
        // CHECK: func.func private @inner(%arg0: tensor<16xf32> {jax.const = true}, %arg1
        """,
    )


def test_inlined_call_reuses_the_enclosing_const_args(filecheck: Any) -> None:
    # Staging inlines a `jit(inline=True)` call's equations, as JAX's does; an equation that
    # says `inline` (made here from a staged call) lowers into the caller's block.
    jaxpr = lamina_core.make_jaxpr(lambda x: lamina_core.jit(inner)(x) - c_inner)(x16)
    eqns = [
        e.replace(params={**e.params, "inline": True}) if e.primitive.name == "jit" else e
        for e in jaxpr.jaxpr.eqns
    ]
    assert [e.primitive.name for e in eqns] == ["jit", "sub"]
    jaxpr = jaxpr.replace(jaxpr=jaxpr.jaxpr.replace(eqns=tuple(eqns)))
    text = lower_jaxpr_to_module(jaxpr, module_name="jit(f)").as_text()
    assert "func.func private" not in text
    filecheck(
        text,
        """
        // CHECK: @main(%arg0: tensor<16xf32> {jax.const = true}, %arg1: tensor<16xf32>)
        // CHECK-NEXT: %0 = stablehlo.multiply %arg1, %arg0
        // CHECK-NEXT: %1 = stablehlo.subtract %0, %arg0
        """,
    )


def test_explicit_const_args_are_used() -> None:
    jaxpr = lamina_core.make_jaxpr(lambda x: x + a_array)(x16)
    plan = jaxpr_const_args(jaxpr)
    lowered = lower_jaxpr_to_module(jaxpr, module_name="jit(g)", const_args=plan)
    assert lowered.const_args is plan


@pytest.mark.oracle
def test_seed_example_computes_jax_numbers(pjrt: Any) -> None:
    (out,) = pjrt.run(lower_seed(), x16)
    np.testing.assert_allclose(out, x16 + 1.0 + 42.0 + 142.0)
    (out,) = pjrt.run(lower_seed(NO_HOISTING), x16)
    np.testing.assert_allclose(out, x16 + 1.0 + 42.0 + 142.0)


@pytest.mark.oracle
def test_nested_jit_with_constants_computes_jax_numbers(pjrt: Any) -> None:
    jaxpr = lamina_core.make_jaxpr(lambda x: lamina_core.jit(inner)(x) + c_inner)(x16)
    (out,) = pjrt.run(lower_jaxpr_to_module(jaxpr, module_name="jit(f)"), x16)
    np.testing.assert_allclose(out, x16 * c_inner + c_inner)


def test_weak_python_scalar_is_a_constant_of_the_aval_dtype(filecheck: Any) -> None:
    jaxpr = lamina_core.make_jaxpr(lambda x: x * 0.1)(np.ones(3, np.float16))
    filecheck(
        lower_jaxpr_to_module(jaxpr, module_name="jit(g)").as_text(),
        """
        // CHECK: %cst = stablehlo.constant dense<9.997550e-02> : tensor<f16>
        // CHECK-NEXT: stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f16>) -> tensor<3xf16>
        """,
    )


def test_typed_integer_literal_is_a_constant_of_its_dtype(filecheck: Any) -> None:
    jaxpr = lamina_core.make_jaxpr(lambda x: x + 3)(np.ones(3, np.int8))
    filecheck(
        lower_jaxpr_to_module(jaxpr, module_name="jit(g)").as_text(),
        "// CHECK: %c = stablehlo.constant dense<3> : tensor<i8>",
    )


def test_broadcast_numpy_constant_is_emitted_once_and_broadcast(filecheck: Any) -> None:
    ones = np.broadcast_to(np.float32(1.0), (4, 4))  # zero strides
    jaxpr = lamina_core.make_jaxpr(lambda x: x + ones)(np.ones((4, 4), np.float32))
    text = lower_jaxpr_to_module(jaxpr, module_name="jit(g)", lowering_parameters=NO_HOISTING)
    filecheck(
        text.as_text(),
        """
        // CHECK: %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
        // CHECK-NEXT: stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x4xf32>
        """,
    )
