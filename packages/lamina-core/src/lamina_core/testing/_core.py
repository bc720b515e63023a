"""Testing helpers: compare Lamina with a reference implementation (JAX) program by program.

This module never imports JAX; tests pass the reference modules in (see the `oracle` fixture in
the packages' `conftest.py`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

import lamina_core
from lamina_core.trace import check_jaxpr, eval_jaxpr, to_numpy

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]
"""`program(jnp, lax)` returns the function under test, written once for both libraries."""


ORACLE_COMPILER_OPTIONS: dict[str, Any] = {}
"""XLA options for the oracle's compilations in these helpers (`jax.jit(...,
compiler_options=ORACLE_COMPILER_OPTIONS)`): JAX's defaults. Unoptimized code
(`xla_backend_optimization_level=0`) compiles faster but computes transcendental functions
differently (gelu's tanh off by ~1e-5), so the oracle compiles as JAX users' programs do."""


def _tolerance(dtype: np.dtype) -> dict[str, float]:
    if dtype.kind in "biu":
        return {"rtol": 0.0, "atol": 0.0}
    if dtype.itemsize <= 2:  # float16, bfloat16: a few ulps of a 10-bit mantissa
        return {"rtol": 2e-2, "atol": 2e-2}
    return {"rtol": 2e-6, "atol": 2e-6}


Evaluator = Callable[[lamina_core.ClosedJaxpr, Sequence[Any]], Sequence[Any]]
"""How `Oracle.check` computes Lamina's numbers for a traced program and flat arguments."""


def reference_evaluator(closed: lamina_core.ClosedJaxpr, args: Sequence[Any]) -> Sequence[Any]:
    """The NumPy reference evaluator (or whatever eager evaluator is installed)."""
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


@dataclass(frozen=True)
class Oracle:
    jax: ModuleType
    jnp: ModuleType
    lax: ModuleType
    evaluate: Evaluator = reference_evaluator
    """Swapped by test configurations that run the same corpus on XLA (lamina-runtime)."""

    def jit(self, f: Callable[..., Any], **kwargs: Any) -> Any:
        """JAX's `jit` of `f` compiled with `ORACLE_COMPILER_OPTIONS`, for JAX's values."""
        return self.jax.jit(f, compiler_options=ORACLE_COMPILER_OPTIONS, **kwargs)

    def make_jaxpr_text(self, program: Program, *args: Any, **kwargs: Any) -> str:
        return str(self.jax.make_jaxpr(program(self.jnp, self.lax), **kwargs)(*args))

    def check(
        self,
        program: Program,
        *args: Any,
        static_argnums: Sequence[int] = (),
        numerics: bool = True,
    ) -> lamina_core.ClosedJaxpr:
        """Lamina prints JAX's jaxpr byte for byte and evaluates to JAX's numbers."""
        ours: lamina_core.ClosedJaxpr = lamina_core.make_jaxpr(
            program(lamina_core.numpy, lamina_core.lax), static_argnums=static_argnums
        )(*args)
        theirs = self.jax.make_jaxpr(program(self.jnp, self.lax), static_argnums=static_argnums)(
            *args
        )
        assert str(ours) == str(theirs), f"\n--- lamina ---\n{ours}\n--- jax ---\n{theirs}"
        check_jaxpr(ours)
        if numerics:
            dynamic = [a for i, a in enumerate(args) if i not in static_argnums]
            flat_args = lamina_core.tree.tree_util.tree_leaves(dynamic)
            got = self.evaluate(ours, flat_args)
            want = self.jax.tree_util.tree_leaves(
                self.jit(program(self.jnp, self.lax), static_argnums=static_argnums)(*args)
            )
            assert len(got) == len(want)
            for g, w in zip(got, want, strict=True):
                w = np.asarray(w)
                g = np.asarray(to_numpy(g))
                assert g.shape == w.shape, (g.shape, w.shape)
                assert g.dtype == w.dtype, (g.dtype, w.dtype)
                tolerance = _tolerance(w.dtype)
                np.testing.assert_allclose(
                    g.astype(np.float64) if g.dtype.kind == "V" else g,
                    w.astype(np.float64) if w.dtype.kind == "V" else w,
                    rtol=tolerance["rtol"],
                    atol=tolerance["atol"],
                )
        return ours


def jitted(jax: ModuleType, f: Callable[..., Any], args: Sequence[Any]) -> Callable[..., Any]:
    """`f` under the oracle's `jit`, for calls with arguments shaped as `args`: their array
    leaves are the jit's inputs, the others (Python numbers, None, strings) fixed as in `args`.
    One compilation where an eager call compiles each operation it has not met yet. A function
    JAX cannot trace (its output shapes need concrete values, as `jnp.unique` without `size`;
    it returns something other than arrays) runs eagerly, as it would without this."""
    leaves, tree = lamina_core.tree.tree_util.tree_flatten(tuple(args))
    is_array = [hasattr(x, "shape") and hasattr(x, "dtype") for x in leaves]
    fixed = [None if a else x for x, a in zip(leaves, is_array, strict=True)]

    def on_arrays(*arrays: Any) -> Any:
        given = iter(arrays)
        full = [next(given) if a else x for x, a in zip(fixed, is_array, strict=True)]
        return f(*lamina_core.tree.tree_util.tree_unflatten(tree, full))

    run = jax.jit(on_arrays, compiler_options=ORACLE_COMPILER_OPTIONS)

    def call(*call_args: Any) -> Any:
        flat = lamina_core.tree.tree_util.tree_leaves(tuple(call_args))
        try:
            return run(*(x for x, a in zip(flat, is_array, strict=True) if a))
        except (TypeError, IndexError):  # JAX's concretization and tracer errors among them
            return f(*call_args)

    return call


def sweep(
    cases: Sequence[Any],
    ids: Iterable[str],
    unpack: bool = True,
    kind: Callable[[str], str] | None = None,
) -> list[Any]:
    """A parametrized sweep as `pytest.param`s: the first case of each kind (by default the
    first word of its id, without a `lax`/`jnp`/`numpy` prefix) runs by default, a
    representative of every function; the rest of the sweep is marked `slow` (the default test
    run stays short; the `slow` session runs them all)."""
    import pytest  # only tests call this

    seen: set[str] = set()
    params = []
    for case, case_id in zip(cases, ids, strict=True):
        k = (
            kind(case_id)
            if kind
            else re.split(r"[ _\-.(\[,]", re.sub(r"^(lax|jnp|numpy)[ ._]", "", case_id))[0]
        )
        params.append(
            pytest.param(
                *(case if unpack else (case,)),
                marks=[pytest.mark.slow] if k in seen else [],
                id=case_id,
            )
        )
        seen.add(k)
    return params
