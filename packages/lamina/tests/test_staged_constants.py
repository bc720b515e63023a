"""`jnp.array`/`jnp.asarray` of host data under a trace, against JAX 0.10.2: the result is a
tracer standing for the constant (JAX's `lax.stage`), so indexing it with traced values
stages, and a constant made outside a loop body reaches the body as JAX's does. Compared with
JAX's simplified constants, the form Lamina prints."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import jax
import numpy as np
import pytest
from jax._src import config as jax_config

import lamina

pytestmark = pytest.mark.oracle

DATA = np.arange(6.0, dtype=np.float32).reshape(3, 2)


@pytest.fixture(autouse=True)
def _literal_constants() -> Iterator[None]:
    with jax_config.use_simplified_jaxpr_constants(True):
        yield


def _programs(lib: Any) -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    jnp = lib.numpy
    i = np.int32(1)
    return {
        "index_asarray": (lambda k: jnp.asarray(DATA)[k, 1], (i,)),
        "index_array": (lambda k: jnp.array(np.arange(5.0))[k], (i,)),
        "list_with_dtype": (lambda k: jnp.array([1.0, 2.0, 3.0], dtype=np.float32)[k], (i,)),
        "returned": (lambda: jnp.array(DATA), ()),
        "arithmetic": (lambda x: jnp.asarray(DATA) * x, (np.float32(2.0),)),
        "scan_body_const": (
            lambda x: lib.lax.fori_loop(
                0, 3, lambda j, c: c + jnp.asarray(np.ones(2, np.float32))[j % 2], x
            ),
            (np.float32(0.0),),
        ),
        "closed_over_by_loop": (
            lambda x: (lambda table: lib.lax.fori_loop(0, 3, lambda j, c: c * table[j], x))(
                jnp.array([1.0, 2.0, 3.0], dtype=np.float32)
            ),
            (np.float32(1.5),),
        ),
        "grad": (
            lib.grad(lambda x: (jnp.asarray(DATA) * x).sum()),
            (np.float32(1.0),),
        ),
        "vmap_index": (lib.vmap(lambda k: jnp.asarray(DATA)[k]), (np.arange(3, dtype=np.int32),)),
    }


@pytest.mark.parametrize("name", sorted(_programs(jax)))
def test_host_data_under_a_trace_as_jax(name: str) -> None:
    ours, args = _programs(lamina)[name]
    theirs, _ = _programs(jax)[name]
    assert str(lamina.make_jaxpr(ours)(*args)) == str(jax.make_jaxpr(theirs)(*args))
    np.testing.assert_allclose(
        np.asarray(lamina.jit(ours)(*args)), np.asarray(jax.jit(theirs)(*args)), rtol=1e-6
    )


def test_outside_any_trace_the_result_is_a_device_array() -> None:
    out = lamina.numpy.asarray(DATA)
    assert isinstance(out, lamina.Array) and out.shape == (3, 2)
    np.testing.assert_array_equal(np.asarray(out), DATA)


def test_a_staged_constant_is_not_concrete_as_jax() -> None:
    def f(lib: Any) -> Any:
        return lib.jit(lambda: int(lib.numpy.asarray(np.array([3]))[0]))()

    with pytest.raises(jax.errors.ConcretizationTypeError):
        f(jax)
    with pytest.raises(lamina.errors.ConcretizationTypeError):
        f(lamina)
