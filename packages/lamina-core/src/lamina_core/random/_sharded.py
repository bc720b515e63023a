"""Samplers' `out_sharding=`: where a sample is split over the mesh in context.

As JAX's samplers, one with an `out_sharding` (or a scalar one under a mesh whose axes are all
Explicit, which is replicated) draws its values with the mesh's Explicit axes made Auto, then
reshards them to `out_sharding` (lax's `under_auto_axes`, which the umbrella installs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lamina_core.ir import NamedSharding, PartitionSpec, canonicalize_sharding, get_abstract_mesh
from lamina_core.lax import under_auto_axes


def sampler_sharding(out_sharding: Any, name: str, shape: Sequence[int]) -> NamedSharding | None:
    """The canonical `out_sharding` of sampler `name`; for a scalar under a mesh whose axes are
    all Explicit, a replicated one when none is given (JAX's choice)."""
    sharding = canonicalize_sharding(out_sharding, name)
    mesh = get_abstract_mesh()
    explicit = not mesh.empty and len(mesh.explicit_axes) == len(mesh.shape)
    if sharding is None and not shape and explicit:
        sharding = NamedSharding(mesh, PartitionSpec())
    return sharding


def sampled(sharding: NamedSharding | None, draw: Callable[..., Any], *args: Any) -> Any:
    """`draw(*args)`, under `auto_axes` towards `sharding` when there is one."""
    if sharding is None:
        return draw(*args)
    return under_auto_axes(draw, sharding)(*args)


__all__ = ["sampled", "sampler_sharding"]
