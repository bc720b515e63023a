"""Sharding in types, Auto and Manual axes (issue 20): array types carry the abstract mesh
of the sharded values they come from, as JAX's do, and the rules that JAX writes with an
explicit `out_sharding` print it. Each program is traced by Lamina and by JAX on 8 devices:
printed jaxprs byte-identical, values equal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina
import lamina.numpy as lnp
from lamina.sharding import Mesh, NamedSharding, PartitionSpec
from lamina_core.ir._avals import ShapedArray

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

pytestmark = pytest.mark.oracle

if len(lamina.devices()) < 8 or jax.device_count() < 8:
    pytest.skip(
        "needs 8 devices (XLA_FLAGS=--xla_force_host_platform_device_count=8)",
        allow_module_level=True,
    )

L_MESH = Mesh(np.array(lamina.devices()[:4]), ("i",))
J_MESH = jax.sharding.Mesh(np.array(jax.devices()[:4]), ("i",))
RNG = np.random.default_rng(0)
X = RNG.standard_normal((8, 3)).astype(np.float32)
W = RNG.standard_normal((3, 5)).astype(np.float32)
B = RNG.standard_normal((5,)).astype(np.float32)
LABELS = np.array([0, 1, 2, 1, 0, 2, 1, 0], np.int32)


def _sharding(x: Any) -> Any:
    aval = lamina.typeof(x)
    assert isinstance(aval, ShapedArray)
    return aval.sharding


def _put(side: str, x: np.ndarray, *spec: Any) -> Any:
    if side == "lamina":
        return lamina.device_put(x, NamedSharding(L_MESH, PartitionSpec(*spec)))
    return jax.device_put(x, jax.sharding.NamedSharding(J_MESH, jax.P(*spec)))


def _loss(np_: Any) -> Callable[..., Any]:
    def loss(w: Any, b: Any, x: Any) -> Any:
        return np_.sum(np_.tanh(np_.dot(x, w) + b) ** 2)

    return loss


def _softmax_xent(api: Any, np_: Any) -> Callable[..., Any]:
    def loss(w: Any, x: Any, labels: Any) -> Any:
        logits = np_.dot(x, w)
        onehot = api.nn.one_hot(labels, 5)
        return -np_.mean(np_.sum(onehot * api.nn.log_softmax(logits), axis=-1))

    return loss


def _programs(side: str) -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    api, np_ = (lamina, lnp) if side == "lamina" else (jax, jnp)
    x = _put(side, X, "i")
    labels = _put(side, LABELS, "i")
    loss = _loss(np_)
    return {
        "grad_tanh_sum": (api.grad(lambda x: np_.sum(np_.tanh(x))), (x,)),
        "grad_mlp_layer": (api.grad(loss, argnums=(0, 1)), (W, B, x)),
        "jit_grad_mlp_layer": (api.jit(api.grad(loss, argnums=(0, 1))), (W, B, x)),
        "grad_reshape": (api.grad(lambda x: np_.sum(np_.reshape(x, (4, 6)) ** 2)), (x,)),
        "grad_unused_argument": (api.grad(lambda x, y: np_.sum(y * 2.0)), (x, W)),
        "value_and_grad_softmax_xent": (
            api.value_and_grad(_softmax_xent(api, np_)),
            (W, x, labels),
        ),
        "vmap_grad_per_example": (
            api.vmap(api.grad(lambda w, xi: np_.sum(np_.tanh(np_.dot(xi, w)))), (None, 0)),
            (W, x),
        ),
        "jvp_tanh": (
            lambda x: api.jvp(lambda y: np_.tanh(y) * 2.0, (x,), (np_.ones_like(x),)),
            (x,),
        ),
    }


NAMES = list(_programs("jax"))


@pytest.mark.parametrize("name", NAMES)
def test_printed_jaxpr_equals_jax(name: str) -> None:
    fun, args = _programs("lamina")[name]
    jfun, jargs = _programs("jax")[name]
    assert str(lamina.make_jaxpr(fun)(*args)) == str(jax.make_jaxpr(jfun)(*jargs))


@pytest.mark.parametrize("name", NAMES)
def test_values_equal_jax(name: str) -> None:
    fun, args = _programs("lamina")[name]
    jfun, jargs = _programs("jax")[name]
    ours, theirs = fun(*args), jfun(*jargs)
    for a, b in zip(
        lamina.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs), strict=True
    ):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)


def test_types_carry_the_arguments_mesh() -> None:
    x = _put("lamina", X, "i")
    assert _sharding(x) == NamedSharding(L_MESH.abstract_mesh, PartitionSpec(None, None))
    assert str(_sharding(x)) == str(jax.typeof(_put("jax", X, "i")).sharding)
    # An unsharded value's type has the empty mesh: nothing of this shows in its jaxprs.
    assert _sharding(lnp.ones(3)).mesh.empty
    plain = lamina.make_jaxpr(lamina.grad(lambda x: lnp.sum(lnp.tanh(x))))(X)
    assert "reshard" not in str(plain)


def test_shard_map_body_types_carry_the_manual_mesh() -> None:
    seen: list[Any] = []

    def body(b: Any) -> Any:
        seen.append(_sharding(b).mesh)
        return b * 2.0

    f = lamina.shard_map(
        body, mesh=L_MESH, in_specs=PartitionSpec("i"), out_specs=PartitionSpec("i")
    )
    lamina.make_jaxpr(f)(X)
    (mesh,) = seen
    assert mesh == L_MESH.abstract_mesh.update_axis_types({"i": lamina.sharding.AxisType.Manual})
