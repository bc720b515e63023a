"""Arrays remember the mesh they were placed on, axis types included: two meshes of the same
devices and names that differ only in axis types (`make_mesh`'s Explicit axes, `Mesh`'s Auto
ones) are different meshes, whichever was used first in the process. (Once, the first one's
sharding was reported for both, and a later jitted call lowered without the arguments'
`sdy.sharding`.) And `pmap(f).lower`, which lowers the jit of shard_map JAX runs at top level."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lamina
from lamina.sharding import AxisType, Mesh, NamedSharding
from lamina.sharding import PartitionSpec as P

jax = pytest.importorskip("jax")


def _meshes() -> tuple[Mesh, Mesh]:
    explicit = lamina.make_mesh((8,), ("data",))
    auto = Mesh(np.array(lamina.devices()).reshape(8), ("data",))
    return explicit, auto


@pytest.mark.parametrize("first", ["explicit", "auto"])
def test_each_array_reports_its_own_mesh(first: str) -> None:
    explicit, auto = _meshes()
    order = [explicit, auto] if first == "explicit" else [auto, explicit]
    x = np.arange(16.0, dtype=np.float32).reshape(8, 2)
    placed = [lamina.device_put(x, NamedSharding(m, P("data"))) for m in order]
    for mesh, array in zip(order, placed, strict=True):
        assert array.sharding.mesh == mesh
        assert array.sharding.mesh.axis_types == mesh.axis_types
    assert explicit.axis_types == (AxisType.Explicit,)
    assert auto.axis_types == (AxisType.Auto,)


def test_a_jitted_call_on_an_auto_mesh_after_an_explicit_one_keeps_its_shardings() -> None:
    explicit, auto = _meshes()
    x = np.ones((8, 4), np.float32)
    lamina.device_put(x, NamedSharding(explicit, P("data")))
    placed = lamina.device_put(x, NamedSharding(auto, P("data")))
    text = lamina.jit(lambda a: a * 2.0).lower(placed).as_text()
    assert 'sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>' in text
    out = lamina.jit(lambda a: a * 2.0)(placed)
    assert out.sharding.mesh == auto
    np.testing.assert_array_equal(np.asarray(out), 2 * x)


def test_pmap_lower_compiles_and_runs_as_jax() -> None:
    x = np.arange(8.0, dtype=np.float32).reshape(4, 2)
    ours = lamina.pmap(lambda v: lamina.lax.psum(v * 2, "i"), axis_name="i")
    theirs = jax.pmap(lambda v: jax.lax.psum(v * 2, "i"), axis_name="i")
    got = ours.lower(x).compile()(x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(theirs.lower(x).compile()(x)))
    assert got.sharding.spec == lamina.sharding.PartitionSpec("i")


def _sharded_square_sum() -> tuple[Mesh, Any]:
    mesh = _mesh_of(4)
    f = lamina.jit(
        lambda x: (x * x, x.sum()),
        in_shardings=NamedSharding(mesh, P("i")),
        out_shardings=(NamedSharding(mesh, P("i")), NamedSharding(mesh, P())),
    )
    return mesh, f


def _mesh_of(n: int) -> Mesh:
    return Mesh(np.array(lamina.devices()[:n]), ("i",))


def test_a_jit_with_shardings_records_them_on_its_equation() -> None:
    mesh, f = _sharded_square_sum()
    text = str(lamina.make_jaxpr(f)(np.ones((8, 2), np.float32)))
    assert f"in_shardings=({NamedSharding(mesh, P('i'))!r},)" in text
    assert f"out_shardings=({NamedSharding(mesh, P('i'))!r}, " in text


def test_transformations_of_a_jit_with_shardings_run() -> None:
    _, f = _sharded_square_sum()
    x = np.arange(16.0, dtype=np.float32).reshape(8, 2)
    grad = lamina.jit(lamina.grad(lambda v: f(v)[1] + f(v)[0].sum()))(x)
    np.testing.assert_allclose(np.asarray(grad), 1.0 + 2.0 * x)
    batched = lamina.jit(lamina.vmap(lambda v: f(v)[0]))(np.stack([x, x + 1]))
    np.testing.assert_allclose(np.asarray(batched), np.stack([x * x, (x + 1) ** 2]))
    # Only the first output used: dead-code elimination keeps the first output's sharding.
    only_square = lamina.jit(lambda v: f(v)[0])
    np.testing.assert_allclose(np.asarray(only_square(x)), x * x)


@pytest.mark.parametrize(
    "spec",
    [P(), P("i"), P(None, "j"), P(("j", "i"), None), P("j", "i"), P(("i", "j"))],
    ids=str,
)
def test_devices_indices_map_equals_jax(spec: P) -> None:
    mesh = Mesh(np.array(lamina.devices()).reshape(2, 4), ("i", "j"))
    ours = NamedSharding(mesh, spec)
    jmesh = jax.sharding.Mesh(np.array(jax.devices()).reshape(2, 4), ("i", "j"))
    theirs = jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec(*spec))
    shape = (16, 8)
    want = {d.id: i for d, i in theirs.devices_indices_map(shape).items()}
    assert {d.id: i for d, i in ours.devices_indices_map(shape).items()} == want
    got = ours.addressable_devices_indices_map(shape)
    assert {d.id: i for d, i in got.items()} == want  # one process: all of them
    assert ours.is_fully_addressable and ours.addressable_devices == ours.device_set
    assert mesh.local_devices == list(mesh.devices.flat)
