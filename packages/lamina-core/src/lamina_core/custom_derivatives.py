"""User-defined derivative rules: `custom_jvp` and `custom_vjp`, as JAX's.

A decorated function binds one call primitive whose `call_jaxpr` is the function traced for
the arguments' types (closed-over tracers become leading operands, `num_consts`), so staging
records one `custom_jvp_call`/`custom_vjp_call` equation and evaluation runs the jaxpr. Under
differentiation the user's rule runs instead:

- `custom_jvp_call`'s jvp rule calls the user's jvp function; under reverse mode the generic
  linearization runs that rule, splitting it into primal and tangent work, as JAX does;
- `custom_vjp_call` runs `fwd` on the primal side and leaves a `custom_lin` equation on the
  tangent side whose transpose calls `bwd`; `custom_lin` cannot be evaluated (forward mode of
  a custom_vjp function is an error, raised only when it is evaluated, as in JAX).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from lamina_core import pp, tree_util
from lamina_core.api import func_src_info
from lamina_core.avals import AbstractValue
from lamina_core.call import stage_call
from lamina_core.effects import Effects
from lamina_core.evaluate import eval_jaxpr
from lamina_core.interpreters.jvp import jvp_rules, not_differentiable
from lamina_core.interpreters.linearize import linearization_rules
from lamina_core.interpreters.transpose import backward_pass, is_undefined, transpose_rules
from lamina_core.interpreters.zeros import Zero, instantiate_zeros
from lamina_core.jaxpr import ClosedJaxpr, DebugInfo, JaxprEqn
from lamina_core.pretty import PpContext, PpSettings, hide_params, pp_eqn_rules, pp_eqn_with_params
from lamina_core.primitive import Primitive
from lamina_core.rules import abstract_eval_rules, effects_rules, impl_rules
from lamina_core.values import typeof


class RuleName:
    """A user function carried in params; prints as its name, as JAX prints it."""

    __slots__ = ("fun",)

    def __init__(self, fun: Callable[..., Any]) -> None:
        self.fun = fun

    def __repr__(self) -> str:
        return str(getattr(self.fun, "__name__", self.fun))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fun(*args, **kwargs)


def _fun_name(fun: Callable[..., Any]) -> str:
    return str(getattr(fun, "__name__", type(fun).__name__))


def _resolve(
    fun: Callable[..., Any], nondiff_argnums: tuple[int, ...], args: tuple[Any, ...]
) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """`fun` with its non-differentiable arguments bound, and the remaining arguments."""
    if not nondiff_argnums:
        return fun, args
    fixed = {i: args[i] for i in nondiff_argnums}
    rest = tuple(a for i, a in enumerate(args) if i not in fixed)

    def bound(*dyn: Any) -> Any:
        it = iter(dyn)
        return fun(*[fixed[i] if i in fixed else next(it) for i in range(len(args))])

    return bound, rest


def _trace(
    fun: Callable[..., Any], args: tuple[Any, ...], what: str
) -> tuple[ClosedJaxpr, list[Any], list[Any], Any, Any]:
    leaves, in_tree = tree_util.tree_flatten(args)
    out_trees: list[Any] = []

    def flat(*xs: Any) -> list[Any]:
        out = fun(*tree_util.tree_unflatten(in_tree, xs))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_trees.append(out_tree)
        return out_leaves

    avals = [typeof(x) for x in leaves]
    jaxpr, consts = stage_call(flat, avals, DebugInfo(what, func_src_info(fun)))
    return jaxpr, consts, leaves, in_tree, out_trees[0]


def _call_abstract_eval(*args: AbstractValue, call_jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    return list(call_jaxpr.out_avals)


def _call_effects(*args: AbstractValue, call_jaxpr: ClosedJaxpr, **_: Any) -> Effects:
    return call_jaxpr.effects


def _call_impl(*args: Any, call_jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    return eval_jaxpr(call_jaxpr, (), *args)


# --- custom_jvp ----------------------------------------------------------------------------

custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)
for _p in (custom_jvp_call_p,):
    abstract_eval_rules.set(_p, _call_abstract_eval)
    effects_rules.set(_p, _call_effects)
    impl_rules.set(_p, _call_impl)


def _pp_name_first(prim: Primitive, hidden: tuple[str, ...]) -> None:
    """Print `prim` with `name` first, then its other params sorted, as JAX prints calls."""

    def rule(eqn: JaxprEqn, ctx: PpContext, settings: PpSettings) -> pp.Doc:
        params = eqn.params
        shown = [
            k
            for k in sorted(params)
            if k != "fun_name" and k not in hidden and not (k == "num_consts" and not params[k])
        ]
        # The name is not a `name` param (JAX derives it), so a shared callee prints as `jaxpr`.
        named = eqn.replace(params={"name": params["fun_name"], **params})
        return pp_eqn_with_params(named, ctx, settings, ["name", *shown])

    pp_eqn_rules.set(prim, rule)


_pp_name_first(custom_jvp_call_p, ("in_tree", "out_tree"))


class custom_jvp:
    """A function with a user-defined forward-mode derivative (`defjvp`/`defjvps`)."""

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp: Callable[..., Any] | None = None
        self.symbolic_zeros = False

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False) -> Callable[..., Any]:
        """`jvp(primals, tangents) -> (primal_out, tangent_out)` is the derivative rule."""
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps: Callable[..., Any] | None) -> None:
        """One rule per argument: `jvps[i](g_i, primal_out, *primals)`; None for no tangent."""

        def jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> Any:
            out = self(*primals)
            terms = [
                rule(t, out, *primals)
                for rule, t in zip(jvps, tangents, strict=False)
                if rule is not None
            ]
            total = functools.reduce(
                lambda a, b: tree_util.tree_map(lambda x, y: x + y, a, b), terms
            )
            return out, total

        jvp.__name__ = f"{_fun_name(self.fun)}_jvps"
        self.defjvp(jvp)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise TypeError(
                f"custom_jvp function {_fun_name(self.fun)} takes positional arguments only in "
                "Lamina; got keyword arguments " + ", ".join(kwargs)
            )
        if self.jvp is None:
            raise AttributeError(
                f"No JVP defined for custom_jvp function {_fun_name(self.fun)} using defjvp."
            )
        fun, dyn = _resolve(self.fun, self.nondiff_argnums, args)
        jvp_fun = self.jvp
        fixed = [args[i] for i in self.nondiff_argnums]

        def rule(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> Any:
            return jvp_fun(*fixed, primals, tangents)

        rule.__name__ = _fun_name(jvp_fun)
        jaxpr, consts, leaves, in_tree, out_tree = _trace(fun, dyn, "custom_jvp fun")
        outs = custom_jvp_call_p.bind(
            *consts,
            *leaves,
            call_jaxpr=jaxpr,
            jvp=RuleName(rule),
            num_consts=len(consts),
            symbolic_zeros=self.symbolic_zeros,
            in_tree=in_tree,
            out_tree=out_tree,
            fun_name=_fun_name(self.fun),
        )
        return tree_util.tree_unflatten(out_tree, outs)


def _custom_jvp_call_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], **params: Any
) -> tuple[list[Any], list[Any]]:
    n = params["num_consts"]
    in_tree, out_tree = params["in_tree"], params["out_tree"]
    args = tree_util.tree_unflatten(in_tree, list(primals[n:]))
    ts = [instantiate_zeros(t) for t in tangents[n:]]
    tangent_args = tree_util.tree_unflatten(in_tree, ts)
    out = params["jvp"](args, tangent_args)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(
            "Custom JVP rule must produce a pair (list or tuple of length two) representing "
            f"primal and tangent outputs, but got {out}."
        )
    primal_out, tangent_out = out
    p_leaves, p_tree = tree_util.tree_flatten(primal_out)
    t_leaves, t_tree = tree_util.tree_flatten(tangent_out)
    if p_tree != out_tree:
        raise TypeError(
            "Custom JVP rule must produce primal outputs with equal container (pytree) "
            f"structures to the primal function, but got {p_tree} and {out_tree}."
        )
    if t_tree != p_tree:
        raise TypeError(
            "Custom JVP rule must produce primal and tangent outputs with equal container "
            f"(pytree) structures, but got {p_tree} and {t_tree} respectively."
        )
    return p_leaves, t_leaves


jvp_rules.set(custom_jvp_call_p, _custom_jvp_call_jvp)


def _call_transpose(ct: Sequence[Any], *args: Any, call_jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    # A custom_jvp function applied to tangents is linear in them: transpose its jaxpr.
    cts = backward_pass(call_jaxpr.jaxpr, call_jaxpr.consts, list(args), list(ct))
    it = iter(cts)
    return [next(it) if is_undefined(a) else None for a in args]


transpose_rules.set(custom_jvp_call_p, _call_transpose)


# --- custom_vjp ----------------------------------------------------------------------------

custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)
abstract_eval_rules.set(custom_vjp_call_p, _call_abstract_eval)
effects_rules.set(custom_vjp_call_p, _call_effects)
impl_rules.set(custom_vjp_call_p, _call_impl)
_pp_name_first(custom_vjp_call_p, ("in_tree", "out_tree", "fwd_fun", "bwd_fun"))

custom_lin_p = Primitive("custom_lin", multiple_results=True)


@abstract_eval_rules.register(custom_lin_p)
def _custom_lin_abstract_eval(
    *args: AbstractValue, out_avals: Sequence[Any], **_: Any
) -> list[Any]:
    return list(out_avals)


@impl_rules.register(custom_lin_p)
def _custom_lin_impl(*args: Any, **_: Any) -> Any:
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


hide_params(
    custom_lin_p,
    lambda k, v: k in ("out_avals", "res_tree", "in_tree", "out_tree", "bwd_fun"),
)


class custom_vjp:
    """A function with a user-defined reverse-mode derivative (`defvjp(fwd, bwd)`)."""

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self.symbolic_zeros = False

    def defvjp(
        self,
        fwd: Callable[..., Any],
        bwd: Callable[..., Any],
        symbolic_zeros: bool = False,
        optimize_remat: bool = False,
    ) -> None:
        """`fwd(*args) -> (out, residuals)`; `bwd(residuals, ct_out) -> ct_args` (a tuple)."""
        self.fwd, self.bwd = fwd, bwd
        self.symbolic_zeros = symbolic_zeros

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise TypeError(
                f"custom_vjp function {_fun_name(self.fun)} takes positional arguments only in "
                "Lamina; got keyword arguments " + ", ".join(kwargs)
            )
        if self.fwd is None or self.bwd is None:
            raise AttributeError(
                f"No VJP defined for custom_vjp function {_fun_name(self.fun)} using defvjp."
            )
        fun, dyn = _resolve(self.fun, self.nondiff_argnums, args)
        fwd, _ = _resolve(self.fwd, self.nondiff_argnums, args)
        fixed = [args[i] for i in self.nondiff_argnums]
        bwd_user = self.bwd

        def bwd(res: Any, ct: Any) -> Any:
            return bwd_user(*fixed, res, ct)

        bwd.__name__ = _fun_name(bwd_user)
        jaxpr, consts, leaves, in_tree, out_tree = _trace(fun, dyn, "custom_vjp fun")
        outs = custom_vjp_call_p.bind(
            *consts,
            *leaves,
            call_jaxpr=jaxpr,
            fwd=RuleName(self.fwd),
            bwd=RuleName(self.bwd),
            fwd_fun=fwd,
            bwd_fun=bwd,
            num_consts=len(consts),
            symbolic_zeros=self.symbolic_zeros,
            in_tree=in_tree,
            out_tree=out_tree,
            fun_name=_fun_name(self.fun),
        )
        return tree_util.tree_unflatten(out_tree, outs)


def _run_fwd(primals: Sequence[Any], params: dict[str, Any]) -> tuple[list[Any], list[Any], Any]:
    n = params["num_consts"]
    args = tree_util.tree_unflatten(params["in_tree"], list(primals[n:]))
    out = params["fwd_fun"](*args)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(
            "Custom VJP fwd rule must produce a pair (list or tuple of length two) where the "
            "first element represents the primal output (equal to the output of the "
            "custom_vjp-decorated function) and the second element represents residuals "
            "(i.e. values stored from the forward pass for use on the backward pass), but "
            f"got {out}."
        )
    primal_out, res = out
    p_leaves, p_tree = tree_util.tree_flatten(primal_out)
    if p_tree != params["out_tree"]:
        raise TypeError(
            "Custom VJP fwd rule must produce an output with the same container (pytree) "
            "structure as the primal function, but got "
            f"{p_tree} for the primal output and {params['out_tree']} for the function."
        )
    res_leaves, res_tree = tree_util.tree_flatten(res)
    return p_leaves, res_leaves, res_tree


def _lin_params(
    params: dict[str, Any],
    primals_out: Sequence[Any],
    res_tree: Any,
    in_zeros: list[bool],
    n_res: int,
) -> dict[str, Any]:
    return {
        "bwd": params["bwd"],
        "in_zeros": in_zeros,
        "num_res": n_res,
        "symbolic_zeros": params["symbolic_zeros"],
        "out_avals": tuple(typeof(p).to_tangent_aval() for p in primals_out),
        "res_tree": res_tree,
        "in_tree": params["in_tree"],
        "out_tree": params["out_tree"],
        "bwd_fun": params["bwd_fun"],
    }


def _custom_vjp_call_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], **params: Any
) -> tuple[list[Any], list[Any]]:
    n = params["num_consts"]
    p_out, res, res_tree = _run_fwd(primals, params)
    in_zeros = [type(t) is Zero for t in tangents[n:]]
    nz = [t for t in tangents[n:] if type(t) is not Zero]
    lin = _lin_params(params, p_out, res_tree, in_zeros, len(res))
    t_out = custom_lin_p.bind(*res, *nz, **lin)
    return p_out, t_out


jvp_rules.set(custom_vjp_call_p, _custom_vjp_call_jvp)


def _custom_vjp_call_linearize(nonzeros: Sequence[bool], *primals: Any, **params: Any) -> Any:
    n = params["num_consts"]
    p_out, res, res_tree = _run_fwd(primals, params)
    in_zeros = [not nz for nz in nonzeros[n:]]
    lin = _lin_params(params, p_out, res_tree, in_zeros, len(res))

    def linearized(residuals: Sequence[Any], *tangents: Any) -> list[Any]:
        nz = [t for t in tangents[n:] if type(t) is not Zero]
        return list(custom_lin_p.bind(*residuals, *nz, **lin))

    return p_out, [True] * len(p_out), res, linearized


linearization_rules.set(custom_vjp_call_p, _custom_vjp_call_linearize)


def _custom_lin_transpose(cts: Sequence[Any], *args: Any, **params: Any) -> list[Any]:
    n_res = params["num_res"]
    res = tree_util.tree_unflatten(params["res_tree"], list(args[:n_res]))
    ct_out = tree_util.tree_unflatten(params["out_tree"], [instantiate_zeros(c) for c in cts])
    in_cts = params["bwd_fun"](res, ct_out)
    primal_args_tree = params["in_tree"]
    ct_leaves, ct_tree = tree_util.tree_flatten(in_cts, is_leaf=lambda x: x is None)
    if not isinstance(in_cts, tuple) or ct_tree != primal_args_tree:
        raise TypeError(
            "Custom VJP bwd rule must produce an output with the same container (pytree) "
            "structure as the args tuple of the primal function, and in particular must "
            "produce a tuple of length equal to the number of arguments to the primal "
            "function, but got bwd output structure "
            f"{_treedef_str(tree_util.tree_structure(in_cts))} for primal input structure "
            f"{_treedef_str(primal_args_tree)}."
        )
    out: list[Any] = [None] * n_res
    nz_iter = iter(ct_leaves)
    for zero in params["in_zeros"]:
        c = next(nz_iter)
        if not zero:
            out.append(c)
    return out


def _treedef_str(treedef: Any) -> str:
    return str(treedef).replace("PyTreeSpec(", "PyTreeDef(", 1)


transpose_rules.set(custom_lin_p, _custom_lin_transpose)
not_differentiable(custom_lin_p)  # linear, and only ever transposed (as in JAX)


__all__ = ["custom_jvp", "custom_jvp_call_p", "custom_lin_p", "custom_vjp", "custom_vjp_call_p"]
