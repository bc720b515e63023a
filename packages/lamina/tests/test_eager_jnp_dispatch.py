"""Eager calls of `jnp` functions on XLA: a device array passes through `asarray` without a
host round trip, and core's own jitted functions (the ones JAX jits too) run through the C++
jit dispatcher from their second call on, as `jax.numpy`'s do."""

from __future__ import annotations

import numpy as np
import pytest

import lamina
import lamina.numpy as jnp
from lamina_core.transforms._jit import Jitted

jax = pytest.importorskip("jax")


def test_asarray_of_a_device_array_is_the_array() -> None:
    x = jnp.arange(5.0)
    assert jnp.asarray(x) is x
    assert jnp.asarray(x, dtype=x.dtype) is x


def test_array_of_a_device_array_copies_it() -> None:
    x = jnp.arange(5.0)
    y = jnp.array(x)
    assert y is not x
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))


def test_asarray_converts_a_device_array_to_another_dtype() -> None:
    y = jnp.asarray(jnp.arange(4), dtype=np.float32)
    assert y.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(y), [0.0, 1.0, 2.0, 3.0])


def test_array_of_a_list_of_device_arrays_stacks_them() -> None:
    rows = [jnp.arange(3.0), jnp.ones(3)]
    got = jnp.array(rows)
    want = jax.numpy.array([jax.numpy.arange(3.0), jax.numpy.ones(3)])
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert got.dtype == want.dtype


def _runner(fn: Jitted) -> object:
    return fn._toplevel


def test_a_core_jitted_function_uses_the_dispatcher_from_its_second_call() -> None:
    traces = []

    def double_plus_one(x: object) -> object:
        traces.append(1)
        return x * 2 + 1  # type: ignore[operator]

    fn = Jitted(double_plus_one)
    x = jnp.arange(4.0)
    first = fn(x)
    assert _runner(fn) is None  # one call: no runner made
    second, third = fn(x), fn(x)
    assert _runner(fn) is not None
    for out in (first, second, third):
        np.testing.assert_array_equal(np.asarray(out), [1.0, 3.0, 5.0, 7.0])
    # One trace: the dispatcher's runner finds the core trace in the function's caches (jit's
    # traces are keyed on the function, as JAX's); later calls trace nothing.
    assert len(traces) == 1
    fn(x)
    assert len(traces) == 1


def test_a_core_jitted_function_stays_a_jit_equation_under_a_trace() -> None:
    fn = Jitted(lambda x: x + 1)
    fn(jnp.ones(2))
    fn(jnp.ones(2))  # the runner exists now; tracing must not use it
    assert "jit[" in str(lamina.make_jaxpr(fn)(np.ones(2, np.float32)))


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: m.sinc(x),
        lambda m, x: m.pad(x, (2, 1), mode="reflect"),
        lambda m, x: m.convolve(x, x[:3]),
        lambda m, x: m.searchsorted(m.sort(x), x[:4]),
        lambda m, x: m.histogram(x, bins=4)[0],
    ],
    ids=["sinc", "pad", "convolve", "searchsorted", "histogram"],
)
def test_repeated_eager_calls_match_jax(call: object) -> None:
    x = np.linspace(-2.0, 2.0, 9, dtype=np.float32)
    want = np.asarray(call(jax.numpy, jax.numpy.asarray(x)))  # type: ignore[operator]
    mine = jnp.asarray(x)
    for _ in range(3):
        got = np.asarray(call(jnp, mine))  # type: ignore[operator]
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
