"""`jnp.searchsorted` against JAX's and NumPy's: sides, NaNs, complex keys, `sorter`, empty
arrays, the methods, errors, and under `jit` and `vmap`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lamina_core as lc
import lamina_core.numpy as lnp

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle
jnp = jax.numpy


def _sorted_with_ties_and_nans(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = np.sort(rng.standard_normal(17).astype(np.float32))
    a[5] = a[6]
    return np.concatenate([a, [np.nan, np.nan]]).astype(np.float32)


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("method", ["scan", "scan_unrolled", "sort", "compare_all"])
def test_float_queries_with_ties_and_nans(side: str, method: str) -> None:
    a = _sorted_with_ties_and_nans(0)
    v = np.array([a[5], np.nan, -np.inf, np.inf, -0.0, 0.0, 0.3, -1.5], np.float32)
    got = lnp.searchsorted(a, v, side=side, method=method)
    np.testing.assert_array_equal(got, jnp.searchsorted(a, v, side=side, method=method))
    np.testing.assert_array_equal(got, np.searchsorted(a, v, side=side))  # type: ignore[call-overload]
    assert got.dtype == np.int32


def test_complex_ints_sorter_and_empty() -> None:
    rng = np.random.default_rng(1)
    c = np.sort_complex(rng.standard_normal(6) + 1j * rng.standard_normal(6)).astype(np.complex64)
    q = (rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))).astype(np.complex64)
    np.testing.assert_array_equal(lnp.searchsorted(c, q), jnp.searchsorted(c, q))
    np.testing.assert_array_equal(lnp.searchsorted(np.arange(5), 2.5), 3)
    a, order = np.array([3, 1, 2]), np.array([1, 2, 0])
    np.testing.assert_array_equal(lnp.searchsorted(a, 2, sorter=order), 1)
    np.testing.assert_array_equal(lnp.searchsorted(np.array([], np.float32), np.ones(2)), [0, 0])


def test_errors_are_jaxs() -> None:
    calls: list[Callable[[Any], Any]] = [
        lambda m: m.searchsorted(np.ones((2, 2)), 1.0),
        lambda m: m.searchsorted(np.ones(2), 1.0, side="middle"),
    ]
    for call in calls:
        with pytest.raises(ValueError) as expected:
            call(jnp)
        with pytest.raises(ValueError) as got:
            call(lnp)
        assert str(got.value) == str(expected.value)


def test_under_jit_and_vmap() -> None:
    a = np.linspace(0.0, 1.0, 9, dtype=np.float32)
    v = np.array([[0.1, 0.5], [0.95, -1.0]], np.float32)
    f = lc.jit(lambda a, v: lnp.searchsorted(a, v, side="right"))
    np.testing.assert_array_equal(f(a, v), np.searchsorted(a, v, side="right"))
    batched = lc.vmap(lambda row: lnp.searchsorted(a, row))(v)
    np.testing.assert_array_equal(batched, np.stack([np.searchsorted(a, r) for r in v]))


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(-5, 5), min_size=0, max_size=12),
    st.lists(st.integers(-7, 7), min_size=1, max_size=5),
    st.sampled_from(["left", "right"]),
)
def test_integers_equal_numpy(a: list[int], v: list[int], side: Any) -> None:
    arr: Any = np.sort(np.array(a, np.int32))
    query = np.array(v, np.int32)
    np.testing.assert_array_equal(
        lnp.searchsorted(arr, query, side=side), np.searchsorted(arr, query, side=side)
    )
