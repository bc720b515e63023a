"""The shortcuts differentiation rules take for types without a mesh (issue 39, item 3) give
what the full path gives: the same equations for a type without a mesh, and the full path
(a sharding in the equation) for a type with one, or for a new type made inside a
`use_abstract_mesh` scope (a `shard_map` body), which takes the scope's mesh.

Each rule is staged with `trace_to_jaxpr` on core alone; the expected text is what the
rule's full formula (building `aval.sharding`) stages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from lamina_core import lax
from lamina_core.interpreters import UndefinedPrimal, trace_to_jaxpr, transpose_rules
from lamina_core.ir import AbstractMesh, ShapedArray, manual_mesh, use_abstract_mesh
from lamina_core.lax import broadcast_in_dim_p
from lamina_core.lax._ad_common import unbroadcast, zeros_like_shaped

F32 = np.dtype(np.float32)
MESH = manual_mesh(AbstractMesh((4,), ("i",)), ("i",))


def _staged(fun: Callable[..., Any], *avals: ShapedArray) -> str:
    return str(trace_to_jaxpr(lambda *xs: [fun(*xs)], list(avals)).jaxpr)


def _broadcast_transpose(operand: ShapedArray) -> Callable[[Any], Any]:
    rule = transpose_rules[broadcast_in_dim_p]

    def transposed(ct: Any) -> Any:
        (x_bar,) = rule(
            ct, UndefinedPrimal(operand), shape=(8, 3), broadcast_dimensions=(1,), sharding=None
        )
        return x_bar

    return transposed


def _full_broadcast_transpose(operand: ShapedArray) -> Callable[[Any], Any]:
    # The rule as written before the shortcut: the summed type's sharding, always built.
    def transposed(ct: Any) -> Any:
        summed = operand.update(shape=tuple(d for d in operand.shape if d != 1))
        return lax.reduce_sum(ct, (0,), out_sharding=summed.sharding)

    return transposed


@pytest.mark.parametrize("mesh", [None, MESH], ids=["no_mesh", "mesh"])
def test_unbroadcast_stages_what_the_full_formula_does(mesh: Any) -> None:
    target = ShapedArray((1, 3), F32, mesh=mesh)
    ct = ShapedArray((8, 3), F32, mesh=mesh)
    ours = _staged(lambda g: unbroadcast(target, g), ct)
    full = _staged(
        lambda g: lax.reshape(lax.reduce_sum(g, (0,)), (1, 3), out_sharding=target.sharding), ct
    )
    assert ours == full
    assert ("sharding=NamedSharding" in ours) == (mesh is not None)


@pytest.mark.parametrize("mesh", [None, MESH], ids=["no_mesh", "mesh"])
def test_zeros_stage_what_the_full_formula_does(mesh: Any) -> None:
    aval = ShapedArray((8, 3), F32, mesh=mesh)

    def params(fun: Callable[[], Any]) -> dict[str, Any]:
        (eqn,) = trace_to_jaxpr(lambda: [fun()], []).jaxpr.eqns
        return dict(eqn.params)

    # The printer hides a broadcast's sharding: compare the equations' params.
    ours = params(lambda: zeros_like_shaped(aval))
    full = params(lambda: lax.broadcast(np.float32(0), (8, 3), out_sharding=aval.sharding))
    assert ours == full
    assert (ours["sharding"] is None) == (mesh is None)


@pytest.mark.parametrize("mesh", [None, MESH], ids=["no_mesh", "mesh"])
def test_broadcast_transpose_stages_what_the_full_formula_does(mesh: Any) -> None:
    operand = ShapedArray((3,), F32, mesh=mesh)
    ct = ShapedArray((8, 3), F32, mesh=mesh)
    ours = _staged(_broadcast_transpose(operand), ct)
    assert ours == _staged(_full_broadcast_transpose(operand), ct)
    assert ("out_sharding=NamedSharding" in ours) == (mesh is not None)


def test_broadcast_transpose_inside_a_mesh_scope_takes_the_full_path() -> None:
    # A type made before the scope has no mesh, but the summed type the full formula builds
    # inside it takes the scope's: the shortcut must not apply there.
    operand = ShapedArray((3,), F32)
    with use_abstract_mesh(MESH):
        ct = ShapedArray((8, 3), F32)
        ours = _staged(_broadcast_transpose(operand), ct)
        full = _staged(_full_broadcast_transpose(operand), ct)
    assert ours == full
    assert "out_sharding=NamedSharding" in ours
