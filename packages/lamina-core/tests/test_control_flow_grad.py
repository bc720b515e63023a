"""Reverse mode of the control-flow primitives against JAX: `make_jaxpr(grad(f))` byte for
byte and the gradients' values, plus finite differences.

Covers the residual merge of `cond` branches (`empty2` in the slots a branch leaves empty),
`switch`, nested conds, the carry fixpoint of `scan`, residuals hoisted out of the loop
(computed from consts alone), residuals that are xs passed through, `reverse`, `unroll`,
static `fori_loop`, `map`, partial evaluation of a cond and a scan met inside a custom jvp
rule or a `while` body, and the dead-code elimination of unused outputs under `jit`.
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
RNG = np.random.default_rng(0)
XS = RNG.standard_normal(5).astype(F32)
W = (RNG.standard_normal((3, 3)) * 0.5).astype(F32)
H = RNG.standard_normal(3).astype(F32)
SEQ = RNG.standard_normal((4, 3)).astype(F32)

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]


def _rnn(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
    def loss(w: Any, h: Any, xs: Any) -> Any:
        def step(h: Any, x: Any) -> Any:
            h = jnp.tanh(w @ h + x)
            return h, jnp.sum(h * h)

        h, ys = lax.scan(step, h, xs)
        return jnp.sum(h) + jnp.sum(ys)

    return loss


def _custom_with_cond(jnp: ModuleType, lax: ModuleType, api: ModuleType) -> Callable[..., Any]:
    def f_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        scale = lax.cond(x > 0, lambda a, s: jnp.cos(a) * s, lambda a, s: s * 2.0, x, t)
        return jnp.sin(x), scale

    f = api.custom_jvp(lambda x: jnp.sin(x))
    f.defjvp(f_jvp)
    return lambda x: f(x) * x


def _custom_with_scan(jnp: ModuleType, lax: ModuleType, api: ModuleType) -> Callable[..., Any]:
    def f_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        tangent, _ = lax.scan(lambda c, _: (c * jnp.cos(x), None), t, None, length=3)
        return jnp.sin(x), tangent

    f = api.custom_jvp(lambda x: jnp.sin(x))
    f.defjvp(f_jvp)
    return lambda x: jnp.sum(f(x))


# name -> (program of (jnp, lax), args); the loss is the sum of every float output.
CASES: dict[str, tuple[Program, tuple[Any, ...]]] = {
    "cond": (
        lambda jnp, lax: lambda x: lax.cond(x > 0, jnp.sin, lambda a: a * 2.0, x),
        (F32(0.7),),
    ),
    "cond_false_branch": (
        lambda jnp, lax: lambda x: lax.cond(x > 0, jnp.sin, lambda a: a * 2.0, x),
        (F32(-0.7),),
    ),
    "cond_residuals_of_several_types": (
        lambda jnp, lax: (
            lambda x, y: lax.cond(
                jnp.sum(x) > 0,
                lambda a, b: (jnp.sin(a) * b, jnp.cos(b)),
                lambda a, b: (a * b, b * b * a[0]),
                x,
                y,
            )
        ),
        (XS[:3], F32(2.0)),
    ),
    "cond_int_output": (
        lambda jnp, lax: lambda x: lax.cond(x > 0, lambda a: (a * a, 1), lambda a: (-a, 2), x),
        (F32(0.7),),
    ),
    "cond_unused_operand": (
        lambda jnp, lax: lambda x, y: lax.cond(x > 0, lambda a, b: a * 3.0, lambda a, b: a, x, y),
        (F32(0.7), F32(5.0)),
    ),
    "switch": (
        lambda jnp, lax: lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, lambda a: a * a], x),
        (np.int32(2), F32(0.7)),
    ),
    "nested_cond": (
        lambda jnp, lax: (
            lambda x, t: lax.cond(
                t > 0,
                lambda a: lax.cond(t > 0.5, lambda b: jnp.sin(b) * t, lambda b: b * 2.0, a),
                lambda a: a - t,
                x,
            )
        ),
        (XS[:3], F32(0.75)),
    ),
    "scan": (
        lambda jnp, lax: lambda c, xs: lax.scan(lambda c, x: (c * jnp.sin(x), c), c, xs),
        (F32(1.3), XS),
    ),
    "scan_const_residual_hoisted": (
        lambda jnp, lax: (
            lambda w, xs: lax.scan(lambda c, x: (c * jnp.cos(w) + x, jnp.sin(c)), 0.0, xs)
        ),
        (F32(0.7), XS),
    ),
    "scan_carry_becomes_nonzero": (
        lambda jnp, lax: (
            lambda w: lax.scan(
                lambda c, _: ((c[1] * 2.0, c[0] + w), c[0] * c[1]), (0.0, 0.0), None, length=4
            )
        ),
        (F32(0.7),),
    ),
    "scan_reverse_unroll": (
        lambda jnp, lax: (
            lambda c, xs: lax.scan(
                lambda c, x: (jnp.sin(c) * x, c * x), c, xs, reverse=True, unroll=2
            )
        ),
        (F32(0.4), XS),
    ),
    "scan_rnn": (_rnn, (W, H, SEQ)),
    "scan_cond_in_body": (
        lambda jnp, lax: (
            lambda xs: lax.scan(lambda c, x: (lax.cond(x > 0, jnp.sin, jnp.cos, c) + x, c), 0.5, xs)
        ),
        (XS,),
    ),
    "cond_scan_in_branch": (
        lambda jnp, lax: (
            lambda x, xs: lax.cond(
                x > 0,
                lambda a: lax.scan(lambda c, v: (c * v, c), a, xs)[0],
                lambda a: a * 3.0,
                x,
            )
        ),
        (F32(0.9), XS),
    ),
    "fori_static": (
        lambda jnp, lax: lambda x: lax.fori_loop(0, 3, lambda i, c: c * jnp.sin(c), x),
        (F32(1.3),),
    ),
    "map": (lambda jnp, lax: lambda xs: lax.map(lambda v: jnp.sin(v) * v, xs), (SEQ,)),
}

# Gradients checked by finite differences (the rest agree with JAX's numbers above).
FINITE_DIFFERENCES = [
    "cond",
    "cond_false_branch",
    "cond_residuals_of_several_types",
    "switch",
    "scan",
    "scan_const_residual_hoisted",
    "scan_carry_becomes_nonzero",
    "scan_reverse_unroll",
    "scan_rnn",
    "scan_cond_in_body",
    "fori_static",
]


def _float_args(args: tuple[Any, ...]) -> tuple[int, ...]:
    return tuple(i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f")


def _loss(module: ModuleType, jnp: ModuleType, f: Callable[..., Any]) -> Callable[..., Any]:
    def loss(*args: Any) -> Any:
        leaves = module.tree_util.tree_leaves(f(*args))
        total = 0.0
        for leaf in leaves:
            if jnp.issubdtype(jnp.result_type(leaf), jnp.floating):
                total = total + jnp.sum(leaf)
        return total

    return loss


def _grad(module: ModuleType, jnp: ModuleType, lax: ModuleType, name: str) -> Callable[..., Any]:
    program, args = CASES[name]
    grad: Callable[..., Any] = module.grad(
        _loss(module, jnp, program(jnp, lax)), argnums=_float_args(args)
    )
    return grad


@pytest.mark.parametrize("name", sorted(CASES))
def test_grad_prints_and_computes_as_jax(oracle: Oracle, name: str) -> None:
    _, args = CASES[name]
    ours_f = _grad(lamina_core, lamina_core.numpy, lamina_core.lax, name)
    theirs_f = _grad(oracle.jax, oracle.jnp, oracle.lax, name)
    ours = lamina_core.make_jaxpr(ours_f)(*args)
    theirs = oracle.jax.make_jaxpr(theirs_f)(*args)
    assert str(ours) == str(theirs), f"\n--- lamina ---\n{ours}\n--- jax ---\n{theirs}"
    lamina_core.check_jaxpr(ours)
    got = oracle.evaluate(ours, list(args))
    want = oracle.jax.tree_util.tree_leaves(theirs_f(*args))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", FINITE_DIFFERENCES)
def test_grad_matches_finite_differences(name: str) -> None:
    program, args = CASES[name]
    loss = _loss(lamina_core, lamina_core.numpy, program(lamina_core.numpy, lamina_core.lax))
    floats = _float_args(args)
    grads = lamina_core.grad(loss, argnums=floats)(*args)
    eps = 1e-3
    for k, i in enumerate(floats):
        direction = np.random.default_rng(i).standard_normal(np.shape(args[i]))

        def shifted(sign: float, i: int = i, direction: Any = direction) -> Any:
            moved = list(args)
            moved[i] = (np.asarray(args[i], np.float64) + sign * eps * direction).astype(F32)
            return float(np.asarray(loss(*moved), np.float64))

        numeric = (shifted(1.0) - shifted(-1.0)) / (2 * eps)
        analytic = float(np.sum(np.asarray(grads[k], np.float64) * direction))
        np.testing.assert_allclose(analytic, numeric, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("program", [_custom_with_cond, _custom_with_scan])
def test_partial_evaluation_inside_a_custom_jvp_rule(oracle: Oracle, program: Any) -> None:
    # The rule runs under partial evaluation (linearization of a custom jvp): the cond or
    # scan in it is split into a known and an unknown part, as JAX's.
    x = F32(0.7)
    ours_f = lamina_core.grad(
        _loss(
            lamina_core, lamina_core.numpy, program(lamina_core.numpy, lamina_core.lax, lamina_core)
        )
    )
    theirs_f = oracle.jax.grad(
        _loss(oracle.jax, oracle.jnp, program(oracle.jnp, oracle.lax, oracle.jax))
    )
    ours = lamina_core.make_jaxpr(ours_f)(x)
    theirs = oracle.jax.make_jaxpr(theirs_f)(x)
    assert str(ours) == str(theirs), f"\n--- lamina ---\n{ours}\n--- jax ---\n{theirs}"
    np.testing.assert_allclose(np.asarray(ours_f(x)), np.asarray(theirs_f(x)), rtol=2e-5)


def test_linearize_of_while_with_cond_in_body(oracle: Oracle) -> None:
    # `while` has no linearization rule: its jvp meets partial evaluation, which splits the
    # cond in its body.
    def program(lax: ModuleType, jnp: ModuleType) -> Callable[..., Any]:
        def body(c: Any) -> Any:
            i, x = c
            return i + 1, lax.cond(i == 1, jnp.sin, lambda a: a * 1.5, x)

        return lambda x: lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1]

    def linearized(module: ModuleType, jnp: ModuleType) -> Callable[..., Any]:
        return lambda x: module.linearize(program(module.lax, jnp), x)[1](x)

    x = F32(0.8)
    ours = lamina_core.make_jaxpr(linearized(lamina_core, lamina_core.numpy))(x)
    theirs = oracle.jax.make_jaxpr(linearized(oracle.jax, oracle.jnp))(x)
    assert str(ours) == str(theirs), f"\n--- lamina ---\n{ours}\n--- jax ---\n{theirs}"
    _, f_lin = lamina_core.linearize(program(lamina_core.lax, lamina_core.numpy), x)
    _, want_lin = oracle.jax.linearize(program(oracle.lax, oracle.jnp), x)
    np.testing.assert_allclose(
        np.asarray(f_lin(F32(1.0))), np.asarray(want_lin(F32(1.0))), rtol=1e-6
    )


@pytest.mark.parametrize("name", ["cond_residuals_of_several_types", "scan_rnn", "map"])
def test_jit_of_grad_prints_as_jax(oracle: Oracle, name: str) -> None:
    # Under jit the tangent program is trimmed to the outputs read (cond and scan DCE rules).
    _, args = CASES[name]
    ours_f = lamina_core.jit(_grad(lamina_core, lamina_core.numpy, lamina_core.lax, name))
    theirs_f = oracle.jax.jit(_grad(oracle.jax, oracle.jnp, oracle.lax, name))
    ours = lamina_core.make_jaxpr(ours_f)(*args)
    theirs = oracle.jax.make_jaxpr(theirs_f)(*args)
    assert str(ours) == str(theirs), f"\n--- lamina ---\n{ours}\n--- jax ---\n{theirs}"


def test_vjp_with_cotangents_for_carry_and_ys(oracle: Oracle) -> None:
    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        return lambda c, xs: lax.scan(lambda c, x: (c * jnp.sin(x), c * x), c, xs)

    cts = (F32(0.5), np.linspace(-1.0, 1.0, 5).astype(F32))
    _, ours_vjp = lamina_core.vjp(program(lamina_core.numpy, lamina_core.lax), F32(1.3), XS)
    _, theirs_vjp = oracle.jax.vjp(program(oracle.jnp, oracle.lax), F32(1.3), XS)
    for g, w in zip(ours_vjp(cts), theirs_vjp(cts), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-6)


def test_grad_of_cond_is_symbolic_zero_for_integer_index() -> None:
    def f(i: Any, x: Any) -> Any:
        return lamina_core.lax.switch(i, [lambda a: a, lambda a: a * a], x)

    g = lamina_core.grad(f, argnums=1)(np.int32(1), F32(3.0))
    assert float(np.asarray(g)) == pytest.approx(6.0)


def _remat_cond(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
    def f(x: Any) -> Any:
        y = lax.cond(jnp.sum(x) > 0, lambda a: jnp.sin(a) * 2.0, jnp.cos, x)
        return jnp.sum(y * y)

    return f


def _remat_scan(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
    def f(w: Any, xs: Any) -> Any:
        c, ys = lax.scan(lambda c, v: (c * jnp.sin(v) * w, c), 1.0, xs)
        return c + jnp.sum(ys)

    return f


REMAT_CASES: dict[str, tuple[Program, tuple[Any, ...]]] = {
    "cond": (_remat_cond, (XS[:3],)),
    "scan": (_remat_scan, (F32(0.5), XS[:3])),
}


@pytest.mark.parametrize("policy", [None, "everything_saveable", "dots_saveable"])
@pytest.mark.parametrize("name", sorted(REMAT_CASES))
def test_grad_of_checkpoint_prints_and_computes_as_jax(
    oracle: Oracle, name: str, policy: str | None
) -> None:
    # Policy partial evaluation splits the cond (residuals merged across branches) and the
    # scan (its known part a `closed_call` of the hoisted residuals and the known loop).
    program, args = REMAT_CASES[name]

    def grad_of(module: ModuleType, jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        chosen = None if policy is None else getattr(module.checkpoint_policies, policy)
        f = module.checkpoint(program(jnp, lax), policy=chosen)
        grad: Callable[..., Any] = module.grad(f, argnums=tuple(range(len(args))))
        return grad

    ours_f = grad_of(lamina_core, lamina_core.numpy, lamina_core.lax)
    theirs_f = grad_of(oracle.jax, oracle.jnp, oracle.lax)
    ours = lamina_core.make_jaxpr(ours_f)(*args)
    theirs = oracle.jax.make_jaxpr(theirs_f)(*args)
    assert str(ours) == str(theirs), f"\n--- lamina ---\n{ours}\n--- jax ---\n{theirs}"
    lamina_core.check_jaxpr(ours)
    got = oracle.evaluate(ours, list(args))
    for g, w in zip(got, oracle.jax.tree_util.tree_leaves(theirs_f(*args)), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-6)
