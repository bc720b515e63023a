"""A worker of the multi-process test: `python distributed_child.py ADDRESS NPROCS PROCESS_ID`.

Run by `test_distributed.py`, one per process, each with 4 CPU devices: connects to the others,
checks what it sees of the 8 global devices, runs sharded programs over all of them (each
process feeding and reading its own shards) and checks their values against NumPy.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp
from lamina import lax
from lamina.sharding import NamedSharding
from lamina.sharding import PartitionSpec as P

LOCAL = 4


def check_local_shards(array: jax.Array, expected: np.ndarray) -> None:
    """Every shard this process holds is `expected` at the shard's index."""
    assert len(array.addressable_shards) == LOCAL, array.addressable_shards
    for shard in array.addressable_shards:
        assert shard.device.process_index == jax.process_index()
        np.testing.assert_allclose(np.asarray(shard.data), expected[shard.index])


def main(address: str, nprocs: int, pid: int) -> None:
    assert not jax.distributed.is_initialized()
    jax.distributed.initialize(address, nprocs, pid, initialization_timeout=60)
    assert jax.distributed.is_initialized()
    assert jax.process_index() == pid, jax.process_index()
    assert jax.process_count() == nprocs
    assert jax.device_count() == nprocs * LOCAL and len(jax.devices()) == nprocs * LOCAL
    assert jax.local_device_count() == LOCAL
    assert all(d.process_index == pid for d in jax.local_devices())
    others = jax.local_devices(process_index=1 - pid)
    assert len(others) == LOCAL and not set(others) & set(jax.local_devices())
    assert sorted(d.process_index for d in jax.devices()) == sorted(
        [p for p in range(nprocs) for _ in range(LOCAL)]
    )

    mesh = jax.make_mesh((nprocs, LOCAL), ("p", "d"), (jax.sharding.AxisType.Auto,) * 2)
    data = np.arange(8 * 12, dtype=np.float32).reshape(8, 12)
    sharding = NamedSharding(mesh, P("p", "d"))

    # A global array from a callback: each process builds only its own shards.
    x = jax.make_array_from_callback(data.shape, sharding, lambda index: data[index])
    assert x.shape == data.shape and not x.is_fully_addressable
    check_local_shards(x, data)

    # ... from single-device arrays: this process's pieces only.
    pieces = [jax.device_put(data[s.index], s.device) for s in x.addressable_shards]
    assert {p.device for p in pieces} == set(jax.local_devices())
    y = jax.make_array_from_single_device_arrays(data.shape, sharding, pieces)
    check_local_shards(y, data)

    # ... from the rows this process holds (its half of the batch), as JAX's data loaders do.
    rows = NamedSharding(mesh, P("p"))
    half = data[pid * 4 : (pid + 1) * 4]
    v = jax.make_array_from_process_local_data(rows, half)
    assert v.shape == data.shape, v.shape
    check_local_shards(v, data)
    # Whole along an axis split inside each process only: the local data is the global array.
    by_device = jax.make_array_from_process_local_data(NamedSharding(mesh, P(None, "d")), data)
    check_local_shards(by_device, data)
    with pytest.raises(ValueError, match="In dimension 0, the process data has 3 elements"):
        jax.make_array_from_process_local_data(rows, data[:3], data.shape)

    # A sharded jit: partitioned over all 8 devices, results sharded the same way.
    @jax.jit
    def affine(a: jax.Array, b: jax.Array) -> Any:
        return jnp.sin(a) * 2.0 + b

    z = affine(x, y)
    assert z.sharding == sharding, z.sharding
    check_local_shards(z, np.sin(data) * 2.0 + data)

    # A reduction over every device: the result is replicated, so every process has it whole.
    total = jax.jit(lambda a: jnp.sum(a * a))(x)
    assert total.is_fully_replicated
    np.testing.assert_allclose(float(total), np.sum(data * data), rtol=1e-6)
    columns = jax.jit(lambda a: jnp.sum(a, axis=0))(x)  # split over "d" as `x`'s columns
    check_local_shards(columns, data.sum(axis=0))

    # shard_map with psum across both processes' devices.
    def block_sum(block: jax.Array) -> Any:
        return lax.psum(jnp.sum(block, axis=0, keepdims=True), ("p", "d"))

    summed = jax.jit(
        jax.shard_map(block_sum, mesh=mesh, in_specs=P(("p", "d")), out_specs=P())
    )(jax.make_array_from_callback((16, 12), NamedSharding(mesh, P(("p", "d"))),
                                   lambda index: np.tile(data, (2, 1))[index]))  # fmt: skip
    np.testing.assert_allclose(np.asarray(summed), 2 * data.sum(axis=0, keepdims=True))

    # ... as docs/sharding.md shows it.
    total = jax.jit(jax.shard_map(lambda b: lax.psum(jnp.sum(b, axis=0), ("p", "d")),
                                  mesh=mesh, in_specs=P(("p", "d")), out_specs=P()))(x)  # fmt: skip
    np.testing.assert_allclose(np.asarray(total), data.sum(axis=0))
    assert float(jax.jit(lambda a: jnp.sum(a * a))(x)) == 290320.0

    # Host values passed to a program on the global mesh: each process places its own pieces.
    w = jax.jit(lambda a, b: a @ b, in_shardings=(sharding, None))(data, np.ones((12, 3), "f4"))
    check_local_shards(w, data @ np.ones((12, 3), "f4"))

    # An array this process holds whole (as every process does), passed where the program
    # wants it split over both processes: each process places its own pieces.
    local = jax.device_put(data, jax.local_devices()[0])
    check_local_shards(affine(local, x), np.sin(data) * 2.0 + data)

    # Outside jit, one primitive at a time, on the same mesh.
    check_local_shards(x * 3.0 + 1.0, data * 3.0 + 1.0)

    # An array split over both processes, but not as the program takes it: an error, since
    # that would move data between processes.
    transposed = jax.jit(lambda a: a + 1.0, in_shardings=NamedSharding(mesh, P("d", "p")))
    with pytest.raises(ValueError, match="does not move data between processes"):
        transposed(x)

    jax.distributed.shutdown()
    assert not jax.distributed.is_initialized()
    print(f"process {pid}: ok", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
