"""`reshard`: values retyped and moved to other shardings, as `jax.sharding.reshard`."""

from __future__ import annotations

from typing import Any

from lamina_core import tree_util
from lamina_core.ir import Mesh, NamedSharding, PartitionSpec, get_concrete_mesh
from lamina_core.lax import reshard_sharding, reshard_traced
from lamina_core.trace import EVAL_TRACE, Tracer, current_trace, typeof
from lamina_runtime.api import device_put


def _per_leaf(tree: Any, n: int, out_shardings: Any) -> list[Any]:
    if out_shardings is None or isinstance(out_shardings, (NamedSharding, PartitionSpec)):
        return [out_shardings] * n
    leaves = tree_util.tree_leaves(
        out_shardings, is_leaf=lambda s: s is None or isinstance(s, (NamedSharding, PartitionSpec))
    )
    if len(leaves) != n:
        raise ValueError(
            f"reshard out_shardings: {len(leaves)} shardings were given for {n} values"
        )
    return leaves


def reshard(xs: Any, out_shardings: Any) -> Any:
    """Each leaf of `xs` laid out as its sharding in `out_shardings` (one for all, or a tree
    like `xs`) says: under a trace a `reshard` equation retyping it; eagerly, a transfer to
    the devices of the sharding's mesh (or the mesh in context, for a bare spec)."""
    leaves, tree = tree_util.tree_flatten(xs)
    out = []
    for x, s in zip(leaves, _per_leaf(xs, len(leaves), out_shardings), strict=True):
        if isinstance(x, Tracer) or current_trace() is not EVAL_TRACE:
            # Under a trace a constant is staged too (JAX binds `reshard` on it).
            out.append(reshard_traced(x, s))
            continue
        dst = reshard_sharding(s, len(getattr(typeof(x), "shape", ())))
        mesh = s.mesh if isinstance(s, NamedSharding) and isinstance(s.mesh, Mesh) else None
        if mesh is None:
            mesh = get_concrete_mesh()
            if mesh.empty:
                raise ValueError(
                    "reshard of a concrete value to a sharding over an abstract mesh needs a "
                    "mesh in context (`jax.set_mesh`)"
                )
        out.append(device_put(x, NamedSharding(mesh, dst.spec)))
    return tree_util.tree_unflatten(tree, out)
