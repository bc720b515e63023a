"""`composite`: a decorator making a function one named, versioned operation, as `jax.lax`'s.

The function is staged out once per call as the `composite` primitive's jaxpr (its captured
constants become leading operands); keyword arguments are compile-time attributes the compiler
sees next to the name. Lowered, it is a `stablehlo.composite` whose decomposition is the
function; a compiler that does not know the name inlines the decomposition. Like JAX, it has
no derivative and no batching rule (wrap it in `custom_jvp` or `custom_vmap` for those).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from lamina_core.interpreters import jvp_rules, trace_to_jaxpr, transpose_rules
from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    Jaxpr,
    Primitive,
    abstract_eval_rules,
    impl_rules,
)
from lamina_core.trace import Tracer, UnexpectedTracerError, eval_jaxpr, typeof
from lamina_core.tree import tree_util

composite_p: Final = Primitive("composite", multiple_results=True)


@abstract_eval_rules.register(composite_p)
def _composite_abstract_eval(*args: AbstractValue, jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    return list(jaxpr.out_avals)


@impl_rules.register(composite_p)
def _composite_impl(*args: Any, jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    return eval_jaxpr(jaxpr, (), *args)


def _no_jvp(*args: Any, **params: Any) -> Any:
    raise ValueError(
        "JVP rule for composite not implemented. You can use `jax.custom_jvp` to add support. "
        "See https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html"
    )


def _no_transpose(*args: Any, **params: Any) -> Any:
    raise ValueError(
        "Transpose rule for composite not implemented. You can use`jax.custom_jvp` or "
        "`jax.custom_vjp` to add support. See "
        "https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html"
    )


jvp_rules.set(composite_p, _no_jvp)
transpose_rules.set(composite_p, _no_transpose)


class HashableArray:
    """A NumPy attribute value, hashable so that it can be a primitive param."""

    __slots__ = ("value",)

    def __init__(self, value: np.ndarray) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"HashableArray({self.value!r})"

    def __hash__(self) -> int:
        return hash((self.value.shape, self.value.dtype, self.value.tobytes()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HashableArray) and np.array_equal(self.value, other.value)


class AttributeTree:
    """An attribute's tree structure, printed as JAX prints its tree definitions."""

    __slots__ = ("treedef",)

    def __init__(self, treedef: Any) -> None:
        self.treedef = treedef

    def __repr__(self) -> str:
        return repr(self.treedef).replace("PyTreeSpec", "PyTreeDef", 1)

    def __hash__(self) -> int:
        return hash(self.treedef)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AttributeTree) and self.treedef == other.treedef

    def unflatten(self, leaves: Sequence[Any]) -> Any:
        values = [leaf.value if isinstance(leaf, HashableArray) else leaf for leaf in leaves]
        return tree_util.tree_unflatten(self.treedef, values)


def _attributes(kwargs: dict[str, Any]) -> tuple[tuple[str, tuple[Any, ...], AttributeTree], ...]:
    out = []
    for key, value in kwargs.items():
        leaves, treedef = tree_util.tree_flatten(value)
        held = tuple(HashableArray(v) if isinstance(v, np.ndarray) else v for v in leaves)
        out.append((key, held, AttributeTree(treedef)))
    return tuple(out)


def _stage(fun: Callable[..., Any], flat_args: Sequence[Any], in_tree: Any, name: str) -> Any:
    """The decomposition's jaxpr with its constants as leading invars, the constants, and the
    output tree."""
    out_tree: list[Any] = []

    def flat_fun(*flat: Any) -> list[Any]:
        leaves, tree = tree_util.tree_flatten(fun(*tree_util.tree_unflatten(in_tree, flat)))
        out_tree.append(tree)
        return leaves

    closed = trace_to_jaxpr(flat_fun, [typeof(x) for x in flat_args])
    if any(isinstance(c, Tracer) for c in closed.consts):
        raise UnexpectedTracerError(
            "Found a JAX Tracer as a constant in the decomposition for the composite op "
            f"'{name}'. This means that the decomposition function closes over a value that is "
            "involved in a JAX transformation. Any values that aren't explicitly known at "
            "compile time must be explicitly passed as arguments to the composite."
        )
    inner = closed.jaxpr
    opened = Jaxpr((), (*inner.constvars, *inner.invars), inner.outvars, inner.eqns,
                   inner.effects, inner.debug_info)  # fmt: skip
    return ClosedJaxpr(opened, []), list(closed.consts), out_tree[0]


def composite(decomposition: Callable[..., Any], name: str, version: int = 0) -> Any:
    """`decomposition` as one operation named `name` (at `version`); its keyword arguments
    become the operation's attributes."""

    @functools.wraps(decomposition)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if any(isinstance(v, Tracer) for v in kwargs.values()):
            raise UnexpectedTracerError(
                "Found a JAX Tracer as an attribute in the decomposition for the composite op "
                f"'{name}'. This means that the decomposition function closes over a value "
                "that is involved in a JAX transformation. Any values that aren't explicitly "
                "known at compile time must be explicitly passed as arguments to the "
                "composite.\n\nNote: If you are passing jax arrays as attributes, use numpy "
                "arrays instead."
            )
        flat_args, in_tree = tree_util.tree_flatten(args)
        fun = functools.partial(decomposition, **kwargs)
        jaxpr, consts, out_tree = _stage(fun, flat_args, in_tree, name)
        outs = composite_p.bind(
            *consts, *flat_args, name=name, attributes=_attributes(kwargs), version=version,
            jaxpr=jaxpr,
        )  # fmt: skip
        return tree_util.tree_unflatten(out_tree, outs)

    return wrapper


__all__ = ["composite"]
