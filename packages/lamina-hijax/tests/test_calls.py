"""Call layouts against the equations core's call primitives make: each layout's groups and
callees must describe the operands and held jaxprs of real `jit`, `scan`, `while`, `cond`,
`remat`, custom-derivative and `closed_call` equations."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lamina_core as lc
import lamina_core.numpy as jnp
from lamina_core.ir._jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn
from lamina_core.transforms._call import closed_call_p
from lamina_hijax import Callee, CallLayout, Group, Role, call_layouts, map_callee

X = np.arange(3.0, dtype=np.float32)


@lc.custom_jvp
def _twice(x: Any) -> Any:
    return x * 2.0


_twice.defjvp(lambda p, t: (_twice(p[0]), t[0] * 2.0))


@lc.custom_vjp
def _thrice(x: Any) -> Any:
    return x * 3.0


_thrice.defvjp(lambda x: (_thrice(x), None), lambda res, g: (g * 3.0,))


def _program(x: Any) -> Any:
    y = lc.jit(lambda a: a * 2.0)(x)
    c, ys = lc.lax.scan(lambda c, a: (c + a * x[0], c * a), y[0], x)
    i, z = lc.lax.while_loop(lambda s: s[0] < c, lambda s: (s[0] + x[1], s[1] * 2.0), (0.0, ys))
    w = lc.lax.switch(1, [lambda a: a + i, lambda a: a - x, lambda a: a * 2.0], z)
    v = lc.checkpoint(lambda a: jnp.sin(a) * x)(w)
    inner = lc.make_jaxpr(lambda a: a + 1.0)(v)
    (u,) = closed_call_p.bind(v, call_jaxpr=inner)
    return _thrice(_twice(u))


def _held(value: Any) -> list[Jaxpr]:
    held: list[Jaxpr] = []
    map_callee(value, lambda j: held.append(j.jaxpr if isinstance(j, ClosedJaxpr) else j))
    return held


def _calls(jaxpr: Jaxpr) -> list[JaxprEqn]:
    return [e for e in jaxpr.eqns if call_layouts.get(e.primitive) is not None]


def test_layouts_describe_the_equations_core_makes() -> None:
    eqns = _calls(lc.make_jaxpr(_program)(X).jaxpr)
    names = sorted(e.primitive.name for e in eqns)
    assert names == sorted(
        ["jit", "scan", "while", "cond", "remat2", "closed_call", "custom_jvp_call",
         "custom_vjp_call"]
    )  # fmt: skip
    for eqn in eqns:
        layout = call_layouts[eqn.primitive]
        groups = layout.split(eqn.params, eqn.invars)
        assert sum(map(len, groups)) == len(eqn.invars)
        assert layout.counts([len(g) for g in groups]) == {
            g.size: eqn.params[g.size] for g in layout.groups if isinstance(g.size, str)
        }
        for callee in layout.callees:
            n_inputs = len(layout.inputs(callee, groups))
            for jaxpr in _held(eqn.params[callee.param]):
                assert len(jaxpr.invars) == n_inputs, (eqn.primitive, callee.param)
                if callee.returns:
                    assert len(jaxpr.outvars) == len(eqn.outvars)
        for name in (*layout.per_operand, *layout.per_result):
            assert name in eqn.params or name == "linear"


def test_layouts_check_their_shape() -> None:
    with pytest.raises(ValueError, match="only the last group"):
        CallLayout(groups=(Group(Role.ARGS), Group(Role.ARGS)), callees=())
    with pytest.raises(ValueError, match="reads a group it does not have"):
        CallLayout(groups=(Group(Role.ARGS),), callees=(Callee("jaxpr", (1,)),))
