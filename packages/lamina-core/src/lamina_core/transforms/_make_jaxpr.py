"""`make_jaxpr`: trace a Python function on abstract arguments into a closed jaxpr."""

from __future__ import annotations

import contextlib
import functools
import inspect
import re
from collections.abc import Callable, Sequence
from types import CodeType
from typing import Any, Final, TypeVar

from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.ir import AbstractValue, ClosedJaxpr, DebugInfo, ShapedArray
from lamina_core.trace import (
    AxisData,
    NotAnArrayArgument,
    ShapeDtypeStruct,
    api_boundary,
    extend_axis_env,
    shaped_abstractify,
    with_qdd,
)
from lamina_core.tree import tree_util


def _as_tuple(x: int | str | Sequence[Any] | None) -> tuple[Any, ...]:
    if x is None:
        return ()
    if isinstance(x, (int, str)):
        return (x,)
    return tuple(x)


_BUILTIN_FUNCTION: Final = re.compile(r"<built-in function (\S+)>")


def func_src_info(fun: Callable[..., Any]) -> str:
    """`name at file:line` of `fun`, from its code object (no source file is read), as JAX
    names functions in messages: partials and wrappers are looked through; a callable without
    code is its name if it is a builtin function, else `<unknown>` (a name that never holds an
    address, which would make programs differ from run to run)."""
    name, code = _named_source(fun)
    return name if code is None else f"{name} at {code.co_filename}:{code.co_firstlineno}"


def debug_name(fun: Callable[..., Any]) -> str:
    """The name part of `func_src_info(fun)`: what JAX's debug info calls the function."""
    return _named_source(fun)[0]


def _named_source(fun: Callable[..., Any]) -> tuple[str, CodeType | None]:
    while isinstance(fun, functools.partial):
        fun = fun.func
    fun = inspect.unwrap(fun)
    code = getattr(fun, "__code__", None)
    name = getattr(fun, "__name__", None)
    if code is not None and name is not None:
        return str(name), code
    try:
        text = str(fun)
    except Exception:  # a user object's `__str__` may fail: JAX's name then too
        return "<unknown>", None
    found = _BUILTIN_FUNCTION.match(text)
    return (found.group(1) if found else "<unknown>"), None


def fun_name(fun: Callable[..., Any], default: str = "<unnamed function>") -> str:
    """The name JAX gives a function in `jit` equations, module names and wrappers: its
    `__name__`, else that of the function a partial wraps, else `default`."""
    while not hasattr(fun, "__name__") and isinstance(fun, functools.partial):
        fun = fun.func
    return str(getattr(fun, "__name__", default))


def wrap_as_jax(
    wrapper: Any, fun: Callable[..., Any], updated: Sequence[str] = functools.WRAPPER_UPDATES
) -> None:
    """Make `wrapper` look like `fun`, as JAX's `wraps` does: `functools.update_wrapper`, and a
    name for functions without one (`fun_name`), which is also the qualified name unless
    `fun` has its own."""
    functools.update_wrapper(wrapper, fun, updated=updated)
    if not hasattr(fun, "__name__"):
        wrapper.__name__ = fun_name(fun)
    if not hasattr(fun, "__qualname__"):
        wrapper.__qualname__ = wrapper.__name__


WrapperT = TypeVar("WrapperT")


def wraps_as_jax(fun: Callable[..., Any]) -> Callable[[WrapperT], WrapperT]:
    """Decorator form of `wrap_as_jax` (JAX's `wraps`, where `functools.wraps` would leave a
    wrapper of a partial or of a callable object named after itself)."""

    def deco(wrapper: WrapperT) -> WrapperT:
        wrap_as_jax(wrapper, fun)
        return wrapper

    return deco


def argument_names(
    fun: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any], static: set[int]
) -> tuple[str, ...] | None:
    """The path of each flat argument leaf as JAX names it (`x`, `d['a']`, `args[0]`), static
    positions left out; None when the call does not bind to `fun`'s signature."""
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return None
    names: list[str] = []
    for i, (name, value) in enumerate(bound.arguments.items()):
        if i in static:
            continue
        for path, _ in tree_util.tree_flatten_with_path(value)[0]:
            names.append(f"{name}{tree_util.keystr(path)}")
    return tuple(names)


def _shape_dtype(aval: AbstractValue) -> ShapeDtypeStruct | AbstractValue:
    if aval.is_high:  # a hi type describes itself, as in JAX
        return aval
    if not isinstance(aval, ShapedArray):
        raise TypeError(f"return_shape needs array outputs, got {aval.str_short(True)}")
    return ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=aval.weak_type)


def not_an_array(
    fun: Callable[..., Any],
    args: Sequence[Any],
    kwargs: dict[str, Any],
    leaves: Sequence[Any],
    static: set[int],
    abstractify: Callable[[Any], AbstractValue] = shaped_abstractify,
) -> NotAnArrayArgument:
    """JAX's error for an argument of a staged function that is not an array and not marked
    static: the first leaf `abstractify` finds no type for, named by its path."""
    index, bad = 0, None
    for index, leaf in enumerate(leaves):  # noqa: B007  (the index is used after the loop)
        try:
            abstractify(leaf)
        except TypeError:
            bad = leaf
            break
    names = argument_names(fun, args, kwargs, static)
    path = names[index] if names is not None and index < len(names) else f"flat[{index}]"
    return NotAnArrayArgument(
        f"Error interpreting argument to {fun!r} as an abstract array. The problematic "
        f"value is of type {type(bad)} and was passed to the function at path {path}.\n"
        "This typically means that a jit-wrapped function was called with a non-array "
        "argument, and this argument was not marked as static using the static_argnums or "
        "static_argnames parameters of jax.jit."
    )


def name_as_jax(wrapper: Callable[..., Any], fun: Callable[..., Any], api: str) -> None:
    """Name `wrapper` `api(name)` after the function it wraps, as JAX names its wrappers
    (`make_jaxpr(f)`)."""
    if hasattr(fun, "__qualname__"):
        wrapper.__qualname__ = f"{api}({fun.__qualname__})"
    if hasattr(fun, "__name__"):
        wrapper.__name__ = f"{api}({fun.__name__})"


def make_jaxpr(
    fun: Callable[..., Any],
    static_argnums: int | Sequence[int] = (),
    axis_env: Sequence[tuple[Any, int]] | None = None,
    return_shape: bool = False,
    *,
    static_argnames: str | Sequence[str] = (),
) -> Callable[..., Any]:
    """A function that traces `fun` on its arguments' types and returns the `ClosedJaxpr`.

    Arguments may be pytrees of arrays, scalars, `ShapeDtypeStruct`s or any objects with
    `shape` and `dtype`; static arguments are passed to `fun` as they are. `axis_env` binds
    named axes (`[("i", 4)]`) for collectives traced outside `vmap` or `shard_map`. With
    `return_shape=True` the result is `(jaxpr, shapes)`, the second a pytree of
    `ShapeDtypeStruct` shaped like `fun`'s output.

    Example:
        >>> import numpy as np
        >>> print(make_jaxpr(lambda x: x * 2.0)(np.float32(1)))
        { lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }
    """
    static_nums = _as_tuple(static_argnums)
    static_names = set(_as_tuple(static_argnames))
    axes = tuple(AxisData(name, int(size)) for name, size in axis_env or ())

    @api_boundary
    @functools.wraps(fun)
    def make_jaxpr_f(*args: Any, **kwargs: Any) -> Any:
        nums = {i % len(args) if -len(args) <= i < 0 else i for i in static_nums}
        for i in nums:
            if i >= len(args):
                raise ValueError(
                    f"static_argnums {tuple(static_nums)} refers to argument {i}, but "
                    f"{getattr(fun, '__name__', 'the function')} was called with {len(args)}"
                )
        dyn_args = tuple(a for i, a in enumerate(args) if i not in nums)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in static_names}
        leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        try:
            in_avals = [shaped_abstractify(x) for x in leaves]
        except TypeError:
            raise not_an_array(fun, args, kwargs, leaves, nums) from None
        in_avals = with_qdd(in_avals, leaves)
        out_tree_box: list[Any] = []

        def flat_fun(*flat_args: Any) -> list[Any]:
            call_args, call_kwargs = tree_util.tree_unflatten(in_tree, flat_args)
            it = iter(call_args)
            full_args = [args[i] if i in nums else next(it) for i in range(len(args))]
            full_kwargs = {k: kwargs[k] if k in static_names else call_kwargs[k] for k in kwargs}
            out = fun(*full_args, **full_kwargs)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            out_tree_box.append(out_tree)
            return out_leaves

        debug = DebugInfo(
            # JAX stages make_jaxpr through jit, and its messages say so.
            "jit",
            func_src_info(fun),
            lambda: argument_names(fun, args, kwargs, nums),
        )
        with contextlib.ExitStack() as scopes:
            for axis in axes:
                scopes.enter_context(extend_axis_env(axis))
            closed: ClosedJaxpr = trace_to_jaxpr(flat_fun, in_avals, debug)
        if not return_shape:
            return closed
        shapes = [_shape_dtype(a) for a in closed.out_avals]
        return closed, tree_util.tree_unflatten(out_tree_box[0], shapes)

    name_as_jax(make_jaxpr_f, fun, "make_jaxpr")
    return make_jaxpr_f
