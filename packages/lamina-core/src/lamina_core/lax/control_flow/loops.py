"""`while_loop` and `fori_loop`: the `while` primitive.

`while_p` takes `[*cond_consts, *body_consts, *carry]`; `cond_jaxpr` maps
`[*cond_consts, *carry]` to a `bool[]` and `body_jaxpr` maps `[*body_consts, *carry]` to the
next carry. `fori_loop` with concrete bounds is a `scan` (so reverse mode works), otherwise
a `while` over `(i, upper, x)`, exactly as JAX chooses.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from lamina_core.interpreters import dce_jaxpr
from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    Effects,
    Jaxpr,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    dtypes,
    effects_rules,
    impl_rules,
    register_param_decoder,
    types_match,
)
from lamina_core.lax._elementwise import add, lt
from lamina_core.lax._structural import convert_element_type
from lamina_core.lax.control_flow.common import (
    avals_short,
    check_carry_type,
    forwarding,
    move_binders_to_front,
    prune_outputs,
    trace_body,
)
from lamina_core.lax.control_flow.scan import promote_weak_init, scan
from lamina_core.trace import eval_jaxpr, typeof, with_qdd
from lamina_core.trace import is_concrete_value as is_concrete
from lamina_core.tree import tree_util

while_p: Final = Primitive("while", multiple_results=True)


@abstract_eval_rules.register(while_p)
def _while_abstract_eval(
    *avals: AbstractValue,
    cond_jaxpr: ClosedJaxpr,
    body_jaxpr: ClosedJaxpr,
    cond_nconsts: int,
    body_nconsts: int,
) -> list[AbstractValue]:
    carry = avals[cond_nconsts + body_nconsts :]
    if len(cond_jaxpr.in_avals) != cond_nconsts + len(carry):
        raise TypeError(
            f"while_loop len(cond_jaxpr.in_avals)={len(cond_jaxpr.in_avals)} but "
            f"len(cond_consts_avals) + len(in_avals)={cond_nconsts + len(carry)}"
        )
    if len(body_jaxpr.in_avals) != body_nconsts + len(carry):
        raise TypeError(
            f"while_loop len(body_jaxpr.in_avals)={len(body_jaxpr.in_avals)} but "
            f"len(body_consts_avals) + len(in_avals)={body_nconsts + len(carry)}"
        )
    ins = [*avals[:cond_nconsts], *carry]
    if not all(map(types_match, cond_jaxpr.in_avals, ins)):
        raise TypeError(
            f"while_loop cond_jaxpr takes {avals_short(cond_jaxpr.in_avals)}, called with "
            f"{avals_short(ins)}"
        )
    body_ins = avals[cond_nconsts:]
    if not all(map(types_match, body_jaxpr.in_avals, body_ins)):
        raise TypeError(
            f"while_loop body_jaxpr takes {avals_short(body_jaxpr.in_avals)}, called with "
            f"{avals_short(body_ins)}"
        )
    return list(body_jaxpr.out_avals)


@effects_rules.register(while_p)
def _while_effects(*avals: AbstractValue, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
                   **_: Any) -> Effects:  # fmt: skip
    return cond_jaxpr.effects | body_jaxpr.effects


@register_param_decoder(while_p.name)
def _while_decoder(
    params: dict[str, Any], ins: Sequence[AbstractValue], outs: Sequence[AbstractValue]
) -> dict[str, Any]:
    """The params in binding order: text sorts them, and the printer names shared jaxprs in
    the order params hold them."""
    order = ("cond_nconsts", "cond_jaxpr", "body_nconsts", "body_jaxpr")
    return {**{k: params[k] for k in order if k in params}, **params}


@impl_rules.register(while_p)
def _while_impl(
    *args: Any,
    cond_jaxpr: ClosedJaxpr,
    body_jaxpr: ClosedJaxpr,
    cond_nconsts: int,
    body_nconsts: int,
) -> list[Any]:
    cconsts = args[:cond_nconsts]
    bconsts = args[cond_nconsts : cond_nconsts + body_nconsts]
    carry = list(args[cond_nconsts + body_nconsts :])

    def pred() -> np.ndarray:
        return np.asarray(eval_jaxpr(cond_jaxpr, (), *cconsts, *carry)[0])

    p = pred()
    if p.ndim == 0:
        while bool(p):
            carry = eval_jaxpr(body_jaxpr, (), *bconsts, *carry)
            p = pred()
        return carry
    # A batched predicate (from vmap): run while any lane runs; finished lanes keep values.
    while p.any():
        new = eval_jaxpr(body_jaxpr, (), *bconsts, *carry)
        carry = [
            np.where(p.reshape(p.shape + (1,) * (np.ndim(o) - p.ndim)), n, o)
            for n, o in zip(new, carry, strict=True)
        ]
        p = pred()
    return carry


def bind_while(
    cond_consts: list[Any],
    body_consts: list[Any],
    carry: list[Any],
    cond_jaxpr: ClosedJaxpr,
    body_jaxpr: ClosedJaxpr,
) -> list[Any]:
    outs: list[Any] = while_p.bind(
        *cond_consts,
        *body_consts,
        *carry,
        cond_nconsts=len(cond_consts),
        cond_jaxpr=cond_jaxpr,
        body_nconsts=len(body_consts),
        body_jaxpr=body_jaxpr,
    )
    return outs


# --- the API -----------------------------------------------------------------------------------


def while_loop(cond_fun: Any, body_fun: Any, init_val: Any) -> Any:
    """Run `body_fun` on the carry while `cond_fun` of it is true; returns the final carry.

    Raises:
      TypeError: if `cond_fun` does not return a boolean scalar, or the carry changes
        structure or type in `body_fun` (JAX's messages).
    """
    if not (callable(body_fun) and callable(cond_fun)):
        raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")
    leaves, in_tree = tree_util.tree_flatten(init_val)
    example = (init_val,)

    def make(avals: list[AbstractValue]) -> tuple[Any, Any]:
        args_tree = tree_util.tree_structure((tree_util.tree_unflatten(in_tree, leaves),))
        cond_t = trace_body("while_cond", cond_fun, args_tree, avals, example)
        body_t = trace_body("while_body", body_fun, args_tree, avals, example)
        if not tree_util.treedef_is_leaf(cond_t.out_tree) or len(cond_t.out_avals) != 1:
            raise TypeError(
                f"cond_fun must return a boolean scalar, but got pytree "
                f"{tree_util.treedef_repr(cond_t.out_tree)}."
            )
        pred = cond_t.out_avals[0]
        if not (isinstance(pred, ShapedArray) and pred.shape == () and pred.dtype == np.bool_):
            raise TypeError(
                "cond_fun must return a boolean scalar, but got output type(s) "
                f"{list(cond_t.out_avals)}."
            )
        return cond_t, body_t

    avals = with_qdd([typeof(x) for x in leaves], leaves)
    cond_t, body_t = make(avals)
    if len(body_t.out_avals) != len(avals):
        check_carry_type("while_loop body", body_fun, in_tree, avals, body_t.out_tree,
                         body_t.out_avals)  # fmt: skip
    leaves, changed = promote_weak_init(leaves, avals, body_t.out_avals)
    if changed:
        avals = with_qdd([typeof(x) for x in leaves], leaves)
        cond_t, body_t = make(avals)
    check_carry_type("while_loop body", body_fun, in_tree, avals, body_t.out_tree, body_t.out_avals)
    if any(v.aval.has_qdd and v.initial_qdd != v.final_qdd for v in body_t.jaxpr.jaxpr.invars):
        raise TypeError("type-changing mutations not allowed in while_loop body")
    cond_consts, body_consts = list(cond_t.consts), list(body_t.consts)
    cond_jaxpr, body_jaxpr = cond_t.jaxpr, body_t.jaxpr
    # A carry the body forwards unchanged and the predicate never reads is a body const.
    nb, nc = len(body_consts), len(cond_consts)
    forwarded = [nb + i == f for i, f in enumerate(forwarding(body_jaxpr.jaxpr))]
    trimmed, used = dce_jaxpr(cond_jaxpr.jaxpr, [True], prune_invars=False)
    move = [f and not u for f, u in zip(forwarded, used[nc:], strict=True)]
    init = list(leaves)
    new_consts: list[Any] = []
    if any(move):
        cond_jaxpr = _prune_cond(cond_jaxpr, trimmed, nc, move)
        body_jaxpr = prune_outputs(body_jaxpr, [not m for m in move])
        body_jaxpr = move_binders_to_front(body_jaxpr, [False] * nb + move)
        new_consts = [x for x, m in zip(init, move, strict=True) if m]
        init = [x for x, m in zip(init, move, strict=True) if not m]
        body_consts = [*new_consts, *body_consts]
    outs = bind_while(cond_consts, body_consts, init, cond_jaxpr, body_jaxpr)
    if any(move):
        it_out, it_const = iter(outs), iter(new_consts)
        outs = [next(it_const) if m else next(it_out) for m in move]
    return tree_util.tree_unflatten(body_t.out_tree, outs)


_prune_cond_cache: weakref.WeakKeyDictionary[ClosedJaxpr, dict[Any, ClosedJaxpr]] = (
    weakref.WeakKeyDictionary()
)


def _prune_cond(closed: ClosedJaxpr, trimmed: Jaxpr, nconsts: int, move: list[bool]) -> ClosedJaxpr:
    """The predicate (`trimmed`: without dead equations) without the binders of carries moved
    to body consts, which it never reads."""
    entries = _prune_cond_cache.setdefault(closed, {})
    key = (nconsts, tuple(move))
    if key not in entries:
        j = trimmed
        invars = (*j.invars[:nconsts],
                  *(v for v, m in zip(j.invars[nconsts:], move, strict=True) if not m))  # fmt: skip
        entries[key] = ClosedJaxpr(j.replace(invars=invars), closed.consts)
    return entries[key]


def _fori_dtype(lower: Any, upper: Any) -> Any:
    lo, hi = dtypes.dtype(lower), dtypes.dtype(upper)
    if lo == hi:
        return lo
    if np.issubdtype(lo, np.signedinteger) and np.issubdtype(hi, np.signedinteger):
        lo_weak, hi_weak = dtypes.is_weakly_typed(lower), dtypes.is_weakly_typed(upper)
        if lo_weak and not hi_weak:
            return hi
        if hi_weak and not lo_weak:
            return lo
    raise TypeError(
        f"lower and upper arguments to fori_loop must have equal types, got {lo.name} and {hi.name}"
    )


_fori_bodies: weakref.WeakKeyDictionary[Any, tuple[Callable[..., Any], Callable[..., Any]]] = (
    weakref.WeakKeyDictionary()
)


def _fori_wrappers(body_fun: Callable[..., Any]) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The scan and while bodies over `body_fun`, one pair per function (so traces are reused)."""
    try:
        found = _fori_bodies.get(body_fun)
    except TypeError:
        found = None
    if found is not None:
        return found
    ref = weakref.ref(body_fun) if _weakrefable(body_fun) else (lambda: body_fun)

    # The carry is named `loop_carry`, as JAX's wrappers name it in messages.
    def scanned(loop_carry: Any, _: Any) -> Any:
        i, x = loop_carry
        fun = ref()
        assert fun is not None
        return (i + 1, fun(i, x)), None

    def while_body(loop_carry: Any) -> Any:
        i, upper, x = loop_carry
        fun = ref()
        assert fun is not None
        return add(i, np.array(1, dtypes.dtype(i))), upper, fun(i, x)

    for wrapper in (scanned, while_body):
        wrapper.__name__ = getattr(body_fun, "__name__", wrapper.__name__)
        setattr(wrapper, "__wrapped__", body_fun)  # noqa: B010  # source info looks through
    pair = (scanned, while_body)
    with contextlib.suppress(TypeError):
        _fori_bodies[body_fun] = pair
    return pair


def _weakrefable(x: Any) -> bool:
    try:
        weakref.ref(x)
    except TypeError:
        return False
    return True


def _fori_cond(carry: Any) -> Any:
    i, upper, _ = carry
    return lt(i, upper)


def fori_loop(
    lower: Any,
    upper: Any,
    body_fun: Callable[[Any, Any], Any],
    init_val: Any,
    *,
    unroll: int | bool | None = None,
) -> Any:
    """`for i in range(lower, upper): val = body_fun(i, val)`; returns `val`.

    With concrete bounds this is a `scan` of `upper - lower` steps (so it can be
    reverse-differentiated); otherwise a `while` loop, and `unroll` must be left unset.
    """
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    dtype = _fori_dtype(lower, upper)
    use_scan = False
    lo = hi = 0
    if is_concrete(lower) and is_concrete(upper):
        try:
            lo, hi = int(lower), int(upper)
        except TypeError:
            use_scan = False
        else:
            use_scan = True
    scanned, while_body = _fori_wrappers(body_fun)
    if use_scan:
        length = max(hi - lo, 0)
        (_, result), _ = scan(
            scanned, (lo, init_val), None, length=length,
            unroll=False if unroll is None else unroll,
        )  # fmt: skip
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError(
            "Can only use `unroll` in `fori_loop` if the loop bounds are statically known."
        )
    if dtypes.dtype(lower) != dtype:
        lower = convert_element_type(lower, dtype)
    if dtypes.dtype(upper) != dtype:
        upper = convert_element_type(upper, dtype)
    _, _, result = while_loop(_fori_cond, while_body, (lower, upper, init_val))
    return result


__all__ = ["bind_while", "fori_loop", "while_loop", "while_p"]
