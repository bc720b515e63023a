"""Multi-device cases, run by `test_multidevice.py` in a process with 8 CPU devices.

Each program runs in Lamina and in JAX on the same placement; values and the specs of the
output shardings must agree. Every multi-device result is waited for before the next call
(pipelining collective programs on few cores can deadlock XLA:CPU, see runtime-bridge.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina as lm
import lamina.numpy as lnp
from lamina.sharding import Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
JMesh = jax.sharding.Mesh
JNamed = jax.sharding.NamedSharding
JP = jax.sharding.PartitionSpec

if len(lm.devices()) < 8:
    pytest.skip("needs 8 devices (XLA_FLAGS=--xla_force_host_platform_device_count=8)",
                allow_module_level=True)  # fmt: skip

P = PartitionSpec
DEVS = lm.devices()
M1 = Mesh(np.array(DEVS), ("i",))
M2 = Mesh(np.array(DEVS).reshape(2, 4), ("x", "y"))
M4 = Mesh(np.array(DEVS[:4]), ("i",))
JM1 = JMesh(np.array(jax.devices()), ("i",))
JM2 = JMesh(np.array(jax.devices()).reshape(2, 4), ("x", "y"))
JM4 = JMesh(np.array(jax.devices()[:4]), ("i",))
MESHES = {id(M1): JM1, id(M2): JM2, id(M4): JM4}

rng = np.random.default_rng(0)


def data(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def both(host: np.ndarray, mesh: Mesh, spec: PartitionSpec) -> tuple[Any, Any]:
    """`host` placed as `spec` over `mesh`, in Lamina and in JAX."""
    ours = lm.device_put(host, NamedSharding(mesh, spec))
    theirs = jax.device_put(host, JNamed(MESHES[id(mesh)], JP(*spec)))
    return ours, theirs


def same(ours: Any, theirs: Any) -> None:
    ours.block_until_ready()
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5, atol=1e-5)
    if isinstance(theirs.sharding, jax.sharding.NamedSharding):
        assert isinstance(ours.sharding, NamedSharding), ours.sharding
        assert ours.sharding.spec == P(*theirs.sharding.spec), (ours.sharding, theirs.sharding)
        mesh = ours.sharding.mesh
        assert isinstance(mesh, Mesh)
        assert mesh.devices_flat == tuple(theirs.sharding.mesh.devices.flat)
    else:
        assert isinstance(ours.sharding, SingleDeviceSharding)


def check(fun: Callable[..., Any], jfun: Callable[..., Any], *pairs: tuple[Any, Any]) -> None:
    ours = lm.jit(fun)(*[p[0] for p in pairs])
    theirs = jax.jit(jfun)(*[p[1] for p in pairs])
    same(ours, theirs)
    again = lm.jit(fun)(*[p[0] for p in pairs])  # a second call: C++ dispatch
    same(again, theirs)


def test_device_put_reports_named_sharding() -> None:
    x, jx = both(data(8, 3), M1, P("i"))
    same(x, jx)
    assert repr(x.sharding) == repr(jx.sharding)
    assert not x.is_fully_replicated
    assert x.devices() == set(DEVS)
    shards = x.addressable_shards
    assert [(s.device, s.index) for s in shards] == [
        (s.device, s.index) for s in jx.addressable_shards
    ]
    np.testing.assert_array_equal(np.asarray(shards[1].data), np.asarray(jx)[1:2])


def test_single_device_sharding_repr() -> None:
    x = lm.device_put(np.ones(3, np.float32))
    assert repr(x.sharding) == repr(jnp.ones(3).sharding)


def test_elementwise_on_sharded_input() -> None:
    check(lambda x: x * 2.0, lambda x: x * 2.0, both(data(8, 3), M1, P("i")))


def test_elementwise_keeps_explicit_trailing_none() -> None:
    check(lambda x: x + 1.0, lambda x: x + 1.0, both(data(8, 3), M1, P("i", None)))


def test_two_sharded_inputs() -> None:
    check(lambda x, y: x * y - x, lambda x, y: x * y - x,
          both(data(8, 4), M1, P("i")), both(data(8, 4), M1, P("i")))  # fmt: skip


def test_matmul_with_sharded_lhs() -> None:
    w = data(4, 3)
    check(lambda x, w: x @ w, lambda x, w: x @ w, both(data(8, 4), M1, P("i")), (w, w))


def test_reductions_over_and_across_the_sharded_axis() -> None:
    x = both(data(8, 3), M1, P("i"))
    check(lambda x: x.sum(0), lambda x: x.sum(0), x)
    check(lambda x: x.sum(1), lambda x: x.sum(1), x)


def test_two_dimensional_mesh() -> None:
    a = both(data(8, 16), M2, P("x", "y"))
    check(lnp.sin, jnp.sin, a)
    check(lambda a: a.T, lambda a: a.T, a)
    check(lambda a: a @ a.T, lambda a: a @ a.T, a)


def test_mixing_replicated_and_sharded() -> None:
    r = both(data(8, 3), M1, P())
    x = both(data(8, 3), M1, P("i"))
    check(lambda r, x: r + x, lambda r, x: r + x, r, x)
    u = data(8, 3)
    check(lambda u, x: u * x, lambda u, x: u * x, (u, u), x)


def test_uncommitted_device_array_is_replicated_onto_the_mesh() -> None:
    u = np.arange(24, dtype=np.float32).reshape(8, 3)
    check(lambda u, x: x + u, lambda u, x: x + u,
          (lm.device_put(u), jnp.asarray(u)), both(data(8, 3), M1, P("i")))  # fmt: skip


def test_jit_in_and_out_shardings() -> None:
    host = data(8, 4)
    f = lm.jit(lambda x: x * 3.0, in_shardings=NamedSharding(M1, P("i")),
               out_shardings=NamedSharding(M1, P()))  # fmt: skip
    g = jax.jit(lambda x: x * 3.0, in_shardings=JNamed(JM1, JP("i")),
                out_shardings=JNamed(JM1, JP()))  # fmt: skip
    same(f(host), g(host))
    same(f(host), g(host))
    with lm.sharding.use_mesh(M2):
        h = lm.jit(lambda a: a + 1.0, out_shardings=P("y", "x"))
        out = h(np.ones((8, 8), np.float32))
    with jax.set_mesh(JM2):
        jout = jax.jit(lambda a: a + 1.0, out_shardings=JP("y", "x"))(np.ones((8, 8), np.float32))
    same(out, jout)


def test_sharded_constant_closed_over_by_jit() -> None:
    c, jc = both(np.arange(64, dtype=np.float32).reshape(8, 8), M1, P("i"))
    y = np.ones((8, 8), np.float32)
    ours = lm.jit(lambda y: y * c)(y)
    theirs = jax.jit(lambda y: y * jc)(y)
    same(ours, theirs)
    text = lm.jit(lambda y: y * c).lower(y).as_text()
    assert text == jax.jit(lambda y: y * jc).lower(y).as_text()


def test_lowered_text_matches_jax() -> None:
    x, jx = both(data(8, 3), M1, P("i"))
    assert lm.jit(lambda x: x * 2.0).lower(x).as_text() == (
        jax.jit(lambda x: x * 2.0).lower(jx).as_text()
    )


def test_compiled_shardings() -> None:
    a, ja = both(data(8, 16), M2, P("x", "y"))
    ours = lm.jit(lambda a: a * 2.0).lower(a).compile()
    theirs = jax.jit(lambda a: a * 2.0).lower(ja).compile()
    (ins,), _ = ours.input_shardings
    (jins,), _ = theirs.input_shardings
    assert ins.spec == P(*jins.spec)
    assert ours.output_shardings.spec == P(*theirs.output_shardings.spec)
    same(ours(a), theirs(ja))


def test_eager_ops_on_arrays_sharded_over_four_devices() -> None:
    a, ja = both(data(8, 3), M4, P("i"))
    b, jb = both(data(8, 3), M4, P("i"))
    same(a - b, ja - jb)
    same(lnp.max(lnp.abs(a)), jnp.max(jnp.abs(ja)))
    same((a == a).all(), (ja == ja).all())
    same(lm.lax.sin(a), jax.lax.sin(ja))


def test_device_put_with_bare_spec_needs_a_mesh() -> None:
    with pytest.raises(ValueError, match=r"Please set a mesh via `jax.set_mesh` if a "
                       r"PartitionSpec is passed to device_put"):  # fmt: skip
        lm.device_put(np.ones(8, np.float32), P("i"))
    with lm.sharding.use_mesh(M1):
        x = lm.device_put(np.ones(8, np.float32), P("i"))
    assert x.sharding == NamedSharding(M1, P("i"))


def test_spec_not_dividing_the_shape() -> None:
    host = np.ones((6, 3), np.float32)
    with pytest.raises(ValueError) as theirs:
        jax.device_put(host, JNamed(JM1, JP("i")))
    with pytest.raises(ValueError) as ours:
        lm.device_put(host, NamedSharding(M1, P("i")))
    assert str(ours.value) == str(theirs.value)


def test_incompatible_devices() -> None:
    x, jx = both(data(8, 3), M1, P("i"))
    z, jz = both(data(8, 3), M4, P("i"))
    with pytest.raises(ValueError) as theirs:
        jax.jit(lambda a, b: a + b)(jx, jz)
    with pytest.raises(ValueError) as ours:
        lm.jit(lambda a, b: a + b)(x, z)
    assert str(ours.value) == str(theirs.value)


def test_make_array_from_callback_and_single_device_arrays() -> None:
    host = np.arange(32, dtype=np.float32).reshape(8, 4)
    s = NamedSharding(M2, P("x", "y"))
    x = lm.make_array_from_callback(host.shape, s, lambda idx: host[idx])
    np.testing.assert_array_equal(np.asarray(x), host)
    assert x.sharding.spec == P("x", "y")
    pieces = [shard.data for shard in x.addressable_shards]
    y = lm.make_array_from_single_device_arrays(host.shape, s, pieces)
    np.testing.assert_array_equal(np.asarray(y), host)


def test_make_mesh() -> None:
    mesh = lm.make_mesh((2, 4), ("x", "y"))
    jmesh = jax.make_mesh((2, 4), ("x", "y"))
    assert str(mesh) == str(jmesh)
    assert repr(lm.make_mesh((8,), ("i",))) == repr(jax.make_mesh((8,), ("i",)))
    with pytest.raises(ValueError) as theirs:
        jax.make_mesh((16,), ("i",))
    with pytest.raises(ValueError) as ours:
        lm.make_mesh((16,), ("i",))
    assert str(ours.value) == str(theirs.value)


def test_many_blocked_steps_do_not_deadlock() -> None:
    x = lm.device_put(data(8, 3), NamedSharding(M1, P("i")))
    f = lm.jit(lambda x: x - x.mean())
    for _ in range(200):
        x = f(x).block_until_ready()
    assert np.isfinite(np.asarray(x)).all()
