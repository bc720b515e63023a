"""What JAX's lowering API takes besides a jaxpr: axis contexts, shape-polymorphism state, and
the effects a program may have and still be lowered (`lowerable_effects`).

These are plain records: `mlir.lower_jaxpr_to_module` reads the mesh out of an axis context and
checks a program's effects against `lowerable_effects`. Lamina's own `jit` lowers every effect
it defines and does not consult the set. Nothing here knows MLIR.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from lamina._effect_types import EffectTypeSet as EffectTypeSet
from lamina_core.callbacks import (
    debug_effect,
    ffi_effect,
    io_effect,
    ordered_debug_effect,
    ordered_io_effect,
)
from lamina_core.checkify import ErrorEffect
from lamina_core.ir import AbstractMesh, Mesh


@dataclass(frozen=True, slots=True)
class SPMDAxisContext:
    """Lowering for a device mesh, with `manual_axes` the axes lowered in manual mode (inside a
    `shard_map`)."""

    mesh: Mesh
    manual_axes: frozenset[Any] = frozenset()


@dataclass(frozen=True, slots=True)
class ShardingContext:
    """Lowering for `num_devices` devices placed by shardings (the partitioner decides)."""

    num_devices: int
    device_assignment: tuple[Any, ...] | None = None
    """The devices, in the program's order, when known."""
    abstract_mesh: AbstractMesh | None = None
    """The mesh the shardings name, when there is one."""

    def __post_init__(self) -> None:
        if self.device_assignment is not None:
            assert isinstance(self.device_assignment, tuple)
            assert self.num_devices == len(self.device_assignment)


AxisContext: TypeAlias = SPMDAxisContext | ShardingContext


class ShapePolyLoweringState:
    """The dimension variables a module's functions take first (sorted by name), preceded by
    a platform index when lowering for several platforms. Lamina's shapes are static, so a
    module of its own has none."""

    dim_vars: tuple[str, ...]
    uses_dim_vars: bool
    has_platform_index_argument: bool

    def __init__(
        self, dim_vars: tuple[str, ...], lowering_platforms: tuple[str, ...] | None
    ) -> None:
        self.has_platform_index_argument = (
            lowering_platforms is not None and len(lowering_platforms) > 1
        )
        if self.has_platform_index_argument:
            dim_vars = ("_platform_index", *dim_vars)
        self.uses_dim_vars = len(dim_vars) > 0
        self.dim_vars = tuple(dim_vars)


lowerable_effects: Final = EffectTypeSet()
"""The effects `lower_jaxpr_to_module` lowers: Lamina's own that JAX also lists (host
callbacks, debugging, foreign calls, checkify's errors), and those a library adds with
`add_type`."""
for _effect in (io_effect, ordered_io_effect, debug_effect, ordered_debug_effect, ffi_effect):
    lowerable_effects.add_type(type(_effect))
lowerable_effects.add_type(ErrorEffect)
