"""`make_array_from_process_local_data`: in one process it is `device_put` (JAX's check of
`global_shape`); over several, each process's data is mapped onto the pieces its devices
hold. The several-process layout is checked with devices assigned to pretend processes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lamina
from lamina.sharding import Mesh, NamedSharding
from lamina.sharding import PartitionSpec as P
from lamina_runtime.process_local import global_shape_of, local_index, process_groups

jax = pytest.importorskip("jax")


def _mesh(shape: tuple[int, ...], names: tuple[str, ...]) -> Mesh:
    return Mesh(np.array(lamina.devices()[:8]).reshape(shape), names)


def _by_quarters(device: Any) -> int:
    return int(device.id) // 2  # four pretend processes of two devices each


def test_one_process_places_the_data_as_device_put_does() -> None:
    mesh = _mesh((8,), ("data",))
    x = np.arange(24.0, dtype=np.float32).reshape(8, 3)
    got = lamina.make_array_from_process_local_data(NamedSharding(mesh, P("data")), x)
    jmesh = jax.sharding.Mesh(np.array(jax.devices()[:8]), ("data",))
    want = jax.make_array_from_process_local_data(
        jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec("data")), x
    )
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert got.sharding.spec == P("data")
    assert [s.data.shape for s in got.addressable_shards] == [(1, 3)] * 8


def test_one_process_pytrees_take_sharding_and_shape_prefixes() -> None:
    mesh = _mesh((8,), ("data",))
    data = {"a": np.ones((8, 2), np.float32), "b": [np.zeros(16, np.int32)]}
    out = lamina.make_array_from_process_local_data(
        NamedSharding(mesh, P("data")), data, {"a": (8, 2), "b": None}
    )
    assert out["a"].shape == (8, 2)
    assert out["b"][0].dtype == np.int32


def test_one_process_global_shape_must_be_the_data_shape() -> None:
    mesh = _mesh((8,), ("data",))
    with pytest.raises(ValueError, match=r"global_shape should be None or equal to"):
        lamina.make_array_from_process_local_data(
            NamedSharding(mesh, P("data")), np.ones((8, 3)), (16, 3)
        )


def test_global_shape_follows_the_processes_splitting_each_axis() -> None:
    mesh = _mesh((4, 2), ("hosts", "chips"))  # each row of the mesh is one pretend process
    split_rows = NamedSharding(mesh, P("hosts", None))
    assert global_shape_of(split_rows, (2, 5), _by_quarters) == (8, 5)
    # Split over the devices of each process only: every process holds the whole axis.
    split_in_process = NamedSharding(mesh, P("chips"))
    assert global_shape_of(split_in_process, (6, 5), _by_quarters) == (6, 5)
    both = NamedSharding(mesh, P(("hosts", "chips")))
    assert global_shape_of(both, (4,), _by_quarters) == (16,)
    assert process_groups(both, 0, 1, _by_quarters) == [
        frozenset({0, 1}),
        frozenset({2, 3}),
        frozenset({4, 5}),
        frozenset({6, 7}),
    ]


def test_a_non_uniform_split_has_no_global_shape() -> None:
    mesh = _mesh((8,), ("data",))
    uneven = {d: (0 if d.id < 3 else 1) for d in lamina.devices()[:8]}
    sharding = NamedSharding(mesh, P("data"))
    assert process_groups(sharding, 0, 1, uneven.__getitem__) is None
    assert global_shape_of(sharding, (3,), uneven.__getitem__) == (None,)


def test_each_piece_is_read_from_the_process_data_in_offset_order() -> None:
    mesh = _mesh((4, 2), ("hosts", "chips"))
    sharding = NamedSharding(mesh, P(("hosts", "chips")))  # 8 pieces of 2 rows
    where = local_index(sharding, (16, 3), (4, 3), me=2, process_of=_by_quarters)
    # Process 2 holds global rows 8:10 and 10:12, laid end to end in its data.
    assert where((slice(8, 10), slice(None))) == (slice(0, 2), slice(None))
    assert where((slice(10, 12), slice(None))) == (slice(2, 4), slice(None))


def test_data_of_the_wrong_size_names_the_dimension() -> None:
    mesh = _mesh((4, 2), ("hosts", "chips"))
    sharding = NamedSharding(mesh, P("hosts"))
    with pytest.raises(ValueError, match="In dimension 0, the process data has 3 elements"):
        local_index(sharding, (8, 3), (3, 3), me=0, process_of=_by_quarters)
