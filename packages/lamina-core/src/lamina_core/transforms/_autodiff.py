"""The differentiation API, as JAX's: `jvp`, `linearize`, `vjp`, `grad`, `value_and_grad`,
`linear_transpose`.

These functions flatten pytrees, check their arguments with JAX's messages, and call the
interpreters (`interpreters.jvp`, `.linearize`, `.transpose`). Reverse mode is direct
linearization followed by transposition of the linear jaxpr, as in JAX 0.10.2.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters import (
    UndefinedPrimal,
    Zero,
    backward_pass,
    instantiate_zeros,
    jvp_flat,
    linearize_flat,
    trace_to_jaxpr,
    zeros_like_aval,
)
from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    DebugInfo,
    ShapedArray,
    dtypes,
    transform_name_stack,
    types_match,
)
from lamina_core.trace import (
    Tracer,
    api_boundary,
    canonical_value,
    current_trace,
    eval_jaxpr,
    pvary_like,
    typeof,
)
from lamina_core.transforms._make_jaxpr import func_src_info, wraps_as_jax
from lamina_core.transforms._vjp_refs import pullback_with_refs
from lamina_core.tree import tree_util


def _check_callable(fun: Any) -> None:
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")


def _canonical(x: Any) -> Any:
    return x if isinstance(x, Tracer) else canonical_value(x)[0]


def _flat_fun(
    fun: Callable[..., Any], in_tree: Any, out_trees: list[Any]
) -> Callable[..., list[Any]]:
    def flat(*leaves: Any) -> list[Any]:
        args = tree_util.tree_unflatten(in_tree, leaves)
        out = fun(*args)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_trees.append(out_tree)
        return out_leaves

    return flat


def _flat_fun_aux(
    fun: Callable[..., Any], in_tree: Any, out_trees: list[Any], aux: list[Any]
) -> Callable[..., list[Any]]:
    def flat(*leaves: Any) -> list[Any]:
        out = fun(*tree_util.tree_unflatten(in_tree, leaves))
        if not isinstance(out, (list, tuple)) or len(out) != 2:
            raise TypeError(
                "expected function with aux output to return a two-element tuple, but got "
                f"type {type(out)} with value {out!r}"
            )
        main, extra = out
        out_leaves, out_tree = tree_util.tree_flatten(main)
        out_trees.append(out_tree)
        aux.append(extra)
        return out_leaves

    return flat


def _strip(trace_outputs: Any, pair: Callable[[Any], tuple[Any, Any]]) -> Any:
    return tree_util.tree_map(lambda x: pair(x)[0], trace_outputs)


# --- forward mode -------------------------------------------------------------------------


def jvp(
    fun: Callable[..., Any], primals: Any, tangents: Any, has_aux: bool = False
) -> tuple[Any, ...]:
    """The value of `fun(*primals)` and its Jacobian applied to `tangents` (forward mode)."""
    _check_callable(fun)
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            "primal and tangent arguments to jax.jvp must be tuples or lists; found "
            f"{type(primals).__name__} and {type(tangents).__name__}."
        )
    p_leaves, p_tree = tree_util.tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError(
            "primal and tangent arguments to jax.jvp must have the same tree structure; "
            f"primals have tree structure {tree_util.treedef_repr(p_tree)} whereas tangents "
            f"have tree structure {tree_util.treedef_repr(t_tree)}."
        )
    p_leaves = [_canonical(p) for p in p_leaves]
    tangents_in = []
    for p, t in zip(p_leaves, t_leaves, strict=True):
        p_aval = typeof(p)
        if isinstance(p_aval, ShapedArray):
            expected = p_aval.to_tangent_aval().dtype
            t_dtype = _dtype_of(t)
            if t_dtype != expected:
                raise TypeError(
                    "primal and tangent arguments to jax.jvp do not match; dtypes must be "
                    "equal, or in case of int/bool primal dtype the tangent dtype must be "
                    f"float0.Got primal dtype {p_aval.dtype} and so expected tangent dtype "
                    f"{expected}, but got tangent dtype {t_dtype} instead."
                )
            if np.shape(t) != p_aval.shape:
                raise ValueError(
                    "jvp called with different primal and tangent shapes;Got primal shape "
                    f"{p_aval.shape} and tangent shape as {np.shape(t)}"
                )
        tangents_in.append(Zero(p_aval.to_tangent_aval()) if _is_float0(t) else _canonical(t))
    out_trees: list[Any] = []
    aux: list[Any] = []
    flat = (
        _flat_fun_aux(fun, p_tree, out_trees, aux) if has_aux else _flat_fun(fun, p_tree, out_trees)
    )
    with transform_name_stack("jvp"):
        primals_out, tangents_out = jvp_flat(flat, p_leaves, tangents_in)
    out_p = tree_util.tree_unflatten(out_trees[0], primals_out)
    out_t = tree_util.tree_unflatten(out_trees[0], tangents_out)
    if has_aux:
        return out_p, out_t, _plain_aux(aux[0])
    return out_p, out_t


def _is_float0(t: Any) -> bool:
    """True for a float0 tangent (a hi type's tangent has no dtype: never)."""
    return getattr(t, "dtype", None) == dtypes.float0 or (
        getattr(typeof(t), "dtype", None) == dtypes.float0
    )


def _dtype_of(x: Any) -> Any:
    """`x`'s dtype as JAX would give the array it becomes (64-bit types narrowed without x64)."""
    dtype = getattr(x, "dtype", None)
    if dtype is not None:
        return dtypes.canonicalize_dtype(dtype)
    return typeof(x).dtype  # type: ignore[attr-defined]  # arrays


def _plain_aux(aux: Any) -> Any:
    """Auxiliary outputs leave the transformation as plain values of the enclosing trace."""

    def primal(x: Any) -> Any:
        while isinstance(x, Tracer) and hasattr(x, "primal") and _is_transient(x):
            x = x.primal
        return x

    return tree_util.tree_map(primal, aux)


def _is_transient(x: Tracer) -> bool:
    # A JVP or linearize tracer whose trace has finished: its primal is what the caller sees.
    return not current_trace().encloses(x._trace)


def _linearize_tree(
    what: str,
    fun: Callable[..., Any],
    primals: tuple[Any, ...],
    has_aux: bool,
    for_vjp: bool = True,
) -> tuple[list[Any], Any, list[Any], list[bool], ClosedJaxpr, list[Any], list[Any]]:
    """Linearize `fun` at the pytree `primals`: flat primals, their tree, primal outputs,
    nonzero flags, the linear jaxpr, the output trees and the auxiliary outputs seen."""
    _check_callable(fun)
    p_leaves, p_tree = tree_util.tree_flatten(primals)
    p_leaves = [_canonical(p) for p in p_leaves]
    out_trees: list[Any] = []
    aux: list[Any] = []
    flat = (
        _flat_fun_aux(fun, p_tree, out_trees, aux) if has_aux else _flat_fun(fun, p_tree, out_trees)
    )
    debug = DebugInfo(what, func_src_info(fun))
    primals_out, nonzeros, linear = linearize_flat(flat, p_leaves, debug, for_vjp=for_vjp)
    return p_leaves, p_tree, primals_out, nonzeros, linear, out_trees, aux


def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """`fun(*primals)` and a function applying its Jacobian at `primals` to tangents."""
    p_leaves, p_tree, primals_out, nonzeros, linear, out_trees, aux = _linearize_tree(
        "linearize", fun, primals, has_aux, for_vjp=False
    )
    in_avals = [typeof(p) for p in p_leaves]
    out_avals = [typeof(p).to_tangent_aval() for p in primals_out]
    out_tree = out_trees[0]

    def f_jvp(*tangents: Any) -> Any:
        t_leaves, t_tree = tree_util.tree_flatten(tangents)
        if t_tree != p_tree:
            raise TypeError(f"expected {p_tree}, got {t_tree}")
        for aval, t in zip(in_avals, t_leaves, strict=True):
            expected = aval.to_tangent_aval()
            got = typeof(t)
            if getattr(got, "shape", None) != getattr(expected, "shape", None) or getattr(
                got, "dtype", None
            ) != getattr(expected, "dtype", None):
                raise ValueError(
                    f"linearized function called on tangent values inconsistent with the "
                    f"original primal values: got tangent aval {got} for primal aval "
                    f"{aval.strip_weak_type()}"
                )
        nz_out = iter(eval_jaxpr(linear, (), *t_leaves))
        outs = [
            next(nz_out) if nz else zeros_like_aval(a)
            for nz, a in zip(nonzeros, out_avals, strict=True)
        ]
        return tree_util.tree_unflatten(out_tree, outs)

    out = tree_util.tree_unflatten(out_tree, primals_out)
    if has_aux:
        return out, f_jvp, _plain_aux(aux[0])
    return out, f_jvp


# --- reverse mode -------------------------------------------------------------------------


class VJPFunction:
    """The pullback `jax.vjp` returns: maps output cotangents to input cotangents."""

    def __init__(
        self,
        linear: ClosedJaxpr,
        nonzeros: Sequence[bool],
        in_tree: Any,
        out_tree: Any,
        out_avals: Sequence[AbstractValue],
        fun_name: str,
    ) -> None:
        self.linear = linear
        self.nonzeros = tuple(nonzeros)
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.out_avals = tuple(out_avals)
        self.fun_name = fun_name

    def __call__(self, ct: Any) -> Any:
        cts, ct_tree = tree_util.tree_flatten(ct, is_leaf=lambda x: isinstance(x, Zero))
        if ct_tree != self.out_tree:
            raise ValueError(
                "unexpected tree structure.\n\nThe argument to a VJP function returned by "
                "`jax.vjp` must match the pytree\nstructure of the differentiated function "
                f"{self.fun_name}.\n\nBut the tree structures differ: the function's output "
                f"has structure {self.out_tree}, the cotangent has {ct_tree}."
            )
        for c, aval in zip(cts, self.out_avals, strict=True):
            if isinstance(c, Zero):
                continue
            got = typeof(c)
            expected = aval.to_ct_aval()
            if not _ct_type_ok(got, expected):
                raise ValueError(
                    "unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got "
                    f"{got.str_short(False)}, but expected {expected.str_short(False)} because "
                    "the corresponding output of the differentiated function had JAX type "
                    f"{aval.str_short(False)}"
                )
        nz_cts = [
            _canonical(c) if not isinstance(c, Zero) else c
            for c, nz in zip(cts, self.nonzeros, strict=True)
            if nz
        ]
        jaxpr = self.linear.jaxpr
        args = [UndefinedPrimal(v.aval) for v in jaxpr.invars]
        in_cts = backward_pass(jaxpr, self.linear.consts, args, nz_cts, transform_stack=True)
        return tree_util.tree_unflatten(self.in_tree, [instantiate_zeros(c) for c in in_cts])

    def with_refs(self, *maybe_ct_refs: Any) -> Callable[[Any], Any]:
        """This pullback delivering each input's cotangent as asked: `GradValue()`,
        `DontWant()`, or a Ref to add it into (see `_vjp_refs`)."""
        return pullback_with_refs(self, self.in_tree, maybe_ct_refs)


def _flatten_vjp_function(f: VJPFunction) -> tuple[list[Any], tuple[Any, ...]]:
    # A pytree whose leaves are the residuals, as JAX's `VJP`: a pullback can leave a `jit`
    # (`jax.fwd_and_bwd`'s forward) and enter another; the rest is static, kept by identity.
    static = (f.linear.jaxpr, f.nonzeros, f.in_tree, f.out_tree, f.out_avals, f.fun_name)
    return list(f.linear.consts), static


def _unflatten_vjp_function(static: tuple[Any, ...], residuals: Any) -> VJPFunction:
    jaxpr, nonzeros, in_tree, out_tree, out_avals, fun_name = static
    linear = ClosedJaxpr(jaxpr, list(residuals))
    return VJPFunction(linear, nonzeros, in_tree, out_tree, out_avals, fun_name)


tree_util.register_pytree_node(VJPFunction, _flatten_vjp_function, _unflatten_vjp_function)


def _ct_type_ok(got: AbstractValue, expected: AbstractValue) -> bool:
    """A cotangent of type `got` where `expected` is due: arrays by shape and dtype (JAX's
    exceptions included), other types (hi types) by their own equality."""
    if getattr(expected, "dtype", None) is None or getattr(got, "dtype", None) is None:
        return types_match(got, expected)
    return getattr(got, "shape", None) == getattr(expected, "shape", None) and (
        got.dtype == expected.dtype  # type: ignore[attr-defined]  # arrays
        or _dtype_exception(got, expected)
    )


def _dtype_exception(got: AbstractValue, expected: AbstractValue) -> bool:
    # JAX accepts a float0 cotangent for an integer output and any float for float0.
    return getattr(expected, "dtype", None) == dtypes.float0


def vjp(
    fun: Callable[..., Any], *primals: Any, has_aux: bool = False, reduce_axes: Any = ()
) -> tuple[Any, ...]:
    """`fun(*primals)` and its pullback, mapping output cotangents to input cotangents.

    Raises:
        NotImplementedError: `reduce_axes` is given (deprecated in JAX, which refuses it).
    """
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to vjp is deprecated")
    _, p_tree, primals_out, nonzeros, linear, out_trees, aux = _linearize_tree(
        "vjp", fun, primals, has_aux
    )
    out_tree = out_trees[0]
    pullback = VJPFunction(
        linear, nonzeros, p_tree, out_tree, [typeof(p) for p in primals_out], func_src_info(fun)
    )
    out = tree_util.tree_unflatten(out_tree, primals_out)
    if has_aux:
        return out, pullback, _plain_aux(aux[0])
    return out, pullback


def _argnums(argnums: int | Sequence[int]) -> int | tuple[int, ...]:
    if isinstance(argnums, (int, np.integer)) and not isinstance(argnums, bool):
        return int(argnums)
    try:
        nums = tuple(int(a) for a in argnums)  # type: ignore[union-attr]
    except TypeError:
        raise TypeError(f"argnums must be an int or a sequence of ints, got {argnums!r}") from None
    return nums


_INEXACT: dict[Any, bool] = {}
"""Whether a dtype is inexact, by dtype (a cache: `issubdtype` is slow, and grad asks per input)."""


def _is_inexact(dtype: Any) -> bool:
    known = _INEXACT.get(dtype)
    if known is None:
        # `kind` is "V" for ml_dtypes' floats (bfloat16, float8_*): ask the dtype lattice.
        known = _INEXACT[dtype] = bool(dtypes.issubdtype(dtype, np.inexact))
    return known


def _check_input_dtype(name: str, holomorphic: bool, allow_int: bool, x: Any) -> None:
    aval = typeof(x)
    if not isinstance(aval, ShapedArray):
        return
    inexact = _is_inexact(aval.dtype)
    if holomorphic and aval.dtype.kind != "c":
        raise TypeError(
            f"{name} with holomorphic=True requires inputs with complex dtype, but got "
            f"{aval.dtype.name}."
        )
    if aval.dtype.kind in "biu" or aval.dtype == dtypes.float0:
        if not allow_int:
            raise TypeError(
                f"{name} requires real- or complex-valued inputs (input dtype that is a "
                f"sub-dtype of np.inexact), but got {aval.dtype.name}. If you want to use "
                "Boolean- or integer-valued inputs, use vjp or set allow_int to True."
            )
    elif not inexact:
        raise TypeError(
            f"{name} requires numerical-valued inputs (input dtype that is a sub-dtype of "
            f"np.bool_ or np.number), but got {aval.dtype.name}."
        )


def _check_output_dtype(name: str, holomorphic: bool, x: Any) -> None:
    aval = typeof(x)
    dtype = aval.dtype  # type: ignore[attr-defined]  # arrays
    if holomorphic:
        if dtype.kind != "c":
            raise TypeError(
                f"{name} with holomorphic=True requires outputs with complex dtype, but got "
                f"{dtype.name}."
            )
    elif dtype.kind == "c":
        raise TypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {dtype.name}. For holomorphic differentiation, pass "
            "holomorphic=True. For differentiation of non-holomorphic functions involving "
            "complex outputs, use jax.vjp directly."
        )
    elif not _is_inexact(dtype):  # not complex here: inexact is floating
        raise TypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {dtype.name}. For differentiation of functions with "
            "integer outputs, use jax.vjp directly."
        )


def _check_scalar(x: Any) -> None:
    try:
        aval = typeof(x)
    except TypeError as e:
        raise TypeError(
            f"Gradient only defined for scalar-output functions. Output was {x}."
        ) from e
    if not isinstance(aval, ShapedArray):
        raise TypeError(
            f"Gradient only defined for scalar-output functions. Output had abstract value {aval}."
        )
    if aval.shape != ():
        raise TypeError(
            f"Gradient only defined for scalar-output functions. Output had shape: {aval.shape}."
        )


OneMaker = Callable[[Any], Any]
_one_makers: dict[type, OneMaker] = {}


def register_one_maker(aval_type: type, make: OneMaker) -> None:
    """How to build the scalar 1 that seeds `grad`'s pullback of a value of an aval type:
    `make(x)` has `x`'s dtype and weak type, laid out over `x`'s mesh (lax registers
    `ShapedArray`'s, with the primitives it owns)."""
    _one_makers[aval_type] = make


def _one_like(x: Any) -> Any:
    aval = typeof(x)
    make = _one_makers.get(type(aval))
    if make is None:
        raise TypeError(f"no gradient seed can be built for values of type {aval.str_short(True)}")
    # JAX's `full_like` seed: in a checked shard_map body varying as `x` does.
    return pvary_like(make(x), x)


def fix_other_args(
    fun: Callable[..., Any],
    positions: Sequence[int],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """`fun` of the positional arguments at `positions` only (the others fixed to `args`),
    and those arguments: what the transformations with `argnums` differentiate."""
    dyn_args = tuple(args[i] for i in positions)

    def partial_fun(*dyn: Any) -> Any:
        full = list(args)
        for i, value in zip(positions, dyn, strict=True):
            full[i] = value
        return fun(*full, **kwargs)

    functools.update_wrapper(partial_fun, fun)
    return partial_fun, dyn_args


def value_and_grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[..., tuple[Any, Any]]:
    """A function returning `fun`'s value and its gradient with respect to `argnums`."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to grad is deprecated")
    _check_callable(fun)
    nums = _argnums(argnums)

    @api_boundary
    @wraps_as_jax(fun)
    def value_and_grad_f(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        wanted = (nums,) if isinstance(nums, int) else nums
        max_argnum = max(wanted) if wanted else -1
        if max_argnum >= len(args):
            raise TypeError(
                f"differentiating with respect to argnums={nums} requires at least "
                f"{max_argnum + 1} positional arguments to be passed by the caller, but got "
                f"only {len(args)} positional arguments."
            )
        positions = [a % len(args) for a in wanted]
        partial_fun, dyn_args = fix_other_args(fun, positions, args, kwargs)
        for leaf in tree_util.tree_leaves(dyn_args):
            _check_input_dtype("grad", holomorphic, allow_int, leaf)
        aux = None
        if has_aux:
            ans, pullback, aux = vjp(partial_fun, *dyn_args, has_aux=True)
        else:
            ans, pullback = vjp(partial_fun, *dyn_args)
        _check_scalar(ans)
        tree_util.tree_map(functools.partial(_check_output_dtype, "grad", holomorphic), ans)
        g = pullback(_one_like(ans))
        g = g[0] if isinstance(nums, int) else g
        return ((ans, aux) if has_aux else ans), g

    return value_and_grad_f


def grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[..., Any]:
    """A function returning the gradient of scalar-valued `fun` with respect to `argnums`."""
    value_and_grad_f = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, reduce_axes)

    @api_boundary
    @wraps_as_jax(fun)
    def grad_f(*args: Any, **kwargs: Any) -> Any:
        value, g = value_and_grad_f(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return grad_f


def linear_transpose(
    fun: Callable[..., Any], *primals: Any, reduce_axes: Sequence[Any] = ()
) -> Callable[..., Any]:
    """The transpose of the linear function `fun`, at arguments shaped like `primals`."""
    _check_callable(fun)
    p_leaves, in_tree = tree_util.tree_flatten(primals)
    in_avals = [typeof(p).strip_weak_type() for p in p_leaves]
    out_trees: list[Any] = []
    closed = trace_to_jaxpr(
        _flat_fun(fun, in_tree, out_trees),
        in_avals,
        DebugInfo("linear_transpose", func_src_info(fun)),
    )
    out_tree = out_trees[0]
    out_avals = closed.out_avals
    in_dtypes = [getattr(a, "dtype", None) for a in in_avals]
    out_dtypes = [getattr(a, "dtype", None) for a in out_avals]
    in_kinds = {dtypes.issubdtype(d, np.inexact) for d in in_dtypes if d is not None}
    out_kinds = {dtypes.issubdtype(d, np.inexact) for d in out_dtypes if d is not None}
    if in_kinds | out_kinds not in ({True}, {False}, set()):
        raise TypeError(
            "linear_transpose only supports [float or complex] -> [float or complex], and "
            f"integer -> integer functions, but got {in_dtypes} -> {out_dtypes}."
        )

    def transposed(*out_cts: Any) -> Any:
        cts = out_cts[0] if len(out_cts) == 1 else out_cts
        ct_leaves, ct_tree = tree_util.tree_flatten(cts)
        if ct_tree != out_tree:
            raise TypeError(
                "cotangent tree does not match function output, expected "
                f"{out_tree} but got {ct_tree}"
            )
        for c, a in zip(ct_leaves, out_avals, strict=True):
            if np.shape(c) != a.shape or _dtype_of(c) != a.dtype:  # type: ignore[attr-defined]
                raise TypeError(
                    "cotangent type does not match function output, expected "
                    f"{a.str_short(True)} but got {typeof(c).str_short(True)}"
                )
        args = [UndefinedPrimal(a) for a in in_avals]
        in_cts = backward_pass(closed.jaxpr, closed.consts, args, ct_leaves, transform_stack=True)
        return tree_util.tree_unflatten(in_tree, [instantiate_zeros(c) for c in in_cts])

    return transposed


__all__ = [
    "grad",
    "jvp",
    "linear_transpose",
    "linearize",
    "value_and_grad",
    "vjp",
]
