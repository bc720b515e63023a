"""Taylor-mode differentiation: the jet interpreter, its rule table and `jet` itself.

A `JetTrace` carries each value with a truncated Taylor series of fixed `order`: a list of
`order` terms (the unscaled coefficients), or `zero_series` when the value does not vary.
A primitive whose operands all have `zero_series` is applied by the parent trace alone;
otherwise each missing term becomes explicit zeros and the primitive's rule from `jet_rules`
runs under the parent, returning the primal output and its series. Rules are plain formulas
over the lax frontend (`_rules_lax`, `_rules_calls`); this module names no primitive.

As in JAX, `jet_rules` is a table users may assign into (`jet_rules[p] = rule`), and asking it
for a primitive it lacks raises `KeyError(p)`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import AbstractValue, Primitive, RuleTable
from lamina_core.trace import (
    EVAL_TRACE,
    Trace,
    Tracer,
    bind_with_trace,
    call_under,
    current_trace,
    eager_value,
    set_current_trace,
    typeof,
)
from lamina_core.tree import tree_util

PyTreeDef: TypeAlias = Any


class ZeroTerm:
    """One Taylor term known to be zero (`zero_term`, the only instance)."""

    __slots__ = ()


class ZeroSeries:
    """A whole series known to be zero (`zero_series`, the only instance)."""

    __slots__ = ()


zero_term = ZeroTerm()
zero_series = ZeroSeries()
# Both are pytrees without leaves, so they pass through flattening as JAX's do.
tree_util.register_pytree_node(ZeroTerm, lambda _: ((), None), lambda _, __: zero_term)
tree_util.register_pytree_node(ZeroSeries, lambda _: ((), None), lambda _, __: zero_series)

Series: TypeAlias = "list[Any] | tuple[Any, ...] | ZeroSeries"

JetRule: TypeAlias = Callable[..., tuple[Any, Any]]
"""`rule(primals_in, series_in, **params) -> (primal_out, series_out)`: lists of terms, or
lists of those for multiple-result primitives; `zero_series` for a constant output."""


class JetRules(RuleTable[JetRule]):
    """`jet_rules`: a rule table with the dict behaviour JAX's users rely on."""

    def __setitem__(self, prim: Primitive, rule: JetRule) -> None:
        self.replace(prim, rule)

    def __getitem__(self, prim: Primitive) -> JetRule:
        rule = self.rules.get(prim)
        if rule is None:
            raise KeyError(prim)
        return rule


jet_rules = JetRules("jet")

jet_call_rules: RuleTable[Callable[..., Any]] = RuleTable("jet (inlined call)")
"""Rules run in the jet trace itself, whatever the operands' series: `rule(trace, *args,
**params)`. For calls JAX's jet inlines (custom derivative calls: their function is traced
by jet, their rules ignored)."""


class JetTracer(Tracer):
    """A value of Taylor-mode differentiation: its primal and its series of terms."""

    __slots__ = ("primal", "terms")
    jax_name = "JetTracer"

    def __init__(self, trace: JetTrace, primal: Any, terms: Series) -> None:
        assert type(terms) in (ZeroSeries, list, tuple)
        self._trace = trace
        self.primal = primal
        self.terms = terms

    @property
    def aval(self) -> AbstractValue:
        return typeof(self.primal)

    def full_lower(self) -> Any:
        """The primal alone when every term is zero, else this tracer."""
        if self.terms is zero_series or all(t is zero_term for t in self.terms):  # type: ignore[union-attr]  # a list or tuple here
            return self.primal
        return self

    def where_created(self) -> str:
        return self.primal.where_created() if isinstance(self.primal, Tracer) else ""


class JetTrace(Trace):
    """Taylor-mode differentiation of `order` terms inside `parent`. Identity is intended.

    `tag` names the `jet` call: a trace owns the tracers of every trace with its tag.
    """

    __slots__ = ("order", "tag")

    def __init__(self, tag: object, parent: Trace, order: int) -> None:
        super().__init__(parent)
        self.tag = tag
        self.order = order

    @property
    def parent_trace(self) -> Trace:
        parent = self.parent
        assert parent is not None
        return parent

    def describe(self) -> str:
        return "JetTrace"

    def to_primal_terms_pair(self, val: Any) -> tuple[Any, Series]:
        if isinstance(val, JetTracer) and val._trace.tag is self.tag:  # type: ignore[attr-defined]  # a JetTrace's
            return val.primal, val.terms
        return val, zero_series

    def process_primitive(
        self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]
    ) -> Any:
        call_rule = jet_call_rules.rules.get(prim)
        if call_rule is not None:
            return call_rule(self, *args, **params)
        primals, series = [], []
        for x in args:
            p, s = self.to_primal_terms_pair(x)
            primals.append(p)
            series.append(s)
        parent = self.parent_trace
        if all(s is zero_series for s in series):
            out = bind_with_trace(parent, prim, primals, params)
            if prim.multiple_results:
                return [JetTracer(self, p, zero_series) for p in out]
            return JetTracer(self, out, zero_series)
        primal_out, series_out = call_under(parent, self._apply_rule, prim, primals, series, params)
        if prim.multiple_results:
            return [JetTracer(self, p, s) for p, s in zip(primal_out, series_out, strict=True)]
        return JetTracer(self, primal_out, series_out)

    def _apply_rule(
        self, prim: Primitive, primals: list[Any], series: list[Series], params: dict[str, Any]
    ) -> tuple[Any, Any]:
        order = self.order
        # A constant operand frontends left on the host (`1` in `1 / x`) becomes an array of
        # the eager evaluator, as JAX's operands are: the rules' arithmetic on it then stages
        # as JAX's does instead of folding in NumPy.
        primals = [_as_array(p) for p in primals]
        # Zeros are always made explicit (as JAX does), so rules see only arrays.
        full = [
            [_zeros_like_value(x) for _ in range(order)]
            if isinstance(s, ZeroSeries)
            else [_zeros_like_value(x) if t is zero_term else t for t in s]
            for x, s in zip(primals, series, strict=True)
        ]
        return jet_rules[prim](primals, full, **params)


class HostConstant(np.ndarray):
    """A constant a rule keeps on the host, as JAX's rules' typed NumPy literals stay: the
    rules it reaches fold arithmetic on it in NumPy, staging nothing."""


def host_constant(value: Any) -> Any:
    """`value` marked to stay on the host when it reaches a jet rule (NumPy values only)."""
    return np.asarray(value).view(HostConstant) if isinstance(value, np.ndarray) else value


def _as_array(x: Any) -> Any:
    if isinstance(x, (np.ndarray, np.generic)) and not isinstance(x, HostConstant):
        return call_under(EVAL_TRACE, eager_value, x)
    return x


def _zeros_like_value(x: Any) -> Any:
    return jnp.zeros(jnp.shape(x), dtype=jnp.result_type(x))


def fact(n: int) -> Any:
    """`n!` as a float array, computed as JAX's jet does (`exp(lgamma(n + 1))`)."""
    return lax.exp(lax.lgamma(n + 1.0))


JetFun: TypeAlias = Callable[[Sequence[Any], Sequence[Any]], tuple[list[Any], list[Any]]]


def jet_subtrace(f: Callable[..., Sequence[Any]]) -> Callable[..., tuple[list[Any], list[Any]]]:
    """`f` (flat in, flat out) run in a new `JetTrace`: `(tag, order, primals, series) ->
    (out_primals, out_series)`, an output's series `zero_series` if it does not vary."""

    def subtraced(
        tag: object, order: int, primals: Sequence[Any], series: Sequence[Series]
    ) -> tuple[list[Any], list[Any]]:
        trace = JetTrace(tag, current_trace(), order)
        tracers = [JetTracer(trace, p, s) for p, s in zip(primals, series, strict=False)]
        with set_current_trace(trace):
            outs = f(*tracers)
        pairs = [trace.to_primal_terms_pair(out) for out in outs]
        return [p for p, _ in pairs], [s for _, s in pairs]

    return subtraced


def jet_fun(f: Callable[..., tuple[list[Any], list[Any]]], order: int) -> JetFun:
    """`f` (as `jet_subtrace` makes it) under a fresh tag, constant outputs' series as zeros."""

    def fun(primals: Sequence[Any], series: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        out_primals, out_series = f(object(), order, primals, series)
        out_series = [
            [jnp.zeros_like(p)] * order if s is zero_series else s
            for p, s in zip(out_primals, out_series, strict=False)
        ]
        return out_primals, out_series

    return fun


def traceable(
    f: JetFun, in_tree_def: PyTreeDef
) -> tuple[Callable[..., list[Any]], Callable[[], PyTreeDef]]:
    """`f` on the leaves of `(primals, series)` (of tree `in_tree_def`), returning the leaves
    of its `(primals_out, series_out)`; also a thunk giving their tree once it has run."""
    store: list[PyTreeDef] = []

    def flat(*primals_and_series: Any) -> list[Any]:
        primals, series = tree_util.tree_unflatten(in_tree_def, list(primals_and_series))
        out_flat, out_tree = tree_util.tree_flatten(f(primals, series))
        store.append(out_tree)
        return out_flat

    return flat, lambda: store[-1]


def jet(
    fun: Callable[..., Any],
    primals: Sequence[Any],
    series: Sequence[Sequence[Any]],
    factorial_scaled: bool = True,
    **_: Any,
) -> tuple[Any, Any]:
    """Taylor-mode higher-order differentiation: `fun`'s output series from its inputs'.

    Given each input's primal and its first `K` derivatives along a curve (`series`), gives
    `fun`'s output and its first `K` derivatives along that curve, propagating truncated
    Taylor polynomials primitive by primitive instead of nesting first-order derivatives.

    Args:
        fun: the function, of arrays, returning an array or a pytree of arrays.
        primals: a tuple or list of the primal arguments (arrays or scalars, not pytrees).
        series: one tuple or list of terms per argument, all of one length `K`.
        factorial_scaled: if True (the default), term `k` is the `k`-th derivative; if False,
            it is the `k`-th Taylor coefficient (the derivative over `k!`), in and out.

    Returns:
        `(primals_out, series_out)`: `fun(*primals)`, and the output's terms with the tree of
        the output.

    Raises:
        ValueError: arguments with series of different lengths, or not arrays.

    Example:
        >>> f0, (f1, f2) = jet(lax.sin, (0.5,), ((1.0, 0.0),))  # sin, cos, -sin at 0.5
    """
    try:
        (order,) = set(map(len, series))
    except ValueError:
        raise ValueError("jet terms have inconsistent lengths for different arguments") from None
    for i, (x, terms) in enumerate(zip(primals, series, strict=False)):
        if not tree_util.treedef_is_leaf(tree_util.tree_structure(x)):
            raise ValueError(f"primal value at position {i} is not an array")
        for j, t in enumerate(terms):
            if not tree_util.treedef_is_leaf(tree_util.tree_structure(t)):
                raise ValueError(f"term {j} for argument {i} is not an array")
    out_trees: list[PyTreeDef] = []

    def flat_fun(*args: Any) -> list[Any]:
        leaves, tree = tree_util.tree_flatten(fun(*args))
        out_trees.append(tree)
        return leaves

    if factorial_scaled:
        series = [[t / fact(k + 1) for k, t in enumerate(terms)] for terms in series]
    out_primals, out_series = jet_fun(jet_subtrace(flat_fun), order)(primals, series)
    if factorial_scaled:
        out_series = [[t * fact(k + 1) for k, t in enumerate(terms)] for terms in out_series]
    tree = out_trees[-1]
    return tree_util.tree_unflatten(tree, out_primals), tree_util.tree_unflatten(tree, out_series)


def jet2(
    fun: Callable[..., Any], primals: Sequence[Any], series: Sequence[Sequence[Any]], **kw: Any
) -> tuple[Any, Any]:
    """`jet` on Taylor coefficients (`factorial_scaled=False`): what rules compose with."""
    return jet(fun, primals, series, factorial_scaled=False, **kw)
