"""A mesh in context (`set_mesh`) against JAX 0.10.2: the types traced under it are laid out
over it (results whose operands have no mesh take the context's, as JAX's sharding rules do;
under Explicit axes only the rules that ask for it), `jit` equations record it (`ctx_mesh=`),
and a jitted call under it runs on the mesh (outputs replicated over it); leaving the context
runs on one device again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina
import lamina.numpy as lnp

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

pytestmark = pytest.mark.oracle

if len(lamina.devices()) < 8 or jax.device_count() < 8:
    pytest.skip(
        "needs 8 devices (XLA_FLAGS=--xla_force_host_platform_device_count=8)",
        allow_module_level=True,
    )

X = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
W = np.linspace(0, 1, 6, dtype=np.float32).reshape(3, 2)

Program = Callable[[Any, Any], Any]
PROGRAMS: dict[str, Program] = {
    "grad_mlp": lambda m, np_: m.make_jaxpr(m.grad(lambda w, x: np_.sum(np_.tanh(x @ w))))(W, X),
    "jit_ones": lambda m, np_: m.make_jaxpr(m.jit(lambda x: x + np_.ones(3)))(X),
    "zeros_like": lambda m, np_: m.make_jaxpr(lambda x: np_.zeros_like(x) * x)(X),
    "vmap_grad": lambda m, np_: m.make_jaxpr(m.vmap(m.grad(lambda v: np_.sum(np_.sin(v) ** 2))))(X),
    "iota": lambda m, np_: m.make_jaxpr(lambda x: x + np_.arange(3.0))(X),
    "value_and_grad": lambda m, np_: m.make_jaxpr(m.value_and_grad(lambda x: np_.mean(x * x)))(X),
    "jvp": lambda m, np_: m.make_jaxpr(lambda x: m.jvp(np_.sin, (x,), (x,)))(X),
    "where": lambda m, np_: m.make_jaxpr(lambda x: np_.where(x > 0, x, 0.0))(X),
    "scan": lambda m, np_: m.make_jaxpr(
        lambda x: m.lax.scan(lambda c, r: (c + r, c * r), np_.zeros(3), x)
    )(X),
}


def _mesh(module: Any, kind: str) -> Any:
    types = (getattr(module.sharding.AxisType, kind),)
    return module.make_mesh((4,), ("i",), axis_types=types)


@pytest.mark.parametrize("kind", ["Auto", "Explicit"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_traced_under_a_mesh_in_context_prints_as_jax(kind: str, name: str) -> None:
    with jax.set_mesh(_mesh(jax, kind)):
        theirs = str(PROGRAMS[name](jax, jnp))
    with lamina.set_mesh(_mesh(lamina, kind)):
        ours = str(PROGRAMS[name](lamina, lnp))
    assert ours == theirs


@pytest.mark.parametrize("kind", ["Auto", "Explicit"])
def test_types_made_under_a_mesh_in_context_are_jax_s(kind: str) -> None:
    with jax.set_mesh(_mesh(jax, kind)):
        theirs = jax.typeof(jnp.ones(3) * 2.0).sharding
    with lamina.set_mesh(_mesh(lamina, kind)):
        ours = lamina.typeof(lnp.ones(3) * 2.0).sharding  # type: ignore[attr-defined]
    assert ours.mesh.axis_names == theirs.mesh.axis_names
    assert str(ours.mesh.axis_types) == str(theirs.mesh.axis_types)
    assert tuple(ours.spec) == tuple(theirs.spec)


@pytest.mark.parametrize("kind", ["Auto", "Explicit"])
def test_a_jitted_call_runs_on_the_mesh_in_context_and_off_it_after(kind: str) -> None:
    def f(m: Any, np_: Any) -> Any:
        return m.jit(lambda x, w: np_.tanh(x @ w) + 1.0)

    ours_f, theirs_f = f(lamina, lnp), f(jax, jnp)
    before = ours_f(X, W)  # a C++ dispatch entry for one device, made outside the context
    assert before.sharding.device_set == {lamina.devices()[0]}
    with jax.set_mesh(_mesh(jax, kind)):
        theirs = [theirs_f(X, W) for _ in range(3)]
        lowered_theirs = theirs_f.lower(X, W).as_text()
    with lamina.set_mesh(_mesh(lamina, kind)):
        ours = [ours_f(X, W) for _ in range(3)]
        lowered_ours = ours_f.lower(X, W).as_text()
    for mine, jaxs in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(np.asarray(mine), np.asarray(jaxs), rtol=1e-6)
        assert len(mine.sharding.device_set) == len(jaxs.sharding.device_set) == 4
        assert tuple(mine.sharding.spec) == tuple(jaxs.sharding.spec)
    assert "mhlo.num_partitions = 4" in lowered_ours
    assert "mhlo.num_partitions = 4" in lowered_theirs
    after = ours_f(X, W)
    assert after.sharding.device_set == {lamina.devices()[0]}
    np.testing.assert_allclose(np.asarray(after), np.asarray(before))


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.sharding.reshard(np.ones(4, np.float32), m.sharding.PartitionSpec("i")),
        lambda m: m.lax.dot(X, W, out_sharding=m.sharding.PartitionSpec()),
    ],
    ids=["reshard", "dot"],
)
def test_a_bare_spec_outside_a_mesh_context_is_jax_s_error(call: Callable[[Any], Any]) -> None:
    with pytest.raises(ValueError) as theirs:
        call(jax)
    with pytest.raises(ValueError) as ours:
        call(lamina)
    assert str(ours.value) == str(theirs.value)
