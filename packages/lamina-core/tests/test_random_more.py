"""`binomial`, `multinomial`, `random_gamma_p` and `jax_threefry_partitionable=False` against
JAX 0.10.2: printed jaxprs, values on the NumPy reference evaluator bit for bit, `vmap`, and
JAX's error messages."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_core import random as lr
from lamina_core.testing import sweep

jax = pytest.importorskip("jax")
jr = jax.random
pytestmark = pytest.mark.oracle


def _data(x: Any) -> np.ndarray:
    if hasattr(x, "dtype") and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        return np.asarray(jr.key_data(x))
    host = np.asarray(x)
    if host.dtype.names:  # a Lamina key array on the reference evaluator
        return host.reshape(-1).view(np.uint32).reshape(*host.shape, -1)
    return host


def _printed_jax(f: Callable[..., Any], *args: Any) -> str:
    from jax._src import config as jax_config

    # Lamina prints closed-over constants as JAX does with simplified constants.
    with jax_config.use_simplified_jaxpr_constants(True):
        return str(jax.make_jaxpr(f)(*args))


_N = np.array([5.0, 50.0, 100.0, 0.0, 3.5, np.nan, np.inf, -1.0, 1000.0], np.float32)
_P = np.array([0.3, 0.6, 0.5, 0.2, 0.9, 0.5, 0.5, 0.5, 0.99], np.float32)
_PROBS = np.array([0.2, 0.3, 0.5], np.float32)

PRINTED: list[tuple[str, Callable[[Any], Callable[..., Any]], tuple[Any, ...]]] = [
    ("binomial_scalars", lambda r: lambda k: r.binomial(k, 5.0, 0.3, (2,)), ()),
    ("binomial_arrays", lambda r: lambda k, n, p: r.binomial(k, n, p), (_N[:3], _P[:3])),
    ("binomial_f16", lambda r: lambda k: r.binomial(k, 20, 0.7, (3,), np.float16), ()),
    ("multinomial", lambda r: lambda k, p: r.multinomial(k, 10.0, p), (_PROBS,)),
    (
        "multinomial_batched",
        lambda r: lambda k, n, p: r.multinomial(k, n, p, unroll=2),
        (np.array([4.0, 9.0], np.float32), np.stack([_PROBS, _PROBS[::-1]])),
    ),
]


# One case of each function (`binomial`, `multinomial`) by default, the rest with the slow tests.
@pytest.mark.parametrize(("name", "make", "args"), sweep(PRINTED, [p[0] for p in PRINTED]))
def test_printed_as_jax(name: str, make: Any, args: Any) -> None:
    expected = _printed_jax(make(jr), jr.key(0), *args)
    assert str(lamina_core.make_jaxpr(make(lr))(lr.key(0), *args)) == expected


VALUES: list[Any] = [
    ("binomial_edge_cases", lambda r, k: r.binomial(k, _N, _P)),
    pytest.param(
        "binomial_shape_f16",
        lambda r, k: r.binomial(k, 20, 0.7, (2, 3), np.float16),
        marks=pytest.mark.slow,
    ),
    ("multinomial", lambda r, k: r.multinomial(k, 10.0, _PROBS)),
    pytest.param(
        "multinomial_zero_prob",
        lambda r, k: r.multinomial(k, 7.0, np.array([0.5, 0.0, 0.5])),
        marks=pytest.mark.slow,
    ),
]


@pytest.mark.parametrize("seed", [0, pytest.param(1701, marks=pytest.mark.slow)])
@pytest.mark.parametrize(("name", "draw"), VALUES, ids=[getattr(v, "values", v)[0] for v in VALUES])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's inf - inf on invalid inputs
def test_values_equal_jax_on_the_reference_evaluator(name: str, draw: Any, seed: int) -> None:
    got = _data(draw(lr, lr.key(seed)))
    expected = _data(draw(jr, jr.key(seed)))
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_binomial_under_vmap_equals_jax() -> None:
    keys_l, keys_j = lr.split(lr.key(3), 3), jr.split(jr.key(3), 3)
    got = lamina_core.vmap(lambda k: lr.binomial(k, 30.0, 0.4, (2,)))(keys_l)
    expected = jax.vmap(lambda k: jr.binomial(k, 30.0, 0.4, (2,)))(keys_j)
    np.testing.assert_array_equal(_data(got), _data(expected))


def _raised(f: Callable[[], Any]) -> tuple[type[BaseException], str]:
    try:
        f()
    except Exception as e:  # the oracle's exception, whatever its type
        return type(e), str(e)
    raise AssertionError("no error")


ERRORS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("int_dtype", lambda r, k: r.binomial(k, 5.0, 0.3, dtype=np.int32)),
    ("bad_shape", lambda r, k: r.binomial(k, np.ones(3), 0.3, (2,))),
    ("list_count", lambda r, k: r.binomial(k, [5.0], 0.3)),
    ("list_probs", lambda r, k: r.multinomial(k, 5.0, [0.3, 0.7])),
    ("batched_key", lambda r, k: r.binomial(r.split(k), 5.0, 0.3)),
]


@pytest.mark.parametrize(("name", "call"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_are_jax_errors(name: str, call: Any) -> None:
    kind, message = _raised(lambda: call(jr, jr.key(0)))
    with pytest.raises(kind) as info:
        call(lr, lr.key(0))
    assert str(info.value) == message


def test_random_gamma_p_is_jax_primitive() -> None:
    assert lr.random_gamma_p.name == jr.random_gamma_p.name == "random_gamma"
    a = np.array([0.5, 2.0], np.float32)
    got = lr.random_gamma_p.bind(lr.key(2), a, log_space=True)
    expected = jr.random_gamma_p.bind(jr.key(2), a, log_space=True)
    np.testing.assert_allclose(got, np.asarray(expected), rtol=2e-7, atol=0)
    expected_text = _printed_jax(lambda k: jr.random_gamma_p.bind(k, a, log_space=True), jr.key(0))
    printed = lamina_core.make_jaxpr(lambda k: lr.random_gamma_p.bind(k, a, log_space=True))
    assert str(printed(lr.key(0))) == expected_text


# --- jax_threefry_partitionable=False --------------------------------------------------------


@contextmanager
def _original_layout() -> Iterator[None]:
    with jax.threefry_partitionable(False), lamina_core.config(jax_threefry_partitionable=False):
        yield


LAYOUT: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("split", lambda r, k: r.split(k)),
    ("split_shape", lambda r, k: r.split(k, (2, 3))),
    ("fold_in", lambda r, k: r.fold_in(k, 7)),
    ("bits_scalar", lambda r, k: r.bits(k)),
    ("bits_odd", lambda r, k: r.bits(k, (5,))),
    ("bits_even", lambda r, k: r.bits(k, (2, 2))),
    ("bits_u8", lambda r, k: r.bits(k, (7,), np.uint8)),
    ("bits_u16", lambda r, k: r.bits(k, (3,), np.uint16)),
    ("bits_empty", lambda r, k: r.bits(k, (0,))),
    # The layout is part of the tracing cache keys: kernels traced under the default layout
    # by other tests trace again here.
    ("uniform", lambda r, k: r.uniform(k, (3, 7))),
    ("randint", lambda r, k: r.randint(k, (4, 7), 0, 10)),
    ("binomial", lambda r, k: r.binomial(k, 20.0, 0.3, (3, 7))),
]


def _every_third() -> Callable[[str], str]:
    """Kinds of three consecutive cases: one case in three runs by default."""
    count = itertools.count()
    return lambda _: str(next(count) // 3)


@pytest.mark.parametrize(
    ("name", "draw"), sweep(LAYOUT, [v[0] for v in LAYOUT], kind=_every_third())
)
def test_non_partitionable_layout_on_the_reference_evaluator(name: str, draw: Any) -> None:
    with _original_layout():
        got, expected = _data(draw(lr, lr.key(4))), _data(draw(jr, jr.key(4)))
    np.testing.assert_array_equal(got, expected)


def test_non_partitionable_layout_64_bits_vmap_and_printing() -> None:
    with _original_layout(), jax.enable_x64(True), lamina_core.config(jax_enable_x64=True):
        for shape in [(), (3,)]:
            got = lr.bits(lr.key(1), shape, np.uint64)
            np.testing.assert_array_equal(_data(got), _data(jr.bits(jr.key(1), shape, np.uint64)))
    with _original_layout():
        keys_l, keys_j = lr.split(lr.key(0), 2), jr.split(jr.key(0), 2)
        draws: list[Callable[[Any], Callable[[Any], Any]]] = [
            lambda r: lambda k: r.bits(k, (3,)),
            lambda r: lambda k: r.split(k, 3),
        ]
        for f in draws:
            got = lamina_core.vmap(f(lr))(keys_l)
            np.testing.assert_array_equal(_data(got), _data(jax.vmap(f(jr))(keys_j)))

        # The layout is no param JAX prints.
        def f(r: Any) -> Callable[[Any], Any]:
            return lambda k: (r.split(k, 3), r.bits(k, (2,)))

        expected = str(jax.make_jaxpr(f(jr))(jr.key(0)))
        assert str(lamina_core.make_jaxpr(f(lr))(lr.key(0))) == expected


# --- the rbg and unsafe_rbg implementations --------------------------------------------------

_SLOW = pytest.mark.slow

RBG: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("key", lambda r, k: k),
    ("split", lambda r, k: r.split(k, 3)),
    ("split_shape", lambda r, k: r.split(k, (2, 2))),
    ("fold_in", lambda r, k: r.fold_in(k, 9)),
    ("bits", lambda r, k: r.bits(k, (5,))),
    ("bits_u8", lambda r, k: r.bits(k, (5,), np.uint8)),
    ("uniform", lambda r, k: r.uniform(k, (3,))),
]


# rbg: one draw of each function by default; unsafe_rbg: its bits by default; the rest slow.
@pytest.mark.parametrize(
    ("name", "draw", "impl"),
    sweep([(*v, "rbg") for v in RBG], [f"{v[0]}-rbg" for v in RBG])
    + [
        pytest.param(
            *v, "unsafe_rbg", id=f"{v[0]}-unsafe_rbg", marks=() if v[0] == "bits" else _SLOW
        )
        for v in RBG
    ],
)
def test_rbg_keys_equal_jax_on_the_reference_evaluator(name: str, draw: Any, impl: str) -> None:
    got = draw(lr, lr.key(3, impl=impl))
    expected = draw(jr, jr.key(3, impl=impl))
    np.testing.assert_array_equal(_data(got), _data(expected))


@pytest.mark.parametrize("impl", ["rbg", pytest.param("unsafe_rbg", marks=pytest.mark.slow)])
def test_rbg_keys_print_and_vmap_as_jax(impl: str) -> None:
    assert str(lamina_core.typeof(lr.key(0, impl=impl))) == str(jax.typeof(jr.key(0, impl=impl)))

    def f(r: Any) -> Callable[[], Any]:
        return lambda: r.bits(r.fold_in(r.split(r.key(0, impl=impl))[1], 2), (2,))

    assert str(lamina_core.make_jaxpr(f(lr))()) == str(jax.make_jaxpr(f(jr))())
    keys_l, keys_j = lr.split(lr.key(1, impl=impl)), jr.split(jr.key(1, impl=impl))
    np.testing.assert_array_equal(
        _data(lamina_core.vmap(lr.split)(keys_l)), _data(jax.vmap(jr.split)(keys_j))
    )
    np.testing.assert_array_equal(
        _data(lamina_core.vmap(lr.fold_in, in_axes=(None, 0))(keys_l[0], np.arange(3))),
        _data(jax.vmap(jr.fold_in, in_axes=(None, 0))(keys_j[0], np.arange(3))),
    )
    np.testing.assert_array_equal(
        _data(lamina_core.vmap(lambda k: lr.bits(k, (2,)))(keys_l)),
        _data(jax.vmap(lambda k: jr.bits(k, (2,)))(keys_j)),
    )


def test_default_prng_impl_and_rbg_errors() -> None:
    with lamina_core.config(jax_default_prng_impl="rbg"), jax.default_prng_impl("rbg"):
        assert str(lamina_core.typeof(lr.key(0))) == "key<rbg>[]"
        raw_l, raw_j = lr.PRNGKey(1), jr.PRNGKey(1)
        np.testing.assert_array_equal(_data(raw_l), _data(raw_j))
        np.testing.assert_array_equal(_data(lr.split(raw_l)), _data(jr.split(raw_j)))
    calls: list[Callable[[Any], Any]] = [
        lambda r: r.key(0, impl="nope"),
        lambda r: r.poisson(r.key(0, impl="rbg"), 3.0),
    ]
    for call in calls:
        kind, message = _raised(partial(call, jr))
        with pytest.raises(kind) as info:
            call(lr)
        if kind is NotImplementedError:
            assert str(info.value) == message
        else:  # JAX lists implementations Lamina does not have (philox, threefry4x32)
            assert str(info.value).startswith('unrecognized PRNG implementation "nope"')
