"""`jax.api_util`: the helpers JAX's transformations share, for libraries written against them.

Functions are wrapped as `lamina.extend.linear_util.WrappedFun`s (`flatten_fun`,
`argnums_partial`), and `debug_info` builds Lamina's `DebugInfo`, naming the flattened
arguments as JAX does.
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from lamina import tree_util
from lamina.extend import linear_util as lu
from lamina_core.ir import DebugInfo
from lamina_core.trace import shaped_abstractify as shaped_abstractify
from lamina_core.transforms import flatten_axes as flatten_axes
from lamina_core.transforms import func_src_info

__all__ = [
    "argnums_partial",
    "debug_info",
    "donation_vector",
    "flatten_axes",
    "flatten_fun",
    "flatten_fun_nokwargs",
    "rebase_donate_argnums",
    "safe_map",
    "shaped_abstractify",
]


def safe_map(f: Callable[..., Any], *args: Iterable[Any]) -> list[Any]:
    """`map` into a list, insisting that all the iterables have the same length."""
    if not args:
        raise TypeError("safe_map requires at least 2 arguments")
    lists = [list(a) for a in args]
    n = len(lists[0])
    for i, xs in enumerate(lists[1:], 2):
        if len(xs) != n:
            which = "longer" if len(xs) > n else "shorter"
            raise ValueError(f"safe_map() argument {i} is {which} than argument 1")
    return [f(*xs) for xs in zip(*lists, strict=True)]


def _flatten_fun(
    f: Callable[..., Any], store: lu.Store, in_tree: Any, *args_flat: Any
) -> list[Any]:
    py_args, py_kwargs = tree_util.tree_unflatten(in_tree, args_flat)
    leaves, out_tree = tree_util.tree_flatten(f(*py_args, **py_kwargs))
    store.store(out_tree)
    return leaves


def _flatten_fun_nokwargs(
    f: Callable[..., Any], store: lu.Store, in_tree: Any, *args_flat: Any
) -> list[Any]:
    py_args = tree_util.tree_unflatten(in_tree, args_flat)
    leaves, out_tree = tree_util.tree_flatten(f(*py_args))
    store.store(out_tree)
    return leaves


def flatten_fun(f: lu.WrappedFun, in_tree: Any) -> tuple[lu.WrappedFun, Callable[[], Any]]:
    """`f` over the leaves of `(args, kwargs)` (of tree `in_tree`), returning its output's
    leaves; the thunk returned alongside gives the output's tree once it has run."""
    store = lu.Store()
    return f.wrap(_flatten_fun, (in_tree,), store), lambda: store.val


def flatten_fun_nokwargs(f: lu.WrappedFun, in_tree: Any) -> tuple[lu.WrappedFun, Callable[[], Any]]:
    """As `flatten_fun`, for a tree of positional arguments only."""
    store = lu.Store()
    return f.wrap(_flatten_fun_nokwargs, (in_tree,), store), lambda: store.val


class _StaticArg:
    """A static argument held in a transformation's key: equal only to a value of the very
    same type that compares equal (1 and 1.0 and True must not share a trace)."""

    __slots__ = ("val",)

    def __init__(self, val: Any) -> None:
        self.val = val

    def __hash__(self) -> int:
        return hash(self.val)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _StaticArg)
            and type(self.val) is type(other.val)
            and bool(self.val == other.val)
        )


class _UnhashableArg:
    """A static argument compared by identity, for callers that allow unhashable ones."""

    __slots__ = ("val",)

    def __init__(self, val: Any) -> None:
        self.val = val

    def __hash__(self) -> int:
        return id(self.val)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _UnhashableArg) and self.val is other.val


def _index_tuple(argnums: int | Sequence[int]) -> tuple[int, ...]:
    if isinstance(argnums, Sequence):
        return tuple(operator.index(i) for i in argnums)
    return (operator.index(argnums),)


def _inbounds(num_args: int, argnums: Sequence[int]) -> tuple[int, ...]:
    for i in argnums:
        if not -num_args <= i < num_args:
            raise ValueError(
                "Positional argument indices, e.g. for `static_argnums`, must have value "
                "greater than or equal to -len(args) and less than len(args), but got value "
                f"{i} for len(args) == {num_args}."
            )
    return tuple(i % num_args for i in argnums)


def _argnums_partial(
    f: Callable[..., Any],
    dyn_argnums: tuple[int, ...],
    fixed_args: tuple[Any, ...],
    *dyn_args: Any,
    **kwargs: Any,
) -> Any:
    fixed = iter(fixed_args)
    by_position = dict(zip(dyn_argnums, dyn_args, strict=True))
    n = len(fixed_args) + len(dyn_args)
    args = [by_position[i] if i in by_position else next(fixed).val for i in range(n)]
    return f(*args, **kwargs)


def argnums_partial(
    f: lu.WrappedFun,
    dyn_argnums: int | Sequence[int],
    args: Sequence[Any],
    require_static_args_hashable: bool = True,
) -> tuple[lu.WrappedFun, tuple[Any, ...]]:
    """`f` as a function of the arguments at `dyn_argnums` only, the others fixed to their
    values in `args`; returns it with those dynamic arguments."""
    nums = _inbounds(len(args), _index_tuple(dyn_argnums))
    fixed: list[Any] = []
    for i, arg in enumerate(args):
        if i in nums:
            continue
        if not require_static_args_hashable:
            fixed.append(_UnhashableArg(arg))
            continue
        try:
            hash(arg)
        except TypeError:
            raise ValueError(
                "Non-hashable static arguments are not supported, as this can lead to "
                f"unexpected cache-misses. Static argument (index {i}) of type {type(arg)} "
                f"for function {f.__name__} is non-hashable."
            ) from None
        fixed.append(_StaticArg(arg))
    wrapped = f.wrap(_argnums_partial, (nums, tuple(fixed)), None)
    return wrapped, tuple(args[i] for i in nums)


def donation_vector(
    donate_argnums: Sequence[int],
    donate_argnames: Sequence[str],
    in_tree: Any,
    kws: bool = True,
) -> tuple[bool, ...]:
    """Whether each leaf of `in_tree` (of `(args, kwargs)`, or of `args` when not `kws`) is
    donated: those under a positional argument in `donate_argnums` or a keyword argument in
    `donate_argnames`."""
    if kws:
        args_tree, kwargs_tree = tree_util.treedef_children(in_tree)
    else:
        args_tree, kwargs_tree = in_tree, None
    donated: list[bool] = []
    for i, arg in enumerate(args_tree.children()):
        donated.extend([i in donate_argnums] * arg.num_leaves)
    if kwargs_tree is not None:
        # A dict's children come in sorted key order; the keys are read off a dummy instance.
        keys = sorted(tree_util.tree_unflatten(kwargs_tree, [None] * kwargs_tree.num_leaves))
        for key, val in zip(keys, kwargs_tree.children(), strict=True):
            donated.extend([key in donate_argnames] * val.num_leaves)
    return tuple(donated)


def rebase_donate_argnums(
    donate_argnums: Iterable[int], static_argnums: Iterable[int]
) -> tuple[int, ...]:
    """`donate_argnums` renumbered among the non-static arguments: `((3, 4), (0, 1))` gives
    `(1, 2)`. An argument cannot be both."""
    static = sorted(set(static_argnums))
    donate = sorted(set(donate_argnums))
    if any(d in static for d in donate):
        raise ValueError(
            f"`static_argnums` {static} and `donate_argnums` {donate} cannot intersect."
        )
    return tuple(d - sum(1 for s in static if s < d) for d in donate)


def debug_info(
    traced_for: str,
    fun: Callable[..., Any],
    args: Sequence[Any],
    kwargs: dict[str, Any],
    *,
    static_argnums: Sequence[int] = (),
    static_argnames: Sequence[str] = (),
    result_paths_thunk: Callable[[], tuple[str, ...]] | None = None,
    sourceinfo: str | None = None,
    signature: inspect.Signature | None = None,
) -> DebugInfo:
    """What a trace of `fun(*args, **kwargs)` for `traced_for` is: `fun`'s name and source
    location and the names of the non-static argument leaves (`x`, `y['a']`, `args[0]`)."""
    found = getattr(fun, "__fun_debug_info__", None)
    if isinstance(found, DebugInfo):
        return found
    if sourceinfo is None:
        sourceinfo = func_src_info(fun)
    if signature is None:
        signature = _signature(fun)
    names = _non_static_arg_names(signature, args, kwargs, static_argnums, static_argnames)
    paths = result_paths_thunk() if result_paths_thunk is not None else None
    return DebugInfo(traced_for, sourceinfo, names, paths)


def _signature(fun: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(fun)
    except (ValueError, TypeError):
        return None


_STATIC: Any = object()


def _non_static_arg_names(
    signature: inspect.Signature | None,
    args: Sequence[Any],
    kwargs: dict[str, Any],
    static_argnums: Sequence[int],
    static_argnames: Sequence[str],
) -> tuple[str, ...]:
    # Out-of-range static argnums are ignored here: the caller reports them.
    statics = {i % len(args) for i in static_argnums if -len(args) <= i < len(args)}
    args_ = [_STATIC if i in statics else x for i, x in enumerate(args)]
    kwargs_ = {k: _STATIC if k in static_argnames else x for k, x in kwargs.items()}
    ordered = _bound_arguments(signature, args_, kwargs_)
    if ordered is None:  # no signature, or the call does not bind to it
        keyword = sorted((f"kwargs['{k}']", x) for k, x in kwargs_.items() if x is not _STATIC)
        ordered = [("args", args_), *keyword]
    return tuple(
        f"{name}{tree_util.keystr(path)}"
        for name, x in ordered
        for path, leaf in tree_util.tree_flatten_with_path(x)[0]
        if leaf is not _STATIC
    )


def _bound_arguments(
    signature: inspect.Signature | None, args: Sequence[Any], kwargs: dict[str, Any]
) -> list[tuple[str, Any]] | None:
    """Positional arguments by parameter name, then keyword ones sorted, as jit passes them."""
    if signature is None:
        return None
    try:
        bound = signature.bind(*args, **kwargs)
    except (ValueError, TypeError):
        return None
    var_kw = next(
        (n for n, p in signature.parameters.items() if p.kind is inspect.Parameter.VAR_KEYWORD),
        None,
    )
    positional = [(n, x) for n, x in bound.arguments.items() if n not in kwargs and n != var_kw]
    keyword = [
        (k if k in bound.arguments else f"{var_kw}['{k}']", x)
        for k, x in sorted(kwargs.items(), key=lambda kx: kx[0])
    ]
    return positional + keyword
