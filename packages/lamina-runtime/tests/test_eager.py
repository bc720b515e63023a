"""Eager results: what the NumPy frontend returns outside any trace is a device `Array`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from lamina_core import numpy as jnp
from lamina_runtime import Array


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.asarray(2),
        lambda m: m.asarray(2.5),
        lambda m: m.array(True),
        lambda m: m.asarray(np.ones(3)),  # float64 becomes float32, as in JAX
        lambda m: m.array(np.arange(3, dtype=np.int64)),
        lambda m: m.array([1, 2, 3]),
        lambda m: m.int32(7),
        lambda m: m.float32([1, 2]),
        lambda m: m.ones(()),
        lambda m: m.full((), 3.0),
        lambda m: m.zeros((), np.int8),
        lambda m: m.asarray(2) + 1,
        lambda m: m.ones(()) * 2,
    ],
)
def test_frontend_results_at_top_level_are_device_arrays(make: Any) -> None:
    import jax.numpy as jax_numpy

    got, want = make(jnp), make(jax_numpy)
    assert type(got) is Array
    assert repr(got) == repr(want)


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: m.sum(x),
        lambda m, x: m.sum(x, axis=0, keepdims=True),
        lambda m, x: m.sum(x, 1, np.int32),
        lambda m, x: m.sum(x, axis=(0, 1), where=x > 1),
        lambda m, x: m.prod(x, axis=1, initial=2.0),
        lambda m, x: m.max(x, axis=0),
        lambda m, x: m.mean(x, axis=1),
        lambda m, x: m.any(x > 2, axis=0),
        lambda m, x: m.matmul(x, x.T),
        lambda m, x: m.dot(x, x.T, preferred_element_type=np.float32),
        lambda m, x: m.sum(x, axis=[0, 1]),  # an unhashable static: the function runs as it is
    ],
)
def test_reductions_and_products_at_top_level_match_jax(call: Any) -> None:
    import jax.numpy as jax_numpy

    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    for _ in range(2):  # the second call is repeated by C++ dispatch
        got, want = call(jnp, jnp.asarray(host)), call(jax_numpy, jax_numpy.asarray(host))
        assert type(got) is Array
        assert repr(got) == repr(want)


def test_a_reduction_of_a_non_array_names_the_function() -> None:
    with pytest.raises(TypeError, match="sum requires ndarray or scalar arguments"):
        jnp.sum("a")


def test_eager_dispatch_keys_do_not_grow_with_arrays_made_anew() -> None:
    # Each device_put makes a new Array; its aval must be the canonical object for its type,
    # or the identity-keyed fast path would add an entry per call (a leak seen under grad).
    from lamina_core import lax
    from lamina_runtime import device_put
    from lamina_runtime.eager import XLA_EAGER

    x = device_put(np.ones(4, np.float32))
    lax.mul(device_put(np.ones(4, np.float32)), x)
    before = len(XLA_EAGER._by_aval_id)  # type: ignore[attr-defined]  # the XLA evaluator's cache
    for _ in range(20):
        lax.mul(device_put(np.ones(4, np.float32)), x)
    assert len(XLA_EAGER._by_aval_id) == before  # type: ignore[attr-defined]  # its cache
