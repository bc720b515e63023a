"""The umbrella mirrors JAX's public names for what Lamina implements (`import lamina as jax`)."""

from __future__ import annotations

import importlib
import types

import numpy as np
import pytest

import lamina

EXPECTED = [
    "Array", "ShapeDtypeStruct", "block_until_ready", "config", "device_get", "device_put",
    "devices", "dtypes", "grad", "jit", "jvp", "lax", "linear_transpose", "linearize",
    "local_devices", "make_jaxpr", "numpy", "tree", "tree_util", "typeof", "value_and_grad",
    "vjp",
]  # fmt: skip


@pytest.mark.parametrize("name", EXPECTED)
def test_public_name_exists(name: str) -> None:
    assert hasattr(lamina, name)
    assert name in lamina.__all__


@pytest.mark.parametrize(
    "module", ["lamina.numpy", "lamina.lax", "lamina.tree_util", "lamina.tree"]
)
def test_submodules_are_importable(module: str) -> None:
    assert isinstance(importlib.import_module(module), types.ModuleType)


def test_names_that_do_not_exist_yet_are_absent_not_stubs() -> None:
    assert not hasattr(lamina, "io_callback")  # as JAX: only jax.experimental.io_callback
    for name in ("shard_map", "make_mesh", "pmap", "pure_callback"):
        assert callable(getattr(lamina, name))
    assert isinstance(lamina.distributed, types.ModuleType)
    for name in ("initialize", "is_initialized", "shutdown"):
        assert callable(getattr(lamina.distributed, name))


def test_jax_style_program_runs() -> None:
    jax = lamina
    jnp = lamina.numpy

    @jax.jit
    def f(x: lamina.Array) -> object:
        return jnp.sum(jnp.sin(x) * 3.0)

    out = f(jnp.ones(8))
    np.testing.assert_allclose(np.asarray(out), 24 * np.sin(1.0), rtol=1e-6)
    assert out.dtype == jnp.float32
