"""`checkpoint` (remat) of a function that uses `shard_map`, against JAX: the rematerialized
`vjp` prints as JAX's (the shard_map split by the policy into a known and a staged copy, the
residuals leaving over the mesh axes), its values equal JAX's, and they equal finite
differences. Meshes use the test process's CPU devices (the repository's conftest gives 8)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core import lax
from lamina_core import numpy as lnp
from lamina_core.ir._mesh import Mesh
from lamina_core.ir._partition_spec import P
from lamina_core.sharding._shard_map import shard_map

# Lamina's API under JAX's names (in core, `lamina_core.sharding._shard_map` is the module)
LC = SimpleNamespace(
    shard_map=shard_map,
    checkpoint=lc.checkpoint,
    checkpoint_policies=lc.checkpoint_policies,
    vjp=lc.vjp,
    grad=lc.grad,
)

pytestmark = pytest.mark.oracle

X = np.linspace(-1.0, 1.0, 24, dtype=np.float32).reshape(8, 3)
W = np.float32(0.7)
CT = np.linspace(0.5, 1.5, 6, dtype=np.float32).reshape(2, 3)


def _program(jax: Any, jnp: Any, lax_: Any, mesh: Any, spec: Any, policy: Any) -> Any:
    def body(x: Any, w: Any) -> Any:
        return lax_.psum(jnp.sin(x * w) * 2.0, "i")

    f = jax.shard_map(
        body, mesh=mesh, in_specs=(spec("i"), spec()), out_specs=spec(), check_vma=False
    )
    g = jax.checkpoint(lambda x, w: jnp.cos(f(x, w)), policy=policy)

    def pulled_back(x: Any, w: Any, ct: Any) -> Any:
        _, pullback = jax.vjp(g, x, w)
        return pullback(ct)

    return pulled_back


@pytest.fixture(scope="module")
def both() -> tuple[Any, Any]:
    jax: Any = pytest.importorskip("jax")
    devices = jax.devices()
    if len(devices) < 4:
        pytest.skip("needs 4 devices (XLA_FLAGS=--xla_force_host_platform_device_count)")
    return (
        (jax, jax.numpy, jax.lax, jax.sharding.Mesh(np.array(devices[:4]), ("i",)), jax.P),
        (LC, lnp, lax, Mesh(np.array(devices[:4]), ("i",)), P),
    )


@pytest.mark.parametrize("policy", [None, "dots_saveable"])
def test_remat_of_shard_map_matches_jax(both: tuple[Any, Any], policy: str | None) -> None:
    (jax, jnp, jlax, jmesh, jP), (lm, lnp_, llax, lmesh, lP) = both
    jpol = getattr(jax.checkpoint_policies, policy) if policy else None
    lpol = getattr(lc.checkpoint_policies, policy) if policy else None
    theirs = _program(jax, jnp, jlax, jmesh, jP, jpol)
    ours = _program(lm, lnp_, llax, lmesh, lP, lpol)
    assert str(lc.make_jaxpr(ours)(X, W, CT)) == str(jax.make_jaxpr(theirs)(X, W, CT))
    for got, want in zip(ours(X, W, CT), theirs(X, W, CT), strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)


def test_remat_of_shard_map_matches_finite_differences(both: tuple[Any, Any]) -> None:
    _, (lm, lnp_, llax, lmesh, lP) = both

    def loss(x: Any, w: Any) -> Any:
        f = lm.shard_map(
            lambda a, b: llax.psum(lnp_.sin(a * b) * 2.0, "i"),
            mesh=lmesh,
            in_specs=(lP("i"), lP()),
            out_specs=lP(),
            check_vma=False,
        )
        return lnp_.sum(lnp_.cos(lm.checkpoint(f)(x, w)))

    gw = float(np.asarray(lc.grad(loss, argnums=1)(X, W)))
    eps = np.float32(1e-2)
    fd = (float(np.asarray(loss(X, W + eps))) - float(np.asarray(loss(X, W - eps)))) / (2 * eps)
    np.testing.assert_allclose(gw, fd, rtol=2e-3)
