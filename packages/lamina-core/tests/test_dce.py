"""Dead-code elimination."""

from __future__ import annotations

from typing import Any

import numpy as np

import lamina_core as lc
from lamina_core import numpy as jnp
from lamina_core.interpreters.dce import dce_jaxpr

f32 = np.float32


def test_unused_equations_are_dropped() -> None:
    def f(x: Any, y: Any) -> Any:
        jnp.cos(y)
        return jnp.sin(x) * 2.0

    closed = lc.make_jaxpr(f)(f32(1), f32(2))
    jaxpr, used = dce_jaxpr(closed.jaxpr)
    assert [e.primitive.name for e in jaxpr.eqns] == ["sin", "mul"]
    assert used == [True, False]
    assert len(jaxpr.invars) == 2
    lc.check_jaxpr(jaxpr)


def test_unused_inputs_are_pruned_on_request() -> None:
    closed = lc.make_jaxpr(lambda x, y, z: x + z)(f32(1), f32(2), f32(3))
    jaxpr, used = dce_jaxpr(closed.jaxpr, prune_invars=True)
    assert used == [True, False, True]
    assert str(jaxpr) == "{ lambda ; a:f32[] b:f32[]. let c:f32[] = add a b in (c,) }"


def test_a_live_jaxpr_is_returned_as_is() -> None:
    closed = lc.make_jaxpr(lambda x: jnp.sin(x))(f32(1))
    jaxpr, used = dce_jaxpr(closed.jaxpr)
    assert jaxpr is closed.jaxpr
    assert used == [True]


def test_unused_outputs_can_be_dropped() -> None:
    closed = lc.make_jaxpr(lambda x: (jnp.sin(x), jnp.cos(x)))(f32(1))
    jaxpr, _ = dce_jaxpr(closed.jaxpr, [False, True])
    assert [e.primitive.name for e in jaxpr.eqns] == ["cos"]
    assert len(jaxpr.outvars) == 1
