"""`check`, `debug_check` and `check_error`, and the rules of the `check` primitive.

Outside `checkify` a check is an effect: run eagerly, a failed one raises `JaxRuntimeError`;
staged, it stays an equation that cannot be compiled (the lowering, an upper layer's, refuses
it with `functionalization_error` unless `debug`). Under `jvp` it checks the primals; under
`vmap` the batch is reduced to one error first. A `debug` check does nothing unless
`checkify` turns it into an error value.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import Any

import numpy as np

from lamina_core import numpy as jnp
from lamina_core.callbacks import check_p
from lamina_core.checkify._errors import (
    Error,
    ErrorEffect,
    FailedCheckError,
    JaxRuntimeError,
    assert_func,
    init_error,
    raise_error,
)
from lamina_core.interpreters import AxisData, BatchDim, batching_rules
from lamina_core.ir import (
    AbstractValue,
    Effects,
    ShapedArray,
    SourceInfo,
    current_source_info,
    effects_rules,
    evaluated_on_values,
    hide_params,
    host_effect_types,
    impl_rules,
    value_impl_rules,
)
from lamina_core.lax import bdim_at_front
from lamina_core.trace import EVAL_TRACE, Tracer, current_trace, is_registered_value
from lamina_core.tree import tree_util


@effects_rules.register(check_p)
def _check_effects(*args: AbstractValue, err_tree: Any, debug: bool) -> Effects:
    error: Error = tree_util.tree_unflatten(err_tree, args)
    return frozenset(error._pred)


class _SiteMarker(Exception):
    """Raised at a check's line only to obtain a frame there (see `_traceback_at`)."""


def _traceback_at(info: SourceInfo | None) -> TracebackType | None:
    """A one-frame traceback at `info`'s line, in a frame named as its function.

    A source info keeps the code object, not the frame (no locals stay alive), so the frame
    is made by raising from code compiled to sit at that line of that file; a traceback
    printer then shows the user's line, as JAX's cause does.
    """
    if info is None or info.code is None:
        return None
    filename, line, _ = info.position
    code = compile("\n" * (line - 1) + "raise marker", filename, "exec")
    try:
        exec(code.replace(co_name=info.code.co_name), {"marker": _SiteMarker()})
    except _SiteMarker as marker:
        tb = marker.__traceback__
        return None if tb is None else tb.tb_next  # only the frame at the check's line
    return None


def _check_impl(*args: Any, err_tree: Any, debug: bool) -> list[Any]:
    if debug:  # a debug check only acts once `checkify` functionalizes it
        return []
    error: Error = tree_util.tree_unflatten(err_tree, args)
    exc = error.get_exception()
    if exc is not None:
        # The cause shows where the check is, as JAX's (the message does not say).
        raise JaxRuntimeError(str(exc)) from exc.with_traceback(_traceback_at(exc.traceback_info))
    return []


impl_rules.set(check_p, _check_impl)
value_impl_rules.set(check_p, _check_impl)
evaluated_on_values.add(check_p)  # raising is the host's business, never a compiled program's
host_effect_types.add(ErrorEffect)
hide_params(check_p, lambda key, value: key == "err_tree")


@batching_rules.register(check_p)
def _check_batch(
    axis_data: AxisData, args: Sequence[Any], dims: Sequence[BatchDim], *, err_tree: Any,
    debug: bool,
) -> tuple[list[Any], list[BatchDim]]:  # fmt: skip
    size = next(np.shape(x)[d] for x, d in zip(args, dims, strict=True) if d is not None)
    leaves = [bdim_at_front(x, d, size) for x, d in zip(args, dims, strict=True)]
    raise_error(tree_util.tree_unflatten(err_tree, leaves), debug=debug)
    return [], []


def _is_array(x: Any) -> bool:
    """Whether `x` is what JAX calls an Array: a device array or a tracer of one; or, under a
    transformation, a NumPy value, which is what Lamina computes there from constants where
    JAX has a tracer."""
    if isinstance(x, Tracer):
        return isinstance(x.aval, ShapedArray)
    if isinstance(x, (np.ndarray, np.generic)):
        return current_trace() is not EVAL_TRACE
    return is_registered_value(x)


def _is_scalar_pred(pred: Any) -> bool:
    return isinstance(pred, bool) or (
        _is_array(pred) and np.shape(pred) == () and pred.dtype == np.dtype("bool")
    )


def _check(pred: Any, msg: str, debug: bool, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    if not _is_scalar_pred(pred):
        name = "debug_check" if debug else "check"
        raise TypeError(f"{name} takes a scalar pred as argument, got {pred}")
    for arg in tree_util.tree_leaves((fmt_args, fmt_kwargs)):
        if not (_is_array(arg) or isinstance(arg, np.ndarray)):
            raise TypeError(
                "Formatting arguments to checkify.check need to be PyTrees of arrays, but got "
                f"{arg!r} of type {type(arg)}."
            )
    new_error = FailedCheckError(current_source_info(), msg, *fmt_args, **fmt_kwargs)
    error = assert_func(init_error, jnp.logical_not(pred), new_error)
    raise_error(error, debug=debug)


def check(pred: Any, msg: str, *fmt_args: Any, debug: bool = False, **fmt_kwargs: Any) -> None:
    """Check that `pred` holds; if not, the error is `msg.format(*fmt_args, **fmt_kwargs)`.

    Outside `checkify` a failed check raises `JaxRuntimeError` when it runs eagerly, and a
    staged check cannot be compiled; inside `checkify` it becomes part of the error value.

    Args:
        pred: a Python bool or a boolean scalar array.
        msg: the message, a format string for the run-time values in `fmt_args`/`fmt_kwargs`.
        debug: with True, the check is dropped unless `checkify` functionalizes it.
        fmt_args: pytrees of arrays for `msg`'s positional fields.
        fmt_kwargs: pytrees of arrays for `msg`'s named fields.

    Raises:
        TypeError: `pred` is not a scalar boolean, or a formatting argument is not an array.
        JaxRuntimeError: the check failed, outside `checkify`, eagerly.
    """
    _check(pred, msg, debug, *fmt_args, **fmt_kwargs)


def debug_check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """`check` that only checks under `checkify`; elsewhere it does nothing."""
    _check(pred, msg, True, *fmt_args, **fmt_kwargs)


def check_error(error: Error) -> None:
    """Raise `error` if it happened, as an effect `checkify` turns back into an error value.

    Raises:
        TypeError: `error` is not an `Error`.
        JaxRuntimeError: the error happened (eagerly, outside `checkify`).
    """
    if not isinstance(error, Error):
        raise TypeError(f"check_error takes an Error as argument, got type {type(error)} instead.")
    raise_error(error)
