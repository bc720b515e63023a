"""The umbrella's differentiation API against JAX's: values (with dtypes and weak types) and
error messages, on XLA."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import jax
import jax.numpy
import numpy as np
import pytest

import lamina

f32 = np.float32


def _outcome(api: Any, jnp: ModuleType, call: Callable[[Any, ModuleType], Any]) -> Any:
    """What `call` gives: its leaves as (dtype, weak type, values), or its error."""
    try:
        out = call(api, jnp)
    except Exception as e:
        return (type(e).__name__, str(e))
    leaves = api.tree_util.tree_leaves(out)
    return [
        (np.asarray(x).dtype.str, bool(getattr(x, "weak_type", False)), np.asarray(x).tolist())
        for x in leaves
    ]


ones3 = np.ones(3, f32)
API_CASES: list[tuple[str, Callable[[Any, ModuleType], Any]]] = [
    ("allow_int", lambda a, m: a.grad(lambda x, i: x * i, argnums=(0, 1), allow_int=True)(2.0, 3)),
    (
        "holomorphic",
        lambda a, m: a.grad(lambda z: z * z + 1j, holomorphic=True)(np.complex64(1 + 2j)),
    ),
    ("holomorphic real input", lambda a, m: a.grad(lambda z: z * z, holomorphic=True)(1.0)),
    ("complex output", lambda a, m: a.grad(lambda z: z * z)(np.complex64(1 + 2j))),
    ("int output", lambda a, m: a.grad(lambda z: (z > 0).astype(int))(1.0)),
    (
        "has_aux pytree",
        lambda a, m: a.value_and_grad(
            lambda p: (m.sum(p["a"] ** 2), {"aux": p["a"] * 2}), has_aux=True
        )({"a": np.ones(2, f32)}),
    ),
    ("argnums too large", lambda a, m: a.grad(lambda x: x, argnums=2)(1.0)),
    ("jvp trees differ", lambda a, m: a.jvp(lambda d: d["x"] * 2, ({"x": 1.0},), ([1.0],))),
    ("jvp f64 tangent", lambda a, m: a.jvp(lambda x: x * 2, (f32(1.0),), (np.float64(1.0),))),
    ("jvp shapes differ", lambda a, m: a.jvp(lambda x: x * 2, (np.ones(2, f32),), (ones3,))),
    ("jvp not a tuple", lambda a, m: a.jvp(lambda x: x * 2, 1.0, 1.0)),
    ("vjp bad cotangent", lambda a, m: a.vjp(lambda x: x * 2, np.ones(2, f32))[1](ones3)),
    ("vjp int input", lambda a, m: a.vjp(lambda x, i: x * i, 2.0, 3)[1](1.0)),
    ("grad of an unused input", lambda a, m: a.grad(lambda x, y: y * 2.0)(1.0, 2.0)),
    ("grad of a constant", lambda a, m: a.grad(lambda x: 3.0)(1.0)),
    (
        "linear_transpose",
        lambda a, m: a.linear_transpose(lambda x: (x * 2.0, x.sum()), ones3)((ones3, f32(1))),
    ),
    ("linearize", lambda a, m: a.linearize(lambda x: m.sin(x) * x, 0.5)[1](2.0)),
]


@pytest.mark.parametrize(("name", "call"), API_CASES, ids=[c[0] for c in API_CASES])
def test_api_behaves_as_jax(name: str, call: Callable[[Any, ModuleType], Any]) -> None:
    assert _outcome(lamina, lamina.numpy, call) == _outcome(jax, jax.numpy, call)
