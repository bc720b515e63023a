"""`scan` and `map`: the `scan` primitive, a loop over leading axes carrying state.

`scan_p` takes `[*consts, *carry, *xs]` and returns `[*carry, *ys]`; `jaxpr` maps
`[*consts, *carry, *x slices]` to `[*carry, *y slices]`. Params are JAX 0.10.2's: `reverse`,
`length`, `jaxpr`, `num_consts`, `num_carry`, `unroll` (an int; 1 rolls the loop). A carry
the body forwards unchanged becomes a const, and a `ys` that is an `xs` forwarded unchanged is
not computed by the primitive, as JAX does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    Effects,
    Primitive,
    abstract_eval_rules,
    dtypes,
    effects_rules,
    impl_rules,
    is_symbolic_dim,
    types_match,
)
from lamina_core.lax._joining import concatenate
from lamina_core.lax._structural import convert_element_type
from lamina_core.lax.control_flow.common import (
    avals_short,
    check_carry_type,
    check_closure_aliasing,
    forwarded_value,
    forwarding,
    move_binders_to_front,
    prune_outputs,
    trace_body,
)
from lamina_core.trace import Tracer, eval_jaxpr, typeof
from lamina_core.transforms import vmap
from lamina_core.tree import tree_util

scan_p: Final = Primitive("scan", multiple_results=True)


def _all_match(a: Sequence[AbstractValue], b: Sequence[AbstractValue]) -> bool:
    return len(a) == len(b) and all(types_match(x, y) for x, y in zip(a, b, strict=True))


def _is_length(length: Any) -> bool:
    """A scan length: a non-negative int, or a symbolic dimension (shape polymorphism)."""
    return is_symbolic_dim(length) or (type(length) is int and length >= 0)


def _check_params(reverse: Any, length: Any, num_consts: Any, num_carry: Any, jaxpr: Any,
                  unroll: Any) -> None:  # fmt: skip
    for name, value, required, ok in (
        ("reverse", reverse, "bool", type(reverse) is bool),
        ("num_consts", num_consts, "non-negative int", type(num_consts) is int and num_consts >= 0),
        ("num_carry", num_carry, "non-negative int", type(num_carry) is int and num_carry >= 0),
        ("jaxpr", jaxpr, "ClosedJaxpr", type(jaxpr) is ClosedJaxpr),
        ("unroll", unroll, "non-negative int", type(unroll) is int and unroll >= 0),
        ("length", length, "non-negative int", _is_length(length)),
    ):
        if not ok:
            raise TypeError(
                f"invalid scan param {name} of type {type(value).__name__}, {required} "
                f"required: {value}"
            )


@abstract_eval_rules.register(scan_p)
def _scan_abstract_eval(
    *args: AbstractValue,
    reverse: bool,
    length: int,
    jaxpr: ClosedJaxpr,
    num_consts: int,
    num_carry: int,
    unroll: int,
) -> list[AbstractValue]:
    _check_params(reverse, length, num_consts, num_carry, jaxpr, unroll)
    if len(args) != len(jaxpr.in_avals):
        raise TypeError(
            "scan number of arguments doesn't match the number of jaxpr arguments: "
            f"{len(args)} vs {len(jaxpr.in_avals)}"
        )
    n_head = num_consts + num_carry
    carry_out, ys = jaxpr.out_avals[:num_carry], jaxpr.out_avals[num_carry:]
    in_consts, in_carry = jaxpr.in_avals[:num_consts], jaxpr.in_avals[num_consts:n_head]
    if not _all_match(in_carry, carry_out):
        raise TypeError(
            "scan input carry input and output types mismatch: "
            f"\n{avals_short(in_carry)}\nvs\n{avals_short(carry_out)}"
        )
    if not _all_match(in_consts, args[:num_consts]):
        raise TypeError(
            f"scan jaxpr takes input const types\n{avals_short(in_consts)},\ncalled with "
            f"consts of type\n{avals_short(args[:num_consts])}"
        )
    if not _all_match(in_carry, args[num_consts:n_head]):
        raise TypeError(
            f"scan jaxpr takes input carry types\n{avals_short(in_carry)},\ncalled with "
            f"initial carry of type\n{avals_short(args[num_consts:n_head])}"
        )
    xs = [a.dec_rank(length, a.leading_axis_spec()) for a in args[n_head:]]
    if not _all_match(jaxpr.in_avals[n_head:], xs):
        raise TypeError(
            f"scan jaxpr takes input sequence types\n{avals_short(jaxpr.in_avals[n_head:])},"
            f"\ncalled with sequence whose items have type\n{avals_short(xs)}"
        )
    return [*carry_out, *(a.inc_rank(length, a.leading_axis_spec()) for a in ys)]


@effects_rules.register(scan_p)
def _scan_effects(*args: AbstractValue, jaxpr: ClosedJaxpr, **_: Any) -> Effects:
    return jaxpr.effects


@impl_rules.register(scan_p)
def _scan_impl(
    *args: Any,
    reverse: bool,
    length: int,
    jaxpr: ClosedJaxpr,
    num_consts: int,
    num_carry: int,
    unroll: int,
) -> list[Any]:
    consts = args[:num_consts]
    carry = list(args[num_consts : num_consts + num_carry])
    xs = [np.asarray(x) for x in args[num_consts + num_carry :]]
    y_avals = jaxpr.out_avals[num_carry:]
    ys: list[list[Any]] = [[] for _ in y_avals]
    steps = range(length - 1, -1, -1) if reverse else range(length)
    for i in steps:
        outs = eval_jaxpr(jaxpr, (), *consts, *carry, *(x[i] for x in xs))
        carry = list(outs[:num_carry])
        for acc, y in zip(ys, outs[num_carry:], strict=True):
            acc.append(np.asarray(y))
    stacked = []
    for acc, aval in zip(ys, y_avals, strict=True):
        if reverse:
            acc.reverse()
        shape = (length, *aval.shape)  # type: ignore[attr-defined]  # arrays only here
        stacked.append(np.stack(acc) if acc else np.zeros(shape, aval.dtype))  # type: ignore[attr-defined]  # arrays only here
    return [*carry, *stacked]


def bind_scan(
    args: Sequence[Any],
    *,
    reverse: bool,
    length: int,
    jaxpr: ClosedJaxpr,
    num_consts: int,
    num_carry: int,
    unroll: int,
) -> list[Any]:
    outs: list[Any] = scan_p.bind(
        *args,
        reverse=reverse,
        length=length,
        jaxpr=jaxpr,
        num_consts=num_consts,
        num_carry=num_carry,
        unroll=unroll,
    )
    return outs


# --- the API -----------------------------------------------------------------------------------


def promote_weak_init(
    init: Sequence[Any], in_avals: Sequence[AbstractValue], out_avals: Sequence[AbstractValue]
) -> tuple[list[Any], bool]:
    """Weakly typed initial carries whose type the body changes take the body's type."""
    new, changed = [], False
    for x, a, b in zip(init, in_avals, out_avals, strict=True):
        if getattr(a, "weak_type", False) and not types_match(a, b):
            x = convert_element_type(x, dtypes.result_type(x, b.dtype))  # type: ignore[attr-defined]  # arrays only here
            changed = True
        new.append(x)
    return new, changed


def _scan_length(xs: Sequence[Any], length: Any) -> int:
    if length is None and any(typeof(x).is_high for x in xs):
        # A hi type's leading axis is its own business: JAX asks for the length.
        raise ValueError("must provide `length` to `scan`")
    try:
        lengths = [x.shape[0] for x in xs if not typeof(x).is_high]
    except (AttributeError, IndexError) as err:
        bad = ", ".join(str(x) for x in xs if not np.shape(x))
        raise ValueError(f"scan got value with no leading axis to scan over: {bad}.") from err
    if length is not None:
        if isinstance(length, Tracer):
            raise TypeError(
                "The `length` argument to `scan` expects a concrete `int` value. For scan-like "
                "iteration with a dynamic length, use `while_loop` or `fori_loop`."
            )
        given = int(length)
        if not all(given == n for n in lengths):
            raise ValueError(
                f"scan got `length` argument of {given} which disagrees with leading axis "
                f"sizes {lengths}."
            )
        return given
    unique = set(lengths)
    if len(unique) > 1:
        sizes = ", ".join(str(n) for n in lengths)
        raise ValueError(f"scan got values with different leading axis sizes: {sizes}.")
    if not unique:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    found: int = unique.pop()
    return found


def scan(
    f: Callable[[Any, Any], tuple[Any, Any]],
    init: Any,
    xs: Any = None,
    length: int | None = None,
    reverse: bool = False,
    unroll: int | bool = 1,
    _split_transpose: bool = False,
) -> tuple[Any, Any]:
    """Loop `f(carry, x) -> (carry, y)` over the leading axis of `xs`; returns the final
    carry and the stacked `y`s.

    Args:
      f: the body; the carry keeps its structure and types.
      init: the initial carry (a pytree).
      xs: the pytree scanned over its leading axes, or None with `length`.
      length: the trip count, needed when `xs` has no leaves.
      reverse: scan from the end (and stack `ys` in the original order).
      unroll: how many iterations one rolled iteration runs; True unrolls fully.
      _split_transpose: accepted for JAX parity; JAX 0.10.2 ignores it too.

    Raises:
      TypeError, ValueError: JAX's messages for bad bodies, lengths and `unroll`.
    """
    del _split_transpose
    if not callable(f):
        raise TypeError("lax.scan: f argument should be callable.")
    init_leaves, init_tree = tree_util.tree_flatten(init)
    xs_leaves, xs_tree = tree_util.tree_flatten(xs)
    n = _scan_length(xs_leaves, length)
    init_avals = [typeof(x) for x in init_leaves]
    x_avals = [typeof(x).dec_rank(n, typeof(x).leading_axis_spec()) for x in xs_leaves]
    pair = (
        tree_util.tree_unflatten(init_tree, init_leaves),
        tree_util.tree_unflatten(xs_tree, xs_leaves),
    )
    in_tree = tree_util.tree_structure(pair)
    example = (init, xs)

    def make(avals: list[AbstractValue]) -> Any:
        traced = trace_body("scan", f, in_tree, [*avals, *x_avals], example)
        children = tree_util.treedef_children(traced.out_tree)
        if tree_util.treedef_is_leaf(traced.out_tree) or len(children) != 2:
            out = tree_util.tree_unflatten(traced.out_tree, traced.out_avals)
            raise TypeError(f"scan body output must be a pair, got {out}.")
        carry_tree = children[0]
        n_carry = int(carry_tree.num_leaves)
        return traced, carry_tree, n_carry

    traced, carry_tree, n_carry = make(init_avals)
    check_closure_aliasing(traced, traced.consts, [*init_leaves, *xs_leaves])
    carry_out = traced.out_avals[:n_carry]
    if n_carry != len(init_avals):
        check_carry_type("scan body", f, init_tree, init_avals, carry_tree, carry_out)
    init_leaves, changed = promote_weak_init(init_leaves, init_avals, carry_out)
    if changed:
        init_avals = [typeof(x) for x in init_leaves]
        traced, carry_tree, n_carry = make(init_avals)
        carry_out = traced.out_avals[:n_carry]
    check_carry_type("scan body", f, init_tree, init_avals, carry_tree, carry_out)
    if isinstance(unroll, Tracer):  # type: ignore[unreachable]  # users pass anything
        raise TypeError("The `unroll` argument to `scan` expects a concrete `int` or `bool` value.")
    if isinstance(unroll, bool):
        unroll = max(n, 1) if unroll else 1
    unroll = int(unroll)
    if unroll < 0:
        raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")
    jaxpr, consts = traced.jaxpr, list(traced.consts)
    args = [*init_leaves, *xs_leaves]
    num_carry, num_xs = len(init_leaves), len(xs_leaves)
    num_ys = len(jaxpr.out_avals) - num_carry
    fwd = forwarding(jaxpr.jaxpr)
    carry_fwd, ext_fwd = fwd[:num_carry], fwd[num_carry:]
    move = [len(consts) + i == w for i, w in enumerate(carry_fwd)]
    new_consts: list[Any] = []
    if any(move):
        jaxpr = prune_outputs(jaxpr, [not m for m in move] + [True] * num_ys)
        jaxpr = move_binders_to_front(jaxpr, [False] * len(consts) + move + [False] * num_xs)
        new_consts = [a for a, m in zip(args, move + [False] * num_xs, strict=True) if m]
        args = [a for a, m in zip(args, move + [False] * num_xs, strict=True) if not m]
        consts = [*new_consts, *consts]
        num_carry -= len(new_consts)
    # A `ys` that is an `xs` slice forwarded unchanged is the `xs` itself.
    head = len(consts) + num_carry
    ext_to_ext = [w - len(consts) if w is not None and w >= head else None for w in ext_fwd]
    jaxpr = prune_outputs(jaxpr, [True] * num_carry + [w is None for w in ext_to_ext])
    outs = bind_scan(
        [*consts, *args], reverse=reverse, length=n, jaxpr=jaxpr,
        num_consts=len(consts), num_carry=num_carry, unroll=unroll,
    )  # fmt: skip
    carry_vals, rest = outs[:num_carry], iter(outs[num_carry:])
    ys = [next(rest) if w is None else forwarded_value(args[w]) for w in ext_to_ext]
    if any(move):
        it_c, it_k = iter(carry_vals), iter(new_consts)
        carry_vals = [next(it_k) if m else next(it_c) for m in move]
    return tree_util.tree_unflatten(traced.out_tree, [*carry_vals, *ys])  # type: ignore[no-any-return]  # a (carry, ys) pair


def map(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:
    """`f` applied to each slice of `xs` along the leading axis, as a `scan` (no carry).

    `batch_size` maps `vmap(f)` over batches of that many slices, then the remainder.
    """
    if batch_size is None:
        _, ys = scan(lambda _, x: ((), f(x)), (), xs)
        return ys
    leaves, treedef = tree_util.tree_flatten(xs)
    if not leaves:
        _, ys = scan(lambda _, x: ((), f(x)), (), xs)
        return ys
    total = leaves[0].shape[0]
    num_batches, remainder = (0, total) if batch_size == 0 else divmod(total, batch_size)
    used = num_batches * batch_size
    # Each leaf is cut into its batches and its remainder in turn, as JAX stages them.
    pieces = [
        (
            x[:used].reshape(num_batches, batch_size, *x.shape[1:]) if num_batches else None,
            x[used:] if remainder else None,
        )
        for x in leaves
    ]
    rest = tree_util.tree_unflatten(treedef, [r for _, r in pieces]) if remainder else None
    if not num_batches:
        return vmap(f)(rest)
    batched = tree_util.tree_unflatten(treedef, [b for b, _ in pieces])
    _, scan_ys = scan(lambda _, x: ((), vmap(f)(x)), (), batched)

    def flatten(y: Any) -> Any:
        return y.reshape(-1, *y.shape[2:])

    if rest is None:
        return tree_util.tree_map(flatten, scan_ys)
    rest_ys = vmap(f)(rest)
    return tree_util.tree_map(lambda a, b: concatenate([flatten(a), b], 0), scan_ys, rest_ys)


__all__ = ["bind_scan", "map", "promote_weak_init", "scan", "scan_p"]
