"""The `shard_map` primitive against JAX 0.10.2: staging, values, errors, partial eval, DCE.

Each case is written once for both libraries (see `shard_map_harness.py`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

H: Any = sys.modules["lamina_core_tests_shard_map_harness"]  # conftest.py loads it
f32 = np.float32
CASES: dict[str, Any]
case: Callable[[Any], Any]
CASES, case = H.case_registry()
_x = H.uniform


def _dp_loss(ns: Any, check_vma: bool = False) -> Any:
    mesh = ns.mesh((4,), ("i",))

    def loss(w: Any, x: Any) -> Any:
        return ns.lax.psum(ns.jnp.sum(ns.jnp.sin(x * w)), "i")

    return ns.shard_map(
        loss, mesh=mesh, in_specs=(ns.P(), ns.P("i")), out_specs=ns.P(), check_vma=check_vma
    )


def _two_outputs(ns: Any) -> Any:
    mesh = ns.mesh((2, 4), ("x", "y"))

    def body(a: Any, b: Any) -> Any:
        return ns.jnp.sin(b) * 2.0, ns.lax.psum(ns.jnp.cos(a), "y")

    return ns.shard_map(
        body, mesh=mesh, in_specs=(ns.P("x"), ns.P("x", "y")),
        out_specs=(ns.P("x", "y"), ns.P("x")), check_vma=False,
    )  # fmt: skip


# --- staging and the reference evaluator --------------------------------------------------------


@case
def stage_dp_loss(ns: Any) -> Any:
    return _dp_loss(ns), (f32(1.5), _x(8))


@case
def stage_2d_mesh(ns: Any) -> Any:
    return _two_outputs(ns), (_x(4), _x(4, 8, seed=1))


@case
def stage_collectives(ns: Any) -> Any:
    mesh = ns.mesh((4,), ("i",))
    perm = [(j, (j + 1) % 4) for j in range(4)]

    def body(x: Any) -> Any:
        i = ns.lax.axis_index("i")
        y = ns.lax.ppermute(x, "i", perm) * i.astype(np.float32)
        return ns.lax.all_gather(y, "i", tiled=True), ns.lax.pmean(x, "i")

    f = ns.shard_map(
        body, mesh=mesh, in_specs=ns.P("i"), out_specs=(ns.P(), ns.P()), check_vma=False
    )
    return f, (_x(8),)


@case
def stage_nested_jit_and_closure(ns: Any) -> Any:
    mesh = ns.mesh((4,), ("i",))
    scale = _x(2, seed=4)

    @ns.jit  # type: ignore[untyped-decorator]  # ns is either library
    def inner(x: Any) -> Any:
        return ns.jnp.tanh(x) * scale

    f = ns.shard_map(inner, mesh=mesh, in_specs=ns.P("i"), out_specs=ns.P("i"), check_vma=False)
    return f, (_x(8),)


@case
def values_check_vma(ns: Any) -> Any:
    return _dp_loss(ns, check_vma=True), (f32(1.5), _x(8))


# --- errors -------------------------------------------------------------------------------------


@case
def error_spec_does_not_divide(ns: Any) -> Any:
    return _dp_loss(ns), (f32(1.5), _x(6))


@case
def error_in_spec_too_long(ns: Any) -> Any:
    mesh = ns.mesh((4,), ("i",))
    f = ns.shard_map(
        lambda x: x, mesh=mesh, in_specs=ns.P(None, "i"), out_specs=ns.P("i"), check_vma=False
    )
    return f, (_x(8),)


@case
def error_out_spec_too_long(ns: Any) -> Any:
    mesh = ns.mesh((4,), ("i",))
    f = ns.shard_map(
        lambda x: ns.jnp.sum(x), mesh=mesh, in_specs=ns.P("i"), out_specs=ns.P("i"),
        check_vma=False,
    )  # fmt: skip
    return f, (_x(8),)


# --- partial evaluation and DCE of a staged shard_map -------------------------------------------


@case
def partial_eval_data_unknown(ns: Any) -> Any:
    closed = ns.make_jaxpr(_dp_loss(ns))(f32(1.5), _x(8))
    return ns.partial_eval(closed, [False, True]), ()


@case
def partial_eval_params_unknown(ns: Any) -> Any:
    closed = ns.make_jaxpr(_dp_loss(ns))(f32(1.5), _x(8))
    return ns.partial_eval(closed, [True, False]), ()


@case
def partial_eval_2d_mesh(ns: Any) -> Any:
    closed = ns.make_jaxpr(_two_outputs(ns))(_x(4), _x(4, 8, seed=1))
    return ns.partial_eval(closed, [False, True]), ()


@case
def dce_unused_output(ns: Any) -> Any:
    closed = ns.make_jaxpr(_two_outputs(ns))(_x(4), _x(4, 8, seed=1))
    return ns.dce(closed, [False, True]), ()


@case
def dce_all_outputs_unused(ns: Any) -> Any:
    closed = ns.make_jaxpr(_two_outputs(ns))(_x(4), _x(4, 8, seed=1))
    return ns.dce(closed, [False, False]), ()


ERRORS = [n for n in CASES if n.startswith("error")]
PRINTED = [n for n in CASES if n not in ERRORS and not n.startswith("values")]


@pytest.fixture(scope="module")
def jax_out() -> dict[str, Any]:
    pytest.importorskip("jax")
    out: dict[str, Any] = H.jax_results(__file__, CASES)
    return out


@pytest.mark.parametrize("name", PRINTED)
def test_printed_and_values_match_jax(name: str, jax_out: dict[str, Any]) -> None:
    H.check_case(name, CASES[name], jax_out[name])


def test_check_vma_values_match_jax(jax_out: dict[str, Any]) -> None:
    H.check_case(
        "values_check_vma", CASES["values_check_vma"], jax_out["values_check_vma"], printed=False
    )


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_jax(name: str, jax_out: dict[str, Any]) -> None:
    H.check_error(name, CASES[name], jax_out[name])


@pytest.mark.parametrize("name", ERRORS)
def test_errors_are_raised_as_jax_raises_them(name: str, jax_out: dict[str, Any]) -> None:
    with pytest.raises(ValueError) as info:
        H.run_case(H.lamina_namespace(), CASES[name], H.lamina_leaves)
    ours = str(info.value).split(":")[0]
    assert jax_out[name][0].startswith(f"JAX raised ValueError: {ours}:")


def test_reference_evaluator_splits_and_assembles() -> None:
    ns = H.lamina_namespace()
    mesh = ns.mesh((2, 4), ("x", "y"))
    f = ns.shard_map(
        lambda a: a * 10.0 + ns.lax.axis_index("y").astype(np.float32), mesh=mesh,
        in_specs=ns.P("x", "y"), out_specs=ns.P("x", "y"), check_vma=False,
    )  # fmt: skip
    a = np.zeros((4, 8), f32)
    want = np.tile(np.repeat(np.arange(4, dtype=f32), 2), (4, 1))
    np.testing.assert_array_equal(np.asarray(f(a)), want)
