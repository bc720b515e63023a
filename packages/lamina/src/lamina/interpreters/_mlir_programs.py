"""JAX's `mlir.lower_jaxpr_to_fun` and `mlir.lower_jaxpr_to_module`, over lamina-mlir's own.

JAX's signatures count the hoisted constants among the arguments (`num_const_args` of them
lead `in_avals`, and per-argument lists cover them too); lamina-mlir takes them as a separate
`ConstArgs`. Both are `jaxpr_const_args` of the jaxpr, so the adapters recompute them and split
the per-argument lists. What Lamina does not lower (layouts, memory kinds, several platforms)
is refused by name; what it decides itself (ordered effects, donation) is taken from the jaxpr.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func as func_dialect

from lamina.interpreters._mlir_contexts import (
    AxisContext,
    ShapePolyLoweringState,
    SPMDAxisContext,
    lowerable_effects,
)
from lamina_consts import EMPTY, ConstArgs, jaxpr_const_args
from lamina_core.ir import (
    AbstractMesh,
    AbstractValue,
    ClosedJaxpr,
    Effect,
    Mesh,
    NamedSharding,
    PartitionSpec,
)
from lamina_mlir import LoweringParameters, ModuleContext
from lamina_mlir import lower_jaxpr_to_fun as _lower_jaxpr_to_fun
from lamina_mlir import lower_jaxpr_to_module as _lower_jaxpr_to_module


class LoweringResult(NamedTuple):
    """What `lower_jaxpr_to_module` returns."""

    module: ir.Module
    keepalive: Any | None
    """Objects the module's custom calls refer to (none in Lamina)."""
    host_callbacks: list[Any]
    """The Python functions its host-callback `custom_call`s name by index."""
    shape_poly_state: ShapePolyLoweringState


def _const_args(jaxpr: ClosedJaxpr, num_const_args: int, in_avals: Sequence[Any]) -> ConstArgs:
    const_args = jaxpr_const_args(jaxpr.jaxpr) if num_const_args else EMPTY
    if len(const_args) != num_const_args:
        raise ValueError(
            f"lowering: num_const_args={num_const_args}, but the jaxpr has "
            f"{len(const_args)} constants to pass as arguments"
        )
    if len(in_avals) != num_const_args + len(jaxpr.in_avals):
        raise ValueError(
            f"lowering: {len(in_avals)} in_avals for {num_const_args} constants and "
            f"{len(jaxpr.in_avals)} arguments"
        )
    return const_args


def _refuse(what: str, values: Sequence[Any] | None) -> None:
    if values is not None and any(v is not None and v is not False for v in values):
        raise NotImplementedError(f"lowering: Lamina does not lower with {what}")


def _after(n: int, values: Sequence[Any] | None) -> list[Any] | None:
    return None if values is None else list(values)[n:]


def lower_jaxpr_to_fun(
    ctx: ModuleContext,
    name: str,
    jaxpr: ClosedJaxpr,
    effects: Sequence[Effect],
    *,
    num_const_args: int,
    main_function: bool = False,
    replicated_args: Sequence[bool] | None = None,
    in_avals: Sequence[AbstractValue],
    arg_shardings: Sequence[Any] | None = None,
    result_shardings: Sequence[Any] | None = None,
    use_sharding_annotations: bool = True,
    input_output_aliases: Sequence[int | None] | None = None,
    xla_donated_args: Sequence[bool] | None = None,
    arg_names: Sequence[str | None] | None = None,
    result_names: Sequence[str] | None = None,
    arg_memory_kinds: Sequence[str | None] | None = None,
    result_memory_kinds: Sequence[str | None] | None = None,
    arg_layouts: Sequence[Any] | None = None,
    result_layouts: Sequence[Any] | None = None,
    propagated_out_mem_kinds: tuple[str | None, ...] | None = None,
) -> func_dialect.FuncOp:
    """Lower `jaxpr` as a new function of the module `ctx` is building, and return it.

    The function is private and named after `name` (made unique), or the public `@main`. It
    takes one token per effect of `effects`, the `num_const_args` hoisted constants, then the
    jaxpr's arguments; it returns the tokens, then the jaxpr's results. A rule calls it with
    `func.call`.

    Raises:
        ValueError: `num_const_args` or `in_avals` do not match the jaxpr.
        NotImplementedError: shardings, layouts, memory kinds or replicated arguments.
    """
    del use_sharding_annotations, propagated_out_mem_kinds
    const_args = _const_args(jaxpr, num_const_args, in_avals)
    for what, values in (
        ("replicated arguments", replicated_args),
        ("argument shardings", arg_shardings),
        ("result shardings", result_shardings),
        ("memory kinds", [*(arg_memory_kinds or ()), *(result_memory_kinds or ())]),
        ("layouts", [*(arg_layouts or ()), *(result_layouts or ())]),
    ):
        _refuse(what, values)
    fn = _lower_jaxpr_to_fun(
        ctx,
        name,
        jaxpr,
        const_args=const_args,
        effects=effects,
        main=main_function,
        arg_names=_after(num_const_args, arg_names),
        result_names=result_names,
        input_output_aliases=_after(num_const_args, input_output_aliases) or (),
        buffer_donors=_after(num_const_args, xla_donated_args) or (),
    )
    view = fn.opview
    assert isinstance(view, func_dialect.FuncOp)
    return view


def _spec(sharding: Any) -> PartitionSpec | None:
    return sharding.spec if isinstance(sharding, NamedSharding) else sharding


def _mesh(axis_context: AxisContext, shardings: Sequence[Any]) -> Mesh | AbstractMesh | None:
    """The mesh to lower over: the axis context's, else the one the shardings name; None for
    one device (where shardings place nothing)."""
    found: Mesh | AbstractMesh | None = None
    if isinstance(axis_context, SPMDAxisContext):
        found = axis_context.mesh
    elif axis_context.abstract_mesh is not None:
        found = axis_context.abstract_mesh
    else:
        named = [s.mesh for s in shardings if isinstance(s, NamedSharding)]
        found = named[0] if named else None
    return None if found is None or found.empty or found.size == 1 else found


def lower_jaxpr_to_module(
    module_name: str,
    jaxpr: ClosedJaxpr,
    *,
    num_const_args: int,
    in_avals: Sequence[AbstractValue],
    ordered_effects: Sequence[Effect],
    platforms: Sequence[str],
    backend: Any,
    axis_context: AxisContext,
    donated_args: Sequence[bool],
    replicated_args: Sequence[bool] | None = None,
    arg_shardings: Sequence[Any] | None = None,
    result_shardings: Sequence[Any] | None = None,
    in_layouts: Sequence[Any] | None = None,
    out_layouts: Sequence[Any] | None = None,
    arg_names: Sequence[str] | None = None,
    result_names: Sequence[str] | None = None,
    num_partitions: int = 1,
    all_default_mem_kind: bool = True,
    input_output_aliases: tuple[int | None, ...] | None = None,
    propagated_out_mem_kinds: tuple[str | None, ...] | None = None,
    lowering_parameters: LoweringParameters,
) -> LoweringResult:
    """Lower a program to a StableHLO module whose public `@main` takes the hoisted constants
    (`num_const_args` of them, leading `in_avals`) and then its arguments.

    `module_name` (e.g. `jit_f`) names the module. `axis_context` gives the mesh (or, for a
    `ShardingContext` without one, `num_partitions` the device count); shardings are
    `NamedSharding`s or `PartitionSpec`s over it. The ordered effects are the jaxpr's own.

    Raises:
        ValueError: the jaxpr has an effect outside `lowerable_effects`.
        NotImplementedError: a platform other than the CPU, or layouts.
    """
    del ordered_effects, backend, all_default_mem_kind, propagated_out_mem_kinds
    if any(p.lower() not in ("cpu", "host") for p in platforms):
        raise NotImplementedError(f"lowering: Lamina lowers for the CPU only, not {platforms}")
    if lowerable_effects.filter_not_in(jaxpr.effects):
        # JAX's text, which prints the effects as a set.
        raise ValueError(f"Cannot lower jaxpr with effects: {set(jaxpr.effects)}")
    _refuse("replicated arguments", replicated_args)
    _refuse("layouts", [*(in_layouts or ()), *(out_layouts or ())])
    const_args = _const_args(jaxpr, num_const_args, in_avals)
    mesh = _mesh(axis_context, [*(arg_shardings or ()), *(result_shardings or ())])
    in_specs = None if arg_shardings is None else [_spec(s) for s in arg_shardings]
    on_mesh = mesh is not None
    lowered = _lower_jaxpr_to_module(
        jaxpr,
        module_name=module_name,
        const_args=const_args,
        lowering_parameters=lowering_parameters,
        # Unnamed unless named, as JAX (lamina-mlir defaults to the debug info's names).
        arg_names=_after(num_const_args, arg_names) or [],
        result_names=result_names or [],
        donated_args=list(donated_args)[num_const_args:],
        input_output_aliases=_after(num_const_args, input_output_aliases) or (),
        num_partitions=num_partitions,
        mesh=mesh,
        arg_shardings=_after(num_const_args, in_specs) if on_mesh else None,
        const_arg_shardings=in_specs[:num_const_args] if on_mesh and in_specs else None,
        result_shardings=(
            [_spec(s) for s in result_shardings] if on_mesh and result_shardings else None
        ),
    )
    platform_names = tuple(platforms)
    return LoweringResult(
        lowered.module, [], list(lowered.host_callbacks), ShapePolyLoweringState((), platform_names)
    )
