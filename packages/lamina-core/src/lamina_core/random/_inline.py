"""JAX's `jit(inline=True)` kernels of `jax.random`, staged from a cached trace.

A `jit(inline=True)` function leaves no `jit` equation: under `make_jaxpr` JAX stages the
equations of its (cached) jaxpr straight into the caller. `InlineKernel` does the same: while
a jaxpr is being built, it traces the kernel once per argument signature (through `Jitted`'s
cache, keyed by avals, static values and trace context) and replays that jaxpr's equations
into the caller's trace (`StagingTrace.inline_jaxpr`), so a second call skips the kernel's
Python (dtype promotion, shape checks, nested `jit` lookups) and the equations' type rules.
The equations staged are those tracing the kernel's body stages. Under eager evaluation and other
transformations (`vmap`, `jvp`, ...) the kernel runs as the plain function it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lamina_core.interpreters import StagingTrace
from lamina_core.trace import current_trace
from lamina_core.transforms import Jitted
from lamina_core.tree import tree_util


class InlineKernel:
    """`fun` with JAX's `jit(inline=True, static_argnums=...)` staging (see the module doc)."""

    __slots__ = ("_jitted", "fun")

    def __init__(self, fun: Callable[..., Any], static_argnums: Sequence[int]) -> None:
        self.fun = fun
        self._jitted = Jitted(fun, static_argnums=tuple(static_argnums), inline=True)

    def __call__(self, *args: Any) -> Any:
        trace = current_trace()
        if not isinstance(trace, StagingTrace):
            return self.fun(*args)
        staged, captured, leaves = self._jitted.stage(*args)
        jaxpr = staged.jaxpr.jaxpr
        if captured or staged.mutable_consts or jaxpr.effects or staged.jaxpr.consts:
            # Closed over a tracer, a Ref or an effect: stage the body itself, as before.
            return self.fun(*args)
        return tree_util.tree_unflatten(staged.out_tree, trace.inline_jaxpr(jaxpr, leaves))


def inline_kernel(*static_argnums: int) -> Callable[[Callable[..., Any]], InlineKernel]:
    """Decorator: `@inline_kernel(4, 5)` is JAX's `@jit(static_argnums=(4, 5), inline=True)`."""

    def wrap(fun: Callable[..., Any]) -> InlineKernel:
        return InlineKernel(fun, static_argnums)

    return wrap
