"""Indexing device arrays: `x[idx]`, `x.at[idx]`, `take`, eagerly on XLA and under `jit`.

Eager indexing runs each primitive (slice, dynamic_slice, gather, scatter) on the device;
concrete device arrays serve as indices and as boolean masks. Results equal JAX's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
import lamina_core.numpy as ljnp
import lamina_runtime as lr
from lamina_runtime import Array

pytestmark = pytest.mark.oracle

X = np.arange(12, dtype=np.float32).reshape(3, 4)
IDX = np.array([2, 0, -1], np.int32)

EAGER: dict[str, Callable[[Any, Any, Any], Any]] = {
    "int": lambda jnp, x, i: x[1],
    "slices": lambda jnp, x, i: x[::-1, 1:3],
    "newaxis_ellipsis": lambda jnp, x, i: x[None, ..., -1],
    "numpy_array": lambda jnp, x, i: x[np.array([0, 2])],
    "device_array": lambda jnp, x, i: x[i],
    "device_scalar": lambda jnp, x, i: x[i[0], 1:],
    "device_mask": lambda jnp, x, i: x[x > 3.0],
    "set": lambda jnp, x, i: x.at[0].set(5.0),
    "add_repeated": lambda jnp, x, i: x.at[np.array([1, 1])].add(1.0),
    "get_fill": lambda jnp, x, i: x.at[np.array([0, 7])].get(mode="fill", fill_value=-1.0),
    "take": lambda jnp, x, i: jnp.take(x, i, axis=1),
    "take_along_axis": lambda jnp, x, i: jnp.take_along_axis(x, jnp.argsort(-x, axis=1), axis=1),
}


@pytest.mark.parametrize("name", EAGER)
def test_eager_indexing_of_device_arrays_matches_jax(name: str) -> None:
    import jax
    import jax.numpy as jax_jnp

    program = EAGER[name]
    x, i = lr.device_put(X), lr.device_put(IDX)
    got = program(ljnp, x, i)
    want = program(jax_jnp, jax.device_put(X), jax.device_put(IDX))
    assert isinstance(got, Array)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_iterating_a_device_array_gives_its_rows() -> None:
    rows = list(lr.device_put(X))
    assert all(isinstance(r, Array) for r in rows)
    np.testing.assert_array_equal(np.stack([np.asarray(r) for r in rows]), X)


def test_jit_of_indexing_matches_jax() -> None:
    import jax

    def f(x: Any, i: Any) -> Any:
        return x[i], x[1:, ::2], x[i[0], ::-1], x.at[i].add(1.0), x.at[:, i[1]].max(4.0)

    got = lr.jit(f)(X, IDX)
    want = jax.jit(f)(X, IDX)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_jit_traces_the_jaxpr_jax_traces() -> None:
    import jax

    def f(x: Any, i: Any) -> Any:
        return x.at[i, 1:].set(0.0)[::-1]

    assert str(lc.make_jaxpr(f)(X, IDX)) == str(jax.make_jaxpr(f)(X, IDX))
