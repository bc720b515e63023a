"""Runtime speed: jitted call overhead, eager dispatch, and large closed-over constants.

Issue 7 asks for: jit(x + y) on f32[16] at most 1.0x JAX, a dict of 10 arrays at most 1.0x,
NumPy inputs at most 1.2x; eager jnp.sin at most 1.5x.
"""

from __future__ import annotations

from typing import Any

from tools.bench.registry import Side, Timed, benchmark


def _device_arrays(side: Side, n: int, size: int) -> list[Any]:
    import numpy as np

    api = side.api()
    return [api.device_put(np.full((size,), float(i), np.float32)) for i in range(n)]


@benchmark("runtime.jit_add")
def jit_add(side: Side) -> Timed:
    """Jitted x + y on two f32[16] device arrays (call overhead)."""
    api = side.api()
    f = api.jit(lambda x, y: x + y)
    x, y = _device_arrays(side, 2, 16)
    f(x, y).block_until_ready()
    return lambda: f(x, y)


@benchmark("runtime.jit_dict10")
def jit_dict10(side: Side) -> Timed:
    """Jitted sum over a dict of 10 f32[16] device arrays (pytree call overhead)."""
    api = side.api()
    f = api.jit(lambda d: d["x0"] + d["x9"])
    d = {f"x{i}": a for i, a in enumerate(_device_arrays(side, 10, 16))}
    f(d).block_until_ready()
    return lambda: f(d)


@benchmark("runtime.jit_add_numpy")
def jit_add_numpy(side: Side) -> Timed:
    """Jitted x + y on two NumPy f32[16] inputs (includes both host-to-device copies)."""
    import numpy as np

    api = side.api()
    f = api.jit(lambda x, y: x + y)
    x, y = np.ones(16, np.float32), np.ones(16, np.float32)
    f(x, y).block_until_ready()
    return lambda: f(x, y)


@benchmark("runtime.eager_sin")
def eager_sin(side: Side) -> Timed:
    """Eager jnp.sin on a device f32[16] (per-primitive dispatch)."""
    api = side.api()
    (x,) = _device_arrays(side, 1, 16)
    sin = api.numpy.sin
    sin(x).block_until_ready()
    return lambda: sin(x)
