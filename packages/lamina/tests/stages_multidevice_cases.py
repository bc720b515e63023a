"""AOT stages on 8 CPU devices against JAX, run by `test_stages_as_jax.py` in a process with
8 devices: lowering for `ShapeDtypeStruct`s carrying shardings (a `NamedSharding`, or a
`PartitionSpec` over the mesh in context), the compiled function's shardings and formats, and
JAX's error for an argument placed otherwise than the executable takes it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lamina

jax = pytest.importorskip("jax")

if len(lamina.devices()) < 8:
    pytest.skip("needs 8 devices (XLA_FLAGS=--xla_force_host_platform_device_count=8)",
                allow_module_level=True)  # fmt: skip


def _sharded(api: Any, spec: Any) -> Any:
    mesh = api.sharding.Mesh(np.array(api.devices()), ("x",))
    return mesh, api.sharding.NamedSharding(mesh, spec(api))


def _lowered_for_structs(api: Any) -> list[str]:
    _, sharding = _sharded(api, lambda a: a.sharding.PartitionSpec("x"))
    sds = api.ShapeDtypeStruct((8, 4), np.float32, sharding=sharding)
    plain = api.ShapeDtypeStruct((8, 4), np.float32)
    lowered = api.jit(lambda a, b: a * 2 + b).lower(sds, plain)
    compiled = lowered.compile()
    return [
        repr(sds),
        lowered.as_text(),
        repr(lowered.out_info),
        repr(compiled.input_shardings),
        repr(compiled.output_shardings),
        repr(compiled.out_info),
        repr(compiled.input_formats),
    ]


def test_lowering_for_sharded_structs_is_jax_s() -> None:
    assert _lowered_for_structs(lamina) == _lowered_for_structs(jax)


def _spec_in_context(api: Any) -> list[str]:
    mesh, _ = _sharded(api, lambda a: a.sharding.PartitionSpec())
    with api.set_mesh(mesh):
        sds = api.ShapeDtypeStruct((8,), np.float32, sharding=api.sharding.PartitionSpec("x"))
        return [repr(sds), api.jit(lambda a: a + 1).lower(sds).as_text()]


def test_partition_spec_struct_reads_the_mesh_in_context() -> None:
    assert _spec_in_context(lamina) == _spec_in_context(jax)


def _misplaced_call(api: Any) -> str:
    mesh, sharding = _sharded(api, lambda a: a.sharding.PartitionSpec("x"))
    sds = api.ShapeDtypeStruct((8, 4), np.float32, sharding=sharding)
    compiled = api.jit(lambda a: a * 2).lower(sds).compile()
    replicated = api.sharding.NamedSharding(mesh, api.sharding.PartitionSpec())
    x = api.device_put(np.ones((8, 4), np.float32), replicated)
    with pytest.raises(ValueError) as caught:
        compiled(x)
    right = api.device_put(np.ones((8, 4), np.float32), sharding)
    np.testing.assert_allclose(np.asarray(compiled(right)), 2.0)
    return str(caught.value)


def test_misplaced_argument_is_jax_error() -> None:
    assert _misplaced_call(lamina) == _misplaced_call(jax)
