"""`linear_call`: a call to a function linear in some arguments, with the user's transpose.

`linear_call(fun, fun_transpose, residual_args, linear_args)` binds `linear_call` on `fun`
traced for the arguments' types (`callee`; values it closes over lead the operands,
`num_callee_consts`, then the `num_res` residuals, then the linear arguments). Evaluation and
lowering run `callee`. Its jvp is two calls, on the primals and on the tangents (the function
is linear in them); its transpose is a `linear_call` of `fun_transpose` on the cotangents, whose
own transpose is `fun` again. `fun_transpose` is traced only when transposing, through the
memoized `transpose_thunk` param, as in JAX.

`remat_opt_p` is JAX's primitive of `custom_vjp(..., optimize_remat=True)`; Lamina's
`custom_vjp` does not bind it, but a jaxpr holding it evaluates (its `fwd_jaxpr`) as JAX's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from lamina_core.custom_derivatives._common import treedef_str
from lamina_core.interpreters import (
    Zero,
    instantiate_zeros,
    is_undefined,
    jvp_rules,
    transpose_rules,
    zeros_like_aval,
)
from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    DebugInfo,
    Primitive,
    abstract_eval_rules,
    impl_rules,
)
from lamina_core.trace import eval_jaxpr, typeof
from lamina_core.transforms import func_src_info, jvp, stage_call
from lamina_core.tree import tree_util

linear_call_p: Final = Primitive("linear_call", multiple_results=True)
remat_opt_p: Final = Primitive("remat_opt", multiple_results=True)

TransposeThunk = Callable[[], tuple[ClosedJaxpr, list[Any]]]


def _memoize(thunk: TransposeThunk) -> TransposeThunk:
    """`thunk`, run at most once. (JAX's helper of the same name: the printed param names it.)"""
    found: list[tuple[ClosedJaxpr, list[Any]]] = []

    def memoized() -> tuple[ClosedJaxpr, list[Any]]:
        if not found:
            found.append(thunk())
        return found[0]

    return memoized


def _flat(fun: Callable[..., Any], in_tree: Any, out_trees: list[Any]) -> Callable[..., Any]:
    """`fun(residuals, linear)` taking and returning flat lists; records its output tree."""

    def flat(*xs: Any) -> list[Any]:
        res, lin = tree_util.tree_unflatten(in_tree, xs)
        leaves, tree = tree_util.tree_flatten(fun(res, lin))
        out_trees.append(tree)
        return leaves

    return flat


def linear_call(
    fun: Callable[..., Any],
    fun_transpose: Callable[..., Any],
    residual_args: Any,
    linear_args: Any,
) -> Any:
    """`fun(residual_args, linear_args)`, transposed by `fun_transpose(residual_args, ct)`.

    Args:
        fun: `fun(r, a) -> b`, linear in `a`.
        fun_transpose: `fun_transpose(r, b) -> a`, the transpose of `fun` in its second
            argument (linear in it too).
        residual_args: a pytree of arguments in which neither need be linear.
        linear_args: a pytree of arguments in which both are linear.

    Returns:
        `fun(residual_args, linear_args)`.

    Raises:
        TypeError: when transposing, `fun_transpose`'s output tree differs from
            `linear_args`'.
    """
    res_leaves, res_tree = tree_util.tree_flatten(residual_args)
    lin_leaves, lin_tree = tree_util.tree_flatten(linear_args)
    in_tree = tree_util.tree_structure((residual_args, linear_args))
    res_avals = [typeof(x) for x in res_leaves]
    lin_avals = [typeof(x) for x in lin_leaves]
    out_trees: list[Any] = []
    callee, consts = stage_call(
        _flat(fun, in_tree, out_trees),
        [*res_avals, *lin_avals],
        DebugInfo("linear_call fun", func_src_info(fun)),
    )
    out_tree = out_trees[0]
    out_avals = list(callee.out_avals)

    def transpose() -> tuple[ClosedJaxpr, list[Any]]:
        t_out_trees: list[Any] = []
        # The types stand in for the leaves: the tree of `(residuals, cotangents)`.
        t_in_tree = tree_util.tree_structure(
            (res_tree.unflatten(res_avals), out_tree.unflatten(out_avals))
        )
        jaxpr, t_consts = stage_call(
            _flat(fun_transpose, t_in_tree, t_out_trees),
            [*res_avals, *out_avals],
            DebugInfo("linear_call fun_transpose", func_src_info(fun_transpose)),
        )
        if t_out_trees[0] != lin_tree:
            raise TypeError(
                "transpose output pytree structure must match that of linear inputs, got "
                f"output structure {treedef_str(t_out_trees[0])} and input structure "
                f"{treedef_str(lin_tree)}."
            )
        return jaxpr, t_consts

    outs = linear_call_p.bind(
        *consts,
        *res_leaves,
        *lin_leaves,
        callee=callee,
        transpose_thunk=_memoize(transpose),
        num_callee_consts=len(consts),
        num_res=len(res_leaves),
    )
    return tree_util.tree_unflatten(out_tree, outs)


@abstract_eval_rules.register(linear_call_p)
def _linear_call_abstract_eval(*args: AbstractValue, callee: ClosedJaxpr, **_: Any) -> list[Any]:
    return list(callee.out_avals)


@impl_rules.register(linear_call_p)
def _linear_call_impl(*args: Any, callee: ClosedJaxpr, **_: Any) -> list[Any]:
    return list(eval_jaxpr(callee.jaxpr, callee.consts, *args))


def _linear_call_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
    fixed = params["num_callee_consts"] + params["num_res"]
    # As JAX's rule: the call is differentiated in its linear arguments only.
    assert all(type(t) is Zero for t in tangents[:fixed]), (
        "linear_call is not differentiable in its residual arguments"
    )
    primals_out = linear_call_p.bind(*primals, **params)
    lin_tangents = [instantiate_zeros(t) for t in tangents[fixed:]]
    tangents_out = linear_call_p.bind(*primals[:fixed], *lin_tangents, **params)
    return primals_out, tangents_out


jvp_rules.set(linear_call_p, _linear_call_jvp)


def _linear_call_transpose_rule(
    cts: Sequence[Any],
    *args: Any,
    callee: ClosedJaxpr,
    transpose_thunk: TransposeThunk,
    num_callee_consts: int,
    num_res: int,
) -> list[Any]:
    transpose, t_consts = transpose_thunk()
    f_consts = list(args[:num_callee_consts])
    residuals = args[num_callee_consts : num_callee_consts + num_res]
    ct_avals = transpose.in_avals[len(t_consts) + num_res :]

    def new_transpose_thunk() -> tuple[ClosedJaxpr, list[Any]]:
        return callee, f_consts

    cts = [
        zeros_like_aval(a) if type(ct) is Zero else ct for ct, a in zip(cts, ct_avals, strict=True)
    ]
    cts_out = linear_call_p.bind(
        *t_consts,
        *residuals,
        *cts,
        callee=transpose,
        transpose_thunk=new_transpose_thunk,
        num_callee_consts=len(t_consts),
        num_res=len(residuals),
    )
    assert all(is_undefined(x) for x in args[num_callee_consts + num_res :])
    return [None] * (num_callee_consts + num_res) + list(cts_out)


transpose_rules.set(linear_call_p, _linear_call_transpose_rule)


@abstract_eval_rules.register(remat_opt_p)
def _remat_opt_abstract_eval(*args: AbstractValue, fwd_jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    return list(fwd_jaxpr.out_avals)


@impl_rules.register(remat_opt_p)
def _remat_opt_impl(*args: Any, fwd_jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    return list(eval_jaxpr(fwd_jaxpr.jaxpr, fwd_jaxpr.consts, *args))


def _remat_opt_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, fwd_jaxpr: ClosedJaxpr, **_: Any
) -> Any:
    # JAX differentiates the function itself (the residuals are not differentiated); with no
    # remat optimization to keep, the forward jaxpr's own derivative is the same numbers.
    def run(*xs: Any) -> list[Any]:
        return list(eval_jaxpr(fwd_jaxpr.jaxpr, fwd_jaxpr.consts, *xs))

    return jvp(run, list(primals), [instantiate_zeros(t) for t in tangents])


jvp_rules.set(remat_opt_p, _remat_opt_jvp)

__all__ = ["linear_call", "linear_call_p", "remat_opt_p"]
