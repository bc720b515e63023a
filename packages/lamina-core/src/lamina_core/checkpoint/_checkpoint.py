"""Rematerialization: `checkpoint` (= `remat`) and its `remat2` primitive, as JAX's.

`checkpoint(f)` stages `f` as one `remat2` equation holding an open jaxpr. Evaluation runs the
jaxpr; forward mode rebinds `remat2` on the jvp of the jaxpr; reverse mode (`checkpoint_ad`)
splits that jvp'd remat by the policy. DCE trims the body as JAX's `remat_dce` does.

Transformed jaxprs are cached per jaxpr object (as JAX's are), so a checkpointed function used
twice shares its jaxprs, which then print once, as a `let`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any, Final

from lamina_core.checkpoint._policies import checkpoint_name, checkpoint_policies
from lamina_core.config import config
from lamina_core.interpreters import Policy, Zero, dce_jaxpr, dce_rules, jvp_rules
from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    DebugInfo,
    Effects,
    Jaxpr,
    JaxprEqn,
    Primitive,
    abstract_eval_rules,
    effects_rules,
    impl_rules,
    register_open_jaxpr_params,
)
from lamina_core.trace import Tracer, api_boundary, eval_jaxpr, typeof
from lamina_core.transforms import (
    argument_names,
    func_src_info,
    jvp_jaxpr,
    split_jvp_outs,
    stage_call,
    wraps_as_jax,
)
from lamina_core.tree import tree_util

remat_p: Final = Primitive("remat2", multiple_results=True)
register_open_jaxpr_params(remat_p.name, ["jaxpr"])  # read back by `ir.parse`

PreventCse = bool | tuple[bool, ...]

_Key = tuple[Any, ...]
_Cache = weakref.WeakKeyDictionary[Any, dict[_Key, Any]]


def cached(cache: _Cache, owner: Any, key: _Key, make: Callable[[], Any]) -> Any:
    """`make()`, memoized per `owner` (weakly held) and `key`."""
    entries = cache.setdefault(owner, {})
    if key not in entries:
        entries[key] = make()
    return entries[key]


@abstract_eval_rules.register(remat_p)
def _remat_abstract_eval(*args: AbstractValue, jaxpr: Jaxpr, **_: Any) -> list[AbstractValue]:
    return [v.aval for v in jaxpr.outvars]


@effects_rules.register(remat_p)
def _remat_effects(*args: AbstractValue, jaxpr: Jaxpr, **_: Any) -> Effects:
    return jaxpr.effects


@impl_rules.register(remat_p)
def _remat_impl(*args: Any, jaxpr: Jaxpr, **_: Any) -> list[Any]:
    return eval_jaxpr(jaxpr, (), *args)


def bind_remat(
    args: Sequence[Any], jaxpr: Jaxpr, prevent_cse: PreventCse, differentiated: bool, policy: Any
) -> list[Any]:
    """`remat2` applied to `args`; a tuple `prevent_cse` has one flag per operand."""
    if isinstance(prevent_cse, tuple) and len(prevent_cse) != len(args):
        raise ValueError(f"remat2: {len(prevent_cse)} prevent_cse flags for {len(args)} operands")
    outs: list[Any] = remat_p.bind(
        *args, jaxpr=jaxpr, prevent_cse=prevent_cse, differentiated=differentiated, policy=policy
    )
    return outs


# --- the API -----------------------------------------------------------------------------------


class _Hashably:
    """A static argument as a cache key: by value if hashable, else by identity (as JAX)."""

    __slots__ = ("hash", "hashable", "val")

    def __init__(self, val: Any) -> None:
        self.val = val
        try:
            self.hash = hash(val)
            self.hashable = True
        except TypeError:
            self.hash = id(val)
            self.hashable = False

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Hashably):
            return False
        if self.hashable and other.hashable:
            return bool(self.val == other.val)
        return self.val is other.val


_trace_cache: _Cache = weakref.WeakKeyDictionary()


def _static_positions(static_argnums: Any, nargs: int) -> frozenset[int]:
    if not (type(static_argnums) is tuple and all(type(d) is int for d in static_argnums)):
        raise TypeError(
            "the `static_argnums` argument to `jax.checkpoint` / `jax.remat` must be an int, "
            f"tuple of ints or, bool, but got value {static_argnums}"
        )
    if not all(-nargs <= d < nargs for d in static_argnums):
        raise ValueError(
            "the `static_argnums` argument to `jax.checkpoint` / `jax.remat` can only take "
            "integer values greater than or equal to `-len(args)` and less than `len(args)`, "
            f"but got {static_argnums}, while `len(args)` = {nargs}"
        )
    return frozenset(d % nargs for d in static_argnums)


def _trace(
    fun: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    statics: frozenset[int],
) -> tuple[Jaxpr, list[Any], Any, list[Any]]:
    """`fun` traced on the dynamic arguments: (open jaxpr, consts, out tree, flat args)."""
    dyn = [a for i, a in enumerate(args) if i not in statics]
    leaves, in_tree = tree_util.tree_flatten((tuple(dyn), kwargs))
    in_avals = tuple(typeof(x) for x in leaves)
    static_vals = tuple(_Hashably(args[i]) for i in sorted(statics))
    key = (statics, static_vals, len(args), in_tree, in_avals, config.trace_context())
    try:
        entries = _trace_cache.setdefault(fun, {})
    except TypeError:  # not weakly referenceable: no caching
        entries = {}
    found = entries.get(key)
    if found is not None:
        jaxpr, consts, out_tree = found
        return jaxpr, consts, out_tree, leaves
    out_trees: list[Any] = []

    def flat(*xs: Any) -> list[Any]:
        dyn_args, kw = tree_util.tree_unflatten(in_tree, xs)
        it = iter(dyn_args)
        full = [args[i] if i in statics else next(it) for i in range(len(args))]
        out_leaves, out_tree = tree_util.tree_flatten(fun(*full, **kw))
        out_trees.append(out_tree)
        return out_leaves

    debug = DebugInfo(
        "checkpoint / remat", func_src_info(fun), argument_names(fun, args, kwargs, set(statics))
    )
    closed, consts = stage_call(flat, in_avals, debug)
    result = (closed.jaxpr, consts, out_trees[0])
    # A trace that captured tracers of an enclosing trace is only valid inside it.
    if not any(isinstance(c, Tracer) for c in consts) and not any(
        isinstance(s.val, Tracer) for s in static_vals
    ):
        entries[key] = result
    return closed.jaxpr, consts, out_trees[0], leaves


class _Deprecated:
    __slots__ = ()


_DEPRECATED: Final = _Deprecated()


def checkpoint(
    fun: Callable[..., Any],
    *,
    prevent_cse: bool | Sequence[bool] = True,
    policy: Policy | None = None,
    static_argnums: int | tuple[int, ...] = (),
    static_argnames: str | Sequence[str] = (),
    concrete: bool | _Deprecated = _DEPRECATED,
) -> Callable[..., Any]:
    """`fun`, whose intermediate values reverse mode recomputes instead of storing.

    Args:
      fun: the function (pytrees of arrays in and out).
      prevent_cse: keep XLA from merging the recomputation with the original computation
        (an optimization barrier); a bool, or a pytree prefix of bools over the arguments.
      policy: which intermediate values may be saved after all (`checkpoint_policies`);
        None saves nothing.
      static_argnums: positions of arguments that are Python values, not arrays.
      static_argnames: accepted for JAX parity; JAX 0.10.2's checkpoint ignores it too.
      concrete: removed in JAX 0.10; passing it raises.

    Returns:
      A function computing what `fun` computes, staged as one `remat2` equation.

    Raises:
      NotImplementedError: if `concrete` is passed.
      TypeError: if `prevent_cse` is neither a bool nor a sequence of them.
    """
    del static_argnames
    if not isinstance(concrete, _Deprecated):
        raise NotImplementedError(
            "The `concrete` option to `jax.checkpoint` was deprecated in JAX v0.8.2, and "
            "removed in JAX v0.10.0. In its place please use `static_argnums`; for details "
            "refer to https://docs.jax.dev/en/latest/jep/11830-new-remat-checkpoint.html."
        )
    statics = (static_argnums,) if isinstance(static_argnums, int) else static_argnums
    cse: PreventCse
    if isinstance(prevent_cse, bool):
        cse = prevent_cse
    elif isinstance(prevent_cse, Sequence):
        cse = tuple(prevent_cse)
    else:
        raise TypeError(
            "prevent_cse must be a bool or tuple of bools, got "
            f"type(prevent_cse)={type(prevent_cse)}"
        )

    @api_boundary
    @wraps_as_jax(fun)
    def fun_remat(*args: Any, **kwargs: Any) -> Any:
        positions = _static_positions(statics, len(args))
        jaxpr, consts, out_tree, leaves = _trace(fun, args, kwargs, positions)
        flags: PreventCse = cse
        if isinstance(cse, tuple):
            dyn = [a for i, a in enumerate(args) if i not in positions]
            per_leaf = [
                flag for flag, x in zip(cse, dyn, strict=True) for _ in tree_util.tree_leaves(x)
            ]
            flags = (False,) * len(consts) + tuple(per_leaf)
        outs = bind_remat([*consts, *leaves], jaxpr, flags, False, policy)
        return tree_util.tree_unflatten(out_tree, outs)

    return fun_remat


def remat(
    fun: Callable[..., Any],
    *,
    prevent_cse: bool = True,
    policy: Policy | None = None,
    static_argnums: int | tuple[int, ...] = (),
    concrete: bool | _Deprecated = _DEPRECATED,
) -> Callable[..., Any]:
    """Alias of `checkpoint`."""
    return checkpoint(
        fun,
        prevent_cse=prevent_cse,
        policy=policy,
        static_argnums=static_argnums,
        concrete=concrete,
    )


# --- closing and opening jaxprs (cached, so transformations of one jaxpr share objects) ------

_close_cache: weakref.WeakKeyDictionary[Jaxpr, ClosedJaxpr] = weakref.WeakKeyDictionary()
_open_cache: weakref.WeakKeyDictionary[ClosedJaxpr, Jaxpr] = weakref.WeakKeyDictionary()


def close_jaxpr(jaxpr: Jaxpr) -> ClosedJaxpr:
    closed = _close_cache.get(jaxpr)
    if closed is None:
        closed = _close_cache[jaxpr] = ClosedJaxpr(jaxpr, [])
    return closed


def open_jaxpr(closed: ClosedJaxpr) -> Jaxpr:
    """`closed`'s jaxpr with its constvars as leading invars (JAX's `convert_constvars_jaxpr`)."""
    jaxpr = closed.jaxpr
    if not jaxpr.constvars:
        return jaxpr
    opened = _open_cache.get(closed)
    if opened is None:
        opened = _open_cache[closed] = jaxpr.replace(
            constvars=(), invars=(*jaxpr.constvars, *jaxpr.invars)
        )
    return opened


# --- forward mode ------------------------------------------------------------------------------


def _remat_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    jaxpr: Jaxpr,
    prevent_cse: PreventCse,
    differentiated: bool,
    policy: Any,
) -> tuple[list[Any], list[Any]]:
    nonzeros = tuple(type(t) is not Zero for t in tangents)
    jvp_closed, out_nz = jvp_jaxpr(close_jaxpr(jaxpr), nonzeros)
    nz_tangents = [t for t in tangents if type(t) is not Zero]
    consts = jvp_closed.consts
    if isinstance(prevent_cse, tuple):
        prevent_cse = (False,) * len(consts) + prevent_cse + (True,) * len(nz_tangents)
    outs = bind_remat(
        [*consts, *primals, *nz_tangents],
        open_jaxpr(jvp_closed),
        prevent_cse,
        differentiated,
        policy,
    )
    primals_out, tangents_out = split_jvp_outs(outs, out_nz)
    return list(primals_out), tangents_out


jvp_rules.set(remat_p, _remat_jvp)


# --- dead-code elimination ---------------------------------------------------------------------


def partition(flags: Sequence[bool], items: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """`items` where the flag is False, and where it is True (JAX's `partition_list`)."""
    return (
        [x for f, x in zip(flags, items, strict=True) if not f],
        [x for f, x in zip(flags, items, strict=True) if f],
    )


_dce_cache: _Cache = weakref.WeakKeyDictionary()


def dce(jaxpr: Jaxpr, used_outputs: tuple[bool, ...]) -> tuple[Jaxpr, list[bool]]:
    """JAX's `dce_jaxpr`: unused equations and inputs dropped; cached per jaxpr object."""
    result: tuple[Jaxpr, list[bool]] = cached(
        _dce_cache,
        jaxpr,
        used_outputs,
        lambda: dce_jaxpr(jaxpr, used_outputs, prune_invars=True),
    )
    return result


def _remat_dce(used_outputs: list[bool], eqn: JaxprEqn) -> tuple[list[bool], JaxprEqn | None]:
    if not any(used_outputs) and not eqn.effects:
        return [False] * len(eqn.invars), None
    body, used_inputs = dce(eqn.params["jaxpr"], tuple(used_outputs))
    prevent_cse = eqn.params["prevent_cse"]
    if isinstance(prevent_cse, tuple):
        prevent_cse = tuple(p for p, u in zip(prevent_cse, used_inputs, strict=True) if u)
    if not any(used_inputs) and not any(used_outputs) and body.effects:
        return used_inputs, None
    new = eqn.replace(
        invars=tuple(v for v, u in zip(eqn.invars, used_inputs, strict=True) if u),
        outvars=tuple(v for v, u in zip(eqn.outvars, used_outputs, strict=True) if u),
        params={**eqn.params, "jaxpr": body, "prevent_cse": prevent_cse},
        effects=body.effects,
    )
    return used_inputs, new


dce_rules.set(remat_p, _remat_dce)

__all__ = [
    "PreventCse",
    "bind_remat",
    "cached",
    "checkpoint",
    "checkpoint_name",
    "checkpoint_policies",
    "close_jaxpr",
    "dce",
    "open_jaxpr",
    "partition",
    "remat",
    "remat_p",
]
