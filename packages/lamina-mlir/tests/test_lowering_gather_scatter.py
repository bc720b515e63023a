"""Lowering of gather, the scatters and NumPy indexing matches JAX's, and computes its numbers.

Each program prints JAX's jaxpr, lowers to exactly the module text of
`jax.jit(f).lower(*args).as_text()` (`stablehlo.gather`/`scatter` with JAX's dimension numbers,
a fill-mode gather's mask, a clip-mode scatter's clamp, update computations as regions), and
the module, compiled with JAX's PJRT client, returns `jax.jit(f)`'s results. Golden FileCheck
lines pin the ops without JAX.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import lamina_core
from lamina_core import lax as llax
from lamina_core.testing import Oracle
from lamina_mlir import lower_jaxpr_to_module

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]

_rng = np.random.default_rng(4)
X = _rng.standard_normal((3, 4)).astype(np.float32)
N = _rng.integers(-9, 9, (3, 4)).astype(np.int32)
B = _rng.random((3, 4)) > 0.5
H = X.astype(ml_dtypes.bfloat16)
ROWS = np.array([2, 0, -1, 5], np.int32)


def _fn(f: Callable[..., Any]) -> Program:
    return lambda jnp, lax: f


def _dn(lax: ModuleType, kind: str) -> Any:
    if kind == "gather_rows":
        return lax.GatherDimensionNumbers((1,), (0,), (0,))
    if kind == "gather_batched":
        return lax.GatherDimensionNumbers((), (1,), (1,), (0,), (0,))
    if kind == "scatter_rows":
        return lax.ScatterDimensionNumbers((1,), (0,), (0,))
    return lax.ScatterDimensionNumbers((), (1,), (1,), (0,), (0,))


CASES: dict[str, tuple[Program, tuple[Any, ...]]] = {
    "static_slices": (_fn(lambda x: (x[1], x[::-1, 1:3], x[None, ..., -1])), (X,)),
    "dynamic_slice": (_fn(lambda x, i: (x[i], x[i, ::-1])), (X, np.int32(-1))),
    "gather_rows": (_fn(lambda x, i: x[i]), (X, ROWS)),
    "gather_points_and_strides": (_fn(lambda x, i: (x[i[:2], i[1:3]], x[1, ::2])), (X, ROWS)),
    "gather_fill": (_fn(lambda x, i: x.at[i].get(mode="fill")), (X, ROWS)),
    "gather_fill_int": (_fn(lambda x, i: x.at[i, 1].get(mode="fill", fill_value=-1)), (N, ROWS)),
    "gather_fill_bool": (_fn(lambda x, i: x.at[i].get(mode="fill")), (B, ROWS)),
    "gather_clip": (_fn(lambda x, i: x.at[i].get(mode="clip")), (X, ROWS)),
    "gather_batched": (
        lambda jnp, lax: (
            lambda x, i: lax.gather(x, i, _dn(lax, "gather_batched"), (1, 1), mode="fill")
        ),
        (X, np.array([[3], [0], [7]], np.int32)),
    ),
    "gather_empty_result": (_fn(lambda x: x.at[np.zeros(0, np.int32)].get(mode="fill")), (X,)),
    "boolean_mask": (_fn(lambda x: x[np.array([True, False, True])]), (X,)),
    "set": (_fn(lambda x, i, u: x.at[i].set(u)), (X, ROWS, np.ones((4, 4), np.float32))),
    "add_mul_min_max_sub": (
        _fn(
            lambda x, i: (
                x.at[i].add(1),
                x.at[i].multiply(2),
                x.at[i].min(0),
                x.at[i].max(0),
                x.at[i].subtract(1),
            )
        ),
        (N, ROWS),
    ),
    "add_clip": (_fn(lambda x, i: x.at[i].add(1.0, mode="clip")), (X, ROWS)),
    "add_bf16": (_fn(lambda x, i: x.at[i, 1:3].add(1.0)), (H, ROWS)),
    "set_bool": (_fn(lambda x, i: x.at[i].set(True)), (B, ROWS)),
    "apply": (_fn(lambda x, i: x.at[i].apply(lambda v: v * v + 1.0)), (X, ROWS)),
    "scatter_batched": (
        lambda jnp, lax: (
            lambda x, i, u: lax.scatter_max(x, i, u, _dn(lax, "scatter_batched"), mode="clip")
        ),
        (X, np.array([[3], [0], [7]], np.int32), np.ones(3, np.float32)),
    ),
    "take": (
        lambda jnp, lax: (
            lambda x, i: (
                jnp.take(x, i, axis=1),
                jnp.take(x, i, mode="wrap"),
                jnp.take(x, i, axis=0, mode="clip"),
            )
        ),
        (X, ROWS),
    ),
    "take_along_axis": (
        lambda jnp, lax: lambda x, i: jnp.take_along_axis(x, i, axis=1),
        (X, np.array([[0, 3], [1, -1], [9, 2]], np.int32)),
    ),
}


_DEAD_CODE = {"apply", "gather_empty_result"}
"""Cases with dead code in the jaxpr (`.at[].apply` broadcasts values it never uses; an empty
gather needs neither its operand nor its indices): `jax.jit` removes it before lowering, while
`lower_jaxpr_to_module` lowers the jaxpr it is given; only their numbers are compared."""


@pytest.mark.oracle
@pytest.mark.parametrize("case", sorted(CASES))
def test_indexing_lowers_as_jax_and_computes_its_numbers(
    case: str, oracle: Oracle, pjrt: Any
) -> None:
    program, args = CASES[case]
    ours = lamina_core.make_jaxpr(program(lamina_core.numpy, lamina_core.lax))(*args)
    fun = program(oracle.jnp, oracle.lax)
    theirs = oracle.jax.make_jaxpr(fun)(*args)
    assert str(ours) == str(theirs), f"\n--- lamina ---\n{ours}\n--- jax ---\n{theirs}"
    name = getattr(fun, "__name__", "fun")
    lowered = lower_jaxpr_to_module(ours, module_name=f"jit({name})")
    text = lowered.as_text()
    want = oracle.jax.jit(fun).lower(*args).as_text()
    if case not in _DEAD_CODE:
        assert text == want, f"\n--- lamina ---\n{text}\n--- jax ---\n{want}"
    expected = oracle.jax.tree_util.tree_leaves(oracle.jax.jit(fun)(*args))
    pjrt.assert_close(pjrt.run(lowered, *args), [np.asarray(e) for e in expected])


f34 = np.ones((3, 4), np.float32)
i2 = np.zeros((2, 1), np.int32)

GOLDEN: dict[str, tuple[Callable[..., Any], tuple[Any, ...], str]] = {
    "gather": (
        lambda x, i: llax.gather(x, i, _dn(llax, "gather_rows"), (1, 4)),
        (f34, i2),
        """
        // CHECK: "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}>
        """,  # noqa: E501
    ),
    "gather_fill": (
        lambda x, i: llax.gather(x, i, _dn(llax, "gather_rows"), (1, 4), mode="fill"),
        (f34, i2),
        """
        // CHECK: stablehlo.compare GE, %arg1
        // CHECK: %c_0 = stablehlo.constant dense<2> : tensor<1xi32>
        // CHECK: stablehlo.compare LE, %arg1
        // CHECK: stablehlo.reduce
        // CHECK: "stablehlo.gather"(%arg0, %arg1)
        // CHECK: %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
        // CHECK: stablehlo.select
        """,
    ),
    "scatter_add_clip": (
        lambda x, i, u: llax.scatter_add(x, i, u, _dn(llax, "scatter_rows"), mode="clip"),
        (f34, i2, np.ones((2, 4), np.float32)),
        """
        // CHECK: %c = stablehlo.constant dense<2> : tensor<1xi32>
        // CHECK: stablehlo.minimum %c
        // CHECK: stablehlo.clamp
        // CHECK: "stablehlo.scatter"(%arg0, %{{[0-9]+}}, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
        // CHECK-NEXT: ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
        // CHECK-NEXT: %[[SUM:.*]] = stablehlo.add %arg3, %arg4 : tensor<f32>
        // CHECK-NEXT: stablehlo.return %[[SUM]] : tensor<f32>
        """,  # noqa: E501
    ),
    "scatter": (
        lambda x, i, u: llax.scatter(x, i, u, _dn(llax, "scatter_rows")),
        (f34, i2, np.ones((2, 4), np.float32)),
        """
        // CHECK: ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
        // CHECK-NEXT: stablehlo.return %arg4 : tensor<f32>
        """,
    ),
}


@pytest.mark.golden
@pytest.mark.parametrize("case", sorted(GOLDEN))
def test_gather_and_scatter_lower_to_golden_stablehlo(case: str, filecheck: Any) -> None:
    fun, args, checks = GOLDEN[case]
    jaxpr = lamina_core.make_jaxpr(fun)(*args)
    filecheck(lower_jaxpr_to_module(jaxpr, module_name="jit(f)").as_text(), checks)
