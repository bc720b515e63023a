"""`custom_vjp`: a function whose reverse-mode derivative is the user's `fwd`/`bwd` pair.

Calling it binds `custom_vjp_call` on the function traced for the arguments' types. Under
differentiation `fwd` runs on the primal side and the tangent side gets one `custom_lin`
equation holding the residuals; transposing `custom_lin` calls `bwd`, whose operations are
thus inlined into the backward pass, as in JAX. Forward mode stages `custom_lin` too, but it
has no evaluation: running it is JAX's "can't apply forward-mode autodiff" error.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Final

from lamina_core.custom_derivatives._common import (
    CustomVJPException,
    CustomVJPPrimal,
    RuleName,
    SymbolicZero,
    bind_call,
    bind_static,
    call_primitive,
    check_primal_outputs,
    for_user,
    fun_name,
    has_tracer,
    mismatch_extra,
    resolve_args,
    trace_callee,
    treedef_str,
    type_str,
)
from lamina_core.custom_derivatives._vjp_refs import check_aliased_args, check_returned
from lamina_core.interpreters import (
    Zero,
    is_float0,
    jvp_rules,
    linearization_rules,
    not_differentiable,
    tangents_named_under_whole_stack,
    transpose_rules,
)
from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    Primitive,
    abstract_eval_rules,
    hide_params,
    impl_rules,
    register_param_decoder,
    types_match,
)
from lamina_core.trace import UnexpectedTracerError, typeof
from lamina_core.tree import tree_util

custom_vjp_call_p: Final = call_primitive(
    "custom_vjp_call", ("bwd", "call_jaxpr", "fwd", "num_consts", "symbolic_zeros")
)

custom_lin_p: Final = Primitive("custom_lin", multiple_results=True)


@abstract_eval_rules.register(custom_lin_p)
def _custom_lin_abstract_eval(
    *args: AbstractValue, out_avals: Sequence[Any], **_: Any
) -> list[Any]:
    return list(out_avals)


@impl_rules.register(custom_lin_p)
def _custom_lin_impl(*args: Any, **_: Any) -> Any:
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


_LIN_HIDDEN: Final = ("out_avals", "res_tree", "in_tree", "out_tree", "in_avals", "bwd_fun")
hide_params(custom_lin_p, lambda k, v: k in _LIN_HIDDEN)


@register_param_decoder(custom_lin_p.name)
def _custom_lin_decode(
    params: dict[str, Any], ins: Sequence[AbstractValue], outs: Sequence[AbstractValue]
) -> dict[str, Any]:
    # Read back from text, it types as printed; the hidden trees, primal types and `bwd_fun`
    # are Python values the text does not show (its impl only ever raises anyway).
    return {**params, "out_avals": tuple(outs)}


_NONDIFF_TRACER: Final = (
    "Found a JAX Tracer object passed as an argument to a custom_vjp function in a position "
    "indicated by nondiff_argnums as non-differentiable. Tracers cannot be passed as "
    "non-differentiable arguments to custom_vjp functions; instead, nondiff_argnums should "
    "only be used for arguments that can't be or contain JAX tracers, e.g. function-valued "
    "arguments. In particular, array-valued arguments should typically not be indicated as "
    "nondiff_argnums."
)


class custom_vjp:
    """A function with a user-defined reverse-mode derivative (`defvjp(fwd, bwd)`).

    `nondiff_argnums` name arguments that are not differentiated and hold no tracers
    (functions, flags): `fwd` takes them in place, `bwd` takes them first.
    """

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
        """`fwd(*args) -> (out, residuals)`; `bwd(residuals, ct_out) -> ct_args` (a tuple,
        None for an argument with no cotangent).

        With `symbolic_zeros`, `fwd` receives `CustomVJPPrimal`s saying which arguments are
        differentiated, and `bwd` zero cotangents as `SymbolicZero`s. `optimize_remat` is
        accepted; Lamina always saves `fwd`'s residuals (the values are the same).
        """
        self.fwd, self.bwd = fwd, bwd
        self.symbolic_zeros = symbolic_zeros

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        primal_name = fun_name(self.fun)
        if self.fwd is None or self.bwd is None:
            raise AttributeError(
                f"No VJP defined for custom_vjp function {primal_name} using defvjp."
            )
        args = resolve_args(self.fun, args, kwargs, "custom_vjp")
        for i in self.nondiff_argnums:
            if has_tracer(args[i]):
                raise UnexpectedTracerError(_NONDIFF_TRACER)
        check_aliased_args(self.fun, self.nondiff_argnums, args)
        fun, dyn = bind_static(self.fun, self.nondiff_argnums, args)
        fwd, _ = bind_static(self.fwd, self.nondiff_argnums, args)
        static = [args[i] for i in self.nondiff_argnums]
        user_bwd = self.bwd

        def bwd(res: Any, ct: Any) -> Any:
            return user_bwd(*static, res, ct)

        user_fun = self.fun

        def checked(*xs: Any) -> Any:
            out = fun(*xs)
            check_returned(user_fun, "primal", out, tree_util.tree_leaves(xs), 0)
            return out

        traced = trace_callee(checked, dyn, "custom_vjp fun")
        rules = {
            "fwd": RuleName(self.fwd),
            "bwd": RuleName(self.bwd),
            "fwd_fun": fwd,
            "bwd_fun": bwd,
        }
        return bind_call(
            custom_vjp_call_p,
            traced,
            rules,
            symbolic_zeros=self.symbolic_zeros,
            fun_name=primal_name,
        )


# --- differentiation: fwd on the primal side, custom_lin on the tangent side ---------------


def _run_fwd(
    primals: Sequence[Any], nonzeros: Sequence[bool], params: dict[str, Any]
) -> tuple[list[Any], list[Any], dict[str, Any]]:
    """Run the user's fwd; returns the primal outputs, the residuals and custom_lin's params."""
    n = params["num_consts"]
    if any(nonzeros[:n]):
        raise CustomVJPException()
    vals, nzs = list(primals[n:]), list(nonzeros[n:])
    if params["symbolic_zeros"]:
        vals = [CustomVJPPrimal(v, nz) for v, nz in zip(vals, nzs, strict=True)]
    out = params["fwd_fun"](*tree_util.tree_unflatten(params["in_tree"], vals))
    primal_name, fwd_name = params["fun_name"], repr(params["fwd"])
    rule = f"Custom VJP fwd rule {fwd_name} for function {primal_name}"
    pair = (
        f"{rule} must produce a pair (list or tuple of length two) where the first element "
        "represents the primal output (equal to "
    )
    res_words = (
        "and the second element represents residuals (i.e. values stored from the forward "
        "pass for use on the backward pass), but "
    )
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(
            f"{pair}those of the custom_vjp-decorated function {primal_name}) {res_words}"
            f"instead of a pair the fwd rule {fwd_name} produced {out}."
        )
    p_leaves, p_tree = tree_util.tree_flatten(out[0])
    res, res_tree = tree_util.tree_flatten(out[1])
    check_returned(params["fwd"].fun, "fwd", out, vals, len(p_leaves))
    first = f"{pair}the output of the custom_vjp-decorated function {primal_name}) {res_words}"
    # JAX checks these only when it traced the function before fwd (under jit); Lamina always.
    p_avals = check_primal_outputs(
        p_leaves, p_tree, params, kind="custom_vjp", rule="fwd rule", leads=(first, first)
    )
    call_jaxpr: ClosedJaxpr = params["call_jaxpr"]
    lin = {
        "bwd": params["bwd"],
        "in_zeros": [not nz for nz in nzs],
        "num_res": len(res),
        "symbolic_zeros": params["symbolic_zeros"],
        "out_avals": tuple(a.to_tangent_aval() for a in p_avals),
        "res_tree": res_tree,
        "in_tree": params["in_tree"],
        "out_tree": params["out_tree"],
        "in_avals": tuple(call_jaxpr.in_avals[n:]),
        "bwd_fun": params["bwd_fun"],
    }
    return p_leaves, res, lin


def _custom_vjp_call_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], **params: Any
) -> tuple[list[Any], list[Any]]:
    n = params["num_consts"]
    nonzeros = [type(t) is not Zero for t in tangents]
    p_out, res, lin = _run_fwd(primals, nonzeros, params)
    nz_tangents = [t for t in tangents[n:] if type(t) is not Zero]
    return p_out, list(custom_lin_p.bind(*res, *nz_tangents, **lin))


jvp_rules.set(custom_vjp_call_p, _custom_vjp_call_jvp)


def _custom_vjp_call_linearize(nonzeros: Sequence[bool], *primals: Any, **params: Any) -> Any:
    n = params["num_consts"]
    p_out, res, lin = _run_fwd(primals, nonzeros, params)

    def linearized(residuals: Sequence[Any], *tangents: Any) -> list[Any]:
        nz_tangents = [t for t in tangents[n:] if type(t) is not Zero]
        return list(custom_lin_p.bind(*residuals, *nz_tangents, **lin))

    return p_out, [True] * len(p_out), res, linearized


linearization_rules.set(custom_vjp_call_p, _custom_vjp_call_linearize)
tangents_named_under_whole_stack.add(custom_vjp_call_p)


# --- transposition: bwd ----------------------------------------------------------------------

_ZERO: Final = object()
"""Stands for the cotangent of an argument bwd returned None for."""


def _custom_lin_transpose(cts: Sequence[Any], *args: Any, **params: Any) -> list[Any]:
    n_res = params["num_res"]
    res = tree_util.tree_unflatten(params["res_tree"], list(args[:n_res]))
    ct_out = tree_util.tree_unflatten(params["out_tree"], for_user(cts, params["symbolic_zeros"]))
    cts_in = params["bwd_fun"](res, ct_out)
    in_tree = params["in_tree"]
    flat = _flatten_bwd_output(cts_in, in_tree)
    dummy = tree_util.tree_unflatten(in_tree, [object()] * in_tree.num_leaves)
    paths = [p for p, _ in tree_util.tree_flatten_with_path(dummy)[0]]
    results = [
        _bwd_cotangent(path, aval, ct)
        for path, aval, ct in zip(paths, params["in_avals"], flat, strict=True)
    ]
    nz_results = [r for r, zero in zip(results, params["in_zeros"], strict=True) if not zero]
    return [None] * n_res + nz_results


def _flatten_bwd_output(cts_in: Any, in_tree: Any) -> list[Any]:
    """One cotangent per argument leaf: a None (or a leaf) covers its argument's whole subtree."""
    if isinstance(cts_in, list) and len(cts_in) == len(in_tree.children()):
        cts_in = tuple(cts_in)
    dummy = tree_util.tree_unflatten(in_tree, [object()] * in_tree.num_leaves)
    flat: list[Any] = []

    def collect(ct: Any, sub: Any) -> None:
        n = len(tree_util.tree_leaves(sub))
        if ct is None and sub is not None:
            flat.extend([_ZERO] * n)
        elif ct is not None:
            flat.extend([ct] * n)

    try:
        if not isinstance(cts_in, tuple):
            raise ValueError
        tree_util.tree_map(collect, cts_in, dummy, is_leaf=lambda x: x is None)
    except ValueError:
        raise TypeError(
            "Custom VJP bwd rule must produce an output with the same container (pytree) "
            "structure as the args tuple of the primal function, and in particular must "
            "produce a tuple of length equal to the number of arguments to the primal "
            "function, but got bwd output structure "
            f"{treedef_str(tree_util.tree_structure(cts_in))} for primal input structure "
            f"{treedef_str(in_tree)}."
        ) from None
    return flat


def _bwd_cotangent(path: Any, aval: Any, ct: Any) -> Any:
    """The cotangent bwd gave one argument leaf, checked against the argument's type."""
    ct_aval = aval.to_tangent_aval()
    where = tree_util.keystr(path)
    if ct is _ZERO or is_float0(ct_aval):
        return Zero(ct_aval)
    if type(ct) is SymbolicZero:
        if not types_match(ct_aval, ct.aval):
            raise ValueError(
                "Custom VJP bwd rule produced a SymbolicZero with a shape/dtype that does not "
                f"match the corresponding input tangent shape/dtype: at output{where} the "
                f"SymbolicZero had shape/dtype {type_str(ct.aval)} while the corresponding "
                f"input had shape/dtype {type_str(aval)}. Consider just returning a None here "
                "instead of a SymbolicZero object."
            )
        return Zero(ct.aval)
    got = typeof(ct)
    # JAX lets a floating cotangent of another float dtype through (its temporary exception).
    same_shape_float = (
        getattr(got, "shape", None) == getattr(ct_aval, "shape", ())
        and getattr(ct_aval, "dtype", None) is not None
        and ct_aval.dtype.kind in "fc"
    )
    if not types_match(ct_aval, got) and not same_shape_float:
        raise ValueError(
            "Custom VJP bwd rule must produce an output with the same type as the args tuple "
            f"of the primal function, but at output{where} the bwd rule produced an output of "
            f"type {type_str(got)} corresponding to an input of type {type_str(aval)}"
            f"{mismatch_extra(aval, got)}"
        )
    return ct


transpose_rules.set(custom_lin_p, _custom_lin_transpose)
not_differentiable(custom_lin_p)  # linear, and only ever transposed (as in JAX)

__all__ = ["custom_lin_p", "custom_vjp", "custom_vjp_call_p"]
