"""`jax.interpreters.partial_eval`: tracing to jaxprs, partial evaluation and DCE, as Lamina's.

`trace_to_jaxpr_nounits` runs a function with some inputs known (values) and some unknown
(types): known work is done now, work reading an unknown value is staged, as Lamina's
linearization does (`SplitTrace`). The rule tables are Lamina's seen as dicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias

from lamina.extend.linear_util import WrappedFun
from lamina_core.interpreters import (
    SplitTrace,
    TangentTrace,
    partial_eval_rules,
    trace_to_jaxpr,
)
from lamina_core.interpreters import StagingTracer as DynamicJaxprTracer
from lamina_core.interpreters import StagingTracer as JaxprTracer
from lamina_core.interpreters import dce_jaxpr as _dce_jaxpr
from lamina_core.interpreters import (
    dce_rules as _dce_rules,
)
from lamina_core.interpreters import (
    partial_eval_jaxpr_custom_rules as _custom_rules,
)
from lamina_core.ir import AbstractValue, ClosedJaxpr, Jaxpr, JaxprEqn, RuleMapping
from lamina_core.trace import current_trace, set_current_trace, typeof
from lamina_core.transforms import closed_call_p

Val: TypeAlias = Any

custom_partial_eval_rules: RuleMapping[Any] = RuleMapping(partial_eval_rules)
"""Rules splitting a primitive into known and unknown parts: `rule(trace, *args, **params)`."""
dce_rules: RuleMapping[Any] = RuleMapping(_dce_rules)
"""`rule(used_outputs, eqn) -> (used_inputs, new eqn or None)`."""
partial_eval_jaxpr_custom_rules: RuleMapping[Any] = RuleMapping(_custom_rules)
"""`rule(saveable, unks_in, inst_in, eqn) -> (known eqn, staged eqn, unks_out, inst_out,
residuals)`."""

__all__ = [
    "DynamicJaxprTracer",
    "JaxprTracer",
    "PartialVal",
    "Val",
    "custom_partial_eval_rules",
    "dce_jaxpr",
    "dce_jaxpr_call_rule",
    "dce_jaxpr_closed_call_rule",
    "dce_jaxpr_consts",
    "dce_rules",
    "partial_eval_jaxpr_custom_rules",
    "trace_to_jaxpr_dynamic",
    "trace_to_jaxpr_nounits",
]


class PartialVal(tuple[AbstractValue | None, Any]):
    """A value known now (`(None, value)`) or only by its type (`(aval, None)`)."""

    __slots__ = ()

    def __new__(cls, xs: tuple[AbstractValue | None, Any]) -> PartialVal:
        pv, const = xs
        if (pv is None) == (const is None) and not (pv is None and const is None):
            raise ValueError(f"PartialVal is known or unknown, not both: {xs!r}")
        return tuple.__new__(cls, xs)

    @classmethod
    def known(cls, const: Any) -> PartialVal:
        return PartialVal((None, const))

    @classmethod
    def unknown(cls, aval: AbstractValue) -> PartialVal:
        return PartialVal((aval, None))

    def is_known(self) -> bool:
        return self[0] is None

    def get_known(self) -> Any:
        """The value if known, else None."""
        return self[1] if self[0] is None else None

    def get_aval(self) -> AbstractValue:
        """The type: of the known value, or the unknown's."""
        known = self.get_known()
        return typeof(known) if self[0] is None else self[0]


def trace_to_jaxpr_nounits(
    fun: WrappedFun, pvals: Sequence[PartialVal], instantiate: bool | Sequence[bool] = False
) -> tuple[Jaxpr, list[PartialVal], list[Any]]:
    """Run `fun` with the known inputs' values and the unknown inputs' types.

    Returns the jaxpr of the unknown outputs (taking the residuals as constvars, then the
    unknown inputs), each output's `PartialVal`, and the residuals' values. `instantiate`
    (per output) makes a known output unknown, computed by the jaxpr.
    """
    parent = current_trace()
    staged = TangentTrace(parent, fun.debug_info)
    split = SplitTrace(parent, staged)
    args, invars = [], []
    for pval in pvals:
        if pval.is_known():
            args.append(pval.get_known())
        else:
            tracer = staged.new_arg(pval.get_aval())
            invars.append(tracer.jaxpr_var)
            args.append(tracer)
    with set_current_trace(split):
        outs = list(fun.call_wrapped(*args))
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(outs)
    out_pvals, unknown_outs = [], []
    for out, inst in zip(outs, instantiate, strict=True):
        if split.is_unknown(out) or inst:
            out_pvals.append(PartialVal.unknown(typeof(out)))
            unknown_outs.append(out)
        else:
            out_pvals.append(PartialVal.known(out))
    jaxpr, residuals = staged.finish(invars, unknown_outs)
    return jaxpr, out_pvals, residuals


def trace_to_jaxpr_dynamic(
    fun: WrappedFun,
    in_avals: Sequence[AbstractValue],
    *,
    keep_inputs: list[bool] | None = None,
    lower: bool = False,
    auto_dce: bool = False,
) -> tuple[Jaxpr, list[AbstractValue], list[Any]]:
    """Stage `fun` out on arguments of types `in_avals`: its jaxpr, output types and the
    values of the jaxpr's constvars."""
    del keep_inputs, lower  # every input is kept; Lamina stages lojax and hi types alike
    closed = trace_to_jaxpr(lambda *xs: list(fun.call_wrapped(*xs)), in_avals, fun.debug_info)
    jaxpr = closed.jaxpr
    if auto_dce:
        jaxpr = dce_jaxpr(jaxpr, [True] * len(jaxpr.outvars), instantiate=True)[0]
    return jaxpr, list(closed.out_avals), list(closed.consts)


def dce_jaxpr(
    jaxpr: Jaxpr, used_outputs: bool | Sequence[bool], instantiate: bool | Sequence[bool] = False
) -> tuple[Jaxpr, list[bool]]:
    """`jaxpr` reduced to the `used_outputs`, taking only the inputs it reads (and those
    `instantiate` keeps); returns which inputs it takes."""
    n_out, n_in = len(jaxpr.outvars), len(jaxpr.invars)
    used = [used_outputs] * n_out if isinstance(used_outputs, bool) else list(used_outputs)
    keep = [instantiate] * n_in if isinstance(instantiate, bool) else list(instantiate)
    trimmed, used_inputs = _dce_jaxpr(jaxpr, used)
    taken = [u or k for u, k in zip(used_inputs, keep, strict=True)]
    invars = [v for v, t in zip(trimmed.invars, taken, strict=True) if t]
    return trimmed.replace(invars=invars), taken


def dce_jaxpr_consts(
    jaxpr: Jaxpr, used_outputs: Sequence[bool], instantiate: bool | Sequence[bool] = False
) -> tuple[Jaxpr, list[bool], list[bool]]:
    """As `dce_jaxpr`, the constvars trimmed too: returns which consts and inputs it takes."""
    n_consts = len(jaxpr.constvars)
    opened = jaxpr.replace(constvars=(), invars=(*jaxpr.constvars, *jaxpr.invars))
    keep = [instantiate] * len(jaxpr.invars) if isinstance(instantiate, bool) else instantiate
    trimmed, taken = dce_jaxpr(opened, used_outputs, [False] * n_consts + list(keep))
    used_consts, used_inputs = taken[:n_consts], taken[n_consts:]
    n_kept = sum(used_consts)
    closed = trimmed.replace(constvars=trimmed.invars[:n_kept], invars=trimmed.invars[n_kept:])
    return closed, used_consts, used_inputs


def dce_jaxpr_call_rule(
    used_outputs: list[bool], eqn: JaxprEqn
) -> tuple[list[bool], JaxprEqn | None]:
    """The DCE rule of a call primitive holding an open jaxpr as `call_jaxpr`."""
    if not any(used_outputs) and not eqn.effects:
        return [False] * len(eqn.invars), None
    call_jaxpr = eqn.params["call_jaxpr"]
    trimmed, used_inputs = dce_jaxpr(call_jaxpr, used_outputs)
    new = eqn.replace(
        invars=tuple(v for v, u in zip(eqn.invars, used_inputs, strict=True) if u),
        outvars=tuple(v for v, u in zip(eqn.outvars, used_outputs, strict=True) if u),
        params={**eqn.params, "call_jaxpr": trimmed},
    )
    return used_inputs, new


def dce_jaxpr_closed_call_rule(
    used_outputs: list[bool], eqn: JaxprEqn
) -> tuple[list[bool], JaxprEqn | None]:
    """The DCE rule of `closed_call` (a `ClosedJaxpr` as `call_jaxpr`)."""
    if not isinstance(eqn.params.get("call_jaxpr"), ClosedJaxpr):
        raise TypeError("dce_jaxpr_closed_call_rule: the equation holds no closed call_jaxpr")
    return _dce_rules[closed_call_p](used_outputs, eqn)
