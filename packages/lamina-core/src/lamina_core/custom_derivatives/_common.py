"""What `custom_jvp` and `custom_vjp` share: the user-facing zero and primal records, argument
resolution, tracing the decorated function into the call's jaxpr and binding its call, the
checks of a rule's primal outputs, and the call primitives' evaluation and printing."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from lamina_core.interpreters import Zero, instantiate_zeros, zeros_like_aval
from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    DebugInfo,
    Effects,
    JaxprEqn,
    PpContext,
    PpSettings,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    effects_rules,
    impl_rules,
    pp,
    pp_eqn_rules,
    pp_eqn_with_params,
    register_param_decoder,
    types_match,
)
from lamina_core.trace import Tracer, eval_jaxpr, typeof
from lamina_core.transforms import debug_name, func_src_info, stage_call
from lamina_core.tree import tree_util


class RuleName:
    """A user function carried in params; prints as its name, as JAX prints it."""

    __slots__ = ("fun",)

    def __init__(self, fun: Callable[..., Any]) -> None:
        self.fun = fun

    def __repr__(self) -> str:
        return fun_name(self.fun)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fun(*args, **kwargs)


def fun_name(fun: Callable[..., Any]) -> str:
    """The name JAX's debug info gives a user function (`<lambda>` for lambdas, the wrapped
    function's for a partial, `<unknown>` for a callable object)."""
    return debug_name(fun)


class SymbolicZero:
    """A zero (co)tangent, as user rules see it with `symbolic_zeros=True`.

    It answers the questions an array would about its type (`shape`, `dtype`, ...) through its
    `aval`, so a rule can build a real zero if it needs one.
    """

    def __init__(self, aval: AbstractValue) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return "SymbolicZero"

    def __getattr__(self, name: str) -> Any:
        if name == "aval":  # not set yet (copying, unpickling): no delegation loop
            raise AttributeError(name)
        try:
            return getattr(self.aval, name)
        except AttributeError:
            raise AttributeError(f"SymbolicZero has no attribute {name}") from None

    @staticmethod
    def from_primal_value(val: Any) -> SymbolicZero:
        return SymbolicZero(typeof(val).to_tangent_aval())


def zero_from_primal(val: Any, symbolic_zeros: bool = False) -> Any:
    """Zero tangents for a pytree of primals: `SymbolicZero`s, or arrays of zeros."""

    def zero(x: Any) -> Any:
        aval = typeof(x).to_tangent_aval()
        return SymbolicZero(aval) if symbolic_zeros else zeros_like_aval(aval)

    return tree_util.tree_map(zero, val)


def to_user_zero(t: Any) -> Any:
    """An internal `Zero` as the `SymbolicZero` a user rule sees."""
    return SymbolicZero(t.aval) if type(t) is Zero else t


def for_user(ts: Sequence[Any], symbolic_zeros: bool) -> list[Any]:
    """(Co)tangents as a user rule sees them: zeros as `SymbolicZero`s under
    `symbolic_zeros`, else as arrays of zeros."""
    return [to_user_zero(t) if symbolic_zeros else instantiate_zeros(t) for t in ts]


def from_user_zero(t: Any) -> Any:
    """A user rule's `SymbolicZero` as the internal `Zero`."""
    return Zero(t.aval) if type(t) is SymbolicZero else t


@dataclass(slots=True)
class CustomVJPPrimal:
    """An argument of a `custom_vjp` fwd rule under `symbolic_zeros`: the value, and whether
    it is being differentiated."""

    value: Any
    perturbed: bool


def custom_vjp_primal_tree_values(tree: Any) -> Any:
    """The values of a pytree of `CustomVJPPrimal`s, as the plain arguments."""

    def value(leaf: Any) -> Any:
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value

    return tree_util.tree_map(value, tree)


class CustomVJPException(Exception):
    """A custom_vjp function was differentiated with respect to a value it closes over."""

    def __init__(self) -> None:
        super().__init__(
            "Detected differentiation of a custom_vjp function with respect to a closed-over "
            "value. That isn't supported because the custom VJP rule only specifies how to "
            "differentiate the custom_vjp function with respect to explicit input parameters. "
            "Try passing the closed-over value into the custom_vjp function as an argument, "
            "and adapting the custom_vjp fwd and bwd rules."
        )


def resolve_args(
    fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], kind: str
) -> tuple[Any, ...]:
    """The positional arguments of a call, keywords and defaults placed by `fun`'s signature."""
    try:
        # A `functools.partial`'s signature is opaque, as JAX treats it.
        target = (lambda *a, **k: None) if isinstance(fun, partial) else fun
        bound = inspect.signature(target).bind(*args, **kwargs)
        bound.apply_defaults()
        passed = [k for k in bound.kwargs if k in kwargs]
        if passed:
            raise TypeError(
                "The following keyword arguments could not be resolved to positions: "
                + ", ".join(passed)
            )
    except TypeError as e:
        raise TypeError(
            f"The input arguments to the {kind}-decorated function {fun_name(fun)} could not "
            f"be resolved to positional-only arguments. Binding failed with the error:\n{e}"
        ) from e
    return tuple(bound.args)


def bind_static(
    fun: Callable[..., Any], static_argnums: tuple[int, ...], args: tuple[Any, ...]
) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """`fun` with its static arguments bound, and the remaining (dynamic) arguments."""
    if not static_argnums:
        return fun, args
    fixed = {i: args[i] for i in static_argnums}
    dyn = tuple(a for i, a in enumerate(args) if i not in fixed)

    def bound(*dyn_args: Any) -> Any:
        it = iter(dyn_args)
        return fun(*[fixed[i] if i in fixed else next(it) for i in range(len(args))])

    return bound, dyn


@dataclass(frozen=True, slots=True)
class Traced:
    """The decorated function traced for one call: its jaxpr and how to call and unpack it."""

    jaxpr: ClosedJaxpr
    consts: list[Any]
    """Values the function closes over, passed as the call's leading operands."""
    leaves: list[Any]
    in_tree: Any
    out_tree: Any


def trace_callee(fun: Callable[..., Any], args: tuple[Any, ...], what: str) -> Traced:
    leaves, in_tree = tree_util.tree_flatten(args)
    out_trees: list[Any] = []

    def flat(*xs: Any) -> list[Any]:
        out = fun(*tree_util.tree_unflatten(in_tree, xs))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_trees.append(out_tree)
        return out_leaves

    avals = [typeof(x) for x in leaves]
    jaxpr, consts = stage_call(flat, avals, DebugInfo(what, func_src_info(fun)))
    return Traced(jaxpr, consts, leaves, in_tree, out_trees[0])


def bind_call(
    prim: Primitive,
    traced: Traced,
    rules: dict[str, Any],
    *,
    symbolic_zeros: bool,
    fun_name: str,
) -> Any:
    """Bind `prim` (a call primitive) on the traced function and its user `rules`: the
    function's outputs, as its pytree."""
    outs = prim.bind(
        *traced.consts,
        *traced.leaves,
        call_jaxpr=traced.jaxpr,
        **rules,
        num_consts=len(traced.consts),
        symbolic_zeros=symbolic_zeros,
        in_tree=traced.in_tree,
        out_tree=traced.out_tree,
        fun_name=fun_name,
    )
    return tree_util.tree_unflatten(traced.out_tree, outs)


def has_tracer(tree: Any) -> bool:
    return any(isinstance(x, Tracer) for x in tree_util.tree_leaves(tree))


# --- messages ------------------------------------------------------------------------------


def type_str(aval: Any) -> str:
    """An aval as JAX's messages print it (`float32[3]`)."""
    if isinstance(aval, ShapedArray):
        return aval.str_short(short_dtypes=False)
    return str(aval.str_short(True))


def typed_tree_str(tree: Any, avals: Sequence[Any]) -> str:
    """A tree of types, as JAX's structure-mismatch messages show it."""
    shown = tree_util.tree_unflatten(tree, [type_str(a) for a in avals])
    return str(shown).replace("'", "")


def treedef_str(treedef: Any) -> str:
    return str(treedef).replace("PyTreeSpec(", "PyTreeDef(", 1)


def check_primal_outputs(
    p_leaves: Sequence[Any],
    p_tree: Any,
    params: dict[str, Any],
    *,
    kind: str,
    rule: str,
    leads: tuple[str, str],
) -> list[Any]:
    """The types of a user rule's primal outputs, checked against the decorated function's
    (its call's `params`): the same pytree, then the same leaf types, in JAX's words. `kind`
    is the decorator, `rule` names the rule (`"JVP rule"`, `"fwd rule"`); `leads` begin the
    two messages."""
    primal_name = params["fun_name"]
    call_jaxpr: ClosedJaxpr = params["call_jaxpr"]
    p_avals, f_avals = [typeof(p) for p in p_leaves], list(call_jaxpr.out_avals)
    same_tree = p_tree == params["out_tree"]
    if same_tree and all(map(types_match, p_avals, f_avals)):
        return p_avals
    got, want = typed_tree_str(p_tree, p_avals), typed_tree_str(params["out_tree"], f_avals)
    function = f"while the {kind}-decorated function {primal_name} had output"
    if not same_tree:
        raise TypeError(
            f"{leads[0]}instead the {rule} output's first element had container/pytree "
            f"structure:\n    {got}\n{function} container/pytree structure:\n    {want}."
        )
    raise TypeError(
        f"{leads[1]}instead the {rule} output's first element had shapes/dtypes of:\n"
        f"    {got}\n{function} shapes/dtypes of:\n    {want}"
    )


def strip_weak(aval: Any) -> Any:
    return aval.normalize() if hasattr(aval, "normalize") else aval


def mismatch_extra(a: Any, b: Any) -> str:
    """Why two array types differ, as JAX words it."""
    if not (isinstance(a, ShapedArray) and isinstance(b, ShapedArray)):
        return ""
    why = []
    if a.dtype != b.dtype:
        why.append("the dtypes do not match")
    if a.shape != b.shape:
        why.append("the shapes do not match")
    if not why:
        return ""
    if len(why) == 1:
        return ", so " + why[0]
    return ", so " + ", ".join(why[:-1]) + ", and " + why[-1]


# --- the call primitives' evaluation and printing --------------------------------------------


def _call_abstract_eval(*args: AbstractValue, call_jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    return list(call_jaxpr.out_avals)


def _call_effects(*args: AbstractValue, call_jaxpr: ClosedJaxpr, **_: Any) -> Effects:
    return call_jaxpr.effects


def _call_impl(*args: Any, call_jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    return eval_jaxpr(call_jaxpr, (), *args)


def _types(avals: Sequence[AbstractValue]) -> str:
    return "(" + ", ".join(a.str_short(True) for a in avals) + ")"


def call_primitive(name: str, shown_params: tuple[str, ...]) -> Primitive:
    """The call primitive of a decorated function: typed, evaluated and printed by its
    `call_jaxpr` (its rules matter only to differentiation). It prints with `name` first,
    then `shown_params` sorted, as JAX prints these calls (`num_consts` only when nonzero);
    its other params are Lamina's bookkeeping."""
    prim = Primitive(name, multiple_results=True)
    abstract_eval_rules.set(prim, _call_abstract_eval)
    effects_rules.set(prim, _call_effects)
    impl_rules.set(prim, _call_impl)

    def rule(eqn: JaxprEqn, ctx: PpContext, settings: PpSettings) -> pp.Doc:
        params = eqn.params
        shown = [
            k
            for k in sorted(shown_params)
            if k in params and not (k == "num_consts" and not params[k])
        ]
        # JAX derives the name from the callee's debug info; Lamina carries it as `fun_name`.
        named = eqn.replace(params={"name": params["fun_name"], **params})
        return pp_eqn_with_params(named, ctx, settings, ["name", *shown])

    pp_eqn_rules.set(prim, rule)

    @register_param_decoder(name)
    def decode(
        params: dict[str, Any], ins: Sequence[AbstractValue], outs: Sequence[AbstractValue]
    ) -> dict[str, Any]:
        # Read back from text: it prints and evaluates (by `call_jaxpr`); the rule functions
        # and pytree structures it does not show are not recovered.
        decoded = {"num_consts": 0, **params, "fun_name": params["name"]}
        del decoded["name"]
        callee = decoded["call_jaxpr"].in_avals
        if len(ins) != len(callee) or not all(map(types_match, ins, callee)):
            raise TypeError(f"operands of types {_types(ins)}, the callee takes {_types(callee)}")
        return decoded

    return prim
