"""The compilation pipeline for one trace of a jitted function: plan, lower, compile, place.

Shared by `jit` calls and the AOT stages, so both compile the same module the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lamina_consts import EMPTY, ConstArgs, jaxpr_const_args
from lamina_core import tree_util
from lamina_core.config import use_simplified_jaxpr_constants
from lamina_core.jit import Staged
from lamina_mlir import LoweredModule, LoweringParameters, lower_jaxpr_to_module
from lamina_runtime.executable import Executable, runtime


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


def lower_staged(staged: Staged, name: str) -> LoweredModule:
    """Lower one trace of a jitted function, constants hoisted when simplified mode is on."""
    hoist = use_simplified_jaxpr_constants.value
    const_args: ConstArgs = jaxpr_const_args(staged.jaxpr) if hoist else EMPTY
    in_avals = staged.jaxpr.in_avals
    return lower_jaxpr_to_module(
        staged.jaxpr,
        module_name=f"jit({name})",
        const_args=const_args,
        lowering_parameters=LoweringParameters(hoist_constants_as_args=hoist),
        donated_args=staged.donated_invars,
        input_output_aliases=_aliases(in_avals, staged.jaxpr.out_avals, staged.donated_invars),
    )


@dataclass(eq=False)
class CompiledCall:
    """A trace of a jitted function compiled, with its constants on the device."""

    executable: Executable
    const_bufs: list[Any]
    out_tree: Any

    def __call__(self, leaves: Sequence[Any]) -> Any:
        outs = self.executable.run(self.const_bufs, leaves)
        return tree_util.tree_unflatten(self.out_tree, outs)


def compile_staged(staged: Staged, name: str) -> tuple[LoweredModule, CompiledCall]:
    lowered = lower_staged(staged, name)
    executable = runtime().compile(lowered)
    call = CompiledCall(
        executable, executable.put_consts(lowered.const_args.values), staged.out_tree
    )
    return lowered, call
