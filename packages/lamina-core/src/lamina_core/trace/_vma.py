"""Varying manual axes: the type system of `shard_map(..., check_vma=True)`, as JAX 0.10.2's.

Inside a checked `shard_map` body every array type carries `vma`, the manual mesh axes its
value may differ over between devices (`f32[2,3]{V:i}`). A body input varies over the axes
its in_spec splits it over; a primitive's result varies over the union of its operands' axes
unless the primitive says otherwise (`vma_rules`: collectives remove or check axes; a
primitive with a body types its results from the body). Operations that combine operands
first cast the invariant ones to varying with `pvary` (`insert_pvary`, JAX's
`auto_insert_reshard`), a no-op on the devices that the printed jaxpr shows.

Whether a body is checked is a context (`check_vma_scope`) set while a `shard_map` body is
traced or re-traced; outside one every `vma` is empty and nothing here acts.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any, Final, TypeAlias

from lamina_core.ir import (
    AbstractValue,
    Atom,
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    Primitive,
    RuleTable,
    ShapedArray,
    Var,
    abstract_eval_rules,
    install_result_types,
    jaxprs_in_params,
)
from lamina_core.trace._axis_env import bound_axis_names
from lamina_core.trace._values import typeof
from lamina_core.tree import tree_util

_check_vma: ContextVar[bool] = ContextVar("lamina_check_vma", default=False)
CHECKED_SCOPES: Final[list[int]] = [0]
"""How many checked scopes are open in any thread: while none is, typing is surely off and
tracing asks no context (a list read, where the hot paths of staging and `lax` look first)."""


def check_vma_enabled() -> bool:
    """True while a `shard_map(check_vma=True)` body is traced."""
    return bool(CHECKED_SCOPES[0]) and _check_vma.get()


@contextlib.contextmanager
def check_vma_scope(check_vma: bool) -> Iterator[None]:
    """Trace with varying-manual-axes typing on (`True`) or off, as a body's `check_vma` says."""
    previous = _check_vma.get()
    counted = False
    try:
        # Inside, and no call between counting and recording it: an interrupt anywhere leaves
        # the flag and the count as they were.
        _check_vma.set(check_vma)
        CHECKED_SCOPES[0] += check_vma
        counted = check_vma
        yield
    finally:
        CHECKED_SCOPES[0] -= counted
        _check_vma.set(previous)


VmaRule: TypeAlias = Callable[..., "frozenset[Any] | None"]
"""`rule(in_avals, **params)`: the axes every array result varies over, or None to keep the
types the abstract evaluation gave (which then computes them itself)."""

vma_rules: RuleTable[VmaRule] = RuleTable("varying manual axes")
"""Primitives whose results do not vary over the union of their operands' axes."""


def _vma_of(aval: AbstractValue) -> frozenset[Any]:
    return aval.vma if isinstance(aval, ShapedArray) else frozenset()


def _with(aval: Any, vma: frozenset[Any]) -> Any:
    if isinstance(aval, ShapedArray) and aval.vma != vma:
        return aval.update(vma=vma)
    return aval


def abstract_eval(
    prim: Primitive, in_avals: Sequence[AbstractValue], params: Any
) -> AbstractValue | Sequence[AbstractValue]:
    """`prim`'s result type(s) for operands of `in_avals`, with their varying manual axes."""
    out = abstract_eval_rules[prim](*in_avals, **params)
    if not CHECKED_SCOPES[0] or not _check_vma.get():
        return out
    return with_vma(prim, in_avals, params, out)


install_result_types(abstract_eval)  # `ir.parse` checks printed types as tracing makes them


def with_vma(
    prim: Primitive,
    in_avals: Sequence[AbstractValue],
    params: Any,
    out: AbstractValue | Sequence[AbstractValue],
) -> AbstractValue | Sequence[AbstractValue]:
    """`out`, the types abstract evaluation gave, with the manual axes they vary over (in a
    checked body: `check_vma_enabled()`)."""
    rule = vma_rules.get(prim)
    if rule is not None:
        vma = rule(in_avals, **params)
        if vma is None:
            return out
    else:
        vmas = [v for v in map(_vma_of, in_avals) if v]
        if not vmas or any(True for _ in jaxprs_in_params(params)):
            return out  # nothing varies, or a body typed the results
        vma = frozenset().union(*vmas)
    if prim.multiple_results:
        return [_with(a, vma) for a in out]  # type: ignore[union-attr]  # a sequence here
    result: AbstractValue = _with(out, vma)
    return result


def union_vma(in_avals: Sequence[AbstractValue], **params: Any) -> frozenset[Any]:
    """The `vma_rules` entry of a primitive typed as elementwise ones are (its results vary
    over its operands' axes) although its params hold jaxprs (scalar computations)."""
    return frozenset().union(*map(_vma_of, in_avals))


def keep_abstract_eval(in_avals: Sequence[AbstractValue], **params: Any) -> None:
    """The `vma_rules` entry of a primitive whose abstract evaluation gives the axes."""
    return None


def mesh_order(names: Any) -> tuple[Any, ...]:
    """`names` in the order their axes are bound (mesh order inside a `shard_map` body)."""
    bound = bound_axis_names()
    known = [n for n in bound if n in names]
    return (*known, *sorted((n for n in names if n not in bound), key=str))


def drop_vma(jaxpr: Jaxpr) -> Jaxpr:
    """`jaxpr` with no varying manual axes in its types (nor in its sub-jaxprs'): for
    evaluating a body one device at a time, whose values carry no such types."""
    env: dict[Var, Var] = {}

    def strip(aval: AbstractValue) -> AbstractValue:
        return aval.update(vma=frozenset()) if isinstance(aval, ShapedArray) else aval

    def var(v: Var) -> Var:
        if isinstance(v, DropVar):
            return DropVar(strip(v.aval))
        new = env.get(v)
        if new is None:
            new = env[v] = Var(strip(v.aval))
        return new

    def atom(a: Atom) -> Atom:
        return var(a) if isinstance(a, Var) else a

    def param(value: Any) -> Any:
        if isinstance(value, Jaxpr):
            return drop_vma(value)
        if isinstance(value, ClosedJaxpr):
            return ClosedJaxpr(drop_vma(value.jaxpr), value.consts)
        if type(value) is tuple and any(isinstance(x, (Jaxpr, ClosedJaxpr)) for x in value):
            return tuple(param(x) for x in value)
        return value

    constvars = [var(v) for v in jaxpr.constvars]
    invars = [var(v) for v in jaxpr.invars]
    eqns = [
        eqn.replace(
            invars=tuple(atom(a) for a in eqn.invars),
            params={k: param(v) for k, v in eqn.params.items()},
            outvars=tuple(var(v) for v in eqn.outvars),
        )
        for eqn in jaxpr.eqns
    ]
    return jaxpr.replace(
        constvars=constvars, invars=invars, outvars=[atom(a) for a in jaxpr.outvars], eqns=eqns
    )


# --- pvary ------------------------------------------------------------------------------------

pvary_p: Final = Primitive("pvary")
"""The invariant -> varying cast; its rules are the collectives' (`lax._collectives_vma`)."""


def pvary(x: Any, axis_name: Any) -> Any:
    """`x` (a pytree) cast from invariant to varying over the manual axes `axis_name`."""
    axes = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    if not axis_name or not CHECKED_SCOPES[0] or not _check_vma.get():
        return x
    ordered = mesh_order(axes)
    return tree_util.tree_map(lambda leaf: pvary_p.bind(leaf, axes=ordered), x)


def insert_pvary(*args: Any) -> Sequence[Any]:
    """`args`, those varying over fewer manual axes than the others cast (`pvary`) to vary
    over all of them: what combining operands needs (JAX's `auto_insert_reshard`)."""
    if not CHECKED_SCOPES[0] or not args or not _check_vma.get():
        return args
    avals = [typeof(a) for a in args]
    vmas = [_vma_of(a) for a in avals]
    union = frozenset().union(*vmas)
    if not union:
        return args
    return [
        pvary(x, tuple(union - v)) if isinstance(a, ShapedArray) and union - v else x
        for x, a, v in zip(args, avals, vmas, strict=True)
    ]


def insert_collective_pvary(axis_name: Any, x: Any) -> Any:
    """`x` cast to vary over the axes of `axis_name` it does not vary over yet: what a
    collective over them needs (JAX's `insert_collective_pvary`)."""
    if not CHECKED_SCOPES[0] or not _check_vma.get():
        return x
    axes = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    have = _vma_of(typeof(x))
    return pvary(x, tuple(n for n in axes if n not in have))


def pvary_like(value: Any, like: Any) -> Any:
    """`value` cast to vary over the manual axes `like` varies over (JAX's `full_like`)."""
    if not CHECKED_SCOPES[0] or not _check_vma.get():
        return value
    return pvary(value, tuple(_vma_of(typeof(like))))


def collective_vma(prim_name: str, axis_name: Any, aval: AbstractValue) -> frozenset[Any]:
    """The axes the result of a varying->varying collective over `axis_name` varies over (its
    operand's), or JAX's error when the operand does not vary over them."""
    axes = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    vma = _vma_of(aval)
    if any(a not in vma for a in axes):
        raise ValueError(
            f"Collective {prim_name} must be applied to a device-varying  type, but got "
            f"{vma} for collective acting over axis name "
            f"{axes}. Please open an issue at https://github.com/jax-ml/jax/issues and as a "
            "temporary workaround pass the check_vma=False argument to `jax.shard_map`"
        )
    return vma


__all__ = [
    "abstract_eval",
    "check_vma_enabled",
    "check_vma_scope",
    "collective_vma",
    "drop_vma",
    "insert_collective_pvary",
    "insert_pvary",
    "keep_abstract_eval",
    "mesh_order",
    "pvary",
    "pvary_like",
    "pvary_p",
    "union_vma",
    "vma_rules",
    "with_vma",
]
