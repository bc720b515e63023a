"""`lamina_core.random` against JAX 0.10.2: printed jaxprs, and the NumPy reference evaluator's
values (keys, bits, samplers) bit for bit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_core import random as lr
from lamina_core.random import _threefry
from lamina_core.testing import sweep

jax = pytest.importorskip("jax")
jr = jax.random


def _key_data(x: Any) -> np.ndarray:
    """Raw data of a Lamina key (a host structured array) or of a JAX key."""
    if hasattr(x, "dtype") and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        return np.asarray(jr.key_data(x))
    host = np.asarray(x)
    return host.reshape(-1).view(np.uint32).reshape(*host.shape, 2)


def _key0(r: Any) -> tuple[Any, ...]:
    return (r.key(0),)


PRINTED: list[tuple[str, Callable[[Any], Callable[..., Any]], Callable[[Any], tuple[Any, ...]]]] = [
    ("key", lambda r: lambda: r.key(0), lambda r: ()),
    ("key_of_arg", lambda r: lambda s: r.key(s), lambda r: (np.int32(3),)),
    ("PRNGKey", lambda r: lambda: r.PRNGKey(0), lambda r: ()),
    ("split", lambda r: r.split, lambda r: (r.key(0),)),
    ("split_shape", lambda r: lambda k: r.split(k, (2, 3)), lambda r: (r.key(0),)),
    ("split_unpack", lambda r: lambda k: r.split(k)[0], lambda r: (r.key(0),)),
    ("fold_in", lambda r: r.fold_in, lambda r: (r.key(0), 3)),
    ("bits", lambda r: lambda k: r.bits(k, (3,)), lambda r: (r.key(0),)),
    ("bits8", lambda r: lambda k: r.bits(k, (2, 2), np.uint8), lambda r: (r.key(0),)),
    ("key_data", lambda r: r.key_data, lambda r: (r.key(0),)),
    ("wrap", lambda r: r.wrap_key_data, lambda r: (np.zeros(2, np.uint32),)),
    ("raw_split", lambda r: r.split, lambda r: (np.zeros(2, np.uint32),)),
    ("uniform", lambda r: lambda k: r.uniform(k, (3,)), lambda r: (r.key(0),)),
    ("uniform_raw", lambda r: lambda k: r.uniform(k, (3,)), lambda r: (np.zeros(2, np.uint32),)),
    ("uniform_bf16", lambda r: lambda k: r.uniform(k, (2,), "bfloat16"), lambda r: (r.key(0),)),
    ("normal", lambda r: lambda k: r.normal(k, (3,)), lambda r: (r.key(0),)),
    ("normal_f16", lambda r: lambda k: r.normal(k, (2, 2), np.float16), lambda r: (r.key(0),)),
    ("bernoulli", lambda r: lambda k: r.bernoulli(k, 0.3, (3,)), lambda r: (r.key(0),)),
    ("clone", lambda r: r.clone, lambda r: (r.key(0),)),
    ("normal_c64", lambda r: lambda k: r.normal(k, (3,), np.complex64), lambda r: (r.key(0),)),
    ("bernoulli_high", lambda r: lambda k: r.bernoulli(k, 0.5, (3,), mode="high"), _key0),
    ("randint", lambda r: lambda k: r.randint(k, (3,), 0, 10), _key0),
    ("randint_scalar", lambda r: lambda k: r.randint(k, (), 3, 7), _key0),
    ("randint_i8", lambda r: lambda k: r.randint(k, (2, 2), -5, 100, np.int8), _key0),
    ("randint_u8", lambda r: lambda k: r.randint(k, (4,), 0, 256, np.uint8), _key0),
    ("randint_strong", lambda r: lambda k: r.randint(k, (3,), np.int32(2), np.int32(9)), _key0),
    ("truncated_normal", lambda r: lambda k: r.truncated_normal(k, -1.0, 2.0, (3,)), _key0),
    ("exponential", lambda r: lambda k: r.exponential(k, (3,)), _key0),
    ("laplace", lambda r: lambda k: r.laplace(k, (3,)), _key0),
    ("logistic", lambda r: lambda k: r.logistic(k, (3,)), _key0),
    ("cauchy", lambda r: lambda k: r.cauchy(k, (3,)), _key0),
    ("gumbel", lambda r: lambda k: r.gumbel(k, (3,)), _key0),
    ("gumbel_high", lambda r: lambda k: r.gumbel(k, (3,), mode="high"), _key0),
    ("rademacher", lambda r: lambda k: r.rademacher(k, (5,)), _key0),
    ("weibull_min", lambda r: lambda k: r.weibull_min(k, 2.0, 1.5, (4,)), _key0),
    ("rayleigh", lambda r: lambda k: r.rayleigh(k, 2.0, (4,)), _key0),
    ("pareto", lambda r: lambda k: r.pareto(k, 3.0, (4,)), _key0),
    ("lognormal", lambda r: lambda k: r.lognormal(k, 0.5, (4,)), _key0),
    ("triangular", lambda r: lambda k: r.triangular(k, 0.0, 0.3, 1.0, (4,)), _key0),
    ("wald", lambda r: lambda k: r.wald(k, 1.5, (4,)), _key0),
    ("geometric", lambda r: lambda k: r.geometric(k, 0.3, (5,)), _key0),
    ("gamma", lambda r: lambda k: r.gamma(k, 2.0, (3,)), _key0),
    ("loggamma", lambda r: lambda k: r.loggamma(k, 0.5, (2,)), _key0),
    ("beta", lambda r: lambda k: r.beta(k, 0.5, 2.0, (3,)), _key0),
    ("dirichlet", lambda r: lambda k: r.dirichlet(k, np.ones(3, np.float32)), _key0),
    ("chisquare", lambda r: lambda k: r.chisquare(k, 3.0, (2,)), _key0),
    ("f", lambda r: lambda k: r.f(k, 3.0, 4.0, (2,)), _key0),
    ("t", lambda r: lambda k: r.t(k, 3.0, (2,)), _key0),
    ("generalized_normal", lambda r: lambda k: r.generalized_normal(k, 3.0, (2,)), _key0),
    ("ball", lambda r: lambda k: r.ball(k, 3, 2.0, (2,)), _key0),
    ("maxwell", lambda r: lambda k: r.maxwell(k, (2,)), _key0),
    ("double_sided_maxwell", lambda r: lambda k: r.double_sided_maxwell(k, 0.0, 1.0, (2,)), _key0),
]


@pytest.mark.parametrize(("name", "make", "args"), PRINTED, ids=[p[0] for p in PRINTED])
def test_printed_as_jax(name: str, make: Any, args: Any) -> None:
    expected = str(jax.make_jaxpr(make(jr))(*args(jr)))
    got = str(lamina_core.make_jaxpr(make(lr))(*args(lr)))
    assert got == expected


_LOGITS = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], np.float32))
_X = np.arange(12.0, dtype=np.float32).reshape(3, 4)
WITH_ARRAY: list[tuple[str, Callable[[Any, Any, Any], Any], np.ndarray]] = [
    ("categorical", lambda r, k, lg: r.categorical(k, lg), _LOGITS),
    ("categorical_axis0", lambda r, k, lg: r.categorical(k, lg, axis=0, shape=(4, 3)), _LOGITS),
    (
        "categorical_no_replace",
        lambda r, k, lg: r.categorical(k, lg[0], shape=(2,), replace=False),
        _LOGITS,
    ),
    ("permutation_int", lambda r, k, x: r.permutation(k, 10), _X),
    ("permutation_axis1", lambda r, k, x: r.permutation(k, x, axis=1), _X),
    ("permutation_independent", lambda r, k, x: r.permutation(k, x, 1, independent=True), _X),
    ("choice_int", lambda r, k, x: r.choice(k, 10, (5,)), _X),
    ("choice_axis1", lambda r, k, x: r.choice(k, x, (2,), axis=1), _X),
    ("choice_no_replace", lambda r, k, x: r.choice(k, x, (2,), replace=False), _X),
]


# One sampler of each function by default (`categorical`, `permutation`, `choice`), the other
# variants with the slow tests.
@pytest.mark.parametrize(("name", "draw", "arg"), sweep(WITH_ARRAY, [w[0] for w in WITH_ARRAY]))
def test_discrete_samplers_print_and_evaluate_as_jax(name: str, draw: Any, arg: Any) -> None:
    expected = jax.make_jaxpr(lambda k, a: draw(jr, k, a))(jr.key(0), arg)
    got = lamina_core.make_jaxpr(lambda k, a: draw(lr, k, a))(lr.key(0), arg)
    assert str(got) == str(expected)
    for seed in (0, 3):
        np.testing.assert_array_equal(
            np.asarray(draw(lr, lr.key(seed), arg)), np.asarray(draw(jr, jr.key(seed), arg))
        )


def test_vmapped_split_and_fold_in_print_as_jax() -> None:
    keys_j, keys_l = jr.split(jr.key(0), 3), lr.split(lr.key(0), 3)
    for f in (lambda r: r.split, lambda r: lambda k: r.fold_in(k, 7)):
        expected = str(jax.make_jaxpr(jax.vmap(f(jr)))(keys_j))
        assert str(lamina_core.make_jaxpr(lamina_core.vmap(f(lr)))(keys_l)) == expected


@pytest.mark.parametrize("seed", [0, 1, -1, 2**31 - 1, 123456789])
def test_seeds_give_jax_key_data(seed: int) -> None:
    np.testing.assert_array_equal(_key_data(lr.key(seed)), _key_data(jr.key(seed)))


@pytest.mark.parametrize("seed", [0, pytest.param(42, marks=pytest.mark.slow)])
def test_split_fold_in_bits_on_the_reference_evaluator(seed: int) -> None:
    kl, kj = lr.key(seed), jr.key(seed)
    for shape in [(2,), (3, 2), ()]:
        np.testing.assert_array_equal(
            _key_data(lr.split(kl, shape)), _key_data(jr.split(kj, shape))
        )
    for data in [0, 5, 2**31 - 1]:
        np.testing.assert_array_equal(
            _key_data(lr.fold_in(kl, data)), _key_data(jr.fold_in(kj, data))
        )
    for dtype in [np.uint8, np.uint16, np.uint32]:
        for shape in [(), (5,), (2, 3)]:
            np.testing.assert_array_equal(
                np.asarray(lr.bits(kl, shape, dtype)), np.asarray(jr.bits(kj, shape, dtype))
            )


SAMPLERS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("uniform_f32", lambda r, k: r.uniform(k, (5,))),
    ("uniform_f16_range", lambda r, k: r.uniform(k, (2, 3), np.float16, -2.0, 3.0)),
    ("uniform_bf16", lambda r, k: r.uniform(k, (4,), "bfloat16")),
    ("normal_f32", lambda r, k: r.normal(k, (2, 3))),
    ("normal_f16", lambda r, k: r.normal(k, (7,), np.float16)),
    ("normal_scalar", lambda r, k: r.normal(k)),
    ("bernoulli", lambda r, k: r.bernoulli(k, 0.3, (6,))),
    ("bernoulli_p_array", lambda r, k: r.bernoulli(k, np.array([0.1, 0.5, 0.9], np.float32))),
    ("bernoulli_high", lambda r, k: r.bernoulli(k, 0.5, (4,), mode="high")),
    ("randint_i32", lambda r, k: r.randint(k, (5,), -3, 1000)),
    ("randint_i8", lambda r, k: r.randint(k, (2, 3), -5, 100, np.int8)),
    ("randint_u16_span", lambda r, k: r.randint(k, (4,), 0, 70000, np.uint16)),
    ("exponential_f16", lambda r, k: r.exponential(k, (3,), np.float16)),
    ("laplace_f32", lambda r, k: r.laplace(k, (2, 2))),
    ("logistic_f32", lambda r, k: r.logistic(k, (4,))),
    ("gumbel_f32", lambda r, k: r.gumbel(k, (4,))),
    ("gumbel_high_f16", lambda r, k: r.gumbel(k, (2,), np.float16, mode="high")),
    ("gamma_f32", lambda r, k: r.gamma(k, np.array([0.4, 2.0, 6.0], np.float32))),
    ("beta_f32", lambda r, k: r.beta(k, 2.0, 3.0, (3,))),
]


# One seed, and one dtype/variant of each sampler (the first word of its id) by default; the
# other variants and the second seed with the slow tests.
@pytest.mark.parametrize("seed", [0, pytest.param(7, marks=pytest.mark.slow)])
@pytest.mark.parametrize(("name", "draw"), sweep(SAMPLERS, [s[0] for s in SAMPLERS]))
def test_samplers_equal_jax_on_the_reference_evaluator(name: str, draw: Any, seed: int) -> None:
    got = np.asarray(draw(lr, lr.key(seed)))
    expected = np.asarray(draw(jr, jr.key(seed)))
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if got.dtype == np.float16 and name.startswith("uniform"):
        # A float16 range (`minval + u * (maxval - minval)`): XLA computes the fused float16
        # arithmetic in float32 and rounds once, the NumPy reference rounds after each op, so
        # they may differ by an ulp (on XLA the values are exact: test_random_xla.py).
        np.testing.assert_allclose(
            got, expected, rtol=0, atol=float(np.spacing(np.abs(expected)).max())
        )
    elif got.dtype.kind == "f" and not name.startswith("uniform"):
        # The NumPy reference's transcendentals (erf_inv, log1p, log) may differ from XLA's by
        # an ulp; the bits and uniforms before them are exact, and on XLA every sampler is
        # exact (lamina's test_random_xla.py).
        rtol = 8 * float(np.finfo(got.dtype).eps)  # a few ulps, compounded by gumbel's two logs
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=0)
    else:
        np.testing.assert_array_equal(got, expected)  # exact, floats included


def test_threefry_reference_matches_the_primitive_in_jax() -> None:
    from jax._src.random.threefry2x32 import threefry2x32_p  # the hash, for a direct check

    rng = np.random.default_rng(0)
    args = [rng.integers(0, 2**32, (5,), dtype=np.uint32) for _ in range(4)]
    expected = threefry2x32_p.bind(*args)  # type: ignore[no-untyped-call]  # JAX leaves bind untyped
    got = _threefry.threefry2x32(*args)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, np.asarray(e))


def test_threefry2x32_primitive_prints_and_evaluates() -> None:
    x = np.arange(3, dtype=np.uint32)
    out = lr.threefry2x32_p.bind(np.uint32(1), np.uint32(2), x, x)
    one, two = np.array(1, np.uint32), np.array(2, np.uint32)
    expected = _threefry.threefry2x32(one, two, x, x)
    for g, e in zip(out, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(g), e)
    closed = lamina_core.make_jaxpr(lambda a: lr.threefry2x32_p.bind(a, a, a, a))(x)
    assert "threefry2x32" in str(closed) and "u32[3]" in str(closed)


def test_key_types_and_errors() -> None:
    k = lr.key(0)
    assert lamina_core.typeof(k).str_short(True) == "key<fry>[]"
    assert lr.key_impl(k) == "threefry2x32"
    assert lamina_core.typeof(k).to_tangent_aval().str_short(True) == "float0[]"
    with pytest.raises(TypeError, match="accepts a scalar seed, but was given an array"):
        lr.key(np.zeros(2, np.int32))
    with pytest.raises(ValueError, match="split accepts a single key"):
        lr.split(lr.split(k))
    with pytest.raises(ValueError, match="must be a float dtype"):
        lr.uniform(k, (2,), np.int32)
    with pytest.raises(TypeError, match="random_bits takes key array operand"):
        lr.random_bits_p.bind(np.zeros(2, np.uint32), bit_width=32, shape=())


def test_the_partitionable_setting_is_read_when_tracing() -> None:
    # Both layouts are JAX's (test_random_more.py); a split traced under one keeps it.
    with lamina_core.config(jax_threefry_partitionable=False):
        old = _key_data(lr.split(lr.key(0)))
    with jax.threefry_partitionable(False):
        np.testing.assert_array_equal(old, _key_data(jr.split(jr.key(0))))
    assert not np.array_equal(old, _key_data(lr.split(lr.key(0))))
    assert np.asarray(lr.bits(lr.key(0))).dtype == np.uint32


def test_keys_in_a_scan_carry() -> None:
    def run(r: Any, lax: Any) -> Callable[[Any], Any]:
        def body(k: Any, _: Any) -> tuple[Any, Any]:
            k, sub = r.split(k)
            return k, r.uniform(sub, (2,))

        return lambda k: lax.scan(body, k, None, length=3)

    expected = run(jr, jax.lax)(jr.key(4))
    got = run(lr, lamina_core.lax)(lr.key(4))
    np.testing.assert_array_equal(_key_data(got[0]), _key_data(expected[0]))
    np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(expected[1]))


def test_unpacking_split_keys_prints_as_jax() -> None:
    def unpack(r: Any) -> Callable[[Any], Any]:
        def f(k: Any) -> Any:
            k, sub = r.split(k)
            return sub

        return f

    printed = str(jax.make_jaxpr(unpack(jr))(jr.key(0)))
    assert str(lamina_core.make_jaxpr(unpack(lr))(lr.key(0))) == printed


@pytest.mark.parametrize(
    "lam", [np.array([0.5, 3.0, 20.0], np.float32), 4.0, np.float32(150.0)], ids=str
)
def test_poisson_prints_and_evaluates_as_jax(lam: Any) -> None:
    # The rate is broadcast eagerly (outside `_poisson`): JAX's constant, printed as Lamina
    # prints constants when JAX simplifies them.
    from jax._src import config as jax_config

    with jax_config.use_simplified_jaxpr_constants(True):
        expected = jax.make_jaxpr(lambda k: jr.poisson(k, lam, (3,)))(jr.key(0))
    got = lamina_core.make_jaxpr(lambda k: lr.poisson(k, lam, (3,)))(lr.key(0))
    assert str(got) == str(expected)
    for seed in (0, 5):
        np.testing.assert_array_equal(
            np.asarray(lr.poisson(lr.key(seed), lam, (3,))),
            np.asarray(jr.poisson(jr.key(seed), lam, (3,))),
        )
