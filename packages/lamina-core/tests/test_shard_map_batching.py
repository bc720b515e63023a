"""vmap of `shard_map` against JAX 0.10.2 (printed jaxprs and values) and a per-example loop.

Each case is written once for both libraries (see `shard_map_harness.py`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core

H: Any = sys.modules["lamina_core_tests_shard_map_harness"]  # conftest.py loads it
f32 = np.float32
CASES: dict[str, Any]
case: Callable[[Any], Any]
CASES, case = H.case_registry()
_x = H.uniform


def _dp_loss(ns: Any) -> Any:
    mesh = ns.mesh((4,), ("i",))

    def loss(w: Any, x: Any) -> Any:
        return ns.lax.psum(ns.jnp.sum(ns.jnp.sin(x * w)), "i")

    return ns.shard_map(
        loss, mesh=mesh, in_specs=(ns.P(), ns.P("i")), out_specs=ns.P(), check_vma=False
    )


@case
def vmap_data_batched(ns: Any) -> Any:
    return ns.vmap(_dp_loss(ns), in_axes=(None, 0)), (f32(1.5), _x(3, 8))


@case
def vmap_both_batched_axis_1(ns: Any) -> Any:
    return ns.vmap(_dp_loss(ns), in_axes=(0, 1)), (_x(3), _x(8, 3, seed=1))


@case
def vmap_2d_mesh_outputs(ns: Any) -> Any:
    """Outputs mapped at the axis the body's rules leave them, one unmapped output."""
    mesh = ns.mesh((2, 4), ("x", "y"))

    def body(a: Any, b: Any, c: Any) -> Any:
        return ns.jnp.sin(b) * 2.0, ns.lax.psum(a, "y"), c + 1.0

    f = ns.shard_map(
        body, mesh=mesh, in_specs=(ns.P("x"), ns.P("x", "y"), ns.P()),
        out_specs=(ns.P("x", "y"), ns.P("x"), ns.P()), check_vma=False,
    )  # fmt: skip
    return ns.vmap(f, in_axes=(0, 2, None)), (_x(5, 4), _x(4, 8, 5, seed=1), _x(3, seed=2))


@case
def vmap_collectives(ns: Any) -> Any:
    mesh = ns.mesh((4,), ("i",))
    perm = [(j, (j + 1) % 4) for j in range(4)]

    def body(x: Any) -> Any:
        i = ns.lax.axis_index("i").astype(np.float32)
        y = ns.lax.ppermute(x * i, "i", perm)
        return ns.lax.all_gather(y, "i", tiled=True), ns.lax.pmean(x, "i")

    f = ns.shard_map(
        body, mesh=mesh, in_specs=ns.P("i"), out_specs=(ns.P(), ns.P()), check_vma=False
    )
    return ns.vmap(f), (_x(3, 8),)


@case
def vmap_named_axis_in_body(ns: Any) -> Any:
    """The body also reduces over the vmap's own axis name."""
    mesh = ns.mesh((4,), ("i",))

    def body(x: Any) -> Any:
        return ns.lax.psum(x, "i") + ns.lax.psum(x, "b")

    f = ns.shard_map(body, mesh=mesh, in_specs=ns.P("i"), out_specs=ns.P(), check_vma=False)
    return ns.vmap(f, axis_name="b"), (_x(3, 8),)


@case
def vmap_of_grad(ns: Any) -> Any:
    f = _dp_loss(ns)

    def pullback(w: Any, x: Any, ct: Any) -> Any:
        return ns.vjp(f, w, x)[1](ct)[0]

    return ns.vmap(pullback, in_axes=(0, None, 0)), (_x(3), _x(8, seed=1), _x(3, seed=2))


@case
def grad_of_vmap(ns: Any) -> Any:
    f = ns.vmap(_dp_loss(ns), in_axes=(None, 0))

    def program(w: Any, x: Any, ct: Any) -> Any:
        return ns.vjp(f, w, x)[1](ct)

    return program, (f32(0.4), _x(3, 8), _x(3, seed=2))


@case
def vmap_check_vma_values_only(ns: Any) -> Any:
    mesh = ns.mesh((2, 4), ("x", "y"))

    def body(w: Any, x: Any) -> Any:
        return ns.lax.psum(ns.jnp.sum(ns.jnp.exp(x * w)), ("x", "y"))

    f = ns.shard_map(body, mesh=mesh, in_specs=(ns.P("x"), ns.P("x", "y")), out_specs=ns.P())
    return ns.vmap(f, in_axes=(None, 1)), (_x(4, 1), _x(4, 3, 8, seed=1))


@case
def vmap_spmd_axis_name(ns: Any) -> Any:
    """The mapped axis split over mesh axis 'x', the shard_map manual over 'y' only."""
    mesh = ns.mesh((2, 4), ("x", "y"))

    def body(a: Any) -> Any:
        return ns.lax.psum(ns.jnp.sin(a), "y")

    f = ns.shard_map(
        body, mesh=mesh, in_specs=ns.P("y"), out_specs=ns.P(), axis_names={"y"}, check_vma=False
    )
    # Printed only: JAX 0.10.2 cannot lower this program (its body and result types disagree).
    return str(ns.make_jaxpr(ns.vmap(f, spmd_axis_name="x"))(_x(4, 8))), ()


PRINTED = [n for n in CASES if "values_only" not in n]


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


@pytest.mark.parametrize(
    ("name", "in_axes"),
    [("vmap_data_batched", (None, 0)), ("vmap_both_batched_axis_1", (0, 1))],
)
def test_vmap_matches_a_loop(name: str, in_axes: tuple[Any, ...]) -> None:
    ns = H.lamina_namespace()
    program, args = CASES[name](ns)
    f = _dp_loss(ns)
    got = np.asarray(program(*args))
    size = next(a.shape[d] for a, d in zip(args, in_axes, strict=True) if d is not None)
    want = [
        np.asarray(
            f(
                *(
                    a if d is None else np.take(a, k, axis=d)
                    for a, d in zip(args, in_axes, strict=True)
                )
            )
        )
        for k in range(size)
    ]
    np.testing.assert_allclose(got, np.stack(want), rtol=1e-6, atol=1e-6)


def test_vmap_2d_outputs_match_a_loop() -> None:
    ns = H.lamina_namespace()
    program, (a, b, c) = CASES["vmap_2d_mesh_outputs"](ns)
    mesh = ns.mesh((2, 4), ("x", "y"))
    outs = program(a, b, c)
    for k in range(a.shape[0]):
        f = ns.shard_map(
            lambda a, b, c: (ns.jnp.sin(b) * 2.0, ns.lax.psum(a, "y"), c + 1.0),
            mesh=mesh, in_specs=(ns.P("x"), ns.P("x", "y"), ns.P()),
            out_specs=(ns.P("x", "y"), ns.P("x"), ns.P()), check_vma=False,
        )  # fmt: skip
        want = f(a[k], b[:, :, k], c)
        np.testing.assert_allclose(np.asarray(outs[0])[k], want[0], rtol=1e-6)
        np.testing.assert_allclose(np.asarray(outs[1])[k], want[1], rtol=1e-6)
        np.testing.assert_allclose(np.asarray(outs[2])[k], want[2], rtol=1e-6)


def test_spmd_axis_name_in_specs_is_an_error() -> None:
    ns = H.lamina_namespace()
    mesh = ns.mesh((2, 4), ("x", "y"))
    f = ns.shard_map(
        lambda a: a, mesh=mesh, in_specs=ns.P("x"), out_specs=ns.P("x"), check_vma=False
    )
    with pytest.raises(ValueError, match="vmap spmd_axis_name cannot appear in shard_map in_specs"):
        lamina_core.vmap(f, spmd_axis_name="x")(_x(3, 8))
