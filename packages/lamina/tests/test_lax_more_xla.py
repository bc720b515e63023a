"""The smaller `jax.lax` names on XLA: `lamina.jit(f).lower(...)` prints JAX's module text
(`chlo.mulhi`, TOTALORDER comparisons, `empty`, `copy`, `dce_sink`, tokens, `rng_bit_generator`,
`rng`, `ApproxTopK`, `device_put`, `stablehlo.composite`, `custom_linear_solve`, `ragged_dot`),
and jitted and eager results equal JAX's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle

Program = Callable[[Any], Callable[..., Any]]
"""`program(api)` with `api` the `lamina` or `jax` module."""

_rng = np.random.default_rng(2)
F = _rng.standard_normal((2, 8)).astype(np.float32)
I32 = _rng.integers(-(2**31), 2**31 - 1, (3, 4), dtype=np.int64).astype(np.int32)
U8 = _rng.integers(0, 255, (3, 4), dtype=np.uint8)
TOTAL = np.array([0.0, -0.0, np.nan, 1.0, -np.inf, np.inf], np.float32)
KEY = np.array([1, 2, 3, 4], np.uint32)


def _scale(api: Any) -> Any:
    return api.lax.composite(lambda x, *, alpha: x * alpha, name="my.scale", version=2)


PROGRAMS: dict[str, tuple[Program, tuple[Any, ...]]] = {
    "mulhi_i32": (lambda api: api.lax.mulhi, (I32, I32[::-1].copy())),
    "mulhi_u8_broadcast": (lambda api: api.lax.mulhi, (U8, U8[:1])),
    "eq_to": (lambda api: api.lax.eq_to_p.bind, (TOTAL, TOTAL[::-1].copy())),
    "lt_to": (lambda api: api.lax.lt_to_p.bind, (TOTAL, TOTAL[::-1].copy())),
    "le_to_int": (lambda api: api.lax.le_to_p.bind, (I32, I32[::-1].copy())),
    "empty": (lambda api: lambda x: api.lax.empty((2, 3), np.float32) + x, (np.float32(1),)),
    "copy": (lambda api: lambda x: api.numpy.array(x) * 2, (F,)),
    "dce_sink": (lambda api: lambda x: api.lax.dce_sink(x, prevent_mlir_dce=True), (F,)),
    "tokens": (
        lambda api: (
            lambda x: (api.lax.after_all(api.lax.create_token(), api.lax.create_token()), x)[1]
        ),
        (F,),
    ),
    "rng_default_u8": (
        lambda api: lambda k: api.lax.rng_bit_generator(k, (2, 3), np.uint8),
        (KEY,),
    ),
    "rng_threefry": (
        lambda api: (
            lambda k: api.lax.rng_bit_generator(
                k, (5,), algorithm=api.lax.RandomAlgorithm.RNG_THREE_FRY
            )
        ),
        (KEY,),
    ),
    "rng_philox_u16": (
        lambda api: (
            lambda k: api.lax.rng_bit_generator(
                k, (3, 3), np.uint16, api.lax.RandomAlgorithm.RNG_PHILOX
            )
        ),
        (KEY,),
    ),
    "approx_max_k": (lambda api: lambda x: api.lax.approx_max_k(x, 3), (F,)),
    "approx_min_k_axis0": (lambda api: lambda x: api.lax.approx_min_k(x, 1, 0), (F,)),
    "device_put": (lambda api: lambda x: api.device_put(x) * 2, (F,)),
    "composite": (lambda api: lambda x: _scale(api)(x, alpha=2.0), (F,)),
    "custom_linear_solve": (
        lambda api: (
            lambda b: api.lax.custom_linear_solve(lambda x: 2.0 * x, b, lambda m, v: v / 2.0)
        ),
        (F,),
    ),
    "ragged_dot": (
        lambda api: api.lax.ragged_dot,
        (F.T.copy(), np.ones((3, 2, 4), np.float32), np.array([3, 0, 5], np.int32)),
    ),
    "dot_default_preset": (
        lambda api: lambda x, y: api.lax.dot(x, y, precision=api.lax.DotAlgorithmPreset.DEFAULT),
        (F, F.T.copy()),
    ),
    "composite_plain": (
        lambda api: api.lax.composite(lambda x: api.numpy.tanh(x), name="my.tanh"),
        (F,),
    ),
}


_ROUNDED = ("composite_plain", "dot_default_preset")
"""Programs whose eager and jitted results may differ from JAX's in the last bits."""


def _assert_same(got: Any, want: Any, *, exact: bool = True) -> None:
    got_leaves, want_leaves = lamina.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for a, b in zip(got_leaves, want_leaves, strict=True):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        if exact:
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        else:
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_lowering_text_and_results_are_jaxs(name: str) -> None:
    program, args = PROGRAMS[name]
    ours, theirs = program(lamina), program(jax)
    assert lamina.jit(ours).lower(*args).as_text() == jax.jit(theirs).lower(*args).as_text()
    want = jax.jit(theirs)(*args)
    _assert_same(lamina.jit(ours)(*args), want, exact=name not in _ROUNDED)
    _assert_same(ours(*args), want, exact=name not in _ROUNDED)


def test_rng_uniform_lowers_as_jax_and_runs() -> None:
    def program(api: Any) -> Any:
        return lambda: api.lax.rng_uniform(np.float32(-1), np.float32(2), (64,))

    assert lamina.jit(program(lamina)).lower().as_text() == jax.jit(program(jax)).lower().as_text()
    values = np.asarray(lamina.jit(program(lamina))())
    assert values.dtype == np.float32 and np.all((values >= -1) & (values < 2))


def test_tokens_inside_jit_and_eagerly() -> None:
    def program(api: Any) -> Any:
        return lambda x: (api.lax.after_all(api.lax.create_token(x)), x)

    assert lamina.jit(program(lamina)).lower(1.0).as_text() == (
        jax.jit(program(jax)).lower(1.0).as_text()
    )
    token, x = program(lamina)(1.0)
    assert type(token).__name__ == "Token" and float(x) == 1.0


def test_batched_rng_bit_generator_runs_as_jax() -> None:
    keys = np.arange(12, dtype=np.uint32).reshape(3, 4)

    def program(api: Any) -> Any:
        return api.vmap(lambda k: api.lax.rng_bit_generator(k, (2,)))

    _assert_same(lamina.jit(program(lamina))(keys), jax.jit(program(jax))(keys))


def test_custom_root_runs_under_jit_as_jax() -> None:
    def program(api: Any) -> Any:
        def newton(f: Any, x0: Any) -> Any:
            x = x0
            for _ in range(20):
                x = x - f(x) / (2 * x)
            return x

        def sqrt_sum(c: Any) -> Any:
            ones = api.numpy.ones_like(c)
            root = api.lax.custom_root(lambda x: x * x - c, ones, newton, lambda g, y: y / g(ones))
            return api.numpy.sum(root)

        return api.grad(sqrt_sum)

    c = np.array([2.0, 9.0, 0.25], np.float32)
    np.testing.assert_allclose(
        np.asarray(lamina.jit(program(lamina))(c)), np.asarray(jax.jit(program(jax))(c)), rtol=1e-5
    )
