"""Collectives inside `shard_map`, run on host CPU devices and checked against JAX's values.

Each body is source text evaluated against `jax.lax` and Lamina's `lax`; both run on meshes of
the same shape, Lamina's inputs placed as the `in_specs` say. The repository's conftest gives
every test process 8 CPU devices; with fewer the module is skipped. Every result is waited for
before the next call (pipelined collective programs can deadlock XLA:CPU on few cores).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lamina as lm
from lamina_core.ir._mesh import Mesh, NamedSharding
from lamina_core.ir._partition_spec import P
from lamina_core.sharding._shard_map import shard_map

jax = pytest.importorskip("jax")

if len(lm.devices()) < 8 or jax.device_count() < 8:
    pytest.skip(
        "needs 8 devices (XLA_FLAGS=--xla_force_host_platform_device_count=8)",
        allow_module_level=True,
    )

_XY = "P('x', 'y')"
CASES: list[tuple[str, str, str, str, str, tuple[int, ...], str]] = [
    # name, mesh, body, in_specs, out_specs, shape, dtype
    ("psum", "1d", "lambda a: lax.psum(a, 'i')", "P('i')", "P()", (8, 3), "float32"),
    ("pmax", "1d", "lambda a: lax.pmax(a, 'i')", "P('i')", "P()", (8, 3), "float32"),
    ("pmin_int", "1d", "lambda a: lax.pmin(a, 'i')", "P('i')", "P()", (8, 3), "int32"),
    ("psum_y", "2d", "lambda a: lax.psum(a, 'y')", _XY, "P('x')", (8, 8), "float32"),
    ("psum_x", "2d", "lambda a: lax.psum(a, 'x')", _XY, "P(None, 'y')", (8, 8), "float32"),
    ("psum_xy", "2d", "lambda a: lax.psum(a, ('x', 'y'))", _XY, "P()", (8, 8), "float32"),
    ("psum_pos", "1d", "lambda a: lax.psum(a, ('i', 0))", "P('i')", "P()", (8, 3), "float32"),
    (
        "psum_groups",
        "1d",
        "lambda a: lax.psum(a, 'i', axis_index_groups=[[0, 1], [2, 3]])",
        "P('i')",
        "P('i')",
        (8, 3),
        "float32",
    ),
    (
        "axis_index_2d",
        "2d",
        "lambda a: a + lax.convert_element_type(lax.axis_index('x') * 10 + lax.axis_index('y'),"
        " np.float32)",
        _XY,
        _XY,
        (8, 8),
        "float32",
    ),
    (
        "axis_index_xy",
        "2d",
        "lambda a: a + lax.convert_element_type(lax.axis_index(('y', 'x')), np.float32)",
        _XY,
        _XY,
        (8, 8),
        "float32",
    ),
    (
        "ppermute_ring",
        "1d",
        "lambda a: lax.ppermute(a, 'i', [(j, (j + 1) % 4) for j in range(4)])",
        "P('i')",
        "P('i')",
        (8, 3),
        "float32",
    ),
    (
        "ppermute_x",
        "2d",
        "lambda a: lax.ppermute(a, 'x', [(0, 1), (1, 0)])",
        _XY,
        _XY,
        (8, 8),
        "float32",
    ),
    ("all_gather", "1d", "lambda a: lax.all_gather(a, 'i')", "P('i')", "P()", (8, 3), "float32"),
    (
        "all_gather_tiled_axis1",
        "2d",
        "lambda a: lax.all_gather(a, 'y', axis=1, tiled=True)",
        _XY,
        "P('x')",
        (8, 8),
        "float32",
    ),
    (
        "all_gather_x_axis1",
        "2d",
        "lambda a: lax.all_gather(a, 'x', axis=1)",
        _XY,
        _XY,
        (8, 8),
        "float32",
    ),
    (
        "psum_scatter",
        "1d",
        "lambda a: lax.psum_scatter(a, 'i', tiled=True)",
        "P()",
        "P('i')",
        (8, 3),
        "float32",
    ),
    (
        "psum_scatter_y_dim1",
        "2d",
        "lambda a: lax.psum_scatter(a, 'y', scatter_dimension=1, tiled=True)",
        _XY,
        _XY,
        (8, 32),
        "float32",
    ),
    (
        "all_to_all",
        "1d",
        "lambda a: lax.all_to_all(a, 'i', 0, 0, tiled=True)",
        "P('i')",
        "P('i')",
        (16, 2),
        "float32",
    ),
    (
        "all_to_all_y",
        "2d",
        "lambda a: lax.all_to_all(a, 'y', 0, 1, tiled=True)",
        _XY,
        _XY,
        (8, 8),
        "float32",
    ),
]


def _meshes(devices: Any, mesh_cls: Any) -> dict[str, Any]:
    return {
        "1d": mesh_cls(np.array(devices[:4]), ("i",)),
        "2d": mesh_cls(np.array(devices[:8]).reshape(2, 4), ("x", "y")),
    }


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_collective_values_match_jax(case: tuple[Any, ...]) -> None:
    _name, kind, body, in_specs, out_specs, shape, dtype = case
    x = (np.arange(np.prod(shape)) * 7 % 23).reshape(shape).astype(dtype)

    jenv = {"lax": jax.lax, "np": np, "P": jax.sharding.PartitionSpec}
    jmesh = _meshes(jax.devices(), jax.sharding.Mesh)[kind]
    jf = jax.shard_map(
        eval(body, jenv),
        mesh=jmesh,
        in_specs=eval(in_specs, jenv),
        out_specs=eval(out_specs, jenv),
        check_vma=False,
    )
    want = np.asarray(jax.block_until_ready(jax.jit(jf)(x)))

    lenv = {"lax": lm.lax, "np": np, "P": P}
    mesh = _meshes(lm.devices(), Mesh)[kind]
    spec = eval(in_specs, lenv)
    lf = shard_map(
        eval(body, lenv), mesh=mesh, in_specs=spec, out_specs=eval(out_specs, lenv), check_vma=False
    )
    got = np.asarray(lm.block_until_ready(lm.jit(lf)(lm.device_put(x, NamedSharding(mesh, spec)))))

    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-6)
