"""`vmap` of the control-flow primitives against JAX: the printed jaxpr of `make_jaxpr(vmap(f))`
byte for byte, and the values, with a Python loop over the batch as a second reference.

Covers `cond` with a mapped and an unmapped index (JAX's `select_n` form and the batched
branches), `switch`, `while` with a mapped predicate (every carry mapped, lanes finishing at
different trips) and an unmapped one, `fori_loop` with a mapped bound, and `scan` with mapped
`xs` (at axis 0 or 1), carries and consts.
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
X3 = np.array([-1.0, 2.0, 3.0], F32)
XS = np.random.default_rng(0).standard_normal((3, 5)).astype(F32)

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]

CASES: dict[str, tuple[Program, tuple[Any, ...], dict[str, Any]]] = {
    "cond_mapped_predicate": (
        lambda jnp, lax: lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x),
        (np.array([True, False, True]), X3),
        {},
    ),
    "cond_unmapped_predicate": (
        lambda jnp, lax: lambda x: lax.cond(True, jnp.sin, jnp.cos, x),
        (X3,),
        {},
    ),
    "cond_predicate_from_mapped_operand": (
        lambda jnp, lax: (
            lambda x, y: lax.cond(y > 0, lambda a, b: a * b, lambda a, b: a + 1.0, x, y)
        ),
        (X3, F32(2.0)),
        {"in_axes": (0, None)},
    ),
    "cond_mapped_by_value": (
        lambda jnp, lax: lambda x: lax.cond(x > 0, lambda a: a * 2.0, lambda a: -a, x),
        (X3,),
        {},
    ),
    "cond_pytree_outputs": (
        lambda jnp, lax: (
            lambda p, x, y: lax.cond(
                p, lambda a, b: (a + b, b), lambda a, b: (a - b, b * 2.0), x, y
            )
        ),
        (np.array([True, False, True]), X3, F32(1.5)),
        {"in_axes": (0, 0, None)},
    ),
    "switch_mapped_index": (
        lambda jnp, lax: lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x),
        (np.array([0, 2, 1], np.int32), X3),
        {},
    ),
    "while_mapped_predicate": (
        lambda jnp, lax: lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x),
        (np.abs(X3),),
        {},
    ),
    "while_unmapped_predicate": (
        lambda jnp, lax: (
            lambda x, k: lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * k), (0, x))
        ),
        (X3, F32(1.5)),
        {"in_axes": (0, None)},
    ),
    "while_mapped_const": (
        lambda jnp, lax: (
            lambda x, k: lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * k), (0, x))
        ),
        (F32(1.0), X3),
        {"in_axes": (None, 0)},
    ),
    "fori_mapped_bound": (
        lambda jnp, lax: lambda x, n: lax.fori_loop(0, n, lambda i, c: c + i, x),
        (X3, np.array([1, 2, 3], np.int32)),
        {},
    ),
    "fori_static": (
        lambda jnp, lax: lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2.0 + i, x),
        (X3,),
        {},
    ),
    "scan_mapped_xs": (
        lambda jnp, lax: lambda xs: lax.scan(lambda c, x: (c + x, c * x), 0.0, xs),
        (XS,),
        {},
    ),
    "scan_mapped_xs_axis_1": (
        lambda jnp, lax: lambda xs: lax.scan(lambda c, x: (c + x, c * x), 0.0, xs),
        (XS.T.copy(),),
        {"in_axes": 1},
    ),
    "scan_mapped_carry": (
        lambda jnp, lax: lambda c0, xs: lax.scan(lambda c, x: (c + x, c * x), c0, xs),
        (X3, XS[0]),
        {"in_axes": (0, None)},
    ),
    "scan_mapped_const": (
        lambda jnp, lax: lambda w, xs: lax.scan(lambda c, x: (c * w + x, c), 0.0, xs),
        (X3, XS[0]),
        {"in_axes": (0, None)},
    ),
    "scan_out_axes_1": (
        lambda jnp, lax: lambda xs: lax.scan(lambda c, x: (c + x, c * x), 0.0, xs)[1],
        (XS,),
        {"out_axes": 1},
    ),
    "scan_reverse_unroll": (
        lambda jnp, lax: (
            lambda xs: lax.scan(lambda c, x: (c * 0.5 + x, c), 0.0, xs, reverse=True, unroll=2)
        ),
        (XS,),
        {},
    ),
    "scan_cond_inside": (
        lambda jnp, lax: (
            lambda xs: lax.scan(
                lambda c, x: (lax.cond(x > 0, lambda a: a + x, lambda a: a - x, c), c), 0.0, xs
            )
        ),
        (XS,),
        {},
    ),
    "map": (lambda jnp, lax: lambda xs: lax.map(jnp.sin, xs), (XS,), {}),
}


def _vmapped(module: ModuleType, jnp: ModuleType, lax: ModuleType, name: str) -> Any:
    program, _, kwargs = CASES[name]
    return module.vmap(program(jnp, lax), **kwargs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_prints_and_computes_as_jax(oracle: Oracle, name: str) -> None:
    _, args, _ = CASES[name]
    ours = lamina_core.make_jaxpr(_vmapped(lamina_core, lamina_core.numpy, lamina_core.lax, name))(
        *args
    )
    theirs = oracle.jax.make_jaxpr(_vmapped(oracle.jax, oracle.jnp, oracle.lax, name))(*args)
    assert str(ours) == str(theirs), f"\n--- lamina ---\n{ours}\n--- jax ---\n{theirs}"
    lamina_core.check_jaxpr(ours)
    got = oracle.evaluate(ours, lamina_core.tree_util.tree_leaves(args))
    want = oracle.jax.tree_util.tree_leaves(
        _vmapped(oracle.jax, oracle.jnp, oracle.lax, name)(*args)
    )
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("name", ["cond_mapped_predicate", "while_mapped_predicate",
                                  "scan_mapped_xs", "fori_mapped_bound"])  # fmt: skip
def test_vmap_equals_a_loop_over_the_batch(name: str) -> None:
    program, args, kwargs = CASES[name]
    f = program(lamina_core.numpy, lamina_core.lax)
    batched = lamina_core.tree_util.tree_leaves(lamina_core.vmap(f, **kwargs)(*args))
    in_axes = kwargs.get("in_axes", 0)
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    for b in range(3):
        example = [
            a if ax is None else np.take(a, b, axis=ax) for a, ax in zip(args, axes, strict=True)
        ]
        single = lamina_core.tree_util.tree_leaves(f(*example))
        for got, one in zip(batched, single, strict=True):
            np.testing.assert_allclose(np.asarray(got)[b], np.asarray(one), rtol=2e-6, atol=2e-6)
