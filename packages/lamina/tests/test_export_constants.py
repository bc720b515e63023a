"""Closed-over constants in exported functions (seed 000's unfinished row): hoisted into the
module's arguments, serialized beside it once, and passed as const args by callers.

JAX 0.10.2 inlines them (`hoist_constants_as_args=False` when exporting): a 128 MB weight
becomes 128 MB of module, once for the function and once more for each vjp order.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

import lamina
import lamina.numpy as jnp
from lamina import export as lexport
from lamina_core.config import use_simplified_jaxpr_constants

F32 = np.float32
MB = 1 << 20


def test_constants_are_arguments_of_the_module_not_inlined() -> None:
    weights = np.linspace(-1, 1, 64, dtype=F32).reshape(8, 8)
    exported = lexport.export(lamina.jit(lambda x: jnp.tanh(x @ weights)))(np.ones((2, 8), F32))
    assert len(exported.const_args) == 1 and exported.const_args[0] is weights
    text = exported.mlir_module()
    assert "tensor<8x8xf32> {jax.const = true}" in text
    assert "dense<" not in text.replace("dense<1.000000e+00>", "")  # only scalars inline
    # The vjp closes over the same array: one object, shared.
    assert exported.vjp().const_args[0] is weights


def test_a_caller_hoists_the_constants_of_an_exported_function() -> None:
    weights = np.arange(16, dtype=F32)
    exported = lexport.deserialize(
        lexport.export(lamina.jit(lambda x: x * weights))(np.ones(16, F32)).serialize()
    )
    lowered = lamina.jit(lambda x: exported.call(x) + 1).lower(np.ones(16, F32))
    text = lowered.as_text()
    assert "%arg0: tensor<16xf32> {jax.const = true}" in text
    assert "dense<[" not in text
    assert len(lowered.const_args) == 1
    np.testing.assert_array_equal(
        lamina.jit(lambda x: exported.call(x) + 1)(np.ones(16, F32)), weights + 1
    )


def test_constants_are_inlined_in_the_legacy_constants_mode() -> None:
    weights = np.arange(4, dtype=F32)
    with use_simplified_jaxpr_constants(False):
        exported = lexport.export(lamina.jit(lambda x: x + weights))(np.ones(4, F32))
    assert exported.const_args == ()
    assert "dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]>" in (
        exported.mlir_module()
    )
    loaded = lexport.deserialize(exported.serialize())
    np.testing.assert_array_equal(loaded.call(np.ones(4, F32)), weights + 1)


def test_a_constant_used_by_the_function_and_its_vjp_is_stored_once() -> None:
    weights = np.linspace(0, 1, 100_000, dtype=F32)
    exported = lexport.export(lamina.jit(lambda x: jnp.sin(x * weights)))(np.ones(100_000, F32))
    once = len(exported.serialize(vjp_order=0))
    twice = len(exported.serialize(vjp_order=2))
    assert once > weights.nbytes and twice - once < weights.nbytes / 2
    # Equal bytes are one entry even when they are different arrays.
    copy = weights.copy()
    two = lexport.export(lamina.jit(lambda x: x * weights + copy))(np.ones(100_000, F32))
    assert len(two.const_args) == 2
    assert len(two.serialize()) < 2 * weights.nbytes


@pytest.mark.slow
def test_a_128_mb_constant_exports_and_reloads_stored_once(capsys: Any) -> None:
    weights = np.random.default_rng(0).standard_normal((8192, 4096), dtype=F32)
    assert weights.nbytes == 128 * MB
    x = np.random.default_rng(1).standard_normal((2, 8192), dtype=F32)

    start = time.perf_counter()
    exported = lexport.export(lamina.jit(lambda v: v @ weights))(x)
    exported_at = time.perf_counter()
    blob = exported.serialize(vjp_order=1)  # the vjp (cotangent @ weights.T) uses it too
    serialized_at = time.perf_counter()
    loaded = lexport.deserialize(blob)
    loaded_at = time.perf_counter()

    modules = len(exported.mlir_module_serialized) + len(exported.vjp().mlir_module_serialized)
    assert modules < 64 * 1024  # the modules do not hold the weights
    assert 128 * MB <= len(blob) < 128 * MB + 64 * 1024  # stored once
    # Loading copies nothing: the constant is a view of the serialized bytes.
    assert not loaded.const_args[0].flags.owndata
    assert loaded.vjp().const_args[0] is loaded.const_args[0]

    expected = x @ weights
    np.testing.assert_allclose(loaded.call(x), expected, rtol=1e-4, atol=1e-3)
    ct = np.ones((2, 4096), F32)
    grad = lamina.grad(lambda v: (loaded.call(v) * ct).sum())(x)
    np.testing.assert_allclose(grad, ct @ weights.T, rtol=1e-4, atol=1e-3)
    with capsys.disabled():
        print(
            f"\n128 MB constant: export {exported_at - start:.2f} s, serialize (vjp_order=1) "
            f"{serialized_at - exported_at:.2f} s, deserialize {loaded_at - serialized_at:.2f} s;"
            f" artifact {len(blob) / MB:.3f} MiB, modules {modules} bytes"
        )
