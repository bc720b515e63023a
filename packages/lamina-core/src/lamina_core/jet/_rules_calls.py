"""Jet rules of calls: `jit`, `closed_call` and the custom-derivative calls.

A `jit` or `closed_call` call is rebound on its jaxpr transformed by jet (primals then series
in, the same out), memoized per jaxpr, order and argument types; a call primitive's other
params are updated by `call_param_updaters` (JAX's table, which JAX's jet consults for its
call primitives; empty as in JAX: `closed_call` has no other params). As in JAX's jet, a
`custom_jvp` or `custom_vjp` function is jetted through its own definition: its rules are
ignored (the call is inlined into the jet trace, even where no operand varies).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from lamina_core.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.ir import AbstractValue, ClosedJaxpr, DebugInfo, Primitive
from lamina_core.jet._trace import (
    JetTrace,
    PyTreeDef,
    jet_call_rules,
    jet_fun,
    jet_rules,
    jet_subtrace,
    traceable,
)
from lamina_core.trace import jaxpr_as_fun, set_current_trace, typeof
from lamina_core.transforms import UNSPECIFIED, closed_call_p, jit_p
from lamina_core.tree import tree_util

call_param_updaters: dict[Primitive, Callable[[dict[str, Any], int], dict[str, Any]]] = {}
"""`updater(params, num_args) -> params`: a call primitive's params (its jaxpr aside) for its
rebinding on the jetted jaxpr, which takes `num_args` arguments (primals, then series)."""

_jetted: weakref.WeakKeyDictionary[ClosedJaxpr, dict[Any, Any]] = weakref.WeakKeyDictionary()


def _jet_jaxpr(
    closed: ClosedJaxpr, order: int, avals: tuple[AbstractValue, ...], in_tree: PyTreeDef
) -> tuple[ClosedJaxpr, PyTreeDef]:
    """`closed` under jet of `order`, on the leaves of `(primals, series)` (tree `in_tree`);
    also the tree of its `(primals_out, series_out)`."""
    entries = _jetted.setdefault(closed, {})
    key = (order, avals, in_tree)
    found = entries.get(key)
    if found is not None:
        return found  # type: ignore[no-any-return]
    flat, out_tree = traceable(jet_fun(jet_subtrace(jaxpr_as_fun(closed)), order), in_tree)
    info = closed.jaxpr.debug_info
    debug = None if info is None else DebugInfo(info.traced_for, info.func_src_info)
    result = trace_to_jaxpr(flat, avals, debug), out_tree()
    entries[key] = result
    return result


def _jit_jet(primals_in: Sequence[Any], series_in: Sequence[Any], **params: Any) -> Any:
    leaves, in_tree = tree_util.tree_flatten((list(primals_in), list(series_in)))
    order = len(series_in[0])
    avals = tuple(typeof(x) for x in leaves)
    jetted, out_tree = _jet_jaxpr(params["jaxpr"], order, avals, in_tree)
    n_in = len(primals_in) * order
    n_out = len(params["out_shardings"]) * order
    new_params = dict(
        params,
        jaxpr=jetted,
        in_shardings=tuple(params["in_shardings"]) + (UNSPECIFIED,) * n_in,
        out_shardings=tuple(params["out_shardings"]) + (UNSPECIFIED,) * n_out,
        in_layouts=tuple(params["in_layouts"]) + (None,) * n_in,
        out_layouts=tuple(params["out_layouts"]) + (None,) * n_out,
        donated_invars=tuple(params["donated_invars"]) + (False,) * n_in,
    )
    outs = jit_p.bind(*leaves, **new_params)
    return tree_util.tree_unflatten(out_tree, outs)


jet_rules[jit_p] = _jit_jet


def _closed_call_jet(
    primals_in: Sequence[Any], series_in: Sequence[Any], *, call_jaxpr: ClosedJaxpr, **params: Any
) -> Any:
    leaves, in_tree = tree_util.tree_flatten((list(primals_in), list(series_in)))
    avals = tuple(typeof(x) for x in leaves)
    jetted, out_tree = _jet_jaxpr(call_jaxpr, len(series_in[0]), avals, in_tree)
    update = call_param_updaters.get(closed_call_p)
    new_params = update(params, len(leaves)) if update is not None else params
    outs = closed_call_p.bind(*leaves, call_jaxpr=jetted, **new_params)
    return tree_util.tree_unflatten(out_tree, outs)


jet_rules[closed_call_p] = _closed_call_jet


def _inline_call(trace: JetTrace, *args: Any, call_jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    with set_current_trace(trace):
        return jaxpr_as_fun(call_jaxpr)(*args)


jet_call_rules.set(custom_jvp_call_p, _inline_call)
jet_call_rules.set(custom_vjp_call_p, _inline_call)
