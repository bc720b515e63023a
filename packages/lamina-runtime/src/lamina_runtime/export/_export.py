"""`export(jit(f))(*specs)`: trace, lower and check a jitted function into an `Exported`.

The trace goes through the same passes as a jitted call's (`pipeline.lower_staged`): unused
arguments are dropped unless `keep_unused`, constants are hoisted into leading arguments, and
the module is lowered as `jit` lowers it. Export then refuses what a saved module cannot carry
(host callbacks, Refs, hi types, effects, meshes), checks its custom calls against the stable
list, and writes it as a portable artifact. The vjp is exported on demand, from the trace.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from lamina_core import vjp
from lamina_core.config import config
from lamina_core.ir import ClosedJaxpr, ShapedArray, is_symbolic_dim
from lamina_core.trace import ShapeDtypeStruct, jaxpr_as_fun
from lamina_mlir import custom_call_targets, serialize_portable_artifact
from lamina_runtime._jit import JitFunction, jit, jit_function_of
from lamina_runtime.export._call import arg_description
from lamina_runtime.export._exported import Exported, public_treedef
from lamina_runtime.export._safety import (
    DisabledSafetyCheck,
    check_custom_calls,
    cpu_only,
    default_export_platform,
)
from lamina_runtime.pipeline import lower_staged

minimum_supported_calling_convention_version: Final = 9
maximum_supported_calling_convention_version: Final = 10

_VERSION_OPTION: Final = "jax_export_calling_convention_version"


def _calling_convention_option() -> Any:
    """The option choosing the calling convention version (defined here unless a real
    definition exists: a placeholder for JAX's name is replaced)."""
    known = config.options().get(_VERSION_OPTION)
    if known is not None and not known.placeholder:
        return known
    return config.define_int(
        _VERSION_OPTION,
        maximum_supported_calling_convention_version,
        "The calling convention version `jax.export` writes: "
        f"{minimum_supported_calling_convention_version} to "
        f"{maximum_supported_calling_convention_version}.",
    )


calling_convention_version: Final = _calling_convention_option()


def export(
    fun_jit: Any,
    *,
    platforms: Sequence[str] | None = None,
    disabled_checks: Sequence[DisabledSafetyCheck] = (),
    _override_lowering_rules: Sequence[tuple[Any, Any]] | None = None,
) -> Callable[..., Exported]:
    """Export a jitted function: `export(jit(f))(*args, **kwargs)` is an `Exported`.

    Args:
        fun_jit: the result of `lamina.jit`.
        platforms: the platforms to export for (default: `default_export_platform()`); with
            more than one, the module takes a platform index first, as JAX's.
        disabled_checks: safety checks to skip (`DisabledSafetyCheck`).
        _override_lowering_rules: JAX's private hook; not supported (must be None).

    Returns:
        A function of arguments (arrays, or `ShapeDtypeStruct`s: anything with a shape and a
        dtype), structured as `fun_jit` takes them, returning the `Exported`.

    Raises:
        ValueError: `fun_jit` is not a jitted function.
    """
    jitted = jit_function_of(fun_jit)
    if jitted is None:
        raise ValueError(f"Function to be exported must be the result of `jit` but is: {fun_jit}")
    if _override_lowering_rules is not None:
        raise NotImplementedError("export: Lamina does not take _override_lowering_rules")
    chosen = tuple(platforms) if platforms is not None else None
    checks = tuple(disabled_checks)

    def do_export(*args_specs: Any, **kwargs_specs: Any) -> Exported:
        return _export(jitted, args_specs, kwargs_specs, chosen, checks)

    return do_export


def _export(
    jitted: JitFunction,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    platforms: tuple[str, ...] | None,
    checks: tuple[DisabledSafetyCheck, ...],
) -> Exported:
    version = calling_convention_version.value
    low, high = (
        minimum_supported_calling_convention_version,
        maximum_supported_calling_convention_version,
    )
    if not low <= version <= high:
        raise ValueError(
            f"The requested export calling convention version {version} is outside the "
            f"range of supported versions [{low}..{high}]"
        )
    platforms = platforms if platforms is not None else (default_export_platform(),)
    for p in platforms:
        if not isinstance(p, str):
            raise TypeError(f"export: platforms must be strings, got {p!r}")
    name = jitted.name
    traced = jitted.trace(*args, **kwargs)
    staged, _, leaves = jitted.stage(*args, **kwargs)
    if staged.mutable_consts or any(a.mutable for a in staged.jaxpr.in_avals):
        raise NotImplementedError(
            f"export of {name}: it takes or closes over mutable array refs (Refs), whose "
            "in-place updates an exported module cannot carry"
        )
    placement = jitted._placement(staged, jitted._split(args, kwargs)[0], leaves)
    lowered = lower_staged(staged, name, keep_unused=jitted.keep_unused, placement=placement)
    module = lowered.module
    if lowered.hi is not None:
        raise NotImplementedError(
            f"export of {name}: it takes or returns hi-typed values, whose Python classes an "
            "exported function cannot carry"
        )
    if module.host_callbacks:
        raise NotImplementedError("serialization of host_callbacks is not yet implemented")
    if module.mesh is not None:
        raise NotImplementedError(
            f"export of {name}: it is partitioned over a device mesh, which Lamina does not "
            "export yet"
        )
    effects = staged.jaxpr.jaxpr.effects
    if effects:
        raise NotImplementedError(f"export of {name}: it has effects {sorted(map(str, effects))}")
    multi = len(platforms) > 1
    kept = lowered.kept if lowered.kept is not None else tuple(range(len(staged.jaxpr.in_avals)))
    symbolic = any(
        is_symbolic_dim(d) for a in staged.jaxpr.in_avals for d in getattr(a, "shape", ())
    )
    data = serialize_portable_artifact(
        module,
        attributes={"jax.uses_shape_polymorphism": multi},
        platform_index=multi,
        arg_descriptions=[arg_description(public_treedef(traced.in_tree), i) for i in kept],
    )
    targets = custom_call_targets(data)
    check_custom_calls(targets, checks)
    elsewhere = [p for p in platforms if p != "cpu"]
    cpu_targets = sorted({t for t, _ in targets if cpu_only(t)})
    if elsewhere and cpu_targets:
        raise NotImplementedError(
            f"export of {name} for platforms {platforms}: it calls CPU kernels "
            f"({', '.join(cpu_targets)}), and Lamina lowers these operations for CPU only"
        )
    in_avals = tuple(_array_aval(a) for a in staged.jaxpr.in_avals)
    out_avals = tuple(_array_aval(a) for a in staged.jaxpr.out_avals)
    return Exported(
        fun_name=name,
        in_tree=public_treedef(traced.in_tree),
        in_avals=in_avals,
        out_tree=public_treedef(staged.out_tree),
        out_avals=out_avals,
        _has_named_shardings=True,
        _in_named_shardings=(None,) * len(in_avals),
        _out_named_shardings=(None,) * len(out_avals),
        in_shardings_hlo=(None,) * len(in_avals),
        out_shardings_hlo=(None,) * len(out_avals),
        nr_devices=1,
        platforms=platforms,
        ordered_effects=(),
        unordered_effects=(),
        disabled_safety_checks=checks,
        mlir_module_serialized=data,
        calling_convention_version=version,
        module_kept_var_idx=tuple(kept),
        uses_global_constants=multi or symbolic,
        _get_vjp=_vjp_exporter(staged.jaxpr),
        const_args=tuple(module.const_args.values),
    )


def _array_aval(aval: Any) -> ShapedArray:
    return ShapedArray(aval.shape, aval.dtype, aval.weak_type)


def _vjp_exporter(jaxpr: ClosedJaxpr) -> Callable[[Exported], Exported]:
    """Exports the vjp of the traced function, for `Exported.vjp`: a function of the flat
    primal arguments and a cotangent per flat result, returning the arguments' cotangents."""

    def export_vjp(primal: Exported) -> Exported:
        fun = jaxpr_as_fun(jaxpr)
        n_args = len(primal.in_avals)

        # Named as JAX names it: the name shows in printed jaxprs of its calls.
        def fun_vjp_jax(*args_and_out_cts_flat: Any) -> Any:
            args_flat = args_and_out_cts_flat[:n_args]
            out_cts_flat = list(args_and_out_cts_flat[n_args:])
            _, pullback = vjp(fun, *args_flat)
            return pullback(out_cts_flat)

        avals = [*primal.in_avals, *(a.to_tangent_aval() for a in primal.out_avals)]
        specs = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in avals]
        return export(
            jit(fun_vjp_jax),
            platforms=primal.platforms,
            disabled_checks=primal.disabled_safety_checks,
        )(*specs)

    return export_vjp
