"""`custom_linear_solve` (the `custom_linear_solve` primitive, `linear_solve_p`) and
`custom_root`, as `jax.lax`'s.

`custom_linear_solve(matvec, b, solve)` computes `solve(matvec, b)` but is differentiated as the
solution of the linear system `matvec(x) = b`: by the implicit function theorem, not through
`solve`. The primitive holds the staged `matvec`, its transpose `vecmat`, `solve` and
`transpose_solve` (their captured constants are leading operands, counted by `const_lengths`).
Its tangent is one more solve; its transpose is a solve of the transposed system. `custom_root`
differentiates a root finder the same way, through a `custom_jvp`.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any, Final, NamedTuple

import numpy as np

from lamina_core.custom_derivatives import custom_jvp
from lamina_core.interpreters import (
    AxisData,
    Zero,
    batching_rules,
    instantiate_zeros,
    is_undefined,
    jvp_flat,
    jvp_rules,
    trace_to_jaxpr,
    transpose_rules,
    zero_of,
)
from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    Jaxpr,
    Primitive,
    abstract_eval_rules,
    impl_rules,
)
from lamina_core.lax._batching_common import broadcast_batched, moveaxis
from lamina_core.trace import eval_jaxpr, typeof
from lamina_core.transforms import batch_jaxpr_front, linear_transpose, linearize
from lamina_core.tree import tree_util


class _LinearSolveTuple(NamedTuple):
    matvec: Any
    vecmat: Any
    solve: Any
    transpose_solve: Any

    def transpose(self) -> _LinearSolveTuple:
        return _LinearSolveTuple(self.vecmat, self.matvec, self.transpose_solve, self.solve)


def _split(args: Sequence[Any], const_lengths: _LinearSolveTuple) -> tuple[Any, list[Any]]:
    groups, start = [], 0
    for n in const_lengths:
        groups.append(list(args[start : start + n]))
        start += n
    return _LinearSolveTuple(*groups), list(args[start:])


def _flatten(groups: Sequence[Sequence[Any]]) -> list[Any]:
    return [x for group in groups for x in group]


def _run(jaxpr: ClosedJaxpr, *args: Any) -> list[Any]:
    return eval_jaxpr(jaxpr, (), *args)


# --- staging the functions --------------------------------------------------------------------


def _stage(fun: Callable[..., Any], avals: Sequence[AbstractValue]) -> tuple[Any, list[Any], Any]:
    """`fun` (flat arrays in, a pytree out) staged: its jaxpr with the captured constants as
    leading invars, those constants, and the output tree."""
    trees: list[Any] = []

    def flat_fun(*xs: Any) -> list[Any]:
        leaves, tree = tree_util.tree_flatten(fun(*xs))
        trees.append(tree)
        return leaves

    closed = trace_to_jaxpr(flat_fun, avals)
    inner = closed.jaxpr
    opened = Jaxpr((), (*inner.constvars, *inner.invars), inner.outvars, inner.eqns,
                   inner.effects, inner.debug_info)  # fmt: skip
    return ClosedJaxpr(opened, []), list(closed.consts), trees[0]


def _check_tree(func_name: str, expected_name: str, actual: Any, expected: Any, aux: bool) -> None:
    if aux:
        children = tree_util.treedef_children(actual)
        if len(children) != 2:
            raise ValueError(f"{func_name}() produced a pytree with structure {actual}, but a "
                             "pair of output pytree and auxiliary data was expected.")  # fmt: skip
        actual = children[0]
    if actual != expected:
        raise TypeError(f"{func_name}() output pytree structure must match {expected_name}, "
                        f"got {actual} and {expected}.")  # fmt: skip


def _check_shapes(func_name: str, expected_name: str, actual: Any, expected: Any) -> None:
    actual_shapes = [np.shape(x) for x in actual]
    expected_shapes = [np.shape(x) for x in expected]
    if actual_shapes != expected_shapes:
        raise ValueError(f"{func_name}() output shapes must match {expected_name}, "
                         f"got {actual_shapes} and {expected_shapes}")  # fmt: skip


def _shape_checked(fun: Callable[..., Any], name: str, leaves: Sequence[Any], aux: bool) -> Any:
    def checked(x: Any) -> Any:
        y = fun(x)
        _check_shapes(name, "b", tree_util.tree_leaves(y[0] if aux else y), leaves)
        return y

    return checked


# --- the primitive ----------------------------------------------------------------------------

linear_solve_p: Final = Primitive("custom_linear_solve", multiple_results=True)


@abstract_eval_rules.register(linear_solve_p)
def _linear_solve_abstract_eval(
    *args: AbstractValue, const_lengths: _LinearSolveTuple, jaxprs: _LinearSolveTuple
) -> list[AbstractValue]:
    b = list(args[sum(const_lengths) :])
    num_aux = len(jaxprs.solve.out_avals) - len(jaxprs.matvec.out_avals)
    return b + (list(jaxprs.solve.out_avals[-num_aux:]) if num_aux > 0 else [])


@impl_rules.register(linear_solve_p)
def _linear_solve_impl(*args: Any, const_lengths: Any, jaxprs: Any) -> list[Any]:
    params, b = _split(args, const_lengths)
    return _run(jaxprs.solve, *params.solve, *b)


def _linear_solve_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, const_lengths: Any, jaxprs: Any
) -> tuple[list[Any], list[Any]]:
    # Differentiating matvec(x) = b: matvec(dx) = db - dmatvec(x), one more solve.
    kwargs = {"const_lengths": const_lengths, "jaxprs": jaxprs}
    x = linear_solve_p.bind(*primals, **kwargs)
    params, _ = _split(primals, const_lengths)
    params_dot, b_dot = _split(tangents, const_lengths)
    x_leaves = x[: len(b_dot)]
    if all(type(p) is Zero for p in params_dot.matvec):
        rhs = [instantiate_zeros(t) for t in b_dot]
    else:
        zeros = [zero_of(v) for v in x_leaves]
        _, matvec_dot = jvp_flat(
            functools.partial(_run, jaxprs.matvec),
            [*params.matvec, *x_leaves],
            [*params_dot.matvec, *zeros],
        )
        rhs = [instantiate_zeros(t) - m for t, m in zip(b_dot, matvec_dot, strict=True)]
    x_dot = linear_solve_p.bind(*_flatten(params), *rhs, **kwargs)
    aux_dot = [zero_of(a) for a in x_dot[len(b_dot) :]]
    return x, [*x_dot[: len(b_dot)], *aux_dot]


def _linear_solve_transpose(
    cts: Sequence[Any], *primals: Any, const_lengths: Any, jaxprs: Any
) -> list[Any]:
    if jaxprs.transpose_solve is None:
        raise TypeError(
            "transpose_solve required for backwards mode automatic differentiation of "
            "custom_linear_solve"
        )
    params, b = _split(primals, const_lengths)
    if any(is_undefined(x) for xs in params for x in xs):
        raise NotImplementedError("open an issue at https://github.com/google/jax !!")
    x_ct, other_cts = list(cts[: len(b)]), cts[len(b) :]
    if any(type(ct) is not Zero for ct in other_cts):
        raise NotImplementedError("open an issue at https://github.com/google/jax !!")
    b_ct = linear_solve_p.bind(
        *_flatten(params.transpose()),
        *[instantiate_zeros(ct) for ct in x_ct],
        const_lengths=const_lengths.transpose(),
        jaxprs=jaxprs.transpose(),
    )
    return [None] * sum(const_lengths) + list(b_ct[: len(b)])


jvp_rules.set(linear_solve_p, _linear_solve_jvp)
transpose_rules.set(linear_solve_p, _linear_solve_transpose)


def _batch_fixpoint(
    jaxprs: Any, axis_data: AxisData, params_bat: Any, b_bat: list[bool]
) -> tuple[Any, list[bool], list[bool]]:
    """JAX's fixpoint: which of b and x end up batched once every function is batched."""
    matvec, vecmat, solve, solve_t = jaxprs
    num_out = len(matvec.out_avals)
    num_aux = len(solve.out_avals) - num_out
    x_bat = [False] * len(solve.out_avals)
    for _ in range(1 + len(b_bat) + len(solve.out_avals)):
        solve_b, solve_x_bat = batch_jaxpr_front(solve, axis_data, params_bat.solve + b_bat, x_bat)
        vecmat_b = None
        x_bat_out = solve_x_bat
        if vecmat is not None:
            vecmat_b, vecmat_x_bat = batch_jaxpr_front(
                vecmat, axis_data, params_bat.vecmat + b_bat, b_bat
            )
            x_bat_out = list(map(operator.or_, vecmat_x_bat + [True] * num_aux, solve_x_bat))
        x_noaux = x_bat_out[:num_out]
        matvec_b, matvec_b_bat = batch_jaxpr_front(
            matvec, axis_data, params_bat.matvec + x_noaux, b_bat
        )
        solve_t_b = None
        b_bat_out = list(map(operator.or_, matvec_b_bat, b_bat))
        if solve_t is not None:
            solve_t_b, solve_t_bat = batch_jaxpr_front(
                solve_t, axis_data, params_bat.transpose_solve + x_noaux, x_bat_out
            )
            b_bat_out = [m or s or o for m, s, o in zip(matvec_b_bat, solve_t_bat, b_bat,
                                                         strict=False)]  # fmt: skip
        if x_bat_out == x_bat and b_bat_out == b_bat:
            return _LinearSolveTuple(matvec_b, vecmat_b, solve_b, solve_t_b), b_bat, solve_x_bat
        x_bat, b_bat = x_bat_out, b_bat_out
    raise AssertionError("Fixedpoint not reached")


def _linear_solve_batch(
    axis_data: AxisData, args: Sequence[Any], dims: Sequence[Any], *, const_lengths: Any,
    jaxprs: Any,
) -> tuple[list[Any], list[Any]]:  # fmt: skip
    params, b = _split(args, const_lengths)
    params_dims, b_dims = _split(dims, const_lengths)
    params_bat = _LinearSolveTuple(*[[d is not None for d in g] for g in params_dims])
    orig_b_bat = [d is not None for d in b_dims]
    batched, b_bat, x_bat = _batch_fixpoint(jaxprs, axis_data, params_bat, orig_b_bat)
    new_params = [
        moveaxis(x, d, 0) if d is not None and d != 0 else x
        for x, d in zip(_flatten(params), _flatten(params_dims), strict=True)
    ]
    new_b = [
        broadcast_batched(x, axis_data.size, 0)
        if now and not was
        else moveaxis(x, d, 0)
        if now and d != 0
        else x
        for x, d, was, now in zip(b, b_dims, orig_b_bat, b_bat, strict=True)
    ]
    outs = linear_solve_p.bind(*new_params, *new_b, const_lengths=const_lengths, jaxprs=batched)
    return list(outs), [0 if bat else None for bat in x_bat]


batching_rules.set(linear_solve_p, _linear_solve_batch)


# --- the API ----------------------------------------------------------------------------------


def custom_linear_solve(
    matvec: Callable[[Any], Any],
    b: Any,
    solve: Callable[[Callable[[Any], Any], Any], Any],
    transpose_solve: Callable[[Callable[[Any], Any], Any], Any] | None = None,
    symmetric: bool = False,
    has_aux: bool = False,
) -> Any:
    """`solve(matvec, b)`, differentiated as the solution `x` of `matvec(x) == b` (which it
    is assumed to be). Reverse mode needs `transpose_solve` (or `symmetric=True`)."""
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    b_leaves, tree = tree_util.tree_flatten(b)
    avals = [typeof(x) for x in b_leaves]

    def on_tree(fun: Callable[[Any], Any]) -> Callable[..., Any]:
        return lambda *xs: fun(tree_util.tree_unflatten(tree, xs))

    matvec_jaxpr, matvec_consts, out_tree = _stage(
        on_tree(_shape_checked(matvec, "matvec", b_leaves, False)), avals
    )
    _check_tree("matvec", "b", out_tree, tree, False)
    solve_fun = _shape_checked(functools.partial(solve, matvec), "solve", b_leaves, has_aux)
    solve_jaxpr, solve_consts, out_tree = _stage(on_tree(solve_fun), avals)
    _check_tree("solve", "b", out_tree, tree, has_aux)
    vecmat_jaxpr = tr_solve_jaxpr = None
    vecmat_consts: list[Any] = []
    tr_solve_consts: list[Any] = []
    if transpose_solve is not None:
        if symmetric:
            vecmat, vecmat_jaxpr, vecmat_consts = matvec, matvec_jaxpr, matvec_consts
        else:
            transposed = linear_transpose(matvec, b)
            vecmat = lambda x: transposed(x)[0]  # noqa: E731
            vecmat_jaxpr, vecmat_consts, _ = _stage(on_tree(vecmat), avals)
        tr_fun = functools.partial(transpose_solve, vecmat)
        tr_solve_jaxpr, tr_solve_consts, out_tree = _stage(
            on_tree(_shape_checked(tr_fun, "transpose_solve", b_leaves, has_aux)), avals
        )
        _check_tree("transpose_solve", "b", out_tree, tree, has_aux)
    consts = [matvec_consts, vecmat_consts, solve_consts, tr_solve_consts]
    out = linear_solve_p.bind(
        *_flatten(consts),
        *b_leaves,
        const_lengths=_LinearSolveTuple(*map(len, consts)),
        jaxprs=_LinearSolveTuple(matvec_jaxpr, vecmat_jaxpr, solve_jaxpr, tr_solve_jaxpr),
    )
    if has_aux:
        return tree_util.tree_unflatten(out_tree, out)
    return tree_util.tree_unflatten(tree, out)


def custom_root(
    f: Callable[[Any], Any],
    initial_guess: Any,
    solve: Callable[[Callable[[Any], Any], Any], Any],
    tangent_solve: Callable[[Callable[[Any], Any], Any], Any],
    has_aux: bool = False,
) -> Any:
    """`solve(f, initial_guess)` (a root of `f`), differentiated with respect to what `f`
    closes over by the implicit function theorem; `tangent_solve(g, y)` solves the linearized
    system `g(x) = y`."""
    guess_leaves, tree = tree_util.tree_flatten(initial_guess)
    avals = [typeof(x) for x in guess_leaves]

    def on_tree(fun: Callable[..., Any], count: int = 1) -> Callable[..., Any]:
        def flat(*xs: Any) -> Any:
            n = len(guess_leaves)
            groups = [tree_util.tree_unflatten(tree, xs[i * n : (i + 1) * n]) for i in range(count)]
            return fun(*groups)

        return flat

    f_jaxpr, f_consts, out_tree = _stage(on_tree(f), avals)
    _check_tree("f", "initial_guess", out_tree, tree, False)
    solve_jaxpr, solve_consts, solution_tree = _stage(on_tree(functools.partial(solve, f)), avals)
    _check_tree("solve", "initial_guess", solution_tree, tree, has_aux)

    def linearize_and_solve(x: Any, b: Any) -> Any:
        _, f_jvp = linearize(f, x)
        return tangent_solve(f_jvp, b)

    l_and_s_jaxpr, l_and_s_consts, out_tree = _stage(on_tree(linearize_and_solve, 2), avals * 2)
    _check_tree("tangent_solve", "x", out_tree, tree, False)
    n_f, n_solve = len(f_consts), len(solve_consts)
    num_out = len(guess_leaves)

    @custom_jvp
    def root(*args: Any) -> Any:
        solve_params = args[n_f : n_f + n_solve]
        guess = args[n_f + n_solve + len(l_and_s_consts) :]
        return tuple(_run(solve_jaxpr, *solve_params, *guess))

    @root.defjvp
    def root_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
        f_params = list(primals[:n_f])
        l_and_s_params = primals[n_f + n_solve : n_f + n_solve + len(l_and_s_consts)]
        sol = root(*primals)
        solution, aux = list(sol[:num_out]), list(sol[num_out:])
        f_params_dot = [instantiate_zeros(t) for t in tangents[:n_f]]
        _, rhs = jvp_flat(lambda *ps: _run(f_jaxpr, *ps, *solution), f_params, f_params_dot)
        solution_dot = [-v for v in _run(l_and_s_jaxpr, *l_and_s_params, *solution, *rhs)]
        aux_dot = [np.zeros(np.shape(a), np.result_type(a)) for a in aux]
        return tuple(sol), (*solution_dot, *aux_dot)

    flat = root(*f_consts, *solve_consts, *l_and_s_consts, *guess_leaves)
    return tree_util.tree_unflatten(solution_tree, list(flat))


__all__ = ["custom_linear_solve", "custom_root", "linear_solve_p"]
