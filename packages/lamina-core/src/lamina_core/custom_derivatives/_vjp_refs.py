"""The rules of mutable values (Refs) at a `custom_vjp`'s boundary, with JAX's messages.

A Ref may reach the function once among its differentiated arguments; the function may return
no Ref it was not given; its fwd rule returns no Ref among its primal outputs, and among its
residuals only Refs it was given (which bwd then shares).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lamina_core.custom_derivatives._common import CustomVJPPrimal
from lamina_core.trace import typeof
from lamina_core.transforms import argument_names
from lamina_core.tree import tree_util


def rule_repr(fun: Callable[..., Any]) -> str:
    """How JAX's messages name a user function it wrapped (`functools.partial(<function f
    at 0x...>)`)."""
    return f"functools.partial({fun!r})"


def check_aliased_args(
    fun: Callable[..., Any], nondiff_argnums: Sequence[int], args: Sequence[Any]
) -> None:
    """The same Ref passed as two differentiated arguments is an error."""
    argnums = [i for i, a in enumerate(args) for _ in tree_util.tree_leaves(a)]
    leaves = tree_util.tree_leaves(tuple(args))
    seen: dict[int, int] = {}
    for k, (argnum, x) in enumerate(zip(argnums, leaves, strict=True)):
        if argnum in nondiff_argnums:
            continue
        aval = typeof(x)
        if not aval.mutable:
            continue
        first = seen.setdefault(id(x), k)
        if first == k:
            continue
        names = argument_names(fun, args, {}, set()) or ()
        name = [names[i] if i < len(names) else "unknown" for i in (first, k)]
        raise ValueError(
            "only one reference to a mutable array may be passed as an argument to a "
            f"function, but custom_vjp function {rule_repr(fun)} got the same mutable array "
            f"reference of type {aval.str_short(short_dtypes=False)} at {name[0]} and {name[1]}."
        )


def check_returned(
    fun: Callable[..., Any], kind: str, out: Any, args: Sequence[Any], num_primal: int
) -> None:
    """`kind` (`primal` or `fwd`) returned a Ref among its first `num_primal` output leaves
    (never allowed) or one that is not among `args` (flat)."""
    values = [a.value if isinstance(a, CustomVJPPrimal) else a for a in args]
    given = {id(a) for a in values if typeof(a).mutable}
    for k, (path, leaf) in enumerate(tree_util.tree_flatten_with_path(out)[0]):
        aval = typeof(leaf)
        if not aval.mutable:
            continue
        loc = f" at output tree path {tree_util.keystr(path)}" if path else ""
        start = (
            f"custom_vjp {kind} function {rule_repr(fun)} returned a mutable array reference "
            f"of type {aval.str_short(short_dtypes=False)}{loc}"
        )
        if k < num_primal:
            raise ValueError(f"{start}, but mutable array references cannot be returned there.")
        if id(leaf) not in given:
            raise ValueError(f"{start} that was not an argument.")


__all__ = ["check_aliased_args", "check_returned", "rule_repr"]
