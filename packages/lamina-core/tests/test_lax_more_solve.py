"""`lax.custom_linear_solve` (`linear_solve_p`), `lax.custom_root` and `lax.ragged_dot(_general)`
against JAX 0.10.2: printed
jaxprs (where JAX's printer does not hoist a jaxpr shared by two params into a `let`, which
Lamina's printer does not do), values, derivatives (forward, reverse, finite differences) and
batching (JAX's values, a Python loop)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core import lax as ll
from lamina_core import numpy as lnp

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle
jl = jax.lax
jnp = jax.numpy

A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], np.float32)
B = np.array([1.0, -2.0, 0.5], np.float32)


def _close(got: Any, want: Any, rtol: float = 1e-5) -> None:
    got_leaves, want_leaves = lc.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for a, b in zip(got_leaves, want_leaves, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-6)


def _jacobi(matvec: Any, b: Any, n: Any, steps: int = 20) -> Any:
    """A solver the derivative must not go through: Jacobi iterations on A's diagonal."""
    x = b / n.diagonal(A)
    for _ in range(steps):
        x = x + (b - matvec(x)) / n.diagonal(A)
    return x


def _solve_program(api: Any, n: Any, **kw: Any) -> Any:
    def f(a: Any, b: Any) -> Any:
        return api.custom_linear_solve(lambda x: a @ x, b, lambda m, v: _jacobi(m, v, n), **kw)

    return f


def test_linear_solve_prints_as_jax() -> None:
    def program(api: Any) -> Any:
        return lambda b: api.custom_linear_solve(lambda x: 2.0 * x, b, lambda m, v: v / 2.0)

    assert str(lc.make_jaxpr(program(ll))(B)) == str(jax.make_jaxpr(program(jl))(B))
    batch = np.stack([B, 2 * B])
    assert str(lc.make_jaxpr(lc.vmap(program(ll)))(batch)) == str(
        jax.make_jaxpr(jax.vmap(program(jl)))(batch)
    )


@pytest.mark.parametrize("kw", [{}, {"symmetric": True}], ids=["plain", "symmetric"])
def test_linear_solve_values_and_forward_mode_are_jaxs(kw: dict[str, Any]) -> None:
    ours, theirs = _solve_program(ll, lnp, **kw), _solve_program(jl, jnp, **kw)
    _close(ours(A, B), theirs(A, B))
    da, db = 0.1 * A[::-1].copy(), B[::-1].copy()
    _close(lc.jvp(ours, (A, B), (da, db)), jax.jvp(theirs, (A, B), (da, db)))
    eps = 1e-3
    fd = (
        np.asarray(ours(A + eps * da, B + eps * db)) - np.asarray(ours(A - eps * da, B - eps * db))
    ) / (2 * eps)
    np.testing.assert_allclose(np.asarray(lc.jvp(ours, (A, B), (da, db))[1]), fd, rtol=2e-2)


def test_linear_solve_reverse_mode_is_jaxs() -> None:
    def loss(api: Any, n: Any) -> Any:
        solve = _solve_program(api, n, symmetric=True)
        return lambda a, b: n.sum(solve(a, b) ** 2)

    got = lc.grad(loss(ll, lnp), argnums=(0, 1))(A, B)
    _close(got, jax.grad(loss(jl, jnp), argnums=(0, 1))(A, B), rtol=1e-4)
    with pytest.raises(TypeError, match="transpose_solve required"):
        lc.grad(lambda b: lnp.sum(_solve_program(ll, lnp)(A, b)))(B)


def test_linear_solve_batching_is_jaxs_and_a_loop() -> None:
    batch = np.stack([B, 2 * B, -B])
    ours = lc.vmap(_solve_program(ll, lnp, symmetric=True), (None, 0))(A, batch)
    _close(ours, jax.vmap(_solve_program(jl, jnp, symmetric=True), (None, 0))(A, batch))
    for i, row in enumerate(batch):
        _close(ours[i], _solve_program(ll, lnp)(A, row))
    mats = np.stack([A, 2 * A])
    _close(
        lc.vmap(_solve_program(ll, lnp, symmetric=True), (0, None))(mats, B),
        jax.vmap(_solve_program(jl, jnp, symmetric=True), (0, None))(mats, B),
    )


def test_linear_solve_shape_errors_are_jaxs() -> None:
    def bad(api: Any) -> Any:
        return lambda b: api.custom_linear_solve(lambda x: x[:2], b, lambda m, v: v)

    with pytest.raises(ValueError) as want:
        bad(jl)(B)
    with pytest.raises(ValueError) as got:
        bad(ll)(B)
    assert str(got.value) == str(want.value)


def _root_program(api: Any, n: Any) -> Any:
    def sqrt_of(c: Any) -> Any:
        def newton(f: Any, x0: Any) -> Any:
            x = x0
            for _ in range(30):
                x = x - f(x) / (2 * x)
            return x

        return api.custom_root(
            lambda x: x * x - c, n.ones_like(c), newton, lambda g, y: y / g(n.ones_like(y))
        )

    return sqrt_of


def test_custom_root_values_and_derivatives_are_jaxs() -> None:
    c = np.array([2.0, 9.0, 0.25], np.float32)
    ours, theirs = _root_program(ll, lnp), _root_program(jl, jnp)
    _close(ours(c), theirs(c))
    _close(ours(c), np.sqrt(c))
    dc = np.array([1.0, -0.5, 2.0], np.float32)
    _close(lc.jvp(ours, (c,), (dc,)), jax.jvp(theirs, (c,), (dc,)))
    grad = lc.grad(lambda v: lnp.sum(ours(v)))(c)
    _close(grad, jax.grad(lambda v: jnp.sum(theirs(v)))(c))
    _close(grad, 0.5 / np.sqrt(c), rtol=1e-4)


# --- ragged_dot -------------------------------------------------------------------------------

LHS = np.arange(12, dtype=np.float32).reshape(6, 2) / 7
RHS = np.arange(24, dtype=np.float32).reshape(3, 2, 4) / 5
GROUPS = np.array([2, 1, 3], np.int32)


def test_ragged_dot_prints_and_differentiates_as_jax() -> None:
    args = (LHS, RHS, GROUPS)
    assert str(lc.make_jaxpr(ll.ragged_dot)(*args)) == str(jax.make_jaxpr(jl.ragged_dot)(*args))
    _close(ll.ragged_dot(*args), jl.ragged_dot(*args))

    def loss(api: Any, n: Any) -> Any:
        return lambda lhs, rhs, gs: n.sum(api.ragged_dot(lhs, rhs, gs) ** 2)

    ours, theirs = lc.grad(loss(ll, lnp), (0, 1)), jax.grad(loss(jl, jnp), (0, 1))
    assert str(lc.make_jaxpr(ours)(*args)) == str(jax.make_jaxpr(theirs)(*args))
    _close(ours(*args), theirs(*args), rtol=1e-5)
    d_lhs, d_rhs = LHS[::-1].copy(), RHS[::-1].copy()
    _, tangent = lc.jvp(lambda a, b: ll.ragged_dot(a, b, GROUPS), (LHS, RHS), (d_lhs, d_rhs))
    eps = 1e-2
    plus = np.asarray(ll.ragged_dot(LHS + eps * d_lhs, RHS + eps * d_rhs, GROUPS))
    minus = np.asarray(ll.ragged_dot(LHS - eps * d_lhs, RHS - eps * d_rhs, GROUPS))
    np.testing.assert_allclose(np.asarray(tangent), (plus - minus) / (2 * eps), rtol=1e-3)


def test_ragged_dot_is_a_loop_over_groups() -> None:
    out = np.asarray(ll.ragged_dot(LHS, RHS, GROUPS))
    start = 0
    for g, size in enumerate(GROUPS):
        rows = slice(start, start + size)
        np.testing.assert_allclose(out[rows], LHS[rows] @ RHS[g], rtol=1e-6)
        start += size


def test_ragged_dot_general_contracting_and_batch_modes_are_jaxs() -> None:
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    y = np.arange(18, dtype=np.float32).reshape(6, 3)
    ours_dims = ll.RaggedDotDimensionNumbers((([0], [0]), ([], [])), [0], [])
    their_dims = jl.RaggedDotDimensionNumbers((([0], [0]), ([], [])), [0], [])
    _close(
        ll.ragged_dot_general(x, y, GROUPS, ours_dims),
        jl.ragged_dot_general(x, y, GROUPS, their_dims),
    )
    ours = lc.make_jaxpr(lambda a, b, g: ll.ragged_dot_general(a, b, g, ours_dims))
    theirs = jax.make_jaxpr(lambda a, b, g: jl.ragged_dot_general(a, b, g, their_dims))
    assert str(ours(x, y, GROUPS)) == str(theirs(x, y, GROUPS))
    bx, by = np.ones((3, 2, 4), np.float32), np.ones((3, 4, 5), np.float32)
    ours_batch = ll.RaggedDotDimensionNumbers((([2], [1]), ([0], [0])), [0], [])
    their_batch = jl.RaggedDotDimensionNumbers((([2], [1]), ([0], [0])), [0], [])
    _close(
        ll.ragged_dot_general(bx, by, GROUPS, ours_batch),
        jl.ragged_dot_general(bx, by, GROUPS, their_batch),
    )


def test_ragged_dot_errors_are_jaxs() -> None:
    for gs in (np.int32(3), GROUPS.astype(np.float32)):
        with pytest.raises(TypeError) as want:
            jl.ragged_dot(LHS, RHS, gs)
        with pytest.raises(TypeError) as got:
            ll.ragged_dot(LHS, RHS, gs)
        assert str(got.value) == str(want.value)
