"""`VJP.with_refs`: a pullback that accumulates chosen input cotangents into Refs.

`with_refs(*markers)` takes, per input of the differentiated function (in its pytree
structure), `GradValue()` (return the cotangent, the default), `DontWant()` (do not return it;
`DidntWant()` stands in its place) or a mutable value (a Ref) the cotangent is added into
(`GradRef()` stands in its place). JAX 0.10.2 spells the markers `jax.ad.*`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from lamina_core.trace import typeof
from lamina_core.tree import tree_util


@dataclasses.dataclass(frozen=True, slots=True)
class GradValue:
    """Return this input's cotangent as a value (the default)."""


@tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, slots=True)
class GradRef:
    """In the result: this input's cotangent was accumulated into the Ref passed for it."""


@dataclasses.dataclass(frozen=True, slots=True)
class DontWant:
    """Do not compute this input's cotangent."""


@tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, slots=True)
class DidntWant:
    """In the result: this input's cotangent was not computed (it was a `DontWant`)."""


def _is_ref(x: Any) -> bool:
    try:
        return bool(typeof(x).mutable)
    except TypeError:
        return False


def pullback_with_refs(
    pullback: Callable[[Any], Any], in_tree: Any, markers: Sequence[Any]
) -> Callable[[Any], Any]:
    """`pullback` (output cotangent -> input cotangents, structured by `in_tree`) with each
    input's cotangent delivered as `markers` (flattened like the inputs) ask."""
    if markers:
        flat, tree = tree_util.tree_flatten(tuple(markers))
        if tree != in_tree:
            raise Exception  # JAX 0.10.2 raises a bare Exception here
    else:
        flat = [GradValue()] * in_tree.num_leaves

    def with_refs(ct: Any) -> Any:
        cts = tree_util.tree_leaves(pullback(ct))
        results: list[Any] = []
        for marker, c in zip(flat, cts, strict=True):
            if _is_ref(marker):
                add = getattr(marker, "addupdate", None)  # a concrete Ref; a traced one reads
                if add is not None:
                    add(c)
                else:
                    marker[...] += c
                results.append(GradRef())
            elif isinstance(marker, DontWant):
                results.append(DidntWant())
            else:
                results.append(c)
        return tree_util.tree_unflatten(in_tree, results)

    return with_refs


__all__ = ["DidntWant", "DontWant", "GradRef", "GradValue", "pullback_with_refs"]
