"""`shard_map(check_vma=True)` against JAX 0.10.2: varying-manual-axes types (`{V:i}`), the
`pvary` casts and `psum_invariant`, their rules under jvp, vjp, linearize and vmap, and the
out_specs check.

Each case is written once for both libraries (see `shard_map_harness.py`): Lamina's side runs
on core's NumPy reference evaluator (each device's piece through `vmap` over the mesh axes).
Reverse mode is printed through `vjp` with an explicit cotangent (JAX's `grad` seeds with a
`reshard` of its sharded avals).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_core.ir._avals import ShapedArray
from lamina_core.ir._mesh import AbstractMesh
from lamina_core.ir._partition_spec import PartitionSpec

H: Any = sys.modules["lamina_core_tests_shard_map_harness"]  # conftest.py loads it
f32 = np.float32
CASES: dict[str, Any]
case: Callable[[Any], Any]
CASES, case = H.case_registry()
_x = H.uniform


def _sm(ns: Any, f: Any, mesh: Any, in_specs: Any, out_specs: Any) -> Any:
    return ns.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs)


def _loss(ns: Any) -> Any:
    mesh = ns.mesh((4,), ("i",))

    def local(w: Any, a: Any) -> Any:
        return ns.lax.psum(ns.jnp.sum(ns.jnp.sin(a @ w) * ns.jnp.cos(w[0, 0])), "i")

    return _sm(ns, local, mesh, (ns.P(), ns.P("i")), ns.P())


# --- staging: which values vary, where pvary goes ----------------------------------------------


@case
def psum_of_scaled_blocks(ns: Any) -> Any:
    f = _sm(ns, lambda b: ns.lax.psum(b * 2.0, "i"), ns.mesh((4,), ("i",)), ns.P("i"), ns.P())
    return f, (_x(8, 3),)


@case
def replicated_operands_are_cast(ns: Any) -> Any:
    def body(a: Any, b: Any, w: Any) -> Any:
        y = ns.jnp.where(a > 0, a @ w, 0.0)
        return ns.jnp.concatenate([y, ns.jnp.clip(b, -0.5, 0.5)], axis=0)

    mesh = ns.mesh((4,), ("i",))
    f = _sm(ns, body, mesh, (ns.P("i"), ns.P(), ns.P()), ns.P("i"))
    return f, (_x(8, 3), _x(2, 3, seed=1), _x(3, 3, seed=2))


@case
def mesh_2d_pmean_over_one_axis(ns: Any) -> Any:
    def body(a: Any, b: Any) -> Any:
        return ns.lax.pmean(ns.jnp.tanh(a) * b, "y") + 1.0

    mesh = ns.mesh((2, 4), ("x", "y"))
    f = _sm(ns, body, mesh, (ns.P("x", "y"), ns.P(None, "y")), ns.P("x"))
    return f, (_x(4, 8), _x(1, 8, seed=1))


@case
def mesh_2d_psum_over_both(ns: Any) -> Any:
    mesh = ns.mesh((2, 4), ("x", "y"))
    f = _sm(ns, lambda a: ns.lax.psum(a, ("x", "y")), mesh, ns.P("x", "y"), ns.P())
    return f, (_x(4, 8),)


@case
def collectives(ns: Any) -> Any:
    perm = [(j, (j + 1) % 4) for j in range(4)]

    def body(a: Any, b: Any) -> Any:
        shifted = ns.lax.ppermute(a, "i", perm) * ns.lax.axis_index("i")
        top = ns.lax.pmax(b, "i") - ns.lax.pmin(b, "i")
        return (
            ns.lax.all_gather(shifted, "i", tiled=True),
            top / ns.lax.psum(1.0, "i"),
            ns.lax.psum_scatter(b, "i", tiled=True),
            ns.lax.all_to_all(a, "i", 0, 0, tiled=True),
        )

    mesh = ns.mesh((4,), ("i",))
    outs = (ns.P("i"), ns.P(), ns.P("i"), ns.P("i"))
    return _sm(ns, body, mesh, (ns.P("i"), ns.P()), outs), (_x(16, 3), _x(8, 3, seed=1))


@case
def psum_of_booleans_and_invariants(ns: Any) -> Any:
    def body(a: Any, b: Any) -> Any:
        return ns.lax.psum(a > 0, "i"), ns.lax.pmean(b, "i")

    mesh = ns.mesh((4,), ("i",))
    return _sm(ns, body, mesh, (ns.P("i"), ns.P()), (ns.P(), ns.P())), (_x(8, 3), _x(3))


@case
def loops_conds_jit_and_vmap(ns: Any) -> Any:
    def body(a: Any) -> Any:
        carry = ns.lax.fori_loop(0, 3, lambda k, c: c * 0.5 + a, ns.jnp.zeros_like(a))
        picked = ns.lax.cond(ns.lax.axis_index("i") > 1, lambda v: v * 2.0, lambda v: v, carry)
        rows = ns.vmap(lambda r: r * 3.0)(picked)
        return ns.jit(lambda v: ns.lax.psum(v, "i"))(rows)

    return _sm(ns, body, ns.mesh((4,), ("i",)), ns.P("i"), ns.P()), (_x(8, 3),)


@case
def jit_traced_for_each_kind_of_body(ns: Any) -> Any:
    """One jitted function in an unchecked and then a checked body: traced once for each."""
    g = ns.jit(lambda v: ns.lax.psum(v, "i"))
    mesh = ns.mesh((4,), ("i",))
    unchecked = ns.shard_map(g, mesh=mesh, in_specs=ns.P(), out_specs=ns.P(), check_vma=False)
    checked = _sm(ns, g, mesh, ns.P(), ns.P())
    return (lambda a: (unchecked(a), checked(a))), (_x(8),)


@case
def vmap_of_checked_shard_map(ns: Any) -> Any:
    f = _sm(ns, lambda a: ns.lax.psum(a * 2.0, "i"), ns.mesh((4,), ("i",)), ns.P("i"), ns.P())
    return ns.vmap(f), (_x(2, 8, 3),)


@case
def indexing_by_device(ns: Any) -> Any:
    def body(a: Any, b: Any) -> Any:
        i = ns.lax.axis_index("i")
        row = ns.lax.dynamic_slice(b, (i, 0), (1, 3)) + b[i] * a
        written = ns.lax.dynamic_update_slice(b, row, (i, 0))
        pooled = ns.lax.reduce_window(a, 0.0, ns.lax.add, (2, 1), (1, 1), "VALID")
        return written.at[i].add(a[0]), pooled

    mesh = ns.mesh((4,), ("i",))
    return _sm(ns, body, mesh, (ns.P("i"), ns.P()), (ns.P("i"), ns.P("i"))), (_x(8, 3), _x(8, 3))


@case
def grad_inside_the_body(ns: Any) -> Any:
    def body(a: Any) -> Any:
        def pooled(v: Any) -> Any:
            window = ns.lax.reduce_window(v, -np.inf, ns.lax.max, (2, 1), (1, 1), "VALID")
            return ns.jnp.sum(window)

        return ns.grad(pooled)(a)

    return _sm(ns, body, ns.mesh((4,), ("i",)), ns.P("i"), ns.P("i")), (_x(8, 3),)


@case
def pcast_to_varying(ns: Any) -> Any:
    def body(a: Any, b: Any) -> Any:
        return ns.lax.pcast(b, "i", to="varying") * a

    mesh = ns.mesh((4,), ("i",))
    return _sm(ns, body, mesh, (ns.P("i"), ns.P()), ns.P("i")), (_x(8, 2), _x(2, 2, seed=1))


# --- differentiation ----------------------------------------------------------------------------


@case
def jvp_checked(ns: Any) -> Any:
    f = _loss(ns)
    return (lambda w, a: ns.jvp(f, (w, a), (w, a))), (_x(3, 2, seed=1), _x(8, 3))


@case
def vjp_checked(ns: Any) -> Any:
    f = _loss(ns)

    def pullback(w: Any, a: Any) -> Any:
        return ns.vjp(f, w, a)[1](f32(1.5))

    return pullback, (_x(3, 2, seed=1), _x(8, 3))


@case
def linearize_checked(ns: Any) -> Any:
    f = _loss(ns)

    def tangent(w: Any, a: Any) -> Any:
        return ns.linearize(f, w, a)[1](w, a)

    return tangent, (_x(3, 2, seed=1), _x(8, 3))


@case
def vjp_checked_collectives(ns: Any) -> Any:
    perm = [(j, (j + 1) % 4) for j in range(4)]

    def body(x: Any, w: Any) -> Any:
        y = ns.lax.ppermute(ns.jnp.sin(x) * w, "i", perm)
        return ns.lax.all_gather(y * x, "i", tiled=True), ns.jnp.cos(w)

    f = _sm(ns, body, ns.mesh((4,), ("i",)), (ns.P("i"), ns.P()), (ns.P("i"), ns.P()))

    def pullback(x: Any, w: Any) -> Any:
        outs, vjp = ns.vjp(f, x, w)
        return vjp(outs)

    return pullback, (_x(8), _x(2, seed=1))


@case
def vjp_checked_remat(ns: Any) -> Any:
    def local(w: Any, a: Any) -> Any:
        return ns.lax.psum(ns.jnp.sum(ns.jnp.sin(a * w)), "i")

    f = _sm(ns, ns.checkpoint(local), ns.mesh((4,), ("i",)), (ns.P(), ns.P("i")), ns.P())

    def pullback(w: Any, a: Any) -> Any:
        return ns.vjp(f, w, a)[1](f32(1.0))

    return pullback, (f32(1.5), _x(8, 3))


# --- errors -------------------------------------------------------------------------------------


@case
def error_output_varies_but_spec_replicates(ns: Any) -> Any:
    return _sm(ns, lambda a: a * 2.0, ns.mesh((4,), ("i",)), ns.P("i"), ns.P()), (_x(8),)


@case
def error_output_varies_over_unnamed_axis_2d(ns: Any) -> Any:
    mesh = ns.mesh((2, 4), ("x", "y"))
    f = _sm(ns, lambda a: (a, ns.jnp.sum(a)), mesh, ns.P("x", "y"), (ns.P("x", "y"), ns.P("y")))
    return f, (_x(4, 8),)


@case
def error_scan_carry_becomes_varying(ns: Any) -> Any:
    def body(a: Any) -> Any:
        return ns.lax.scan(lambda c, r: (c + r, c), ns.jnp.zeros(3), a)[0]

    return _sm(ns, body, ns.mesh((4,), ("i",)), ns.P("i"), ns.P("i")), (_x(8, 3),)


@case
def error_pcast_of_a_varying_value(ns: Any) -> Any:
    f = _sm(
        ns,
        lambda a: ns.lax.pcast(a, "i", to="varying"),
        ns.mesh((4,), ("i",)),
        ns.P("i"),
        ns.P("i"),
    )
    return f, (_x(8),)


@case
def error_cond_branches_vary_differently(ns: Any) -> Any:
    def body(a: Any, b: Any) -> Any:
        return ns.lax.cond(b[0, 0] > 1, lambda: a * 2.0, lambda: b)

    mesh = ns.mesh((4,), ("i",))
    return _sm(ns, body, mesh, (ns.P("i"), ns.P()), ns.P("i")), (_x(8, 3), _x(2, 3))


ERRORS = [n for n in CASES if n.startswith("error")]
PRINTED = [n for n in CASES if n not in ERRORS]


@pytest.fixture(scope="module")
def jax_out() -> dict[str, Any]:
    pytest.importorskip("jax")
    out: dict[str, Any] = H.jax_results(__file__, CASES)
    return out


@pytest.mark.parametrize("name", PRINTED)
def test_printed_and_values_match_jax(name: str, jax_out: dict[str, Any]) -> None:
    H.check_case(name, CASES[name], jax_out[name])


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_jax(name: str, jax_out: dict[str, Any]) -> None:
    H.check_error(name, CASES[name], jax_out[name])


@pytest.mark.parametrize("name", ["vjp_checked", "linearize_checked", "loops_conds_jit_and_vmap"])
def test_checked_jaxprs_typecheck_and_evaluate_as_eager(name: str) -> None:
    ns = H.lamina_namespace()
    program, args = CASES[name](ns)
    closed = lamina_core.make_jaxpr(program)(*args)
    lamina_core.check_jaxpr(closed)  # the bodies' vma types are re-derived and must agree
    staged = lamina_core.eval_jaxpr(closed.jaxpr, closed.consts, *args)
    eager = H.lamina_leaves(program(*args))
    for s, e in zip(staged, eager, strict=True):
        np.testing.assert_allclose(np.asarray(s), np.asarray(e), rtol=1e-6, atol=1e-6)


def test_unchecked_bodies_carry_no_vma() -> None:
    ns = H.lamina_namespace()
    mesh = ns.mesh((4,), ("i",))
    f = ns.shard_map(
        lambda a: ns.lax.psum(a * ns.lax.axis_index("i"), "i"),
        mesh=mesh, in_specs=ns.P("i"), out_specs=ns.P(), check_vma=False,
    )  # fmt: skip
    text = str(lamina_core.make_jaxpr(f)(_x(8)))
    assert "{V:" not in text and "pvary" not in text and "psum_invariant" not in text
    assert "psum[axes=('i',) axis_index_groups=None]" in text


# --- the type -----------------------------------------------------------------------------------


def test_shaped_array_vma_is_part_of_the_type() -> None:
    plain = ShapedArray((2, 3), np.dtype(f32))
    varying = ShapedArray((2, 3), np.dtype(f32), vma=frozenset({"i"}))
    assert plain != varying and hash(plain) != hash(varying)
    assert varying == ShapedArray((2, 3), np.dtype(f32), vma={"i"})  # type: ignore[arg-type]  # canonicalized
    assert varying.str_short(True) == "f32[2,3]{V:i}" and str(plain) == "float32[2,3]"
    both = varying.update(vma=frozenset({"j", "i"}))
    assert both.str_short(True) == "f32[2,3]{V:(i,j)}"
    assert varying.update(shape=(4,)).vma == {"i"}
    assert varying.update(weak_type=True).normalize() == varying
    assert varying.to_tangent_aval() == varying
    ints = ShapedArray((2,), np.dtype(np.int32), vma=frozenset({"i"}))
    assert ints.to_tangent_aval().str_short(True) == "float0[2]{V:i}"
    assert varying.inc_rank(5, 0).dec_rank(5, 0) == varying
    assert varying.inc_rank(5, 0).vma == {"i"}


def test_shard_and_unshard_set_vma_from_specs() -> None:
    mesh = AbstractMesh((2, 4), ("x", "y"))
    aval = ShapedArray((4, 8), np.dtype(f32))
    spec = PartitionSpec("x", "y")
    piece = aval.shard(mesh, frozenset({"x", "y"}), True, spec)
    assert piece.str_short(True) == "f32[2,2]{V:(x,y)}"
    assert aval.shard(mesh, frozenset({"x", "y"}), False, spec).vma == frozenset()
    # Outside the body nothing is manual: the assembled value varies over nothing (and is
    # laid out over the shard_map's mesh).
    assert piece.unshard(mesh, True, spec) == aval.update(mesh=mesh)
