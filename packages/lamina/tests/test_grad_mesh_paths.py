"""`grad`'s shortcuts for types without a mesh (issue 39, item 3) leave every other type on the
full path: the seed's `reshard`, the unbroadcast `reshape`'s sharding, the broadcast
transpose's `reduce_sum` sharding, the zeros of a type varying over manual axes and the
`dot_general` transposes over Explicit axes all still print as JAX's.

One MLP layer's gradient, written once for both libraries, is traced with arguments without a
mesh, laid out over a mesh of Auto axes, split over Explicit axes, and inside a checked
`shard_map` body (a vma scope open): printed jaxprs byte-identical to JAX 0.10.2's, and the
mesh-dependent equations present exactly where a mesh is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import lamina
import lamina.numpy as lnp
from lamina.sharding import AxisType, NamedSharding, PartitionSpec

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

pytestmark = pytest.mark.oracle

if len(lamina.devices()) < 8 or jax.device_count() < 8:
    pytest.skip(
        "needs 8 devices (XLA_FLAGS=--xla_force_host_platform_device_count=8)",
        allow_module_level=True,
    )

RNG = np.random.default_rng(0)
X = RNG.standard_normal((8, 3)).astype(np.float32)
W = RNG.standard_normal((3, 5)).astype(np.float32)
B = RNG.standard_normal((5,)).astype(np.float32)


class Side(NamedTuple):
    api: Any
    np: Any
    P: Any
    NamedSharding: Any
    AxisType: Any


LAMINA = Side(lamina, lnp, PartitionSpec, NamedSharding, AxisType)
JAX = Side(jax, jnp, jax.sharding.PartitionSpec, jax.sharding.NamedSharding, jax.sharding.AxisType)


def _loss(s: Side) -> Callable[..., Any]:
    def loss(w: Any, b: Any, x: Any) -> Any:
        return s.np.sum(s.np.tanh(s.np.dot(x, w) + b) ** 2)

    return loss


def _put(s: Side, axis_type: str, *arrays_and_specs: tuple[np.ndarray, tuple[Any, ...]]) -> Any:
    mesh = s.api.make_mesh((4,), ("i",), axis_types=(getattr(s.AxisType, axis_type),))
    return [s.api.device_put(a, s.NamedSharding(mesh, s.P(*spec))) for a, spec in arrays_and_specs]


def _no_mesh(s: Side) -> Any:
    return s.api.make_jaxpr(s.api.grad(_loss(s), argnums=(0, 1)))(W, B, X)


def _over_mesh(axis_type: str) -> Callable[[Side], Any]:
    def trace(s: Side) -> Any:
        w, b, x = _put(s, axis_type, (W, ()), (B, ()), (X, ("i",)))
        return s.api.make_jaxpr(s.api.grad(_loss(s), argnums=(0, 1)))(w, b, x)

    return trace


def _in_checked_shard_map(s: Side) -> Any:
    mesh = s.api.make_mesh((4,), ("i",), axis_types=(s.AxisType.Auto,))

    def body(w: Any, b: Any, x: Any) -> Any:
        gw, gb = s.api.grad(_loss(s), argnums=(0, 1))(w, b, x)
        return s.api.lax.psum(gw, "i"), s.api.lax.psum(gb, "i")

    f = s.api.shard_map(
        body,
        mesh=mesh,
        in_specs=(s.P(), s.P(), s.P("i")),
        out_specs=(s.P(), s.P()),
        check_vma=True,
    )
    return s.api.make_jaxpr(f)(W, B, X)


PROGRAMS: dict[str, Callable[[Side], Any]] = {
    "no_mesh": _no_mesh,
    "auto_axes": _over_mesh("Auto"),
    "explicit_axes": _over_mesh("Explicit"),
    "checked_shard_map_body": _in_checked_shard_map,
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_grad_jaxpr_prints_as_jax(name: str) -> None:
    assert str(PROGRAMS[name](LAMINA)) == str(PROGRAMS[name](JAX))


def test_no_mesh_takes_no_mesh_equations() -> None:
    text = str(_no_mesh(LAMINA))
    assert "reshard" not in text
    assert "NamedSharding" not in text


@pytest.mark.parametrize("axis_type", ["Auto", "Explicit"])
def test_a_type_with_a_mesh_keeps_the_mesh_equations(axis_type: str) -> None:
    text = str(_over_mesh(axis_type)(LAMINA))
    # The seed laid out over the mesh, and the bias's cotangent summed and reshaped onto it.
    assert text.count("reshard 1.0:f32[]") == 2
    assert "sharding=NamedSharding(mesh=AbstractMesh('i': 4" in text
    assert "out_sharding=NamedSharding(mesh=AbstractMesh('i': 4" in text


def test_a_vma_scope_keeps_the_pvary_casts() -> None:
    # Inside a checked body the replicated weights vary once combined with the split batch.
    assert "pvary" in str(_in_checked_shard_map(LAMINA))
