"""Differentiation of `shard_map` against JAX 0.10.2: printed jaxprs, values, finite differences.

Each case is written once for both libraries (see `shard_map_harness.py`). Reverse mode is
printed through `vjp` with an explicit cotangent: JAX's `grad` seeds a `shard_map` output with
`reshard 1.0` (its avals carry a mesh sharding), which Lamina's avals do not have.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_core.testing import check_grads

H: Any = sys.modules["lamina_core_tests_shard_map_harness"]  # conftest.py loads it
f32 = np.float32
CASES: dict[str, Any]
case: Callable[[Any], Any]
CASES, case = H.case_registry()
_x = H.uniform


# --- programs ---------------------------------------------------------------------------------


def _dp_loss(ns: Any, check_vma: bool) -> Any:
    """Data-parallel loss: data split over 'i', parameters replicated, loss psummed."""
    mesh = ns.mesh((4,), ("i",))

    def loss(w: Any, x: Any) -> Any:
        return ns.lax.psum(ns.jnp.sum(ns.jnp.sin(x * w)), "i")

    return ns.shard_map(
        loss, mesh=mesh, in_specs=(ns.P(), ns.P("i")), out_specs=ns.P(), check_vma=check_vma
    )


def _vjp_program(ns: Any, f: Any) -> Any:
    def program(*args: Any) -> Any:
        *primals, ct = args
        return ns.vjp(f, *primals)[1](ct)

    return program


@case
def vjp_dp_loss(ns: Any) -> Any:
    f = _dp_loss(ns, check_vma=False)
    return _vjp_program(ns, f), (f32(1.5), _x(8), f32(0.5))


@case
def jvp_dp_loss(ns: Any) -> Any:
    f = _dp_loss(ns, check_vma=False)

    def program(w: Any, x: Any, tw: Any, tx: Any) -> Any:
        return ns.jvp(f, (w, x), (tw, tx))

    return program, (f32(1.5), _x(8), f32(0.3), _x(8, seed=1))


@case
def jvp_one_zero_tangent(ns: Any) -> Any:
    f = _dp_loss(ns, check_vma=False)

    def program(w: Any, x: Any, tw: Any) -> Any:
        return ns.jvp(lambda w: f(w, x), (w,), (tw,))

    return program, (f32(1.5), _x(8), f32(0.3))


@case
def vjp_scalar_residuals(ns: Any) -> Any:
    """Scalar residuals leave the known body promoted to rank 1, squeezed in the tangent one."""
    mesh = ns.mesh((4,), ("i",))

    def body(w: Any, x: Any) -> Any:
        return ns.lax.psum(ns.jnp.sum(x) * ns.jnp.sin(w), "i")

    f = ns.shard_map(
        body, mesh=mesh, in_specs=(ns.P(), ns.P("i")), out_specs=ns.P(), check_vma=False
    )
    return _vjp_program(ns, f), (f32(1.5), _x(8), f32(2.0))


@case
def vjp_pmean(ns: Any) -> Any:
    mesh = ns.mesh((4,), ("i",))

    def body(w: Any, x: Any) -> Any:
        return ns.lax.pmean(ns.jnp.tanh(x @ w), "i")

    f = ns.shard_map(
        body, mesh=mesh, in_specs=(ns.P(), ns.P("i")), out_specs=ns.P(), check_vma=False
    )
    return _vjp_program(ns, f), (_x(3, 2), _x(8, 3, seed=1), _x(2, 2, seed=2))


@case
def vjp_all_gather(ns: Any) -> Any:
    mesh = ns.mesh((4,), ("i",))

    def body(x: Any) -> Any:
        return ns.lax.all_gather(ns.jnp.sin(x), "i", tiled=True) * 2.0

    f = ns.shard_map(body, mesh=mesh, in_specs=ns.P("i"), out_specs=ns.P(), check_vma=False)
    return _vjp_program(ns, f), (_x(8), _x(8, seed=1))


@case
def vjp_ppermute(ns: Any) -> Any:
    mesh = ns.mesh((4,), ("i",))
    perm = [(j, (j + 1) % 4) for j in range(4)]

    def body(x: Any) -> Any:
        return ns.lax.ppermute(x * x, "i", perm)

    f = ns.shard_map(body, mesh=mesh, in_specs=ns.P("i"), out_specs=ns.P("i"), check_vma=False)
    return _vjp_program(ns, f), (_x(8), _x(8, seed=1))


@case
def vjp_axis_index(ns: Any) -> Any:
    mesh = ns.mesh((4,), ("i",))

    def body(x: Any) -> Any:
        i = ns.lax.axis_index("i").astype(np.float32)
        return ns.jnp.cos(x) * (i + 1.0)

    f = ns.shard_map(body, mesh=mesh, in_specs=ns.P("i"), out_specs=ns.P("i"), check_vma=False)
    return _vjp_program(ns, f), (_x(8), _x(8, seed=1))


@case
def vjp_mesh_2d_partial_specs(ns: Any) -> Any:
    mesh = ns.mesh((2, 4), ("x", "y"))

    def body(a: Any, b: Any) -> Any:
        return ns.jnp.sin(b) * 3.0, ns.lax.psum(a * a, "y")

    f = ns.shard_map(
        body,
        mesh=mesh,
        in_specs=(ns.P("x"), ns.P("x", "y")),
        out_specs=(ns.P("x", "y"), ns.P("x")),
        check_vma=False,
    )

    def program(a: Any, b: Any, c1: Any, c2: Any) -> Any:
        return ns.vjp(f, a, b)[1]((c1, c2))

    return program, (_x(4), _x(4, 8, seed=1), _x(4, 8, seed=2), _x(4, seed=3))


@case
def vjp_mesh_2d_replicated_over_y(ns: Any) -> Any:
    """An input replicated over 'y' (its cotangent psummed over 'y'), an output too."""
    mesh = ns.mesh((2, 4), ("x", "y"))

    def body(w: Any, x: Any) -> Any:
        return ns.lax.psum(ns.jnp.sum(ns.jnp.exp(x * w), axis=1), "y")

    f = ns.shard_map(
        body, mesh=mesh, in_specs=(ns.P("x"), ns.P("x", "y")), out_specs=ns.P("x"),
        check_vma=False,
    )  # fmt: skip
    return _vjp_program(ns, f), (_x(4, 2), _x(4, 8, seed=1), _x(4, seed=2))


@case
def vjp_broadcasting_values_only(ns: Any) -> Any:
    """Values only: JAX's transpose of a broadcast inside the body prints the manual mesh in
    `reshape`/`reduce_sum` sharding params, which Lamina's types do not carry."""
    mesh = ns.mesh((2, 4), ("x", "y"))

    def body(w: Any, x: Any) -> Any:
        return ns.lax.psum(ns.jnp.sum(ns.jnp.exp(x * w), axis=1), "y")

    f = ns.shard_map(
        body, mesh=mesh, in_specs=(ns.P("x"), ns.P("x", "y")), out_specs=ns.P("x"),
        check_vma=False,
    )  # fmt: skip
    return _vjp_program(ns, f), (_x(4, 1), _x(4, 8, seed=1), _x(4, seed=2))


@case
def vjp_nested_jit(ns: Any) -> Any:
    mesh = ns.mesh((4,), ("i",))

    @ns.jit  # type: ignore[untyped-decorator]  # ns is either library
    def inner(w: Any, x: Any) -> Any:
        return ns.jnp.sin(x) * w

    def body(w: Any, x: Any) -> Any:
        return ns.lax.psum(ns.jnp.sum(inner(w, x)), "i")

    f = ns.shard_map(
        body, mesh=mesh, in_specs=(ns.P(), ns.P("i")), out_specs=ns.P(), check_vma=False
    )
    return _vjp_program(ns, f), (f32(1.5), _x(8), f32(1.0))


@case
def vjp_closed_over_array(ns: Any) -> Any:
    mesh = ns.mesh((4,), ("i",))
    scale = _x(2, seed=5)

    def body(x: Any) -> Any:
        return ns.jnp.sin(x) * scale

    f = ns.shard_map(body, mesh=mesh, in_specs=ns.P("i"), out_specs=ns.P("i"), check_vma=False)
    return _vjp_program(ns, f), (_x(8), _x(8, seed=1))


@case
def vjp_unused_output_dce(ns: Any) -> Any:
    """Only the first output is differentiated: the tangent body loses the second."""
    mesh = ns.mesh((4,), ("i",))

    def body(x: Any) -> Any:
        return ns.jnp.sin(x), ns.jnp.cos(x) * x

    f = ns.shard_map(
        body, mesh=mesh, in_specs=ns.P("i"), out_specs=(ns.P("i"), ns.P("i")), check_vma=False
    )
    return _vjp_program(ns, lambda x: f(x)[0]), (_x(8), _x(8, seed=1))


@case
def linearize_dp_loss(ns: Any) -> Any:
    f = _dp_loss(ns, check_vma=False)

    def program(w: Any, x: Any, tw: Any, tx: Any) -> Any:
        out, f_jvp = ns.linearize(f, w, x)
        return out, f_jvp(tw, tx)

    return program, (f32(1.5), _x(8), f32(0.3), _x(8, seed=1))


@case
def vjp_of_jit_of_shard_map(ns: Any) -> Any:
    f = ns.jit(_dp_loss(ns, check_vma=False))
    return _vjp_program(ns, f), (f32(1.5), _x(8), f32(0.5))


# --- values only: check_vma=True (JAX's bodies then carry replication types and pvary) ----------


@case
def grad_dp_loss_check_vma(ns: Any) -> Any:
    return ns.grad(_dp_loss(ns, check_vma=True), argnums=(0, 1)), (f32(1.5), _x(8))


@case
def grad_2d_check_vma(ns: Any) -> Any:
    mesh = ns.mesh((2, 4), ("x", "y"))

    def body(w: Any, x: Any) -> Any:
        return ns.lax.psum(ns.jnp.sum(ns.jnp.exp(x * w)), ("x", "y"))

    f = ns.shard_map(body, mesh=mesh, in_specs=(ns.P("x"), ns.P("x", "y")), out_specs=ns.P())
    return ns.grad(f, argnums=(0, 1)), (_x(4, 1), _x(4, 8, seed=1))


@case
def grad_check_vma_unpsummed_replicated(ns: Any) -> Any:
    """A replicated output computed without a collective (JAX inserts pvary for `w`)."""
    mesh = ns.mesh((4,), ("i",))

    def body(w: Any, x: Any) -> Any:
        return ns.jnp.sin(w) * 2.0, x * w

    f = ns.shard_map(body, mesh=mesh, in_specs=(ns.P(), ns.P("i")), out_specs=(ns.P(), ns.P("i")))

    def loss(w: Any, x: Any) -> Any:
        a, b = f(w, x)
        return ns.jnp.sum(a) + ns.jnp.sum(b * b)

    return ns.grad(loss, argnums=(0, 1)), (_x(3), _x(8, 3, seed=1))


@case
def grad_check_vma_ppermute_all_gather(ns: Any) -> Any:
    mesh = ns.mesh((4,), ("i",))
    perm = [(j, (j + 1) % 4) for j in range(4)]

    def body(x: Any) -> Any:
        y = ns.lax.ppermute(ns.jnp.sin(x), "i", perm)
        return ns.lax.all_gather(y * x, "i", tiled=True)

    f = ns.shard_map(body, mesh=mesh, in_specs=ns.P("i"), out_specs=ns.P("i"))
    return ns.grad(lambda x: ns.jnp.sum(f(x) ** 2)), (_x(8),)


PRINTED = [n for n in CASES if "check_vma" not in n and "values_only" not in n]


@pytest.fixture(scope="module")
def jax_out() -> dict[str, Any]:
    pytest.importorskip("jax")
    out: dict[str, Any] = H.jax_results(__file__, CASES)
    return out


@pytest.mark.parametrize("name", PRINTED)
def test_printed_and_values_match_jax(name: str, jax_out: dict[str, Any]) -> None:
    H.check_case(name, CASES[name], jax_out[name])


@pytest.mark.parametrize("name", [n for n in CASES if n not in PRINTED])
def test_values_match_jax(name: str, jax_out: dict[str, Any]) -> None:
    H.check_case(name, CASES[name], jax_out[name], printed=False)


def test_staged_rules_typecheck_and_evaluate_as_eager() -> None:
    ns = H.lamina_namespace()
    for name in ("vjp_dp_loss", "vjp_mesh_2d_partial_specs", "linearize_dp_loss"):
        program, args = CASES[name](ns)
        closed = lamina_core.make_jaxpr(program)(*args)
        lamina_core.check_jaxpr(closed)  # shard_map binds its mesh axes for its body
        staged = lamina_core.eval_jaxpr(closed.jaxpr, closed.consts, *args)
        eager = H.lamina_leaves(program(*args))
        for s, e in zip(staged, eager, strict=True):
            np.testing.assert_allclose(np.asarray(s), np.asarray(e), rtol=1e-6, atol=1e-6)


# --- numerically: finite differences and the inner-product identity ---------------------------


@pytest.mark.parametrize("check_vma", [False, True])
def test_dp_loss_grads_numerically(check_vma: bool) -> None:
    f = _dp_loss(H.lamina_namespace(), check_vma)
    check_grads(f, (f32(0.7), _x(8)), order=1, tol=2e-2)


def test_2d_mesh_grads_numerically() -> None:
    ns = H.lamina_namespace()
    mesh = ns.mesh((2, 4), ("x", "y"))

    def body(a: Any, b: Any) -> Any:
        return ns.jnp.sin(b) * a[:, None], ns.lax.psum(a * a, "y")

    f = ns.shard_map(
        body, mesh=mesh, in_specs=(ns.P("x"), ns.P("x", "y")),
        out_specs=(ns.P("x", "y"), ns.P("x")), check_vma=False,
    )  # fmt: skip
    check_grads(f, (_x(4), _x(4, 8, seed=1)), order=1, tol=2e-2)


def test_collectives_grads_numerically() -> None:
    ns = H.lamina_namespace()
    mesh = ns.mesh((4,), ("i",))
    perm = [(j, (j + 1) % 4) for j in range(4)]

    def body(w: Any, x: Any) -> Any:
        y = ns.lax.ppermute(ns.jnp.sin(x * w), "i", perm)
        g = ns.lax.all_gather(y, "i", tiled=True)
        return ns.lax.pmean(ns.jnp.sum(g * g), "i") + ns.lax.psum(ns.jnp.sum(x), "i")

    f = ns.shard_map(
        body, mesh=mesh, in_specs=(ns.P(), ns.P("i")), out_specs=ns.P(), check_vma=False
    )
    check_grads(f, (f32(0.8), _x(8)), order=1, tol=2e-2)


@pytest.mark.slow
def test_second_order_numerically() -> None:
    f = _dp_loss(H.lamina_namespace(), check_vma=False)
    check_grads(f, (f32(0.7), _x(8)), order=2, tol=5e-2)
