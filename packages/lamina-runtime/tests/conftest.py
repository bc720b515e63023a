"""Shared fixtures for lamina-runtime's tests.

The `oracle` fixture gives tests real JAX 0.10.2 to compare against. JAX is imported lazily
(so the non-oracle tests run where JAX is not installed) and with simplified constants, the
mode Lamina prints by default.

The persistent compilation cache is on by default; tests must never read or write the user's
real cache, so every test process (and the processes tests start, which inherit the
environment) uses a fresh temporary directory. Other packages whose tests compile should do the
same (see `temporary_cache_dir`).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from lamina_core.testing import Oracle

# Must precede the first `import jax` of the process.
os.environ.setdefault("JAX_USE_SIMPLIFIED_JAXPR_CONSTANTS", "True")


def temporary_cache_dir() -> str:
    """Point the persistent cache at a fresh temporary directory, removed at exit."""
    path = tempfile.mkdtemp(prefix="lamina-test-cache-")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    # Both: LAMINA_COMPILATION_CACHE_DIR outranks a JAX_COMPILATION_CACHE_DIR the developer
    # may have set for JAX; LAMINA_CACHE_DIR is the default's own variable.
    os.environ["LAMINA_COMPILATION_CACHE_DIR"] = path
    os.environ["LAMINA_CACHE_DIR"] = path
    return path


TEST_CACHE_DIR = temporary_cache_dir()


@pytest.fixture(scope="session")
def oracle() -> Oracle:
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax import lax

    return Oracle(jax, jnp, lax)


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    """An empty directory for a test's own compilation cache."""
    path = tmp_path / "cache"
    path.mkdir()
    return path
