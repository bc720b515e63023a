"""Lowering of host callbacks: the custom call JAX emits, the recorded Python functions, and
`tokens_made_inside` for modules with ordered effects."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core.callbacks._callbacks import io_callback, pure_callback
from lamina_core.callbacks._debugging import debug_print
from lamina_mlir import lower_jaxpr_to_module, tokens_made_inside

f32 = np.float32


def _sin(x: Any) -> Any:
    return np.sin(x)


def test_callbacks_are_recorded_in_index_order() -> None:
    def f(x: Any) -> Any:
        y = pure_callback(_sin, lc.ShapeDtypeStruct((3,), f32), x)
        debug_print("{}", y)
        return y

    lowered = lower_jaxpr_to_module(lc.make_jaxpr(f)(np.ones(3, f32)), module_name="jit_f")
    text = lowered.as_text()
    assert text.count("@xla_ffi_python_cpu_callback") == 2
    assert "index = 0 : ui64" in text and "index = 1 : ui64" in text
    assert len(lowered.host_callbacks) == 2
    (out,) = lowered.host_callbacks[0](np.zeros(3, f32))
    np.testing.assert_array_equal(out, np.zeros(3, f32))


@pytest.mark.oracle
def test_module_text_matches_jax() -> None:
    jax = pytest.importorskip("jax")

    def lf(x: Any) -> Any:
        return pure_callback(_sin, lc.ShapeDtypeStruct((3,), f32), x)

    def jf(x: Any) -> Any:
        sd = jax.ShapeDtypeStruct((3,), f32)
        return jax.pure_callback(_sin, sd, x)

    x = np.ones(3, f32)
    got = lower_jaxpr_to_module(lc.make_jaxpr(lf)(x), module_name="jit_lf").as_text()
    want = jax.jit(jf).lower(x).as_text().replace("@jit_jf", "@jit_lf")
    assert got == want


def test_tokens_made_inside() -> None:
    def f(x: Any) -> Any:
        return io_callback(_sin, lc.ShapeDtypeStruct((), f32), x, ordered=True)

    lowered = lower_jaxpr_to_module(lc.make_jaxpr(f)(f32(1)), module_name="jit_f")
    assert "%arg0: !stablehlo.token {jax.token = true}" in lowered.as_text()
    inside = tokens_made_inside(lowered)
    text = inside.as_text()
    assert "func.func public @main(%arg0: tensor<f32>) -> (tensor<f32>" in text
    assert "stablehlo.create_token" in text and "call @main_with_tokens" in text
    assert inside.host_callbacks == lowered.host_callbacks
    plain = lower_jaxpr_to_module(lc.make_jaxpr(lambda x: x + 1)(f32(1)), module_name="jit_g")
    assert tokens_made_inside(plain) is plain
