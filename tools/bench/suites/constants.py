"""A jitted function closing over a 128 MB float32 constant (issue 7).

Lamina hoists the constant as a const arg, so lowering and compiling never touch its values;
JAX 0.10.2's default mode inlines it as a `stablehlo.constant` (+390 MB RSS, ~1 s), and its
simplified mode hoists it too (~25 ms). Each timed call here is a first call of a new closure
over a new 128 MB value: trace, lower, compile (a cache hit for Lamina, whose executable cache
ignores constant values; JAX compiles again) and run.
"""

from __future__ import annotations

from typing import Any

from tools.bench.registry import Side, Timed, benchmark

_N = 32 * 1024 * 1024  # float32 elements in 128 MB


@benchmark("constants.closure_128mb")
def closure_128mb(side: Side) -> Timed:
    """First call of a new jitted closure over a 128 MB device-array constant."""
    import os
    import sys

    import numpy as np

    if side is Side.JAX and "jax" not in sys.modules:
        # Compare with JAX's simplified constants (hoisted, like Lamina's); the flag must be
        # set before JAX is imported, so run this benchmark on its own.
        os.environ["JAX_USE_SIMPLIFIED_JAXPR_CONSTANTS"] = "True"
    api = side.api()
    big = api.device_put(np.ones(_N, np.float32))
    x = api.device_put(np.float32(1.0))

    def first_call() -> Any:
        # A new function object each time, so neither side can reuse a trace.
        f = api.jit(lambda v: v * 2.0 + api.lax.slice(big, (0,), (1,)))
        return f(x).block_until_ready()

    return first_call
