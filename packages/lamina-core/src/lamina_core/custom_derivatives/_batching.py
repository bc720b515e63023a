"""Batching of `custom_jvp_call` and `custom_vjp_call`: vmap keeps the user's rules.

The call's jaxpr is batched as jit's is (`call_batching.batch_jaxpr`), and the rules it
carries are replaced by batched versions: each runs the user's rule under a `BatchTrace` of
the same mapped axis, with the operands' mapped axes where they are, and places its results
where the batched jaxpr puts the call's outputs (that trace shares the vmap's axis, so a rule
closing over the vmap's values sees them batched). So `grad(vmap(f))` still differentiates
`f` with the user's rule, as in JAX. A batched `bwd` gets its residuals with the mapped axes
`fwd` left them on and sums the cotangent of an unmapped argument over the mapped axis
(JAX's `batch_custom_vjp_bwd`).

vmap of `grad` meets the user's `bwd` through the backward pass, where the cotangents are
already batched values; `custom_lin` itself is only met by vmap of a linearized function,
which is forward mode of a custom_vjp function: its rule raises JAX's error for that.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lamina_core.custom_derivatives._common import CustomVJPPrimal, RuleName, SymbolicZero
from lamina_core.custom_derivatives._jvp import custom_jvp_call_p
from lamina_core.custom_derivatives._vjp import (
    _ZERO,
    _custom_lin_impl,
    _flatten_bwd_output,
    custom_lin_p,
    custom_vjp_call_p,
)
from lamina_core.interpreters import (
    AxisData,
    BatchDim,
    BatchTrace,
    Zero,
    batch_flat,
    batching_rules,
    extend_axis_env,
    match_axis,
    sum_axis,
    trace_to_jaxpr,
)
from lamina_core.ir import ClosedJaxpr
from lamina_core.trace import current_trace, eval_jaxpr, running_under, set_current_trace
from lamina_core.transforms import batch_jaxpr
from lamina_core.tree import tree_util


def _is_zero(x: Any) -> bool:
    return type(x) in (Zero, SymbolicZero)


def _unmapped_zero(z: Any, dim: BatchDim, size: int) -> Any:
    """A symbolic zero of a batched value as the zero of one example."""
    return z if dim is None else type(z)(z.aval.dec_rank(size, dim))


def _place(axis_data: AxisData, src: BatchDim, dst: BatchDim, x: Any, what: str) -> Any:
    """`x` (mapped at `src`) with its mapped axis at `dst`; a zero changes type only."""
    if _is_zero(x):
        if src == dst:
            return x
        aval = x.aval if src is None else x.aval.dec_rank(axis_data.size, src)
        return type(x)(aval if dst is None else aval.inc_rank(axis_data.size, dst))
    if src == dst:
        return x
    if dst is None:
        raise NotImplementedError(
            f"vmap of a custom rule: the rule's {what} is batched where the custom function's "
            "output is not; Lamina keeps the function's batching for the call's outputs"
        )
    return match_axis(axis_data, src, dst, x)


def _sum_to(axis_data: AxisData, src: BatchDim, dst: BatchDim, x: Any) -> Any:
    """`x` placed at `dst`, summed over the mapped axis when `dst` is unmapped."""
    if dst is None and src is not None and not _is_zero(x):
        return sum_axis(x, src)
    if dst is None and src is not None:
        return type(x)(x.aval.dec_rank(axis_data.size, src))
    return _place(axis_data, src, dst, x, "cotangent")


def _run_batched(
    axis_data: AxisData,
    fun: Callable[[BatchTrace, list[Any]], Any],
    leaves: Sequence[Any],
    dims: Sequence[BatchDim],
) -> tuple[Any, BatchTrace]:
    """`fun(trace, wrapped leaves)` under a new `BatchTrace` of `axis_data`."""
    trace = BatchTrace(current_trace(), axis_data, shared=True)
    wrapped = [x if _is_zero(x) else trace.wrap(x, d) for x, d in zip(leaves, dims, strict=True)]
    with set_current_trace(trace), extend_axis_env(axis_data):
        return fun(trace, wrapped), trace


def _unwrap(trace: BatchTrace, x: Any) -> tuple[Any, BatchDim]:
    if _is_zero(x):
        return x, None
    return trace.to_batch_info(x)


def _named_like(fun: Callable[..., Any], rule: Any) -> RuleName:
    fun.__name__ = repr(rule)
    return RuleName(fun)


# --- custom_jvp_call -----------------------------------------------------------------------


class _NeedsMapped(Exception):
    """The batched rule made outputs mapped that the batched function leaves unmapped."""

    def __init__(self, which: frozenset[int]) -> None:
        super().__init__(sorted(which))
        self.which = which


def _batch_forcing(
    closed: ClosedJaxpr, axis_data: AxisData, in_dims: tuple[BatchDim, ...], force: frozenset[int]
) -> tuple[ClosedJaxpr, list[BatchDim]]:
    """`batch_jaxpr`, with the outputs at `force` mapped (at 0) even if the function's are not."""
    out_dims: list[BatchDim] = []

    def fun(*args: Any) -> list[Any]:
        outs, dims = batch_flat(lambda *xs: eval_jaxpr(closed, (), *xs), axis_data, args, in_dims)
        placed = []
        for i, (v, d) in enumerate(zip(outs, dims, strict=True)):
            if i in force and d is None:
                v, d = match_axis(axis_data, None, 0, v), 0
            placed.append(v)
            out_dims.append(d)
        return placed

    in_avals = [
        a if d is None else a.inc_rank(axis_data.size, d)
        for a, d in zip(closed.in_avals, in_dims, strict=True)
    ]
    return trace_to_jaxpr(fun, in_avals, closed.jaxpr.debug_info), out_dims


def _custom_jvp_call_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any
) -> tuple[list[Any], list[BatchDim]]:
    # JAX's batched call has the mapped axes of whichever function ran (the function's or
    # the rule's, primal and tangent merged); Lamina fixes the call's types before it runs,
    # from the function's. When the rule maps an output the function does not (a tangent
    # depending on a mapped argument the value does not), the call is batched again with
    # that output mapped.
    try:
        return _custom_jvp_call_batch_forcing(axis_data, vals, dims, frozenset(), params)
    except _NeedsMapped as e:
        return _custom_jvp_call_batch_forcing(axis_data, vals, dims, e.which, params)


def _custom_jvp_call_batch_forcing(
    axis_data: AxisData,
    vals: Sequence[Any],
    dims: Sequence[BatchDim],
    force: frozenset[int],
    params: dict[str, Any],
) -> tuple[list[Any], list[BatchDim]]:
    if force:
        closed, out_dims = _batch_forcing(params["call_jaxpr"], axis_data, tuple(dims), force)
    else:
        closed, out_dims = batch_jaxpr(params["call_jaxpr"], axis_data, tuple(dims))
    n, in_tree, out_tree = params["num_consts"], params["in_tree"], params["out_tree"]
    in_dims = list(dims[n:])
    user_rule = params["jvp"]
    size = axis_data.size

    def batched_rule(primals: Any, tangents: Any) -> Any:
        p_leaves = tree_util.tree_leaves(primals)
        t_leaves = tree_util.tree_leaves(tangents, is_leaf=_is_zero)
        t_leaves = [_unmapped_zero(t, d, size) if _is_zero(t) else t for t, d in zip(
            t_leaves, in_dims, strict=True)]  # fmt: skip
        t_dims = [None if _is_zero(t) else d for t, d in zip(t_leaves, in_dims, strict=True)]

        def run(trace: BatchTrace, xs: list[Any]) -> Any:
            ps = tree_util.tree_unflatten(in_tree, xs[: len(p_leaves)])
            ts = tree_util.tree_unflatten(in_tree, xs[len(p_leaves) :])
            out = user_rule(ps, ts)
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                return out  # JAX's message comes from the call's own check
            p_out = tree_util.tree_leaves(out[0])
            t_out = tree_util.tree_leaves(out[1], is_leaf=_is_zero)
            if len(p_out) != len(out_dims) or len(t_out) != len(out_dims):
                return out
            p_info = [_unwrap(trace, x) for x in p_out]
            t_info = [_unwrap(trace, x) for x in t_out]
            unmapped = frozenset(
                i
                for i, ((_, ps), (_, ts), d) in enumerate(
                    zip(p_info, t_info, out_dims, strict=True)
                )
                if d is None and (ps is not None or ts is not None)
            )
            if unmapped and not force:
                raise _NeedsMapped(unmapped)
            with running_under(trace.parent or current_trace()):
                p_res = [
                    _place(axis_data, s, d, v, "primal output")
                    for (v, s), d in zip(p_info, out_dims, strict=True)
                ]
                t_res = [
                    _place(axis_data, s, d, v, "tangent output")
                    for (v, s), d in zip(t_info, out_dims, strict=True)
                ]
            return (
                tree_util.tree_unflatten(out_tree, p_res),
                tree_util.tree_unflatten(out_tree, t_res),
            )

        out, _ = _run_batched(axis_data, run, [*p_leaves, *t_leaves], [*in_dims, *t_dims])
        return out

    new_params = dict(params, call_jaxpr=closed, jvp=_named_like(batched_rule, user_rule))
    outs = custom_jvp_call_p.bind(*vals, **new_params)
    return outs, list(out_dims)


batching_rules.set(custom_jvp_call_p, _custom_jvp_call_batch)


# --- custom_vjp_call -----------------------------------------------------------------------


def _custom_vjp_call_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any
) -> tuple[list[Any], list[BatchDim]]:
    closed, out_dims = batch_jaxpr(params["call_jaxpr"], axis_data, tuple(dims))
    n, in_tree = params["num_consts"], params["in_tree"]
    in_dims = list(dims[n:])
    user_fwd, user_bwd = params["fwd_fun"], params["bwd_fun"]
    size = axis_data.size
    res_dims: list[list[BatchDim]] = []
    """The residuals' mapped axes, as the last run of the batched fwd left them."""

    def batched_fwd(*args: Any) -> Any:
        leaves = tree_util.tree_leaves(args, is_leaf=lambda x: type(x) is CustomVJPPrimal)
        symbolic = bool(leaves) and type(leaves[0]) is CustomVJPPrimal
        values = [x.value for x in leaves] if symbolic else leaves

        def run(trace: BatchTrace, xs: list[Any]) -> Any:
            if symbolic:
                xs = [CustomVJPPrimal(v, p.perturbed) for v, p in zip(xs, leaves, strict=True)]
            out = user_fwd(*tree_util.tree_unflatten(in_tree, xs))
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                return tree_util.tree_map(lambda x: _unwrap(trace, x)[0], out)
            p_out = tree_util.tree_leaves(out[0])
            res, res_tree = tree_util.tree_flatten(out[1])
            res_info = [_unwrap(trace, r) for r in res]
            res_dims.append([d for _, d in res_info])
            if len(p_out) != len(out_dims):
                p_plain = [_unwrap(trace, x)[0] for x in p_out]
                return (
                    tree_util.tree_unflatten(tree_util.tree_structure(out[0]), p_plain),
                    tree_util.tree_unflatten(res_tree, [v for v, _ in res_info]),
                )
            with running_under(trace.parent or current_trace()):
                p_res = [
                    _place(axis_data, s, d, v, "primal output")
                    for (v, s), d in zip((_unwrap(trace, x) for x in p_out), out_dims, strict=True)
                ]
            return (
                tree_util.tree_unflatten(tree_util.tree_structure(out[0]), p_res),
                tree_util.tree_unflatten(res_tree, [v for v, _ in res_info]),
            )

        out, _ = _run_batched(axis_data, run, values, in_dims)
        return out

    def batched_bwd(res: Any, ct: Any) -> Any:
        r_leaves = tree_util.tree_leaves(res)
        c_leaves = tree_util.tree_leaves(ct, is_leaf=_is_zero)
        c_leaves = [_unmapped_zero(c, d, size) if _is_zero(c) else c for c, d in zip(
            c_leaves, out_dims, strict=True)]  # fmt: skip
        c_dims = [None if _is_zero(c) else d for c, d in zip(c_leaves, out_dims, strict=True)]
        r_dims = res_dims[-1] if res_dims else [None] * len(r_leaves)
        res_tree = tree_util.tree_structure(res)
        ct_tree = tree_util.tree_structure(ct, is_leaf=_is_zero)

        def run(trace: BatchTrace, xs: list[Any]) -> Any:
            rs = tree_util.tree_unflatten(res_tree, xs[: len(r_leaves)])
            cs = tree_util.tree_unflatten(ct_tree, xs[len(r_leaves) :])
            cts_in = user_bwd(rs, cs)
            flat = _flatten_bwd_output(cts_in, in_tree)
            placed: list[Any] = []
            with running_under(trace.parent or current_trace()):
                for c, d in zip(flat, in_dims, strict=True):
                    if c is _ZERO or c is None:
                        placed.append(None)
                        continue
                    v, s = _unwrap(trace, c)
                    placed.append(_sum_to(axis_data, s, d, v))
            return tuple(tree_util.tree_unflatten(in_tree, placed))

        out, _ = _run_batched(axis_data, run, [*r_leaves, *c_leaves], [*r_dims, *c_dims])
        return out

    new_params = dict(
        params,
        call_jaxpr=closed,
        fwd_fun=batched_fwd,
        bwd_fun=batched_bwd,
    )
    outs = custom_vjp_call_p.bind(*vals, **new_params)
    return outs, list(out_dims)


batching_rules.set(custom_vjp_call_p, _custom_vjp_call_batch)


def _custom_lin_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any
) -> Any:
    return _custom_lin_impl(*vals, **params)


batching_rules.set(custom_lin_p, _custom_lin_batch)

__all__: list[str] = []
