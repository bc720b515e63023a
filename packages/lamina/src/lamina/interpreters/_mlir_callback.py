"""JAX's `mlir.emit_python_callback`: a host callback in a user's lowering rule.

lamina-mlir emits the CPU callback `custom_call` and records the Python function in the
module, which the runtime hands to the compiler, as it does for `pure_callback`. This adapter
gives it JAX's signature: the callback's results are checked against `result_avals` (JAX's
errors), and a token passed in is threaded through the call, its first operand and result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from lamina_core.callbacks import call_checked
from lamina_core.ir import AbstractValue
from lamina_core.lax import abstract_token
from lamina_mlir import LoweringRuleContext
from lamina_mlir import emit_python_callback as _emit_python_callback

_IrValue: TypeAlias = Any
"""An `ir.Value` (this module does not import the bindings)."""


def emit_python_callback(
    ctx: LoweringRuleContext,
    callback: Callable[..., Sequence[Any]],
    token: _IrValue | None,
    operands: Sequence[_IrValue],
    operand_avals: Sequence[AbstractValue],
    result_avals: Sequence[AbstractValue],
    *,
    has_side_effect: bool,
    returns_token: bool = True,
    partitioned: bool = False,
    sharding: Any = None,
) -> tuple[list[_IrValue], _IrValue | None, Callable[..., tuple[Any, ...]]]:
    """Emit a call of `callback` on the host, at the current insertion point.

    `callback` takes NumPy arrays (the operands') and returns a sequence of arrays matching
    `result_avals`. The op's types are the equation's (`ctx.avals_in`, `ctx.avals_out`).

    Args:
        ctx: the rule's context.
        callback: the Python function.
        token: a token to order the call after (the op then returns a new one), or None.
        operands: the operands' IR values.
        operand_avals: their abstract values.
        result_avals: the abstract values of the results.
        has_side_effect: keep the call even when its results are unused.
        returns_token: unused on the CPU (JAX's TPU lowering reads it).
        partitioned: call `callback` on each device's shard (not supported by Lamina).
        sharding: an annotation for the op (not supported by Lamina; None).

    Returns:
        The results' IR values, the token after the call (or None), and the function the
        module calls (`callback` wrapped with the checks).

    Raises:
        ValueError: a partitioned callback with results (as JAX).
        NotImplementedError: `partitioned`, or a `sharding`.
    """
    del operand_avals, returns_token
    if partitioned:
        if result_avals:
            raise ValueError("Partitioned callback not supported with return values.")
        raise NotImplementedError("emit_python_callback: Lamina has no partitioned callbacks")
    if sharding is not None:
        raise NotImplementedError(
            "emit_python_callback: Lamina annotates no sharding on a callback from a user "
            "rule; pass sharding=None"
        )

    def checked(*args: Any) -> tuple[Any, ...]:
        # call_checked only calls its function: any callable of arrays is one it takes.
        return tuple(call_checked(callback, args, result_avals))  # type: ignore[arg-type]

    if token is None:
        results = _emit_python_callback(
            ctx, checked, operands, has_side_effect=has_side_effect, annotate=False
        )
        return results, None, checked

    def with_token(token_in: Any, *args: Any) -> tuple[Any, ...]:
        return (token_in, *checked(*args))

    threaded = ctx.replace(
        avals_in=[abstract_token, *ctx.avals_in], avals_out=[abstract_token, *ctx.avals_out]
    )
    token_out, *results = _emit_python_callback(
        threaded, with_token, [token, *operands], has_side_effect=has_side_effect, annotate=False
    )
    return results, token_out, with_token
