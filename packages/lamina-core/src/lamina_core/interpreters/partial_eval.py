"""Partial evaluation: known values computed now, unknown ones staged.

`SplitTrace` is the partial evaluator that linearization runs jvp rules under: an operation
whose operands are all known (primal-side values) is applied by the parent trace; one that
reads an unknown value (a tracer of the tangent trace) is staged into the tangent trace,
its known operands becoming residuals. Primitives that contain jaxprs (`jit`, `remat2`) split
themselves instead, with a rule from `partial_eval_rules`: a known call on the parent and an
unknown call staged, as JAX's `_pjit_partial_eval` and `remat_partial_eval` do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from lamina_core.primitive import Primitive, RuleTable
from lamina_core.staging import StagingTrace, StagingTracer
from lamina_core.tracing import Trace, bind_with_trace

PartialEvalRule: TypeAlias = Callable[..., Any]
"""`rule(trace: SplitTrace, *args, **params) -> out(s)`, called when some args are unknown.

Known outputs are values of the parent trace, unknown ones tracers of `trace.tangent_trace`;
`trace.bind_known` and `trace.bind_unknown` apply primitives on either side.
"""

partial_eval_rules: RuleTable[PartialEvalRule] = RuleTable("partial evaluation")


class SplitTrace(Trace):
    """Known work on the parent, work touching an unknown value staged. Identity intended."""

    __slots__ = ("tangent_trace",)

    def __init__(self, parent: Trace, tangent_trace: StagingTrace) -> None:
        super().__init__(parent)
        self.tangent_trace = tangent_trace

    def is_unknown(self, x: Any) -> bool:
        return isinstance(x, StagingTracer) and x._trace is self.tangent_trace

    def bind_known(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        parent = self.parent
        assert parent is not None
        return bind_with_trace(parent, prim, args, params)

    def bind_unknown(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        return bind_with_trace(self.tangent_trace, prim, args, params)

    def process_primitive(
        self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]
    ) -> Any:
        if not any(self.is_unknown(x) for x in args):
            return self.bind_known(prim, args, params)
        rule = partial_eval_rules.get(prim)
        if rule is not None:
            return rule(self, *args, **params)
        return self.bind_unknown(prim, args, params)


__all__ = ["PartialEvalRule", "SplitTrace", "partial_eval_rules"]
