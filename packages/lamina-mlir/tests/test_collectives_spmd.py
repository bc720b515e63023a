"""Golden tests: collectives over named axes inside `shard_map` lower to XLA collectives
exactly as JAX 0.10.2 lowers them.

Each case is a `shard_map` body written once as source text and evaluated against `jax.lax`
and against Lamina's `lax`. JAX's module text comes from a subprocess with 8 host CPU devices
(the device count must be set before JAX makes its backend, which this process may already
have done); Lamina lowers for the same mesh with stand-in devices (lowering needs only their
ids). The two texts must be equal.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pytest

import lamina_mlir
from lamina_consts import make_jaxpr
from lamina_core import lax
from lamina_core.ir._mesh import Mesh
from lamina_core.ir._partition_spec import P
from lamina_core.sharding._shard_map import shard_map


@dataclass(frozen=True)
class Case:
    name: str
    mesh: str
    """`1d` (`i`=4), `2d` (`x`=2, `y`=4) or `one` (`r`=1)."""
    body: str
    """A lambda of the per-device arrays, with `lax` and `np` in scope."""
    in_specs: str
    out_specs: str
    shapes: tuple[tuple[int, ...], ...]
    check_vma: bool = False
    dtype: str = "float32"
    axis_names: tuple[str, ...] = ()
    """The mesh axes the body is manual over (default: all)."""
    nested_only: bool = False
    """Compare only the nested manual computation (the rest of a partially automatic body
    carries sharding constraints that are not the subject here)."""


_XY = "P('x', 'y')"
CASES = [
    Case("psum_1d", "1d", "lambda a: lax.psum(a, 'i')", "P('i')", "P()", ((8, 3),)),
    Case("pmax_1d", "1d", "lambda a: lax.pmax(a, 'i')", "P('i')", "P()", ((8, 3),)),
    Case("pmin_1d", "1d", "lambda a: lax.pmin(a, 'i')", "P('i')", "P()", ((8, 3),)),
    Case("psum_2d_y", "2d", "lambda a: lax.psum(a, 'y')", _XY, "P('x')", ((8, 8),), True),
    Case("psum_2d_x", "2d", "lambda a: lax.psum(a, 'x')", _XY, "P(None, 'y')", ((8, 8),), True),
    Case("psum_2d_xy", "2d", "lambda a: lax.psum(a, ('x', 'y'))", _XY, "P()", ((8, 8),), True),
    Case("psum_2d_yx", "2d", "lambda a: lax.psum(a, ('y', 'x'))", _XY, "P()", ((8, 8),), True),
    Case("psum_positional", "1d", "lambda a: lax.psum(a, ('i', 0))", "P('i')", "P()", ((8, 3),)),
    Case(
        "psum_groups",
        "1d",
        "lambda a: lax.psum(a, 'i', axis_index_groups=[[0, 1], [2, 3]])",
        "P('i')",
        "P('i')",
        ((8, 3),),
    ),
    Case(
        "psum_groups_uneven",
        "2d",
        "lambda a: lax.psum(a, 'y', axis_index_groups=[[0], [1, 2, 3]])",
        _XY,
        _XY,
        ((8, 8),),
    ),
    Case(
        "psum_int_bool",
        "1d",
        "lambda a: (lax.psum(a, 'i'), lax.psum(a > 3, 'i'), lax.pmax(a > 3, 'i'))",
        "P('i')",
        "P()",
        ((8, 3),),
        dtype="int32",
    ),
    Case(
        "pmin_complex",
        "2d",
        "lambda a: lax.pmin(a, 'y')",
        _XY,
        _XY,
        ((8, 8),),
        dtype="complex64",
    ),
    Case(
        "two_collectives",
        "1d",
        "lambda a: lax.pmax(lax.psum(a, 'i'), 'i')",
        "P('i')",
        "P()",
        ((8, 3),),
    ),
    Case(
        "axis_index_1d",
        "1d",
        "lambda a: a + lax.convert_element_type(lax.axis_index('i'), np.float32)",
        "P('i')",
        "P('i')",
        ((8, 3),),
        True,
    ),
    Case(
        "axis_index_2d",
        "2d",
        "lambda a: lax.convert_element_type(lax.axis_index('x') * 10 + lax.axis_index('y'),"
        " np.float32) + a",
        _XY,
        _XY,
        ((8, 8),),
        True,
    ),
    Case(
        "axis_index_xy",
        "2d",
        "lambda a: a + lax.convert_element_type(lax.axis_index(('x', 'y')), np.float32)",
        _XY,
        _XY,
        ((8, 8),),
        True,
    ),
    Case(
        "ppermute_1d",
        "1d",
        "lambda a: lax.ppermute(a, 'i', [(j, (j + 1) % 4) for j in range(4)])",
        "P('i')",
        "P('i')",
        ((8, 3),),
        True,
    ),
    Case(
        "ppermute_2d_x",
        "2d",
        "lambda a: lax.ppermute(a, 'x', [(0, 1), (1, 0)])",
        _XY,
        _XY,
        ((8, 8),),
        True,
    ),
    Case(
        "ppermute_2d_partial",
        "2d",
        "lambda a: lax.ppermute(a, 'y', [(0, 2), (2, 0)])",
        _XY,
        _XY,
        ((8, 8),),
    ),
    Case(
        "ppermute_2d_yx",
        "2d",
        "lambda a: lax.ppermute(a, ('y', 'x'), [(j, (j + 3) % 8) for j in range(8)])",
        _XY,
        _XY,
        ((8, 8),),
    ),
    Case("all_gather_1d", "1d", "lambda a: lax.all_gather(a, 'i')", "P('i')", "P()", ((8, 3),)),
    Case(
        "all_gather_tiled_1d",
        "1d",
        "lambda a: lax.all_gather(a, 'i', tiled=True)",
        "P('i')",
        "P()",
        ((8, 3),),
    ),
    Case("all_gather_axis1", "2d", "lambda a: lax.all_gather(a, 'x', axis=1)", _XY, _XY, ((8, 8),)),
    Case(
        "all_gather_tiled_axis1",
        "2d",
        "lambda a: lax.all_gather(a, 'y', axis=1, tiled=True)",
        _XY,
        "P('x')",
        ((8, 8),),
    ),
    Case(
        "all_gather_yx_tiled",
        "2d",
        "lambda a: lax.all_gather(a, ('y', 'x'), axis=1, tiled=True)",
        _XY,
        _XY,
        ((8, 8),),
    ),
    Case(
        "all_gather_groups",
        "2d",
        "lambda a: lax.all_gather(a, 'y', axis_index_groups=[[0, 1], [2, 3]])",
        _XY,
        _XY,
        ((8, 8),),
    ),
    Case(
        "psum_scatter_tiled",
        "1d",
        "lambda a: lax.psum_scatter(a, 'i', tiled=True)",
        "P()",
        "P('i')",
        ((8, 3),),
    ),
    Case(
        "psum_scatter_untiled",
        "1d",
        "lambda a: lax.psum_scatter(a, 'i', scatter_dimension=1)",
        "P()",
        "P('i')",
        ((3, 4),),
    ),
    Case(
        "psum_scatter_2d_x_dim1",
        "2d",
        "lambda a: lax.psum_scatter(a, 'x', scatter_dimension=1, tiled=True)",
        _XY,
        _XY,
        ((8, 8),),
    ),
    Case(
        "all_to_all_1d",
        "1d",
        "lambda a: lax.all_to_all(a, 'i', 0, 0, tiled=True)",
        "P('i')",
        "P('i')",
        ((16, 2),),
        True,
    ),
    Case(
        "all_to_all_2d_y",
        "2d",
        "lambda a: lax.all_to_all(a, 'y', 0, 1, tiled=True)",
        _XY,
        _XY,
        ((8, 8),),
    ),
    Case(
        "all_to_all_xy",
        "2d",
        "lambda a: lax.all_to_all(a, ('x', 'y'), 0, 0, tiled=True)",
        _XY,
        _XY,
        ((16, 8),),
    ),
    Case("all_to_all_untiled", "2d", "lambda a: lax.all_to_all(a, 'y', 0, 1)", _XY, _XY, ((8, 8),)),
    Case("size1_psum", "one", "lambda a: lax.psum(a, 'r')", "P('r')", "P('r')", ((1, 3),), True),
    Case(
        "size1_collectives",
        "one",
        "lambda a: (lax.all_gather(a, 'r', tiled=True), lax.ppermute(a, 'r', [(0, 0)]),"
        " lax.psum_scatter(a, 'r', tiled=True), lax.all_to_all(a, 'r', 0, 0, tiled=True),"
        " a + lax.convert_element_type(lax.axis_index('r'), np.float32))",
        "P('r')",
        "P('r')",
        ((1, 3),),
    ),
    Case(
        "axis_index_partial_auto",
        "2d",
        "lambda a: a + lax.convert_element_type(lax.axis_index('y'), np.float32)",
        "P(None, 'y')",
        "P(None, 'y')",
        ((8, 8),),
        axis_names=("y",),
        nested_only=True,
    ),
]

_JAX_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import jax
    from jax import lax
    from jax.sharding import Mesh, PartitionSpec as P
    devices = jax.devices()
    meshes = {
        "1d": Mesh(np.array(devices[:4]), ("i",)),
        "2d": Mesh(np.array(devices[:8]).reshape(2, 4), ("x", "y")),
        "one": Mesh(np.array(devices[:1]), ("r",)),
    }
    out = {}
    for case in json.load(sys.stdin):
        env = {"lax": lax, "np": np, "P": P}
        f = jax.shard_map(
            eval(case["body"], env), mesh=meshes[case["mesh"]],
            in_specs=eval(case["in_specs"], env), out_specs=eval(case["out_specs"], env),
            check_vma=case["check_vma"], axis_names=set(case["axis_names"]),
        )
        args = [np.zeros(s, case["dtype"]) for s in case["shapes"]]
        out[case["name"]] = jax.jit(f).lower(*args).as_text(debug_info=False)
    json.dump(out, sys.stdout)
    """
)


@pytest.fixture(scope="module")
def jax_texts() -> dict[str, str]:
    pytest.importorskip("jax")
    env = dict(os.environ)
    env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    env["JAX_PLATFORMS"] = "cpu"
    env.setdefault("JAX_USE_SIMPLIFIED_JAXPR_CONSTANTS", "True")
    done = subprocess.run(
        [sys.executable, "-c", _JAX_SCRIPT],
        input=json.dumps([asdict(c) for c in CASES]),
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    texts: dict[str, str] = json.loads(done.stdout)
    return texts


@dataclass(frozen=True)
class _Device:
    """A stand-in device: lowering only reads mesh shapes and names."""

    id: int


def lamina_mesh(kind: str) -> Mesh:
    if kind == "1d":
        return Mesh(np.array([_Device(i) for i in range(4)]), ("i",))
    if kind == "2d":
        return Mesh(np.array([_Device(i) for i in range(8)]).reshape(2, 4), ("x", "y"))
    return Mesh(np.array([_Device(0)]), ("r",))


def lamina_text(case: Case) -> str:
    env: dict[str, Any] = {"lax": lax, "np": np, "P": P}
    mesh = lamina_mesh(case.mesh)
    f = shard_map(
        eval(case.body, env),
        mesh=mesh,
        in_specs=eval(case.in_specs, env),
        out_specs=eval(case.out_specs, env),
        check_vma=case.check_vma,
        axis_names=frozenset(case.axis_names),
    )
    args = [np.zeros(s, case.dtype) for s in case.shapes]
    jaxpr = make_jaxpr(f)(*args)
    # JAX declares no mesh in a module for one device (what the module-level lowering does
    # with a mesh of size 1 is not this test's subject).
    module_mesh = mesh if mesh.size > 1 else None
    lowered = lamina_mlir.lower_jaxpr_to_module(jaxpr, module_name="jit(_lambda)", mesh=module_mesh)
    return lowered.as_text()


def _nested_manual_computation(text: str) -> str:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "sdy.manual_computation()" in line)
    end = next(i for i in range(start, len(lines)) if lines[i].strip().startswith("} : ("))
    # Value numbers count the ops after it too, which differ: compare the ops alone.
    return re.sub(r"%\d+", "%_", "\n".join(lines[start : end + 1]))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_collective_matches_jax(case: Case, jax_texts: dict[str, str]) -> None:
    got, want = lamina_text(case), jax_texts[case.name]
    if case.nested_only:
        got, want = _nested_manual_computation(got), _nested_manual_computation(want)
    assert got == want


def _psum_body_jaxpr() -> Any:
    mesh = lamina_mesh("1d")
    f = shard_map(lambda a: lax.psum(a, "i"), mesh=mesh, in_specs=P("i"), out_specs=P())
    closed = make_jaxpr(f)(np.zeros((8, 3), np.float32))
    return closed.jaxpr.eqns[0].params["jaxpr"]


def test_named_collective_outside_shard_map_refuses() -> None:
    with pytest.raises(NotImplementedError, match="needs a device mesh"):
        lamina_mlir.lower_jaxpr_to_module(_psum_body_jaxpr(), module_name="jit(f)")


def test_ppermute_rejects_repeated_sources() -> None:
    mesh = lamina_mesh("1d")
    f = shard_map(
        lambda a: lax.ppermute(a, "i", [(0, 1), (4, 2)]),
        mesh=mesh,
        in_specs=P("i"),
        out_specs=P("i"),
    )
    jaxpr = make_jaxpr(f)(np.zeros((8, 3), np.float32))
    with pytest.raises(ValueError, match="sources and destinations must be unique"):
        lamina_mlir.lower_jaxpr_to_module(jaxpr, module_name="jit(f)", mesh=mesh)


def test_pbroadcast_has_no_cpu_lowering() -> None:
    mesh = lamina_mesh("1d")
    f = shard_map(lambda a: lax.pbroadcast(a, "i", 1), mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    jaxpr = make_jaxpr(f)(np.zeros((8, 3), np.float32))
    with pytest.raises(NotImplementedError, match="'pbroadcast' not found for platform cpu"):
        lamina_mlir.lower_jaxpr_to_module(jaxpr, module_name="jit(f)", mesh=mesh)


def _numpy_axis_groups(shape: tuple[int, ...], axes: tuple[int, ...]) -> list[list[int]]:
    """JAX's `pxla._axis_groups`: the ids of a row-major grid, the named axes moved to the
    front and flattened; each column is a group."""
    iota = np.arange(int(np.prod(shape))).reshape(shape)
    moved = np.moveaxis(iota, axes, list(range(len(axes))))
    size = int(np.prod([shape[a] for a in axes]))
    return [list(map(int, g)) for g in moved.reshape(size, -1).T]


@pytest.mark.parametrize("shape", [(4,), (2, 4), (2, 3, 2), (1, 4), (3, 1, 2)])
def test_device_groups_match_jax_axis_groups(shape: tuple[int, ...]) -> None:
    from itertools import permutations

    from lamina_mlir._rules_shard_map import SpmdContext

    names = tuple("abc"[: len(shape)])
    devices = np.array([_Device(i) for i in range(int(np.prod(shape)))]).reshape(shape)
    spmd = SpmdContext(Mesh(devices, names), frozenset(names))
    for r in range(1, len(names) + 1):
        for axes in permutations(names, r):
            want = _numpy_axis_groups(shape, tuple(names.index(a) for a in axes))
            assert spmd.device_groups(axes) == want, axes
