"""Lowering a whole program: `lower_jaxpr_to_module` and the `LoweredModule` it returns.

The module is named after the program (`module @jit_f`), records its replica and partition
counts as JAX does, and has one public function, `@main`, whose arguments are, in order:
dimension variables (none yet), tokens of ordered effects, the const args (each
`{jax.const = true}`), then the real arguments. Donated arguments whose type matches an output
alias it (`tf.aliasing_output`); every module is verified before it is returned.
"""

from __future__ import annotations

import collections
import io
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from jaxlib.mlir import ir, passmanager

from lamina_consts import EMPTY, ConstArgs, jaxpr_const_args
from lamina_core.ir import (
    AbstractMesh,
    AbstractValue,
    ClosedJaxpr,
    Jaxpr,
    Mesh,
    NamedSharding,
    PartitionSpec,
    ShapedArray,
    jaxprs_in_params,
)
from lamina_mlir import _dynamic, _hlo, _sharding
from lamina_mlir._context import (
    LoweringParameters,
    ModuleContext,
    ordered_effects,
    shardable_ordered_effect_types,
)
from lamina_mlir._lower import lower_jaxpr_to_fun
from lamina_mlir._mlir_context import context_for_module

_NOT_IN_SYMBOLS: Final = re.compile(r"[^\w.-]")
_STRIP_DEBUGINFO: Final = "builtin.module(strip-debuginfo)"


def _mesh_in(value: Any) -> Mesh | AbstractMesh | None:
    if isinstance(value, (Mesh, AbstractMesh)):
        return None if value.empty else value
    if isinstance(value, NamedSharding):
        return _mesh_in(value.mesh)
    return None


_RESULT_TYPE_PARAMS: Final = frozenset({"out_sharding", "dst_sharding", "global_mesh"})
"""Parameters that give a result's type its mesh (with `sharding`, but for a sharding
constraint's; and the mesh `multihost_utils`' conversions describe their value by): they
place nothing, so they do not say which devices a program runs on."""


def jaxpr_mesh(jaxpr: Jaxpr) -> Mesh | AbstractMesh | None:
    """The mesh a program runs on: the one its equations name (`shard_map`'s mesh, a
    sharding constraint's), sub-jaxprs included; None if it names none. A concrete mesh is
    preferred to an abstract one of the same shape; two meshes of different shapes, or two
    different device sets, are an error."""
    found: Mesh | AbstractMesh | None = None
    stack, seen = [jaxpr], set()
    while stack:
        j = stack.pop()
        if id(j) in seen:
            continue
        seen.add(id(j))
        for eqn in j.eqns:
            constrains = eqn.primitive.name == "sharding_constraint"
            for key, value in eqn.params.items():
                if key in _RESULT_TYPE_PARAMS or (key == "sharding" and not constrains):
                    continue
                mesh = _mesh_in(value)
                if mesh is None:
                    continue
                if found is None:
                    found = mesh
                    continue
                same_shape = (found.axis_names, found.axis_sizes) == (
                    mesh.axis_names,
                    mesh.axis_sizes,
                )
                if not same_shape or (
                    isinstance(found, Mesh)
                    and isinstance(mesh, Mesh)
                    and found != mesh
                    and found.devices_flat != mesh.devices_flat
                ):
                    raise ValueError(f"one program uses two different meshes: {found} and {mesh}")
                if isinstance(mesh, Mesh) and not isinstance(found, Mesh):
                    found = mesh
            stack.extend(jaxprs_in_params(eqn.params))
    return found


def module_symbol_name(module_name: str) -> str:
    """`jit(f)` -> `jit_f`: the module's symbol, with what XLA would rewrite replaced."""
    return _NOT_IN_SYMBOLS.sub("_", module_name).rstrip("_")


@dataclass(frozen=True)
class LoweredModule:
    """A lowered program: the StableHLO module and what calling it needs."""

    module: ir.Module
    context: ir.Context
    name: str
    """The module's symbol name, e.g. `jit_f`."""
    const_args: ConstArgs
    """The hoisted constants, in `@main`'s const-arg order; the caller passes them first."""
    in_avals: tuple[AbstractValue, ...]
    """The real arguments' types (the const args not included)."""
    out_avals: tuple[AbstractValue, ...]
    mesh: Mesh | AbstractMesh | None = None
    """The mesh the module was lowered for (declared as `@mesh`), or None (one device)."""
    host_callbacks: tuple[Callable[..., Any], ...] = ()
    """The Python functions the module calls back (by index), to pass to the compiler."""

    def as_text(self, *, debug_info: bool = False) -> str:
        """The module as JAX's `Lowered.as_text()` prints it; with locations if `debug_info`."""
        out = io.StringIO()
        self.module.operation.print(file=out, enable_debug_info=debug_info)
        return out.getvalue()

    def as_bytecode(self) -> bytes:
        """The module as MLIR bytecode, what the compiler and serialization take."""
        out = io.BytesIO()
        self.module.operation.write_bytecode(file=out)
        return out.getvalue()

    def canonical_bytecode(self) -> bytes:
        """The module as bytecode that depends only on the program (a cache key's part).

        A copy is stripped of debug locations (file names, line numbers and name stacks differ
        between callers of the same program) and its private functions are renamed by
        position (their names carry per-process uniquing counters: JAX's `@clip_0` vs
        `@clip_1` spurious misses). Public symbols (`@main`) and the module's name are kept.
        """
        with self.context:
            copy = self.module.operation.clone()
            passmanager.PassManager.parse(_STRIP_DEBUGINFO).run(copy)
            body = copy.regions[0].blocks[0]
            private = [
                op
                for op in body.operations
                if "sym_name" in op.attributes
                and "sym_visibility" in op.attributes
                and ir.StringAttr(op.attributes["sym_visibility"]).value == "private"
            ]
            # "#" never occurs in names lamina-mlir makes, so renaming cannot collide.
            for index, op in enumerate(private):
                old = ir.StringAttr(op.attributes["sym_name"]).value
                new = f"#{index}"
                ir.SymbolTable.replace_all_symbol_uses(old, new, copy)
                ir.SymbolTable.set_symbol_name(op, new)
            out = io.BytesIO()
            copy.write_bytecode(file=out)
        return out.getvalue()

    def __str__(self) -> str:
        return self.as_text()


def _default_result_names(n: int) -> list[str]:
    return ["result"] if n == 1 else [f"result[{i}]" for i in range(n)]


def _strip(aval: AbstractValue) -> AbstractValue:
    return ShapedArray(aval.shape, aval.dtype) if isinstance(aval, ShapedArray) else aval


def _aliases(
    in_avals: Sequence[AbstractValue],
    out_avals: Sequence[AbstractValue],
    donated: Sequence[bool],
    aliases: Sequence[int | None],
    num_partitions: int,
) -> tuple[list[int | None], list[bool]]:
    """Which output each donated argument aliases, and which stay plain buffer donors.

    A donated argument aliases the first unclaimed output of the same shape and dtype; one
    without such an output is still given to XLA as a donor when an output of the same size
    remains. With several partitions XLA decides placement, so donations stay donors.
    """
    result = list(aliases) + [None] * (len(in_avals) - len(aliases))
    donors = [False] * len(in_avals)
    pending = list(donated) + [False] * (len(in_avals) - len(donated))
    if num_partitions > 1:
        return result, [d and a is None for d, a in zip(pending, result, strict=True)]
    by_type: dict[AbstractValue, collections.deque[int]] = collections.defaultdict(
        collections.deque
    )
    for i, (aval, d, alias) in enumerate(zip(in_avals, pending, result, strict=True)):
        if d and alias is None:
            by_type[_strip(aval)].append(i)
    # An output takes at most one input's buffer: those the caller aliased are not offered.
    taken = {k for k in result if k is not None}
    for k, aval in enumerate(out_avals):
        waiting = by_type.get(_strip(aval))
        if waiting and k not in taken:
            i = waiting.popleft()
            result[i] = k
            pending[i] = False
    taken = {k for k in result if k is not None}
    by_size: dict[int, collections.deque[int]] = collections.defaultdict(collections.deque)
    for k, aval in enumerate(out_avals):
        if k not in taken and isinstance(aval, ShapedArray):
            by_size[aval.size * aval.dtype.itemsize].append(k)
    unused = []
    for i, aval in enumerate(in_avals):
        if pending[i] and result[i] is None:
            size = aval.size * aval.dtype.itemsize if isinstance(aval, ShapedArray) else -1
            if by_size.get(size):
                by_size[size].popleft()
                donors[i] = True
            else:
                unused.append(str(aval))
    if unused:
        warnings.warn(
            f"Some donated buffers were not usable: {', '.join(unused)}.\nSee an explanation "
            "at https://docs.jax.dev/en/latest/faq.html#buffer-donation.",
            UserWarning,
            stacklevel=4,
        )
    return result, donors


def lower_jaxpr_to_module(
    jaxpr: Jaxpr | ClosedJaxpr,
    *,
    module_name: str,
    const_args: ConstArgs | None = None,
    lowering_parameters: LoweringParameters = LoweringParameters(),  # noqa: B008  # frozen
    arg_names: Sequence[str] | None = None,
    result_names: Sequence[str] | None = None,
    donated_args: Sequence[bool] = (),
    input_output_aliases: Sequence[int | None] = (),
    num_replicas: int = 1,
    num_partitions: int = 1,
    mesh: Mesh | AbstractMesh | None = None,
    arg_shardings: Sequence[PartitionSpec | None] | None = None,
    result_shardings: Sequence[PartitionSpec | None] | None = None,
    const_arg_shardings: Sequence[PartitionSpec | None] | None = None,
) -> LoweredModule:
    """Lower a program to a verified StableHLO module with a public `@main`.

    Args:
        jaxpr: the program. A `ClosedJaxpr`'s consts (the previous constants mode) are
            emitted as `stablehlo.constant`s.
        module_name: e.g. `jit(f)`: the root of op names in locations; the module's symbol
            is its sanitized form, `jit_f`.
        const_args: the constants to pass as leading `jax.const` arguments. By default
            `jaxpr_const_args(jaxpr)` when `lowering_parameters.hoist_constants_as_args`,
            else none (all constants are emitted inline).
        lowering_parameters: how to lower.
        arg_names: the real arguments' names (shown as their locations); default: the
            jaxpr's debug info.
        result_names: each output's `jax.result_info`; default `result`, or `result[i]`.
        donated_args: per real argument, whether its buffer may be reused for an output.
        input_output_aliases: per real argument, the output it must alias, or None.
        num_replicas: recorded as `mhlo.num_replicas`.
        num_partitions: recorded as `mhlo.num_partitions` (with a mesh: the mesh's size).
        mesh: the device mesh to partition over (XLA's SPMD partitioner, Shardy): declared
            as `sdy.mesh @mesh`, which the shardings below refer to.
        arg_shardings: per real argument, its `PartitionSpec` over `mesh` (annotated as
            `sdy.sharding`), or None to let the partitioner choose.
        result_shardings: per output, likewise.
        const_arg_shardings: per const arg, likewise.

    Returns:
        The module with what calling it needs: the const args to pass first, and the avals.

    Raises:
        ValueError: the module fails verification (a lowering rule emitted bad IR).
        MissingRuleError: a primitive has no lowering rule.
    """
    closed = jaxpr if isinstance(jaxpr, ClosedJaxpr) else None
    open_jaxpr = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    if const_args is None:
        hoist = lowering_parameters.hoist_constants_as_args
        const_args = jaxpr_const_args(open_jaxpr) if hoist else EMPTY
    in_avals = tuple(v.aval for v in open_jaxpr.invars)
    out_avals = tuple(a.aval for a in open_jaxpr.outvars)
    if arg_names is None and open_jaxpr.debug_info is not None:
        names = open_jaxpr.debug_info.arg_names
        arg_names = names if names is not None and len(names) == len(in_avals) else None
    if result_names is None:
        result_names = _default_result_names(len(out_avals))
    effects = ordered_effects(open_jaxpr.effects)
    if mesh is None:
        # A program whose equations name a mesh (shard_map, sharding constraints) runs on
        # it; as JAX, a mesh of one device is no mesh at all.
        mesh = jaxpr_mesh(open_jaxpr)
        if mesh is not None and mesh.size == 1:
            mesh = None
    abstract_mesh = None if mesh is None or mesh.empty else mesh.abstract_mesh
    given = (*(arg_shardings or ()), *(result_shardings or ()), *(const_arg_shardings or ()))
    if abstract_mesh is None and any(s is not None for s in given):
        raise ValueError("lower_jaxpr_to_module: shardings were given without a mesh")
    if abstract_mesh is not None:
        num_partitions = abstract_mesh.size
    if num_partitions > 1:
        unshardable = [e for e in effects if type(e) not in shardable_ordered_effect_types]
        if unshardable:
            # JAX's error, in its words.
            raise ValueError(
                f"The following ordered effects are not supported for more than 1 device: "
                f"{unshardable}"
            )
    caches = context_for_module()
    symbol = module_symbol_name(module_name)
    with caches.context, ir.Location.unknown():
        module = ir.Module.create()
        attrs = module.operation.attributes
        attrs["sym_name"] = ir.StringAttr.get(symbol)
        attrs["mhlo.num_partitions"] = _hlo.i32_attr(caches, num_partitions)
        attrs["mhlo.num_replicas"] = _hlo.i32_attr(caches, num_replicas)
        if abstract_mesh is not None:  # before the symbol table, which must know `@mesh`
            _sharding.emit_mesh(module, abstract_mesh)
        mctx = ModuleContext(
            caches=caches,
            module=module,
            symbol_table=ir.SymbolTable(module.operation),
            lowering_parameters=lowering_parameters,
            name_stack=module_name,
            mesh=abstract_mesh,
            device_mesh=mesh if isinstance(mesh, Mesh) and not mesh.empty else None,
        )
        aliases, donors = _aliases(
            in_avals, out_avals, donated_args, input_output_aliases, num_partitions
        )
        # Symbolic argument shapes: `@main` takes the dimension variables first (JAX's).
        dim_vars = _dynamic.dimension_variables(in_avals)
        main = lower_jaxpr_to_fun(
            mctx,
            "main",
            closed if closed is not None else open_jaxpr,
            const_args=const_args,
            effects=effects,
            main=True,
            arg_names=arg_names,
            result_names=result_names,
            input_output_aliases=aliases,
            buffer_donors=donors,
            dim_vars=dim_vars,
        )
        if abstract_mesh is not None:
            _sharding.annotate_main(
                main,
                abstract_mesh,
                len(effects),
                [*const_args.avals, *in_avals],
                [
                    *_per_value(const_arg_shardings, len(const_args), "const_arg_shardings"),
                    *_per_value(arg_shardings, len(in_avals), "arg_shardings"),
                ],
                out_avals,
                _typed_results(
                    _per_value(result_shardings, len(out_avals), "result_shardings"), out_avals
                ),
            )
        verify(module)
        if _dynamic.REFINE_ATTR in module.operation.attributes:
            module = _dynamic.refine_shapes(module)
    final_mesh = mctx.device_mesh or mctx.mesh  # a rule may have declared one (shard_map)
    return LoweredModule(
        module,
        caches.context,
        symbol,
        const_args,
        in_avals,
        out_avals,
        final_mesh,
        tuple(mctx.host_callbacks),
    )


def _typed_results(
    specs: list[PartitionSpec | None], avals: Sequence[AbstractValue]
) -> list[PartitionSpec | None]:
    """Results placed as their types say where nothing else does, for types over Explicit
    mesh axes (JAX's out shardings of such results are their types' shardings)."""
    out = []
    for spec, aval in zip(specs, avals, strict=True):
        mesh = getattr(aval, "mesh", None)
        if spec is None and mesh is not None and mesh.has_explicit:
            spec = aval.sharding.spec  # type: ignore[attr-defined]  # an array type
        out.append(spec)
    return out


def _per_value(
    specs: Sequence[PartitionSpec | None] | None, n: int, what: str
) -> list[PartitionSpec | None]:
    if specs is None:
        return [None] * n
    if len(specs) != n:
        raise ValueError(f"lower_jaxpr_to_module: {len(specs)} {what} for {n} values")
    return list(specs)


def verify(module: ir.Module) -> None:
    """Raise `ValueError` with the verifier's diagnostics unless `module` is valid."""
    try:
        ok = module.operation.verify()
    except ir.MLIRError as e:
        lines = ["lowering produced a module that does not verify:"]
        lines += [f"  {d.message}\n    at {d.location}" for d in e.error_diagnostics]
        raise ValueError("\n".join(lines)) from e
    if not ok:
        raise ValueError("lowering produced a module that does not verify")
