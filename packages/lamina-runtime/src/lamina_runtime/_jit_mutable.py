"""Running a jitted call that takes or closes over values of mutable hi types (boxes), as
JAX's jit runs one: the call is lowered to one of arrays (`lamina_hijax.lower_mutable`)
that takes each box's arrays and returns their final values, which are written back into
the boxes after it runs. Such calls always take this Python path (no C++ dispatch)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lamina_core import tree_util
from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.ir import ClosedJaxpr, Primitive
from lamina_core.trace import typeof, with_qdd
from lamina_core.transforms import Staged, jit_p, jit_params
from lamina_hijax import (
    is_mutable_value,
    lower_mutable,
    lower_mutable_args,
    mutable_lowering_rules,
    takes_mutable,
    write_back,
)


def is_mutable_call(staged: Staged) -> bool:
    """Whether `staged` takes or closes over a value of a mutable hi type."""
    return bool(staged.hi_mutable_consts) or takes_mutable(staged.jaxpr.jaxpr)


def run_mutable(staged: Staged, leaves: Sequence[Any], name: str) -> Any:
    """The outputs of `staged` called on `leaves` (its flat arguments), its boxes updated."""
    args = [*staged.hi_mutable_consts, *leaves, *staged.mutable_consts]
    return tree_util.tree_unflatten(staged.out_tree, call_mutable(staged.jaxpr, args, name))


def jit_takes_mutable(closed: ClosedJaxpr) -> bool:
    """Whether a `jit` of `closed` takes boxes, or closes over some (a jaxpr traced again by
    a transformation, e.g. transposed, holds the boxes it closes over as consts)."""
    return takes_mutable(closed.jaxpr) or any(is_mutable_value(c) for c in closed.consts)


def call_mutable(closed: ClosedJaxpr, args: Sequence[Any], name: str) -> list[Any]:
    """The flat outputs of a `jit` of `closed` (taking boxes) on `args`, its boxes updated."""
    if closed.consts:  # its consts (boxes among them) as leading arguments
        j = closed.jaxpr
        args = [*closed.consts, *args]
        closed = ClosedJaxpr(j.replace(constvars=(), invars=(*j.constvars, *j.invars)), [])
    lowered, trees = lower_mutable(closed)
    outs = jit_p.bind(*lower_mutable_args(closed.jaxpr, args), **jit_params(lowered, name))
    return write_back(closed.jaxpr, args, trees, outs)


def apply_mutable(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """`prim` (a loop or `cond` of jaxprs) applied eagerly to boxes among `args`: as a `jit`
    of it, which lowers it and writes the boxes back."""
    avals = with_qdd([typeof(x) for x in args], args)

    def apply(*xs: Any) -> list[Any]:
        out = prim.bind(*xs, **params)
        return list(out) if prim.multiple_results else [out]

    outs = call_mutable(trace_to_jaxpr(apply, avals), args, prim.name)
    return outs if prim.multiple_results else outs[0]


@dataclass(frozen=True, slots=True)
class LoweredBoxes:
    """A staged call taking boxes as one of arrays (for the AOT stages): `staged` takes the
    boxes' arrays and returns their final ones first; `trees` to write them back."""

    staged: Staged
    trees: tuple[Any, ...]
    in_tree: Any


def lower_boxes(staged: Staged) -> LoweredBoxes:
    lowered, trees = lower_mutable(staged.jaxpr)
    n_in, n_out = len(lowered.in_avals), len(lowered.out_avals)
    lo = Staged(lowered, tree_util.tree_structure([0] * n_out), (False,) * n_in)
    return LoweredBoxes(lo, trees, tree_util.tree_structure((tuple(range(n_in)), {})))


class BoxStage:
    """A stage (`Lowered`, `Compiled`) of a call taking boxes: the stage of its call of
    arrays, called with the boxes' arrays and writing their final ones back."""

    def __init__(self, inner: Any, staged: Staged, boxes: LoweredBoxes) -> None:
        self._inner, self._staged, self._boxes = inner, staged, boxes

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def compile(self, *args: Any, **kwargs: Any) -> BoxStage:
        return BoxStage(self._inner.compile(*args, **kwargs), self._staged, self._boxes)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        staged = self._staged
        leaves = tree_util.tree_leaves((args, kwargs))
        all_args = [*staged.hi_mutable_consts, *leaves, *staged.mutable_consts]
        jaxpr = staged.jaxpr.jaxpr
        outs = self._inner(*lower_mutable_args(jaxpr, all_args))
        own = write_back(jaxpr, all_args, self._boxes.trees, tree_util.tree_leaves(outs))
        return tree_util.tree_unflatten(staged.out_tree, own)


def applies_to_mutable(prim: Primitive, args: Sequence[Any]) -> bool:
    """Whether `prim` is applied eagerly to boxes (`apply_mutable` runs it)."""
    return prim in mutable_lowering_rules and any(is_mutable_value(x) for x in args)


__all__ = [
    "BoxStage",
    "LoweredBoxes",
    "applies_to_mutable",
    "apply_mutable",
    "call_mutable",
    "is_mutable_call",
    "jit_takes_mutable",
    "lower_boxes",
    "run_mutable",
]
