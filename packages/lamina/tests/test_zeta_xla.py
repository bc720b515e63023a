"""`lax.zeta` and `lax.polygamma` on XLA against JAX 0.10.2: the lowered module text equals
`jax.jit(f).lower(...).as_text()` (`chlo.zeta`, `chlo.polygamma`), and jitted programs, their
derivatives (polygamma's, digamma's and lgamma's second) and batches compute JAX's numbers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import jax
import numpy as np
import pytest
from jax._src import config as jax_config

import lamina

pytestmark = pytest.mark.oracle

X = np.linspace(1.0, 9.0, 17).astype(np.float32)
Q = np.linspace(-2.5, 6.0, 17).astype(np.float32)


@pytest.fixture(autouse=True)
def _literal_constants() -> Iterator[None]:
    # Lamina stages constants as literals: JAX's modules match with its simplified form.
    with jax_config.use_simplified_jaxpr_constants(True):
        yield


def _programs(lax: Any, api: Any) -> dict[str, Callable[..., Any]]:
    return {
        "zeta": lax.zeta,
        "polygamma": lambda m, x: lax.polygamma(lax.floor(m), x),
        "grad_polygamma": api.vmap(api.grad(lax.polygamma, argnums=1)),
        "zeta_unbatched_q": api.vmap(lax.zeta, in_axes=(0, None)),
        "grad_grad_lgamma": lambda m, x: api.vmap(api.grad(api.grad(lax.lgamma)))(x) * m,
        "mixed": lambda x, q: lax.zeta(x + 1, q * q) * lax.polygamma(lax.floor(x), q),
    }


@pytest.mark.parametrize("case", sorted(_programs(jax.lax, jax)))
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_lowering_is_jaxs_and_runs_as_jax(case: str, dtype: Any) -> None:
    ours, theirs = _programs(lamina.lax, lamina)[case], _programs(jax.lax, jax)[case]
    x, q = X.astype(dtype), Q.astype(dtype)
    if case == "zeta_unbatched_q":
        q = q[3]
    text, want = lamina.jit(ours).lower(x, q).as_text(), jax.jit(theirs).lower(x, q).as_text()
    assert text == want, f"\n--- lamina ---\n{text}\n--- jax ---\n{want}"
    got, expected = np.asarray(lamina.jit(ours)(x, q)), np.asarray(jax.jit(theirs)(x, q))
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_float64_lowering_is_jaxs() -> None:
    x, q = X.astype(np.float64), Q.astype(np.float64)
    with lamina.config(jax_enable_x64=True), jax_config.enable_x64(True):
        for name in ("zeta", "polygamma"):
            ours, theirs = getattr(lamina.lax, name), getattr(jax.lax, name)
            text = lamina.jit(ours).lower(x, q).as_text()
            assert text == jax.jit(theirs).lower(x, q).as_text()
            np.testing.assert_array_equal(
                np.asarray(lamina.jit(ours)(x, q)), np.asarray(jax.jit(theirs)(x, q))
            )
