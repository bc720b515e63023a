"""`lamina.lax.scaled_dot` and `lamina.nn.scaled_matmul` on XLA against `jax.lax.scaled_dot`:
values bit for bit, eagerly, under `jit` and under `vmap` (jaxprs and errors: lamina-core's
test_lax_scaled_dot.py and test_nn_scaled_matmul.py). JAX cannot run `jax.nn.scaled_matmul`
on the CPU; Lamina lowers it as JAX does for ROCm, as `scaled_dot` of the same operands."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import lamina

pytestmark = pytest.mark.oracle

_RS = np.random.RandomState(1)


def _f8(x: Any, dtype: Any = None) -> np.ndarray:
    return np.asarray(jnp.asarray(x, dtype or jnp.float8_e4m3fn))


def _scales(shape: tuple[int, ...]) -> np.ndarray:
    return _f8(2.0 ** _RS.randint(-4, 4, shape), jnp.float8_e8m0fnu)


A, B = _f8(_RS.randn(2, 4, 64)), _f8(_RS.randn(2, 64, 3))
SA, SB = _scales((2, 4, 2)), _scales((2, 2, 3))
A2, B2 = _f8(_RS.randn(5, 96)), _f8(_RS.randn(3, 96))
SA2, SB2 = _scales((5, 3)), _scales((3, 3))
DN = (((1,), (1,)), ((), ()))


def _scaled(**kwargs: Any) -> Callable[[Any], Callable[..., Any]]:
    def make(L: Any) -> Callable[..., Any]:
        return lambda a, b, sa, sb: L.scaled_dot(a, b, lhs_scale=sa, rhs_scale=sb, **kwargs)

    return make


CASES: list[tuple[str, Callable[[Any], Callable[..., Any]], tuple[Any, ...]]] = [
    ("bf16", _scaled(), (A, B, SA, SB)),
    ("f32", _scaled(preferred_element_type=np.float32), (A, B, SA, SB)),
    ("f16_dimension_numbers", _scaled(dimension_numbers=DN, preferred_element_type=np.float16),
     (A2, B2, SA2, SB2)),
    ("default_scales", lambda L: lambda a, b: L.scaled_dot(a, b), (A, B)),
]  # fmt: skip


@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize(("name", "make", "args"), CASES, ids=[c[0] for c in CASES])
def test_values_equal_jax_bit_for_bit(name: str, make: Any, args: Any, jitted: bool) -> None:
    f_l, f_j = make(lamina.lax), make(jax.lax)
    if jitted:
        f_l, f_j = lamina.jit(f_l), jax.jit(f_j)
    got, want = np.asarray(f_l(*args)), np.asarray(f_j(*args))
    assert got.dtype == want.dtype and got.shape == want.shape
    bits = np.uint16 if got.itemsize == 2 else np.uint32
    np.testing.assert_array_equal(got.view(bits), want.view(bits))


def test_vmap_equals_jax_bit_for_bit() -> None:
    in_axes = (0, None, 0, None)
    args = (A, B[0], SA, SB[0])
    got = lamina.jit(lamina.vmap(_scaled()(lamina.lax), in_axes=in_axes))(*args)
    want = jax.jit(jax.vmap(_scaled()(jax.lax), in_axes=in_axes))(*args)
    np.testing.assert_array_equal(np.asarray(got).view(np.uint16), np.asarray(want).view(np.uint16))


MATMUL_DN = (((2,), (2,)), ((0,), (0,)))
BT = np.ascontiguousarray(np.swapaxes(B, 1, 2))
SBT = np.ascontiguousarray(np.swapaxes(SB, 1, 2))


@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("dtype", [np.float32, jnp.bfloat16, np.float16], ids=str)
def test_scaled_matmul_equals_jax_scaled_dot(dtype: Any, jitted: bool) -> None:
    def ours(a: Any, b: Any, sa: Any, sb: Any) -> Any:
        return lamina.nn.scaled_matmul(a, b, sa, sb, preferred_element_type=dtype)

    f = lamina.jit(ours) if jitted else ours
    got = np.asarray(f(A, BT, SA, SBT))
    want = np.asarray(_scaled(dimension_numbers=MATMUL_DN, preferred_element_type=dtype)(jax.lax)(
        A, BT, SA, SBT
    ))  # fmt: skip
    assert got.dtype == want.dtype and got.shape == want.shape == (2, 4, 3)
    bits = np.uint16 if got.itemsize == 2 else np.uint32
    np.testing.assert_array_equal(got.view(bits), want.view(bits))
