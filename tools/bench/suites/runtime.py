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


@benchmark("runtime.jit_fresh_wrapper")
def jit_fresh_wrapper(side: Side) -> Timed:
    """`jit(mlp)(params, x)` with a new `jit` wrapper per call: an 8-layer tanh MLP (width 256,
    batch 32), run to completion. The idiom of tutorials and of code that jits inside a
    function: the trace, lowering and executable of the first wrapper must serve the next."""
    import numpy as np

    api = side.api()
    jnp = api.numpy
    rng = np.random.default_rng(0)
    width = 256
    params = [
        (
            api.device_put(rng.standard_normal((width, width), dtype=np.float32) / 16.0),
            api.device_put(np.zeros(width, np.float32)),
        )
        for _ in range(8)
    ]
    x = api.device_put(rng.standard_normal((32, width), dtype=np.float32))

    def mlp(params: Any, x: Any) -> Any:
        for w, b in params:
            x = jnp.tanh(x @ w + b)
        return x

    api.jit(mlp)(params, x).block_until_ready()
    return lambda: api.jit(mlp)(params, x).block_until_ready()
