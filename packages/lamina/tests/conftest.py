"""Shared setup for the umbrella's tests.

The persistent compilation cache is on by default; tests must never read or write the user's
real cache, so this process (and the processes tests start, which inherit the environment) uses
a fresh temporary directory, as lamina-runtime's tests do.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

TEST_CACHE_DIR = tempfile.mkdtemp(prefix="lamina-test-cache-")
atexit.register(shutil.rmtree, TEST_CACHE_DIR, ignore_errors=True)
# Both: LAMINA_COMPILATION_CACHE_DIR outranks a JAX_COMPILATION_CACHE_DIR the developer may
# have set for JAX; LAMINA_CACHE_DIR is the default's own variable.
os.environ["LAMINA_COMPILATION_CACHE_DIR"] = TEST_CACHE_DIR
os.environ["LAMINA_CACHE_DIR"] = TEST_CACHE_DIR


@pytest.fixture
def simplified_jax_constants() -> Iterator[None]:
    """JAX prints closed-over constants as Lamina does only in its simplified form (seed 000):
    tests comparing printed jaxprs with JAX's turn it on around each test."""
    import jax  # here: importing JAX is left to the tests that use it

    config: Any = jax.config  # its `update` is untyped
    option = "jax_use_simplified_jaxpr_constants"
    old = getattr(config, option)
    config.update(option, True)
    try:
        yield
    finally:
        config.update(option, old)
