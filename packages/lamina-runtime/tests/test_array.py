"""`Array`: Lamina's device array, and its interplay with NumPy and JAX."""

from __future__ import annotations

import pickle
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import lamina_runtime as lr
from lamina_core import numpy as jnp
from lamina_runtime import Array


def put(x: Any) -> Array:
    out: Array = lr.device_put(x)
    return out


@pytest.mark.oracle
@pytest.mark.parametrize(
    "value",
    [
        np.array([1.0, 2.0], np.float32),
        np.float32(3),
        np.arange(12, dtype=np.int32).reshape(3, 4),
        np.ones((2, 2), ml_dtypes.bfloat16),
        np.array([True, False]),
        np.zeros((0, 3), np.float32),
        np.arange(30, dtype=np.float32),
        np.array(2, np.uint8),
        np.complex64(1 + 2j),
    ],
    ids=lambda v: f"{np.asarray(v).dtype}{np.shape(v)}",
)
def test_repr_matches_jax(value: Any) -> None:
    import jax

    assert repr(put(value)) == repr(jax.device_put(value))


@pytest.mark.oracle
def test_weak_typed_repr_matches_jax() -> None:
    import jax.numpy as jax_jnp

    assert repr(jnp.sin(1.0)) == repr(jax_jnp.sin(1.0))


def test_properties() -> None:
    x = put(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert (x.shape, x.dtype, x.ndim, x.size, len(x)) == ((2, 3), np.dtype(np.float32), 2, 6, 2)
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert x.block_until_ready() is x
    assert x.devices() == {lr.devices()[0]}
    assert [row.tolist() for row in x] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_scalar_conversions() -> None:
    x = put(np.float32(2.5))
    assert (float(x), int(x), bool(x), x.item()) == (2.5, 2, True, 2.5)
    with pytest.raises(TypeError, match="Only scalar arrays can be converted to Python scalars"):
        float(put(np.ones(3, np.float32)))


def test_numpy_inputs_are_copied_not_aliased() -> None:
    host = np.zeros(64, np.float32)
    x = put(host)
    host[0] = 42.0
    assert np.asarray(x)[0] == 0.0


def test_jax_arrays_cross_without_copy() -> None:
    import jax

    j = jax.device_put(np.arange(4.0, dtype=np.float32))
    x = Array(j)
    assert x.jax_array is j
    assert x.unsafe_buffer_pointer() == j.unsafe_buffer_pointer()
    assert x.__jax_array__() is j


def test_pickle_round_trip() -> None:
    x = jnp.sin(put(np.arange(3, dtype=np.float32)))
    y = pickle.loads(pickle.dumps(x))
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
    assert y.aval == x.aval


def test_arrays_are_unhashable() -> None:
    with pytest.raises(TypeError, match="unhashable"):
        hash(put(np.ones(2)))


def test_operators_run_the_frontend() -> None:
    x = put(np.arange(3, dtype=np.float32))
    y = (x + 1.0) * 2.0 - x / 2.0
    assert isinstance(y, Array)
    np.testing.assert_allclose(np.asarray(y), (np.arange(3) + 1.0) * 2.0 - np.arange(3) / 2.0)
