"""`lax.bessel_i0e` and `lax.bessel_i1e` on XLA against JAX 0.10.2: the lowered module text
equals `jax.jit(f).lower(...).as_text()` (`chlo.bessel_i1e`; Cephes' expansions for
`bessel_i0e`, per dtype), and jitted programs, their derivatives and batches compute JAX's
numbers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import jax
import numpy as np
import pytest
from jax._src import config as jax_config

import lamina

pytestmark = pytest.mark.oracle

X = np.linspace(-20.0, 20.0, 41).astype(np.float32)


@pytest.fixture(autouse=True)
def _literal_constants() -> Iterator[None]:
    # Lamina stages constants as literals: JAX's modules match with its simplified form.
    with jax_config.use_simplified_jaxpr_constants(True):
        yield


def _programs(lax: Any, api: Any) -> dict[str, Callable[..., Any]]:
    return {
        "i0e": lax.bessel_i0e,
        "i1e": lax.bessel_i1e,
        "grad_i0e": api.vmap(api.grad(lax.bessel_i0e)),
        "grad_i1e": api.vmap(api.grad(lax.bessel_i1e)),
        "mixed": lambda x: lax.bessel_i0e(x) * lax.bessel_i1e(x * 0.5),
    }


@pytest.mark.parametrize("case", sorted(_programs(jax.lax, jax)))
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_lowering_is_jaxs_and_runs_as_jax(case: str, dtype: Any) -> None:
    ours, theirs = _programs(lamina.lax, lamina)[case], _programs(jax.lax, jax)[case]
    x = X.astype(dtype)
    text, want = lamina.jit(ours).lower(x).as_text(), jax.jit(theirs).lower(x).as_text()
    assert text == want, f"\n--- lamina ---\n{text}\n--- jax ---\n{want}"
    got, expected = np.asarray(lamina.jit(ours)(x)), np.asarray(jax.jit(theirs)(x))
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_float64_lowering_is_jaxs() -> None:
    x = np.linspace(-50.0, 50.0, 11)
    with lamina.config(jax_enable_x64=True), jax_config.enable_x64(True):
        for name in ("bessel_i0e", "bessel_i1e"):
            ours, theirs = getattr(lamina.lax, name), getattr(jax.lax, name)
            assert lamina.jit(ours).lower(x).as_text() == jax.jit(theirs).lower(x).as_text()
            np.testing.assert_array_equal(
                np.asarray(lamina.jit(ours)(x)), np.asarray(jax.jit(theirs)(x))
            )
