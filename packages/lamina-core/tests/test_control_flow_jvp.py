"""Forward mode of the control-flow primitives against JAX: `make_jaxpr(jvp(f))` byte for byte
and the jvp's values, plus finite differences of the tangents.

Covers the nonzero-pattern merge across `cond` branches, `switch`, the carry fixpoint of
`scan` and `while` (a carry whose tangent becomes nonzero on a later trip), consts with
tangents, integer carries (float0 tangents) and `fori_loop` as a scan and as a while.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_core.testing import Oracle

pytestmark = pytest.mark.oracle

F32 = np.float32
XS = np.random.default_rng(0).standard_normal(5).astype(F32)

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]

CASES: dict[str, tuple[Program, tuple[Any, ...]]] = {
    "cond": (lambda jnp, lax: lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x), (F32(0.7),)),
    "cond_branch_ignores_input": (
        lambda jnp, lax: lambda x, y: lax.cond(x > 0, lambda a, b: a * 2.0, lambda a, b: b, x, y),
        (F32(0.7), F32(3.0)),
    ),
    "switch": (
        lambda jnp, lax: lambda x: lax.switch(1, [jnp.sin, jnp.cos, lambda a: a * a], x),
        (F32(0.7),),
    ),
    "scan": (
        lambda jnp, lax: lambda c, xs: lax.scan(lambda c, x: (c * jnp.sin(x), c + x), c, xs),
        (F32(0.7), XS),
    ),
    "scan_const_tangent": (
        lambda jnp, lax: lambda w, xs: lax.scan(lambda c, x: (c * w + x, c), 0.0, xs),
        (F32(0.7), XS),
    ),
    "scan_carry_becomes_nonzero": (
        lambda jnp, lax: (
            lambda w: lax.scan(
                lambda c, _: ((c[1] * 2.0, c[0] + w), c[0]), (0.0, 0.0), None, length=4
            )
        ),
        (F32(0.7),),
    ),
    "fori_static": (
        lambda jnp, lax: lambda x: lax.fori_loop(0, 3, lambda i, c: jnp.sin(c) * 2.0, x),
        (F32(0.7),),
    ),
    "while": (
        lambda jnp, lax: lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0 + 1.0, x),
        (F32(0.7),),
    ),
    "while_int_carry": (
        lambda jnp, lax: (
            lambda x, k: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * k), (0, x))
        ),
        (F32(0.7), F32(1.5)),
    ),
    "fori_dynamic": (
        lambda jnp, lax: lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 1.5, x),
        (F32(0.7), np.int32(3)),
    ),
}


def _tangents(args: tuple[Any, ...], float0: Any) -> tuple[Any, ...]:
    return tuple(
        np.full_like(x, 0.5) if np.asarray(x).dtype.kind == "f" else np.zeros(np.shape(x), float0)
        for x in args
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_jvp_prints_and_computes_as_jax(oracle: Oracle, name: str) -> None:
    program, args = CASES[name]
    ts = _tangents(args, oracle.jax.dtypes.float0)

    def ours_f(*a: Any) -> Any:
        return lamina_core.jvp(program(lamina_core.numpy, lamina_core.lax), a, ts)

    def theirs_f(*a: Any) -> Any:
        return oracle.jax.jvp(program(oracle.jnp, oracle.lax), a, ts)

    ours = lamina_core.make_jaxpr(ours_f)(*args)
    theirs = oracle.jax.make_jaxpr(theirs_f)(*args)
    assert str(ours) == str(theirs), f"\n--- lamina ---\n{ours}\n--- jax ---\n{theirs}"
    lamina_core.check_jaxpr(ours)
    got = oracle.evaluate(ours, list(args))
    want = oracle.jax.tree_util.tree_leaves(theirs_f(*args))
    for g, w in zip(got, want, strict=True):
        w = np.asarray(w)
        if w.dtype.kind == "V":  # float0
            continue
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", ["cond", "scan", "scan_const_tangent", "while", "fori_static"])
def test_jvp_matches_finite_differences(name: str) -> None:
    program, args = CASES[name]
    f = program(lamina_core.numpy, lamina_core.lax)
    ts = _tangents(args, np.dtype([("float0", "V")]))
    _, tangent_out = lamina_core.jvp(f, args, ts)
    eps = 1e-3

    def shifted(sign: float) -> list[Any]:
        out = []
        for a, t in zip(args, ts, strict=True):
            floating = np.asarray(a).dtype.kind == "f"
            out.append(F32(np.asarray(a, np.float64) + sign * eps * t) if floating else a)
        return out

    hi = lamina_core.tree.tree_util.tree_leaves(f(*shifted(1.0)))
    lo = lamina_core.tree.tree_util.tree_leaves(f(*shifted(-1.0)))
    for t, h, low in zip(lamina_core.tree.tree_util.tree_leaves(tangent_out), hi, lo, strict=True):
        numeric = (np.asarray(h, np.float64) - np.asarray(low, np.float64)) / (2 * eps)
        np.testing.assert_allclose(np.asarray(t), numeric, rtol=2e-2, atol=2e-2)


def test_linearize_of_while_prints_and_computes_as_jax(oracle: Oracle) -> None:
    def program(lax: ModuleType) -> Callable[..., Any]:
        return lambda x: lax.while_loop(
            lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 1.5), (0, x)
        )[1]

    def linearized(module: ModuleType) -> Callable[..., Any]:
        return lambda x: module.linearize(program(module.lax), x)[1](x)

    x = F32(2.0)
    ours = lamina_core.make_jaxpr(linearized(lamina_core))(x)
    theirs = oracle.jax.make_jaxpr(linearized(oracle.jax))(x)
    assert str(ours) == str(theirs), f"\n--- lamina ---\n{ours}\n--- jax ---\n{theirs}"
    y, f_lin = lamina_core.linearize(program(lamina_core.lax), x)
    want_y, want_lin = oracle.jax.linearize(program(oracle.lax), x)
    np.testing.assert_allclose(np.asarray(y), np.asarray(want_y))
    np.testing.assert_allclose(np.asarray(f_lin(F32(1.0))), np.asarray(want_lin(F32(1.0))))


def test_reverse_mode_of_while_raises_jax_error(oracle: Oracle) -> None:
    def program(lax: ModuleType) -> Callable[..., Any]:
        return lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x)

    with pytest.raises(ValueError) as theirs:
        oracle.jax.grad(program(oracle.lax))(1.5)
    with pytest.raises(ValueError) as ours:
        lamina_core.grad(program(lamina_core.lax))(1.5)
    assert str(ours.value) == str(theirs.value)
