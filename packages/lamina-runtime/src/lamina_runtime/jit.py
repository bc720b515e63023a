"""`jit`: trace once per signature, plan constants, lower, compile, and run on XLA.

The pipeline of DESIGN.md: core's `Jitted` traces (and caches traces per signature); the
constants plan comes from lamina-consts; lamina-mlir lowers with the constants as leading
`jax.const` arguments; the `Runtime` compiles once per module fingerprint. Constants reach the
device once per traced function: device arrays are passed as they are (never copied through
the host), NumPy constants are copied once. Under a transformation a jitted function is staged
as a `jit` equation instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from lamina_core import config, tree_util
from lamina_core.avals import ShapedArray
from lamina_core.jit import Jitted, Signature, Staged
from lamina_core.tracing import EVAL_TRACE, current_trace
from lamina_runtime.pipeline import CompiledCall, compile_staged
from lamina_runtime.stages import Traced

logger = logging.getLogger("lamina.jit")

explain_cache_misses = config.define_bool(
    "jax_explain_cache_misses",
    False,
    "Log why a jitted function was traced again: which argument's type, weak type, static "
    "value or tree structure changed.",
)


class JitFunction(Jitted):
    """`lamina.jit(f)`: runs on XLA at top level, stages a `jit` equation under a trace."""

    def __init__(self, fun: Callable[..., Any], **options: Any) -> None:
        super().__init__(fun, **options)
        self._calls: dict[int, tuple[Staged, CompiledCall]] = {}
        self._seen: list[Signature] = []

    def _compiled(self, staged: Staged) -> CompiledCall:
        known = self._calls.get(id(staged))
        if known is not None:
            return known[1]
        _, call = compile_staged(staged, self.name)
        self._calls[id(staged)] = (staged, call)
        return call

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if current_trace() is not EVAL_TRACE:
            return super().__call__(*args, **kwargs)
        staged, captured, leaves = self.stage(*args, **kwargs)
        if captured:  # only possible under a trace; kept for safety
            return super().__call__(*args, **kwargs)
        return self._compiled(staged)(leaves)

    def on_cache_miss(self, signature: Signature) -> None:
        if explain_cache_misses.value:
            logger.warning(explain_miss(self.name, signature, self._seen))
        self._seen.append(signature)

    # ---- AOT stages ---------------------------------------------------------------------------

    def trace(self, *args: Any, **kwargs: Any) -> Traced:
        staged, captured, _ = self.stage(*args, **kwargs)
        if captured:
            raise TypeError(f"jit({self.name}).trace: the function closes over traced values")
        return Traced(self, staged, self._in_tree(args, kwargs))

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        """`jit(f).lower(*args)`: a `Lowered` (args may be arrays or `ShapeDtypeStruct`s)."""
        return self.trace(*args, **kwargs).lower()

    def _in_tree(self, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        dyn_args, dyn_kwargs, *_ = self._split(args, kwargs)
        return tree_util.tree_structure((dyn_args, dyn_kwargs))


def explain_miss(name: str, signature: Signature, seen: Sequence[Signature]) -> str:
    """Why `signature` missed the trace cache, against the closest earlier signature."""
    if not seen:
        return f"TRACING CACHE MISS at {name}: the first call, nothing to compare with."
    closest = seen[-1]
    reasons: list[str] = []
    if closest.in_tree != signature.in_tree:
        reasons.append(
            f"the argument tree structure changed from {closest.in_tree} to {signature.in_tree}"
        )
    else:
        for i, (old, new) in enumerate(zip(closest.in_avals, signature.in_avals, strict=True)):
            if old == new:
                continue
            if (
                isinstance(old, ShapedArray)
                and isinstance(new, ShapedArray)
                and old.normalize() == new.normalize()
            ):
                reasons.append(f"argument {i} changed weak type: {old!r} then {new!r}")
            else:
                reasons.append(
                    f"argument {i} changed type from {old.str_short()} to {new.str_short()}"
                )
    if closest.static_args != signature.static_args:
        reasons.append(
            f"static arguments changed from {closest.static_args} to {signature.static_args}"
        )
    if closest.context != signature.context:
        reasons.append(f"the configuration changed from {closest.context} to {signature.context}")
    return f"TRACING CACHE MISS at {name} because: " + "; ".join(reasons or ["unknown"])


def jit(
    fun: Callable[..., Any] | None = None,
    *,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Sequence[str] | None = None,
    donate_argnums: int | Sequence[int] | None = None,
    donate_argnames: str | Sequence[str] | None = None,
    keep_unused: bool = False,
    inline: bool = False,
) -> Any:
    """Compile `fun` with XLA; usable as `@jit` or `@jit(static_argnums=...)`, as `jax.jit`."""

    def wrap(f: Callable[..., Any]) -> JitFunction:
        return JitFunction(
            f,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            donate_argnums=donate_argnums,
            donate_argnames=donate_argnames,
            keep_unused=keep_unused,
            inline=inline,
        )

    return wrap if fun is None else wrap(fun)
