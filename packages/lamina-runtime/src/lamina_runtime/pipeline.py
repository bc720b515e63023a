"""The compilation pipeline for one trace of a jitted function: plan, lower, compile, place.

Shared by `jit` calls and the AOT stages, so both compile the same module the same way.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from lamina_consts import EMPTY, ConstArgs, jaxpr_const_args
from lamina_core import tree_util
from lamina_core.config import log_compiles, use_simplified_jaxpr_constants
from lamina_core.interpreters import dce_jaxpr
from lamina_core.ir import UNCONSTRAINED, Jaxpr, Mesh, NamedSharding, is_symbolic_dim
from lamina_core.transforms import Staged
from lamina_hijax import HiSignature, expand_per_value, is_high, to_lojax
from lamina_mlir import LoweredModule, LoweringParameters, lower_jaxpr_to_module
from lamina_refs import Ref, check_freezes, discharge_state, has_refs
from lamina_runtime import sharding as shardings
from lamina_runtime.array import Array
from lamina_runtime.executable import Executable, runtime

# JAX's loggers and texts (`jax_log_compiles`): programs written for JAX listen to them.
_PXLA_LOG: Final = logging.getLogger("jax._src.interpreters.pxla")
_DISPATCH_LOG: Final = logging.getLogger("jax._src.dispatch")


def _aliases(
    in_avals: Sequence[Any], out_avals: Sequence[Any], donated: Sequence[bool]
) -> list[int | None]:
    """For each donated input, the first unclaimed output of the same type (XLA aliasing)."""
    claimed: set[int] = set()
    aliases: list[int | None] = []
    for aval, is_donated in zip(in_avals, donated, strict=True):
        target = None
        if is_donated:
            for j, out in enumerate(out_avals):
                if (
                    j not in claimed
                    and getattr(out, "shape", None) == getattr(aval, "shape", ())
                    and getattr(out, "dtype", None) == getattr(aval, "dtype", None)
                ):
                    target = j
                    claimed.add(j)
                    break
        aliases.append(target)
    return aliases


@dataclass(frozen=True, slots=True)
class LoweredCall:
    """The module compiled for one trace, and which of the call's inputs it takes."""

    module: LoweredModule
    kept: tuple[int, ...] | None
    """Positions of the flat inputs the module takes; None when it takes all of them."""
    ref_inputs: tuple[int, ...] = ()
    """Positions (among the inputs taken) of Refs: the module takes their values and returns
    their final values after its own outputs, each aliased with its input (in place)."""
    hi: HiSignature | None = None
    """For a call taking or returning hi-typed values: how they map to the module's arrays
    (`kept` and `ref_inputs` count arrays)."""
    in_shardings: tuple[NamedSharding | None, ...] = ()
    """On a mesh: the sharding of each parameter (const args first) the caller decided."""
    out_shardings: tuple[shardings.Sharding | None, ...] = ()
    """On a mesh: the sharding of each output the caller asked for."""

    def select(self, leaves: Sequence[Any]) -> Sequence[Any]:
        return leaves if self.kept is None else [leaves[i] for i in self.kept]


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a call runs: on every device of `mesh`, its flat inputs and outputs placed as
    given (None: inputs as the partitioner chooses, replicated if uncommitted; outputs as the
    partitioner chooses)."""

    mesh: Mesh
    args: tuple[NamedSharding | None, ...]
    outs: tuple[shardings.Sharding | None, ...] = ()


def _spec(s: shardings.Sharding | None, mesh: Mesh) -> Any:
    return s.spec if isinstance(s, NamedSharding) and s.mesh == mesh else None


def result_paths(out_tree: Any) -> list[str]:
    """Each output's `jax.result_info`: `result` and its path in the returned pytree
    (`result`, `result[0]`, `result['b'][1]`), as JAX names them."""
    placeholders = tree_util.tree_unflatten(out_tree, [0] * out_tree.num_leaves)
    paths = tree_util.tree_flatten_with_path(placeholders)[0]
    return [f"result{tree_util.keystr(path)}" for path, _ in paths]


# ---- the passes: one trace's jaxpr, step by step, to what lamina-mlir lowers -------------------


@dataclass(slots=True)
class _Program:
    """One trace on its way to lowering: its jaxpr, and what the passes learned about the
    call's inputs and outputs. Each pass updates it in place (copies would cost more than
    some passes)."""

    jaxpr: Jaxpr
    donated: tuple[bool, ...]
    """For each input of `jaxpr`: whether the caller donates it."""
    keep_unused: bool
    """Whether the module takes every input, read or not (the AOT stages')."""
    kept: tuple[int, ...] | None = None
    """Positions of the flat inputs `jaxpr` still takes; None when it takes all of them."""
    ref_inputs: tuple[int, ...] = ()
    """Positions (among the inputs taken) of Refs, whose final values follow the outputs."""
    n_out: int = 0
    """How many of `jaxpr`'s outputs are the call's (set by `_discharge_refs`)."""
    const_args: ConstArgs = EMPTY
    hoist: bool = False
    """Whether constants are passed as the module's leading arguments (simplified mode)."""


Pass = Callable[[_Program], None]


def _expand_hi(program: _Program) -> None:
    """Hi-typed values expanded into their arrays (to-lojax), and donation with them."""
    jaxpr = program.jaxpr
    if is_high(jaxpr):
        program.donated = expand_per_value(program.donated, jaxpr.in_avals)
        program.jaxpr = to_lojax(jaxpr)


def _drop_dead(program: _Program) -> None:
    """Dead equations dropped (DCE), and unused inputs too unless the call keeps them. A
    Ref input frozen is an error first, even if the frozen value is dead."""
    if has_refs(program.jaxpr):
        check_freezes(program.jaxpr)
    # Under symbolic shapes every input is kept (JAX's): the dimension variables are read
    # from their shapes.
    keep = program.keep_unused or any(
        is_symbolic_dim(d) for v in program.jaxpr.invars for d in getattr(v.aval, "shape", ())
    )
    program.jaxpr, used = dce_jaxpr(program.jaxpr, prune_invars=not keep)
    if not keep and not all(used):
        kept = program.kept = tuple(i for i, u in enumerate(used) if u)
        program.donated = tuple(program.donated[i] for i in kept)


def _discharge_refs(program: _Program) -> None:
    """Refs replaced by their values; each Ref input's final value becomes an output."""
    jaxpr = program.jaxpr
    program.ref_inputs = tuple(i for i, v in enumerate(jaxpr.invars) if v.aval.mutable)
    program.n_out = len(jaxpr.outvars)
    if has_refs(jaxpr):
        program.jaxpr = discharge_state(jaxpr)


def _hoist_consts(program: _Program) -> None:
    """Constants listed as const args when simplified mode is on (lamina-consts)."""
    program.hoist = use_simplified_jaxpr_constants.value
    if program.hoist:
        program.const_args = jaxpr_const_args(program.jaxpr)


PASSES: tuple[Pass, ...] = (_expand_hi, _drop_dead, _discharge_refs, _hoist_consts)
"""What a trace goes through before lowering, in order."""


# ---- placement: where the module runs, and how its inputs and outputs are split --------------


class _Layout(NamedTuple):
    mesh: Mesh | None = None
    in_shardings: tuple[NamedSharding | None, ...] = ()
    """The sharding of each parameter, const args first (for the executable)."""
    out_shardings: tuple[shardings.Sharding | None, ...] = ()
    arg_specs: list[Any] | None = None
    result_specs: list[Any] | None = None
    const_specs: list[Any] | None = None


_ONE_DEVICE: Final = _Layout()


def _place(
    program: _Program, placement: Placement | None, hi: HiSignature | None, n_args: int
) -> _Layout:
    """The layout of the module: on `placement`'s mesh, else on the mesh of constants placed
    over several devices, else on one device. Only a call of arrays has its inputs and outputs
    split (hi values keep their own placement)."""
    const_args = program.const_args
    const_shardings = [
        shardings.of_jax(v._buf.sharding) if type(v) is Array else None for v in const_args.values
    ]
    mesh = placement.mesh if placement is not None else None
    if mesh is None and hi is None:
        named = zip(
            ["a constant"] * len(const_args), const_args.avals, const_shardings, strict=True
        )
        mesh = shardings.find_mesh(named)
    if mesh is None:
        return _ONE_DEVICE
    const_specs = [_spec(s, mesh) for s in const_shardings]
    if hi is not None:
        return _Layout(mesh, const_specs=const_specs)
    args = placement.args if placement is not None else ()
    args = (*args, *[None] * (n_args - len(args)))
    kept_args = args if program.kept is None else tuple(args[i] for i in program.kept)
    consts = tuple(
        s if isinstance(s, NamedSharding) and s.mesh == mesh else None for s in const_shardings
    )
    out_shardings = placement.outs if placement is not None else ()
    outs = [*out_shardings, *[None] * (program.n_out - len(out_shardings))]
    return _Layout(
        mesh,
        (*consts, *kept_args),
        out_shardings,
        [_spec(s, mesh) for s in kept_args],
        [_spec(s, mesh) for s in outs] + [None] * len(program.ref_inputs),
        const_specs,
    )


# ---- lowering ----------------------------------------------------------------------------------


def _donations_left_to_xla(layout: _Layout, n_out: int) -> bool:
    """Whether donated inputs are given to XLA as buffer donors instead of being aliased to
    an output by the lowering: as JAX, over several devices when some output's sharding is
    left to XLA (unspecified or unconstrained), which then decides the aliasing."""
    mesh = layout.mesh
    if mesh is None or mesh.size <= 1:
        return False
    specs = layout.result_specs
    if specs is None:
        return True
    return any(s is None or any(e is UNCONSTRAINED for e in s) for s in specs[:n_out])


def _hi_signature(jaxpr: Jaxpr) -> HiSignature | None:
    """How a call taking or returning hi-typed values maps them to the module's arrays; None
    for a call of arrays (hi types inside only, or none)."""
    if not is_high(jaxpr):
        return None
    hi = HiSignature(tuple(jaxpr.in_avals), tuple(jaxpr.out_avals))
    return hi if any(a.is_high for a in (*hi.in_avals, *hi.out_avals)) else None


def _kept_names(staged: Staged, program: _Program) -> list[str] | None:
    """The names of the inputs a pruned module takes (its arguments' locations, as JAX's);
    None when nothing was pruned (the lowering reads them itself) or they are unknown."""
    kept = program.kept
    debug = staged.jaxpr.jaxpr.debug_info
    if kept is None or debug is None:
        return None
    names = debug.arg_names
    if names is None or len(names) != len(staged.jaxpr.in_avals):
        return None  # hi types were expanded: the names count values, not arrays
    return [names[i] for i in kept]


def lower_staged(
    staged: Staged, name: str, *, keep_unused: bool, placement: Placement | None = None
) -> LoweredCall:
    """Lower one trace of a jitted function, as `jax.jit` does.

    The trace goes through `PASSES`: hi types are expanded into arrays (to-lojax); dead
    equations are dropped, and unused inputs too unless `keep_unused`; Refs are discharged;
    constants are hoisted as const args when simplified mode is on. Then it is placed: with a
    `placement`, or constants placed over several devices, the module is lowered for a mesh,
    with the inputs' and outputs' shardings.
    """
    hi = _hi_signature(staged.jaxpr.jaxpr)
    program = _Program(staged.jaxpr.jaxpr, staged.donated_invars, keep_unused)
    for run in PASSES:
        run(program)
    layout = _place(program, placement, hi, len(staged.jaxpr.in_avals))
    jaxpr, n_out, ref_inputs = program.jaxpr, program.n_out, program.ref_inputs
    if _donations_left_to_xla(layout, n_out):
        aliases: list[int | None] = [None] * len(jaxpr.in_avals)
    else:
        aliases = _aliases(jaxpr.in_avals, jaxpr.out_avals[:n_out], program.donated)
    for k, i in enumerate(ref_inputs):
        aliases[i] = n_out + k  # a Ref's buffer is updated in place: always aliased
    result_names: list[str] | None = [""] * len(jaxpr.outvars)  # with Refs: unnamed, as JAX's
    if not ref_inputs:
        result_names = result_paths(staged.out_tree)
        if hi is not None:  # each array of a hi result is named after the result, as JAX's
            result_names = list(expand_per_value(result_names, hi.out_avals))
    module = lower_jaxpr_to_module(
        jaxpr,
        module_name=f"jit({name})",
        arg_names=_kept_names(staged, program),
        const_args=program.const_args,
        lowering_parameters=LoweringParameters(hoist_constants_as_args=program.hoist),
        donated_args=program.donated,
        input_output_aliases=aliases,
        result_names=result_names,
        mesh=layout.mesh,
        arg_shardings=layout.arg_specs,
        result_shardings=layout.result_specs,
        const_arg_shardings=layout.const_specs,
    )
    return LoweredCall(
        module, program.kept, ref_inputs, hi, layout.in_shardings, layout.out_shardings
    )


@dataclass(eq=False)
class CompiledCall:
    """A trace of a jitted function compiled, with its constants on the device."""

    executable: Executable
    const_bufs: list[Any]
    out_tree: Any
    kept: tuple[int, ...] | None
    """Positions of the flat inputs the executable takes (None: all)."""
    ref_inputs: tuple[int, ...] = ()
    """Positions (among the inputs taken) of Refs, updated in place by each call."""
    hi: HiSignature | None = None
    """How hi-typed arguments and results map to the executable's arrays, if any."""

    def __call__(self, leaves: Sequence[Any]) -> Any:
        hi = self.hi
        if hi is not None:
            outs = self._run(hi.lower_args(leaves))
            return tree_util.tree_unflatten(self.out_tree, hi.raise_outs(outs))
        return tree_util.tree_unflatten(self.out_tree, self._run(leaves))

    def _run(self, leaves: Sequence[Any]) -> Sequence[Any]:
        """The flat outputs for the flat array (and Ref) inputs `leaves`."""
        if self.kept is not None:
            leaves = [leaves[i] for i in self.kept]
        if not self.ref_inputs:
            return self.executable.run(self.const_bufs, leaves)
        values = list(leaves)
        refs: list[Ref] = []
        for i in self.ref_inputs:
            ref = leaves[i]
            if type(ref) is not Ref:
                raise TypeError(f"a Ref was expected at flat argument {i}, got {type(ref)}")
            refs.append(ref)
            values[i] = ref.value()
        outs = self.executable.run(self.const_bufs, values)
        n_out = len(outs) - len(refs)
        for ref, final in zip(refs, outs[n_out:], strict=True):
            ref.set_value(final)
        return outs[:n_out]


def compile_lowered(
    lowered: LoweredCall, compiler_options: Mapping[str, Any] | None = None
) -> Executable:
    """The executable of a lowered call, on the mesh it was lowered for if any."""
    return runtime().compile(
        lowered.module,
        compiler_options=compiler_options,
        in_shardings=lowered.in_shardings,
        out_shardings=lowered.out_shardings,
    )


def compile_staged(
    staged: Staged,
    name: str,
    *,
    keep_unused: bool,
    compiler_options: Mapping[str, Any] | None = None,
    placement: Placement | None = None,
) -> CompiledCall:
    level = logging.WARNING if log_compiles.value else logging.DEBUG
    if _PXLA_LOG.isEnabledFor(level):
        avals = tuple(staged.jaxpr.in_avals)
        mapping = (
            "(" + ", ".join(["UnspecifiedValue"] * len(avals)) + (",)" if len(avals) == 1 else ")")
        )
        _PXLA_LOG.log(
            level,
            "Compiling jit(%s) with global shapes and types %r. Argument mapping: %s.",
            name,
            avals,
            mapping,
        )
    start = time.perf_counter()
    lowered = lower_staged(staged, name, keep_unused=keep_unused, placement=placement)
    if _DISPATCH_LOG.isEnabledFor(level):
        elapsed = time.perf_counter() - start
        _DISPATCH_LOG.log(
            level, "Finished jaxpr to MLIR module conversion jit(%s) in %.9f sec", name, elapsed
        )
    start = time.perf_counter()
    executable = compile_lowered(lowered, compiler_options)
    if _DISPATCH_LOG.isEnabledFor(level):
        elapsed = time.perf_counter() - start
        _DISPATCH_LOG.log(level, "Finished XLA compilation of jit(%s) in %.9f sec", name, elapsed)
    const_bufs = executable.put_consts(lowered.module.const_args.values)
    return CompiledCall(
        executable, const_bufs, staged.out_tree, lowered.kept, lowered.ref_inputs, lowered.hi
    )
