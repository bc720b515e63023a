"""How a call primitive's operands meet the jaxprs it holds, for the passes that rewrite calls.

A call primitive (`jit`, `closed_call`, `remat`, the custom-derivative calls, `shard_map`,
`scan`, `while`, `cond`) holds jaxprs and passes each some of its operands. A pass that
changes what the operands are (the to-lojax pass splits hi values into arrays; lamina-refs'
discharge threads Refs through as carries) rewrites every such equation the same way: it
transforms the held jaxprs, regroups the operands, and rebinds the primitive with the counts
and per-operand params that follow. `call_layouts` says, per primitive, what its operand groups
are and which param counts each, which groups each held jaxpr reads, and which params hold one
entry per operand or result; each pass has one rule over these layouts, not one per primitive.

The layouts name primitives from `transforms`, `checkpoint`, `custom_derivatives`,
`lax.control_flow` and `sharding`, which lamina-core's interpreters sit below; this is the
lowest layer above all of them, and both passes can import it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from lamina_core.checkpoint import remat_p
from lamina_core.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
from lamina_core.ir import RuleTable
from lamina_core.lax import cond_p, scan_p, while_p
from lamina_core.sharding import shard_map_p
from lamina_core.transforms import closed_call_p, jit_p

T = TypeVar("T")


class Role(enum.Enum):
    """What a group of a call's operands is to the jaxprs the call holds."""

    ARGS = enum.auto()
    """Passed once, as they are: a call's arguments, a `cond`'s operands."""
    CONSTS = enum.auto()
    """Passed unchanged to every iteration of a loop."""
    CARRY = enum.auto()
    """Passed from one iteration to the next; the loop's leading results."""
    XS = enum.auto()
    """Sliced along their leading axis, one slice per iteration (`scan`)."""
    INDEX = enum.auto()
    """Read by the primitive itself, not by a held jaxpr (`cond`'s branch index)."""


@dataclass(frozen=True, slots=True)
class Group:
    """A run of consecutive operands of one role."""

    role: Role
    size: str | int | None = None
    """The param holding how many operands the group has, that number, or None for all the
    operands after the other groups (the last group only)."""


@dataclass(frozen=True, slots=True)
class Callee:
    """A jaxpr the call holds."""

    param: str
    """The param holding it: a `Jaxpr`, a `ClosedJaxpr`, or a tuple of them (the branches)."""
    reads: tuple[int, ...]
    """The groups whose operands are its inputs, in this order."""
    returns: bool = True
    """Its outputs are the call's results (a `while`'s cond gives only the predicate)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CallLayout:
    """Where a call primitive's operands go. Per-operand and per-result params belong to calls
    with one callee reading every operand in order, whose own types they follow."""

    groups: tuple[Group, ...]
    callees: tuple[Callee, ...]
    per_operand: tuple[str, ...] = ()
    """Params with one entry per operand: shardings, layouts, donation, partition specs."""
    per_result: tuple[str, ...] = ()
    """Params with one entry per result."""

    def __post_init__(self) -> None:
        if any(g.size is None for g in self.groups[:-1]):
            raise ValueError("only the last group of a call layout may take the rest")
        if any(k >= len(self.groups) for c in self.callees for k in c.reads):
            raise ValueError("a callee of a call layout reads a group it does not have")

    def sizes(self, params: Mapping[str, Any], n: int) -> list[int]:
        """How many of the call's `n` operands each group has."""
        sizes = [
            g.size if isinstance(g.size, int) else 0 if g.size is None else int(params[g.size])
            for g in self.groups
        ]
        if self.groups[-1].size is None:
            sizes[-1] = n - sum(sizes)
        return sizes

    def split(self, params: Mapping[str, Any], values: Sequence[T]) -> list[list[T]]:
        """`values`, one per operand, in groups."""
        groups: list[list[T]] = []
        start = 0
        for size in self.sizes(params, len(values)):
            groups.append(list(values[start : start + size]))
            start += size
        return groups

    def counts(self, sizes: Sequence[int]) -> dict[str, int]:
        """The params counting the operands of groups of `sizes` operands (the call's groups,
        rewritten)."""
        return {
            g.size: n for g, n in zip(self.groups, sizes, strict=True) if isinstance(g.size, str)
        }

    def inputs(self, callee: Callee, groups: Sequence[Sequence[T]]) -> list[T]:
        """What `callee` takes of the operands in `groups`."""
        return [x for k in callee.reads for x in groups[k]]


def map_callee(value: Any, f: Callable[[Any], Any]) -> Any:
    """`f` applied to the jaxpr a callee param holds, or to each of a tuple of them."""
    return tuple(f(j) for j in value) if type(value) is tuple else f(value)


def _plain_call(
    param: str, per_operand: tuple[str, ...] = (), per_result: tuple[str, ...] = ()
) -> CallLayout:
    """A call passing all its operands to the jaxpr in `param` and returning its results."""
    return CallLayout(
        groups=(Group(Role.ARGS),),
        callees=(Callee(param, (0,)),),
        per_operand=per_operand,
        per_result=per_result,
    )


call_layouts: RuleTable[CallLayout] = RuleTable("call layout")

call_layouts.set(
    jit_p,
    _plain_call(
        "jaxpr",
        per_operand=("in_shardings", "in_layouts", "donated_invars"),
        per_result=("out_shardings", "out_layouts"),
    ),
)
call_layouts.set(closed_call_p, _plain_call("call_jaxpr"))
call_layouts.set(remat_p, _plain_call("jaxpr"))
call_layouts.set(custom_jvp_call_p, _plain_call("call_jaxpr"))
call_layouts.set(custom_vjp_call_p, _plain_call("call_jaxpr"))
call_layouts.set(
    shard_map_p, _plain_call("jaxpr", per_operand=("in_specs",), per_result=("out_specs",))
)
call_layouts.set(
    scan_p,
    CallLayout(
        groups=(Group(Role.CONSTS, "num_consts"), Group(Role.CARRY, "num_carry"), Group(Role.XS)),
        callees=(Callee("jaxpr", (0, 1, 2)),),
        per_operand=("linear",),
    ),
)
call_layouts.set(
    while_p,
    CallLayout(
        groups=(
            Group(Role.CONSTS, "cond_nconsts"),
            Group(Role.CONSTS, "body_nconsts"),
            Group(Role.CARRY),
        ),
        callees=(Callee("cond_jaxpr", (0, 2), returns=False), Callee("body_jaxpr", (1, 2))),
    ),
)
call_layouts.set(
    cond_p,
    CallLayout(
        groups=(Group(Role.INDEX, 1), Group(Role.ARGS)), callees=(Callee("branches", (1,)),)
    ),
)

__all__ = ["CallLayout", "Callee", "Group", "Role", "call_layouts", "map_callee"]
