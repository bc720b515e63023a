"""`==`, `!=`, `jnp.equal`, `jnp.not_equal` and `jnp.array_equal` on typed key arrays against
JAX 0.10.2: values (through XLA, eagerly, under `jit` and `vmap`), printed jaxprs, and the
errors for keys of another implementation or a number."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

import lamina
from lamina_core import lax as lax_core
from lamina_core.ir import impl_rules

pytestmark = pytest.mark.oracle

Keys = Callable[[Any], tuple[Any, Any]]
"""`keys(random)`: the two key arrays a case compares, made by `random` (Lamina's or JAX's)."""


PAIRS: list[tuple[str, Keys]] = [
    ("scalar_same", lambda r: (r.key(0), r.key(0))),
    ("scalar_differ", lambda r: (r.key(0), r.key(1))),
    ("array_reversed", lambda r: (r.split(r.key(0), 3), r.split(r.key(0), 3)[::-1])),
    ("array_vs_scalar", lambda r: (r.split(r.key(2), 3), r.split(r.key(2), 3)[1])),
    ("scalar_vs_array", lambda r: (r.key(5), r.split(r.key(5), (2, 2)))),
    ("size_one_dims", lambda r: (r.split(r.key(1), (3, 1)), r.split(r.key(1), (1, 3)))),
    ("rbg", lambda r: (r.key(0, impl="rbg"), r.split(r.key(0, impl="rbg"), 2))),
]

OPS: list[tuple[str, Callable[[Any, Any], Callable[[Any, Any], Any]]]] = [
    ("eq_operator", lambda jnp, lax: lambda a, b: a == b),
    ("ne_operator", lambda jnp, lax: lambda a, b: a != b),
    ("jnp_equal", lambda jnp, lax: jnp.equal),
    ("jnp_not_equal", lambda jnp, lax: jnp.not_equal),
    ("lax_eq", lambda jnp, lax: lax.eq),
    ("lax_ne", lambda jnp, lax: lax.ne),
]


def _both(op: Callable[[Any, Any], Callable[[Any, Any], Any]]) -> tuple[Any, Any]:
    return op(lamina.numpy, lamina.lax), op(jax.numpy, jax.lax)


@pytest.mark.parametrize("pair", [p for _, p in PAIRS], ids=[n for n, _ in PAIRS])
@pytest.mark.parametrize("op", [o for _, o in OPS], ids=[n for n, _ in OPS])
def test_comparison_matches_jax(pair: Keys, op: Any) -> None:
    ours, theirs = _both(op)
    la, lb = pair(lamina.random)
    ja, jb = pair(jax.random)
    expected = np.asarray(theirs(ja, jb))
    np.testing.assert_array_equal(np.asarray(ours(la, lb)), expected)
    np.testing.assert_array_equal(np.asarray(lamina.jit(ours)(la, lb)), expected)
    assert str(lamina.make_jaxpr(ours)(la, lb)) == str(jax.make_jaxpr(theirs)(ja, jb))


def test_comparisons_tell_equal_keys_from_different_ones() -> None:
    # Guards the cases above against an answer that ignores the key data.
    ks = lamina.random.split(lamina.random.key(0), 3)
    np.testing.assert_array_equal(np.asarray(ks == ks[1]), [False, True, False])
    np.testing.assert_array_equal(np.asarray(ks != ks[1]), [True, False, True])


@pytest.mark.parametrize("pair", [p for _, p in PAIRS], ids=[n for n, _ in PAIRS])
def test_reference_evaluator_matches_jax(pair: Keys) -> None:
    # The NumPy reference rules, on host key arrays (structured arrays of the key data).
    la, lb = (np.asarray(k) for k in pair(lamina.random))
    ja, jb = pair(jax.random)
    for prim, theirs in ((lax_core.eq_p, jax.lax.eq), (lax_core.ne_p, jax.lax.ne)):
        ours = impl_rules[prim](la, lb)
        np.testing.assert_array_equal(ours, np.asarray(theirs(ja, jb)))


@pytest.mark.parametrize("pair", [p for _, p in PAIRS], ids=[n for n, _ in PAIRS])
def test_array_equal_matches_jax(pair: Keys) -> None:
    la, lb = pair(lamina.random)
    ja, jb = pair(jax.random)
    for x, y, jx, jy in ((la, lb, ja, jb), (la, la, ja, ja)):
        expected = np.asarray(jax.numpy.array_equal(jx, jy))
        assert np.asarray(lamina.numpy.array_equal(x, y)) == expected
        assert np.asarray(lamina.jit(lamina.numpy.array_equal)(x, y)) == expected
        ours = str(lamina.make_jaxpr(lamina.numpy.array_equal)(x, y))
        assert ours == str(jax.make_jaxpr(jax.numpy.array_equal)(jx, jy))


@pytest.mark.parametrize("op", [o for _, o in OPS], ids=[n for n, _ in OPS])
def test_vmap_matches_jax(op: Any) -> None:
    ours, theirs = _both(op)
    la = lamina.random.split(lamina.random.key(3), (2, 3))
    ja = jax.random.split(jax.random.key(3), (2, 3))
    for axes in ((0, 0), (1, 1), (0, 1)):
        # The second operand is mapped over an axis of the same size as the first's.
        lb, jb = (la[:, ::-1], ja[:, ::-1]) if axes[0] == axes[1] else (la.T, ja.T)
        lf, jf = lamina.vmap(ours, in_axes=axes), jax.vmap(theirs, in_axes=axes)
        expected = np.asarray(jf(ja, jb))
        np.testing.assert_array_equal(np.asarray(lf(la, lb)), expected)
        np.testing.assert_array_equal(np.asarray(lamina.jit(lf)(la, lb)), expected)
        assert str(lamina.make_jaxpr(lf)(la, lb)) == str(jax.make_jaxpr(jf)(ja, jb))
    # One side unbatched: every key of the batch against one key.
    lf, jf = lamina.vmap(ours, in_axes=(1, None)), jax.vmap(theirs, in_axes=(1, None))
    lk, jk = la[1, 2], ja[1, 2]
    np.testing.assert_array_equal(np.asarray(lf(la, lk)), np.asarray(jf(ja, jk)))
    assert str(lamina.make_jaxpr(lf)(la, lk)) == str(jax.make_jaxpr(jf)(ja, jk))


def _error(fn: Callable[[], Any]) -> tuple[type[BaseException], str]:
    with pytest.raises(Exception) as info:
        fn()
    return info.type, str(info.value)


MISMATCHES: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("other_impl", lambda m, r: m.numpy.equal(r.key(0), r.key(0, impl="rbg"))),
    ("other_impl_operator", lambda m, r: r.key(0) != r.key(0, impl="rbg")),
    ("other_impl_jit", lambda m, r: m.jit(m.numpy.equal)(r.key(0), r.key(0, impl="rbg"))),
    ("python_int", lambda m, r: r.key(0) == 0),
    ("int_array_first", lambda m, r: m.numpy.not_equal(m.numpy.zeros(3, "int32"), r.key(0))),
    ("float_array", lambda m, r: r.split(r.key(0), 2) == m.numpy.ones(2)),
    ("traced", lambda m, r: m.make_jaxpr(m.numpy.equal)(r.key(0), np.float32(1))),
    ("ordered", lambda m, r: r.key(0) < r.key(1)),
]


@pytest.mark.parametrize("case", [c for _, c in MISMATCHES], ids=[n for n, _ in MISMATCHES])
def test_errors_match_jax(case: Callable[[Any, Any], Any]) -> None:
    theirs = _error(lambda: case(jax, jax.random))
    assert _error(lambda: case(lamina, lamina.random)) == theirs
