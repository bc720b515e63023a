"""Shared fixtures for lamina-core's tests.

The `oracle` fixture gives tests real JAX 0.10.2 to compare against. JAX is imported lazily
(so the non-oracle tests run where JAX is not installed) and with simplified constants, the
mode Lamina prints by default.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from lamina_core import ClosedJaxpr, eval_jaxpr
from lamina_core.testing import Evaluator, Oracle, reference_evaluator

# Must precede the first `import jax` of the process.
os.environ.setdefault("JAX_USE_SIMPLIFIED_JAXPR_CONSTANTS", "True")


def _load_shard_map_harness() -> None:
    """Load `shard_map_harness.py` once, as `sys.modules[SHARD_MAP_HARNESS]`, for the
    shard_map test modules (the tests folder is not a package they could import it from)."""
    spec = importlib.util.spec_from_file_location(
        SHARD_MAP_HARNESS, Path(__file__).with_name("shard_map_harness.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[SHARD_MAP_HARNESS] = module
    spec.loader.exec_module(module)


SHARD_MAP_HARNESS = "lamina_core_tests_shard_map_harness"
_load_shard_map_harness()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--lamina-execute",
        choices=("reference", "xla-eager", "xla-jit"),
        default="reference",
        help="how oracle tests compute Lamina's numbers: the NumPy reference evaluator, "
        "or XLA through lamina-runtime, one primitive at a time or the whole program jitted",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under an XLA mode keep only the tests that take the `oracle` fixture, whose evaluator
    the mode swaps: every other test would run exactly as in the default mode, which CI's
    `tests_all` session has run already (about a third of the corpus, minutes of CI)."""
    if config.getoption("--lamina-execute") == "reference":
        return
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        (kept if "oracle" in getattr(item, "fixturenames", ()) else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


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
