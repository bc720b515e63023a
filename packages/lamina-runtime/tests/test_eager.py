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
