"""`cond` and `switch`: the `cond` primitive, which applies one of its `branches`.

`cond_p` takes `[index, *operands]`: an `i32[]` index (branch 0 is `cond`'s false branch)
and the operands every branch takes, the values the branches close over first. Outputs both
branches merely forward from an input are not computed by the primitive (as JAX).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    Effects,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    dtypes,
    effects_rules,
    impl_rules,
    types_match,
)
from lamina_core.lax._selection import clamp
from lamina_core.lax._structural import convert_element_type
from lamina_core.lax.control_flow.common import (
    PytreeLeaf,
    avals_short,
    capitalize,
    check_closure_aliasing,
    forwarded_value,
    forwarding,
    keystr,
    long_name,
    merge_common_consts,
    mismatch_extra,
    prune_outputs,
    structure_differences,
    trace_body,
)
from lamina_core.trace import eval_jaxpr, typeof, with_qdd
from lamina_core.transforms import func_src_info
from lamina_core.tree import tree_util

cond_p: Final = Primitive("cond", multiple_results=True)


def _check_branches(index: AbstractValue, ops: Sequence[AbstractValue], branches: Any) -> None:
    if type(branches) is not tuple or not all(type(b) is ClosedJaxpr for b in branches):
        raise TypeError(
            f"invalid cond param branches of type {type(branches).__name__}, tuple of "
            f"ClosedJaxpr required: {branches}"
        )
    if not branches:
        raise TypeError("cond requires at least one branch function")
    first = branches[0]
    for i, b in enumerate(branches[1:], 1):
        if len(b.in_avals) != len(first.in_avals):
            raise TypeError(
                f"cond branch 0 takes {len(first.in_avals)} inputs, branch {i} takes "
                f"{len(b.in_avals)}"
            )
        if len(b.out_avals) != len(first.out_avals):
            raise TypeError(
                f"cond branch 0 outputs {len(first.out_avals)} values, branch {i} outputs "
                f"{len(b.out_avals)}"
            )
        if not all(map(types_match, first.out_avals, b.out_avals)):
            raise TypeError(
                f"cond branches 0 and {i} have mismatching output types: "
                f"{avals_short(first.out_avals)} vs {avals_short(b.out_avals)}"
            )
    if len(ops) != len(first.in_avals):
        raise TypeError(
            f"cond called with {len(ops)} non-predicate operands, but branches take "
            f"{len(first.in_avals)} inputs"
        )
    if not isinstance(index, ShapedArray) or index.dtype != np.int32 or index.shape:
        raise TypeError(f"cond called with index of type {long_name(index)} instead of int32")
    if not all(map(types_match, first.in_avals, ops)):
        raise TypeError(
            f"cond branches take input types {avals_short(first.in_avals)}, called with "
            f"operands of type {avals_short(ops)}"
        )


@abstract_eval_rules.register(cond_p)
def _cond_abstract_eval(
    index: AbstractValue, *ops: AbstractValue, branches: tuple[ClosedJaxpr, ...]
) -> list[AbstractValue]:
    _check_branches(index, ops, branches)
    return list(branches[0].out_avals)


@effects_rules.register(cond_p)
def _cond_effects(*args: AbstractValue, branches: tuple[ClosedJaxpr, ...]) -> Effects:
    return frozenset().union(*(b.effects for b in branches))


@impl_rules.register(cond_p)
def _cond_impl(index: Any, *ops: Any, branches: tuple[ClosedJaxpr, ...]) -> list[Any]:
    i = int(np.clip(int(np.asarray(index)), 0, len(branches) - 1))
    return eval_jaxpr(branches[i], (), *ops)


def bind_cond(index: Any, ops: Sequence[Any], branches: tuple[ClosedJaxpr, ...]) -> list[Any]:
    outs: list[Any] = cond_p.bind(index, *ops, branches=branches)
    return outs


# --- the API -----------------------------------------------------------------------------------


class _NoOperand:
    __slots__ = ()


_NO_OPERAND: Final = _NoOperand()


def _branch_outputs_error(
    api: str, name1: str, name2: str, f1: Callable[..., Any], f2: Callable[..., Any],
    tree1: Any, avals1: Sequence[AbstractValue], tree2: Any, avals2: Sequence[AbstractValue],
) -> TypeError | None:  # fmt: skip
    """JAX's `_check_branch_outputs`: the error for branches whose outputs differ, if they do."""
    info1, info2 = func_src_info(f1), func_src_info(f2)
    paths = [
        p
        for p, _ in tree_util.tree_flatten_with_path(
            tree_util.tree_unflatten(tree1, list(range(len(avals1))))
        )[0]
    ]

    def component(p: Sequence[Any]) -> str:
        return f" at path {keystr(p)}" if p else ""

    if tree1 != tree2:
        leaf = PytreeLeaf()
        t1 = tree_util.tree_unflatten(tree1, [leaf] * len(avals1))
        t2 = tree_util.tree_unflatten(tree2, [leaf] * len(avals2))
        diffs = [
            f"{name1} output{component(p)} is a {a} but {name2} output{component(p)} is a "
            f"{b}, so {why}"
            for p, a, b, why in structure_differences(t1, t2)
        ]
        if not diffs:
            return None
        if len(diffs) == 1:
            differences = f"{diffs[0]}.\n"
        else:
            differences = "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"
        return TypeError(
            f"{api} branch outputs must have the same pytree structure, but they differ:\n\n"
            f"{name1} is {info1}\n{name2} is {info2}\n\n{differences}\n"
            f"Revise {name1} and/or {name2} so that they have the same pytree structure."
        )
    diffs = [
        f"the output of {name1}{component(p)} has type {long_name(a1)} but the corresponding "
        f"output of {name2} has type {long_name(a2)}{mismatch_extra(a1, a2)}"
        for p, a1, a2 in zip(paths, avals1, avals2, strict=True)
        if not types_match(a1, a2)
    ]
    if not diffs:
        return None
    if len(diffs) == 1:
        differences = f"{capitalize(diffs[0])}.\n"
    else:
        differences = "\n".join(f"  * {d};" for d in diffs[:-1]) + f"\n  * {diffs[-1]}.\n"
    # JAX's advice for outputs differing in the manual axes they vary over, word for word
    # (its tuple of axes and the branch it names come out as its code makes them).
    fixes = [
        f"applying `jax.lax.pcast(..., {tuple(b1.vma - b2.vma)}, to='varying')` to the output "
        f"of {n}{component(p)}"
        for p, a1, a2 in zip(paths, avals1, avals2, strict=True)
        for n, b1, b2 in ((name1, a2, a1), (name2, a1, a2))
        if isinstance(b1, ShapedArray) and isinstance(b2, ShapedArray)
        and not types_match(b1, b2) and b1.vma != b2.vma and b2.vma - b1.vma
    ]  # fmt: skip
    if not fixes:
        hint = ""
    elif len(fixes) == 1:
        hint = f"This might be fixed by {fixes[0]}.\n"
    else:
        hint = (
            "This might be fixed by:\n"
            + "\n".join(f"  * {d};" for d in fixes[:-1])
            + f"\n  * {fixes[-1]}.\n"
        )
    if hint:
        hint += (
            "See https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma for more "
            "information.\n\n"
        )
    return TypeError(
        f"{api} branches must have equal output types but they differ.\n\n"
        f"{name1} is {info1}\n{name2} is {info2}\n\n{differences}\n{hint}"
        f"Revise {name1} and/or {name2} so that all output types match."
    )


def _apply_branches(
    api: str,
    index: Any,
    funs: Sequence[Callable[..., Any]],
    names: Sequence[str],
    operands: tuple[Any, ...],
) -> Any:
    leaves, in_tree = tree_util.tree_flatten(operands)
    avals = with_qdd([typeof(x) for x in leaves], leaves)
    traced = [trace_body(api, f, in_tree, avals, operands) for f in funs]
    jaxprs, consts = merge_common_consts([t.jaxpr for t in traced], [t.consts for t in traced])
    check_closure_aliasing(traced[0], consts, leaves)
    for i in range(1, len(traced)):
        err = _branch_outputs_error(
            api, names[0], names[i], funs[0], funs[i],
            traced[0].out_tree, traced[0].out_avals, traced[i].out_tree, traced[i].out_avals,
        )  # fmt: skip
        if err is not None:
            raise err
    fwds = [forwarding(j.jaxpr) for j in jaxprs]
    in_fwd = [f[0] if len(set(f)) == 1 else None for f in zip(*fwds, strict=True)]
    keep = [f is None for f in in_fwd]
    branches = _with_joined_effects(tuple(prune_outputs(j, keep) for j in jaxprs))
    all_ins = [*consts, *leaves]
    outs = iter(bind_cond(index, all_ins, branches))
    flat = [next(outs) if f is None else forwarded_value(all_ins[f]) for f in in_fwd]
    return tree_util.tree_unflatten(traced[0].out_tree, flat)


def _with_joined_effects(branches: tuple[ClosedJaxpr, ...]) -> tuple[ClosedJaxpr, ...]:
    """Each branch typed with the effects of all of them, as JAX's `cond`/`switch` type them:
    whichever branch runs, the equation has every branch's effects."""
    joined = frozenset().union(*(b.effects for b in branches))
    return tuple(
        b if b.effects == joined else ClosedJaxpr(b.jaxpr.replace(effects=joined), b.consts)
        for b in branches
    )


def _index_dtype(x: Any) -> np.dtype[Any]:
    return dtypes.result_type(x)


def cond(
    pred: Any,
    true_fun: Any,
    false_fun: Any,
    *operands: Any,
    operand: Any = _NO_OPERAND,
) -> Any:
    """`true_fun(*operands)` if `pred` else `false_fun(*operands)`, both branches traced.

    Args:
      pred: a boolean or numeric scalar (numbers are compared with 0).
      true_fun, false_fun: functions of `operands` returning pytrees of equal types.
      operands: the branches' arguments (pytrees); `operand=` is the older keyword form.

    Raises:
      TypeError: for a non-scalar or non-numeric `pred`, non-callable branches, or branches
        whose outputs differ in structure or type (JAX's messages).
    """
    if not (callable(true_fun) and callable(false_fun)):
        if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
            # The 2020 form: cond(pred, true_operand, true_fun, false_operand, false_fun).
            x_true, f_true, x_false, f_false = true_fun, false_fun, *operands
            return cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true, x_false)
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    if not isinstance(operand, _NoOperand):
        if operands:
            raise TypeError(
                "if 'operand' keyword is passed then no positional operands can be passed, "
                f"got operand={operand!r} and positional operands {operands}"
            )
        operands = (operand,)
    if pred is None:
        raise TypeError("cond predicate is None")
    if isinstance(pred, Sequence) or np.ndim(pred) != 0:
        kind = f"type {type(pred)}" if isinstance(pred, Sequence) else f"shape {np.shape(pred)}."
        raise TypeError(f"Pred must be a scalar, got {pred} of {kind}")
    try:
        pred_dtype = _index_dtype(pred)
    except TypeError as err:
        raise TypeError(f"Pred type must be either boolean or number, got {pred}.") from err
    if pred_dtype.kind != "b":
        if pred_dtype.kind not in "iuf":
            raise TypeError(f"Pred type must be either boolean or number, got {pred_dtype}.")
        pred = pred != 0
    index = convert_element_type(pred, np.int32)
    return _cond_true_first(index, true_fun, false_fun, operands)


def _cond_true_first(
    index: Any,
    true_fun: Callable[..., Any],
    false_fun: Callable[..., Any],
    operands: tuple[Any, ...],
) -> Any:
    # JAX traces and checks the true branch first; the primitive's branch 0 is the false one.
    leaves, in_tree = tree_util.tree_flatten(operands)
    avals = with_qdd([typeof(x) for x in leaves], leaves)
    t_true = trace_body("cond", true_fun, in_tree, avals, operands)
    t_false = trace_body("cond", false_fun, in_tree, avals, operands)
    (true_j, false_j), consts = merge_common_consts(
        [t_true.jaxpr, t_false.jaxpr], [t_true.consts, t_false.consts]
    )
    check_closure_aliasing(t_true, consts, leaves)
    err = _branch_outputs_error(
        "cond", "true_fun", "false_fun", true_fun, false_fun,
        t_true.out_tree, t_true.out_avals, t_false.out_tree, t_false.out_avals,
    )  # fmt: skip
    if err is not None:
        raise err
    tf, ff = forwarding(true_j.jaxpr), forwarding(false_j.jaxpr)
    in_fwd = [i if i == j else None for i, j in zip(tf, ff, strict=True)]
    keep = [f is None for f in in_fwd]
    branches = _with_joined_effects((prune_outputs(false_j, keep), prune_outputs(true_j, keep)))
    all_ins = [*consts, *leaves]
    outs = iter(bind_cond(index, all_ins, branches))
    flat = [next(outs) if f is None else forwarded_value(all_ins[f]) for f in in_fwd]
    return tree_util.tree_unflatten(t_true.out_tree, flat)


def switch(
    index: Any, branches: Sequence[Callable[..., Any]], *operands: Any, operand: Any = _NO_OPERAND
) -> Any:
    """`branches[clamp(index)](*operands)`: the branch the (clamped) integer index selects."""
    if not all(callable(b) for b in branches):
        raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    if not isinstance(operand, _NoOperand):
        if operands:
            raise TypeError(
                "if 'operand' keyword is passed then no positional operands can be passed, "
                f"got operand={operand!r} and positional operands {operands}"
            )
        operands = (operand,)
    if np.ndim(index) != 0:
        raise TypeError(f"Branch index must be scalar, got {index} of shape {np.shape(index)}.")
    try:
        index_dtype = _index_dtype(index)
    except TypeError as err:
        raise TypeError(f"Index type must be an integer, got {index}.") from err
    if index_dtype.kind not in "iu":
        raise TypeError(f"Index type must be an integer, got {index} as {index_dtype}")
    funs = tuple(branches)
    if not funs:
        raise ValueError("Empty branch sequence")
    if len(funs) == 1:
        return funs[0](*operands)
    i = convert_element_type(index, np.int32)
    i = clamp(np.array(0, np.int32), i, np.array(len(funs) - 1, np.int32))
    names = ["branch 0", *(f"branch{k}" for k in range(1, len(funs)))]
    return _apply_branches("switch", i, funs, names, operands)


__all__ = ["bind_cond", "cond", "cond_p", "switch"]
