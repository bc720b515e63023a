"""Host callbacks: `pure_callback` and `io_callback`, as JAX 0.10.2 defines them.

A callback calls a Python function on the host from inside a traced program. `pure_callback_p`
has no effect (unused results are dead code); `io_callback_p` has `IOEffect` (or the ordered
`OrderedIOEffect`), so it always runs. Both carry the function as a `FlatCallback` param, which
takes and returns flat lists of arrays; their NumPy reference calls it. Lowering lives in
lamina-mlir; the runtime passes the Python functions to the compiler.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from lamina_core.interpreters import AxisData, batching_rules, jvp_rules, transpose_rules
from lamina_core.ir import (
    AbstractValue,
    Effects,
    KindEffect,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    dtypes,
    effects_rules,
    impl_rules,
)
from lamina_core.lax import broadcast, moveaxis, scan
from lamina_core.tree import tree_util

VMAP_METHODS: Final = (
    "sequential",
    "sequential_unrolled",
    "expand_dims",
    "broadcast_all",
    "legacy_vectorized",
    None,
)


@dataclass(frozen=True, slots=True)
class FlatCallback:
    """A Python function called with flat arrays, returning flat arrays; equal for the same
    function and argument structure. Prints as JAX's `_FlatCallback`."""

    callback_func: Callable[..., Any]
    in_tree: tree_util.PyTreeDef
    """The (args, kwargs) tree the flat arguments rebuild for `callback_func`."""

    def __call__(self, *flat_args: Any) -> list[Any]:
        args, kwargs = tree_util.tree_unflatten(self.in_tree, flat_args)
        return tree_util.tree_leaves(self.callback_func(*args, **kwargs))

    def __str__(self) -> str:
        tree = tree_util.treedef_repr(self.in_tree)
        return f"_FlatCallback(callback_func={self.callback_func!r}, in_tree={tree})"


class IOEffect(KindEffect):
    """The effect of an unordered `io_callback`."""

    __slots__ = ()

    def __str__(self) -> str:
        return "IO"


class OrderedIOEffect(KindEffect):
    """The effect of an ordered `io_callback`: such callbacks run in program order."""

    __slots__ = ()

    def __str__(self) -> str:
        return "OrderedIO"


io_effect: Final = IOEffect()
ordered_io_effect: Final = OrderedIOEffect()

pure_callback_p: Final = Primitive("pure_callback", multiple_results=True)
io_callback_p: Final = Primitive("io_callback", multiple_results=True)


def call_checked(
    callback: FlatCallback, args: Sequence[Any], result_avals: Sequence[Any]
) -> list[np.ndarray]:
    """`callback(*args)` as NumPy arrays, checked against `result_avals` as JAX checks them."""
    outs = callback(*args)
    if len(outs) != len(result_avals):
        raise RuntimeError(
            "Mismatched number of outputs from callback. "
            f"Expected: {len(result_avals)}, Actual: {len(outs)}"
        )
    vals = [np.asarray(o) for o in outs]
    vals = [v.astype(dtypes.canonicalize_dtype(v.dtype)) for v in vals]
    for i, (val, aval) in enumerate(zip(vals, result_avals, strict=True)):
        if val.shape != aval.shape:
            raise RuntimeError(
                f"Incorrect output shape for return value #{i}: "
                f"Expected: {aval.shape}, Actual: {val.shape}"
            )
        if val.dtype != aval.dtype:
            raise RuntimeError(
                f"Incorrect output dtype for return value #{i}: "
                f"Expected: {aval.dtype}, Actual: {val.dtype}"
            )
    return vals


def _callback_impl(*args: Any, callback: FlatCallback, result_avals: Any, **_: Any) -> list[Any]:
    return call_checked(callback, [np.asarray(a) for a in args], result_avals)


def _callback_abstract_eval(*avals: AbstractValue, result_avals: Any, **_: Any) -> list[Any]:
    return list(result_avals)


@effects_rules.register(io_callback_p)
def _io_callback_effects(*avals: AbstractValue, ordered: bool, **_: Any) -> Effects:
    return frozenset({ordered_io_effect if ordered else io_effect})


# Eagerly, as JAX's, a callback runs as a compiled program when a backend is installed (its
# results are device arrays); core's reference evaluator calls the function directly.
for _prim in (pure_callback_p, io_callback_p):
    abstract_eval_rules.set(_prim, _callback_abstract_eval)
    impl_rules.set(_prim, _callback_impl)


@jvp_rules.register(pure_callback_p)
def _pure_callback_jvp(*args: Any, **kwargs: Any) -> Any:
    raise ValueError(
        "Pure callbacks do not support JVP. "
        "Please use `jax.custom_jvp` to use callbacks while taking gradients."
    )


@transpose_rules.register(pure_callback_p)
def _pure_callback_transpose(*args: Any, **kwargs: Any) -> Any:
    raise ValueError(
        "Pure callbacks do not support transpose. "
        "Please use `jax.custom_vjp` to use callbacks while taking gradients."
    )


@jvp_rules.register(io_callback_p)
def _io_callback_jvp(*args: Any, **kwargs: Any) -> Any:
    raise ValueError("IO callbacks do not support JVP.")


@transpose_rules.register(io_callback_p)
def _io_callback_transpose(*args: Any, **kwargs: Any) -> Any:
    raise ValueError("IO callbacks do not support transpose.")


def _to_front(args: Sequence[Any], dims: Sequence[Any]) -> list[Any]:
    return [a if d is None else moveaxis(a, d, 0) for a, d in zip(args, dims, strict=True)]


def _sequential(
    prim: Primitive, args: list[Any], dims: Sequence[Any], params: dict[str, Any]
) -> list[Any]:
    """One callback per batch element, in a scan over the mapped operands."""
    mapped = [d is not None for d in dims]
    fixed = [a for a, m in zip(args, mapped, strict=True) if not m]
    moving = [a for a, m in zip(args, mapped, strict=True) if m]

    def body(carry: Any, xs: list[Any]) -> tuple[Any, list[Any]]:
        it_fixed, it_xs = iter(fixed), iter(xs)
        merged = [next(it_xs) if m else next(it_fixed) for m in mapped]
        return carry, prim.bind(*merged, **params)

    unroll = params.get("vmap_method") == "sequential_unrolled"
    _, outs = scan(body, (), moving, unroll=unroll)
    return list(outs)


@batching_rules.register(pure_callback_p)
def _pure_callback_batch(
    axis_data: AxisData,
    args: Sequence[Any],
    dims: Sequence[Any],
    *,
    vmap_method: str | None,
    result_avals: tuple[ShapedArray, ...],
    **params: Any,
) -> tuple[list[Any], list[Any]]:
    size = next(a.shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
    moved = _to_front(args, dims)
    batched_avals = tuple(ShapedArray((size, *a.shape), a.dtype) for a in result_avals)
    if vmap_method == "legacy_vectorized":
        outs = pure_callback_p.bind(
            *moved, vmap_method=vmap_method, result_avals=batched_avals, **params
        )
    elif vmap_method in ("expand_dims", "broadcast_all"):
        n = size if vmap_method == "broadcast_all" else 1
        ready = [broadcast(a, (n,)) if d is None else a for a, d in zip(moved, dims, strict=True)]
        outs = pure_callback_p.bind(
            *ready, vmap_method=vmap_method, result_avals=batched_avals, **params
        )
    elif vmap_method in ("sequential", "sequential_unrolled"):
        outs = _sequential(
            pure_callback_p,
            moved,
            dims,
            {"vmap_method": vmap_method, "result_avals": result_avals, **params},
        )
    else:
        raise NotImplementedError(
            "vmap is only supported for the pure_callback primitive when vmap_method is one "
            "of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got {vmap_method=}."
        )
    return list(outs), [0] * len(outs)


@batching_rules.register(io_callback_p)
def _io_callback_batch(
    axis_data: AxisData, args: Sequence[Any], dims: Sequence[Any], *, ordered: bool, **params: Any
) -> tuple[list[Any], list[Any]]:
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    outs = _sequential(io_callback_p, _to_front(args, dims), dims, {"ordered": False, **params})
    return outs, [0] * len(outs)


def _result_avals(result_shape_dtypes: Any) -> tuple[list[ShapedArray], tree_util.PyTreeDef]:
    def check(sd: Any) -> ShapedArray:
        dt = np.dtype(sd.dtype)
        if dtypes.canonicalize_dtype(dt) != dt:
            raise ValueError(
                "result_shape_dtypes cannot specify 64-bit types when `jax_enable_x64` is disabled"
            )
        return ShapedArray(tuple(sd.shape), dt)

    leaves, tree = tree_util.tree_flatten(result_shape_dtypes)
    return [check(sd) for sd in leaves], tree


def pure_callback(
    callback: Callable[..., Any],
    result_shape_dtypes: Any,
    *args: Any,
    sharding: Any = None,
    vmap_method: str | None = None,
    **kwargs: Any,
) -> Any:
    """Call the pure Python function `callback(*args, **kwargs)` on the host; its results have
    the shapes and dtypes of the pytree `result_shape_dtypes`. Unused results are dead code."""
    allowed = list(VMAP_METHODS)
    if vmap_method not in allowed:
        raise ValueError(
            f"vmap_method must be on of the allowed methods {allowed}, but got: {vmap_method}"
        )
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    avals, out_tree = _result_avals(result_shape_dtypes)
    outs = pure_callback_p.bind(
        *flat_args,
        callback=FlatCallback(callback, in_tree),
        result_avals=tuple(avals),
        sharding=sharding,
        vmap_method=vmap_method,
    )
    return tree_util.tree_unflatten(out_tree, outs)


def io_callback(
    callback: Callable[..., Any],
    result_shape_dtypes: Any,
    *args: Any,
    sharding: Any = None,
    ordered: bool = False,
    **kwargs: Any,
) -> Any:
    """Call the impure Python function `callback(*args, **kwargs)` on the host; it always runs,
    and with `ordered=True` in program order with the other ordered callbacks."""
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    avals, out_tree = _result_avals(result_shape_dtypes)
    outs = io_callback_p.bind(
        *flat_args,
        callback=FlatCallback(callback, in_tree),
        result_avals=tuple(avals),
        sharding=sharding,
        ordered=ordered,
    )
    return tree_util.tree_unflatten(out_tree, outs)


__all__ = [
    "FlatCallback",
    "IOEffect",
    "OrderedIOEffect",
    "call_checked",
    "io_callback",
    "io_callback_p",
    "io_effect",
    "ordered_io_effect",
    "pure_callback",
    "pure_callback_p",
]
