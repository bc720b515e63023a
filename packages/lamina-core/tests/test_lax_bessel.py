"""`lax.bessel_i0e` and `lax.bessel_i1e` against JAX 0.10.2: printed jaxprs (also of their
derivatives and batches), values (Lamina's float64 references against XLA's), JAX's errors, the
jvp rules against finite differences and vmap against a Python loop; and the traced lowering of
`bessel_i0e`, Cephes' expansions, against JAX's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core import lax as ll
from lamina_core.config._config import config
from lamina_core.lax._bessel import i0e_expansion

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle
jl = jax.lax

NAMES = ["bessel_i0e", "bessel_i1e"]
GRID = np.concatenate(
    [np.linspace(-12.0, 12.0, 49), [0.0, 1e-9, -1e-9, 7.99, 8.01, 29.5, 31.0, -60.0, 1e4]]
).astype(np.float32)
SPECIAL = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0], np.float32)


def _same_jaxpr(ours: Callable[..., Any], theirs: Callable[..., Any], *args: Any) -> None:
    mine, want = str(lc.make_jaxpr(ours)(*args)), str(jax.make_jaxpr(theirs)(*args))
    assert mine == want, f"\n--- lamina ---\n{mine}\n--- jax ---\n{want}"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, "bfloat16"])
def test_values_and_jaxprs_are_jaxs(name: str, dtype: Any) -> None:
    ours, theirs = getattr(ll, name), getattr(jl, name)
    x = GRID.astype(dtype)
    _same_jaxpr(ours, theirs, x)
    got, want = np.asarray(ours(x)), np.asarray(jax.jit(theirs)(x))
    assert got.dtype == want.dtype
    tol = 2e-6 if dtype == np.float32 else 1e-2
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=tol, atol=tol)
    # XLA's expansion gives i0e(0) one ulp above 1: the references are exact.
    got, want = np.asarray(ours(SPECIAL)), np.asarray(jax.jit(theirs)(SPECIAL))
    np.testing.assert_allclose(got, want, rtol=2e-7, atol=0)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("name", NAMES)
def test_float64_values_are_jaxs(name: str) -> None:
    from jax._src import config as jax_config

    x = np.concatenate([np.linspace(-45.0, 45.0, 181), [1e-300, 1e300]])
    with config(jax_enable_x64=True), jax_config.enable_x64(True):
        got = np.asarray(getattr(ll, name)(x))
        want = np.asarray(jax.jit(getattr(jl, name))(x))
    assert got.dtype == want.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("x", [np.int32(1), np.complex64(1), True])
def test_errors_are_jaxs(name: str, x: Any) -> None:
    with pytest.raises(TypeError) as theirs:
        getattr(jl, name)(x)
    with pytest.raises(TypeError) as mine:
        getattr(ll, name)(x)
    assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("x", [1.0, np.float32(-2.5), np.float32(1e-9), np.float16(3.0)])
def test_grad_prints_and_computes_as_jax(name: str, x: Any) -> None:
    ours, theirs = lc.grad(getattr(ll, name)), jax.grad(getattr(jl, name))
    _same_jaxpr(ours, theirs, x)
    # The slopes subtract nearby values: a few ulps of the operands show.
    tol = 1e-2 if isinstance(x, np.float16) else 1e-5
    np.testing.assert_allclose(np.float32(ours(x)), np.float32(jax.jit(theirs)(x)), rtol=tol)


@pytest.mark.parametrize("name", NAMES)
def test_jvp_matches_finite_differences_and_jax(name: str) -> None:
    ours, theirs = getattr(ll, name), getattr(jl, name)
    x = np.array([-9.0, -3.0, -0.5, 0.25, 1.0, 4.0, 8.5, 20.0], np.float32)
    t = np.linspace(0.5, 1.5, x.size).astype(np.float32)
    _same_jaxpr(
        lambda a, b: lc.jvp(ours, (a,), (b,)), lambda a, b: jax.jvp(theirs, (a,), (b,)), x, t
    )
    _, tangent = lc.jvp(ours, (x,), (t,))
    np.testing.assert_allclose(
        np.asarray(tangent), np.asarray(jax.jvp(theirs, (x,), (t,))[1]), rtol=1e-5, atol=1e-7
    )
    # Central differences of the float64 references.
    eps, x64 = 1e-4, x.astype(np.float64)
    with config(jax_enable_x64=True):
        fd = (np.asarray(ours(x64 + eps * t)) - np.asarray(ours(x64 - eps * t))) / (2 * eps)
    np.testing.assert_allclose(np.asarray(tangent), fd, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("axis", [0, 1])
def test_vmap_is_jaxs_and_a_loop(name: str, axis: int) -> None:
    ours, theirs = getattr(ll, name), getattr(jl, name)
    x = GRID[:48].reshape(6, 8)
    _same_jaxpr(lc.vmap(ours, in_axes=axis), jax.vmap(theirs, in_axes=axis), x)
    got = np.asarray(lc.vmap(ours, in_axes=axis)(x))
    rows = np.stack([np.asarray(ours(np.take(x, i, axis))) for i in range(x.shape[axis])])
    np.testing.assert_array_equal(got, rows)
    vg = lc.vmap(lc.grad(ours))
    _same_jaxpr(vg, jax.vmap(jax.grad(theirs)), x[0])


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_i0e_expansion_is_jaxs_decomposition(dtype: Any) -> None:
    from jax._src.lax import special

    x = GRID.astype(dtype)
    _same_jaxpr(i0e_expansion, special.bessel_i0e_impl, x)
    # It computes i0e too: the references agree with it.
    np.testing.assert_allclose(
        np.asarray(i0e_expansion(x)).astype(np.float32),
        np.asarray(ll.bessel_i0e(x)).astype(np.float32),
        rtol=1e-5 if dtype == np.float32 else 1e-2,
    )
