"""`nn.scaled_dot_general` against `jax.nn.scaled_dot_general`: without configs (`dot_general`:
printed jaxprs and values), and block-quantized (mxfp8, nvfp4): printed jaxprs of the function
and of its gradient (the custom VJP), JAX's errors and warnings. JAX 0.10.2 cannot run the
quantized dot on the CPU (its `scaled_matmul` primitive has no CPU lowering), so values are
compared with JAX's own quantizer followed by `jax.lax.scaled_dot` (how JAX lowers it for
ROCm), and gradients with the exact `dot_general` gradient to quantization tolerance."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_core import nn as lnn

pytestmark = pytest.mark.oracle

_RS = np.random.RandomState(4)
BATCHED = (((2,), (2,)), ((0,), (0,)))


def _configs(nn: Any, mode: str) -> list[Any]:
    return [nn.get_scaled_dot_general_config(mode)] * 3


def _jax() -> Any:
    return pytest.importorskip("jax")


def _assert_printed(make: Callable[[Any], Callable[..., Any]], *args: Any) -> None:
    jax = _jax()
    ours = lamina_core.make_jaxpr(make(lnn))(*args)
    theirs = jax.make_jaxpr(make(jax.nn))(*args)
    assert str(ours) == str(theirs), f"\n--- lamina ---\n{ours}\n--- jax ---\n{theirs}"


@pytest.mark.parametrize(
    ("dn", "shapes", "dtype"),
    [
        (BATCHED, ((2, 4, 5), (2, 3, 5)), np.float32),
        ((((1,), (0,)), ((), ())), ((4, 5), (5, 3)), np.float32),
        ((((1,), (0,)), ((), ())), ((4, 5), (5, 3)), None),
    ],
)
def test_without_configs_is_dot_general(dn: Any, shapes: Any, dtype: Any) -> None:
    jax = _jax()
    a, b = (_RS.randn(*s).astype(np.float32) for s in shapes)

    def make(nn: Any) -> Callable[..., Any]:
        return lambda x, y: nn.scaled_dot_general(x, y, dn, preferred_element_type=dtype)

    _assert_printed(make, a, b)
    want = np.asarray(jax.jit(make(jax.nn))(a, b))
    for got in (make(lnn)(a, b), lamina_core.jit(make(lnn))(a, b)):
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)


def _reference(a: np.ndarray, b: np.ndarray, mode: str) -> np.ndarray:
    """JAX's quantizer, then `jax.lax.scaled_dot` (and nvfp4's global scales)."""
    jax = _jax()
    from jax._src.cudnn import scaled_matmul_stablehlo as cudnn

    config = jax.nn.get_scaled_dot_general_config(mode)

    def reference(a: Any, b: Any) -> Any:  # one jit: JAX compiles op by op otherwise (slowly)
        quantize: Any = cudnn.quantize  # JAX's helper is unannotated
        aq, sa = quantize(a, config)
        bq, sb = quantize(b, config)
        out = jax.lax.scaled_dot(
            aq, bq, lhs_scale=sa, rhs_scale=sb, dimension_numbers=BATCHED,
            preferred_element_type=np.float32,
        )  # fmt: skip
        if mode == "nvfp4":
            out = out * (config.global_scale * config.global_scale)
        return out

    return np.asarray(jax.jit(reference)(a, b))


@pytest.mark.parametrize("mode", ["mxfp8", "nvfp4"])
def test_quantized_printed_and_values(mode: str) -> None:
    a = (_RS.randn(2, 4, 64) * 3).astype(np.float32)
    b = _RS.randn(2, 3, 64).astype(np.float32)

    def make(nn: Any) -> Callable[..., Any]:
        return lambda x, y: nn.scaled_dot_general(x, y, BATCHED, configs=_configs(nn, mode))

    _assert_printed(make, a, b)
    want = _reference(a, b, mode)
    for got in (make(lnn)(a, b), lamina_core.jit(make(lnn))(a, b)):
        assert np.asarray(got).dtype == np.float32 and np.asarray(got).shape == (2, 4, 3)
        np.testing.assert_array_equal(np.asarray(got), want)
    exact = np.einsum("bmk,bnk->bmn", a, b)
    np.testing.assert_allclose(np.asarray(make(lnn)(a, b)), exact, atol=0.3 * np.abs(exact).max())


def test_quantized_unbatched_and_permuted() -> None:
    # No batch dimensions (a trailing one is added and squeezed), contraction not last.
    a = _RS.randn(64, 4).astype(np.float32)
    b = _RS.randn(3, 64).astype(np.float32)
    dn = (((0,), (1,)), ((), ()))

    def make(nn: Any) -> Callable[..., Any]:
        return lambda x, y: nn.scaled_dot_general(x, y, dn, configs=_configs(nn, "mxfp8"))

    _assert_printed(make, a, b)
    got = np.asarray(make(lnn)(a, b))
    want = _reference(a.T[None], b[None], "mxfp8")[0]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode", ["mxfp8", "nvfp4"])
def test_quantized_gradients(mode: str) -> None:
    a = _RS.randn(1, 32, 64).astype(np.float32)
    b = _RS.randn(1, 32, 64).astype(np.float32)
    if mode == "nvfp4":
        a[0, 0, 0] = 1e4  # beyond global_scale * 6 * 448: its gradient is zeroed (STE)

    def make(nn: Any) -> Callable[..., Any]:
        configs = _configs(nn, mode)

        def loss(x: Any, y: Any) -> Any:
            return nn.scaled_dot_general(x, y, BATCHED, configs=configs).sum()

        return loss

    jax = _jax()
    ours = lamina_core.make_jaxpr(lamina_core.grad(make(lnn), argnums=(0, 1)))(a, b)
    theirs = jax.make_jaxpr(jax.grad(make(jax.nn), argnums=(0, 1)))(a, b)
    assert str(ours) == str(theirs), f"\n--- lamina ---\n{ours}\n--- jax ---\n{theirs}"
    ga, gb = (np.asarray(g) for g in lamina_core.grad(make(lnn), argnums=(0, 1))(a, b))
    exact_a = np.broadcast_to(b.sum(axis=1, keepdims=True), a.shape)
    exact_b = np.broadcast_to(a.sum(axis=1, keepdims=True), b.shape)
    if mode == "nvfp4":
        assert ga[0, 0, 0] == 0.0
        exact_a = exact_a.copy()
        exact_a[0, 0, 0] = 0.0
        exact_b = np.broadcast_to(np.where(a > 2688, 0, a).sum(axis=1, keepdims=True), b.shape)
        np.testing.assert_allclose(ga, exact_a, atol=0.2 * np.abs(exact_a).max())
    else:
        np.testing.assert_allclose(ga, exact_a, atol=0.2 * np.abs(exact_a).max())
        np.testing.assert_allclose(gb, exact_b, atol=0.2 * np.abs(exact_b).max())


def test_bad_preferred_element_type_is_jaxs_error() -> None:
    jax = _jax()
    a = np.ones((1, 4, 32), np.float32)
    with pytest.raises(TypeError) as want:
        jax.nn.scaled_dot_general(a, a, BATCHED, np.int32, configs=_configs(jax.nn, "mxfp8"))
    with pytest.raises(TypeError) as got:
        lnn.scaled_dot_general(a, a, BATCHED, np.int32, configs=_configs(lnn, "mxfp8"))
    assert str(got.value) == str(want.value)


def test_implementation_is_deprecated() -> None:
    jax = _jax()
    a = np.ones((2, 3), np.float32)
    dn = (((1,), (1,)), ((), ()))
    with pytest.warns(DeprecationWarning, match="Backend selector, now ignored") as want:
        jax.nn.scaled_dot_general(a, a, dn, implementation="cudnn")
    with pytest.warns(DeprecationWarning, match="Backend selector, now ignored") as got:
        out = lnn.scaled_dot_general(a, a, dn, implementation="cudnn")
    assert str(got[0].message) == str(want[0].message)
    np.testing.assert_allclose(np.asarray(out), a @ a.T)
