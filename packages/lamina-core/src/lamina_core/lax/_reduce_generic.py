"""The generic reduction `lax.reduce` and its primitive `reduce_p`, and what the windowed
reductions share with it: the identities of max and min, and reduction computations traced to
jaxprs.

`reduce` takes a reduction computation (a Python function of two trees of scalars). As JAX,
it recognises a few monoids by the function's identity and the init value (`lax.add` from 0
is `reduce_sum`, `lax.max` from its identity `reduce_max`, mul, and, or, xor, min likewise)
and binds the generic primitive, with the computation traced to a closed jaxpr, otherwise.
The NumPy reference folds the reduced elements one at a time, applying the traced computation
to whole arrays of accumulators at once (batched with `vmap`'s machinery).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from lamina_core.config import config
from lamina_core.interpreters import AxisData, batch_flat, trace_to_jaxpr
from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    DebugInfo,
    Jaxpr,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    dtypes,
    impl_rules,
)
from lamina_core.lax import _checks as c
from lamina_core.lax import _elementwise as ew
from lamina_core.lax import _reductions as red
from lamina_core.lax._structural import _convert_element_type
from lamina_core.trace import Tracer, eval_jaxpr, is_concrete_value, to_numpy, typeof
from lamina_core.transforms import func_src_info
from lamina_core.tree import tree_util

reduce_p: Final = Primitive("reduce", multiple_results=True)


# --- identities -------------------------------------------------------------------------------


def _supports_inf(dtype: np.dtype) -> bool:
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.isinf(np.array(np.inf).astype(dtype)))


def max_identity(dtype: Any) -> np.ndarray:
    """The identity of `max` in `dtype` (-inf, or the lowest finite value, or False)."""
    dtype = np.dtype(dtype)
    kind = c.kind_of(dtype)
    if kind in "fc":
        value = -np.inf if _supports_inf(dtype) else dtypes.finfo(dtype).min
        return np.array(value).astype(dtype)
    if kind in "iu":
        return np.array(dtypes.iinfo(dtype).min, dtype)
    if kind == "b":
        return np.array(False)
    raise ValueError(f"Unsupported dtype for max: {dtype}")


def min_identity(dtype: Any) -> np.ndarray:
    """The identity of `min` in `dtype` (inf, or the highest finite value, or True)."""
    dtype = np.dtype(dtype)
    kind = c.kind_of(dtype)
    if kind in "fc":
        value = np.inf if _supports_inf(dtype) else dtypes.finfo(dtype).max
        return np.array(value).astype(dtype)
    if kind in "iu":
        return np.array(dtypes.iinfo(dtype).max, dtype)
    if kind == "b":
        return np.array(True)
    raise ValueError(f"Unsupported dtype for min: {dtype}")


# --- tracing reduction computations ---------------------------------------------------------

_Cache = weakref.WeakKeyDictionary[Any, dict[Any, Any]]
_jaxpr_cache: _Cache = weakref.WeakKeyDictionary()


def _cached(fun: Callable[..., Any], key: Any, make: Callable[[], Any]) -> Any:
    # Per computation (held weakly) and argument types, as JAX caches these jaxprs: the same
    # function reduced twice gives the same jaxpr object, which prints once, shared.
    try:
        entries = _jaxpr_cache.setdefault(fun, {})
    except TypeError:
        return make()
    key = (*key, config.trace_context())
    found = entries.get(key)
    if found is None:
        found = make()
        if found is not None:
            entries[key] = found
    return found


def _no_tracers(closed: ClosedJaxpr) -> None:
    if any(isinstance(v, Tracer) for v in closed.consts):
        raise NotImplementedError(
            "Reduction computations can't close over Tracers. Please open an issue at "
            "https://github.com/jax-ml/jax."
        )


def variadic_reduction_jaxpr(
    what: str, computation: Callable[..., Any], avals: Sequence[AbstractValue], tree: Any
) -> tuple[ClosedJaxpr, Any]:
    """`computation(xs, ys)` over two trees of scalars of types `avals` (shaped as `tree`),
    traced to a closed jaxpr; and the tree of its results."""

    def make() -> tuple[ClosedJaxpr, Any]:
        in_tree = tree_util.tree_structure((tree_util.tree_unflatten(tree, list(avals)),) * 2)
        out_trees: list[Any] = []

        def flat(*leaves: Any) -> list[Any]:
            xs, ys = tree_util.tree_unflatten(in_tree, leaves)
            out, out_tree = tree_util.tree_flatten(computation(xs, ys))
            out_trees.append(out_tree)
            return list(out)

        debug = DebugInfo(what, func_src_info(computation))
        closed = trace_to_jaxpr(flat, [*avals, *avals], debug)
        _no_tracers(closed)
        return closed, out_trees[0]

    result: tuple[ClosedJaxpr, Any] = _cached(computation, (what, tuple(avals), tree), make)
    return result


def reduction_jaxpr(
    computation: Callable[[Any, Any], Any], aval: AbstractValue
) -> tuple[Jaxpr, tuple[Any, ...]]:
    """`computation(x, y)` of two scalars of type `aval`, traced: the jaxpr and its consts."""

    def make() -> tuple[Jaxpr, tuple[Any, ...]]:
        def comp(x: Any, y: Any) -> list[Any]:
            return [computation(x, y)]

        debug = DebugInfo("reduction_jaxpr", func_src_info(computation))
        closed = trace_to_jaxpr(comp, [aval, aval], debug)
        _no_tracers(closed)
        return closed.jaxpr, tuple(closed.consts)

    result: tuple[Jaxpr, tuple[Any, ...]] = _cached(computation, ("reduction", aval), make)
    return result


# --- reduce -----------------------------------------------------------------------------------


def split_operands(values: Sequence[Any]) -> tuple[Sequence[Any], Sequence[Any]]:
    """The operands and the init values of a reduction's flat arguments."""
    n = len(values) // 2
    return values[:n], values[n:]


@abstract_eval_rules.register(reduce_p)
def _reduce_abstract_eval(
    *avals: AbstractValue, computation: Any, jaxpr: ClosedJaxpr, dimensions: Sequence[int]
) -> list[ShapedArray]:
    arrays = [c.array_aval("reduce", a) for a in avals]
    operands, inits = split_operands(arrays)
    if any(a.shape != () for a in inits):
        raise ValueError(f"reduce found non-scalar initial value: {[a.shape for a in inits]}")
    shapes = [tuple(int(d) for d in np.delete(op.shape, dimensions)) for op in operands]
    if [op.dtype for op in operands] != [i.dtype for i in inits]:
        raise TypeError(
            "reduce operand dtypes should match corresponding initial value dtypes, got "
            f"operands={list(operands)} and initial_values={list(inits)}"
        )
    return [
        ShapedArray(shape, op.dtype, op.weak_type and init.weak_type)
        for shape, op, init in zip(shapes, operands, inits, strict=True)
    ]


def batched_fold(
    combine: ClosedJaxpr,
    accs: list[np.ndarray],
    steps: Sequence[Sequence[np.ndarray]],
) -> list[np.ndarray]:
    """Fold `combine(*accs, *step)` over `steps`, every array a flat batch of scalars."""
    size = accs[0].shape[0]
    if size == 0:
        return accs
    axis = AxisData(None, size)

    def apply(*args: Any) -> list[Any]:
        return eval_jaxpr(combine, (), *args)

    n = len(accs)
    for step in steps:
        outs, _ = batch_flat(apply, axis, [*accs, *step], [0] * (2 * n), [0] * n)
        accs = [np.asarray(to_numpy(o)) for o in outs]
    return accs


@impl_rules.register(reduce_p)
def _reduce_impl(
    *args: np.ndarray, computation: Any, jaxpr: ClosedJaxpr, dimensions: Sequence[int]
) -> list[np.ndarray]:
    operands, inits = split_operands([np.asarray(a) for a in args])
    shape = operands[0].shape
    axes = [int(d) % len(shape) for d in dimensions]
    kept = [d for d in range(len(shape)) if d not in axes]
    out_shape = tuple(shape[d] for d in kept)
    size = int(np.prod(out_shape, dtype=np.int64))
    count = int(np.prod([shape[d] for d in axes], dtype=np.int64))
    flat = [np.transpose(x, axes + kept).reshape(count, size) for x in operands]
    accs = [np.full(size, i, dtype=x.dtype) for i, x in zip(inits, operands, strict=True)]
    accs = batched_fold(jaxpr, accs, [[x[k] for x in flat] for k in range(count)])
    return [a.astype(x.dtype).reshape(out_shape) for a, x in zip(accs, operands, strict=True)]


def _is_weak(x: Any) -> bool:
    return bool(getattr(typeof(x), "weak_type", False))


def concrete_scalar(x: Any) -> np.ndarray | None:
    """`x`'s value if it is a known scalar (a monoid's init must be), else None."""
    if not is_concrete_value(x) or getattr(typeof(x), "shape", None) != ():
        return None
    return np.asarray(to_numpy(x))


def _monoid_reducer(computation: Any, inits: Sequence[Any]) -> Callable[..., Any] | None:
    if len(inits) != 1:
        return None
    val = concrete_scalar(inits[0])
    if val is None:
        return None
    dtype = np.dtype(typeof(inits[0]).dtype)  # type: ignore[attr-defined]  # arrays
    intlike = c.kind_of(dtype) in "biu"
    if computation is ew.add:
        return red.reduce_sum if np.equal(val, 0) else None
    if computation is ew.mul:
        return red.reduce_prod if np.equal(val, 1) else None
    if computation is ew.bitwise_or and intlike:
        return red.reduce_or if np.equal(val, np.array(0, dtype)) else None
    if computation is ew.bitwise_and and intlike:
        return red.reduce_and if np.equal(val, np.array(-1).astype(dtype)) else None
    if computation is ew.bitwise_xor and intlike:
        return red.reduce_xor if np.equal(val, np.array(0, dtype)) else None
    if computation is ew.max:
        return red.reduce_max if np.equal(val, max_identity(dtype)) else None
    if computation is ew.min:
        return red.reduce_min if np.equal(val, min_identity(dtype)) else None
    return None


def treedef_text(tree: Any) -> str:
    """`tree` as JAX's error messages print a tree structure."""
    return str(tree).replace("PyTreeSpec(", "PyTreeDef(", 1)


def flatten_with_inits(operands: Any, init_values: Any) -> tuple[list[Any], list[Any], Any]:
    """The leaves of `operands` and of `init_values`, and their common tree structure.

    Raises:
        ValueError: the two differ in structure or in number of leaves (JAX's messages).
    """
    flat_operands, operand_tree = tree_util.tree_flatten(operands)
    flat_inits, init_tree = tree_util.tree_flatten(init_values)
    if operand_tree != init_tree:
        raise ValueError(
            "Operands must have the same tree structure as init_values: "
            f"{treedef_text(operand_tree)} vs. {treedef_text(init_tree)}"
        )
    if len(flat_operands) != len(flat_inits):
        raise ValueError(
            "Must have same total number of operands as init_values: "
            f" {len(flat_operands)} vs. {len(flat_inits)}"
        )
    return flat_operands, flat_inits, operand_tree


def reduce(
    operands: Any,
    init_values: Any,
    computation: Callable[[Any, Any], Any],
    dimensions: Sequence[int],
    out_sharding: Any = None,
) -> Any:
    """Reduce `operands` (an array or a tree of arrays) over `dimensions` with the monoid
    `computation` from the scalars `init_values` (a tree of the same structure).

    Raises:
        ValueError: operands and init values of different structures.
        TypeError: an operand and its init value of different dtypes.
    """
    flat_operands, flat_inits, tree = flatten_with_inits(operands, init_values)
    monoid = _monoid_reducer(computation, flat_inits)
    if monoid is not None:
        weak = all(_is_weak(x) for x in flat_operands) and all(_is_weak(x) for x in flat_inits)
        if out_sharding is not None:
            raise NotImplementedError
        out = monoid(*flat_operands, dimensions)
        return _convert_element_type(out, typeof(out).dtype, weak)  # type: ignore[attr-defined]
    if out_sharding is not None:
        raise NotImplementedError("reduce: out_sharding is not supported by Lamina yet")
    init_avals = tuple(typeof(x) for x in flat_inits)
    closed, out_tree = variadic_reduction_jaxpr("reduce comp", computation, init_avals, tree)
    out = reduce_p.bind(
        *flat_operands,
        *flat_inits,
        computation=computation,
        jaxpr=closed,
        dimensions=tuple(dimensions),
    )
    return tree_util.tree_unflatten(out_tree, list(out))


__all__ = ["reduce", "reduce_p"]
