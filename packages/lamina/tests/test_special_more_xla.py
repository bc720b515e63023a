"""The incomplete gamma and beta functions on XLA against JAX 0.10.2: `lax.igamma`, `igammac`,
`igamma_grad_a`, `betainc`, `random_gamma_grad` and `scipy.special.gammainc`, `gammaincc`,
`betainc`, jitted and eager, their derivatives and batches, compute JAX's numbers (the
lowerings run XLA's series and continued fractions, as JAX's do)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest
from jax._src import config as jax_config

import lamina

pytestmark = pytest.mark.oracle

_AX = np.array([0.0, 1e-3, 0.3, 1.0, 1.7, 4.0, 12.0, 55.0, 150.0, -1.0, np.inf, np.nan])
A, X = (v.ravel() for v in np.meshgrid(_AX, _AX, indexing="ij"))
_BX = np.array([0.0, 0.05, 0.3, 0.5, 0.77, 0.99, 1.0, 1.2, np.nan])
_AB = np.array([0.0, 0.2, 1.0, 2.5, 30.0, np.inf])
BA, BB, BXS = (v.ravel() for v in np.meshgrid(_AB, _AB, _BX, indexing="ij"))


def _programs(lax: Any, special: Any, api: Any) -> dict[str, tuple[Callable[..., Any], int]]:
    return {
        "igamma": (lax.igamma, 2),
        "igammac": (lax.igammac, 2),
        "igamma_grad_a": (lax.igamma_grad_a, 2),
        "random_gamma_grad": (lax.random_gamma_grad, 2),
        "betainc": (lax.betainc, 3),
        "gammainc": (special.gammainc, 2),
        "gammaincc": (special.gammaincc, 2),
        "scipy_betainc": (special.betainc, 3),
        "grad_igamma": (api.vmap(api.grad(lax.igamma, (0, 1))), 2),
        "grad_igammac": (api.vmap(api.grad(lax.igammac, (0, 1))), 2),
        "grad_betainc": (api.vmap(api.grad(lax.betainc, 2)), 3),
        "vmap_igamma": (api.vmap(lax.igamma, (0, None)), 2),
    }


def _args(n: int, dtype: Any) -> tuple[np.ndarray, ...]:
    return tuple(v.astype(dtype) for v in ((BA, BB, BXS) if n == 3 else (A, X)))


def _x64(on: bool) -> Any:
    stack = contextlib.ExitStack()
    if on:
        stack.enter_context(lamina.config(jax_enable_x64=True))
        stack.enter_context(jax_config.enable_x64(True))
    return stack


_DEFAULT = {("igamma", np.float32), ("betainc", np.float64)}
"""The cases the default run compiles (each while loop takes XLA a second or two)."""


def _cases() -> list[Any]:
    cases = [
        (case, dtype)
        for dtype in (np.float32, np.float64, np.float16)
        for case in sorted(_programs(jax.lax, jax.scipy.special, jax))
    ]
    return [
        pytest.param(
            case,
            dtype,
            id=f"{case}-{dtype.__name__}",
            marks=[] if (case, dtype) in _DEFAULT else [pytest.mark.slow],
        )
        for case, dtype in cases
    ]


@pytest.mark.parametrize(("case", "dtype"), _cases())
def test_values_are_jaxs(case: str, dtype: Any) -> None:
    ours, n = _programs(lamina.lax, lamina.scipy.special, lamina)[case]
    theirs, _ = _programs(jax.lax, jax.scipy.special, jax)[case]
    args = _args(n, dtype)
    if case == "vmap_igamma":
        args = (args[0], args[1][3])
    with _x64(dtype == np.float64):
        got, want = lamina.jit(ours)(*args), jax.jit(theirs)(*args)
        eager = ours(*args)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    # Eagerly each op runs alone: XLA's fusion of the jitted program may round differently.
    rtol = {np.float32: 1e-5, np.float64: 1e-13, np.float16: 2e-2}[dtype]
    for e, w in zip(jax.tree.leaves(eager), jax.tree.leaves(want), strict=True):
        np.testing.assert_allclose(np.asarray(e), np.asarray(w), rtol=rtol, atol=rtol * 1e-6)


def test_jaxprs_are_jaxs() -> None:
    a = np.linspace(0.5, 3.0, 6, dtype=np.float32)
    for fn, gn, args in (
        (lamina.lax.random_gamma_grad, jax.lax.random_gamma_grad, (a, a[::-1])),
        (lamina.scipy.special.gammainc, jax.scipy.special.gammainc, (2, a)),
        (lamina.scipy.special.betainc, jax.scipy.special.betainc, (1, a, a / 4)),
    ):
        assert str(lamina.make_jaxpr(fn)(*args)) == str(jax.make_jaxpr(gn)(*args))
