"""Shared fixtures for lamina-core's tests.

The `oracle` fixture gives tests real JAX 0.10.2 to compare against. JAX is imported lazily
(so the non-oracle tests run where JAX is not installed) and with simplified constants, the
mode Lamina prints by default.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import pytest

from lamina_core import ClosedJaxpr, eval_jaxpr
from lamina_core.testing import Evaluator, Oracle, reference_evaluator

# Must precede the first `import jax` of the process.
os.environ.setdefault("JAX_USE_SIMPLIFIED_JAXPR_CONSTANTS", "True")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--lamina-execute",
        choices=("reference", "xla-eager", "xla-jit"),
        default="reference",
        help="how oracle tests compute Lamina's numbers: the NumPy reference evaluator, "
        "or XLA through lamina-runtime, one primitive at a time or the whole program jitted",
    )


def _evaluator(mode: str) -> Evaluator:
    if mode == "reference":
        return reference_evaluator
    lamina_runtime = pytest.importorskip("lamina_runtime")  # installs XLA eager evaluation
    if mode == "xla-eager":
        return reference_evaluator

    def jitted(closed: ClosedJaxpr, args: Sequence[Any]) -> Sequence[Any]:
        run = lamina_runtime.jit(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs))
        outs: Sequence[Any] = run(*args)
        return outs

    return jitted


@pytest.fixture(scope="session")
def oracle(request: pytest.FixtureRequest) -> Oracle:
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax import lax

    return Oracle(jax, jnp, lax, _evaluator(request.config.getoption("--lamina-execute")))
