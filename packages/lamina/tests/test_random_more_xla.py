"""`lamina.random.binomial`, `multinomial` and `jax_threefry_partitionable=False` on XLA
against JAX 0.10.2: values bit for bit, eagerly and under `jit`, and under `vmap`
(`random_gamma_p` is tested in lamina-core's test_random_more.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

import jax
import numpy as np
import pytest

import lamina
from lamina_core.config._config import config as lamina_config

lr, jr = lamina.random, jax.random
pytestmark = pytest.mark.oracle


def _data(x: Any) -> np.ndarray:
    if jax.numpy.issubdtype(x.dtype, jax.dtypes.prng_key):
        return np.asarray(jr.key_data(x))
    if str(getattr(x, "dtype", "")).startswith("[("):  # a Lamina key array
        return np.asarray(lr.key_data(x))
    return np.asarray(x)


def _ids(cases: list[Any]) -> list[str]:
    return [getattr(c, "values", c)[0] for c in cases]


_N = np.array([5.0, 50.0, 100.0, 0.0, 3.5, np.nan, np.inf, -1.0, 1000.0], np.float32)
_P = np.array([0.3, 0.6, 0.5, 0.2, 0.9, 0.5, 0.5, 0.5, 0.99], np.float32)
_PROBS = np.array([[0.2, 0.3, 0.5], [0.1, 0.0, 0.9]], np.float32)

SAMPLERS: list[Any] = [
    ("binomial_edge_cases", lambda r, k: r.binomial(k, _N, _P)),
    pytest.param(
        "binomial_shape_f16",
        lambda r, k: r.binomial(k, 20, 0.7, (2, 3), np.float16),
        marks=pytest.mark.slow,
    ),
    pytest.param(
        "binomial_large_counts",
        lambda r, k: r.binomial(k, 1e6, np.array([1e-4, 0.3, 0.999])),
        marks=pytest.mark.slow,
    ),
    ("multinomial", lambda r, k: r.multinomial(k, 10.0, _PROBS[0])),
    pytest.param(
        "multinomial_batched",
        lambda r, k: r.multinomial(k, np.array([5.0, 100.0]), _PROBS),
        marks=pytest.mark.slow,
    ),
    pytest.param(
        "multinomial_shape",
        lambda r, k: r.multinomial(k, 8.0, _PROBS[0], shape=(2, 3)),
        marks=pytest.mark.slow,
    ),
]


# Eager draws compile every operation of a sampler: with the slow tests (eager sampling stays
# covered by `test_rbg_keys_equal_jax`).
@pytest.mark.parametrize(
    "jitted", [pytest.param(False, marks=pytest.mark.slow), True], ids=["eager", "jit"]
)
@pytest.mark.parametrize("seed", [0, pytest.param(1701, marks=pytest.mark.slow)])
@pytest.mark.parametrize(("name", "draw"), SAMPLERS, ids=_ids(SAMPLERS))
def test_values_equal_jax_bit_for_bit(name: str, draw: Any, seed: int, jitted: bool) -> None:
    f_l = lamina.jit(partial(draw, lr)) if jitted else partial(draw, lr)
    f_j = jax.jit(partial(draw, jr)) if jitted else partial(draw, jr)
    got, expected = _data(f_l(lr.key(seed))), _data(f_j(jr.key(seed)))
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_samplers_under_vmap_equal_jax() -> None:
    keys_l, keys_j = lr.split(lr.key(0), 3), jr.split(jr.key(0), 3)
    n = np.array([3.0, 40.0, 7.0], np.float32)
    np.testing.assert_array_equal(
        np.asarray(lamina.vmap(lambda k, m: lr.binomial(k, m, 0.4, (2,)))(keys_l, n)),
        np.asarray(jax.vmap(lambda k, m: jr.binomial(k, m, 0.4, (2,)))(keys_j, n)),
    )


def test_raw_keys_give_jax_values() -> None:
    np.testing.assert_array_equal(
        np.asarray(lr.binomial(lr.PRNGKey(3), 12.0, 0.25, (4,))),
        np.asarray(jr.binomial(jr.PRNGKey(3), 12.0, 0.25, (4,))),
    )


# --- jax_threefry_partitionable=False --------------------------------------------------------


@contextmanager
def _original_layout() -> Iterator[None]:
    with jax.threefry_partitionable(False), lamina_config(jax_threefry_partitionable=False):
        yield


LAYOUT: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("split", lambda r, k: r.split(k)),
    ("split_shape", lambda r, k: r.split(k, (2, 3))),
    ("fold_in", lambda r, k: r.fold_in(k, 7)),
    ("bits_scalar", lambda r, k: r.bits(k)),
    ("bits_odd", lambda r, k: r.bits(k, (5,))),
    ("bits_u8", lambda r, k: r.bits(k, (7,), np.uint8)),
    ("bits_u16", lambda r, k: r.bits(k, (3, 3), np.uint16)),
    # Traces keep the layout they were made with (Lamina's tracing caches do not key on it
    # yet): these draw shapes no other test draws, so their kernels are traced here. (Gamma's
    # per-element loops are traced at shape () by every gamma draw: not testable this way.)
    ("uniform", lambda r, k: r.uniform(k, (3, 1, 7))),
    ("normal", lambda r, k: r.normal(k, (5, 1, 7))),
    ("binomial", lambda r, k: r.binomial(k, 20.0, 0.3, (3, 1, 7))),
]


@pytest.mark.parametrize(
    "jitted", [pytest.param(False, marks=pytest.mark.slow), True], ids=["eager", "jit"]
)
@pytest.mark.parametrize(("name", "draw"), LAYOUT, ids=[v[0] for v in LAYOUT])
def test_non_partitionable_layout_equals_jax(name: str, draw: Any, jitted: bool) -> None:
    with _original_layout():
        f_l = lamina.jit(partial(draw, lr)) if jitted else partial(draw, lr)
        got, expected = _data(f_l(lr.key(4))), _data(draw(jr, jr.key(4)))
    np.testing.assert_array_equal(got, expected)


def test_non_partitionable_layout_64_bits_and_vmap() -> None:
    with _original_layout(), jax.enable_x64(True), lamina_config(jax_enable_x64=True):
        for shape in [(), (3,)]:
            got = lamina.jit(lambda k, s=shape: lr.bits(k, s, np.uint64))(lr.key(1))
            np.testing.assert_array_equal(_data(got), _data(jr.bits(jr.key(1), shape, np.uint64)))
    with _original_layout():
        keys_l, keys_j = lr.split(lr.key(0), 2), jr.split(jr.key(0), 2)
        draws: list[Callable[[Any], Callable[[Any], Any]]] = [
            lambda r: lambda k: r.bits(k, (3,)),
            lambda r: lambda k: r.split(k, 3),
        ]
        for f in draws:
            got = lamina.jit(lamina.vmap(f(lr)))(keys_l)
            np.testing.assert_array_equal(_data(got), _data(jax.vmap(f(jr))(keys_j)))


# --- the rbg and unsafe_rbg implementations --------------------------------------------------

RBG: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("key", lambda r, k: k),
    ("split", lambda r, k: r.split(k, 3)),
    ("fold_in", lambda r, k: r.fold_in(k, 9)),
    ("bits", lambda r, k: r.bits(k, (5,))),
    ("normal", lambda r, k: r.normal(k, (3,))),
]


@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("impl", ["rbg", "unsafe_rbg"])
@pytest.mark.parametrize(("name", "draw"), RBG, ids=[v[0] for v in RBG])
def test_rbg_keys_equal_jax(name: str, draw: Any, impl: str, jitted: bool) -> None:
    def f_l(seed: Any) -> Any:
        return draw(lr, lr.key(seed, impl=impl))

    got = lamina.jit(f_l)(3) if jitted else f_l(3)
    np.testing.assert_array_equal(_data(got), _data(draw(jr, jr.key(3, impl=impl))))


@pytest.mark.parametrize("impl", ["rbg", "unsafe_rbg"])
def test_rbg_keys_repr_and_vmap(impl: str) -> None:
    assert repr(lr.split(lr.key(2, impl=impl))) == repr(jr.split(jr.key(2, impl=impl)))
    keys_l, keys_j = lr.split(lr.key(1, impl=impl)), jr.split(jr.key(1, impl=impl))
    np.testing.assert_array_equal(
        _data(lamina.jit(lamina.vmap(lr.split))(keys_l)), _data(jax.vmap(jr.split)(keys_j))
    )
    np.testing.assert_array_equal(
        _data(lamina.jit(lamina.vmap(lr.fold_in, in_axes=(None, 0)))(keys_l[0], np.arange(3))),
        _data(jax.vmap(jr.fold_in, in_axes=(None, 0))(keys_j[0], np.arange(3))),
    )


def test_changing_the_threefry_layout_traces_again() -> None:
    # The flag is part of every tracing cache key, as in JAX: one jitted function, both layouts.
    ours = lamina.jit(lambda k: lamina.random.uniform(k, (5,)))
    theirs = jax.jit(lambda k: jax.random.uniform(k, (5,)))
    for partitionable in (True, False, True):
        with lamina.threefry_partitionable(partitionable):
            got = np.asarray(ours(lamina.random.key(3)))
        with jax.threefry_partitionable(partitionable):
            want = np.asarray(theirs(jax.random.key(3)))
        np.testing.assert_array_equal(got, want)
