"""`jacfwd`, `jacrev` and `hessian` of the differentiation corpora's programs against JAX:
values always, printed jaxprs for the programs listed as printing JAX's text.

Each program is differentiated with respect to its floating-point arguments (`argnums`); the
hessian is taken of the programs with a scalar output.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_core.testing import Oracle
from lamina_core.trace._values import to_numpy

# The largest corpus of the folder: run by the `slow` session, kept out of the default run.
pytestmark = [pytest.mark.oracle, pytest.mark.slow]


def _sibling(name: str) -> ModuleType:
    """A test module of this folder, by path (pytest imports test files in importlib mode)."""
    path = Path(__file__).with_name(f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_jac_corpus_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


elementwise = _sibling("test_ad_elementwise")
structural = _sibling("test_ad_structural")
indexing = _sibling("test_ad_indexing")

Case = tuple[str, Any, tuple[Any, ...]]
CORPUS: list[Case] = [
    *[(f"elementwise {n}", p, a) for n, p, a in elementwise.CASES],
    *[(f"structural {n}", p, a) for n, p, a in structural.ALL if n not in structural.ORDER],
    *[(f"indexing {n}", p, a) for n, p, a in indexing.CASES],
]


def _float_argnums(args: tuple[Any, ...]) -> tuple[int, ...]:
    return tuple(i for i, x in enumerate(args) if np.asarray(x).dtype == np.float32)


def _compare(ours: Any, theirs: Any, what: str) -> None:
    got = lamina_core.tree.tree_util.tree_leaves(ours)
    want = [np.asarray(w) for w in theirs]
    assert len(got) == len(want), what
    for g, w in zip(got, want, strict=True):
        g = np.asarray(to_numpy(g))
        assert g.shape == w.shape, (what, g.shape, w.shape)
        assert g.dtype == w.dtype, (what, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5, err_msg=what)


@pytest.mark.parametrize(("name", "program", "args"), CORPUS, ids=[c[0] for c in CORPUS])
def test_jacobians_match_jax(
    oracle: Oracle, name: str, program: Any, args: tuple[Any, ...]
) -> None:
    argnums = _float_argnums(args)
    if not argnums:
        pytest.skip("no float32 argument to differentiate")
    ours_f = program(lamina_core.numpy, lamina_core.lax)
    theirs_f = program(oracle.jnp, oracle.lax)
    outs = oracle.jax.tree_util.tree_leaves(oracle.jit(theirs_f)(*args))
    scalar = len(outs) == 1 and np.ndim(outs[0]) == 0
    kinds = ["jacfwd", "jacrev"] + (["hessian"] if scalar else [])
    for kind in kinds:
        ours_t = getattr(lamina_core, kind)(ours_f, argnums=argnums)
        theirs_t = getattr(oracle.jax, kind)(theirs_f, argnums=argnums)
        refusal, want = None, []
        try:
            want = oracle.jax.tree_util.tree_leaves(theirs_t(*args))
        except TypeError as e:  # JAX's refusals (integer outputs for jacrev) are ours too
            refusal = str(e)
        if refusal is not None:
            with pytest.raises(TypeError) as ours_error:
                lamina_core.make_jaxpr(ours_t)(*args)
            assert str(ours_error.value) == refusal
            continue
        # One traced program per kind: its text against JAX's, its values by the oracle's
        # evaluator (NumPy's reference, or XLA in the `xla` session).
        ours_jaxpr = lamina_core.make_jaxpr(ours_t)(*args)
        _compare(oracle.evaluate(ours_jaxpr, list(args)), want, kind)
        if name not in NOT_PRINTED:
            theirs_text = str(oracle.jax.make_jaxpr(theirs_t)(*args))
            assert str(ours_jaxpr) == theirs_text, f"{kind}\n{ours_jaxpr}\n{theirs_text}"


NOT_PRINTED: dict[str, str] = {
    f"structural {name}": "JAX's partial evaluation of a nested jit forwards outputs as the "
    "grad corpus says (structural.JIT_FORWARDING)"
    for name in ("hstack", "vstack", "std all")
}
"""Programs whose Jacobian jaxprs differ from JAX's (values are still JAX's): name -> why."""
