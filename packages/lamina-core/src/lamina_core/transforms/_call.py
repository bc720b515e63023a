"""The `jit` call primitive: a nested, separately compiled function inside a jaxpr.

`jit_p` carries the callee as a closed jaxpr and prints as JAX prints it (`jit[name=f
jaxpr={ … }] a b`). `stage_call` traces a Python function into that form: tracers the
function closes over become leading operands. Core evaluates the call with the reference
evaluator; the runtime installs compilation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from lamina_core.interpreters import StagingTrace, custom_staging_rules, trace_to_jaxpr
from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    DebugInfo,
    Effects,
    JaxprEqn,
    PpContext,
    PpSettings,
    Primitive,
    abstract_eval_rules,
    effects_rules,
    impl_rules,
    pp,
    pp_eqn_rules,
    pp_eqn_with_params,
    register_param_decoder,
)
from lamina_core.trace import eval_jaxpr, set_current_trace


class UnspecifiedValue:
    """The sharding of an input or output that the user did not specify."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UnspecifiedValue"


UNSPECIFIED: Final = UnspecifiedValue()

jit_p: Final = Primitive("jit", multiple_results=True)


@abstract_eval_rules.register(jit_p)
def _jit_abstract_eval(
    *args: AbstractValue, jaxpr: ClosedJaxpr, **params: Any
) -> list[AbstractValue]:
    if len(args) != len(jaxpr.in_avals):
        raise TypeError(
            f"jit '{params.get('name')}' takes {len(jaxpr.in_avals)} arguments, got {len(args)}"
        )
    return list(jaxpr.out_avals)


@effects_rules.register(jit_p)
def _jit_effects(*args: AbstractValue, jaxpr: ClosedJaxpr, **params: Any) -> Effects:
    return jaxpr.effects


@impl_rules.register(jit_p)
def _jit_impl(*args: Any, jaxpr: ClosedJaxpr, **params: Any) -> list[Any]:
    return eval_jaxpr(jaxpr, (), *args)


def _jit_pp(eqn: JaxprEqn, ctx: PpContext, settings: PpSettings) -> pp.Doc:
    params = eqn.params
    shown = [
        key
        for key in sorted(params)
        if key != "name"
        and key != "inline"
        and not (key == "donated_invars" and not any(params[key]))
        and not (
            key in ("in_shardings", "out_shardings") and all(s is UNSPECIFIED for s in params[key])
        )
        and not (key in ("in_layouts", "out_layouts") and all(x is None for x in params[key]))
        and not (key == "keep_unused" and not params[key])
        and not (key == "ctx_mesh" and not params[key])
        and not (key == "compiler_options_kvs" and not params[key])
    ]
    callee = params["jaxpr"].jaxpr
    if callee not in ctx.shared_jaxprs:
        # The callee's binders take the caller's names where they alias (JAX's layout).
        ctx.suggest_names(callee.invars, eqn.invars)
        ctx.suggest_names(callee.outvars, eqn.outvars)
    return pp_eqn_with_params(eqn, ctx, settings, ["name", *shown])


pp_eqn_rules.set(jit_p, _jit_pp)


def _jit_staging(trace: StagingTrace, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """JAX's staging of a `jit(inline=True)` call given no shardings or layouts: its callee's
    equations, in the caller's jaxpr (None otherwise: one `jit` equation)."""
    if not params["inline"] or any(
        s is not UNSPECIFIED for key in ("in_shardings", "out_shardings") for s in params[key]
    ):
        return None
    if any(x is not None for key in ("in_layouts", "out_layouts") for x in params[key]):
        return None
    closed: ClosedJaxpr = params["jaxpr"]
    jaxpr = closed.jaxpr
    with set_current_trace(trace):
        if closed.consts or jaxpr.effects or any(a.has_qdd or a.mutable for a in closed.in_avals):
            # Binding each equation again keeps the trace's account of effects and of the
            # mutable values' data.
            return eval_jaxpr(jaxpr, closed.consts, *args)
        return trace.inline_jaxpr(jaxpr, args)


custom_staging_rules.set(jit_p, _jit_staging)

closed_call_p: Final = Primitive("closed_call", multiple_results=True)
"""A call inlined when compiled (JAX's `closed_call`): what policy partial evaluation of a
`scan` wraps its loop-invariant part and its known loop in. Param: `call_jaxpr`."""


@abstract_eval_rules.register(closed_call_p)
def _closed_call_abstract_eval(
    *args: AbstractValue, call_jaxpr: ClosedJaxpr
) -> list[AbstractValue]:
    if len(args) != len(call_jaxpr.in_avals):
        raise TypeError(f"closed_call takes {len(call_jaxpr.in_avals)} arguments, got {len(args)}")
    return list(call_jaxpr.out_avals)


@effects_rules.register(closed_call_p)
def _closed_call_effects(*args: AbstractValue, call_jaxpr: ClosedJaxpr) -> Effects:
    return call_jaxpr.effects


@impl_rules.register(closed_call_p)
def _closed_call_impl(*args: Any, call_jaxpr: ClosedJaxpr) -> list[Any]:
    return eval_jaxpr(call_jaxpr, (), *args)


def jit_params(
    jaxpr: ClosedJaxpr,
    name: str,
    *,
    donated_invars: Sequence[bool] | None = None,
    keep_unused: bool = False,
    inline: bool = False,
) -> dict[str, Any]:
    """The full parameter set of a `jit` equation, with JAX's defaults."""
    n_in, n_out = len(jaxpr.in_avals), len(jaxpr.out_avals)
    return {
        "jaxpr": jaxpr,
        "in_shardings": (UNSPECIFIED,) * n_in,
        "out_shardings": (UNSPECIFIED,) * n_out,
        "in_layouts": (None,) * n_in,
        "out_layouts": (None,) * n_out,
        "donated_invars": tuple(donated_invars) if donated_invars is not None else (False,) * n_in,
        "ctx_mesh": None,
        "name": name,
        "keep_unused": keep_unused,
        "inline": inline,
        "compiler_options_kvs": (),
    }


@register_param_decoder("jit")
def _jit_decode(
    params: dict[str, Any], ins: Sequence[AbstractValue], outs: Sequence[AbstractValue]
) -> dict[str, Any]:
    # The print rule hides the params that have their defaults; a sharding left unspecified
    # among given ones prints as its repr, read as a word.
    out = {**jit_params(params["jaxpr"], params["name"]), **params}
    for key in ("in_shardings", "out_shardings"):
        out[key] = tuple(UNSPECIFIED if s == repr(UNSPECIFIED) else s for s in out[key])
    return out


def stage_call(
    fun: Callable[..., Sequence[Any]],
    in_avals: Sequence[AbstractValue],
    debug_info: DebugInfo | None = None,
) -> tuple[ClosedJaxpr, list[Any]]:
    """Trace `fun` for a call: the closed jaxpr takes its captured tracers as leading inputs.

    Returns the closed jaxpr (with no constvars) and the captured values to pass first.
    """
    closed = trace_to_jaxpr(fun, in_avals, debug_info)
    jaxpr = closed.jaxpr
    if not jaxpr.constvars:
        return closed, []
    opened = jaxpr.replace(constvars=(), invars=(*jaxpr.constvars, *jaxpr.invars))
    return ClosedJaxpr(opened, []), list(closed.consts)
