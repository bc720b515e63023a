"""`lax.with_sharding_constraint` against JAX: the printed `sharding_constraint` equation (a
NamedSharding, a bare spec under `set_mesh`, vmap's unconstrained batch axis, its jvp and
transpose), the identity on values, and JAX's errors. Meshes use the test process's CPU
devices (the repository's conftest gives it 8)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core import lax
from lamina_core.ir._mesh import Mesh, NamedSharding, set_mesh
from lamina_core.ir._partition_spec import P

pytestmark = pytest.mark.oracle

X = np.arange(24.0, dtype=np.float32).reshape(8, 3)


@pytest.fixture(scope="module")
def meshes() -> tuple[Any, Mesh]:
    jax = pytest.importorskip("jax")
    devices = jax.devices()
    if len(devices) < 4:
        pytest.skip("needs 4 devices (XLA_FLAGS=--xla_force_host_platform_device_count)")
    ours = Mesh(np.array(devices[:4]), ("i",))
    theirs = jax.sharding.Mesh(np.array(devices[:4]), ("i",))
    return theirs, ours


def _same(jax: Any, theirs: Any, ours: Any, *args: Any) -> None:
    assert str(lc.make_jaxpr(ours)(*args)) == str(jax.make_jaxpr(theirs)(*args))


def test_named_sharding_prints_as_jax(meshes: tuple[Any, Mesh]) -> None:
    jax: Any = pytest.importorskip("jax")
    jm, lm = meshes

    def theirs(x: Any) -> Any:
        return jax.lax.with_sharding_constraint(x * 2, jax.sharding.NamedSharding(jm, jax.P("i")))

    def ours(x: Any) -> Any:
        return lax.with_sharding_constraint(x * 2, NamedSharding(lm, P("i")))

    _same(jax, theirs, ours, X)
    _same(jax, jax.vmap(theirs), lc.vmap(ours), np.stack([X, X]))
    _same(jax, lambda x: jax.jvp(theirs, (x,), (x,)), lambda x: lc.jvp(ours, (x,), (x,)), X)
    np.testing.assert_array_equal(lc.eval_shape(ours, X).shape, (8, 3))


def test_grad_prints_as_jax(meshes: tuple[Any, Mesh]) -> None:
    jax: Any = pytest.importorskip("jax")
    jm, lm = meshes

    def theirs(x: Any) -> Any:
        return jax.lax.with_sharding_constraint(x * 2, jax.sharding.NamedSharding(jm, jax.P("i")))

    def ours(x: Any) -> Any:
        return lax.with_sharding_constraint(x * 2, NamedSharding(lm, P("i")))

    _same(jax, jax.grad(lambda x: theirs(x).sum()), lc.grad(lambda x: ours(x).sum()), X)
    np.testing.assert_array_equal(lc.grad(lambda x: ours(x).sum())(X), np.full_like(X, 2.0))


def test_bare_spec_uses_the_mesh_in_context(meshes: tuple[Any, Mesh]) -> None:
    jax: Any = pytest.importorskip("jax")
    jm, lm = meshes
    with jax.set_mesh(jm):
        want = str(jax.make_jaxpr(lambda x: jax.lax.with_sharding_constraint(x, jax.P("i")))(X))
    with set_mesh(lm):
        got = str(lc.make_jaxpr(lambda x: lax.with_sharding_constraint(x, P("i")))(X))
    assert got == want


def test_values_pass_through(meshes: tuple[Any, Mesh]) -> None:
    _, lm = meshes
    out = lc.jit(lambda x: lax.with_sharding_constraint(x + 1, NamedSharding(lm, P("i"))))(X)
    np.testing.assert_array_equal(np.asarray(out), X + 1)


def test_errors() -> None:
    with pytest.raises(RuntimeError, match="Using PartitionSpec without a mesh is not allowed"):
        lax.with_sharding_constraint(X, P("i"))
    with pytest.raises(ValueError, match=r"only pass `jax\.sharding\.Sharding` instances"):
        lax.with_sharding_constraint(X, "i")


def test_spec_longer_than_rank(meshes: tuple[Any, Mesh]) -> None:
    _, lm = meshes
    with pytest.raises(ValueError, match="is only valid for values of rank at least 3"):
        lax.with_sharding_constraint(X, NamedSharding(lm, P("i", None, None)))
