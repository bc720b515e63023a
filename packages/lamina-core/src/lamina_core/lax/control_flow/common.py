"""What the control-flow functions share: tracing a Python function into a body jaxpr,
merging the values bodies close over, forwarding, and JAX's messages for mismatched types.

Bodies are traced with pytrees flattened; tracers a body closes over become leading
operands of the primitive (JAX's `separate_consts`). Tracing is memoized per function and
argument types when the body captures no tracer, and the jaxpr surgery here returns the same
object for the same input, so a function used twice prints once, as JAX's `let`.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lamina_core.config import config
from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.ir import (
    AbstractValue,
    AvalQDD,
    ClosedJaxpr,
    DebugInfo,
    Jaxpr,
    ShapedArray,
    Var,
    types_match,
)
from lamina_core.lax._shape import asarray
from lamina_core.trace import (
    Tracer,
    check_no_aliased_args,
    check_no_returned,
    check_not_closed_over_and_passed,
    eager_value,
    typeof,
    with_qdd,
)
from lamina_core.transforms import argument_names, func_src_info
from lamina_core.tree import tree_util

_Cache = weakref.WeakKeyDictionary[Any, dict[Any, Any]]


def memo(cache: _Cache, owner: Any, key: Any, make: Callable[[], Any]) -> Any:
    """`make()`, memoized per `owner` (weakly held) and `key`."""
    try:
        entries = cache.setdefault(owner, {})
    except TypeError:  # not weakly referenceable
        return make()
    if key not in entries:
        entries[key] = make()
    return entries[key]


class Traced:
    """A body traced for a control-flow primitive: its consts moved to leading invars."""

    __slots__ = ("consts", "jaxpr", "out_avals", "out_tree")

    def __init__(
        self,
        jaxpr: ClosedJaxpr,
        consts: list[Any],
        out_tree: Any,
    ) -> None:
        self.jaxpr = jaxpr
        self.consts = consts
        self.out_tree = out_tree
        self.out_avals: list[AbstractValue] = jaxpr.out_avals


_trace_cache: _Cache = weakref.WeakKeyDictionary()


def result_paths(out_tree: Any) -> list[str]:
    """Each output leaf's place in the result, as JAX names it (`result[1]`; `""` for a
    result that is one leaf)."""
    n = out_tree.num_leaves
    placed = tree_util.tree_unflatten(out_tree, list(range(n)))
    paths = ["result" + tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(placed)[0]]
    return [""] if paths == ["result"] else paths


def trace_body(
    what: str,
    fun: Callable[..., Any],
    in_tree: Any,
    in_avals: Sequence[AbstractValue],
    example_args: tuple[Any, ...],
) -> Traced:
    """`fun(*unflatten(in_tree, args))` staged as a jaxpr over `in_avals`.

    `what` names the API in debug info (`cond`, `scan`, `while_body`, ...).
    """
    key = (what, in_tree, tuple(in_avals), config.trace_context())
    try:
        entries = _trace_cache.setdefault(fun, {})
    except TypeError:
        entries = {}
    found = entries.get(key)
    if found is not None:
        return found  # type: ignore[no-any-return]
    out_trees: list[Any] = []

    def flat(*leaves: Any) -> list[Any]:
        args = tree_util.tree_unflatten(in_tree, leaves)
        out_leaves, out_tree = tree_util.tree_flatten(fun(*args))
        out_trees.append(out_tree)
        return out_leaves

    debug = DebugInfo(
        what, func_src_info(fun), lambda: argument_names(fun, example_args, {}, set())
    )
    if any(a.mutable for a in in_avals):
        check_no_aliased_args(debug, in_avals, tree_util.tree_leaves(example_args))
    closed = trace_to_jaxpr(flat, in_avals, debug)
    check_no_returned(debug, closed.jaxpr, lambda: result_paths(out_trees[0]))
    jaxpr = closed.jaxpr
    if jaxpr.constvars:
        jaxpr = jaxpr.replace(constvars=(), invars=(*jaxpr.constvars, *jaxpr.invars))
    traced = Traced(ClosedJaxpr(jaxpr, []), list(closed.consts), out_trees[0])
    # A body that captured tracers of an enclosing trace is only valid inside it, and one
    # closing over boxes only while they hold the types they held.
    if not any(isinstance(c, Tracer) or typeof(c).has_qdd for c in closed.consts):
        entries[key] = traced
    return traced


def check_closure_aliasing(traced: Traced, consts: Sequence[Any], args: Sequence[Any]) -> None:
    """A mutable value both closed over by a body (`consts`) and passed to it (`args`, flat) is
    JAX's error, named after `traced`'s function."""
    if any(typeof(c).mutable for c in consts):
        check_not_closed_over_and_passed(traced.jaxpr.jaxpr.debug_info, consts, args)


# --- jaxpr surgery (memoized per jaxpr object, identity kept when nothing changes) ---------

_pad_cache: _Cache = weakref.WeakKeyDictionary()


def pad_consts(
    closed: ClosedJaxpr,
    num_consts: int,
    left: tuple[AbstractValue, ...],
    right: tuple[AbstractValue, ...],
) -> ClosedJaxpr:
    """`closed` taking unused const binders of types `left` before and `right` after its own
    `num_consts` leading ones."""
    if not left and not right:
        return closed

    def make() -> ClosedJaxpr:
        j = closed.jaxpr
        invars = (
            *(_binder(a) for a in left),
            *j.invars[:num_consts],
            *(_binder(a) for a in right),
            *j.invars[num_consts:],
        )
        return ClosedJaxpr(j.replace(invars=invars), closed.consts)

    result: ClosedJaxpr = memo(_pad_cache, closed, (num_consts, left, right), make)
    return result


def _binder(a: Any) -> Var:
    # A box the body does not use: it leaves it as it found it.
    return Var(a.aval, a.qdd, a.qdd) if isinstance(a, AvalQDD) else Var(a)


_dedup_cache: _Cache = weakref.WeakKeyDictionary()


def _dedup_consts(closed: ClosedJaxpr, num_consts: int, const_ids: tuple[int, ...]) -> ClosedJaxpr:
    if len(set(const_ids)) == len(const_ids):
        return closed

    def make() -> ClosedJaxpr:
        j = closed.jaxpr
        canon: dict[int, Var] = {}
        subst = {
            v: canon.setdefault(i, v) for i, v in zip(const_ids, j.invars[:num_consts], strict=True)
        }
        eqns = [
            e.replace(invars=tuple(subst.get(x, x) if isinstance(x, Var) else x for x in e.invars))
            for e in j.eqns
        ]
        outvars = tuple(subst.get(x, x) if isinstance(x, Var) else x for x in j.outvars)
        invars = (*canon.values(), *j.invars[num_consts:])
        new = j.replace(invars=invars, eqns=eqns, outvars=outvars)
        return ClosedJaxpr(new, closed.consts)

    result: ClosedJaxpr = memo(_dedup_cache, closed, (num_consts, const_ids), make)
    return result


def merge_common_consts(
    jaxprs: Sequence[ClosedJaxpr], all_consts: Sequence[Sequence[Any]]
) -> tuple[list[ClosedJaxpr], list[Any]]:
    """Make bodies share one const list: each is padded with the others' consts, and a value
    captured by several bodies is passed once (JAX's `_merge_common_consts`)."""
    consts = [c for cs in all_consts for c in cs]
    avals = tuple(with_qdd([typeof(c) for c in consts], consts))
    out: list[ClosedJaxpr] = []
    start = 0
    for closed, cs in zip(jaxprs, all_consts, strict=True):
        end = start + len(cs)
        out.append(pad_consts(closed, len(cs), avals[:start], avals[end:]))
        start = end
    ids = tuple(id(c) for c in consts)
    seen: set[int] = set()
    unique = [c for c in consts if id(c) not in seen and not seen.add(id(c))]  # type: ignore[func-returns-value]  # set.add in a filter
    return [_dedup_consts(j, len(consts), ids) for j in out], unique


def forwarding(jaxpr: Jaxpr) -> list[int | None]:
    """For each output, the index of the input it returns unchanged, if any."""
    index = {v: i for i, v in enumerate(jaxpr.invars)}
    return [index.get(v) if isinstance(v, Var) else None for v in jaxpr.outvars]


def forwarded_value(x: Any) -> Any:
    """The result for an operand `x` that a body returns unchanged, as `jnp.asarray(x)` gives
    it: a NumPy array or scalar stays the same object (a constant forwarded is still one
    constant), a Python scalar takes its default dtype (`lax.asarray`), an array is itself."""
    if isinstance(x, (bool, int, float, complex)):  # NumPy's float64 and complex128 too
        return asarray(x)
    if isinstance(x, (np.ndarray, np.number)):
        return eager_value(x)
    return asarray(x)


_prune_cache: _Cache = weakref.WeakKeyDictionary()


def prune_outputs(closed: ClosedJaxpr, keep: Sequence[bool]) -> ClosedJaxpr:
    """`closed` returning only the outputs flagged in `keep`. As JAX's, the equations that
    computed the others stay (a `grad` in a body keeps its unused primal loop)."""
    if all(keep):
        return closed

    def make() -> ClosedJaxpr:
        j = closed.jaxpr
        kept = j.replace(outvars=tuple(v for v, k in zip(j.outvars, keep, strict=True) if k))
        return ClosedJaxpr(kept, closed.consts)

    result: ClosedJaxpr = memo(_prune_cache, closed, tuple(keep), make)
    return result


_move_cache: _Cache = weakref.WeakKeyDictionary()


def move_binders_to_front(closed: ClosedJaxpr, to_front: Sequence[bool]) -> ClosedJaxpr:
    """`closed` with the flagged binders first, the others after, each group in order."""
    if not any(to_front):
        return closed

    def make() -> ClosedJaxpr:
        j = closed.jaxpr
        moved = [v for v, f in zip(j.invars, to_front, strict=True) if f]
        rest = [v for v, f in zip(j.invars, to_front, strict=True) if not f]
        return ClosedJaxpr(j.replace(invars=(*moved, *rest)), closed.consts)

    result: ClosedJaxpr = memo(_move_cache, closed, tuple(to_front), make)
    return result


# --- messages ----------------------------------------------------------------------------------


def capitalize(s: str) -> str:
    return s[:1].upper() + s[1:]


def long_name(aval: AbstractValue) -> str:
    """`float32[3]`: the type as JAX's messages spell it."""
    return aval.str_short(short_dtypes=False)


def avals_short(avals: Sequence[AbstractValue]) -> str:
    return " ".join(long_name(a) for a in avals)


def mismatch_extra(a1: AbstractValue, a2: AbstractValue) -> str:
    """`, so the dtypes do not match` and the like (JAX's `aval_mismatch_extra`)."""
    if not (isinstance(a1, ShapedArray) and isinstance(a2, ShapedArray)):
        return ""
    found = []
    if a1.dtype != a2.dtype:
        found.append("the dtypes do not match")
    if a1.shape != a2.shape:
        found.append("the shapes do not match")
    if a1.vma != a2.vma:
        found.append("the manual axis types do not match")
    if not found:
        return ""
    if len(found) == 1:
        return ", so " + found[0]
    return ", so " + ", ".join(found[:-1]) + ", and " + found[-1]


def structure_differences(t1: Any, t2: Any) -> list[tuple[tuple[Any, ...], str, str, str]]:
    """Where two pytrees' structures differ: (path, what t1 has, what t2 has, explanation)."""
    out: list[tuple[tuple[Any, ...], str, str, str]] = []

    def walk(path: tuple[Any, ...], a: Any, b: Any) -> None:
        sa, sb = tree_util.tree_structure(a), tree_util.tree_structure(b)
        if tree_util.treedef_is_leaf(sa) and tree_util.treedef_is_leaf(sb):
            return
        if type(a) is not type(b):
            out.append((path, str(type(a)), str(type(b)), "their Python types differ"))
            return
        if isinstance(a, list | tuple) and len(a) != len(b):
            out.append(
                (
                    path,
                    f"{type(a).__name__} of length {len(a)}",
                    f"{type(b).__name__} of length {len(b)}",
                    "the lengths do not match",
                )
            )
            return
        (ka, ca), (kb, cb) = _children(a), _children(b)
        if len(ca) != len(cb) or ka != kb:
            s = "ren" if len(ca) > 1 else ""
            t = "ren" if len(cb) > 1 else ""
            out.append(
                (
                    path,
                    f"{type(a)} with {len(ca)} child{s}",
                    f"{type(b)} with {len(cb)} child{t}",
                    "the numbers of children do not match",
                )
            )
            return
        for key, x, y in zip(ka, ca, cb, strict=True):
            walk((*path, key), x, y)

    walk((), t1, t2)
    return out


def _children(node: Any) -> tuple[list[Any], list[Any]]:
    pairs = tree_util.tree_flatten_with_path(node, is_leaf=lambda x: x is not node)[0]
    return [p[0] for p, _ in pairs], [x for _, x in pairs]


def keystr(path: Sequence[Any]) -> str:
    return tree_util.keystr(tuple(path))


def first_param_name(fun: Callable[..., Any]) -> str | None:
    try:
        params = list(inspect.signature(fun, follow_wrapped=False).parameters)
    except (TypeError, ValueError):
        return None
    return params[0] if params else None


def check_carry_type(
    name: str,
    body_fun: Callable[..., Any],
    in_tree: Any,
    in_avals: Sequence[AbstractValue],
    out_tree: Any,
    out_avals: Sequence[AbstractValue],
) -> None:
    """JAX's `_check_carry_type`: the carry keeps its structure and types through the body."""
    carry_name = first_param_name(body_fun)

    def component(path: Sequence[Any]) -> str:
        if carry_name:
            return (
                f"the input carry component {carry_name}{keystr(path)}"
                if path
                else f"the input carry {carry_name}"
            )
        return f"the input carry at path {keystr(path)}" if path else "the input carry"

    if in_tree != out_tree:
        # As JAX, the input side shows its types' classes, the output side its structure.
        t1 = tree_util.tree_unflatten(in_tree, list(in_avals))
        t2 = tree_util.tree_unflatten(out_tree, list(out_avals))
        diffs = [
            f"{component(p)} is a {a} but the corresponding component of the carry output is "
            f"a {b}, so {why}"
            for p, a, b, why in structure_differences(t1, t2)
        ]
        if not diffs:
            differences = (
                f"the input tree structure is:\n{tree_util.treedef_repr(in_tree)}\n"
                f"the output tree structure is:\n{tree_util.treedef_repr(out_tree)}\n"
            )
        elif len(diffs) == 1:
            differences = f"{capitalize(diffs[0])}.\n"
        else:
            differences = "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"
        raise TypeError(
            f"{name} function carry input and carry output must have the same pytree "
            f"structure, but they differ:\n\n{differences}\nRevise the function so that the "
            "carry output has the same pytree structure as the carry input."
        )
    paths = [p for p, _ in tree_util.tree_flatten_with_path(
        tree_util.tree_unflatten(in_tree, list(range(len(in_avals))))
    )[0]]  # fmt: skip
    diffs = [
        f"{component(p)} has type {long_name(a)} but the corresponding output carry component "
        f"has type {long_name(b)}{mismatch_extra(a, b)}"
        for p, a, b in zip(paths, in_avals, out_avals, strict=True)
        if not types_match(a, b)
    ]
    if not diffs:
        return
    if len(diffs) == 1:
        differences = f"{capitalize(diffs[0])}.\n"
    else:
        differences = "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"
    raise TypeError(
        f"{name} function carry input and carry output must have equal types, but they "
        f"differ:\n\n{differences}\n{_pcast_hint(paths, component, in_avals, out_avals)}"
        "Revise the function so that all output types match the corresponding input types."
    )


def _pcast_hint(
    paths: Sequence[Any],
    component: Callable[[Sequence[Any]], str],
    in_avals: Sequence[AbstractValue],
    out_avals: Sequence[AbstractValue],
) -> str:
    """JAX's advice for carries that come out varying over more manual axes than they went in."""
    fixes = [
        f"applying `jax.lax.pcast(..., {tuple(b.vma - a.vma)}, to='varying')`, to the initial "
        f"carry value corresponding to {component(p)}"
        for p, a, b in zip(paths, in_avals, out_avals, strict=True)
        if isinstance(a, ShapedArray) and isinstance(b, ShapedArray)
        and not types_match(a, b) and b.vma - a.vma
    ]  # fmt: skip
    if not fixes:
        return ""
    if len(fixes) == 1:
        msg = f"This might be fixed by {fixes[0]}.\n"
    else:
        msg = (
            "This might be fixed by:\n"
            + "\n".join(f"  * {d};\n" for d in fixes[:-1])
            + f"  * {fixes[-1]}.\n"
        )
    return (
        msg + "See https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma for more "
        "information.\n\n"
    )


class _LeafType(type):
    def __repr__(cls) -> str:
        return "pytree leaf"


class PytreeLeaf(metaclass=_LeafType):
    """A placeholder leaf whose type prints as `pytree leaf` in structure messages."""


__all__ = [
    "PytreeLeaf",
    "Traced",
    "avals_short",
    "capitalize",
    "check_carry_type",
    "check_closure_aliasing",
    "forwarded_value",
    "forwarding",
    "keystr",
    "long_name",
    "memo",
    "merge_common_consts",
    "mismatch_extra",
    "move_binders_to_front",
    "pad_consts",
    "prune_outputs",
    "structure_differences",
    "trace_body",
]
