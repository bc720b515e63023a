"""Tracing speed: `make_jaxpr` of long chains of lax ops (lamina-core part 1).

Issue 3 asks for at most 0.5x JAX's time per equation, growing linearly in N.
"""

from __future__ import annotations

from typing import Any

from tools.bench.registry import Side, Timed, benchmark


@benchmark("tracing.lax_chain", params={"n": (100, 1000, 10000)}, unit="eqn", unit_count="n")
def lax_chain(side: Side, n: int) -> Timed:
    """make_jaxpr of a chain of N alternating lax.sin / lax.add ops on f32[8]."""
    import numpy as np

    api = side.api()
    lax = api.lax

    def trace() -> Any:
        # A new function object each time: JAX caches traces per function, and the benchmark
        # measures tracing, not the cache.
        def chain(x: Any) -> Any:
            for i in range(n):
                x = lax.sin(x) if i % 2 else lax.add(x, x)
            return x

        return api.make_jaxpr(chain)(x)

    x = np.ones(8, np.float32)
    return trace


@benchmark("tracing.jnp_chain", params={"n": (100, 1000)}, unit="eqn", unit_count="n")
def jnp_chain(side: Side, n: int) -> Timed:
    """make_jaxpr of a chain of N jax.numpy ops (sin, multiply by a Python scalar) on f32[8]."""
    import numpy as np

    api = side.api()
    jnp = api.numpy

    def trace() -> Any:
        def chain(x: Any) -> Any:
            for i in range(n):
                x = jnp.sin(x) if i % 2 else jnp.multiply(x, 1.5)
            return x

        return api.make_jaxpr(chain)(x)

    x = np.ones(8, np.float32)
    return trace


@benchmark("tracing.mlp8")
def mlp8(side: Side) -> Timed:
    """make_jaxpr of an 8-layer MLP forward (width 256, batch 32; dot, add, tanh)."""
    import numpy as np

    api = side.api()
    jnp = api.numpy
    rng = np.random.default_rng(0)
    params = [
        (rng.standard_normal((256, 256), np.float32), rng.standard_normal(256, np.float32))
        for _ in range(8)
    ]
    x = rng.standard_normal((32, 256), np.float32)

    def trace() -> Any:
        def mlp(params: Any, x: Any) -> Any:
            for w, b in params:
                x = jnp.tanh(jnp.dot(x, w) + b)
            return jnp.sum(x)

        return api.make_jaxpr(mlp)(params, x)

    return trace
