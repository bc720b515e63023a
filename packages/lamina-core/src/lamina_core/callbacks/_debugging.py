"""`jax.debug`'s callbacks: `debug_callback` and `debug_print`, as JAX 0.10.2 defines them.

Both primitives have no results and the effect `DebugEffect` (or `OrderedDebugEffect`, whose
calls run in program order), so dead-code elimination keeps them. Under `jvp` they see the
primals, under `vmap` they run once per batch element, and under `grad` they stay in the
forward computation.
"""

from __future__ import annotations

import logging
import string
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from lamina_core.interpreters import (
    AxisData,
    PartialEvalCustomResult,
    RecomputeType,
    batching_rules,
    ensure_enum,
    jvp_rules,
    partial_eval_jaxpr_custom_rules,
    partial_eval_kept_effects,
    transpose_rules,
)
from lamina_core.ir import (
    AbstractValue,
    Effect,
    Effects,
    JaxprEqn,
    KindEffect,
    Primitive,
    Var,
    abstract_eval_rules,
    current_source_info,
    effects_rules,
    evaluated_on_values,
    impl_rules,
    value_impl_rules,
)
from lamina_core.lax import index_in_dim
from lamina_core.trace import typeof
from lamina_core.tree import tree_util

logger: Final = logging.getLogger("jax._src.debugging")


class DebugEffect(KindEffect):
    """The effect of an unordered debug callback."""

    __slots__ = ()

    def __str__(self) -> str:
        return "Debug"


class OrderedDebugEffect(KindEffect):
    """The effect of an ordered debug callback: such callbacks run in program order."""

    __slots__ = ()

    def __str__(self) -> str:
        return "OrderedDebug"


debug_effect: Final = DebugEffect()
ordered_debug_effect: Final = OrderedDebugEffect()
partial_eval_kept_effects.append(lambda e: isinstance(e, (DebugEffect, OrderedDebugEffect)))

debug_callback_p: Final = Primitive("debug_callback", multiple_results=True)
debug_print_p: Final = Primitive("debug_print", multiple_results=True)


@dataclass(frozen=True, slots=True)
class TreeParam:
    """A treedef param, printed as JAX prints it (`PyTreeDef(...)`)."""

    tree: tree_util.PyTreeDef

    def __str__(self) -> str:
        return tree_util.treedef_repr(self.tree)


def _no_results(*avals: AbstractValue, **params: Any) -> list[AbstractValue]:
    return []


@effects_rules.register(debug_callback_p)
def _debug_callback_effects(*avals: AbstractValue, effect: Effect, **_: Any) -> Effects:
    return frozenset({effect})


@effects_rules.register(debug_print_p)
def _debug_print_effects(*avals: AbstractValue, ordered: bool, **_: Any) -> Effects:
    return frozenset({ordered_debug_effect if ordered else debug_effect})


def _debug_callback_impl(*args: Any, callback: Callable[..., Any], **_: Any) -> list[Any]:
    try:
        callback(*args)
    except BaseException:
        logger.exception("jax.debug.callback failed")
        raise
    return []


def print_callback(params: dict[str, Any]) -> Callable[..., Any]:
    """The flat host function of a `debug_print` equation with `params`."""
    options = dict(params["np_printoptions"])
    fmt: str = params["fmt"]
    record: logging.LogRecord | None = params["logging_record"]

    def format_and_print(*args: Any, **kwargs: Any) -> None:
        if params["has_placeholders"]:
            with np.printoptions(**options):
                msg = fmt.format(*args, **kwargs)
        else:
            msg = " ".join((fmt, *(str(a) for a in args)))
        if record is not None:
            out = logging.makeLogRecord(record.__dict__)
            out.msg = msg
            logger.handle(out)
        else:
            sys.stdout.write(msg + "\n")

    return _flat(params["in_tree"].tree, format_and_print, dict(params["static_args"]))


def _debug_print_impl(*args: Any, **params: Any) -> list[Any]:
    return _debug_callback_impl(*args, callback=print_callback(params))


for _prim, _impl in ((debug_callback_p, _debug_callback_impl), (debug_print_p, _debug_print_impl)):
    abstract_eval_rules.set(_prim, _no_results)
    impl_rules.set(_prim, _impl)
    value_impl_rules.set(_prim, _impl)
    evaluated_on_values.add(_prim)


def _make_jvp(prim: Primitive) -> Callable[..., Any]:
    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        return prim.bind(*primals, **params), []

    return rule


def _transpose(ct: Any, *args: Any, **params: Any) -> list[None]:
    return [None for _ in args]


def _make_batch(prim: Primitive) -> Callable[..., Any]:
    def rule(
        axis_data: AxisData, args: Sequence[Any], dims: Sequence[Any], **params: Any
    ) -> tuple[list[Any], list[Any]]:
        size = next(a.shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
        for i in range(size):
            prim.bind(
                *(
                    a if d is None else index_in_dim(a, i, axis=d, keepdims=False)
                    for a, d in zip(args, dims, strict=True)
                ),
                **params,
            )
        return [], []

    return rule


def _partial_eval_custom(
    saveable: Any, unks_in: Sequence[bool], inst_in: Sequence[bool], eqn: JaxprEqn
) -> PartialEvalCustomResult:
    """As JAX's: a debug callback is staged too (into a remat's backward pass) so that it
    shows as much as it can, unless the policy saves it and some input is not instantiated."""
    if any(unks_in):
        res = [v for v, inst in zip(eqn.invars, inst_in, strict=True) if not inst]
        return None, eqn, [], [], [v for v in res if isinstance(v, Var)]
    case = ensure_enum(saveable(eqn.primitive, *[x.aval for x in eqn.invars], **eqn.params))
    if not isinstance(case, RecomputeType) and not all(inst_in):
        return eqn, None, [], [], []
    return eqn, eqn, [], [], []


for _prim in (debug_callback_p, debug_print_p):
    jvp_rules.set(_prim, _make_jvp(_prim))
    transpose_rules.set(_prim, _transpose)
    batching_rules.set(_prim, _make_batch(_prim))
    partial_eval_jaxpr_custom_rules.set(_prim, _partial_eval_custom)


def split_callback_args(
    args: Sequence[Any], kwargs: dict[str, Any]
) -> tuple[tree_util.PyTreeDef, list[Any], dict[int, Any]]:
    """The (args, kwargs) tree, its array leaves, and its other leaves by flat position."""
    leaves, in_tree = tree_util.tree_flatten((tuple(args), kwargs))
    static: dict[int, Any] = {}
    dynamic: list[Any] = []
    for i, leaf in enumerate(leaves):
        try:
            typeof(leaf)
        except (TypeError, AssertionError):
            static[i] = leaf
        else:
            dynamic.append(leaf)
    return in_tree, dynamic, static


def _flat(
    in_tree: tree_util.PyTreeDef, callback: Callable[..., Any], static: dict[int, Any]
) -> Callable[..., tuple[()]]:
    def flat_callback(*dynamic: Any) -> tuple[()]:
        it = iter(dynamic)
        leaves = [static[i] if i in static else next(it) for i in range(len(static) + len(dynamic))]
        args, kwargs = tree_util.tree_unflatten(in_tree, leaves)
        callback(*args, **kwargs)
        return ()

    return flat_callback


def debug_callback(
    callback: Callable[..., None] | None = None,
    *args: Any,
    ordered: bool = False,
    partitioned: bool = False,
    **kwargs: Any,
) -> Callable[..., None] | None:
    """Call `callback(*args, **kwargs)` on the host with the runtime values, inside any
    transformation (once per batch element under `vmap`; primals under `jvp`). Called with
    only options, returns the function taking the callback and its arguments."""

    # Named as JAX's closures, so that the `callback` param prints as JAX's.
    def _debug_callback(cb: Callable[..., None], *c_args: Any, **c_kwargs: Any) -> None:
        if not callable(cb):
            raise TypeError(
                "first argument to jax.debug.callback must be callable, "
                f"but got an object of type {type(cb)}"
            )
        in_tree, dynamic, static = split_callback_args(c_args, c_kwargs)

        def _flat_callback(*flat: Any) -> tuple[()]:
            return _flat(in_tree, cb, static)(*flat)

        debug_callback_p.bind(
            *dynamic,
            callback=_flat_callback,
            effect=ordered_debug_effect if ordered else debug_effect,
            partitioned=partitioned,
        )

    if callback is not None:
        _debug_callback(callback, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(
            f"debug_callback received unexpected arguments in the two-call form: {args=} {kwargs=}"
        )
    return _debug_callback


class _FormatChecker(string.Formatter):
    """Formats nothing; raises JAX's errors for arguments the format string does not use."""

    def format_field(self, value: Any, format_spec: str) -> str:
        return ""

    def check_unused_args(
        self, used_args: set[int | str], args: Sequence[Any], kwargs: Any
    ) -> None:
        unused_args = [arg for i, arg in enumerate(args) if i not in used_args]
        unused_kwargs = [k for k in kwargs if k not in used_args]
        if unused_args:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused_args}")
        if unused_kwargs:
            raise ValueError(
                f"Unused keyword arguments to `jax.debug.print`: {unused_kwargs}. "
                'You may be passing an f-string (i.e, `f"{x}"`) into '
                "`jax.debug.print` and instead should pass in a regular string."
            )


def _logging_record(level: int) -> logging.LogRecord:
    info = current_source_info()
    file_name, line = ("(unknown file)", 0) if info.code is None else info.position[:2]
    return logger.makeRecord(logger.name, level, file_name, line, "", (), None)


def debug_print(
    fmt: str | None = None,
    *args: Any,
    ordered: bool = False,
    partitioned: bool = False,
    skip_format_check: bool = False,
    _use_logging: bool = False,
    **kwargs: Any,
) -> Callable[..., None] | None:
    """Print `fmt.format(*args, **kwargs)` with the runtime values, inside any transformation
    (not an f-string: formatting happens when the program runs)."""

    def bind(fmt: str, *c_args: Any, **c_kwargs: Any) -> None:
        if not skip_format_check:
            _FormatChecker().format(fmt, *c_args, **c_kwargs)
        has_placeholders = False
        if fmt:
            _, field_name, *_ = next(iter(string.Formatter().parse(fmt)))
            has_placeholders = field_name is not None
        in_tree, dynamic, static = split_callback_args(c_args, c_kwargs)
        debug_print_p.bind(
            *dynamic,
            fmt=fmt,
            ordered=ordered,
            partitioned=partitioned,
            in_tree=TreeParam(in_tree),
            static_args=tuple(static.items()),
            np_printoptions=tuple(np.get_printoptions().items()),
            has_placeholders=has_placeholders,
            logging_record=_logging_record(logging.INFO) if _use_logging else None,
        )

    if fmt is not None:
        bind(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(
            f"debug_print received unexpected arguments in the two-call form: {args=} {kwargs=}"
        )
    return bind


def debug_log(fmt: str | None = None, *args: Any, **kwargs: Any) -> Callable[..., None] | None:
    """`debug_print` through the `logging` module (level INFO) instead of stdout."""
    return debug_print(fmt, *args, _use_logging=True, **kwargs)


__all__ = [
    "DebugEffect",
    "OrderedDebugEffect",
    "TreeParam",
    "debug_callback",
    "debug_callback_p",
    "debug_effect",
    "debug_log",
    "debug_print",
    "debug_print_p",
    "ordered_debug_effect",
    "print_callback",
    "split_callback_args",
]
