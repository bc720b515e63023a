"""The generic and windowed reductions on XLA: `lamina.jit(f).lower(...)` prints JAX's module
text (reduce, reduce_window, select_and_scatter, and pooling's derivatives as JAX lowers them
on CPU), and jitted and eager results equal JAX's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina
from lamina_core.testing import sweep

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle

Program = Callable[[Any], Callable[..., Any]]
"""`program(api)` with `api` the `lamina` or `jax` module."""

_rng = np.random.default_rng(1)
X = _rng.standard_normal((4, 6)).astype(np.float32)
B3 = _rng.standard_normal((3, 5, 4)).astype(np.float32)
INTS = _rng.integers(-9, 9, (4, 5)).astype(np.int32)
INF = np.float32(np.inf)


def _pool(api: Any, init: Any, op: str, *args: Any, **kw: Any) -> Callable[[Any], Any]:
    return lambda x: api.lax.reduce_window(x, init, getattr(api.lax, op), *args, **kw)


def _select_and_scatter(api: Any) -> Any:
    if api is lamina:
        from lamina_core.lax._select_and_scatter import _select_and_scatter as ours

        return ours
    from jax._src.lax.windowed_reductions import _select_and_scatter as theirs

    return theirs


def _pairs(a: Any, b: Any, lax: Any) -> tuple[Any, Any]:
    keep = a[0] >= b[0]
    return lax.select(keep, a[0], b[0]), lax.select(keep, a[1], b[1])


CASES: dict[str, tuple[Program, Any]] = {
    "max_pool": (lambda api: _pool(api, -INF, "max", (2, 2), (2, 1), "SAME"), X),
    "sum_pool_dilated": (
        lambda api: _pool(api, 0.0, "add", (2, 2), (1, 2), ((1, 0), (0, 1)), (2, 1), (1, 2)),
        X,
    ),
    "min_pool_int": (
        lambda api: _pool(api, np.int32(np.iinfo(np.int32).max), "min", (2, 3), (1, 1), "SAME"),
        INTS,
    ),
    "generic_mul": (lambda api: _pool(api, 1.0, "mul", (2, 2), (1, 1), "SAME"), X),
    "generic_pairs": (
        lambda api: (
            lambda x: api.lax.reduce_window(
                (x, x * 2), (-INF, np.float32(0)), lambda a, b: _pairs(a, b, api.lax), (2, 2)
            )
        ),
        X,
    ),
    "reduce_custom": (
        lambda api: lambda x: api.lax.reduce(x, np.float32(0), lambda a, b: a * 2.0 + b, (1,)),
        X,
    ),
    "reduce_pairs": (
        lambda api: (
            lambda x: api.lax.reduce(
                (x, x),
                (np.float32(0), np.float32(1)),
                lambda a, b: (a[0] + b[0], a[1] * b[1]),
                (0,),
            )
        ),
        X,
    ),
    "grad_max_pool": (
        lambda api: api.grad(lambda x: _pool(api, -INF, "max", (2, 2), (2, 2), "SAME")(x).sum()),
        X,
    ),
    "grad_min_pool_base_dilated": (
        lambda api: api.grad(
            lambda x: _pool(api, INF, "min", (2, 2), (1, 1), "VALID", (2, 1))(x).sum()
        ),
        X,
    ),
    "grad_avg_pool": (
        lambda api: api.grad(
            lambda x: (_pool(api, 0.0, "add", (2, 2), (2, 2), "SAME")(x) ** 2).sum()
        ),
        X,
    ),
    "jvp_max_pool": (
        lambda api: (
            lambda x: api.jvp(
                _pool(api, -INF, "max", (3, 2), (1, 2), "SAME"), (x,), (api.numpy.cos(x),)
            )
        ),
        X,
    ),
    "select_and_scatter": (
        lambda api: (
            lambda x: _select_and_scatter(api)(
                x,
                api.lax.ge,
                (2, 2),
                (1, 3),
                ((1, 0), (0, 1)),
                x[:, :2],
                np.float32(0),
                api.lax.add,
            )
        ),
        X,
    ),
    "bool_max_and_generic_or": (
        lambda api: (
            lambda x: (
                api.lax.reduce_window(x > 0, False, api.lax.max, (2, 2), (1, 1), "SAME"),
                api.lax.reduce_window(x > 0, False, lambda a, b: a | b, (2, 1)),
                api.lax.reduce(x > 0, True, lambda a, b: a & b, (1,)),
            )
        ),
        X,
    ),
    "vmap_jvp_min_pool": (
        lambda api: api.vmap(
            lambda x: api.jvp(_pool(api, INF, "min", (2, 2), (1, 1), "SAME"), (x,), (x * x,))[1]
        ),
        B3,
    ),
    "vmap_grad_max_pool": (
        lambda api: api.vmap(
            api.grad(lambda x: _pool(api, -INF, "max", (2, 2), (1, 1), "SAME")(x).sum()),
            in_axes=1,
        ),
        B3,
    ),
}


@pytest.mark.parametrize("case", sweep(sorted(CASES), sorted(CASES), unpack=False))
def test_lowered_text_and_results_are_jaxs(case: str) -> None:
    program, x = CASES[case]
    ours, theirs = program(lamina), program(jax)
    assert lamina.jit(ours).lower(x).as_text() == jax.jit(theirs).lower(x).as_text()
    want = jax.tree_util.tree_leaves(jax.jit(theirs)(x))
    for got in (lamina.jit(ours)(x), ours(x)):
        leaves = lamina.tree_util.tree_leaves(got)
        assert len(leaves) == len(want)
        for g, w in zip(leaves, want, strict=True):
            g, w = np.asarray(g), np.asarray(w)
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
