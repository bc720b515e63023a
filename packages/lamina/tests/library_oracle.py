"""Comparisons with JAX 0.10.2 for the library modules built on `jnp` and `lax` (`ops`, `image`,
`scipy.fft`, `scipy.signal`): a program is a function of the API module (`jax` or `lamina`)
returning the function under test, so one definition serves both libraries.

Loaded by the test modules through `load_test_module`; it is not a test module itself.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import jax
import numpy as np
import pytest

import lamina

Program = Callable[[ModuleType], Callable[..., Any]]
"""`program(api)`: the function under test, written against `api` (`jax` or `lamina`)."""


def _tolerance(dtype: np.dtype) -> float:
    if dtype.kind in "biu":
        return 0.0
    return 1e-2 if dtype.itemsize <= 2 else 2e-5


def assert_close(got: Any, want: Any, *, tol: float | None = None) -> None:
    """Leaves of `got` (Lamina's) equal `want`'s (JAX's): structure, shape, dtype, values."""
    got_leaves, got_tree = jax.tree.flatten(got)
    want_leaves, want_tree = jax.tree.flatten(want)
    assert str(got_tree) == str(want_tree)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.shape, g.dtype) == (w.shape, w.dtype)
        t = _tolerance(w.dtype) if tol is None else tol
        if t == 0.0:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=t, atol=t)


def assert_same_values(program: Program, *args: Any, tol: float | None = None) -> None:
    """Jitted, Lamina's function computes JAX's values (one compilation on each side)."""
    want = jax.jit(program(jax))(*args)
    got = lamina.jit(program(lamina))(*args)
    assert_close(got, want, tol=tol)


def assert_same_jaxpr(program: Program, *args: Any) -> None:
    """Lamina's printed jaxpr of the function is JAX's, byte for byte."""
    want = str(jax.make_jaxpr(program(jax))(*args))
    got = str(lamina.make_jaxpr(program(lamina))(*args))
    assert got == want


def assert_same_error(program: Program, *args: Any, jit: bool = False) -> None:
    """Calling the function raises JAX's exception class (by name: each library has its own
    error classes) with JAX's message."""
    theirs = jax.jit(program(jax)) if jit else program(jax)
    ours = lamina.jit(program(lamina)) if jit else program(lamina)
    with pytest.raises(Exception) as want:
        theirs(*args)
    with pytest.raises(Exception) as got:
        ours(*args)
    assert type(got.value).__name__ == type(want.value).__name__
    assert str(got.value) == str(want.value)
