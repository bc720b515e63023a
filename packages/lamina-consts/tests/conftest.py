"""Shared fixtures for lamina-core's tests.

The `oracle` fixture gives tests real JAX 0.10.2 to compare against. JAX is imported lazily
(so the non-oracle tests run where JAX is not installed) and with simplified constants, the
mode Lamina prints by default.
"""

from __future__ import annotations

import os

import pytest

from lamina_core.testing import Oracle

# Must precede the first `import jax` of the process.
os.environ.setdefault("JAX_USE_SIMPLIFIED_JAXPR_CONSTANTS", "True")


@pytest.fixture(scope="session")
def oracle() -> Oracle:
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax import lax

    return Oracle(jax, jnp, lax)
