"""Primitives defined through JAX's public extension API: `Primitive("name")`, `def_impl`,
`def_abstract_eval`, `def_effectful_abstract_eval`.

Such a primitive keeps its rules as attributes, as JAX's does (`p.impl`, `p.abstract_eval`,
replaceable at any time), and is registered once, at construction, into core's tables with
rules that read those attributes: abstract evaluation and effects (`abstract_eval_rules`,
`effects_rules`) and eager evaluation (`value_impl_rules`, in `python_impl_primitives`: the
eager evaluators call `impl` on the values as they are and nothing else, as JAX's eval trace
does). Until a rule is defined, using it raises JAX's `NotImplementedError`. Transformation
and lowering rules are registered by their own tables' owners (JAX's `ad.primitive_jvps`,
`batching.primitive_batchers`, `mlir.register_lowering`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, cast

from lamina_core.ir import (
    AbstractValue,
    Effects,
    Primitive,
    abstract_eval_rules,
    effects_rules,
    evaluated_on_values,
    no_effects,
    python_impl_primitives,
    value_impl_rules,
)
from lamina_core.trace._tracing import Trace, current_trace
from lamina_core.trace._values import typeof

AbstractEvalResult = tuple[AbstractValue | Sequence[AbstractValue], Effects]


class UserPrimitive(Primitive):
    """A primitive whose rules are defined by its `def_*` methods (JAX's `Primitive`).

    Identity is intended. Subclasses may set the class attributes JAX's primitives have
    (`multiple_results = True`); an instance's own assignment (`p.multiple_results = True`)
    works too.
    """

    call_primitive: ClassVar[bool] = False
    map_primitive: ClassVar[bool] = False
    ref_primitive: ClassVar[bool] = False
    ref_allocating: ClassVar[bool] = False
    skip_canonicalization: ClassVar[bool] = False
    is_effectful: ClassVar[Callable[..., bool] | None] = None

    def __init__(self, name: str) -> None:
        declared = getattr(type(self), "multiple_results", False)
        # Without a subclass's declaration, the attribute found is the base class's slot.
        super().__init__(name, multiple_results=declared if type(declared) is bool else False)
        self._last_effects: tuple[tuple[Any, ...], dict[str, Any], Effects] | None = None
        abstract_eval_rules.set(self, self._abstract_eval_rule)
        effects_rules.set(self, self._effects_rule)
        value_impl_rules.set(self, self._impl_rule)
        evaluated_on_values.add(self)
        python_impl_primitives.add(self)

    # --- JAX's definition API ---------------------------------------------------------------

    def def_impl(self, impl: Callable[..., Any]) -> Callable[..., Any]:
        """`impl(*values, **params)`: the primitive applied to concrete values (eagerly)."""
        self.impl = impl  # type: ignore[method-assign]  # JAX's rules are replaceable attributes
        return impl

    def def_abstract_eval(self, abstract_eval: Callable[..., Any]) -> Callable[..., Any]:
        """`abstract_eval(*avals, **params)`: the output aval(s); the primitive has no effects."""

        def with_no_effects(*avals: Any, **params: Any) -> AbstractEvalResult:
            return abstract_eval(*avals, **params), no_effects

        self.abstract_eval = with_no_effects  # type: ignore[method-assign]  # as def_impl
        return abstract_eval

    def def_effectful_abstract_eval(
        self, effectful_abstract_eval: Callable[..., AbstractEvalResult]
    ) -> Callable[..., AbstractEvalResult]:
        """`abstract_eval(*avals, **params) -> (aval(s), effects)`."""
        self.abstract_eval = effectful_abstract_eval  # type: ignore[method-assign]  # as def_impl
        return effectful_abstract_eval

    def def_bind_with_trace(self, bind_with_trace: Callable[..., Any]) -> Callable[..., Any]:
        """`bind_with_trace(trace, args, avals, params)`: how `bind` applies the primitive."""
        self.bind_with_trace = bind_with_trace  # type: ignore[method-assign]  # as def_impl
        return bind_with_trace

    def impl(self, *args: Any, **params: Any) -> Any:
        raise NotImplementedError(f"Evaluation rule for '{self.name}' not implemented")

    def abstract_eval(self, *avals: Any, **params: Any) -> AbstractEvalResult:
        raise NotImplementedError(f"Abstract evaluation for '{self.name}' not implemented")

    def bind(self, *args: Any, **params: Any) -> Any:
        if "bind_with_trace" not in self.__dict__ and (
            type(self).bind_with_trace is UserPrimitive.bind_with_trace
        ):
            return super().bind(*args, **params)
        return self.bind_with_trace(current_trace(), args, [typeof(x) for x in args], params)

    def bind_with_trace(
        self, trace: Trace, args: Sequence[Any], avals: Sequence[Any], params: dict[str, Any], /
    ) -> Any:
        del avals  # the trace types the operands itself
        return trace.process_primitive(self, list(args), dict(params))

    def get_bind_params(self, params: dict[str, Any]) -> dict[str, Any]:
        return params

    def is_high(self, *avals: Any, **params: Any) -> bool:
        return False

    def to_lojax(self, *args: Any, **params: Any) -> Any:
        raise NotImplementedError(
            f"Primitive '{self.name}' has is_high=True but no to_lojax lowering rule."
        )

    # --- the rules registered into core's tables --------------------------------------------

    def _abstract_eval_rule(self, *avals: AbstractValue, **params: Any) -> Any:
        out, effects = self.abstract_eval(*avals, **params)
        # Staging asks for the effects right after, with the same operands: answer from here
        # rather than running the user's rule twice.
        self._last_effects = (avals, params, effects)
        return list(cast(Sequence[AbstractValue], out)) if self.multiple_results else out

    def _effects_rule(self, *avals: AbstractValue, **params: Any) -> Effects:
        last = self._last_effects
        if last is not None and len(last[0]) == len(avals):
            try:
                same = all(a is b for a, b in zip(last[0], avals, strict=True)) and bool(
                    last[1] == params
                )
            except (TypeError, ValueError):  # params holding arrays compare elementwise
                same = False
            if same:
                return frozenset(last[2])
        return frozenset(self.abstract_eval(*avals, **params)[1])

    def _impl_rule(self, *args: Any, **params: Any) -> Any:
        return self.impl(*args, **params)
