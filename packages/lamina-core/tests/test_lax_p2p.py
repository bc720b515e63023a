"""`lax.psend`, `lax.precv` and `lax.ragged_all_to_all` against JAX 0.10.2: printed jaxprs
inside `shard_map`, under `jvp` and `vmap`, and the errors of bad arguments.

None of the three runs on the CPU (JAX lowers psend/precv for GPUs only; XLA:CPU has no
ragged all-to-all), so each case prints its program instead of running it (see
`shard_map_harness.py`). Lowering is lamina-mlir's `test_lax_p2p_lowering.py`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_core import lax
from lamina_core.interpreters.jvp import jvp_rules, non_differentiable
from lamina_core.lax._collectives_p2p import single_side_collective_effect

H: Any = sys.modules["lamina_core_tests_shard_map_harness"]  # conftest.py loads it
CASES: dict[str, Any]
case: Callable[[Any], Any]
CASES, case = H.case_registry()
RING = [(j, (j + 1) % 8) for j in range(8)]


def _sm(ns: Any, f: Any, in_specs: Any, out_specs: Any) -> Any:
    return ns.shard_map(f, mesh=ns.mesh((8,), ("i",)), in_specs=in_specs, out_specs=out_specs)


def _printed(ns: Any, program: Any, *args: Any) -> tuple[str, tuple[()]]:
    return str(ns.make_jaxpr(program)(*args)), ()


def _ragged_args(rows: int = 64, dtype: Any = np.int32, offsets_shape: Any = None) -> Any:
    shape = (rows,) if offsets_shape is None else offsets_shape
    data = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3)
    return (data, np.zeros_like(data), np.zeros(shape, dtype), np.ones(shape, dtype),
            np.zeros(shape, dtype), np.ones(shape, dtype))  # fmt: skip


def _ragged(ns: Any, **kw: Any) -> Any:
    return lambda *a: ns.lax.ragged_all_to_all(*a, axis_name="i", **kw)


def _struct(ns: Any, shape: tuple[int, ...]) -> Any:
    if ns.name == "jax":
        import jax

        return jax.ShapeDtypeStruct(shape, np.float32)  # type: ignore[no-untyped-call]  # JAX's constructor is untyped
    return SimpleNamespace(shape=shape, dtype=np.float32)


# --- printed -----------------------------------------------------------------------------


@case
def send_then_receive_on_a_ring(ns: Any) -> Any:
    def body(x: Any) -> Any:
        token = ns.lax.psend(x, "i", RING)
        return ns.lax.precv(token, _struct(ns, (2, 3)), ("i",), RING)

    return _printed(ns, _sm(ns, body, ns.P("i"), ns.P("i")), np.ones((16, 3), np.float32))


@case
def send_a_pytree(ns: Any) -> Any:
    def body(x: Any, y: Any) -> Any:
        tokens = ns.lax.psend({"a": x, "b": y}, "i", [(0, 1), (1, 0)])
        return ns.lax.optimization_barrier((x, tokens))[0]

    f = _sm(ns, body, (ns.P("i"), ns.P()), ns.P("i"))
    return _printed(ns, f, np.ones((16,), np.float32), np.ones((3,), np.int32))


@case
def send_under_vmap_of_another_axis_is_a_ppermute(ns: Any) -> Any:
    def body(x: Any) -> Any:
        return ns.vmap(lambda r: ns.lax.psend(r, "i", RING))(x)

    return _printed(ns, _sm(ns, body, ns.P("i"), ns.P("i")), np.ones((16, 3), np.float32))


@case
def send_under_vmap_of_its_axis_is_a_take(ns: Any) -> Any:
    f = ns.vmap(lambda r: ns.lax.psend(r, "i", RING), axis_name="i")
    return _printed(ns, f, np.ones((8, 3), np.float32))


@case
def ragged_all_to_all_1d(ns: Any) -> Any:
    return _printed(ns, _sm(ns, _ragged(ns), (ns.P("i"),) * 6, ns.P("i")), *_ragged_args())


@case
def ragged_all_to_all_groups(ns: Any) -> Any:
    f = _sm(ns, _ragged(ns, axis_index_groups=[[0, 1, 2, 3], [4, 5, 6, 7]]), (ns.P("i"),) * 6,
            ns.P("i"))  # fmt: skip
    return _printed(ns, f, *_ragged_args())


@case
def ragged_all_to_all_jvp(ns: Any) -> Any:
    f = _sm(ns, _ragged(ns), (ns.P("i"),) * 6, ns.P("i"))
    args = _ragged_args()

    def tangent_of_operand(op: Any, out: Any) -> Any:
        return ns.jvp(lambda a: f(a, out, *args[2:]), (op,), (op,))

    return _printed(ns, tangent_of_operand, args[0], args[1])


@case
def ragged_all_to_all_vmap_of_another_axis(ns: Any) -> Any:
    def body(*a: Any) -> Any:
        return ns.vmap(_ragged(ns), in_axes=(0, 0, 0, 0, 1, 0))(*a)

    args = _ragged_args()
    batched = (args[0].reshape(8, 8, 3), args[1].reshape(8, 8, 3), args[2].reshape(8, 8),
               args[3].reshape(8, 8), args[4].reshape(8, 8).T, args[5].reshape(8, 8))  # fmt: skip
    specs = (ns.P(None, "i"),) * 4 + (ns.P("i"), ns.P(None, "i"))
    return _printed(ns, _sm(ns, body, specs, ns.P(None, "i")), *batched)


# --- errors ------------------------------------------------------------------------------


@case
def error_send_over_an_unbound_axis(ns: Any) -> Any:
    return _printed(ns, lambda x: ns.lax.psend(x, "j", RING), np.ones(3, np.float32))


@case
def error_receive_under_vmap(ns: Any) -> Any:
    def body(x: Any) -> Any:
        token = ns.lax.psend(x, "i", RING)
        return ns.vmap(lambda _: ns.lax.precv(token, _struct(ns, (2,)), "i", RING))(x)

    return _printed(ns, _sm(ns, body, ns.P("i"), ns.P("i")), np.ones(16, np.float32))


@case
def error_differentiate_a_send(ns: Any) -> Any:
    def body(x: Any) -> Any:
        return ns.jvp(lambda y: ns.lax.psend(y, "i", RING), (x,), (x,))[0]

    return _printed(ns, _sm(ns, body, ns.P("i"), ns.P()), np.ones(16, np.float32))


@case
def error_ragged_float_offsets(ns: Any) -> Any:
    f = _sm(ns, _ragged(ns), (ns.P("i"),) * 6, ns.P("i"))
    return _printed(ns, f, *_ragged_args(dtype=np.float32))


@case
def error_ragged_matrix_offsets(ns: Any) -> Any:
    f = _sm(ns, _ragged(ns), (ns.P("i"),) * 6, ns.P("i"))
    return _printed(ns, f, *_ragged_args(offsets_shape=(16, 2)))


@case
def error_ragged_empty_offsets(ns: Any) -> Any:
    f = _sm(ns, _ragged(ns), (ns.P("i"),) * 2 + (ns.P(),) * 4, ns.P("i"))
    return _printed(ns, f, *_ragged_args(offsets_shape=(0,)))


@case
def error_ragged_over_an_unbound_axis(ns: Any) -> Any:
    return _printed(ns, _ragged(ns), *_ragged_args())


@case
def error_ragged_vmap_of_its_axis(ns: Any) -> Any:
    args = [np.stack([a] * 8) for a in _ragged_args(rows=4)]
    return _printed(ns, ns.vmap(_ragged(ns), axis_name="i"), *args)


@case
def error_ragged_run_eagerly(ns: Any) -> Any:
    return str(_ragged(ns)(*[ns.asarray(a) for a in _ragged_args()])), ()


ERRORS = [n for n in CASES if n.startswith("error")]
PRINTED = [n for n in CASES if n not in ERRORS]


@pytest.fixture(scope="module")
def jax_out() -> dict[str, Any]:
    pytest.importorskip("jax")
    out: dict[str, Any] = H.jax_results(__file__, CASES)
    return out


@pytest.mark.parametrize("name", PRINTED)
def test_printed_matches_jax(name: str, jax_out: dict[str, Any]) -> None:
    H.check_case(name, CASES[name], jax_out[name])


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_jax(name: str, jax_out: dict[str, Any]) -> None:
    H.check_error(name, CASES[name], jax_out[name])


def test_send_and_receive_carry_the_single_side_effect() -> None:
    def body(x: Any) -> Any:
        token = lax.psend(x, "i", RING)
        return lax.precv(token, SimpleNamespace(shape=(2,), dtype=np.float32), "i", RING)

    ns = H.lamina_namespace()
    closed = lamina_core.make_jaxpr(_sm(ns, body, ns.P("i"), ns.P("i")))(np.ones(16, np.float32))
    inner = closed.jaxpr.eqns[0].params["jaxpr"]
    assert [e.effects for e in inner.eqns[:2]] == [frozenset({single_side_collective_effect})] * 2
    assert single_side_collective_effect in closed.effects


def test_differentiation_rules_are_declared() -> None:
    assert lax.ragged_all_to_all_p in jvp_rules
    assert {lax.psend_p, lax.precv_p} <= non_differentiable
