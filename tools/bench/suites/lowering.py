"""Lowering speed: trace and lower to StableHLO, Lamina vs JAX's `jax.jit(f).lower(x)`.

Issue 6 asks for at most 0.5x JAX's time, linear in the number of equations. Lamina's side is
`make_jaxpr` then `lower_jaxpr_to_module` (which verifies the module, as JAX's lowering does);
JAX's side is `jit(f).lower(x)`, tracing included. Each call uses a new function object, so
neither side's caches answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, assert_never

from tools.bench.registry import Side, Timed, benchmark


def _lowering(side: Side, make: Callable[[Any, Any], Callable[..., Any]], *args: Any) -> Timed:
    """The timed call: trace and lower `make(lax, jnp)` on `args`, a new function each time."""
    match side:
        case Side.LAMINA:
            import lamina_core
            from lamina_mlir import lower_jaxpr_to_module

            def lamina_lower() -> Any:
                fun = make(lamina_core.lax, lamina_core.numpy)
                jaxpr = lamina_core.make_jaxpr(fun)(*args)
                return lower_jaxpr_to_module(jaxpr, module_name="jit(fun)")

            return lamina_lower
        case Side.JAX:
            import jax
            import jax.numpy as jnp
            from jax import lax

            def jax_lower() -> Any:
                return jax.jit(make(lax, jnp)).lower(*args)

            return jax_lower
        case _:
            assert_never(side)


@benchmark("lowering.lax_chain", params={"n": (100, 1000, 10000)}, unit="eqn", unit_count="n")
def lax_chain(side: Side, n: int) -> Timed:
    """Trace and lower a chain of N alternating lax.sin / lax.add ops on f32[8]."""
    import numpy as np

    def make(lax: Any, jnp: Any) -> Callable[..., Any]:
        def chain(x: Any) -> Any:
            for i in range(n):
                x = lax.sin(x) if i % 2 else lax.add(x, x)
            return x

        return chain

    return _lowering(side, make, np.ones(8, np.float32))


@benchmark("lowering.mlp", params={"layers": (8,)}, unit="layer", unit_count="layers")
def mlp(side: Side, layers: int) -> Timed:
    """Trace and lower an MLP: `layers` x (dot_general, bias add, tanh) on f32[32,256]."""
    import numpy as np

    rng = np.random.default_rng(0)
    params = [
        (rng.standard_normal((256, 256), np.float32), rng.standard_normal(256, np.float32))
        for _ in range(layers)
    ]
    x = rng.standard_normal((32, 256), np.float32)

    def make(lax: Any, jnp: Any) -> Callable[..., Any]:
        def net(params: Any, x: Any) -> Any:
            for w, b in params:
                x = jnp.tanh(jnp.dot(x, w) + b)
            return x

        return net

    return _lowering(side, make, params, x)
